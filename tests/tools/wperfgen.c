/*
 * wperfgen - test tool: a synthetic .etl with Arm WindowsPerf's ReadGPC
 * events (no public trace has any), with or without the embedded
 * TRACE_EVENT_INFO schemas a WPR merge would add.
 *
 * USAGE:  wperfgen -o OUT.etl [--schema embedded|after|none] [--providers app,driver]
 *                  [--cores N] [--periods N] [--period-ms MS] [--restart-at K]
 *                  [--prototype] [--damaged-schema] [--pointer-size 4|8] [--seed N]
 *                  [--expect FILE] [--expect-pmu FILE]
 *
 * The model: on every core a known number of cycles, retired and
 * speculated instructions and loads per period (seeded, repeatable).
 *   Driver: per period and core, for the fixed cycle counter (GPC 31) and
 *   events 0x08, 0x1B, 0x70 (GPC 0..2), the RUNNING TOTAL since the count
 *   started (--restart-at K starts a new count at period K: totals restart).
 *   App (wperf -t timeline): per period and core, cycle, inst_retired,
 *   inst_spec, ld_spec with their per-period counts and notes.
 *   --prototype adds the driver's abandoned id-5 event (Text AnsiString,
 *   Status UInt32 with a value map, Flags UInt32 with a bitmap), which only
 *   an embedded schema can name.
 * --schema embedded writes the MetaData EventInfo (and EventMapInfo)
 * records first, "after" writes them after the events, "none" omits them.
 * --damaged-schema adds three broken MetaData records (a truncated EventInfo,
 * one whose property array runs past its end, an EventMapInfo with an absurd
 * entry count): a decoder must count and ignore them.
 *
 * OUTPUT: the .etl; --expect: the decoded events as bin/tdhdump prints them,
 *   10.000	WindowsPerf Driver	ReadGPC	Core=0; Event=4294967295; GPCIdx=31; Value=400000123;
 * --expect-pmu: the delta, ratio, total and total_ratio rows `render pmu --tsv` must print
 * (docs/pmu.md), computed from the model, not from the running totals.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "etlwrite.h"
#include "evt/evt.h"
#include "etl/tdhbuild.h"
#include "etl/wperf.h"
#include "xorshift.h"

#define FREQ 10000000ull	/* QPC ticks per second: 100 ns */
#define T0 (100000ull)		/* first burst 10 ms after the header */
#define NEV 4

struct rec {
	uint64_t ts;
	uint64_t seq;
	int cpu;
	uint8_t *b;
	size_t len;
};

static struct rec *recs;
static size_t nrecs, caprecs;
static uint64_t seq;
static int psize = 8;

static const uint32_t drv_event[NEV] = { 0xffffffffu, 0x08, 0x1b, 0x70 };
static const uint32_t drv_gpc[NEV] = { 31, 0, 1, 2 };
static const char *const app_name[NEV] = { "cycle", "inst_retired", "inst_spec", "ld_spec" };
static const char *const app_note[NEV] = { "e", "e", "g0,imix", "g0,imix" };
static const char *const status_names[3] = { "Success", "Retry", "Failure" };
static const char *const flag_names[3] = { "Enter", "Exit", "Dpc" };

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
next_rand(void)
{
	return xorshift64(&rng);
}

static void
add(uint64_t ts, int cpu, const uint8_t *b, size_t len)
{
	if (nrecs == caprecs) {
		caprecs = caprecs ? caprecs * 2 : 256;
		recs = xrealloc(recs, caprecs * sizeof *recs);
	}
	recs[nrecs].ts = ts;
	recs[nrecs].seq = seq++;
	recs[nrecs].cpu = cpu;
	recs[nrecs].b = xmalloc(len);
	memcpy(recs[nrecs].b, b, len);
	recs[nrecs].len = len;
	nrecs++;
}

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* S as UTF-16Z at P (ASCII widened: event names and notes are ASCII); returns its size. */
static size_t
put_wstr(uint8_t *p, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i <= n; i++) {
		p[2 * i] = i < n ? (uint8_t)s[i] : 0;
		p[2 * i + 1] = 0;
	}
	return 2 * n + 2;
}

static size_t
wstr_size(const char *s)
{
	return 2 * strlen(s) + 2;
}

/* The ReadGPC payloads, as wperf.h describes them; return the size. */
static size_t
app_payload(uint8_t *p, size_t cap, uint64_t core, const char *event, uint32_t idx,
    const char *note, uint64_t value)
{
	size_t at = 0;
	if (8 + wstr_size(event) + 4 + wstr_size(note) + 8 > cap)
		cli_fatal("payload too long");
	put_le(p, core, 8);
	at = 8 + put_wstr(p + 8, event);
	put_le(p + at, idx, 4);
	at += 4;
	at += put_wstr(p + at, note);
	put_le(p + at, value, 8);
	return at + 8;
}

static size_t
driver_payload(uint8_t p[24], uint64_t core, uint32_t event, uint32_t gpc, uint64_t value)
{
	put_le(p, core, 8);
	put_le(p + 8, event, 4);
	put_le(p + 12, gpc, 4);
	put_le(p + 16, value, 8);
	return 24;
}

/*
 * A MetaData EventMapInfo record's data: the provider GUID, then an
 * EVENT_MAP_INFO (layout in lib/etl/tdh.c) whose offsets count from its
 * own start, 16 bytes in.  Returns the size.
 */
static size_t
map_info(uint8_t *b, size_t cap, const uint8_t *guid, const char *name, int bitmap,
    const uint32_t *values, const char *const *names, unsigned n)
{
	size_t need = 16 + 16 + 8 * (size_t)n + wstr_size(name);
	for (unsigned i = 0; i < n; i++)
		need += wstr_size(names[i]);
	if (need > cap)
		cli_fatal("map too long");
	memcpy(b, guid, 16);
	uint8_t *m = b + 16;
	size_t at = 16 + 8 * (size_t)n;
	put_le(m, at, 4);
	at += put_wstr(m + at, name);
	put_le(m + 4, bitmap ? 2 : 1, 4);
	put_le(m + 8, n, 4);
	put_le(m + 12, 0, 4);
	for (unsigned i = 0; i < n; i++) {
		put_le(m + 16 + 8 * (size_t)i, at, 4);
		at += put_wstr(m + at, names[i]);
		put_le(m + 16 + 8 * (size_t)i + 4, values[i], 4);
	}
	return 16 + at;
}

/* An EVENT_HEADER record (etl-format.md §3.5; lib/etlwrite has no writer for it). */
static void
add_event(uint64_t ts, int cpu, const uint8_t *guid, unsigned id, unsigned channel, unsigned level,
    unsigned task, uint64_t keyword, uint32_t pid, uint32_t tid, const uint8_t *payload, size_t plen)
{
	uint8_t b[0x50 + 1024];
	size_t len = 0x50 + plen;
	if (len > sizeof b)
		cli_fatal("payload too long");
	memset(b, 0, 0x50);
	put_le(b, len, 2);
	b[2] = psize == 8 ? 0x13 : 0x12;
	b[3] = 0xc0;
	put_le(b + 4, psize == 8 ? 0x40 : 0x20, 2);
	put_le(b + 8, tid, 4);
	put_le(b + 12, pid, 4);
	put_le(b + 16, ts, 8);
	memcpy(b + 24, guid, 16);
	put_le(b + 40, id, 2);
	b[42] = 0;
	b[43] = (uint8_t)channel;
	b[44] = (uint8_t)level;
	b[45] = 0;
	put_le(b + 46, task, 2);
	put_le(b + 48, keyword, 8);
	memcpy(b + 0x50, payload, plen);
	add(ts, cpu, b, len);
}

static void
add_metadata(uint64_t ts, int type, const uint8_t *blob, size_t len)
{
	static const uint8_t md[16] = { 0xc1, 0xf6, 0xcc, 0xbb, 0xd1, 0x6c, 0xc4, 0x48, 0x80, 0xff,
	    0x83, 0x94, 0x82, 0xe3, 0x76, 0x71 };
	struct etlw_rec r;
	etlw_rec_init(&r);
	etlw_rec_classic(&r, psize, md, type, 0, 0, 4243, 4242, ts);
	etlw_bytes(&r, blob, len);
	size_t n = etlw_rec_finish(&r);
	add(ts, 0, r.b, n);
	etlw_rec_free(&r);
}

/* The prototype event's schema and maps (an embedded schema only). */
static void
add_prototype_schema(uint64_t ts)
{
	static const struct tdh_prop_def props[] = {
		{ "Text", 2, 1, 0, 1, 0, NULL },
		{ "Status", 8, 8, 0, 1, 0, "StatusMap" },
		{ "Flags", 8, 8, 0, 1, 0, "FlagMap" },
	};
	struct tdh_event_def d = { wperf_driver_guid, 5, 0, 8, 0, 0, 2, 0, "WindowsPerf Driver",
	    "Dpc", NULL, "CustomEventTraceInfo", props, 3, 3 };
	uint8_t b[2048];
	size_t n = tdh_build_event_info(&d, b, sizeof b);
	add_metadata(ts, 32, b, n);
	static const uint32_t sv[3] = { 0, 1, 2 }, fv[3] = { 1, 2, 4 };
	n = map_info(b, sizeof b, wperf_driver_guid, "StatusMap", 0, sv, status_names, 3);
	add_metadata(ts, 33, b, n);
	n = map_info(b, sizeof b, wperf_driver_guid, "FlagMap", 1, fv, flag_names, 3);
	add_metadata(ts, 33, b, n);
}

static int
cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
ms(char *out, size_t cap, uint64_t ticks)
{
	snprintf(out, cap, "%" PRIu64 ".%06" PRIu64, ticks / 10000, ticks % 10000 * 100);
}

static void
usage(void)
{
	cli_usage_error("usage: wperfgen -o OUT.etl [--schema embedded|after|none] [--providers app,driver] "
	    "[--cores N] [--periods N] [--period-ms MS] [--restart-at K] [--prototype] [--damaged-schema] "
	    "[--pointer-size 4|8] [--seed N] [--expect FILE] [--expect-pmu FILE]");
}

int
main(int argc, char **argv)
{
	const char *out = NULL, *expect = NULL, *expect_pmu = NULL, *schema = "embedded";
	const char *providers = "app,driver";
	int cores = 4, periods = 10, period_ms = 200, restart_at = 0, proto = 0, damaged = 0, c;
	static const struct option lo[] = {
		{ "schema", required_argument, NULL, 's' }, { "providers", required_argument, NULL, 'P' },
		{ "cores", required_argument, NULL, 'c' }, { "periods", required_argument, NULL, 'n' },
		{ "period-ms", required_argument, NULL, 'm' }, { "restart-at", required_argument, NULL, 'r' },
		{ "prototype", no_argument, NULL, 'x' }, { "damaged-schema", no_argument, NULL, 'D' }, { "pointer-size", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' }, { "expect", required_argument, NULL, 'e' },
		{ "expect-pmu", required_argument, NULL, 'E' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	cli_init("wperfgen");
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 's': schema = optarg; break;
		case 'P': providers = optarg; break;
		case 'c': cores = atoi(optarg); break;
		case 'n': periods = atoi(optarg); break;
		case 'm': period_ms = atoi(optarg); break;
		case 'r': restart_at = atoi(optarg); break;
		case 'x': proto = 1; break;
		case 'D': damaged = 1; break;
		case 'p': psize = atoi(optarg); break;
		case 'S': rng ^= (uint64_t)strtoull(optarg, NULL, 10) * 0x9e3779b97f4a7c15ull; break;
		case 'e': expect = optarg; break;
		case 'E': expect_pmu = optarg; break;
		default: usage();
		}
	}
	if (!out || optind != argc || cores < 1 || cores > 64 || periods < 1 || periods > 100000 ||
	    period_ms < 1 || (psize != 4 && psize != 8) ||
	    (strcmp(schema, "embedded") && strcmp(schema, "after") && strcmp(schema, "none")))
		usage();
	int app = strstr(providers, "app") != NULL, drv = strstr(providers, "driver") != NULL;
	uint64_t period = (uint64_t)period_ms * 10000, end = T0 + (uint64_t)periods * period + 10000;

	struct outbuf ex, ep;
	if (expect)
		ob_open(&ex, expect);
	if (expect_pmu)
		ob_open(&ep, expect_pmu);
	/* schemas first (as a merge injects them ahead of the events), or after them */
	uint64_t schema_ts = strcmp(schema, "after") == 0 ? end : T0 / 2;
	if (strcmp(schema, "none") != 0) {
		for (int i = 0; i < 2; i++) {
			size_t len;
			const uint8_t *blob = wperf_schema_blob(i, &len);
			if ((i == 0 && app) || (i == 1 && drv))
				add_metadata(schema_ts, 32, blob, len);
		}
		if (proto)
			add_prototype_schema(schema_ts);
	}
	if (damaged) {
		size_t len;
		uint8_t b[2048];
		const uint8_t *blob = wperf_schema_blob(1, &len);
		add_metadata(T0 / 4, 32, blob, 60);		/* cut inside the fixed header */
		memcpy(b, blob, len);
		put_le(b + 100, 5000, 4);			/* PropertyCount far past the end */
		put_le(b + 104, 4, 4);
		add_metadata(T0 / 4, 32, b, len);
		static const uint32_t v[1] = { 0 };
		static const char *const nm[1] = { "x" };
		size_t n = map_info(b, sizeof b, wperf_driver_guid, "BadMap", 0, v, nm, 1);
		put_le(b + 16 + 8, 0x10000000, 4);		/* EntryCount */
		add_metadata(T0 / 4, 33, b, n);
	}
	uint64_t total[64][NEV], sum[64][NEV], timed[64][NEV], timed_ms[64];
	memset(total, 0, sizeof total);
	memset(sum, 0, sizeof sum);
	memset(timed, 0, sizeof timed);
	memset(timed_ms, 0, sizeof timed_ms);
	char t[40], tprev[40];
	for (int k = 0; k < periods; k++) {
		if (restart_at && k == restart_at)
			memset(total, 0, sizeof total);
		for (int core = 0; core < cores; core++) {
			/* this period's truth: cycles, retired and speculated instructions, loads */
			uint64_t d[NEV];
			d[0] = (uint64_t)period_ms * 2000000ull * (uint64_t)(25 + 15 * (core % 5)) / 100 +
			    next_rand() % 1000000;
			d[1] = d[0] * (uint64_t)(60 + 35 * (core % 4) + next_rand() % 40) / 100 + next_rand() % 1000;
			d[2] = d[1] + d[1] / 8 + next_rand() % 1000;
			d[3] = d[2] / 4 + next_rand() % 100;
			uint64_t ts = T0 + (uint64_t)k * period + (uint64_t)core * 100;
			ms(t, sizeof t, ts - 0);
			ms(tprev, sizeof tprev, ts - period);
			int first_of_count = k == 0 || (restart_at && k == restart_at);
			if (!first_of_count)
				timed_ms[core] += (uint64_t)period_ms;
			for (int e = 0; e < NEV; e++) {
				uint8_t p[512];
				size_t n;
				total[core][e] += d[e];
				sum[core][e] += d[e];
				if (!first_of_count)
					timed[core][e] += d[e];
				if (drv) {
					n = driver_payload(p, (uint64_t)core, drv_event[e], drv_gpc[e],
					    total[core][e]);
					add_event(ts, core, wperf_driver_guid, 1, 8, 4, 0, 0x8000000000000000ull,
					    4, (uint32_t)(1000 + core), p, n);
					if (expect)
						ob_printf(&ex, "%.3f\tWindowsPerf Driver\tReadGPC\tCore=%d; Event=%u; "
						    "GPCIdx=%u; Value=%" PRIu64 "; \n", (double)(ts - 0) / 1e4, core,
						    drv_event[e], drv_gpc[e], total[core][e]);
					if (expect_pmu) {
						int first = k == 0 || (restart_at && k == restart_at);
						char rate[40];
						if (first)
							strcpy(rate, "-");
						else
							snprintf(rate, sizeof rate, "%.0f", (double)d[e] * 1000.0 / period_ms);
						ob_printf(&ep, "delta\t%s\t%s\t%d\t%08X\t%s\t%" PRIu64 "\t%s\n", t,
						    first ? "-" : tprev, core, drv_event[e], app_name[e], d[e], rate);
					}
				}
				if (app) {
					/* wperf.exe's main thread writes the rows, on whatever CPU */
					uint64_t ats = ts + 5000;
					n = app_payload(p, sizeof p, (uint64_t)core, app_name[e],
					    drv_event[e], app_note[e], d[e]);
					add_event(ats, 0, wperf_app_guid, 1, 0x10, 0, 1, 0x8000000000000005ull,
					    4242, 4243, p, n);
					if (expect)
						ob_printf(&ex, "%.3f\tWindowsPerf App\tReadGPC\tCore=%d; Event=%s; "
						    "EventIdx=%u; EventNote=%s; Value=%" PRIu64 "; \n",
						    (double)ats / 1e4, core, app_name[e], drv_event[e], app_note[e], d[e]);
				}
			}
			if (expect_pmu && drv)
				ob_printf(&ep, "ratio\t%s\t%s\t%d\tdriver\tIPC\t%.4f\n", t,
				    k == 0 || (restart_at && k == restart_at) ? "-" : tprev, core,
				    (double)d[1] / (double)d[0]);
			if (expect_pmu && app) {
				char ta[40];
				ms(ta, sizeof ta, ts + 5000);
				ob_printf(&ep, "ratio\t%s\t-\t%d\tapp\tIPC\t%.4f\n", ta, core,
				    (double)d[1] / (double)d[0]);
			}
			if (proto && drv) {
				uint8_t p[256];
				const char *txt = k % 2 ? "dpc exit" : "dpc enter";
				size_t n = strlen(txt) + 1;
				memcpy(p, txt, n);
				put_le(p + n, (uint64_t)(k % 3), 4);
				put_le(p + n + 4, (uint64_t)(k % 2 ? 6 : 5), 4);
				add_event(ts + 1, core, wperf_driver_guid, 5, 0x11, 0, 2, 0, 4, (uint32_t)(1000 + core),
				    p, n + 8);
				if (expect && strcmp(schema, "none") != 0)
					ob_printf(&ex, "%.3f\tWindowsPerf Driver\tCustomEventTraceInfo\tText=%s; Status=%s; Flags=%s; \n",
					    (double)(ts + 1) / 1e4, txt, status_names[k % 3],
					    k % 2 ? "Exit|Dpc" : "Enter|Dpc");
			}
		}
	}
	/* totals: every period counts; rates over the periods whose start is known */
	for (int core = 0; core < cores && expect_pmu; core++) {
		for (int e = 0; e < NEV; e++) {
			if (app)
				ob_printf(&ep, "total\tapp\t%d\t%08X\t%s\t%" PRIu64 "\t-\n", core, drv_event[e],
				    app_name[e], sum[core][e]);
			if (!drv)
				continue;
			ob_printf(&ep, "total\tdriver\t%d\t%08X\t%s\t%" PRIu64 "\t", core, drv_event[e],
			    app_name[e], sum[core][e]);
			if (timed_ms[core])
				ob_printf(&ep, "%.0f\n", (double)timed[core][e] * 1000.0 / (double)timed_ms[core]);
			else
				ob_puts(&ep, "-\n");
		}
		for (int s = 0; s < 2; s++)
			if (s ? drv : app)
				ob_printf(&ep, "total_ratio\t%s\t%d\tIPC\t%.4f\n", s ? "driver" : "app", core,
				    (double)sum[core][1] / (double)sum[core][0]);
	}
	qsort(recs, nrecs, sizeof *recs, cmp_rec);

	struct etlw_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.pointer_size = psize;
	cfg.ncpus = cores;
	cfg.buffer_size = 65536;
	cfg.version[0] = 10;
	cfg.os_build = 22631;
	cfg.cpu_mhz = 2000;
	cfg.clock_freq = FREQ;
	cfg.start_qpc = 0;
	cfg.start_filetime = 133500000000000000ull;
	cfg.end_filetime = cfg.start_filetime + end;
	cfg.boot_filetime = cfg.start_filetime - 36000000000ull;
	cfg.log_file_mode = 0x1;
	cfg.logger_id = 30;
	cfg.controller_pid = 4242;
	cfg.controller_tid = 4243;
	cfg.tz_name = "@tzres.dll,-322";
	cfg.logger_name = "ArmEventCollectorName";
	cfg.logfile_name = out;
	struct etlw *w = etlw_open(out, &cfg);
	for (size_t i = 0; i < nrecs; i++) {
		etlw_append(w, recs[i].cpu, recs[i].b, recs[i].len);
		free(recs[i].b);
	}
	free(recs);
	etlw_close(w);
	if (expect)
		ob_close(&ex);
	if (expect_pmu)
		ob_close(&ep);
	return 0;
}
