/*
 * etl.c - ETL buffers and record headers; per-CPU merge into time order.
 *
 * Layout notes are in ../shared/docs/etl-format.md (section numbers in
 * comments refer to it).  The reader first builds a small index of the
 * buffers (offset, size, CPU), then iterates either in file order (one
 * cursor over every buffer) or in time order (one cursor per CPU over
 * that CPU's buffers, merged by a tournament on the next timestamp).  A
 * buffer is decompressed only when its cursor reaches it, into that
 * cursor's scratch space, so memory is bounded by CPUs × buffer size.
 * A trace opened from a file descriptor is indexed through its mapping;
 * its page-aligned uncompressed buffers are used in place and given back
 * (madvise) when done, its compressed ones read with pread(2) into the
 * cursor's space: they share pages with their neighbours, the kernel
 * maps file pages in large folios around every fault, and reading them
 * through the mapping kept hundreds of MB of a multi-GB trace resident
 * whatever was given back.
 *
 * Both cores: with more than one, each pass (each rewind) runs the
 * iteration above on a worker thread (struct pump): it reads,
 * decompresses, parses and merges, and hands the events over in
 * batches, so that the caller's thread only uses them.  Problems the
 * worker finds travel in the batches too and are reported by the
 * caller's thread when it reaches them: messages come in the same
 * order as without a worker, from one thread.  A few batches of
 * bounded size are in flight.
 *
 * An event is handed over as it is, pointing where its record lies,
 * when those bytes stay put until the caller has given its batch back:
 * a buffer kept decompressed in memory (the store's arena, there until
 * close), a trace in memory (etl_open: the caller's bytes), a buffer
 * used in place in the mapping (its pages are given back only once the
 * batches that may point into it have come back, pump_hold()).  Only a
 * record in a cursor's scratch space (a buffer read from the
 * descriptor, decompressed again, or read back from the temporary
 * file), which the cursor's next buffer overwrites, is copied into the
 * batch.  Copying every record cost the worker a memmove of every byte
 * and the caller's thread a read of each from the other core's cache.
 *
 * Compressed buffers are decompressed once, not once per pass: the
 * first pass decompresses each into a store (struct store) that later
 * passes read in place.  The store keeps
 * decompressed buffers in memory up to 32 MiB (etl_set_keep) and writes the
 * rest to an unlinked temporary file: reading a buffer back with
 * pread(2) costs a copy, a fifth of decompressing it again, and memory
 * stays bounded whatever the trace's size.  (Decompressing again in
 * pass 2 instead would keep the disk out of it, but pass 2 is the
 * one-core part of the conversion, and its thread would pay it.)  A
 * buffer that expands more than KEEP_RATIO times is not kept at all
 * (decompressed again when needed), so that a crafted trace cannot fill
 * the disk: what the temporary file holds is bounded by KEEP_RATIO × the
 * trace's size.  A buffer that could not be read or decompressed is
 * kept as that, and reported in the first pass only, as before.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/escape.h"
#include "etl/etl.h"
#include "etl/xpress.h"

#define BUFHDR 0x48
#define MAX_BUFFER (64u << 20)	/* larger BufferSize values are corruption */
#define MAX_CPUS 4096
#define KEEP_CAP ((size_t)32 << 20)	/* decompressed bytes kept in memory between passes */

/* etl_set_threads(), etl_set_keep(): for every reader of the process */
static int cfg_threads;		/* 0: a worker when there is more than one core */
static size_t cfg_keep = KEEP_CAP;
#define KEEP_RATIO 32			/* kept only when no larger than this × its stored size */

/* What the store holds for one buffer. */
enum kept_state {
	KEPT_NONE,	/* not kept (uncompressed, or too large): read it as before */
	KEPT_MEM,	/* decompressed, in memory at .mem */
	KEPT_SPILL,	/* decompressed, in the temporary file at .off */
	KEPT_UNREADABLE,	/* reading it failed with .err */
	KEPT_CORRUPT,	/* decompressing it failed, saying .why */
};

struct kept {
	uint8_t *mem;	/* planned at the store's start: where in the arena it goes... */
	uint64_t off;	/* ...or where in the temporary file (MEM NULL) */
	const char *why;
	int err;
	int state;	/* enum kept_state */
	int done;	/* filled (guarded by the mutex while threads fill the store) */
};

/* A filler's scratch space: a stored buffer read from the descriptor, one decompressed for the file. */
struct fill_room {
	uint8_t *packed, *out;
	size_t pcap, ocap;
};

/*
 * The decompressed buffers of a trace.  In a first pass in file order a
 * thread of their own fills them in file order (the worker parses
 * while it decompresses, and the caller's thread uses the events), and
 * the parser, rather than wait for the buffer it needs, takes the next
 * one nobody took and decompresses it itself: decompressing is the
 * longest part of that pass, and the two share it.  Otherwise they are
 * filled as the iteration needs them.  Where each buffer goes (the
 * arena, or the temporary file) is planned in file order at the
 * start, so that any thread can fill any buffer.  Entries [0, ready)
 * are final; NEXT is the first nobody took.
 */
struct store {
	struct kept *k;
	size_t n, ready, next;	/* guarded by the mutex while threads fill the store */
	int threaded, stop;
	int waiting;		/* the parser sleeps until READY reaches WANT */
	size_t want;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t *arena;		/* CAP bytes, touched as they are used: kept buffers, one after another */
	size_t cap;
	int spill_fd;		/* -1 until the first spill; -2: it could not be made */
	struct fill_room room[2];	/* the store's thread's, the parser's */
};

/*
 * One batch of what the worker hands over: events (those whose record
 * lies in a cursor's scratch space with a copy of it in BYTES, their
 * pointers pointing there), and problems to report (their messages in
 * BYTES too), in the order the iteration met them.
 */
#define NBATCH 8			/* batches in flight */
#define BATCH_ITEMS 1024
#define BATCH_BYTES (128u << 10)	/* handed over past this... */
#define BATCH_ROOM (BATCH_BYTES + (72u << 10))	/* ...so that one more record or message fits */

/*
 * An event, or a problem to report: RAW NULL, the message at PAYLOAD,
 * its file offset in BUF_OFFSET.  Two cache lines, on cache lines.
 */
struct pump_item {
	struct etl_event ev;
};

struct batch {
	struct pump_item *it;
	uint64_t *prepix;	/* per event, with a prepare hook: offset << 32 | length of its bytes in PREP */
	struct etl_prep prep;
	size_t n;
	uint8_t *bytes;
	size_t nbytes;
	uint64_t progress;	/* the file's bytes covered when it was handed over */
	int last;		/* the iteration ended with it */
};

/*
 * The worker of one pass and the batches between it and the reader's
 * thread.  FILLED batches were handed over, TAKEN given back; the
 * worker fills batch FILLED % NBATCH while fewer than NBATCH are out.
 * A batch's contents belong to one side at a time, passed over by the
 * store to FILLED or TAKEN (the other side's load of it sees them).
 * The counters need no lock: each is written by one side only.  A lock
 * per batch was contended a fifth of the time, and on a busy machine
 * a side preempted while holding it stopped the other for a whole time
 * slice.  The mutex and condition are for sleeping only: a side that
 * sleeps says so (WSLEEPS, RSLEEPS), then looks at the other's counter
 * again, and the other side, after moving its counter, looks whether
 * it sleeps; both in sequentially consistent order, so that one of the
 * two always sees the other, and a wake-up is never lost.
 */
struct pump {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[NBATCH];
	_Atomic uint64_t filled, taken;
	atomic_int stop, ended;	/* ENDED: the last batch is handed over */
	/*
	 * Who sleeps, for what: a side that must wait sleeps until half
	 * the batches are there for it (or the pass ends), not one: waking
	 * a thread costs more than a batch, and two threads woken for
	 * every batch spent more in the kernel than the worker saved.
	 */
	atomic_int wsleeps, rsleeps;
	/*
	 * The worker's: buffers used in place whose pages wait to be given
	 * back until the batches up to .batch (which may point into them)
	 * have come back; in the order they were done with.
	 */
	struct held { uint64_t off, size, batch; } *held;
	size_t nheld, capheld;
	uint64_t held_bytes;
	/*
	 * Each side's own fields on cache lines of their own: the reader
	 * writes POS for every event, and while it shared a line with WB,
	 * which the worker reads for every event, that line went from core
	 * to core twice an event (a sixth of the reader's time).
	 */
	char pad0[64];
	struct batch *wb;	/* the worker's: the batch being filled, NULL when told to stop */
	char pad1[64];
	struct batch *rb;	/* the reader's: the batch being used, and where in it */
	size_t pos;
	uint64_t progress;
	char pad2[64];
};

struct cursor {
	uint32_t *bufs;		/* indexes into r->buf, in file order */
	size_t nb, bi;
	const uint8_t *data;	/* current buffer (mapped or decompressed), NULL if none */
	uint32_t filled, off;
	struct etl_buffer *buf;	/* the current buffer's index entry */
	uint64_t buf_offset;
	int cpu;
	uint8_t *scratch;	/* the buffer, decompressed or read from the descriptor */
	size_t scap;
	uint8_t *packed;	/* a compressed buffer read from the descriptor */
	size_t pcap;
	int compressed;		/* the current buffer was decompressed */
	uint64_t mapped_off, mapped_size;	/* the buffer used in place in the mapping */
	struct etl_event ev;
	int have;
};

struct etl_reader {
	const uint8_t *data;
	size_t len;
	etl_error_fn err;
	void *ctx;
	struct etl_info info;
	struct etl_buffer *buf;
	size_t nbuf, capbuf;
	struct etl_damage damage;
	/* iteration */
	enum etl_order order;
	struct cursor *cur;
	size_t ncur;
	/*
	 * The merge: a tournament of the cursors by their next event's key
	 * (merge_key()).  LOSER[1..ncur) holds each match's loser, LOSER[0]
	 * the winner, whose cursor has the next event; that cursor's next
	 * event replays only the matches on its path to the root, one
	 * comparison of two integers per level, the keys in the tree itself
	 * (a heap made two comparisons of two fields a level, and moved
	 * entries).
	 */
	unsigned __int128 *loser;
	uint32_t *order_bufs;	/* storage for the cursors' buffer lists */
	uint64_t done_bytes;
	int compressed_mode;	/* LogFileMode has EVENT_TRACE_COMPRESSED_MODE */
	int release;		/* data is a file mapping: drop pages of finished buffers */
	int fd;			/* >= 0: read buffers from it, not from the mapping */
	uint64_t fd_base;	/* where the trace starts in FD (a member stored in a zip) */
	int passes;		/* problems are reported during the first pass only */
	int pending;		/* the last event's cursor must advance first */
	uint64_t ns_mul, ns_max;	/* clocks that divide 1 GHz: ns = ticks × ns_mul */
	struct store *store;	/* decompressed buffers (NULL: none compressed, or not yet) */
	struct etl_event out;	/* etl_next_ref()'s event without a worker */
	etl_prepare_fn prep_fn;	/* etl_set_prepare() */
	void *prep_ctx;
	struct etl_prep prep;	/* without a worker: what it added for OUT */
	/*
	 * Read by the caller's thread for every event while the worker
	 * writes the iteration's fields above: a line of its own.
	 */
	char pad[64];
	struct pump *pump;	/* the worker of this pass, or NULL: the caller's thread iterates */
	char pad_end[64];
};

static void
report(struct etl_reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void release_range(const struct etl_reader *r, uint64_t off, uint64_t size);
static void done_in_place(struct etl_reader *r, struct cursor *c);
static void pump_defer(struct etl_reader *r, uint64_t off, const char *msg);
static void tell_thread_cpu(const char *who, int pass);

/*
 * While a pass runs on a worker (R->pump set), only the worker calls
 * this: the message goes into its batch, to be reported in order.
 */
static void
report(struct etl_reader *r, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!r->err || r->passes > 1)
		return;
	if (r->pump)
		pump_defer(r, off, msg);
	else
		r->err(r->ctx, off, msg);
}

/* From the caller's thread, between events: reported at once. */
void
etl_problem(struct etl_reader *r, uint64_t off, const char *msg)
{
	if (r->err && r->passes <= 1)
		r->err(r->ctx, off, msg);
}

/* ---------- strings, GUIDs, times ---------- */

static const char hexl[] = "0123456789abcdef";

void
etl_guid_str(char *out, const uint8_t *g)
{
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	int o = 0;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hexl[g[order[i]] >> 4];
		out[o++] = hexl[g[order[i]] & 15];
	}
	out[o] = '\0';
}

int
etl_guid_parse(const char *s, uint8_t out[16])
{
	/* text order: 4 bytes, 2, 2, 2, 6; the first three groups are little-endian */
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t raw[16];
	int i = 0;

	if (*s == '{')
		s++;
	while (i < 16) {
		int hi, lo;
		if (*s == '-')
			s++;
		hi = hex_digit(s[0]);
		lo = hi < 0 ? -1 : hex_digit(s[1]);
		if (lo < 0)
			return -1;
		raw[i++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	if (*s == '}')
		s++;
	if (*s)
		return -1;
	for (i = 0; i < 16; i++)
		out[order[i]] = raw[i];
	return 0;
}

static void
civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
	/* Howard Hinnant's algorithm: days since 1970-01-01 → date */
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yy + (*m <= 2));
}

void
etl_filetime_str(char *out, uint64_t ft)
{
	int64_t secs = (int64_t)(ft / 10000000) - 11644473600LL;
	unsigned frac = (unsigned)(ft % 10000000);
	int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
	int64_t rem = secs - days * 86400;
	int y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	char tmp[96];
	snprintf(tmp, sizeof tmp, "%04d-%02u-%02uT%02u:%02u:%02u.%07uZ", y % 10000, m % 100,
	    d % 100, (unsigned)(rem / 3600) % 100, (unsigned)(rem / 60 % 60), (unsigned)(rem % 60),
	    frac % 10000000);
	memcpy(out, tmp, 28);
	out[28] = '\0';
}

static size_t
put_utf8(char *out, size_t o, size_t cap, uint32_t c)
{
	char tmp[4];
	size_t n;

	if (c < 0x80) {
		tmp[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		tmp[0] = (char)(0xc0 | c >> 6);
		tmp[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		tmp[0] = (char)(0xe0 | c >> 12);
		tmp[1] = (char)(0x80 | (c >> 6 & 0x3f));
		tmp[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		tmp[0] = (char)(0xf0 | c >> 18);
		tmp[1] = (char)(0x80 | (c >> 12 & 0x3f));
		tmp[2] = (char)(0x80 | (c >> 6 & 0x3f));
		tmp[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (o + n >= cap)
		return o;
	memcpy(out + o, tmp, n);
	return o + n;
}

size_t
etl_wstr(const uint8_t *p, size_t maxb, char *out, size_t cap, size_t *consumed)
{
	size_t i = 0, o = 0;

	while (i + 2 <= maxb) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/*
		 * Four ASCII characters at once (method names and paths are
		 * long): each unit below 0x80 and none zero, their low bytes
		 * gathered into four.  A borrow starts only at a zero unit.
		 */
		while (i + 8 <= maxb && o + 4 < cap) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if ((w & 0xff80ff80ff80ff80ull) ||
			    ((w - 0x0001000100010001ull) & ~w & 0x8000800080008000ull))
				break;
			w = (w | w >> 8) & 0x0000ffff0000ffffull;
			uint32_t four = (uint32_t)(w | w >> 16);
			memcpy(out + o, &four, 4);
			o += 4;
			i += 8;
		}
		if (i + 2 > maxb)
			break;
#endif
		uint32_t c = etl_u16(p + i);
		i += 2;
		if (c - 1 < 0x7f && o + 1 < cap) {	/* ASCII, the common case: as put_utf8 would */
			out[o++] = (char)c;
			continue;
		}
		if (c == 0) {
			if (consumed)
				*consumed = i;
			out[o] = '\0';
			return o;
		}
		if (c >= 0xd800 && c < 0xdc00 && i + 2 <= maxb && etl_u16(p + i) >= 0xdc00 &&
		    etl_u16(p + i) < 0xe000) {
			c = 0x10000 + ((c - 0xd800) << 10) + (etl_u16(p + i) - 0xdc00);
			i += 2;
		} else if (c >= 0xd800 && c < 0xe000)
			c = '?';
		o = put_utf8(out, o, cap, c);
	}
	if (consumed)
		*consumed = maxb;	/* unterminated: the rest of the payload */
	out[o] = '\0';
	return o;
}

size_t
etl_astr(const uint8_t *p, size_t maxb, char *out, size_t cap, size_t *consumed)
{
	size_t i = 0, o = 0;

	while (i < maxb && p[i]) {
		uint8_t c = p[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
		    (c & 0xf8) == 0xf0 ? 4 : 0;
		size_t k;
		if (n == 0 || i + n > maxb)
			n = 0;
		for (k = 1; k < n; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				break;
		if (n == 0 || k < n || (n == 2 && c < 0xc2)) {
			if (o + 1 < cap)
				out[o++] = '?';
			i++;
			continue;
		}
		if (o + n < cap) {
			memcpy(out + o, p + i, n);
			o += n;
		}
		i += n;
	}
	if (consumed)
		*consumed = i < maxb ? i + 1 : maxb;
	out[o] = '\0';
	return o;
}

/* ---------- clocks ---------- */

int64_t
etl_ns(const struct etl_reader *r, uint64_t ts)
{
	/* rounded to the nearest ns, as TraceEvent's double arithmetic does */
	int64_t t = (int64_t)(ts - r->info.ts0);
	uint64_t f = r->info.clock_freq;
	uint64_t a = t < 0 ? (uint64_t)(-(t + 1)) + 1 : (uint64_t)t;
	if (r->ns_mul && a < r->ns_max) {
		/* 10 MHz (Windows 10's QPC), 1 GHz...: exact without dividing */
		uint64_t ns = a * r->ns_mul;
		return t < 0 ? -(int64_t)ns : (int64_t)ns;
	}
	if (f < 10000000000ull && a / f < 9000000000ull) {
		/* the same in 64 bits: |t| = q·f + rem, and q·f·1e9 divides exactly */
		uint64_t q = a / f, rem = a % f;
		uint64_t ns = q * 1000000000ull + (rem * 1000000000ull + f / 2) / f;
		return t < 0 ? -(int64_t)ns : (int64_t)ns;
	}
	__int128 d = (__int128)t * 1000000000;
	__int128 F = (__int128)f;
	return (int64_t)(d >= 0 ? (d + F / 2) / F : -((-d + F / 2) / F));
}

uint64_t
etl_filetime(const struct etl_reader *r, uint64_t ts)
{
	__int128 d = (__int128)(int64_t)(ts - r->info.ts0);
	return r->info.start_time + (uint64_t)(int64_t)(d * 10000000 / (__int128)r->info.clock_freq);
}

/* ---------- records ---------- */

/*
 * Parses the record at OFF in D[0..filled).  Returns the offset of the
 * next record, 0 at the end of the buffer's data, or -1 on corruption
 * (*why set).
 */
static long
parse_record(const uint8_t *d, uint32_t filled, uint32_t off, struct etl_event *ev, const char **why)
{
	if (off + 4 > filled)
		return 0;
	uint32_t m = etl_u32(d + off);
	if (m == 0xffffffffu)
		return 0;
	if (off + 8 > filled)	/* no header is shorter; its size field lies beyond */
		goto bad_size;
	unsigned flags = m >> 24, htype = m >> 16 & 0xff;
	uint32_t size, hsz;
	const uint8_t *p = d + off;

	memset(ev, 0, offsetof(struct etl_event, buf_offset));
	ev->tid = ev->pid = ETL_NO_ID;
	if ((flags & 0xd0) == 0x90 && !(flags & 0x40)) {
		/* WPP trace message (§3.6): u16 size, u16 marker, u16 id, u16 flags, optional fields */
		ev->hkind = ETL_HK_WPP;
		size = etl_u16(p);
		hsz = 8;
		if (size < hsz || off + size > filled)
			goto bad_size;
		unsigned mf = etl_u16(p + 6);
		uint32_t q = 8;
		ev->message_id = etl_u16(p + 4);
		if (mf & 0x01)
			q += 4;
		if (mf & 0x04)
			q += 4;
		else if (mf & 0x02) {
			if (q + 16 <= size)
				ev->guid = p + q;
			q += 16;
		}
		if (mf & 0x08) {
			if (q + 8 <= size)
				ev->ts = etl_u64(p + q);
			q += 8;
		}
		if (mf & 0x20) {
			if (q + 8 <= size) {
				ev->tid = etl_u32(p + q);
				ev->pid = etl_u32(p + q + 4);
			}
			q += 8;
		}
		if (q > size)
			q = size;
		hsz = q;
		goto done;
	}
	if ((flags & 0xc0) != 0xc0) {
		*why = "bad record marker";
		return -1;
	}
	switch (htype) {
	case 0x01: case 0x02: case 0x03: case 0x04: case 0x10: case 0x11:
		size = etl_u16(p + 4);
		ev->hkind = htype <= 2 ? ETL_HK_SYSTEM : htype <= 4 ? ETL_HK_COMPACT : ETL_HK_PERFINFO;
		ev->hdr64 = htype == 2 || htype == 4 || htype == 0x11;
		hsz = ev->hkind == ETL_HK_SYSTEM ? 0x20 : ev->hkind == ETL_HK_COMPACT ? 0x18 : 0x10;
		if (size < hsz || off + size > filled)
			goto bad_size;
		ev->version = (uint16_t)(m & 0xffff);
		ev->type = p[6];
		ev->group = p[7];
		if (ev->hkind == ETL_HK_PERFINFO) {
			ev->ts = etl_u64(p + 8);
		} else {
			ev->tid = etl_u32(p + 8);
			ev->pid = etl_u32(p + 12);
			ev->ts = etl_u64(p + 16);
		}
		/* PEBS / PMC extension words (§3.1): only for perfinfo headers, as snail */
		if (ev->hkind == ETL_HK_PERFINFO && (m & 0x8700)) {
			hsz += ((m & 0x8000) ? 8 : 0) + 8 * ((m >> 8) & 7);
			ev->version &= 0xff;
			if (hsz > size)
				goto bad_size;
		}
		break;
	case 0x0a: case 0x14: case 0x0b: case 0x15:
		size = etl_u16(p);
		ev->hkind = (htype == 0x0a || htype == 0x14) ? ETL_HK_FULL : ETL_HK_INSTANCE;
		ev->hdr64 = htype >= 0x14;
		hsz = ev->hkind == ETL_HK_FULL ? 0x30 : 0x38;
		if (size < hsz || off + size > filled)
			goto bad_size;
		ev->type = p[4];
		ev->level = p[5];
		ev->version = etl_u16(p + 6);
		ev->tid = etl_u32(p + 8);
		ev->pid = etl_u32(p + 12);
		ev->ts = etl_u64(p + 16);
		ev->guid = p + 24;
		break;
	case 0x12: case 0x13:
		size = etl_u16(p);
		ev->hkind = ETL_HK_EVENT;
		ev->hdr64 = htype == 0x13;
		hsz = 0x50;
		if (size < hsz || off + size > filled)
			goto bad_size;
		ev->eflags = etl_u16(p + 4);
		ev->eprop = etl_u16(p + 6);
		ev->tid = etl_u32(p + 8);
		ev->pid = etl_u32(p + 12);
		ev->ts = etl_u64(p + 16);
		ev->guid = p + 24;
		ev->id = etl_u16(p + 40);
		ev->version = p[42];
		ev->channel = p[43];
		ev->level = p[44];
		ev->opcode = p[45];
		ev->type = p[45];
		ev->task = etl_u16(p + 46);
		ev->keywords = etl_u64(p + 48);
		ev->activity = p + 64;
		if (ev->eflags & 0x1) {
			/* extended items: u16 reserved, u16 type, u16 linkage, u16 size, data padded to 8 */
			uint32_t q = hsz;
			for (;;) {
				if (q + 8 > size) {
					*why = "extended data runs past the record";
					return -1;
				}
				uint32_t dsz = etl_u16(p + q + 6), link = etl_u16(p + q + 4);
				uint32_t next = q + 8 + ((dsz + 7) & ~7u);
				if (q + 8 + dsz > size) {
					*why = "extended data item runs past the record";
					return -1;
				}
				q = next > size ? size : next;
				if (!(link & 1))
					break;
			}
			ev->ext = p + hsz;
			ev->extlen = q - hsz;
			hsz = q;
		}
		break;
	case 0x0c: case 0x0d: case 0x0e:
		size = etl_u16(p);
		ev->hkind = ETL_HK_OTHER;
		hsz = 8;
		if (size < hsz || off + size > filled)
			goto bad_size;
		break;
	default:
		*why = "unknown record header type";
		return -1;
	}
done:
	ev->payload = p + hsz;
	ev->plen = size - hsz;
	ev->raw = p;
	ev->rawlen = size;
	ev->rec_offset = off;
	return (long)((off + size + 7) & ~7u);
bad_size:
	*why = "record size out of range";
	return -1;
}

/* ---------- the buffer index ---------- */

/* The cheap checks on a buffer header at OFF. */
static int
basic_header(const struct etl_reader *r, uint64_t off)
{
	if (off + BUFHDR > r->len)
		return 0;
	const uint8_t *h = r->data + off;
	uint32_t size = etl_u32(h), saved = etl_u32(h + 4);
	uint16_t flags = etl_u16(h + 0x34), type = etl_u16(h + 0x36);

	if (size < BUFHDR + 8 || size > MAX_BUFFER || (flags & ~0x7f) || type > 7)
		return 0;
	if (saved < BUFHDR || saved > MAX_BUFFER)
		return 0;
	if (flags & 0x40)
		return r->compressed_mode && (!r->info.buffer_size || saved <= r->info.buffer_size);
	return saved <= size;
}

/*
 * The logfile's BufferSize, when every buffer after the header buffer
 * should be that long: ETW writes uncompressed buffers at that stride
 * (compressed ones are as long as their compressed data).  0 if unknown.
 */
static uint32_t
stride(const struct etl_reader *r)
{
	uint32_t s = r->info.buffer_size;

	if (r->compressed_mode || s < BUFHDR + 8 || s > MAX_BUFFER)
		return 0;
	return s;
}

/* Whether the header-sized bytes at OFF are all zero: unwritten, preallocated space. */
static int
zero_header(const struct etl_reader *r, uint64_t off)
{
	for (uint64_t i = off; i < off + BUFHDR; i++)
		if (r->data[i] != 0)
			return 0;
	return 1;
}

/*
 * Whether a buffer can end at END: the file ends there (or with fewer
 * bytes than a header), or a sane header or unwritten space follows.
 */
static int
chain_goes_on(const struct etl_reader *r, uint64_t end)
{
	if (end > r->len)
		return 0;
	if (end + BUFHDR > r->len)
		return 1;
	return basic_header(r, end) || zero_header(r, end);
}

/*
 * Whether the buffer at OFF, whose BufferSize differs from the stride S,
 * is an uncompressed buffer of S bytes with a damaged size field: its
 * other fields fit S bytes and the chain goes on S bytes further.
 */
static int
stride_fits(const struct etl_reader *r, uint64_t off, uint32_t s)
{
	const uint8_t *h = r->data + off;
	uint32_t saved = etl_u32(h + 4);
	uint16_t flags = etl_u16(h + 0x34), type = etl_u16(h + 0x36);

	if ((flags & ~0x3f) || type > 7 || saved < BUFHDR || saved > s || s > r->len - off)
		return 0;
	return chain_goes_on(r, off + s);
}

/*
 * Whether OFF looks like the start of a real buffer, for finding the
 * chain again after a corrupt header: the header fields are sane, the
 * buffer lies inside the file, an uncompressed buffer's first record
 * parses, and the buffer after it is sane too (or the file ends there).
 */
static int
plausible_header(const struct etl_reader *r, uint64_t off)
{
	if (!basic_header(r, off))
		return 0;
	const uint8_t *h = r->data + off;
	uint32_t size = etl_u32(h), saved = etl_u32(h + 4);
	if (size > r->len - off)
		return 0;
	if (!(etl_u16(h + 0x34) & 0x40)) {
		struct etl_event ev;
		const char *why;
		if (parse_record(h, saved, BUFHDR, &ev, &why) <= 0)
			return 0;
	}
	return chain_goes_on(r, off + size);
}

/*
 * The first buffer after OFF and before LIMIT, to find the chain again
 * past a buffer that cannot be used: one logfile BufferSize further
 * first, where ETW put it, else the first plausible header.  LIMIT if
 * there is none.
 */
static uint64_t
next_buffer_after(const struct etl_reader *r, uint64_t off, uint64_t limit)
{
	uint32_t s = stride(r);

	if (s && off + s < limit && plausible_header(r, off + s))
		return off + s;
	for (uint64_t p = off + 1; p < limit && p + BUFHDR <= r->len; p++)
		if (plausible_header(r, p))
			return p;
	return limit;
}

/* Counts BYTES of buffer B as not decoded, and B itself once (first pass only). */
static void
count_damage(struct etl_reader *r, struct etl_buffer *b, uint64_t bytes)
{
	if (r->passes > 1)
		return;
	if (!b->damaged)
		r->damage.buffers++;
	b->damaged = 1;
	r->damage.bytes += bytes;
}

/*
 * The buffer at OFF cannot be used (WHY): reports it with where the walk
 * goes on, NEXT (the next buffer found, or the end of the file), and
 * counts the bytes in between as skipped.  Returns NEXT.
 */
static uint64_t
skip_buffer(struct etl_reader *r, uint64_t off, uint64_t next, const char *why)
{
	if (next < r->len)
		report(r, off, "%s; skipped %llu bytes to the next buffer, at offset %llu", why,
		    (unsigned long long)(next - off), (unsigned long long)next);
	else
		report(r, off, "%s; no buffer after it, the last %llu bytes skipped", why,
		    (unsigned long long)(next - off));
	r->damage.buffers++;
	r->damage.bytes += next - off;
	return next;
}

static struct etl_buffer *
add_buffer(struct etl_reader *r, uint64_t off, uint32_t size, uint32_t filled)
{
	const uint8_t *h = r->data + off;
	struct etl_buffer *b;

	if (r->nbuf == r->capbuf) {
		r->capbuf = r->capbuf ? r->capbuf * 2 : 64;
		r->buf = xrealloc(r->buf, r->capbuf * sizeof *r->buf);
	}
	b = &r->buf[r->nbuf++];
	b->offset = off;
	b->size = size;
	b->filled = filled;
	b->flags = etl_u16(h + 0x34);
	b->type = etl_u16(h + 0x36);
	b->damaged = 0;
	b->seq = etl_u64(h + 0x18);
	b->cpu = (b->flags & 0x20) ? etl_u16(h + 0x28) : h[0x28];
	if (b->cpu >= MAX_CPUS)
		b->cpu = MAX_CPUS - 1;
	if (b->flags & 0x6)
		r->damage.lost_buffers++;
	return b;
}

/* Whether only zero bytes follow OFF: the padding of a preallocated file. */
static int
zeros_to_end(const struct etl_reader *r, uint64_t off)
{
	while (off < r->len && r->data[off] == 0)
		off++;
	return off == r->len;
}

/*
 * Walks the chain of buffers from OFF (next = offset + BufferSize).  In a
 * file of uncompressed buffers the logfile's BufferSize is the stride: a
 * buffer of another size is read at the stride when the next buffer is
 * there.  Otherwise a header is trusted when its fields are sane and the
 * chain goes on where it ends, or no buffer starts inside it.  A buffer
 * that cannot be used is skipped up to the next buffer found (one stride
 * further first), never further, and never to one that overruns the
 * file, so one bad header costs at most its own buffer.
 */
static void
index_buffers(struct etl_reader *r, uint64_t off)
{
	uint64_t released = 0, nth;
	char why[128];

	for (nth = 1; off + BUFHDR <= r->len; nth++) {
		const uint8_t *h = r->data + off;
		uint32_t size = etl_u32(h), saved = etl_u32(h + 4);
		uint16_t flags = etl_u16(h + 0x34);
		uint32_t offs = etl_u32(h + 0x30);
		/*
		 * Filled bytes: SavedOffset, except that header buffers of relogged
		 * files may have SavedOffset 0 (Win7) or short of the Offset field
		 * (Win11) — then Offset, when it fits the buffer, is the right one.
		 */
		uint32_t filled = saved;
		if (!(flags & 0x40) && offs > filled && offs <= size)
			filled = offs;

		if (size == 0 && saved == 0 && zeros_to_end(r, off))
			break;
		int resized = stride(r) && size != stride(r) && stride_fits(r, off, stride(r));
		if (resized) {
			report(r, off, "buffer %llu: BufferSize %u is not the logfile's %u, which the "
			    "next buffer confirms; read as %u bytes", (unsigned long long)nth, size,
			    stride(r), stride(r));
			size = stride(r);
			filled = offs > saved && offs <= size ? offs : saved;
		}
		if (!resized && (!basic_header(r, off) || (!(flags & 0x40) && filled > size))) {
			snprintf(why, sizeof why, "corrupt buffer header (buffer %llu, BufferSize %u, "
			    "SavedOffset %u)", (unsigned long long)nth, size, saved);
			off = skip_buffer(r, off, next_buffer_after(r, off, r->len), why);
			continue;
		}
		if (size > r->len - off) {
			uint64_t next = next_buffer_after(r, off, r->len);
			if (next < r->len) {
				snprintf(why, sizeof why, "buffer %llu: BufferSize %u runs past the end of "
				    "the file", (unsigned long long)nth, size);
				off = skip_buffer(r, off, next, why);
				continue;
			}
			/* nothing after it: the file was cut in this buffer */
			uint64_t have = r->len - off;
			report(r, off, "truncated buffer %llu: %u bytes announced, file ends after %llu",
			    (unsigned long long)nth, size, (unsigned long long)have);
			if (!(flags & 0x40) && filled > have)
				filled = (uint32_t)have;
			count_damage(r, add_buffer(r, off, (uint32_t)have, filled), 0);
			off = r->len;
			break;
		}
		/*
		 * An uncompressed buffer of the logfile's stride is trusted;
		 * other sizes when the chain goes on at their end (a zero
		 * BufferSize there may be a damaged next header: it is reported
		 * next), or when no buffer starts inside them.
		 */
		if (stride(r) ? size != stride(r) :
		    (!chain_goes_on(r, off + size) && etl_u32(h + size) != 0)) {
			uint64_t next = next_buffer_after(r, off, off + size);
			if (next < off + size) {
				snprintf(why, sizeof why, "buffer %llu: BufferSize %u runs into the next "
				    "buffer", (unsigned long long)nth, size);
				off = skip_buffer(r, off, next, why);
				continue;
			}
		}
		add_buffer(r, off, size, filled);
		off += size;
		/* reading the headers mapped the pages around them */
		if (off - released >= (4u << 20)) {
			release_range(r, released, off - released);
			released = off;
		}
	}
	release_range(r, 0, r->len);
	if (off < r->len && off + BUFHDR > r->len) {
		report(r, off, "%llu trailing bytes are too short for a buffer",
		    (unsigned long long)(r->len - off));
		r->damage.bytes += r->len - off;
	}
}

/* ---------- the logfile header (§2) ---------- */

static int
parse_logfile_header(struct etl_reader *r)
{
	struct etl_info *in = &r->info;
	const uint8_t *b = r->data;
	uint32_t filled = r->nbuf ? r->buf[0].filled : 0;
	struct etl_event ev;
	const char *why = NULL;

	if (r->nbuf == 0 || (r->buf[0].flags & 0x40)) {
		report(r, 0, "not an ETL file (no readable first buffer)");
		return -1;
	}
	if (filled > r->buf[0].size)
		filled = r->buf[0].size;
	if (parse_record(b, filled, BUFHDR, &ev, &why) <= 0 || ev.hkind != ETL_HK_SYSTEM ||
	    ev.group != 0 || ev.type != 0 || ev.plen < 56) {
		report(r, BUFHDR, "not an ETL file (no logfile header event at offset 0x48)");
		return -1;
	}
	const uint8_t *p = ev.payload;
	uint32_t n = ev.plen;
	in->buffer_size = etl_u32(p);
	memcpy(in->version, p + 4, 4);
	in->build = etl_u32(p + 8);
	in->ncpu = etl_u32(p + 12);
	in->end_time = etl_u64(p + 16);
	in->timer_resolution = etl_u32(p + 24);
	in->max_file_size = etl_u32(p + 28);
	in->log_file_mode = etl_u32(p + 32);
	in->buffers_written = etl_u32(p + 36);
	in->pointer_size = etl_u32(p + 44);
	in->events_lost = etl_u32(p + 48);
	in->cpu_mhz = etl_u32(p + 52);
	if (in->pointer_size != 4 && in->pointer_size != 8)
		in->pointer_size = ev.hdr64 ? 8 : 4;
	uint32_t P = in->pointer_size, base = 2 * P;
	if (n >= 264 + base) {
		in->tz_bias = (int32_t)etl_u32(p + 56 + base);
		in->boot_time = etl_u64(p + 232 + base);
		in->perf_freq = etl_u64(p + 240 + base);
		in->start_time = etl_u64(p + 248 + base);
		in->clock_type = etl_u32(p + 256 + base);
		in->buffers_lost = etl_u32(p + 260 + base);
		size_t used;
		etl_wstr(p + 264 + base, n - (264 + base), in->logger_name, sizeof in->logger_name, &used);
		if (264 + base + used < n)
			etl_wstr(p + 264 + base + used, n - (264 + base + used), in->logfile_name,
			    sizeof in->logfile_name, NULL);
	} else
		report(r, BUFHDR, "short logfile header (%u bytes); assuming a QPC clock", n);
	in->ts0 = ev.ts;
	switch (in->clock_type) {
	case ETL_CLOCK_SYSTIME:
		in->clock_freq = 10000000;
		break;
	case ETL_CLOCK_CYCLES:
		in->clock_freq = (uint64_t)in->cpu_mhz * 1000000;
		break;
	default:
		in->clock_type = ETL_CLOCK_QPC;
		in->clock_freq = in->perf_freq;
	}
	if (in->clock_freq == 0) {
		report(r, BUFHDR, "logfile header has no clock frequency; assuming 10 MHz");
		in->clock_freq = 10000000;
	}
	/* §1.3: the format is in the low 16 bits of the first buffer's State */
	unsigned st = etl_u16(r->data + 0x2c);
	in->compression = st == COMPRESSION_FORMAT_LZNT1 || st == COMPRESSION_FORMAT_XPRESS_HUFF ?
	    (int)st : COMPRESSION_FORMAT_XPRESS;
	return 0;
}

struct etl_reader *
etl_open(const uint8_t *data, size_t len, etl_error_fn err, void *ctx)
{
	return etl_open_mapped(data, len, err, ctx, -1);
}

struct etl_reader *
etl_open_mapped(const uint8_t *data, size_t len, etl_error_fn err, void *ctx, int fd)
{
	return etl_open_mapped_at(data, len, err, ctx, fd, 0);
}

struct etl_reader *
etl_open_mapped_at(const uint8_t *data, size_t len, etl_error_fn err, void *ctx, int fd,
    uint64_t base)
{
	struct etl_reader *r = xcalloc(1, sizeof *r);

	r->release = fd >= 0;
	r->fd = fd;
	r->fd_base = base;
	r->data = data;
	r->len = len;
	r->err = err;
	r->ctx = ctx;
	if (len < BUFHDR + 0x20) {
		report(r, 0, "not an ETL file (%zu bytes)", len);
		free(r);
		return NULL;
	}
	/* the header buffer first: its logfile header tells how to read the rest */
	uint32_t size0 = etl_u32(data), saved0 = etl_u32(data + 4), offs0 = etl_u32(data + 0x30);
	if (size0 < BUFHDR + 0x20 || size0 > MAX_BUFFER) {
		report(r, 0, "not an ETL file (first BufferSize %u)", size0);
		free(r);
		return NULL;
	}
	int cut = size0 > len;
	if (cut) {
		report(r, 0, "truncated header buffer: %u bytes announced, file ends after %zu",
		    size0, len);
		size0 = (uint32_t)len;
	}
	uint32_t filled0 = saved0;
	if (offs0 > filled0 && offs0 <= size0)
		filled0 = offs0;
	if (filled0 > size0 || filled0 < BUFHDR)
		filled0 = size0;
	struct etl_buffer *b0 = add_buffer(r, 0, size0, filled0);
	if (cut)
		count_damage(r, b0, 0);
	if (parse_logfile_header(r) < 0) {
		etl_close(r);
		return NULL;
	}
	r->compressed_mode = (r->info.log_file_mode & 0x04000000) != 0;
	if (1000000000ull % r->info.clock_freq == 0) {
		r->ns_mul = 1000000000ull / r->info.clock_freq;
		r->ns_max = (1ull << 62) / r->ns_mul;
	}
	index_buffers(r, size0);
	return r;
}

const struct etl_info *
etl_info(const struct etl_reader *r)
{
	return &r->info;
}

size_t
etl_nbuffers(const struct etl_reader *r)
{
	return r->nbuf;
}

const struct etl_buffer *
etl_buffers(const struct etl_reader *r)
{
	return r->buf;
}

const struct etl_damage *
etl_damage(const struct etl_reader *r)
{
	return &r->damage;
}

/* ---------- cursors and the merge ---------- */

static uint64_t
page_size(void)
{
	static long page;
	if (!page)
		page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	return (uint64_t)page;
}

/*
 * The reader is done with [off, off+size) of a mapped file (the index
 * with the headers it read, a cursor with a buffer it used in place):
 * give its pages back, rounded out to whole pages.  The mapping is private
 * and never written, so a page still needed is faulted in again from the
 * page cache.
 */
static void
release_range(const struct etl_reader *r, uint64_t off, uint64_t size)
{
	uint64_t page = page_size();
	if (!r->release || size == 0)
		return;
	uintptr_t a = (uintptr_t)(r->data + off), e = a + size;
	a &= ~(uintptr_t)(page - 1);	/* the mapping starts on a page */
	e = (e + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
	if (e > a)
		map_release((const void *)a, e - a);
}

static uint8_t *
grow(uint8_t **p, size_t *cap, size_t n)
{
	if (*cap < n) {
		free(*p);
		*cap = n;
		*p = xmalloc(n);
	}
	return *p;
}

/* ---------- the store of decompressed buffers ---------- */

/* The unlinked temporary file buffers beyond the cap go to: -2 if it cannot be made. */
static int
spill_file(void)
{
	int fd = temp_file_unlinked("etlkit-buffers");
	return fd < 0 ? -2 : fd;
}

static int
write_full_at(int fd, const uint8_t *p, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t k = pwrite(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * Buffer I into the store, into the place planned for it: read,
 * decompressed, kept in memory or in the temporary file, with ROOM as
 * scratch space.  Nothing is reported here (this runs on the store's
 * thread or the worker): a problem is kept with the buffer.  A buffer
 * the file cannot take (a full disk) is left KEPT_NONE, to be
 * decompressed again when needed.
 */
static void
store_fill(const struct etl_reader *r, struct store *s, size_t i, struct fill_room *room)
{
	const struct etl_buffer *b = &r->buf[i];
	struct kept *k = &s->k[i];
	const uint8_t *h = r->data + b->offset;

	if (k->state == KEPT_NONE)	/* (planned so: uncompressed, or expands too far) */
		return;
	if (r->fd >= 0) {
		h = grow(&room->packed, &room->pcap, b->size);
		if (read_full_at(r->fd, room->packed, b->size, r->fd_base + b->offset) < 0) {
			k->err = errno;
			k->state = KEPT_UNREADABLE;
			return;
		}
	}
	uint8_t *dst = k->mem ? k->mem : grow(&room->out, &room->ocap, b->filled);
	memcpy(dst, h, BUFHDR);
	if (etl_decompress(r->info.compression, h + BUFHDR, b->size - BUFHDR, dst + BUFHDR,
	    b->filled - BUFHDR, &k->why) < 0) {
		k->state = KEPT_CORRUPT;
		return;
	}
	if (k->mem)
		return;
	if (s->threaded)	/* (the file is made once, by whichever filler spills first) */
		pthread_mutex_lock(&s->mu);
	if (s->spill_fd == -1)
		s->spill_fd = spill_file();
	int fd = s->spill_fd;
	if (s->threaded)
		pthread_mutex_unlock(&s->mu);
	if (fd < 0 || write_full_at(fd, dst, b->filled, k->off) < 0)
		k->state = KEPT_NONE;
}

/*
 * Where each compressed buffer will go, in file order: the arena while
 * it has room (a buffer that does not fit leaves the room to smaller
 * ones after it), else the temporary file, one after another.
 */
static void
store_plan(const struct etl_reader *r, struct store *s)
{
	size_t used = 0;
	uint64_t spilled = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct etl_buffer *b = &r->buf[i];
		struct kept *k = &s->k[i];
		if (!(b->flags & 0x40) || b->filled > (uint64_t)KEEP_RATIO * b->size) {
			k->state = KEPT_NONE;
			continue;
		}
		k->state = KEPT_MEM;
		size_t need = ((size_t)b->filled + 15) & ~(size_t)15;
		if (need <= s->cap - used) {
			k->mem = s->arena + used;
			used += need;
		} else {
			k->state = KEPT_SPILL;
			k->off = spilled;
			spilled += b->filled;
		}
	}
}

/*
 * The CAP bytes kept buffers go to.  Its pages are touched only as
 * buffers fill them, and in huge pages where the system allows: 4 KiB
 * pages cost a fault each, which for 23 MB of buffers ate a third of
 * what decompressing once saves.
 */
static uint8_t *
arena_new(size_t cap)
{
	if (!cap)
		return NULL;
#ifdef MAP_ANONYMOUS
	void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;	/* then every buffer goes to the temporary file */
	map_huge_pages(p, cap);
	return p;
#else
	return malloc(cap);	/* a large malloc is a lazy mapping too */
#endif
}

static void
arena_free(uint8_t *a, size_t cap)
{
	if (!a)
		return;
#ifdef MAP_ANONYMOUS
	munmap(a, cap);
#else
	(void)cap;
	free(a);
#endif
}

/* At the first rewind of a trace with compressed buffers: the store, empty. */
static void
store_start(struct etl_reader *r)
{
	size_t ncompressed = 0;

	if (r->store)
		return;
	for (size_t i = 0; i < r->nbuf; i++)
		ncompressed += (r->buf[i].flags & 0x40) != 0;
	if (!ncompressed)
		return;
	struct store *s = xcalloc(1, sizeof *s);
	s->k = xcalloc(r->nbuf, sizeof *s->k);
	s->n = r->nbuf;
	s->spill_fd = -1;
	s->arena = arena_new(cfg_keep);
	s->cap = s->arena ? cfg_keep : 0;
	store_plan(r, s);
	r->store = s;
}

/*
 * Under the mutex: the next buffer nobody took, filled with ROOM as
 * scratch (the mutex let go meanwhile), the final entries moved past it
 * if those before are, and the parser woken if it waits for them.
 * Returns 0 when none was left.
 */
static int
store_fill_next(const struct etl_reader *r, struct store *s, struct fill_room *room)
{
	if (s->stop || s->next >= s->n)
		return 0;
	size_t i = s->next++;
	pthread_mutex_unlock(&s->mu);
	store_fill(r, s, i, room);
	pthread_mutex_lock(&s->mu);
	s->k[i].done = 1;
	while (s->ready < s->n && s->k[s->ready].done)
		s->ready++;
	if (s->waiting && s->ready >= s->want)
		pthread_cond_signal(&s->cv);
	return 1;
}

/* The store's thread: every buffer nobody took, in file order, as far ahead of the parser as it goes. */
static void *
store_work(void *arg)
{
	const struct etl_reader *r = arg;
	struct store *s = r->store;

	pthread_mutex_lock(&s->mu);
	while (store_fill_next(r, s, &s->room[0]))
		;
	pthread_mutex_unlock(&s->mu);
	tell_thread_cpu("decompressing", 1);	/* (the first pass: it may end after the second began) */
	return NULL;
}

static void
store_thread(struct etl_reader *r)
{
	struct store *s = r->store;

	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->threaded = 1;	/* (before the thread reads it) */
	if (pthread_create(&s->thread, NULL, store_work, r) != 0) {
		s->threaded = 0;
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
}

/*
 * Buffer I's entry, once final: made here (with every buffer before it:
 * in time order a CPU's cursor may run ahead), or, while the store's
 * thread fills it, the next buffers nobody took are decompressed here
 * until I is final, and waited for only when none is left.
 */
static const struct kept *
store_get(struct etl_reader *r, size_t i)
{
	struct store *s = r->store;

	if (!s->threaded) {
		while (s->ready <= i) {
			s->next = s->ready + 1;
			store_fill(r, s, s->ready, &s->room[1]);
			s->k[s->ready++].done = 1;
		}
		return &s->k[i];
	}
	pthread_mutex_lock(&s->mu);
	while (s->ready <= i) {
		if (store_fill_next(r, s, &s->room[1]))
			continue;
		s->want = i + 1;
		s->waiting = 1;
		pthread_cond_wait(&s->cv, &s->mu);
		s->waiting = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return &s->k[i];
}

static void
store_free(struct store *s)
{
	if (!s)
		return;
	if (s->threaded) {
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
	arena_free(s->arena, s->cap);
	if (s->spill_fd >= 0)
		close(s->spill_fd);
	free(s->k);
	for (int i = 0; i < 2; i++) {
		free(s->room[i].packed);
		free(s->room[i].out);
	}
	free(s);
}

/*
 * The bytes of buffer B as stored in the file: a pointer into the
 * mapping, or a copy read from the descriptor (into the cursor's
 * scratch space, or its packed space for a compressed buffer).
 */
static const uint8_t *
stored_buffer(struct etl_reader *r, struct cursor *c, struct etl_buffer *b)
{
	if (r->fd < 0)
		return r->data + b->offset;
	/* the cursor's previous buffer, if it was used in place, is done with */
	done_in_place(r, c);
	if (!(b->flags & 0x40) && b->offset % page_size() == 0 && b->size % page_size() == 0) {
		/*
		 * Uncompressed and on whole pages (as ETW writes them): used in
		 * place, no copy, and its pages given back when the next one
		 * comes, so nothing of it stays mapped.
		 */
		c->mapped_off = b->offset;
		c->mapped_size = b->size;
		return r->data + b->offset;
	}
	uint8_t *dst = (b->flags & 0x40) ? grow(&c->packed, &c->pcap, b->size) :
	    grow(&c->scratch, &c->scap, b->size);
	if (read_full_at(r->fd, dst, b->size, r->fd_base + b->offset) < 0) {
		report(r, b->offset, "buffer (%u bytes) cannot be read: %s; skipped", b->size,
		    strerror(errno));
		count_damage(r, b, b->size);
		return NULL;
	}
	return dst;
}

/* Buffer B from the store (K: its entry, final), reported as load_buffer() would. */
static int
load_kept(struct etl_reader *r, struct cursor *c, struct etl_buffer *b, const struct kept *k)
{
	/* the cursor's previous buffer, if it was used in place, is done with */
	done_in_place(r, c);
	r->done_bytes += b->size;
	c->data = NULL;
	switch (k->state) {
	case KEPT_UNREADABLE:
		report(r, b->offset, "buffer (%u bytes) cannot be read: %s; skipped", b->size,
		    strerror(k->err));
		count_damage(r, b, b->size);
		return -1;
	case KEPT_CORRUPT:
		report(r, b->offset, "compressed buffer (%u bytes) cannot be decompressed: %s; skipped",
		    b->size, k->why);
		count_damage(r, b, b->size);
		return -1;
	case KEPT_SPILL:
		grow(&c->scratch, &c->scap, b->filled);
		if (read_full_at(r->store->spill_fd, c->scratch, b->filled, k->off) < 0)
			cli_fatal("the temporary file of decompressed buffers in %s cannot be read: %s",
			    temp_dir(), strerror(errno));
		c->data = c->scratch;
		break;
	default:
		c->data = k->mem;
	}
	c->buf = b;
	c->buf_offset = b->offset;
	c->cpu = b->cpu;
	c->off = BUFHDR;
	c->compressed = 1;
	c->filled = b->filled;
	return 0;
}

static int
load_buffer(struct etl_reader *r, struct cursor *c, struct etl_buffer *b)
{
	const struct kept *k = r->store && (b->flags & 0x40) ?
	    store_get(r, (size_t)(b - r->buf)) : NULL;
	if (k && k->state != KEPT_NONE)
		return load_kept(r, c, b, k);

	const uint8_t *h = stored_buffer(r, c, b);
	if (!h) {
		r->done_bytes += b->size;
		c->data = NULL;
		return -1;
	}

	c->buf = b;
	c->buf_offset = b->offset;
	c->cpu = b->cpu;
	c->off = BUFHDR;
	r->done_bytes += b->size;
	c->compressed = (b->flags & 0x40) != 0;
	if (!c->compressed) {
		c->data = h;
		c->filled = b->filled;
		return 0;
	}
	size_t out = b->filled - BUFHDR;
	const char *why = NULL;
	grow(&c->scratch, &c->scap, b->filled);
	memcpy(c->scratch, h, BUFHDR);
	if (etl_decompress(r->info.compression, h + BUFHDR, b->size - BUFHDR, c->scratch + BUFHDR,
	    out, &why) < 0) {
		report(r, b->offset, "compressed buffer (%u bytes) cannot be decompressed: %s; skipped",
		    b->size, why);
		count_damage(r, b, b->size);
		c->data = NULL;
		return -1;
	}
	c->data = c->scratch;
	c->filled = b->filled;
	return 0;
}

/*
 * Whether the cursor's current buffer lies in its scratch space, which
 * its next buffer overwrites (else it stays where it is until close, or
 * in the mapping until done_in_place()).
 */
static int
cursor_transient(const struct cursor *c)
{
	return c->data == c->scratch;
}

/*
 * Bytes of the file not decoded when the current buffer is cut at the
 * cursor: the rest of an uncompressed buffer; for a compressed one, its
 * stored bytes in proportion to the decompressed bytes left (rounded
 * up), so that the count never exceeds what the file holds.
 */
static uint64_t
cut_bytes(const struct cursor *c)
{
	uint64_t left = c->filled - c->off;

	if (!c->compressed)
		return left;
	uint64_t stored = c->buf->size - BUFHDR, data = c->filled - BUFHDR;
	return data ? (stored * left + data - 1) / data : 0;
}

static void
cursor_advance(struct etl_reader *r, struct cursor *c)
{
	for (;;) {
		if (!c->data) {
			if (c->bi >= c->nb) {
				c->have = 0;
				return;
			}
			if (load_buffer(r, c, &r->buf[c->bufs[c->bi++]]) < 0)
				continue;
		}
		const char *why = NULL;
		long next = parse_record(c->data, c->filled, c->off, &c->ev, &why);
		if (next > 0) {
			c->ev.ns = etl_ns(r, c->ev.ts);
			c->ev.cpu = c->cpu;
			c->ev.buf_offset = c->buf_offset;
			c->off = (uint32_t)next;
			c->have = 1;
			return;
		}
		if (next < 0) {
			int compressed = c->compressed;
			if (compressed)
				report(r, c->buf_offset, "%s in compressed buffer (record at decompressed "
				    "offset %u); rest of the buffer skipped", why, c->off);
			else
				report(r, c->buf_offset + c->off, "%s; rest of the buffer skipped "
				    "(%u bytes)", why, c->filled - c->off);
			count_damage(r, c->buf, cut_bytes(c));
		}
		c->data = NULL;
	}
}

/*
 * Cursor I's key: its next event's time, then its CPU (= I) for events
 * at the same time; a cursor at its end after every event, whatever
 * its time.
 */
#define MERGE_DONE (1u << 31)

static inline unsigned __int128
merge_key(const struct etl_reader *r, uint32_t i)
{
	const struct cursor *c = &r->cur[i];
	uint64_t ts = c->have ? c->ev.ts : UINT64_MAX;
	return (unsigned __int128)ts << 32 | (c->have ? i : MERGE_DONE | i);
}

static inline uint32_t
merge_cursor(unsigned __int128 key)
{
	return (uint32_t)key & ~MERGE_DONE;
}

static inline int
merge_done(unsigned __int128 key)
{
	return ((uint32_t)key & MERGE_DONE) != 0;
}

/* The winner's cursor moved on: its matches on the way to the root played again. */
static void
merge_replay(struct etl_reader *r)
{
	unsigned __int128 *loser = r->loser, k = merge_key(r, merge_cursor(loser[0]));

	for (size_t node = (merge_cursor(k) + r->ncur) / 2; node > 0; node /= 2)
		if (loser[node] < k) {
			unsigned __int128 t = loser[node];
			loser[node] = k;
			k = t;
		}
	loser[0] = k;
}

/* The first matches of the cursors, each at its first event. */
static void
merge_start(struct etl_reader *r)
{
	size_t n = r->ncur;
	unsigned __int128 *win = xmalloc(2 * n * sizeof *win);

	r->loser = xcalloc(n, sizeof *r->loser);
	for (size_t i = 0; i < n; i++)
		win[n + i] = merge_key(r, (uint32_t)i);
	for (size_t node = n - 1; node > 0; node--) {
		unsigned __int128 a = win[2 * node], b = win[2 * node + 1];
		win[node] = a < b ? a : b;
		r->loser[node] = a < b ? b : a;
	}
	r->loser[0] = n > 1 ? win[1] : win[n];
	free(win);
}

static void
free_cursors(struct etl_reader *r)
{
	for (size_t i = 0; i < r->ncur; i++) {
		release_range(r, r->cur[i].mapped_off, r->cur[i].mapped_size);
		free(r->cur[i].scratch);
		free(r->cur[i].packed);
	}
	free(r->cur);
	free(r->loser);
	free(r->order_bufs);
	r->cur = NULL;
	r->loser = NULL;
	r->order_bufs = NULL;
	r->ncur = 0;
}

/* The cursors of a pass in R->order, each at its first event. */
static void
start_cursors(struct etl_reader *r)
{
	enum etl_order order = r->order;

	r->order_bufs = xmalloc((r->nbuf ? r->nbuf : 1) * sizeof *r->order_bufs);
	if (order == ETL_FILE_ORDER) {
		r->cur = xcalloc(1, sizeof *r->cur);
		r->ncur = 1;
		for (size_t i = 0; i < r->nbuf; i++)
			r->order_bufs[i] = (uint32_t)i;
		r->cur[0].bufs = r->order_bufs;
		r->cur[0].nb = r->nbuf;
		cursor_advance(r, &r->cur[0]);
		return;
	}
	/* one cursor per CPU, each over its buffers in file order (= SequenceNumber order) */
	size_t ncpu = 0, *count, *start;
	for (size_t i = 0; i < r->nbuf; i++)
		if (r->buf[i].cpu + 1u > ncpu)
			ncpu = r->buf[i].cpu + 1u;
	count = xcalloc(ncpu + 1, sizeof *count);
	start = xcalloc(ncpu + 1, sizeof *start);
	for (size_t i = 0; i < r->nbuf; i++)
		count[r->buf[i].cpu]++;
	for (size_t c = 1; c <= ncpu; c++)
		start[c] = start[c - 1] + count[c - 1];
	r->cur = xcalloc(ncpu ? ncpu : 1, sizeof *r->cur);
	for (size_t c = 0; c < ncpu; c++) {
		r->cur[c].bufs = r->order_bufs + start[c];
		r->cur[c].nb = 0;
	}
	for (size_t i = 0; i < r->nbuf; i++) {
		struct cursor *c = &r->cur[r->buf[i].cpu];
		c->bufs[c->nb++] = (uint32_t)i;
	}
	r->ncur = ncpu;
	for (size_t c = 0; c < ncpu; c++)
		cursor_advance(r, &r->cur[c]);
	if (ncpu)
		merge_start(r);
	free(count);
	free(start);
}

/*
 * The iteration itself: the cursor holding the next event of the pass
 * (its EV), or NULL at the end.  The event is valid until the next call.
 */
static const struct cursor *
next_event(struct etl_reader *r)
{
	/*
	 * The cursor that produced the previous event advances only now, so
	 * that event's pointers stayed valid until this call (advancing may
	 * decompress the next buffer into the same scratch space).
	 */
	if (r->order == ETL_FILE_ORDER) {
		struct cursor *c = r->cur;
		if (!c)
			return NULL;
		if (r->pending)
			cursor_advance(r, c);
		else
			r->pending = 1;
		return c->have ? c : NULL;
	}
	if (r->ncur == 0)
		return NULL;
	if (r->pending && !merge_done(r->loser[0])) {
		cursor_advance(r, &r->cur[merge_cursor(r->loser[0])]);
		merge_replay(r);
	} else
		r->pending = 1;
	if (merge_done(r->loser[0]))
		return NULL;
	return &r->cur[merge_cursor(r->loser[0])];
}

/* ---------- the worker ---------- */

/*
 * ETLKIT_THREAD_CPU set: each thread's CPU time on stderr when its part
 * ends (the worker at the end of each pass, the caller's thread at
 * close), to see which of the two limits the conversion.
 */
static void
tell_thread_cpu(const char *who, int pass)
{
	char label[64];

	if (!getenv("ETLKIT_THREAD_CPU"))
		return;
	snprintf(label, sizeof label, "etl: %s thread, pass %d", who, pass);
	cli_thread_cpu(label);
}

static int
cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The worker: the pages of the buffers held in place whose batches all
 * came back (those before batch TAKEN) are given back, once they add up
 * to RELEASE_CHUNK bytes (ALL: whatever there is), runs of neighbours
 * in one call.  Each call makes the kernel flush the other core's TLB,
 * interrupting the caller's thread: one per buffer took a seventh of
 * the worker's first pass over an uncompressed trace.
 */
#define RELEASE_CHUNK ((uint64_t)2 << 20)

static void
pump_release_held(struct etl_reader *r, uint64_t taken, int all)
{
	struct pump *p = r->pump;
	size_t n = 0;
	uint64_t bytes = 0;

	while (n < p->nheld && p->held[n].batch < taken)
		bytes += p->held[n++].size;
	if (!n || (!all && bytes < RELEASE_CHUNK))
		return;
	qsort(p->held, n, sizeof *p->held, cmp_held);	/* (in time order, CPUs' buffers interleave) */
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t end = p->held[i].off + p->held[i].size;
		for (j = i + 1; j < n && p->held[j].off == end; j++)
			end += p->held[j].size;
		release_range(r, p->held[i].off, end - p->held[i].off);
	}
	memmove(p->held, p->held + n, (p->nheld - n) * sizeof *p->held);
	p->nheld -= n;
	p->held_bytes -= bytes;
}

/*
 * Cursor C is done with the buffer it used in place in the mapping.
 * Without a worker its pages are given back at once.  With one, events
 * of it may still wait in batches in flight, up to the one being filled:
 * the caller's thread would fault every page in again, so they are given
 * back once those batches have come back (pump_claim()).
 */
static void
done_in_place(struct etl_reader *r, struct cursor *c)
{
	struct pump *p = r->pump;

	if (!c->mapped_size)
		return;
	if (!p || !r->release)
		release_range(r, c->mapped_off, c->mapped_size);
	else {
		if (p->nheld == p->capheld) {
			p->capheld = p->capheld ? 2 * p->capheld : 64;
			p->held = xrealloc(p->held, p->capheld * sizeof *p->held);
		}
		p->held[p->nheld++] = (struct held){ c->mapped_off, c->mapped_size,
		    atomic_load(&p->filled) };
		p->held_bytes += c->mapped_size;
	}
	c->mapped_size = 0;
}

/*
 * The worker: the next batch to fill, once the reader has given one
 * back (it sleeps while all are out, until half came back); NULL when
 * told to stop.
 */
static struct batch *
pump_claim(struct etl_reader *r)
{
	struct pump *p = r->pump;
	struct batch *b = NULL;
	uint64_t filled = atomic_load(&p->filled), taken = atomic_load(&p->taken);

	if (filled - taken >= NBATCH) {
		pthread_mutex_lock(&p->mu);
		atomic_store(&p->wsleeps, 1);
		while (!atomic_load(&p->stop) && filled - atomic_load(&p->taken) > NBATCH / 2)
			pthread_cond_wait(&p->cv, &p->mu);
		atomic_store(&p->wsleeps, 0);
		pthread_mutex_unlock(&p->mu);
		taken = atomic_load(&p->taken);
	}
	if (!atomic_load(&p->stop))
		b = &p->b[filled % NBATCH];
	if (p->held_bytes >= RELEASE_CHUNK)
		pump_release_held(r, taken, 0);
	if (b) {
		b->n = b->nbytes = 0;
		b->prep.n = 0;
		b->last = 0;
	}
	return b;
}

/* The worker: batch WB to the reader (LAST: the pass ends with it). */
static void
pump_hand(struct etl_reader *r, int last)
{
	struct pump *p = r->pump;

	p->wb->progress = r->done_bytes;
	p->wb->last = last;
	uint64_t filled = atomic_load(&p->filled) + 1;
	atomic_store(&p->filled, filled);
	if (last || (atomic_load(&p->rsleeps) && filled - atomic_load(&p->taken) >= NBATCH / 2)) {
		/* (the lock: the reader is asleep, or will look at FILLED again, after it) */
		pthread_mutex_lock(&p->mu);
		atomic_store(&p->ended, last);
		pthread_mutex_unlock(&p->mu);
		pthread_cond_signal(&p->cv);	/* (only the reader can be waiting) */
	}
	p->wb = last ? NULL : pump_claim(r);
}

/* The worker: room in its batch for one more item of LEN bytes (a new batch if need be); NULL to stop. */
static struct pump_item *
pump_room(struct etl_reader *r, size_t len)
{
	struct pump *p = r->pump;

	if (p->wb && (p->wb->n == BATCH_ITEMS || p->wb->nbytes + len > BATCH_ROOM ||
	    p->wb->prep.n > BATCH_BYTES))
		pump_hand(r, 0);
	if (!p->wb)
		return NULL;
	/* (PREPIX is written by prepare(), for events only, when there is a hook) */
	return &p->wb->it[p->wb->n++];
}

static void
pump_defer(struct etl_reader *r, uint64_t off, const char *msg)
{
	size_t len = strlen(msg) + 1;
	struct pump_item *it = pump_room(r, len);

	if (!it)
		return;
	struct batch *b = r->pump->wb;
	memcpy(b->bytes + b->nbytes, msg, len);
	it->ev.raw = NULL;
	it->ev.payload = b->bytes + b->nbytes;
	it->ev.buf_offset = off;
	b->nbytes += (len + 7) & ~(size_t)7;
}

/* A pointer into EV's record, moved to the copy at TO. */
static const uint8_t *
rebase(const uint8_t *q, const struct etl_event *ev, const uint8_t *to)
{
	return q ? to + (q - ev->raw) : NULL;
}

/*
 * The worker: EV into its batch; its record copied there when it is
 * TRANSIENT, in a cursor's scratch space (every pointer of an event lies
 * in its record).
 */
static void
pump_event(struct etl_reader *r, const struct etl_event *ev, int transient)
{
	struct pump_item *it = pump_room(r, transient ? ev->rawlen : 0);

	if (!it)
		return;
	it->ev = *ev;
	if (!transient)
		return;
	struct batch *b = r->pump->wb;
	uint8_t *to = b->bytes + b->nbytes;
	memcpy(to, ev->raw, ev->rawlen);
	it->ev.raw = to;
	it->ev.payload = rebase(ev->payload, ev, to);
	it->ev.guid = rebase(ev->guid, ev, to);
	it->ev.activity = rebase(ev->activity, ev, to);
	it->ev.ext = rebase(ev->ext, ev, to);
	b->nbytes += ((size_t)ev->rawlen + 7) & ~(size_t)7;
}

void
etl_prep_add(struct etl_prep *out, const void *p, size_t n)
{
	if (n > out->cap - out->n) {
		size_t want = out->n + n;
		out->cap = out->cap ? out->cap : 4096;
		while (out->cap < want)
			out->cap *= 2;
		out->p = xrealloc(out->p, out->cap);
	}
	memcpy(out->p + out->n, p, n);
	out->n += n;
}

/* The worker: the prepare hook on item I of batch B, its bytes noted in B's index. */
static void
prepare(struct etl_reader *r, struct batch *b, size_t i)
{
	size_t at = (b->prep.n + 7) & ~(size_t)7;

	if (at > UINT32_MAX - 0xffffu)
		cli_fatal("etl: prepared bytes of one batch past 4 GiB");
	if (at > b->prep.n) {
		static const uint8_t zero[8];
		etl_prep_add(&b->prep, zero, at - b->prep.n);
	}
	r->prep_fn(r->prep_ctx, &b->it[i].ev, &b->prep);
	b->prepix[i] = (uint64_t)at << 32 | (uint32_t)(b->prep.n - at);
}

static void *
pump_work(void *arg)
{
	struct etl_reader *r = arg;
	struct pump *p = r->pump;
	const struct cursor *c;

	p->wb = pump_claim(r);
	if (!p->wb)
		return NULL;
	start_cursors(r);
	while (p->wb && (c = next_event(r))) {
		pump_event(r, &c->ev, cursor_transient(c));
		if (r->prep_fn && p->wb)
			prepare(r, p->wb, p->wb->n - 1);
	}
	if (p->wb)
		pump_hand(r, 1);
	tell_thread_cpu("worker", r->passes);
	return NULL;
}

/*
 * The reader: gives back the batch it used up (if any) and takes the
 * next, waiting for it if need be; 0 at the end of the pass.  Apart
 * from the per-event path below: inlined there, its atomics made the
 * compiler load TAKEN for every event.
 */
static __attribute__((noinline)) int
pump_take(struct etl_reader *r)
{
	struct pump *p = r->pump;

	if (p->rb && p->rb->last)
		return 0;
	uint64_t taken = atomic_load(&p->taken);
	if (p->rb) {
		atomic_store(&p->taken, ++taken);
		if (atomic_load(&p->wsleeps) && atomic_load(&p->filled) - taken <= NBATCH / 2) {
			/* (the lock: the worker is asleep, or will look at TAKEN again, after it) */
			pthread_mutex_lock(&p->mu);
			pthread_mutex_unlock(&p->mu);
			pthread_cond_signal(&p->cv);	/* (only the worker can be waiting) */
		}
	}
	if (atomic_load(&p->filled) == taken) {
		pthread_mutex_lock(&p->mu);
		atomic_store(&p->rsleeps, 1);
		while (!atomic_load(&p->ended) && atomic_load(&p->filled) - taken < NBATCH / 2)
			pthread_cond_wait(&p->cv, &p->mu);
		atomic_store(&p->rsleeps, 0);
		pthread_mutex_unlock(&p->mu);
	}
	p->rb = &p->b[taken % NBATCH];
	p->pos = 0;
	p->progress = p->rb->progress;
	return 1;
}

/*
 * The reader: its next event, in the batch it uses (which is the
 * reader's until it gives it back, at the call after that batch's
 * last item); NULL at the end.
 */
static struct etl_event *
pump_next(struct etl_reader *r)
{
	struct pump *p = r->pump;

	for (;;) {
		if (p->rb && p->pos < p->rb->n) {
			struct pump_item *it = &p->rb->it[p->pos++];
			if (!it->ev.raw) {
				r->err(r->ctx, it->ev.buf_offset, (const char *)it->ev.payload);
				continue;
			}
			return &it->ev;
		}
		if (!pump_take(r))
			return NULL;
	}
}

/*
 * The pump's batches, lock and itself freed (its thread already joined,
 * or never made); the caller is done with every batch, so the pages
 * still held are given back.
 */
static void
pump_free(struct etl_reader *r)
{
	struct pump *p = r->pump;

	pump_release_held(r, UINT64_MAX, 1);
	free(p->held);

	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	for (int i = 0; i < NBATCH; i++) {
		free(p->b[i].it);
		free(p->b[i].prepix);
		free(p->b[i].prep.p);
		free(p->b[i].bytes);
	}
	free(p);
	r->pump = NULL;
}

/* Stops the worker (wherever it is) and frees it. */
static void
pump_stop(struct etl_reader *r)
{
	struct pump *p = r->pump;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->stop, 1);
	pthread_cond_signal(&p->cv);	/* only the worker can be waiting */
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pump_free(r);
}

void
etl_set_threads(int n)
{
	cfg_threads = n > 0 ? n : 0;
}

void
etl_set_keep(size_t bytes)
{
	cfg_keep = bytes;
}

static int
several_cores(void)
{
	if (cfg_threads)
		return cfg_threads > 1;
	return cli_cores() > 1;
}

/* A worker for the pass, if there is a core for it; else the caller's thread iterates. */
static void
pump_start(struct etl_reader *r)
{
	struct pump *p = xcalloc(1, sizeof *p);
	for (int i = 0; i < NBATCH; i++) {
		p->b[i].it = aligned_alloc(64, BATCH_ITEMS * sizeof *p->b[i].it);
		if (!p->b[i].it)
			cli_fatal("out of memory (%zu bytes)", BATCH_ITEMS * sizeof *p->b[i].it);
		p->b[i].bytes = xmalloc(BATCH_ROOM);
		p->b[i].prepix = xmalloc(BATCH_ITEMS * sizeof *p->b[i].prepix);
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	r->pump = p;
	if (pthread_create(&p->thread, NULL, pump_work, r) != 0) {
		pump_free(r);	/* no thread to join: iterate without */
	}
}

void
etl_rewind(struct etl_reader *r, enum etl_order order)
{
	pump_stop(r);
	tell_thread_cpu("caller's", r->passes);
	free_cursors(r);
	store_start(r);
	r->passes++;
	r->order = order;
	r->done_bytes = 0;
	r->pending = 0;
	/*
	 * The worker reads, parses and merges, and the caller's thread
	 * uses the events.  In the first pass over compressed buffers in
	 * file order a third thread decompresses ahead of the worker: the
	 * worker alone would take as long as the caller's thread did when
	 * it parsed itself, and three threads share two cores better.  The
	 * worker decompresses too when it caught up (store_get()).
	 */
	if (several_cores()) {
		if (r->store && !r->store->threaded && order == ETL_FILE_ORDER &&
		    r->store->ready < r->store->n)
			store_thread(r);
		pump_start(r);
	}
	if (!r->pump)
		start_cursors(r);
}

struct etl_event *
etl_next_ref(struct etl_reader *r)
{
	if (r->pump)
		return pump_next(r);
	/* a copy: the cursor's own event keys the merge */
	const struct cursor *c = next_event(r);
	if (!c)
		return NULL;
	r->out = c->ev;
	if (r->prep_fn) {
		r->prep.n = 0;
		r->prep_fn(r->prep_ctx, &r->out, &r->prep);
	}
	return &r->out;
}

void
etl_set_prepare(struct etl_reader *r, etl_prepare_fn fn, void *ctx)
{
	r->prep_fn = fn;
	r->prep_ctx = ctx;
}

int
etl_prep_ahead(const struct etl_reader *r)
{
	return r->pump != NULL;
}

const void *
etl_prepared(const struct etl_reader *r, size_t *n)
{
	if (!r->pump) {
		*n = r->prep_fn ? r->prep.n : 0;
		return r->prep.p;
	}
	const struct pump *p = r->pump;
	if (!r->prep_fn || !p->rb || !p->pos) {
		*n = 0;
		return NULL;
	}
	uint64_t ix = p->rb->prepix[p->pos - 1];
	*n = (uint32_t)ix;
	return p->rb->prep.p + (ix >> 32);
}

int
etl_next(struct etl_reader *r, struct etl_event *ev)
{
	const struct etl_event *e = etl_next_ref(r);
	if (e)
		*ev = *e;
	return e != NULL;
}

uint64_t
etl_progress(const struct etl_reader *r)
{
	return r->pump ? r->pump->progress : r->done_bytes;
}

void
etl_close(struct etl_reader *r)
{
	if (!r)
		return;
	pump_stop(r);
	tell_thread_cpu("caller's", r->passes);
	free_cursors(r);
	store_free(r->store);
	free(r->buf);
	free(r->prep.p);
	free(r);
}
