/*
 * pmu.c - the PMU view of WindowsPerf ReadGPC events (see pmu.h and
 * docs/pmu.md).
 *
 * Input rows come from evt Event lines of the two WindowsPerf providers
 * (guid= 6afccf81-... App, 9b15b4b5-... Driver; id=1) with the fields
 * etl2evt decodes from the manifest layout: p.Core, p.Event, p.EventIdx,
 * p.EventNote, p.Value (App) and p.Core, p.Event, p.GPCIdx, p.Value
 * (Driver).  All rows are kept (a few per core per 200 ms period), then
 * sorted into the plugin's groupings.
 *
 * Deltas: the driver's Value is the running total of (core, event) since
 * its count started, so the delta of a row is the difference to the
 * previous row of the same series; the first row of a series, and a row
 * whose total went down (a new count started), is the total itself, with
 * no known period start and so no rate.  IPC = instructions / cycles of
 * the same core and burst: INST_RETIRED (0x08) if present ("IPC"), else
 * INST_SPEC (0x1B, "IPC(spec)"); cycles from the fixed counter
 * (0xFFFFFFFF) or CPU_CYCLES (0x11).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cli.h"
#include "report/pmu.h"
#include "base/escape.h"
#include "base/strbuf.h"
#include "etl/wperf.h"

struct row {
	double t;		/* ms */
	int prov;		/* WPERF_APP / WPERF_DRIVER */
	uint64_t core;
	char *name;		/* App: event name */
	uint32_t event;		/* event number (App: EventIdx) */
	uint32_t gpc;
	char *note;
	uint64_t value;
	/* driver, after the delta pass */
	int has_start;
	double start;
	uint64_t delta;
};

struct ratio {
	double t, start;
	int has_start;
	uint64_t core;
	int prov;
	const char *name;
	double value;
};

struct pmu {
	struct pmu_opts o;
	struct row *r;
	size_t n, cap;
	struct ratio *q;
	size_t nq, capq;
	uint64_t skipped;
};

/* Arm architectural event names (Armv8 PMU event numbers) for the driver's numbers. */
static const struct { uint32_t n; const char *name; } arch_events[] = {
	{ 0xffffffffu, "cycle" }, { 0x00, "sw_incr" }, { 0x01, "l1i_cache_refill" },
	{ 0x02, "l1i_tlb_refill" }, { 0x03, "l1d_cache_refill" }, { 0x04, "l1d_cache" },
	{ 0x05, "l1d_tlb_refill" }, { 0x06, "ld_retired" }, { 0x07, "st_retired" },
	{ 0x08, "inst_retired" }, { 0x09, "exc_taken" }, { 0x0a, "exc_return" },
	{ 0x10, "br_mis_pred" }, { 0x11, "cpu_cycles" }, { 0x12, "br_pred" }, { 0x13, "mem_access" },
	{ 0x14, "l1i_cache" }, { 0x16, "l2d_cache" }, { 0x17, "l2d_cache_refill" },
	{ 0x1b, "inst_spec" }, { 0x21, "br_retired" }, { 0x22, "br_mis_pred_retired" },
	{ 0x23, "stall_frontend" }, { 0x24, "stall_backend" }, { 0x70, "ld_spec" },
	{ 0x71, "st_spec" }, { 0x73, "dp_spec" }, { 0x74, "ase_spec" }, { 0x75, "vfp_spec" },
};

static const char *
event_name(uint32_t n)
{
	for (size_t i = 0; i < sizeof arch_events / sizeof arch_events[0]; i++)
		if (arch_events[i].n == n)
			return arch_events[i].name;
	return "-";
}

struct pmu *
pmu_new(const struct pmu_opts *o)
{
	struct pmu *p = xcalloc(1, sizeof *p);
	p->o = *o;
	return p;
}

void
pmu_free(struct pmu *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->r[i].name);
		free(p->r[i].note);
	}
	free(p->r);
	free(p->q);
	free(p);
}

static int
get_u64(const struct evt_event *ev, const char *key, uint64_t *v)
{
	const char *s = evt_attr(ev, key);
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return *end || errno || *s == '-' ? -1 : 0;
}

static char *
get_str(const struct evt_event *ev, const char *key)
{
	const char *s = evt_attr(ev, key);
	if (!s)
		return NULL;
	char *d = xstrdup(s);
	d[evt_unescape(d, strlen(d))] = '\0';
	return d;
}

/* One evt event: 1 kept, 0 not a ReadGPC event, -1 a ReadGPC event with unusable fields. */
static int
take(struct pmu *p, const struct evt_event *ev)
{
	if (strcmp(ev->kind, "Event") != 0)
		return 0;
	const char *id = evt_attr(ev, "id");
	int prov = wperf_provider_str(evt_attr(ev, "guid"));
	if (prov == WPERF_NONE || !id || strcmp(id, "1") != 0)
		return 0;
	struct row r;
	uint64_t x, y;
	memset(&r, 0, sizeof r);
	r.t = ev->time_ms;
	r.prov = prov;
	if (get_u64(ev, "p.Core", &r.core) < 0 || get_u64(ev, "p.Value", &r.value) < 0)
		return -1;
	if (prov == WPERF_APP) {
		if (get_u64(ev, "p.EventIdx", &x) < 0 || x > 0xffffffffu)
			return -1;
		r.event = (uint32_t)x;
		r.name = get_str(ev, "p.Event");
		r.note = get_str(ev, "p.EventNote");
		if (!r.name || !r.note) {
			free(r.name);
			free(r.note);
			return -1;
		}
	} else {
		if (get_u64(ev, "p.Event", &x) < 0 || get_u64(ev, "p.GPCIdx", &y) < 0 ||
		    x > 0xffffffffu || y > 0xffffffffu)
			return -1;
		r.event = (uint32_t)x;
		r.gpc = (uint32_t)y;
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->r = xrealloc(p->r, p->cap * sizeof *p->r);
	}
	p->r[p->n++] = r;
	return 1;
}

/*
 * Cheap test before parsing: kind column "Event" and one of the two
 * provider GUIDs on the line (a CPU trace has millions of other lines).
 * Lines with too few columns go on to evt_parse, which reports them.
 */
static int
maybe_readgpc(const char *line, size_t len)
{
	const char *k = memchr(line, '\t', len), *q = k;
	int tabs = 0;
	while (q && tabs < 7) {
		tabs++;
		q = memchr(q + 1, '\t', (size_t)(line + len - q - 1));
	}
	if (tabs < 7)
		return 1;	/* malformed: let evt_parse report it */
	if ((size_t)(line + len - k) < 7 || memcmp(k + 1, "Event\t", 6) != 0)
		return 0;
	return mem_find(line, len, "guid=" WPERF_APP_GUID_STR, 41) != NULL ||
	    mem_find(line, len, "guid=" WPERF_DRIVER_GUID_STR, 41) != NULL;
}

int
pmu_read(struct pmu *p, const char *path)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int st = 0;
	uint64_t bad = 0;

	if (!lr) {
		cli_warn("%s: %s", path, strerror(errno));
		return EXIT_FATAL;
	}
	while ((line = lr_next(lr, &len)) != NULL) {
		if (evt_classify(line, len) != EVT_EVENT || !maybe_readgpc(line, len))
			continue;
		struct evt_event ev;
		const char *why;
		if (evt_parse(line, len, &ev, &why) < 0) {
			if (bad++ < 5)
				cli_warn("%s:%lu: %s, line skipped", lr_name(lr), lr_lineno(lr), why);
			continue;
		}
		if (take(p, &ev) < 0 && bad++ < 5)
			cli_warn("%s:%lu: WindowsPerf ReadGPC event without usable p.Core/p.Event/p.Value "
			    "fields, skipped", lr_name(lr), lr_lineno(lr));
	}
	bad += lr_finish(lr);
	if (bad) {
		cli_warn("%s: %" PRIu64 " line(s) skipped", lr_name(lr), bad);
		if (!st)
			st = EXIT_PARTIAL;
	}
	p->skipped += bad;
	lr_close(lr);
	return st;
}

/* ---------- ordering and derived values ---------- */

static int
cmp_series(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->prov != y->prov)
		return x->prov - y->prov;
	if (x->prov == WPERF_APP) {
		int c = strcmp(x->name, y->name);
		if (c)
			return c;
	} else if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return 0;
}

static void
deltas(struct pmu *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct row *r = &p->r[i], *prev = i ? &p->r[i - 1] : NULL;
		if (r->prov != WPERF_DRIVER)
			continue;
		int same = prev && prev->prov == WPERF_DRIVER && prev->event == r->event &&
		    prev->core == r->core;
		if (same && r->value >= prev->value) {
			r->delta = r->value - prev->value;
			r->has_start = 1;
			r->start = prev->t;
		} else
			r->delta = r->value;	/* first of its series, or a new count */
	}
}

static void
add_ratio(struct pmu *p, const struct row *cyc, int prov, const char *name, double v)
{
	if (p->nq == p->capq) {
		p->capq = p->capq ? p->capq * 2 : 256;
		p->q = xrealloc(p->q, p->capq * sizeof *p->q);
	}
	struct ratio *q = &p->q[p->nq++];
	q->t = cyc->t;
	q->start = cyc->start;
	q->has_start = prov == WPERF_DRIVER && cyc->has_start;
	q->core = cyc->core;
	q->prov = prov;
	q->name = name;
	q->value = v;
}

static int
cmp_burst(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
	if (x->prov != y->prov)
		return x->prov - y->prov;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return 0;
}

static int
is_cycles(const struct row *r)
{
	if (r->prov == WPERF_APP)
		return strcmp(r->name, "cycle") == 0 || strcmp(r->name, "cpu_cycles") == 0;
	return r->event == 0xffffffffu || r->event == 0x11;
}

/* 2 retired, 1 speculated instructions, 0 neither */
static int
inst_kind(const struct row *r)
{
	if (r->prov == WPERF_APP)
		return strcmp(r->name, "inst_retired") == 0 ? 2 : strcmp(r->name, "inst_spec") == 0;
	return r->event == 0x08 ? 2 : r->event == 0x1b;
}

static uint64_t
amount(const struct row *r)
{
	return r->prov == WPERF_DRIVER ? r->delta : r->value;
}

/* IPC per (provider, core, burst): rows of one burst share their timestamp. */
static void
ratios(struct pmu *p)
{
	const struct row **v = xmalloc((p->n ? p->n : 1) * sizeof *v);
	for (size_t i = 0; i < p->n; i++)
		v[i] = &p->r[i];
	qsort(v, p->n, sizeof *v, cmp_burst);
	for (size_t i = 0; i < p->n;) {
		size_t j = i;
		const struct row *cyc = NULL, *inst = NULL;
		int ik = 0;
		while (j < p->n && cmp_burst(&v[i], &v[j]) == 0) {
			if (is_cycles(v[j]) && (!cyc || v[j]->event == 0xffffffffu))
				cyc = v[j];
			if (inst_kind(v[j]) > ik) {
				ik = inst_kind(v[j]);
				inst = v[j];
			}
			j++;
		}
		if (cyc && inst && amount(cyc) > 0)
			add_ratio(p, cyc, cyc->prov, ik == 2 ? "IPC" : "IPC(spec)",
			    (double)amount(inst) / (double)amount(cyc));
		i = j;
	}
	free(v);
}

/*
 * Totals per series: every delta counts (the first is the count since the
 * count started); the mean rate uses only the periods with a known start.
 */
struct total {
	int prov;
	uint64_t core;
	uint32_t event;
	const char *name;
	uint64_t sum, timed_sum;
	double timed_ms;
	uint64_t inst, cycles;	/* per core (event unused): for the overall IPC */
	int ik;
};

static int
cmp_total(const void *a, const void *b)
{
	const struct total *x = a, *y = b;
	if (x->prov != y->prov)
		return x->prov - y->prov;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	if (x->prov == WPERF_APP)
		return strcmp(x->name, y->name);
	return x->event < y->event ? -1 : x->event > y->event;
}

static size_t
totals(const struct pmu *p, struct total **out)
{
	struct total *t = NULL;
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct row *r = &p->r[i];
		int same = n && t[n - 1].prov == r->prov && t[n - 1].core == r->core &&
		    (r->prov == WPERF_APP ? strcmp(t[n - 1].name, r->name) == 0 : t[n - 1].event == r->event);
		if (!same) {
			t = xrealloc(t, (n + 1) * sizeof *t);
			memset(&t[n], 0, sizeof t[n]);
			t[n].prov = r->prov;
			t[n].core = r->core;
			t[n].event = r->event;
			t[n].name = r->prov == WPERF_APP ? r->name : event_name(r->event);
			n++;
		}
		t[n - 1].sum += amount(r);
		if (r->prov == WPERF_DRIVER && r->has_start && r->t > r->start) {
			t[n - 1].timed_sum += r->delta;
			t[n - 1].timed_ms += r->t - r->start;
		}
	}
	if (n)
		qsort(t, n, sizeof *t, cmp_total);
	*out = t;
	return n;
}

/* Overall IPC of PROV on CORE from the series totals; -1 if not both counters. */
static double
overall_ipc(const struct total *t, size_t n, int prov, uint64_t core, const char **name)
{
	uint64_t cyc = 0, inst = 0;
	int ik = 0, have_cyc = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i].prov != prov || t[i].core != core)
			continue;
		struct row r = { .prov = prov, .event = t[i].event, .name = (char *)t[i].name };
		if (is_cycles(&r) && (!have_cyc || r.event == 0xffffffffu)) {
			cyc = t[i].sum;
			have_cyc = 1;
		}
		if (inst_kind(&r) > ik) {
			ik = inst_kind(&r);
			inst = t[i].sum;
		}
	}
	if (!have_cyc || !ik || !cyc)
		return -1;
	*name = ik == 2 ? "IPC" : "IPC(spec)";
	return (double)inst / (double)cyc;
}

/* ---------- output ---------- */

static void
fmt_ms(char *out, double ms)
{
	evt_format_time(out, ms);
}

/* Column-aligned text: cells collected per table, widths computed, then written. */
struct table {
	char **cell;
	size_t n, cap, ncol;
	int *right;
};

/* Appends S, a malloc'ed string the table now owns. */
static void
t_take(struct table *t, char *s)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->cell = xrealloc(t->cell, t->cap * sizeof *t->cell);
	}
	t->cell[t->n++] = s;
}

static void
t_cell(struct table *t, const char *s)
{
	t_take(t, xstrdup(s));
}

static void
t_cellf(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
t_cellf(struct table *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	t_take(t, strbuf_detach(&sb));
}

static void
t_write(struct table *t, struct outbuf *ob, const char *title)
{
	size_t w[16] = { 0 };
	ob_printf(ob, "%s\n", title);
	/* cells hold names from the trace: widths and text as text_escape writes them */
	for (size_t i = 0; i < t->n; i++) {
		size_t l = text_width(t->cell[i], strlen(t->cell[i]));
		if (l > w[i % t->ncol])
			w[i % t->ncol] = l;
	}
	for (size_t i = 0; i < t->n; i++) {
		size_t c = i % t->ncol, l = text_width(t->cell[i], strlen(t->cell[i]));
		int last = c == t->ncol - 1;
		if (t->right[c] && i >= t->ncol)
			for (size_t k = l; k < w[c]; k++)
				ob_putc(ob, ' ');
		text_escape_str(ob, t->cell[i]);
		if (!last && !(t->right[c] && i >= t->ncol))
			for (size_t k = l; k < w[c]; k++)
				ob_putc(ob, ' ');
		ob_puts(ob, last ? "\n" : "  ");
		free(t->cell[i]);
	}
	ob_putc(ob, '\n');
	free(t->cell);
	memset(t, 0, sizeof *t);
}

static void
idx_text(char *out, size_t cap, uint32_t idx)
{
	if (idx == 0xffffffffu)
		snprintf(out, cap, "fixed");
	else
		snprintf(out, cap, "0x%x", idx);
}

static void
report_text(struct pmu *p, struct outbuf *ob)
{
	struct table t = { 0 };
	char a[40], b[40];
	size_t napp = 0, ndrv = 0;
	int right6[6] = { 0, 1, 0, 0, 1, 1 }, right5[5] = { 0, 1, 1, 1, 1 };
	int right8[8] = { 1, 0, 0, 1, 1, 1, 1, 1 }, right6b[6] = { 1, 0, 1, 1, 1, 1 };

	for (size_t i = 0; i < p->n; i++)
		*(p->r[i].prov == WPERF_APP ? &napp : &ndrv) += 1;
	if (napp) {
		t.ncol = 6;
		t.right = right6;
		const char *h[] = { "Event Name", "Core", "Event Index", "Event Note", "Time (ms)", "Value" };
		for (int k = 0; k < 6; k++)
			t_cell(&t, h[k]);
		for (size_t i = 0; i < p->n; i++) {
			const struct row *r = &p->r[i];
			if (r->prov != WPERF_APP)
				continue;
			t_cell(&t, r->name);
			t_cellf(&t, "%" PRIu64, r->core);
			idx_text(a, sizeof a, r->event);
			t_cell(&t, a);
			t_cell(&t, r->note);
			fmt_ms(a, r->t);
			t_cell(&t, a);
			t_cellf(&t, "%" PRIu64, r->value);
		}
		t_write(&t, ob, "GPC Data from App (WindowsPerf App, ReadGPC: counts per count period)");
	}
	if (ndrv) {
		t.ncol = 5;
		t.right = right5;
		const char *h[] = { "Event Index", "Core", "GPC Index", "Time (ms)", "Value" };
		for (int k = 0; k < 5; k++)
			t_cell(&t, h[k]);
		for (size_t i = 0; i < p->n; i++) {
			const struct row *r = &p->r[i];
			if (r->prov != WPERF_DRIVER)
				continue;
			t_cellf(&t, "%08X", r->event);
			t_cellf(&t, "%" PRIu64, r->core);
			t_cellf(&t, "%u", r->gpc);
			fmt_ms(a, r->t);
			t_cell(&t, a);
			t_cellf(&t, "%" PRIu64, r->value);
		}
		t_write(&t, ob, "GPC Data from Driver (WindowsPerf Driver, ReadGPC: running totals)");

		t.ncol = 8;
		t.right = right8;
		const char *h2[] = { "Core", "Event", "Name", "Start (ms)", "End (ms)", "Delta", "Rate (/s)",
		    "Total" };
		for (int k = 0; k < 8; k++)
			t_cell(&t, h2[k]);
		for (size_t i = 0; i < p->n; i++) {
			const struct row *r = &p->r[i];
			if (r->prov != WPERF_DRIVER)
				continue;
			t_cellf(&t, "%" PRIu64, r->core);
			t_cellf(&t, "%08X", r->event);
			t_cell(&t, event_name(r->event));
			if (r->has_start)
				fmt_ms(a, r->start);
			else
				strcpy(a, "-");
			t_cell(&t, a);
			fmt_ms(b, r->t);
			t_cell(&t, b);
			t_cellf(&t, "%" PRIu64, r->delta);
			if (r->has_start && r->t > r->start)
				t_cellf(&t, "%.0f", (double)r->delta * 1000.0 / (r->t - r->start));
			else
				t_cell(&t, "-");
			t_cellf(&t, "%" PRIu64, r->value);
		}
		t_write(&t, ob, "Driver counters per period (deltas of the running totals, per core and event)");
	}
	struct total *tt;
	size_t nt = totals(p, &tt);
	if (nt) {
		int right7[7] = { 0, 1, 0, 0, 1, 1, 1 };
		t.ncol = 7;
		t.right = right7;
		const char *h[] = { "Source", "Core", "Event", "Name", "Total", "Rate (/s)", "IPC" };
		for (int k = 0; k < 7; k++)
			t_cell(&t, h[k]);
		for (size_t i = 0; i < nt; i++) {
			const char *rn = NULL;
			t_cell(&t, tt[i].prov == WPERF_APP ? "app" : "driver");
			t_cellf(&t, "%" PRIu64, tt[i].core);
			if (tt[i].prov == WPERF_APP)
				idx_text(a, sizeof a, tt[i].event);
			else
				snprintf(a, sizeof a, "%08X", tt[i].event);
			t_cell(&t, a);
			t_cell(&t, tt[i].name);
			t_cellf(&t, "%" PRIu64, tt[i].sum);
			if (tt[i].timed_ms > 0)
				t_cellf(&t, "%.0f", (double)tt[i].timed_sum * 1000.0 / tt[i].timed_ms);
			else
				t_cell(&t, "-");
			double ipc = -1;
			if (i + 1 == nt || tt[i + 1].core != tt[i].core || tt[i + 1].prov != tt[i].prov)
				ipc = overall_ipc(tt, nt, tt[i].prov, tt[i].core, &rn);
			if (ipc >= 0)
				t_cellf(&t, "%s %.4f", rn, ipc);
			else
				t_cell(&t, "");
		}
		t_write(&t, ob, "Totals per core and event (all periods; rate over the periods with a known start; "
		    "IPC over the whole trace)");
	}
	free(tt);
	if (p->nq) {
		t.ncol = 6;
		t.right = right6b;
		const char *h[] = { "Core", "Source", "Start (ms)", "End (ms)", "Ratio", "Value" };
		for (int k = 0; k < 6; k++)
			t_cell(&t, h[k]);
		for (size_t i = 0; i < p->nq; i++) {
			const struct ratio *q = &p->q[i];
			t_cellf(&t, "%" PRIu64, q->core);
			t_cell(&t, q->prov == WPERF_APP ? "app" : "driver");
			if (q->has_start)
				fmt_ms(a, q->start);
			else
				strcpy(a, "-");
			t_cell(&t, a);
			fmt_ms(b, q->t);
			t_cell(&t, b);
			t_cell(&t, q->name);
			t_cellf(&t, "%.4f", q->value);
		}
		t_write(&t, ob, "Derived ratios per core and period");
	}
	if (!p->n)
		ob_puts(ob, "no WindowsPerf ReadGPC events (providers WindowsPerf App "
		    "{6AFCCF81-3A0C-411E-A4AA-C4CF02EB840D}, WindowsPerf Driver "
		    "{9b15b4b5-6979-4ba7-9b26-00c630a4d7b3})\n");
}

static void
report_tsv(struct pmu *p, struct outbuf *ob)
{
	char a[40], b[40];
	ob_puts(ob, "#app\ttime_ms\tevent_name\tcore\tevent_index\tevent_note\tvalue\n");
	ob_puts(ob, "#driver\ttime_ms\tevent_index\tcore\tgpc_index\tvalue\n");
	ob_puts(ob, "#delta\ttime_ms\tstart_ms\tcore\tevent_index\tevent_name\tdelta\trate_per_s\n");
	ob_puts(ob, "#ratio\ttime_ms\tstart_ms\tcore\tsource\tratio\tvalue\n");
	ob_puts(ob, "#total\tsource\tcore\tevent_index\tevent_name\ttotal\trate_per_s\n");
	ob_puts(ob, "#total_ratio\tsource\tcore\tratio\tvalue\n");
	for (size_t i = 0; i < p->n; i++) {
		const struct row *r = &p->r[i];
		fmt_ms(a, r->t);
		if (r->prov == WPERF_APP) {
			char *name = xmalloc(3 * strlen(r->name) + 1), *note = xmalloc(3 * strlen(r->note) + 1);
			name[evt_escape(name, r->name, strlen(r->name), 0)] = '\0';
			note[evt_escape(note, r->note, strlen(r->note), 0)] = '\0';
			ob_printf(ob, "app\t%s\t%s\t%" PRIu64 "\t%u\t%s\t%" PRIu64 "\n", a, name, r->core,
			    r->event, note, r->value);
			free(name);
			free(note);
		} else
			ob_printf(ob, "driver\t%s\t%08X\t%" PRIu64 "\t%u\t%" PRIu64 "\n", a, r->event, r->core,
			    r->gpc, r->value);
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct row *r = &p->r[i];
		if (r->prov != WPERF_DRIVER)
			continue;
		fmt_ms(a, r->t);
		if (r->has_start)
			fmt_ms(b, r->start);
		else
			strcpy(b, "-");
		ob_printf(ob, "delta\t%s\t%s\t%" PRIu64 "\t%08X\t%s\t%" PRIu64 "\t", a, b, r->core, r->event,
		    event_name(r->event), r->delta);
		if (r->has_start && r->t > r->start)
			ob_printf(ob, "%.0f\n", (double)r->delta * 1000.0 / (r->t - r->start));
		else
			ob_puts(ob, "-\n");
	}
	for (size_t i = 0; i < p->nq; i++) {
		const struct ratio *q = &p->q[i];
		fmt_ms(a, q->t);
		if (q->has_start)
			fmt_ms(b, q->start);
		else
			strcpy(b, "-");
		ob_printf(ob, "ratio\t%s\t%s\t%" PRIu64 "\t%s\t%s\t%.4f\n", a, b, q->core,
		    q->prov == WPERF_APP ? "app" : "driver", q->name, q->value);
	}
	struct total *tt;
	size_t nt = totals(p, &tt);
	for (size_t i = 0; i < nt; i++) {
		const char *src = tt[i].prov == WPERF_APP ? "app" : "driver";
		char *name = xmalloc(3 * strlen(tt[i].name) + 1);
		name[evt_escape(name, tt[i].name, strlen(tt[i].name), 0)] = '\0';
		ob_printf(ob, "total\t%s\t%" PRIu64 "\t%s%08X\t%s\t%" PRIu64 "\t", src, tt[i].core,
		    "", tt[i].event, name, tt[i].sum);
		free(name);
		if (tt[i].timed_ms > 0)
			ob_printf(ob, "%.0f\n", (double)tt[i].timed_sum * 1000.0 / tt[i].timed_ms);
		else
			ob_puts(ob, "-\n");
		const char *rn = NULL;
		double ipc = -1;
		if (i + 1 == nt || tt[i + 1].core != tt[i].core || tt[i + 1].prov != tt[i].prov)
			ipc = overall_ipc(tt, nt, tt[i].prov, tt[i].core, &rn);
		if (ipc >= 0)
			ob_printf(ob, "total_ratio\t%s\t%" PRIu64 "\t%s\t%.4f\n", src, tt[i].core, rn, ipc);
	}
	free(tt);
}

void
pmu_report(struct pmu *p, struct outbuf *ob)
{
	if (p->n)
		qsort(p->r, p->n, sizeof *p->r, cmp_series);
	deltas(p);
	p->nq = 0;
	ratios(p);
	if (p->o.tsv)
		report_tsv(p, ob);
	else
		report_text(p, ob);
}
