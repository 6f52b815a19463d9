/*
 * evtwrite.h - the evt writer: event lines built in a growing buffer
 * (time, kind, cpu, process, pid, tid, weight, attributes, stack; see
 * docs/evt-format.md §2), with untrusted text escaped per §4, and the
 * header and "#name key=value" metadata lines from key/value pairs.
 *
 * A decoder writes millions of lines through these, so the appenders are
 * inline here; only growing the buffer and whole metadata lines are
 * calls into evtwrite.c.
 *
 *	struct evtw_line l = { 0 };
 *	evtw_begin(&l, time_ns, "Sample", cpu, "app.exe", pid, tid, weight_ns);
 *	evtw_kv_x(&l, "ip", ip);
 *	evtw_stack_begin(&l);
 *	evtw_frame(&l, "ntdll.dll!0x1234", 16);	(root first; evtw_frame_sep between)
 *	evtw_end(&l);
 *	ob_write(ob, l.b, l.n);
 */
#ifndef ETLKIT_EVTWRITE_H
#define ETLKIT_EVTWRITE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/outbuf.h"
#include "evt/evt.h"

struct evtw_line {
	char *b;
	size_t n, cap;	/* the line is b[0..n); b has room for one more byte */
};

/* Makes room for K more bytes (and one spare). */
void evtw_grow(struct evtw_line *l, size_t k);
void evtw_free(struct evtw_line *l);

/*
 * Which bytes §4 escapes: bit 1 everywhere, bit 2 in the stack column
 * only (';').  A table and a copy of each clean run, because names and
 * paths rarely need escaping and this is a decoder's hottest loop.
 */
extern const uint8_t evtw_escapes[256];
#define EVTW_ESC_ALWAYS 1
#define EVTW_ESC_STACK 2

static inline void
evtw_mem(struct evtw_line *l, const void *s, size_t n)
{
	if (l->n + n + 1 > l->cap)
		evtw_grow(l, n);
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

/*
 * Room for K more bytes (and the spare): where they go.  The appenders
 * below that write several pieces take room once and write through a
 * local pointer, then set l->n: every byte stored through l->b may alias
 * l itself, so a length kept in l would be reloaded after each one.
 */
static inline char *
evtw_room(struct evtw_line *l, size_t k)
{
	if (l->n + k + 1 > l->cap)
		evtw_grow(l, k);
	return l->b + l->n;
}

/*
 * S[0..N) from a buffer of PAD >= N bytes, PAD a constant: all PAD bytes
 * are copied (a few wide moves) and N kept.  A short copy whose length
 * the compiler can bound (a uint8_t) is otherwise inlined as "rep movs",
 * slow to start: it was a third of the thread-time lines' time.
 */
static inline void
evtw_mem_pad(struct evtw_line *l, const void *s, size_t n, size_t pad)
{
	char *o = evtw_room(l, pad);
	memcpy(o, s, pad);
	l->n += n;
}

static inline void
evtw_ch(struct evtw_line *l, char c)
{
	if (l->n + 2 > l->cap)
		evtw_grow(l, 1);
	l->b[l->n++] = c;
}

static inline void
evtw_str(struct evtw_line *l, const char *s)
{
	evtw_mem(l, s, strlen(s));
}

/*
 * Whether the 8 bytes of X hold one §4 escapes (IN_STACK: ';' too), a
 * few operations for the 8: a byte below 0x20 borrows into its top bit,
 * and so does a zero byte of X ^ c for each single byte c.  A borrow
 * only starts at a byte that matches, so the answer is exact.
 */
static inline int
evtw_word_escapes(uint64_t x, int in_stack)
{
	const uint64_t ones = 0x0101010101010101ull, tops = 0x8080808080808080ull;
	uint64_t pc = x ^ (ones * '%'), del = x ^ (ones * 0x7f);
	uint64_t hit = ((x - ones * 0x20) & ~x) | ((pc - ones) & ~pc) | ((del - ones) & ~del);
	if (in_stack) {
		uint64_t sc = x ^ (ones * ';');
		hit |= (sc - ones) & ~sc;
	}
	return (hit & tops) != 0;
}

/*
 * S[0..N) (valid UTF-8 already) escaped; IN_STACK also escapes ';'.
 * Names and paths rarely need escaping: 8 bytes are tested and copied
 * at once (a string of 4 to 7 as two overlapping halves), and only a
 * word that holds an escape goes a byte at a time.
 */
static inline void
evtw_esc(struct evtw_line *l, const char *s, size_t n, int in_stack)
{
	static const char hx[] = "0123456789ABCDEF";
	unsigned mask = in_stack ? EVTW_ESC_ALWAYS | EVTW_ESC_STACK : EVTW_ESC_ALWAYS;

	if (l->n + 3 * n + 1 > l->cap)
		evtw_grow(l, 3 * n);
	char *o = l->b + l->n;
	if (n >= 4 && n < 8) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		if (!evtw_word_escapes((uint64_t)a << 32 | b, in_stack)) {
			memcpy(o, &a, 4);
			memcpy(o + n - 4, &b, 4);
			l->n += n;
			return;
		}
	}
	size_t i = 0;
	while (i < n) {
		uint64_t w;
		if (n - i >= 8) {
			memcpy(&w, s + i, 8);
			if (!evtw_word_escapes(w, in_stack)) {
				memcpy(o, &w, 8);
				o += 8;
				i += 8;
				continue;
			}
		} else if (n >= 8) {
			/*
			 * The last 8 bytes, overlapping those written: when none
			 * escapes, those were copied as they are, so they end at O.
			 */
			memcpy(&w, s + n - 8, 8);
			if (!evtw_word_escapes(w, in_stack)) {
				memcpy(o - (8 - (n - i)), &w, 8);
				o += n - i;
				break;
			}
		}
		uint8_t c = (uint8_t)s[i++];
		if (!(evtw_escapes[c] & mask)) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '%';
		*o++ = hx[c >> 4];
		*o++ = hx[c & 15];
	}
	l->n = (size_t)(o - l->b);
}

/* ---------- numbers ---------- */

/*
 * The numbers of evt.c's formatters (evt_format_u64, _time_ns,
 * _weight_ns), written the same, inline: every line has five or six,
 * and a call each was a fifth of starting a line.
 */

/* "000102...99": two decimal digits at 2 * value */
extern const char evtw_dec2[200];

/* 10^0 .. 10^19 */
extern const uint64_t evtw_pow10[20];

/*
 * How many decimal digits V has: from its bit length (log10(2) is about
 * 1233 / 4096), then one comparison.  A division a digit was a third of
 * writing a pid.
 */
static inline size_t
evtw_digits(uint64_t v)
{
	size_t t = (size_t)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
	return t + ((v | 1) >= evtw_pow10[t]);
}

/* V in decimal at O (room for 20 bytes); returns the length. */
static inline size_t
evtw_put_u64(char *o, uint64_t v)
{
	size_t n = evtw_digits(v);
	char *e = o + n;
	while (v >= 100) {
		e -= 2;
		memcpy(e, evtw_dec2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(e - 2, evtw_dec2 + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
	return n;
}

/* V (< 1000000) as exactly 6 digits at O */
static inline void
evtw_put_6(char *o, unsigned v)
{
	memcpy(o, evtw_dec2 + 2 * (v / 10000), 2);
	memcpy(o + 2, evtw_dec2 + 2 * (v / 100 % 100), 2);
	memcpy(o + 4, evtw_dec2 + 2 * (v % 100), 2);
}

/* V in decimal at O (room for 21 bytes); returns the end. */
static inline char *
evtw_put_i64(char *o, int64_t v)
{
	if (v < 0) {
		*o++ = '-';
		return o + evtw_put_u64(o, (uint64_t)(-(v + 1)) + 1);
	}
	return o + evtw_put_u64(o, (uint64_t)v);
}

/*
 * MS (a time's whole milliseconds, below 10^16) in decimal at O (room
 * for 16 bytes); returns the length.  Lines come in time order, many in
 * the same millisecond (a DPC's start and end too): the last one's
 * digits are kept, per thread, and copied.
 */
static inline size_t
evtw_put_ms(char *o, uint64_t ms)
{
	static _Thread_local struct {
		uint64_t ms;
		size_t len;
		char text[24];
	} last = { UINT64_MAX, 0, "" };
	if (ms != last.ms) {
		if (ms >= 10000000000000000ull)
			return evtw_put_u64(o, ms);
		last.len = evtw_put_u64(last.text, ms);
		last.ms = ms;
	}
	memcpy(o, last.text, 16);
	return last.len;
}

/* NS nanoseconds as milliseconds with 6 decimals, at O (room for 28 bytes); returns the end. */
static inline char *
evtw_put_time(char *o, int64_t ns)
{
	uint64_t u = (uint64_t)ns;
	if (ns < 0) {
		*o++ = '-';
		u = (uint64_t)(-(ns + 1)) + 1;
	}
	o += evtw_put_ms(o, u / 1000000);
	*o = '.';
	evtw_put_6(o + 1, (unsigned)(u % 1000000));
	return o + 7;
}

/*
 * NS nanoseconds as milliseconds, shortest form (no trailing zeros), at
 * O (room for 40 bytes); returns the end.  Beyond 2^50 ns evt.c's
 * floating-point path decides.
 */
static inline char *
evtw_put_weight(char *o, int64_t ns)
{
	if (ns <= -(1LL << 50) || ns >= (1LL << 50))
		return o + evt_format_weight_ns(o, ns);
	uint64_t u = (uint64_t)ns;
	if (ns < 0) {
		*o++ = '-';
		u = (uint64_t)(-ns);
	}
	o += evtw_put_u64(o, u / 1000000);
	unsigned frac = (unsigned)(u % 1000000);
	if (frac == 0)
		return o;
	*o = '.';
	evtw_put_6(o + 1, frac);	/* then its trailing zeros dropped */
	size_t flen = 6;
	while (o[flen] == '0')
		flen--;
	return o + 1 + flen;
}

static inline void
evtw_u64(struct evtw_line *l, uint64_t v)
{
	if (l->n + 24 > l->cap)
		evtw_grow(l, 24);
	l->n += evtw_put_u64(l->b + l->n, v);
}

static inline void
evtw_i64(struct evtw_line *l, int64_t v)
{
	char *o = evtw_room(l, 21);
	l->n = (size_t)(evtw_put_i64(o, v) - l->b);
}

/* "000102...ff": a byte's two lower-case hex digits at 2 * byte */
extern const char evtw_hex2[512];

/*
 * V in lower-case hex, no leading zeros (what evt_format_hex(O, V, 1)
 * writes), at O with room for 16 bytes; returns the length.  Its length
 * first, then two digits a step from the last: a sample's ip= is a
 * 64-bit address on every line, and a digit a step into a scratch
 * buffer, then copied, cost 200 instructions.
 */
static inline size_t
evtw_put_hex(char *o, uint64_t v)
{
	size_t n = (size_t)(67 - __builtin_clzll(v | 1)) / 4;
	size_t i = n;
	for (; i >= 2; i -= 2) {
		memcpy(o + i - 2, evtw_hex2 + 2 * (v & 255), 2);
		v >>= 8;
	}
	if (i)
		o[0] = evtw_hex2[2 * v + 1];
	return n;
}

/* "0x" and lower-case hex */
static inline void
evtw_hex(struct evtw_line *l, uint64_t v)
{
	char *o = evtw_room(l, 18);
	o[0] = '0';
	o[1] = 'x';
	l->n += 2 + evtw_put_hex(o + 2, v);
}

/* NS nanoseconds as milliseconds with 6 decimals (the time column) */
static inline void
evtw_time_ns(struct evtw_line *l, int64_t ns)
{
	char *o = evtw_room(l, 32);
	l->n = (size_t)(evtw_put_time(o, ns) - l->b);
}

/*
 * Times written lately, as text: a line that follows another often
 * repeats its times (an interval ends when the event it follows happens,
 * and the next one on that CPU or thread starts there), and a copy is
 * cheaper than formatting again.  Direct-mapped by time; zero-initialised
 * it is empty.
 */
#define EVTW_MEMO_BITS 8
struct evtw_timememo {
	struct evtw_timetext {
		int64_t ns;
		uint8_t len;	/* 0: the slot is empty */
		char text[32];	/* (evtw_mem_pad copies all of it) */
	} slot[1u << EVTW_MEMO_BITS];
};

/* evtw_time_ns(L, NS), through M */
static inline void
evtw_time_ns_memo(struct evtw_line *l, struct evtw_timememo *m, int64_t ns)
{
	struct evtw_timetext *e = &m->slot[((uint64_t)ns * 0x9e3779b97f4a7c15ull) >>
	    (64 - EVTW_MEMO_BITS)];
	if (!e->len || e->ns != ns) {
		char t[33];	/* (the longest: a sign, 20 digits, a point, 6 digits and a NUL) */
		int n = evt_format_time_ns(t, ns);
		e->ns = ns;
		e->len = (uint8_t)n;
		memcpy(e->text, t, (size_t)n);
	}
	evtw_mem_pad(l, e->text, e->len, sizeof e->text);
}

/* NS nanoseconds as milliseconds, shortest form (the weight column) */
static inline void
evtw_weight_ns(struct evtw_line *l, int64_t ns)
{
	if (l->n + 41 > l->cap)
		evtw_grow(l, 40);
	l->n += (size_t)evt_format_weight_ns(l->b + l->n, ns);
}

/* NS nanoseconds as microseconds with 3 decimals */
static inline void
evtw_us3(struct evtw_line *l, int64_t ns)
{
	char *o = evtw_room(l, 26);
	if (ns < 0) {
		*o++ = '-';
		ns = -ns;
	}
	o += evtw_put_u64(o, (uint64_t)ns / 1000);
	unsigned f = (unsigned)(ns % 1000);
	o[0] = '.';
	o[1] = (char)('0' + f / 100);
	o[2] = (char)('0' + f / 10 % 10);
	o[3] = (char)('0' + f % 10);
	l->n = (size_t)(o + 4 - l->b);
}

/* The N bytes at P as 2N lower-case hex digits */
static inline void
evtw_hexbytes(struct evtw_line *l, const uint8_t *p, size_t n)
{
	if (l->n + 2 * n + 1 > l->cap)
		evtw_grow(l, 2 * n);
	evt_format_hexbytes(l->b + l->n, p, n);
	l->n += 2 * n;
}

/* ---------- event lines ---------- */

/* Starts L anew: the time, kind and cpu columns and their tabs (the process column follows). */
static inline void
evtw_begin_head(struct evtw_line *l, int64_t time_ns, const char *kind, int64_t cpu)
{
	size_t kl = strlen(kind);
	l->n = 0;
	/* time (32 and its NUL), kind, cpu (21), three tabs */
	char *o = evtw_room(l, 33 + kl + 21 + 3);
	o = evtw_put_time(o, time_ns);
	*o++ = '\t';
	memcpy(o, kind, kl);
	o += kl;
	*o++ = '\t';
	o = evtw_put_i64(o, cpu);
	*o++ = '\t';
	l->n = (size_t)(o - l->b);
}

/* After the process column: the pid, tid and weight columns (a WEIGHT_NS of 0 is "0"). */
static inline void
evtw_begin_tail(struct evtw_line *l, int64_t pid, int64_t tid, int64_t weight_ns)
{
	/* two tabs, pid and tid (21 each), a tab, the weight (40 and its NUL) */
	char *o = evtw_room(l, 2 + 21 + 21 + 1 + 41);
	*o++ = '\t';
	o = evtw_put_i64(o, pid);
	*o++ = '\t';
	o = evtw_put_i64(o, tid);
	*o++ = '\t';
	if (weight_ns == 0)
		*o++ = '0';
	else
		o = evtw_put_weight(o, weight_ns);
	l->n = (size_t)(o - l->b);
}

/*
 * Starts L anew with the seven fixed columns.  PROCESS is escaped; a
 * WEIGHT_NS of 0 is written "0".
 */
static inline void
evtw_begin(struct evtw_line *l, int64_t time_ns, const char *kind, int64_t cpu,
    const char *process, int64_t pid, int64_t tid, int64_t weight_ns)
{
	evtw_begin_head(l, time_ns, kind, cpu);
	evtw_esc(l, process, strlen(process), 0);
	evtw_begin_tail(l, pid, tid, weight_ns);
}

/* evtw_begin() with the process column's text PTEXT[0..PLEN) escaped already */
static inline void
evtw_begin_escaped(struct evtw_line *l, int64_t time_ns, const char *kind, int64_t cpu,
    const char *ptext, size_t plen, int64_t pid, int64_t tid, int64_t weight_ns)
{
	evtw_begin_head(l, time_ns, kind, cpu);
	evtw_mem(l, ptext, plen);
	evtw_begin_tail(l, pid, tid, weight_ns);
}

/* An attribute's "\tKEY=": its value follows (KEY is [A-Za-z0-9_.:-]+, not escaped). */
static inline void
evtw_key(struct evtw_line *l, const char *k)
{
	size_t kl = strlen(k);
	char *o = evtw_room(l, kl + 2);
	o[0] = '\t';
	memcpy(o + 1, k, kl);
	o[kl + 1] = '=';
	l->n += kl + 2;
}

static inline void
evtw_kv_u(struct evtw_line *l, const char *k, uint64_t v)
{
	evtw_key(l, k);
	evtw_u64(l, v);
}

static inline void
evtw_kv_i(struct evtw_line *l, const char *k, int64_t v)
{
	evtw_key(l, k);
	evtw_i64(l, v);
}

static inline void
evtw_kv_x(struct evtw_line *l, const char *k, uint64_t v)
{
	evtw_key(l, k);
	evtw_hex(l, v);
}

/* KEY=V, V escaped */
static inline void
evtw_kv_s(struct evtw_line *l, const char *k, const char *v)
{
	evtw_key(l, k);
	evtw_esc(l, v, strlen(v), 0);
}

static inline void
evtw_kv_hexbytes(struct evtw_line *l, const char *k, const uint8_t *p, size_t n)
{
	evtw_key(l, k);
	evtw_hexbytes(l, p, n);
}

/* The stack column: its tab, then frames root first with evtw_frame_sep() between. */
static inline void
evtw_stack_begin(struct evtw_line *l)
{
	evtw_ch(l, '\t');
}

/* One frame's text, escaped for the stack column (';' too). */
static inline void
evtw_frame(struct evtw_line *l, const char *s, size_t n)
{
	evtw_esc(l, s, n, 1);
}

static inline void
evtw_frame_sep(struct evtw_line *l)
{
	evtw_ch(l, ';');
}

static inline void
evtw_end(struct evtw_line *l)
{
	evtw_ch(l, '\n');
}

/* ---------- header and metadata lines ---------- */

struct evtw_pair {
	const char *key;
	const char *value;	/* escaped when written; NULL: the pair is left out */
};

/* "#evt<TAB>1", then "<TAB>key=value" for each pair, and the newline. */
void evtw_header(struct outbuf *ob, const struct evtw_pair *kv, size_t n);
/* "#NAME" (NAME: "skipped", "stats"...), then "<TAB>key=value" for each pair, and the newline. */
void evtw_meta(struct outbuf *ob, const char *name, const struct evtw_pair *kv, size_t n);
/* "#skipped<TAB>what=WHAT<TAB>count=COUNT<TAB>detail=DETAIL"; nothing when COUNT is 0. */
void evtw_skipped(struct outbuf *ob, const char *what, uint64_t count, const char *detail);

#endif
