/*
 * evtfilter - select events of an evt stream: by process, thread, CPU,
 * kind, time range and frame patterns, like PerfView's filter boxes.
 *
 * USAGE:  evtfilter [-p PROC]... [-t TID]... [-C CPUS] [-k KINDS]
 *                   [--start MS] [--end MS] [-i PATS] [-x PATS]
 *                   [--poi=most-cpu|first-long|auto] [--keep-idle]
 *                   [-o FILE] [FILE]
 *
 * INPUT:  evt (docs/evt-format.md), plain or gzip:
 *           0.104200<TAB>Sample<TAB>0<TAB>app.exe<TAB>2212<TAB>4100<TAB>1<TAB>ip=0x1<TAB>ntdll.dll!RtlUserThreadStart
 *
 * OUTPUT: the same evt stream with only the selected events, lines
 *         unchanged except the weight of events that straddle a time-range
 *         edge (prorated to the overlap), a "filtered=evtfilter ..." note
 *         added to the header, and "#removed" lines at the end saying
 *         what was removed and why:
 *           #removed<TAB>by=evtfilter<TAB>reason=idle<TAB>events=812<TAB>weight_ms=812
 *
 * Idle-process Sample events are removed by default (PerfView's CPU
 * view does the same; samples inside a DPC/ISR stay: lib/stacks'
 * stk_idle_event is the rule); --keep-idle keeps them.  Events whose pid, tid
 * or cpu is -1 (not attributable) pass the process, thread and CPU
 * selections.  Frame patterns apply to events that have frames (a
 * stack or a DPC/ISR routine=); they see PerfView's process and thread
 * frames ("Process64 app (12)", "Thread (34)") above the stack.
 *
 * Exit status: 0 success, 1 malformed lines were skipped (counted on
 * stderr), 2 usage or I/O error, or no process of interest found.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/cli.h"
#include "evt/evt.h"
#include "evt/evtwrite.h"
#include "stacks/stacks.h"

#define TIME_EPS 0.0006	/* PerfView widens the range by this for rounding */

enum reason { R_IDLE, R_PROCESS, R_THREAD, R_CPU, R_KIND, R_TIME, R_EXCLUDE, R_INCLUDE,
    R_PRORATE, R_N };
static const char *reason_name[R_N] = { "idle", "process", "thread", "cpu", "kind", "time",
    "exclude", "include", "prorate" };

struct removed {
	long long events;
	double weight;
};

/* a list of values from repeated/comma-separated options */
struct strlist {
	char **v;
	int n;
};

static void
strlist_add(struct strlist *l, const char *arg)
{
	char *copy = xstrdup(arg), *save, *tok;

	/* strtok_r skips empty items: "a,,b," is a and b */
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		l->v = xrealloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
		l->v[l->n++] = xstrdup(tok);
	}
	free(copy);
}

struct opts {
	struct strlist procs, tids, cpus, kinds;
	double start, end;
	int has_start, has_end;
	int keep_idle;
	const char *poi;
	long poi_pid;
	char *poi_name;
	char *include, *exclude;
};

/* an event line: its columns in the unchanged line (lib/evt's reader) and their numbers */
struct line {
	struct evt_cols c;
	double time, weight;
	long cpu, pid, tid;
};

/* Splits without modifying the line (it is written back unchanged). */
static int
parse_line(char *s, size_t len, struct line *L, const char **why)
{
	int cpu;

	if (evt_split(s, len, &L->c, why) < 0 || evt_cols_time(&L->c, &L->time, why) < 0 ||
	    evt_cols_cpu(&L->c, &cpu, why) < 0 || evt_cols_pid(&L->c, &L->pid, why) < 0 ||
	    evt_cols_tid(&L->c, &L->tid, why) < 0 || evt_cols_weight(&L->c, &L->weight, why) < 0)
		return -1;
	L->cpu = cpu;
	return 0;
}

static int
kind_is(const struct line *L, const char *kind)
{
	size_t n = strlen(kind);

	return L->c.col[EVT_KIND].n == n && memcmp(L->c.col[EVT_KIND].p, kind, n) == 0;
}

/* The Idle rule every stack tool follows (lib/stacks: stk_idle_event). */
/* A sample taken inside a DPC or ISR says dpc=1 or isr=1: one pass over the attributes. */
static int
in_interrupt(const struct line *L)
{
	const char *p = L->c.attrs, *end = L->c.line + L->c.len, *tab;

	while ((tab = memchr(p, '\t', (size_t)(end - p))) != NULL) {
		if (tab - p == 5 && (memcmp(p, "dpc=1", 5) == 0 || memcmp(p, "isr=1", 5) == 0))
			return 1;
		p = tab + 1;
	}
	return 0;
}

static int
is_idle(const struct line *L)
{
	/* the columns first: the attributes are read only for the Idle process's lines */
	return stk_idle_event(L->c.col[EVT_KIND], L->c.col[EVT_PROCESS], L->pid, 0) &&
	    !in_interrupt(L);
}

/* -p NAME matches app.exe and app (case-insensitive); -p 1234 matches the pid */
static int
proc_selected(const struct opts *o, const struct line *L)
{
	const struct evt_span *proc = &L->c.col[EVT_PROCESS];
	int i;

	if (o->poi_pid >= 0)
		return L->pid == o->poi_pid || L->pid == -1;
	if (o->procs.n == 0 || L->pid == -1)
		return 1;
	for (i = 0; i < o->procs.n; i++) {
		const char *v = o->procs.v[i];
		char *e;
		long pid = strtol(v, &e, 10);
		size_t n = strlen(v), cl = proc->n;

		if (*e == '\0' && e != v) {
			if (pid == L->pid)
				return 1;
			continue;
		}
		if (cl == n && strncasecmp(proc->p, v, n) == 0)
			return 1;
		if (cl == n + 4 && strncasecmp(proc->p, v, n) == 0 &&
		    strncasecmp(proc->p + n, ".exe", 4) == 0)
			return 1;
	}
	return 0;
}

static int
num_selected(const struct strlist *l, long v)
{
	int i;

	if (l->n == 0 || v == -1)
		return 1;
	for (i = 0; i < l->n; i++) {
		long a, b;
		char *e;

		a = strtol(l->v[i], &e, 10);
		b = a;
		if (*e == '-')
			b = strtol(e + 1, &e, 10);
		if (v >= a && v <= b)
			return 1;
	}
	return 0;
}

static int
kind_selected(const struct opts *o, const struct line *L)
{
	int i;

	if (o->kinds.n == 0)
		return 1;
	for (i = 0; i < o->kinds.n; i++) {
		const char *k = o->kinds.v[i];

		if (strcmp(k, "cpu") == 0 && kind_is(L, "Sample"))
			return 1;
		if ((strcmp(k, "dpc") == 0 || strcmp(k, "dpcisr") == 0) &&
		    (kind_is(L, "DPC") || kind_is(L, "ThreadedDPC") ||
		    kind_is(L, "TimerDPC")))
			return 1;
		if ((strcmp(k, "isr") == 0 || strcmp(k, "dpcisr") == 0) && kind_is(L, "ISR"))
			return 1;
		if (kind_is(L, k))
			return 1;
	}
	return 0;
}

/*
 * The time an event covers.  An interval (DPC, ISR...: a line with
 * end_ms=) runs from its time column, its start, to end_ms, which no
 * filter rescales; its weight may already be prorated by an earlier
 * evtfilter, and taken as the duration it would shrink the line again.
 * Other lines cover their weight (a sample its interval).
 */
static double
duration(const struct line *L, int *interval)
{
	size_t n;
	const char *v = evt_cols_attr(&L->c, "end_ms", &n);
	char num[64];
	double end;

	if (v != NULL && n > 0 && n < sizeof num) {
		memcpy(num, v, n);
		num[n] = '\0';
		if (evt_parse_decimal(num, &end) == 0 && end >= L->time) {
			*interval = 1;
			return end - L->time;
		}
	}
	*interval = 0;
	return L->weight > 0 ? L->weight : 0;
}

/*
 * Time range, inclusive at both ends.  Returns 0 to drop, 1 to keep;
 * *SCALE < 1 when the event straddles an edge (weight prorated).
 */
static int
time_selected(const struct opts *o, const struct line *L, double *scale)
{
	double s = o->has_start ? o->start : -INFINITY, e = o->has_end ? o->end : INFINITY;
	int interval;
	double t0, d, t1, lo, hi;

	*scale = 1;
	if (!o->has_start && !o->has_end)
		return 1;	/* no range: nothing to read (end_ms= is looked up per line) */
	t0 = L->time;
	d = duration(L, &interval);
	t1 = t0 + d;
	if (t0 >= s - TIME_EPS && t1 <= e + TIME_EPS)
		return 1;
	if (d <= 0)
		return 0;
	lo = t0 > s ? t0 : s;
	hi = t1 < e ? t1 : e;
	/* an event starting inside the range is kept (inclusive ends), even with nothing left */
	if (hi <= lo && !(t0 >= s - TIME_EPS && t0 <= e + TIME_EPS))
		return 0;
	*scale = hi > lo ? (hi - lo) / d : 0;
	/*
	 * An interval's weight is its duration, less what an earlier filter
	 * cut off: keep the overlap, never more than the weight left, so a
	 * second evtfilter with the same range changes nothing.
	 */
	if (interval && L->weight > 0)
		*scale = hi - lo >= L->weight ? 1 : hi > lo ? (hi - lo) / L->weight : 0;
	return 1;
}

/* frame patterns through lib/stacks (cached per distinct stack) */
static int
frames_selected(struct stk *S, const struct line *L, int *why)
{
	char buf[1024];
	uint32_t prefix[2];
	int k;
	size_t rn = 0;
	const char *routine, *stack;
	struct evt_span sp;
	size_t slen;
	char *joined = NULL;
	uint32_t leaf;
	const struct stk_stats *st;
	int64_t exc0, inc0;

	if (S == NULL)
		return 1;
	sp = evt_cols_stack(&L->c);
	stack = sp.p;
	slen = sp.n;
	routine = evt_cols_attr(&L->c, "routine", &rn);
	if (slen == 0 && routine == NULL)
		return 1;
	{
		const struct evt_span *proc = &L->c.col[EVT_PROCESS];
		const struct evt_span *pid = &L->c.col[EVT_PID], *tid = &L->c.col[EVT_TID];
		size_t pl = proc->n;

		if (pl > 4 && strncasecmp(proc->p + pl - 4, ".exe", 4) == 0)
			pl -= 4;
		if (pl > 900)
			pl = 900;
		k = snprintf(buf, sizeof buf, "Process64 %.*s (%.*s)", (int)pl, proc->p,
		    (int)(pid->n > 30 ? 30 : pid->n), pid->p);
		prefix[0] = stk_intern(S, buf, (size_t)k);
		k = snprintf(buf, sizeof buf, "Thread (%.*s)",
		    (int)(tid->n > 30 ? 30 : tid->n), tid->p);
		prefix[1] = stk_intern(S, buf, (size_t)k);
	}
	if (routine != NULL && rn > 0) {
		joined = xmalloc(slen + rn + 2);
		memcpy(joined, stack, slen);
		if (slen)
			joined[slen++] = ';';
		memcpy(joined + slen, routine, rn);
		slen += rn;
		stack = joined;
	}
	st = stk_get_stats(S);
	exc0 = st->excluded_events;
	inc0 = st->notincluded_events;
	leaf = stk_add(S, prefix, 2, stack, slen, 0, 0, 1, NAN, 0);
	free(joined);
	if (leaf != STK_NONE)
		return 1;
	*why = st->excluded_events > exc0 ? R_EXCLUDE : st->notincluded_events > inc0 ?
	    R_INCLUDE : R_EXCLUDE;
	return 0;
}

static void
write_weight(struct outbuf *ob, const struct line *L, double w)
{
	char num[64];
	int n = evt_format_weight(num, w);
	const char *line = L->c.line, *end = line + L->c.len;
	const char *wend = L->c.col[EVT_WEIGHT].p + L->c.col[EVT_WEIGHT].n;

	ob_write(ob, line, (size_t)(L->c.col[EVT_WEIGHT].p - line));
	ob_write(ob, num, (size_t)n);
	ob_write(ob, wend, (size_t)(end - wend));
	ob_putc(ob, '\n');
}

/* ------------------------------------------------------------------ */
/* process of interest (SaveScenarioCPUStacks' heuristics)             */

struct proc {
	long pid;
	char *name;
	double cpu;		/* Sample weight, ms */
	double start, end;	/* ProcessStart / ProcessEnd times; NAN if unseen */
	long order;		/* first appearance */
};

struct procs {
	struct proc *p;
	int n;
	double first, last, duration;
};

static struct proc *
proc_get(struct procs *ps, long pid, const char *name, size_t nlen)
{
	int i;

	for (i = ps->n - 1; i >= 0; i--)	/* the newest process with that pid */
		if (ps->p[i].pid == pid)
			return &ps->p[i];
	ps->p = xrealloc(ps->p, (size_t)(ps->n + 1) * sizeof *ps->p);
	ps->p[ps->n].pid = pid;
	ps->p[ps->n].name = xstrndup(name, nlen);
	ps->p[ps->n].cpu = 0;
	ps->p[ps->n].start = ps->p[ps->n].end = NAN;
	ps->p[ps->n].order = ps->n;
	return &ps->p[ps->n++];
}

static void
poi_scan(struct linereader *lr, struct procs *ps)
{
	char *s;
	size_t len;
	struct line L;
	const struct evt_span *proc;
	const char *why;

	ps->first = INFINITY;
	ps->last = -INFINITY;
	ps->duration = NAN;
	while ((s = lr_next(lr, &len)) != NULL) {
		enum evt_linetype lt = evt_classify(s, len);

		if (lt == EVT_HEADER) {
			struct evt_header h;
			const char *d;

			if (evt_parse_header(s, len, &h, &why) == 0 &&
			    (d = evt_header_get(&h, "duration_ms")) != NULL)
				evt_parse_decimal(d, &ps->duration);
			continue;
		}
		if (lt != EVT_EVENT || parse_line(s, len, &L, &why) < 0)
			continue;
		if (L.time < ps->first)
			ps->first = L.time;
		if (L.time > ps->last)
			ps->last = L.time;
		if (L.pid <= 0)
			continue;
		proc = &L.c.col[EVT_PROCESS];
		if (kind_is(&L, "Sample")) {
			proc_get(ps, L.pid, proc->p, proc->n)->cpu += L.weight;
		} else if (kind_is(&L, "ProcessStart")) {
			struct proc *p;

			/* a new process with a reused pid is a new entry */
			p = proc_get(ps, L.pid, proc->p, proc->n);
			if (!isnan(p->start) || !isnan(p->end) || p->cpu > 0) {
				ps->p = xrealloc(ps->p, (size_t)(ps->n + 1) * sizeof *ps->p);
				p = &ps->p[ps->n];
				p->pid = L.pid;
				p->name = xstrndup(proc->p, proc->n);
				p->cpu = 0;
				p->end = NAN;
				p->order = ps->n++;
			}
			p->start = L.time;
		} else if (kind_is(&L, "ProcessEnd")) {
			proc_get(ps, L.pid, proc->p, proc->n)->end = L.time;
		}
	}
	if (isnan(ps->duration))
		ps->duration = ps->last > ps->first ? ps->last - (ps->first < 0 ? ps->first : 0) : 0;
}

static int
choose_poi(struct opts *o, struct procs *ps, const char *method)
{
	int i, best = -1;

	if (strcmp(method, "most-cpu") == 0) {
		for (i = 0; i < ps->n; i++) {
			struct proc *p = &ps->p[i];

			if (strcasecmp(p->name, "Idle") == 0 || p->cpu <= 0)
				continue;
			if (best < 0 || p->cpu > ps->p[best].cpu ||
			    (p->cpu == ps->p[best].cpu && p->pid < ps->p[best].pid))
				best = i;
		}
		if (best >= 0) {
			double total = 0;

			for (i = 0; i < ps->n; i++)
				if (strcasecmp(ps->p[i].name, "Idle") != 0)
					total += ps->p[i].cpu;
			cli_warn("process of interest (most CPU): %s (pid %ld), %.3f ms of %.3f ms CPU "
			    "outside Idle", ps->p[best].name, ps->p[best].pid, ps->p[best].cpu, total);
		}
	} else {
		/* first process that started after the trace began and lived >= half of it */
		double half = ps->duration / 2, end_of_trace = ps->duration;

		for (i = 0; i < ps->n; i++) {
			struct proc *p = &ps->p[i];
			double life;

			if (isnan(p->start) || p->start <= 0)
				continue;
			life = (isnan(p->end) ? end_of_trace : p->end) - p->start;
			if (life < half)
				continue;
			if (best < 0 || p->start < ps->p[best].start)
				best = i;
		}
		if (best >= 0) {
			struct proc *p = &ps->p[best];

			cli_warn("process of interest (first to start after the trace began and run at "
			    "least half of it): %s (pid %ld), started %.3f ms, ran %.3f of %.3f ms",
			    p->name, p->pid, p->start,
			    (isnan(p->end) ? end_of_trace : p->end) - p->start, ps->duration);
		}
	}
	if (best < 0)
		return -1;
	o->poi_pid = ps->p[best].pid;
	o->poi_name = xstrdup(ps->p[best].name);
	return 0;
}

/* Did any process outside Idle have CPU samples? */
static int
any_samples(const struct procs *ps)
{
	int i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].cpu > 0 && strcasecmp(ps->p[i].name, "Idle") != 0)
			return 1;
	return 0;
}

/* stdin is read twice for --poi: spool it to a temporary file */
static int
spool_stdin(void)
{
	FILE *f = tmpfile();
	char buf[1 << 16];
	ssize_t n;

	if (f == NULL)
		cli_fatal("cannot create a temporary file: %s", strerror(errno));
	while ((n = read(STDIN_FILENO, buf, sizeof buf)) > 0)
		if (fwrite(buf, 1, (size_t)n, f) != (size_t)n)
			cli_fatal("temporary file: %s", strerror(errno));
	if (n < 0)
		cli_fatal("<stdin>: %s", strerror(errno));
	fflush(f);
	return dup(fileno(f));	/* the FILE is leaked on purpose: the descriptor lives on */
}

/* ------------------------------------------------------------------ */

static void
usage_to(FILE *fp)
{
	fprintf(fp, "usage: evtfilter [-p PROC] [-t TID] [-C CPUS] [-k KINDS] [--start MS] "
	    "[--end MS] [-i PATS] [-x PATS] [--poi=METHOD] [--keep-idle] [-o FILE] [FILE]\n");
}

static void
usage(void)
{
	usage_to(stderr);
}

static void
help(void)
{
	usage_to(stdout);
	printf("Selects events of an evt stream.\n\n"
	    "  -p, --process=P     process name (app or app.exe) or pid; repeat or use commas\n"
	    "  -t, --thread=TID    thread id(s)\n"
	    "  -C, --cpu=LIST      CPUs, e.g. 0,2,4-6\n"
	    "  -k, --kind=LIST     event kinds (Sample, DPC, ...; cpu, dpc, isr, dpcisr)\n"
	    "      --start=MS      keep events from MS (inclusive; weights prorated at the edge)\n"
	    "      --end=MS        keep events up to MS (inclusive)\n"
	    "  -i, --include=PATS  keep events whose frames match every entry (PerfView IncPats)\n"
	    "  -x, --exclude=PATS  drop events with a frame matching any entry (ExcPats)\n"
	    "      --poi=METHOD    process of interest: most-cpu, first-long (started after the\n"
	    "                      trace began and ran >= half of it), auto (first-long, else most-cpu)\n"
	    "      --keep-idle     keep Idle-process samples (removed by default)\n"
	    "  -o, --output=FILE   output file\n"
	    "  -h, --help, --version\n");
	exit(0);
}

/* "#removed" for what a rule took out: counted, never silently dropped. */
static void
write_removed(struct outbuf *ob, const char *reason, long long events, const char *weight_ms)
{
	char ev[24];

	snprintf(ev, sizeof ev, "%lld", events);
	const struct evtw_pair kv[] = { { "by", "evtfilter" }, { "reason", reason },
	    { "events", ev }, { "weight_ms", weight_ms } };
	evtw_meta(ob, "removed", kv, sizeof kv / sizeof kv[0]);
}

/*
 * The header note names the selection, not where the output went: the
 * options (getopt has moved them before optind) without -o/--output.
 */
static void
write_header(struct outbuf *ob, const char *s, size_t len, int nopt, char **argv)
{
	struct evtw_line l = { 0 };
	char *note;
	size_t n = 16;
	int i;

	for (i = 1; i < nopt; i++)
		n += strlen(argv[i]) + 1;
	note = xmalloc(n);
	strcpy(note, "evtfilter");
	for (i = 1; i < nopt; i++) {
		if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
			i++;
			continue;
		}
		if (strncmp(argv[i], "-o", 2) == 0 || strncmp(argv[i], "--output=", 9) == 0)
			continue;
		strcat(note, " ");
		strcat(note, argv[i]);
	}
	evtw_mem(&l, s, len);
	evtw_str(&l, "\tfiltered=");
	evtw_esc(&l, note, strlen(note), 0);
	evtw_ch(&l, '\n');
	ob_write(ob, l.b, l.n);
	evtw_free(&l);
	free(note);
}

int
main(int argc, char **argv)
{
	enum { O_START = 0x100, O_END, O_POI, O_KEEPIDLE };
	static const struct option longopts[] = {
		{ "process", required_argument, NULL, 'p' },
		{ "thread", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "kind", required_argument, NULL, 'k' },
		{ "start", required_argument, NULL, O_START },
		{ "end", required_argument, NULL, O_END },
		{ "include", required_argument, NULL, 'i' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "poi", required_argument, NULL, O_POI },
		{ "keep-idle", no_argument, NULL, O_KEEPIDLE },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o;
	struct outbuf ob;
	struct linereader *lr;
	struct removed rm[R_N];
	struct stk *S = NULL;
	const char *out = NULL, *in = "-", *why;
	char *s;
	size_t len;
	long bad = 0;
	int c, fd = -1, seen_header = 0, nopt;

	cli_init(argv[0]);
	memset(&o, 0, sizeof o);
	memset(rm, 0, sizeof rm);
	o.poi_pid = -1;
	while ((c = getopt_long(argc, argv, "p:t:C:k:i:x:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': strlist_add(&o.procs, optarg); break;
		case 't': strlist_add(&o.tids, optarg); break;
		case 'C': strlist_add(&o.cpus, optarg); break;
		case 'k': strlist_add(&o.kinds, optarg); break;
		case O_START:
			if (evt_parse_decimal(optarg, &o.start) < 0)
				cli_usage_error("--start: '%s' is not a number of ms", optarg);
			o.has_start = 1;
			break;
		case O_END:
			if (evt_parse_decimal(optarg, &o.end) < 0)
				cli_usage_error("--end: '%s' is not a number of ms", optarg);
			o.has_end = 1;
			break;
		case 'i': stk_append(&o.include, optarg); break;
		case 'x': stk_append(&o.exclude, optarg); break;
		case O_POI:
			if (strcmp(optarg, "most-cpu") && strcmp(optarg, "first-long") &&
			    strcmp(optarg, "auto"))
				cli_usage_error("--poi: '%s' is not most-cpu, first-long or auto", optarg);
			o.poi = optarg;
			break;
		case O_KEEPIDLE: o.keep_idle = 1; break;
		case 'o': out = optarg; break;
		case 'h': help(); break;
		case 'V': cli_version(); break;
		default: usage(); return EXIT_FATAL;
		}
	}
	nopt = optind;
	if (optind + 1 < argc)
		cli_usage_error("one input at a time");
	if (optind < argc)
		in = argv[optind];
	if (o.has_start && o.has_end && o.end < o.start)
		cli_usage_error("--end %g is before --start %g", o.end, o.start);
	if (o.include || o.exclude) {
		struct stk_config cfg;

		stk_config_init(&cfg);
		cfg.include = o.include;
		cfg.exclude = o.exclude;
		S = stk_new(&cfg);
	}
	if (o.poi != NULL) {
		struct procs ps = { NULL, 0, 0, 0, 0 };
		int i;

		if (strcmp(in, "-") == 0) {
			fd = spool_stdin();
			lseek(fd, 0, SEEK_SET);
			lr = lr_fdopen(dup(fd), "<stdin>");
		} else {
			lr = lr_open(in);
		}
		if (lr == NULL)
			cli_fatal("%s: %s", in, strerror(errno));
		lr_set_quiet(lr);	/* the second pass reports its bad lines */
		poi_scan(lr, &ps);
		lr_close(lr);
		if (choose_poi(&o, &ps, strcmp(o.poi, "auto") == 0 ? "first-long" : o.poi) < 0 &&
		    (strcmp(o.poi, "auto") != 0 || choose_poi(&o, &ps, "most-cpu") < 0)) {
			/* a trace without CPU samples has no CPU stacks to select: that is a result */
			if (any_samples(&ps))
				cli_fatal("%s: process of interest could not be located (--poi=%s)",
				    strcmp(in, "-") == 0 ? "<stdin>" : in, o.poi);
			cli_warn("%s: no CPU samples outside Idle, so no process of interest "
			    "(--poi=%s): every process kept", strcmp(in, "-") == 0 ? "<stdin>" : in,
			    o.poi);
		}
		for (i = 0; i < ps.n; i++)
			free(ps.p[i].name);
		free(ps.p);
	}
	if (fd >= 0) {
		lseek(fd, 0, SEEK_SET);
		lr = lr_fdopen(fd, "<stdin>");
	} else {
		lr = lr_open(in);
	}
	if (lr == NULL)
		cli_fatal("%s: %s", in, strerror(errno));
	ob_open(&ob, out);
	while ((s = lr_next(lr, &len)) != NULL) {
		enum evt_linetype lt = evt_classify(s, len);
		struct line L;
		double scale = 1;
		int r = -1;

		if (lt == EVT_BLANK)
			continue;
		if (lt == EVT_HEADER) {
			struct evt_header h;
			char *copy = xstrndup(s, len);

			if (evt_parse_header(copy, len, &h, &why) < 0)
				cli_fatal("%s:%lu: %s", lr_name(lr), lr_lineno(lr), why);
			free(copy);
			write_header(&ob, s, len, nopt, argv);
			seen_header = 1;
			continue;
		}
		if (!seen_header)
			cli_fatal("%s:%lu: not an evt stream (the first line must be the #evt header)",
			    lr_name(lr), lr_lineno(lr));
		if (lt == EVT_META) {
			ob_write(&ob, s, len);
			ob_putc(&ob, '\n');
			continue;
		}
		if (parse_line(s, len, &L, &why) < 0) {
			if (bad < 10)
				cli_warn("%s:%lu: %s", lr_name(lr), lr_lineno(lr), why);
			bad++;
			continue;
		}
		if (!kind_selected(&o, &L))
			r = R_KIND;
		else if (!o.keep_idle && is_idle(&L))
			r = R_IDLE;
		else if (!proc_selected(&o, &L))
			r = R_PROCESS;
		else if (!num_selected(&o.tids, L.tid))
			r = R_THREAD;
		else if (!num_selected(&o.cpus, L.cpu))
			r = R_CPU;
		else if (!time_selected(&o, &L, &scale))
			r = R_TIME;
		else if (!frames_selected(S, &L, &r))
			;
		else
			r = -1;
		if (r >= 0) {
			rm[r].events++;
			rm[r].weight += L.weight;
			continue;
		}
		if (scale < 1) {
			rm[R_PRORATE].events++;
			rm[R_PRORATE].weight += L.weight * (1 - scale);
			write_weight(&ob, &L, L.weight * scale);
		} else {
			ob_write(&ob, s, len);
			ob_putc(&ob, '\n');
		}
		lr_progress(lr);
	}
	bad += (long)lr_finish(lr);
	if (!seen_header)
		cli_fatal("%s: empty input, not an evt stream", lr_name(lr));
	{
		int i;
		char w[64];

		for (i = 0; i < R_N; i++) {
			if (rm[i].events == 0)
				continue;
			evt_format_weight(w, rm[i].weight);
			write_removed(&ob, reason_name[i], rm[i].events, w);
			if (i == R_IDLE)
				cli_warn("removed %lld Idle samples, %s ms (--keep-idle keeps them)",
				    rm[i].events, w);
			else if (i == R_PRORATE)
				cli_warn("prorated %lld events that straddle the time range, -%s ms",
				    rm[i].events, w);
			else
				cli_warn("removed %lld events, %s ms, by %s", rm[i].events, w,
				    reason_name[i]);
		}
		evtw_skipped(&ob, "malformed line", (uint64_t)bad, "evtfilter");
	}
	ob_close(&ob);
	lr_close(lr);
	if (bad > 10)
		cli_warn("%s: %ld malformed lines skipped", in, bad);
	if (S != NULL && stk_get_stats(S)->deep_stacks > 0)
		cli_warn("%s: %lld stacks deeper than %d frames: --include/--exclude saw them cut, "
		    "as stackfold will (the events are written whole)", in,
		    (long long)stk_get_stats(S)->deep_stacks, EVT_MAX_STACK_FRAMES);
	stk_free(S);
	free(o.include);
	free(o.exclude);
	free(o.poi_name);
	return bad ? EXIT_PARTIAL : 0;
}
