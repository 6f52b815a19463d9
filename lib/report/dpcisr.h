/*
 * dpcisr.h - DPC/ISR statistics and reports from evt streams.
 *
 * Input: DPC, ThreadedDPC, TimerDPC and ISR events (start time, cpu,
 * duration_us or weight, module, routine) and, for the stacks report,
 * Sample events (time, cpu, dpc=1/isr=1, stack).
 *
 * Reports:
 *   dpc_report_functions  WPA's "DPC duration by Module, Function": count,
 *                         total, average, max, p50/p90/p99 per module and
 *                         per function, the share of each CPU's time in
 *                         DPC/ISR, interval statistics, guidance flags.
 *   dpc_report_xperf      xperf -a dpcisr: usage per module per CPU (us and
 *                         % of the CPU), power-of-two duration histograms.
 *   dpc_report_stacks     "DPC/ISR usage by Module, Stack": samples inside
 *                         a DPC/ISR on the same CPU as folded stacks.
 *   dpc_chart_*           sorted durations of one module, several traces.
 *
 * Memory grows with what the reports show, not with the events: a count
 * per distinct duration (exact percentiles) per row, and small per-CPU
 * windows that put starts and samples in time order (dpcstats.c).
 *
 * The code: dpcstats.c (reading, statistics), dpcisr.c (text/TSV and
 * stacks reports), dpcchart.c (the chart); dpcisr_int.h is what they share.
 */
#ifndef ETLKIT_DPCISR_H
#define ETLKIT_DPCISR_H

#include "evt/evt.h"

#define DPC_MAX_CPUS 4096

struct dpc_opts {
	int want_dpc, want_isr;
	double dpc_limit_us;	/* 100: DPCs longer than this are flagged */
	double isr_limit_us;	/* 25 */
	const char *module;	/* dpcchart */
	int cpu_filter;
	char cpus[DPC_MAX_CPUS];
	int tsv;
	int stacks;		/* read the samples, for dpc_report_stacks */
	const char *unit;	/* dpcstacks: us (default), ms, samples */
	double width, height;	/* dpcchart SVG size */
	int log_y;
};

void dpc_opts_init(struct dpc_opts *o);

struct dpc_stats;

struct dpc_stats *dpc_new(const struct dpc_opts *o);
/* Reads one evt input.  Returns 0, 1 (lines skipped) or 2 (cannot read). */
int dpc_read(struct dpc_stats *s, const char *path);
void dpc_report_functions(struct dpc_stats *s, struct outbuf *ob);
void dpc_report_xperf(struct dpc_stats *s, struct outbuf *ob);
void dpc_report_stacks(struct dpc_stats *s, struct outbuf *ob);
void dpc_free(struct dpc_stats *s);

struct dpc_chart;

struct dpc_chart *dpc_chart_new(const struct dpc_opts *o);
/* Adds the durations of opts->module from one trace.  Returns 0, 1 or 2 like dpc_read. */
int dpc_chart_add_trace(struct dpc_chart *c, const char *path, const char *label);
void dpc_chart_write(struct dpc_chart *c, struct outbuf *ob);
void dpc_chart_free(struct dpc_chart *c);

#endif
