/*
 * pmu.h - the PMU view: Arm WindowsPerf's ReadGPC events (decoded by
 * etl2evt into p.Core, p.Event, ... attributes) as the WindowsPerf WPA
 * plugin's two tables, plus what the plugin does not do: the driver's
 * values are running totals, so per-period deltas and rates per (core,
 * event), and derived ratios (instructions per cycle) per core and period.
 * docs/pmu.md describes the output.
 */
#ifndef ETLKIT_PMU_H
#define ETLKIT_PMU_H

#include "evt/evt.h"

struct pmu_opts {
	int tsv;		/* tab-separated rows instead of aligned tables */
};

struct pmu;

struct pmu *pmu_new(const struct pmu_opts *o);
/* Reads an evt stream ("-" = stdin).  Returns 0, 1 (some lines unusable, counted) or 2 (fatal). */
int pmu_read(struct pmu *p, const char *path);
void pmu_report(struct pmu *p, struct outbuf *ob);
void pmu_free(struct pmu *p);

#endif
