/*
 * threadviews.c - the thread-time views (threadviews.h) over the Running,
 * Ready and Waiting lines of docs/evt-format.md.
 *
 * Every view streams its input once:
 *   threads    per thread sums (memory grows with threads and, per
 *              thread, with its distinct wait reasons) and per CPU sums;
 *   intervals  the chosen thread's intervals that overlap the window;
 *   waitchain  a compact record (48 bytes, and 4 to sort it) of every Running, Ready and
 *              Waiting interval of every thread but Idle: the chain can
 *              go through any thread at any earlier time, so this view
 *              keeps what it may need, at most TT_MAX_RECORDS of them
 *              (210 MB); later intervals are counted and left out, and
 *              the view says so and exits 1.
 * Times are the lines' own: the time column is an interval's start,
 * end_ms= its end, the weight its duration (the sums use the weight, in
 * nanoseconds, so they are exact and follow evtfilter's prorating).
 */
#include "report/threadviews.h"
#include "base/cli.h"
#include "base/escape.h"
#include "base/hmap.h"
#include "base/intern.h"
#include "base/strbuf.h"
#include "evt/evt.h"
#include "report/numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_MAX_RECORDS (4u << 20)
#define TT_MAX_CPUS 4096
#define TT_CHAIN_DEPTH 8
#define TT_TOP_REASONS 3
#define TT_LEAF_FRAMES 3

enum { ST_RUN, ST_READY, ST_WAIT, NSTATES };
static const char *const state_name[NSTATES] = { "Running", "Ready", "Waiting" };

enum { WAKER_THREAD, WAKER_DPC, WAKER_ISR };

/* one Running/Ready/Waiting line, pointing into the line */
struct ttline {
	int state;
	double start, end;
	int64_t ns;
	int cpu;
	long pid, tid;
	struct evt_span process, reason, from, edge, stack;
	struct evt_span wtid, wpid, wproc, win, wroutine, wcpu;
};

struct reason {
	uint32_t name;
	int64_t ns;
};

struct thr {
	uint32_t proc;		/* process name (interned, evt-escaped) */
	long pid, tid;
	int64_t ns[NSTATES];
	int64_t switch_ins, waits;
	struct reason *r;
	int nr, capr;
	uint32_t first, nrec;	/* waitchain: its records, after sorting */
};

struct cpu {
	int64_t run, idle;
	int seen;
};

/* waitchain: one interval */
struct rec {
	double start, end;
	uint32_t thread;	/* index in tt->thr */
	uint32_t reason;	/* interned wait reason, or INTERN_NONE */
	uint32_t routine;	/* interned DPC/ISR routine, or INTERN_NONE */
	int32_t wcpu;
	long waker;		/* tid, -1 when no ReadyThread ended it */
	uint8_t state, win;
};

/* intervals: one interval of the chosen thread, clipped */
struct ivl {
	double start, end;
	uint32_t seq;
	int state, cpu;
	long pid;
	char *proc, *reason, *wproc, *wpid, *wtid, *win, *wroutine, *stack;
};

struct threadviews {
	struct threadviews_opts o;
	struct intern names;
	struct hmap thrmap;
	struct thr *thr;
	uint32_t nthr, capthr;
	struct cpu *cpu;
	int ncpu;
	double first, last;	/* the stream's span: earliest start, latest end */
	int64_t lines, other, bad, nocpu;
	/* intervals */
	struct ivl *iv;
	uint32_t niv, capiv;
	/* waitchain */
	struct rec *rec;
	uint32_t nrec, caprec;
	int64_t dropped;
};

/* ------------------------------------------------------------------ */
/* reading                                                             */

static int
span_is(struct evt_span s, const char *w)
{
	size_t n = strlen(w);

	return s.n == n && memcmp(s.p, w, n) == 0;
}

static char *
span_dup(struct evt_span s)
{
	return s.n ? xstrndup(s.p, s.n) : xstrdup("");
}

static uint32_t
name_id(struct threadviews *tt, struct evt_span s)
{
	return s.n ? intern_add(&tt->names, s.p, s.n) : INTERN_NONE;
}

static int
state_of(struct evt_span kind)
{
	if (span_is(kind, "Running"))
		return ST_RUN;
	if (span_is(kind, "Ready"))
		return ST_READY;
	if (span_is(kind, "Waiting"))
		return ST_WAIT;
	return -1;
}

static void
take_attr(struct ttline *l, struct evt_span k, struct evt_span v, struct evt_span *end)
{
	if (span_is(k, "end_ms"))
		*end = v;
	else if (span_is(k, "wait_reason"))
		l->reason = v;
	else if (span_is(k, "from"))
		l->from = v;
	else if (span_is(k, "edge"))
		l->edge = v;
	else if (k.n > 6 && memcmp(k.p, "waker_", 6) == 0) {
		if (span_is(k, "waker_tid"))
			l->wtid = v;
		else if (span_is(k, "waker_pid"))
			l->wpid = v;
		else if (span_is(k, "waker_process"))
			l->wproc = v;
		else if (span_is(k, "waker_in"))
			l->win = v;
		else if (span_is(k, "waker_routine"))
			l->wroutine = v;
		else if (span_is(k, "waker_cpu"))
			l->wcpu = v;
	}
}

/* Parses a thread-time line.  Returns 1, 0 for another kind, -1 (with *WHY) if malformed. */
static int
parse_line(const struct evt_cols *split, struct ttline *l, const char **why)
{
	struct evt_cols c = *split;
	struct evt_span k, v, end = { NULL, 0 };
	char *at;
	int r;

	memset(l, 0, sizeof *l);
	if ((l->state = state_of(c.col[EVT_KIND])) < 0)
		return 0;
	if (evt_cols_time(&c, &l->start, why) < 0 || evt_cols_weight_ns(&c, &l->ns, why) < 0 ||
	    evt_cols_cpu(&c, &l->cpu, why) < 0 || evt_cols_pid(&c, &l->pid, why) < 0 ||
	    evt_cols_tid(&c, &l->tid, why) < 0)
		return -1;
	l->process = c.col[EVT_PROCESS];
	at = c.attrs;
	while ((r = evt_next_attr(&c, &at, &k, &v, why)) > 0)
		take_attr(l, k, v, &end);
	if (r < 0)
		return -1;
	l->stack = evt_cols_stack(&c);
	l->end = l->start + (double)l->ns / 1e6;
	if (end.n) {
		char buf[64];

		if (end.n >= sizeof buf) {
			*why = "end_ms= is not a number";
			return -1;
		}
		memcpy(buf, end.p, end.n);
		buf[end.n] = '\0';
		if (evt_parse_decimal(buf, &l->end) < 0) {
			*why = "end_ms= is not a number";
			return -1;
		}
	}
	if (l->end < l->start) {
		*why = "end_ms= is before the interval's start";
		return -1;
	}
	return 1;
}

static long
span_long(struct evt_span s, long dflt)
{
	char buf[32], *e;
	long v;

	if (s.n == 0 || s.n >= sizeof buf)
		return dflt;
	memcpy(buf, s.p, s.n);
	buf[s.n] = '\0';
	errno = 0;
	v = strtol(buf, &e, 10);
	return *e || errno ? dflt : v;
}

/* the thread (A, B) (pid and tid, or tid and 0), made on first sight */
static uint32_t
thread_of(struct threadviews *tt, long a, long b, const struct ttline *l)
{
	uint32_t *p = hmap_get(&tt->thrmap, (uint64_t)a, (uint64_t)b);
	struct thr *t;

	if (p != NULL)
		return *p;
	if (tt->nthr == tt->capthr) {
		tt->capthr = tt->capthr ? tt->capthr * 2 : 64;
		tt->thr = xrealloc(tt->thr, tt->capthr * sizeof *tt->thr);
	}
	t = &tt->thr[tt->nthr];
	memset(t, 0, sizeof *t);
	t->proc = intern_add(&tt->names, l->process.p, l->process.n);
	t->pid = l->pid;
	t->tid = l->tid;
	hmap_put(&tt->thrmap, (uint64_t)a, (uint64_t)b, tt->nthr);
	return tt->nthr++;
}

static int
edge_at_start(const struct ttline *l)
{
	return span_is(l->edge, "start") || span_is(l->edge, "both");
}

static void
add_reason(struct threadviews *tt, struct thr *t, const struct ttline *l)
{
	uint32_t id = l->reason.n ? intern_add(&tt->names, l->reason.p, l->reason.n) :
	    intern_add(&tt->names, "?", 1);
	int i;

	for (i = 0; i < t->nr; i++)
		if (t->r[i].name == id)
			break;
	if (i == t->nr) {
		if (t->nr == t->capr) {
			t->capr = t->capr ? t->capr * 2 : 4;
			t->r = xrealloc(t->r, (size_t)t->capr * sizeof *t->r);
		}
		t->r[t->nr].name = id;
		t->r[t->nr++].ns = 0;
	}
	t->r[i].ns += l->ns;
}

static void
sum_cpu(struct threadviews *tt, const struct ttline *l)
{
	struct cpu *c;

	if (l->cpu < 0 || l->cpu >= TT_MAX_CPUS) {
		tt->nocpu++;
		return;
	}
	if (l->cpu >= tt->ncpu) {
		tt->cpu = xrealloc(tt->cpu, (size_t)(l->cpu + 1) * sizeof *tt->cpu);
		memset(tt->cpu + tt->ncpu, 0, (size_t)(l->cpu + 1 - tt->ncpu) * sizeof *tt->cpu);
		tt->ncpu = l->cpu + 1;
	}
	c = &tt->cpu[l->cpu];
	c->seen = 1;
	if (l->pid == 0)
		c->idle += l->ns;
	else
		c->run += l->ns;
}

static void
take_threads(struct threadviews *tt, const struct ttline *l)
{
	uint32_t id = thread_of(tt, l->pid, l->tid, l);	/* (before tt->thr: it may move) */
	struct thr *t = &tt->thr[id];

	t->ns[l->state] += l->ns;
	if (l->state == ST_RUN) {
		if (!edge_at_start(l))
			t->switch_ins++;
		sum_cpu(tt, l);
	} else if (l->state == ST_WAIT) {
		t->waits++;
		add_reason(tt, t, l);
	}
}

/* The last N frames of STACK, root first ("a;b;c"). */
static char *
leaf_frames(struct evt_span s, int n)
{
	const char *p = s.p + s.n;

	while (p > s.p) {
		if (p[-1] == ';' && --n == 0)
			break;
		p--;
	}
	return xstrndup(p, (size_t)(s.p + s.n - p));
}

static void
take_interval(struct threadviews *tt, const struct ttline *l)
{
	struct ivl *v;
	int zero = l->end == l->start;

	if (l->tid != tt->o.tid)
		return;
	if (zero ? (l->start < tt->o.from || l->start > tt->o.to) :
	    (l->end <= tt->o.from || l->start >= tt->o.to))
		return;
	if (tt->niv == tt->capiv) {
		tt->capiv = tt->capiv ? tt->capiv * 2 : 256;
		tt->iv = xrealloc(tt->iv, tt->capiv * sizeof *tt->iv);
	}
	v = &tt->iv[tt->niv];
	v->seq = tt->niv++;
	v->start = l->start > tt->o.from ? l->start : tt->o.from;
	v->end = l->end < tt->o.to ? l->end : tt->o.to;
	v->state = l->state;
	v->cpu = l->cpu;
	v->pid = l->pid;
	v->proc = span_dup(l->process);
	v->reason = span_dup(l->state == ST_WAIT ? l->reason : l->from);
	v->wproc = span_dup(l->wproc);
	v->wpid = span_dup(l->wpid);
	v->wtid = span_dup(l->wtid);
	v->win = span_dup(l->win);
	v->wroutine = span_dup(l->wroutine);
	v->stack = leaf_frames(l->stack, TT_LEAF_FRAMES);
}

static void
take_record(struct threadviews *tt, const struct ttline *l)
{
	struct rec *r;

	if (l->pid == 0)
		return;		/* Idle: it never waits, and never readies but in a DPC */
	if (tt->nrec == TT_MAX_RECORDS) {
		tt->dropped++;
		return;
	}
	if (tt->nrec == tt->caprec) {
		tt->caprec = tt->caprec ? tt->caprec * 2 : 4096;
		tt->rec = xrealloc(tt->rec, tt->caprec * sizeof *tt->rec);
	}
	r = &tt->rec[tt->nrec++];
	r->start = l->start;
	r->end = l->end;
	r->thread = thread_of(tt, l->tid, 0, l);
	r->state = (uint8_t)l->state;
	r->reason = l->state == ST_WAIT ? name_id(tt, l->reason) : INTERN_NONE;
	r->routine = name_id(tt, l->wroutine);
	r->waker = l->wtid.n ? span_long(l->wtid, -1) : -1;
	r->wcpu = (int32_t)span_long(l->wcpu, -1);
	r->win = span_is(l->win, "dpc") ? WAKER_DPC : span_is(l->win, "isr") ? WAKER_ISR :
	    WAKER_THREAD;
}

static void
take_line(struct threadviews *tt, const struct ttline *l)
{
	tt->lines++;
	if (tt->lines == 1 || l->start < tt->first)
		tt->first = l->start;
	if (tt->lines == 1 || l->end > tt->last)
		tt->last = l->end;
	switch (tt->o.view) {
	case TT_VIEW_THREADS: take_threads(tt, l); break;
	case TT_VIEW_INTERVALS: take_interval(tt, l); break;
	case TT_VIEW_WAITCHAIN: take_record(tt, l); break;
	}
}

void
threadviews_opts_init(struct threadviews_opts *o)
{
	memset(o, 0, sizeof *o);
	o->tid = -1;
	o->from = -INFINITY;
	o->to = INFINITY;
	o->at = NAN;
}

struct threadviews *
threadviews_new(const struct threadviews_opts *o)
{
	struct threadviews *tt = xcalloc(1, sizeof *tt);

	tt->o = *o;
	intern_init(&tt->names);
	hmap_init(&tt->thrmap);
	return tt;
}

/* An event line for evt_each(). */
static int
read_line(void *ctx, struct evt_cols *c, const char **why)
{
	struct threadviews *tt = ctx;
	struct ttline l;

	switch (parse_line(c, &l, why)) {
	case 1: take_line(tt, &l); return 0;
	case 0: tt->other++; return 0;
	default: return -1;
	}
}

int
threadviews_read(struct threadviews *tt, const char *path)
{
	const struct evt_handlers eh = { .ctx = tt, .event = read_line,
	    .need_header = "not an evt stream (the thread-time views read etl2evt's output)" };
	uint64_t bad;
	int st = evt_each(path, &eh, &bad);

	tt->bad += (int64_t)bad;
	return st;
}

/* ------------------------------------------------------------------ */
/* tables: cells kept as written in evt (escaped), aligned for people  */

struct table {
	int ncol;
	const char *const *hdr;
	const char *align;	/* 'l' or 'r' per column; the last column is never padded */
	char **cell;
	size_t n, cap;		/* cells */
};

static void
cell(struct table *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->cell = xrealloc(t->cell, t->cap * sizeof *t->cell);
	}
	t->cell[t->n++] = sb.s ? strbuf_detach(&sb) : xstrdup("");
}

/* a number of milliseconds: "1,234.5" for people, "1234.5" in TSV */
static void
cell_ms(struct table *t, double ms, int tsv)
{
	char b[64];

	if (tsv) {
		fmt_num(b, ms);
	} else {
		/* three decimals always, so a column's points line up */
		int n = fmt_thousands(b, ms, 3);
		char *dot = strchr(b, '.');
		int have = dot ? n - (int)(dot - b) - 1 : -1;

		if (have < 0)
			b[n++] = '.', have = 0;
		for (; have < 3; have++)
			b[n++] = '0';
		b[n] = '\0';
	}
	cell(t, "%s", b);
}

static void
cell_pct(struct table *t, double part, double whole)
{
	cell(t, "%.2f", whole > 0 ? 100 * part / whole : 0);
}

/* what a cell shows people: evt escapes undone (then escaped for terminals) */
static char *
shown(const char *s)
{
	char *u = xstrdup(s);

	u[evt_unescape(u, strlen(u))] = '\0';
	return u;
}

static void
table_write(struct table *t, struct outbuf *ob, int tsv)
{
	size_t i, rows = t->n / (size_t)t->ncol;
	int c, *w = xcalloc((size_t)t->ncol, sizeof *w);

	for (c = 0; c < t->ncol; c++)
		w[c] = (int)strlen(t->hdr[c]);
	for (i = 0; !tsv && i < t->n; i++) {
		char *u = shown(t->cell[i]);
		int n = (int)text_width(u, strlen(u));

		if (n > w[i % (size_t)t->ncol])
			w[i % (size_t)t->ncol] = n;
		free(u);
	}
	for (i = 0; i <= rows; i++) {
		for (c = 0; c < t->ncol; c++) {
			const char *s = i == 0 ? t->hdr[c] : t->cell[(i - 1) * (size_t)t->ncol + (size_t)c];
			char *u;
			int pad;

			if (tsv) {
				if (c)
					ob_putc(ob, '\t');
				fmt_tsv_text(ob, s);
				continue;
			}
			if (c)
				ob_puts(ob, "  ");
			u = shown(s);
			pad = w[c] - (int)text_width(u, strlen(u));
			if (t->align[c] == 'r')
				for (; pad > 0; pad--)
					ob_putc(ob, ' ');
			text_escape_str(ob, u);
			if (t->align[c] == 'l' && c < t->ncol - 1)
				for (; pad > 0; pad--)
					ob_putc(ob, ' ');
			free(u);
		}
		ob_putc(ob, '\n');
	}
	for (i = 0; i < t->n; i++)
		free(t->cell[i]);
	free(t->cell);
	free(w);
}

/* ------------------------------------------------------------------ */
/* render threadtime                                                   */

static double
lifetime_ns(const struct thr *t)
{
	return (double)t->ns[ST_RUN] + (double)t->ns[ST_READY] + (double)t->ns[ST_WAIT];
}

static int
cmp_threads(const void *a, const void *b)
{
	const struct thr *x = a, *y = b;
	double lx = lifetime_ns(x), ly = lifetime_ns(y);

	if ((x->pid == 0) != (y->pid == 0))
		return x->pid == 0 ? 1 : -1;	/* Idle last */
	if (lx != ly)
		return lx > ly ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int
cmp_reasons(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void
thread_row(struct threadviews *tt, struct table *tb, struct thr *t, int tsv)
{
	double life = lifetime_ns(t);
	int s, i;

	cell(tb, "%s", intern_str(&tt->names, t->proc));
	cell(tb, "%ld", t->pid);
	cell(tb, "%ld", t->tid);
	cell_ms(tb, life / 1e6, tsv);
	for (s = 0; s < NSTATES; s++) {
		cell_ms(tb, (double)t->ns[s] / 1e6, tsv);
		cell_pct(tb, (double)t->ns[s], life);
	}
	cell(tb, "%lld", (long long)t->switch_ins);
	cell(tb, "%lld", (long long)t->waits);
	if (t->nr > 1)	/* (qsort of no array is undefined) */
		qsort(t->r, (size_t)t->nr, sizeof *t->r, cmp_reasons);
	if (tsv) {
		for (i = 0; i < TT_TOP_REASONS; i++) {
			if (i < t->nr) {
				cell(tb, "%s", intern_str(&tt->names, t->r[i].name));
				cell_ms(tb, (double)t->r[i].ns / 1e6, 1);
			} else {
				cell(tb, "");
				cell(tb, "");
			}
		}
		return;
	}
	{
		struct strbuf sb = STRBUF_INIT;
		char b[64];

		for (i = 0; i < t->nr && i < TT_TOP_REASONS; i++) {
			fmt_thousands(b, (double)t->r[i].ns / 1e6, 3);
			strbuf_addf(&sb, "%s%s %s", i ? ", " : "",
			    intern_str(&tt->names, t->r[i].name), b);
		}
		cell(tb, "%s", sb.s ? sb.s : "");
		strbuf_release(&sb);
	}
}

static void
cpu_table(struct threadviews *tt, struct outbuf *ob, int tsv)
{
	static const char *const hdr[] = { "CPU", "Running", "Idle", "Span", "Busy%" };
	static const char *const thdr[] = { "cpu", "running_ms", "idle_ms", "span_ms", "busy_pct" };
	struct table tb = { 5, tsv ? thdr : hdr, "rrrrr", NULL, 0, 0 };
	double span = tt->last - tt->first;
	int c;

	for (c = 0; c < tt->ncpu; c++) {
		if (!tt->cpu[c].seen)
			continue;
		cell(&tb, "%d", c);
		cell_ms(&tb, (double)tt->cpu[c].run / 1e6, tsv);
		cell_ms(&tb, (double)tt->cpu[c].idle / 1e6, tsv);
		cell_ms(&tb, span, tsv);
		cell_pct(&tb, (double)tt->cpu[c].run / 1e6, span);
	}
	table_write(&tb, ob, tsv);
}

static int
report_threads(struct threadviews *tt, struct outbuf *ob)
{
	static const char *const hdr[] = { "Process", "PID", "TID", "Lifetime", "Running", "Run%",
	    "Ready", "Ready%", "Waiting", "Wait%", "Switch-ins", "Waits", "Top wait reasons" };
	static const char *const thdr[] = { "process", "pid", "tid", "lifetime_ms", "running_ms",
	    "running_pct", "ready_ms", "ready_pct", "waiting_ms", "waiting_pct", "switch_ins",
	    "waits", "reason1", "reason1_ms", "reason2", "reason2_ms", "reason3", "reason3_ms" };
	int tsv = tt->o.tsv;
	struct table tb = { tsv ? 18 : 13, tsv ? thdr : hdr,
	    tsv ? "lrrrrrrrrrrrlrlrlr" : "lrrrrrrrrrrrl", NULL, 0, 0 };
	uint32_t i;

	if (tt->nthr > 1)
		qsort(tt->thr, tt->nthr, sizeof *tt->thr, cmp_threads);
	if (!tsv)
		ob_printf(ob, "# Thread time: %u threads, span %.3f..%.3f ms (%.3f ms); "
		    "times in ms, %% of each thread's lifetime (running + ready + waiting)\n",
		    tt->nthr, tt->first, tt->last, tt->last - tt->first);
	for (i = 0; i < tt->nthr; i++)
		thread_row(tt, &tb, &tt->thr[i], tsv);
	table_write(&tb, ob, tsv);
	ob_putc(ob, '\n');
	if (!tsv)
		ob_puts(ob, "# per CPU: running (all threads but Idle), Idle, the span of the stream\n");
	cpu_table(tt, ob, tsv);
	if (tt->nocpu)
		cli_warn("%lld Running lines with no CPU (or CPU >= %d) are not in the CPU table",
		    (long long)tt->nocpu, TT_MAX_CPUS);
	return 0;
}

/* ------------------------------------------------------------------ */
/* render intervals                                                    */

static int
cmp_ivl(const void *a, const void *b)
{
	const struct ivl *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "worker.exe (20) 202", "DPC disk.sys!DiskDpc (in Idle (0) 0)", or "-" */
static void
cell_waker(struct table *tb, const struct ivl *v)
{
	const char *in = strcmp(v->win, "dpc") == 0 ? "DPC" : strcmp(v->win, "isr") == 0 ?
	    "ISR" : NULL;

	if (!*v->wtid)
		cell(tb, "-");
	else if (in)
		cell(tb, "%s %s (in %s (%s) %s)", in, *v->wroutine ? v->wroutine : "?", v->wproc,
		    v->wpid, v->wtid);
	else
		cell(tb, "%s (%s) %s", v->wproc, v->wpid, v->wtid);
}

static int
report_intervals(struct threadviews *tt, struct outbuf *ob)
{
	static const char *const hdr[] = { "Start", "End", "Duration", "State", "CPU", "Reason",
	    "Readied by", "Stack (leaf-most frames)" };
	static const char *const thdr[] = { "start_ms", "end_ms", "duration_ms", "state", "cpu",
	    "reason", "waker_process", "waker_pid", "waker_tid", "waker_in", "waker_routine",
	    "stack" };
	int tsv = tt->o.tsv;
	struct table tb = { tsv ? 12 : 8, tsv ? thdr : hdr,
	    tsv ? "rrrlrlllllll" : "rrrlrlll", NULL, 0, 0 };
	double sum[NSTATES] = { 0, 0, 0 };
	uint32_t i;

	if (tt->niv == 0) {
		cli_warn("no Running, Ready or Waiting line of thread %ld in the window", tt->o.tid);
		return EXIT_FATAL;
	}
	qsort(tt->iv, tt->niv, sizeof *tt->iv, cmp_ivl);
	if (!tsv) {
		ob_printf(ob, "# thread %ld (%s, pid %ld): %u intervals", tt->o.tid, tt->iv[0].proc,
		    tt->iv[0].pid, tt->niv);
		if (isfinite(tt->o.from) || isfinite(tt->o.to))
			ob_printf(ob, " overlapping %.3f..%.3f ms, clipped to it",
			    isfinite(tt->o.from) ? tt->o.from : tt->iv[0].start,
			    isfinite(tt->o.to) ? tt->o.to : tt->last);
		ob_puts(ob, "; times in ms\n");
	}
	for (i = 0; i < tt->niv; i++) {
		struct ivl *v = &tt->iv[i];

		sum[v->state] += v->end - v->start;
		cell(&tb, "%.3f", v->start);
		cell(&tb, "%.3f", v->end);
		cell_ms(&tb, v->end - v->start, tsv);
		cell(&tb, "%s", state_name[v->state]);
		cell(&tb, "%d", v->cpu);
		cell(&tb, "%s", *v->reason ? v->reason : "-");
		if (tsv) {
			cell(&tb, "%s", v->wproc);
			cell(&tb, "%s", v->wpid);
			cell(&tb, "%s", v->wtid);
			cell(&tb, "%s", v->win);
			cell(&tb, "%s", v->wroutine);
		} else {
			cell_waker(&tb, v);
		}
		cell(&tb, "%s", v->stack);
	}
	table_write(&tb, ob, tsv);
	if (!tsv)
		ob_printf(ob, "# in these intervals: running %.3f ms, ready %.3f ms, waiting %.3f ms\n",
		    sum[ST_RUN], sum[ST_READY], sum[ST_WAIT]);
	return 0;
}

/* ------------------------------------------------------------------ */
/* render waitchain                                                    */

static const struct rec *sort_recs;

static int
cmp_rec(const void *a, const void *b)
{
	const struct rec *x = &sort_recs[*(const uint32_t *)a], *y = &sort_recs[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

struct chain {
	struct threadviews *tt;
	uint32_t *order;	/* record indexes by thread, then start */
	struct table tb;
	int tsv;
};

/* the record index (in order[]) of thread T's last interval starting before AT, or -1 */
static long
last_before(const struct chain *ch, const struct thr *t, double at)
{
	long lo = (long)t->first, hi = (long)t->first + (long)t->nrec - 1, best = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (ch->tt->rec[ch->order[mid]].start < at) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

static struct thr *
thread_by_tid(struct threadviews *tt, long tid)
{
	uint32_t *p = hmap_get(&tt->thrmap, (uint64_t)tid, 0);

	return p ? &tt->thr[*p] : NULL;
}

static const char *
name_or(struct threadviews *tt, uint32_t id, const char *dflt)
{
	return id == INTERN_NONE ? dflt : intern_str(&tt->names, id);
}

/* one hop: thread T, what it was doing, and the wait W (or none) */
static void
hop_row(struct chain *ch, int hop, const struct thr *t, const char *doing, double since,
    const struct rec *w)
{
	struct threadviews *tt = ch->tt;
	struct table *tb = &ch->tb;
	int tsv = ch->tsv;
	const struct thr *b = w && w->waker >= 0 ? thread_by_tid(tt, w->waker) : NULL;
	const char *in = w == NULL ? "" : w->win == WAKER_DPC ? "dpc" : w->win == WAKER_ISR ?
	    "isr" : "thread";

	cell(tb, "%d", hop);
	if (tsv) {
		cell(tb, "%s", intern_str(&tt->names, t->proc));
		cell(tb, "%ld", t->pid);
		cell(tb, "%ld", t->tid);
		cell(tb, "%s", doing);
		if (isnan(since))
			cell(tb, "");
		else
			cell(tb, "%.3f", since);
	} else {
		cell(tb, "%s (%ld) %ld", intern_str(&tt->names, t->proc), t->pid, t->tid);
		if (isnan(since))
			cell(tb, "%s", doing);
		else
			cell(tb, "%s %.3f", doing, since);
	}
	if (w == NULL) {
		int i;

		for (i = 0; i < (tsv ? 9 : 5); i++)
			cell(tb, tsv ? "" : "-");
		return;
	}
	cell(tb, "%.3f", w->start);
	cell(tb, "%.3f", w->end);
	cell_ms(tb, w->end - w->start, tsv);
	cell(tb, "%s", name_or(tt, w->reason, "?"));
	if (tsv) {
		cell(tb, "%s", w->waker < 0 ? "" : b ? intern_str(&tt->names, b->proc) :
		    w->waker == 0 ? "Idle" : "?");
		if (w->waker < 0)
			cell(tb, "");
		else
			cell(tb, "%ld", b ? b->pid : w->waker == 0 ? 0L : -1L);
		if (w->waker < 0)
			cell(tb, "");
		else
			cell(tb, "%ld", w->waker);
		cell(tb, "%s", w->waker < 0 ? "" : in);
		cell(tb, "%s", name_or(tt, w->routine, ""));
		return;
	}
	if (w->waker < 0)
		cell(tb, "- (no ReadyThread ended it)");
	else if (w->win != WAKER_THREAD)
		cell(tb, "%s %s on CPU %d at %.3f", w->win == WAKER_DPC ? "DPC" : "ISR",
		    name_or(tt, w->routine, "?"), (int)w->wcpu, w->end);
	else
		cell(tb, "%s (%ld) %ld on CPU %d at %.3f", b ? intern_str(&tt->names, b->proc) : "?",
		    b ? b->pid : -1L, w->waker, (int)w->wcpu, w->end);
}

/* T's wait to start from: the one covering --at (or the last before it), else the longest */
static const struct rec *
target_wait(struct chain *ch, const struct thr *t, const char **note)
{
	struct threadviews *tt = ch->tt;
	const struct rec *best = NULL;
	uint32_t i;

	*note = "its longest wait";
	for (i = t->first; i < t->first + t->nrec; i++) {
		const struct rec *r = &tt->rec[ch->order[i]];

		if (r->state != ST_WAIT)
			continue;
		if (isnan(tt->o.at)) {
			if (best == NULL || r->end - r->start > best->end - best->start)
				best = r;
		} else if (r->start <= tt->o.at && tt->o.at <= r->end) {
			*note = "the wait at --at";
			return r;
		} else if (r->end <= tt->o.at) {
			best = r;
			*note = "not waiting at --at: its last wait before";
		}
	}
	return best;
}

/*
 * Follows the waker of W backwards: what the waker was doing just
 * before it readied the thread, and the wait before that, up to
 * TT_CHAIN_DEPTH hops or a cycle.
 */
static void
follow(struct chain *ch, const struct rec *w)
{
	struct threadviews *tt = ch->tt;
	const struct rec *seen[TT_CHAIN_DEPTH + 1];
	int hop, nseen = 0, k;

	seen[nseen++] = w;
	for (hop = 1; hop <= TT_CHAIN_DEPTH; hop++) {
		const struct thr *b;
		long at, j;
		const struct rec *r, *prev = NULL;

		if (w->waker < 0 || w->win != WAKER_THREAD)
			return;		/* the row says: no waker, or a DPC/ISR */
		b = thread_by_tid(tt, w->waker);
		if (b == NULL || b->nrec == 0) {
			struct thr unknown;

			memset(&unknown, 0, sizeof unknown);
			unknown.proc = intern_add(&tt->names, "?", 1);
			unknown.pid = -1;
			unknown.tid = w->waker;
			hop_row(ch, hop, b ? b : &unknown, "no intervals in the stream", NAN, NULL);
			return;
		}
		at = last_before(ch, b, w->end);
		r = at >= 0 ? &tt->rec[ch->order[at]] : NULL;
		if (r == NULL || r->state != ST_RUN) {
			/* the stream says the waker was not running when it readied: say so */
			hop_row(ch, hop, b, r == NULL ? "no interval before" :
			    r->state == ST_READY ? "not running, ready at" : "not running, waiting at",
			    w->end, NULL);
			return;
		}
		for (j = at - 1; j >= (long)b->first; j--)
			if (tt->rec[ch->order[j]].state == ST_WAIT) {
				prev = &tt->rec[ch->order[j]];
				break;
			}
		if (prev == NULL) {
			hop_row(ch, hop, b, "running since", r->start, NULL);
			return;
		}
		for (k = 0; k < nseen; k++)
			if (seen[k] == prev) {
				hop_row(ch, hop, b, "cycle: running since", r->start, prev);
				return;
			}
		if ((prev->end - prev->start) * 1000 < tt->o.min_us) {
			hop_row(ch, hop, b, "running (last wait < --min-us) since", r->start, NULL);
			return;
		}
		hop_row(ch, hop, b, "running since", r->start, prev);
		seen[nseen++] = prev;
		w = prev;
	}
}

static int
report_waitchain(struct threadviews *tt, struct outbuf *ob)
{
	static const char *const hdr[] = { "Hop", "Thread", "Doing then", "Wait from", "Until",
	    "Waited", "Reason", "Readied by" };
	static const char *const thdr[] = { "hop", "process", "pid", "tid", "doing", "since_ms",
	    "wait_start_ms", "wait_end_ms", "wait_ms", "reason", "waker_process", "waker_pid",
	    "waker_tid", "waker_in", "waker_routine" };
	struct chain ch = { tt, NULL, { 0, NULL, NULL, NULL, 0, 0 }, tt->o.tsv };
	const struct thr *t;
	const struct rec *w;
	const char *note;
	uint32_t i;

	ch.tb.ncol = ch.tsv ? 15 : 8;
	ch.tb.hdr = ch.tsv ? thdr : hdr;
	ch.tb.align = ch.tsv ? "rlrrlrrrrllrrll" : "rllrrrll";
	ch.order = xmalloc((tt->nrec ? tt->nrec : 1) * sizeof *ch.order);
	for (i = 0; i < tt->nrec; i++)
		ch.order[i] = i;
	sort_recs = tt->rec;
	if (tt->nrec > 1)
		qsort(ch.order, tt->nrec, sizeof *ch.order, cmp_rec);
	for (i = 0; i < tt->nrec; i++) {
		struct thr *th = &tt->thr[tt->rec[ch.order[i]].thread];

		if (th->nrec++ == 0)
			th->first = i;
	}
	t = thread_by_tid(tt, tt->o.tid);
	w = t ? target_wait(&ch, t, &note) : NULL;
	if (w == NULL) {
		cli_warn("no Waiting line of thread %ld%s", tt->o.tid,
		    isnan(tt->o.at) ? "" : " at or before --at");
		free(ch.order);
		return EXIT_FATAL;
	}
	if (!ch.tsv)
		ob_printf(ob, "# wait chain of thread %ld (%s, pid %ld), %s: %.3f..%.3f ms; "
		    "each hop: the thread that readied the one above, what it was doing then, "
		    "and its own wait before\n", t->tid, intern_str(&tt->names, t->proc), t->pid,
		    note, w->start, w->end);
	hop_row(&ch, 0, t, "waiting", NAN, w);
	follow(&ch, w);
	table_write(&ch.tb, ob, ch.tsv);
	free(ch.order);
	if (tt->dropped) {
		cli_warn("waitchain keeps at most %u intervals: %lld later ones were left out, "
		    "the chain may stop early", TT_MAX_RECORDS, (long long)tt->dropped);
		return EXIT_PARTIAL;
	}
	return 0;
}

int
threadviews_report(struct threadviews *tt, struct outbuf *ob)
{
	if (tt->lines == 0) {
		cli_warn("no Running, Ready or Waiting lines (etl2evt writes them when the trace "
		    "has CSwitch events)");
		return EXIT_FATAL;
	}
	switch (tt->o.view) {
	case TT_VIEW_THREADS: return report_threads(tt, ob);
	case TT_VIEW_INTERVALS: return report_intervals(tt, ob);
	default: return report_waitchain(tt, ob);
	}
}

void
threadviews_free(struct threadviews *tt)
{
	uint32_t i;

	if (tt == NULL)
		return;
	for (i = 0; i < tt->nthr; i++)
		free(tt->thr[i].r);
	for (i = 0; i < tt->niv; i++) {
		struct ivl *v = &tt->iv[i];

		free(v->proc), free(v->reason), free(v->wproc), free(v->wpid);
		free(v->wtid), free(v->win), free(v->wroutine), free(v->stack);
	}
	free(tt->iv);
	free(tt->thr);
	free(tt->cpu);
	free(tt->rec);
	hmap_free(&tt->thrmap);
	intern_release(&tt->names);
	free(tt);
}
