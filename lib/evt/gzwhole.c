/*
 * gzwhole.c - inflating a small single-member gzip file in one call
 * (see gzwhole.h).
 *
 * The size comes from the member's trailer (ISIZE, the length modulo
 * 2^32), so the buffer is allocated once; libdeflate checks the CRC-32
 * and the length itself and must consume every input byte and fill the
 * buffer exactly, else the file is left to the streaming reader.  The
 * buffer is aligned to and advised for huge pages: a fresh buffer's 4 KB
 * page faults cost as much as libdeflate saves over zlib.
 */
#define _POSIX_C_SOURCE 200809L
#include "evt/gzwhole.h"
#include "base/cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef ETLKIT_LIBDEFLATE
#include <libdeflate.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20)

#ifdef ETLKIT_LIBDEFLATE
static char *
buffer(size_t size)
{
	void *p;

	if (posix_memalign(&p, HUGE_PAGE, size) != 0)
		return NULL;
	if (size >= HUGE_PAGE)
		map_huge_pages(p, size - size % HUGE_PAGE);	/* a hint */
	return p;
}

int
gzwhole_inflate(const unsigned char *in, size_t n, char **out, size_t *outlen)
{
	struct libdeflate_decompressor *d;
	enum libdeflate_result r;
	size_t size, used = 0, got = 0;
	char *p;

	*out = NULL;
	*outlen = 0;
	if (n < 18 || in[0] != 0x1f || in[1] != 0x8b || in[2] != 8)
		return 0;
	size = (size_t)in[n - 4] | (size_t)in[n - 3] << 8 | (size_t)in[n - 2] << 16 |
	    (size_t)in[n - 1] << 24;
	if (size == 0 || size > GZWHOLE_MAX)
		return 0;
	if ((p = buffer(size)) == NULL)
		return 0;
	if ((d = libdeflate_alloc_decompressor()) == NULL) {
		free(p);
		return 0;
	}
	r = libdeflate_gzip_decompress_ex(d, in, n, p, size, &used, &got);
	libdeflate_free_decompressor(d);
	if (r != LIBDEFLATE_SUCCESS || used != n || got != size) {
		free(p);
		return 0;
	}
	*out = p;
	*outlen = size;
	return 1;
}
#else
int
gzwhole_inflate(const unsigned char *in, size_t n, char **out, size_t *outlen)
{
	(void)in;
	(void)n;
	*out = NULL;
	*outlen = 0;
	return 0;
}
#endif
