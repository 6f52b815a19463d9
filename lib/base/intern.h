/*
 * intern.h - an interning table: every distinct string gets a small
 * integer id, 0, 1, 2... in the order the strings were first added, and
 * the id gives the string back.  The frame names of lib/stacks and the
 * whole stacks of aggregate, diff and overweight are kept here, so a
 * caller stores one uint32_t per name or stack and compares ids.
 *
 * Memory grows with the distinct strings only: their text in 1 MB
 * chunks (no per-string malloc, no padding), 12 bytes of pointer and
 * length and hash per string, and a slot table at most 75% full.  The
 * texts never move, so intern_str() pointers stay valid until
 * intern_release().
 */
#ifndef ETLKIT_INTERN_H
#define ETLKIT_INTERN_H

#include <stddef.h>
#include <stdint.h>

#define INTERN_NONE UINT32_MAX

struct intern {
	char **str;		/* id -> its text, NUL-terminated (it may hold NULs of its own) */
	uint32_t *len;		/* id -> its length */
	uint32_t *hash;		/* id -> low half of its hash: the probe start and a quick "no" */
	uint32_t n, cap;	/* ids given, room in the three arrays */
	uint32_t *slot;		/* open addressing by hash: an id, or INTERN_NONE */
	uint32_t mask;		/* slots - 1 */
	char *cur;		/* where the next text goes in the last chunk... */
	size_t left;		/* ...and how much of it is free */
	char **chunks;
	size_t nchunks, capchunks;
};

void intern_init(struct intern *t);
void intern_release(struct intern *t);
/*
 * The id of S (N bytes), added if new: a new string gets the next id,
 * t->n before the call (so a caller keeping data per id grows it when
 * the id it gets equals its own count).
 */
uint32_t intern_add(struct intern *t, const char *s, size_t n);
/*
 * intern_add() without the copy: a new S is kept where it is (a mapped
 * file's bytes), so it must stay valid until intern_release(), and its
 * intern_str() is not NUL-terminated: use intern_len().
 */
uint32_t intern_add_ref(struct intern *t, const char *s, size_t n);

static inline const char *
intern_str(const struct intern *t, uint32_t id)
{
	return t->str[id];
}

static inline uint32_t
intern_len(const struct intern *t, uint32_t id)
{
	return t->len[id];
}

#endif
