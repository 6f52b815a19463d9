/*
 * convert.h - ETL → evt: decoding kernel and user events into evt lines
 * (docs/evt-format.md), with stacks resolved to module!0xRVA, and the
 * --census counts.  filters/etl2evt.c is argument parsing around this.
 * The code is lib/etl/convert*.c; convert_int.h says how its parts fit.
 */
#ifndef ETLKIT_CONVERT_H
#define ETLKIT_CONVERT_H

#include <stdint.h>

#include "base/outbuf.h"
#include "etl/etl.h"
#include "etl/images.h"

struct etl2evt_opts {
	const char *source;	/* for the header's source= */
	int full_paths;		/* module column: full DOS/NT path */
	int addrs;		/* unknown frames as ?!0xADDR */
	int utc;		/* utc= attribute on every event */
	const char *kinds;	/* comma-separated kinds to keep, NULL = all */
	const char *procs;	/* comma-separated process names or pids, NULL = all */
	int has_from, has_to;
	double from_ms, to_ms;	/* time range (ms since trace start), inclusive */
	int progress;		/* cli_progress while converting */
	int no_thread_time;	/* no Running/Ready/Waiting lines from context switches */
	int tt_behind;		/* thread-time lines may be made on the output's writing thread */
	etl_symbol_fn sym;	/* optional symbol lookup */
	etl_symcount_fn symcount;	/* and its counter for frames made once and kept */
	void *symctx;
};

struct etl2evt_result {
	uint64_t events;	/* lines written */
	uint64_t unmatched_stacks;	/* stacks that belong to no event */
	uint64_t unresolved_keys;	/* stack keys with no definition */
};

/*
 * Writes the evt stream for the trace held in NR files (usually one;
 * several files of one session, e.g. a .diagsession's kernel and user
 * files, are merged on their absolute times).  Returns 0, or 1 if
 * anything was skipped.
 */
int etl2evt_convert(struct etl_reader **rs, size_t nr, const struct etl2evt_opts *o,
    struct outbuf *ob, struct etl2evt_result *res);

/*
 * Writes the per-kind counts in the layout of ../shared/corpus/census:
 * "COUNT  K SYSTEM64   GroupName g=0x05 t=0x03(3) Name",
 * "COUNT  E EVENT_HEADER64 Provider", "COUNT  F FULL64 Class type=N".
 */
void etl_census(struct etl_reader *r, struct outbuf *ob);

#endif
