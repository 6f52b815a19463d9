/*
 * health.c - the findings of render health (see health.h), from one
 * pass over an evt stream.  Memory: a few counters per CPU and per
 * check, never per event.
 *
 * The seed knowledge, and where each number comes from:
 *   lost events    the header's events_lost against the events read:
 *                  ETW drops events when its buffers are full, and
 *                  every count and CPU total is low by that share.
 *   lost buffers   buffers_lost, and the "Lost" lines per CPU: a lost
 *                  buffer is a stretch of one CPU with nothing in it.
 *   rundown        ProcessDCStart, ThreadDCStart, ImageDCStart (xperf's
 *                  PROC_THREAD and LOADER rundown).  Without them the
 *                  processes of older events show as "?" and the frames
 *                  of their stacks as "?!?" (counted here): a user-mode
 *                  session alone, out of its .diagsession or without
 *                  its kernel logger, looks like this.
 *   samples        fewer than about 1,000 samples make any view noise
 *                  (PerfView warns below that).  A row holding a share p
 *                  of N samples is known to about +-1.96 sqrt(p(1-p)/N)
 *                  (the binomial standard error, 95%); the finding
 *                  quotes it for a row of 10%.
 *   PROFILE and CSWITCH stacks in one trace: both are stack walks of the
 *                  same threads, and views that sum every stacked event
 *                  (Any Stacks, -k Sample,CSwitch) count each switch as
 *                  if it were CPU; the switches' kernel frames swell the
 *                  kernel's share.
 *   clock          systime ticks at 15.6 ms: shorter intervals are
 *                  rounded to it.
 *   CPU coverage   in a sampled trace every CPU, idle or not, has a
 *                  sample each interval: a stretch of 100 intervals
 *                  without one (or a CPU with none) is data lost, not
 *                  quiet.
 *   DPC/ISR edges  a DPC or ISR logged with a start before the trace
 *                  began, or ending at its very last event, was cut by
 *                  the trace's edges: its duration is not all inside.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/escape.h"
#include "base/strbuf.h"
#include "evt/evt.h"
#include "report/health.h"
#include "report/numfmt.h"
#include "report/tables.h"

#define MAX_CPUS 4096		/* more is a damaged line, counted as such */
#define GAP_INTERVALS 100	/* a CPU without samples this long lost data */

struct cpu {
	uint64_t samples;
	double first, last;	/* sample times */
	double gap, gap_at;	/* longest stretch without a sample, and its start */
	uint64_t lost_events, lost_buffers;
};

struct health {
	/* header */
	int have_header;
	char *source, *clock;
	uint64_t events_lost, buffers_lost, clock_freq;
	double interval_ms, duration_ms;
	long cpus, files;
	/* events */
	uint64_t events, lost_lines;
	double first_ms, last_ms;
	int have_time;
	uint64_t unknown_proc;			/* events whose process is "?" */
	uint64_t proc_dc, thread_dc, image_dc, proc_start, image_load;
	uint64_t kernel_events;			/* kinds only the kernel logger writes */
	uint64_t frames, unknown_frames;
	uint64_t sample_lines, samples, sample_stacks;
	uint64_t cswitch, cswitch_stacks;
	uint64_t dpcs, dpc_early;
	double dpc_early_ms, dpc_max_end;
	uint64_t dpc_at_max_end;
	double dpc_at_max_end_ms;
	struct cpu *cpu;
	size_t ncpu;
	uint64_t bad;
	/* findings */
	struct health_finding *f;
	size_t nf, capf;
	int done;
};

enum health_sev { HS_OK, HS_NOTE, HS_WARN, HS_BAD };

struct health_finding {
	enum health_sev sev;
	const char *what;	/* a short name: "lost-events", "process-rundown" ... */
	char *value;		/* the number, with its unit or share */
	char *skews;		/* what it skews, and why */
};

static const char *
health_sev_name(enum health_sev s)
{
	static const char *const names[] = { "ok", "note", "warn", "bad" };

	return names[s];
}

struct health *
health_new(void)
{
	struct health *h = xcalloc(1, sizeof *h);

	h->interval_ms = 1;
	return h;
}

static const char *
header_get(const struct evt_header *hd, const char *key)
{
	return evt_header_get(hd, key);
}

static int
take_header(void *ctx, char *line, size_t len, const char **why)
{
	struct health *h = ctx;
	struct evt_header hd;
	const char *v;

	if (evt_parse_header(line, len, &hd, why) < 0)
		return -1;
	h->have_header = 1;
	if ((v = header_get(&hd, "source")) != NULL) {
		free(h->source);
		h->source = xstrdup(v);
	}
	if ((v = header_get(&hd, "clock")) != NULL) {
		free(h->clock);
		h->clock = xstrdup(v);
	}
	if ((v = header_get(&hd, "events_lost")) != NULL)
		h->events_lost += strtoull(v, NULL, 10);
	if ((v = header_get(&hd, "buffers_lost")) != NULL)
		h->buffers_lost += strtoull(v, NULL, 10);
	if ((v = header_get(&hd, "clock_freq")) != NULL)
		h->clock_freq = strtoull(v, NULL, 10);
	if ((v = header_get(&hd, "sample_interval_ms")) != NULL && atof(v) > 0)
		h->interval_ms = atof(v);
	if ((v = header_get(&hd, "duration_ms")) != NULL)
		h->duration_ms = atof(v);
	if ((v = header_get(&hd, "cpus")) != NULL)
		h->cpus = atol(v);
	if ((v = header_get(&hd, "files")) != NULL)
		h->files = atol(v);
	return 0;
}

static struct cpu *
cpu_at(struct health *h, int cpu)
{
	if (cpu < 0 || cpu >= MAX_CPUS)
		return NULL;
	if ((size_t)cpu >= h->ncpu) {
		size_t n = (size_t)cpu + 1;

		h->cpu = xrealloc(h->cpu, n * sizeof *h->cpu);
		memset(h->cpu + h->ncpu, 0, (n - h->ncpu) * sizeof *h->cpu);
		h->ncpu = n;
	}
	return &h->cpu[cpu];
}

static int
is_kind(const struct evt_cols *c, const char *s)
{
	size_t n = strlen(s);

	return c->col[EVT_KIND].n == n && memcmp(c->col[EVT_KIND].p, s, n) == 0;
}

/* Frames in a stack, and those in no known image ("?!?", or "?!0x..." with --addrs). */
static void
count_frames(struct health *h, struct evt_span s)
{
	const char *p = s.p, *end = s.p + s.n;

	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		size_t n = semi ? (size_t)(semi - p) : (size_t)(end - p);

		h->frames++;
		if (n >= 2 && p[0] == '?' && p[1] == '!')
			h->unknown_frames++;
		p += n + 1;
	}
}

static void
take_sample(struct health *h, const struct evt_cols *c, double ms, int cpu,
    struct evt_span stack)
{
	size_t n;
	const char *v = evt_cols_attr(c, "count", &n);
	uint64_t count = v ? strtoull(v, NULL, 10) : 1;
	struct cpu *k = cpu_at(h, cpu);

	h->sample_lines++;
	h->samples += count;
	v = evt_cols_attr(c, "nostack", &n);
	if (stack.n > 0 && !(v && n == 1 && v[0] == '1'))
		h->sample_stacks++;
	if (k == NULL)
		return;
	if (k->samples > 0 && ms - k->last > k->gap) {
		k->gap = ms - k->last;
		k->gap_at = k->last;
	}
	if (k->samples == 0)
		k->first = ms;
	k->last = ms;
	k->samples += count;
}

static void
take_dpc(struct health *h, const struct evt_cols *c, double ms)
{
	size_t n;
	const char *v = evt_cols_attr(c, "end_ms", &n);
	double end = v ? atof(v) : ms;

	h->dpcs++;
	if (ms < 0) {
		h->dpc_early++;
		h->dpc_early_ms += -ms;
	}
	if (h->dpc_at_max_end == 0 || end > h->dpc_max_end) {
		h->dpc_max_end = end;
		h->dpc_at_max_end = 0;
		h->dpc_at_max_end_ms = 0;
	}
	if (end == h->dpc_max_end) {
		h->dpc_at_max_end++;
		h->dpc_at_max_end_ms += end - ms;
	}
}

static void
take_lost(struct health *h, const struct evt_cols *c, int cpu)
{
	size_t n;
	const char *e = evt_cols_attr(c, "events", &n), *b = evt_cols_attr(c, "buffers", &n);
	const char *src = evt_cols_attr(c, "source", &n);
	struct cpu *k = cpu_at(h, cpu);

	h->lost_lines++;
	/* the header's count is in the header already; per-buffer lines add to a CPU */
	if (k == NULL || (src && n == 6 && memcmp(src, "header", 6) == 0))
		return;
	k->lost_events += e ? strtoull(e, NULL, 10) : 0;
	k->lost_buffers += b ? strtoull(b, NULL, 10) : 0;
}

static int
starts(const struct evt_cols *c, const char *s)
{
	size_t n = strlen(s);

	return c->col[EVT_KIND].n > n && memcmp(c->col[EVT_KIND].p, s, n) == 0;
}

static void
take_event(struct health *h, const struct evt_cols *c, double ms, int cpu)
{
	struct evt_span stack;

	if (is_kind(c, "Lost")) {
		take_lost(h, c, cpu);
		return;
	}
	h->events++;
	if (!h->have_time || ms < h->first_ms)
		h->first_ms = ms;
	if (!h->have_time || ms > h->last_ms)
		h->last_ms = ms;
	h->have_time = 1;
	if (c->col[EVT_PROCESS].n == 1 && c->col[EVT_PROCESS].p[0] == '?')
		h->unknown_proc++;
	if (is_kind(c, "ProcessDCStart"))
		h->proc_dc++;
	else if (is_kind(c, "ThreadDCStart"))
		h->thread_dc++;
	else if (is_kind(c, "ImageDCStart"))
		h->image_dc++;
	else if (is_kind(c, "ProcessStart"))
		h->proc_start++;
	else if (is_kind(c, "ImageLoad"))
		h->image_load++;
	if (starts(c, "Process") || starts(c, "Thread") || starts(c, "Image") ||
	    is_kind(c, "Sample") || is_kind(c, "CSwitch"))
		h->kernel_events++;
	stack = evt_cols_stack(c);
	if (stack.n > 0)
		count_frames(h, stack);
	if (is_kind(c, "Sample"))
		take_sample(h, c, ms, cpu, stack);
	else if (is_kind(c, "CSwitch")) {
		h->cswitch++;
		if (stack.n > 0)
			h->cswitch_stacks++;
	} else if (is_kind(c, "DPC") || is_kind(c, "ThreadedDPC") || is_kind(c, "TimerDPC") ||
	    is_kind(c, "ISR"))
		take_dpc(h, c, ms);
}

/* An event line for evt_each(): the columns health needs, then take_event(). */
static int
take_line(void *ctx, struct evt_cols *c, const char **why)
{
	double ms;
	int cpu;

	if (evt_cols_time(c, &ms, why) < 0 || evt_cols_cpu(c, &cpu, why) < 0)
		return -1;
	take_event(ctx, c, ms, cpu);
	return 0;
}

int
health_read(struct health *h, const char *path)
{
	const struct evt_handlers eh = { .ctx = h, .header = take_header, .event = take_line };
	uint64_t bad;
	int r = evt_each(path, &eh, &bad);

	h->bad += bad;
	return r;
}

/* ---------- findings ---------- */

static void
add(struct health *h, enum health_sev sev, const char *what, char *value, char *skews)
{
	if (h->nf == h->capf) {
		h->capf = h->capf ? h->capf * 2 : 16;
		h->f = xrealloc(h->f, h->capf * sizeof *h->f);
	}
	h->f[h->nf].sev = sev;
	h->f[h->nf].what = what;
	h->f[h->nf].value = value;
	h->f[h->nf].skews = skews;
	h->nf++;
}

static char *
str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
str(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb);
}

static double
pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void
check_lost(struct health *h)
{
	uint64_t all = h->events + h->events_lost, lb = 0;
	double p = pct(h->events_lost, all);
	struct strbuf cpus = STRBUF_INIT;

	if (h->events_lost == 0)
		add(h, HS_OK, "lost-events", str("0"), str("no events lost"));
	else
		add(h, p >= 1 ? HS_BAD : HS_WARN, "lost-events",
		    str("%" PRIu64 " of %" PRIu64 " (%.1f%%)", h->events_lost, all, p),
		    str("trace lost %.1f%% of its events: every count, CPU and duration total is low "
		    "by up to that share, and stacks and intervals may miss their ends", p));
	for (size_t i = 0; i < h->ncpu; i++)
		if (h->cpu[i].lost_buffers || h->cpu[i].lost_events) {
			lb += h->cpu[i].lost_buffers;
			strbuf_addf(&cpus, "%scpu %zu: %" PRIu64, cpus.len ? ", " : "", i,
			    h->cpu[i].lost_buffers);
		}
	if (h->buffers_lost == 0 && lb == 0)
		add(h, HS_OK, "lost-buffers", str("0"), str("no buffers lost"));
	else
		add(h, HS_BAD, "lost-buffers", str("%" PRIu64 "%s%s%s",
		    h->buffers_lost > lb ? h->buffers_lost : lb, cpus.len ? " (" : "",
		    strbuf_str(&cpus), cpus.len ? ")" : ""),
		    str("each lost buffer is a stretch of one CPU with no events at all: CPU and "
		    "DPC/ISR totals of those CPUs are low, intervals across the hole are wrong"));
	strbuf_release(&cpus);
}

static void
check_rundown(struct health *h)
{
	double pq = pct(h->unknown_proc, h->events), pf = pct(h->unknown_frames, h->frames);
	int user_only = h->kernel_events == 0;
	const char *alone = user_only ? "; a user-mode session alone: convert it with its kernel "
	    "session (the whole .diagsession, or the merged .etl)" : "";

	if (h->proc_dc)
		add(h, pq >= 10 ? HS_WARN : HS_OK, "process-rundown",
		    str("%" PRIu64 " processes; %" PRIu64 " events (%.1f%%) with process ?",
		    h->proc_dc, h->unknown_proc, pq),
		    str("processes running at the start are named"));
	else
		add(h, pq >= 10 ? HS_BAD : h->unknown_proc ? HS_WARN : HS_NOTE, "process-rundown",
		    str("missing (no ProcessDCStart); %" PRIu64 " events (%.1f%%) with process ?",
		    h->unknown_proc, pq),
		    str("PROC_THREAD rundown missing: processes older than the trace show as ?, so "
		    "per-process views and filters by name miss them%s", alone));
	if (h->thread_dc)
		add(h, HS_OK, "thread-rundown", str("%" PRIu64 " threads", h->thread_dc),
		    str("threads running at the start are known"));
	else
		add(h, HS_NOTE, "thread-rundown", str("missing (no ThreadDCStart)"),
		    str("threads older than the trace have no start address or name: thread views "
		    "show them by id only"));
	if (h->image_dc)
		add(h, pf >= 10 ? HS_WARN : HS_OK, "image-rundown",
		    str("%" PRIu64 " images; %" PRIu64 " of %" PRIu64 " frames (%.1f%%) ?!?",
		    h->image_dc, h->unknown_frames, h->frames, pf),
		    str("frames in images loaded before the trace are named"));
	else
		add(h, h->frames == 0 ? HS_NOTE : pf >= 10 ? HS_BAD : HS_WARN, "image-rundown",
		    str("missing (no ImageDCStart); %" PRIu64 " of %" PRIu64 " frames (%.1f%%) ?!?",
		    h->unknown_frames, h->frames, pf),
		    str("LOADER rundown missing: frames in images loaded before the trace show as "
		    "?!?, so flame graphs and by-name views cannot name that time%s", alone));
}

static void
check_samples(struct health *h)
{
	double n = (double)h->samples;
	double err = n > 0 ? 196.0 * sqrt(0.1 * 0.9 / n) : 0;

	if (h->samples == 0) {
		add(h, HS_NOTE, "samples", str("0"),
		    str("no CPU samples (PROFILE not enabled): no CPU view of this trace"));
		return;
	}
	add(h, h->samples < 1000 ? HS_WARN : HS_OK, "samples",
	    str("%" PRIu64 " (%" PRIu64 " with stacks); a 10%% row is +-%.2f points", h->samples,
	    h->sample_stacks, err),
	    h->samples < 1000 ? str("fewer than about 1,000 samples (PerfView's warning): a view's "
	    "shares are mostly sampling noise; record longer or sample faster") :
	    str("sampling error from the count (95%%, binomial): smaller rows are noisier"));
}

static void
check_stacks(struct health *h)
{
	if (h->sample_stacks && h->cswitch_stacks)
		add(h, HS_WARN, "profile-and-cswitch-stacks",
		    str("%" PRIu64 " Sample stacks, %" PRIu64 " CSwitch stacks", h->sample_stacks,
		    h->cswitch_stacks),
		    str("both PROFILE and CSWITCH were stack-walked: views that sum every stacked event "
		    "count each switch as CPU and swell the kernel's share; CPU views must take Sample "
		    "weights only (render, stackfold -k Sample)"));
	else if (h->cswitch)
		add(h, HS_OK, "profile-and-cswitch-stacks",
		    str("%" PRIu64 " CSwitch events, %" PRIu64 " with stacks", h->cswitch,
		    h->cswitch_stacks), str("switch stacks do not mix with CPU samples"));
}

static void
check_clock(struct health *h)
{
	const char *clk = h->clock ? h->clock : "?";

	if (strcmp(clk, "systime") == 0)
		add(h, HS_WARN, "clock", str("systime, %" PRIu64 " Hz", h->clock_freq),
		    str("system time ticks every 15.6 ms: durations, DPC/ISR times and intervals "
		    "shorter than that are rounded to it"));
	else
		add(h, HS_OK, "clock", str("%s, %" PRIu64 " Hz", clk, h->clock_freq),
		    str("event times are precise to %.0f ns",
		    h->clock_freq ? 1e9 / (double)h->clock_freq : 0));
	add(h, h->interval_ms != 1 ? HS_NOTE : HS_OK, "sample-interval",
	    str("%g ms", h->interval_ms),
	    str("each sample weighs %g ms of CPU", h->interval_ms));
	add(h, HS_OK, "time-span", str("%.3f ms (events %.3f to %.3f ms, %ld CPUs%s)",
	    h->duration_ms, h->first_ms, h->last_ms, h->cpus, h->files > 1 ? ", merged files" : ""),
	    str("what every total covers"));
}

static void
check_cpus(struct health *h)
{
	double first = 0, last = 0, limit = GAP_INTERVALS * h->interval_ms;
	struct strbuf sb = STRBUF_INIT;
	int have = 0;
	long none = 0, gaps = 0;

	if (h->samples == 0)
		return;
	for (size_t i = 0; i < h->ncpu; i++) {
		if (h->cpu[i].samples == 0)
			continue;
		if (!have || h->cpu[i].first < first)
			first = h->cpu[i].first;
		if (!have || h->cpu[i].last > last)
			last = h->cpu[i].last;
		have = 1;
	}
	for (long i = 0; i < (h->cpus > (long)h->ncpu ? h->cpus : (long)h->ncpu); i++) {
		const struct cpu *k = (size_t)i < h->ncpu ? &h->cpu[i] : NULL;
		double gap, at;

		if (k == NULL || k->samples == 0) {
			none++;
			strbuf_addf(&sb, "%scpu %ld: no samples", sb.len ? "; " : "", i);
			continue;
		}
		gap = k->gap, at = k->gap_at;
		if (k->first - first > gap)
			gap = k->first - first, at = first;
		if (last - k->last > gap)
			gap = last - k->last, at = k->last;
		if (gap >= limit) {
			gaps++;
			strbuf_addf(&sb, "%scpu %ld: %.1f ms from %.3f ms", sb.len ? "; " : "", i, gap, at);
		}
	}
	if (none == 0 && gaps == 0)
		add(h, HS_OK, "cpu-coverage", str("every CPU sampled, no stretch of %d intervals "
		    "without a sample", GAP_INTERVALS), str("CPU totals cover the whole time"));
	else
		add(h, HS_WARN, "cpu-coverage", str("%s", sb.s),
		    str("a sampled CPU has a sample every interval, idle or not: these stretches lost "
		    "their data, and CPU totals and per-CPU views are low there"));
	strbuf_release(&sb);
}

static void
check_dpc(struct health *h)
{
	int at_end = h->dpc_at_max_end && h->dpc_max_end >= h->last_ms;

	if (h->dpcs == 0)
		return;
	if (h->dpc_early == 0 && !at_end) {
		add(h, HS_OK, "dpc-isr-edges", str("%" PRIu64 " DPC/ISR, none cut", h->dpcs),
		    str("DPC/ISR durations lie inside the trace"));
		return;
	}
	add(h, HS_NOTE, "dpc-isr-edges",
	    str("%" PRIu64 " began before the trace (%.3f ms outside); %" PRIu64 " end at its last "
	    "event", h->dpc_early, h->dpc_early_ms, at_end ? h->dpc_at_max_end : 0),
	    str("DPC/ISR intervals cut by the trace's edges: their durations count time outside "
	    "the trace, and a routine still running at the end was never logged"));
}

/* The findings, worst first (computed once, after the reads). */
static const struct health_finding *
health_findings(struct health *h, size_t *n)
{
	if (!h->done) {
		check_lost(h);
		check_rundown(h);
		check_stacks(h);
		check_samples(h);
		check_cpus(h);
		check_dpc(h);
		check_clock(h);
		/* worst first; equal ones in the order above (a stable sort by index) */
		for (size_t i = 0; i < h->nf; i++)
			for (size_t j = i; j > 0 && h->f[j].sev > h->f[j - 1].sev; j--) {
				struct health_finding t = h->f[j];

				h->f[j] = h->f[j - 1];
				h->f[j - 1] = t;
			}
		h->done = 1;
	}
	*n = h->nf;
	return h->f;
}

void
health_report(struct health *h, int tsv, struct outbuf *ob)
{
	static const int right[] = { 0, 0, 0, 0 };
	size_t n;
	const struct health_finding *f = health_findings(h, &n);
	struct tbl tb;

	if (!tsv) {
		ob_puts(ob, "Trace health");
		if (h->source) {
			ob_puts(ob, " of ");
			evt_unescape(h->source, strlen(h->source));
			text_escape_str(ob, h->source);
		}
		ob_printf(ob, ": %zu checks, worst %s\n\n", n, n ? health_sev_name(f[0].sev) : "ok");
	}
	tbl_init(&tb, 4, right, tsv);
	tbl_cell(&tb, "severity");
	tbl_cell(&tb, "check");
	tbl_cell(&tb, "value");
	tbl_cell(&tb, "skews");
	for (size_t i = 0; i < n; i++) {
		tbl_cell(&tb, health_sev_name(f[i].sev));
		tbl_cell(&tb, f[i].what);
		tbl_cell(&tb, f[i].value);
		tbl_cell(&tb, f[i].skews);
	}
	tbl_write(&tb, ob);
}

void
health_free(struct health *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->nf; i++) {
		free(h->f[i].value);
		free(h->f[i].skews);
	}
	free(h->f);
	free(h->cpu);
	free(h->source);
	free(h->clock);
	free(h);
}
