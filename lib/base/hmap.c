/*
 * hmap.c - the (u64, u64) -> u32 map of hmap.h: linear probing over
 * slots holding the keys, hashed by base/hash.h.
 */
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/hash.h"
#include "base/hmap.h"

/* the pair's hash: the library's hash_u64, mixing B into A's */
static uint64_t
mix(uint64_t a, uint64_t b)
{
	return hash_u64(hash_u64(a) ^ b);
}

void
hmap_init(struct hmap *h)
{
	h->cap = 64;
	h->n = 0;
	h->s = xcalloc(h->cap, sizeof *h->s);
}

void
hmap_free(struct hmap *h)
{
	free(h->s);
	h->s = NULL;
	h->cap = h->n = 0;
}

uint32_t *
hmap_get(const struct hmap *h, uint64_t a, uint64_t b)
{
	size_t i = mix(a, b) & (h->cap - 1);

	for (;;) {
		struct hmap_slot *s = &h->s[i];
		if (!s->used)
			return NULL;
		if (s->a == a && s->b == b)
			return &s->val;
		i = (i + 1) & (h->cap - 1);
	}
}

static void
grow(struct hmap *h)
{
	struct hmap_slot *old = h->s;
	size_t oldcap = h->cap;

	h->cap *= 2;
	h->s = xcalloc(h->cap, sizeof *h->s);
	h->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].used)
			hmap_put(h, old[i].a, old[i].b, old[i].val);
	free(old);
}

void
hmap_put(struct hmap *h, uint64_t a, uint64_t b, uint32_t val)
{
	if ((h->n + 1) * 4 > h->cap * 3)
		grow(h);
	size_t i = mix(a, b) & (h->cap - 1);
	for (;;) {
		struct hmap_slot *s = &h->s[i];
		if (!s->used) {
			s->used = 1;
			s->a = a;
			s->b = b;
			s->val = val;
			h->n++;
			return;
		}
		if (s->a == a && s->b == b) {
			s->val = val;
			return;
		}
		i = (i + 1) & (h->cap - 1);
	}
}

void
hmap_del(struct hmap *h, uint64_t a, uint64_t b)
{
	size_t mask = h->cap - 1, i = mix(a, b) & mask;

	for (;;) {
		struct hmap_slot *s = &h->s[i];
		if (!s->used)
			return;
		if (s->a == a && s->b == b)
			break;
		i = (i + 1) & mask;
	}
	/* backward-shift deletion keeps linear probing chains intact */
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!h->s[j].used)
			break;
		size_t home = mix(h->s[j].a, h->s[j].b) & mask;
		/* move j to i when its home is not cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			h->s[i] = h->s[j];
			i = j;
		}
	}
	h->s[i].used = 0;
	h->n--;
}
