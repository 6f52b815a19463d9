/*
 * dpcisr.c - the DPC/ISR reports: WPA's "DPC duration by Module,
 * Function" tables (text or TSV), xperf -a dpcisr's usage and
 * histograms, and the samples inside DPCs/ISRs as folded stacks.
 * The statistics they print are collected in dpcstats.c.
 */
#include "report/dpcisr_int.h"
#include "base/escape.h"
#include "report/numfmt.h"
#include "base/cli.h"
#include "base/hash.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		fmt_tsv_text(ob, s);
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
fmt_us(char *b, double v)
{
	snprintf(b, 32, "%.3f", v);
}

static void
row_table(struct dpc_stats *s, struct outbuf *ob, struct dpc_rows *t, int funcs)
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
		struct dpc_row *r = t->r[i];
		char b[9][40];
		int k;

		snprintf(b[0], 40, "%llu", (unsigned long long)r->count);
		fmt_us(b[1], r->total_us);
		fmt_us(b[2], r->count ? r->total_us / (double)r->count : 0);
		fmt_us(b[3], r->max_us);
		fmt_us(b[4], dpc_percentile(r, 50));
		fmt_us(b[5], dpc_percentile(r, 90));
		fmt_us(b[6], dpc_percentile(r, 99));
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
	int tsv = s->o.tsv, c, n = dpc_ncpus(s);
	double tus = dpc_trace_ms(s) * 1000;
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
	double tms = dpc_trace_ms(s);
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
		struct dpc_row *r = s->mods.r[i];
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
			struct dpc_row *r = s->mods.r[i];

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

static void
warn_late(const struct dpc_stats *s)
{
	unsigned long n = s->late_starts + s->late_samples + s->late_routines;

	if (n == 0)
		return;
	cli_warn("%lu DPC/ISR or Sample line%s came later in the log than the longest routine "
	    "before them allows (starts %lu, samples %lu, routines %lu): lines out of log "
	    "order (docs/evt-format.md 2.2); the intervals between starts and the stacks "
	    "may miss them", n, n == 1 ? "" : "s", s->late_starts, s->late_samples,
	    s->late_routines);
}

void
dpc_report_functions(struct dpc_stats *s, struct outbuf *ob)
{
	dpc_sort_rows(&s->mods);
	dpc_sort_rows(&s->funcs);
	if (!s->o.tsv) {
		ob_printf(ob, "DPC/ISR duration by module, function");
		if (s->source) {
			ob_puts(ob, " - ");
			text_escape_str(ob, s->source);
		}
		ob_printf(ob, "\ntrace %.3f ms, %d CPUs%s; percentiles nearest-rank; "
		    "'!' = over the guidance (DPC > %g us, ISR > %g us)\n\n",
		    dpc_trace_ms(s), dpc_ncpus(s), s->o.cpu_filter ? " (CPU filter)" : "",
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
	warn_late(s);
}

void
dpc_report_xperf(struct dpc_stats *s, struct outbuf *ob)
{
	int cls, c, n = dpc_ncpus(s);
	size_t i;
	double tus = dpc_trace_ms(s) * 1000;

	dpc_sort_rows(&s->mods);
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
			struct dpc_row *r = s->mods.r[i];

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
			struct dpc_row *r = s->mods.r[i];
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

/*
 * The (root, stack) pairs' names are filled in once every sample is
 * attributed, just before sorting, so that the comparator needs no
 * context pointer (qsort_r differs between glibc and the BSDs and is not
 * in POSIX 2008).  Interned strings are never moved.
 */
/* (root, stack) pairs are unique, so the order is total: no ties */
static int
agg_cmp(const void *a, const void *b)
{
	const struct dpc_agg *x = a, *y = b;
	int c = strcmp(x->root_name, y->root_name);

	if (c)
		return c;
	return strcmp(x->stack_name, y->stack_name);
}

static size_t
agg_hash(uint32_t root, uint32_t stack, size_t mask)
{
	return (size_t)hash_u64((uint64_t)root << 32 | stack) & mask;
}

static void
agg_add(struct dpc_aggtab *t, uint32_t root, uint32_t stack, double w)
{
	size_t h, q;

	if (t->tab == NULL) {
		t->cap = 1024;
		t->a = xmalloc(t->cap * sizeof(*t->a));
		t->mask = 4095;
		t->tab = xcalloc(t->mask + 1, sizeof(*t->tab));
	}
	h = agg_hash(root, stack, t->mask);
	while (t->tab[h]) {
		struct dpc_agg *a = &t->a[t->tab[h] - 1];

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

/*
 * A sample belongs to the innermost DPC/ISR (latest start) running on
 * its CPU at its time -- an ISR interrupting a DPC wins; samples flagged
 * dpc=1/isr=1 that no routine covers go under "[DPC] ?" / "[ISR] ?".
 */
void
dpc_attribute(struct dpc_stats *s, const struct dpc_sample *sm, const struct dpc_interval *best)
{
	char rootname[1200];
	uint32_t root;

	if (best != NULL) {
		s->st_matched++;
		if (!sm->flags)
			s->st_window_only++;
		snprintf(rootname, sizeof(rootname), "[%s] %s", cls_name[best->cls],
		    s->mods.r[best->module]->module);
	} else if (sm->flags) {
		s->st_flag_only++;
		snprintf(rootname, sizeof(rootname), "[%s] ?", (sm->flags & 2) ? "ISR" : "DPC");
	} else {
		s->st_outside++;
		return;
	}
	root = intern_add(&s->roots, rootname, strlen(rootname));
	agg_add(&s->agg, root, intern_add(&s->stacks, sm->stack, sm->stack_len), sm->w);
}

void
dpc_report_stacks(struct dpc_stats *s, struct outbuf *ob)
{
	size_t i;
	struct dpc_aggtab *at = &s->agg;
	double scale = strcmp(s->o.unit, "us") == 0 ? 1000 : 1, carry = 0;

	for (i = 0; i < at->n; i++) {
		at->a[i].root_name = intern_str(&s->roots, at->a[i].root);
		at->a[i].stack_name = intern_str(&s->stacks, at->a[i].stack);
	}
	if (at->n > 1)
		qsort(at->a, at->n, sizeof(*at->a), agg_cmp);
	for (i = 0; i < at->n; i++) {
		size_t n = intern_len(&s->stacks, at->a[i].stack);
		double w = at->a[i].w * scale;
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
		ob_puts(ob, at->a[i].root_name);
		if (n)
			ob_putc(ob, ';');
		put_folded_stack(ob, at->a[i].stack_name, n);
		ob_putc(ob, ' ');
		ob_puts(ob, num);
		ob_putc(ob, '\n');
	}
	if (s->nsamples == 0)
		cli_warn("no Sample events in the input: nothing to attribute to DPCs/ISRs");
	else if (s->st_flag_only)
		cli_warn("%lu sample%s flagged dpc=1/isr=1 had no DPC/ISR event on their CPU "
		    "at their time (shown under \"[DPC] ?\" / \"[ISR] ?\")", s->st_flag_only,
		    s->st_flag_only == 1 ? "" : "s");
	warn_late(s);
}
