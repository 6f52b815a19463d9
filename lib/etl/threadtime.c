/*
 * threadtime.c - Thread Time while streaming: every thread, over its
 * lifetime in the trace, is running, ready (runnable, waiting for a CPU)
 * or waiting, and every CPU runs one thread (maybe Idle) at any time.
 *
 * The converter feeds CSwitch, ReadyThread, thread start/end, DPC/ISR and
 * disk completions in time order; each interval that ends goes to its emit
 * function (docs/evt-format.md §3.1 says what the lines mean):
 *   - Running: from switch-in to switch-out on one CPU (per CPU state, so
 *     the Running time of a CPU, Idle included, is the trace span);
 *   - Waiting: from switch-out in a non-runnable state to the ReadyThread
 *     that readied the thread (or to its switch-in when none did);
 *   - Ready: from that ReadyThread (or from a switch-out while runnable:
 *     preempted) to the switch-in.
 * The thread's intervals are contiguous from its start (ThreadStart, or
 * the trace's first event) to its end, so they add up to its lifetime.
 *
 * What the trace gets wrong (a switch-out of a thread that is not on that
 * CPU, a switch-in of a thread running elsewhere, a ReadyThread for a
 * thread that is not waiting, time going backwards) is counted, and the
 * time is still charged to exactly one state, so conservation holds.
 *
 * Whether a DPC or an ISR readied a thread: DPC and ISR records are
 * logged when the routine ends, with its start.  The last few of each CPU
 * are kept; at the switch-in that ends the wait, the one whose [start,
 * end] holds the ReadyThread's time wins (an ISR inside a DPC wins over
 * the DPC).  When none does yet, one may still come, but not after the
 * ReadyThread's time plus the longest DPC/ISR of the waker's CPU (of the
 * trace, when the converter does not say; pass 1 knows both): until the
 * trace's time passes that, the waker is pending, the converter keeps the
 * Waiting line waiting (by ticket), and tt_resolve_fn tells it.  Exact,
 * and a few microseconds' wait on real traces; none on a CPU with no DPC
 * or ISR records.
 */
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/hmap.h"
#include "etl/threadtime.h"

#define RING 8			/* DPC/ISR records kept per CPU */
#define MAX_CPUS 4096

enum { ST_RUN, ST_READY, ST_WAIT, ST_DEAD };

/* CSwitch's old states that leave a thread runnable: Ready, Standby, DeferredReady */
#define RUNNABLE_STATE(s) ((s) == 1 || (s) == 3 || (s) == 7)
#define STATE_TERMINATED 4
#define STATE_INITIALIZED 0

struct th {
	uint32_t tid;
	uint8_t st;
	uint8_t edge_start;	/* the current interval began at the trace start */
	uint8_t ending;		/* ThreadEnd seen while it ran: it ends at its switch-out */
	uint8_t readied;
	uint8_t from, wait_reason, wait_mode, old_state;
	int cpu;		/* running: where; ready/waiting: the CPU it left (-1: unknown) */
	int prio;
	int64_t since;
	int64_t ready_ns, waker_tid;
	int waker_cpu;
	int64_t disk_ns;	/* the last disk I/O it issued that completed while it waited, -1 */
	char *wstack;		/* the ReadyThread stack that readied it (evt stack text) */
	size_t wn, wcap;
};

struct ttcpu {
	int active;		/* runs a known thread (from its first CSwitch on) */
	int64_t cur;		/* the thread on it: a tid, 0 for Idle, TT_NO_TID unknown */
	int64_t since, last;
	int edge_start, prio;
	int have_first;
	int64_t first_ts;
	uint32_t first_old;
	struct intr { int64_t s, e; uint64_t routine; int isr; } ring[RING];
	unsigned nring;
	struct tpend { int64_t ready_ns; uint32_t ticket; } *pend;	/* wakers to be told */
	size_t npend, cappend;
	int listed;		/* in the machine's list of CPUs with wakers to tell */
	/*
	 * Its own longest DPC/ISR (tt_set_cpu_max_intr), when known: a waker
	 * here waits no longer for one (none, when negative).  Else the
	 * trace's.
	 */
	int has_max;
	int64_t max_intr;
};

struct tt {
	struct tt_head head;	/* first: tt_tick in threadtime.h reads it */
	int64_t t0, t1;
	tt_emit_fn *emit;
	struct tt_iv own;	/* the interval being made (the emit function copies what it keeps) */
	tt_resolve_fn *resolve;
	void *ctx;
	uint32_t tickets;
	int64_t max_intr;	/* the longest DPC/ISR of the trace */
	int no_intr;		/* it has none: no waker is ever pending */
	int ending;		/* tt_finish(): no DPC record comes any more */
	struct ttcpu *cpu;
	size_t ncpu;
	/*
	 * The CPUs that had wakers to tell when last looked at (each once):
	 * on a trace with DPCs most waits are, for a few microseconds, and
	 * the time passing their deadline is looked at once an event.
	 */
	unsigned *pendcpu;
	size_t npendcpu, cappendcpu;
	struct hmap map;	/* (tid, 0) -> index in th[] */
	/*
	 * The threads looked up lately, direct-mapped by tid (Windows' are
	 * multiples of 4): every context switch asks for two or three, and
	 * a busy trace switches among a few dozen.  idx is th[]'s index + 1
	 * (0: empty); a thread keeps its index for the whole trace.
	 */
#define RECENT 256
	struct recent { uint32_t tid, idx; } recent[RECENT];
	struct th *th;
	size_t nth, capth;
	uint64_t anomalies[TT_A_N];
};

static const char *const wait_reasons[] = {
	"Executive", "FreePage", "PageIn", "PoolAllocation", "DelayExecution", "Suspended",
	"UserRequest", "WrExecutive", "WrFreePage", "WrPageIn", "WrPoolAllocation",
	"WrDelayExecution", "WrSuspended", "WrUserRequest", "WrEventPair", "WrQueue",
	"WrLpcReceive", "WrLpcReply", "WrVirtualMemory", "WrPageOut", "WrRendezvous",
	"WrKeyedEvent", "WrTerminated", "WrProcessInSwap", "WrCpuRateControl", "WrCalloutStack",
	"WrKernel", "WrResource", "WrPushLock", "WrMutex", "WrQuantumEnd", "WrDispatchInt",
	"WrPreempted", "WrYieldExecution", "WrFastMutex", "WrGuardedMutex", "WrRundown",
	"WrAlertByThreadId", "WrDeferredPreempt", "WrPhysicalFault",
};

static const char *const thread_states[] = {
	"Initialized", "Ready", "Running", "Standby", "Terminated", "Waiting", "Transition",
	"DeferredReady", "GateWaitObsolete", "WaitingForProcessInSwap",
};

const char *
tt_wait_reason_name(unsigned v)
{
	return v < sizeof wait_reasons / sizeof wait_reasons[0] ? wait_reasons[v] : NULL;
}

const char *
tt_thread_state_name(unsigned v)
{
	return v < sizeof thread_states / sizeof thread_states[0] ? thread_states[v] : NULL;
}

const char *
tt_anomaly_detail(enum tt_anomaly a)
{
	static const char *const d[TT_A_N] = {
		[TT_A_SWITCH_OUT] = "switch-outs of a thread not running on that CPU "
		    "(the CPU's thread is charged up to the switch)",
		[TT_A_SWITCH_IN] = "switch-ins of a thread already running on another CPU "
		    "(its running there ends; that CPU's thread is unknown until its next switch)",
		[TT_A_NO_READY] = "switch-ins of a waiting thread with no ReadyThread "
		    "(the whole gap is Waiting, without a waker)",
		[TT_A_READY] = "ReadyThread for a thread running, ready already, ended or Idle (ignored)",
		[TT_A_ORDER] = "thread-time events earlier than the previous one of their CPU or "
		    "thread (taken at that time)",
		[TT_A_DEAD] = "switch-ins of a thread that had ended (a new lifetime from there)",
	};
	return d[a];
}

uint64_t
tt_anomalies(const struct tt *t, enum tt_anomaly a)
{
	return t->anomalies[a];
}

struct tt *
tt_new(unsigned ncpu, int64_t t0, int64_t t1, int64_t max_intr, tt_emit_fn *emit,
    tt_resolve_fn *resolve, void *ctx)
{
	struct tt *t = xcalloc(1, sizeof *t);
	t->t0 = t0;
	t->t1 = t1 < t0 ? t0 : t1;
	t->max_intr = max_intr > 0 ? max_intr : 0;
	t->no_intr = max_intr < 0;
	t->head.deadline = INT64_MAX;
	t->emit = emit;
	t->resolve = resolve;
	t->ctx = ctx;
	t->ncpu = ncpu ? ncpu : 1;
	t->cpu = xcalloc(t->ncpu, sizeof *t->cpu);
	hmap_init(&t->map);
	return t;
}

void
tt_free(struct tt *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nth; i++)
		free(t->th[i].wstack);
	free(t->th);
	for (size_t i = 0; i < t->ncpu; i++)
		free(t->cpu[i].pend);
	free(t->cpu);
	free(t->pendcpu);
	hmap_free(&t->map);
	free(t);
}

/* CPU I's state, the table grown when a record names a CPU the buffers did not; NULL if absurd. */
static struct ttcpu *
cpu_grow(struct tt *t, int i)
{
	if (i < 0 || i >= MAX_CPUS)
		return NULL;
	size_t n = (size_t)i + 1;
	t->cpu = xrealloc(t->cpu, n * sizeof *t->cpu);
	memset(t->cpu + t->ncpu, 0, (n - t->ncpu) * sizeof *t->cpu);
	t->ncpu = n;
	return &t->cpu[i];
}

/* (these three are asked two or three times a context switch: the common case inline) */
static inline struct ttcpu *
cpu_at(struct tt *t, int i)
{
	return i >= 0 && (size_t)i < t->ncpu ? &t->cpu[i] : cpu_grow(t, i);
}

void
tt_set_cpu_max_intr(struct tt *t, int cpu, int64_t max_intr)
{
	struct ttcpu *c = cpu_at(t, cpu);
	if (c) {
		c->has_max = 1;
		c->max_intr = max_intr;
	}
}

/* How long after a ReadyThread on C a DPC/ISR covering it may still be logged (< 0: none). */
static inline int64_t
intr_wait(const struct tt *t, const struct ttcpu *c)
{
	return t->no_intr ? -1 : c->has_max ? c->max_intr : t->max_intr;
}

static struct th *
find_slow(struct tt *t, uint32_t tid)
{
	const uint32_t *i = hmap_get(&t->map, tid, 0);
	if (!i)
		return NULL;
	struct recent *r = &t->recent[(tid >> 2) % RECENT];
	r->tid = tid;
	r->idx = *i + 1;
	return &t->th[*i];
}

static inline struct th *
find(struct tt *t, uint32_t tid)
{
	struct recent *r = &t->recent[(tid >> 2) % RECENT];
	return r->idx && r->tid == tid ? &t->th[r->idx - 1] : find_slow(t, tid);
}

static struct th *get_new(struct tt *t, uint32_t tid);

static inline struct th *
get(struct tt *t, uint32_t tid)
{
	struct th *h = find(t, tid);
	return h ? h : get_new(t, tid);
}

/* A thread seen for the first time: alive (and waiting, for all we know) since the trace start. */
static struct th *
get_new(struct tt *t, uint32_t tid)
{
	struct th *h;
	if (t->nth == t->capth) {
		t->capth = t->capth ? t->capth * 2 : 256;
		t->th = xrealloc(t->th, t->capth * sizeof *t->th);
	}
	hmap_put(&t->map, tid, 0, (uint32_t)t->nth);
	h = &t->th[t->nth++];
	memset(h, 0, sizeof *h);
	h->tid = tid;
	h->st = ST_WAIT;
	h->since = t->t0;
	h->edge_start = 1;
	h->cpu = -1;
	h->prio = -1;
	h->wait_reason = h->wait_mode = h->old_state = TT_UNKNOWN;
	h->disk_ns = -1;
	return h;
}

/* the leaf pseudo-frames, each in room of TT_PSEUDO_ROOM bytes */
static const char readied_time[TT_PSEUDO_ROOM] = "READIED_TIME";
static const char blocked_time[TT_PSEUDO_ROOM] = "BLOCKED_TIME";
static const char disk_time[TT_PSEUDO_ROOM] = "DISK_TIME";
#define SET_PSEUDO(iv, room, lit) ((iv)->pseudo = (room), (iv)->pseudo_n = sizeof lit - 1)

/* A new interval, in the machine's own room. */
static inline struct tt_iv *
iv_new(struct tt *t, enum tt_kind k, int64_t tid, int cpu, int64_t s, int64_t e, int edge,
    int prio)
{
	struct tt_iv *iv = &t->own;
	/*
	 * Field by field, not memset: three of these a context switch, and a
	 * memset of the struct compiles to "rep stos", slow to start.
	 */
	iv->kind = k;
	iv->tid = tid;
	iv->cpu = cpu;
	iv->start = s;
	iv->end = e;
	iv->edge = edge;
	iv->prio = prio;
	iv->from = TT_FROM_READIED;
	iv->wait_reason = iv->wait_mode = iv->old_state = TT_UNKNOWN;
	iv->switch_in = 0;
	iv->pseudo = NULL;
	iv->pseudo_n = 0;
	iv->readied = 0;
	iv->ready_ns = 0;
	iv->waker_tid = TT_NO_TID;
	iv->waker_cpu = -1;
	iv->waker_in = TT_IN_THREAD;
	iv->waker_routine = 0;
	iv->ticket = 0;
	return iv;
}

static inline void
emit_running(struct tt *t, int cpu, struct ttcpu *c, int64_t end, int edge_end)
{
	struct tt_iv *iv = iv_new(t, TT_RUNNING, c->cur, cpu, c->since, end,
	    (c->edge_start ? TT_EDGE_START : 0) | edge_end, c->prio);
	t->emit(t->ctx, iv);
}

/* The DPC or ISR of CPU that ran at NS, if one is known (the innermost: an ISR). */
static const struct intr *
interrupt_at(struct tt *t, int cpu, int64_t ns)
{
	struct ttcpu *c = cpu >= 0 && (size_t)cpu < t->ncpu ? &t->cpu[cpu] : NULL;
	const struct intr *best = NULL;
	if (!c)
		return NULL;
	for (unsigned i = 0; i < RING && i < c->nring; i++) {
		const struct intr *r = &c->ring[i];
		if (r->s <= ns && ns <= r->e && (!best || (r->isr && !best->isr)))
			best = r;
	}
	return best;
}

/*
 * H's wait or readiness ends at END: its Waiting line (up to the
 * ReadyThread, if one came) and Ready line (from it), or its Ready line
 * when it was preempted.  SWITCH_IN: the lines get that CSwitch's stack.
 */
static void
end_off_cpu(struct tt *t, struct th *h, int64_t end, int in_cpu, int in_prio, int switch_in,
    int edge_end)
{
	struct tt_iv *iv;
	int edge0 = h->edge_start ? TT_EDGE_START : 0;
	if (h->st == ST_READY) {
		iv = iv_new(t, TT_READY, h->tid, in_cpu, h->since, end, edge0 | edge_end, in_prio);
		iv->from = h->from;
		iv->switch_in = switch_in;
		SET_PSEUDO(iv, readied_time, "READIED_TIME");
		t->emit(t->ctx, iv);
		return;
	}
	int64_t wend = h->readied ? h->ready_ns : end;
	iv = iv_new(t, TT_WAITING, h->tid, h->cpu, h->since, wend, edge0 | (h->readied ? 0 : edge_end),
	    h->prio);
	iv->wait_reason = h->wait_reason;
	iv->wait_mode = h->wait_mode;
	iv->old_state = h->old_state;
	iv->switch_in = switch_in;
	SET_PSEUDO(iv, blocked_time, "BLOCKED_TIME");
	/* PerfView's rule: a disk I/O of the thread that took about as long as the wait */
	int64_t w = wend - h->since;
	if (h->disk_ns >= 0 && w * 10 > h->disk_ns * 8 - 1000000 && w * 10 < h->disk_ns * 12 + 1000000)
		SET_PSEUDO(iv, disk_time, "DISK_TIME");
	if (h->readied) {
		iv->readied = 1;
		iv->ready_ns = h->ready_ns;
		iv->waker_tid = h->waker_tid;
		iv->waker_cpu = h->waker_cpu;
		const struct intr *r = interrupt_at(t, h->waker_cpu, h->ready_ns);
		struct ttcpu *wc = h->waker_cpu >= 0 && (size_t)h->waker_cpu < t->ncpu ?
		    &t->cpu[h->waker_cpu] : NULL;
		int64_t wait = wc ? intr_wait(t, wc) : -1;
		if (r) {
			iv->waker_in = r->isr ? TT_IN_ISR : TT_IN_DPC;
			iv->waker_routine = r->routine;
		} else if (wc && !t->ending && wait >= 0 && end <= h->ready_ns + wait) {
			/* a DPC or ISR covering it may still be running: told later */
			iv->waker_in = TT_IN_PENDING;
			iv->ticket = ++t->tickets;
			if (wc->npend == wc->cappend) {
				wc->cappend = wc->cappend ? wc->cappend * 2 : 8;
				wc->pend = xrealloc(wc->pend, wc->cappend * sizeof *wc->pend);
			}
			wc->pend[wc->npend++] = (struct tpend){ h->ready_ns, iv->ticket };
			if (!wc->listed) {
				XGROW(t->pendcpu, t->npendcpu, t->cappendcpu, 8);
				t->pendcpu[t->npendcpu++] = (unsigned)h->waker_cpu;
				wc->listed = 1;
			}
			if (h->ready_ns + wait < t->head.deadline)
				t->head.deadline = h->ready_ns + wait;
		}
	} else if (!h->edge_start && switch_in)
		t->anomalies[TT_A_NO_READY]++;
	t->emit(t->ctx, iv);
	if (h->readied) {
		iv = iv_new(t, TT_READY, h->tid, in_cpu, h->ready_ns, end, edge_end, in_prio);
		iv->from = TT_FROM_READIED;
		iv->switch_in = switch_in;
		SET_PSEUDO(iv, readied_time, "READIED_TIME");
		t->emit(t->ctx, iv);
	}
}

/* H leaves the CPU at TS in state OLD_STATE (CSwitch's), or ends. */
static void
leave_cpu(struct th *h, int64_t ts, int cpu, int prio, uint8_t wr, uint8_t wm, uint8_t os)
{
	h->since = ts;
	h->edge_start = 0;
	h->cpu = cpu;
	h->prio = prio;
	h->readied = 0;
	h->disk_ns = -1;
	if (os == STATE_TERMINATED || h->ending) {
		h->st = ST_DEAD;
		return;
	}
	if (RUNNABLE_STATE(os)) {
		h->st = ST_READY;
		h->from = TT_FROM_PREEMPTED;
		return;
	}
	h->st = ST_WAIT;
	h->wait_reason = wr;
	h->wait_mode = wm;
	h->old_state = os;
}

/* Thread TID's state, made when first seen; Idle (0) has none. */
static inline struct th *
thread_of(struct tt *t, uint32_t tid)
{
	return tid ? get(t, tid) : NULL;
}

/*
 * CPU C starts running thread TID, H its state (Idle: 0, H null) since
 * SINCE; a thread running elsewhere cannot.
 */
static void
cpu_take(struct ttcpu *c, int cpu, uint32_t tid, struct th *h, int64_t since, int edge_start,
    int prio)
{
	c->active = 1;
	c->since = since;
	c->edge_start = edge_start;
	c->prio = prio;
	c->cur = tid;
	if (!h)
		return;
	if (h->st == ST_RUN) {
		c->cur = TT_NO_TID;
		return;
	}
	h->st = ST_RUN;
	h->cpu = cpu;
	h->since = since;
	h->edge_start = (uint8_t)edge_start;
	h->prio = prio;
}

void
tt_learn_first(struct tt *t, int cpu, int64_t ts, uint32_t old_tid)
{
	struct ttcpu *c = cpu_at(t, cpu);
	if (c && (!c->have_first || ts < c->first_ts)) {
		c->have_first = 1;
		c->first_ts = ts;
		c->first_old = old_tid;
	}
}

void
tt_start(struct tt *t)
{
	for (size_t i = 0; i < t->ncpu; i++) {
		struct ttcpu *c = &t->cpu[i];
		c->last = t->t0;
		if (c->have_first)
			cpu_take(c, (int)i, c->first_old, thread_of(t, c->first_old), t->t0, 1, -1);
	}
}

/* TS, never before the CPU's last event (counted when it was). */
static int64_t
cpu_time(struct tt *t, struct ttcpu *c, int64_t ts)
{
	if (ts < c->last) {
		t->anomalies[TT_A_ORDER]++;
		ts = c->last;
	}
	return ts;
}

/*
 * Tells the pending wakers of CPU C that R (a DPC/ISR record) covers, or
 * (R NULL) those whose time is more than the longest DPC/ISR before NOW.
 */
static void
resolve_pending(struct tt *t, struct ttcpu *c, const struct intr *r, int64_t now)
{
	size_t k = 0;
	int64_t wait = intr_wait(t, c);
	for (size_t i = 0; i < c->npend; i++) {
		struct tpend *p = &c->pend[i];
		if (r && r->s <= p->ready_ns && p->ready_ns <= r->e)
			t->resolve(t->ctx, p->ticket, r->isr ? TT_IN_ISR : TT_IN_DPC, r->routine);
		else if (!r && now > p->ready_ns + wait)
			t->resolve(t->ctx, p->ticket, TT_IN_THREAD, 0);
		else {
			c->pend[k++] = *p;
			if (!r && p->ready_ns + wait < t->head.deadline)
				t->head.deadline = p->ready_ns + wait;
		}
	}
	c->npend = k;
}

void
tt_tick_late(struct tt *t, int64_t now)
{
	t->head.deadline = INT64_MAX;
	size_t k = 0;
	for (size_t i = 0; i < t->npendcpu; i++) {
		struct ttcpu *c = &t->cpu[t->pendcpu[i]];
		if (c->npend)
			resolve_pending(t, c, NULL, now);
		if (c->npend)
			t->pendcpu[k++] = t->pendcpu[i];
		else
			c->listed = 0;
	}
	t->npendcpu = k;
}

void
tt_resolve_all(struct tt *t)
{
	t->head.deadline = INT64_MAX;
	for (size_t i = 0; i < t->ncpu; i++)
		resolve_pending(t, &t->cpu[i], NULL, INT64_MAX);
}

void
tt_cswitch(struct tt *t, int cpu, int64_t ts, uint32_t old_tid, uint32_t new_tid,
    int old_prio, int new_prio, uint8_t wait_reason, uint8_t wait_mode, uint8_t old_state)
{
	struct ttcpu *c = cpu_at(t, cpu);
	if (!c) {
		t->anomalies[TT_A_SWITCH_OUT]++;
		return;
	}
	if (!c->active)		/* a CSwitch pass 1 did not see: the same rule, from here */
		cpu_take(c, cpu, old_tid, thread_of(t, old_tid), t->t0, 1, -1);
	ts = cpu_time(t, c, ts);
	struct th *in = thread_of(t, new_tid);
	size_t in_i = in ? (size_t)(in - t->th) : 0;	/* (a thread made below moves t->th) */
	if (in && in->st != ST_RUN && in->st != ST_DEAD && ts < in->since) {
		t->anomalies[TT_A_ORDER]++;
		ts = in->since;
	}
	c->last = ts;

	/* what ran here ends now */
	int64_t was = c->cur;
	emit_running(t, cpu, c, ts, 0);
	if (was == (int64_t)old_tid) {
		if (old_tid)
			leave_cpu(get(t, old_tid), ts, cpu, old_prio, wait_reason, wait_mode, old_state);
	} else {
		if (was != TT_NO_TID)	/* (an unknown thread was counted when it became so) */
			t->anomalies[TT_A_SWITCH_OUT]++;
		if (was > 0)	/* it left, we know not how */
			leave_cpu(get(t, (uint32_t)was), ts, cpu, c->prio, TT_UNKNOWN, TT_UNKNOWN,
			    TT_UNKNOWN);
		if (old_tid)
			(void)get(t, old_tid);	/* known from now on, waiting since the start */
	}
	if (in)
		in = &t->th[in_i];

	/* and the new thread's time off the CPU ends */
	if (in) {
		if (in->st == ST_RUN) {
			t->anomalies[TT_A_SWITCH_IN]++;
			struct ttcpu *o = cpu_at(t, in->cpu);
			if (o && o->cur == (int64_t)new_tid) {
				emit_running(t, in->cpu, o, ts > o->since ? ts : o->since, 0);
				o->since = ts > o->since ? ts : o->since;
				o->edge_start = 0;
				o->cur = TT_NO_TID;
			}
		} else if (in->st == ST_DEAD) {
			t->anomalies[TT_A_DEAD]++;
		} else
			end_off_cpu(t, in, ts, cpu, new_prio, 1, 0);
		in->st = ST_WAIT;	/* so that cpu_take() takes it */
	}
	cpu_take(c, cpu, new_tid, in, ts, 0, new_prio);
	if (in) {
		in->readied = 0;
		in->disk_ns = -1;
		in->ending = 0;
	}
}

int
tt_ready(struct tt *t, int cpu, int64_t ts, uint32_t ready_tid, int64_t waker_tid)
{
	struct ttcpu *c = cpu_at(t, cpu);
	if (c) {
		ts = cpu_time(t, c, ts);
		c->last = ts;
	}
	if (ready_tid == 0) {
		t->anomalies[TT_A_READY]++;
		return 0;
	}
	struct th *h = get(t, ready_tid);
	if (h->st != ST_WAIT || h->readied) {
		t->anomalies[TT_A_READY]++;
		return 0;
	}
	if (ts < h->since) {
		t->anomalies[TT_A_ORDER]++;
		ts = h->since;
	}
	h->readied = 1;
	h->ready_ns = ts;
	h->waker_tid = waker_tid;
	h->waker_cpu = cpu;
	return 1;
}

void
tt_thread_start(struct tt *t, int64_t ts, uint32_t tid, int rundown)
{
	if (tid == 0)
		return;
	struct th *h = find(t, tid);
	if (rundown || (h && h->st != ST_DEAD)) {
		(void)get(t, tid);	/* it exists: from the trace start if first seen now */
		return;
	}
	/* a new life (Windows reuses thread ids): nothing of the last one carries over */
	h = get(t, tid);
	h->st = ST_WAIT;
	h->since = ts;
	h->edge_start = 0;
	h->cpu = -1;
	h->prio = -1;
	h->from = 0;
	h->wn = 0;
	h->readied = 0;
	h->ending = 0;
	h->disk_ns = -1;
	h->wait_reason = h->wait_mode = TT_UNKNOWN;
	h->old_state = STATE_INITIALIZED;
}

void
tt_thread_end(struct tt *t, int64_t ts, uint32_t tid)
{
	if (tid == 0)
		return;
	struct th *h = get(t, tid);
	if (h->st == ST_DEAD)
		return;
	if (h->st == ST_RUN) {
		h->ending = 1;	/* it runs until its switch-out */
		return;
	}
	if (ts < h->since) {
		t->anomalies[TT_A_ORDER]++;
		ts = h->since;
	}
	if (h->readied && h->ready_ns > ts)
		h->ready_ns = ts;
	end_off_cpu(t, h, ts, -1, h->prio, 0, 0);
	h->st = ST_DEAD;
	h->since = ts;
}

void
tt_interrupt(struct tt *t, int cpu, int64_t start, int64_t end, int isr, uint64_t routine)
{
	struct ttcpu *c = cpu_at(t, cpu);
	if (!c)
		return;
	struct intr *r = &c->ring[c->nring++ % RING];
	*r = (struct intr){ start, end, routine, isr };
	if (c->npend)
		resolve_pending(t, c, r, INT64_MIN);
}

void
tt_disk_done(struct tt *t, uint32_t tid, int64_t elapsed_ns)
{
	struct th *h = tid ? find(t, tid) : NULL;
	if (h && h->st == ST_WAIT && !h->readied)
		h->disk_ns = elapsed_ns;
}

void
tt_finish(struct tt *t)
{
	tt_resolve_all(t);
	t->ending = 1;
	for (size_t i = 0; i < t->ncpu; i++) {
		struct ttcpu *c = &t->cpu[i];
		if (!c->active)
			continue;
		int64_t end = t->t1 > c->since ? t->t1 : c->since;
		emit_running(t, (int)i, c, end, TT_EDGE_END);
		c->active = 0;
	}
	for (size_t i = 0; i < t->nth; i++) {
		struct th *h = &t->th[i];
		if (h->st != ST_READY && h->st != ST_WAIT)
			continue;
		int64_t end = t->t1 > h->since ? t->t1 : h->since;
		if (h->readied && h->ready_ns > end)
			h->ready_ns = end;
		end_off_cpu(t, h, end, -1, h->prio, 0, TT_EDGE_END);
		h->st = ST_DEAD;
	}
}

void
tt_set_waker_stack(struct tt *t, uint32_t tid, const char *s, size_t n)
{
	struct th *h = find(t, tid);
	if (!h)
		return;
	h->wn = n;
	if (n + 1 > h->wcap) {
		h->wcap = n + 64;
		h->wstack = xrealloc(h->wstack, h->wcap);
	}
	memcpy(h->wstack, s, n);
}

const char *
tt_waker_stack(struct tt *t, uint32_t tid, size_t *n)
{
	const struct th *h = find(t, tid);
	*n = h ? h->wn : 0;
	return h && h->wstack ? h->wstack : "";
}
