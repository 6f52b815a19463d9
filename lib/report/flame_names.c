/*
 * flame_names.c - the flame graph's string table: frame names (and the
 * palette file's names) interned once, numbered in order of arrival;
 * and flame_hash, the hash of byte strings all flame files use.
 *
 * The strings live back to back in one buffer, with offset, length and
 * hash per id; the open-addressing table holds only ids, so it stays
 * small and a lookup touches the bytes of the candidate alone.  The
 * lookup itself is inline in flame_int.h (flame_names_intern); with
 * this file it is the one place the flame graph hashes strings into a
 * table.
 */
#include "report/flame_int.h"
#include "base/cli.h"

#include <stdlib.h>
#include <string.h>

/* Out of line, as before the split: inlined into its callers it ran more instructions. */
uint64_t
flame_hash(const char *s, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull), w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	return h;
}

void
flame_names_init(struct flame_names *t, uint64_t seed, int log2slots)
{
	memset(t, 0, sizeof(*t));
	t->seed = seed;
	t->cap = 1 << 16;
	t->bytes = xmalloc(t->cap);
	t->mask = ((size_t)1 << log2slots) - 1;
	t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
}

/* Doubles the table, filled again from the stored hashes. */
static void
names_grow(struct flame_names *t)
{
	size_t k, j;

	free(t->tab);
	t->mask = 2 * t->mask + 1;
	t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
	for (k = 0; k < t->n; k++) {
		j = t->hash[k] & t->mask;
		while (t->tab[j])
			j = (j + 1) & t->mask;
		t->tab[j] = (uint32_t)(k + 1);
	}
}

uint32_t
flame_names_add(struct flame_names *t, const char *s, size_t n, uint32_t h, size_t i)
{
	uint32_t id;

	if (t->n == t->capn) {
		t->capn = t->capn ? 2 * t->capn : 1024;
		t->off = xrealloc(t->off, t->capn * sizeof(*t->off));
		t->slen = xrealloc(t->slen, t->capn * sizeof(*t->slen));
		t->hash = xrealloc(t->hash, t->capn * sizeof(*t->hash));
	}
	if (t->len + n >= 0xfffffff0u)
		cli_fatal("flame graph: more than 4 GB of frame names");
	if (t->len + n > t->cap) {
		while (t->len + n > t->cap)
			t->cap *= 2;
		t->bytes = xrealloc(t->bytes, t->cap);
	}
	memcpy(t->bytes + t->len, s, n);
	id = (uint32_t)t->n++;
	t->off[id] = (uint32_t)t->len;
	t->slen[id] = (uint32_t)n;
	t->hash[id] = h;
	t->len += n;
	t->tab[i] = id + 1;
	if (4 * t->n > 3 * t->mask)	/* 75% full: probes stay short, the table small */
		names_grow(t);
	return id;
}

void
flame_names_free(struct flame_names *t)
{
	free(t->bytes);
	free(t->off);
	free(t->slen);
	free(t->hash);
	free(t->tab);
}
