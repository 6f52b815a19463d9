/*
 * etlwrite.c - .etl writer (see etlwrite.h).
 *
 * Buffer conventions copied from real kernel-logger files
 * (../shared/corpus/airbus/ShutdownPerfDiagLogger.etl for an ordinary
 * session, perfview/net.4.5.2.x64.etl for a compressed one):
 *   - plain:      header buffer of BufferSize bytes, flags 0x21, type 4;
 *                 data buffers of BufferSize bytes, flags 0x20, type 0.
 *   - compressed: a small header buffer (512 bytes), flags 0x01, type 4;
 *                 data buffers flags 0x60, BufferSize = 0x48 + compressed
 *                 length, SavedOffset = the uncompressed fill.
 * SequenceNumber is taken when a CPU starts a buffer (so file order and
 * sequence order differ, as in real files) and State is 3.
 */
#include "etlwrite.h"
#include "base/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BUFHDR 0x48

struct cpubuf {
	uint8_t *data;
	size_t used;		/* 0 = no buffer started */
	uint64_t seq;
	uint64_t last_ts;
	uint16_t flags;
};

struct etlw {
	FILE *fp;
	char *path;
	struct etlw_config cfg;
	struct cpubuf *cpu;
	uint64_t next_seq;
	uint32_t nbuffers;
	uint64_t bytes;
	uint32_t events_lost, buffers_lost;
	uint32_t header_bufsize;
	uint8_t *zbuf;
};

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* ---------- records ---------- */

void
etlw_rec_init(struct etlw_rec *r)
{
	memset(r, 0, sizeof *r);
}

void
etlw_rec_free(struct etlw_rec *r)
{
	free(r->b);
	memset(r, 0, sizeof *r);
}

static uint8_t *
rec_grow(struct etlw_rec *r, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2 + 64;
		r->b = xrealloc(r->b, r->cap);
	}
	r->len += n;
	return r->b + r->len - n;
}

static int
header_byte(int kind, int psize)
{
	if (kind == ETLW_FULL)
		return psize == 8 ? 0x14 : 0x0A;
	return psize == 8 ? kind + 1 : kind;
}

void
etlw_rec_kernel(struct etlw_rec *r, int kind, int psize, int group, int type,
    int version, uint32_t tid, uint32_t pid, uint64_t ts)
{
	uint8_t *h;
	size_t n = kind == ETLW_PERFINFO ? 16 : kind == ETLW_COMPACT ? 0x18 : 0x20;

	r->len = 0;
	r->kind = kind;
	r->psize = psize;
	r->hdr = n;
	h = rec_grow(r, n);
	memset(h, 0, n);
	put16(h, (uint16_t)version);
	h[2] = (uint8_t)header_byte(kind, psize);
	h[3] = 0xC0;
	h[6] = (uint8_t)type;
	h[7] = (uint8_t)group;
	if (kind == ETLW_PERFINFO) {
		put64(h + 8, ts);
	} else {
		put32(h + 8, tid);
		put32(h + 12, pid);
		put64(h + 16, ts);
	}
}

void
etlw_rec_classic(struct etlw_rec *r, int psize, const uint8_t guid[16],
    int type, int level, int version, uint32_t tid, uint32_t pid, uint64_t ts)
{
	uint8_t *h;

	r->len = 0;
	r->kind = ETLW_FULL;
	r->psize = psize;
	r->hdr = 0x30;
	h = rec_grow(r, 0x30);
	memset(h, 0, 0x30);
	h[2] = (uint8_t)header_byte(ETLW_FULL, psize);
	h[3] = 0xC0;
	h[4] = (uint8_t)type;
	h[5] = (uint8_t)level;
	put16(h + 6, (uint16_t)version);
	put32(h + 8, tid);
	put32(h + 12, pid);
	put64(h + 16, ts);
	memcpy(h + 24, guid, 16);
}

void etlw_u8(struct etlw_rec *r, uint8_t v) { *rec_grow(r, 1) = v; }
void etlw_u16(struct etlw_rec *r, uint16_t v) { put16(rec_grow(r, 2), v); }
void etlw_u32(struct etlw_rec *r, uint32_t v) { put32(rec_grow(r, 4), v); }
void etlw_u64(struct etlw_rec *r, uint64_t v) { put64(rec_grow(r, 8), v); }

void
etlw_ptr(struct etlw_rec *r, uint64_t v)
{
	if (r->psize == 4)
		etlw_u32(r, (uint32_t)v);
	else
		etlw_u64(r, v);
}

void
etlw_bytes(struct etlw_rec *r, const void *p, size_t n)
{
	if (n)
		memcpy(rec_grow(r, n), p, n);
}

void
etlw_astr(struct etlw_rec *r, const char *s)
{
	etlw_bytes(r, s, strlen(s) + 1);
}

/* Next code point of UTF-8 S (advances *s); invalid bytes give U+FFFD. */
static uint32_t
utf8_next(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t c = *p++;
	int n = 0, i;

	if (c < 0x80) {
		*s = p;
		return c;
	}
	if ((c & 0xE0) == 0xC0) { n = 1; c &= 0x1F; }
	else if ((c & 0xF0) == 0xE0) { n = 2; c &= 0x0F; }
	else if ((c & 0xF8) == 0xF0) { n = 3; c &= 0x07; }
	else { *s = p; return 0xFFFD; }
	for (i = 0; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80) {
			*s = p + i;
			return 0xFFFD;
		}
		c = (c << 6) | (p[i] & 0x3F);
	}
	*s = p + n;
	return c > 0x10FFFF ? 0xFFFD : c;
}

void
etlw_wstr(struct etlw_rec *r, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		uint32_t c = utf8_next(&p);
		if (c >= 0x10000) {
			c -= 0x10000;
			etlw_u16(r, (uint16_t)(0xD800 | (c >> 10)));
			etlw_u16(r, (uint16_t)(0xDC00 | (c & 0x3FF)));
		} else
			etlw_u16(r, (uint16_t)c);
	}
	etlw_u16(r, 0);
}

size_t
etlw_rec_finish(struct etlw_rec *r)
{
	if (r->len > 0xFFFF)
		cli_fatal("event record of %zu bytes does not fit a 16-bit size", r->len);
	if (r->kind == ETLW_FULL)
		put16(r->b, (uint16_t)r->len);
	else
		put16(r->b + 4, (uint16_t)r->len);
	return r->len;
}

/* ---------- the file ---------- */

/* The compressors, at the end of this file; OUT has room for etlw_xpress_bound(N). */
static size_t etlw_xpress_bound(size_t n);
static size_t etlw_xpress_compress(const uint8_t *src, size_t n, uint8_t *out);
static size_t etlw_lznt1_compress(const uint8_t *src, size_t n, uint8_t *out);

static void
write_at(struct etlw *w, long off, const void *p, size_t n)
{
	if (fseek(w->fp, off, SEEK_SET) != 0 || fwrite(p, 1, n, w->fp) != n)
		cli_fatal("%s: write error: %s", w->path, strerror(errno));
}

static void
write_out(struct etlw *w, const void *p, size_t n)
{
	if (fwrite(p, 1, n, w->fp) != n)
		cli_fatal("%s: write error: %s", w->path, strerror(errno));
	w->bytes += n;
}

/* The TRACE_LOGFILE_HEADER record (group 0, type 0, version 2). */
static void
logfile_header(struct etlw *w, struct etlw_rec *r)
{
	const struct etlw_config *c = &w->cfg;
	int i;
	const char *tz = c->tz_name ? c->tz_name : "";
	struct etlw_rec tzr;

	etlw_rec_kernel(r, ETLW_SYSTEM, c->pointer_size, 0, 0, 2,
	    c->controller_tid, c->controller_pid, c->start_qpc);
	etlw_u32(r, c->buffer_size);
	etlw_bytes(r, c->version, 4);
	etlw_u32(r, c->os_build);
	etlw_u32(r, (uint32_t)c->ncpus);
	etlw_u64(r, c->end_filetime);
	etlw_u32(r, 156250);			/* TimerResolution 15.625 ms */
	etlw_u32(r, 0);				/* MaximumFileSize */
	etlw_u32(r, c->log_file_mode | (c->compress ? ETLW_LOGFILE_COMPRESSED : 0));
	etlw_u32(r, w->nbuffers);		/* BuffersWritten */
	etlw_u32(r, 1);				/* StartBuffers */
	etlw_u32(r, (uint32_t)c->pointer_size);
	etlw_u32(r, c->events_lost + w->events_lost);
	etlw_u32(r, c->cpu_mhz);
	etlw_ptr(r, 0);				/* LoggerName (pointer) */
	etlw_ptr(r, 0);				/* LogFileName (pointer) */
	/* TIME_ZONE_INFORMATION: 172 bytes, then 4 bytes padding */
	etlw_u32(r, (uint32_t)c->tz_bias);
	etlw_rec_init(&tzr);
	tzr.psize = c->pointer_size;
	etlw_wstr(&tzr, tz);
	for (i = 0; i < 2; i++) {
		uint8_t name[64] = {0};
		memcpy(name, tzr.b, tzr.len > 62 ? 62 : tzr.len);
		etlw_bytes(r, name, 64);	/* StandardName / DaylightName */
		etlw_bytes(r, (uint8_t[16]){0}, 16);	/* date */
		etlw_u32(r, i ? (uint32_t)-60 : 0);	/* bias */
	}
	etlw_rec_free(&tzr);
	etlw_u32(r, 0);
	etlw_u64(r, c->boot_filetime);
	etlw_u64(r, c->clock_freq);
	etlw_u64(r, c->start_filetime);
	etlw_u32(r, 1);				/* ReservedFlags: clock = QPC */
	etlw_u32(r, c->buffers_lost + w->buffers_lost);
	etlw_wstr(r, c->logger_name ? c->logger_name : "NT Kernel Logger");
	etlw_wstr(r, c->logfile_name ? c->logfile_name : "");
	etlw_rec_finish(r);
}

/* State: 3 (flush); its low 16 bits also name the compression format (LZNT1 2, XPRESS 3) */
static uint32_t
buffer_state(const struct etlw_config *c)
{
	return c->compress == 2 ? 2 : 3;
}

static void
buffer_header(uint8_t *h, uint32_t bufsize, uint32_t saved, uint64_t ts, uint64_t seq,
    int cpu, uint16_t logger, uint16_t flags, uint16_t type, uint32_t state)
{
	memset(h, 0, BUFHDR);
	put32(h + 0x00, bufsize);
	put32(h + 0x04, saved);
	put32(h + 0x08, saved);		/* CurrentOffset */
	put64(h + 0x10, ts);
	put64(h + 0x18, seq);
	put16(h + 0x28, (uint16_t)cpu);
	put16(h + 0x2A, logger);
	put32(h + 0x2C, state);
	put32(h + 0x30, saved);		/* Offset */
	put16(h + 0x34, flags);
	put16(h + 0x36, type);
}

/* Builds the header buffer into a fresh allocation of *SIZE bytes. */
static uint8_t *
header_buffer(struct etlw *w, uint32_t *size)
{
	struct etlw_rec r;
	uint8_t *b;
	uint32_t n, saved;

	etlw_rec_init(&r);
	logfile_header(w, &r);
	saved = (uint32_t)(BUFHDR + ((r.len + 7) & ~(size_t)7));
	n = w->cfg.compress ? (saved + 511) / 512 * 512 : w->cfg.buffer_size;
	if (saved > n)
		cli_fatal("logfile header does not fit a %u-byte buffer", n);
	b = xmalloc(n);
	memset(b, 0xFF, n);
	buffer_header(b, n, saved, 0, 0, 0, w->cfg.logger_id,
	    w->cfg.compress ? ETLW_BUF_FLUSH_MARKER : ETLW_BUF_FLUSH_MARKER | ETLW_BUF_PROC_INDEX, 4,
	    buffer_state(&w->cfg));
	memcpy(b + BUFHDR, r.b, r.len);
	memset(b + BUFHDR + r.len, 0, saved - BUFHDR - r.len);
	etlw_rec_free(&r);
	*size = n;
	return b;
}

struct etlw *
etlw_open(const char *path, const struct etlw_config *cfg)
{
	struct etlw *w = xcalloc(1, sizeof *w);
	uint8_t *hb;
	int i;

	if (cfg->pointer_size != 4 && cfg->pointer_size != 8)
		cli_fatal("pointer size must be 4 or 8, not %d", cfg->pointer_size);
	if (cfg->ncpus < 1 || cfg->ncpus > 4096)
		cli_fatal("bad number of CPUs %d", cfg->ncpus);
	if (cfg->buffer_size < 1024 || cfg->buffer_size > (1u << 24) || cfg->buffer_size % 8)
		cli_fatal("bad buffer size %u", cfg->buffer_size);
	w->cfg = *cfg;
	w->path = xstrdup(path);
	w->fp = fopen(path, "wb");
	if (!w->fp)
		cli_fatal("%s: %s", path, strerror(errno));
	w->cpu = xcalloc((size_t)cfg->ncpus, sizeof *w->cpu);
	for (i = 0; i < cfg->ncpus; i++)
		w->cpu[i].data = NULL;
	w->zbuf = xmalloc(etlw_xpress_bound(cfg->buffer_size));
	w->next_seq = 1;
	w->nbuffers = 1;
	hb = header_buffer(w, &w->header_bufsize);
	write_out(w, hb, w->header_bufsize);
	free(hb);
	return w;
}

static void
flush_cpu(struct etlw *w, int cpu)
{
	struct cpubuf *b = &w->cpu[cpu];
	uint32_t size = w->cfg.buffer_size;
	uint16_t flags = (uint16_t)(ETLW_BUF_PROC_INDEX | b->flags);

	if (!b->used)
		return;
	memset(b->data + b->used, 0xFF, size - b->used);
	if (w->cfg.compress) {
		size_t z = w->cfg.compress == 2 ?
		    etlw_lznt1_compress(b->data + BUFHDR, b->used - BUFHDR, w->zbuf) :
		    etlw_xpress_compress(b->data + BUFHDR, b->used - BUFHDR, w->zbuf);
		if (z < b->used - BUFHDR) {
			flags |= ETLW_BUF_COMPRESSED;
			buffer_header(b->data, (uint32_t)(BUFHDR + z), (uint32_t)b->used, b->last_ts,
			    b->seq, cpu, w->cfg.logger_id, flags, 0, buffer_state(&w->cfg));
			write_out(w, b->data, BUFHDR);
			write_out(w, w->zbuf, z);
			goto done;
		}
		/* incompressible: stored as is, without the flag */
	}
	buffer_header(b->data, size, (uint32_t)b->used, b->last_ts, b->seq, cpu,
	    w->cfg.logger_id, flags, 0, buffer_state(&w->cfg));
	write_out(w, b->data, size);
done:
	w->nbuffers++;
	b->used = 0;
	b->flags = 0;
}

static void
start_buffer(struct etlw *w, int cpu)
{
	struct cpubuf *b = &w->cpu[cpu];

	if (!b->data)
		b->data = xmalloc(w->cfg.buffer_size);
	b->used = BUFHDR;
	b->seq = w->next_seq++;
	b->flags = 0;
}

void
etlw_append(struct etlw *w, int cpu, const void *rec, size_t len)
{
	struct cpubuf *b;
	size_t padded = (len + 7) & ~(size_t)7;

	if (cpu < 0 || cpu >= w->cfg.ncpus)
		cli_fatal("event for CPU %d, but the trace has %d CPUs", cpu, w->cfg.ncpus);
	if (len < 16 || padded > w->cfg.buffer_size - BUFHDR)
		cli_fatal("event record of %zu bytes does not fit a %u-byte buffer", len,
		    w->cfg.buffer_size);
	b = &w->cpu[cpu];
	if (b->used && b->used + padded > w->cfg.buffer_size)
		flush_cpu(w, cpu);
	if (!b->used)
		start_buffer(w, cpu);
	memcpy(b->data + b->used, rec, len);
	memset(b->data + b->used + len, 0, padded - len);
	b->used += padded;
	/* the timestamp of a kernel or classic record is at +16 (perfinfo: +8) */
	{
		const uint8_t *p = rec;
		int ht = p[2];
		size_t at = (ht == 0x10 || ht == 0x11) ? 8 : 16;
		uint64_t ts = 0;
		int i;
		for (i = 7; i >= 0; i--)
			ts = ts << 8 | p[at + (size_t)i];
		b->last_ts = ts;
	}
}

/* Marks CPU's current buffer (started if need be) with a lost-WHAT FLAG. */
static void
mark_lost(struct etlw *w, int cpu, const char *what, unsigned flag)
{
	if (cpu < 0 || cpu >= w->cfg.ncpus)
		cli_fatal("lost %s on CPU %d, but the trace has %d CPUs", what, cpu, w->cfg.ncpus);
	if (!w->cpu[cpu].used)
		start_buffer(w, cpu);
	w->cpu[cpu].flags |= flag;
}

void
etlw_events_lost(struct etlw *w, int cpu, uint32_t n)
{
	mark_lost(w, cpu, "events", ETLW_BUF_EVENTS_LOST);
	w->events_lost += n;
}

void
etlw_buffers_lost(struct etlw *w, int cpu, uint32_t n)
{
	mark_lost(w, cpu, "buffers", ETLW_BUF_BUFFER_LOST);
	w->next_seq += n;
	w->buffers_lost += n;
}

uint64_t
etlw_close(struct etlw *w)
{
	uint64_t bytes;
	uint32_t hsize;
	uint8_t *hb;
	int i;

	/* CPUs in order of their open buffers' sequence numbers */
	for (;;) {
		int best = -1;
		for (i = 0; i < w->cfg.ncpus; i++)
			if (w->cpu[i].used && (best < 0 || w->cpu[i].seq < w->cpu[best].seq))
				best = i;
		if (best < 0)
			break;
		flush_cpu(w, best);
	}
	hb = header_buffer(w, &hsize);
	if (hsize != w->header_bufsize)
		cli_fatal("%s: header buffer changed size", w->path);
	write_at(w, 0, hb, hsize);
	free(hb);
	if (fclose(w->fp) != 0)
		cli_fatal("%s: write error: %s", w->path, strerror(errno));
	bytes = w->bytes;
	for (i = 0; i < w->cfg.ncpus; i++)
		free(w->cpu[i].data);
	free(w->cpu);
	free(w->zbuf);
	free(w->path);
	free(w);
	return bytes;
}

/* ---------- MS-XCA plain LZ77 compressor ([MS-XCA] 2.3) ---------- */

#define XP_HASH_BITS 13
#define XP_MAX_DIST 8192

static size_t
etlw_xpress_bound(size_t n)
{
	/* XPRESS: 4 flag bytes per 32 items; LZNT1: 1 per 8, and 2 per 4 KiB chunk */
	return n + n / 8 + 2 * (n / 4096 + 1) + 16;
}

static uint32_t
xp_hash(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	return (v * 2654435761u) >> (32 - XP_HASH_BITS);
}

static size_t
etlw_xpress_compress(const uint8_t *src, size_t n, uint8_t *out)
{
	int64_t head[1 << XP_HASH_BITS];
	size_t i = 0, op = 4, flagpos = 0, nibpos = 0;
	uint32_t flags = 0;
	int nflags = 0;

	for (i = 0; i < (size_t)1 << XP_HASH_BITS; i++)
		head[i] = -1;
	i = 0;
	while (i < n) {
		size_t best = 0, dist = 0;

		if (i + 3 <= n) {
			uint32_t h = xp_hash(src + i);
			int64_t cand = head[h];
			head[h] = (int64_t)i;
			if (cand >= 0 && i - (size_t)cand <= XP_MAX_DIST &&
			    memcmp(src + cand, src + i, 3) == 0) {
				size_t len = 3;
				while (i + len < n && src[cand + (int64_t)len] == src[i + len])
					len++;
				best = len;
				dist = i - (size_t)cand;
			}
		}
		if (best >= 3) {
			size_t l = best - 3, k;
			put16(out + op, (uint16_t)(((dist - 1) << 3) | (l < 7 ? l : 7)));
			op += 2;
			if (l >= 7) {
				size_t nib;
				l -= 7;
				nib = l < 15 ? l : 15;
				if (!nibpos) {
					out[op] = (uint8_t)nib;
					nibpos = op++;
				} else {
					out[nibpos] |= (uint8_t)(nib << 4);
					nibpos = 0;
				}
				if (l >= 15) {
					l -= 15;
					if (l < 255) {
						out[op++] = (uint8_t)l;
					} else {
						out[op++] = 255;
						l = best - 3;
						if (l < 65536) {
							put16(out + op, (uint16_t)l);
							op += 2;
						} else {
							put16(out + op, 0);
							put32(out + op + 2, (uint32_t)l);
							op += 6;
						}
					}
				}
			}
			/* remember a few positions inside the match for later matches */
			for (k = 1; k < best && k < 16 && i + k + 3 <= n; k++)
				head[xp_hash(src + i + k)] = (int64_t)(i + k);
			flags = flags << 1 | 1;
			i += best;
		} else {
			out[op++] = src[i++];
			flags <<= 1;
		}
		if (++nflags == 32) {
			put32(out + flagpos, flags);
			flagpos = op;
			op += 4;
			nflags = 0;
			flags = 0;
		}
	}
	if (nflags)
		flags = flags << (32 - nflags) | ((1u << (32 - nflags)) - 1);
	else
		flags = 0xFFFFFFFFu;
	put32(out + flagpos, flags);
	return op;
}

/* ---------- LZNT1 compressor ([MS-XCA] 2.5) ---------- */

#define LZ_CHUNK 4096

/*
 * One chunk: groups of a flag byte (bit i set: item i is a match) and 8
 * items, a literal byte or a 16-bit token whose split between offset and
 * length depends on how far into the chunk it stands (more offset bits
 * the further in).  Greedy, with a hash of 3-byte strings.
 */
static size_t
lznt1_chunk(const uint8_t *src, size_t n, uint8_t *out)
{
	int32_t head[1 << XP_HASH_BITS];
	size_t i = 0, op = 0;

	for (size_t k = 0; k < (size_t)1 << XP_HASH_BITS; k++)
		head[k] = -1;
	while (i < n) {
		size_t flagpos = op++;
		uint8_t flags = 0;
		for (int b = 0; b < 8 && i < n; b++) {
			size_t best = 0, dist = 0;
			unsigned shift = 12;
			for (size_t x = i ? i - 1 : 0; x >= 0x10; x >>= 1)
				shift--;
			size_t maxlen = ((size_t)1 << shift) - 1 + 3;
			if (i + 3 <= n) {
				uint32_t h = xp_hash(src + i);
				int32_t cand = head[h];
				head[h] = (int32_t)i;
				if (cand >= 0 && memcmp(src + cand, src + i, 3) == 0) {
					size_t len = 3;
					while (i + len < n && len < maxlen && src[cand + (int32_t)len] == src[i + len])
						len++;
					best = len;
					dist = i - (size_t)cand;
				}
			}
			if (best >= 3) {
				put16(out + op, (uint16_t)((dist - 1) << shift | (best - 3)));
				op += 2;
				flags |= (uint8_t)(1u << b);
				i += best;
			} else
				out[op++] = src[i++];
		}
		out[flagpos] = flags;
	}
	return op;
}

static size_t
etlw_lznt1_compress(const uint8_t *src, size_t n, uint8_t *out)
{
	size_t op = 0;

	for (size_t c = 0; c < n; c += LZ_CHUNK) {
		size_t m = n - c < LZ_CHUNK ? n - c : LZ_CHUNK;
		size_t z = lznt1_chunk(src + c, m, out + op + 2);
		if (z < m) {	/* signature 3, compressed */
			put16(out + op, (uint16_t)(0xB000 | (z - 1)));
			op += 2 + z;
		} else {	/* stored */
			put16(out + op, (uint16_t)(0x3000 | (m - 1)));
			memcpy(out + op + 2, src + c, m);
			op += 2 + m;
		}
	}
	return op;
}
