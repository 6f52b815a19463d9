/*
 * gzread.c - gzip input for the line reader (see gzread.h).
 *
 * zlib inflates; libdeflate, when the build has it, checks.  Measured on
 * the 31 MB perf folded file (1.4 MB of gzip, one member):
 *   zlib, gzip mode (inflate and its CRC-32)           20.2 ms CPU
 *   zlib raw inflate + libdeflate's CRC-32 (this)      14.9 ms
 *   libdeflate, the whole member at once, buffer hot    8.4 ms
 *   libdeflate, the whole member at once, fresh buffer 20.5 ms
 * libdeflate has no streaming API: a whole member needs its whole
 * output in memory, and on a fresh buffer the page faults of 31 MB cost
 * what it saves (here 0.35 ms per MB), besides memory growing with the
 * input.  A second thread inflating into a ring of buffers saves wall
 * time only, never CPU.  So members stream through zlib into the
 * reader's own buffer, which stays hot, and the CRC-32 (a quarter of
 * zlib's time) is libdeflate's, with carry-less multiplication.
 *
 * zlib stays the judge of everything else: the header (read with the
 * check on, so a bad header CRC is still zlib's error), the deflate
 * data, truncation.  Only once a member's gzip header is read is zlib's
 * own check turned off (inflateValidate); the trailer's CRC and length
 * are then compared here, with the offsets zlib would have named (its
 * CRC error comes after the CRC's 4 bytes, its length error after all 8).
 * A zlib-format member (concatenated after a gzip one) keeps zlib's check.
 */
#include "evt/gzread.h"
#include "base/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef ETLKIT_LIBDEFLATE
#include <libdeflate.h>
#endif

#define GZ_CHUNK (1u << 18)

struct gzread {
	z_stream zs;
	gz_header head;		/* head.done: 1 once a gzip header is read */
	unsigned char *zbuf;	/* compressed bytes */
	unsigned char prev[8];	/* the last bytes taken before zbuf's (trailers straddle reads) */
	size_t nprev;
	uint64_t offset;	/* compressed bytes read from the source */
	int zeof, zend;
	int in_header;		/* this member's header is not read yet */
	int own_check;		/* the CRC and length are checked here, not by zlib */
	uint32_t crc;
	gzread_source src;
	void *ctx;
	const char *error;
	char errbuf[96];
};

/* Registers for the next member's header (inflateReset forgets it). */
static void
member_start(struct gzread *g)
{
	memset(&g->head, 0, sizeof(g->head));
	inflateGetHeader(&g->zs, &g->head);
	g->in_header = 1;
	g->own_check = 0;
	g->crc = 0;
}

struct gzread *
gzread_new(const void *have, size_t n, gzread_source src, void *ctx)
{
	struct gzread *g = xcalloc(1, sizeof(*g));

	g->zbuf = xmalloc(n > GZ_CHUNK ? n : GZ_CHUNK);
	memcpy(g->zbuf, have, n);
	g->offset = n;
	g->src = src;
	g->ctx = ctx;
	g->zs.next_in = g->zbuf;
	g->zs.avail_in = (uInt)n;
	if (inflateInit2(&g->zs, 15 + 32) != Z_OK)
		g->error = "cannot initialise zlib";
	else
		member_start(g);
	return g;
}

/* The error, at the compressed byte BACK bytes before the end of what was taken. */
static void
set_error(struct gzread *g, const char *what, uint64_t back)
{
	uint64_t at = g->offset - g->zs.avail_in - back;

	snprintf(g->errbuf, sizeof(g->errbuf), "%s at compressed byte %llu", what,
	    (unsigned long long)at);
	g->error = g->errbuf;
}

/* Reads more compressed bytes (zbuf is all taken).  Returns -1 on a read error. */
static int
refill(struct gzread *g)
{
	size_t used = (size_t)(g->zs.next_in - g->zbuf);
	ssize_t r;

	/* keep the last 8 bytes taken: a trailer may end in the next read */
	if (used >= 8) {
		memcpy(g->prev, g->zs.next_in - 8, 8);
		g->nprev = 8;
	} else if (used > 0) {
		size_t keep = g->nprev + used > 8 ? 8 - used : g->nprev;

		memmove(g->prev, g->prev + g->nprev - keep, keep);
		memcpy(g->prev + keep, g->zbuf, used);
		g->nprev = keep + used;
	}
	do
		r = g->src(g->ctx, g->zbuf, GZ_CHUNK);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		g->error = strerror(errno);
		return -1;
	}
	if (r == 0)
		g->zeof = 1;
	g->offset += (uint64_t)r;
	g->zs.next_in = g->zbuf;
	g->zs.avail_in = (uInt)r;
	return 0;
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The member's trailer (its last 8 bytes taken) against what was inflated. */
static int
check_trailer(struct gzread *g)
{
	size_t used = (size_t)(g->zs.next_in - g->zbuf);
	unsigned char t[8];

	if (used >= 8)
		memcpy(t, g->zs.next_in - 8, 8);
	else {
		memcpy(t, g->prev + g->nprev - (8 - used), 8 - used);
		memcpy(t + 8 - used, g->zbuf, used);
	}
	if (le32(t) != g->crc) {
		set_error(g, "corrupt gzip stream", 4);
		return -1;
	}
	if (le32(t + 4) != (uint32_t)g->zs.total_out) {
		set_error(g, "corrupt gzip stream", 0);
		return -1;
	}
	return 0;
}

#ifdef ETLKIT_LIBDEFLATE
/* A gzip member's header is read: its check is ours from here on. */
static void
header_read(struct gzread *g)
{
	g->in_header = 0;
	if (g->head.done == 1 && inflateValidate(&g->zs, 0) == Z_OK)
		g->own_check = 1;
}

static uint32_t
crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
	return libdeflate_crc32(crc, p, n);
}
#else
/* Without libdeflate zlib checks every member itself. */
static void
header_read(struct gzread *g)
{
	g->in_header = 0;
}

static uint32_t
crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
	return (uint32_t)crc32(crc, p, (uInt)n);
}
#endif

/* One inflate call; the header is read with Z_BLOCK, which stops right after it. */
static int
inflate_step(struct gzread *g)
{
	unsigned char *before = g->zs.next_out;
	int zr = inflate(&g->zs, g->in_header ? Z_BLOCK : Z_NO_FLUSH);

	if (g->in_header && g->head.done != 0)
		header_read(g);
	if (g->own_check)
		g->crc = crc_update(g->crc, before, (size_t)(g->zs.next_out - before));
	return zr;
}

size_t
gzread_fill(struct gzread *g, unsigned char *out, size_t room)
{
	g->zs.next_out = out;
	g->zs.avail_out = (uInt)room;
	while (g->zs.avail_out == room && g->error == NULL) {
		int zr;

		if (g->zs.avail_in == 0 && !g->zeof && refill(g) < 0)
			break;
		if (g->zend)
			break;
		zr = inflate_step(g);
		if (zr == Z_STREAM_END) {
			if (g->own_check && check_trailer(g) < 0)
				break;
			/* concatenated gzip members, as gzip(1) allows */
			if (g->zs.avail_in == 0 && !g->zeof && refill(g) < 0)
				break;
			if (g->zs.avail_in > 0) {
				inflateReset(&g->zs);
				inflateValidate(&g->zs, 1);
				member_start(g);
				continue;
			}
			g->zend = 1;
			break;
		}
		if (zr == Z_BUF_ERROR && g->zeof && g->zs.avail_in == 0) {
			set_error(g, "truncated gzip stream", 0);
			break;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			set_error(g, "corrupt gzip stream", 0);
			break;
		}
	}
	return room - g->zs.avail_out;
}

const char *
gzread_error(const struct gzread *g)
{
	return g->error;
}

void
gzread_free(struct gzread *g)
{
	if (g == NULL)
		return;
	inflateEnd(&g->zs);
	free(g->zbuf);
	free(g);
}
