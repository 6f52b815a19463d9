/*
 * generate.c - the generators of an etlgen scenario (generate: in
 * docs/scenario-format.md): DPCs, ISRs, context switches and samples by
 * the thousand from a few lines of YAML, with the seeded random stream,
 * added to the model as events (see generate.h).  DPCs and ISRs come
 * first, then are settled so that none overlaps on its CPU, since samples
 * need to know which DPC or thread is running when they fall.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "generate.h"
#include "scenario.h"
#include "timeline.h"

struct wstack {
	double w;
	struct rstack *st;
	uint32_t tid;
	int prio;
};

struct gen {
	int kind;
	struct wstack *ws;
	int nws;
	double wsum;
};

static int
parse_cpus(const yaml_node_t *n, int *cpus)
{
	int k = 0, i;

	if (!n || (n->type == YAML_SCALAR_NODE && strcmp(scen_scalar(n), "all") == 0)) {
		for (i = 0; i < scen.cpus; i++)
			cpus[k++] = i;
		return k;
	}
	for (i = 0; i < scen_seq_len(n); i++) {
		int c = scen_cpu_of(scen_seq_at(n, i)), j;
		for (j = 0; j < k; j++)
			if (cpus[j] == c)
				scen_bad(scen_seq_at(n, i), "CPU %d listed twice", c);
		cpus[k++] = c;
	}
	if (!k)
		scen_bad(n, "empty CPU list");
	return k;
}

/*
 * stacks: [{weight, tid, stack, prio}] or stack: (one).  Generated events
 * fall anywhere in their span, so a reused tid (several lives) is refused.
 */
static void
parse_weighted(struct gen *g, const yaml_node_t *n, uint32_t dflt_tid)
{
	static const char *const keys[] = {"weight", "tid", "stack", "prio", NULL};
	yaml_node_t *list = scen_get(n, "stacks"), *one = scen_get(n, "stack");
	int i;

	if (list && one)
		scen_bad(n, "give stack: or stacks:, not both");
	if (one) {
		g->ws = xcalloc(1, sizeof *g->ws);
		g->nws = 1;
		g->ws[0].w = 1;
		g->ws[0].tid = scen_get(n, "tid") ? scen_tid_one_life_of(scen_get(n, "tid")) : dflt_tid;
		g->ws[0].prio = (int)scen_u64_or(n, "prio", (uint64_t)scen_thread(g->ws[0].tid)->prio);
		g->ws[0].st = scen_make_stack(one, scen_thread(g->ws[0].tid)->proc->pid);
		g->wsum = 1;
		return;
	}
	g->nws = scen_seq_len(list);
	g->ws = xcalloc((size_t)g->nws + 1, sizeof *g->ws);
	for (i = 0; i < g->nws; i++) {
		yaml_node_t *e = scen_seq_at(list, i);
		struct wstack *w = &g->ws[i];
		scen_check_keys(e, keys);
		w->w = scen_num_or(e, "weight", 1);
		if (w->w <= 0)
			scen_bad(e, "weight must be positive");
		w->tid = scen_get(e, "tid") ? scen_tid_one_life_of(scen_get(e, "tid")) :
		    scen_get(n, "tid") ? scen_tid_one_life_of(scen_get(n, "tid")) : dflt_tid;
		w->prio = (int)scen_u64_or(e, "prio", (uint64_t)scen_thread(w->tid)->prio);
		w->st = scen_get(e, "stack") ? scen_make_stack(scen_get(e, "stack"), scen_thread(w->tid)->proc->pid) : NULL;
		g->wsum += w->w;
	}
}

static struct wstack *
pick(const struct gen *g)
{
	double r = scen_rng_unit() * g->wsum;
	int i;

	if (!g->nws)
		return NULL;
	for (i = 0; i < g->nws - 1; i++) {
		r -= g->ws[i].w;
		if (r < 0)
			break;
	}
	return &g->ws[i];
}

/* DPC/ISR generator: COUNT routines spread over CPUS, no overlap on a CPU. */
static void
gen_dpc(const yaml_node_t *n, int kind)
{
	int cpus[1024], nc = parse_cpus(scen_get(n, "cpus"), cpus), i, c;
	uint64_t count = scen_u64_or(n, "count", 0);
	int64_t from = scen_time_or(n, "from_ms", 0), to = scen_time_or(n, "to_ms", scen.duration);
	yaml_node_t *dn = scen_get(n, "duration_us"), *rt = scen_get(n, "routine");
	double mean, sd, lo, hi;
	struct gen g;
	uint64_t routine;
	uint32_t a[6];

	memset(&g, 0, sizeof g);
	a[0] = (uint32_t)scen_u64_or(n, "vector", 0);
	a[1] = (uint32_t)scen_bool_or(n, "msi", 0);
	a[2] = (uint32_t)scen_u64_or(n, "message", 0);
	a[3] = (uint32_t)scen_u64_or(n, "ret", 1);
	a[4] = a[5] = 0;
	if (a[0] > 0xFFFF || a[3] > 255)
		scen_bad(n, "vector is 0..65535, ret 0..255");
	if (!rt || !dn || !count)
		scen_bad(n, "a %s generator needs routine, count and duration_us", scen_kind_names[kind]);
	routine = scen_frame_addr(rt, 4);
	if (dn->type == YAML_MAPPING_NODE) {
		static const char *const dk[] = {"mean", "jitter", "min", "max", NULL};
		scen_check_keys(dn, dk);
		mean = scen_num_or(dn, "mean", 0);
		sd = scen_num_or(dn, "jitter", 0);
		lo = scen_num_or(dn, "min", mean > 3 * sd ? mean - 3 * sd : mean / 4);
		hi = scen_num_or(dn, "max", mean + 3 * sd);
	} else {
		mean = scen_num_of(dn);
		sd = 0;
		lo = hi = mean;
	}
	if (mean <= 0 || lo < 0 || hi < lo)
		scen_bad(dn, "duration_us: mean must be positive and min <= max");
	if (to <= from)
		scen_bad(n, "to_ms must be after from_ms");
	parse_weighted(&g, n, 0);
	for (c = 0; c < nc; c++) {
		uint64_t k = count / (uint64_t)nc + ((uint64_t)c < count % (uint64_t)nc);
		int64_t *dur, busy = 0;
		double *gap, gsum = 0, acc = 0;
		if (!k)
			continue;
		dur = xmalloc(k * sizeof *dur);
		gap = xmalloc((k + 1) * sizeof *gap);
		for (i = 0; (uint64_t)i < k; i++) {
			double us = mean + sd * scen_rng_gauss();
			us = us < lo ? lo : us > hi ? hi : us;
			dur[i] = (int64_t)llround(us * (double)scen.freq / 1e6);
			if (dur[i] < 1)
				dur[i] = 1;
			busy += dur[i];
		}
		if (busy + (int64_t)k + 1 > to - from)
			scen_bad(n, "%llu %s of ~%.1f us do not fit %.3f ms on one CPU",
			    (unsigned long long)k, scen_kind_names[kind], mean, (double)(to - from) * 1000 / (double)scen.freq);
		for (i = 0; (uint64_t)i <= k; i++) {
			gap[i] = -log(1 - scen_rng_unit());
			gsum += gap[i];
		}
		/* free time is cut into k+1 random gaps; 1 tick kept between neighbours */
		{
			int64_t free_ticks = to - from - busy - (int64_t)k - 1, before = 0;
			for (i = 0; (uint64_t)i < k; i++) {
				struct wstack *w = pick(&g);
				struct gev *e = scen_add_event(kind, cpus[c], 0);
				acc += gap[i];
				e->gen = 1;
				e->t0 = from + (int64_t)floor(acc / gsum * (double)free_ticks) + before + 1;
				e->t = e->t0 + dur[i];
				e->addr = routine;
				memcpy(e->a, a, sizeof a);
				e->a[4] = w ? w->tid : 0;
				e->a[5] = w ? (uint32_t)w->prio : 0;
				e->stack = w ? w->st : NULL;
				before += dur[i] + 1;
			}
		}
		free(dur);
		free(gap);
	}
	free(g.ws);
}

static int
cmp_interval(const void *a, const void *b)
{
	const struct gev *x = *(struct gev *const *)a, *y = *(struct gev *const *)b;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* DPC/ISR intervals per CPU, sorted; generated ones moved so none overlap. */
struct ivl {
	int cpu, kind;
	int64_t t0, t;
	uint32_t tid, prio;
	struct rstack *st;
};
static struct ivl *dpcs;
static size_t ndpcs;

static void
settle_dpcs(void)
{
	struct gev **v = xmalloc((scen.nev + 1) * sizeof *v);
	size_t i, n = 0;

	for (i = 0; i < scen.nev; i++)
		if (scen_is_dpc(scen.ev[i].kind))
			v[n++] = &scen.ev[i];
	qsort(v, n, sizeof *v, cmp_interval);
	for (i = 1; i < n; i++) {
		struct gev *p = v[i - 1], *e = v[i];
		if (p->cpu == e->cpu && e->gen && e->t0 <= p->t) {
			int64_t shift = p->t + 1 - e->t0;
			e->t0 += shift;
			e->t += shift;
		}
	}
	/* copies: scen.ev moves when samples are added */
	dpcs = xcalloc(n + 1, sizeof *dpcs);
	for (i = 0; i < n; i++) {
		dpcs[i].cpu = v[i]->cpu;
		dpcs[i].kind = v[i]->kind;
		dpcs[i].t0 = v[i]->t0;
		dpcs[i].t = v[i]->t;
		dpcs[i].tid = v[i]->a[4];
		dpcs[i].prio = v[i]->a[5];
		dpcs[i].st = v[i]->stack;
	}
	ndpcs = n;
	free(v);
}

/* Which thread runs on a CPU when (from generated context switches). */
struct run {
	int cpu;
	int64_t t;
	uint32_t tid;
};
static struct run *runs;
static size_t nruns, capruns;

static int
cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	return x->t < y->t ? -1 : x->t > y->t;
}

static uint32_t
running(int cpu, int64_t t)
{
	size_t lo = 0, hi = nruns;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (runs[mid].cpu < cpu || (runs[mid].cpu == cpu && runs[mid].t <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && runs[lo - 1].cpu == cpu ? runs[lo - 1].tid : 0;
}

/*
 * Does a context switch on CPU fall at tick T, or a ReadyThread (1 tick
 * before a switch-in)?  A sample there would share the tick of an event
 * whose stack record is the same thread's, which no timer interrupt does.
 */
static int
on_switch(int cpu, int64_t t)
{
	size_t lo = 0, hi = nruns;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (runs[mid].cpu < cpu || (runs[mid].cpu == cpu && runs[mid].t < t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nruns && runs[lo].cpu == cpu && (runs[lo].t == t || runs[lo].t == t + 1);
}

static int64_t
draw_ms(const yaml_node_t *n, const char *key, double dmean, double djit)
{
	yaml_node_t *d = scen_get(n, key);
	double mean = dmean, jit = djit, v;

	if (d && d->type == YAML_MAPPING_NODE) {
		mean = scen_num_or(d, "mean", dmean);
		jit = scen_num_or(d, "jitter", 0);
	} else if (d) {
		mean = scen_num_of(d);
		jit = 0;
	}
	if (mean <= 0 || jit < 0)
		scen_bad(d ? d : n, "%s: mean must be positive", key);
	v = mean + jit * scen_rng_gauss();
	if (v < mean / 10)
		v = mean / 10;
	return scen_ms_to_ticks(v) > 2 ? scen_ms_to_ticks(v) : 2;
}

/*
 * CSwitch generator: on each CPU its share of THREADS (dealt round robin,
 * so a thread never runs on two CPUs) alternates with the idle thread:
 * run a quantum, wait (WrQueue, user mode), idle, then the next thread is
 * readied and switched in.  With ready: yes a ReadyThread comes 1 tick
 * before each switch-in, in the PERFINFO header of real traces: its
 * readying thread is the one running there (the idle thread), with
 * ready_stack: as its stack; ready_by: TID names the readying thread in a
 * compact or full header instead (ready_header:), the old kind.  stack:
 * is every switch-in's stack (the new thread's: where it blocked).
 */
static void
gen_cswitch(const yaml_node_t *n)
{
	int cpus[1024], nc = parse_cpus(scen_get(n, "cpus"), cpus), c, i, nt;
	int64_t from = scen_time_or(n, "from_ms", 0), to = scen_time_or(n, "to_ms", scen.duration);
	yaml_node_t *tl = scen_get(n, "threads");
	uint32_t *tids, by = scen_get(n, "ready_by") ? scen_tid_one_life_of(scen_get(n, "ready_by")) : SCEN_WAKER_RUNNING;
	uint32_t hdr = scen_ready_header(scen_get(n, "ready_header"));
	int ready = scen_bool_or(n, "ready", by != SCEN_WAKER_RUNNING);
	struct rstack *rstack = NULL, *in_stack = NULL;

	if (by != SCEN_WAKER_RUNNING && hdr == SCEN_HDR_PERFINFO)
		scen_bad(n, "ready_by names the readying thread in the header: give ready_header: compact or full "
		    "(with the PERFINFO header of real traces the readying thread is the running one: ready: yes)");
	if (by == SCEN_WAKER_RUNNING && hdr != SCEN_HDR_PERFINFO)
		scen_bad(n, "ready_header: %s names the readying thread: give ready_by", scen_scalar(scen_get(n, "ready_header")));
	if (scen_get(n, "ready_stack"))
		rstack = scen_make_stack(scen_get(n, "ready_stack"), by != SCEN_WAKER_RUNNING ? scen_thread(by)->proc->pid : 0);
	/* stack: the switched-in thread's stack (where it blocked), in the first thread's process */
	if (scen_get(n, "stack") && scen_seq_len(tl) > 0)
		in_stack = scen_make_stack(scen_get(n, "stack"), scen_thread(scen_tid_one_life_of(scen_seq_at(tl, 0)))->proc->pid);

	nt = scen_seq_len(tl);
	if (!nt)
		scen_bad(n, "a CSwitch generator needs threads: [TID, ...]");
	tids = xmalloc((size_t)nt * sizeof *tids);
	for (i = 0; i < nt; i++) {
		tids[i] = scen_tid_one_life_of(scen_seq_at(tl, i));
		if (tids[i] == 0)
			scen_bad(scen_seq_at(tl, i), "the idle thread takes turns by itself; list other threads");
	}
	for (c = 0; c < nc; c++) {
		int cpu = cpus[c], k = 0, mine = 0;
		int64_t t = from + 1;
		for (i = c; i < nt; i += nc)
			mine++;
		if (!mine)
			continue;
		while (t < to) {
			uint32_t tid = tids[c + nc * (k++ % mine)];
			struct thread *th = scen_thread(tid);
			int64_t idle = draw_ms(n, "idle_ms", 1, 0.5), q = draw_ms(n, "quantum_ms", 2, 1);
			struct gev *e;
			if (t + idle + q >= to)
				break;
			t += idle;
			if (ready) {
				e = scen_add_event(K_READY, cpu, t - 1);
				e->a[0] = by;
				e->a[1] = tid;
				e->a[2] = 1;		/* AdjustReason: unwait */
				e->a[3] = 1;		/* priority boost */
				e->a[5] = hdr;
				e->stack = rstack;
				e->gen = 1;
			}
			e = scen_add_event(K_CSWITCH, cpu, t);
			e->a[0] = tid;
			e->a[1] = 0;
			e->a[2] = (uint32_t)th->prio;
			e->a[3] = 0;
			e->a[4] = 0u | 1u << 8;			/* Executive, old state Ready */
			e->a[5] = (uint32_t)((idle * 1000) / (int64_t)scen.freq);	/* ms waited */
			e->stack = in_stack;
			e->gen = 1;
			if (nruns + 2 > capruns) {
				capruns = capruns ? capruns * 2 : 1024;
				runs = xrealloc(runs, capruns * sizeof *runs);
			}
			runs[nruns++] = (struct run){cpu, t, tid};
			t += q;
			e = scen_add_event(K_CSWITCH, cpu, t);
			e->a[0] = 0;
			e->a[1] = tid;
			e->a[2] = 0;
			e->a[3] = (uint32_t)th->prio;
			e->a[4] = 15u | 5u << 8 | 1u << 16;	/* WrQueue, Waiting, user mode */
			e->a[5] = 0;
			e->gen = 1;
			runs[nruns++] = (struct run){cpu, t, 0};
		}
	}
	free(tids);
	if (nruns)
		qsort(runs, nruns, sizeof *runs, cmp_run);
}

/* Sample generator: every interval on each CPU, from a weighted set. */
static void
gen_samples(const yaml_node_t *n)
{
	int cpus[1024], nc = parse_cpus(scen_get(n, "cpus"), cpus), c;
	int64_t from = scen_time_or(n, "from_ms", 0), to = scen_time_or(n, "to_ms", scen.duration);
	int64_t step = scen_ms_to_ticks(scen_num_or(n, "interval_ms", scen.interval_ms));
	struct gen g;
	size_t di = 0;
	int follow = scen_bool_or(n, "running", 0);

	memset(&g, 0, sizeof g);
	if (step < 1)
		scen_bad(n, "interval too small for the clock");
	parse_weighted(&g, n, 0);
	if (!g.nws)
		scen_bad(n, "a Sample generator needs stacks");
	for (c = 0; c < nc; c++) {
		int cpu = cpus[c];
		/* CPUs' timer interrupts are not simultaneous: spread them */
		int64_t t = from + (step * cpu) / (scen.cpus + 1) + 1;
		while (di > 0 && dpcs[di - 1].cpu >= cpu)
			di--;
		while (di < ndpcs && dpcs[di].cpu < cpu)
			di++;
		for (; t < to; t += step) {
			struct wstack *w = pick(&g);
			struct gev *e;
			struct ivl *in = NULL;
			int64_t at = t;
			while (follow && on_switch(cpu, at))
				at += 2;
			while (di < ndpcs && dpcs[di].cpu == cpu && dpcs[di].t <= at)
				di++;
			if (di < ndpcs && dpcs[di].cpu == cpu && dpcs[di].t0 <= at)
				in = &dpcs[di];
			if (follow) {
				/* the stack of the thread the context switches put there */
				uint32_t tid = running(cpu, at);
				double sum = 0, r;
				int k;
				for (k = 0; k < g.nws; k++)
					if (g.ws[k].tid == tid)
						sum += g.ws[k].w;
				if (sum <= 0)
					scen_bad(n, "running: no stack for thread %u, which runs on CPU %d at %.3f ms",
					    tid, cpu, (double)at * 1000 / (double)scen.freq);
				r = scen_rng_unit() * sum;
				for (k = 0; k < g.nws; k++)
					if (g.ws[k].tid == tid && (r -= g.ws[k].w) < 0)
						break;
				w = &g.ws[k < g.nws ? k : g.nws - 1];
				while (w->tid != tid)
					w--;
			}
			e = scen_add_event(K_SAMPLE, cpu, at);
			if (in && in->st) {
				/* the DPC's stack, charged to the thread it interrupted */
				e->a[0] = in->tid;
				e->a[1] = in->prio;
				e->a[3] = in->kind == K_ISR ? 2 : 1;
				e->stack = in->st;
			} else {
				/* a DPC without a stack: the interrupted thread's, flagged */
				if (in)
					e->a[3] = in->kind == K_ISR ? 2 : 1;
				e->a[0] = w->tid;
				e->a[1] = (uint32_t)w->prio;
				e->stack = w->st;
			}
			if (!e->stack)
				scen_bad(n, "the sample stacks need a stack each");
			e->a[2] = 1;
			e->addr = e->stack->addr[e->stack->n - 1];
			e->gen = 1;
		}
	}
	free(g.ws);
}

void
generate_events(void)
{
	const yaml_node_t *list = scen_section("generate");
	static const char *const keys[] = {"kind", "cpus", "count", "from_ms", "to_ms", "routine",
	    "duration_us", "stack", "stacks", "tid", "prio", "vector", "msi", "message", "ret",
	    "interval_ms", "threads", "quantum_ms", "idle_ms", "ready_by", "running", "ready",
	    "ready_header", "ready_stack", NULL};
	int i, pass;

	/* the scripted timelines (their DPCs are settled with the others) */
	timeline_generate();
	/* DPCs and ISRs first: samples need to know which of them they fall into */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < scen_seq_len(list); i++) {
			yaml_node_t *n = scen_seq_at(list, i);
			int kind;
			scen_check_keys(n, keys);
			if (!scen_get(n, "kind"))
				scen_bad(n, "a generator needs kind");
			kind = scen_kind_of(scen_get(n, "kind"));
			if (pass == 0 && scen_is_dpc(kind))
				gen_dpc(n, kind);
			else if (pass == 0 && kind == K_CSWITCH)
				gen_cswitch(n);
			else if (pass == 1 && kind == K_SAMPLE)
				gen_samples(n);
			else if (!scen_is_dpc(kind) && kind != K_SAMPLE && kind != K_CSWITCH)
				scen_bad(n, "no generator for %s (DPC, ThreadedDPC, TimerDPC, ISR, CSwitch, Sample)",
				    scen_kind_names[kind]);
		}
		if (pass == 0)
			settle_dpcs();
	}
}

/* Process/thread/image start, end and rundown events. */
void
generate_lifecycle(int64_t end)
{
	int64_t t = 1, te = end;
	int i, j;

	for (i = 0; i < scen.nproc; i++) {
		struct proc *p = &scen.procs[i];
		struct gev *e;
		if (p->start == SCEN_NONE)
			e = scen_add_event(K_PDCSTART, 0, t++);
		else
			e = scen_add_event(K_PSTART, 0, p->start);
		e->obj = p;
		for (j = 0; j < p->nthr; j++) {
			struct thread *th = p->thr[j];
			if (th->start != SCEN_NONE)
				scen_add_event(K_TSTART, 0, th->start)->obj = th;
			else if (!th->no_rundown)
				scen_add_event(K_TDCSTART, 0, t++)->obj = th;
			if (th->end != SCEN_NONE)
				scen_add_event(K_TEND, 0, th->end)->obj = th;
			else
				scen_add_event(K_TDCEND, 0, te++)->obj = th;
		}
		for (j = 0; j < p->nimg; j++) {
			struct image *im = &p->img[j];
			if (im->load == SCEN_NONE)
				e = scen_add_event(K_IDCSTART, 0, t++);
			else
				e = scen_add_event(K_ILOAD, 0, im->load);
			e->obj = im;
			if (im->unload != SCEN_NONE)
				scen_add_event(K_IUNLOAD, 0, im->unload)->obj = im;
			else
				scen_add_event(K_IDCEND, 0, te++)->obj = im;
		}
		if (p->end != SCEN_NONE)
			e = scen_add_event(K_PEND, 0, p->end);
		else
			e = scen_add_event(K_PDCEND, 0, te++);
		e->obj = p;
	}
	scen_add_event(K_INTERVAL, 0, t++)->a[0] = (uint32_t)llround(scen.interval_ms * 10000);
}
