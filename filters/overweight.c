/*
 * overweight - PerfView's Overweight report: which names grew more than
 * the trace as a whole, between a baseline and a test.
 *
 * USAGE:   overweight [--tsv] [-r pct] [--keep-ids] [-o file] [stackfold's options] base test
 *          overweight [options] diff.folded     (one "stack base test" file)
 *          overweight --preset=module fixed.evt broken.evt
 *
 * INPUT:   two files, each evt or folded stacks (as for diff), or one file in
 *          FlameGraph's two-count form, e.g. the output of diff.
 *
 * OUTPUT:  a header with the totals, then one row per name (frame) present in
 *          both traces with |responsibility| >= 2 %, sorted as PerfView does
 *          (interest, overweight, delta); then the names present in only one
 *          trace.  Columns: base, test, delta, responsibility %, overweight %,
 *          interest (0-6), noise % (relative error of the delta from sampling;
 *          "?" when the change is under two standard errors), name:
 *            Base  Test  Delta  Resp%  Overweight%  Interest  Noise%  Name
 *              50    60    +10  100.0        200.0         5    105?  f
 *          --tsv writes the same as tab-separated values with a header line.
 *
 * Exit status: 0, 1 when unusable input lines were skipped, 2 on errors.
 */
#include "base/cli.h"
#include "report/diffstacks.h"
#include "evt/evt.h"
#include "report/overweight.h"
#include "stacks/stacks.h"
#include "base/escape.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: overweight [-ac] [--tsv] [-r pct] [--per-sample w] [--keep-ids] [--perf-ids] "
	    "[--strip-hex] [-o file] [stack options] base test | diff.folded\n");
	if (status == 0)
		printf("Ranks the names whose weight grew out of proportion from base to test.\n"
		    "\n"
		    "  -r, --min-resp=PCT   names with |responsibility| >= PCT (default 2)\n"
		    "  -a, --all            every name (-r 0)\n"
		    "  -c, --collapse       fold rows that occur on exactly the same stacks\n"
		    "      --tsv            tab-separated output\n"
		    "      --per-sample=W   folded input: one sample weighs W (noise column)\n"
		    "      --keep-ids       keep process and thread ids and scenario names\n"
		    "      --perf-ids       also strip -PID, -PID/TID from the first frame\n"
		    "      --strip-hex      rewrite 0x<hex> to 0x...\n"
		    "  -o, --output=FILE    output file (default stdout)\n"
		    "  -h, --help, --version\n"
		    "stack options (as stackfold):\n  %s\n", STK_OPTIONS_HELP);
	exit(status);
}

/* Percentages: shortest form with up to 6 decimals in TSV, one decimal in the table. */
static void
pct(char *out, double v, int tsv)
{
	if (tsv)
		evt_format_weight(out, v);
	else
		sprintf(out, "%.1f", v);
}

static void
noise_text(char *out, const struct ow_row *r, int tsv)
{
	if (r->noise < 0)
		strcpy(out, tsv ? "inf" : "-");
	else if (tsv)
		evt_format_weight(out, r->noise);
	else
		sprintf(out, r->noise < 9.95 ? "%.1f%s" : "%.0f%s", r->noise, r->noisy ? "?" : "");
}

enum { C_BASE, C_TEST, C_DELTA, C_RESP, C_OW, C_INT, C_NOISE, NCOL };

struct cells {
	char c[NCOL][48];
};

static void
row_cells(const struct ow_row *r, int tsv, struct cells *k)
{
	diffstacks_format(k->c[C_BASE], r->base);
	diffstacks_format(k->c[C_TEST], r->test);
	if (r->delta > 0 && !tsv) {
		k->c[C_DELTA][0] = '+';
		diffstacks_format(k->c[C_DELTA] + 1, r->delta);
	} else
		diffstacks_format(k->c[C_DELTA], r->delta);
	pct(k->c[C_RESP], r->resp, tsv);
	if (r->has_overweight)
		pct(k->c[C_OW], r->overweight, tsv);
	else
		strcpy(k->c[C_OW], tsv ? "" : "-");
	if (r->where == OW_BOTH)
		sprintf(k->c[C_INT], "%d", r->interest);
	else
		strcpy(k->c[C_INT], tsv ? "" : "-");
	noise_text(k->c[C_NOISE], r, tsv);
}

static const char *heads[NCOL] = {
	"Base", "Test", "Delta", "Resp%", "Overweight%", "Interest", "Noise%"
};

/* --collapse: the names folded into a row, which follow it in the array. */
static void
same_names(struct outbuf *ob, const struct ow_row *rows, size_t n)
{
	size_t i, show = n < 3 ? n : 3;

	ob_printf(ob, "  [+%zu on the same stacks: ", n);
	for (i = 0; i < show; i++) {
		if (i)
			ob_puts(ob, ", ");
		text_escape_str(ob, rows[i].name);
	}
	ob_puts(ob, n > show ? ", ...]" : "]");
}

static void
table(struct outbuf *ob, const char *title, const struct ow_row *rows, size_t n,
    int with_ow)
{
	size_t i, w[NCOL];
	int j;
	struct cells k;

	for (j = 0; j < NCOL; j++)
		w[j] = strlen(heads[j]);
	for (i = 0; i < n; i++) {
		row_cells(&rows[i], 0, &k);
		for (j = 0; j < NCOL; j++)
			if (strlen(k.c[j]) > w[j])
				w[j] = strlen(k.c[j]);
	}
	ob_printf(ob, "\n%s\n", title);
	for (j = 0; j < NCOL; j++)
		if (with_ow || (j != C_OW && j != C_INT))
			ob_printf(ob, "%*s  ", (int)w[j], heads[j]);
	ob_puts(ob, "Name\n");
	for (i = 0; i < n; i++) {
		if (rows[i].follower)
			continue;
		row_cells(&rows[i], 0, &k);
		for (j = 0; j < NCOL; j++)
			if (with_ow || (j != C_OW && j != C_INT))
				ob_printf(ob, "%*s  ", (int)w[j], k.c[j]);
		text_escape_str(ob, rows[i].name);	/* names come from traces */
		if (rows[i].nsame > 0)
			same_names(ob, rows + i + 1, rows[i].nsame);
		ob_putc(ob, '\n');
	}
	if (n == 0)
		ob_puts(ob, "(none)\n");
}

static const char *
where_text(enum ow_where w)
{
	return w == OW_BOTH ? "both" : w == OW_BASE_ONLY ? "base_only" : "test_only";
}

static void
tsv_rows(struct outbuf *ob, const struct ow_row *rows, size_t n)
{
	size_t i;
	int j;
	struct cells k;

	for (i = 0; i < n; i++) {
		row_cells(&rows[i], 1, &k);
		ob_printf(ob, "%s\t", where_text(rows[i].where));
		for (j = 0; j < NCOL; j++)
			ob_printf(ob, "%s\t", k.c[j]);
		ob_printf(ob, "%d\t%s\n", rows[i].noisy, rows[i].name);
	}
}

static void
report(struct outbuf *ob, const struct ow_report *r, const char *bname,
    const char *tname, const char *unit, const struct diffstacks_stats *st, double min_resp,
    int tsv)
{
	int i;
	char b[64], t[64], d[64], g[64], dp[64];
	double delta = r->test_total - r->base_total;

	diffstacks_format(b, r->base_total);
	diffstacks_format(t, r->test_total);
	diffstacks_format(d, delta);
	if (r->base_total != 0) {
		snprintf(g, sizeof(g), "%.4f", r->growth);
		snprintf(dp, sizeof(dp), "%+.2f%%", delta / r->base_total * 100);
	} else {
		strcpy(g, "-");
		strcpy(dp, "n/a");
	}
	if (tsv) {
		ob_printf(ob, "#totals\tbase=%s\ttest=%s\tdelta=%s\tgrowth=%s%s%s\n", b, t, d, g,
		    *unit ? "\tunit=" : "", unit);
		ob_puts(ob, "where\tbase\ttest\tdelta\tresp_pct\toverweight_pct\tinterest\tnoise_pct\tnoisy\tname\n");
		tsv_rows(ob, r->rows, r->nrows);
		tsv_rows(ob, r->only, r->nonly);
		return;
	}
	ob_printf(ob, "Base (old) %s: %s%s%s\nTest (new) %s: %s%s%s\nDelta: %s%s%s%s (%s), growth %s\n",
	    bname, b, *unit ? " " : "", unit, tname, t, *unit ? " " : "", unit,
	    delta > 0 ? "+" : "", d, *unit ? " " : "", unit, dp, g);
	for (i = 0; i < 2; i++)
		if (st[i].dropped > 0) {
			char w[64];

			diffstacks_format(w, st[i].dropped_weight);
			ob_printf(ob, "%s: %lu %s (%s%s%s) dropped by --include/--exclude before the analysis.\n",
			    i ? tname : bname, st[i].dropped, st[i].is_evt ? "events" : "lines", w,
			    *unit ? " " : "", unit);
		}
	for (i = 0; i < 2; i++)
		if (st[i].idle > 0) {
			char w[64];

			diffstacks_format(w, st[i].idle_weight);
			if (strcmp(unit, "samples") == 0)
				ob_printf(ob, "%s: %s Idle samples removed before the analysis "
				    "(--keep-idle keeps them).\n", i ? tname : bname, w);
			else
				ob_printf(ob, "%s: %lu Idle events (%s%s%s) removed before the "
				    "analysis (--keep-idle keeps them).\n", i ? tname : bname,
				    st[i].idle, w, *unit ? " " : "", unit);
		}
	if (r->equal_totals)
		ob_puts(ob, "Totals are equal (no growth): overweight is undefined; "
		    "Resp% is the delta as a share of the total.\n");
	ob_printf(ob, "Rows with |Resp%%| >= %g: %zu of %zu names in both traces, "
	    "%zu of %zu names in one trace only.\n", min_resp, r->nrows, r->nboth_all,
	    r->nonly, r->nonly_all);
	ob_puts(ob, "Noise%: relative error of the delta from sampling, sqrt(b^2/nb + t^2/nt)/|delta| "
	    "(n = samples); '?' = under two standard errors.\n");
	table(ob, "Names in both traces (PerfView order: interest, overweight, delta):",
	    r->rows, r->nrows, 1);
	table(ob, "Names in only one trace (Base 0: new in test; Test 0: gone):",
	    r->only, r->nonly, 0);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tsv", no_argument, NULL, 'T' },
		{ "collapse", no_argument, NULL, 'c' },
		{ "min-resp", required_argument, NULL, 'r' },
		{ "all", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "per-sample", required_argument, NULL, 'P' },
		STK_LONGOPTS,
		DIFFSTACKS_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct diffstacks_opts o;
	struct stk_config cfg;
	struct diffstacks_stats st[2];
	struct diffstacks *stacks, *names;
	struct ow_report r;
	struct outbuf ob;
	int c, tsv = 0, collapse = 0, side;
	double min_resp = 2;
	const char *out = NULL;

	cli_init(argv[0]);
	memset(&o, 0, sizeof(o));
	stk_config_init(&cfg);
	memset(st, 0, sizeof(st));
	while ((c = getopt_long(argc, argv, "acr:o:hV", longopts, NULL)) != -1) {
		if (diffstacks_option(&o, &cfg, c, optarg))
			continue;
		switch (c) {
		case 'T': tsv = 1; break;
		case 'c': collapse = 1; break;
		case 'r': min_resp = cli_number("--min-resp", optarg); break;
		case 'a': min_resp = 0; break;
		case 'o': out = optarg; break;
		case 'P':
			o.per_sample = cli_number("--per-sample", optarg);
			if (o.per_sample <= 0)
				cli_usage_error("--per-sample must be > 0");
			break;
		case 'h': usage(0); break;
		case 'V': cli_version(); break;
		default: usage(EXIT_FATAL);
		}
	}
	argc -= optind;
	argv += optind;
	diffstacks_options_done(&o, &cfg);
	if (argc != 1 && argc != 2)
		cli_usage_error("need the baseline and the test, or one two-count file");
	if (argc == 1 && o.shape_folded)
		cli_usage_error("pattern options need the two inputs, not a two-count file");
	if (argc == 2 && strcmp(argv[0], "-") == 0 && strcmp(argv[1], "-") == 0)
		cli_usage_error("only one input can be stdin");

	stacks = diffstacks_new();
	if (argc == 1) {
		if (diffstacks_read(stacks, -1, argv[0], &o, &st[0]) < 0)
			exit(EXIT_FATAL);
		st[1] = st[0];
	} else
		for (side = 0; side < 2; side++)
			if (diffstacks_read(stacks, side, argv[side], &o, &st[side]) < 0)
				exit(EXIT_FATAL);
	names = diffstacks_new();
	ow_inclusive(stacks, names);
	ow_compute(names, st[0].total[0], st[1].total[1], st[0].samples[0],
	    st[1].samples[1], min_resp, &r);
	if (collapse && !tsv)
		ow_collapse(&r);
	ob_open(&ob, out);
	report(&ob, &r, argv[0], argc == 1 ? argv[0] : argv[1],
	    st[1].unit[0] ? st[1].unit : st[0].unit, st, min_resp, tsv);
	ob_close(&ob);
	ow_free(&r);
	diffstacks_free(names);
	diffstacks_free(stacks);
	stk_config_free(&cfg);
	return st[0].bad || st[1].bad ? EXIT_PARTIAL : 0;
}
