/*
 * intern.c - the interning table of intern.h: an open-addressing table
 * (linear probing) of ids over three arrays indexed by id, and the text
 * arena behind them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/hash.h"
#include "base/intern.h"

#define CHUNK_SIZE ((size_t)1 << 20)
#define FIRST_SLOTS 1024
#define MAX_STRINGS ((uint32_t)1 << 31)	/* keeps the slot count within 32 bits */

static void
fill_slots(struct intern *t, size_t nslots)
{
	uint32_t id, h;

	free(t->slot);
	t->slot = xmalloc(nslots * sizeof *t->slot);
	memset(t->slot, 0xff, nslots * sizeof *t->slot);
	t->mask = (uint32_t)(nslots - 1);
	for (id = 0; id < t->n; id++) {
		for (h = t->hash[id] & t->mask; t->slot[h] != INTERN_NONE; h = (h + 1) & t->mask)
			;
		t->slot[h] = id;
	}
}

void
intern_init(struct intern *t)
{
	memset(t, 0, sizeof *t);
	fill_slots(t, FIRST_SLOTS);
}

void
intern_release(struct intern *t)
{
	size_t i;

	for (i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->str);
	free(t->len);
	free(t->hash);
	free(t->slot);
	memset(t, 0, sizeof *t);
}

/*
 * A table past a few MB of text (diff's and aggregate's whole stacks)
 * takes its chunks 4 MB at a time, aligned to and advised for huge
 * pages (map_huge_pages): a 4 KB page costs a fault, an allocation and
 * a clear, and copying 33 MB of stacks was a quarter of diff's time in
 * faults.  Small tables (frame names) keep 1 MB chunks and 4 KB pages.
 */
#define BIG_CHUNK ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_CHUNKS 4

static char *
big_chunk(void)
{
	void *p;

	if (posix_memalign(&p, HUGE_PAGE, BIG_CHUNK) != 0)
		return xmalloc(BIG_CHUNK);
	map_huge_pages(p, BIG_CHUNK);	/* a hint: 4 KB pages if refused */
	return p;
}

static char *
new_chunk(struct intern *t, size_t size)
{
	if (t->nchunks == t->capchunks) {
		t->capchunks = t->capchunks ? t->capchunks * 2 : 16;
		t->chunks = xrealloc(t->chunks, t->capchunks * sizeof *t->chunks);
	}
	return t->chunks[t->nchunks++] = size == BIG_CHUNK ? big_chunk() : xmalloc(size);
}

/* a copy of S in the arena; a long text gets a chunk of its own, the current one goes on */
static char *
copy_text(struct intern *t, const char *s, size_t n)
{
	char *p;

	if (n + 1 > CHUNK_SIZE / 4) {
		p = new_chunk(t, n + 1);
	} else {
		if (n + 1 > t->left) {
			t->left = t->nchunks < SMALL_CHUNKS ? CHUNK_SIZE : BIG_CHUNK;
			t->cur = new_chunk(t, t->left);
		}
		p = t->cur;
		t->cur += n + 1;
		t->left -= n + 1;
	}
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static uint32_t
add(struct intern *t, const char *s, size_t n, int copy)
{
	uint32_t hv = (uint32_t)hash_bytes(s, n), h, id;

	for (h = hv & t->mask; (id = t->slot[h]) != INTERN_NONE; h = (h + 1) & t->mask)
		if (t->hash[id] == hv && t->len[id] == n && memcmp(t->str[id], s, n) == 0)
			return id;
	if (n > UINT32_MAX || t->n >= MAX_STRINGS)
		cli_fatal("too many or too long strings to keep (%zu bytes, %u of them)", n, t->n);
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->str = xrealloc(t->str, t->cap * sizeof *t->str);
		t->len = xrealloc(t->len, t->cap * sizeof *t->len);
		t->hash = xrealloc(t->hash, t->cap * sizeof *t->hash);
	}
	id = t->n++;
	t->str[id] = copy ? copy_text(t, s, n) : (char *)(uintptr_t)s;
	t->len[id] = (uint32_t)n;
	t->hash[id] = hv;
	t->slot[h] = id;
	if ((uint64_t)t->n * 4 > (uint64_t)t->mask * 3)	/* 75% full */
		fill_slots(t, ((size_t)t->mask + 1) * 2);
	return id;
}

uint32_t
intern_add(struct intern *t, const char *s, size_t n)
{
	return add(t, s, n, 1);
}

uint32_t
intern_add_ref(struct intern *t, const char *s, size_t n)
{
	return add(t, s, n, 0);
}
