/*
 * convert_stacks.c - the stack model.  Every stack is stored once
 * (identical stacks share their frames).  Pass 1 learns which event kinds
 * and threads get stack records and how late they come, so that pass 2
 * makes only those lines wait, and only as long as needed; it keeps the
 * records that come very late, for pass 2 to attach when their event
 * comes; and it keeps the Win8+ stack-key definitions, which can come
 * much later than the events that use them, for conv_resolve_key().
 */
#include <stdlib.h>
#include <string.h>

#include "etl/convert_int.h"

/*
 * Stores N frames (P-sized, innermost first) once: identical stacks share
 * one copy, so memory grows with distinct stacks, not with samples.
 */
static uint32_t
add_frames(struct conv *c, const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= ptr_at(c, p + i * c->P);
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	uint32_t *known = hmap_get(&c->framemap, h, n);
	if (known) {
		size_t i;
		for (i = 0; i < n; i++)
			if (c->fr[*known + i] != ptr_at(c, p + i * c->P))
				break;
		if (i == n)
			return *known;
	}
	uint32_t start = (uint32_t)c->nfr;
	while (c->nfr + n > c->capfr) {
		c->capfr = c->capfr ? c->capfr * 2 : 4096;
		c->fr = xrealloc(c->fr, c->capfr * sizeof *c->fr);
	}
	for (size_t i = 0; i < n; i++)
		c->fr[c->nfr++] = ptr_at(c, p + i * c->P);
	if (!known)
		hmap_put(&c->framemap, h, n, start);
	return start;
}

/* Pass 1: a stack record names its event by time; the event is among the CPU's last few. */
static void
learn_stacked(struct conv *c, const struct etl_event *ev, uint64_t evts)
{
	if ((size_t)ev->cpu >= c->ncur)
		return;
	struct recent *r = c->recent + (size_t)ev->cpu * RECENT;
	for (int i = 0; i < RECENT; i++)
		if (r[i].ts == evts && r[i].kind)
			hmap_put(&c->stacked, r[i].kind, 0, 1);
}

void
conv_remember(struct conv *c, const struct etl_event *ev)
{
	if ((size_t)ev->cpu >= c->ncur || (ev->hkind == ETL_HK_PERFINFO && ev->group == 24))
		return;
	/* a ring: learn_stacked() looks at every slot, so their order does not matter */
	uint8_t *next = &c->recent_next[ev->cpu];
	struct recent *r = c->recent + (size_t)ev->cpu * RECENT + *next;
	*next = (uint8_t)((*next + 1) % RECENT);
	r->ts = ev->ts;
	r->kind = conv_kind_key(ev) | 1ull << 63;
}

/* Whether a Stack/StackKey record (of at least 16 + P bytes) is an event's kernel part. */
static int
kernel_part(const struct conv *c, const struct etl_event *ev)
{
	if (ev->type != 32)
		return ev->type == 37;
	return ev->plen >= 16 + c->P && images_is_kernel(c->img, ptr_at(c, ev->payload + 16));
}

/* A Stack record whose outermost frame is in user space holds the user part too. */
static int
stack_has_user(const struct conv *c, const struct etl_event *ev)
{
	if (ev->type != 32)
		return ev->type == 38;
	size_t nf = (ev->plen - 16) / c->P;
	return nf > 0 && !images_is_kernel(c->img, ptr_at(c, ev->payload + 16 + (nf - 1) * c->P));
}

/* The bit of late_bits[] that (TID, EVTS) sets. */
static unsigned
late_bit(uint32_t tid, uint64_t evts)
{
	return (unsigned)(((evts ^ (uint64_t)tid << 32) * 0x9e3779b97f4a7c15ull) >> 52);
}

/*
 * Pass 2: the late records of thread TID's event at EVTS, or NULL.  Asked
 * for every line and stack record: the bit answers most of them without
 * a lookup.
 */
const uint32_t *
conv_late_get(const struct conv *c, uint32_t tid, uint64_t evts)
{
	unsigned b = late_bit(tid, evts);
	if (c->nlate == 0 || !(c->late_bits[b >> 6] >> (b & 63) & 1))
		return NULL;
	return hmap_get(&c->late, tid, evts);
}

/* Pass 1: a stack record for (TID, EVTS) came over LATE_NS after it. */
static void
learn_late(struct conv *c, const struct etl_event *ev, uint32_t tid, uint64_t evts)
{
	if (c->late_overflow)
		return;
	uint32_t *i = hmap_get(&c->late, tid, evts);
	if (!i) {
		if (c->nlate == LATE_MAX) {
			c->late_overflow = 1;
			return;
		}
		GROW(c->lates, c->nlate, c->caplate);
		memset(&c->lates[c->nlate], 0, sizeof *c->lates);
		hmap_put(&c->late, tid, evts, (uint32_t)c->nlate);
		i = hmap_get(&c->late, tid, evts);
		unsigned b = late_bit(tid, evts);
		c->late_bits[b >> 6] |= 1ull << (b & 63);
		c->nlate++;
	}
	struct late_stack *L = &c->lates[*i];
	size_t nf = (ev->plen - 16) / c->P;
	const uint8_t *f = ev->payload + 16;
	int kernel = kernel_part(c, ev);
	struct late_part *part = kernel ? &L->k : &L->u;
	if (!part->have && (ev->type != 32 || nf > 0)) {
		part->have = 1;
		if (ev->type == 32) {
			part->idx = add_frames(c, f, nf);
			part->len = (uint32_t)nf;
			if (kernel)
				L->whole = !images_is_kernel(c->img, ptr_at(c, f + (nf - 1) * c->P));
		} else {
			/* the key's definition may come later in the trace: resolved in pass 2 */
			part->is_key = 1;
			part->key = ptr_at(c, f);
			part->ts = ev->ts;
			part->cpu = (uint32_t)ev->cpu;
			part->seq = c->cur_seq;
		}
		return;
	}
	uint64_t us = (ev->ts - evts + 999) / 1000 + 1;	/* pass 1 times are global already */
	if (us > L->wait_us)
		L->wait_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* A kept part's frames into a line; a key that does not resolve is counted, as conv_attach_stack does. */
static int
late_frames(struct conv *c, const struct late_part *part, struct pend *e, int user)
{
	if (!part->is_key) {
		conv_frames_put(c, e, user, c->fr + part->idx, part->len);
		return 1;
	}
	const struct keydef *d = conv_resolve_key(c, part->key, part->ts, part->cpu, part->seq);
	if (!d) {
		c->unresolved++;
		return 0;
	}
	conv_frames_put(c, e, user, c->fr + d->idx, d->len);
	return 1;
}

/* Pass 2: a line that waits for a stack gets the late records pass 1 kept for it. */
void
conv_apply_late(struct conv *c, struct pend *e)
{
	const uint32_t *i = conv_late_get(c, e->tid, e->ts);
	if (!i)
		return;
	struct late_stack *L = &c->lates[*i];
	if (L->k.have && late_frames(c, &L->k, e, 0)) {
		e->has_k = 1;
		if (L->whole)
			e->has_u = 1;
		c->joined++;
	}
	if (L->u.have && late_frames(c, &L->u, e, 1)) {
		e->has_u = 1;
		c->joined++;
	}
	L->applied = 1;
	e->late = 1;
}

/* Pass 2: whether this stack record was given to its line already (by conv_apply_late). */
int
conv_applied_late(const struct conv *c, const struct etl_event *ev, uint32_t tid, uint64_t evts)
{
	const uint32_t *i = conv_late_get(c, tid, evts);
	if (!i || !c->lates[*i].applied)
		return 0;
	const struct late_stack *L = &c->lates[*i];
	const struct late_part *part = kernel_part(c, ev) ? &L->k : &L->u;
	size_t nf = (ev->plen - 16) / c->P;
	const uint8_t *f = ev->payload + 16;
	if (ev->type != 32)	/* the very key record kept: same key, same place in its CPU's stream */
		return part->have && part->is_key && part->key == ptr_at(c, f) &&
		    part->ts == ev->ts && part->cpu == (uint32_t)ev->cpu && part->seq == c->cur_seq;
	/* the very Stack record kept: same frames */
	if (nf == 0 || !part->have || part->is_key || part->len != nf)
		return 0;
	for (size_t k = 0; k < nf; k++)
		if (c->fr[part->idx + k] != ptr_at(c, f + k * c->P))
			return 0;
	return 1;
}

/* Pass 1: thread TID's event at EVTS gets a stack record at TS (with a user part: USER). */
static void
learn_last(struct conv *c, uint32_t tid, uint64_t evts, uint64_t ts, int user)
{
	uint32_t *i = hmap_get(&c->lastmap, tid, 0);
	if (!i) {
		GROW(c->last, c->nlast, c->caplast);
		c->last[c->nlast].any = c->last[c->nlast].user = c->last[c->nlast].maxlat = 0;
		hmap_put(&c->lastmap, tid, 0, (uint32_t)c->nlast);
		i = hmap_get(&c->lastmap, tid, 0);
		c->nlast++;
	}
	struct last_stack *l = &c->last[*i];
	if (evts > l->any)
		l->any = evts;
	if (user && evts > l->user)
		l->user = evts;
	if (ts > evts && ts - evts > l->maxlat)
		l->maxlat = ts - evts;
}

void
conv_collect_stackwalk(struct conv *c, const struct etl_event *ev)
{
	const uint8_t *p = ev->payload;
	uint32_t n = ev->plen;

	switch (ev->type) {
	case 32: case 37: case 38: {	/* Stack / StackKeyKernel / StackKeyUser: ts, pid, tid, ... */
		c->nstackev++;
		uint64_t evts = n >= 8 ? gts(c, etl_u64(p)) : 0;
		if (n >= 8)
			learn_stacked(c, ev, evts);
		if (n >= 16 + c->P) {
			learn_last(c, etl_u32(p + 12), evts, ev->ts, stack_has_user(c, ev));
			if (ev->ts > evts && ev->ts - evts > LATE_NS)
				learn_late(c, ev, etl_u32(p + 12), evts);
		}
		if (n >= 16 && etl_u32(p + 8) != 0 && etl_u32(p + 12) != 0 &&
		    images_thread_pid_early(c->img, etl_u32(p + 12)) < 0)
			/* a thread without Thread events: its process from the stack record */
			images_thread(c->img, etl_u32(p + 12), etl_u32(p + 8), TS_NONE, PROC_DCSTART);
		break;
	}
	case 34: case 35: case 36:	/* KeyCreate / KeyDelete / KeyRundown: key, frames */
		if (n >= c->P) {
			size_t nf = (n - c->P) / c->P;
			GROW(c->kd, c->nkd, c->capkd);
			struct keydef *d = &c->kd[c->nkd++];
			d->key = ptr_at(c, p);
			d->ts = ev->ts;
			d->seq = c->cur_seq;
			d->cpu = (uint32_t)ev->cpu;
			d->idx = add_frames(c, p + c->P, nf);
			d->len = (uint32_t)nf;
			d->create = ev->type == 34;
		}
		break;
	}
}

static int
cmp_keydef(const void *a, const void *b)
{
	const struct keydef *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* After pass 1: the key definitions in the order conv_resolve_key() searches. */
void
conv_sort_keys(struct conv *c)
{
	if (c->nkd)
		qsort(c->kd, c->nkd, sizeof *c->kd, cmp_keydef);
}

/*
 * The frames of KEY as referenced by a StackKey record at TS (its own
 * header time) on CPU, SEQ-th in that CPU's stream.  A KeyDelete or
 * KeyRundown carries the frames of the key's life that ends there, so
 * the first of them after the reference: a key evicted and reused at the
 * same moment is deleted before the new reference is logged.  A
 * KeyCreate starts a life: the last create before the reference, when
 * no delete follows.
 */
const struct keydef *
conv_resolve_key(const struct conv *c, uint64_t key, uint64_t ts, uint32_t cpu, uint64_t seq)
{
	size_t lo = 0, hi = c->nkd;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct keydef *d = &c->kd[mid];
		if (d->key < key || (d->key == key && d->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t first_after = lo;
	for (size_t i = lo; i < c->nkd && c->kd[i].key == key; i++) {
		const struct keydef *d = &c->kd[i];
		/* same tick: only a definition logged after the reference on the same CPU */
		if (d->ts == ts && !(d->cpu == cpu && d->seq > seq)) {
			first_after = i + 1;
			continue;
		}
		if (!d->create)
			return d;
	}
	if (first_after > 0 && c->kd[first_after - 1].key == key)
		return &c->kd[first_after - 1];
	return NULL;
}

size_t
conv_count_kernel(const struct conv *c, const uint64_t *f, size_t n)
{
	return images_count_kernel(c->img, f, n);
}

