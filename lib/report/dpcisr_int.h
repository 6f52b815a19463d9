/*
 * dpcisr_int.h - what the DPC/ISR files share; filters use dpcisr.h.
 *
 *   dpcstats.c  reading evt streams into the statistics: rows per
 *               module and per function (a count per distinct duration,
 *               for exact percentiles), per-CPU usage, intervals between
 *               starts, and each sample matched with the DPC/ISR that
 *               covers it, through per-CPU reorder windows
 *   dpcisr.c    the text/TSV reports and the folded stacks report
 *   dpcchart.c  the SVG chart of sorted durations
 */
#ifndef ETLKIT_DPCISR_INT_H
#define ETLKIT_DPCISR_INT_H

#include "report/dpcisr.h"
#include "base/hmap.h"
#include "base/intern.h"

#include <stddef.h>
#include <stdint.h>

#define NBUCKETS 64		/* power-of-two duration buckets */

enum { C_DPC, C_ISR };		/* event classes */

/*
 * A count per distinct duration: exact ranks (percentiles, the chart's
 * sorted durations) in memory that grows with the distinct values, not
 * with the events.  Durations are whole ticks of the trace clock, so a
 * module has at most its longest duration times clock_freq of them, and
 * far fewer in practice: 3,662 for the 172,000 ndis.sys DPCs of the
 * synthesised incident, each 16 bytes plus its hash slot.
 */
struct dpc_dur {
	double us;
	uint64_t n;
};

struct dpc_durs {
	struct dpc_dur *v;	/* ascending once sorted */
	size_t n, cap;
	struct hmap idx;	/* the duration's bits -> index in v, until sorted */
	uint64_t total;		/* the sum of the counts */
	int sorted;
};

/*
 * The starts of one module's routines on one CPU not yet turned into
 * intervals: lines come in end order (docs/evt-format.md §2.2), so a start
 * can come after later ones, by at most the longest routine; starts wait
 * here, in order, until the CPU's log has moved a window past them.
 */
struct dpc_startq {
	int64_t *t;		/* ns, ascending from head */
	size_t head, n, cap;
	int64_t last;		/* the last start taken out, if have_last */
	int have_last;
};

/* one (class, kind, module, function) or (class, module) row */
struct dpc_row {
	int cls;
	char *kind;		/* DPC, TimerDPC, ThreadedDPC, ISR; NULL for module rows */
	char *module;
	char *func;		/* NULL for module rows */
	uint64_t count, over;
	double total_us, max_us;
	struct dpc_durs dur;	/* every duration, as counts, for percentiles */
	/* intervals between successive starts on one CPU (module rows), in ns */
	uint64_t nint;
	int64_t sum_int_ns, min_int_ns, max_int_ns;
	double sum_int, min_int, max_int;	/* the same in us, once sorted */
	struct dpc_startq **startq;	/* per CPU, NULL until one starts there */
	size_t nstartq;
	/* module rows: usage per CPU and the histogram */
	double *cpu_us;
	size_t ncpu;
	uint64_t bucket[NBUCKETS];
};

struct dpc_rows {
	struct dpc_row **r;
	size_t n, cap;
	uint32_t *tab;
	size_t mask;
};

/* a DPC/ISR on one CPU, for the stacks report */
struct dpc_interval {
	int64_t start, end;	/* ns, [start, end): exact, at any time in the trace */
	int cls;
	uint32_t module;	/* module row index */
};

/* a sample waiting for the routines that may cover it */
struct dpc_sample {
	int64_t t;		/* ns */
	double w;
	char *stack;		/* the evt stack column (a copy) */
	size_t stack_len;
	unsigned char flags;	/* 1 dpc=1, 2 isr=1 */
};

/*
 * One CPU's log so far.  A sample can be attributed once no routine that
 * covers it can still come.  Routines are logged when they end (docs/
 * evt-format.md §2.2), and one that covers the sample ends after every
 * routine it interrupted, so as soon as one covering routine is in, the
 * innermost is.  A sample no routine covers yet waits for the window (the
 * longest routine so far, twice, plus 1 ms); one the trace flags dpc=1 or
 * isr=1 waits also until the CPU is seen outside routines (an unflagged
 * sample) a window after it: the trace's first long DPC, however long,
 * gets its samples.
 */
struct dpc_cpuwin {
	int64_t seen_ns;	/* the latest log time (routine end, sample time) */
	int have_seen;
	struct dpc_interval *iv;	/* those that ended before done_ns go, now and then */
	size_t niv, capiv, niv_kept;	/* niv_kept: how many the last sweep kept */
	struct dpc_sample *smp;	/* ascending time from head */
	size_t head, nsmp, capsmp;
	int64_t done_ns;	/* samples before this are attributed, or held (flagged) */
	int64_t bare_ns;	/* the last sample attributed to no routine, if have_bare */
	int have_bare;
	int64_t outside_ns;	/* the last sample not flagged dpc=1/isr=1, if have_outside */
	int have_outside;
};

/* one (root, stack) pair of the stacks report and its weight */
struct dpc_agg {
	uint32_t root, stack;
	double w;
	const char *root_name, *stack_name;
};

struct dpc_aggtab {
	struct dpc_agg *a;
	size_t n, cap;
	uint32_t *tab;
	size_t mask;
};

struct dpc_stats {
	struct dpc_opts o;
	struct dpc_rows funcs, mods;
	double cpu_us[2][DPC_MAX_CPUS];
	int maxcpu;
	double first_ms, last_ms, duration_ms;
	int have_time;
	char *source;
	int cpus_hdr;
	unsigned long bad, events;
	unsigned inputs;	/* dpc_read calls so far */
	/* the reorder window of this input: twice its longest routine, plus 1 ms */
	int64_t maxdur_ns, window_ns;
	struct dpc_cpuwin **win;	/* per CPU, NULL until a line comes there */
	size_t nwin;
	unsigned long late_starts, late_samples, late_routines;
	/* dpcstacks */
	int want_samples;
	unsigned long nsamples;
	struct intern stacks;	/* the attributed samples' stacks, by id */
	struct intern roots;	/* "[DPC] module" */
	struct dpc_aggtab agg;
	unsigned long st_matched, st_window_only, st_flag_only, st_outside;
};

/* Adds N durations of US microseconds. */
void dpc_durs_add(struct dpc_durs *d, double us, uint64_t n);
/* Sorts the durations, ascending; no more can be added. */
void dpc_durs_sort(struct dpc_durs *d);
void dpc_durs_free(struct dpc_durs *d);
/*
 * Sorts each row's durations and the rows (class, then total, longest
 * first); module rows get their intervals between starts.
 */
void dpc_sort_rows(struct dpc_rows *t);
/* Nearest-rank percentile of the sorted durations. */
double dpc_percentile(const struct dpc_row *r, double p);
/* The trace's length: the headers' duration_ms, else first to last event. */
double dpc_trace_ms(const struct dpc_stats *s);
/* CPUs to show: the highest seen or the headers' cpus=, whichever is more. */
int dpc_ncpus(const struct dpc_stats *s);
/* Adds sample SM to the stacks report, under BEST, the innermost routine covering it, or NULL. */
void dpc_attribute(struct dpc_stats *s, const struct dpc_sample *sm, const struct dpc_interval *best);

#endif
