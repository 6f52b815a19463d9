/*
 * tables.c - processes, threads, images and the events summary of a
 * trace, from its evt stream (see tables.h).
 *
 * What each row says, and from which lines (docs/evt-format.md §3):
 *   process  ProcessStart/End/DCStart/DCEnd/Defunct give pid, parent,
 *            image, command line and the life: a DCStart (the rundown
 *            at the trace's start) means "before trace", a DCEnd or no
 *            end at all "after trace".  A pid seen only on other events
 *            (a trace without the kernel's process rundown) is a row too,
 *            its start and end "?": the user sees which pids were there.
 *   thread   ThreadStart/End/DCStart/DCEnd the same way, its name from
 *            ThreadSetName or a rundown's name=.
 *   CPU      the sum of Sample weights (sampled CPU ms, what PerfView's
 *            CPU Stacks and WPA's CPU Usage (Sampled) add up), charged to
 *            the process and thread instance alive at the sample.
 *   image    one row per load (pid, base): ImageLoad/DCStart/Unload/
 *            DCEnd, its PDB identity from the DbgID_RSDS of the same pid
 *            and base (or, failing that, the same base in any process:
 *            kernel images are often described under another pid), and
 *            the symbol status from the "#symbols" lines etl2evt writes
 *            at the end of the stream, joined by file name and PDB key.
 *   events   one counter per distinct key (provider, task, opcode, id,
 *            kind, process; --by keeps fewer), with first and last time.
 *            Kinds etl2evt decodes itself carry no provider= attribute;
 *            they are named by the provider that logs them.
 * A pid or tid that starts again after its end is a new row, as in WPA.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/escape.h"
#include "base/hmap.h"
#include "base/intern.h"
#include "base/strbuf.h"
#include "evt/evt.h"
#include "report/numfmt.h"
#include "report/tables.h"
#include "base/path.h"

/* A start or an end: unknown, at a time in the trace, or beyond its edge. */
enum edge { E_UNKNOWN, E_TIME, E_OUTSIDE, E_DEFUNCT };

struct life {
	enum edge start, end;
	double start_ms, end_ms;
};

struct proc {
	long pid, parent;
	char *name, *cmdline;	/* evt-escaped, or NULL */
	struct life life;
	int64_t cpu_ns;
	uint32_t nthreads;
};

struct thr {
	long tid, pid;
	uint32_t proc;		/* index in procs, or UINT32_MAX */
	char *name;
	struct life life;
	int64_t cpu_ns;
};

struct img {
	long pid;
	uint32_t proc;
	uint64_t base, size;
	char *path;
	struct life life;
};

struct pdbid {
	char *guid, *pdb;	/* evt-escaped */
	unsigned long age;
};

struct evkey {
	uint64_t count;
	double first, last;
};

#define EV_NKEYS 6
static const char *const ev_keys[EV_NKEYS] = {
	"provider", "task", "opcode", "id", "kind", "process"
};

struct tables {
	enum tables_view view;
	struct tables_opts o;
	int keys[EV_NKEYS];		/* events: which keys group the rows */
	struct proc *p;
	size_t np, capp;
	struct hmap pmap;		/* (pid, 0) -> the pid's latest row */
	struct thr *t;
	size_t nt, capt;
	struct hmap tmap;		/* (tid, 0) -> the tid's latest row */
	struct img *im;
	size_t nim, capim;
	struct hmap imap;		/* (pid, base) -> latest load */
	struct pdbid *pd;
	size_t npd, cappd;
	struct hmap pdmap;		/* (pid, base) and (UINT64_MAX, base) -> pdbid */
	struct intern sym;		/* "file\tKEY" of #symbols lines */
	char **symstatus;		/* per sym id */
	size_t capsym;
	int have_symbols;
	struct intern evk;		/* events: the key text */
	struct evkey *ek;
	size_t capek;
	uint64_t bad;
};

/* ---------- the table helper (also health.c's) ---------- */

void
tbl_init(struct tbl *t, size_t ncol, const int *right, int tsv)
{
	memset(t, 0, sizeof *t);
	t->ncol = ncol;
	t->right = right;
	t->tsv = tsv;
}

static void
tbl_take(struct tbl *t, char *s)
{
	XGROW(t->cell, t->n, t->cap, 64);
	t->cell[t->n++] = s;
}

void
tbl_cell(struct tbl *t, const char *s)
{
	tbl_take(t, xstrdup(s ? s : ""));
}

/* One cell of evt-escaped text from the stream: unescaped for text, kept for TSV. */
static void
tbl_evt(struct tbl *t, const char *s, size_t n)
{
	char *c = xstrndup(s ? s : "", s ? n : 0);

	if (!t->tsv)
		evt_unescape(c, strlen(c));
	tbl_take(t, c);
}

static void tbl_cellf(struct tbl *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
tbl_cellf(struct tbl *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	tbl_take(t, strbuf_detach(&sb));
}

static void
pad(struct outbuf *ob, size_t n)
{
	while (n-- > 0)
		ob_putc(ob, ' ');
}

void
tbl_write(struct tbl *t, struct outbuf *ob)
{
	size_t *w = xcalloc(t->ncol, sizeof *w), i;

	for (i = 0; i < t->n && !t->tsv; i++) {
		size_t l = text_width(t->cell[i], strlen(t->cell[i]));

		if (l > w[i % t->ncol])
			w[i % t->ncol] = l;
	}
	for (i = 0; i < t->n; i++) {
		size_t c = i % t->ncol;
		int last = c == t->ncol - 1;

		if (t->tsv) {
			fmt_tsv_text(ob, t->cell[i]);
			ob_putc(ob, last ? '\n' : '\t');
		} else {
			size_t l = text_width(t->cell[i], strlen(t->cell[i]));
			int right = t->right && t->right[c];

			if (right)
				pad(ob, w[c] - l);
			text_escape_str(ob, t->cell[i]);
			if (!right && !last)
				pad(ob, w[c] - l);
			ob_puts(ob, last ? "\n" : "  ");
		}
		free(t->cell[i]);
	}
	free(t->cell);
	free(w);
	t->cell = NULL;
	t->n = t->cap = 0;
}

/* ---------- rows ---------- */

struct tables *
tables_new(enum tables_view v, const struct tables_opts *o, const char **why)
{
	struct tables *t = xcalloc(1, sizeof *t);

	t->view = v;
	t->o = *o;
	for (int k = 0; k < EV_NKEYS; k++)
		t->keys[k] = o->by == NULL;
	if (o->by) {
		const char *p = o->by;

		while (*p) {
			size_t l = strcspn(p, ",");
			int k;

			for (k = 0; k < EV_NKEYS; k++)
				if (strlen(ev_keys[k]) == l && memcmp(ev_keys[k], p, l) == 0)
					break;
			if (k == EV_NKEYS) {
				*why = "--by takes provider,task,opcode,id,kind,process (a comma-separated list)";
				free(t);
				return NULL;
			}
			t->keys[k] = 1;
			p += l + (p[l] == ',');
		}
	}
	hmap_init(&t->pmap);
	hmap_init(&t->tmap);
	hmap_init(&t->imap);
	hmap_init(&t->pdmap);
	intern_init(&t->sym);
	intern_init(&t->evk);
	return t;
}

static char *
dup_span(const char *s, size_t n)
{
	return s ? xstrndup(s, n) : NULL;
}

/* Replaces *DST by S[0..N) when S is a real value (present, not empty, not "?"). */
static void
set_text(char **dst, const char *s, size_t n)
{
	if (s == NULL || n == 0 || (n == 1 && s[0] == '?'))
		return;
	free(*dst);
	*dst = dup_span(s, n);
}

/*
 * Does a start (STARTING: 1 a start seen in the trace, 2 a start
 * rundown) open a new row for an id whose last row has life L?  Yes
 * when that row ended or started for real already; a second rundown of
 * the same living id (the files of a merged session each carry one) is
 * the same row.
 */
static int
opens_new(const struct life *l, int starting)
{
	if (l->end != E_UNKNOWN)
		return 1;
	if (l->start == E_TIME)
		return 1;
	return l->start == E_OUTSIDE && starting == 1;
}

static uint32_t
new_proc(struct tables *t, long pid)
{
	XGROW(t->p, t->np, t->capp, 64);
	memset(&t->p[t->np], 0, sizeof t->p[t->np]);
	t->p[t->np].pid = pid;
	t->p[t->np].parent = -1;
	hmap_put(&t->pmap, (uint64_t)pid, 0, (uint32_t)t->np);
	return (uint32_t)t->np++;
}

/*
 * The row of PID for an event.  STARTING: a start (or start rundown)
 * event, which opens a new row when the pid's last one has ended or
 * already has a start of its own.
 */
static uint32_t
proc_of(struct tables *t, long pid, int starting)
{
	uint32_t *v;

	if (pid < 0)
		return UINT32_MAX;
	v = hmap_get(&t->pmap, (uint64_t)pid, 0);
	if (v == NULL)
		return new_proc(t, pid);
	if (starting && opens_new(&t->p[*v].life, starting))
		return new_proc(t, pid);
	return *v;
}

static uint32_t
new_thr(struct tables *t, long tid)
{
	XGROW(t->t, t->nt, t->capt, 64);
	memset(&t->t[t->nt], 0, sizeof t->t[t->nt]);
	t->t[t->nt].tid = tid;
	t->t[t->nt].pid = -1;
	t->t[t->nt].proc = UINT32_MAX;
	hmap_put(&t->tmap, (uint64_t)tid, 0, (uint32_t)t->nt);
	return (uint32_t)t->nt++;
}

static uint32_t
thr_of(struct tables *t, long tid, long pid, int starting)
{
	uint32_t *v, i;

	if (tid < 0)
		return UINT32_MAX;
	v = hmap_get(&t->tmap, (uint64_t)tid, 0);
	if (v == NULL)
		i = new_thr(t, tid);
	else if (starting && opens_new(&t->t[*v].life, starting))
		i = new_thr(t, tid);
	else if (pid >= 0 && t->t[*v].pid >= 0 && t->t[*v].pid != pid)
		i = new_thr(t, tid);	/* the tid now belongs to another process */
	else
		i = *v;
	if (t->t[i].pid < 0 && pid >= 0) {
		t->t[i].pid = pid;
		t->t[i].proc = proc_of(t, pid, 0);
		t->p[t->t[i].proc].nthreads++;
	}
	return i;
}

/* The value of attribute KEY of an event, as a span, or NULL. */
static const char *
attr(const struct evt_cols *c, const char *key, size_t *n)
{
	return evt_cols_attr(c, key, n);
}

static int
kind_is(const struct evt_span *k, const char *s)
{
	size_t n = strlen(s);

	return k->n == n && memcmp(k->p, s, n) == 0;
}

static int
starts_with(const struct evt_span *k, const char *s)
{
	size_t n = strlen(s);

	return k->n >= n && memcmp(k->p, s, n) == 0;
}

static void
set_start(struct life *l, enum edge e, double ms)
{
	l->start = e;
	l->start_ms = ms;
}

static void
set_end(struct life *l, enum edge e, double ms)
{
	if (l->end == E_TIME && e == E_DEFUNCT)
		return;		/* the exit itself was seen: keep its time */
	l->end = e;
	l->end_ms = ms;
}

static void
process_event(struct tables *t, const struct evt_cols *c, const struct evt_span *k,
    double ms, long pid)
{
	const char *s;
	size_t n;
	int start = kind_is(k, "ProcessStart"), dcstart = kind_is(k, "ProcessDCStart");
	uint32_t i = proc_of(t, pid, start ? 1 : dcstart ? 2 : 0);
	struct proc *p;

	if (i == UINT32_MAX)
		return;
	p = &t->p[i];
	if (start)
		set_start(&p->life, E_TIME, ms);
	else if (dcstart)
		set_start(&p->life, E_OUTSIDE, ms);
	else if (kind_is(k, "ProcessEnd"))
		set_end(&p->life, E_TIME, ms);
	else if (kind_is(k, "ProcessDCEnd"))
		set_end(&p->life, E_OUTSIDE, ms);
	else if (kind_is(k, "ProcessDefunct"))
		set_end(&p->life, E_DEFUNCT, ms);
	if ((s = attr(c, "parent", &n)) != NULL)
		p->parent = strtol(s, NULL, 10);
	if ((s = attr(c, "image", &n)) != NULL)
		set_text(&p->name, s, n);
	if ((s = attr(c, "cmdline", &n)) != NULL)
		set_text(&p->cmdline, s, n);
}

static void
thread_event(struct tables *t, const struct evt_cols *c, const struct evt_span *k,
    double ms, long pid, long tid)
{
	const char *s;
	size_t n;
	int start = kind_is(k, "ThreadStart"), dcstart = kind_is(k, "ThreadDCStart");
	uint32_t i = thr_of(t, tid, pid, start ? 1 : dcstart ? 2 : 0);
	struct thr *th;

	if (i == UINT32_MAX)
		return;
	th = &t->t[i];
	if (start)
		set_start(&th->life, E_TIME, ms);
	else if (dcstart)
		set_start(&th->life, E_OUTSIDE, ms);
	else if (kind_is(k, "ThreadEnd"))
		set_end(&th->life, E_TIME, ms);
	else if (kind_is(k, "ThreadDCEnd"))
		set_end(&th->life, E_OUTSIDE, ms);
	if ((s = attr(c, "name", &n)) != NULL)
		set_text(&th->name, s, n);
}

static uint64_t
hex_attr(const struct evt_cols *c, const char *key)
{
	size_t n;
	const char *s = attr(c, key, &n);

	return s ? strtoull(s, NULL, 16) : 0;
}

static void
image_event(struct tables *t, const struct evt_cols *c, const struct evt_span *k,
    double ms, long pid)
{
	uint64_t base = hex_attr(c, "base");
	uint32_t *v = hmap_get(&t->imap, (uint64_t)pid, base), i;
	int starting = kind_is(k, "ImageLoad") ? 1 : kind_is(k, "ImageDCStart") ? 2 : 0;
	const char *s;
	size_t n;

	if (v && !(starting && opens_new(&t->im[*v].life, starting)))
		i = *v;
	else {
		XGROW(t->im, t->nim, t->capim, 64);
		i = (uint32_t)t->nim++;
		memset(&t->im[i], 0, sizeof t->im[i]);
		t->im[i].pid = pid;
		t->im[i].base = base;
		t->im[i].proc = proc_of(t, pid, 0);
		hmap_put(&t->imap, (uint64_t)pid, base, i);
	}
	if (kind_is(k, "ImageLoad"))
		set_start(&t->im[i].life, E_TIME, ms);
	else if (kind_is(k, "ImageDCStart"))
		set_start(&t->im[i].life, E_OUTSIDE, ms);
	else if (kind_is(k, "ImageUnload"))
		set_end(&t->im[i].life, E_TIME, ms);
	else if (kind_is(k, "ImageDCEnd"))
		set_end(&t->im[i].life, E_OUTSIDE, ms);
	if (attr(c, "size", &n))
		t->im[i].size = hex_attr(c, "size");
	if ((s = attr(c, "path", &n)) != NULL)
		set_text(&t->im[i].path, s, n);
}

static void
dbgid_event(struct tables *t, const struct evt_cols *c, long pid)
{
	uint64_t base = hex_attr(c, "base");
	const char *s;
	size_t n;
	struct pdbid *d;

	XGROW(t->pd, t->npd, t->cappd, 64);
	d = &t->pd[t->npd];
	memset(d, 0, sizeof *d);
	if ((s = attr(c, "guid", &n)) != NULL)
		d->guid = xstrndup(s, n);
	if ((s = attr(c, "pdb", &n)) != NULL)
		d->pdb = xstrndup(s, n);
	if ((s = attr(c, "age", &n)) != NULL)
		d->age = strtoul(s, NULL, 10);
	hmap_put(&t->pdmap, (uint64_t)pid, base, (uint32_t)t->npd);
	hmap_put(&t->pdmap, UINT64_MAX, base, (uint32_t)t->npd);
	t->npd++;
}

/* Sampled CPU to the process and thread alive now. */
static void
sample_event(struct tables *t, const struct evt_cols *c, long pid, long tid)
{
	int64_t ns;
	const char *why;
	uint32_t i;

	if (evt_cols_weight_ns(c, &ns, &why) < 0)
		return;
	if ((i = thr_of(t, tid, pid, 0)) != UINT32_MAX)
		t->t[i].cpu_ns += ns;
	if ((i = proc_of(t, pid, 0)) != UINT32_MAX)
		t->p[i].cpu_ns += ns;
}

/* Name of the process column when the process's row has none yet. */
static void
name_from_column(struct tables *t, const struct evt_cols *c, long pid)
{
	uint32_t i;

	if (pid < 0 || (i = proc_of(t, pid, 0)) == UINT32_MAX || t->p[i].name)
		return;
	set_text(&t->p[i].name, c->col[EVT_PROCESS].p, c->col[EVT_PROCESS].n);
}

/* The processes, threads and images views: one event line. */
static void
take_model(struct tables *t, const struct evt_cols *c, double ms, long pid, long tid)
{
	const struct evt_span *k = &c->col[EVT_KIND];

	if (starts_with(k, "Process"))
		process_event(t, c, k, ms, pid);
	else if (starts_with(k, "Thread"))
		thread_event(t, c, k, ms, pid, tid);
	else if (starts_with(k, "Image") && !kind_is(k, "ImageID"))
		image_event(t, c, k, ms, pid);
	else if (kind_is(k, "DbgID_RSDS"))
		dbgid_event(t, c, pid);
	else if (kind_is(k, "Sample"))
		sample_event(t, c, pid, tid);
	if (t->view != TV_IMAGES)
		thr_of(t, tid, pid, 0);
	name_from_column(t, c, pid);
}

/* ---------- the events summary ---------- */

/* The provider of a kind etl2evt decodes itself (its line has no provider=). */
static const char *
kind_provider(const struct evt_cols *c)
{
	const struct evt_span *k = &c->col[EVT_KIND];
	size_t n;

	if (starts_with(k, "Method")) {
		const char *r = attr(c, "rundown", &n);

		return r && n == 1 && r[0] == '1' ? "Microsoft-Windows-DotNETRuntimeRundown" :
		    "Microsoft-Windows-DotNETRuntime";
	}
	if (kind_is(k, "ImageID") || kind_is(k, "DbgID_RSDS"))
		return "KernelTraceControl";
	if (kind_is(k, "Lost"))
		return "(session)";
	return "Windows Kernel";
}

/* Appends the value of attribute KEY (or "") and a tab. */
static void
key_attr(struct strbuf *sb, const struct evt_cols *c, const char *key)
{
	size_t n;
	const char *s = attr(c, key, &n);

	if (s)
		strbuf_add(sb, s, n);
	strbuf_addc(sb, '\t');
}

static void
take_event_key(struct tables *t, const struct evt_cols *c, double ms, struct strbuf *sb)
{
	const struct evt_span *k = &c->col[EVT_KIND];
	int is_event = kind_is(k, "Event") || kind_is(k, "WPP");
	int is_kernel = kind_is(k, "Kernel");
	uint32_t id;
	size_t n;

	strbuf_reset(sb);
	if (t->keys[0]) {
		const char *s = attr(c, "provider", &n);

		if (s)
			strbuf_add(sb, s, n);
		else
			strbuf_adds(sb, kind_provider(c));
	}
	strbuf_addc(sb, '\t');
	if (t->keys[1]) {
		if (is_kernel)
			key_attr(sb, c, "class");
		else if (is_event)
			key_attr(sb, c, "task");
		else
			strbuf_addc(sb, '\t');
	} else
		strbuf_addc(sb, '\t');
	if (t->keys[2]) {
		/* classic (MOF) events and kernel groups number their events by type= */
		if (is_kernel || (is_event && !attr(c, "opcode", &n)))
			key_attr(sb, c, "type");
		else if (is_event)
			key_attr(sb, c, "opcode");
		else
			strbuf_addc(sb, '\t');
	} else
		strbuf_addc(sb, '\t');
	if (t->keys[3] && is_event)
		key_attr(sb, c, "id");
	else
		strbuf_addc(sb, '\t');
	if (t->keys[4])
		strbuf_add(sb, k->p, k->n);
	strbuf_addc(sb, '\t');
	if (t->keys[5]) {
		strbuf_add(sb, c->col[EVT_PROCESS].p, c->col[EVT_PROCESS].n);
		strbuf_adds(sb, " (");
		strbuf_add(sb, c->col[EVT_PID].p, c->col[EVT_PID].n);
		strbuf_addc(sb, ')');
	}
	id = intern_add(&t->evk, sb->s, sb->len);
	if (id >= t->capek) {
		size_t old = t->capek;

		t->capek = t->capek ? t->capek * 2 : 256;
		t->ek = xrealloc(t->ek, t->capek * sizeof *t->ek);
		memset(t->ek + old, 0, (t->capek - old) * sizeof *t->ek);
	}
	if (t->ek[id].count == 0 || ms < t->ek[id].first)
		t->ek[id].first = ms;
	if (t->ek[id].count == 0 || ms > t->ek[id].last)
		t->ek[id].last = ms;
	t->ek[id].count++;
}

/* ---------- reading ---------- */

/* "#symbols image=... key=... status=...": the status of one image's PDB. */
static void
take_symbols(struct tables *t, char *line, size_t len)
{
	struct strbuf key = STRBUF_INIT;
	const char *img = NULL, *k = NULL, *st = NULL;
	size_t ni = 0, nk = 0, ns = 0;
	char *p = line, *end = line + len;

	while (p < end) {
		char *tab = memchr(p, '\t', (size_t)(end - p));
		size_t n = tab ? (size_t)(tab - p) : (size_t)(end - p);

		if (n > 6 && memcmp(p, "image=", 6) == 0)
			img = p + 6, ni = n - 6;
		else if (n > 4 && memcmp(p, "key=", 4) == 0)
			k = p + 4, nk = n - 4;
		else if (n > 7 && memcmp(p, "status=", 7) == 0)
			st = p + 7, ns = n - 7;
		p += n + 1;
	}
	t->have_symbols = 1;
	if (img == NULL || st == NULL)
		return;
	for (size_t i = 0; i < ni; i++)
		strbuf_addc(&key, (char)(img[i] >= 'A' && img[i] <= 'Z' ? img[i] + 32 : img[i]));
	strbuf_addc(&key, '\t');
	if (k)
		strbuf_add(&key, k, nk);
	uint32_t id = intern_add(&t->sym, key.s, key.len);
	if (id >= t->capsym) {
		size_t old = t->capsym;

		t->capsym = t->capsym ? t->capsym * 2 : 64;
		t->symstatus = xrealloc(t->symstatus, t->capsym * sizeof *t->symstatus);
		memset(t->symstatus + old, 0, (t->capsym - old) * sizeof *t->symstatus);
	}
	free(t->symstatus[id]);
	t->symstatus[id] = xstrndup(st, ns);
	strbuf_release(&key);
}

/* What evt_each() calls back with: the tables and a scratch buffer for event keys. */
struct tables_read {
	struct tables *t;
	struct strbuf sb;
};

static int
take_meta(void *ctx, char *line, size_t len, const char **why)
{
	struct tables_read *r = ctx;

	(void)why;
	if (len > 9 && memcmp(line, "#symbols\t", 9) == 0)
		take_symbols(r->t, line + 9, len - 9);
	return 0;
}

static int
take_line(void *ctx, struct evt_cols *c, const char **why)
{
	struct tables_read *r = ctx;
	double ms;
	long pid, tid;

	if (evt_cols_time(c, &ms, why) < 0 || evt_cols_pid(c, &pid, why) < 0 ||
	    evt_cols_tid(c, &tid, why) < 0)
		return -1;
	if (r->t->view == TV_EVENTS)
		take_event_key(r->t, c, ms, &r->sb);
	else
		take_model(r->t, c, ms, pid, tid);
	return 0;
}

int
tables_read(struct tables *t, const char *path)
{
	struct tables_read r = { t, STRBUF_INIT };
	const struct evt_handlers eh = { .ctx = &r, .meta = take_meta, .event = take_line };
	uint64_t bad;
	int st = evt_each(path, &eh, &bad);

	strbuf_release(&r.sb);
	t->bad += bad;
	return st;
}

/* ---------- reports ---------- */

static void
cell_ms(struct tbl *tb, double ms)
{
	char b[64];

	if (tb->tsv)
		evt_format_time(b, ms);
	else {
		/* three decimals always, so times line up on their point */
		int n = fmt_thousands(b, ms, 3);
		char *dot = strchr(b, '.');
		int have = dot ? (int)(b + n - dot - 1) : -1;

		if (have < 0)
			b[n++] = '.', have = 0;
		while (have++ < 3)
			b[n++] = '0';
		b[n] = '\0';
	}
	tbl_cell(tb, b);
}

static void
cell_edge(struct tbl *tb, enum edge e, double ms, int is_start)
{
	switch (e) {
	case E_TIME: cell_ms(tb, ms); break;
	case E_OUTSIDE: tbl_cell(tb, is_start ? "before trace" : "after trace"); break;
	case E_DEFUNCT: tbl_cell(tb, "exited (defunct)"); break;
	default: tbl_cell(tb, "?"); break;
	}
}

/* An end never seen for something whose start was seen: it outlived the trace. */
static void
cell_end(struct tbl *tb, const struct life *l)
{
	if (l->end == E_UNKNOWN && l->start != E_UNKNOWN)
		tbl_cell(tb, "after trace");
	else
		cell_edge(tb, l->end, l->end_ms, 0);
}

static void
cell_cpu(struct tbl *tb, int64_t ns)
{
	char b[64];

	if (tb->tsv)
		evt_format_weight_ns(b, ns);
	else
		fmt_thousands(b, (double)ns / 1e6, 3);
	tbl_cell(tb, b);
}

static void
cell_text(struct tbl *tb, const char *s)
{
	if (s)
		tbl_evt(tb, s, strlen(s));
	else
		tbl_cell(tb, "?");
}

static void
header(struct tbl *tb, const char *const *names)
{
	for (size_t i = 0; i < tb->ncol; i++)
		tbl_cell(tb, names[i]);
}

static const struct tables *sort_t;

/* Busiest first, then by id and start: the order a first look wants. */
static int
cmp_proc(const void *a, const void *b)
{
	const struct proc *x = &sort_t->p[*(const uint32_t *)a], *y = &sort_t->p[*(const uint32_t *)b];

	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int
cmp_thr(const void *a, const void *b)
{
	const struct thr *x = &sort_t->t[*(const uint32_t *)a], *y = &sort_t->t[*(const uint32_t *)b];

	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int
cmp_img(const void *a, const void *b)
{
	const struct img *x = &sort_t->im[*(const uint32_t *)a], *y = &sort_t->im[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static uint32_t *
order(const struct tables *t, size_t n, int (*cmp)(const void *, const void *))
{
	uint32_t *ix = xmalloc((n ? n : 1) * sizeof *ix);

	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	sort_t = t;
	qsort(ix, n, sizeof *ix, cmp);
	return ix;
}

static void
report_processes(struct tables *t, struct outbuf *ob)
{
	static const char *const h[] = { "pid", "parent", "process", "start_ms", "end_ms",
	    "cpu_ms", "threads", "command_line" };
	static const int right[] = { 1, 1, 0, 1, 1, 1, 1, 0 };
	struct tbl tb;
	uint32_t *ix = order(t, t->np, cmp_proc);

	tbl_init(&tb, 8, right, t->o.tsv);
	header(&tb, h);
	for (size_t k = 0; k < t->np; k++) {
		const struct proc *p = &t->p[ix[k]];

		tbl_cellf(&tb, "%ld", p->pid);
		if (p->parent >= 0)
			tbl_cellf(&tb, "%ld", p->parent);
		else
			tbl_cell(&tb, "?");
		cell_text(&tb, p->name);
		cell_edge(&tb, p->life.start, p->life.start_ms, 1);
		cell_end(&tb, &p->life);
		cell_cpu(&tb, p->cpu_ns);
		tbl_cellf(&tb, "%" PRIu32, p->nthreads);
		if (p->cmdline)
			tbl_evt(&tb, p->cmdline, strlen(p->cmdline));
		else
			tbl_cell(&tb, "");
	}
	tbl_write(&tb, ob);
	free(ix);
}

static void
report_threads(struct tables *t, struct outbuf *ob)
{
	static const char *const h[] = { "tid", "pid", "process", "thread_name", "start_ms",
	    "end_ms", "cpu_ms" };
	static const int right[] = { 1, 1, 0, 0, 1, 1, 1 };
	struct tbl tb;
	uint32_t *ix = order(t, t->nt, cmp_thr);

	tbl_init(&tb, 7, right, t->o.tsv);
	header(&tb, h);
	for (size_t k = 0; k < t->nt; k++) {
		const struct thr *th = &t->t[ix[k]];

		tbl_cellf(&tb, "%ld", th->tid);
		if (th->pid >= 0)
			tbl_cellf(&tb, "%ld", th->pid);
		else
			tbl_cell(&tb, "?");
		cell_text(&tb, th->proc != UINT32_MAX ? t->p[th->proc].name : NULL);
		if (th->name)
			tbl_evt(&tb, th->name, strlen(th->name));
		else
			tbl_cell(&tb, "");
		cell_edge(&tb, th->life.start, th->life.start_ms, 1);
		cell_end(&tb, &th->life);
		cell_cpu(&tb, th->cpu_ns);
	}
	tbl_write(&tb, ob);
	free(ix);
}

/* The file name of an image's path, lower-cased: the "image=" of "#symbols". */
static void
file_name(struct strbuf *sb, const char *path)
{
	for (const char *b = path_base(path); *b; b++)
		strbuf_addc(sb, (char)(*b >= 'A' && *b <= 'Z' ? *b + 32 : *b));
}

/* The symbol-server key of a PDB: GUID in upper-case hex without dashes, then the age in hex. */
static void
pdb_key(struct strbuf *sb, const struct pdbid *d)
{
	for (const char *g = d->guid ? d->guid : ""; *g; g++)
		if (*g != '-')
			strbuf_addc(sb, (char)(*g >= 'a' && *g <= 'f' ? *g - 32 : *g));
	strbuf_addf(sb, "%lX", d->age);
}

static const struct pdbid *
pdb_of(const struct tables *t, const struct img *im)
{
	uint32_t *v = hmap_get(&t->pdmap, (uint64_t)im->pid, im->base);

	if (v == NULL)
		v = hmap_get(&t->pdmap, UINT64_MAX, im->base);
	return v ? &t->pd[*v] : NULL;
}

/* "#symbols" status of an image, or what we know without it. */
static const char *
sym_status(struct tables *t, const struct img *im, const struct pdbid *d)
{
	struct strbuf sb = STRBUF_INIT;
	const char *st = NULL;

	if (!t->have_symbols)
		return d ? "-" : "no-pdb-id";
	if (im->path) {
		char *path = xstrdup(im->path);

		evt_unescape(path, strlen(path));
		file_name(&sb, path);
		free(path);
	}
	strbuf_addc(&sb, '\t');
	if (d)
		pdb_key(&sb, d);
	/* an image no "#symbols" line names gets an id with no status */
	uint32_t id = intern_add(&t->sym, sb.s, sb.len);
	if (id < t->capsym)
		st = t->symstatus[id];
	strbuf_release(&sb);
	if (st)
		return st;
	return d ? "not-looked-up" : "no-pdb-id";
}

static void
report_images(struct tables *t, struct outbuf *ob)
{
	static const char *const h[] = { "pid", "process", "base", "size", "load_ms",
	    "unload_ms", "pdb", "pdb_guid", "pdb_age", "symbols", "path" };
	static const int right[] = { 1, 0, 1, 1, 1, 1, 0, 0, 1, 0, 0 };
	struct tbl tb;
	uint32_t *ix = order(t, t->nim, cmp_img);

	tbl_init(&tb, 11, right, t->o.tsv);
	header(&tb, h);
	for (size_t k = 0; k < t->nim; k++) {
		const struct img *im = &t->im[ix[k]];
		const struct pdbid *d = pdb_of(t, im);

		tbl_cellf(&tb, "%ld", im->pid);
		cell_text(&tb, im->proc != UINT32_MAX ? t->p[im->proc].name : NULL);
		tbl_cellf(&tb, "0x%" PRIx64, im->base);
		tbl_cellf(&tb, "0x%" PRIx64, im->size);
		cell_edge(&tb, im->life.start, im->life.start_ms, 1);
		cell_end(&tb, &im->life);
		if (d) {
			cell_text(&tb, d->pdb);
			cell_text(&tb, d->guid);
			tbl_cellf(&tb, "%lu", d->age);
		} else {
			tbl_cell(&tb, "");
			tbl_cell(&tb, "");
			tbl_cell(&tb, "");
		}
		tbl_cell(&tb, sym_status(t, im, d));
		cell_text(&tb, im->path);
	}
	tbl_write(&tb, ob);
	free(ix);
}

static int
cmp_evk(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct tables *t = sort_t;

	if (t->ek[i].count != t->ek[j].count)
		return t->ek[i].count > t->ek[j].count ? -1 : 1;
	return strcmp(intern_str(&t->evk, i), intern_str(&t->evk, j));
}

static void
report_events(struct tables *t, struct outbuf *ob)
{
	static const char *const names[] = { "provider", "task", "opcode", "id", "kind",
	    "process", "count", "first_ms", "last_ms" };
	static const int rights[] = { 0, 1, 1, 1, 0, 0, 1, 1, 1 };
	int right[9];
	struct tbl tb;
	size_t ncol = 0, n = t->evk.n;
	uint32_t *ix = xmalloc((n ? n : 1) * sizeof *ix);

	for (int k = 0; k < EV_NKEYS; k++)
		if (t->keys[k])
			right[ncol++] = rights[k];
	for (int k = EV_NKEYS; k < 9; k++)
		right[ncol++] = rights[k];
	tbl_init(&tb, ncol, right, t->o.tsv);
	for (int k = 0; k < 9; k++)
		if (k >= EV_NKEYS || t->keys[k])
			tbl_cell(&tb, names[k]);
	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	sort_t = t;
	qsort(ix, n, sizeof *ix, cmp_evk);
	for (size_t i = 0; i < n; i++) {
		const char *s = intern_str(&t->evk, ix[i]);
		char b[64];

		for (int k = 0; k < EV_NKEYS; k++) {
			size_t l = strcspn(s, "\t");

			if (t->keys[k])
				tbl_evt(&tb, s, l);
			s += l + (s[l] == '\t');
		}
		if (tb.tsv)
			snprintf(b, sizeof b, "%" PRIu64, t->ek[ix[i]].count);
		else
			fmt_thousands(b, (double)t->ek[ix[i]].count, 0);
		tbl_cell(&tb, b);
		cell_ms(&tb, t->ek[ix[i]].first);
		cell_ms(&tb, t->ek[ix[i]].last);
	}
	tbl_write(&tb, ob);
	free(ix);
}

void
tables_report(struct tables *t, struct outbuf *ob)
{
	switch (t->view) {
	case TV_PROCESSES: report_processes(t, ob); break;
	case TV_THREADS: report_threads(t, ob); break;
	case TV_IMAGES: report_images(t, ob); break;
	default: report_events(t, ob); break;
	}
}

void
tables_free(struct tables *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->np; i++) {
		free(t->p[i].name);
		free(t->p[i].cmdline);
	}
	for (size_t i = 0; i < t->nt; i++)
		free(t->t[i].name);
	for (size_t i = 0; i < t->nim; i++)
		free(t->im[i].path);
	for (size_t i = 0; i < t->npd; i++) {
		free(t->pd[i].guid);
		free(t->pd[i].pdb);
	}
	for (size_t i = 0; i < t->capsym; i++)
		free(t->symstatus[i]);
	free(t->symstatus);
	free(t->p);
	free(t->t);
	free(t->im);
	free(t->pd);
	free(t->ek);
	hmap_free(&t->pmap);
	hmap_free(&t->tmap);
	hmap_free(&t->imap);
	hmap_free(&t->pdmap);
	intern_release(&t->sym);
	intern_release(&t->evk);
	free(t);
}
