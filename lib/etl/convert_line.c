/*
 * convert_line.c - pass 2's lines.  conv_begin() applies the filters and
 * writes the fixed columns, a decoder adds the attributes, conv_finish()
 * writes the line, or keeps it in a window (its text in one ring of
 * bytes) while it waits for its stack records (conv_attach_stack), so
 * that the output stays in time order.
 * The stack column is images_stack_text()'s (lib/etl/images.c keeps the
 * texts of recent stacks and frames).  The thread-time lines an event ends
 * (convert_tt.c) follow its line, take its stack, and may keep it in the
 * window until their waker is known; a line a filter dropped is still
 * built, "silent", when thread time needs its stack.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "etl/convert_int.h"

/* Whether KIND's first LEN bytes are WANT's (KIND may be shorter: its NUL differs). */
static int
kind_starts(const char *kind, const char *want, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (kind[i] != want[i])
			return 0;
	return 1;
}

static int
kind_wanted(const struct conv *c, const char *kind)
{
	if (!c->nkinds)
		return 1;
	for (size_t i = 0; i < c->nkinds; i++) {
		/* (asked of every event: most differ in their first byte, a "*" matches any) */
		const char *k = c->kinds[i];
		if (k[0] != kind[0] && k[0] != '*')
			continue;
		/* "FileIo*" style prefixes; else the whole name, its NUL too */
		size_t kl = c->kindlen[i];
		if (kind_starts(kind, k, kl) && (c->kindprefix[i] || kind[kl] == '\0'))
			return 1;
	}
	return 0;
}

static int
proc_wanted(const struct conv *c, const char *name, int64_t pid)
{
	if (!c->nprocs)
		return 1;
	for (size_t i = 0; i < c->nprocs; i++) {
		char *end;
		long v = strtol(c->procs[i], &end, 10);
		if (*end == '\0' && end != c->procs[i]) {
			if (v == pid)
				return 1;
		} else if (strcasecmp(c->procs[i], name) == 0)
			return 1;
		else {
			/* "app" matches "app.exe" */
			size_t pl = strlen(c->procs[i]);
			if (strncasecmp(c->procs[i], name, pl) == 0 && name[pl] == '.')
				return 1;
		}
	}
	return 0;
}

const char *
conv_process_name(const struct conv *c, int64_t pid, uint64_t ts)
{
	if (pid < 0)
		return "?";
	return images_process_name(c->img, (uint32_t)pid, ts);
}

/*
 * The thread whose stack an event's records carry: the thread that logged
 * it.  A header with a thread names it (ThreadStart is logged by the
 * creator, ImageLoad by the loading thread, ProcessStart by the parent);
 * a thread-less header (PERFINFO: samples, context switches, disk
 * completions) leaves it to the decoder, or to the line's thread column.
 */
static int64_t
join_tid(const struct conv *c, int64_t line_tid)
{
	const struct etl_event *ev = c->cur_ev;
	if (ev && ev->tid != ETL_NO_ID)
		return (int64_t)ev->tid;
	return line_tid;
}

/*
 * The key a line and its stack records meet on: the thread, and the time
 * (the second half of the map's key).  Thread 0 is every CPU's idle
 * thread, and idle samples on two CPUs can share a tick: its records are
 * logged on the CPU of their event, which tells them apart.  Another
 * thread's records need not be: a user part logged when the thread goes
 * back to user mode may come on the CPU it moved to (at least 309 of
 * the 9,359 joins of net.4.5.2.x64).  So pass 2 cannot be split by CPU,
 * each core joining its CPUs' events alone, without losing those joins.
 */
static uint64_t
join_key(uint32_t tid, unsigned cpu)
{
	return tid ? tid : (uint64_t)1 << 32 | cpu;
}

static unsigned
cur_cpu(const struct conv *c)
{
	return c->cur_ev ? (unsigned)c->cur_ev->cpu : 0;
}

/* Forgets the keys of dropped events whose stacks can no longer come. */
static void
drop_expire(struct conv *c, int all)
{
	while (c->drophead < c->droptail) {
		const struct dropkey *d = &c->drop[c->drophead & (c->dropcap - 1)];
		if (!all && c->droptail - c->drophead < c->dropcap && d->ts + (uint64_t)QWIN_NS >= c->now)
			break;
		const uint32_t *v = hmap_get(&c->dropmap, d->key, d->ts);
		if (v && *v == (uint32_t)c->drophead)
			hmap_del(&c->dropmap, d->key, d->ts);
		c->drophead++;
	}
}

static void
drop_key(struct conv *c, uint32_t tid, uint64_t ts)
{
	uint64_t key = join_key(tid, cur_cpu(c));
	if (!c->dropcap) {
		c->dropcap = 1024;
		c->drop = xcalloc(c->dropcap, sizeof *c->drop);
	} else if (c->droptail - c->drophead == c->dropcap && c->dropcap < QCAP) {
		size_t ncap = c->dropcap * 2;
		struct dropkey *nd = xcalloc(ncap, sizeof *nd);
		for (uint64_t q = c->drophead; q < c->droptail; q++)
			nd[q & (ncap - 1)] = c->drop[q & (c->dropcap - 1)];
		free(c->drop);
		c->drop = nd;
		c->dropcap = ncap;
	}
	drop_expire(c, 0);
	c->drop[c->droptail & (c->dropcap - 1)] = (struct dropkey){ key, ts };
	hmap_put(&c->dropmap, key, ts, (uint32_t)c->droptail);
	c->droptail++;
	const uint32_t *li = conv_late_get(c, tid, ts);
	if (li)
		c->lates[*li].unselected = 1;
}

/*
 * Two events may share a key (thread and time).  Unfiltered, the later
 * one's line takes the key from a line still waiting for its stack
 * (conv_finish: the pending map's entry is replaced), and the records
 * that come next are the later line's.  A dropped event keeps that claim:
 * it takes the key from the waiting line all the same, so that the line
 * gets the stack it gets unfiltered (none), not the dropped event's.
 */
static void
take_claim(struct conv *c, uint32_t tid, uint64_t ts)
{
	uint64_t key = join_key(tid, cur_cpu(c));
	if (hmap_get(&c->pendmap, key, ts))
		hmap_del(&c->pendmap, key, ts);
}

/*
 * A filter dropped the current event: if its kind gets stacks, remember
 * it, so that its stack records count as not selected.  Both the logging
 * thread and the line's thread are remembered: they differ for events
 * logged in another thread's context.  Its line would have waited on the
 * logging thread's key (conv_finish), which it claims.
 */
static void
not_selected(struct conv *c, int64_t tid, uint64_t ts)
{
	if (c->nstackev == 0 || !c->cur_stacked)
		return;
	int64_t jt = join_tid(c, tid);
	if (jt >= 0) {
		take_claim(c, (uint32_t)jt, ts);
		drop_key(c, (uint32_t)jt, ts);
	}
	if (tid >= 0 && tid != jt)
		drop_key(c, (uint32_t)tid, ts);
}

/* Whether a stack record for (TID, TS) belongs to an event a filter dropped. */
static int
was_not_selected(const struct conv *c, uint32_t tid, unsigned cpu, uint64_t ts)
{
	if (hmap_get(&c->dropmap, join_key(tid, cpu), ts))
		return 1;
	const uint32_t *li = conv_late_get(c, tid, ts);
	return li && c->lates[*li].unselected;
}

void
conv_free_lines(struct conv *c)
{
	free(c->drop);
	hmap_free(&c->dropmap);
	evtw_free(&c->stackcol);
}

/* utc= with --utc, after the fixed columns */
static void
add_utc(struct conv *c, struct evtw_line *l, uint64_t ts)
{
	char u[32];
	etl_filetime_str(u, c->ft0 + (uint64_t)((int64_t)(ts - GBIAS) / 100));
	evtw_kv_s(l, "utc", u);
}

/* Writes the fixed columns of a line the filters kept (and utc= with --utc). */
static int
start_line(struct conv *c, struct evtw_line *l, const char *kind, int64_t time_ns, int cpu,
    const char *proc, int64_t pid, int64_t tid, int64_t weight_ns, uint64_t ts)
{
	evtw_begin(l, time_ns, kind, cpu, proc, pid, tid, weight_ns);
	if (c->o->utc)
		add_utc(c, l, ts);
	return 1;
}

/*
 * Starts a line.  Returns 0 when a filter drops the event (nothing is
 * written then).  TIME_NS is the time column (DPC/ISR: their start).
 */
int
conv_begin(struct conv *c, const char *kind, int64_t time_ns, int cpu, int64_t pid, int64_t tid,
    int64_t weight_ns, uint64_t ts)
{
	c->line_tid = tid;
	c->line_pid = pid;
	return conv_begin_line(c, &c->l, kind, time_ns, cpu, pid, tid, weight_ns, ts);
}

/*
 * conv_begin() into L (thread-time lines are built beside their event's).
 * Only an event's own line (L is c->l) counts the stack records of a
 * dropped event as not selected: a derived line has none.
 */
int
conv_begin_line(struct conv *c, struct evtw_line *l, const char *kind, int64_t time_ns, int cpu,
    int64_t pid, int64_t tid, int64_t weight_ns, uint64_t ts)
{
	int own = l == &c->l;

	if (!kind_wanted(c, kind) || time_ns < c->from_ns || time_ns > c->to_ns) {
		if (own)
			not_selected(c, tid, ts);
		return 0;
	}
	if (c->nprocs) {
		const char *proc = pid == 0 && tid == 0 ? "Idle" : conv_process_name(c, pid, ts);
		if (!proc_wanted(c, proc, pid)) {
			if (own)
				not_selected(c, tid, ts);
			return 0;
		}
	}
	/* the process column's text, escaped once when the process was named */
	const char *ptext = "Idle";
	size_t plen = 4;
	if (pid < 0) {
		ptext = "?";
		plen = 1;
	} else if (pid != 0 || tid != 0)
		ptext = images_process_text(c->img, (uint32_t)pid, ts, &plen);
	evtw_begin_escaped(l, time_ns, kind, cpu, ptext, plen, pid, tid, weight_ns);
	if (c->o->utc)
		add_utc(c, l, ts);
	return 1;
}

/* Whether -k keeps lines of KIND (thread time asks before it derives its lines). */
int
conv_kind_wanted(const struct conv *c, const char *kind)
{
	return kind_wanted(c, kind);
}

/* Whether the filters keep a line of KIND at TIME_NS in process PROC (PID). */
int
conv_named_wanted(const struct conv *c, const char *kind, int64_t time_ns, const char *proc,
    int64_t pid)
{
	if (time_ns < c->from_ns || time_ns > c->to_ns)
		return 0;
	if (!c->nkinds && !c->nprocs)	/* (the common case, asked per thread-time line) */
		return 1;
	return kind_wanted(c, kind) && proc_wanted(c, proc, pid);
}

/* conv_begin_line() for a caller that knows the process name PROC already. */
int
conv_begin_named(struct conv *c, struct evtw_line *l, const char *kind, int64_t time_ns, int cpu,
    const char *proc, int64_t pid, int64_t tid, int64_t weight_ns, uint64_t ts)
{
	if (!conv_named_wanted(c, kind, time_ns, proc, pid))
		return 0;
	return start_line(c, l, kind, time_ns, cpu, proc, pid, tid, weight_ns, ts);
}

/*
 * Starts a line a filter dropped but whose stack thread time needs (its
 * followers, or a ReadyThread's waker stack): built, never written.
 */
void
conv_begin_silent(struct conv *c)
{
	if (!c->l.b)	/* (every line so far was dropped: it is copied from, as any line) */
		evtw_grow(&c->l, 64);
	c->l.n = 0;
	c->f.silent = 1;
}

/*
 * A follower's text into P, which has room for TEXT_PAD bytes past it:
 * most are under 128 bytes (Running and Ready lines), copied whole from
 * their buffer (convert_tt.c makes each with room of a kilobyte) in a few
 * wide moves rather than a call.
 */
static inline char *
put_text(char *p, const struct evtw_line *text)
{
	if (text->n <= 64)
		memcpy(p, text->b, 64);
	else if (text->n <= TEXT_PAD)
		memcpy(p, text->b, TEXT_PAD);
	else
		memcpy(p, text->b, text->n);
	return p + text->n;
}

char *
conv_put_follower(char *p, const struct evtw_line *text, int wstack, const char *a, size_t an,
    const char *w, size_t wn, const char *stack, size_t take, const char *pseudo, size_t pn)
{
#define STACK_KEY "\twaker_stack="
	static const char stack_key[16] = STACK_KEY;	/* (copied whole) */
	p = put_text(p, text);
	if (wstack) {
		if (an <= TT_ATTR_ROOM)
			memcpy(p, a, TT_ATTR_ROOM);
		else
			memcpy(p, a, an);
		p += an;
		if (wn) {
			memcpy(p, stack_key, sizeof stack_key);
			p += sizeof STACK_KEY - 1;
			memcpy(p, w, wn);
			p += wn;
		}
	}
	*p++ = '\t';	/* the stack column */
	if (take) {
		memcpy(p, stack, take);
		p += take;
		if (pn)
			*p++ = ';';
	}
	if (pn) {
		memcpy(p, pseudo, TT_PSEUDO_ROOM);
		p += pn;
	}
	*p++ = '\n';
	return p;
#undef STACK_KEY
}

/*
 * Writes F's lines: each one's text, its waker_in= (and waker_routine=)
 * and waker_stack= when it has them, and the stack column: STACK[0..N)
 * (the event's, as written) when the line takes it, then its
 * pseudo-frame.  Each line is put together in the output buffer, its
 * long parts (the text, the two stacks) copied once and its short ones
 * (the waker_in= word, the pseudo-frame) whole from room of a fixed
 * size: these lines are half of a context-switch trace's output, and a
 * copy by length is a call.
 */
void
conv_write_followers(struct conv *c, struct ttfollow *f, const char *stack, size_t n)
{
	struct outbuf *ob = c->ob;
	for (unsigned i = 0; i < f->n; i++) {
		const struct ttline *t = &f->l[i];
		c->events++;
		if (t->whole) {	/* a Running line: copied as it is */
			size_t room = t->text.n + TEXT_PAD;
			char *p = room <= ob->cap - ob->len ? ob->buf + ob->len : ob_reserve(ob, room);
			ob->len += (size_t)(put_text(p, &t->text) - p);
			continue;
		}
		size_t wn = 0, an = 0;
		const char *w = NULL, *a = NULL;
		if (t->wstack) {
			w = tt_waker_stack(c->tt, t->wtid, &wn);
			a = conv_tt_waker_attrs(c, t, c->now, &an);
		}
		size_t take = t->stack ? n : 0;
		/* (room for what is copied whole past the line's end: its last pieces') */
		size_t room = conv_follower_room(t->text.n, an, wn, take);
		char *p = room <= ob->cap - ob->len ? ob->buf + ob->len : ob_reserve(ob, room);
		char *end = conv_put_follower(p, &t->text, t->wstack, a, an, w, wn, stack, take,
		    t->pseudo, t->pseudo_n);
		ob->len += (size_t)(end - p);	/* (ob_commit's work) */
	}
	f->n = 0;
}

/*
 * The line being built waits for the stack records of thread TID's event,
 * if its kind ever gets any.  Returns the frames known now: none, they
 * come with the records.
 */
size_t
conv_stack_of(struct conv *c, uint32_t tid)
{
	if (!c->cur_stacked)
		return 0;
	c->want = 1;
	c->want_tid = tid;
	return 0;
}

/*
 * Writes a line: TEXT[0..TN), the attributes in c->stackcol[0..AN) that
 * the window added after it, its stack column (root first, then the
 * pseudo-frames LEAF[0..LN), if any) and the newline, each copied once
 * into the output: the stack's text from where images_stack_text() has
 * it (most are kept texts).  A stack with pseudo-frames is put together
 * in c->stackcol after those attributes.
 *
 * The column is named here, on the caller's thread, on purpose.  Handing
 * each stack to the output's writing thread as a record, to be named
 * there, took 5 of the 18 ms this thread spends in pass 2 on
 * net.4.5.2.x64 -k Sample, and the run was no faster (paired runs 0.99x
 * and 1.03x): in pass 2 the reader's worker and the writing thread then
 * share the other core, which is full, so the time only moved.
 */
static void
write_line(struct conv *c, const char *text, size_t tn, size_t an, uint32_t pid,
    const uint64_t *frames, size_t n, uint64_t ts, struct ttfollow *f, const char *leaf, size_t ln)
{
	int flags = (c->o->full_paths ? FRAME_FULL_PATHS : 0) | (c->o->addrs ? FRAME_ADDRS : 0);
	struct evtw_line *s = &c->stackcol;

	if (!s->b)	/* (the first line: a buffer to point into, even for no stack) */
		evtw_grow(s, 64);
	s->n = an;
	size_t cn;
	const char *col = images_stack_text(c->img, pid, frames, n, ts, flags, s, &cn);
	if (ln) {
		if (col != s->b + an) {	/* (a kept text: copied after the attributes) */
			s->n = an;
			evtw_mem(s, col, cn);
		}
		if (n)
			evtw_frame_sep(s);
		evtw_mem(s, leaf, ln);
		col = s->b + an;
		cn = s->n - an;
	}
	if (!f || !f->silent) {
		struct outbuf *ob = c->ob;
		size_t room = tn + an + cn + 2;
		char *p = room <= ob->cap - ob->len ? ob->buf + ob->len : ob_reserve(ob, room);
		memcpy(p, text, tn);
		memcpy(p + tn, s->b, an);
		p[tn + an] = '\t';
		memcpy(p + tn + an + 1, col, cn);
		p[room - 1] = '\n';
		ob->len += room;	/* (ob_commit's work) */
		c->events++;
	}
	if (!f)	/* (a waiting line without thread-time lines) */
		return;
	/* (the stack without its tab) */
	if (f->stash)
		conv_tt_stash(c, f->stash_tid, col, cn);
	if (f->nfeed)	/* (the writing thread makes their lines) */
		conv_tt_write_feeds(c, f, col, cn, !f->silent);
	else if (f->n)
		conv_write_followers(c, f, col, cn);
	f->silent = f->stash = 0;
}

/* Waiting line E's thread-time lines, NULL when no line waited with any. */
static struct ttfollow *
slot_follow(const struct conv *c, const struct pend *e)
{
	return c->fq ? &c->fq[e - c->q] : NULL;
}

/* Writes a waiting line with the stack it got (samples: kframes=, or nostack=1 and the IP). */
static void
flush_pend(struct conv *c, struct pend *e)
{
	struct ttfollow *f = slot_follow(c, e);
	if (f && f->npending)
		conv_tt_unqueued(c, f);
	if (e->want)
		hmap_del(&c->pendmap, e->jkey, e->ts);
	size_t nf = (size_t)e->nk + e->nu;
	const uint64_t *frames;
	if (e->nk && !e->nu)	/* one part (a Windows 7 record reaches user space): where it lies */
		frames = c->fring + (e->kpos & (c->frcap - 1));
	else if (e->nu && !e->nk)
		frames = c->fring + (e->upos & (c->frcap - 1));
	else {
		if (nf + 1 > c->capframes) {
			c->capframes = (nf + 1) * 2;
			c->frames = xrealloc(c->frames, c->capframes * sizeof *c->frames);
		}
		frames = c->frames;
		if (e->nk)
			memcpy(c->frames, c->fring + (e->kpos & (c->frcap - 1)), e->nk * sizeof *c->frames);
		if (e->nu)
			memcpy(c->frames + e->nk, c->fring + (e->upos & (c->frcap - 1)),
			    e->nu * sizeof *c->frames);
	}
	/* the attributes the line got while it waited, in the order they came */
	struct evtw_line *a = &c->stackcol;
	a->n = 0;
	if (e->clrstack)
		evtw_kv_u(a, "clrstack", 1);
	if (e->sample) {
		if (nf == 0) {
			/* no stack was recorded: the sampled address alone, as PerfView shows it */
			c->frames[0] = e->ip;
			nf = 1;
			evtw_kv_u(a, "nostack", 1);
		}
		evtw_kv_u(a, "kframes", conv_count_kernel(c, frames, nf));
	}
	const char *text = c->wtext + (e->toff & (c->wtcap - 1));
	write_line(c, text, e->tlen, a->n, e->pid, frames, nf, e->ts, f, text + e->tlen,
	    e->leaflen);
	c->wthead = e->toff + e->tlen + e->leaflen;
}

/*
 * A waiting line can go when it waits for nothing more: no stack wanted, or
 * its user part came (it comes last), or a kernel-only thread's kernel part
 * came, or pass 1 saw no later stack record (with a user part) for its
 * thread, or none of the thread's records came as long after its event.
 */
static int
pend_done(const struct conv *c, const struct pend *e)
{
	if (e->clr_wait && c->now <= e->ts + CLR_WAIT_NS)
		return 0;	/* a CLR event waits for its stack walk (convert_clr.c) */
	const struct ttfollow *f = slot_follow(c, e);
	if (f && f->npending)
		return 0;	/* a thread-time line waits to know whether a DPC readied it */
	if (!e->want)
		return 1;
	/* a sample taken in the kernel has a kernel part, which may come after the user part */
	int user_done = e->has_u && (e->has_k || !e->sample || !images_is_kernel(c->img, e->ip));
	if (e->late ? e->has_k && e->has_u : user_done || (e->has_k && (e->pid == 4 || e->pid == 0)))
		return 1;
	if (e->last == UINT32_MAX)
		return 1;
	const struct last_stack *l = &c->last[e->last];
	if (e->ts > l->any || (e->has_k && e->ts > l->user))
		return 1;
	uint64_t wait = l->maxlat;
	if (wait > LATE_NS && !c->late_overflow) {
		/* its late records (if any) are attached already, unless they were stack keys */
		const uint32_t *li = conv_late_get(c, e->tid, e->ts);
		wait = li && c->lates[*li].wait_us ? (uint64_t)c->lates[*li].wait_us * 1000 : LATE_NS;
	}
	return c->now > e->ts && c->now - e->ts > wait;	/* (no wrap-around on a wild delay) */
}

void
conv_flush_window(struct conv *c, int all)
{
	while (c->qhead < c->qtail) {
		struct pend *e = &c->q[c->qhead & (c->qcap - 1)];
		if (!all && !pend_done(c, e) && c->qtail - c->qhead <= QCAP &&
		    e->ts + (uint64_t)QWIN_NS >= c->now)
			break;
		flush_pend(c, e);
		c->qhead++;
	}
}

/*
 * The capacity a ring grows to (from FIRST when it has none yet) to hold
 * NEED: half again as much, in powers of two, so a burst does not make
 * it twice the window.
 */
static size_t
ring_cap(size_t cap, size_t first, size_t need)
{
	if (!cap)
		cap = first;
	while (cap < need / 2 * 3 + 64)
		cap *= 2;
	return cap;
}

/*
 * Moves the waiting lines' texts into a ring of CAP bytes, from its start
 * (the window is empty most of the time: a ring grown for a burst costs
 * its pages once).
 */
static void
window_relay(struct conv *c, size_t cap)
{
	char *nt = xmalloc(cap);
	uint64_t at = 0;
	for (uint64_t q = c->qhead; q < c->qtail; q++) {
		struct pend *e = &c->q[q & (c->qcap - 1)];
		size_t n = (size_t)e->tlen + e->leaflen;
		if (n)	/* (the first ring is NULL) */
			memcpy(nt + at, c->wtext + (e->toff & (c->wtcap - 1)), n);
		e->toff = at;
		at += n;
	}
	free(c->wtext);
	c->wtext = nt;
	c->wtcap = cap;
	c->wthead = 0;
	c->wttail = at;
}

/* Room for N bytes of a waiting line's text, in one piece: its position in the ring. */
static uint64_t
window_room(struct conv *c, size_t n)
{
	if (c->qhead == c->qtail) {
		/* an empty window starts both rings over: the bytes in use stay those a cache holds */
		c->wthead = c->wttail = 0;
		c->frtail = 0;
	}
	for (;;) {
		uint64_t at = c->wttail;
		size_t off = (size_t)(at & (c->wtcap - 1));
		if (c->wtcap && off + n > c->wtcap)
			at += c->wtcap - off;	/* (it would wrap: from the ring's start) */
		if (c->wtcap && at + n - c->wthead <= c->wtcap) {
			c->wttail = at + n;
			return at;
		}
		window_relay(c, ring_cap(c->wtcap, 1 << 16, (size_t)(c->wttail - c->wthead) + n));
	}
}

/*
 * Moves the waiting lines' frames into a ring of CAP frames, from its
 * start, each line's parts one after the other.
 */
static void
frames_relay(struct conv *c, size_t cap)
{
	uint64_t *nr = xmalloc(cap * sizeof *nr);
	uint64_t at = 0;
	for (uint64_t q = c->qhead; q < c->qtail; q++) {
		struct pend *e = &c->q[q & (c->qcap - 1)];
		e->fmark = at;
		if (e->nk)	/* (the first ring is NULL) */
			memcpy(nr + at, c->fring + (e->kpos & (c->frcap - 1)), e->nk * sizeof *nr);
		e->kpos = at;
		at += e->nk;
		if (e->nu)
			memcpy(nr + at, c->fring + (e->upos & (c->frcap - 1)), e->nu * sizeof *nr);
		e->upos = at;
		at += e->nu;
	}
	free(c->fring);
	c->fring = nr;
	c->frcap = cap;
	c->frtail = at;
}

/*
 * Whether K frames at AT (the ring's end, or a wrap's start) fit: past the
 * frames of the oldest waiting line, whose parts all came after it did.
 */
/* Where the frames still in use start: the oldest waiting line's (its parts all came after it did). */
static uint64_t
frames_head(const struct conv *c)
{
	return c->qhead < c->qtail ? c->q[c->qhead & (c->qcap - 1)].fmark : c->frtail;
}

static int
frames_fit(const struct conv *c, uint64_t at, size_t k)
{
	uint64_t head = frames_head(c);
	return c->frcap && (at & (c->frcap - 1)) + k <= c->frcap && at + k - head <= c->frcap;
}

/* Room for K frames in one piece at the ring's end: their position. */
static uint64_t
frames_room(struct conv *c, size_t k)
{
	for (;;) {
		uint64_t at = c->frtail;
		if (c->frcap && (at & (c->frcap - 1)) + k > c->frcap)
			at += c->frcap - (at & (c->frcap - 1));	/* (it would wrap: from the ring's start) */
		if (frames_fit(c, at, k)) {
			c->frtail = at + k;
			return at;
		}
		frames_relay(c, ring_cap(c->frcap, 1 << 12, (size_t)(c->frtail - frames_head(c)) + k));
	}
}

/*
 * Room for K more frames in waiting line E's kernel part (USER: its user
 * part): where to write them (a Stack record's or a CLR walk's frames go
 * there straight from the payload).  A part that grows grows where it is
 * when it ends the ring, else moves to its end.
 */
uint64_t *
conv_frames_grow(struct conv *c, struct pend *e, int user, size_t k)
{
	uint64_t *pos = user ? &e->upos : &e->kpos;
	uint32_t *n = user ? &e->nu : &e->nk;
	if (*n && *pos + *n == c->frtail && frames_fit(c, *pos, *n + k))
		c->frtail += k;
	else {
		uint64_t at = frames_room(c, *n + k);	/* (*pos may move: the ring may grow) */
		if (*n)
			memcpy(c->fring + (at & (c->frcap - 1)), c->fring + (*pos & (c->frcap - 1)),
			    *n * sizeof *c->fring);
		*pos = at;
	}
	uint64_t *to = c->fring + ((*pos + *n) & (c->frcap - 1));
	*n += (uint32_t)k;
	return to;
}

/* Appends K frames to waiting line E's kernel part (USER: its user part). */
void
conv_frames_put(struct conv *c, struct pend *e, int user, const uint64_t *src, size_t k)
{
	uint64_t *to = conv_frames_grow(c, e, user, k);
	if (k)
		memcpy(to, src, k * sizeof *src);
}

static struct pend *
queue_push(struct conv *c)
{
	if (c->qtail - c->qhead == c->qcap) {
		/*
		 * Grow the ring, keeping each entry at sequence & (cap - 1).  It
		 * starts small and grows to what the trace keeps waiting: each
		 * slot's thread-time lines own their buffers, and the lines go
		 * round every slot in turn, so a ring far larger than the window
		 * writes every line into a buffer no cache holds any more (1024
		 * slots: 12 MB, a third of thread time's cost).
		 */
		size_t ncap = c->qcap ? c->qcap * 2 : 16;
		struct pend *nq = xcalloc(ncap, sizeof *nq);
		/* every old slot (waiting or not: free slots keep their buffers) gets its own new one */
		for (uint64_t q = c->qhead; q < c->qhead + c->qcap; q++)
			nq[q & (ncap - 1)] = c->q[q & (c->qcap - 1)];
		free(c->q);
		c->q = nq;
		if (c->fq) {	/* (their thread-time lines alike) */
			struct ttfollow *nf = xcalloc(ncap, sizeof *nf);
			for (uint64_t q = c->qhead; q < c->qhead + c->qcap; q++)
				nf[q & (ncap - 1)] = c->fq[q & (c->qcap - 1)];
			free(c->fq);
			c->fq = nf;
		}
		c->qcap = ncap;
	}
	struct pend *e = &c->q[c->qtail & (c->qcap - 1)];
	c->qtail++;
	e->nk = e->nu = 0;
	e->fmark = c->frtail;
	e->has_k = e->has_u = 0;
	e->want = e->sample = 0;
	e->late = 0;
	e->clr_wait = 0;
	e->clrstack = 0;
	struct ttfollow *f = slot_follow(c, e);
	if (f) {
		f->n = 0;
		f->npending = 0;
		f->silent = f->stash = 0;
	}
	return e;
}

/*
 * The thread-time lines go with the line into its window slot E: the
 * slot's buffers and the line's trade places, for the lines in use only
 * (each entry owns its buffer; the whole struct is a kilobyte a switch).
 */
static void
follow_into_slot(struct conv *c, struct pend *e)
{
	if (!c->fq)	/* (the first line to wait with thread-time lines) */
		c->fq = xcalloc(c->qcap, sizeof *c->fq);
	struct ttfollow *from = &c->f, *to = slot_follow(c, e);
	for (unsigned i = 0; i < from->n; i++) {
		/* the buffers trade places; the rest is plain data, copied one way */
		struct evtw_line text = to->l[i].text;
		to->l[i] = from->l[i];
		from->l[i].text = text;
	}
	/* n, npending, silent, stash and stash_tid: one move */
	_Static_assert(offsetof(struct ttfollow, stash_tid) == offsetof(struct ttfollow, n) + 4,
	    "struct ttfollow's counts and flags lie together");
	memcpy(&to->n, &from->n, 4 + sizeof to->stash_tid);
	to->nemit = from->nemit;
	to->nfeed = from->nfeed;
	for (unsigned i = 0; i < from->nfeed; i++)	/* (one, or two) */
		to->feed[i] = from->feed[i];
	from->n = 0;
	from->npending = 0;
	from->silent = from->stash = 0;
	from->nemit = from->nfeed = 0;
	if (to->npending)
		conv_tt_queued(c, to, c->qtail - 1);
}

/*
 * Ends the line started by conv_begin(): written now, or kept in the window
 * when conv_stack_of() asked for a stack (or when earlier lines still wait,
 * so that the output stays in time order).  FRAMES, when given, are the
 * event's own stack (innermost first).
 */
void
conv_finish(struct conv *c, uint32_t pid, const uint64_t *frames, size_t n, uint64_t ts)
{
	if (!c->want && c->nstackev > 0 && c->cur_stacked) {
		/*
		 * The decoder asked for no stack, yet this kind gets stack records
		 * (image loads, thread and process starts...): the line waits for
		 * the logging thread's, and its frames are named in that
		 * thread's process.
		 */
		int64_t jt = join_tid(c, c->line_tid);
		if (jt >= 0) {
			c->want = 1;
			c->want_tid = (uint32_t)jt;
			const struct etl_event *ev = c->cur_ev;
			if (ev && ev->pid != ETL_NO_ID)
				pid = ev->pid;
			else if (pid == 0 && c->line_pid > 0)
				pid = (uint32_t)c->line_pid;
		}
	}
	int want = c->want && c->nstackev > 0;
	int sample = c->want_sample;
	int clr = c->want_clr;
	c->want = 0;
	c->want_sample = 0;
	if (!want && !sample && !clr && c->qhead == c->qtail && !c->f.npending) {
		if (c->clr_line)
			conv_clr_line(c, 0, 0);
		write_line(c, c->l.b, c->l.n, 0, pid, frames, n, ts, &c->f, c->leaf.b, c->leaf.n);
		c->leaf.n = 0;
		return;
	}
	/* the text and its leaf go into the ring before the slot is taken (the ring may move) */
	uint64_t at = window_room(c, c->l.n + c->leaf.n);
	char *t = c->wtext + (at & (c->wtcap - 1));
	memcpy(t, c->l.b, c->l.n);
	if (c->leaf.n)
		memcpy(t + c->l.n, c->leaf.b, c->leaf.n);
	struct pend *e = queue_push(c);
	e->toff = at;
	e->tlen = (uint32_t)c->l.n;
	e->leaflen = (uint32_t)c->leaf.n;
	c->l.n = 0;
	c->leaf.n = 0;
	if (c->f.n || c->f.silent || c->f.stash || c->f.nfeed)
		follow_into_slot(c, e);
	if (c->clr_line) {
		e->clr_wait = (uint8_t)clr;
		conv_clr_line(c, clr, c->qtail - 1);
	}
	e->ts = ts;
	e->pid = pid;
	e->tid = c->want_tid;
	if (clr && !want)
		e->tid = c->clr_tid;
	e->sample = (uint8_t)sample;
	e->ip = c->want_ip;
	if (frames && n) {
		conv_frames_put(c, e, 0, frames, n);
		e->has_k = e->has_u = 1;
	}
	if (want) {
		e->want = 1;
		/* (looked up once: pend_done() asks each time the window moves) */
		const uint32_t *li = hmap_get(&c->lastmap, e->tid, 0);
		e->last = li ? *li : UINT32_MAX;
		e->jkey = join_key(e->tid, cur_cpu(c));
		hmap_put(&c->pendmap, e->jkey, ts, (uint32_t)(c->qtail - 1));
		if (c->nlate)
			conv_apply_late(c, e);
	}
	conv_flush_window(c, 0);
}

/*
 * A Stack record's NF frames (at FP, innermost first) join waiting line
 * E: written straight into the part it lacks, kernel or user by the
 * innermost frame.
 */
static void
attach_record(struct conv *c, struct pend *e, const uint8_t *fp, size_t nf)
{
	int kernel = images_is_kernel(c->img, ptr_at(c, fp));
	if (kernel ? e->has_k : e->has_u) {
		c->dup_stacks++;	/* its event has this part already */
		return;
	}
	uint64_t *to = conv_frames_grow(c, e, !kernel, nf);
	for (size_t i = 0; i < nf; i++)
		to[i] = ptr_at(c, fp + i * c->P);
	if (kernel) {
		e->has_k = 1;
		/* one record from the kernel out to user space (Windows 7): the whole stack */
		if (!images_is_kernel(c->img, to[nf - 1]))
			e->has_u = 1;
	} else
		e->has_u = 1;
	c->joined++;
}

/* Pass 2: a Stack or StackKey record joins the line it belongs to. */
void
conv_attach_stack(struct conv *c, const struct etl_event *ev)
{
	const uint8_t *p = ev->payload;
	uint32_t n = ev->plen;
	if (n < 16 + c->P) {
		c->skipped_events++;	/* too short to name its event */
		return;
	}
	uint32_t tid = etl_u32(p + 12);
	uint64_t ts = gts(c, etl_u64(p));
	if (conv_applied_late(c, ev, tid, ts))
		return;
	uint32_t *seqp = hmap_get(&c->pendmap, join_key(tid, (unsigned)ev->cpu), ts);
	struct pend *e = NULL;
	if (seqp) {
		/* the map holds the low 32 bits of the sequence; the window is far smaller */
		uint64_t seq = (c->qtail & ~(uint64_t)0xffffffffu) | *seqp;
		if (seq >= c->qtail)
			seq -= (uint64_t)1 << 32;
		if (seq >= c->qhead && seq < c->qtail)
			e = &c->q[seq & (c->qcap - 1)];
	}
	if (!e) {
		if (was_not_selected(c, tid, (unsigned)ev->cpu, ts))
			c->unselected++;
		else
			c->unmatched++;
		return;
	}
	if (ev->type == 32) {
		attach_record(c, e, p + 16, (n - 16) / c->P);
		conv_flush_window(c, 0);
		return;
	}
	const struct keydef *d = conv_resolve_key(c, ptr_at(c, p + 16), ev->ts, (uint32_t)ev->cpu,
	    c->cur_seq);
	if (!d) {
		c->unresolved++;
		return;
	}
	const uint64_t *f = c->fr + d->idx;
	size_t nf = d->len;
	int kernel = ev->type == 37;
	if (kernel && !e->has_k) {
		conv_frames_put(c, e, 0, f, nf);
		e->has_k = 1;
		c->joined++;
	} else if (!kernel && !e->has_u) {
		conv_frames_put(c, e, 1, f, nf);
		e->has_u = 1;
		c->joined++;
	} else
		c->dup_stacks++;	/* its event has this part already */
	conv_flush_window(c, 0);
}

