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
 * records came.  Thread time is on when the trace has CSwitch events,
 * --no-thread-time is not given and -k keeps one of the three kinds.
 *
 * These lines are as many as all the others of a context-switch trace,
 * and cost as much to make: their columns are copied from texts kept per
 * thread (its process columns, its attributes as a waker), per wait
 * (reason, mode, state) and per time, or made in place (struct ttstate).
 * Unfiltered, into a file or a device, they are made on the output's
 * writing thread instead (struct ttwriter), by a machine of its own: the
 * caller's thread passes each event's inputs to it with the event's line
 * (struct ttfeed), in the output stream (ob_write_through,
 * lib/base/outbuf.h), and its own machine runs only to tell what that
 * thread cannot know (a DPC's routine, a waker still pending), or not at
 * all when the trace has no DPC or ISR records (c->tt_solo).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/outbuf.h"
#include "base/strbuf.h"
#include "etl/convert_int.h"

/*
 * A word of this file's own ("Running", "readied"...) and its length:
 * none has a byte evt-format §4 escapes.  Kept in room of a fixed size,
 * copied whole (a few wide moves, not a call for a length only known at
 * run time).
 */
struct word { char s[16]; uint8_t n; };
#define WORD(lit) { lit, sizeof lit - 1 }
static const struct word kind_words[] = { [TT_RUNNING] = WORD("Running"),
    [TT_READY] = WORD("Ready"), [TT_WAITING] = WORD("Waiting") };
static const struct word from_words[] = { [TT_FROM_READIED] = WORD("readied"),
    [TT_FROM_PREEMPTED] = WORD("preempted"), [TT_FROM_UNKNOWN] = WORD("unknown") };
static const struct word edge_words[] = { [TT_EDGE_START] = WORD("start"),
    [TT_EDGE_END] = WORD("end"), [TT_EDGE_START | TT_EDGE_END] = WORD("both") };

/*
 * The texts thread-time lines copy rather than make: these lines are as
 * many as all others in a context-switch trace, and each is a dozen
 * columns, so what each column costs counts.
 */
#define TCACHE 1024
#define TCACHE_IDS 96	/* "process<TAB>pid<TAB>tid", as written (0: too long, written each time) */
#define TCACHE_WAKER 128	/* "\twaker_tid=..\twaker_pid=..\twaker_process=.." (0: too long) */
#define WAITS 64
#define CPU_TIMES 64		/* (by CPU number, and by thread id below: a slot is a memo) */
#define THREAD_TIMES 1024
#define WAIT_TEXT 120	/* the longest: three keys (35 bytes) and names of under 30 */
struct ttstate {
	/* thread -> process, valid while c->tt_gen (thread/process events) holds */
	struct tcache {
		uint32_t tid;
		int64_t pid;
		const char *name;
		uint64_t gen;
		uint8_t nids, nname;	/* the columns' length (0: too long), the escaped name's */
		uint8_t nwaker;
		char ids[TCACHE_IDS];
		char waker[TCACHE_WAKER];	/* the thread as a waker */
	} tcache[TCACHE], idle, unknown;
	/*
	 * Times as the time column writes them, kept where the next line
	 * that writes the same time finds them: a context switch's lines
	 * write its time three times (Running's end, Waiting's logged_ms=,
	 * Ready's end) and the ReadyThread's three times; a Running line
	 * starts where its CPU's last one ended, a Waiting or preempted
	 * Ready line where its thread's last Running line ended.  A slot
	 * holds one time; its text is right whoever asks for that time.
	 */
	struct timetext {
		int64_t ns;
		uint8_t len;	/* 0: empty */
		char text[32];	/* (copied whole: a few wide moves) */
	} now, ready, cpu_end[CPU_TIMES], thread_end[THREAD_TIMES];
	/* a Waiting line's wait_reason=, wait_mode= and old_state=, by the three values */
	struct waittext {
		uint32_t key;	/* the values, and 1 << 24 once made */
		uint8_t len;
		char text[WAIT_TEXT];
	} wait[WAITS];
	/*
	 * No -k, -p or time range, no --utc: every line is kept, and its
	 * columns are copied (the test once, not per line).
	 */
	int unfiltered;
};

/*
 * E's "process<TAB>pid<TAB>tid" as evtw_begin() writes them, and its
 * waker_tid=, waker_pid= and waker_process= attributes, each when it
 * fits (the length 0 otherwise).
 */
static void
cache_ids(struct tcache *e)
{
	struct evtw_line s = { 0 };
	evtw_esc(&s, e->name, strlen(e->name), 0);
	size_t nname = s.n;
	evtw_ch(&s, '\t');
	evtw_i64(&s, e->pid);
	evtw_ch(&s, '\t');
	evtw_u64(&s, e->tid);
	e->nids = s.n <= sizeof e->ids ? (uint8_t)s.n : 0;
	e->nname = e->nids ? (uint8_t)nname : 0;
	if (e->nids)
		memcpy(e->ids, s.b, s.n);
	s.n = 0;
	evtw_kv_u(&s, "waker_tid", e->tid);
	evtw_kv_i(&s, "waker_pid", e->pid);
	evtw_kv_s(&s, "waker_process", e->name);
	e->nwaker = s.n <= sizeof e->waker ? (uint8_t)s.n : 0;
	if (e->nwaker)
		memcpy(e->waker, s.b, s.n);
	evtw_free(&s);
}

/* A thread's entry made anew: what it was for is out of date. */
static void
fill_tcache(const struct images *img, uint64_t gen, struct tcache *e, uint32_t tid, uint64_t ts)
{
	e->gen = gen;
	e->tid = tid;
	e->pid = images_thread_pid(img, tid, ts);
	e->name = e->pid < 0 ? "?" : images_process_name(img, (uint32_t)e->pid, ts);
	cache_ids(e);
}

/*
 * The process of thread TID now, its name, and the columns they make:
 * kept in S per thread until a thread or process starts or ends (GEN,
 * c->tt_gen), since every Running, Ready and Waiting line asks, and they
 * are as many as all other lines.  Pass 1's model is read, never
 * changed, so the writing thread's state (struct ttwriter) asks too.
 */
static inline const struct tcache *
thread_process(struct ttstate *s, const struct images *img, uint64_t gen, int64_t tid,
    uint64_t ts)
{
	if (tid <= 0)
		return tid == 0 ? &s->idle : &s->unknown;
	/* (Windows' thread ids are multiples of 4) */
	struct tcache *e = &s->tcache[((uint32_t)tid >> 2) % TCACHE];
	if (e->gen != gen || e->tid != (uint32_t)tid)
		fill_tcache(img, gen, e, (uint32_t)tid, ts);
	return e;
}

/*
 * A follower's text is written through a pointer into room taken once:
 * its parts are bounded (the fixed columns with the cached thread columns
 * about 200 bytes, each attribute under 120, a wait reason's or state's
 * name under 30), and a length kept in the line would be reloaded after
 * every byte stored through it (evtwrite.h, evtw_room).  These lines are
 * as many as all others in a context-switch trace, so each piece counts.
 */
#define FOLLOWER_ROOM 1024

static inline char *
put(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* "\tKEY=", KEY a string literal */
#define PUT_KEY(o, key) put((o), "\t" key "=", sizeof key + 1)

static inline char *
put_word(char *o, const struct word *w)
{
	memcpy(o, w->s, sizeof w->s);
	return o + w->n;
}

/*
 * S[0..N) from room of PAD bytes (PAD a constant, at least 64): copied
 * whole, but only as much of the room as N needs of 32, 64 or PAD (most
 * thread columns fit in 32 bytes, most waker and wait texts in 64).
 */
static inline char *
put_padded(char *o, const char *s, size_t n, size_t pad)
{
	if (n <= 32)
		memcpy(o, s, 32);
	else if (n <= 64)
		memcpy(o, s, 64);
	else
		memcpy(o, s, pad);
	return o + n;
}

/*
 * 0 to 999 as text, two ways: zero-padded to 3 digits with the number of
 * trailing zeros (3 for "000"), and without leading zeros with the number
 * of digits.  The fractions of times and durations are made of two
 * zero-padded groups and a weight's trailing zeros are known rather than
 * counted back; a number under 1000 is its plain text, copied whole (4
 * bytes: the byte past the digits is written over next) with no branch
 * on its number of digits (CPUs, priorities and durations vary from line
 * to line: such a branch is mispredicted often).  These numbers are a
 * third of a thread-time line's making.
 */
struct digits3 {
	char plain[3];	/* "7", "42", "123" (then zeros) */
	uint8_t ndigits;
	char padded[3];	/* "007", "042", "123" */
	uint8_t tz;	/* trailing zeros of padded */
};
#define D3_DIGIT(d) ((char)('0' + (d)))
#define D3(a, b, c) { \
	{ D3_DIGIT((a) ? (a) : (b) ? (b) : (c)), (a) || (b) ? D3_DIGIT((a) ? (b) : (c)) : 0, \
	    (a) ? D3_DIGIT(c) : 0 }, \
	(a) ? 3 : (b) ? 2 : 1, \
	{ D3_DIGIT(a), D3_DIGIT(b), D3_DIGIT(c) }, \
	(c) ? 0 : (b) ? 1 : (a) ? 2 : 3 }
#define D3_10(a, b) D3(a, b, 0), D3(a, b, 1), D3(a, b, 2), D3(a, b, 3), D3(a, b, 4), \
	D3(a, b, 5), D3(a, b, 6), D3(a, b, 7), D3(a, b, 8), D3(a, b, 9)
#define D3_100(a) D3_10(a, 0), D3_10(a, 1), D3_10(a, 2), D3_10(a, 3), D3_10(a, 4), \
	D3_10(a, 5), D3_10(a, 6), D3_10(a, 7), D3_10(a, 8), D3_10(a, 9)
static const struct digits3 digits3[1000] = { D3_100(0), D3_100(1), D3_100(2), D3_100(3),
    D3_100(4), D3_100(5), D3_100(6), D3_100(7), D3_100(8), D3_100(9) };

/* V < 1000 as 3 digits, zero-padded (and a byte of no meaning after them) */
static inline char *
put3(char *o, unsigned v)
{
	memcpy(o, (const char *)&digits3[v] + offsetof(struct digits3, padded), 4);	/* (and tz) */
	return o + 3;
}

/* V < 1000 in decimal, no leading zeros (and bytes of no meaning after them) */
static inline char *
put_u3(char *o, unsigned v)
{
	memcpy(o, &digits3[v], 4);	/* (plain and ndigits) */
	return o + digits3[v].ndigits;
}

/*
 * V in decimal (evt_format_u64's text): the numbers of these lines (CPUs,
 * priorities, milliseconds since the trace start, microseconds) are
 * mostly under 10^6, made here in a few moves; larger ones by the call.
 */
static inline char *
put_u(char *o, uint64_t v)
{
	if (v < 1000)
		return put_u3(o, (unsigned)v);
	if (v < 1000000) {
		unsigned hi = (unsigned)v / 1000;
		return put3(put_u3(o, hi), (unsigned)v - hi * 1000);
	}
	return o + evt_format_u64(o, v);
}

/* evtw_put_i64's text */
static inline char *
put_i(char *o, int64_t v)
{
	return v >= 0 ? put_u(o, (uint64_t)v) : evtw_put_i64(o, v);
}

/* a point and D < 10^6 as 6 digits, zero-padded */
static inline char *
put_frac6(char *o, unsigned d)
{
	unsigned hi = d / 1000;
	o[0] = '.';
	put3(o + 1, hi);
	put3(o + 4, d - hi * 1000);
	return o + 7;
}

/*
 * NS as the time column writes it (evt_format_time_ns's text: the ms,
 * then 6 digits), made in place: a few multiplications, cheaper than
 * looking the text up in a memo of recent times, which missed one time in
 * three and then cost three times as much.
 */
static inline char *
put_time(char *o, int64_t ns)
{
	if (ns < 0)
		return o + evt_format_time_ns(o, ns);
	o = put_u(o, (uint64_t)ns / 1000000);
	return put_frac6(o, (unsigned)((uint64_t)ns % 1000000));
}

/* NS's time text made into O and kept in slot K */
static inline char *
put_time_keep(struct timetext *k, char *o, int64_t ns)
{
	char *e = put_time(o, ns);
	k->ns = ns;
	k->len = (uint8_t)(e - o);
	memcpy(k->text, o, sizeof k->text);	/* (bytes past the text: the line's room) */
	return e;
}

/*
 * NS's time text through slot K (then L, when not null): copied when the
 * slot holds it, else made and kept in K.
 */
static inline char *
put_time_kept(struct timetext *k, struct timetext *l, char *o, int64_t ns)
{
	if (k->ns == ns && k->len) {
		memcpy(o, k->text, sizeof k->text);
		return o + k->len;
	}
	if (l && l->ns == ns && l->len) {
		memcpy(o, l->text, sizeof l->text);
		return o + l->len;
	}
	return put_time_keep(k, o, ns);
}

/*
 * An interval of NS in its two forms, the weight column
 * (evt_format_weight_ns's text: ms, then up to 6 digits without trailing
 * zeros) and duration_us='s value (evtw_us3's text: us, a point and 3
 * digits), from one set of divisions.
 */
struct span {
	uint64_t ms, us;
	unsigned frac_us, frac_ns;	/* us % 1000, ns % 1000 */
	int plain;			/* 0 <= NS < 2^50: made here, else by the calls */
	int64_t ns;
};

static inline struct span
span_of(int64_t ns)
{
	struct span d = { .ns = ns, .plain = ns >= 0 && ns < (1LL << 50) };
	if (d.plain) {
		d.us = (uint64_t)ns / 1000;
		d.frac_ns = (unsigned)((uint64_t)ns - d.us * 1000);
		d.ms = d.us / 1000;
		d.frac_us = (unsigned)(d.us - d.ms * 1000);
	}
	return d;
}

static inline char *
put_weight(char *o, const struct span *d)
{
	if (!d->plain)
		return o + evt_format_weight_ns(o, d->ns);
	o = put_u(o, d->ms);
	if (d->frac_ns) {
		*o = '.';
		put3(o + 1, d->frac_us);
		put3(o + 4, d->frac_ns);
		return o + 7 - digits3[d->frac_ns].tz;
	}
	if (d->frac_us) {
		*o = '.';
		put3(o + 1, d->frac_us);
		return o + 4 - digits3[d->frac_us].tz;
	}
	return o;
}

/* evtw_us3's text of a span no struct span makes (negative, or of days) */
static char *
put_us3_long(char *o, int64_t ns)
{
	uint64_t u = (uint64_t)ns;
	if (ns < 0) {
		*o++ = '-';
		u = (uint64_t)(-(ns + 1)) + 1;
	}
	o = put_u(o, u / 1000);
	*o = '.';
	return put3(o + 1, (unsigned)(u % 1000));
}

static inline char *
put_us3(char *o, const struct span *d)
{
	if (!d->plain)
		return put_us3_long(o, d->ns);
	o = put_u(o, d->us);
	*o = '.';
	return put3(o + 1, d->frac_ns);
}

/* a wait reason or thread state V by its name (NAME(V)), its number when it has none */
static char *
put_name(char *o, unsigned v, const char *(*name)(unsigned))
{
	const char *s = v == TT_UNKNOWN ? "unknown" : name(v);
	return s ? put(o, s, strlen(s)) : o + evt_format_u64(o, v);
}

/*
 * A Waiting line's wait_reason=, wait_mode= and old_state=: made once per
 * three values (a trace has a handful of them) and then copied whole.
 */
static char *
put_wait(struct ttstate *s, char *o, const struct tt_iv *iv)
{
	uint32_t key = 1u << 24 | (uint32_t)iv->old_state << 16 | (uint32_t)iv->wait_mode << 8 |
	    iv->wait_reason;
	struct waittext *w = &s->wait[(iv->wait_reason ^ iv->old_state * 7u ^ iv->wait_mode * 31u) %
	    WAITS];
	if (w->key != key) {
		char *t = w->text;
		t = PUT_KEY(t, "wait_reason");
		t = put_name(t, iv->wait_reason, tt_wait_reason_name);
		t = PUT_KEY(t, "wait_mode");
		t = iv->wait_mode == TT_UNKNOWN ? put(t, "unknown", 7) :
		    iv->wait_mode ? put(t, "user", 4) : put(t, "kernel", 6);
		t = PUT_KEY(t, "old_state");
		t = put_name(t, iv->old_state, tt_thread_state_name);
		w->len = (uint8_t)(t - w->text);
		w->key = key;
	}
	return put_padded(o, w->text, w->len, sizeof w->text);
}

/*
 * The waker's attributes known when the wait ends, from O in L; the
 * waker_in= and waker_routine= come when the line is written (a DPC may
 * still tell).  Returns where the text goes on.
 */
static char *
put_waker(struct ttstate *s, const struct images *img, uint64_t gen, struct evtw_line *l, char *o,
    const struct tt_iv *iv, uint64_t ts)
{
	o = PUT_KEY(o, "ready_ms");
	o = put_time_kept(&s->ready, NULL, o, iv->ready_ns);
	if (iv->waker_tid >= 0) {
		const struct tcache *w = thread_process(s, img, gen, iv->waker_tid, ts);
		if (w->nwaker) {
			o = put_padded(o, w->waker, w->nwaker, sizeof w->waker);
		} else {
			/* a name too long for the cache: escaped, and the room taken again */
			l->n = (size_t)(o - l->b);
			evtw_kv_i(l, "waker_tid", iv->waker_tid);
			evtw_kv_i(l, "waker_pid", w->pid);
			evtw_kv_s(l, "waker_process", w->name);
			o = evtw_room(l, FOLLOWER_ROOM);
		}
	}
	o = PUT_KEY(o, "waker_cpu");
	return put_i(o, iv->waker_cpu);
}

/* The waker_in= attributes, by where the waker ran (conv_tt_waker_attrs, convert_int.h). */
const struct tt_attr conv_tt_in_attrs[TT_IN_PENDING] = {
	[TT_IN_THREAD] = WORD("\twaker_in=thread"),
	[TT_IN_DPC] = WORD("\twaker_in=dpc"),
	[TT_IN_ISR] = WORD("\twaker_in=isr"),
};

/*
 * conv_tt_waker_attrs() for a DPC's or ISR's waker whose routine is
 * known: waker_in= and waker_routine=, made in c->ttout.
 */
const char *
conv_tt_waker_routine(struct conv *c, const struct ttline *t, uint64_t ts, size_t *n)
{
	struct evtw_line *l = &c->ttout;
	char fbuf[2048];
	int flags = (c->o->full_paths ? FRAME_FULL_PATHS : 0) | FRAME_ADDRS;
	size_t fn = images_frame(c->img, 0, t->routine, ts, flags, fbuf, sizeof fbuf, NULL, NULL);
	l->n = 0;
	evtw_mem(l, conv_tt_in_attrs[t->win].s, conv_tt_in_attrs[t->win].n);
	evtw_key(l, "waker_routine");
	evtw_esc(l, fbuf, fn, 0);
	evtw_room(l, TT_ATTR_ROOM);	/* (what may be read past the text) */
	*n = l->n;
	return l->b;
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
			f = &c->fq[seq & (c->qcap - 1)];
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

static struct timetext *
cpu_slot(struct ttstate *s, int cpu)
{
	return &s->cpu_end[(unsigned)cpu % CPU_TIMES];
}

static struct timetext *
thread_slot(struct ttstate *s, int64_t tid)
{
	return &s->thread_end[((uint64_t)tid >> 2) % THREAD_TIMES];
}

/* Where IV's start time is likely kept: a Running line's CPU's, a thread's time off its own. */
static struct timetext *
start_slot(struct ttstate *s, const struct tt_iv *iv)
{
	return iv->kind == TT_RUNNING ? cpu_slot(s, iv->cpu) : thread_slot(s, iv->tid);
}

/*
 * conv_begin_named()'s bytes for IV into L, the thread's columns E
 * copied from the cache: where the line goes on.  Its start time is
 * likely kept in SLOT (or in ALSO).  Inlined in each kind's path, which
 * knows its kind and slots: a call here cost 1% of etl2evt.
 */
static inline __attribute__((always_inline)) char *
put_head(struct evtw_line *l, struct timetext *slot, struct timetext *also, const struct tt_iv *iv,
    const struct tcache *e, const struct span *span)
{
	l->n = 0;
	char *o = evtw_room(l, FOLLOWER_ROOM);
	o = put_time_kept(slot, also, o, iv->start);
	*o++ = '\t';
	o = put_word(o, &kind_words[iv->kind]);
	*o++ = '\t';
	o = put_i(o, iv->cpu);
	*o++ = '\t';
	o = put_padded(o, e->ids, e->nids, sizeof e->ids);
	*o++ = '\t';
	return put_weight(o, span);
}

/* end_ms= (its text kept in K) and duration_us=. */
static inline char *
put_end(char *o, struct timetext *k, const struct tt_iv *iv, const struct span *span)
{
	o = PUT_KEY(o, "end_ms");
	o = put_time_kept(k, NULL, o, iv->end);
	o = PUT_KEY(o, "duration_us");
	return put_us3(o, span);
}

/*
 * The attributes every kind may end with.  A wait ends at the
 * ReadyThread, but its line needs the switch-in's stack, so it is
 * written with that later CSwitch: logged_ms= (LOGGED) says when, and is
 * the line's key in the stream's log order (evt-format §2.2).
 */
static inline char *
put_prio_edge(char *o, const struct tt_iv *iv)
{
	if (iv->prio >= 0) {
		o = PUT_KEY(o, "prio");
		o = put_u(o, (uint64_t)iv->prio);
	}
	if (iv->edge) {
		o = PUT_KEY(o, "edge");
		o = put_word(o, &edge_words[iv->edge]);
	}
	return o;
}

static inline char *
put_logged(char *o, struct ttstate *s, const struct tt_iv *iv, int64_t logged)
{
	if (logged > iv->end) {
		o = PUT_KEY(o, "logged_ms");
		o = put_time_kept(&s->now, NULL, o, logged);
	}
	return o;
}

/*
 * A Running line into L, unfiltered, its thread's columns E cached: half
 * of all thread-time lines, made with none of the tests for the other
 * kinds' attributes.  Its start is where its CPU's last one ended, its
 * end the context switch's time; it is where its CPU's next one, and its
 * thread's time off, start.  It has no stack: it is made whole.  LOGGED:
 * when it is written (the event's time).
 */
static void
make_running(struct ttstate *s, struct evtw_line *l, const struct tt_iv *iv,
    const struct tcache *e, int64_t logged)
{
	struct span span = span_of(iv->end - iv->start);
	struct timetext *cs = cpu_slot(s, iv->cpu);

	char *o = put_head(l, cs, NULL, iv, e, &span);
	o = put_end(o, &s->now, iv, &span);
	*cs = s->now;
	*thread_slot(s, iv->tid) = s->now;
	o = put_prio_edge(o, iv);
	o = put_logged(o, s, iv, logged);
	*o++ = '\t';	/* (the empty stack column) */
	*o++ = '\n';
	l->n = (size_t)(o - l->b);
}

/*
 * A Ready line, unfiltered, its thread's columns cached (a quarter of
 * thread-time lines), the same way: no waker, no wait.  It starts where
 * its thread's last Running line ended (preempted) or at the ReadyThread.
 */
static void
make_ready(struct ttstate *s, struct evtw_line *l, const struct tt_iv *iv,
    const struct tcache *e, int64_t logged)
{
	struct span span = span_of(iv->end - iv->start);

	char *o = put_head(l, thread_slot(s, iv->tid), &s->ready, iv, e, &span);
	o = put_end(o, &s->now, iv, &span);
	o = PUT_KEY(o, "from");
	o = put_word(o, &from_words[iv->from]);
	o = put_prio_edge(o, iv);
	o = put_logged(o, s, iv, logged);
	l->n = (size_t)(o - l->b);
}

/* Any line past its columns (at O in L): its kind's attributes, made with S's texts. */
static void
put_rest(struct ttstate *s, const struct images *img, uint64_t gen, struct evtw_line *l, char *o,
    const struct tt_iv *iv, int64_t logged, uint64_t ts)
{
	struct span span = span_of(iv->end - iv->start);
	o = put_end(o, iv->kind == TT_WAITING ? &s->ready : &s->now, iv, &span);
	if (iv->kind == TT_RUNNING) {	/* where its CPU's next one, and its thread's time off, start */
		*cpu_slot(s, iv->cpu) = s->now;
		*thread_slot(s, iv->tid) = s->now;
	}
	if (iv->kind == TT_READY) {
		o = PUT_KEY(o, "from");
		o = put_word(o, &from_words[iv->from]);
	}
	if (iv->kind == TT_WAITING)
		o = put_wait(s, o, iv);
	o = put_prio_edge(o, iv);
	if (iv->readied)
		o = put_waker(s, img, gen, l, o, iv, ts);
	o = put_logged(o, s, iv, logged);
	l->n = (size_t)(o - l->b);
}

/* The line's fields conv_write_followers() reads, from IV. */
static void
set_fields(struct ttline *t, const struct tt_iv *iv)
{
	t->win = (uint8_t)iv->waker_in;
	t->routine = iv->waker_routine;
	t->ticket = iv->ticket;
	t->wtid = (uint32_t)iv->tid;
	t->stack = (uint8_t)iv->switch_in;
	t->wstack = (uint8_t)iv->readied;
	t->pseudo = iv->pseudo;	/* (TT_PSEUDO_ROOM bytes; a Running line has none) */
	t->pseudo_n = iv->pseudo_n;
	t->whole = 0;
}

/*
 * Whether the line being built has room for one more follower: at the
 * end of the trace (as many as threads) the ones it has are written
 * first; otherwise one past TT_MAXF is counted and dropped.
 */
static int
follower_slot_free(struct conv *c)
{
	if (c->f.n == TT_MAXF && c->tt_finishing)
		conv_write_followers(c, &c->f, "", 0);
	if (c->f.n == TT_MAXF) {
		c->tt_overflow++;
		return 0;
	}
	return 1;
}

/*
 * Whether the caller's thread tells the writing thread IV's waker_in=
 * text: a DPC's or ISR's routine, named with the symbols only the
 * caller's thread reads, or a waker not known yet (the line waits in the
 * window until it is).  Both threads' machines make the same intervals,
 * so both ask this of the same ones, in the same order.
 */
static int
waker_told(const struct tt_iv *iv)
{
	return iv->readied && (iv->waker_in == TT_IN_PENDING ||
	    (iv->waker_in != TT_IN_THREAD && iv->waker_routine));
}

/* The waker_in= text of a follower to the batch of inputs (as a uint32_t length, then it). */
static void
tell_waker(struct conv *c, const struct ttline *t)
{
	size_t an;
	const char *a = conv_tt_waker_attrs(c, t, c->now, &an);
	uint32_t n = (uint32_t)an;
	strbuf_add(&c->ttattrs, (const char *)&n, sizeof n);
	strbuf_add(&c->ttattrs, a, an);
}

/*
 * The emit function with the writing thread: the interval's line is made
 * there, by that thread's machine; this one counts it, and keeps what
 * the caller's thread tells of it (waker_told) with the line being built,
 * where a DPC that comes later finds a pending one (resolved).  Past
 * TT_MAXF an interval is counted and dropped, as the writing thread
 * drops it too (none at the end of the trace).
 */
static void
feed_emit(struct conv *c, const struct tt_iv *iv)
{
	struct ttfollow *f = &c->f;
	if (c->tt_finishing) {	/* (as many as threads: told at once) */
		c->events++;
		if (waker_told(iv)) {
			struct ttline t = { .win = (uint8_t)iv->waker_in, .routine = iv->waker_routine };
			tell_waker(c, &t);
		}
		return;
	}
	if (f->nemit == TT_MAXF) {
		c->tt_overflow++;
		return;
	}
	f->nemit++;
	c->events++;
	if (!waker_told(iv))
		return;
	struct ttline *t = &f->l[f->n++];
	t->win = (uint8_t)iv->waker_in;
	t->routine = iv->waker_routine;
	t->ticket = iv->ticket;
	if (iv->waker_in == TT_IN_PENDING)
		f->npending++;
}

/* threadtime.c's emit function: the interval as a line following the current event's. */
static void
add_follower(void *ctx, const struct tt_iv *iv)
{
	struct conv *c = ctx;
	if (c->ttw) {
		feed_emit(c, iv);
		return;
	}
	uint64_t ts = GBIAS + (uint64_t)iv->end;
	int64_t logged = (int64_t)(c->now - GBIAS);
	struct ttstate *s = c->tts;
	const struct tcache *e = thread_process(s, c->img, c->tt_gen, iv->tid, ts);
	if (c->f.n < TT_MAXF && e->nids && s->unfiltered &&
	    (iv->kind == TT_RUNNING || iv->kind == TT_READY)) {
		struct ttline *t = &c->f.l[c->f.n++];
		if (iv->kind == TT_RUNNING)
			make_running(s, &t->text, iv, e, logged);
		else
			make_ready(s, &t->text, iv, e, logged);
		set_fields(t, iv);
		t->whole = iv->kind == TT_RUNNING;
		return;
	}
	if (!follower_slot_free(c))
		return;
	struct ttline *t = &c->f.l[c->f.n];
	struct evtw_line *l = &t->text;
	const struct word *kind = &kind_words[iv->kind];
	struct span span = span_of(iv->end - iv->start);
	char *o;
	if (e->nids && (s->unfiltered || (!c->o->utc &&
	    conv_named_wanted(c, kind->s, iv->start, e->name, e->pid))))
		o = put_head(l, start_slot(s, iv), &s->ready, iv, e, &span);
	else if (!e->nids || c->o->utc) {
		if (!conv_begin_named(c, l, kind->s, iv->start, iv->cpu, e->name, e->pid, iv->tid,
		    iv->end - iv->start, ts))
			return;
		o = evtw_room(l, FOLLOWER_ROOM);
	} else
		return;		/* (a filter drops it) */
	put_rest(s, c->img, c->tt_gen, l, o, iv, logged, ts);
	c->f.n++;
	set_fields(t, iv);
	if (iv->readied && iv->waker_in == TT_IN_PENDING)
		c->f.npending++;
}

/* ---------- the lines made on the output's writing thread ---------- */

/*
 * The writing thread's own state.  It runs a machine of its own on the
 * inputs the caller's thread passes on with each line (struct ttfeed), in
 * the order the lines are written, which is the events' order: the same
 * inputs in the same order, so the same intervals.  It makes their lines
 * as the caller's thread would (its own kept texts, pass 1's model read
 * only), with the stack column of the line just written, and keeps the
 * waker stacks in its machine.  The caller's thread then only passes
 * each event's few fields on: making, staging and copying each interval
 * there cost it a fifth of its time on a context-switch trace.
 */
struct ttwriter {
	struct ttstate s;
	const struct images *img;
	struct tt *tt;
	struct evtw_line line;	/* an interval's text */
	/*
	 * The newline that ends the last text line, and the start of the
	 * text it is in (in the buffer, or LASTCOL: that line's stack column
	 * from its tab on, kept for the next buffer's batches).  The caller's
	 * thread says how long that column is, so it is not looked for.
	 */
	const char *line_end, *run_start;
	struct strbuf lastcol;
	char attrs[TT_ATTR_ROOM];	/* a waker_in= text, with the room it is read with */
	/* the batch being run (conv_tt_expand): where its intervals go, with what */
	struct ob_filtered *out;
	const struct ttfeed *feed;	/* the input being run */
	const char *col;		/* the line's stack column, COLN bytes */
	size_t coln;
	const char *told, *told_end;	/* the waker_in= texts the caller's thread told */
	unsigned nemit;			/* intervals of this line so far (TT_MAXF) */
	int finishing;
	uint64_t lines, dropped;	/* (c->events and c->tt_overflow, for a solo machine) */
};

void
conv_tt_stash(struct conv *c, uint32_t tid, const char *stack, size_t n)
{
	tt_set_waker_stack(c->tt, tid, stack, n);
}

static void
ttstate_init(struct ttstate *s, int unfiltered)
{
	s->idle = (struct tcache){ .pid = 0, .name = "Idle" };
	cache_ids(&s->idle);
	s->unknown = (struct tcache){ .pid = -1, .name = "?" };
	s->unknown.nids = 0;	/* (its columns are written each time) */
	s->unfiltered = unfiltered;
}

/*
 * IV's line to OUT: A[0..AN) its waker_in= text (TT_ATTR_ROOM bytes
 * readable), W[0..WN) its waker stack, COL[0..TAKE) its stack column;
 * LOGGED and GEN the event's.
 */
static void
write_interval(struct ttwriter *x, const struct tt_iv *iv, int64_t logged, uint64_t gen,
    const char *a, size_t an, const char *w, size_t wn, const char *col, size_t take)
{
	struct ttstate *s = &x->s;
	struct evtw_line *l = &x->line;
	uint64_t ts = GBIAS + (uint64_t)iv->end;
	const struct tcache *e = thread_process(s, x->img, gen, iv->tid, ts);
	int whole = 0;
	if (e->nids && iv->kind == TT_RUNNING) {
		make_running(s, l, iv, e, logged);
		whole = 1;
	} else if (e->nids && iv->kind == TT_READY)
		make_ready(s, l, iv, e, logged);
	else {
		char *o;
		if (e->nids) {
			struct span span = span_of(iv->end - iv->start);
			o = put_head(l, start_slot(s, iv), &s->ready, iv, e, &span);
		} else {
			evtw_begin(l, iv->start, kind_words[iv->kind].s, iv->cpu, e->name, e->pid,
			    iv->tid, iv->end - iv->start);
			o = evtw_room(l, FOLLOWER_ROOM);
		}
		put_rest(s, x->img, gen, l, o, iv, logged, ts);
	}
	char *start = ob_filtered_room(x->out, conv_follower_room(l->n, an, wn, take));
	char *p = start;
	if (whole)
		memcpy(p, l->b, l->n), p += l->n;
	else
		p = conv_put_follower(p, l, iv->readied, a, an, w, wn, col, take, iv->pseudo,
		    iv->pseudo_n);
	ob_filtered_made(x->out, (size_t)(p - start));
}

/* The writing thread's emit function: the interval's line, as the caller's would be. */
static void
writer_emit(void *ctx, const struct tt_iv *iv)
{
	struct ttwriter *x = ctx;
	if (x->nemit == TT_MAXF && !x->finishing) {
		x->dropped++;	/* (as the caller's thread counts it, when its machine runs too) */
		return;
	}
	x->nemit++;
	x->lines++;
	const char *a = NULL, *w = NULL;
	size_t an = 0, wn = 0;
	if (iv->readied) {
		w = tt_waker_stack(x->tt, (uint32_t)iv->tid, &wn);
		if (waker_told(iv)) {
			uint32_t n;
			if (x->told_end - x->told < (ptrdiff_t)sizeof n)
				cli_fatal("internal error: a waker_in= text not told");
			memcpy(&n, x->told, sizeof n);
			a = x->told + sizeof n;
			an = n;
			x->told = a + n;
			if (an <= TT_ATTR_ROOM) {	/* (read whole: its room, not the buffer's end) */
				memcpy(x->attrs, a, an);
				a = x->attrs;
			}
		} else {
			a = conv_tt_in_attrs[iv->waker_in].s;
			an = conv_tt_in_attrs[iv->waker_in].n;
		}
	}
	write_interval(x, iv, x->feed->logged, x->feed->gen, a, an, w, wn, x->col,
	    iv->switch_in ? x->coln : 0);
}

/* The writing thread's machine's resolve function: the caller's thread told these. */
static void
writer_resolved(void *ctx, uint32_t ticket, enum tt_waker_in in, uint64_t routine)
{
	(void)ctx, (void)ticket, (void)in, (void)routine;
}

/* Input F to the writing thread's machine. */
static void
run_feed(struct ttwriter *x, const struct ttfeed *f)
{
	struct tt *t = x->tt;
	x->feed = f;
	switch (f->op) {
	case TTF_CSWITCH:
		tt_cswitch(t, f->cpu, f->ts, f->tid, f->tid2, f->old_prio, f->new_prio,
		    f->wait_reason, f->wait_mode, f->old_state);
		break;
	case TTF_READY:
		/* a ReadyThread that readied a thread: its stack is that thread's waker stack */
		if (tt_ready(t, f->cpu, f->ts, f->tid, f->arg))
			tt_set_waker_stack(t, f->tid, x->col, x->coln);
		break;
	case TTF_INTERRUPT:
		tt_interrupt(t, f->cpu, f->arg, f->ts, f->flag, f->routine);
		break;
	case TTF_THREAD_START:
		tt_thread_start(t, f->ts, f->tid, f->flag);
		break;
	case TTF_THREAD_END:
		tt_thread_end(t, f->ts, f->tid);
		break;
	case TTF_DISK:
		tt_disk_done(t, f->tid, f->arg);
		break;
	case TTF_FINISH:
		x->finishing = 1;
		tt_resolve_all(t);
		tt_finish(t);
		return;
	default:
		cli_fatal("internal error: thread-time input %u", f->op);
	}
	/* (pending wakers this machine does not tell, dropped as time passes) */
	tt_tick(t, f->logged);
}

static const char *line_column(const struct ttwriter *x, size_t n);

/*
 * The batch of inputs at P (after its tag): each run in turn, their
 * intervals' lines to OUT.  Returns where it ends.
 */
static const char *
run_batch(struct ttwriter *x, const char *p, struct ob_filtered *out)
{
	struct ttbatch b;
	memcpy(&b, p, sizeof b);
	p += sizeof b;
	const char *feeds = p, *told = feeds + b.nfeed * sizeof(struct ttfeed);
	const char *own = told + b.attrs;
	x->out = out;
	x->told = told;
	x->told_end = own;
	x->col = b.from_line ? line_column(x, b.cn) : own;
	x->coln = b.from_line ? b.cn : b.sn;
	x->nemit = 0;
	for (uint32_t i = 0; i < b.nfeed; i++) {
		struct ttfeed f;
		memcpy(&f, feeds + i * sizeof f, sizeof f);
		run_feed(x, &f);
	}
	if (x->told != x->told_end)
		cli_fatal("internal error: waker_in= texts told and not taken");
	return own + b.sn;
}

/* TEXT[0..N), whole lines, to OUT; its last line's stack column is the one batches take. */
static void
expand_text(struct ttwriter *x, const char *text, size_t n, struct ob_filtered *out)
{
	ob_filtered_keep(out, text, n);
	if (n < 2 || text[n - 1] != '\n')
		return;
	x->line_end = text + n - 1;
	x->run_start = text;
}

/* The last text line's stack column, N bytes long as the caller's thread says. */
static const char *
line_column(const struct ttwriter *x, size_t n)
{
	if (!x->line_end || (size_t)(x->line_end - x->run_start) < n + 1 ||
	    x->line_end[-(ptrdiff_t)n - 1] != '\t')
		cli_fatal("internal error: the stack column a thread-time line takes "
		    "(%zu bytes) is not the last line's", n);
	return x->line_end - n;
}

/* The last text line's column, from its tab to its newline, kept for the next buffer. */
static void
keep_last_column(struct ttwriter *x)
{
	if (!x->line_end || x->run_start == x->lastcol.s)
		return;
	/* (the column holds no tab: evt-format §4) */
	const char *tab = mem_last(x->run_start, '\t', (size_t)(x->line_end - x->run_start));
	if (!tab) {
		x->line_end = NULL;
		return;
	}
	strbuf_reset(&x->lastcol);
	strbuf_add(&x->lastcol, tab, (size_t)(x->line_end + 1 - tab));
	x->run_start = x->lastcol.s;
	x->line_end = x->lastcol.s + x->lastcol.len - 1;
}

void
conv_tt_expand(void *ctx, const char *p, size_t n, struct ob_filtered *out)
{
	struct ttwriter *x = ctx;
	const char *end = p + n;
	while (p < end) {
		const char *m = memchr(p, '\0', (size_t)(end - p));
		if (!m) {
			expand_text(x, p, (size_t)(end - p), out);
			break;
		}
		if (m > p)
			expand_text(x, p, (size_t)(m - p), out);
		/* (a batch is written whole into one buffer: ob_reserve) */
		if (m[1] != TTREC_FEED)
			cli_fatal("internal error: a record of kind %d in the output", m[1]);
		p = run_batch(x, m + 2, out);
	}
	/* the next buffer's batches may take this one's last stack column */
	keep_last_column(x);
}

/*
 * F's inputs (and the waker_in= texts this thread tells) as a batch for
 * the writing thread, after the line they came with: STACK[0..N) is its
 * stack column, written just before (FROM_LINE) or carried along.
 */
void
conv_tt_write_feeds(struct conv *c, struct ttfollow *f, const char *stack, size_t n,
    int from_line)
{
	struct strbuf *told = &c->ttattrs;
	if (f->n) {	/* (rare: a DPC's routine, a pending waker, told by now) */
		strbuf_reset(told);
		for (unsigned i = 0; i < f->n; i++)
			tell_waker(c, &f->l[i]);
	} else if (!c->tt_finishing)	/* (at the end: told as the intervals came) */
		told->len = 0;
	struct ttbatch b = { f->nfeed, (uint32_t)told->len, from_line ? 0 : (uint32_t)n,
	    from_line ? (uint32_t)n : 0, (uint8_t)from_line };
	size_t room = 2 + sizeof b + f->nfeed * sizeof *f->feed + b.attrs + b.sn;
	struct outbuf *ob = c->ob;
	char *p = room <= ob->cap - ob->len ? ob->buf + ob->len : ob_reserve(ob, room);
	ob->len += room;	/* (ob_commit's work) */
	p[0] = 0;
	p[1] = TTREC_FEED;
	memcpy(p + 2, &b, sizeof b);
	p += 2 + sizeof b;
	for (unsigned i = 0; i < f->nfeed; i++, p += sizeof *f->feed)	/* (one, or two) */
		memcpy(p, &f->feed[i], sizeof *f->feed);
	if (b.attrs)
		memcpy(p, told->s, b.attrs);
	if (b.sn)
		memcpy(p + b.attrs, stack, b.sn);
	f->n = f->nfeed = f->nemit = 0;
}

/*
 * A new input of the line being built, for the writing thread's machine:
 * its fields past these are the caller's to set (those its kind has; the
 * others are zero, as all its bytes go to the output buffer).
 */
static inline struct ttfeed *
feed_new(struct conv *c, enum ttfeed_op op)
{
	if (c->f.nfeed == TT_MAXFEED)
		cli_fatal("internal error: more than %d thread-time inputs with one line", TT_MAXFEED);
	struct ttfeed *f = &c->f.feed[c->f.nfeed++];
	*f = (struct ttfeed){ .op = (uint8_t)op, .logged = (int64_t)(c->now - GBIAS),
	    .gen = c->tt_gen };
	return f;
}

void
conv_tt_cswitch(struct conv *c, int cpu, int64_t ts, uint32_t old_tid, uint32_t new_tid,
    int old_prio, int new_prio, uint8_t wait_reason, uint8_t wait_mode, uint8_t old_state)
{
	if (c->ttw) {
		struct ttfeed *f = feed_new(c, TTF_CSWITCH);
		f->cpu = cpu;
		f->ts = ts;
		f->tid = old_tid;
		f->tid2 = new_tid;
		f->old_prio = (int8_t)old_prio;
		f->new_prio = (int8_t)new_prio;
		f->wait_reason = wait_reason;
		f->wait_mode = wait_mode;
		f->old_state = old_state;
		if (c->tt_solo)
			return;
	}
	tt_cswitch(c->tt, cpu, ts, old_tid, new_tid, old_prio, new_prio, wait_reason, wait_mode,
	    old_state);
}

int
conv_tt_ready(struct conv *c, int cpu, int64_t ts, uint32_t ready_tid, int64_t waker_tid)
{
	if (c->ttw) {
		struct ttfeed *f = feed_new(c, TTF_READY);
		f->cpu = cpu;
		f->ts = ts;
		f->tid = ready_tid;
		f->arg = waker_tid;
		if (c->tt_solo)
			return 0;
		return tt_ready(c->tt, cpu, ts, ready_tid, waker_tid);
	}
	if (!tt_ready(c->tt, cpu, ts, ready_tid, waker_tid))
		return 0;
	/* its line's stack is the readied thread's waker stack (the writing thread keeps its own) */
	c->f.stash = 1;
	c->f.stash_tid = ready_tid;
	return 1;
}

void
conv_tt_thread_start(struct conv *c, int64_t ts, uint32_t tid, int rundown)
{
	if (c->ttw) {
		struct ttfeed *f = feed_new(c, TTF_THREAD_START);
		f->ts = ts;
		f->tid = tid;
		f->flag = (uint8_t)(rundown != 0);
		if (c->tt_solo)
			return;
	}
	tt_thread_start(c->tt, ts, tid, rundown);
}

void
conv_tt_thread_end(struct conv *c, int64_t ts, uint32_t tid)
{
	if (c->ttw) {
		struct ttfeed *f = feed_new(c, TTF_THREAD_END);
		f->ts = ts;
		f->tid = tid;
		if (c->tt_solo)
			return;
	}
	tt_thread_end(c->tt, ts, tid);
}

void
conv_tt_interrupt(struct conv *c, int cpu, int64_t start, int64_t end, int isr, uint64_t routine)
{
	if (c->ttw) {
		struct ttfeed *f = feed_new(c, TTF_INTERRUPT);
		f->cpu = cpu;
		f->ts = end;
		f->arg = start;
		f->flag = (uint8_t)(isr != 0);
		f->routine = routine;
		if (c->tt_solo) {
			/*
			 * Pass 1 saw none (the passes read the same records, so
			 * never): no caller's machine names its routine, and no
			 * waker waited for it.  The writing thread's still says
			 * waker_in=dpc or isr; counted.
			 */
			f->routine = 0;
			c->tt_intr_unseen++;
			return;
		}
	}
	tt_interrupt(c->tt, cpu, start, end, isr, routine);
}

void
conv_tt_disk(struct conv *c, uint32_t tid, int64_t elapsed_ns)
{
	if (c->ttw) {
		struct ttfeed *f = feed_new(c, TTF_DISK);
		f->tid = tid;
		f->arg = elapsed_ns;
		if (c->tt_solo)
			return;
	}
	tt_disk_done(c->tt, tid, elapsed_ns);
}

/*
 * What pass 1 learnt, to machine T: each CPU's first thread, and how long
 * a waker on it may wait for a DPC or ISR (its own longest).
 */
static void
machine_learn(const struct conv *c, struct tt *t)
{
	for (size_t i = 0; i < c->ncur; i++) {
		if (c->first_old[i] >= 0)
			tt_learn_first(t, (int)i, c->first_ts[i], (uint32_t)c->first_old[i]);
		if (c->tt_intr_seen)
			tt_set_cpu_max_intr(t, (int)i, c->tt_cpu_max_intr[i]);
	}
	tt_start(t);
}

/*
 * Unfiltered thread time into an output a thread can write: its lines
 * made there, by a machine of its own.  They are half of a context-switch
 * trace's output, and the caller's thread, which makes every other line,
 * was the one bound.
 */
static void
ttwriter_start(struct conv *c, int64_t t0, int64_t t1, int64_t max_intr)
{
	if (!c->o->tt_behind || !c->tts->unfiltered)
		return;
	struct ttwriter *x = xcalloc(1, sizeof *x);
	ttstate_init(&x->s, 1);
	x->img = c->img;
	x->tt = tt_new((unsigned)c->ncur, t0, t1, max_intr, writer_emit, writer_resolved, x);
	machine_learn(c, x->tt);
	if (!ob_write_through(c->ob, conv_tt_expand, x)) {
		tt_free(x->tt);
		free(x);
		return;
	}
	c->ttw = x;
}

/* Everything handed to the writing thread made and written; its state freed. */
static void
ttwriter_end(struct conv *c)
{
	struct ttwriter *x = c->ttw;
	if (!x)
		return;
	(void)ob_write_through(c->ob, NULL, NULL);
	evtw_free(&x->line);
	strbuf_release(&x->lastcol);
	if (c->tt_solo) {	/* its machine's counts are the ones reported */
		c->events += x->lines;
		c->tt_overflow += x->dropped;
		tt_free(c->tt);
		c->tt = x->tt;
		x->tt = NULL;
	}
	tt_free(x->tt);
	free(x);
	c->ttw = NULL;
}

void
conv_tt_init(struct conv *c)
{
	size_t n = c->ncur ? c->ncur : 1;
	c->first_old = xmalloc(n * sizeof *c->first_old);
	c->first_ts = xmalloc(n * sizeof *c->first_ts);
	c->tt_cpu_max_intr = xmalloc(n * sizeof *c->tt_cpu_max_intr);
	for (size_t i = 0; i < n; i++)
		c->first_old[i] = c->tt_cpu_max_intr[i] = -1;
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
		c->tt_intr_seen = 1;	/* (emit_dpc_isr feeds the machine fewer: long enough, sane) */
		/* (a CPU's records past the header's CPUs: those CPUs wait the trace's longest) */
		int64_t *cpu_max = (size_t)ev->cpu < c->ncur ? &c->tt_cpu_max_intr[ev->cpu] : NULL;
		if (cpu_max && *cpu_max < 0)
			*cpu_max = 0;
		uint64_t initial = gts(c, etl_u64(ev->payload));
		/* an impossible InitialTime (emit_dpc_isr skips those) bounds nothing */
		if (initial > ev->ts || ev->ts - initial > 60 * 1000000000ULL)
			return;
		int64_t d = (int64_t)(ev->ts - initial);
		if (d > c->tt_max_intr)
			c->tt_max_intr = d;
		if (cpu_max && d > *cpu_max)
			*cpu_max = d;
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
	/*
	 * -k without Running, Ready or Waiting: no line of it would be
	 * written, so none is derived (it cost as much as the rest of the
	 * conversion), and the ReadyThread stacks are not joined for it.
	 */
	int wanted = 0;
	for (int k = TT_RUNNING; k <= TT_WAITING; k++)
		wanted |= conv_kind_wanted(c, kind_words[k].s);
	if (!wanted)
		return;
	c->tts = xcalloc(1, sizeof *c->tts);
	ttstate_init(c->tts, !c->o->utc && !c->nkinds && !c->nprocs && c->from_ns == INT64_MIN &&
	    c->to_ns == INT64_MAX);
	int64_t t0 = (int64_t)(c->min_ts - GBIAS), t1 = (int64_t)(c->max_ts - GBIAS);
	int64_t max_intr = c->tt_intr_seen ? c->tt_max_intr : -1;
	ttwriter_start(c, t0, t1, max_intr);
	c->tt_solo = c->ttw && !c->tt_intr_seen;
	c->tt_gen = 1;
	c->tt = tt_new((unsigned)c->ncur, t0, t1, max_intr, add_follower, resolved, c);
	hmap_init(&c->ttpend);
	machine_learn(c, c->tt);
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
	if (c->ttw) {
		strbuf_reset(&c->ttattrs);
		(void)feed_new(c, TTF_FINISH);
	}
	if (!c->tt_solo)
		tt_finish(c->tt);
	if (c->ttw)	/* (with the waker_in= texts told as the intervals came) */
		conv_tt_write_feeds(c, &c->f, "", 0, 0);
	else
		conv_write_followers(c, &c->f, "", 0);
	ttwriter_end(c);
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
	evtw_skipped(c->ob, "threadtime", c->tt_intr_unseen, "DPC/ISR records the first pass did not "
	    "see (a waker they cover is written without waker_routine=)");
}

void
conv_tt_free(struct conv *c)
{
	ttwriter_end(c);
	if (c->tt)
		hmap_free(&c->ttpend);
	free(c->tts);
	tt_free(c->tt);
	free(c->first_old);
	free(c->first_ts);
	free(c->tt_cpu_max_intr);
	for (int i = 0; i < TT_MAXF; i++)
		free(c->f.l[i].text.b);
	evtw_free(&c->ttout);
	strbuf_release(&c->ttattrs);
}
