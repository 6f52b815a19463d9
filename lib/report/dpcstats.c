/*
 * dpcstats.c - DPC/ISR statistics from evt streams: per module and per
 * function durations (every one kept, for exact percentiles), per-CPU
 * usage, power-of-two histograms, intervals between routine starts on
 * a CPU, and the DPC/ISR intervals and samples the stacks report needs.
 * The reports are in dpcisr.c and dpcchart.c.
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
	r->min_int = INFINITY;
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
		free(t->r[i]->dur);
		free(t->r[i]->cpu_us);
		free(t->r[i]->starts);
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
	s->want_samples = 1;
	intern_init(&s->stacks);
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
	if (r->ndur == r->capdur) {
		r->capdur = r->capdur ? 2 * r->capdur : 16;
		r->dur = xrealloc(r->dur, r->capdur * sizeof(*r->dur));
	}
	r->dur[r->ndur++] = us;
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
	if (us < 0)
		us = 0;
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
		if (mr->nstarts == mr->capstarts) {
			mr->capstarts = mr->capstarts ? 2 * mr->capstarts : 64;
			mr->starts = xrealloc(mr->starts, mr->capstarts * sizeof(*mr->starts));
		}
		mr->starts[mr->nstarts].t = ev->time_ms;
		mr->starts[mr->nstarts].cpu = ev->cpu;
		mr->starts[mr->nstarts++].input = s->inputs;
	}
	if (s->want_samples && ev->cpu >= 0) {
		struct dpc_interval *iv;

		if (s->niv == s->capiv) {
			s->capiv = s->capiv ? 2 * s->capiv : 1024;
			s->iv = xrealloc(s->iv, s->capiv * sizeof(*s->iv));
		}
		iv = &s->iv[s->niv++];
		iv->start = ev->time_ms;
		iv->end = ev->time_ms + us / 1000;
		iv->cls = cls;
		iv->cpu = ev->cpu;
		iv->module = (uint32_t)row_index(&s->mods, mr);
	}
}

static void
add_sample(struct dpc_stats *s, const struct evt_event *ev)
{
	struct dpc_sample *sm;
	const char *a;

	if (ev->cpu < 0)
		return;
	if (s->nsmp == s->capsmp) {
		s->capsmp = s->capsmp ? 2 * s->capsmp : 4096;
		s->smp = xrealloc(s->smp, s->capsmp * sizeof(*s->smp));
	}
	sm = &s->smp[s->nsmp++];
	sm->t = ev->time_ms;
	sm->w = ev->weight;
	if (strcmp(s->o.unit, "samples") == 0) {
		double c = 1;

		if ((a = evt_attr(ev, "count")) != NULL)
			evt_parse_decimal(a, &c);
		sm->w = c;
	}
	sm->cpu = ev->cpu;
	sm->flags = 0;
	if ((a = evt_attr(ev, "dpc")) != NULL && strcmp(a, "1") == 0)
		sm->flags |= 1;
	if ((a = evt_attr(ev, "isr")) != NULL && strcmp(a, "1") == 0)
		sm->flags |= 2;
	sm->stack = intern_add(&s->stacks, ev->stack, ev->stack_len);
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
	free(s->iv);
	free(s->smp);
	free(s->source);
	free(s);
}

/* ------------------------------------------------------------------ */
/* order, percentiles, the trace                                       */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
dpc_percentile(const struct dpc_row *r, double p)
{
	size_t k;

	if (r->ndur == 0)
		return 0;
	k = (size_t)ceil(p / 100 * (double)r->ndur);
	if (k < 1)
		k = 1;
	if (k > r->ndur)
		k = r->ndur;
	return r->dur[k - 1];
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

static int
by_start(const void *a, const void *b)
{
	const struct dpc_start *x = a, *y = b;

	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

/*
 * Intervals between successive starts of a module's routines on one CPU
 * (how often it fires there; back-to-back DPCs show as intervals close
 * to their duration), in start order whatever order the lines came in.
 */
static void
start_intervals(struct dpc_row *r)
{
	size_t i;

	if (r->nstarts > 1)
		qsort(r->starts, r->nstarts, sizeof(*r->starts), by_start);
	for (i = 1; i < r->nstarts; i++) {
		const struct dpc_start *p = &r->starts[i - 1], *q = &r->starts[i];
		double d;

		if (p->input != q->input || p->cpu != q->cpu)
			continue;
		d = (q->t - p->t) * 1000;
		r->nint++;
		r->sum_int += d;
		if (d < r->min_int)
			r->min_int = d;
		if (d > r->max_int)
			r->max_int = d;
	}
	free(r->starts);
	r->starts = NULL;
	r->nstarts = r->capstarts = 0;
}

void
dpc_sort_rows(struct dpc_rows *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->r[i]->ndur > 1)
			qsort(t->r[i]->dur, t->r[i]->ndur, sizeof(double), cmp_double);
		start_intervals(t->r[i]);
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
