/*
 * clrstats.c - GCStats and JITStats (see clrstats.h) over the CLR's
 * events in an evt stream.
 *
 * A GC (GCStart, id 1) carries its number, generation (Depth), reason and
 * type; GCEnd (id 2) ends it; GCHeapStats (id 4) gives the heap after it
 * (the generations' sizes, LOH and POH included) and the bytes it promoted.
 * Its pause is PerfView's: from the SuspendEE begin (id 9) before it to the
 * RestartEE end (id 3) after it; of which suspending the threads took up
 * to the SuspendEE end (id 8).  The bytes allocated before it are the
 * GCAllocationTick weights since the previous GC (sampled by the CLR every
 * ~100 KB, as PerfView's allocation figures are when it has no per-heap
 * history), and the heap before it is the previous GC's heap after plus
 * those bytes (blank for a process's first GC).
 *
 * A JIT compilation is MethodJittingStarted (id 145: the method's name,
 * IL size, module) paired with the MethodLoad line the same thread writes
 * when the JIT is done (its native size and tier): the time between them
 * is the JIT time, as PerfView's JITStats measures it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/hmap.h"
#include "evt/evt.h"
#include "report/clrstats.h"
#include "base/path.h"
#include "report/numfmt.h"
#include "report/tables.h"

#define CLR_GUID "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4"
#define MB 1e6
#define MAX_OPEN 64		/* JIT compilations open at once on all threads (nested ones are rare) */

enum { ID_GC_START = 1, ID_GC_END = 2, ID_RESTART_END = 3, ID_HEAP_STATS = 4,
    ID_SUSPEND_END = 8, ID_SUSPEND_BEGIN = 9, ID_JIT_START = 145 };

struct gc {
	long number;
	int gen;
	char *reason, *type;
	double start_ms, end_ms, suspend_ms, pause_ms;	/* NAN when unknown */
	double suspending_ms;				/* SuspendEE begin to end: threads stopping */
	double alloc, heap_after, promoted;		/* bytes; heap_after < 0 unknown */
};

struct method {
	size_t proc;
	double module_id;	/* named at the end: rundown names modules after their methods */
	char *name, *module, *tier;
	double start_ms, jit_ms;
	long il, native;
};

struct proc {
	long pid;
	char *name;
	double first_ms, last_ms;
	double alloc, alloc_since;	/* GCAllocationTick bytes: all, since the last GC began */
	double suspend_ms;		/* a SuspendEE begun and not yet restarted, NAN none */
	double suspended_ms;		/* ...and how long the threads took to stop, NAN not yet */
	struct gc *gc;
	size_t ngc, capgc;
	uint64_t jit_started;
};

struct jitopen {
	long pid, tid;
	double module_id;
	char *method;
	double ms;
	long il;
};

struct clrstats {
	enum clrstats_view view;
	int tsv;
	struct proc *p;
	size_t np, capp;
	struct hmap pmap;		/* (pid, 0) -> p[] */
	struct method *m;
	size_t nm, capm;
	struct jitopen open[MAX_OPEN];
	size_t nopen;
	uint64_t jit_unpaired;		/* a JIT start whose MethodLoad never came (or was pushed out) */
	struct hmap modmap;		/* (pid, ModuleID) -> mods[] */
	char **mods;
	size_t nmods, capmods;
	uint64_t bad;
};

struct clrstats *
clrstats_new(enum clrstats_view v, int tsv)
{
	struct clrstats *s = xcalloc(1, sizeof *s);

	s->view = v;
	s->tsv = tsv;
	hmap_init(&s->pmap);
	hmap_init(&s->modmap);
	return s;
}

/* Whether the line has attribute KEY. */
static int
has_attr(const struct evt_cols *c, const char *key)
{
	size_t n;

	return evt_cols_attr(c, key, &n) != NULL;
}

/* An attribute's value, unescaped, as a new string ("" when absent). */
static char *
attr_text(const struct evt_cols *c, const char *key)
{
	size_t n;
	const char *v = evt_cols_attr(c, key, &n);
	char *s = xstrndup(v ? v : "", v ? n : 0);

	evt_unescape(s, strlen(s));
	return s;
}

/* A numeric attribute (decimal or 0x hex), DEF when absent or not a number. */
static double
attr_num(const struct evt_cols *c, const char *key, double def)
{
	size_t n;
	const char *v = evt_cols_attr(c, key, &n);
	char buf[40], *end;

	if (v == NULL || n == 0 || n >= sizeof buf)
		return def;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	unsigned long long u = strtoull(buf, &end, 0);
	if (*end || errno)
		return def;
	return (double)u;
}

static int
span_is(struct evt_span s, const char *w)
{
	return s.n == strlen(w) && memcmp(s.p, w, s.n) == 0;
}

static struct proc *
proc_of(struct clrstats *s, long pid, struct evt_span name, double ms)
{
	uint32_t *i = hmap_get(&s->pmap, (uint64_t)pid, 0);
	struct proc *p;

	if (i == NULL) {
		XGROW(s->p, s->np, s->capp, 64);
		p = &s->p[s->np];
		memset(p, 0, sizeof *p);
		p->pid = pid;
		p->first_ms = ms;
		p->suspend_ms = p->suspended_ms = NAN;
		hmap_put(&s->pmap, (uint64_t)pid, 0, (uint32_t)s->np++);
	} else
		p = &s->p[*i];
	if (ms < p->first_ms)
		p->first_ms = ms;
	if (ms > p->last_ms)
		p->last_ms = ms;
	if (!(name.n == 1 && name.p[0] == '?') && (p->name == NULL || strlen(p->name) != name.n ||
	    memcmp(p->name, name.p, name.n) != 0)) {
		free(p->name);
		p->name = xstrndup(name.p, name.n);
		evt_unescape(p->name, strlen(p->name));
	}
	return p;
}

static void
take_module(struct clrstats *s, const struct evt_cols *c, long pid)
{
	double id = attr_num(c, "p.ModuleID", -1);
	char *path;

	if (id < 0 || !has_attr(c, "p.ModuleILPath"))
		return;
	if (hmap_get(&s->modmap, (uint64_t)pid, (uint64_t)id))
		return;
	path = attr_text(c, "p.ModuleILPath");
	XGROW(s->mods, s->nmods, s->capmods, 64);
	s->mods[s->nmods] = xstrdup(path_base(path));
	hmap_put(&s->modmap, (uint64_t)pid, (uint64_t)id, (uint32_t)s->nmods++);
	free(path);
}

static char *
module_name(struct clrstats *s, long pid, double id)
{
	uint32_t *i = id < 0 ? NULL : hmap_get(&s->modmap, (uint64_t)pid, (uint64_t)id);
	char buf[32];

	if (i)
		return xstrdup(s->mods[*i]);
	snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(id < 0 ? 0 : id));
	return xstrdup(buf);
}

static void
gc_start(struct proc *p, const struct evt_cols *c, double ms)
{
	struct gc *g;
	long number = (long)attr_num(c, "p.Count", -1);

	if (p->ngc > 0 && p->gc[p->ngc - 1].number == number && isnan(p->gc[p->ngc - 1].end_ms)) {
		/* the same GC again (.NET 4.5 logs GCStart V1 then V2): the later fields */
		g = &p->gc[p->ngc - 1];
		free(g->reason);
		free(g->type);
		g->gen = (int)attr_num(c, "p.Depth", -1);
		g->reason = attr_text(c, "p.Reason");
		g->type = attr_text(c, "p.Type");
		return;
	}
	XGROW(p->gc, p->ngc, p->capgc, 64);
	g = &p->gc[p->ngc++];
	g->number = number;
	g->gen = (int)attr_num(c, "p.Depth", -1);
	g->reason = attr_text(c, "p.Reason");
	g->type = attr_text(c, "p.Type");
	g->start_ms = ms;
	g->end_ms = g->pause_ms = NAN;
	g->suspend_ms = p->suspend_ms;
	g->suspending_ms = p->suspended_ms;
	g->alloc = p->alloc_since;
	g->heap_after = g->promoted = -1;
	p->alloc_since = 0;
}

static void
heap_stats(struct proc *p, const struct evt_cols *c)
{
	static const char *const gens[] = { "0", "1", "2", "3", "4" };
	char key[40];
	double size = 0, promoted = 0;

	if (p->ngc == 0)
		return;
	for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
		snprintf(key, sizeof key, "p.GenerationSize%s", gens[i]);
		size += attr_num(c, key, 0);
		snprintf(key, sizeof key, "p.TotalPromotedSize%s", gens[i]);
		promoted += attr_num(c, key, 0);
	}
	p->gc[p->ngc - 1].heap_after = size;
	p->gc[p->ngc - 1].promoted = promoted;
}

/* RestartEE end: the pause of the GCs begun since the SuspendEE begin ends. */
static void
restart_end(struct proc *p, double ms)
{
	if (isnan(p->suspend_ms))
		return;
	for (size_t i = p->ngc; i-- > 0 && p->gc[i].start_ms >= p->suspend_ms;)
		if (isnan(p->gc[i].pause_ms))
			p->gc[i].pause_ms = ms - p->suspend_ms;
	p->suspend_ms = p->suspended_ms = NAN;
}

static void
jit_start(struct clrstats *s, struct proc *p, const struct evt_cols *c, long tid, double ms)
{
	struct jitopen *o;
	char *ns = attr_text(c, "p.MethodNamespace"), *nm = attr_text(c, "p.MethodName");
	size_t len = strlen(ns) + strlen(nm) + 2;

	p->jit_started++;
	if (s->nopen == MAX_OPEN) {
		/* the oldest never ended: counted, its slot reused */
		free(s->open[0].method);
		memmove(s->open, s->open + 1, (MAX_OPEN - 1) * sizeof *s->open);
		s->nopen--;
		s->jit_unpaired++;
	}
	o = &s->open[s->nopen++];
	o->pid = p->pid;
	o->tid = tid;
	o->ms = ms;
	o->il = (long)attr_num(c, "p.MethodILSize", -1);
	o->module_id = attr_num(c, "p.ModuleID", -1);
	o->method = xmalloc(len);
	snprintf(o->method, len, "%s%s%s", ns, *ns ? "." : "", nm);
	free(ns);
	free(nm);
}

/* A MethodLoad (not rundown) ends the thread's open JIT compilation of that method. */
static void
jit_end(struct clrstats *s, struct proc *p, const struct evt_cols *c, long tid, double ms)
{
	char *name;
	struct method *m;

	if (has_attr(c, "rundown"))
		return;
	name = attr_text(c, "method");
	for (size_t i = s->nopen; i-- > 0;) {
		struct jitopen *o = &s->open[i];

		if (o->pid != p->pid || o->tid != tid || strcmp(o->method, name) != 0)
			continue;
		XGROW(s->m, s->nm, s->capm, 64);
		m = &s->m[s->nm++];
		m->proc = (size_t)(p - s->p);
		m->name = o->method;
		m->module_id = o->module_id;
		m->module = NULL;
		m->tier = attr_text(c, "tier");
		m->start_ms = o->ms;
		m->jit_ms = ms - o->ms;
		m->il = o->il;
		m->native = (long)attr_num(c, "size", -1);
		memmove(o, o + 1, (s->nopen - i - 1) * sizeof *o);
		s->nopen--;
		break;
	}
	free(name);
}

static void
take_event(struct clrstats *s, const struct evt_cols *c, double ms)
{
	long pid, tid;
	const char *why;
	struct evt_span k = c->col[EVT_KIND];
	int ev = span_is(k, "Event"), tick = span_is(k, "GCAllocationTick"),
	    load = span_is(k, "MethodLoad");
	struct proc *p;

	if (evt_cols_pid(c, &pid, &why) < 0 || evt_cols_tid(c, &tid, &why) < 0 || pid < 0)
		return;
	/* every line: the process's span in the trace (for % paused and the allocation rate) */
	p = proc_of(s, pid, c->col[EVT_PROCESS], ms);
	if (!ev && !tick && !load)
		return;
	if (tick) {
		double w;

		if (evt_cols_weight(c, &w, &why) == 0) {
			p->alloc += w;
			p->alloc_since += w;
		}
		return;
	}
	if (load) {
		jit_end(s, p, c, tid, ms);
		return;
	}
	take_module(s, c, pid);
	size_t n;
	const char *g = evt_cols_attr(c, "guid", &n);
	if (g == NULL || n != strlen(CLR_GUID) || memcmp(g, CLR_GUID, n) != 0)
		return;
	switch ((int)attr_num(c, "id", -1)) {
	case ID_SUSPEND_BEGIN:
		p->suspend_ms = ms;
		p->suspended_ms = NAN;
		break;
	case ID_SUSPEND_END:
		if (!isnan(p->suspend_ms))
			p->suspended_ms = ms - p->suspend_ms;
		break;
	case ID_GC_START:
		gc_start(p, c, ms);
		break;
	case ID_GC_END:
		for (size_t i = p->ngc; i-- > 0;)
			if (p->gc[i].number == (long)attr_num(c, "p.Count", -2) && isnan(p->gc[i].end_ms)) {
				p->gc[i].end_ms = ms;
				break;
			}
		break;
	case ID_HEAP_STATS:
		heap_stats(p, c);
		break;
	case ID_RESTART_END:
		restart_end(p, ms);
		break;
	case ID_JIT_START:
		jit_start(s, p, c, tid, ms);
		break;
	}
}

/* An event line for evt_each(): its time, then take_event(). */
static int
take_line(void *ctx, struct evt_cols *c, const char **why)
{
	double ms;

	if (evt_cols_time(c, &ms, why) < 0)
		return -1;
	take_event(ctx, c, ms);
	return 0;
}

int
clrstats_read(struct clrstats *s, const char *path)
{
	const struct evt_handlers eh = { .ctx = s, .event = take_line };
	uint64_t bad;
	int r = evt_each(path, &eh, &bad);

	s->bad += bad;
	return r;
}

/* ---------- reports ---------- */

static void
long_cell(struct tbl *t, long v)
{
	char buf[24];

	snprintf(buf, sizeof buf, "%ld", v);
	tbl_cell(t, buf);
}

/* A number cell: thousands for text, plain for TSV; "" for NAN or negative (unknown). */
static void
num_cell(struct clrstats *s, struct tbl *t, double v, int dec)
{
	char buf[64];

	if (isnan(v) || v < 0) {
		tbl_cell(t, "");
		return;
	}
	if (s->tsv)
		snprintf(buf, sizeof buf, "%.*f", dec, v);
	else
		fmt_thousands(buf, v, dec);
	tbl_cell(t, buf);
}

static void
heading(struct clrstats *s, struct outbuf *ob, const char *title)
{
	if (!s->tsv)
		ob_printf(ob, "%s\n", title);
	else
		ob_printf(ob, "#%s\n", title);
}

static void
gc_summary(struct clrstats *s, struct outbuf *ob)
{
	static const int right[] = { 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	static const char *const head[] = { "pid", "process", "gcs", "gen0", "gen1", "gen2",
	    "pause_ms", "max_pause_ms", "paused_pct", "alloc_mb", "alloc_mb_per_s",
	    "max_heap_before_mb", "max_heap_after_mb", "promoted_mb" };
	struct tbl t;

	tbl_init(&t, 14, right, s->tsv);
	for (size_t i = 0; i < 14; i++)
		tbl_cell(&t, head[i]);
	for (size_t i = 0; i < s->np; i++) {
		struct proc *p = &s->p[i];
		double pause = 0, maxp = 0, before = -1, after = -1, promoted = 0, gens[3] = { 0 };
		double span = p->last_ms - p->first_ms;

		if (p->ngc == 0 && p->alloc == 0)
			continue;
		for (size_t k = 0; k < p->ngc; k++) {
			struct gc *g = &p->gc[k];

			if (g->gen >= 0 && g->gen <= 2)
				gens[g->gen]++;
			if (!isnan(g->pause_ms)) {
				pause += g->pause_ms;
				if (g->pause_ms > maxp)
					maxp = g->pause_ms;
			}
			if (g->heap_after > after)
				after = g->heap_after;
			if (k > 0 && p->gc[k - 1].heap_after >= 0 && p->gc[k - 1].heap_after + g->alloc > before)
				before = p->gc[k - 1].heap_after + g->alloc;
			if (g->promoted > 0)
				promoted += g->promoted;
		}
		long_cell(&t, p->pid);
		tbl_cell(&t, p->name ? p->name : "?");
		num_cell(s, &t, (double)p->ngc, 0);
		for (int g = 0; g < 3; g++)
			num_cell(s, &t, gens[g], 0);
		num_cell(s, &t, pause, 3);
		num_cell(s, &t, maxp, 3);
		num_cell(s, &t, span > 0 ? 100 * pause / span : NAN, 2);
		num_cell(s, &t, p->alloc / MB, 3);
		num_cell(s, &t, span > 0 ? p->alloc / MB / (span / 1000) : NAN, 3);
		num_cell(s, &t, before / MB, 3);
		num_cell(s, &t, after < 0 ? -1 : after / MB, 3);
		num_cell(s, &t, promoted / MB, 3);
	}
	tbl_write(&t, ob);
}

static void
gc_table(struct clrstats *s, struct outbuf *ob)
{
	static const int right[] = { 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1 };
	static const char *const head[] = { "pid", "process", "gc", "start_ms", "gen", "reason", "type",
	    "pause_ms", "suspend_ms", "duration_ms", "alloc_mb", "heap_before_mb", "heap_after_mb",
	    "promoted_mb" };
	struct tbl t;

	tbl_init(&t, 14, right, s->tsv);
	for (size_t i = 0; i < 14; i++)
		tbl_cell(&t, head[i]);
	for (size_t i = 0; i < s->np; i++) {
		struct proc *p = &s->p[i];

		for (size_t k = 0; k < p->ngc; k++) {
			struct gc *g = &p->gc[k];
			double prev = k > 0 ? p->gc[k - 1].heap_after : -1;

			long_cell(&t, p->pid);
			tbl_cell(&t, p->name ? p->name : "?");
			num_cell(s, &t, (double)g->number, 0);
			num_cell(s, &t, g->start_ms, 3);
			num_cell(s, &t, (double)g->gen, 0);
			tbl_cell(&t, g->reason);
			tbl_cell(&t, g->type);
			num_cell(s, &t, g->pause_ms, 3);
			num_cell(s, &t, g->suspending_ms, 3);
			num_cell(s, &t, g->end_ms - g->start_ms, 3);
			num_cell(s, &t, g->alloc / MB, 3);
			num_cell(s, &t, prev < 0 ? -1 : (prev + g->alloc) / MB, 3);
			num_cell(s, &t, g->heap_after < 0 ? -1 : g->heap_after / MB, 3);
			num_cell(s, &t, g->promoted < 0 ? -1 : g->promoted / MB, 3);
		}
	}
	tbl_write(&t, ob);
}

static int
cmp_method(const void *a, const void *b)
{
	const struct method *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->jit_ms != y->jit_ms)
		return x->jit_ms > y->jit_ms ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void
jit_summary(struct clrstats *s, struct outbuf *ob)
{
	static const int right[] = { 1, 0, 1, 1, 1, 1, 1 };
	static const char *const head[] = { "pid", "process", "jit_started", "methods", "jit_ms",
	    "il_bytes", "native_bytes" };
	/* one pass over the methods: per process, methods, ms, IL and native bytes */
	double (*sum)[4] = xcalloc(s->np ? s->np : 1, sizeof *sum);
	struct tbl t;

	for (size_t k = 0; k < s->nm; k++) {
		double *a = sum[s->m[k].proc];

		a[0]++;
		a[1] += s->m[k].jit_ms;
		a[2] += s->m[k].il > 0 ? (double)s->m[k].il : 0;
		a[3] += s->m[k].native > 0 ? (double)s->m[k].native : 0;
	}
	tbl_init(&t, 7, right, s->tsv);
	for (size_t i = 0; i < 7; i++)
		tbl_cell(&t, head[i]);
	for (size_t i = 0; i < s->np; i++) {
		if (s->p[i].jit_started == 0 && sum[i][0] == 0)
			continue;
		long_cell(&t, s->p[i].pid);
		tbl_cell(&t, s->p[i].name ? s->p[i].name : "?");
		num_cell(s, &t, (double)s->p[i].jit_started, 0);
		for (int c = 0; c < 4; c++)
			num_cell(s, &t, sum[i][c], c == 1 ? 3 : 0);
	}
	tbl_write(&t, ob);
	free(sum);
}

struct modrow {
	size_t proc;
	const char *module;
	double n, ms, il, native;
};

static int
cmp_modrow(const void *a, const void *b)
{
	const struct modrow *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->ms != y->ms)
		return x->ms > y->ms ? -1 : 1;
	return strcmp(x->module, y->module);
}

/* Per process and module (busiest first): the methods' sums.  Methods are sorted by process. */
static void
jit_modules(struct clrstats *s, struct outbuf *ob)
{
	static const int right[] = { 1, 0, 0, 1, 1, 1, 1 };
	static const char *const head[] = { "pid", "process", "module", "methods", "jit_ms",
	    "il_bytes", "native_bytes" };
	struct modrow *r = NULL;
	size_t nr = 0, capr = 0;
	struct tbl t;

	for (size_t i = 0; i < s->nm; i++) {
		const struct method *m = &s->m[i];
		size_t j = nr;

		/* rows of this process are at the end: look there only */
		while (j > 0 && r[j - 1].proc == m->proc && strcmp(r[j - 1].module, m->module) != 0)
			j--;
		if (j == 0 || r[j - 1].proc != m->proc) {
			XGROW(r, nr, capr, 64);
			r[nr] = (struct modrow){ m->proc, m->module, 0, 0, 0, 0 };
			j = ++nr;
		}
		r[j - 1].n++;
		r[j - 1].ms += m->jit_ms;
		r[j - 1].il += m->il > 0 ? (double)m->il : 0;
		r[j - 1].native += m->native > 0 ? (double)m->native : 0;
	}
	qsort(r, nr, sizeof *r, cmp_modrow);
	tbl_init(&t, 7, right, s->tsv);
	for (size_t i = 0; i < 7; i++)
		tbl_cell(&t, head[i]);
	for (size_t i = 0; i < nr; i++) {
		long_cell(&t, s->p[r[i].proc].pid);
		tbl_cell(&t, s->p[r[i].proc].name ? s->p[r[i].proc].name : "?");
		tbl_cell(&t, r[i].module);
		num_cell(s, &t, r[i].n, 0);
		num_cell(s, &t, r[i].ms, 3);
		num_cell(s, &t, r[i].il, 0);
		num_cell(s, &t, r[i].native, 0);
	}
	tbl_write(&t, ob);
	free(r);
}

static void
jit_methods(struct clrstats *s, struct outbuf *ob)
{
	static const int right[] = { 1, 0, 1, 1, 1, 1, 0, 0, 0 };
	static const char *const head[] = { "pid", "process", "start_ms", "jit_ms", "il_bytes",
	    "native_bytes", "tier", "module", "method" };
	struct tbl t;

	tbl_init(&t, 9, right, s->tsv);
	for (size_t i = 0; i < 9; i++)
		tbl_cell(&t, head[i]);
	for (size_t i = 0; i < s->nm; i++) {
		struct method *m = &s->m[i];

		long_cell(&t, s->p[m->proc].pid);
		tbl_cell(&t, s->p[m->proc].name ? s->p[m->proc].name : "?");
		num_cell(s, &t, m->start_ms, 3);
		num_cell(s, &t, m->jit_ms, 3);
		num_cell(s, &t, (double)m->il, 0);
		num_cell(s, &t, (double)m->native, 0);
		tbl_cell(&t, *m->tier ? m->tier : "");
		tbl_cell(&t, m->module);
		tbl_cell(&t, m->name);
	}
	tbl_write(&t, ob);
}

void
clrstats_report(struct clrstats *s, struct outbuf *ob)
{
	if (s->view == CLRSTATS_GC) {
		heading(s, ob, "GCStats: per process (pause: SuspendEE begin to RestartEE end; MB = 10^6 bytes)");
		gc_summary(s, ob);
		ob_puts(ob, "\n");
		heading(s, ob, "GCStats: per GC");
		gc_table(s, ob);
		return;
	}
	for (size_t i = 0; i < s->nm; i++)
		s->m[i].module = module_name(s, s->p[s->m[i].proc].pid, s->m[i].module_id);
	qsort(s->m, s->nm, sizeof *s->m, cmp_method);
	heading(s, ob, "JITStats: per process (JIT time: MethodJittingStarted to its MethodLoad on the thread)");
	jit_summary(s, ob);
	ob_puts(ob, "\n");
	heading(s, ob, "JITStats: per module");
	jit_modules(s, ob);
	ob_puts(ob, "\n");
	heading(s, ob, "JITStats: per method, longest JIT first");
	jit_methods(s, ob);
	if (s->nopen + s->jit_unpaired)
		cli_warn("%llu JIT compilations without their MethodLoad (the trace ended, or events were lost)",
		    (unsigned long long)(s->nopen + s->jit_unpaired));
}

void
clrstats_free(struct clrstats *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->np; i++) {
		for (size_t k = 0; k < s->p[i].ngc; k++) {
			free(s->p[i].gc[k].reason);
			free(s->p[i].gc[k].type);
		}
		free(s->p[i].gc);
		free(s->p[i].name);
	}
	free(s->p);
	for (size_t i = 0; i < s->nm; i++) {
		free(s->m[i].name);
		free(s->m[i].module);
		free(s->m[i].tier);
	}
	free(s->m);
	for (size_t i = 0; i < s->nopen; i++)
		free(s->open[i].method);
	for (size_t i = 0; i < s->nmods; i++)
		free(s->mods[i]);
	free(s->mods);
	hmap_free(&s->pmap);
	hmap_free(&s->modmap);
	free(s);
}
