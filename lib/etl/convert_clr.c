/*
 * convert_clr.c - the CLR's own stacks and its allocation and exception
 * events.
 *
 * With its Stack keyword the CLR walks the managed stack itself and logs
 * it as a ClrStackWalk event (DotNETRuntime id 82) right after the event
 * it belongs to, on the same thread.  The walk names no event: as
 * TraceEvent's TraceLog does, it belongs to the last CLR event (runtime or
 * private provider) its thread logged, when that event has no CLR stack
 * yet.  So pass 1 learns which CLR events get walks (conv_clr_learn), and
 * pass 2 keeps their lines in the window until the walk comes, the thread
 * logs another CLR event, or CLR_WAIT_NS pass.  The walk's frames (its
 * FrameCount, pointer-sized) become the line's stack, named like sample
 * frames; the walk writes no line of its own.  A line that already has an
 * ETW stack-walk record keeps it (the kernel's walk, logged with the
 * event, comes first; TraceLog would give the event both, which it
 * asserts never happens, and keep either).  Every walk is joined or
 * counted with its reason.
 *
 * AllocationTick (id 10) lines become kind GCAllocationTick, weight the
 * bytes allocated since the previous tick, with the allocated type as a
 * leaf pseudo-frame ("Type System.String"), as PerfView's GC Heap Alloc
 * view; ExceptionThrown_V1 (id 80) lines become kind Exception, weight 1,
 * leaf "Exception TYPE: MESSAGE", as PerfView's Exceptions view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/convert_int.h"

#define CLR_WALK_ID 82
#define CLR_ALLOC_ID 10
#define CLR_EXCEPTION_ID 80
#define MESSAGE_MAX 200			/* bytes of an exception message kept in its frame */

enum { ST_QUEUED = 1, ST_GONE };	/* the thread's last CLR event: its line waits, or none does */

struct clrjoin {
	struct hmap last1;	/* pass 1: tid -> 1 + id of its last CLR event (file order) */
	struct hmap stacked;	/* (provider, id) of CLR events that get walks */
	uint64_t walks;		/* walks in the trace (pass 1) */
	struct hmap last;	/* pass 2: (tid, 0) -> low 32 bits of its line's sequence; (tid, 1) -> state */
	uint64_t joined, kernel_kept, no_event, gone, unselected, twice, truncated, short_walk;
	uint64_t max_delay_ns;
};

static struct clrjoin *
clr(struct conv *c)
{
	if (!c->clr) {
		c->clr = xcalloc(1, sizeof *c->clr);
		hmap_init(&c->clr->last1);
		hmap_init(&c->clr->stacked);
		hmap_init(&c->clr->last);
	}
	return c->clr;
}

/* 1 for the runtime provider, 2 for the private one (TraceEvent's "CLR event"), else 0. */
static int
clr_provider(const struct etl_event *ev)
{
	if (ev->hkind != ETL_HK_EVENT || !ev->guid)
		return 0;
	return conv_is_provider(ev->guid, P_CLR) ? 1 : conv_is_provider(ev->guid, P_CLR_PRIVATE) ? 2 : 0;
}

static int
is_walk(const struct etl_event *ev)
{
	return clr_provider(ev) == 1 && ev->id == CLR_WALK_ID;
}

/* Pass 1 (file order): which CLR events are followed by a walk on their thread. */
void
conv_clr_learn(struct conv *c, const struct etl_event *ev)
{
	int prov = clr_provider(ev);
	if (!prov || ev->tid == ETL_NO_ID)
		return;
	struct clrjoin *J = clr(c);
	if (!is_walk(ev)) {
		hmap_put(&J->last1, ev->tid, 0, (uint32_t)prov << 16 | ev->id);
		return;
	}
	J->walks++;
	const uint32_t *k = hmap_get(&J->last1, ev->tid, 0);
	if (k)
		hmap_put(&J->stacked, *k, 0, 1);
}

/* The waiting line at SEQ's low 32 bits, if still in the window. */
static struct pend *
line_at(struct conv *c, uint32_t low)
{
	uint64_t seq = (c->qtail & ~(uint64_t)0xffffffffu) | low;
	if (seq >= c->qtail)
		seq -= (uint64_t)1 << 32;
	if (seq < c->qhead || seq >= c->qtail)
		return NULL;
	return &c->q[seq & (c->qcap - 1)];
}

/*
 * Pass 2, before a CLR event's line: a walk after it belongs to it, not to
 * the thread's earlier CLR event, whose line waits no more.  Its line
 * waits for a walk when its kind gets them.
 */
void
conv_clr_before(struct conv *c, const struct etl_event *ev)
{
	c->want_clr = c->clr_line = 0;
	int prov = clr_provider(ev);
	if (!prov || is_walk(ev) || !c->clr || c->clr->walks == 0 || ev->tid == ETL_NO_ID)
		return;
	struct clrjoin *J = c->clr;
	const uint32_t *st = hmap_get(&J->last, ev->tid, 1);
	if (st && *st == ST_QUEUED) {
		struct pend *e = line_at(c, *hmap_get(&J->last, ev->tid, 0));
		if (e && e->clr_wait && e->tid == ev->tid)
			e->clr_wait = 0;
	}
	/* not selected until conv_finish() says otherwise (conv_clr_line) */
	hmap_put(&J->last, ev->tid, 1, ST_GONE);
	hmap_put(&J->last, ev->tid, 2, 1);
	c->clr_line = 1;
	c->clr_tid = ev->tid;
	if (hmap_get(&J->stacked, (uint32_t)prov << 16 | ev->id, 0))
		c->want_clr = 1;
}

/*
 * Pass 2, from conv_finish(): the line of the thread's CLR event was
 * selected, and waits for its walk in the window at SEQ (WAITS), or not.
 */
void
conv_clr_line(struct conv *c, int waits, uint64_t seq)
{
	struct clrjoin *J = c->clr;
	hmap_put(&J->last, c->clr_tid, 2, 0);
	if (waits) {
		hmap_put(&J->last, c->clr_tid, 0, (uint32_t)seq);
		hmap_put(&J->last, c->clr_tid, 1, ST_QUEUED);
	}
	c->clr_line = c->want_clr = 0;
}

/* Pass 2: a walk joins its event's line. */
static void
join_walk(struct conv *c, const struct etl_event *ev)
{
	struct clrjoin *J = clr(c);
	size_t P = ev->hdr64 ? 8 : 4;
	if (ev->plen < 8) {
		J->short_walk++;
		return;
	}
	const uint32_t *st = ev->tid == ETL_NO_ID ? NULL : hmap_get(&J->last, ev->tid, 1);
	if (!st) {
		J->no_event++;
		return;
	}
	if (*st != ST_QUEUED) {
		const uint32_t *u = hmap_get(&J->last, ev->tid, 2);
		if (u && *u)
			J->unselected++;
		else
			J->gone++;
		return;
	}
	struct pend *e = line_at(c, *hmap_get(&J->last, ev->tid, 0));
	if (!e || e->tid != ev->tid || !e->clr_wait) {
		J->gone++;
		return;
	}
	e->clr_wait = 0;
	hmap_put(&J->last, ev->tid, 1, ST_GONE);
	if (e->has_u || e->has_k) {
		J->kernel_kept++;
		return;
	}
	uint32_t want = etl_u32(ev->payload + 4);
	size_t have = (ev->plen - 8) / P;
	if (want < have)
		have = want;
	else if (want > have)
		J->truncated++;
	e->nu = 0;
	/* the frames straight into the line's user part: a walk is often a hundred of them */
	uint64_t *to = conv_frames_grow(c, e, 1, have);
	const uint8_t *fp = ev->payload + 8;
	if (P == 8)
		for (size_t i = 0; i < have; i++)
			to[i] = etl_u64(fp + 8 * i);
	else
		for (size_t i = 0; i < have; i++)
			to[i] = etl_u32(fp + 4 * i);
	e->has_u = 1;
	e->clrstack = 1;	/* (written after its text: convert_line.c) */
	J->joined++;
	if (c->now > e->ts && c->now - e->ts > J->max_delay_ns)
		J->max_delay_ns = c->now - e->ts;
}

/* AllocationTick: the bytes (AllocationAmount64 from version 2, else AllocationAmount), the type. */
static void
alloc_tick(const struct etl_event *ev, uint64_t *bytes, char *type, size_t cap)
{
	size_t P = ev->hdr64 ? 8 : 4;
	const uint8_t *p = ev->payload;
	*bytes = etl_u32(p);
	memcpy(type, "?", 2);	/* (CAP is a type name's buffer: hundreds of bytes) */
	if (ev->version >= 2 && ev->plen >= 18) {
		*bytes = etl_u64(p + 10);
		if (ev->plen > 18 + P)
			etl_wstr(p + 18 + P, ev->plen - 18 - P, type, cap, NULL);
		if (!*type)
			memcpy(type, "?", 2);
	}
}

/* Cuts S to at most MAX bytes, on a UTF-8 character boundary. */
static void
cut_utf8(char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	s[max] = '\0';
}

/*
 * Pass 2: a CLR event's line kind and weight (ns, the line's weight in
 * its unit times 1e6).  Returns the kind, or NULL for an ordinary Event
 * line.  Its leaf pseudo-frame waits for conv_clr_leaf(): a filter may
 * drop the line first.
 */
const char *
conv_clr_kind(struct conv *c, const struct etl_event *ev, int64_t *weight)
{
	c->leaf.n = 0;
	return conv_clr_kind_of(ev, weight);
}

/* conv_clr_kind() without its line: the event alone (the prepare hook asks on the worker). */
const char *
conv_clr_kind_of(const struct etl_event *ev, int64_t *weight)
{
	if (clr_provider(ev) != 1)
		return NULL;
	if (ev->id == CLR_ALLOC_ID && ev->plen >= 8) {
		const uint8_t *p = ev->payload;
		/* AllocationAmount64 from version 2, else AllocationAmount */
		uint64_t bytes = ev->version >= 2 && ev->plen >= 18 ? etl_u64(p + 10) : etl_u32(p);
		/* bytes in the weight column: 1 byte is written as 1 (the writer's ms) */
		*weight = bytes > (uint64_t)INT64_MAX / 1000000 ? INT64_MAX : (int64_t)bytes * 1000000;
		return "GCAllocationTick";
	}
	if (ev->id == CLR_EXCEPTION_ID && ev->version >= 1 && ev->plen >= 4) {
		*weight = 1000000;
		return "Exception";
	}
	return NULL;
}

/*
 * The leaf pseudo-frame of a line conv_clr_kind() gave a kind, into L
 * (empty for another event): it depends on the event alone, so the
 * reader's worker writes it ahead (conv_prep_fields) too.
 */
void
conv_clr_leaf_text(struct evtw_line *l, const struct etl_event *ev)
{
	char type[512], msg[1024], frame[1300];

	if (clr_provider(ev) != 1)
		return;
	if (ev->id == CLR_ALLOC_ID && ev->plen >= 8) {
		uint64_t bytes;
		alloc_tick(ev, &bytes, type, sizeof type);
		/* "Type NAME": one per allocation tick, the most common CLR line */
		evtw_mem(l, "Type ", 5);
		evtw_frame(l, type, strlen(type));
	} else if (ev->id == CLR_EXCEPTION_ID && ev->version >= 1 && ev->plen >= 4) {
		size_t used = 0;
		etl_wstr(ev->payload, ev->plen, type, sizeof type, &used);
		msg[0] = '\0';
		if (used < ev->plen)
			etl_wstr(ev->payload + used, ev->plen - used, msg, sizeof msg, NULL);
		cut_utf8(msg, MESSAGE_MAX);
		snprintf(frame, sizeof frame, "Exception %s: %s", *type ? type : "?", msg);
		evtw_frame(l, frame, strlen(frame));
	}
}

/* Pass 2: the leaf pseudo-frame of a line conv_clr_kind() gave a kind, once the line is kept. */
void
conv_clr_leaf(struct conv *c, const struct etl_event *ev)
{
	size_t n;
	const void *p = conv_prep_find(c, PREP_CLR_LEAF, &n);

	c->leaf.n = 0;
	if (p)
		evtw_mem(&c->leaf, p, n);
	else
		conv_clr_leaf_text(&c->leaf, ev);
}

/* Pass 2: a walk, which writes no line.  Returns 1 if EV is one. */
/* Whether EV is a CLR stack walk (no line of its own). */
int
conv_clr_is_walk(const struct etl_event *ev)
{
	return is_walk(ev);
}

int
conv_clr_walk(struct conv *c, const struct etl_event *ev)
{
	if (!is_walk(ev))
		return 0;
	join_walk(c, ev);
	return 1;
}

/* The end: walks not joined, per reason, and #clrstacks: how many there were and were joined. */
void
conv_clr_report(struct conv *c)
{
	struct clrjoin *J = c->clr;
	if (!J)
		return;
	evtw_skipped(c->ob, "clrstack", J->no_event, "CLR stack walks with no CLR event before them on their thread");
	evtw_skipped(c->ob, "clrstack", J->gone,
	    "CLR stack walks whose event had its walk already or had left the window");
	evtw_skipped(c->ob, "clrstack", J->kernel_kept,
	    "CLR stack walks of events with an ETW stack-walk record (the record is kept)");
	evtw_skipped(c->ob, "clrstack", J->short_walk, "CLR stack walks too short for their FrameCount field");
	evtw_skipped(c->ob, "clrstack", J->truncated,
	    "CLR stack walks whose FrameCount passes their payload (the frames there are kept)");
	if (J->unselected) {
		char n[24];
		snprintf(n, sizeof n, "%llu", (unsigned long long)J->unselected);
		const struct evtw_pair kv[] = { { "by", "etl2evt" }, { "reason", "not-selected" },
		    { "clrstacks", n }, { "detail", "CLR stack walks of events not selected (-k, -p, -s, -e)" } };
		evtw_meta(c->ob, "removed", kv, sizeof kv / sizeof kv[0]);
	}
	if (J->walks) {
		char w[24], j[24];
		snprintf(w, sizeof w, "%llu", (unsigned long long)J->walks);
		snprintf(j, sizeof j, "%llu", (unsigned long long)J->joined);
		const struct evtw_pair kv[] = { { "walks", w }, { "joined", j } };
		evtw_meta(c->ob, "clrstacks", kv, 2);
	}
}

/* Whether the conversion lost CLR stacks (etl2evt's exit 1). */
int
conv_clr_lost(const struct conv *c)
{
	const struct clrjoin *J = c->clr;
	return J && (J->no_event || J->gone || J->short_walk);
}

void
conv_clr_free(struct conv *c)
{
	if (!c->clr)
		return;
	hmap_free(&c->clr->last1);
	hmap_free(&c->clr->stacked);
	hmap_free(&c->clr->last);
	free(c->clr);
	c->clr = NULL;
	evtw_free(&c->leaf);
}
