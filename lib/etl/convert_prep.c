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
 * Two kinds of work:
 *   - stateless (one event alone): done for each file's events in that
 *     file's order, on its reader's worker;
 *   - ordered (a state machine over the merged stream): with one file
 *     its order is the merged order, so it runs on the worker too; with
 *     several, convert.c calls conv_prep_ordered() on the caller's
 *     thread for each event of the merge, the same code in the same
 *     order, so the output never depends on where it ran.
 *
 * The rule that keeps it safe: code called from here reads pass 1's
 * model and the options, and writes only state of its own (struct
 * conv_prep), never what the caller's thread uses.
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
	const void *p = find_in(b, n, tag, len);

	if (!p && c->nsrc > 1)
		p = find_in(c->inline_prep.p, c->inline_prep.n, tag, len);
	return p;
}

/*
 * The work on one event that needs the merged order (nothing yet).  On
 * the worker it sees every event, also those pass 2 then skips for an
 * insane time (conv_ns_sane(): skip them the same way), and EV->ts is
 * still the raw clock: use EV->ns (+ the source's off_ns), as pass 2's
 * global time is made from it.
 */
static void
prep_ordered(struct conv *c, const struct etl_event *ev, struct etl_prep *out)
{
	(void)c;
	(void)ev;
	(void)out;
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
	if (c->nsrc == 1)
		prep_ordered(c, ev, out);
}

void
conv_prep_ordered(struct conv *c, const struct etl_event *ev)
{
	c->inline_prep.n = 0;
	prep_ordered(c, ev, &c->inline_prep);
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
	free(c->inline_prep.p);
	memset(&c->inline_prep, 0, sizeof c->inline_prep);
}
