/*
 * diff - compare the stacks of a baseline and a test trace.
 *
 * USAGE:   diff [-nqt] [-f fg|signed] [--keep-ids] [--strip-hex] [-o file]
 *               [stackfold's options: --preset --group --fold --kind ...] base test
 *          diff base.folded test.folded | flamegraph.pl > diff.svg
 *          diff --kind=dpcisr fixed.evt broken.evt | render flame > dpc-diff.svg
 *
 * INPUT:   two files ("-" for stdin once), each evt (docs/evt-format.md) or
 *          folded stacks ("a;b;c 12"), gzip or not.  Evt becomes stacks as
 *          stackfold makes them; folded input is taken as it is unless a
 *          pattern option is given.  Process and thread ids are removed from
 *          the leading pseudo-frames so the same code path in both traces
 *          lands on the same stack (--keep-ids keeps them).
 *
 * OUTPUT:  -f fg (default): the union of stacks in FlameGraph's differential
 *          form, "stack base test", read by flamegraph.pl, inferno and render:
 *            Backup.exe;ndis.sys!NdisMIndicateReceive 120 310
 *          -f signed: PerfView's merge (baseline negated, test added) as
 *          folded stacks with a signed weight, test - base, zero lines left out:
 *            Backup.exe;ndis.sys!NdisMIndicateReceive 190
 *          -n scales the baseline to the test's total first.  Totals (base,
 *          test, delta, delta %) go to stderr, or alone to stdout with -t.
 *
 * Exit status: 0, 1 when unusable input lines were skipped, 2 on errors.
 */
#include "base/cli.h"
#include "report/diffstacks.h"
#include "evt/evt.h"
#include "stacks/stacks.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum form { FORM_FG, FORM_SIGNED };

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: diff [-nqt] [-f fg|signed] [--keep-ids] [--perf-ids] [--strip-hex] "
	    "[--fractions] [-o file] [stack options] base test\n");
	if (status == 0)
		printf("Compares the stacks of a baseline and a test (evt or folded, one may be -).\n"
		    "\n"
		    "  -f, --format=FORM    fg (FlameGraph differential, default) or signed (PerfView)\n"
		    "  -n, --normalize      scale the baseline to the test's total first\n"
		    "  -t, --totals         only the totals, as name TAB value lines\n"
		    "  -q, --quiet          no totals on stderr\n"
		    "      --keep-ids       keep process and thread ids and scenario names\n"
		    "      --perf-ids       also strip -PID, -PID/TID from the first frame\n"
		    "                       (stackcollapse-perf --pid/--tid)\n"
		    "      --strip-hex      rewrite 0x<hex> to 0x... so addresses do not split stacks\n"
		    "      --fractions      keep fractional counts instead of rounding\n"
		    "  -o, --output=FILE    output file (default stdout)\n"
		    "  -h, --help, --version\n"
		    "stack options (as stackfold):\n  %s\n", STK_OPTIONS_HELP);
	exit(status);
}

/*
 * Integer counts by default (decision 7).  Rounding carries the
 * remainder from line to line (as stackfold does), so each column's
 * output total is its rounded input total.
 */
struct rounder {
	double cum, emitted;
};

static int
put_count(char *out, struct rounder *r, double v, int fractions)
{
	double q;

	if (fractions)
		return diffstacks_format(out, v);
	r->cum += v;
	q = r->cum < 0 ? -floor(-r->cum + 0.5) : floor(r->cum + 0.5);
	v = q - r->emitted;
	r->emitted = q;
	return diffstacks_format(out, v);
}

static void
write_stacks(struct outbuf *ob, struct diffstacks *t, enum form form, double scale,
    int fractions)
{
	size_t *ix = diffstacks_sorted(t), i, n = diffstacks_size(t), len;
	struct diffstacks_entry *e;
	struct rounder rnd[2];
	char num[2][64];
	int l0, l1;
	char *p;

	memset(rnd, 0, sizeof(rnd));
	for (i = 0; i < n; i++) {
		e = diffstacks_at(t, ix[i]);
		if (form == FORM_FG) {
			l0 = put_count(num[0], &rnd[0], e->w[0] * scale, fractions);
			l1 = put_count(num[1], &rnd[1], e->w[1], fractions);
		} else {
			l0 = put_count(num[0], &rnd[0], e->w[1] - e->w[0] * scale, fractions);
			if (strcmp(num[0], "0") == 0)
				continue;
			l1 = -1;
		}
		len = diffstacks_key_len(t, ix[i]);
		p = ob_reserve(ob, len + 130);
		memcpy(p, diffstacks_key(t, ix[i]), len);
		p += len;
		*p++ = ' ';
		memcpy(p, num[0], (size_t)l0);
		p += l0;
		if (l1 >= 0) {
			*p++ = ' ';
			memcpy(p, num[1], (size_t)l1);
			p += l1;
		}
		*p++ = '\n';
		ob_commit(ob, len + (size_t)l0 + (l1 >= 0 ? (size_t)l1 + 1 : 0) + 2);
	}
	free(ix);
}

static void
count_sides(struct diffstacks *t, size_t *only_base, size_t *only_test)
{
	size_t i, n = diffstacks_size(t);
	struct diffstacks_entry *e;

	*only_base = *only_test = 0;
	for (i = 0; i < n; i++) {
		e = diffstacks_at(t, i);
		if (e->w[0] != 0 && e->w[1] == 0)
			(*only_base)++;
		else if (e->w[0] == 0 && e->w[1] != 0)
			(*only_test)++;
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "normalize", no_argument, NULL, 'n' },
		{ "normalise", no_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "totals", no_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "fractions", no_argument, NULL, 'F' },
		STK_LONGOPTS,
		DIFFSTACKS_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct diffstacks_opts o;
	struct stk_config cfg;
	struct diffstacks_stats st[2];
	struct diffstacks *t;
	struct outbuf ob;
	enum form form = FORM_FG;
	int c, normalize = 0, quiet = 0, totals_only = 0, fractions = 0, side;
	const char *out = NULL;
	double base, test, scale = 1, delta;
	char b[64], s[64], d[64], unit[20] = "";
	size_t only_base, only_test;

	cli_init(argv[0]);
	memset(&o, 0, sizeof(o));
	stk_config_init(&cfg);
	while ((c = getopt_long(argc, argv, "f:nqto:hV", longopts, NULL)) != -1) {
		if (diffstacks_option(&o, &cfg, c, optarg))
			continue;
		switch (c) {
		case 'f':
			if (strcmp(optarg, "fg") == 0 || strcmp(optarg, "flamegraph") == 0)
				form = FORM_FG;
			else if (strcmp(optarg, "signed") == 0 || strcmp(optarg, "perfview") == 0)
				form = FORM_SIGNED;
			else
				cli_usage_error("unknown format '%s' (fg or signed)", optarg);
			break;
		case 'n': normalize = 1; break;
		case 'q': quiet = 1; break;
		case 't': totals_only = 1; break;
		case 'o': out = optarg; break;
		case 'F': fractions = 1; break;
		case 'h': usage(0); break;
		case 'V': cli_version(); break;
		default: usage(EXIT_FATAL);
		}
	}
	argc -= optind;
	argv += optind;
	diffstacks_options_done(&o, &cfg);
	if (argc != 2)
		cli_usage_error("need two inputs, the baseline and the test");
	if (strcmp(argv[0], "-") == 0 && strcmp(argv[1], "-") == 0)
		cli_usage_error("only one input can be stdin");

	t = diffstacks_new();
	for (side = 0; side < 2; side++)
		if (diffstacks_read(t, side, argv[side], &o, &st[side]) < 0)
			exit(EXIT_FATAL);
	if (st[0].fractional || st[1].fractional || cfg.decimals > 0)
		fractions = 1;
	base = st[0].total[0];
	test = st[1].total[1];
	if (normalize) {
		if (base > 0)
			scale = test / base;
		else if (!quiet)
			cli_warn("baseline total is 0: nothing to normalise");
	}
	delta = test - base;
	if (st[1].unit[0] || st[0].unit[0])
		snprintf(unit, sizeof(unit), " %s", st[1].unit[0] ? st[1].unit : st[0].unit);
	diffstacks_format(b, base);
	diffstacks_format(s, test);
	diffstacks_format(d, delta);
	count_sides(t, &only_base, &only_test);

	ob_open(&ob, out);
	if (totals_only) {
		ob_printf(&ob, "base\t%s\ntest\t%s\ndelta\t%s\n", b, s, d);
		if (base != 0)
			ob_printf(&ob, "delta_pct\t%.2f\n", delta / base * 100);
		else
			ob_printf(&ob, "delta_pct\t-\n");
		if (normalize && base > 0)
			ob_printf(&ob, "scale\t%.6g\n", scale);
		ob_printf(&ob, "stacks\t%zu\nonly_base\t%zu\nonly_test\t%zu\n",
		    diffstacks_size(t), only_base, only_test);
		if (unit[0])
			ob_printf(&ob, "unit\t%s\n", unit + 1);
	} else
		write_stacks(&ob, t, form, scale, fractions);
	ob_close(&ob);

	if (!quiet && !totals_only) {
		char pct[32];

		if (base != 0)
			snprintf(pct, sizeof(pct), "%+.2f%%", delta / base * 100);
		else
			snprintf(pct, sizeof(pct), "n/a");
		cli_warn("base %s%s, test %s%s, delta %s%s%s (%s)%s; %zu stack%s, %zu only in base, %zu only in test",
		    b, unit, s, unit, delta > 0 ? "+" : "", d, unit, pct,
		    normalize && base > 0 ? "; base scaled to the test total" : "",
		    diffstacks_size(t), diffstacks_size(t) == 1 ? "" : "s", only_base, only_test);
		for (side = 0; side < 2; side++)
			if (st[side].dropped > 0) {
				char w[64];

				diffstacks_format(w, st[side].dropped_weight);
				cli_warn("%s: %lu %s (%s%s) dropped by --include/--exclude",
				    argv[side], st[side].dropped, st[side].is_evt ? "events" : "lines", w, unit);
			}
	}
	diffstacks_free(t);
	stk_config_free(&cfg);
	return st[0].bad || st[1].bad ? EXIT_PARTIAL : 0;
}
