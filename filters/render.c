/*
 * render - flame graphs, text views and DPC/ISR reports from folded
 * stacks or evt.
 *
 * USAGE:   render [MODE] [options] [FILE...]
 *          etl2evt t.etl | stackfold | render flame --title "CPU" > cpu.svg
 *          etl2evt t.etl | render dpc            (WPA's DPC duration by module, function)
 *          etl2evt t.etl | render dpcstacks | render flame > dpc.svg
 *
 * MODES:   flame (default)  interactive SVG flame graph (also icicle, flame chart, differential)
 *          tree             top-down call tree, inclusive/exclusive/percent
 *          callers, callees PerfView caller/callee trees of a focus frame (-f FRAME)
 *          byname           by-name table (exclusive, inclusive)
 *          speedscope       speedscope JSON (sampled profiles per thread or process)
 *          dpc              DPC/ISR duration by module and function, per-CPU share, intervals
 *          dpcisr           xperf -a dpcisr: usage per module per CPU, duration histograms
 *          dpcstacks        CPU samples inside DPCs/ISRs as folded stacks by module
 *          dpcchart         sorted DPC durations of one module, several traces in one SVG
 *          pmu              WindowsPerf PMU counters: the WPA plugin's GPC tables, per-period
 *                           deltas and rates of the driver's running totals, IPC (docs/pmu.md)
 *          processes        xperf -a process: pid, parent, life, sampled CPU, threads, command line
 *          threads          tid, pid, name, life, sampled CPU
 *          images           loads per process, PDB identity, symbol status
 *          events           WPA's Generic Events reduced: counts by provider/task/opcode/id/
 *                           kind/process, first and last time (--by to keep fewer keys)
 *          health           lost events, missing rundown, too few samples, PROFILE+CSWITCH
 *                           stacks, clock, CPU coverage, DPC/ISR at the edges
 *          diskio           xperf -a diskio: disk I/O by process, file or disk, latency percentiles
 *          hardfaults       hard page faults by file or process (also: diskio --hard-faults)
 *          fileio           WPA's File I/O: operations by file, operation or process
 *          diskstacks       disk I/O time on the stacks that issued it, as folded stacks
 *          gcstats          PerfView's GCStats: per .NET process and per GC, pauses, heaps
 *          jitstats         PerfView's JITStats: methods jitted, JIT time, IL/native size, tier
 *
 * INPUT:   folded stacks ("a;b;c 12", or "stack base test" for differentials)
 *          ntdll.dll!RtlUserThreadStart;app.exe!main;app.exe!work 120
 *          or an evt stream (first line "#evt"); flame/tree/... use Sample events.
 *
 * OUTPUT:  SVG, aligned text (default) or TSV (--tsv), JSON (speedscope).
 *
 * Exit status: 0 success, 1 some input lines were unusable (counted on
 * stderr), 2 usage or fatal error (also: no valid input for a flame graph).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "evt/evt.h"
#include "report/flame.h"
#include "report/dpcisr.h"
#include "stacks/stacks.h"
#include "report/views.h"
#include "report/pmu.h"
#include "report/tables.h"
#include "report/health.h"
#include "report/threadviews.h"
#include "report/diskio.h"
#include "report/clrstats.h"

enum mode {
	M_FLAME, M_TREE, M_CALLERS, M_CALLEES, M_BYNAME, M_SPEEDSCOPE,
	M_DPC, M_DPCISR, M_DPCSTACKS, M_DPCCHART, M_PMU,
	M_PROCESSES, M_THREADS, M_IMAGES, M_EVENTS, M_HEALTH,
	M_THREADTIME, M_INTERVALS, M_WAITCHAIN,
	M_DISKIO, M_HARDFAULTS, M_FILEIO, M_DISKSTACKS,
	M_GCSTATS, M_JITSTATS
};

static const struct { const char *name; enum mode m; } modes[] = {
	{ "flame", M_FLAME }, { "tree", M_TREE }, { "callers", M_CALLERS },
	{ "callees", M_CALLEES }, { "byname", M_BYNAME },
	{ "speedscope", M_SPEEDSCOPE }, { "dpc", M_DPC }, { "dpcisr", M_DPCISR },
	{ "dpcstacks", M_DPCSTACKS }, { "dpcchart", M_DPCCHART }, { "pmu", M_PMU },
	{ "processes", M_PROCESSES }, { "threads", M_THREADS }, { "images", M_IMAGES },
	{ "events", M_EVENTS }, { "health", M_HEALTH },
	{ "threadtime", M_THREADTIME }, { "intervals", M_INTERVALS }, { "waitchain", M_WAITCHAIN },
	{ "diskio", M_DISKIO }, { "hardfaults", M_HARDFAULTS }, { "fileio", M_FILEIO },
	{ "diskstacks", M_DISKSTACKS },
	{ "gcstats", M_GCSTATS }, { "jitstats", M_JITSTATS },
	{ NULL, 0 }
};

enum {
	O_TITLE = 256, O_SUBTITLE, O_WIDTH, O_HEIGHT, O_MINWIDTH, O_FONTTYPE,
	O_FONTSIZE, O_FONTWIDTH, O_COUNTNAME, O_NAMETYPE, O_COLORS, O_BGCOLORS,
	O_HASH, O_CP, O_PALFILE, O_REVERSE, O_INVERTED, O_FLAMECHART, O_NEGATE,
	O_FACTOR, O_TOTAL, O_NOTES, O_DIFF, O_NOUNESC, O_KIND, O_SEARCHCOLOR,
	O_TSV, O_MINPCT, O_BY, O_CPU, O_DPCONLY, O_ISRONLY, O_DPCLIMIT,
	O_ISRLIMIT, O_MODULE, O_LABEL, O_UNIT, O_LOGY, O_VERSION, O_MAXDEPTH,
	O_TID, O_FROM, O_TO, O_AT, O_MINUS, O_ERROR,
	O_HARDFAULTS
};

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, O_VERSION },
	{ "title", required_argument, NULL, O_TITLE },
	{ "subtitle", required_argument, NULL, O_SUBTITLE },
	{ "width", required_argument, NULL, O_WIDTH },
	{ "height", required_argument, NULL, O_HEIGHT },
	{ "minwidth", required_argument, NULL, O_MINWIDTH },
	{ "fonttype", required_argument, NULL, O_FONTTYPE },
	{ "fontsize", required_argument, NULL, O_FONTSIZE },
	{ "fontwidth", required_argument, NULL, O_FONTWIDTH },
	{ "countname", required_argument, NULL, O_COUNTNAME },
	{ "nametype", required_argument, NULL, O_NAMETYPE },
	{ "colors", required_argument, NULL, O_COLORS },
	{ "palette", required_argument, NULL, O_COLORS },
	{ "bgcolors", required_argument, NULL, O_BGCOLORS },
	{ "hash", no_argument, NULL, O_HASH },
	{ "cp", no_argument, NULL, O_CP },
	{ "palette-file", required_argument, NULL, O_PALFILE },
	{ "reverse", no_argument, NULL, O_REVERSE },
	{ "inverted", no_argument, NULL, O_INVERTED },
	{ "icicle", no_argument, NULL, O_INVERTED },
	{ "flamechart", no_argument, NULL, O_FLAMECHART },
	{ "negate", no_argument, NULL, O_NEGATE },
	{ "factor", required_argument, NULL, O_FACTOR },
	{ "total", required_argument, NULL, O_TOTAL },
	{ "notes", required_argument, NULL, O_NOTES },
	{ "diff", required_argument, NULL, O_DIFF },
	{ "no-unescape", no_argument, NULL, O_NOUNESC },
	{ "search-color", required_argument, NULL, O_SEARCHCOLOR },
	{ "tsv", no_argument, NULL, O_TSV },
	{ "min-percent", required_argument, NULL, O_MINPCT },
	{ "frame", required_argument, NULL, 'f' },
	{ "by", required_argument, NULL, O_BY },
	{ "cpu", required_argument, NULL, O_CPU },
	{ "dpc", no_argument, NULL, O_DPCONLY },
	{ "isr", no_argument, NULL, O_ISRONLY },
	{ "dpc-limit", required_argument, NULL, O_DPCLIMIT },
	{ "isr-limit", required_argument, NULL, O_ISRLIMIT },
	{ "module", required_argument, NULL, 'm' },
	{ "label", required_argument, NULL, O_LABEL },
	{ "log", no_argument, NULL, O_LOGY },
	{ "max-depth", required_argument, NULL, O_MAXDEPTH },
	{ "error", no_argument, NULL, O_ERROR },
	{ "tid", required_argument, NULL, O_TID },
	{ "from", required_argument, NULL, O_FROM },
	{ "to", required_argument, NULL, O_TO },
	{ "at", required_argument, NULL, O_AT },
	{ "min-us", required_argument, NULL, O_MINUS },
	{ "hard-faults", no_argument, NULL, O_HARDFAULTS },
	STK_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static void
usage(void)
{
	fprintf(stderr, "usage: render [flame|tree|callers|callees|byname|speedscope|"
	    "dpc|dpcisr|dpcstacks|dpcchart|pmu|\n"
	    "        processes|threads|images|events|health] [options] [-o FILE] [FILE...]\n");
	fprintf(stderr, "       render threadtime|intervals|waitchain [--tid T] [options] [FILE...]\n");
	fprintf(stderr, "       render diskio|hardfaults|fileio|diskstacks [--by KEY] [options] [FILE...]\n");
	fprintf(stderr, "       render gcstats|jitstats [--tsv] [-o FILE] [FILE...]\n");
}

static void
help(void)
{
	printf("usage: render [flame|tree|callers|callees|byname|speedscope|"
	    "dpc|dpcisr|dpcstacks|dpcchart|pmu|\n"
	    "        processes|threads|images|events|health] [options] [-o FILE] [FILE...]\n");
	printf("       render threadtime|intervals|waitchain [--tid T] [options] [FILE...]\n");
	printf("       render diskio|hardfaults|fileio|diskstacks [--by KEY] [options] [FILE...]\n");
	printf("       render gcstats|jitstats [--tsv] [-o FILE] [FILE...]\n");
	fputs(
"Flame graphs (folded or evt input):\n"
"  --title T --subtitle T --width PX --height PX(per frame) --minwidth PX|PCT%\n"
"  --colors hot|mem|io|wakeup|chain|java|js|perl|python|rust|etw|red|green|blue|\n"
"           aqua|yellow|purple|orange   --bgcolors yellow|blue|green|grey|#rrggbb\n"
"  --cp (palette.map) --palette-file F  --inverted (--icicle) --reverse --flamechart\n"
"  --countname N --nametype N --factor X --total N --notes TEXT --fonttype F\n"
"  --fontsize N --fontwidth N --search-color #rrggbb --no-unescape --kind KIND\n"
"  differential (\"stack base test\" lines): --diff leaf|inclusive --negate\n"
"Text views: tree [--min-percent P] [--max-depth N] [--error], callers|callees -f FRAME,\n"
"  byname [--error], speedscope [--by thread|process|all]; --tsv for tab-separated output;\n"
"  flame/tree/callers/callees/byname take stackfold's options (speedscope: --unit,\n"
"  --kind, --keep-idle); evt counts are samples for Sample, us for other kinds, and\n"
"  the Idle process's samples are left out (said on stderr):\n  " STK_OPTIONS_HELP "\n"
"DPC/ISR (evt input): dpc, dpcisr, dpcstacks [--unit us|ms|samples],\n"
"  dpcchart -m MODULE [--label L]... FILE..., with --cpu LIST --dpc --isr\n"
"  --dpc-limit US (100) --isr-limit US (25) --log\n"
"PMU (evt input): pmu [--tsv]  WindowsPerf GPC tables, per-period deltas, rates, IPC\n"
"First look (evt input, --tsv for tab-separated with a header line):\n"
"  processes, threads, images (PDB identity, symbol status), health (findings),\n"
"  events [--by KEY,...]  counts by provider,task,opcode,id,kind,process (all by default)\n"
"Thread time (evt input with Running/Ready/Waiting lines; --tsv for each):\n"
"  threadtime                   per thread: lifetime, running, ready, waiting, switch-ins,\n"
"                               waits, top wait reasons; per CPU: running, idle, span\n"
"  intervals --tid T [--from MS] [--to MS]\n"
"                               thread T's intervals in the window, clipped: state, CPU,\n"
"                               wait reason, who readied it, leaf-most frames\n"
"  waitchain --tid T [--at MS] [--min-us N]\n"
"                               the wait of T at MS (default its longest) and its wakers,\n"
"                               backwards, up to 8 hops; a waker's wait under N us ends it\n"
"  (thread-time stacks: flame/tree/byname --thread-time [--readied-by])\n"
"Disk and file I/O (evt input), [--tsv]:\n"
"  diskio [--by process|file|disk]  count, bytes, I/O and service time, p50/p90/p99/max\n"
"  diskio --hard-faults, hardfaults [--by file|process]  hard faults, bytes, wait time\n"
"  fileio [--by file|operation|process]  FileIo operations, bytes, time to OperationEnd\n"
"  diskstacks [--unit us|ms]  disk I/O time on the stacks of their starts, folded\n"
".NET (evt input; --tsv for tab-separated tables):\n"
"  gcstats   per process: GCs by generation, total/max pause, % paused, allocation\n"
"            rate, heap before/after, promoted; per GC: start, generation, reason,\n"
"            type, pause (SuspendEE begin to RestartEE end), heap before/after\n"
"  jitstats  per process, module and method: methods jitted, JIT time, IL and\n"
"            native size, tier (allocation and exception stacks: --kind=GCAllocationTick\n"
"            or --kind=Exception with flame/tree/byname)\n"
"  -o, --output=FILE  output (default stdout)   -h --help   --version\n"
"See render(1).\n", stdout);
	exit(0);
}

static enum mode
parse_mode(const char *s, int *found)
{
	int i;

	for (i = 0; modes[i].name; i++)
		if (strcmp(s, modes[i].name) == 0) {
			*found = 1;
			return modes[i].m;
		}
	*found = 0;
	return M_FLAME;
}

/* ------------------------------------------------------------------ */
/* reading stacks (folded or evt) for flame graphs and views           */

struct stack_sink {
	void (*add)(void *ctx, char *stack, size_t len, double c1, double c2,
	    int has2, const struct evt_event *ev);
	void *ctx;
	const char *kind;	/* evt: which kind's weights (default Sample) */
	const struct stk_config *cfg;	/* evt: the unit and the Idle rule (lib/stacks) */
	enum stk_unit unit;	/* stk_config_unit(cfg) */
	int64_t idle_events;	/* removed by the Idle rule */
	double idle_value, total_value;	/* in unit; the total includes Idle */
	int is_evt;		/* set by read_stacks for the caller */
	unsigned long bad;
	unsigned long other_kinds;
	struct evt_stack_cut cut;	/* this file's stacks cut to EVT_MAX_STACK_FRAMES */
};

/*
 * Every stack goes to the sink through here: one deeper than
 * EVT_MAX_STACK_FRAMES is cut first (lib/evt/evt.c), as lib/stacks does
 * for the other views, and counted for deep_done().
 */
static void
sink_add(struct stack_sink *s, unsigned long lineno, char *stack, size_t len,
    double c1, double c2, int has2, const struct evt_event *ev)
{
	stack = evt_cut_stack(&s->cut, stack, &len, lineno);
	s->add(s->ctx, stack, len, c1, c2, has2, ev);
}

/* The end of one input: says how many of its stacks were cut. */
static void
deep_done(struct stack_sink *s, const char *name)
{
	evt_cut_report(&s->cut, name);
}

static void
bad_line(struct stack_sink *s, const struct linereader *lr, const char *why)
{
	if (++s->bad <= 5)
		cli_warn("%s:%lu: %s, line skipped", lr_name(lr), lr_lineno(lr), why);
}

/*
 * A folded line through lib/evt's folded_parse().  Counts beyond 9e15
 * are refused: sums of them would pass 2^53, where doubles stop being
 * exact.
 */
static int
parse_folded_line(char *line, size_t len, char **stack, size_t *slen,
    double *c1, double *c2, int *has2)
{
	if (folded_parse(line, len, stack, slen, c1, c2, has2) < 0 || *c1 > 9e15 || *c2 > 9e15)
		return -1;
	return 0;
}

/* Is KIND in the comma-separated LIST? */
static int
kind_in(const char *list, const char *kind)
{
	size_t n = strlen(kind);
	const char *p = list;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n && memcmp(p, kind, n) == 0)
			return 1;
		p += l + (e != NULL);
	}
	return 0;
}

/* Was the event taken inside a DPC or an ISR (dpc=1, isr=1)? */
static int
in_interrupt(const struct evt_event *ev)
{
	const char *d = evt_attr(ev, "dpc"), *i = evt_attr(ev, "isr");

	return (d != NULL && strcmp(d, "1") == 0) || (i != NULL && strcmp(i, "1") == 0);
}

/* Reads one input into the sink.  Returns 0, or -1 if it cannot be opened. */
static int
read_stacks(const char *path, struct stack_sink *s)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int first = 1, evt = 0;
	struct evt_event ev;
	const char *why;
	double v;

	if (lr == NULL) {
		cli_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	while ((line = lr_next(lr, &len)) != NULL) {
		enum evt_linetype t = evt_classify(line, len);

		lr_progress(lr);
		if (t == EVT_BLANK)
			continue;
		if (first) {
			first = 0;
			if (t == EVT_HEADER) {
				struct evt_header h;

				if (evt_parse_header(line, len, &h, &why) < 0)
					cli_fatal("%s:%lu: %s", lr_name(lr), lr_lineno(lr), why);
				evt = 1;
				s->is_evt = 1;
				continue;
			}
		}
		if (t == EVT_META || t == EVT_HEADER)
			continue;
		if (evt) {
			if (evt_parse(line, len, &ev, &why) < 0) {
				bad_line(s, lr, why);
				continue;
			}
			if (!kind_in(s->kind, ev.kind)) {
				s->other_kinds++;
				continue;
			}
			if (stk_event_value(s->unit, &ev, &v, &why) < 0) {
				bad_line(s, lr, why);
				continue;
			}
			s->total_value += v;
			if (!s->cfg->keep_idle && stk_idle_event(
			    (struct evt_span){ ev.kind, strlen(ev.kind) },
			    (struct evt_span){ ev.process, strlen(ev.process) }, ev.pid,
			    in_interrupt(&ev))) {
				s->idle_events++;
				s->idle_value += v;
				continue;
			}
			sink_add(s, lr_lineno(lr), ev.stack, ev.stack_len, v, 0, 0, &ev);
		} else {
			char *stack;
			size_t slen;
			double c1, c2;
			int has2;

			if (parse_folded_line(line, len, &stack, &slen, &c1, &c2, &has2) < 0) {
				bad_line(s, lr, FOLDED_MALFORMED);
				continue;
			}
			sink_add(s, lr_lineno(lr), stack, slen, c1, c2, has2, NULL);
		}
	}
	cli_progress_end();
	deep_done(s, lr_name(lr));
	s->bad += lr_finish(lr);
	lr_close(lr);
	return 0;
}

static void
flame_sink(void *ctx, char *stack, size_t len, double c1, double c2, int has2,
    const struct evt_event *ev)
{
	(void)ev;
	flame_add(ctx, stack, len, c1, c2, has2);
}

static int
read_all(int argc, char **argv, struct stack_sink *s)
{
	int i, status = 0;

	if (argc == 0)
		return read_stacks("-", s) < 0 ? EXIT_FATAL : 0;
	for (i = 0; i < argc; i++)
		if (read_stacks(argv[i], s) < 0)
			status = EXIT_FATAL;
	return status;
}

static int
report_bad(const struct stack_sink *s)
{
	if (s->bad) {
		cli_warn("%lu unusable input line%s skipped", s->bad, s->bad == 1 ? "" : "s");
		return EXIT_PARTIAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */

struct options {
	struct flame_opts fo;
	int countname_set;
	const char *output;
	const char *kind;
	int tsv;
	double minpct;
	int maxdepth;
	int error;		/* --error: tree and byname rows get their sampling error */
	const char *focus;
	const char *by;
	int hard_faults;	/* diskio --hard-faults */
	struct dpc_opts dpc;
	struct stk_config stk;
	struct threadviews_opts tt;
	int tid_set;
	const char *labels[64];
	int nlabels;
};

/* A sink for evt or folded stacks of the kinds and in the unit OP asks for. */
static void
sink_init(struct stack_sink *s, const struct options *op,
    void (*add)(void *, char *, size_t, double, double, int, const struct evt_event *),
    void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->add = add;
	s->ctx = ctx;
	s->kind = op->kind;
	s->cfg = &op->stk;
	s->unit = stk_config_unit(&op->stk);
}

/* Were any of stackfold's shaping options given (grouping, folding, roots...)? */
static int
stk_wanted(const struct stk_config *c)
{
	return c->group || c->fold || c->include || c->exclude || c->fold_pct > 0 ||
	    c->roots != STK_ROOTS_NONE || c->kernel || c->unit_set || c->chain_groups ||
	    c->thread_time;
}

/*
 * Flame graph of stacks shaped by lib/stacks (--group, --fold, --roots,
 * ...): exactly what stackfold would write, without the pipe.
 */
static long
flame_from_stk(struct options *op, struct flame *f, int argc, char **argv)
{
	struct stk *S = stk_new(&op->stk);
	long bad = 0;
	uint32_t id, nn;
	char *buf = NULL;
	size_t cap = 0, len;
	double div;
	int i;

	if (argc == 0)
		bad += stk_read(S, "-");
	for (i = 0; i < argc; i++)
		bad += stk_read(S, argv[i]);
	stk_finish(S);
	div = stk_unit_div(S);
	nn = stk_nnodes(S);
	for (id = 1; id < nn; id++) {
		const struct stk_node *n = stk_node(S, id);

		if (n->folded || n->exc <= 0)
			continue;
		len = stk_path_text(S, id, buf, cap);
		if (len + 1 > cap) {
			cap = 2 * (len + 1);
			buf = xrealloc(buf, cap);
			len = stk_path_text(S, id, buf, cap);
		}
		flame_add(f, buf, len, (double)n->exc / div, 0, 0);
	}
	if (!op->countname_set)
		flame_set_countname(f, strcmp(stk_unit_name(S), "count") == 0 ? "samples" :
		    stk_unit_name(S));
	view_idle_note_stk(NULL, S);
	free(buf);
	stk_free(S);
	return bad;
}

static int
run_flame(struct options *op, int argc, char **argv)
{
	struct flame *f;
	struct stack_sink s;
	struct outbuf ob;
	int st = 0, r, i;

	f = flame_new(&op->fo);
	sink_init(&s, op, flame_sink, f);
	if (stk_wanted(&op->stk))
		s.bad = (unsigned long)flame_from_stk(op, f, argc, argv);
	else {
		if (argc == 0)
			st = read_stacks("-", &s) < 0 ? EXIT_FATAL : 0;
		for (i = 0; i < argc; i++)
			if (read_stacks(argv[i], &s) < 0)
				st = EXIT_FATAL;
	}
	evt_cut_free(&s.cut);
	if (st == EXIT_FATAL) {
		flame_free(f);
		return st;
	}
	ob_open(&ob, op->output);
	if (s.is_evt && !op->countname_set)
		flame_set_countname(f, stk_unit_text(s.unit));
	view_idle_note(NULL, s.idle_events, s.idle_value, s.total_value, stk_unit_text(s.unit));
	r = flame_write_svg(f, &ob);
	ob_close(&ob);
	flame_free(f);
	if (r < 0) {
		cli_warn("no valid input (no stack with a positive weight%s%s)",
		    s.is_evt ? " of kind " : "", s.is_evt ? op->kind : "");
		return EXIT_FATAL;
	}
	if (st)
		return st;
	return report_bad(&s);
}

static void
speedscope_sink(void *ctx, char *stack, size_t len, double c1, double c2, int has2,
    const struct evt_event *ev)
{
	speedscope_add(ctx, stack, len, has2 ? c2 : c1, ev);
}

static int
run_speedscope(struct options *op, int argc, char **argv)
{
	struct speedscope *ss;
	struct stack_sink s;
	struct outbuf ob;
	int st, r;
	enum speedscope_by by = SS_THREAD;

	if (op->by && strcmp(op->by, "process") == 0)
		by = SS_PROCESS;
	else if (op->by && strcmp(op->by, "all") == 0)
		by = SS_ALL;
	ss = speedscope_new(by, op->fo.no_unescape);
	sink_init(&s, op, speedscope_sink, ss);
	st = read_all(argc, argv, &s);
	evt_cut_free(&s.cut);
	if (st == EXIT_FATAL) {
		speedscope_free(ss);
		return st;
	}
	ob_open(&ob, op->output);
	view_idle_note(NULL, s.idle_events, s.idle_value, s.total_value, stk_unit_text(s.unit));
	r = speedscope_write(ss, op->fo.title ? op->fo.title :
	    (argc > 0 ? argv[0] : "etlkit profile"), s.is_evt ? stk_unit_text(s.unit) : NULL, &ob);
	ob_close(&ob);
	speedscope_free(ss);
	if (r < 0) {
		cli_warn("no valid input (no stacks%s%s)", s.is_evt ? " of kind " : "",
		    s.is_evt ? op->kind : "");
		return EXIT_FATAL;
	}
	return st ? st : report_bad(&s);
}

/* tree, callers, callees, byname: lib/stacks does grouping/folding, lib/views prints */
static int
run_view(struct options *op, enum mode m, int argc, char **argv)
{
	struct view_opts vo;
	struct stk *S;
	struct outbuf ob;
	long bad = 0;
	int i, r;

	if (m == M_SPEEDSCOPE)
		return run_speedscope(op, argc, argv);
	memset(&vo, 0, sizeof(vo));
	vo.tsv = op->tsv;
	vo.min_percent = op->minpct;
	vo.max_depth = op->maxdepth;
	vo.error = op->error;
	vo.focus = op->focus;
	if (m == M_BYNAME)
		op->stk.when = 1;	/* PerfView's When column */
	S = stk_new(&op->stk);
	if (argc == 0)
		bad += stk_read(S, "-");
	for (i = 0; i < argc; i++)
		bad += stk_read(S, argv[i]);
	stk_finish(S);
	view_idle_note_stk(NULL, S);
	ob_open(&ob, op->output);
	switch (m) {
	case M_TREE: r = view_tree(S, &vo, &ob); break;
	case M_CALLERS: r = view_caller_callee(S, &vo, 1, &ob); break;
	case M_CALLEES: r = view_caller_callee(S, &vo, 0, &ob); break;
	default: r = view_byname(S, &vo, &ob); break;
	}
	ob_close(&ob);
	stk_free(S);
	if (r < 0) {
		if (m == M_TREE || m == M_BYNAME)
			cli_warn("no valid input (no stacks with a weight)");
		return EXIT_FATAL;
	}
	if (bad) {
		cli_warn("%ld unusable input line%s skipped", bad, bad == 1 ? "" : "s");
		return EXIT_PARTIAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* DPC/ISR                                                             */

static int
run_dpc(struct options *op, enum mode m, int argc, char **argv)
{
	struct outbuf ob;
	int st = 0, i;

	if (m == M_PMU) {	/* lib/report/pmu.c; docs/pmu.md */
		struct pmu_opts po = { .tsv = op->tsv };
		struct pmu *pm = pmu_new(&po);

		if (argc == 0)
			st = pmu_read(pm, "-");
		for (i = 0; i < argc; i++) {
			int r = pmu_read(pm, argv[i]);

			if (r > st)
				st = r;
		}
		if (st != EXIT_FATAL) {
			ob_open(&ob, op->output);
			pmu_report(pm, &ob);
			ob_close(&ob);
		}
		pmu_free(pm);
		return st;
	}
	if (m == M_DPCCHART) {
		struct dpc_chart *ch;
		static char stdin_name[] = "-", *stdin_argv[] = { stdin_name, NULL };

		if (op->dpc.module == NULL)
			cli_usage_error("dpcchart needs -m MODULE");
		if (argc == 0)
			argc = 1, argv = stdin_argv;	/* outlives this block, as the loop needs */
		ch = dpc_chart_new(&op->dpc);
		for (i = 0; i < argc; i++) {
			int r = dpc_chart_add_trace(ch, argv[i],
			    i < op->nlabels ? op->labels[i] : NULL);

			if (r == EXIT_FATAL)
				return r;
			if (r > st)
				st = r;
		}
		ob_open(&ob, op->output);
		dpc_chart_write(ch, &ob);
		ob_close(&ob);
		dpc_chart_free(ch);
		return st;
	}
	{
		struct dpc_stats *ds;

		op->dpc.stacks = m == M_DPCSTACKS;	/* only dpcstacks reads the samples */
		ds = dpc_new(&op->dpc);

		if (argc == 0)
			st = dpc_read(ds, "-");
		for (i = 0; i < argc; i++) {
			int r = dpc_read(ds, argv[i]);

			if (r > st)
				st = r;
		}
		if (st == EXIT_FATAL) {
			dpc_free(ds);
			return st;
		}
		ob_open(&ob, op->output);
		if (m == M_DPC)
			dpc_report_functions(ds, &ob);
		else if (m == M_DPCISR)
			dpc_report_xperf(ds, &ob);
		else
			dpc_report_stacks(ds, &ob);
		ob_close(&ob);
		dpc_free(ds);
	}
	return st;
}

/* ------------------------------------------------------------------ */
/* the first look: tables and health (lib/report/tables.c, health.c)   */

static int
run_firstlook(struct options *op, enum mode m, int argc, char **argv)
{
	static const enum tables_view views[] = { TV_PROCESSES, TV_THREADS, TV_IMAGES, TV_EVENTS };
	struct tables_opts to = { .tsv = op->tsv, .by = op->by };
	struct tables *t = NULL;
	struct health *h = NULL;
	struct outbuf ob;
	const char *why = NULL;
	static char stdin_name[] = "-";
	char *stdin_argv[] = { stdin_name, NULL };
	int st = 0, i;

	if (argc == 0)
		argc = 1, argv = stdin_argv;
	if (m == M_HEALTH)
		h = health_new();
	else if ((t = tables_new(views[m - M_PROCESSES], &to, &why)) == NULL)
		cli_usage_error("%s", why);
	for (i = 0; i < argc; i++) {
		int r = h ? health_read(h, argv[i]) : tables_read(t, argv[i]);

		if (r > st)
			st = r;
	}
	if (st != EXIT_FATAL) {
		ob_open(&ob, op->output);
		if (h)
			health_report(h, op->tsv, &ob);
		else
			tables_report(t, &ob);
		ob_close(&ob);
	}
	health_free(h);
	tables_free(t);
	return st;
}

/* gcstats, jitstats: lib/report/clrstats.c */
static int
run_clrstats(struct options *op, enum mode m, int argc, char **argv)
{
	struct clrstats *cs = clrstats_new(m == M_GCSTATS ? CLRSTATS_GC : CLRSTATS_JIT, op->tsv);
	struct outbuf ob;
	int st = 0, i, r;

	if (argc == 0)
		st = clrstats_read(cs, "-");
	for (i = 0; i < argc; i++) {
		r = clrstats_read(cs, argv[i]);
		if (r > st)
			st = r;
	}
	if (st != EXIT_FATAL) {
		ob_open(&ob, op->output);
		clrstats_report(cs, &ob);
		ob_close(&ob);
	}
	clrstats_free(cs);
	return st;
}

/* threadtime, intervals, waitchain: lib/report/threadviews.c */
static int
run_threadtime(struct options *op, enum mode m, int argc, char **argv)
{
	struct threadviews *tt;
	struct outbuf ob;
	int st = 0, i, r;

	op->tt.view = m == M_THREADTIME ? TT_VIEW_THREADS : m == M_INTERVALS ?
	    TT_VIEW_INTERVALS : TT_VIEW_WAITCHAIN;
	op->tt.tsv = op->tsv;
	if (m != M_THREADTIME && !op->tid_set)
		cli_usage_error("%s needs --tid T", m == M_INTERVALS ? "intervals" : "waitchain");
	if (op->tt.from > op->tt.to)
		cli_usage_error("--from is after --to");
	tt = threadviews_new(&op->tt);
	if (argc == 0)
		st = threadviews_read(tt, "-");
	for (i = 0; i < argc; i++) {
		r = threadviews_read(tt, argv[i]);
		if (r > st)
			st = r;
	}
	if (st != EXIT_FATAL) {
		ob_open(&ob, op->output);
		r = threadviews_report(tt, &ob);
		ob_close(&ob);
		if (r > st)
			st = r;
	}
	threadviews_free(tt);
	return st;
}

/* ------------------------------------------------------------------ */
/* disk and file I/O (lib/report/diskio.c)                             */

static int
run_diskio(struct options *op, enum mode m, int argc, char **argv)
{
	struct diskio_opts o = { .tsv = op->tsv };
	struct outbuf ob;
	int st = 0;

	o.view = m == M_DISKIO ? DISKIO_DISK : m == M_HARDFAULTS ? DISKIO_HARDFAULTS :
	    m == M_DISKSTACKS ? DISKIO_STACKS : DISKIO_FILEIO;
	if (m == M_DISKSTACKS) {
		if (op->by)
			cli_usage_error("diskstacks takes no --by");
		if (op->dpc.unit && strcmp(op->dpc.unit, "samples") == 0)
			cli_usage_error("diskstacks: --unit must be us or ms");
		o.unit_ms = op->dpc.unit && strcmp(op->dpc.unit, "ms") == 0;
	}
	if (op->by) {
		int by = diskio_parse_by(o.view, op->by);

		if (by < 0)
			cli_usage_error("--by must be %s", o.view == DISKIO_DISK ? "process, file or disk" :
			    o.view == DISKIO_HARDFAULTS ? "file or process" : "file, operation or process");
		o.by = (enum diskio_by)by;
	}
	struct diskio *d = diskio_new(&o);
	if (argc == 0)
		st = diskio_read(d, "-");
	for (int i = 0; i < argc; i++) {
		int r = diskio_read(d, argv[i]);

		if (r > st)
			st = r;
	}
	if (st != EXIT_FATAL) {
		ob_open(&ob, op->output);
		diskio_report(d, &ob);
		ob_close(&ob);
	}
	diskio_free(d);
	return st;
}

static void
parse_cpus(struct dpc_opts *d, const char *s)
{
	const char *p = s;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a >= DPC_MAX_CPUS)
			cli_usage_error("--cpu: bad CPU list '%s' (e.g. 0,2,4-6)", s);
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b >= DPC_MAX_CPUS)
				cli_usage_error("--cpu: bad CPU range in '%s'", s);
		}
		for (; a <= b; a++)
			d->cpus[a] = 1;
		d->cpu_filter = 1;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			cli_usage_error("--cpu: bad CPU list '%s' (e.g. 0,2,4-6)", s);
	}
}

int
main(int argc, char **argv)
{
	struct options op;
	enum mode m = M_FLAME;
	int c, found = 0;

	cli_init(argv[0]);
	memset(&op, 0, sizeof(op));
	flame_opts_init(&op.fo);
	op.kind = "Sample";
	op.minpct = 0;
	dpc_opts_init(&op.dpc);
	stk_config_init(&op.stk);
	threadviews_opts_init(&op.tt);
	if (argc > 1 && argv[1][0] != '-') {
		m = parse_mode(argv[1], &found);
		if (found) {
			argv[1] = argv[0];
			argc--;
			argv++;
		}
	}
	while ((c = getopt_long(argc, argv, "ho:f:m:", longopts, NULL)) != -1) {
		if (c == STK_OPT_KIND)
			op.kind = optarg;	/* flame, speedscope; and lib/stacks below */
		if (c == STK_OPT_UNIT) {
			if (strcmp(optarg, "us") && strcmp(optarg, "ms") && strcmp(optarg, "samples"))
				cli_usage_error("--unit must be us, ms or samples");
			op.dpc.unit = optarg;
		}
		if (stk_option(&op.stk, c, optarg))
			continue;
		switch (c) {
		case 'h': help(); break;
		case O_VERSION: cli_version(); break;
		case 'o': op.output = optarg; break;
		case O_TITLE: op.fo.title = optarg; break;
		case O_SUBTITLE: op.fo.subtitle = optarg; break;
		case O_WIDTH:
			op.fo.width = cli_number("--width", optarg);
			if (op.fo.width < 40 || op.fo.width > 1e6)
				cli_usage_error("--width must be between 40 and 1000000");
			op.dpc.width = op.fo.width;
			break;
		case O_HEIGHT:
			op.fo.frameheight = cli_number("--height", optarg);
			if (op.fo.frameheight < 2 || op.fo.frameheight > 1000)
				cli_usage_error("--height must be between 2 and 1000");
			op.dpc.height = op.fo.frameheight;
			break;
		case O_MINWIDTH: {
			char buf[64];
			size_t n = strlen(optarg);

			if (n > 0 && n < sizeof(buf) && optarg[n - 1] == '%') {
				memcpy(buf, optarg, n - 1);
				buf[n - 1] = '\0';
				op.fo.minwidth = cli_number("--minwidth", buf);
				op.fo.minwidth_pct = 1;
			} else
				op.fo.minwidth = cli_number("--minwidth", optarg);
			break;
		}
		case O_FONTTYPE: op.fo.fonttype = optarg; break;
		case O_FONTSIZE:
			op.fo.fontsize = cli_number("--fontsize", optarg);
			if (op.fo.fontsize < 1 || op.fo.fontsize > 200)
				cli_usage_error("--fontsize must be between 1 and 200");
			break;
		case O_FONTWIDTH:
			op.fo.fontwidth = cli_number("--fontwidth", optarg);
			if (op.fo.fontwidth <= 0)
				cli_usage_error("--fontwidth must be positive");
			break;
		case O_COUNTNAME: op.fo.countname = optarg; op.countname_set = 1; break;
		case O_NAMETYPE: op.fo.nametype = optarg; break;
		case O_COLORS:
			if (!flame_palette_known(optarg))
				cli_usage_error("unknown palette '%s'", optarg);
			op.fo.palette = optarg;
			break;
		case O_BGCOLORS: op.fo.bgcolors = optarg; break;
		case O_HASH: break;	/* colours are always hashed from the name */
		case O_CP: op.fo.palette_file = "palette.map"; break;
		case O_PALFILE: op.fo.palette_file = optarg; break;
		case O_REVERSE: op.fo.reverse = 1; break;
		case O_INVERTED: op.fo.inverted = 1; break;
		case O_FLAMECHART: op.fo.flamechart = 1; break;
		case O_NEGATE: op.fo.negate = 1; break;
		case O_FACTOR: op.fo.factor = cli_number("--factor", optarg); break;
		case O_TOTAL: op.fo.total = cli_number("--total", optarg); break;
		case O_NOTES: op.fo.notes = optarg; break;
		case O_DIFF:
			if (strcmp(optarg, "leaf") == 0)
				op.fo.diffmode = FLAME_DIFF_LEAF;
			else if (strcmp(optarg, "inclusive") == 0)
				op.fo.diffmode = FLAME_DIFF_INCLUSIVE;
			else
				cli_usage_error("--diff must be leaf or inclusive");
			break;
		case O_NOUNESC: op.fo.no_unescape = 1; break;
		case O_SEARCHCOLOR: op.fo.searchcolor = optarg; break;
		case O_TSV: op.tsv = 1; op.dpc.tsv = 1; break;
		case O_MINPCT: op.minpct = cli_number("--min-percent", optarg); break;
		case O_MAXDEPTH: op.maxdepth = (int)cli_integer("--max-depth", optarg); break;
		case O_ERROR: op.error = 1; break;
		case 'f': op.focus = optarg; break;
		case O_BY: op.by = optarg; break;	/* checked once the mode is known */
		case O_HARDFAULTS: op.hard_faults = 1; break;
		case O_CPU: parse_cpus(&op.dpc, optarg); break;
		case O_DPCONLY: op.dpc.want_isr = 0; op.dpc.want_dpc = 1; break;
		case O_ISRONLY: op.dpc.want_dpc = 0; op.dpc.want_isr = 1; break;
		case O_DPCLIMIT: op.dpc.dpc_limit_us = cli_number("--dpc-limit", optarg); break;
		case O_ISRLIMIT: op.dpc.isr_limit_us = cli_number("--isr-limit", optarg); break;
		case 'm': op.dpc.module = optarg; break;
		case O_LABEL:
			if (op.nlabels == 64)
				cli_usage_error("at most 64 --label options");
			op.labels[op.nlabels++] = optarg;
			break;
		case O_LOGY: op.dpc.log_y = 1; break;
		case O_TID:
			op.tt.tid = cli_integer("--tid", optarg);
			op.tid_set = 1;
			break;
		case O_FROM: op.tt.from = cli_number("--from", optarg); break;
		case O_TO: op.tt.to = cli_number("--to", optarg); break;
		case O_AT: op.tt.at = cli_number("--at", optarg); break;
		case O_MINUS: op.tt.min_us = cli_number("--min-us", optarg); break;
		default:
			usage();
			exit(EXIT_FATAL);
		}
	}
	argc -= optind;
	argv += optind;
	if (!found && argc > 0) {
		/* "render FILE" is a flame graph; a mode given after options is accepted too */
		enum mode m2 = parse_mode(argv[0], &found);

		if (found) {
			m = m2;
			argc--;
			argv++;
		}
	}
	if (op.hard_faults && m == M_DISKIO)
		m = M_HARDFAULTS;
	if (op.hard_faults && m != M_HARDFAULTS)
		cli_usage_error("--hard-faults goes with diskio");
	if (m == M_DISKIO || m == M_HARDFAULTS || m == M_FILEIO || m == M_DISKSTACKS)
		return run_diskio(&op, m, argc, argv);
	if (op.by && m != M_EVENTS && strcmp(op.by, "thread") && strcmp(op.by, "process") &&
	    strcmp(op.by, "all"))
		cli_usage_error("--by must be thread, process or all");
	if (m >= M_PROCESSES && m <= M_HEALTH)
		return run_firstlook(&op, m, argc, argv);
	if ((m == M_CALLERS || m == M_CALLEES) && op.focus == NULL)
		cli_usage_error("%s needs -f FRAME", m == M_CALLERS ? "callers" : "callees");
	switch (m) {
	case M_FLAME: {
		int r = run_flame(&op, argc, argv);

		stk_config_free(&op.stk);
		return r;
	}
	case M_TREE: case M_CALLERS: case M_CALLEES: case M_BYNAME: case M_SPEEDSCOPE: {
		int r = run_view(&op, m, argc, argv);

		stk_config_free(&op.stk);
		return r;
	}
	case M_THREADTIME: case M_INTERVALS: case M_WAITCHAIN:
		return run_threadtime(&op, m, argc, argv);
	case M_GCSTATS: case M_JITSTATS:
		return run_clrstats(&op, m, argc, argv);
	default:
		return run_dpc(&op, m, argc, argv);
	}
}
