/*
 * hash.h - the library's one hash, for the open-addressing tables that
 * intern names and stacks: hash_bytes for text, hash_u64 for integers
 * and for mixing several values into one (hash_u64(h ^ x)).
 *
 * A multiply-fold hash (wyhash's construction): 16 bytes per step with
 * one 64x64->128 multiply, four such chains side by side past 64 bytes,
 * so long stacks (a few KB) hash at memory speed, and every input bit
 * reaches the low bits the tables index by.
 * Not for anything hostile input must not collide: a table's probe
 * compares the keys themselves.  Output never depends on it (tables are
 * read in insertion order or sorted).
 */
#ifndef ETLKIT_HASH_H
#define ETLKIT_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the 128-bit product of A and B, its halves xor-ed */
static inline uint64_t
hash_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t
hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = hash_mix(n + 0x9e3779b97f4a7c15ull, 0xa0761d6478bd642full);
	uint64_t a, b;

	if (n >= 64) {
		/*
		 * Four lanes, 64 bytes a step: each multiply waits only for the
		 * one before it in its lane, so a stack of KBs does not hash at
		 * the speed of one chain of multiplies.
		 */
		uint64_t l0 = h, l1 = h ^ 0x2d358dccaa6c78a5ull, l2 = h ^ 0x8bb84b93962eacc9ull,
		    l3 = h ^ 0x4b33a62ed433d4a3ull, w[8];

		do {
			memcpy(w, s, 64);
			l0 = hash_mix(w[0] ^ 0xe7037ed1a0b428dbull ^ l0, w[1] ^ 0x8ebc6af09c88c6e3ull);
			l1 = hash_mix(w[2] ^ 0xe7037ed1a0b428dbull ^ l1, w[3] ^ 0x8ebc6af09c88c6e3ull);
			l2 = hash_mix(w[4] ^ 0xe7037ed1a0b428dbull ^ l2, w[5] ^ 0x8ebc6af09c88c6e3ull);
			l3 = hash_mix(w[6] ^ 0xe7037ed1a0b428dbull ^ l3, w[7] ^ 0x8ebc6af09c88c6e3ull);
			s += 64;
			n -= 64;
		} while (n >= 64);
		h = l0 ^ l1 ^ hash_mix(l2, l3 ^ 0x589965cc75374cc3ull);
	}
	while (n >= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		h = hash_mix(a ^ 0xe7037ed1a0b428dbull ^ h, b ^ 0x8ebc6af09c88c6e3ull);
		s += 16;
		n -= 16;
	}
	a = b = 0;
	if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
	} else if (n > 0) {
		unsigned char t[8] = { 0 };

		memcpy(t, s, n);
		memcpy(&a, t, 8);
	}
	return hash_mix(a ^ 0x589965cc75374cc3ull ^ h, b ^ 0x1d8e4e27c47d124full ^ n);
}

static inline uint64_t
hash_u64(uint64_t x)
{
	return hash_mix(x ^ 0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull);
}

#endif
