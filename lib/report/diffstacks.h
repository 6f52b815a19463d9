/*
 * diffstacks.h - two-sided stack tables for diff and overweight.
 *
 * A table (struct diffstacks) maps a string (a whole folded stack, or one
 * frame name) to two weights and two sample counts, side 0 = baseline,
 * side 1 = test.  Keys live in an interning table (base/intern.h) and
 * entries in one array indexed by a key's id, so memory grows with the
 * number of distinct keys, never with the input size, and inserting does
 * not allocate per line.
 *
 * diffstacks_read() fills a table from an evt or folded file: it decides
 * the format from the first non-empty line (docs/evt-format.md §5), turns
 * evt events into stacks with stackfold's lib (and folded stacks too
 * when grouping/folding options are given), strips process and thread
 * ids so the same code path in two traces lands on the same key, counts
 * and reports unusable lines.  A regular, uncompressed folded file is
 * mapped (base/mapfile.h); the first input's stacks are kept in place as
 * slices of the mapping, not copied (the table then holds the mapping
 * until diffstacks_free()), a later input's new stacks are copied and
 * its pages handed back as it is read.  A small single-member gzip file is inflated whole
 * (evt/gzwhole.h) and read the same way.  Stdin, pipes, larger or damaged
 * gzip and evt input are read line by line and their keys copied; both
 * paths give the same table and say the same things about bad lines.
 */
#ifndef ETLKIT_DIFFSTACKS_H
#define ETLKIT_DIFFSTACKS_H

#include <stddef.h>
#include <stdint.h>

struct stk_config;

/* the weights of a key; diffstacks_key() is its text */
struct diffstacks_entry {
	uint32_t mark;		/* free for the caller (overweight: last stack seen) */
	uint32_t depth;		/* free for the caller (overweight: least depth seen) */
	uint64_t set;		/* free for the caller (overweight: fingerprint of its stacks) */
	double w[2];		/* weight per side */
	double n[2];		/* samples per side */
};

struct diffstacks;

struct diffstacks *diffstacks_new(void);
void diffstacks_free(struct diffstacks *t);
/* Finds KEY or inserts it with zero weights; returns its index (0, 1, 2... as first seen). */
size_t diffstacks_intern(struct diffstacks *t, const char *key, size_t len);
size_t diffstacks_size(const struct diffstacks *t);
/* Valid until the next diffstacks_intern(). */
struct diffstacks_entry *diffstacks_at(struct diffstacks *t, size_t i);
/*
 * Entry I's key, valid until diffstacks_free(), and its length.  Not
 * NUL-terminated when it lies in a mapped input file: use the length.
 */
const char *diffstacks_key(const struct diffstacks *t, size_t i);
size_t diffstacks_key_len(const struct diffstacks *t, size_t i);
/* Indexes of all entries sorted by key (bytewise); caller frees. */
size_t *diffstacks_sorted(struct diffstacks *t);

struct diffstacks_opts {
	int keep_ids;		/* do not strip pids/tids */
	int perf_ids;		/* also strip "comm-PID[/TID]" from the first frame */
	int strip_hex;		/* rewrite 0x<hex> to 0x... (difffolded -s) */
	double per_sample;	/* folded input: weight of one sample (default 1) */
	/*
	 * stackfold's configuration (lib/stacks/stacks.h): evt input always goes
	 * through it (kinds, units, roots, patterns as stackfold does them);
	 * folded input only when SHAPE_FOLDED is set (a pattern option was
	 * given), else folded stacks are compared as they are, like
	 * difffolded.pl.  Fold% is never applied.
	 */
	const struct stk_config *stk;
	int shape_folded;
	int fold_pct_given;
	int max_reports;	/* bad lines reported one by one per file (default 10) */
};

/*
 * The options diff and overweight share: stackfold's (STK_LONGOPTS)
 * and DIFFSTACKS_LONGOPTS below.  diffstacks_option() returns 1 when it
 * took OPT; diffstacks_options_done() after getopt: Fold% off (with a
 * warning if it was asked for), scenario and FlameGraph root ids off
 * unless --keep-ids.
 */
enum {
	DIFFSTACKS_OPT_KEEPIDS = 0x5200, DIFFSTACKS_OPT_PERFIDS, DIFFSTACKS_OPT_STRIPHEX
};
#define DIFFSTACKS_LONGOPTS \
	{ "keep-ids", no_argument, NULL, DIFFSTACKS_OPT_KEEPIDS }, \
	{ "perf-ids", no_argument, NULL, DIFFSTACKS_OPT_PERFIDS }, \
	{ "strip-hex", no_argument, NULL, DIFFSTACKS_OPT_STRIPHEX }
int diffstacks_option(struct diffstacks_opts *o, struct stk_config *cfg, int opt,
    const char *arg);
void diffstacks_options_done(struct diffstacks_opts *o, struct stk_config *cfg);

struct diffstacks_stats {
	int is_evt;
	unsigned long lines;	/* data lines read (not comments or blank) */
	unsigned long counted;	/* lines whose weight was counted */
	unsigned long bad;	/* unusable lines, reported */
	unsigned long dropped;	/* samples ExcPats/IncPats dropped */
	unsigned long ignored;	/* evt events of kinds not counted */
	int fractional;		/* some count had a fraction */
	double total[2];	/* weight counted per side (after the transform) */
	double samples[2];
	double dropped_weight;
	unsigned long idle;	/* evt events the Idle rule removed (stk_idle_event) */
	double idle_weight;	/* their weight, in unit */
	char unit[16];		/* "us", "ms", "samples" for evt input; "" when unknown */
};

/*
 * Reads PATH ("-" = stdin) into T.  SIDE is 0 or 1, or -1 for a file in
 * the two-count form "stack base test" that fills both sides.
 * Returns 0, or -1 when the file could not be opened or read (message
 * already printed).  Bad lines are reported as "FILE:LINE: why".
 */
int diffstacks_read(struct diffstacks *t, int side, const char *path,
    const struct diffstacks_opts *o, struct diffstacks_stats *st);

/* Formats a weight: integer form when integral, else up to 6 decimals. */
int diffstacks_format(char *out, double v);

#endif
