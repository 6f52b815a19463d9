/*
 * timeline.h - scripted thread timelines of an etlgen scenario
 * (timeline: in docs/scenario-format.md): what each thread does over
 * time, from which the context switches, ReadyThread events (waker and
 * stack), DPCs and samples are written, and the thread-time truth
 * (the Running/Ready/Waiting intervals of the contract in
 * docs/evt-format.md) that etl2evt must derive from them.
 */
#ifndef ETLKIT_TIMELINE_H
#define ETLKIT_TIMELINE_H

/* Adds the timeline's events to the model (before the DPCs are settled). */
void timeline_generate(void);
/*
 * Writes the truth to PATH: one TSV line per interval, in start order per
 * thread, after scenwrite_trace (which sets the trace's last event time).
 * Exits 2 if the scenario has no timeline: or on I/O errors.
 */
void timeline_truth(const char *path);

#endif
