/*
 * sha256.c - SHA-256 (FIPS 180-4) through Nettle, Debian's maintained
 * crypto library (nettle-dev), behind etlkit's own small API.
 *
 * Why a library and not the hand-written one this file held before:
 * etlkit-run hashes every trace it converts and every cached trace it
 * verifies, and traces are gigabytes.  Hashing a 500 MB file (in the page
 * cache, 1 MiB reads, median of 5 runs on the 2-core x86-64 build
 * machine) took 4.77 s by hand (105 MB/s) and 1.11 s with Nettle
 * (452 MB/s): Nettle uses the CPU's SHA instructions where there are
 * some, and is tested and maintained by others.  The cost is one more
 * build dependency (make deps, README, and the musl build of
 * tests/portable.sh, which builds Nettle from Debian's source as it does
 * zlib).
 *
 * Nettle's sha2.h renames sha256_init and sha256_update to its own with
 * macros, so it is included first and the names undefined before ours
 * are declared; struct sha256 holds Nettle's context in opaque space.
 */
#define _POSIX_C_SOURCE 200809L
#include <nettle/sha2.h>
#undef sha256_init
#undef sha256_update
#undef sha256_digest

#include "base/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(((struct sha256 *)0)->ctx),
    "struct sha256 too small for Nettle's context");

static struct sha256_ctx *
ctx(struct sha256 *s)
{
	return (struct sha256_ctx *)(void *)s->ctx;
}

void
sha256_init(struct sha256 *s)
{
	nettle_sha256_init(ctx(s));
}

void
sha256_update(struct sha256 *s, const void *p, size_t n)
{
	nettle_sha256_update(ctx(s), n, p);
}

void
sha256_hex(struct sha256 *s, char hex[65])
{
	static const char dig[] = "0123456789abcdef";
	uint8_t d[SHA256_DIGEST_SIZE];
	int i;

	nettle_sha256_digest(ctx(s), sizeof d, d);
	for (i = 0; i < SHA256_DIGEST_SIZE; i++) {
		hex[2 * i] = dig[d[i] >> 4];
		hex[2 * i + 1] = dig[d[i] & 15];
	}
	hex[64] = '\0';
}

int
sha256_file(const char *path, char hex[65])
{
	struct sha256 s;
	unsigned char *buf;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	buf = malloc(1 << 20);
	if (buf == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	sha256_init(&s);
	while ((r = read(fd, buf, 1 << 20)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return -1;
		}
		sha256_update(&s, buf, (size_t)r);
	}
	free(buf);
	close(fd);
	sha256_hex(&s, hex);
	return 0;
}
