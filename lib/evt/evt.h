/*
 * evt.h - reading and writing the evt text format (docs/evt-format.md)
 * and folded stacks.
 *
 * There is one reader of event lines, evt_split(): it finds the columns
 * of a line without copying or changing it, and numbers are parsed only
 * when a reader asks for them (evt_cols_time() ...), so a filter that
 * passes lines through byte for byte and a consumer that wants every
 * field check a line by the same rules and say the same things about
 * it.  evt_parse() is the full check on top of it: it cuts the line in
 * place (tabs become NULs) and points the fields of struct evt_event
 * into it.  Everything stays valid until the next call to lr_next().
 */
#ifndef ETLKIT_EVT_H
#define ETLKIT_EVT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/outbuf.h"

#define EVT_VERSION 1
#define EVT_MAX_ATTRS 64
#define EVT_MAX_LINE (64u << 20)	/* a line this long is skipped, not a reason to eat all memory */

/* ---------- line reader (plain or gzip input, transparently) ---------- */

struct linereader;

/* Opens PATH ("-" or NULL = stdin). Returns NULL and sets errno on failure. */
struct linereader *lr_open(const char *path);
/* Wraps an already open descriptor; NAME is used in messages. */
struct linereader *lr_fdopen(int fd, const char *name);
/*
 * Next line without its "\n" (and "\r"), NUL-terminated, writable.
 * Returns NULL at end of input or on error (see lr_error()).  Lines of
 * EVT_MAX_LINE bytes or more and lines with a NUL byte are skipped:
 * reported on stderr as "FILE:LINE: why, line skipped" (the first few)
 * and counted in lr_skipped(); the lines after them are read.
 */
char *lr_next(struct linereader *lr, size_t *len);
/* Lines skipped so far (too long, NUL bytes): callers count them as malformed. */
unsigned long lr_skipped(const struct linereader *lr);
/* No messages for skipped lines (they are still counted): for a second pass over an input. */
void lr_set_quiet(struct linereader *lr);
/* 1-based number of the line last returned. */
unsigned long lr_lineno(const struct linereader *lr);
const char *lr_name(const struct linereader *lr);
/*
 * NULL if the input ended cleanly, else a message (I/O error, corrupt or
 * truncated gzip "at compressed byte N"); the lines before it were read.
 * An input that is a trace, not text (an ETL file, a zip such as .etl.zip
 * or .diagsession, told by its first bytes), gives no line and the
 * message "this is an ETL file: run etl2evt first" (or "...a zip: ...").
 */
const char *lr_error(const struct linereader *lr);
void lr_close(struct linereader *lr);
/* Once per line read: the progress line on a terminal, every 65536 lines. */
void lr_progress(const struct linereader *lr);
/*
 * The end of a read: ends the progress line, says on stderr what stopped
 * the input early (an I/O error, a corrupt gzip), and returns the lines
 * lost: those the reader skipped (too long, NUL bytes; it named them)
 * plus one for an early stop.  The lines before the damage were read,
 * and every reader keeps them.  An input that is a trace (lr_error()) is
 * fatal: "FILE: this is an ETL file: run etl2evt first", exit 2.
 */
unsigned long lr_finish(struct linereader *lr);

/* ---------- evt lines ---------- */

struct evt_attr {
	char *key;
	char *val;		/* still escaped; see evt_unescape() */
};

struct evt_event {
	double time_ms;
	char *kind;
	int cpu;
	char *process;
	long pid;
	long tid;
	double weight;
	int nattr;
	struct evt_attr attr[EVT_MAX_ATTRS];
	char *stack;		/* root first, ";"-separated, may be "" */
	size_t stack_len;
	/* text of the numeric columns as they were written, for exact pass-through */
	char *time_text;
	char *weight_text;
};

enum evt_linetype { EVT_EVENT, EVT_HEADER, EVT_META, EVT_BLANK };

/* What kind of line is this (by its first bytes). */
enum evt_linetype evt_classify(const char *line, size_t len);

/* The fixed columns of an event line, in order. */
enum evt_col { EVT_TIME, EVT_KIND, EVT_CPU, EVT_PROCESS, EVT_PID, EVT_TID, EVT_WEIGHT,
    EVT_NCOLS };

/* Bytes of a line: P[0..N), not NUL-terminated. */
struct evt_span {
	char *p;
	size_t n;
};

/* An event line split into its columns, pointing into the unchanged line. */
struct evt_cols {
	char *line;
	size_t len;
	struct evt_span col[EVT_NCOLS];
	char *attrs;		/* the attribute columns, then the stack (the last column) */
};

/*
 * Splits an event line into its columns without copying or changing it.
 * Checks only the shape: at least 8 tab-separated columns and a kind.
 * Returns 0, or -1 with *why set to a static message.  The stack is not
 * looked for until a reader asks (evt_next_attr, evt_cols_stack): a
 * reader that skips the line by its kind never scans the rest of it.
 */
int evt_split(char *line, size_t len, struct evt_cols *c, const char **why);
/* The stack column: after the last tab, root first, may be empty. */
struct evt_span evt_cols_stack(const struct evt_cols *c);

/*
 * The numeric columns, parsed on demand.  Each returns 0, or -1 with
 * *why set to the one message every reader gives for that column.
 */
int evt_cols_time(const struct evt_cols *c, double *ms, const char **why);
/* Whether evt_cols_time would accept the time column, without converting it. */
int evt_cols_time_ok(const struct evt_cols *c, const char **why);
int evt_cols_weight(const struct evt_cols *c, double *ms, const char **why);
/* The weight in nanoseconds (millionths of a ms), exactly: for sums that must not drift. */
int evt_cols_weight_ns(const struct evt_cols *c, int64_t *ns, const char **why);
int evt_cols_cpu(const struct evt_cols *c, int *cpu, const char **why);
int evt_cols_pid(const struct evt_cols *c, long *pid, const char **why);
int evt_cols_tid(const struct evt_cols *c, long *tid, const char **why);

/*
 * The next attribute column at *AT (start with c->attrs): its key and
 * value (still escaped), and *AT moves past it.  Returns 1; 0 when *AT
 * is at the stack (the column with no tab after it), so after the last
 * attribute *AT is where the stack starts; or -1 with *why set for a
 * column that is not key=value.
 * Inline: it runs once per attribute of every line read, and a call
 * would cost as much as its work.
 */
#define EVT_WHY_ATTR "attribute column without key=value"
static inline int
evt_next_attr(const struct evt_cols *c, char **at, struct evt_span *key,
    struct evt_span *val, const char **why)
{
	char *p = *at, *tab, *eq;

	/* an attribute column ends with a tab; the stack, the last column, does not */
	tab = (char *)memchr(p, '\t', (size_t)(c->line + c->len - p));
	if (tab == NULL)
		return 0;
	eq = (char *)memchr(p, '=', (size_t)(tab - p));
	if (eq == NULL || eq == p) {
		*why = EVT_WHY_ATTR;
		return -1;
	}
	key->p = p;
	key->n = (size_t)(eq - p);
	val->p = eq + 1;
	val->n = (size_t)(tab - eq - 1);
	*at = tab + 1;
	return 1;
}

/* The value of attribute KEY, or NULL (columns that are not key=value are passed over). */
const char *evt_cols_attr(const struct evt_cols *c, const char *key, size_t *n);

/*
 * Parses an event line in place: evt_split(), every column and every
 * attribute.  Returns 0, or -1 with *why set to a static message when
 * the line is malformed.
 */
int evt_parse(char *line, size_t len, struct evt_event *ev, const char **why);

/* Value of attribute KEY or NULL. */
const char *evt_attr(const struct evt_event *ev, const char *key);

/* Header: "#evt\t1\tkey=value...".  Parsed in place. */
struct evt_header {
	int version;
	int nkv;
	struct evt_attr kv[EVT_MAX_ATTRS];
};
int evt_parse_header(char *line, size_t len, struct evt_header *h, const char **why);
const char *evt_header_get(const struct evt_header *h, const char *key);

/* ---------- escaping ---------- */

/*
 * Appends S[0..N) escaped per docs/evt-format.md §4 to OUT (which must
 * have room for 3*N bytes).  IN_STACK also escapes ';'.  Returns the
 * number of bytes written.
 */
size_t evt_escape(char *out, const char *s, size_t n, int in_stack);
/* Reverses evt_escape in place; returns the new length. */
size_t evt_unescape(char *s, size_t n);

/* ---------- numbers ---------- */

/*
 * Fast decimal parser for the time and weight columns ("-12.345600").
 * Refuses magnitudes >= EVT_MAX_MS (1e12 ms, 31 years): no real trace
 * has them, and the formatters below are exact only well inside it.
 */
#define EVT_MAX_MS 1e12
int evt_parse_decimal(const char *s, double *out);
/*
 * S[0..N) ("-12.3456789") in millionths, exactly, for weights and
 * counts: digits past the sixth are rounded.  Magnitudes of EVT_MAX_MS
 * and more are refused.
 */
int evt_parse_millionths(const char *s, size_t n, int64_t *out);
/*
 * Writes V with exactly 6 fraction digits (the time column).  Returns length.
 * OUT needs 32 bytes.  Values beyond +-9e12 ms are saturated (with a warning).
 */
int evt_format_time(char *out, double ms);
/* Time from integer nanoseconds: exact, no floating point. */
int evt_format_time_ns(char *out, int64_t ns);
/* V in decimal, not terminated (OUT needs 20 bytes).  Returns the length. */
int evt_format_u64(char *out, uint64_t v);
/* V in lower-case hex, at least WIDTH (up to 16) digits, no "0x", not terminated.  Returns the length. */
int evt_format_hex(char *out, uint64_t v, int width);
/* The N bytes at P as 2N lower-case hex digits, not terminated. */
void evt_format_hexbytes(char *out, const uint8_t *p, size_t n);
/* Shortest decimal for a weight (up to 6 fraction digits, trailing zeros trimmed). */
int evt_format_weight(char *out, double ms);
/* The same for a weight of NS nanoseconds (OUT needs 32 bytes). */
int evt_format_weight_ns(char *out, int64_t ns);
/* V / 10^6, exactly, with up to 6 fraction digits, trailing zeros trimmed (OUT needs 32 bytes). */
int evt_format_fixed6(char *out, int64_t v);

/* ---------- folded stacks ---------- */

/*
 * Splits a folded line "a;b;c 12" in place: *stack gets "a;b;c",
 * *count the number, and *count2 a second column when present
 * (diff form "stack 10 12"; *has2 tells).  Returns 0 or -1 (malformed,
 * reported as FOLDED_MALFORMED).  It reads the line from its end and
 * never scans the stack itself, the most of a long line.
 */
#define FOLDED_MALFORMED "not a folded stack line (\"frames count\")"
int folded_parse(char *line, size_t len, char **stack, size_t *stack_len,
    double *count, double *count2, int *has2);
/* The same without writing: the stack is LINE[0..*stack_len) (a mapped file's bytes). */
int folded_parse_span(const char *line, size_t len, size_t *stack_len,
    double *count, double *count2, int *has2);

/*
 * The most frames a stack keeps (docs/hardening.md, "Deep stacks and
 * hostile names"): Windows stack walks give a few hundred at most, and
 * every view grows with depth.
 * A deeper stack keeps its EVT_MAX_STACK_FRAMES / 2 root-side frames
 * and the leaf-side frames that fill the rest, and the frames between
 * become one frame "[N frames elided]", so it has exactly
 * EVT_MAX_STACK_FRAMES frames and keeps its weight.
 */
#define EVT_MAX_STACK_FRAMES 4096
#define EVT_STACK_HEAD_FRAMES (EVT_MAX_STACK_FRAMES / 2)	/* kept root-side */
#define EVT_STACK_TAIL_FRAMES (EVT_MAX_STACK_FRAMES - EVT_STACK_HEAD_FRAMES - 1)	/* leaf-side */

/*
 * Applies that cap to STACK[0..LEN) (";"-separated, root first).
 * Returns N, the number of frames elided, with the shortened text in
 * *BUF (*CAP bytes, grown as needed) and its length in *OUTLEN; 0 when
 * the stack is within the cap (nothing written).
 */
size_t evt_stack_cap(const char *stack, size_t len, char **buf, size_t *cap,
    size_t *outlen);

/*
 * The stacks of one input cut by that cap, counted for one message at its
 * end: every reader of stacks that is not lib/stacks keeps one of these.
 */
struct evt_stack_cut {
	char *buf;			/* the cut copy of the last deep stack */
	size_t cap;
	unsigned long first_line;	/* the first line cut */
	int64_t stacks, frames;		/* stacks cut, frames elided */
};

/* STACK itself, or its cut copy (in C, *LEN updated) with the cut counted at LINE. */
char *evt_cut_stack(struct evt_stack_cut *c, char *stack, size_t *len, unsigned long line);
/* Says on stderr how many stacks of NAME were cut, if any, and counts anew. */
void evt_cut_report(struct evt_stack_cut *c, const char *name);
void evt_cut_free(struct evt_stack_cut *c);
/*
 * The message itself, for readers that count otherwise (lib/stacks):
 * "tool: NAME:LINE: N stacks deeper than 4096 frames: M frames elided".
 */
void evt_warn_cut(const char *name, unsigned long first_line, int64_t stacks,
    int64_t frames);

/* ---------- the read loop of an evt report ---------- */

/*
 * What evt_each() hands each line to, by its type (a NULL callback skips
 * those lines).  Event lines come split (evt_split); the callback parses
 * the columns it needs.  A callback returns 0, -1 with *WHY set when the
 * line is unusable (counted and skipped), or -2 with *WHY set when the
 * whole input is (the read stops, exit 2).
 */
struct evt_handlers {
	void *ctx;
	int (*header)(void *ctx, char *line, size_t len, const char **why);
	int (*meta)(void *ctx, char *line, size_t len, const char **why);
	int (*event)(void *ctx, struct evt_cols *c, const char **why);
	/* when set: the input must begin with the #evt header, else this is why it is unusable */
	const char *need_header;
};

/*
 * Reads the evt file PATH ("-" for stdin) through H: the loop every report
 * over evt shares, so that all of them skip, name and count bad lines the
 * same way.  The first five unusable lines are named FILE:LINE on stderr,
 * then their count in one line.  Returns 0, EXIT_PARTIAL when lines were
 * skipped (*SKIPPED, when not NULL, gets how many), EXIT_FATAL when PATH
 * cannot be opened or a callback said the input is unusable.
 */
int evt_each(const char *path, const struct evt_handlers *h, uint64_t *skipped);

#endif
