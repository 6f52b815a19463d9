/*
 * convert_tt.c - thread time in the conversion: the hooks between the
 * decoders and lib/etl/threadtime.c, and the Running, Ready and Waiting
 * lines it derives (docs/evt-format.md §3.1).
 *
 * Pass 1 learns each CPU's first CSwitch, whose old thread ran on that CPU
 * from the trace's first event.  Pass 2 feeds the state machine in time
 * order; each interval it ends becomes a line that follows the line of
 * the event that ended it (struct ttfollow in convert_int.h), so it is
 * written right after that line and with its stack, once the stack
 * records came.  Thread time is on when the trace has CSwitch events and
 * --no-thread-time is not given.
 */
#include <stdlib.h>
#include <string.h>

#include "etl/convert_int.h"

static const char *const kind_names[] = { [TT_RUNNING] = "Running", [TT_READY] = "Ready",
    [TT_WAITING] = "Waiting" };
static const char *const from_names[] = { [TT_FROM_READIED] = "readied",
    [TT_FROM_PREEMPTED] = "preempted", [TT_FROM_UNKNOWN] = "unknown" };
static const char *const in_names[] = { [TT_IN_THREAD] = "thread", [TT_IN_DPC] = "dpc",
    [TT_IN_ISR] = "isr" };

static void
kv_name(struct evtw_line *l, const char *key, unsigned v, const char *(*name)(unsigned))
{
	const char *s = v == TT_UNKNOWN ? "unknown" : name(v);
	evtw_key(l, key);
	if (s)
		evtw_str(l, s);
	else
		evtw_u64(l, v);
}

/*
 * KEY=V for a V of this file's own words ("readied", "kernel"...): none
 * has a byte evt-format §4 escapes, so it is copied as it is.
 */
static void
kv_word(struct evtw_line *l, const char *key, const char *v)
{
	evtw_key(l, key);
	evtw_str(l, v);
}

/* E's "process<TAB>pid<TAB>tid" as evtw_begin() writes them, when they fit in e->ids. */
static void
cache_ids(struct tcache *e)
{
	struct evtw_line s = { 0 };
	evtw_esc(&s, e->name, strlen(e->name), 0);
	evtw_ch(&s, '\t');
	evtw_i64(&s, e->pid);
	evtw_ch(&s, '\t');
	evtw_u64(&s, e->tid);
	e->nids = s.n <= sizeof e->ids ? (uint8_t)s.n : 0;
	if (e->nids)
		memcpy(e->ids, s.b, s.n);
	evtw_free(&s);
}

/*
 * The process of thread TID now, its name, and the columns they make:
 * kept per thread until a thread or process starts or ends (c->tt_gen),
 * since every Running, Ready and Waiting line asks, and they are as many
 * as all other lines.
 */
static const struct tcache *
thread_process(struct conv *c, int64_t tid, uint64_t ts)
{
	static const struct tcache idle = { .pid = 0, .name = "Idle", .nids = 8, .ids = "Idle\t0\t0" };
	static const struct tcache unknown = { .pid = -1, .name = "?" };	/* (nids 0) */
	if (tid <= 0)
		return tid == 0 ? &idle : &unknown;
	struct tcache *e = &c->tcache[(uint32_t)tid % TCACHE];
	if (e->gen != c->tt_gen || e->tid != (uint32_t)tid) {
		e->gen = c->tt_gen;
		e->tid = (uint32_t)tid;
		e->pid = images_thread_pid(c->img, (uint32_t)tid, ts);
		e->name = conv_process_name(c, e->pid, ts);
		cache_ids(e);
	}
	return e;
}

/*
 * conv_begin_named() for interval IV of thread E: the same bytes, with
 * the thread's columns copied from the cache and repeated times from
 * c->ttmemo.
 */
static int
begin_follower(struct conv *c, struct evtw_line *l, const struct tt_iv *iv, const struct tcache *e,
    uint64_t ts)
{
	const char *kind = kind_names[iv->kind];
	int64_t w = iv->end - iv->start;
	if (!e->nids || c->o->utc)
		return conv_begin_named(c, l, kind, iv->start, iv->cpu, e->name, e->pid, iv->tid, w, ts);
	if (!conv_named_wanted(c, kind, iv->start, e->name, e->pid))
		return 0;
	l->n = 0;
	evtw_time_ns_memo(l, &c->ttmemo, iv->start);
	evtw_ch(l, '\t');
	evtw_str(l, kind);
	evtw_ch(l, '\t');
	evtw_i64(l, iv->cpu);
	evtw_ch(l, '\t');
	evtw_mem_pad(l, e->ids, e->nids, sizeof e->ids);
	evtw_ch(l, '\t');
	if (w == 0)
		evtw_ch(l, '0');
	else
		evtw_weight_ns(l, w);
	return 1;
}

static void
waker_attrs(struct conv *c, struct evtw_line *l, const struct tt_iv *iv, uint64_t ts)
{
	evtw_key(l, "ready_ms");
	evtw_time_ns_memo(l, &c->ttmemo, iv->ready_ns);
	if (iv->waker_tid >= 0) {
		const struct tcache *w = thread_process(c, iv->waker_tid, ts);
		evtw_kv_i(l, "waker_tid", iv->waker_tid);
		evtw_kv_i(l, "waker_pid", w->pid);
		/* the escaped name begins the cached columns, up to their first tab */
		const char *tab = w->nids ? memchr(w->ids, '\t', w->nids) : NULL;
		if (tab) {
			evtw_key(l, "waker_process");
			evtw_mem_pad(l, w->ids, (size_t)(tab - w->ids), sizeof w->ids);
		} else
			evtw_kv_s(l, "waker_process", w->name);
	}
	evtw_kv_i(l, "waker_cpu", iv->waker_cpu);
	/* waker_in= and waker_routine= when the line is written: a DPC may still tell */
}

/* The waker_in= and waker_routine= attributes of a follower, as they are known now. */
void
conv_tt_waker_attrs(struct conv *c, struct evtw_line *l, const struct ttline *t, uint64_t ts)
{
	enum tt_waker_in in = t->win == TT_IN_PENDING ? TT_IN_THREAD : t->win;
	kv_word(l, "waker_in", in_names[in]);
	if (in != TT_IN_THREAD && t->routine) {
		char fbuf[2048];
		int flags = (c->o->full_paths ? FRAME_FULL_PATHS : 0) | FRAME_ADDRS;
		size_t n = images_frame(c->img, 0, t->routine, ts, flags, fbuf, sizeof fbuf, NULL, NULL);
		evtw_key(l, "waker_routine");
		evtw_esc(l, fbuf, n, 0);
	}
}

/* threadtime.c's resolve function: the follower waiting for TICKET learns its waker_in. */
static void
resolved(void *ctx, uint32_t ticket, enum tt_waker_in in, uint64_t routine)
{
	struct conv *c = ctx;
	struct ttfollow *f = NULL;
	uint32_t *seqp = hmap_get(&c->ttpend, ticket, 0);
	if (seqp) {
		uint64_t seq = (c->qtail & ~(uint64_t)0xffffffffu) | *seqp;
		if (seq >= c->qtail)
			seq -= (uint64_t)1 << 32;
		if (seq >= c->qhead && seq < c->qtail)
			f = &c->q[seq & (c->qcap - 1)].f;
		hmap_del(&c->ttpend, ticket, 0);
	} else
		f = &c->f;	/* not queued yet: the line being built */
	for (unsigned i = 0; i < f->n; i++)
		if (f->l[i].win == TT_IN_PENDING && f->l[i].ticket == ticket) {
			f->l[i].win = (uint8_t)in;
			f->l[i].routine = routine;
			f->npending--;
		}
}

/* A queued line's followers wait for their tickets (conv_finish). */
void
conv_tt_queued(struct conv *c, const struct ttfollow *f, uint64_t seq)
{
	for (unsigned i = 0; i < f->n; i++)
		if (f->l[i].win == TT_IN_PENDING)
			hmap_put(&c->ttpend, f->l[i].ticket, 0, (uint32_t)seq);
}

/* A line the window lets go while a follower still waits: written as thread, counted. */
void
conv_tt_unqueued(struct conv *c, struct ttfollow *f)
{
	for (unsigned i = 0; i < f->n; i++)
		if (f->l[i].win == TT_IN_PENDING) {
			hmap_del(&c->ttpend, f->l[i].ticket, 0);
			f->l[i].win = TT_IN_THREAD;
			c->tt_unresolved++;
		}
	f->npending = 0;
}

/* threadtime.c's emit function: the interval as a line following the current event's. */
static void
add_follower(void *ctx, const struct tt_iv *iv)
{
	struct conv *c = ctx;
	uint64_t ts = GBIAS + (uint64_t)iv->end;
	const struct tcache *e = thread_process(c, iv->tid, ts);
	if (c->f.n == TT_MAXF && c->tt_finishing)	/* the end of the trace: as many as threads */
		conv_write_followers(c, &c->f, "", 0);
	if (c->f.n == TT_MAXF) {
		c->tt_overflow++;
		return;
	}
	struct ttline *t = &c->f.l[c->f.n];
	struct evtw_line *l = &t->text;
	if (!begin_follower(c, l, iv, e, ts))
		return;
	evtw_key(l, "end_ms");
	evtw_time_ns_memo(l, &c->ttmemo, iv->end);
	evtw_key(l, "duration_us");
	evtw_us3(l, iv->end - iv->start);
	if (iv->kind == TT_READY)
		kv_word(l, "from", from_names[iv->from]);
	if (iv->kind == TT_WAITING) {
		kv_name(l, "wait_reason", iv->wait_reason, tt_wait_reason_name);
		kv_word(l, "wait_mode", iv->wait_mode == TT_UNKNOWN ? "unknown" :
		    iv->wait_mode ? "user" : "kernel");
		kv_name(l, "old_state", iv->old_state, tt_thread_state_name);
	}
	if (iv->prio >= 0)
		evtw_kv_i(l, "prio", iv->prio);
	if (iv->edge)
		kv_word(l, "edge", iv->edge == (TT_EDGE_START | TT_EDGE_END) ? "both" :
		    iv->edge == TT_EDGE_START ? "start" : "end");
	if (iv->readied)
		waker_attrs(c, l, iv, ts);
	/*
	 * A wait ends at the ReadyThread, but its line needs the switch-in's
	 * stack, so it is written with that later CSwitch: logged_ms= says
	 * when, and is the line's key in the stream's log order (evt-format §2.2).
	 */
	int64_t logged = (int64_t)(c->now - GBIAS);
	if (logged > iv->end) {
		evtw_key(l, "logged_ms");
		evtw_time_ns_memo(l, &c->ttmemo, logged);
	}

	c->f.n++;
	t->win = (uint8_t)iv->waker_in;
	t->routine = iv->waker_routine;
	t->ticket = iv->ticket;
	if (iv->readied && iv->waker_in == TT_IN_PENDING)
		c->f.npending++;
	t->wtid = (uint32_t)iv->tid;
	t->stack = (uint8_t)iv->switch_in;
	t->wstack = (uint8_t)iv->readied;
	t->pseudo = iv->kind == TT_RUNNING ? NULL : iv->pseudo;
}

void
conv_tt_init(struct conv *c)
{
	size_t n = c->ncur ? c->ncur : 1;
	c->first_old = xmalloc(n * sizeof *c->first_old);
	c->first_ts = xmalloc(n * sizeof *c->first_ts);
	for (size_t i = 0; i < n; i++)
		c->first_old[i] = -1;
}

/*
 * Pass 1 (global times): the earliest CSwitch of each CPU names what ran
 * before it; the longest DPC/ISR bounds how long a wait's waker may be
 * unknown.
 */
void
conv_tt_learn(struct conv *c, const struct etl_event *ev)
{
	if (ev->group == 15) {
		int intr = (ev->type >= 66 && ev->type <= 69) || ev->type == 50;
		if (!intr || ev->plen < 8 + c->P)
			return;
		uint64_t initial = gts(c, etl_u64(ev->payload));
		/* an impossible InitialTime (emit_dpc_isr skips those) bounds nothing */
		if (initial <= ev->ts && ev->ts - initial <= 60 * 1000000000ULL &&
		    (int64_t)(ev->ts - initial) > c->tt_max_intr)
			c->tt_max_intr = (int64_t)(ev->ts - initial);
		return;
	}
	if (ev->plen < 24 || (size_t)ev->cpu >= c->ncur)
		return;
	int64_t ts = (int64_t)(ev->ts - GBIAS);
	if (c->first_old[ev->cpu] < 0 || ts < c->first_ts[ev->cpu]) {
		c->first_old[ev->cpu] = etl_u32(ev->payload + 4);
		c->first_ts[ev->cpu] = ts;
	}
}

/* After pass 1: thread time, if wanted and the trace has context switches. */
void
conv_tt_start(struct conv *c)
{
	int any = 0;
	for (size_t i = 0; i < c->ncur; i++)
		any |= c->first_old[i] >= 0;
	if (!any || c->o->no_thread_time || !c->have_ts)
		return;
	c->tcache = xcalloc(TCACHE, sizeof *c->tcache);
	c->tt_gen = 1;
	c->tt = tt_new((unsigned)c->ncur, (int64_t)(c->min_ts - GBIAS), (int64_t)(c->max_ts - GBIAS),
	    c->tt_max_intr, add_follower, resolved, c);
	hmap_init(&c->ttpend);
	for (size_t i = 0; i < c->ncur; i++)
		if (c->first_old[i] >= 0)
			tt_learn_first(c->tt, (int)i, c->first_ts[i], (uint32_t)c->first_old[i]);
	tt_start(c->tt);
}

/*
 * The thread running on CPU: the last CSwitch's new thread, or before the
 * CPU's first CSwitch its old thread; -1 when the CPU has none.
 */
int64_t
conv_tt_waker(const struct conv *c, int cpu)
{
	if (cpu < 0 || (size_t)cpu >= c->ncur)
		return -1;
	return c->cur_tid[cpu] >= 0 ? c->cur_tid[cpu] : c->first_old[cpu];
}

/* The end of pass 2 (the window flushed): the intervals still open end at the last event. */
void
conv_tt_finish(struct conv *c)
{
	if (!c->tt)
		return;
	tt_resolve_all(c->tt);
	conv_flush_window(c, 1);
	c->tt_finishing = 1;
	tt_finish(c->tt);
	conv_write_followers(c, &c->f, "", 0);
}

void
conv_tt_report(struct conv *c)
{
	if (!c->tt)
		return;
	for (int a = 0; a < TT_A_N; a++)
		evtw_skipped(c->ob, "threadtime", tt_anomalies(c->tt, a), tt_anomaly_detail(a));
	evtw_skipped(c->ob, "threadtime", c->tt_unresolved, "waits whose DPC/ISR waker was not known "
	    "when the reorder window let their line go (written waker_in=thread)");
	evtw_skipped(c->ob, "threadtime", c->tt_overflow, "thread-time lines past the limit per event");
}

void
conv_tt_free(struct conv *c)
{
	if (c->tt)
		hmap_free(&c->ttpend);
	free(c->tcache);
	tt_free(c->tt);
	free(c->first_old);
	free(c->first_ts);
	for (int i = 0; i < TT_MAXF; i++)
		free(c->f.l[i].text.b);
	evtw_free(&c->ttout);
}
