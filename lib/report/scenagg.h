/*
 * scenagg.h - multi-scenario stack aggregation (PerfView's scenario sets),
 * shared by aggregate(1) and etlkit-run(1).
 *
 * Many evt or folded streams, each belonging to a named scenario, are
 * summed into one table keyed by (scenario, stack).  Weights are kept as
 * integers in millionths of the input unit, so sums are exact and
 * associative: aggregating partial aggregates (merge mode) gives the same
 * numbers as aggregating everything at once, in any order.
 */
#ifndef ETLKIT_SCENAGG_H
#define ETLKIT_SCENAGG_H

#include <stddef.h>
#include <stdint.h>

#include "evt/evt.h"

#define SCENAGG_UNIT 1000000	/* stored weights are input units x 10^6 */

struct scenagg;

/* Counts for one input file. */
struct scenagg_file_stats {
	unsigned long lines;		/* stack lines used */
	unsigned long skipped;		/* malformed lines, reported on stderr */
	unsigned long ignored;		/* evt events of kinds not read */
	int64_t weight;			/* total added, x 10^6 */
	int64_t idle_events;		/* evt events the Idle rule removed (stk_idle_event) */
	int64_t idle_weight, read_weight;	/* theirs, and all events' read (Idle included), x 10^6 */
	const char *error;		/* read error that ended the file early, or NULL */
};

struct scenagg_out_opts {
	int scenario_frame;	/* put the scenario as a pseudo-frame at the root */
	int mean;		/* divide by the number of scenarios */
	int integer;		/* round to integers, keeping the total (largest remainder) */
};

struct scenagg *scenagg_new(void);
void scenagg_free(struct scenagg *sa);

/* Id of scenario NAME (created on first use). */
int scenagg_scenario(struct scenagg *sa, const char *name);
int scenagg_nscenarios(const struct scenagg *sa);
/* Number of input files added to scenario ID. */
void scenagg_count_file(struct scenagg *sa, int id);

/*
 * Reads one folded file (gzip transparently) into scenario SCEN, the
 * lines as they are.  With SCEN == SCENAGG_MERGE each line's first frame
 * is its scenario (partial aggregates written with scenario_frame).
 * Returns 0 when the file could be opened, -1 (errno set) otherwise.
 * Malformed lines (and evt input: see scenagg_read_stacks) are reported
 * as "tool: FILE:LINE: why", the first few of each file, and counted.
 */
#define SCENAGG_MERGE (-1)
int scenagg_read(struct scenagg *sa, int scen, const char *path,
    struct scenagg_file_stats *st);

struct stk_config;
/*
 * Reads one evt or folded file through lib/stacks with CFG (stackfold's
 * kinds, units, root frames, grouping and folding; Fold% per file) into
 * scenario SCEN, the same stacks stackfold would write.  Returns 0, or
 * -1 (errno set) when the file cannot be opened.
 */
int scenagg_read_stacks(struct scenagg *sa, int scen, const char *path,
    const struct stk_config *cfg, struct scenagg_file_stats *st);

/* 1 if PATH is an evt stream (first non-empty line "#evt"), 0 if not, -1 unreadable. */
int scenagg_is_evt(const char *path);

/* The scenario an evt file declares in its header ("scenario=NAME"), or NULL (malloc'ed). */
char *scenagg_header_scenario(const char *path);

/* Writes the folded stacks, sorted by scenario name then stack. */
void scenagg_write_folded(struct scenagg *sa, struct outbuf *ob,
    const struct scenagg_out_opts *oo);

/*
 * Writes the by-name table (TSV): one row per frame name with exclusive
 * and inclusive weight, PerfView's Which histogram and the inclusive
 * weight per scenario.
 */
void scenagg_write_byname(struct scenagg *sa, struct outbuf *ob,
    const struct scenagg_out_opts *oo);

/*
 * Scenario name from a file name: PAT is a glob over the file's base name
 * whose '*' runs are captured; NAME is the name pattern with $1..$9
 * (captures) and $0 (the base name without its data suffixes).  With no
 * PAT, $1 is that base name too.  Returns a malloc'ed name with ';' and
 * control characters made safe for a frame, or NULL when PAT does not
 * match.
 */
char *scenagg_name_from_path(const char *path, const char *pat, const char *name);

/*
 * Glob match of S against PAT ('*' any run, '?' one character, '[...]'
 * a class), recording up to NCAP captured '*' runs as offsets into S.
 * Returns 1 on a match.
 */
int scenagg_glob(const char *pat, const char *s, size_t cap_start[], size_t cap_len[], int ncap, int *ncaptured);

#endif
