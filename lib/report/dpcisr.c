/*
 * dpcisr.c - DPC/ISR statistics: per module/function durations with
 * exact percentiles, per-CPU usage, xperf-style histograms, intervals
 * between routine starts, samples inside DPCs/ISRs, the sorted chart.
 */
#include "report/dpcisr.h"
#include "base/escape.h"
#include "report/numfmt.h"
#include "base/cli.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NBUCKETS 64

enum { C_DPC, C_ISR };

/* one (class, kind, module, function) or (class, module) row */
struct row {
	int cls;
	char *kind;		/* DPC, TimerDPC, ThreadedDPC, ISR; NULL for module rows */
	char *module;
	char *func;		/* NULL for module rows */
	uint64_t count, over;
	double total_us, max_us;
	double *dur;		/* every duration, for percentiles */
	size_t ndur, capdur;
	/* intervals between successive starts (module rows) */
	uint64_t nint, unordered;
	double sum_int, min_int, max_int;
	/* module rows: usage per CPU and the histogram */
	double *cpu_us;
	double *cpu_last;	/* start of the previous routine on each CPU (ms), NAN if none */
	size_t ncpu;
	uint64_t bucket[NBUCKETS];
};

struct rowtab {
	struct row **r;
	size_t n, cap;
	uint32_t *tab;
	size_t mask;
};

struct interval {
	double start, end;
	int cpu;
	int cls;
	uint32_t module;	/* module row index */
};

struct sample {
	double t, w;
	uint32_t stack;
	int cpu;
	unsigned char flags;	/* 1 dpc=1, 2 isr=1 */
};

struct strtab {
	char **s;
	size_t *len;
	size_t n, cap;
	uint32_t *tab;
	size_t mask;
};

struct dpc_stats {
	struct dpc_opts o;
	struct rowtab funcs, mods;
	double cpu_us[2][DPC_MAX_CPUS];
	int maxcpu;
	double first_ms, last_ms, duration_ms;
	int have_time;
	char *source;
	int cpus_hdr;
	unsigned long bad, events;
	/* dpcstacks */
	int want_samples;
	struct interval *iv;
	size_t niv, capiv;
	struct sample *smp;
	size_t nsmp, capsmp;
	struct strtab stacks;
	unsigned long st_matched, st_window_only, st_flag_only, st_outside;
};

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

int
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

static uint64_t
hstr(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static uint64_t
row_hash(int cls, const char *kind, const char *mod, const char *fn)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)cls;

	h = hstr(kind ? kind : "", h);
	h = hstr(mod, h * 31);
	return hstr(fn ? fn : "", h * 31);
}

static int
streq0(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static struct row *
row_get(struct rowtab *t, int cls, const char *kind, const char *mod, const char *fn)
{
	size_t i;
	struct row *r;

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
			struct row *q = t->r[k];

			j = (size_t)row_hash(q->cls, q->kind, q->module, q->func) & t->mask;
			while (t->tab[j])
				j = (j + 1) & t->mask;
			t->tab[j] = (uint32_t)(k + 1);
		}
	}
	return r;
}

static size_t
row_index(struct rowtab *t, const struct row *r)
{
	size_t i;

	for (i = t->n; i > 0; i--)
		if (t->r[i - 1] == r)
			return i - 1;
	return 0;
}

static void
rows_free(struct rowtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->r[i]->kind);
		free(t->r[i]->module);
		free(t->r[i]->func);
		free(t->r[i]->dur);
		free(t->r[i]->cpu_us);
		free(t->r[i]->cpu_last);
		free(t->r[i]);
	}
	free(t->r);
	free(t->tab);
}

static uint32_t
str_intern(struct strtab *t, const char *s, size_t n)
{
	size_t i;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t k;

	if (t->tab == NULL) {
		t->mask = 1023;
		t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
	}
	for (k = 0; k < n; k++)
		h = (h ^ (unsigned char)s[k]) * 0x100000001b3ull;
	i = (size_t)h & t->mask;
	while (t->tab[i]) {
		uint32_t id = t->tab[i] - 1;

		if (t->len[id] == n && memcmp(t->s[id], s, n) == 0)
			return id;
		i = (i + 1) & t->mask;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->s = xrealloc(t->s, t->cap * sizeof(*t->s));
		t->len = xrealloc(t->len, t->cap * sizeof(*t->len));
	}
	t->s[t->n] = xstrndup(s, n);
	t->len[t->n] = n;
	t->tab[i] = (uint32_t)++t->n;
	if (2 * t->n > t->mask) {
		size_t j, q;

		free(t->tab);
		t->mask = t->mask * 2 + 1;
		t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
		for (q = 0; q < t->n; q++) {
			h = 0xcbf29ce484222325ull;
			for (k = 0; k < t->len[q]; k++)
				h = (h ^ (unsigned char)t->s[q][k]) * 0x100000001b3ull;
			j = (size_t)h & t->mask;
			while (t->tab[j])
				j = (j + 1) & t->mask;
			t->tab[j] = (uint32_t)(q + 1);
		}
	}
	return (uint32_t)(t->n - 1);
}

static void
strtab_free(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->len);
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
add_duration(struct row *r, double us, double limit)
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
	struct row *fr, *mr;

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
			mr->cpu_last = xrealloc(mr->cpu_last, n * sizeof(*mr->cpu_last));
			for (size_t k = mr->ncpu; k < n; k++) {
				mr->cpu_us[k] = 0;
				mr->cpu_last[k] = NAN;
			}
			mr->ncpu = n;
		}
		mr->cpu_us[ev->cpu] += us;
		s->cpu_us[cls][ev->cpu] += us;
		/*
		 * Intervals between successive starts of this module's routines on
		 * the same CPU: how often it fires there (back-to-back DPCs show
		 * as intervals close to their duration).
		 */
		if (!isnan(mr->cpu_last[ev->cpu])) {
			double d = (ev->time_ms - mr->cpu_last[ev->cpu]) * 1000;

			if (d < 0)
				mr->unordered++;
			else {
				mr->nint++;
				mr->sum_int += d;
				if (d < mr->min_int)
					mr->min_int = d;
				if (d > mr->max_int)
					mr->max_int = d;
			}
		}
		if (isnan(mr->cpu_last[ev->cpu]) || ev->time_ms > mr->cpu_last[ev->cpu])
			mr->cpu_last[ev->cpu] = ev->time_ms;
	}
	if (s->want_samples && ev->cpu >= 0) {
		struct interval *iv;

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
	struct sample *sm;
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
	sm->stack = str_intern(&s->stacks, ev->stack, ev->stack_len);
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
	while ((line = lr_next(lr, &len)) != NULL) {
		enum evt_linetype t = evt_classify(line, len);
		int cls;

		if ((lr_lineno(lr) & 0xffff) == 0)
			cli_progress(lr_offset(lr), lr_size(lr));
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
	cli_progress_end();
	s->bad += lr_skipped(lr);	/* too long, NUL bytes: reported by the reader */
	if (lr_error(lr)) {
		/* keep what was read before the damage, like every other reader */
		cli_warn("%s: %s", lr_name(lr), lr_error(lr));
		s->bad++;
	}
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
	strtab_free(&s->stacks);
	free(s->iv);
	free(s->smp);
	free(s->source);
	free(s);
}

/* ------------------------------------------------------------------ */
/* reports                                                             */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of the sorted durations. */
static double
percentile(const struct row *r, double p)
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
	const struct row *x = *(struct row *const *)a, *y = *(struct row *const *)b;

	if (x->cls != y->cls)
		return x->cls - y->cls;
	if (x->total_us != y->total_us)
		return x->total_us < y->total_us ? 1 : -1;
	if (strcmp(x->module, y->module))
		return strcmp(x->module, y->module);
	return strcmp(x->func ? x->func : "", y->func ? y->func : "");
}

static double
trace_ms(const struct dpc_stats *s)
{
	if (s->duration_ms > 0)
		return s->duration_ms;
	return s->have_time ? s->last_ms - s->first_ms : 0;
}

static int
ncpus(const struct dpc_stats *s)
{
	int n = s->maxcpu + 1;

	if (s->cpus_hdr > n)
		n = s->cpus_hdr;
	if (n > DPC_MAX_CPUS)
		n = DPC_MAX_CPUS;
	return n;
}

static int
cpu_shown(const struct dpc_stats *s, int c)
{
	return !s->o.cpu_filter || s->o.cpus[c];
}

static const char *cls_name[] = { "DPC", "ISR" };

/*
 * Text cell: left- or right-aligned in WIDTH columns (text mode, names
 * escaped for people: base/escape.h text_escape), or TSV.
 */
static void
cell(struct outbuf *ob, int tsv, int first, const char *s, int width, int left)
{
	size_t n = strlen(s);
	int w;

	if (tsv) {
		if (!first)
			ob_putc(ob, '\t');
		/* values come from traces: no tabs or newlines in a TSV cell */
		for (size_t i = 0; i < n; i++)
			ob_putc(ob, (s[i] == '\t' || s[i] == '\n' || s[i] == '\r') ? ' ' : s[i]);
		return;
	}
	if (!first)
		ob_puts(ob, "  ");
	w = (int)text_width(s, n);
	if (left) {
		text_escape(ob, s, n);
		if (width > 0)
			for (int i = w; i < width; i++)
				ob_putc(ob, ' ');
	} else {
		for (int i = w; i < width; i++)
			ob_putc(ob, ' ');
		text_escape(ob, s, n);
	}
}

static void
sort_rows(struct rowtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i]->ndur > 1)
			qsort(t->r[i]->dur, t->r[i]->ndur, sizeof(double), cmp_double);
	if (t->n > 1)
		qsort(t->r, t->n, sizeof(*t->r), by_total);
	/* the hash table is stale after sorting; reports only iterate */
	free(t->tab);
	t->tab = NULL;
}

static void
fmt_us(char *b, double v)
{
	snprintf(b, 32, "%.3f", v);
}

static void
row_table(struct dpc_stats *s, struct outbuf *ob, struct rowtab *t, int funcs)
{
	int tsv = s->o.tsv;
	size_t i;
	int wm = 6, wf = 8;
	static const char *hdr[] = { "count", "total_us", "avg_us", "max_us", "p50_us",
		"p90_us", "p99_us", "over", "over%" };

	for (i = 0; i < t->n; i++) {
		int l = (int)text_width(t->r[i]->module, strlen(t->r[i]->module));

		if (l > wm)
			wm = l;
		if (funcs) {
			l = (int)text_width(t->r[i]->func, strlen(t->r[i]->func));
			if (l > wf)
				wf = l;
		}
	}
	if (wf > 60)
		wf = 60;
	if (tsv)
		ob_puts(ob, funcs ? "#function\t" : "#module\t");
	cell(ob, tsv, 1, "type", 11, 1);
	cell(ob, tsv, 0, "module", wm, 1);
	if (funcs)
		cell(ob, tsv, 0, "function", wf, 1);
	for (i = 0; i < 9; i++)
		cell(ob, tsv, 0, hdr[i], i == 0 ? 8 : 11, 0);
	ob_putc(ob, '\n');
	for (i = 0; i < t->n; i++) {
		struct row *r = t->r[i];
		char b[9][40];
		int k;

		snprintf(b[0], 40, "%llu", (unsigned long long)r->count);
		fmt_us(b[1], r->total_us);
		fmt_us(b[2], r->count ? r->total_us / (double)r->count : 0);
		fmt_us(b[3], r->max_us);
		fmt_us(b[4], percentile(r, 50));
		fmt_us(b[5], percentile(r, 90));
		fmt_us(b[6], percentile(r, 99));
		snprintf(b[7], 40, "%llu", (unsigned long long)r->over);
		snprintf(b[8], 40, "%.2f", r->count ? 100.0 * (double)r->over / (double)r->count : 0);
		if (tsv)
			ob_puts(ob, funcs ? "function\t" : "module\t");
		cell(ob, tsv, 1, funcs ? r->kind : cls_name[r->cls], 11, 1);
		cell(ob, tsv, 0, r->module, wm, 1);
		if (funcs)
			cell(ob, tsv, 0, r->func, wf, 1);
		for (k = 0; k < 9; k++)
			cell(ob, tsv, 0, b[k], k == 0 ? 8 : 11, 0);
		if (!tsv && r->over)
			ob_puts(ob, "  !");
		ob_putc(ob, '\n');
	}
}

static void
cpu_table(struct dpc_stats *s, struct outbuf *ob)
{
	int tsv = s->o.tsv, c, n = ncpus(s);
	double tus = trace_ms(s) * 1000;
	static const char *hdr[] = { "dpc_us", "dpc%", "isr_us", "isr%", "total%" };

	if (tsv)
		ob_puts(ob, "#cpu\t");
	cell(ob, tsv, 1, "cpu", 4, 0);
	for (c = 0; c < 5; c++)
		cell(ob, tsv, 0, hdr[c], 14, 0);
	ob_putc(ob, '\n');
	for (c = 0; c < n; c++) {
		char b[5][40], cb[16];
		double d = s->cpu_us[C_DPC][c], i = s->cpu_us[C_ISR][c];
		int k;

		if (!cpu_shown(s, c))
			continue;
		snprintf(cb, sizeof(cb), "%d", c);
		fmt_us(b[0], d);
		snprintf(b[1], 40, "%.2f", tus > 0 ? 100 * d / tus : 0);
		fmt_us(b[2], i);
		snprintf(b[3], 40, "%.2f", tus > 0 ? 100 * i / tus : 0);
		snprintf(b[4], 40, "%.2f", tus > 0 ? 100 * (d + i) / tus : 0);
		if (tsv)
			ob_puts(ob, "cpu\t");
		cell(ob, tsv, 1, cb, 4, 0);
		for (k = 0; k < 5; k++)
			cell(ob, tsv, 0, b[k], 14, 0);
		ob_putc(ob, '\n');
	}
}

static void
interval_table(struct dpc_stats *s, struct outbuf *ob)
{
	int tsv = s->o.tsv;
	size_t i;
	int wm = 6;
	double tms = trace_ms(s);
	static const char *hdr[] = { "count", "per_sec", "min_int_us", "avg_int_us", "max_int_us" };

	for (i = 0; i < s->mods.n; i++) {
		int l = (int)text_width(s->mods.r[i]->module, strlen(s->mods.r[i]->module));

		if (l > wm)
			wm = l;
	}
	if (tsv)
		ob_puts(ob, "#interval\t");
	cell(ob, tsv, 1, "type", 4, 1);
	cell(ob, tsv, 0, "module", wm, 1);
	for (i = 0; i < 5; i++)
		cell(ob, tsv, 0, hdr[i], i == 0 ? 8 : 13, 0);
	ob_putc(ob, '\n');
	for (i = 0; i < s->mods.n; i++) {
		struct row *r = s->mods.r[i];
		char b[5][40];
		int k;

		snprintf(b[0], 40, "%llu", (unsigned long long)r->count);
		snprintf(b[1], 40, "%.1f", tms > 0 ? (double)r->count / (tms / 1000) : 0);
		if (r->nint) {
			fmt_us(b[2], r->min_int);
			fmt_us(b[3], r->sum_int / (double)r->nint);
			fmt_us(b[4], r->max_int);
		} else
			strcpy(b[2], "-"), strcpy(b[3], "-"), strcpy(b[4], "-");
		if (tsv)
			ob_puts(ob, "interval\t");
		cell(ob, tsv, 1, cls_name[r->cls], 4, 1);
		cell(ob, tsv, 0, r->module, wm, 1);
		for (k = 0; k < 5; k++)
			cell(ob, tsv, 0, b[k], k == 0 ? 8 : 13, 0);
		ob_putc(ob, '\n');
	}
}

static void
flags_section(struct dpc_stats *s, struct outbuf *ob)
{
	int cls;
	size_t i;

	for (cls = 0; cls < 2; cls++) {
		uint64_t n = 0, over = 0;
		double limit = cls == C_DPC ? s->o.dpc_limit_us : s->o.isr_limit_us;

		for (i = 0; i < s->mods.n; i++)
			if (s->mods.r[i]->cls == cls) {
				n += s->mods.r[i]->count;
				over += s->mods.r[i]->over;
			}
		if (n == 0)
			continue;
		if (s->o.tsv) {
			ob_printf(ob, "flag\t%s\t*\t%g\t%llu\t%llu\n", cls_name[cls], limit,
			    (unsigned long long)over, (unsigned long long)n);
		} else
			ob_printf(ob, "%ss over %g us: %llu of %llu (%.2f%%)%s\n", cls_name[cls], limit,
			    (unsigned long long)over, (unsigned long long)n,
			    100.0 * (double)over / (double)n,
			    over ? "  (Windows guidance: DPC <= 100 us, ISR <= 25 us)" : "");
		for (i = 0; i < s->mods.n; i++) {
			struct row *r = s->mods.r[i];

			if (r->cls != cls || r->over == 0)
				continue;
			if (s->o.tsv)
				ob_printf(ob, "flag\t%s\t%s\t%g\t%llu\t%llu\n", cls_name[cls], r->module,
				    limit, (unsigned long long)r->over, (unsigned long long)r->count);
			else {
				ob_puts(ob, "  ! ");
				text_escape_str(ob, r->module);
				ob_printf(ob, ": %llu of %llu over %g us (%.2f%%), avg %.3f us, max %.3f us\n",
				    (unsigned long long)r->over, (unsigned long long)r->count,
				    limit, 100.0 * (double)r->over / (double)r->count,
				    r->total_us / (double)r->count, r->max_us);
			}
		}
	}
}

void
dpc_report_functions(struct dpc_stats *s, struct outbuf *ob)
{
	sort_rows(&s->mods);
	sort_rows(&s->funcs);
	if (!s->o.tsv) {
		ob_printf(ob, "DPC/ISR duration by module, function");
		if (s->source) {
			ob_puts(ob, " - ");
			text_escape_str(ob, s->source);
		}
		ob_printf(ob, "\ntrace %.3f ms, %d CPUs%s; percentiles nearest-rank; "
		    "'!' = over the guidance (DPC > %g us, ISR > %g us)\n\n",
		    trace_ms(s), ncpus(s), s->o.cpu_filter ? " (CPU filter)" : "",
		    s->o.dpc_limit_us, s->o.isr_limit_us);
		ob_puts(ob, "Share of each CPU's time in DPC/ISR\n");
	}
	cpu_table(s, ob);
	if (!s->o.tsv)
		ob_puts(ob, "\nBy module\n");
	row_table(s, ob, &s->mods, 0);
	if (!s->o.tsv)
		ob_puts(ob, "\nBy module, function\n");
	row_table(s, ob, &s->funcs, 1);
	if (!s->o.tsv)
		ob_puts(ob, "\nIntervals between starts on the same CPU (how often each module's routines run)\n");
	interval_table(s, ob);
	if (!s->o.tsv)
		ob_puts(ob, "\n");
	flags_section(s, ob);
	if (s->mods.n == 0 && !s->o.tsv)
		ob_puts(ob, "no DPC/ISR events in the input (record with the DPC and "
		    "Interrupt kernel flags)\n");
}

void
dpc_report_xperf(struct dpc_stats *s, struct outbuf *ob)
{
	int cls, c, n = ncpus(s);
	size_t i;
	double tus = trace_ms(s) * 1000;

	sort_rows(&s->mods);
	for (cls = 0; cls < 2; cls++) {
		if ((cls == C_DPC && !s->o.want_dpc) || (cls == C_ISR && !s->o.want_isr))
			continue;
		ob_puts(ob, cls == C_DPC ? "DPC Info\n" : "Interrupt Info\n");
		ob_puts(ob, "--------------------------------------------------------------------------------\n"
		    "CPU Usage Summing By Module For the Whole Trace\n"
		    "--------------------------------------------------------------------------------\n");
		ob_printf(ob, "CPU Usage from 0 us to %.0f us:\n", tus);
		for (c = 0; c < n; c++)
			if (cpu_shown(s, c)) {
				char b[32];

				snprintf(b, sizeof(b), "CPU %d Usage", c);
				ob_printf(ob, "%14s,", b);
			}
		ob_putc(ob, '\n');
		for (c = 0; c < n; c++)
			if (cpu_shown(s, c))
				ob_printf(ob, "%14s,", "usec      %");
		ob_puts(ob, " Module\n");
		for (i = 0; i < s->mods.n; i++) {
			struct row *r = s->mods.r[i];

			if (r->cls != cls)
				continue;
			for (c = 0; c < n; c++) {
				double u = (size_t)c < r->ncpu ? r->cpu_us[c] : 0;

				if (cpu_shown(s, c))
					ob_printf(ob, "%9.0f %4.2f,", u, tus > 0 ? 100 * u / tus : 0);
			}
			ob_putc(ob, ' ');
			text_escape_str(ob, r->module);
			ob_putc(ob, '\n');
		}
		for (c = 0; c < n; c++)
			if (cpu_shown(s, c)) {
				double u = s->cpu_us[cls][c];

				ob_printf(ob, "%9.0f %4.2f,", u, tus > 0 ? 100 * u / tus : 0);
			}
		ob_puts(ob, " Total\n\n");
		for (i = 0; i < s->mods.n; i++) {
			struct row *r = s->mods.r[i];
			int k, last = 0;
			double lo = 0, hi = 1;

			if (r->cls != cls)
				continue;
			for (k = 0; k < NBUCKETS; k++)
				if (r->bucket[k])
					last = k;
			ob_printf(ob, "Total = %llu for module ", (unsigned long long)r->count);
			text_escape_str(ob, r->module);
			ob_putc(ob, '\n');
			for (k = 0; k <= last; k++) {
				ob_printf(ob, "Elapsed Time, > %8.0f usecs AND <= %8.0f usecs, %8llu, or %6.2f%%\n",
				    lo, hi, (unsigned long long)r->bucket[k],
				    r->count ? 100.0 * (double)r->bucket[k] / (double)r->count : 0);
				lo = hi;
				hi *= 2;
			}
			ob_printf(ob, "Total, %llu\n\n", (unsigned long long)r->count);
		}
	}
}

/* ------------------------------------------------------------------ */
/* DPC/ISR usage by module, stack                                      */

static int
iv_cmp(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end < y->end) - (x->end > y->end);	/* outer first */
}

static int
sample_cmp(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	return (x->t > y->t) - (x->t < y->t);
}

/*
 * One (root, stack) pair and its weight.  The names are filled in once
 * the sweep has interned every string, just before sorting, so that the
 * comparator needs no context pointer (qsort_r differs between glibc and
 * the BSDs and is not in POSIX 2008).  Interned strings are never moved.
 */
struct agg {
	uint32_t root, stack;
	double w;
	const char *root_name, *stack_name;
};

/* (root, stack) pairs are unique, so the order is total: no ties */
static int
agg_cmp(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;
	int c = strcmp(x->root_name, y->root_name);

	if (c)
		return c;
	return strcmp(x->stack_name, y->stack_name);
}

struct aggtab {
	struct agg *a;
	size_t n, cap;
	uint32_t *tab;
	size_t mask;
};

static size_t
agg_hash(uint32_t root, uint32_t stack, size_t mask)
{
	uint64_t h = ((uint64_t)root << 32 | stack) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 29)) & mask;
}

static void
agg_add(struct aggtab *t, uint32_t root, uint32_t stack, double w)
{
	size_t h = agg_hash(root, stack, t->mask), q;

	while (t->tab[h]) {
		struct agg *a = &t->a[t->tab[h] - 1];

		if (a->root == root && a->stack == stack) {
			a->w += w;
			return;
		}
		h = (h + 1) & t->mask;
	}
	if (t->n == t->cap) {
		t->cap *= 2;
		t->a = xrealloc(t->a, t->cap * sizeof(*t->a));
	}
	t->a[t->n].root = root;
	t->a[t->n].stack = stack;
	t->a[t->n].w = w;
	t->tab[h] = (uint32_t)++t->n;
	if (2 * t->n > t->mask) {
		free(t->tab);
		t->mask = t->mask * 2 + 1;
		t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
		for (q = 0; q < t->n; q++) {
			h = agg_hash(t->a[q].root, t->a[q].stack, t->mask);
			while (t->tab[h])
				h = (h + 1) & t->mask;
			t->tab[h] = (uint32_t)(q + 1);
		}
	}
}

/* Writes a stack from the evt column as folded frames ("%3B" becomes ':'). */
static void
put_folded_stack(struct outbuf *ob, const char *st, size_t n)
{
	size_t a;

	for (a = 0; a < n; a++) {
		if (st[a] == '%' && a + 2 < n && st[a + 1] == '3' &&
		    (st[a + 2] == 'B' || st[a + 2] == 'b')) {
			ob_putc(ob, ':');
			a += 2;
		} else
			ob_putc(ob, st[a]);
	}
}

void
dpc_report_stacks(struct dpc_stats *s, struct outbuf *ob)
{
	size_t i, j = 0, k, nact = 0, capact = 64;
	struct interval *act = xmalloc(capact * sizeof(*act));
	struct strtab roots;
	struct aggtab at;
	double scale = strcmp(s->o.unit, "us") == 0 ? 1000 : 1, carry = 0;

	memset(&roots, 0, sizeof(roots));
	memset(&at, 0, sizeof(at));
	at.cap = 1024;
	at.a = xmalloc(at.cap * sizeof(*at.a));
	at.mask = 4095;
	at.tab = xcalloc(at.mask + 1, sizeof(*at.tab));
	if (s->nsmp > 1)
		qsort(s->smp, s->nsmp, sizeof(*s->smp), sample_cmp);
	if (s->niv > 1)
		qsort(s->iv, s->niv, sizeof(*s->iv), iv_cmp);
	/*
	 * Sweep per CPU in time order: keep the intervals of that CPU that
	 * have started; a sample belongs to the innermost one (latest start)
	 * still running at its time -- an ISR interrupting a DPC wins.
	 */
	for (i = 0; i < s->nsmp; i++) {
		struct sample *sm = &s->smp[i];
		const struct interval *best = NULL;
		char rootname[1200];
		uint32_t root;

		if (i == 0 || sm->cpu != s->smp[i - 1].cpu) {
			nact = 0;
			while (j < s->niv && s->iv[j].cpu < sm->cpu)
				j++;
		}
		for (; j < s->niv && s->iv[j].cpu == sm->cpu && s->iv[j].start <= sm->t; j++) {
			if (nact == capact) {
				capact *= 2;
				act = xrealloc(act, capact * sizeof(*act));
			}
			act[nact++] = s->iv[j];
		}
		for (k = 0; k < nact; ) {
			if (act[k].end <= sm->t) {	/* [start, end): a sample at the end is after it */
				act[k] = act[--nact];
				continue;
			}
			k++;
		}
		for (k = 0; k < nact; k++)
			if (best == NULL || act[k].start > best->start)
				best = &act[k];
		if (best != NULL) {
			s->st_matched++;
			if (!sm->flags)
				s->st_window_only++;
			snprintf(rootname, sizeof(rootname), "[%s] %s", cls_name[best->cls],
			    s->mods.r[best->module]->module);
		} else if (sm->flags) {
			s->st_flag_only++;
			snprintf(rootname, sizeof(rootname), "[%s] ?",
			    (sm->flags & 2) ? "ISR" : "DPC");
		} else {
			s->st_outside++;
			continue;
		}
		root = str_intern(&roots, rootname, strlen(rootname));
		agg_add(&at, root, sm->stack, sm->w);
	}
	for (i = 0; i < at.n; i++) {
		at.a[i].root_name = roots.s[at.a[i].root];
		at.a[i].stack_name = s->stacks.s[at.a[i].stack];
	}
	if (at.n > 1)
		qsort(at.a, at.n, sizeof(*at.a), agg_cmp);
	for (i = 0; i < at.n; i++) {
		size_t n = s->stacks.len[at.a[i].stack];
		double w = at.a[i].w * scale;
		char num[64];

		if (strcmp(s->o.unit, "ms") == 0)
			fmt_num(num, w);
		else {
			/* integer counts; the rounding remainder is carried so the total stays exact */
			double r = floor(w + carry + 0.5);

			carry += w - r;
			if (r <= 0)
				continue;
			snprintf(num, sizeof(num), "%.0f", r);
		}
		ob_puts(ob, roots.s[at.a[i].root]);
		if (n)
			ob_putc(ob, ';');
		put_folded_stack(ob, s->stacks.s[at.a[i].stack], n);
		ob_putc(ob, ' ');
		ob_puts(ob, num);
		ob_putc(ob, '\n');
	}
	if (s->nsmp == 0)
		cli_warn("no Sample events in the input: nothing to attribute to DPCs/ISRs");
	else if (s->st_flag_only)
		cli_warn("%lu sample%s flagged dpc=1/isr=1 had no DPC/ISR event on their CPU "
		    "at their time (shown under \"[DPC] ?\" / \"[ISR] ?\")", s->st_flag_only,
		    s->st_flag_only == 1 ? "" : "s");
	free(act);
	free(at.a);
	free(at.tab);
	strtab_free(&roots);
}

/* ------------------------------------------------------------------ */
/* sorted durations chart                                              */

struct trace_series {
	char *label;
	double *d;
	size_t n;
};

struct dpc_chart {
	struct dpc_opts o;
	struct trace_series *t;
	size_t n;
};

struct dpc_chart *
dpc_chart_new(const struct dpc_opts *o)
{
	struct dpc_chart *c = xcalloc(1, sizeof(*c));

	c->o = *o;
	return c;
}

static int
cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

int
dpc_chart_add_trace(struct dpc_chart *c, const char *path, const char *label)
{
	struct dpc_opts o = c->o;
	struct dpc_stats *s;
	struct trace_series *ts;
	size_t i;
	int r;

	if (!o.want_isr || !o.want_dpc) {
		/* explicit --dpc or --isr */
	} else
		o.want_isr = 0;	/* the chart is about DPCs unless --isr */
	s = dpc_new(&o);
	s->want_samples = 0;
	r = dpc_read(s, path);
	if (r == EXIT_FATAL) {
		dpc_free(s);
		return r;
	}
	c->t = xrealloc(c->t, (c->n + 1) * sizeof(*c->t));
	ts = &c->t[c->n++];
	ts->label = xstrdup(label ? label : (s->source ? s->source : path));
	ts->d = NULL;
	ts->n = 0;
	for (i = 0; i < s->mods.n; i++) {
		struct row *m = s->mods.r[i];

		if (strcasecmp(m->module, o.module) != 0)
			continue;
		if (m->ndur == 0)
			continue;
		ts->d = xrealloc(ts->d, (ts->n + m->ndur) * sizeof(double));
		memcpy(ts->d + ts->n, m->dur, m->ndur * sizeof(double));
		ts->n += m->ndur;
	}
	if (ts->n > 1)
		qsort(ts->d, ts->n, sizeof(double), cmp_desc);
	if (ts->n == 0)
		cli_warn("%s: no %s of module %s", path, o.want_isr && !o.want_dpc ? "ISRs" : "DPCs",
		    o.module);
	dpc_free(s);
	return r;
}

static const char *const series_colours[] = {
	"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#7f7f7f", "#bcbd22"
};

void
dpc_chart_write(struct dpc_chart *c, struct outbuf *ob)
{
	double W = c->o.width, H = c->o.height;
	double ml = 80, mr = 30, mt = 60, mb = 60 + 18.0 * (double)c->n;
	double pw = W - ml - mr, ph = H - mt - mb;
	double ymax = c->o.dpc_limit_us * 1.2, ymin = c->o.log_y ? 1e9 : 0;
	double limit = c->o.want_isr && !c->o.want_dpc ? c->o.isr_limit_us : c->o.dpc_limit_us;
	size_t i, k;
	int tick;

	if (ph < 50)
		ph = 50, H = mt + mb + ph;
	for (i = 0; i < c->n; i++)
		for (k = 0; k < c->t[i].n; k++) {
			if (c->t[i].d[k] > ymax)
				ymax = c->t[i].d[k];
			if (c->o.log_y && c->t[i].d[k] > 0 && c->t[i].d[k] < ymin)
				ymin = c->t[i].d[k];
		}
	if (c->o.log_y) {
		ymin = ymin > limit ? limit / 2 : ymin;
		if (ymin > 1e8)
			ymin = 1;
		ymin = pow(10, floor(log10(ymin)));
		ymax = pow(10, ceil(log10(ymax)));
	} else {
		/* a round top: 1, 2 or 5 times a power of ten */
		double p = pow(10, floor(log10(ymax))), m = ymax / p;

		ymax = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
	}
#define YPOS(v) (c->o.log_y ? mt + ph - ph * (log10((v) > ymin ? (v) : ymin) - log10(ymin)) / \
	    (log10(ymax) - log10(ymin)) : mt + ph - ph * (v) / ymax)
	ob_printf(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
	    "xmlns=\"http://www.w3.org/2000/svg\">\n", W, H, W, H);
	ob_puts(ob, "<style>text{font-family:Verdana,sans-serif;font-size:12px}"
	    ".t{font-size:17px;text-anchor:middle}.ax{stroke:#000;stroke-width:1}"
	    ".g{stroke:#ddd;stroke-width:1}.lim{stroke:#c00;stroke-width:1.5;stroke-dasharray:6,4}"
	    "polyline{fill:none;stroke-width:1.5}</style>\n");
	ob_printf(ob, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
	    "<text class=\"t\" x=\"%g\" y=\"28\">", W / 2);
	ob_puts(ob, c->o.want_isr && !c->o.want_dpc ? "ISR" : "DPC");
	ob_puts(ob, " durations of ");
	xml_escape_str(ob, c->o.module);
	ob_puts(ob, ", sorted (longest first)</text>\n");
	/* axes and grid */
	for (tick = 0; tick <= 10; tick++) {
		double x = ml + pw * tick / 10;

		ob_printf(ob, "<line class=\"g\" x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\"/>"
		    "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%d%%</text>\n",
		    x, mt, x, mt + ph, x, mt + ph + 16, tick * 10);
	}
	if (c->o.log_y) {
		double v;

		for (v = ymin; v <= ymax * 1.0001; v *= 10)
			ob_printf(ob, "<line class=\"g\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>"
			    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			    ml, YPOS(v), ml + pw, YPOS(v), ml - 6, YPOS(v) + 4, v);
	} else
		for (tick = 0; tick <= 5; tick++) {
			double v = ymax * tick / 5;

			ob_printf(ob, "<line class=\"g\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>"
			    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			    ml, YPOS(v), ml + pw, YPOS(v), ml - 6, YPOS(v) + 4, v);
		}
	ob_printf(ob, "<line class=\"ax\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>"
	    "<line class=\"ax\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>\n",
	    ml, mt, ml, mt + ph, ml, mt + ph, ml + pw, mt + ph);
	ob_printf(ob, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">share of the module's %ss "
	    "(sorted by duration)</text>\n", ml + pw / 2, mt + ph + 34,
	    c->o.want_isr && !c->o.want_dpc ? "ISR" : "DPC");
	ob_printf(ob, "<text x=\"18\" y=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 18 %g)\">"
	    "duration (us)%s</text>\n", mt + ph / 2, mt + ph / 2, c->o.log_y ? ", log scale" : "");
	/* series: at most two points per pixel column (the data is monotonic) */
	for (i = 0; i < c->n; i++) {
		struct trace_series *t = &c->t[i];
		long lastcol = -1;

		if (t->n == 0)
			continue;
		ob_printf(ob, "<polyline id=\"s%zu\" stroke=\"%s\" points=\"", i,
		    series_colours[i % 10]);
		for (k = 0; k < t->n; k++) {
			double x = ml + (t->n == 1 ? 0 : pw * (double)k / (double)(t->n - 1));
			long col = (long)x;

			if (col == lastcol && k + 1 < t->n &&
			    (long)(ml + pw * (double)(k + 1) / (double)(t->n - 1)) == col)
				continue;
			lastcol = col;
			ob_printf(ob, "%.1f,%.1f ", x, YPOS(t->d[k]));
		}
		ob_puts(ob, "\"/>\n");
	}
	/* the guidance line */
	ob_printf(ob, "<line class=\"lim\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>"
	    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\" fill=\"#c00\">%g us guidance</text>\n",
	    ml, YPOS(limit), ml + pw, YPOS(limit), ml + pw - 4, YPOS(limit) - 4, limit);
	/* legend */
	for (i = 0; i < c->n; i++) {
		struct trace_series *t = &c->t[i];
		double y = mt + ph + 52 + 18.0 * (double)i, sum = 0;
		size_t over = 0;

		for (k = 0; k < t->n; k++) {
			sum += t->d[k];
			over += t->d[k] > limit;
		}
		ob_printf(ob, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"3\"/>"
		    "<text x=\"%g\" y=\"%g\">", ml, y - 4, ml + 24, y - 4, series_colours[i % 10], ml + 30, y);
		xml_escape_str(ob, t->label);
		ob_printf(ob, ": %zu %ss, avg %.1f us, max %.1f us, %.1f%% over %g us</text>\n",
		    t->n, c->o.want_isr && !c->o.want_dpc ? "ISR" : "DPC",
		    t->n ? sum / (double)t->n : 0, t->n ? t->d[0] : 0,
		    t->n ? 100.0 * (double)over / (double)t->n : 0, limit);
	}
	ob_puts(ob, "</svg>\n");
#undef YPOS
}

void
dpc_chart_free(struct dpc_chart *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->t[i].label);
		free(c->t[i].d);
	}
	free(c->t);
	free(c);
}
