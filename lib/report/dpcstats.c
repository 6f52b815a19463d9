/*
 * dpcstats.c - DPC/ISR statistics from evt streams: per module and per
 * function durations (a count per distinct duration, for exact
 * percentiles), per-CPU usage, power-of-two histograms, intervals
 * between routine starts on a CPU, and the samples inside DPCs/ISRs.
 * The reports are in dpcisr.c and dpcchart.c.
 *
 * Memory grows with what the reports show (rows, distinct durations,
 * CPUs, distinct stacks), never with the number of events: lines come
 * in end order (docs/evt-format.md §2.2), so the starts and the samples
 * that need start order wait in small per-CPU windows, as long as the
 * input's longest routine could still reorder them, and no longer.
 */
#include "report/dpcisr_int.h"
#include "base/cli.h"
#include "base/hash.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
dpc_opts_init(struct dpc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->want_dpc = o->want_isr = 1;
	o->dpc_limit_us = 100;
	o->isr_limit_us = 25;
	o->unit = "us";
	o->width = 1200;
	o->height = 600;
}

/* Power-of-two bucket of a duration: 0 for (0,1] us (and 0), k for (2^(k-1), 2^k]. */
static int
dpc_bucket(double us)
{
	int k = 0;
	double b = 1;

	while (us > b && k < NBUCKETS - 1) {
		b *= 2;
		k++;
	}
	return k;
}

/* ------------------------------------------------------------------ */
/* durations: a count per distinct value                               */

static uint64_t
dur_bits(double us)
{
	uint64_t b;

	memcpy(&b, &us, sizeof(b));
	return b;
}

void
dpc_durs_add(struct dpc_durs *d, double us, uint64_t n)
{
	uint32_t *ix;

	if (us == 0)
		us = 0;		/* -0 is 0 */
	if (d->idx.s == NULL)
		hmap_init(&d->idx);
	d->total += n;
	if ((ix = hmap_get(&d->idx, dur_bits(us), 0)) != NULL) {
		d->v[*ix].n += n;
		return;
	}
	XGROW(d->v, d->n, d->cap, 16);
	d->v[d->n].us = us;
	d->v[d->n].n = n;
	hmap_put(&d->idx, dur_bits(us), 0, (uint32_t)d->n);
	d->n++;
}

static int
dur_cmp(const void *a, const void *b)
{
	double x = ((const struct dpc_dur *)a)->us, y = ((const struct dpc_dur *)b)->us;

	return (x > y) - (x < y);
}

void
dpc_durs_sort(struct dpc_durs *d)
{
	if (d->sorted)
		return;
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), dur_cmp);
	if (d->idx.s != NULL)
		hmap_free(&d->idx);
	d->idx.s = NULL;
	d->sorted = 1;
}

void
dpc_durs_free(struct dpc_durs *d)
{
	if (d->idx.s != NULL)
		hmap_free(&d->idx);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------------ */
/* tables                                                              */

/* the hash of a row's text field; NULL (a module row's kind and function) as "" */
static uint64_t
field_hash(const char *s)
{
	return s ? hash_bytes(s, strlen(s)) : hash_bytes("", 0);
}

static uint64_t
row_hash(int cls, const char *kind, const char *mod, const char *fn)
{
	uint64_t h = hash_u64((uint64_t)cls ^ field_hash(kind));

	h = hash_u64(h ^ field_hash(mod));
	return hash_u64(h ^ field_hash(fn));
}

static int
streq0(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static struct dpc_row *
row_get(struct dpc_rows *t, int cls, const char *kind, const char *mod, const char *fn)
{
	size_t i;
	struct dpc_row *r;

	if (t->tab == NULL) {
		t->mask = 255;
		t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
	}
	i = (size_t)row_hash(cls, kind, mod, fn) & t->mask;
	while (t->tab[i]) {
		r = t->r[t->tab[i] - 1];
		if (r->cls == cls && streq0(r->kind, kind) && strcmp(r->module, mod) == 0 &&
		    streq0(r->func, fn))
			return r;
		i = (i + 1) & t->mask;
	}
	r = xcalloc(1, sizeof(*r));
	r->cls = cls;
	r->kind = kind ? xstrdup(kind) : NULL;
	r->module = xstrdup(mod);
	r->func = fn ? xstrdup(fn) : NULL;
	r->min_int_ns = INT64_MAX;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->r = xrealloc(t->r, t->cap * sizeof(*t->r));
	}
	t->r[t->n++] = r;
	t->tab[i] = (uint32_t)t->n;
	if (2 * t->n > t->mask) {
		size_t k, j;

		free(t->tab);
		t->mask = t->mask * 2 + 1;
		t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
		for (k = 0; k < t->n; k++) {
			struct dpc_row *q = t->r[k];

			j = (size_t)row_hash(q->cls, q->kind, q->module, q->func) & t->mask;
			while (t->tab[j])
				j = (j + 1) & t->mask;
			t->tab[j] = (uint32_t)(k + 1);
		}
	}
	return r;
}

static size_t
row_index(struct dpc_rows *t, const struct dpc_row *r)
{
	size_t i;

	for (i = t->n; i > 0; i--)
		if (t->r[i - 1] == r)
			return i - 1;
	return 0;
}

static void
rows_free(struct dpc_rows *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->r[i]->kind);
		free(t->r[i]->module);
		free(t->r[i]->func);
		dpc_durs_free(&t->r[i]->dur);
		free(t->r[i]->cpu_us);
		for (size_t c = 0; c < t->r[i]->nstartq; c++)
			if (t->r[i]->startq[c] != NULL) {
				free(t->r[i]->startq[c]->t);
				free(t->r[i]->startq[c]);
			}
		free(t->r[i]->startq);
		free(t->r[i]);
	}
	free(t->r);
	free(t->tab);
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

struct dpc_stats *
dpc_new(const struct dpc_opts *o)
{
	struct dpc_stats *s = xcalloc(1, sizeof(*s));

	s->o = *o;
	s->maxcpu = -1;
	s->want_samples = o->stacks;
	s->window_ns = 1000000;
	intern_init(&s->stacks);
	intern_init(&s->roots);
	return s;
}

static int
event_class(const char *kind)
{
	if (strcmp(kind, "DPC") == 0 || strcmp(kind, "TimerDPC") == 0 ||
	    strcmp(kind, "ThreadedDPC") == 0)
		return C_DPC;
	if (strcmp(kind, "ISR") == 0)
		return C_ISR;
	return -1;
}

static void
add_duration(struct dpc_row *r, double us, double limit)
{
	r->count++;
	r->total_us += us;
	if (us > r->max_us)
		r->max_us = us;
	if (us > limit)
		r->over++;
	dpc_durs_add(&r->dur, us, 1);
}

/* Copy of an escaped evt value, unescaped, in BUF (size N). */
static const char *
unesc(char *buf, size_t n, const char *v)
{
	size_t l = strlen(v);

	if (l >= n)
		l = n - 1;
	memcpy(buf, v, l);
	buf[l] = '\0';
	l = evt_unescape(buf, l);
	buf[l] = '\0';
	return buf;
}

/* ------------------------------------------------------------------ */
/* the per-CPU reorder windows                                         */

#define HELD_MAX 65536		/* samples of one CPU waiting for their routine, at most */

/* Times and durations in whole ns; beyond +-2^61 ns (73 years), clamped, so sums cannot overflow. */
static int64_t
ns_of(double ns)
{
	const double lim = 2305843009213693952.0;	/* 2^61 */

	if (!(ns > -lim))
		return -(int64_t)lim;
	if (ns > lim)
		return (int64_t)lim;
	return llround(ns);
}

static int64_t
ms_to_ns(double ms)
{
	return ns_of(ms * 1e6);
}

static struct dpc_cpuwin *
cpu_window(struct dpc_stats *s, int cpu)
{
	if ((size_t)cpu >= s->nwin) {
		size_t n = (size_t)cpu + 1;

		s->win = xrealloc(s->win, n * sizeof(*s->win));
		memset(s->win + s->nwin, 0, (n - s->nwin) * sizeof(*s->win));
		s->nwin = n;
	}
	if (s->win[cpu] == NULL) {
		s->win[cpu] = xcalloc(1, sizeof(**s->win));
		s->win[cpu]->done_ns = INT64_MIN;
	}
	return s->win[cpu];
}

/* The CPU's log reached T (ns). */
static void
cpu_seen(struct dpc_cpuwin *w, int64_t t)
{
	if (!w->have_seen || t > w->seen_ns)
		w->seen_ns = t;
	w->have_seen = 1;
}

/* Starts before this time (ns) on the CPU can no longer be preceded by a later line's. */
static int64_t
cpu_settled_ns(const struct dpc_stats *s, const struct dpc_cpuwin *w)
{
	return w->seen_ns - s->window_ns;
}

/*
 * A line came later than the window allowed (input not in log order):
 * the window grows to what would have taken it, so that a stream merged
 * a little out of order costs a few late lines, not all of them.
 */
static void
window_widen(struct dpc_stats *s, const struct dpc_cpuwin *w, int64_t t)
{
	int64_t need = 2 * (w->seen_ns - t) + 1000000;

	if (need > s->window_ns)
		s->window_ns = need;
}

/* One more start, in start order: the interval from the previous one. */
static void
start_take(struct dpc_row *r, struct dpc_startq *q, int64_t t)
{
	if (q->have_last) {
		int64_t d = t - q->last;

		r->nint++;
		r->sum_int_ns += d;
		if (d < r->min_int_ns)
			r->min_int_ns = d;
		if (d > r->max_int_ns)
			r->max_int_ns = d;
	}
	q->last = t;
	q->have_last = 1;
}

/* Takes the starts before LIMIT (ns) out of the window, in order. */
static void
startq_drain(struct dpc_row *r, struct dpc_startq *q, int64_t limit)
{
	while (q->head < q->n && q->t[q->head] < limit)
		start_take(r, q, q->t[q->head++]);
	if (q->head == q->n)
		q->head = q->n = 0;
	else if (q->head > q->n / 2) {
		memmove(q->t, q->t + q->head, (q->n - q->head) * sizeof(*q->t));
		q->n -= q->head;
		q->head = 0;
	}
}

/* A start of module row R on CPU at T (ns): into the window, in order. */
static void
start_add(struct dpc_stats *s, struct dpc_row *r, int cpu, int64_t t)
{
	struct dpc_startq *q;
	size_t i;

	if ((size_t)cpu >= r->nstartq) {
		size_t n = (size_t)cpu + 1;

		r->startq = xrealloc(r->startq, n * sizeof(*r->startq));
		memset(r->startq + r->nstartq, 0, (n - r->nstartq) * sizeof(*r->startq));
		r->nstartq = n;
	}
	if ((q = r->startq[cpu]) == NULL)
		q = r->startq[cpu] = xcalloc(1, sizeof(*q));
	if (q->have_last && t < q->last) {
		s->late_starts++;	/* later than the window: its intervals are unknown */
		window_widen(s, s->win[cpu], t);
		return;
	}
	XGROW(q->t, q->n, q->cap, 16);
	for (i = q->n; i > q->head && q->t[i - 1] > t; i--)
		q->t[i] = q->t[i - 1];
	q->t[i] = t;
	q->n++;
	startq_drain(r, q, cpu_settled_ns(s, s->win[cpu]));
}

/* The innermost routine covering time T on the CPU (latest start; of equal starts, the shorter). */
static const struct dpc_interval *
covering(const struct dpc_cpuwin *w, int64_t t)
{
	const struct dpc_interval *best = NULL;
	size_t k;

	for (k = 0; k < w->niv; k++) {
		const struct dpc_interval *iv = &w->iv[k];

		if (iv->start > t || iv->end <= t)	/* [start, end): a sample at the end is after it */
			continue;
		if (best == NULL || iv->start > best->start ||
		    (iv->start == best->start && (iv->end < best->end ||
		    (iv->end == best->end && (iv->cls > best->cls ||
		    (iv->cls == best->cls && iv->module < best->module))))))
			best = iv;
	}
	return best;
}

static void
sample_attribute(struct dpc_stats *s, struct dpc_cpuwin *w, struct dpc_sample *sm)
{
	const struct dpc_interval *best = covering(w, sm->t);

	dpc_attribute(s, sm, best);
	if (best == NULL) {
		w->bare_ns = sm->t;
		w->have_bare = 1;
	}
	free(sm->stack);
}

static int
covers(const struct dpc_interval *iv, int64_t t)
{
	return iv != NULL && iv->start <= t && t < iv->end;
}

/*
 * Can no routine covering SM come any more, whatever covers it now?
 * LIMIT: the CPU's log minus the window; INT64_MAX at the input's end.
 */
static int
sample_settled(const struct dpc_stats *s, const struct dpc_cpuwin *w,
    const struct dpc_sample *sm, int64_t limit)
{
	if (limit == INT64_MAX)
		return 1;
	if (sm->t >= limit)
		return 0;
	if (w->nsmp - w->head > HELD_MAX)
		return 1;	/* a minute of samples at 1 kHz in DPCs that never came */
	return !sm->flags || (w->have_outside && sm->t <= w->outside_ns - s->window_ns);
}

/*
 * Attributes the CPU's samples that are settled or covered, in time
 * order (the first that is neither holds the rest), and forgets the
 * routines that ended before LIMIT (ns): no later sample is inside them.
 * The first sample is checked against ADDED, the routine just read, if
 * any, so a held sample costs O(1) a line; the sweep runs when the
 * routines have doubled since the last one, so it costs O(1) a routine
 * however wide the window.
 */
static void
cpu_settle(struct dpc_stats *s, struct dpc_cpuwin *w, int64_t limit,
    const struct dpc_interval *added)
{
	size_t k;
	int first = 1;

	for (; w->head < w->nsmp; first = 0) {
		struct dpc_sample *sm = &w->smp[w->head];

		if (!sample_settled(s, w, sm, limit) &&
		    !(first ? covers(added, sm->t) : covering(w, sm->t) != NULL))
			break;
		sample_attribute(s, w, sm);
		w->head++;
	}
	if (w->head == w->nsmp)
		w->head = w->nsmp = 0;
	else if (w->head > w->nsmp / 2) {
		memmove(w->smp, w->smp + w->head, (w->nsmp - w->head) * sizeof(*w->smp));
		w->nsmp -= w->head;
		w->head = 0;
	}
	if (limit > w->done_ns)
		w->done_ns = limit;
	if (w->niv < 2 * w->niv_kept + 16 && limit != INT64_MAX)
		return;
	/* a held sample keeps the routines that could cover it */
	if (w->head < w->nsmp && w->smp[w->head].t < limit)
		limit = w->smp[w->head].t + 1;
	for (k = 0; k < w->niv; )
		if (w->iv[k].end < limit)
			w->iv[k] = w->iv[--w->niv];
		else
			k++;
	w->niv_kept = w->niv;
}

/* ------------------------------------------------------------------ */
/* events                                                              */

static void
add_routine(struct dpc_stats *s, const struct evt_event *ev, int cls)
{
	char mod[1024], fn[2048];
	const char *a;
	double us;
	double limit = cls == C_DPC ? s->o.dpc_limit_us : s->o.isr_limit_us;
	struct dpc_row *fr, *mr;

	if ((a = evt_attr(ev, "duration_us")) == NULL || evt_parse_decimal(a, &us) < 0)
		us = ev->weight * 1000;
	if (!(us >= 0))
		us = 0;		/* negative, or not a number */
	if ((a = evt_attr(ev, "routine")) != NULL)
		unesc(fn, sizeof(fn), a);
	else
		strcpy(fn, "?");
	if ((a = evt_attr(ev, "module")) != NULL)
		unesc(mod, sizeof(mod), a);
	else {
		/* module from "module!function" */
		char *bang = strchr(fn, '!');

		if (bang) {
			size_t l = (size_t)(bang - fn);

			memcpy(mod, fn, l);
			mod[l] = '\0';
		} else
			strcpy(mod, "?");
	}
	if (mod[0] == '\0')
		strcpy(mod, "?");
	fr = row_get(&s->funcs, cls, ev->kind, mod, fn);
	add_duration(fr, us, limit);
	mr = row_get(&s->mods, cls, NULL, mod, NULL);
	add_duration(mr, us, limit);
	mr->bucket[dpc_bucket(us)]++;
	if (ev->cpu >= 0) {
		struct dpc_cpuwin *w = cpu_window(s, ev->cpu);
		int64_t start = ms_to_ns(ev->time_ms), dur = ns_of(us * 1000);

		if (dur > s->maxdur_ns) {
			s->maxdur_ns = dur;
			if (2 * dur + 1000000 > s->window_ns)
				s->window_ns = 2 * dur + 1000000;
		}
		cpu_seen(w, start + dur);
		if ((size_t)ev->cpu >= mr->ncpu) {
			size_t n = (size_t)ev->cpu + 1;

			mr->cpu_us = xrealloc(mr->cpu_us, n * sizeof(*mr->cpu_us));
			for (size_t k = mr->ncpu; k < n; k++)
				mr->cpu_us[k] = 0;
			mr->ncpu = n;
		}
		mr->cpu_us[ev->cpu] += us;
		s->cpu_us[cls][ev->cpu] += us;
		/* for the intervals between starts of this module on one CPU */
		start_add(s, mr, ev->cpu, start);
		if (s->want_samples) {
			struct dpc_interval *iv;

			if (w->have_bare && start <= w->bare_ns) {
				s->late_routines++;	/* a sample inside it may be attributed already */
				window_widen(s, w, start);
			}
			XGROW(w->iv, w->niv, w->capiv, 16);
			iv = &w->iv[w->niv++];
			iv->start = start;
			iv->end = start + dur;
			iv->cls = cls;
			iv->module = (uint32_t)row_index(&s->mods, mr);
			cpu_settle(s, w, cpu_settled_ns(s, w), iv);
		}
	}
}

static void
add_sample(struct dpc_stats *s, const struct evt_event *ev)
{
	struct dpc_cpuwin *w;
	struct dpc_sample sm;
	const char *a;
	size_t i;

	if (ev->cpu < 0)
		return;
	s->nsamples++;
	w = cpu_window(s, ev->cpu);
	sm.t = ms_to_ns(ev->time_ms);
	sm.w = ev->weight;
	if (strcmp(s->o.unit, "samples") == 0) {
		double c = 1;

		if ((a = evt_attr(ev, "count")) != NULL)
			evt_parse_decimal(a, &c);
		sm.w = c;
	}
	sm.flags = 0;
	if ((a = evt_attr(ev, "dpc")) != NULL && strcmp(a, "1") == 0)
		sm.flags |= 1;
	if ((a = evt_attr(ev, "isr")) != NULL && strcmp(a, "1") == 0)
		sm.flags |= 2;
	sm.stack = xstrndup(ev->stack, ev->stack_len);
	sm.stack_len = ev->stack_len;
	if (sm.t < w->done_ns) {
		/* later than the window: the routines that ended since are forgotten */
		s->late_samples++;
		window_widen(s, w, sm.t);
		sample_attribute(s, w, &sm);
		return;
	}
	cpu_seen(w, sm.t);
	if (!sm.flags) {
		w->outside_ns = sm.t;
		w->have_outside = 1;
	}
	XGROW(w->smp, w->nsmp, w->capsmp, 16);
	for (i = w->nsmp; i > w->head && w->smp[i - 1].t > sm.t; i--)
		w->smp[i] = w->smp[i - 1];
	w->smp[i] = sm;
	w->nsmp++;
	cpu_settle(s, w, cpu_settled_ns(s, w), NULL);
}

/*
 * The end of an input: every start and sample waiting is taken, and the
 * windows start afresh (no interval joins two inputs).
 */
static void
input_end(struct dpc_stats *s)
{
	size_t i, c;

	for (i = 0; i < s->mods.n; i++) {
		struct dpc_row *r = s->mods.r[i];

		for (c = 0; c < r->nstartq; c++)
			if (r->startq[c] != NULL) {
				startq_drain(r, r->startq[c], INT64_MAX);
				r->startq[c]->have_last = 0;
			}
	}
	for (c = 0; c < s->nwin; c++) {
		struct dpc_cpuwin *w = s->win[c];

		if (w == NULL)
			continue;
		cpu_settle(s, w, INT64_MAX, NULL);
		free(w->iv);
		free(w->smp);
		free(w);
		s->win[c] = NULL;
	}
	s->maxdur_ns = 0;
	s->window_ns = 1000000;
}

int
dpc_read(struct dpc_stats *s, const char *path)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int first = 1;
	struct evt_event ev;
	struct evt_header h;
	const char *why, *v;

	if (lr == NULL) {
		cli_warn("%s: %s", path, strerror(errno));
		return EXIT_FATAL;
	}
	s->inputs++;
	while ((line = lr_next(lr, &len)) != NULL) {
		enum evt_linetype t = evt_classify(line, len);
		int cls;

		lr_progress(lr);
		if (t == EVT_BLANK)
			continue;
		if (first) {
			first = 0;
			if (t != EVT_HEADER) {
				cli_warn("%s:%lu: not an evt stream (no #evt header); "
				    "DPC/ISR reports need etl2evt output", lr_name(lr), lr_lineno(lr));
				lr_close(lr);
				return EXIT_FATAL;
			}
			if (evt_parse_header(line, len, &h, &why) < 0) {
				cli_warn("%s:%lu: %s", lr_name(lr), lr_lineno(lr), why);
				lr_close(lr);
				return EXIT_FATAL;
			}
			if ((v = evt_header_get(&h, "duration_ms")) != NULL) {
				double d;

				if (evt_parse_decimal(v, &d) == 0 && d > 0)
					s->duration_ms += d;
			}
			if ((v = evt_header_get(&h, "cpus")) != NULL && atoi(v) > s->cpus_hdr)
				s->cpus_hdr = atoi(v);
			if ((v = evt_header_get(&h, "source")) != NULL && s->source == NULL)
				s->source = xstrdup(v);
			continue;
		}
		if (t != EVT_EVENT)
			continue;
		if (evt_parse(line, len, &ev, &why) < 0) {
			if (++s->bad <= 5)
				cli_warn("%s:%lu: %s, line skipped", lr_name(lr), lr_lineno(lr), why);
			continue;
		}
		if (ev.cpu >= DPC_MAX_CPUS) {	/* the per-CPU tables stop there */
			if (++s->bad <= 5)
				cli_warn("%s:%lu: cpu %d: the DPC/ISR reports count CPUs 0 to %d, "
				    "line skipped", lr_name(lr), lr_lineno(lr), ev.cpu, DPC_MAX_CPUS - 1);
			continue;
		}
		if (!s->have_time || ev.time_ms < s->first_ms)
			s->first_ms = ev.time_ms;
		if (!s->have_time || ev.time_ms > s->last_ms)
			s->last_ms = ev.time_ms;
		s->have_time = 1;
		if (ev.cpu > s->maxcpu)
			s->maxcpu = ev.cpu;
		if (s->o.cpu_filter && (ev.cpu < 0 || !s->o.cpus[ev.cpu]))
			continue;
		cls = event_class(ev.kind);
		if (cls == C_DPC && s->o.want_dpc)
			add_routine(s, &ev, cls);
		else if (cls == C_ISR && s->o.want_isr)
			add_routine(s, &ev, cls);
		else if (cls < 0 && s->want_samples && strcmp(ev.kind, "Sample") == 0)
			add_sample(s, &ev);
		else
			continue;
		s->events++;
	}
	s->bad += lr_finish(lr);
	lr_close(lr);
	input_end(s);
	if (s->bad) {
		cli_warn("%lu unusable input line%s skipped", s->bad, s->bad == 1 ? "" : "s");
		return EXIT_PARTIAL;
	}
	return 0;
}

void
dpc_free(struct dpc_stats *s)
{
	if (s == NULL)
		return;
	rows_free(&s->funcs);
	rows_free(&s->mods);
	intern_release(&s->stacks);
	intern_release(&s->roots);
	for (size_t c = 0; c < s->nwin; c++)
		if (s->win[c] != NULL) {
			for (size_t k = s->win[c]->head; k < s->win[c]->nsmp; k++)
				free(s->win[c]->smp[k].stack);
			free(s->win[c]->iv);
			free(s->win[c]->smp);
			free(s->win[c]);
		}
	free(s->win);
	free(s->agg.a);
	free(s->agg.tab);
	free(s->source);
	free(s);
}

/* ------------------------------------------------------------------ */
/* order, percentiles, the trace                                       */

double
dpc_percentile(const struct dpc_row *r, double p)
{
	uint64_t k, seen = 0;
	size_t i;

	if (r->dur.total == 0)
		return 0;
	k = (uint64_t)ceil(p / 100 * (double)r->dur.total);
	if (k < 1)
		k = 1;
	for (i = 0; i < r->dur.n; i++) {
		seen += r->dur.v[i].n;
		if (seen >= k)
			return r->dur.v[i].us;
	}
	return r->dur.v[r->dur.n - 1].us;
}

static int
by_total(const void *a, const void *b)
{
	const struct dpc_row *x = *(struct dpc_row *const *)a, *y = *(struct dpc_row *const *)b;

	if (x->cls != y->cls)
		return x->cls - y->cls;
	if (x->total_us != y->total_us)
		return x->total_us < y->total_us ? 1 : -1;
	if (strcmp(x->module, y->module))
		return strcmp(x->module, y->module);
	return strcmp(x->func ? x->func : "", y->func ? y->func : "");
}

void
dpc_sort_rows(struct dpc_rows *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		struct dpc_row *r = t->r[i];

		dpc_durs_sort(&r->dur);
		if (r->nint) {
			r->sum_int = (double)r->sum_int_ns / 1000;
			r->min_int = (double)r->min_int_ns / 1000;
			r->max_int = (double)r->max_int_ns / 1000;
		}
	}
	if (t->n > 1)
		qsort(t->r, t->n, sizeof(*t->r), by_total);
	/* the hash table is stale after sorting; reports only iterate */
	free(t->tab);
	t->tab = NULL;
}

double
dpc_trace_ms(const struct dpc_stats *s)
{
	if (s->duration_ms > 0)
		return s->duration_ms;
	return s->have_time ? s->last_ms - s->first_ms : 0;
}

int
dpc_ncpus(const struct dpc_stats *s)
{
	int n = s->maxcpu + 1;

	if (s->cpus_hdr > n)
		n = s->cpus_hdr;
	if (n > DPC_MAX_CPUS)
		n = DPC_MAX_CPUS;
	return n;
}
