/*
 * health.h - is this trace whole?  What a performance engineer checks
 * before believing any number of a trace, read from its evt stream and
 * said as findings: lost events and buffers, missing rundown (processes
 * "?", frames "?!?"), too few samples, PROFILE and CSWITCH stacks in the
 * same trace, the clock and the sampling interval, CPUs without samples
 * over long stretches, DPC/ISR intervals cut by the trace's edges.
 *
 * Each finding has a severity (ok, note, warn, bad), a name, the number
 * it rests on, and what it skews.  render health prints them, worst
 * first.  (etl2evt's own end-of-trace warning, which etlkit-run keeps in
 * its run report, checks the three serious ones while converting.)
 */
#ifndef ETLKIT_HEALTH_H
#define ETLKIT_HEALTH_H

#include "base/outbuf.h"

struct health;

struct health *health_new(void);
/* Reads an evt stream ("-" = stdin).  Returns 0, 1 (some lines unusable, counted) or 2. */
int health_read(struct health *h, const char *path);
/* Prints the findings, worst first: aligned, or as TSV with a header line. */
void health_report(struct health *h, int tsv, struct outbuf *ob);
void health_free(struct health *h);

#endif
