/*
 * threadtime.h - Thread Time: what every thread was doing, derived while
 * the converter streams the context switches (docs/evt-format.md §3.1).
 *
 * A state machine per thread (running on a CPU, ready, waiting, gone) and
 * per CPU (the thread on it and since when), fed with CSwitch, ReadyThread,
 * thread start/end, DPC/ISR and disk completion records in time order.
 * Each interval that ends is handed to the caller's emit function, which
 * writes it as a Running, Ready or Waiting line.  Memory grows with
 * threads and CPUs, never with events.
 */
#ifndef ETLKIT_THREADTIME_H
#define ETLKIT_THREADTIME_H

#include <stddef.h>
#include <stdint.h>

enum tt_kind { TT_RUNNING, TT_READY, TT_WAITING };
enum tt_from { TT_FROM_READIED, TT_FROM_PREEMPTED, TT_FROM_UNKNOWN };
enum tt_waker_in { TT_IN_THREAD, TT_IN_DPC, TT_IN_ISR, TT_IN_PENDING };
#define TT_EDGE_START 1
#define TT_EDGE_END 2
#define TT_UNKNOWN 255		/* wait reason, mode or state not known */
#define TT_NO_TID (-1)

/* The anomalies, counted (docs/evt-format.md: #skipped what=threadtime). */
enum tt_anomaly {
	TT_A_SWITCH_OUT,	/* switch-out of a thread not running on that CPU */
	TT_A_SWITCH_IN,		/* switch-in of a thread already running */
	TT_A_NO_READY,		/* switch-in of a waiting thread no ReadyThread readied */
	TT_A_READY,		/* ReadyThread for a thread running, ready or gone */
	TT_A_ORDER,		/* a CPU's or thread's time going backwards */
	TT_A_DEAD,		/* switch-in of a thread that ended */
	TT_A_N
};

/*
 * A pseudo-frame's room: all of it may be read, so that a writer copies
 * it whole (a few wide moves) rather than by its length (a call).
 */
#define TT_PSEUDO_ROOM 16

/* One interval that ended: what a Running, Ready or Waiting line says. */
struct tt_iv {		/* (iv_new in threadtime.c sets each field: a new one too) */
	enum tt_kind kind;
	int64_t tid;
	int cpu;
	int64_t start, end;		/* ns since the trace start */
	int edge;			/* TT_EDGE_START | TT_EDGE_END */
	int prio;
	enum tt_from from;		/* Ready */
	uint8_t wait_reason, wait_mode, old_state;	/* Waiting */
	int switch_in;			/* the line gets the stack of the CSwitch that ended it */
	const char *pseudo;		/* leaf pseudo-frame: READIED_TIME, BLOCKED_TIME, DISK_TIME, */
	uint8_t pseudo_n;		/* in room of TT_PSEUDO_ROOM bytes (copied whole), its length */
	/* Waiting ended by a ReadyThread */
	int readied;
	int64_t ready_ns;
	int64_t waker_tid;
	int waker_cpu;
	enum tt_waker_in waker_in;	/* TT_IN_PENDING: told later, by ticket */
	uint64_t waker_routine;		/* DPC/ISR routine address, 0 when unknown */
	uint32_t ticket;
};

typedef void tt_emit_fn(void *ctx, const struct tt_iv *iv);
/* A pending waker_in is known: TT_IN_THREAD, TT_IN_DPC or TT_IN_ISR (and the routine). */
typedef void tt_resolve_fn(void *ctx, uint32_t ticket, enum tt_waker_in in, uint64_t routine);

struct tt;

/*
 * A machine of NCPU CPUs whose trace spans [T0, T1] (ns) and whose longest
 * DPC or ISR lasts MAX_INTR ns (negative: the trace has no DPC or ISR
 * records, so no waker is ever pending); EMIT gets each interval, RESOLVE
 * each pending waker_in.
 */
struct tt *tt_new(unsigned ncpu, int64_t t0, int64_t t1, int64_t max_intr, tt_emit_fn *emit,
    tt_resolve_fn *resolve, void *ctx);
void tt_free(struct tt *t);
/*
 * The longest DPC or ISR on CPU (negative: it has none), when known: a
 * waker there waits only that long, not the trace's longest.
 */
void tt_set_cpu_max_intr(struct tt *t, int cpu, int64_t max_intr);

/* Pass 1 (any order): a CSwitch on CPU at TS whose old thread is OLD_TID. */
void tt_learn_first(struct tt *t, int cpu, int64_t ts, uint32_t old_tid);
/* After pass 1: each CPU runs its first CSwitch's old thread from the trace start. */
void tt_start(struct tt *t);

/* Pass 2, in time order. */
void tt_cswitch(struct tt *t, int cpu, int64_t ts, uint32_t old_tid, uint32_t new_tid,
    int old_prio, int new_prio, uint8_t wait_reason, uint8_t wait_mode, uint8_t old_state);
/* Returns 1 when the ReadyThread readied a waiting thread (its stack is then the waker's). */
int tt_ready(struct tt *t, int cpu, int64_t ts, uint32_t ready_tid, int64_t waker_tid);
void tt_thread_start(struct tt *t, int64_t ts, uint32_t tid, int rundown);
void tt_thread_end(struct tt *t, int64_t ts, uint32_t tid);
void tt_interrupt(struct tt *t, int cpu, int64_t start, int64_t end, int isr, uint64_t routine);
void tt_disk_done(struct tt *t, uint32_t tid, int64_t elapsed_ns);
/*
 * The trace's time is NOW: the pending wakers no DPC/ISR can cover any more are told.
 * Called once per event, so the deadline test is inline (struct tt begins with
 * struct tt_head) and only a passed deadline costs a call.
 */
struct tt_head {
	int64_t deadline;	/* the earliest time a pending waker is known (INT64_MAX: none) */
};
void tt_tick_late(struct tt *t, int64_t now);
static inline void
tt_tick(struct tt *t, int64_t now)
{
	if (now > ((const struct tt_head *)(const void *)t)->deadline)
		tt_tick_late(t, now);
}
/* The end of the trace: every pending waker_in is told (thread), */
void tt_resolve_all(struct tt *t);
/* and every interval still open ends at T1 (edge=end). */
void tt_finish(struct tt *t);

/* The anomalies counted so far, and what each means. */
uint64_t tt_anomalies(const struct tt *t, enum tt_anomaly a);
const char *tt_anomaly_detail(enum tt_anomaly a);

/*
 * Per-thread storage the converter fills: the ReadyThread stack S[0..N)
 * that readied TID (evt text); not kept for a thread thread time does
 * not know.
 */
void tt_set_waker_stack(struct tt *t, uint32_t tid, const char *s, size_t n);
const char *tt_waker_stack(struct tt *t, uint32_t tid, size_t *n);

/* Names of CSwitch's wait reasons and thread states, NULL when out of range. */
const char *tt_wait_reason_name(unsigned v);
const char *tt_thread_state_name(unsigned v);

#endif
