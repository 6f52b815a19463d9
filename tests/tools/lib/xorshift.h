/*
 * xorshift.h - the small deterministic random stream of the test tools
 * that damage or vary data (tdhdump's fuzz rounds, wperfgen's counts):
 * Marsaglia's xorshift64, seeded by the caller, so a run repeats exactly.
 * Header-only: each tool keeps its own state and seed.
 */
#ifndef ETLKIT_XORSHIFT_H
#define ETLKIT_XORSHIFT_H

#include <stdint.h>

/* Advances *STATE (never 0) and returns its new value. */
static inline uint64_t
xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif
