/*
 * evt.c - line reader (plain or gzip; a trace given by mistake, an ETL
 * file or a zip, gzipped or not, is told apart by its first bytes), the one reader of
 * evt lines (evt_split and the column parsers over it) and of folded
 * lines, escaping, exact number formatting, and the cap on deep stacks.
 */
#define _POSIX_C_SOURCE 200809L
#include "evt/evt.h"
#include "base/cli.h"
#include "base/escape.h"
#include "evt/gzread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* line reader                                                         */

#define LR_CHUNK (1u << 18)
#define LR_PIPE_SIZE (1 << 20)	/* the default pipe-max-size: no privilege needed */

struct linereader {
	int fd;
	int own_fd;
	char *name;
	char *buf;		/* decoded bytes */
	size_t cap, start, end;
	int eof;
	const char *error;
	char errbuf[96];	/* error messages that name a byte offset */
	unsigned long lineno;
	unsigned long skipped;	/* lines too long or with NUL bytes */
	int quiet;
	int binary;		/* the input is a trace, not text (lr_finish: fatal) */
	/*
	 * buf[nul_from..nul_to) was searched for NUL bytes before next_line
	 * ended any line in it: the first is at nul_at (SIZE_MAX: none).
	 * nul_to = 0 when the buffer changed other than by an append.
	 */
	size_t nul_from, nul_to, nul_at;
	uint64_t offset;	/* raw bytes read from fd */
	uint64_t size;
	/* gzip (lib/evt/gzread.c) */
	int gz;
	struct gzread *gzr;
};

static struct linereader *
lr_new(int fd, int own, const char *name)
{
	struct linereader *lr = xcalloc(1, sizeof(*lr));
	struct stat st;

	lr->fd = fd;
	lr->own_fd = own;
	lr->name = xstrdup(name);
	lr->cap = LR_CHUNK;
	lr->buf = xmalloc(lr->cap + 1);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		lr->size = (uint64_t)st.st_size;
#ifdef F_SETPIPE_SZ
	/*
	 * A pipe from another tool (etl2evt | stackfold): a bigger buffer
	 * lets the writer run further ahead and each read take more, so both
	 * sides make fewer calls and wake each other less.  Where it is
	 * refused (over the user's pipe quota) the pipe stays as it was.
	 */
	else if (S_ISFIFO(st.st_mode))
		(void)fcntl(fd, F_SETPIPE_SZ, LR_PIPE_SIZE);
#endif
	return lr;
}

struct linereader *
lr_open(const char *path)
{
	int fd;

	if (path == NULL || strcmp(path, "-") == 0)
		return lr_new(STDIN_FILENO, 0, "<stdin>");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	return lr_new(fd, 1, path);
}

struct linereader *
lr_fdopen(int fd, const char *name)
{
	return lr_new(fd, 0, name);
}

static ssize_t
read_raw(struct linereader *lr, void *p, size_t n)
{
	ssize_t r;

	do
		r = read(lr->fd, p, n);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		lr->offset += (uint64_t)r;
	return r;
}

static ssize_t
gz_source(void *ctx, void *p, size_t n)
{
	return read_raw(ctx, p, n);
}

/* Switches to gzip decoding: the bytes already in buf are compressed input. */
static void
gz_start(struct linereader *lr)
{
	lr->gz = 1;
	lr->gzr = gzread_new(lr->buf + lr->start, lr->end - lr->start, gz_source, lr);
	lr->start = lr->end = 0;
	lr->error = gzread_error(lr->gzr);
}

/* Appends up to ROOM decoded bytes at buf+end.  Returns bytes added, 0 at end. */
static size_t
fill(struct linereader *lr, size_t room)
{
	ssize_t r;
	size_t got;

	if (!lr->gz) {
		r = read_raw(lr, lr->buf + lr->end, room);
		if (r < 0) {
			lr->error = strerror(errno);
			return 0;
		}
		return (size_t)r;
	}
	got = gzread_fill(lr->gzr, (unsigned char *)lr->buf + lr->end, room);
	if (lr->error == NULL)
		lr->error = gzread_error(lr->gzr);
	return got;
}

/* Messages for skipped lines, per input; past them the lines are only counted. */
#define LR_MAX_WARNINGS 10

/* Reports a line the reader does not hand out (unless quiet), and counts it. */
static void
skip_line(struct linereader *lr, const char *why)
{
	lr->skipped++;
	if (lr->quiet)
		return;
	if (lr->skipped <= LR_MAX_WARNINGS)
		cli_warn("%s:%lu: %s, line skipped", lr->name, lr->lineno, why);
	else if (lr->skipped == LR_MAX_WARNINGS + 1)
		cli_warn("%s: more lines skipped; counting them", lr->name);
}

/*
 * What a binary input is, by its first N bytes, or NULL for anything
 * else.  New users feed a trace straight to a tool that reads evt; one
 * clear line beats a flood of malformed-line messages.  An ETL file
 * starts with a buffer header (BufferSize: a u32 of at most 64 MiB) and
 * its first record, at 0x48, is the logfile header event: a system
 * header (type 1 or 2, flags 0xc0), as lib/etl/etl.c reads it.  A zip
 * (.etl.zip, .diagsession) starts with a local file header.  GZ: the
 * bytes were inflated from gzip (an .etl.gz from a nightly archive),
 * which etl2evt reads too.
 */
#define BINARY_PROBE 0x4c	/* bytes binary_kind needs to tell an ETL file */

static const char *
binary_kind(const unsigned char *p, size_t n, int gz)
{
	uint32_t size;

	if (n >= 4 && memcmp(p, "PK\3\4", 4) == 0)
		return gz ? "this is a gzip-compressed zip: run etl2evt first (gunzip it, or "
		    "zcat it into etl2evt -)" : "this is a zip: run etl2evt first";
	if (n < BINARY_PROBE)
		return NULL;
	size = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	if (size >= 0x68 && size <= (64u << 20) && (p[0x4a] == 1 || p[0x4a] == 2) &&
	    p[0x4b] == 0xc0)
		return gz ? "this is a gzip-compressed ETL file: run etl2evt first (it reads "
		    ".etl.gz)" : "this is an ETL file: run etl2evt first";
	return NULL;
}

/*
 * Reads more input into buf[end..cap).  Returns 0, 1 when the input
 * turned out to be gzip (the buffer was emptied: scan again), or -1 on
 * error.  Sets eof at the end of the input.
 */
static int
read_more(struct linereader *lr)
{
	size_t got;
	const char *kind;

	if (lr->error)
		return -1;
	got = fill(lr, lr->cap - lr->end);
	if (!lr->gz && lr->lineno == 0 && lr->start == 0 && lr->end == 0 && got >= 2 &&
	    (unsigned char)lr->buf[0] == 0x1f && (unsigned char)lr->buf[1] == 0x8b) {
		lr->end += got;
		gz_start(lr);
		lr->nul_to = 0;
		return 1;
	}
	/*
	 * The first bytes, inflated if gzip: a trace given by mistake is told
	 * apart.  zlib may hand out a few bytes at first (small members):
	 * enough are inflated to judge, whatever the stream's shape.
	 */
	if (lr->gz && lr->lineno == 0 && lr->start == 0 && lr->end == 0 && !lr->binary) {
		size_t k;

		lr->end = got;
		while (lr->end < BINARY_PROBE && lr->error == NULL &&
		    (k = fill(lr, lr->cap - lr->end)) > 0)
			lr->end += k;
		got = lr->end;
		lr->end = 0;
	}
	/* (a read or gzip error already set stays: binary_kind's NULL must not clear it) */
	if (lr->lineno == 0 && lr->start == 0 && lr->end == 0 && !lr->binary &&
	    (kind = binary_kind((unsigned char *)lr->buf, got, lr->gz)) != NULL) {
		lr->error = kind;
		lr->binary = 1;
		lr->eof = 1;
		return -1;
	}
	if (got == 0) {
		if (lr->error)
			return -1;
		lr->eof = 1;
	}
	lr->end += got;
	return 0;
}

/*
 * The line filling the whole buffer (EVT_MAX_LINE bytes) has no newline
 * yet: it is skipped, and the rest of it is read into the same buffer
 * and dropped, up to its newline, so a huge line costs no more memory
 * than the cap.  Returns 0, or -1 on a read error.
 */
static int
discard_long_line(struct linereader *lr)
{
	char *nl = NULL;

	lr->lineno++;
	lr->start = lr->end = 0;
	lr->nul_to = 0;
	while (nl == NULL && !lr->eof) {
		if (read_more(lr) < 0)
			return -1;
		nl = memchr(lr->buf, '\n', lr->end);
		if (nl != NULL)
			lr->start = (size_t)(nl + 1 - lr->buf);
		else
			lr->end = 0;
	}
	skip_line(lr, "line too long (64 MiB or more)");
	return 0;
}

/* The next line, whatever bytes it holds; NULL at the end or on error. */
static char *
next_line(struct linereader *lr, size_t *len)
{
	char *nl;
	size_t scanned = 0;

	/*
	 * No early return on an error: the lines decoded before it (zlib
	 * hands out a damaged member's bytes with the error) are still given
	 * out; only the line the error cut short is not.
	 */
	for (;;) {
		nl = memchr(lr->buf + lr->start + scanned, '\n',
		    lr->end - lr->start - scanned);
		if (nl != NULL || lr->eof)
			break;
		scanned = lr->end - lr->start;
		/* make room: slide to the front, then grow */
		if (lr->start > 0 && lr->end == lr->cap) {
			memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
			lr->end -= lr->start;
			lr->start = 0;
			lr->nul_to = 0;
		}
		if (lr->end == lr->cap) {
			if (lr->cap >= EVT_MAX_LINE) {
				if (discard_long_line(lr) < 0)
					return NULL;
				scanned = 0;
				continue;
			}
			lr->cap *= 2;
			lr->buf = xrealloc(lr->buf, lr->cap + 1);
		}
		switch (read_more(lr)) {
		case -1:
			return NULL;
		case 1:
			scanned = 0;
			break;
		}
	}
	if (nl == NULL) {
		/* last line without newline */
		if (lr->start == lr->end)
			return NULL;
		nl = lr->buf + lr->end;
	}
	{
		char *line = lr->buf + lr->start;
		size_t n = (size_t)(nl - line);

		lr->start = (size_t)(nl - lr->buf) + (nl < lr->buf + lr->end);
		if (n > 0 && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		lr->lineno++;
		*len = n;
		return line;
	}
}

/*
 * Whether the line next_line just cut (LEN bytes at LINE) holds a NUL
 * byte.  A search per line would be a call per line; instead the bytes
 * after the line, as far as they are read, are searched once, ahead
 * (next_line has not touched them yet: its NUL goes where a line ends),
 * and the lines inside that range are answered by what it found.
 */
static int
line_has_nul(struct linereader *lr, const char *line, size_t len)
{
	size_t a = (size_t)(line - lr->buf), b = a + len;
	const char *q;

	if (a >= lr->nul_from && b <= lr->nul_to && lr->nul_at >= a)
		return lr->nul_at < b;
	if (memchr(line, '\0', len) != NULL)
		return 1;
	/* after buf[b], the newline or CR next_line made the line's end */
	lr->nul_from = b + 1;
	lr->nul_to = lr->end;
	q = b + 1 < lr->end ? memchr(lr->buf + b + 1, '\0', lr->end - b - 1) : NULL;
	lr->nul_at = q != NULL ? (size_t)(q - lr->buf) : SIZE_MAX;
	return 0;
}

/*
 * Every tool reads lines here, so this is where the one rule for bad
 * lines lives: a line with a NUL byte is not text (C string functions
 * would cut it, and it is not valid evt), so it is skipped and counted
 * like a line too long, never passed on or altered.
 */
char *
lr_next(struct linereader *lr, size_t *len)
{
	char *line;

	while ((line = next_line(lr, len)) != NULL && line_has_nul(lr, line, *len))
		skip_line(lr, "NUL byte in line");
	return line;
}

unsigned long
lr_skipped(const struct linereader *lr)
{
	return lr->skipped;
}

void
lr_set_quiet(struct linereader *lr)
{
	lr->quiet = 1;
}

unsigned long
lr_lineno(const struct linereader *lr)
{
	return lr->lineno;
}

/* Bytes consumed from the underlying file so far (compressed bytes for gzip). */
static uint64_t
lr_offset(const struct linereader *lr)
{
	return lr->offset;
}

/* Total size of the input if it is a regular file, else 0. */
static uint64_t
lr_size(const struct linereader *lr)
{
	return lr->size;
}

const char *
lr_name(const struct linereader *lr)
{
	return lr->name;
}

const char *
lr_error(const struct linereader *lr)
{
	return lr->error;
}

void
lr_progress(const struct linereader *lr)
{
	if ((lr->lineno & 0xffff) == 0)
		cli_progress(lr_offset(lr), lr_size(lr));
}

unsigned long
lr_finish(struct linereader *lr)
{
	unsigned long lost = lr_skipped(lr);

	cli_progress_end();
	if (lr->binary)
		cli_fatal("%s: %s", lr_name(lr), lr_error(lr));
	if (lr_error(lr) != NULL) {
		cli_warn("%s: %s", lr_name(lr), lr_error(lr));
		lost++;
	}
	return lost;
}

void
lr_close(struct linereader *lr)
{
	if (lr == NULL)
		return;
	gzread_free(lr->gzr);
	if (lr->own_fd)
		close(lr->fd);
	free(lr->buf);
	free(lr->name);
	free(lr);
}

/* ------------------------------------------------------------------ */
/* numbers                                                             */

static int
evt_parse_decimal_n(const char *s, size_t n, double *out)
{
	const char *e = s + n;
	int neg = 0, digits = 0;
	uint64_t ip = 0, fp = 0, scale = 1;

	if (s < e && *s == '-') {
		neg = 1;
		s++;
	}
	while (s < e && *s >= '0' && *s <= '9') {
		if (ip > (UINT64_MAX - 9) / 10)
			return -1;
		ip = ip * 10 + (uint64_t)(*s++ - '0');
		digits++;
	}
	if (s < e && *s == '.') {
		s++;
		while (s < e && *s >= '0' && *s <= '9') {
			if (scale < 1000000000000000000ull) {
				fp = fp * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
			s++;
			digits++;
		}
	}
	if (digits == 0 || s != e)
		return -1;
	*out = ((double)ip + (double)fp / (double)scale) * (neg ? -1 : 1);
	if (!(*out < EVT_MAX_MS && *out > -EVT_MAX_MS))
		return -1;	/* out of range: 1e12 ms is 31 years */
	return 0;
}

int
evt_parse_decimal(const char *s, double *out)
{
	return evt_parse_decimal_n(s, strlen(s), out);
}

int
evt_parse_millionths(const char *s, size_t n, int64_t *out)
{
	const char *e = s + n;
	int neg = 0, digits = 0, frac = 0;
	int64_t v = 0;

	if (s < e && *s == '-') {
		neg = 1;
		s++;
	}
	while (s < e && *s >= '0' && *s <= '9') {
		v = v * 10 + (*s++ - '0');
		if (v >= 1000000000000LL)	/* EVT_MAX_MS */
			return -1;
		digits++;
	}
	v *= 1000000;
	if (s < e && *s == '.') {
		int64_t scale = 100000;

		s++;
		while (s < e && *s >= '0' && *s <= '9') {
			if (frac < 6)
				v += (*s - '0') * scale;
			else if (frac == 6 && *s >= '5')
				v += 1;
			scale /= 10;
			frac++;
			digits++;
			s++;
		}
	}
	if (digits == 0 || s != e)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

/* "00".."99": two digits a step, a third of the divisions */
static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

int
evt_format_u64(char *out, uint64_t v)
{
	if (v < 10) {
		out[0] = (char)('0' + v);
		return 1;
	}
	if (v < 100) {
		memcpy(out, digits2 + 2 * v, 2);
		return 2;
	}
	int n = 3;
	for (uint64_t t = v / 1000; t; t /= 10)
		n++;
	char *o = out + n;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		o -= 2;
		memcpy(o, digits2 + d, 2);
	}
	if (v >= 10) {
		o -= 2;
		memcpy(o, digits2 + 2 * v, 2);
	} else
		*--o = (char)('0' + v);
	return n;
}

int
evt_format_hex(char *out, uint64_t v, int width)
{
	char t[16];
	int i = 16;
	do {
		t[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while ((v || 16 - i < width) && i > 0);
	memcpy(out, t + i, (size_t)(16 - i));
	return 16 - i;
}

void
evt_format_hexbytes(char *out, const uint8_t *p, size_t n)
{
	static char hx2[512];	/* "000102...ff": a byte's two digits at 2·byte */
	if (!hx2[1])
		for (int i = 0; i < 256; i++) {
			hx2[2 * i] = "0123456789abcdef"[i >> 4];
			hx2[2 * i + 1] = "0123456789abcdef"[i & 15];
		}
	for (size_t i = 0; i < n; i++)
		memcpy(out + 2 * i, hx2 + 2 * p[i], 2);
}

/* exactly 6 digits, zero-padded (V < 1000000) */
static void
format_6(char *out, unsigned v)
{
	unsigned hi = v / 10000, mid = v / 100 % 100, lo = v % 100;
	memcpy(out, digits2 + 2 * hi, 2);
	memcpy(out + 2, digits2 + 2 * mid, 2);
	memcpy(out + 4, digits2 + 2 * lo, 2);
}

int
evt_format_time_ns(char *out, int64_t ns)
{
	int n = 0;
	uint64_t u, frac;

	if (ns < 0) {
		out[n++] = '-';
		u = (uint64_t)(-(ns + 1)) + 1;
	} else
		u = (uint64_t)ns;
	n += evt_format_u64(out + n, u / 1000000);
	frac = u % 1000000;
	out[n++] = '.';
	format_6(out + n, (unsigned)frac);
	n += 6;
	out[n] = '\0';
	return n;
}

/* Values the integer formatters cannot hold exactly (sums of absurd input). */
static int
format_big(char *out, double ms)
{
	static int warned;

	if (!warned) {
		cli_warn("a time or weight beyond 9e12 ms was written as 9e12 ms");
		warned = 1;
	}
	if (ms != ms)
		ms = 0;
	return snprintf(out, 32, "%s9000000000000.000000", ms < 0 ? "-" : "");
}

int
evt_format_time(char *out, double ms)
{
	double ns = ms * 1e6;

	if (!(ms < 9e12 && ms > -9e12))
		return format_big(out, ms);

	return evt_format_time_ns(out, (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5));
}

int
evt_format_weight(char *out, double ms)
{
	if (!(ms < 9e12 && ms > -9e12))
		return format_big(out, ms);
	return evt_format_fixed6(out, (int64_t)(ms * 1e6 + (ms < 0 ? -0.5 : 0.5)));
}

int
evt_format_fixed6(char *out, int64_t v)
{
	int n = 0;
	uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
	if (v < 0)
		out[n++] = '-';
	n += evt_format_u64(out + n, u / 1000000);
	unsigned frac = (unsigned)(u % 1000000);
	if (frac) {
		char f[6];
		format_6(f, frac);
		int flen = 6;
		while (f[flen - 1] == '0')
			flen--;
		out[n++] = '.';
		memcpy(out + n, f, (size_t)flen);
		n += flen;
	}
	out[n] = '\0';
	return n;
}

int
evt_format_weight_ns(char *out, int64_t ns)
{
	/* what evt_format_weight(ns / 1e6) writes, without floating point (below 2^50 ns,
	 * 13 days, the double round trip is exact; beyond, the same call) */
	if (ns <= -(1LL << 50) || ns >= (1LL << 50))
		return evt_format_weight(out, (double)ns / 1e6);
	return evt_format_fixed6(out, ns);
}

/* ------------------------------------------------------------------ */
/* evt lines                                                           */

enum evt_linetype
evt_classify(const char *line, size_t len)
{
	if (len == 0)
		return EVT_BLANK;
	if (line[0] != '#')
		return EVT_EVENT;
	if (len >= 4 && memcmp(line, "#evt", 4) == 0 && (len == 4 || line[4] == '\t'))
		return EVT_HEADER;
	return EVT_META;
}

/* A decimal integer S[0..N) with an optional '-', nothing else. */
static int
parse_long_n(const char *s, size_t n, long *out)
{
	const char *e = s + n;
	long v = 0;
	int neg = 0;

	if (s < e && *s == '-') {
		neg = 1;
		s++;
	}
	if (s == e)
		return -1;
	if (e - s <= 18) {	/* the usual case: 18 digits fit, no check per digit */
		for (; s < e; s++) {
			if (*s < '0' || *s > '9')
				return -1;
			v = v * 10 + (*s - '0');
		}
		*out = neg ? -v : v;
		return 0;
	}
	while (s < e && *s >= '0' && *s <= '9') {
		if (v > (long)(0x7fffffffffffffffLL / 10 - 1))
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	if (s != e)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

static int
parse_long(const char *s, long *out)
{
	return parse_long_n(s, strlen(s), out);
}

/*
 * The messages about event lines.  Every reader says these and no
 * others, so a line is malformed in the same words for every tool.
 */
#define WHY_FEW_COLUMNS "fewer than 8 tab-separated columns"
#define WHY_NO_STACK "no stack column (a line must end with a tab and the stack)"
#define WHY_KIND "empty kind column"
#define WHY_TIME "time column is not a decimal number within +-1e12 ms"
#define WHY_WEIGHT "weight column is not a decimal number within +-1e12 ms"
#define WHY_CPU "cpu column is not an integer from -1 to 65535"
#define WHY_PID "pid column is not an integer"
#define WHY_TID "tid column is not an integer"
#define WHY_NATTR "more than 64 attributes"

/*
 * The high bit of each byte of W that is a tab, and of no other byte:
 * a byte's low seven bits are added apart from its high bit, so no
 * carry crosses into the next byte.
 */
static inline uint64_t
tab_bytes(uint64_t w)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
	uint64_t x = w ^ 0x0909090909090909ull;

	return ~(((x & low7) + low7) | x | low7);
}

/*
 * The fixed columns are a few bytes each, so the tabs are found eight
 * bytes at a time in one pass (where a memchr call per column costs
 * more than its search), then the rest, if any, with memchr.  The word
 * loop needs the first byte in the low bits (little-endian) and a
 * count of trailing zeros; elsewhere memchr finds every tab.
 */
int
evt_split(char *line, size_t len, struct evt_cols *c, const char **why)
{
	char *p = line, *end = line + len, *start = line, *tab;
	int i = 0;

	c->line = line;
	c->len = len;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i < EVT_NCOLS && end - p >= 8; p += 8) {
		uint64_t w, m;

		memcpy(&w, p, 8);
		for (m = tab_bytes(w); m != 0 && i < EVT_NCOLS; m &= m - 1, i++) {
			tab = p + (__builtin_ctzll(m) >> 3);
			c->col[i].p = start;
			c->col[i].n = (size_t)(tab - start);
			start = tab + 1;
		}
	}
#endif
	for (; i < EVT_NCOLS; i++) {
		tab = memchr(p, '\t', (size_t)(end - p));
		if (tab == NULL) {
			*why = i < EVT_NCOLS - 1 ? WHY_FEW_COLUMNS : WHY_NO_STACK;
			return -1;
		}
		c->col[i].p = start;
		c->col[i].n = (size_t)(tab - start);
		p = start = tab + 1;
	}
	if (c->col[EVT_KIND].n == 0) {
		*why = WHY_KIND;
		return -1;
	}
	c->attrs = start;
	return 0;
}

struct evt_span
evt_cols_stack(const struct evt_cols *c)
{
	char *end = c->line + c->len, *tab;
	struct evt_span s;

	/* from the end: a stack is mostly shorter than the attributes before it */
	tab = mem_last(c->attrs, '\t', (size_t)(end - c->attrs));
	s.p = tab ? tab + 1 : c->attrs;
	s.n = (size_t)(end - s.p);
	return s;
}

int
evt_cols_time(const struct evt_cols *c, double *ms, const char **why)
{
	if (evt_parse_decimal_n(c->col[EVT_TIME].p, c->col[EVT_TIME].n, ms) < 0) {
		*why = WHY_TIME;
		return -1;
	}
	return 0;
}

/*
 * Sound, not complete: what it accepts evt_parse_decimal_n accepts (at
 * most 11 integer digits are below 1e12 whatever the fraction); the
 * rest gets the full parse, which decides.
 */
int
evt_cols_time_ok(const struct evt_cols *c, const char **why)
{
	const char *s = c->col[EVT_TIME].p, *e = s + c->col[EVT_TIME].n, *d;
	size_t digits;
	double ms;

	if (s < e && *s == '-')
		s++;
	for (d = s; s < e && *s >= '0' && *s <= '9'; s++)
		;
	digits = (size_t)(s - d);
	if (digits <= 11) {
		if (s < e && *s == '.')
			for (s++; s < e && *s >= '0' && *s <= '9'; s++)
				digits++;
		if (s == e && digits > 0)
			return 0;
	}
	return evt_cols_time(c, &ms, why);
}

int
evt_cols_weight(const struct evt_cols *c, double *ms, const char **why)
{
	if (evt_parse_decimal_n(c->col[EVT_WEIGHT].p, c->col[EVT_WEIGHT].n, ms) < 0) {
		*why = WHY_WEIGHT;
		return -1;
	}
	return 0;
}

int
evt_cols_weight_ns(const struct evt_cols *c, int64_t *ns, const char **why)
{
	if (evt_parse_millionths(c->col[EVT_WEIGHT].p, c->col[EVT_WEIGHT].n, ns) < 0) {
		*why = WHY_WEIGHT;
		return -1;
	}
	return 0;
}

int
evt_cols_cpu(const struct evt_cols *c, int *cpu, const char **why)
{
	long v;

	if (parse_long_n(c->col[EVT_CPU].p, c->col[EVT_CPU].n, &v) < 0 || v < -1 ||
	    v > 0xffff) {
		*why = WHY_CPU;
		return -1;
	}
	*cpu = (int)v;
	return 0;
}

int
evt_cols_pid(const struct evt_cols *c, long *pid, const char **why)
{
	if (parse_long_n(c->col[EVT_PID].p, c->col[EVT_PID].n, pid) < 0) {
		*why = WHY_PID;
		return -1;
	}
	return 0;
}

int
evt_cols_tid(const struct evt_cols *c, long *tid, const char **why)
{
	if (parse_long_n(c->col[EVT_TID].p, c->col[EVT_TID].n, tid) < 0) {
		*why = WHY_TID;
		return -1;
	}
	return 0;
}

const char *
evt_cols_attr(const struct evt_cols *c, const char *key, size_t *n)
{
	size_t k = strlen(key);
	char *p = c->attrs, *end = c->line + c->len, *tab;

	while ((tab = memchr(p, '\t', (size_t)(end - p))) != NULL) {
		if ((size_t)(tab - p) > k && memcmp(p, key, k) == 0 && p[k] == '=') {
			*n = (size_t)(tab - p) - k - 1;
			return p + k + 1;
		}
		p = tab + 1;
	}
	return NULL;
}

/* Ends each of the seven fixed columns with a NUL, over its tab: C strings for evt_event. */
static void
terminate_columns(struct evt_cols *c)
{
	int i;

	for (i = 0; i < EVT_NCOLS; i++)
		c->col[i].p[c->col[i].n] = '\0';
}

int
evt_parse(char *line, size_t len, struct evt_event *ev, const char **why)
{
	struct evt_cols c;
	struct evt_span key, val;
	char *at;
	int r;

	if (evt_split(line, len, &c, why) < 0 ||
	    evt_cols_time(&c, &ev->time_ms, why) < 0 ||
	    evt_cols_cpu(&c, &ev->cpu, why) < 0 ||
	    evt_cols_pid(&c, &ev->pid, why) < 0 ||
	    evt_cols_tid(&c, &ev->tid, why) < 0 ||
	    evt_cols_weight(&c, &ev->weight, why) < 0)
		return -1;
	terminate_columns(&c);
	ev->time_text = c.col[EVT_TIME].p;
	ev->kind = c.col[EVT_KIND].p;
	ev->process = c.col[EVT_PROCESS].p;
	ev->weight_text = c.col[EVT_WEIGHT].p;
	ev->nattr = 0;
	at = c.attrs;
	while ((r = evt_next_attr(&c, &at, &key, &val, why)) > 0) {
		if (ev->nattr == EVT_MAX_ATTRS) {
			*why = WHY_NATTR;
			return -1;
		}
		key.p[key.n] = '\0';	/* over the '=' */
		val.p[val.n] = '\0';	/* over the tab */
		ev->attr[ev->nattr].key = key.p;
		ev->attr[ev->nattr].val = val.p;
		ev->nattr++;
	}
	ev->stack = at;
	ev->stack_len = (size_t)(line + len - at);
	return r;
}

const char *
evt_attr(const struct evt_event *ev, const char *key)
{
	int i;

	for (i = 0; i < ev->nattr; i++)
		if (strcmp(ev->attr[i].key, key) == 0)
			return ev->attr[i].val;
	return NULL;
}

int
evt_parse_header(char *line, size_t len, struct evt_header *h, const char **why)
{
	char *p, *end = line + len, *tab;
	long v;

	h->nkv = 0;
	if (evt_classify(line, len) != EVT_HEADER) {
		*why = "not an #evt header";
		return -1;
	}
	if (len < 6) {
		*why = "#evt header without a version";
		return -1;
	}
	p = line + 5;
	tab = memchr(p, '\t', (size_t)(end - p));
	if (tab)
		*tab = '\0';
	if (parse_long(p, &v) < 0 || v < 1) {
		*why = "#evt version is not a positive integer";
		return -1;
	}
	if (v > EVT_VERSION) {
		*why = "#evt version newer than this tool understands";
		return -1;
	}
	h->version = (int)v;
	p = tab ? tab + 1 : end;
	while (p < end) {
		char *eq;

		tab = memchr(p, '\t', (size_t)(end - p));
		if (tab)
			*tab = '\0';
		eq = strchr(p, '=');
		if (eq && h->nkv < EVT_MAX_ATTRS) {
			*eq = '\0';
			h->kv[h->nkv].key = p;
			h->kv[h->nkv].val = eq + 1;
			h->nkv++;
		}
		p = tab ? tab + 1 : end;
	}
	return 0;
}

const char *
evt_header_get(const struct evt_header *h, const char *key)
{
	int i;

	for (i = 0; i < h->nkv; i++)
		if (strcmp(h->kv[i].key, key) == 0)
			return h->kv[i].val;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* escaping                                                            */

static const char hexdig[] = "0123456789ABCDEF";

size_t
evt_escape(char *out, const char *s, size_t n, int in_stack)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '%' || (in_stack && c == ';')) {
			out[o++] = '%';
			out[o++] = hexdig[c >> 4];
			out[o++] = hexdig[c & 15];
		} else
			out[o++] = (char)c;
	}
	return o;
}

size_t
evt_unescape(char *s, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] == '%' && i + 2 < n && (hi = hex_digit(s[i + 1])) >= 0 &&
		    (lo = hex_digit(s[i + 2])) >= 0) {
			s[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			s[o++] = s[i];
	}
	if (o < n)
		s[o] = '\0';
	return o;
}

/* ------------------------------------------------------------------ */
/* folded                                                              */

static int
parse_count(const char *s, const char *e, double *out)
{
	uint64_t ip = 0, fp = 0, scale = 1;
	int digits = 0;

	while (s < e && *s >= '0' && *s <= '9') {
		if (ip > (UINT64_MAX - 9) / 10)
			return -1;
		ip = ip * 10 + (uint64_t)(*s++ - '0');
		digits++;
	}
	if (digits == 0)
		return -1;
	if (s < e && *s == '.') {
		s++;
		if (s == e || *s < '0' || *s > '9')
			return -1;
		while (s < e && *s >= '0' && *s <= '9') {
			if (scale < 1000000000000000000ull) {
				fp = fp * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
			s++;
		}
	}
	if (s != e)
		return -1;
	*out = (double)ip + (double)fp / (double)scale;
	return 0;
}

static int
is_space(int c)
{
	return c == ' ' || c == '\t';
}

int
folded_parse_span(const char *line, size_t len, size_t *stack_len,
    double *count, double *count2, int *has2)
{
	const char *e = line + len, *t1, *s1;
	double a, b;

	while (e > line && is_space(e[-1]))
		e--;
	/* a count is digits and dots: scan back over those only, not into a stack */
	t1 = e;
	while (t1 > line && ((t1[-1] >= '0' && t1[-1] <= '9') || t1[-1] == '.'))
		t1--;
	if (t1 == line || !is_space(t1[-1]) || parse_count(t1, e, &a) < 0)
		return -1;
	s1 = t1;
	while (s1 > line && is_space(s1[-1]))
		s1--;
	/*
	 * Is the token before it a number too?  Then this is "stack c1 c2".
	 * Scan back over digits and dots only: the leaf frame can be long.
	 */
	{
		const char *t0 = s1;

		while (t0 > line && ((t0[-1] >= '0' && t0[-1] <= '9') || t0[-1] == '.'))
			t0--;
		if (t0 > line && t0 < s1 && is_space(t0[-1]) &&
		    parse_count(t0, s1, &b) == 0) {
			const char *s0 = t0;

			while (s0 > line && is_space(s0[-1]))
				s0--;
			if (s0 > line) {
				*stack_len = (size_t)(s0 - line);
				*count = b;
				*count2 = a;
				*has2 = 1;
				return 0;
			}
		}
	}
	if (s1 == line)
		return -1;
	*stack_len = (size_t)(s1 - line);
	*count = a;
	*count2 = 0;
	*has2 = 0;
	return 0;
}

int
folded_parse(char *line, size_t len, char **stack, size_t *stack_len,
    double *count, double *count2, int *has2)
{
	if (folded_parse_span(line, len, stack_len, count, count2, has2) < 0)
		return -1;
	line[*stack_len] = '\0';
	*stack = line;
	return 0;
}

/* the number of frames of STACK[0..LEN): separators plus one */
static size_t
stack_frames(const char *stack, size_t len)
{
	const char *p = stack, *e = stack + len;
	size_t n = 1;

	while ((p = memchr(p, ';', (size_t)(e - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

size_t
evt_stack_cap(const char *stack, size_t len, char **buf, size_t *cap,
    size_t *outlen)
{
	const size_t head = EVT_STACK_HEAD_FRAMES;
	const size_t tail = EVT_STACK_TAIL_FRAMES;	/* and one frame for the mark */
	const char *e = stack + len, *head_end = stack, *tail_start = e;
	size_t n, k, elided, need, hl, tl;
	char mark[48];
	int ml;

	/* N frames take at least N - 1 bytes (separators): most stacks stop here */
	if (len < EVT_MAX_STACK_FRAMES)
		return 0;
	n = stack_frames(stack, len);
	if (n <= EVT_MAX_STACK_FRAMES)
		return 0;
	for (k = 0; k < head; k++)	/* just past the HEAD-th separator */
		head_end = (const char *)memchr(head_end, ';', (size_t)(e - head_end)) + 1;
	for (k = 0; k < tail; k++)	/* at the separator before the last TAIL frames */
		tail_start = mem_last(stack, ';', (size_t)(tail_start - stack));
	elided = n - head - tail;
	ml = snprintf(mark, sizeof(mark), "[%zu frames elided]", elided);
	hl = (size_t)(head_end - stack);
	tl = (size_t)(e - tail_start);
	need = hl + (size_t)ml + tl + 1;
	if (need > *cap) {
		*cap = need;
		*buf = xrealloc(*buf, need);
	}
	memcpy(*buf, stack, hl);
	memcpy(*buf + hl, mark, (size_t)ml);
	memcpy(*buf + hl + ml, tail_start, tl);
	(*buf)[hl + ml + tl] = '\0';
	*outlen = hl + (size_t)ml + tl;
	return elided;
}

char *
evt_cut_stack(struct evt_stack_cut *c, char *stack, size_t *len, unsigned long line)
{
	size_t elided = evt_stack_cap(stack, *len, &c->buf, &c->cap, len);

	if (elided == 0)
		return stack;
	if (c->stacks++ == 0)
		c->first_line = line;
	c->frames += (int64_t)elided;
	return c->buf;
}

void
evt_warn_cut(const char *name, unsigned long first_line, int64_t stacks, int64_t frames)
{
	cli_warn("%s:%lu: %lld stack%s deeper than %d frames: %lld frames elided "
	    "(each stack's cut is one \"[N frames elided]\" frame, weights kept)",
	    name, first_line, (long long)stacks, stacks == 1 ? "" : "s",
	    EVT_MAX_STACK_FRAMES, (long long)frames);
}

void
evt_cut_report(struct evt_stack_cut *c, const char *name)
{
	if (c->stacks > 0)
		evt_warn_cut(name, c->first_line, c->stacks, c->frames);
	c->first_line = 0;
	c->stacks = c->frames = 0;
}

void
evt_cut_free(struct evt_stack_cut *c)
{
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
}

/* ---------- the read loop of an evt report ---------- */

static int
each_line(const struct evt_handlers *h, enum evt_linetype lt, char *line, size_t len,
    const char **why)
{
	struct evt_cols c;

	switch (lt) {
	case EVT_HEADER:
		return h->header ? h->header(h->ctx, line, len, why) : 0;
	case EVT_META:
		return h->meta ? h->meta(h->ctx, line, len, why) : 0;
	case EVT_EVENT:
		if (h->event == NULL)
			return 0;
		if (evt_split(line, len, &c, why) < 0)
			return -1;
		return h->event(h->ctx, &c, why);
	default:
		return 0;
	}
}

/* The input is unusable at the current line: say why, stop, exit 2. */
static int
each_fatal(struct linereader *lr, const char *why)
{
	cli_warn("%s:%lu: %s", lr_name(lr), lr_lineno(lr), why);
	cli_progress_end();
	lr_close(lr);
	return EXIT_FATAL;
}

int
evt_each(const char *path, const struct evt_handlers *h, uint64_t *skipped)
{
	struct linereader *lr = lr_open(path);
	const char *why = NULL;
	uint64_t bad = 0;
	char *line;
	size_t len;
	int first = 1;

	if (skipped)
		*skipped = 0;
	if (lr == NULL) {
		cli_warn("%s: %s", path, strerror(errno));
		return EXIT_FATAL;
	}
	while ((line = lr_next(lr, &len)) != NULL) {
		enum evt_linetype lt = evt_classify(line, len);
		int r;

		lr_progress(lr);
		if (first && lt != EVT_BLANK) {
			first = 0;
			if (h->need_header && lt != EVT_HEADER)
				return each_fatal(lr, h->need_header);
		}
		if ((r = each_line(h, lt, line, len, &why)) == 0)
			continue;
		if (r == -2)
			return each_fatal(lr, why);
		if (++bad <= 5)
			cli_warn("%s:%lu: %s, line skipped", lr_name(lr), lr_lineno(lr), why);
	}
	bad += lr_finish(lr);
	lr_close(lr);
	if (skipped)
		*skipped = bad;
	if (bad == 0)
		return 0;
	cli_warn("%s: %llu unusable line%s skipped", path, (unsigned long long)bad, bad == 1 ? "" : "s");
	return EXIT_PARTIAL;
}
