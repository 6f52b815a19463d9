/*
 * stacks.h - stacks as PerfView shapes them: frame interning, GroupPats,
 * FoldPats, IncPats/ExcPats, recursion collapse, a call tree with
 * Fold%, and the ByName view (reference-semantics §2.1-2.6).
 *
 * Typical use (any tool that reads evt or folded stacks):
 *
 *	struct stk_config cfg;
 *	stk_config_init(&cfg);
 *	while ((c = getopt_long(argc, argv, "...", longopts, NULL)) != -1)
 *		if (!stk_option(&cfg, c, optarg))    // handles STK_LONGOPTS
 *			switch (c) { ... your own options ... }
 *	struct stk *S = stk_new(&cfg);           // compiles the patterns
 *	stk_read(S, path);                       // evt or folded, per file
 *	stk_finish(S);                           // inclusive sums, Fold%
 *	stk_write_folded(S, &ob);                // or walk the tree / stk_byname
 *	stk_free(S);
 *
 * Order of operations per sample (PerfView's): kind/time selection ->
 * root frames (scenario, process, thread) -> per frame, root to leaf:
 * group -> ExcPats -> fold (FoldPats or same identity as the caller)
 * -> IncPats bits; then IncPats (AND) on the whole stack; then the tree;
 * then Fold%.  Grouping and folding conserve the total exactly: metrics
 * are integers (millionths of the input unit) throughout.
 */
#ifndef ETLKIT_STACKS_H
#define ETLKIT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "evt/evt.h"

/* ---------- configuration and shared command-line options ---------- */

enum stk_roots {
	STK_ROOTS_NONE,		/* code frames only (default) */
	STK_ROOTS_PROCESS,	/* "Process64 app (1234)" */
	STK_ROOTS_THREAD,	/* "Process64 app (1234)" then "Thread (5678)" */
	STK_ROOTS_COMM,		/* FlameGraph: "app" (stackcollapse-perf default) */
	STK_ROOTS_PID,		/* FlameGraph: "app-1234" */
	STK_ROOTS_TID		/* FlameGraph: "app-1234/5678" */
};

/*
 * The unit of evt metrics.  Without --unit it is chosen by what is read
 * (stk_config_unit): samples when only Sample events are read, as
 * flamegraph.pl and inferno call every count a sample; microseconds of
 * the weight column when any duration-weighted kind is (DPC, ISR,
 * thread time, disk I/O), or a mix; bytes when only CLR allocations
 * (GCAllocationTick, weighted in bytes) are; CLR exceptions (Exception)
 * are counted as samples are.
 */
enum stk_unit {
	STK_UNIT_US,		/* microseconds of the weight column */
	STK_UNIT_MS,		/* milliseconds */
	STK_UNIT_SAMPLES,	/* events (times their count= attribute) */
	STK_UNIT_BYTES		/* the weight column as bytes (GCAllocationTick) */
};

struct stk_config {
	char *group;		/* GroupPats, ';'-separated (--group, --preset add to it) */
	char *fold;		/* FoldPats */
	char *include;		/* IncPats: every entry must match some frame (AND) */
	char *exclude;		/* ExcPats: any match drops the sample */
	double fold_pct;	/* Fold% (0 = off) */
	int chain_groups;	/* feed a normal group's name to later entries (PerfView's code) */
	int keep_addrs;		/* do not merge module!0xRVA / module!? frames into module!? */
	int kernel;		/* append _[k] to kernel frames (evt kframes=N) */
	int no_scenario;	/* do not add the header's scenario= as a root frame */
	int when;		/* collect the 32-bucket When histograms (stk_byname) */
	int no_times;		/* no stk_byname: evt times are checked, not kept (first/last) */
	enum stk_roots roots;
	enum stk_unit unit;
	char *kinds;		/* comma list of evt kinds to read; NULL = Sample */
	int decimals;		/* fraction digits in folded output (0 = integers) */
	int unit_set;		/* --unit was given (tools may pick their own default otherwise) */
	int roots_set;		/* --roots was given */
	int thread_time;	/* PerfView's Thread Time view (see STK_OPT_THREADTIME) */
	int readied_by;		/* ...with (READIED_BY) and the waker under wait pseudo-frames */
	int keep_idle;		/* --keep-idle: keep the Idle process's samples (stk_idle_event) */
	int threads;		/* threads reading folded input: 0 one per core, 1 the caller's alone */
};

/*
 * Long options every stack tool accepts; put STK_LONGOPTS inside your
 * struct option array and pass each getopt_long result to stk_option():
 *   --group=PATS --fold=PATS --include=PATS --exclude=PATS --fold-pct=N
 *   --preset=NAME[,NAME] --chain-groups --keep-addrs --kernel
 *   --roots=none|process|thread|comm|pid|tid --unit=us|ms|samples|bytes
 *   --kind=LIST --decimals=N --no-scenario --keep-idle
 */
enum {
	STK_OPT_GROUP = 0x5100, STK_OPT_FOLD, STK_OPT_INCLUDE, STK_OPT_EXCLUDE,
	STK_OPT_FOLDPCT, STK_OPT_PRESET, STK_OPT_CHAIN, STK_OPT_KEEPADDRS,
	STK_OPT_KERNEL, STK_OPT_ROOTS, STK_OPT_UNIT, STK_OPT_KIND,
	STK_OPT_DECIMALS, STK_OPT_NOSCENARIO, STK_OPT_KEEPIDLE,
	/*
	 * Thread time (docs/evt-format.md's Running/Ready/Waiting): reads
	 * Sample, Ready and Waiting lines, drops the Idle process (pid 0),
	 * ends Sample stacks with CPU_TIME (Ready and Waiting lines carry
	 * READIED_TIME, BLOCKED_TIME... already), roots process;thread.
	 * --readied-by implies it.
	 */
	STK_OPT_THREADTIME, STK_OPT_READIEDBY
};
#define STK_LONGOPTS \
	{ "group", required_argument, NULL, STK_OPT_GROUP }, \
	{ "fold", required_argument, NULL, STK_OPT_FOLD }, \
	{ "include", required_argument, NULL, STK_OPT_INCLUDE }, \
	{ "exclude", required_argument, NULL, STK_OPT_EXCLUDE }, \
	{ "fold-pct", required_argument, NULL, STK_OPT_FOLDPCT }, \
	{ "preset", required_argument, NULL, STK_OPT_PRESET }, \
	{ "chain-groups", no_argument, NULL, STK_OPT_CHAIN }, \
	{ "keep-addrs", no_argument, NULL, STK_OPT_KEEPADDRS }, \
	{ "kernel", no_argument, NULL, STK_OPT_KERNEL }, \
	{ "roots", required_argument, NULL, STK_OPT_ROOTS }, \
	{ "unit", required_argument, NULL, STK_OPT_UNIT }, \
	{ "kind", required_argument, NULL, STK_OPT_KIND }, \
	{ "decimals", required_argument, NULL, STK_OPT_DECIMALS }, \
	{ "no-scenario", no_argument, NULL, STK_OPT_NOSCENARIO }, \
	{ "keep-idle", no_argument, NULL, STK_OPT_KEEPIDLE }, \
	{ "thread-time", no_argument, NULL, STK_OPT_THREADTIME }, \
	{ "readied-by", no_argument, NULL, STK_OPT_READIEDBY }
/* One line for usage()/--help listing the shared options. */
#define STK_OPTIONS_HELP \
	"[--preset=NAME] [--group=PATS] [--fold=PATS] [--include=PATS] [--exclude=PATS]\n" \
	"  [--fold-pct=N] [--chain-groups] [--keep-addrs] [--kernel] [--roots=STYLE]\n" \
	"  [--unit=us|ms|samples|bytes] [--kind=LIST] [--decimals=N] [--no-scenario] [--keep-idle]\n" \
	"  [--thread-time [--readied-by]]"

void stk_config_init(struct stk_config *cfg);
/* Handles one shared option; returns 1 if OPT was one, else 0.  Bad values exit 2. */
int stk_option(struct stk_config *cfg, int opt, const char *arg);
/* "name\tdescription\n" lines of every preset (for --help / --list-presets). */
const char *stk_preset_list(void);
/* Appends ";"+S to *DST (helper for accumulating pattern options). */
void stk_append(char **dst, const char *s);
void stk_config_free(struct stk_config *cfg);
/*
 * The unit CFG counts evt weights in: --unit if given, else samples when
 * the kinds read (--kind, default Sample) are Sample only, else us.
 */
enum stk_unit stk_config_unit(const struct stk_config *cfg);

/*
 * The Idle rule, one for every tool that builds stacks (PerfView's CPU
 * stacks leave out "Process% Idle"; evtfilter removes the same events):
 * an event of kind Sample or Running whose process is Idle (pid 0, or
 * the process column "Idle") is CPU time nobody used, and is removed
 * unless --keep-idle.  Not removed: a Sample taken inside a DPC or ISR
 * (IN_INTERRUPT: its dpc=1 or isr=1), which is a driver's CPU time on a
 * CPU that was idle, and every other kind (DPC and ISR lines with pid 0
 * are still DPC/ISR time).  The removed weight is counted
 * (stk_stats.idle_*) and reported by the tool.
 */
int stk_idle_event(struct evt_span kind, struct evt_span process, long pid, int in_interrupt);
/*
 * What one evt event counts in UNIT, into *VALUE: its count= (1 when
 * absent) for samples, else its weight column in us or ms.  For tools
 * that keep events whole (render speedscope, render flame without
 * stackfold's options).  Returns -1 with *WHY set for a bad count=.
 */
int stk_event_value(enum stk_unit unit, const struct evt_event *ev, double *value,
    const char **why);
/* "us", "ms" or "samples". */
const char *stk_unit_text(enum stk_unit unit);

/* ---------- the stack set ---------- */

#define STK_ROOT 0u		/* node id of ROOT */
#define STK_NONE 0xffffffffu

struct stk_node {
	uint32_t frame;		/* frame id (stk_name); STK_NONE for ROOT */
	uint32_t parent;	/* STK_NONE for ROOT */
	uint32_t child;		/* first child, STK_NONE if a leaf */
	uint32_t sibling;	/* next sibling, STK_NONE if last */
	int64_t exc, inc;	/* metric in millionths of the unit (see stk_unit_div) */
	int64_t exc_count, inc_count;	/* events */
	int folded;		/* this node was folded into its parent by Fold% */
	/*
	 * (What Fold% moved into a node and its first/last times are kept
	 * apart, only when there are any: a node is 56 bytes, and there is
	 * one per distinct (caller path, frame).  stk_byname sums them.)
	 */
};

struct stk_stats {
	int64_t events;		/* events/lines offered (after kind selection) */
	int64_t metric;		/* their total metric */
	int64_t kept_events, kept_metric;
	int64_t excluded_events, excluded_metric;	/* dropped by ExcPats */
	int64_t notincluded_events, notincluded_metric;	/* dropped by IncPats */
	int64_t other_kinds;	/* evt events of kinds not selected */
	int64_t bad_lines;	/* malformed lines (reported on stderr) */
	int64_t folded_pct_nodes, folded_pct_metric;	/* Fold% */
	int64_t long_frames;	/* frame names cut to STK_MAX_FRAME bytes */
	int64_t deep_stacks;	/* stacks cut to EVT_MAX_STACK_FRAMES frames */
	int64_t elided_frames;	/* the frames they lost (each stack's run is one "[N frames elided]" frame) */
	int64_t idle_events, idle_metric;	/* removed by the Idle rule (not in events/metric) */
	int64_t readied_by;	/* --readied-by: waits given their waker's frames */
};

#define STK_MAX_FRAME 4096	/* longer frame names are cut (ending "...") */

struct stk;

struct stk *stk_new(const struct stk_config *cfg);	/* exits 2 on a bad pattern */
void stk_free(struct stk *S);

/*
 * Reads a whole input (PATH "-" = stdin): evt if its first non-empty
 * line starts with "#evt", else folded.  Malformed lines are reported
 * as "tool: FILE:LINE: why" (the first few) and counted in bad_lines.
 * Returns the number of bad lines; an unreadable file exits 2.  Folded
 * input of 64 KB or more is read by threads of its own (cfg.threads;
 * the result is the same as one thread's): a regular file is cut into
 * one piece per thread, each folded alone, then merged; a pipe or gzip
 * goes through a pipeline of two threads while the caller's builds the
 * tree.  S is not to be touched by other threads meanwhile.
 */
long stk_read(struct stk *S, const char *path);
/*
 * Feeds one line yourself (call stk_reset_format() before each new
 * stream).  Returns 0, or -1 with *WHY set for a malformed line.
 */
int stk_feed(struct stk *S, char *line, size_t len, const char **why);
void stk_reset_format(struct stk *S);

/*
 * The core: adds one sample.  PREFIX = root-side pseudo-frame ids
 * (scenario, process, thread; from stk_intern), STACK = ';'-separated
 * frames root first (evt-escaped or folded text), KFRAMES = how many
 * leaf-side frames are kernel frames (for --kernel), METRIC in
 * millionths of the unit, COUNT events, T_MS start time (NAN if none),
 * DUR_MS the time it covers (for When).  Returns the leaf node, or
 * STK_NONE if ExcPats/IncPats dropped it.  A sample with no frame left
 * lands on the frame "[no stack]".  Sums saturate instead of overflowing.
 * Evt events with a routine= attribute (DPC/ISR) get it as the leaf frame.
 * A stack deeper than EVT_MAX_STACK_FRAMES is cut (evt_stack_cap) and
 * counted in deep_stacks / elided_frames.
 */
uint32_t stk_add(struct stk *S, const uint32_t *prefix, int nprefix,
    const char *stack, size_t len, int kframes, int64_t metric, int64_t count,
    double t_ms, double dur_ms);

/* Frame names. */
uint32_t stk_intern(struct stk *S, const char *s, size_t n);
const char *stk_name(const struct stk *S, uint32_t frame);
uint32_t stk_nframes(const struct stk *S);

/* Computes inclusive sums and first/last, then applies Fold%.  Call once. */
void stk_finish(struct stk *S);

/* The tree (valid after stk_finish). Node 0 is ROOT. */
const struct stk_node *stk_node(const struct stk *S, uint32_t id);
uint32_t stk_nnodes(const struct stk *S);
/* Reorders every sibling list: by name (BY_NAME=1) or by |inclusive| descending. */
void stk_sort_children(struct stk *S, int by_name);
/*
 * Pre-order walk of the unfolded nodes: returns the node after ID
 * (start with STK_ROOT), STK_NONE at the end; *DEPTH is updated.
 */
uint32_t stk_next(const struct stk *S, uint32_t id, int *depth);

/*
 * The folded text of the path ROOT..NODE ("a;b;c", output spellings)
 * into BUF (CAP bytes, NUL-terminated, truncated if short).  Returns the
 * full length needed.
 */
size_t stk_path_text(struct stk *S, uint32_t node, char *buf, size_t cap);

/* Divisor from the metric to the output unit (1e6 for ms/samples/folded, 1e3 for us). */
double stk_unit_div(const struct stk *S);
/* "us", "ms", "samples" or "count" (folded input). */
const char *stk_unit_name(const struct stk *S);
const struct stk_stats *stk_get_stats(const struct stk *S);

/*
 * Folded output: one line per node with exclusive metric, root first,
 * names with "%3B" turned into ':' (never a ';' inside a frame), counts
 * as integers in the unit (or with cfg.decimals digits), rounded by
 * carrying the remainder so the output total equals the rounded input
 * total exactly.  Lines rounding to 0 are left out.  Weight that Fold%
 * moved into ROOT itself is written as the line "ROOT N".
 */
void stk_write_folded(struct stk *S, struct outbuf *ob);

/* ---------- ByName (reference §2.6) ---------- */

#define STK_WHEN_BUCKETS 32

struct stk_byname {
	uint32_t frame;
	int64_t exc, exc_count;
	int64_t inc, inc_count;	/* a sample counts once even if the frame recurs */
	int64_t fold, fold_count;
	double first, last;	/* ms, NAN if unknown */
	int64_t when[STK_WHEN_BUCKETS];	/* inclusive metric per bucket (cfg.when) */
};

/*
 * Builds the ByName rows (after stk_finish), sorted by |exclusive| then
 * |inclusive| descending, then name.  Caller frees *ROWS.
 */
int stk_byname(struct stk *S, struct stk_byname **rows, int *n);
/* The When range [*START, *END] in ms and whether times were seen. */
int stk_when_range(const struct stk *S, double *start, double *end);
/*
 * PerfView's When text (32 chars + NUL) for a row: 100% = one CPU busy
 * for the whole bucket for time units (us/ms), and for samples when the
 * header gives sample_interval_ms; else half the largest ROOT bucket.
 */
void stk_when_text(const struct stk *S, const int64_t *when, char *out);

#endif
