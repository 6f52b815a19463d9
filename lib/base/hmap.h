/*
 * hmap.h - an open-addressing map from a pair of 64-bit keys to a
 * 32-bit value (indexes into the caller's arrays).  Used by the ETL
 * decoder for (pid, base), (tid, timestamp) and similar lookups.
 */
#ifndef ETLKIT_HMAP_H
#define ETLKIT_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t a, b;
	uint32_t val;
	uint32_t used;
};

struct hmap {
	struct hmap_slot *s;
	size_t cap, n;		/* cap is a power of two */
};

void hmap_init(struct hmap *h);
void hmap_free(struct hmap *h);
/* Pointer to the value for (A,B), or NULL. */
uint32_t *hmap_get(const struct hmap *h, uint64_t a, uint64_t b);
/* Inserts or replaces. */
void hmap_put(struct hmap *h, uint64_t a, uint64_t b, uint32_t val);
/* Removes (A,B) if present. */
void hmap_del(struct hmap *h, uint64_t a, uint64_t b);

#endif
