/*
 * convert_prep.c - pass 2's work done ahead of the caller's thread.
 *
 * The caller's thread writes every line, and was the one busy thread
 * of pass 2 while the reader's worker waited.  What pass 2 does for an
 * event that needs only that event, the events before it and pass 1's
 * model (read, never changed, in pass 2) is done here instead, in
 * conv_prep_event(), which the reader calls for every event on its
 * worker (etl_set_prepare, lib/etl/etl.h), ahead of the caller.  The
 * results travel with the event as records (a tag, a length, bytes),
 * which the emit code finds with conv_prep_find() when it writes that
 * event's line.
 *
 * The work is per event alone (its line's attributes: payload fields),
 * so each file's events are prepared in that file's order, on its
 * reader's worker; with several files the merge (convert.c) then picks
 * from them.  A state machine over the merged stream could run here too
 * with one file; thread time was tried and not kept: its lines' texts,
 * read from the other core, cost the caller's thread about what making
 * them did (13% fewer instructions there, no less time, more in all).
 * Nor was keeping from the caller the events a filter drops whose line
 * would do nothing else (user events not the CLR's, of kinds without
 * stack records): with -k Sample on net.4.5.2.x64 only 929 events were
 * such, the others being CLR events (their walks are joined or counted
 * on the caller's thread) or kinds with stack records (counted as not
 * selected there); no faster.
 *
 * The rule that keeps it safe: code called from here reads pass 1's
 * model and the options, and writes only state of its own (each
 * file's struct conv_fields), never what the caller's thread uses.
 */
#include <stdlib.h>
#include <string.h>

#include "etl/convert_int.h"

/* A record: TAG (enum conv_prep_tag), LEN bytes after it, the next 8-aligned. */
struct prep_rec {
	uint32_t tag, len;
};

void
conv_prep_put(struct etl_prep *out, unsigned tag, const void *p, size_t n)
{
	struct prep_rec h = { tag, (uint32_t)n };
	static const uint8_t zero[8];

	if (n > UINT32_MAX)
		cli_fatal("etl2evt: one prepared record of %zu bytes", n);
	etl_prep_add(out, &h, sizeof h);
	etl_prep_add(out, p, n);
	if (n & 7)
		etl_prep_add(out, zero, 8 - (n & 7));
}

static const void *
find_in(const uint8_t *b, size_t n, unsigned tag, size_t *len)
{
	for (size_t at = 0; at + sizeof(struct prep_rec) <= n;) {
		struct prep_rec h;
		memcpy(&h, b + at, sizeof h);
		at += sizeof h;
		if (h.tag == tag) {
			*len = h.len;
			return b + at;
		}
		at += ((size_t)h.len + 7) & ~(size_t)7;
	}
	*len = 0;
	return NULL;
}

const void *
conv_prep_find(const struct conv *c, unsigned tag, size_t *len)
{
	size_t n;
	const uint8_t *b = etl_prepared(c->r, &n);
	return find_in(b, n, tag, len);
}

/* The work on one event alone: its line's attributes (convert_emit_user.c). */
static void
prep_stateless(struct conv *c, struct source *s, const struct etl_event *ev, struct etl_prep *out)
{
	conv_prep_fields(c, s, ev, out);
}

/* The reader's hook (its worker's thread, or the caller's without one); CTX is the source. */
void
conv_prep_event(void *ctx, const struct etl_event *ev, struct etl_prep *out)
{
	struct source *s = ctx;
	struct conv *c = s->conv;

	prep_stateless(c, s, ev, out);
}

void
conv_prep_start(struct conv *c)
{
	conv_fields_start(c);
	for (size_t i = 0; i < c->nsrc; i++) {
		c->src[i].conv = c;
		etl_set_prepare(c->src[i].r, conv_prep_event, &c->src[i]);
	}
}

void
conv_prep_free(struct conv *c)
{
	for (size_t i = 0; i < c->nsrc; i++)
		etl_set_prepare(c->src[i].r, NULL, NULL);
	conv_fields_free(c);
}
