/*
 * gzwhole.h - a small gzip file inflated whole, at once.
 *
 * The line reader streams gzip through zlib (lib/evt/gzread.c), so its
 * memory stays flat whatever the input.  A reader that keeps most of its
 * input anyway (diff keeps every distinct stack, and a perf capture's
 * stacks are nearly all distinct) can instead inflate a small member in
 * one call with libdeflate, about twice zlib's speed, and keep its keys
 * in the inflated text instead of copying them.  Only a single-member
 * gzip whose trailer says it inflates to at most GZWHOLE_MAX bytes is
 * taken, so the extra memory is bounded by that constant; anything else
 * (several members, a damaged stream, a build without libdeflate) gives
 * 0 and the caller streams the file, which reports what is wrong.
 */
#ifndef ETLKIT_GZWHOLE_H
#define ETLKIT_GZWHOLE_H

#include <stddef.h>

#define GZWHOLE_MAX ((size_t)32 << 20)

/*
 * Inflates the gzip file IN[0..N) whole.  Returns 1 with *OUT (free()
 * it) holding *OUTLEN bytes, or 0 (nothing allocated).
 */
int gzwhole_inflate(const unsigned char *in, size_t n, char **out, size_t *outlen);

#endif
