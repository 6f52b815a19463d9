/*
 * dpcisr_int.h - what the DPC/ISR files share; filters use dpcisr.h.
 *
 *   dpcstats.c  reading evt streams into the statistics: rows per
 *               module and per function (every duration, for exact
 *               percentiles), per-CPU usage, intervals between starts,
 *               the DPC/ISR intervals and samples for the stacks report
 *   dpcisr.c    the text/TSV reports and the folded stacks report
 *   dpcchart.c  the SVG chart of sorted durations
 */
#ifndef ETLKIT_DPCISR_INT_H
#define ETLKIT_DPCISR_INT_H

#include "report/dpcisr.h"
#include "base/intern.h"

#include <stddef.h>
#include <stdint.h>

#define NBUCKETS 64		/* power-of-two duration buckets */

enum { C_DPC, C_ISR };		/* event classes */

/* where a routine started: intervals are between starts on one CPU of one input */
struct dpc_start {
	double t;
	int cpu;
	unsigned input;
};

/* one (class, kind, module, function) or (class, module) row */
struct dpc_row {
	int cls;
	char *kind;		/* DPC, TimerDPC, ThreadedDPC, ISR; NULL for module rows */
	char *module;
	char *func;		/* NULL for module rows */
	uint64_t count, over;
	double total_us, max_us;
	double *dur;		/* every duration, for percentiles */
	size_t ndur, capdur;
	/* intervals between successive starts (module rows), from starts[] when sorted */
	uint64_t nint;
	double sum_int, min_int, max_int;
	/*
	 * Every start, since lines come in end order (docs/evt-format.md §2):
	 * a routine interrupted by one of the same module is logged after it,
	 * so start order needs a sort, as the percentiles do.
	 */
	struct dpc_start *starts;
	size_t nstarts, capstarts;
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

struct dpc_interval {
	double start, end;
	int cpu;
	int cls;
	uint32_t module;	/* module row index */
};

struct dpc_sample {
	double t, w;
	uint32_t stack;
	int cpu;
	unsigned char flags;	/* 1 dpc=1, 2 isr=1 */
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
	/* dpcstacks */
	int want_samples;
	struct dpc_interval *iv;
	size_t niv, capiv;
	struct dpc_sample *smp;
	size_t nsmp, capsmp;
	struct intern stacks;	/* the samples' stacks, by id */
	unsigned long st_matched, st_window_only, st_flag_only, st_outside;
};

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

#endif
