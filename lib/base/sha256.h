/*
 * sha256.h - SHA-256 (FIPS 180-4), for content hashes of traces in the
 * etlkit-run cache.  Not used for anything secret.  Implemented with
 * Nettle (lib/base/sha256.c).
 */
#ifndef ETLKIT_SHA256_H
#define ETLKIT_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Nettle's context (lib/base/sha256.c says why Nettle), opaque here. */
struct sha256 {
	_Alignas(8) unsigned char ctx[160];
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* Writes the digest as 64 lowercase hex digits and a NUL into HEX. */
void sha256_hex(struct sha256 *s, char hex[65]);
/* Hash of a whole file; returns 0, or -1 with errno set. */
int sha256_file(const char *path, char hex[65]);

#endif
