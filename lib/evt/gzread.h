/*
 * gzread.h - gzip input for the line reader (lib/evt/evt.c): members
 * inflated as a stream into the reader's buffer, concatenated members
 * as gzip(1) reads them, damage and truncation named by the offset of
 * the first compressed byte not taken.
 */
#ifndef ETLKIT_GZREAD_H
#define ETLKIT_GZREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gzread;

/* Reads up to N compressed bytes into P: read(2)'s answer. */
typedef ssize_t (*gzread_source)(void *ctx, void *p, size_t n);

/* HAVE[0..N): compressed bytes already read from the source. */
struct gzread *gzread_new(const void *have, size_t n, gzread_source src, void *ctx);
/*
 * Appends up to ROOM inflated bytes at OUT; returns how many, 0 at the
 * end or on an error (gzread_error then says what).  Bytes inflated
 * before an error are handed out with it.
 */
size_t gzread_fill(struct gzread *g, unsigned char *out, size_t room);
/*
 * NULL, or what went wrong: "truncated gzip stream at compressed byte
 * N", "corrupt gzip stream at compressed byte N" (N: the first byte
 * zlib did not take, where the damage or the cut is), a read error.
 */
const char *gzread_error(const struct gzread *g);
void gzread_free(struct gzread *g);

#endif
