/*
 * stackfold - PerfView grouping and folding, as a filter: evt or folded
 * stacks in, folded stacks (or PerfView's ByName table) out.
 *
 * USAGE:  stackfold [--preset=NAME] [--group=PATS] [--fold=PATS]
 *                   [--include=PATS] [--exclude=PATS] [--fold-pct=N]
 *                   [--roots=STYLE] [--kernel] [--unit=us|ms|samples]
 *                   [--keep-idle] [--by-name [--tsv]] [-j N] [-o FILE] [FILE...]
 *         stackfold --thread-time [--readied-by] [options] [FILE...]
 *
 * INPUT:  evt (docs/evt-format.md; Sample events by default, --kind to
 *         choose) or folded stacks, decided per file by its first line:
 *           0.104200<TAB>Sample<TAB>0<TAB>app.exe<TAB>2212<TAB>4100<TAB>1<TAB>ip=0x1<TAB>ntdll.dll!RtlUserThreadStart;app.exe!main
 *
 * OUTPUT: folded stacks, root first, one space, an integer count in the
 *         unit: samples when only Sample events are read (the default,
 *         what flamegraph.pl and inferno call every count), microseconds
 *         of weight when a duration-weighted kind is (--kind=dpc, ...):
 *           module ntdll.dll <<ntdll.dll!RtlUserThreadStart>>;module app.exe <<app.exe!main>> 1
 *         The Idle process's samples are removed (PerfView's CPU stacks
 *         leave them out; --keep-idle keeps them), and what was removed is
 *         said on stderr.
 *         or with --by-name a table (--tsv: tab-separated) of every
 *         frame's exclusive, inclusive, counts, Fold, first/last and When.
 *         With --thread-time, PerfView's Thread Time view over CPU samples
 *         and the Ready/Waiting intervals etl2evt derives from CSwitch:
 *           Process64 app (10);Thread (101);app.exe!main;app.exe!Lock;BLOCKED_TIME 28000
 *
 * Threads: a regular folded file is cut into one piece per core (-j N:
 * N pieces, -j 1: one thread), each folded on its own thread and merged
 * in file order; a pipe or gzip of folded stacks goes through a pipeline
 * of threads.  The output is one thread's, byte for byte.
 *
 * Exit status: 0 success, 1 some lines were malformed (counted on
 * stderr), 2 usage or I/O error.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "evt/evt.h"
#include "report/views.h"
#include "stacks/stacks.h"

static void
usage_to(FILE *fp)
{
	fprintf(fp, "usage: stackfold [--preset=NAME] [--group=PATS] [--fold=PATS] "
	    "[--include=PATS] [--exclude=PATS] [--fold-pct=N] [--unit=U] [--keep-idle] "
	    "[--by-name [--tsv]] [-j N] [-o FILE] [FILE...]\n"
	    "       stackfold --thread-time [--readied-by] [options] [FILE...]\n");
}

static void
usage(void)
{
	usage_to(stderr);
}

static void
help(void)
{
	usage_to(stdout);
	printf("Groups and folds stacks like PerfView; writes folded stacks or a ByName table.\n"
	    "\n"
	    "  -g, --group=PATS     GroupPats: PAT->NAME, PAT=>NAME (entry group), PAT->  (keep)\n"
	    "  -f, --fold=PATS      FoldPats: matching frames are removed (cost to the caller)\n"
	    "  -i, --include=PATS   IncPats: keep samples where every entry matches a frame\n"
	    "  -x, --exclude=PATS   ExcPats: drop samples where any frame matches\n"
	    "      --fold-pct=N     Fold%%: fold nodes under N%% of the total (never BROKEN)\n"
	    "  -p, --preset=NAME    named grouping (--list-presets), several with ','\n"
	    "      --chain-groups   normal groups feed their name to later entries (PerfView code)\n"
	    "      --keep-addrs     do not merge module!0xRVA frames into module!?\n"
	    "  -k, --kernel         mark kernel frames _[k] (evt kframes=N)\n"
	    "      --roots=STYLE    none, process, thread (PerfView), comm, pid, tid (FlameGraph)\n"
	    "      --unit=U         us, ms, samples or bytes (default: samples when only Sample\n"
	    "                       events are read, bytes for GCAllocationTick alone, else us;\n"
	    "                       ms for --by-name)\n"
	    "      --kind=LIST      evt kinds to read: Sample (default), dpc, isr, dpcisr, all, ...\n"
	    "      --keep-idle      keep the Idle process's Sample and Running events (removed\n"
	    "                       by default, and the removed weight said on stderr)\n"
	    "      --decimals=N     N fraction digits in counts (not for speedscope)\n"
	    "      --no-scenario    no scenario root frame even if the header has scenario=\n"
	    "      --thread-time    PerfView's Thread Time: Sample, Ready and Waiting lines, no\n"
	    "                       Idle, leaves CPU_TIME/READIED_TIME/BLOCKED_TIME..., --roots=thread\n"
	    "      --readied-by     also: under each wait, (READIED_BY), the waker's process,\n"
	    "                       thread and stack (PerfView's Thread Time (with ReadyThread))\n"
	    "  -n, --by-name        PerfView's ByName view instead of folded stacks\n"
	    "      --tsv            ByName as tab-separated values\n"
	    "  -s, --stats          totals and what was removed, on stderr\n"
	    "  -j, --threads=N      threads reading folded input: 1 reads on one thread;\n"
	    "                       default one per core (a regular file is cut into N pieces)\n"
	    "      --list-presets   the named presets\n"
	    "  -o, --output=FILE    output file (default stdout)\n"
	    "  -h, --help, --version\n"
	    "Patterns: * any text, %% a word ([A-Za-z0-9_.?]), ^ start, | or, {} capture ($1..$9),\n"
	    "@REGEX a raw regex; case-insensitive, unanchored; lists separated by ';'.\n");
	exit(0);
}

static void
fmt_val(char *buf, size_t n, int64_t v, double div)
{
	double x = (double)v / div;

	if (fabs(x - llround(x)) < 1e-9 && fabs(x) < 1e15)
		snprintf(buf, n, "%lld", (long long)llround(x));
	else
		snprintf(buf, n, "%.3f", x);
}

static void
fmt_pct(char *buf, size_t n, int64_t v, int64_t total)
{
	if (total == 0)
		snprintf(buf, n, "0.0");
	else
		snprintf(buf, n, "%.1f", 100.0 * (double)v / (double)llabs(total));
}

static void
fmt_time(char *buf, size_t n, double t)
{
	if (isnan(t))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.3f", t);
}

/* The ten numeric cells of a ByName row; the widths pass and the
 * writing pass must format them the same way. */
static void
byname_cells(char cell[][64], const struct stk_byname *r, int64_t total, double div)
{
	fmt_val(cell[0], 64, r->exc, div);
	fmt_pct(cell[1], 64, r->exc, total);
	snprintf(cell[2], 64, "%lld", (long long)r->exc_count);
	fmt_val(cell[3], 64, r->fold, div);
	snprintf(cell[4], 64, "%lld", (long long)r->fold_count);
	fmt_val(cell[5], 64, r->inc, div);
	fmt_pct(cell[6], 64, r->inc, total);
	snprintf(cell[7], 64, "%lld", (long long)r->inc_count);
	fmt_time(cell[8], 64, r->first);
	fmt_time(cell[9], 64, r->last);
}

static void
write_byname(struct stk *S, struct outbuf *ob, int tsv)
{
	struct stk_byname *rows;
	int n, i, c;
	const struct stk_node *root;
	double div = stk_unit_div(S);
	const char *unit = stk_unit_name(S);
	double ws, we;
	int have_when = stk_when_range(S, &ws, &we);
	char when[STK_WHEN_BUCKETS + 1];
	enum { NCOL = 12 };
	static const char *hdr[NCOL] = { "Exc", "Exc%", "Exc Ct", "Fold", "Fold Ct", "Inc",
	    "Inc%", "Inc Ct", "First", "Last", "When", "Name" };
	char cell[NCOL][64];
	int width[NCOL];

	stk_finish(S);
	stk_byname(S, &rows, &n);
	root = stk_node(S, STK_ROOT);
	for (c = 0; c < NCOL; c++)
		width[c] = (int)strlen(hdr[c]);
	width[10] = STK_WHEN_BUCKETS;
	/* first pass: widths (the text table is aligned) */
	for (i = 0; i < n; i++) {
		byname_cells(cell, &rows[i], root->inc, div);
		for (c = 0; c < 10; c++)
			if ((int)strlen(cell[c]) > width[c])
				width[c] = (int)strlen(cell[c]);
	}
	if (!tsv) {
		char total[64];

		fmt_val(total, sizeof total, root->inc, div);
		ob_printf(ob, "# ByName, metric in %s; total %s, %lld events", unit, total,
		    (long long)root->inc_count);
		if (have_when) {
			ob_printf(ob, "; When: %.3f..%.3f ms in 32 buckets of %.3f ms", ws, we,
			    (we - ws) / STK_WHEN_BUCKETS);
			/* PerfView's Metric/Interval: CPUs busy on average (time units only) */
			if (strcmp(unit, "us") == 0 || strcmp(unit, "ms") == 0)
				ob_printf(ob, "; Metric/Interval %.2f",
				    (double)root->inc / 1e6 / (we - ws));
		}
		ob_putc(ob, '\n');
	}
	for (c = 0; c < NCOL; c++) {
		if (tsv)
			ob_printf(ob, "%s%s", c ? "\t" : "", hdr[c]);
		else if (c == NCOL - 1)
			ob_printf(ob, "%s", hdr[c]);
		else if (c == 10)
			ob_printf(ob, "%-*s  ", width[c], hdr[c]);
		else
			ob_printf(ob, "%*s  ", width[c], hdr[c]);
	}
	ob_putc(ob, '\n');
	for (i = 0; i < n; i++) {
		const struct stk_byname *r = &rows[i];

		byname_cells(cell, r, root->inc, div);
		if (have_when)
			stk_when_text(S, r->when, when);
		else
			memset(when, '_', STK_WHEN_BUCKETS), when[STK_WHEN_BUCKETS] = '\0';
		for (c = 0; c < 10; c++) {
			if (tsv)
				ob_printf(ob, "%s%s", c ? "\t" : "", cell[c]);
			else
				ob_printf(ob, "%*s  ", width[c], cell[c]);
		}
		if (tsv)
			ob_printf(ob, "\t%s\t%s\n", when, stk_name(S, r->frame));
		else
			ob_printf(ob, "%s  %s\n", when, stk_name(S, r->frame));
	}
	free(rows);
}

static void
report(struct stk *S, int verbose)
{
	const struct stk_stats *st = stk_get_stats(S);
	double div = stk_unit_div(S);
	const char *u = stk_unit_name(S);

	if (st->excluded_events)
		cli_warn("--exclude removed %lld events, %.3f %s", (long long)st->excluded_events,
		    (double)st->excluded_metric / div, u);
	if (st->notincluded_events)
		cli_warn("--include removed %lld events, %.3f %s", (long long)st->notincluded_events,
		    (double)st->notincluded_metric / div, u);
	if (st->long_frames)
		cli_warn("%lld frame names longer than %d bytes were cut", (long long)st->long_frames,
		    STK_MAX_FRAME);
	view_idle_note(NULL, st->idle_events, (double)st->idle_metric / div,
	    ((double)st->metric + (double)st->idle_metric) / div, u);
	if (verbose) {
		cli_warn("read %lld events, %.3f %s; Idle %lld events, %.3f %s; "
		    "kept %lld events, %.3f %s; "
		    "other kinds %lld; malformed lines %lld; Fold%% folded %lld nodes, %.3f %s",
		    (long long)(st->events + st->idle_events),
		    ((double)st->metric + (double)st->idle_metric) / div, u,
		    (long long)st->idle_events, (double)st->idle_metric / div, u,
		    (long long)st->kept_events, (double)st->kept_metric / div, u,
		    (long long)st->other_kinds, (long long)st->bad_lines,
		    (long long)st->folded_pct_nodes, (double)st->folded_pct_metric / div, u);
		if (st->idle_events || st->readied_by)
			cli_warn("thread time: Idle left out %lld events, %.3f %s; "
			    "waits with READIED_BY frames %lld", (long long)st->idle_events,
			    (double)st->idle_metric / div, u, (long long)st->readied_by);
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		STK_LONGOPTS,
		{ "by-name", no_argument, NULL, 'n' },
		{ "tsv", no_argument, NULL, 'T' },
		{ "stats", no_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 'j' },
		{ "list-presets", no_argument, NULL, 'L' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct stk_config cfg;
	struct stk *S;
	struct outbuf ob;
	const char *out = NULL;
	int c, byname = 0, tsv = 0, stats = 0, i;
	long n;
	long bad = 0;

	cli_init(argv[0]);
	stk_config_init(&cfg);
	while ((c = getopt_long(argc, argv, "g:f:i:x:p:kno:sj:h", longopts, NULL)) != -1) {
		if (stk_option(&cfg, c, optarg))
			continue;
		switch (c) {
		case 'g': stk_option(&cfg, STK_OPT_GROUP, optarg); break;
		case 'f': stk_option(&cfg, STK_OPT_FOLD, optarg); break;
		case 'i': stk_option(&cfg, STK_OPT_INCLUDE, optarg); break;
		case 'x': stk_option(&cfg, STK_OPT_EXCLUDE, optarg); break;
		case 'p': stk_option(&cfg, STK_OPT_PRESET, optarg); break;
		case 'k': stk_option(&cfg, STK_OPT_KERNEL, optarg); break;
		case 'n': byname = 1; break;
		case 'T': tsv = 1; byname = 1; break;
		case 's': stats = 1; break;
		case 'j':
			if ((n = cli_integer("--threads", optarg)) < 1 || n > 64)
				cli_usage_error("--threads takes 1 to 64, not %s", optarg);
			cfg.threads = (int)n;
			break;
		case 'L': fputs(stk_preset_list(), stdout); return 0;
		case 'o': out = optarg; break;
		case 'h': help(); break;
		case 'V': cli_version(); break;
		default: usage(); return EXIT_FATAL;
		}
	}
	if (byname) {
		cfg.when = 1;
		if (!cfg.unit_set && stk_config_unit(&cfg) != STK_UNIT_BYTES) {
			cfg.unit = STK_UNIT_MS;	/* PerfView shows milliseconds */
			cfg.unit_set = 1;
		}
	} else
		cfg.no_times = 1;	/* folded output has no First/Last: times unread */
	S = stk_new(&cfg);
	ob_open(&ob, out);
	if (optind >= argc)
		bad += stk_read(S, "-");
	for (i = optind; i < argc; i++)
		bad += stk_read(S, argv[i]);
	stk_finish(S);
	if (byname)
		write_byname(S, &ob, tsv);
	else
		stk_write_folded(S, &ob);
	ob_close(&ob);
	report(S, stats);
	stk_free(S);
	stk_config_free(&cfg);
	return bad ? EXIT_PARTIAL : 0;
}
