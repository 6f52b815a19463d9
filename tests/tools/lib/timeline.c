/*
 * timeline.c - scripted thread timelines (see timeline.h and
 * docs/scenario-format.md, "Thread timelines").  No public trace has
 * context switches, so the thread-time derivation of etl2evt (issue 16)
 * is checked against traces whose truth is known: a scenario says, per
 * thread, what it does over time -
 *
 *   run on CPU c | wait (reason, mode; where it blocked; who readies it:
 *   a thread, or a DPC on some CPU) | ready (readied, or preempted)
 *
 * - and this file writes what Windows would log for it (CSwitch at every
 * switch with old state, wait reason and the new thread's stack;
 * ReadyThread with the PERFINFO header on the readying CPU, its stack
 * walked on the thread running there; the readying DPC; samples of the
 * running thread), and, from the script itself (never from the written
 * events or a decoder), the intervals the thread-time contract defines:
 * etlgen --truth FILE.  The truth follows the contract where the script
 * knows more than a trace can tell (a thread waiting at the trace start
 * has wait_reason=unknown), leaves a column empty for an attribute the
 * interval has not, and writes "*" for what the contract leaves to the
 * decoder (the CPU of a wait begun before the trace, the stack of a thread
 * never switched in again).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "evt/evt.h"
#include "scenario.h"
#include "timeline.h"

#define TL_END INT64_MAX		/* "to the end of the trace" */
#define NOBODY 0xFFFFFFFFu

enum { S_RUN, S_WAIT, S_READY, S_EXIT };
enum { ST_READY = 1, ST_TERMINATED = 4, ST_WAITING = 5 };	/* KTHREAD_STATE */
#define WR_TERMINATED 22

struct step {
	int state;
	int64_t t0, t1;			/* ticks; t1 TL_END: to the end of the trace */
	int cpu;			/* run: the CPU; ready: the CPU it is switched in on (or -1) */
	int prio;			/* run: priority while running */
	int reason, user;		/* wait (or preempted ready): the switch-out's wait reason, mode */
	int old_state;			/* the switch-out's thread state */
	struct rstack *stack;		/* run: its samples; wait/ready: where it stopped */
	const char *pseudo;		/* wait: the contract's leaf pseudo-frame */
	/* wait: what ended it (the ReadyThread at t1) */
	uint32_t by;			/* a thread, or NOBODY */
	int dpc;			/* a DPC on waker_cpu: K_DPC, K_TIMERDPC or K_ISR */
	uint64_t dpc_routine;
	uint32_t dpc_vector;		/* ISR */
	int64_t dpc_t0, dpc_t1;
	struct rstack *by_stack;	/* the ReadyThread's stack */
	uint32_t waker_tid;		/* resolved: who runs on waker_cpu at t1 */
	int waker_cpu;
};

struct tlthr {
	struct thread *th;
	struct step *s;
	int n;
};

static struct tlthr *tl;
static int ntl;
static struct rstack *idle_stack;

/* Run steps by CPU and time: who occupies a CPU when. */
struct slot {
	int cpu;
	int64_t t0, t1;
	int ti, si;
};
static struct slot *slots;
static int nslots;

/* ---------- the script ---------- */

static struct step *
prev_step(const struct tlthr *t, int si)
{
	return si > 0 ? &t->s[si - 1] : NULL;
}

static void
parse_by_dpc(struct step *s, const yaml_node_t *n, int64_t at)
{
	static const char *const keys[] = {"cpu", "routine", "from_ms", "duration_us", "kind", "vector", NULL};
	double dur;

	scen_check_keys(n, keys);
	if (!scen_get(n, "cpu") || !scen_get(n, "routine"))
		scen_bad(n, "by_dpc: needs cpu and routine");
	s->dpc = scen_get(n, "kind") ? scen_kind_of(scen_get(n, "kind")) : K_DPC;
	if (s->dpc != K_DPC && s->dpc != K_TIMERDPC && s->dpc != K_ISR)
		scen_bad(scen_get(n, "kind"), "by_dpc: kind is DPC, TimerDPC or ISR");
	s->dpc_vector = (uint32_t)scen_u64_or(n, "vector", 0);
	s->waker_cpu = scen_cpu_of(scen_get(n, "cpu"));
	s->dpc_routine = scen_frame_addr(scen_get(n, "routine"), 4);
	dur = scen_num_or(n, "duration_us", 40);
	s->dpc_t0 = scen_time_or(n, "from_ms", at - scen_ms_to_ticks(dur / 2000));
	s->dpc_t1 = s->dpc_t0 + scen_ms_to_ticks(dur / 1000);
	if (!(s->dpc_t0 < at && at < s->dpc_t1))
		scen_bad(n, "by_dpc: the DPC must be running when it readies the thread");
}

static void
parse_step(struct tlthr *t, int si, const yaml_node_t *n, int64_t from, int last)
{
	static const char *const keys[] = {"run", "wait", "ready", "exit", "to_ms", "stack", "prio",
	    "mode", "reason", "state", "by", "by_dpc", "by_stack", "pseudo", NULL};
	struct step *s = &t->s[si];
	struct step *p = prev_step(t, si);
	uint32_t pid = t->th->proc->pid;
	yaml_node_t *v;

	scen_check_keys(n, keys);
	memset(s, 0, sizeof *s);
	s->by = NOBODY;
	s->cpu = s->waker_cpu = -1;
	s->t0 = from;
	if (scen_get(n, "exit")) {
		/* the switch-out in state Terminated that ends the thread's life */
		if (!last || !p || p->state != S_RUN || scen_get(n, "to_ms"))
			scen_bad(n, "exit: is the last step, right after a run step with to_ms");
		s->state = S_EXIT;
		s->t1 = from;
		s->reason = WR_TERMINATED;
		s->old_state = ST_TERMINATED;
		return;
	}
	s->t1 = scen_get(n, "to_ms") ? scen_time_or(n, "to_ms", 0) : TL_END;
	if (s->t1 != TL_END && s->t1 <= from)
		scen_bad(n, "to_ms must be after the step's start (the previous step's to_ms)");
	if (s->t1 == TL_END && !last)
		scen_bad(n, "only the last step may omit to_ms (it lasts to the end of the trace)");
	if (s->t1 != TL_END && s->t1 >= scen.duration)
		scen_bad(n, "to_ms beyond the machine's duration_ms");
	s->stack = scen_get(n, "stack") ? scen_make_stack(scen_get(n, "stack"), pid) : NULL;
	if ((v = scen_get(n, "run")) != NULL) {
		s->state = S_RUN;
		s->cpu = scen_cpu_of(v);
		s->prio = (int)scen_u64_or(n, "prio", (uint64_t)t->th->prio);
		if (s->prio > 31)
			scen_bad(n, "prio is 0..31");
		/* (a thread waiting at the trace start may be first seen switched in, readied unseen) */
		if (p && p->state == S_WAIT && !(si == 1 && p->by == NOBODY && !p->dpc))
			scen_bad(n, "a wait ends with a ReadyThread: a ready step comes between wait and run");
	} else if ((v = scen_get(n, "wait")) != NULL) {
		s->state = S_WAIT;
		s->reason = scen_wait_reason_of(v);
		s->user = strcmp(scen_get(n, "mode") ? scen_scalar(scen_get(n, "mode")) : "kernel", "user") == 0;
		s->old_state = ST_WAITING;
		s->pseudo = scen_get(n, "pseudo") ? scen_scalar(scen_get(n, "pseudo")) : "BLOCKED_TIME";
		if (p && p->state != S_RUN)
			scen_bad(n, "a wait follows a run step (or starts the timeline)");
		if (scen_get(n, "by") && scen_get(n, "by_dpc"))
			scen_bad(n, "by: (a thread) or by_dpc:, not both");
		if (scen_get(n, "by"))
			s->by = scen_tid_one_life_of(scen_get(n, "by"));
		if (scen_get(n, "by_dpc"))
			parse_by_dpc(s, scen_get(n, "by_dpc"), s->t1);
		if ((s->by != NOBODY || s->dpc) && s->t1 == TL_END)
			scen_bad(n, "a wait that lasts to the end is readied by nobody");
		if (s->by == NOBODY && !s->dpc && s->t1 != TL_END && si > 0)
			scen_bad(n, "a wait that ends needs by: (the readying thread) or by_dpc:");
		if (s->by == t->th->tid)
			scen_bad(n, "a thread cannot ready itself");
		if (scen_get(n, "by_stack"))
			s->by_stack = scen_make_stack(scen_get(n, "by_stack"),
			    s->by != NOBODY ? scen_thread(s->by)->proc->pid : 4);
	} else if ((v = scen_get(n, "ready")) != NULL) {
		s->state = S_READY;
		if (!p)
			scen_bad(n, "a timeline starts with run or wait (a thread first seen switched in was waiting)");
		if (p->state == S_READY)
			scen_bad(n, "two ready steps in a row");
		if (p->state == S_WAIT && p->by == NOBODY && !p->dpc)
			scen_bad(n, "ready after a wait readied by nobody (give the wait by: or by_dpc:)");
		/* preempted (after run): switched out runnable */
		s->reason = scen_get(n, "reason") ? scen_wait_reason_of(scen_get(n, "reason")) : 32;	/* WrPreempted */
		s->old_state = ST_READY;
		if (scen_get(n, "state")) {
			const char *st = scen_scalar(scen_get(n, "state"));
			s->old_state = !strcmp(st, "Ready") ? 1 : !strcmp(st, "Standby") ? 3 :
			    !strcmp(st, "DeferredReady") ? 7 : -1;
			if (s->old_state < 0)
				scen_bad(n, "state: Ready, Standby or DeferredReady");
		}
		if (p->state == S_WAIT && (s->stack || scen_get(n, "reason") || scen_get(n, "state")))
			scen_bad(n, "a thread readied after a wait keeps the wait's stack; reason/state/stack "
			    "describe a preemption (ready after run)");
	} else
		scen_bad(n, "a step is run: CPU, wait: REASON, ready: yes or exit: yes");
}

static void
parse_thread(const yaml_node_t *n, struct tlthr *t)
{
	static const char *const keys[] = {"tid", "steps", NULL};
	yaml_node_t *steps = scen_get(n, "steps");
	int i;
	int64_t from;
	struct step *last;

	scen_check_keys(n, keys);
	if (!scen_get(n, "tid") || !steps)
		scen_bad(n, "a timeline thread needs tid and steps");
	t->th = scen_thread(scen_tid_one_life_of(scen_get(n, "tid")));
	if (t->th->tid == 0)
		scen_bad(n, "the idle thread runs where no timeline thread does; it has no timeline");
	from = t->th->start != SCEN_NONE ? t->th->start : 0;
	t->n = scen_seq_len(steps);
	if (!t->n)
		scen_bad(steps, "no steps");
	t->s = xcalloc((size_t)t->n, sizeof *t->s);
	for (i = 0; i < t->n; i++) {
		parse_step(t, i, scen_seq_at(steps, i), from, i == t->n - 1);
		from = t->s[i].t1;
	}
	for (i = 0; i + 1 < t->n; i++)
		if (t->s[i].state == S_READY)
			t->s[i].cpu = t->s[i + 1].cpu;
	/* a thread started in the trace is created waiting (Initialized) and readied by its creator */
	if (t->th->start != SCEN_NONE && (t->s[0].state != S_WAIT || t->s[0].by == NOBODY) && !t->s[0].dpc)
		scen_bad(n, "a thread with start_ms begins with a wait readied by its creator (by:)");
	/* one with end_ms logs ThreadEnd while running, then switches out Terminated */
	last = &t->s[t->n - 1];
	if ((t->th->end != SCEN_NONE) != (last->state == S_EXIT))
		scen_bad(n, "a thread with end_ms ends with exit: yes, and only such a thread");
	if (last->state == S_EXIT && !(last[-1].t0 < t->th->end && t->th->end < last->t0))
		scen_bad(n, "end_ms (its ThreadEnd) falls inside the last run step, before the exit");
}

/* ---------- who runs where ---------- */

static int
cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static void
build_slots(void)
{
	int i, j;

	for (i = 0; i < ntl; i++)
		for (j = 0; j < tl[i].n; j++)
			if (tl[i].s[j].state == S_RUN) {
				slots = xrealloc(slots, (size_t)(nslots + 1) * sizeof *slots);
				slots[nslots++] = (struct slot){tl[i].s[j].cpu, tl[i].s[j].t0, tl[i].s[j].t1, i, j};
			}
	if (nslots)
		qsort(slots, (size_t)nslots, sizeof *slots, cmp_slot);
	for (i = 1; i < nslots; i++)
		if (slots[i].cpu == slots[i - 1].cpu && slots[i].t0 < slots[i - 1].t1)
			cli_fatal("%s: timeline: threads %u and %u both run on CPU %d at %.4f ms", scen.file,
			    tl[slots[i - 1].ti].th->tid, tl[slots[i].ti].th->tid, slots[i].cpu,
			    (double)slots[i].t0 * 1000 / (double)scen.freq);
	for (i = 0; i < scen.cpus; i++) {
		int any = 0;
		for (j = 0; j < nslots; j++)
			if (slots[j].cpu == i && (slots[j].t0 > 0 || slots[j].t1 != TL_END))
				any = 1;
		if (!any)
			cli_fatal("%s: timeline: CPU %d has no context switch (a decoder cannot know who runs "
			    "there): give it a run step or the machine fewer CPUs", scen.file, i);
	}
}

/*
 * The thread running on CPU at T: a slot covering T strictly, else Idle
 * (0).  A switch exactly at T is ambiguous (which came first?): exits 2.
 */
static uint32_t
occupant(int cpu, int64_t t)
{
	int i;

	for (i = 0; i < nslots; i++) {
		if (slots[i].cpu != cpu)
			continue;
		if ((slots[i].t0 == t && t > 0) || slots[i].t1 == t)
			cli_fatal("%s: timeline: an event at %.4f ms on CPU %d falls on a context switch there; move it",
			    scen.file, (double)t * 1000 / (double)scen.freq, cpu);
		if (slots[i].t0 <= t && t < slots[i].t1)
			return tl[slots[i].ti].th->tid;
	}
	return 0;
}

/* The stack a thread is switched in with: where its last wait or preemption stopped it. */
static struct rstack *
switch_in_stack(const struct tlthr *t, int si)
{
	int i;
	for (i = si - 1; i >= 0; i--)
		if (t->s[i].state != S_RUN && (t->s[i].stack || t->s[i].state == S_WAIT))
			return t->s[i].stack;
	return NULL;
}

/* ---------- the events ---------- */

static void
add_switch(int cpu, int64_t t, const struct slot *in, const struct slot *out)
{
	struct gev *e = scen_add_event(K_CSWITCH, cpu, t);
	const struct tlthr *ti = in ? &tl[in->ti] : NULL, *to = out ? &tl[out->ti] : NULL;

	e->a[0] = ti ? ti->th->tid : 0;
	e->a[1] = to ? to->th->tid : 0;
	e->a[2] = ti ? (uint32_t)ti->s[in->si].prio : 0;
	e->a[3] = to ? (uint32_t)to->s[out->si].prio : 0;
	if (to) {
		const struct step *next = &to->s[out->si + 1];
		e->a[4] = (uint32_t)next->reason | (uint32_t)next->old_state << 8 | (uint32_t)next->user << 16;
	} else
		e->a[4] = 0u | 1u << 8;		/* the idle thread: Executive, Ready */
	if (ti) {
		int64_t since = ti->s[in->si].t0 - (in->si > 0 ? ti->s[in->si - 1].t0 : 0);
		e->a[5] = (uint32_t)(since * 1000 / (int64_t)scen.freq);
		e->stack = switch_in_stack(ti, in->si);
	}
}

static void
add_switches(void)
{
	int i;

	for (i = 0; i < nslots; i++) {
		const struct slot *s = &slots[i];
		const struct slot *prev = i > 0 && slots[i - 1].cpu == s->cpu ? &slots[i - 1] : NULL;
		const struct slot *next = i + 1 < nslots && slots[i + 1].cpu == s->cpu ? &slots[i + 1] : NULL;
		if (s->t0 > 0 && !(prev && prev->t1 == s->t0))
			add_switch(s->cpu, s->t0, s, NULL);
		if (s->t1 != TL_END)
			add_switch(s->cpu, s->t1, next && next->t0 == s->t1 ? next : NULL, s);
	}
}

static void
add_wakeups(void)
{
	int i, j;

	for (i = 0; i < ntl; i++)
		for (j = 0; j < tl[i].n; j++) {
			struct step *s = &tl[i].s[j];
			struct gev *e;
			if (s->state != S_WAIT || (s->by == NOBODY && !s->dpc))
				continue;
			if (s->by != NOBODY) {
				int k;
				for (k = 0; k < nslots; k++)
					if (tl[slots[k].ti].th->tid == s->by && slots[k].t0 < s->t1 && s->t1 < slots[k].t1)
						break;
				if (k == nslots)
					cli_fatal("%s: timeline: thread %u readies %u at %.4f ms but is not running then",
					    scen.file, s->by, tl[i].th->tid, (double)s->t1 * 1000 / (double)scen.freq);
				s->waker_cpu = slots[k].cpu;
			}
			s->waker_tid = occupant(s->waker_cpu, s->t1);
			if (s->by != NOBODY && s->waker_tid != s->by)
				cli_fatal("%s: timeline: thread %u readies %u on CPU %d, where %u runs", scen.file,
				    s->by, tl[i].th->tid, s->waker_cpu, s->waker_tid);
			e = scen_add_event(K_READY, s->waker_cpu, s->t1);
			e->a[0] = s->waker_tid;
			e->a[1] = tl[i].th->tid;
			e->a[2] = 1;			/* AdjustReason: unwait boost */
			e->a[3] = 1;
			e->a[5] = SCEN_HDR_PERFINFO;
			e->stack = s->by_stack;
			if (!s->dpc)
				continue;
			e = scen_add_event(s->dpc, s->waker_cpu, s->dpc_t1);
			e->t0 = s->dpc_t0;
			e->addr = s->dpc_routine;
			e->a[0] = s->dpc_vector;
			e->a[3] = 1;
			e->a[4] = s->waker_tid;
			e->stack = s->by_stack;
		}
}

/* Is a switch or ReadyThread of the timeline at tick T on CPU (a sample there would share its key)? */
static int
busy_tick(int cpu, int64_t t)
{
	int i, j;
	for (i = 0; i < nslots; i++)
		if (slots[i].cpu == cpu && (slots[i].t0 == t || slots[i].t1 == t))
			return 1;
	for (i = 0; i < ntl; i++)
		for (j = 0; j < tl[i].n; j++)
			if (tl[i].s[j].state == S_WAIT && tl[i].s[j].waker_cpu == cpu && tl[i].s[j].t1 == t)
				return 1;
	return 0;
}

/* A timeline DPC on CPU covering T, as the step that has it, or NULL. */
static const struct step *
dpc_at(int cpu, int64_t t)
{
	int i, j;
	for (i = 0; i < ntl; i++)
		for (j = 0; j < tl[i].n; j++) {
			const struct step *s = &tl[i].s[j];
			if (s->dpc && s->waker_cpu == cpu && s->dpc_t0 <= t && t < s->dpc_t1)
				return s;
		}
	return NULL;
}

/* The run step of thread TID covering T on CPU. */
static const struct step *
running_step(int cpu, int64_t t)
{
	int i;
	for (i = 0; i < nslots; i++)
		if (slots[i].cpu == cpu && slots[i].t0 <= t && t < slots[i].t1)
			return &tl[slots[i].ti].s[slots[i].si];
	return NULL;
}

static void
add_samples(const yaml_node_t *n, double interval_ms)
{
	int64_t step = scen_ms_to_ticks(interval_ms), t;
	int cpu;

	if (step < 2)
		scen_bad(n, "sample_ms too small for the clock");
	for (cpu = 0; cpu < scen.cpus; cpu++)
		for (t = step * (cpu + 1) / (scen.cpus + 1) + 7; t < scen.duration; t += step) {
			int64_t at = busy_tick(cpu, t) ? t + 1 : t;
			const struct step *run = running_step(cpu, at), *d = dpc_at(cpu, at);
			uint32_t tid = occupant(cpu, at);
			struct gev *e = scen_add_event(K_SAMPLE, cpu, at);
			e->a[0] = tid;
			e->a[1] = run ? (uint32_t)run->prio : 0;
			e->a[2] = 1;
			e->a[3] = d ? 1 : 0;
			e->stack = d && d->by_stack ? d->by_stack : run ? run->stack : idle_stack;
			if (!e->stack)
				scen_bad(n, "samples: thread %u runs on CPU %d at %.3f ms with no stack: give its run step a stack "
				    "(or the timeline an idle_stack)", tid, cpu, (double)at * 1000 / (double)scen.freq);
			e->addr = e->stack->addr[e->stack->n - 1];
		}
}

void
timeline_generate(void)
{
	static const char *const keys[] = {"threads", "sample_ms", "idle_stack", NULL};
	const yaml_node_t *n = scen_section("timeline"), *thr;
	int i, j;

	if (!n)
		return;
	scen_check_keys(n, keys);
	thr = scen_get(n, "threads");
	ntl = scen_seq_len(thr);
	if (!ntl)
		scen_bad(n, "timeline: needs threads");
	tl = xcalloc((size_t)ntl, sizeof *tl);
	for (i = 0; i < ntl; i++) {
		parse_thread(scen_seq_at(thr, i), &tl[i]);
		for (j = 0; j < i; j++)
			if (tl[j].th == tl[i].th)
				scen_bad(scen_seq_at(thr, i), "thread %u has two timelines", tl[i].th->tid);
	}
	if (scen_get(n, "idle_stack"))
		idle_stack = scen_make_stack(scen_get(n, "idle_stack"), 0);
	build_slots();
	add_switches();
	add_wakeups();
	if (scen_get(n, "sample_ms"))
		add_samples(n, scen_num_of(scen_get(n, "sample_ms")));
}

/* ---------- the truth ---------- */

static int64_t
tick_ns(int64_t t)
{
	return (int64_t)llroundl((long double)t * 1e9L / (long double)scen.freq);
}

static void
put_ms(FILE *fp, int64_t t)
{
	char b[48];
	evt_format_time_ns(b, tick_ns(t));
	fprintf(fp, "\t%s", b);
}

/* an attribute the interval has not: empty */
static void
put_str(FILE *fp, const char *s)
{
	fprintf(fp, "\t%s", s ? s : "");
}

static void
put_int(FILE *fp, long long v, int known)
{
	if (known)
		fprintf(fp, "\t%lld", v);
	else
		fputs("\t*", fp);
}

/* STACK;PSEUDO, or PSEUDO alone */
static void
put_stack(FILE *fp, const struct rstack *st, const char *pseudo)
{
	fprintf(fp, "\t%s%s%s", st ? st->text : "", st && pseudo ? ";" : "", pseudo ? pseudo : "");
}

struct row {
	const struct thread *th;
	const char *state;
	int64_t t0, t1;
	int cpu;
	const char *edge, *from, *wait_reason, *wait_mode, *old_state;
	int prio;			/* -1: not decided */
	const struct step *wake;	/* the wait a ReadyThread ended */
	const struct rstack *stack;
	const char *pseudo;
	int no_stack;			/* the stack is the decoder's business: "*" */
	int empty_stack;		/* Running: the stack column is empty */
};

static void
put_row(FILE *fp, const struct row *r, int64_t last)
{
	int64_t t0 = r->t0, t1 = r->t1 == TL_END ? last : r->t1;
	int64_t dns = tick_ns(t1) - tick_ns(t0);
	const struct step *w = r->wake;

	fprintf(fp, "%u\t%u", r->th->tid, r->th->proc->pid);
	put_str(fp, r->th->proc->name);
	put_str(fp, r->state);
	put_ms(fp, t0);
	put_ms(fp, t1);
	fprintf(fp, "\t%lld.%03lld", (long long)(dns / 1000), (long long)(dns % 1000));
	put_int(fp, r->cpu, r->cpu >= 0);
	put_str(fp, r->edge);
	put_str(fp, r->from);
	put_str(fp, r->wait_reason);
	put_str(fp, r->wait_mode);
	put_str(fp, r->old_state);
	put_int(fp, r->prio, r->prio >= 0);
	if (w) {
		const struct thread *wt = scen_thread(w->waker_tid);
		char routine[300];
		put_ms(fp, w->t1);
		fprintf(fp, "\t%u\t%u", wt->tid, wt->proc->pid);
		put_str(fp, wt->proc->name);
		fprintf(fp, "\t%d\t%s", w->waker_cpu, w->dpc == K_ISR ? "isr" : w->dpc ? "dpc" : "thread");
		scen_frame_text(routine, sizeof routine, 4, w->dpc_routine);
		put_str(fp, w->dpc ? routine : NULL);
	} else
		fputs("\t\t\t\t\t\t\t", fp);
	if (r->empty_stack)
		fputc('\t', fp);
	else if (r->no_stack)
		fputs("\t*", fp);
	else
		put_stack(fp, r->stack, r->pseudo);
	put_str(fp, w && w->by_stack ? w->by_stack->text : NULL);
	fputc('\n', fp);
}

static const char *
edge_of(int64_t t0, int64_t t1)
{
	return t0 == 0 && t1 == TL_END ? "both" : t0 == 0 ? "start" : t1 == TL_END ? "end" : NULL;
}

static void
thread_rows(FILE *fp, const struct tlthr *t, int64_t last)
{
	int i;

	for (i = 0; i < t->n; i++) {
		const struct step *s = &t->s[i], *p = prev_step(t, i);
		const struct step *nx = i + 1 < t->n ? &t->s[i + 1] : NULL;
		struct row r;
		memset(&r, 0, sizeof r);
		r.th = t->th;
		r.t0 = s->t0;
		r.t1 = s->t1;
		r.edge = edge_of(s->t0, s->t1);
		r.prio = -1;
		r.cpu = -1;
		switch (s->state) {
		case S_EXIT:
			continue;	/* its life ended at the switch-out */
		case S_RUN:
			r.state = "Running";
			r.cpu = s->cpu;
			if (i > 0)
				r.prio = s->prio;
			r.empty_stack = 1;	/* CPU time goes on the samples' stacks */
			break;
		case S_WAIT:
			r.state = "Waiting";
			r.wake = s->by != NOBODY || s->dpc ? s : NULL;
			r.pseudo = s->pseudo;
			if (i == 0) {
				/* first seen switched in, or created: the trace cannot tell why it waited */
				r.wait_reason = "unknown";
				r.old_state = s->t0 > 0 ? "Initialized" : "unknown";
				r.wait_mode = "*";
			} else {
				r.cpu = p->cpu;
				r.prio = p->prio;
				r.wait_reason = scen_wait_reasons[s->reason];
				r.wait_mode = s->user ? "user" : "kernel";
				r.old_state = "Waiting";
			}
			if (s->t1 == TL_END || (nx && nx->t1 == TL_END && nx->state == S_READY))
				r.no_stack = 1;	/* never switched in again: no switch-in stack */
			else
				r.stack = s->stack;
			break;
		case S_READY:
			r.state = "Ready";
			r.from = p->state == S_WAIT ? "readied" : "preempted";
			r.pseudo = "READIED_TIME";
			if (nx) {
				r.cpu = nx->cpu;
				r.prio = nx->prio;
				r.stack = switch_in_stack(t, i + 1);
			} else
				r.no_stack = 1;
			break;
		}
		put_row(fp, &r, last);
	}
}

/* Idle on each CPU: Running whenever no timeline thread runs there. */
static void
idle_rows(FILE *fp, int64_t last)
{
	int cpu, i;

	for (cpu = 0; cpu < scen.cpus; cpu++) {
		int64_t free_from = 0;
		struct row r;
		memset(&r, 0, sizeof r);
		r.th = scen_thread(0);
		r.state = "Running";
		r.cpu = cpu;
		r.empty_stack = 1;
		for (i = 0; i <= nslots; i++) {
			int64_t busy;
			if (i < nslots && slots[i].cpu != cpu)
				continue;
			busy = i < nslots ? slots[i].t0 : TL_END;
			if (busy > free_from) {
				r.t0 = free_from;
				r.t1 = busy;
				r.edge = edge_of(r.t0, r.t1);
				r.prio = r.t0 > 0 ? 0 : -1;	/* switched in at priority 0 */
				put_row(fp, &r, last);
			}
			if (i == nslots || (free_from = slots[i].t1) == TL_END)
				break;
		}
	}
}

void
timeline_truth(const char *path)
{
	FILE *fp;
	int i;

	if (!tl)
		cli_fatal("--truth: %s has no timeline:", scen.file);
	if (!(fp = fopen(path, "w")))
		cli_fatal("%s: %s", path, strerror(errno));
	fprintf(fp, "#tid\tpid\tprocess\tstate\tstart_ms\tend_ms\tduration_us\tcpu\tedge\tfrom\twait_reason"
	    "\twait_mode\told_state\tprio\tready_ms\twaker_tid\twaker_pid\twaker_process\twaker_cpu\twaker_in"
	    "\twaker_routine\tstack\twaker_stack\n");
	for (i = 0; i < ntl; i++)
		thread_rows(fp, &tl[i], scen.last_t);
	idle_rows(fp, scen.last_t);
	if (fclose(fp) != 0)
		cli_fatal("%s: write error", path);
}
