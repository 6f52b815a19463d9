/* hmap.c - see hmap.h. */
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/hmap.h"

static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
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
