/*
 * clrstats.h - PerfView's GCStats and JITStats from an evt stream: per
 * .NET process, its garbage collections (generation, reason, pause,
 * heap sizes, promoted bytes, allocation rate) and its JIT compilations
 * (methods, JIT time, IL and native sizes, tier), as render gcstats and
 * render jitstats print them.
 *
 * The CLR events are known by their provider's GUID and event id, not by
 * their names, which differ between the schemas a trace embeds
 * ("GarbageCollection/Start") and etl2evt's built-in ones ("GC/Start").
 * Memory grows with processes, GCs and jitted methods, never with other
 * events.
 */
#ifndef ETLKIT_CLRSTATS_H
#define ETLKIT_CLRSTATS_H

#include "base/outbuf.h"

enum clrstats_view { CLRSTATS_GC, CLRSTATS_JIT };

struct clrstats;

struct clrstats *clrstats_new(enum clrstats_view v, int tsv);
/* Reads an evt stream ("-" = stdin).  Returns 0, 1 (some lines unusable, counted) or 2. */
int clrstats_read(struct clrstats *s, const char *path);
/* The per-process summary, then the per-GC (or per-module and per-method) tables. */
void clrstats_report(struct clrstats *s, struct outbuf *ob);
void clrstats_free(struct clrstats *s);

#endif
