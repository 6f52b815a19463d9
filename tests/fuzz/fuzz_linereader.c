/*
 * fuzz_linereader - libFuzzer harness for the line reader (lr_* in
 * lib/evt/evt.c), plain and gzip input.
 *
 * INPUT:  any bytes, handed to lr_fdopen() through a memfd; a leading
 *         1f 8b makes it a gzip stream.
 * CHECKS: no crash/UB/leak, and nothing lost or invented:
 *         - plain input: the lines joined with their newlines give back
 *           the input exactly (a "\r" before "\n" or at the end dropped),
 *           except the lines with a NUL byte: skipped, counted, and the
 *           line numbers of the others unchanged;
 *         - a trace (zip, ETL), gzipped or not, is refused whole;
 *         - gzip input: when the reader reports no error, the lines are
 *           exactly what zlib itself decodes (all members); when zlib
 *           fails on the stream the reader must report an error too, and
 *           still give out every complete line zlib decoded before it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "evt/evt.h"
#include "fuzz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reference gzip decode of every member; returns 0 ok, -1 corrupt/truncated. */
static int
ref_gunzip(const uint8_t *in, size_t n, unsigned char **out, size_t *outlen)
{
	z_stream zs;
	size_t cap = 4096, len = 0;
	unsigned char *o = malloc(cap);
	int zr, rc = 0;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		abort();
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)n;
	for (;;) {
		if (cap - len < 4096) {
			cap *= 2;
			o = realloc(o, cap);
		}
		zs.next_out = o + len;
		zs.avail_out = (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
		if (zr == Z_STREAM_END) {
			if (zs.avail_in == 0)
				break;
			inflateReset(&zs);
			continue;
		}
		if (zr == Z_OK)
			continue;
		if (zr == Z_BUF_ERROR && zs.avail_out > 0) {
			rc = -1;	/* input ended inside a member */
			break;
		}
		if (zr == Z_BUF_ERROR)
			continue;
		rc = -1;
		break;
	}
	inflateEnd(&zs);
	*out = o;
	*outlen = len;
	return rc;
}

/*
 * The next line of E[0..N) from *POS: where it starts and its length
 * without the "\n" and one "\r" before it.  Returns 0 at the end.
 */
static int
expected_line(const unsigned char *e, size_t n, size_t *pos, size_t *start, size_t *len)
{
	const unsigned char *nl;
	size_t l;

	if (*pos >= n)
		return 0;
	nl = memchr(e + *pos, '\n', n - *pos);
	l = nl ? (size_t)(nl - (e + *pos)) : n - *pos;
	*start = *pos;
	*pos += l + (nl != NULL);
	if (l > 0 && e[*start + l - 1] == '\r')
		l--;
	*len = l;
	return 1;
}

/*
 * Compares the lines of LR with EXPECT[0..N): every line, except those
 * with a NUL byte, which the reader skips and counts (line numbers go
 * on).  Returns 0 when identical, 1 when the reader reported an error.
 */
static int
lines_match(struct linereader *lr, const unsigned char *expect, size_t n)
{
	size_t pos = 0, len, s, l;
	char *line;
	unsigned long lineno = 0, skipped = 0;

	while ((line = lr_next(lr, &len)) != NULL) {
		if (line[len] != '\0')
			abort();
		for (;;) {
			if (!expected_line(expect, n, &pos, &s, &l))
				return -1;
			lineno++;
			if (memchr(expect + s, '\0', l) == NULL)
				break;
			skipped++;
		}
		if (lr_lineno(lr) != lineno)
			abort();
		if (l != len || memcmp(expect + s, line, len) != 0)
			return -1;
	}
	if (lr_error(lr) != NULL) {
		/* every complete line before the damage was given out or skipped */
		while (expected_line(expect, n, &pos, &s, &l) && expect[pos - 1] == '\n')
			if (memchr(expect + s, '\0', l) == NULL)
				return -1;
		return 1;
	}
	while (expected_line(expect, n, &pos, &s, &l)) {
		if (memchr(expect + s, '\0', l) != NULL)
			skipped++;
		else if (!(l == 0 && pos == n))
			return -1;	/* a lone "\r" at the very end may come back as nothing */
	}
	return lr_skipped(lr) == skipped ? 0 : -1;
}

/*
 * A trace given by mistake (a zip, or an ETL file: a buffer size of at
 * most 64 MiB, then the logfile header's system header at 0x48) is
 * refused whole: no line, an error.  The rule restated from the ETL
 * layout, not taken from the reader.
 */
static int
looks_like_trace(const uint8_t *p, size_t n)
{
	uint32_t size;

	if (n >= 4 && memcmp(p, "PK\3\4", 4) == 0)
		return 1;
	if (n < 0x4c)
		return 0;
	size = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return size >= 0x68 && size <= (64u << 20) && (p[0x4a] == 1 || p[0x4a] == 2) &&
	    p[0x4b] == 0xc0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd("fuzz", data, size);
	struct linereader *lr;
	int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
	int r;

	lr = lr_fdopen(fd, "fuzz");
	lr_set_quiet(lr);
	if (!gz && looks_like_trace(data, size)) {
		size_t len;

		if (lr_next(lr, &len) != NULL || lr_error(lr) == NULL)
			abort();	/* a trace is refused whole, with a reason */
	} else if (!gz) {
		r = lines_match(lr, data, size);
		if (r != 0)
			abort();	/* plain input must come back byte for byte */
	} else {
		unsigned char *ref;
		size_t reflen;
		int refrc = ref_gunzip(data, size, &ref, &reflen);

		if (looks_like_trace(ref, reflen)) {	/* a gzipped trace: refused too */
			size_t len;

			if (lr_next(lr, &len) != NULL || lr_error(lr) == NULL)
				abort();
			free(ref);
			lr_close(lr);
			close(fd);
			return 0;
		}
		r = lines_match(lr, ref, reflen);
		if (refrc == 0 && r != 0)
			abort();	/* a good stream must decode completely */
		if (refrc != 0 && r != 1)
			abort();	/* a bad stream must not end "cleanly", nor lose lines */
		free(ref);
	}
	lr_close(lr);
	close(fd);
	return 0;
}
