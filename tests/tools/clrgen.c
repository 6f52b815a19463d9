/*
 * clrgen - test tool: a small synthetic .etl of one .NET process whose
 * every figure is known: CLR allocation ticks, an exception, a GC, a JIT
 * compilation, and CLR stack walks after them, with the walks a decoder
 * must count rather than join (no CLR event before it on its thread, a
 * second walk for one event, a FrameCount beyond the payload, an event
 * with an ETW stack-walk record too).  No
 * manifest is embedded: etl2evt decodes the events with its built-in CLR
 * schemas.  tests/dotnet.bats works the expected figures out by hand from
 * the model below.
 *
 * USAGE:  clrgen -o OUT.etl [--pointer-size 4|8]
 *
 * The model (times in ms from the header; process 1000, threads 1001 on
 * CPU 0 and 1002 on CPU 1; a walk's frames innermost first):
 *   module 0x5000 "C:\app\app.dll"; thread 1001:
 *    1.0   MethodJittingStarted  App.Program.Main, IL 64 bytes
 *    3.5   MethodLoadVerbose     App.Program.Main at 0x10000, 256 bytes, QuickJitted
 *   10.0   AllocationTick        100,000 bytes System.String       + walk (3 frames)
 *   20.0   AllocationTick        150,000 bytes System.Byte[]       + walk (3 frames)
 *   30.0   AllocationTick  5,000,000,000 bytes App.Big (AllocationAmount: the low 32 bits)
 *                                                                  + walk at 30.01 (3 frames)
 *   35.0   AllocationTick        400,000 bytes System.Kernel with an ETW stack-walk record
 *                                (one user frame, 0x10040) + a walk at 35.01, which loses
 *   40.0   ExceptionThrown_V1    System.InvalidOperationException, a 300-byte message
 *                                with a ';' in it                  + walk (3 frames)
 *   50.0   SuspendEEBegin; 50.2 SuspendEEEnd; 50.5 GCStart #1 gen 1 AllocSmall + walk (3 frames);
 *   52.0   GCEnd; 52.1 GCHeapStats (sizes 1000, 2000, 3000, 4000; promoted 100, 200, 300, 400);
 *   52.5   RestartEEBegin; 53.0 RestartEEEnd: pause 3 ms
 *   thread 1002:
 *   15.0   a walk with no CLR event before it on its thread
 *   25.0   AllocationTick 200,000 bytes System.Object; 25.01 a walk of FrameCount 5 with 2 frames;
 *   26.0   a second walk (the event has one)
 *   30.005 AllocationTick 300,000 bytes System.Object (between thread 1001's tick and its walk),
 *          no walk
 *   46.0   MethodJittingStarted App.Program.Never, never loaded
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "etlwrite.h"

#define FREQ 10000000ull	/* QPC ticks per second: 100 ns */
#define MS(x) ((uint64_t)((x) * 10000.0 + 0.5))
#define PID 1000

struct rec {
	uint64_t ts, seq;
	int cpu;
	uint8_t *b;
	size_t len;
};

static struct rec *recs;
static size_t nrecs, caprecs;
static int psize = 8;

static const uint8_t clr_guid[16] = {	/* e13c0d23-ccbc-4e12-931b-d9cc2eee27e4, Windows byte order */
	0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc, 0x12, 0x4e, 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4
};

/* A payload being built. */
struct pl {
	uint8_t b[1024];
	size_t n;
};

static void
put(struct pl *p, uint64_t v, int n)
{
	if (p->n + (size_t)n > sizeof p->b)
		cli_fatal("payload too long");
	for (int i = 0; i < n; i++)
		p->b[p->n++] = (uint8_t)(v >> (8 * i));
}

static void
put_ptr(struct pl *p, uint64_t v)
{
	put(p, v, psize);
}

/* ASCII as UTF-16Z */
static void
put_wstr(struct pl *p, const char *s)
{
	for (size_t i = 0; i <= strlen(s); i++)
		put(p, (uint8_t)s[i], 2);
}

/* An EVENT_HEADER record of the CLR runtime provider (etl-format.md §3.5). */
static void
add_event(double ms, int cpu, uint32_t tid, unsigned id, unsigned version, unsigned task,
    unsigned opcode, const struct pl *p)
{
	size_t len = 0x50 + p->n;
	uint8_t *b = xcalloc(1, len);

	b[0] = (uint8_t)len;
	b[1] = (uint8_t)(len >> 8);
	b[2] = psize == 8 ? 0x13 : 0x12;
	b[3] = 0xc0;
	b[4] = psize == 8 ? 0x40 : 0x20;
	memcpy(b + 8, &(uint32_t){ tid }, 4);
	memcpy(b + 12, &(uint32_t){ PID }, 4);
	uint64_t ts = MS(ms);
	for (int i = 0; i < 8; i++)
		b[16 + i] = (uint8_t)(ts >> (8 * i));
	memcpy(b + 24, clr_guid, 16);
	b[40] = (uint8_t)id;
	b[41] = (uint8_t)(id >> 8);
	b[42] = (uint8_t)version;
	b[44] = 4;	/* level */
	b[45] = (uint8_t)opcode;
	b[46] = (uint8_t)task;
	b[48] = 1;	/* keyword GC */
	memcpy(b + 0x50, p->b, p->n);
	if (nrecs == caprecs) {
		caprecs = caprecs ? caprecs * 2 : 64;
		recs = xrealloc(recs, caprecs * sizeof *recs);
	}
	recs[nrecs] = (struct rec){ ts, nrecs, cpu, b, len };
	nrecs++;
}

/* ClrStackWalk (id 82): FRAMECOUNT, then the first NF of FRAMES (innermost first). */
static void
walk(double ms, int cpu, uint32_t tid, uint32_t framecount, const uint64_t *frames, size_t nf)
{
	struct pl p = { .n = 0 };

	put(&p, 9, 2);		/* ClrInstanceID */
	put(&p, 0, 1);
	put(&p, 0, 1);
	put(&p, framecount, 4);
	for (size_t i = 0; i < nf; i++)
		put_ptr(&p, frames[i]);
	add_event(ms, cpu, tid, 82, 0, 11, 82, &p);
}

/* An ETW Stack record (group 24, type 32) for the event of thread TID at EVMS. */
static void
kernel_stack(double ms, int cpu, uint32_t tid, double evms, const uint64_t *frames, size_t nf)
{
	struct etlw_rec r;
	size_t n;

	etlw_rec_init(&r);
	etlw_rec_kernel(&r, ETLW_PERFINFO, psize, 24, 32, 2, 0, 0, MS(ms));
	etlw_u64(&r, MS(evms));
	etlw_u32(&r, PID);
	etlw_u32(&r, tid);
	for (size_t i = 0; i < nf; i++)
		etlw_ptr(&r, frames[i]);
	n = etlw_rec_finish(&r);
	if (nrecs == caprecs) {
		caprecs = caprecs ? caprecs * 2 : 64;
		recs = xrealloc(recs, caprecs * sizeof *recs);
	}
	recs[nrecs] = (struct rec){ MS(ms), nrecs, cpu, xmalloc(n), n };
	memcpy(recs[nrecs].b, r.b, n);
	nrecs++;
	etlw_rec_free(&r);
}

static void
alloc_tick(double ms, int cpu, uint32_t tid, uint64_t bytes, const char *type)
{
	struct pl p = { .n = 0 };

	put(&p, bytes & 0xffffffffu, 4);	/* AllocationAmount */
	put(&p, 0, 4);				/* AllocationKind: Small */
	put(&p, 9, 2);				/* ClrInstanceID */
	put(&p, bytes, 8);			/* AllocationAmount64 */
	put_ptr(&p, 0x7700);			/* TypeID */
	put_wstr(&p, type);
	put(&p, 0, 4);				/* HeapIndex */
	add_event(ms, cpu, tid, 10, 2, 1, 11, &p);
}

static void
jit_start(double ms, int cpu, uint32_t tid, uint64_t method_id, const char *name)
{
	struct pl p = { .n = 0 };

	put(&p, method_id, 8);
	put(&p, 0x5000, 8);		/* ModuleID */
	put(&p, 0x06000001, 4);		/* MethodToken */
	put(&p, 64, 4);			/* MethodILSize */
	put_wstr(&p, "App.Program");
	put_wstr(&p, name);
	put_wstr(&p, "void  ()");
	put(&p, 9, 2);
	add_event(ms, cpu, tid, 145, 0, 9, 42, &p);
}

static void
gc_events(void)
{
	static const uint64_t f[3] = { 0x10080, 0x20000, 0x30000 };
	struct pl p = { .n = 0 };

	put(&p, 1, 4);			/* SuspendEEBegin_V1: Reason SuspendForGC */
	put(&p, 0, 4);
	put(&p, 9, 2);
	add_event(50.0, 0, 1001, 9, 1, 1, 10, &p);
	p.n = 0;
	put(&p, 9, 2);			/* SuspendEEEnd_V1 */
	add_event(50.2, 0, 1001, 8, 1, 1, 136, &p);
	p.n = 0;
	put(&p, 1, 4);			/* GCStart_V1: Count */
	put(&p, 1, 4);			/* Depth */
	put(&p, 0, 4);			/* Reason: AllocSmall */
	put(&p, 0, 4);			/* Type: NonConcurrentGC */
	put(&p, 9, 2);
	add_event(50.5, 0, 1001, 1, 1, 1, 1, &p);
	walk(50.51, 0, 1001, 3, f, 3);
	p.n = 0;
	put(&p, 1, 4);			/* GCEnd_V1: Count, Depth */
	put(&p, 1, 4);
	put(&p, 9, 2);
	add_event(52.0, 0, 1001, 2, 1, 1, 2, &p);
	p.n = 0;
	for (int g = 0; g < 4; g++) {	/* GCHeapStats_V1 */
		put(&p, 1000u * (unsigned)(g + 1), 8);
		put(&p, 100u * (unsigned)(g + 1), 8);
	}
	put(&p, 0, 8);
	put(&p, 0, 8);
	put(&p, 1, 4);
	put(&p, 0, 4);
	put(&p, 5, 4);
	put(&p, 9, 2);
	add_event(52.1, 0, 1001, 4, 1, 1, 133, &p);
	p.n = 0;
	put(&p, 9, 2);
	add_event(52.5, 0, 1001, 7, 1, 1, 8, &p);	/* RestartEEBegin */
	add_event(53.0, 0, 1001, 3, 1, 1, 132, &p);	/* RestartEEEnd */
}

static void
model(void)
{
	static const uint64_t f[3] = { 0x10080, 0x20000, 0x30000 };
	struct pl p = { .n = 0 };
	char msg[400];

	/* ModuleLoad_V2 */
	put(&p, 0x5000, 8);
	put(&p, 0x6000, 8);
	put(&p, 8, 4);
	put(&p, 0, 4);
	put_wstr(&p, "C:\\app\\app.dll");
	put_wstr(&p, "");
	put(&p, 9, 2);
	add_event(0.5, 0, 1001, 152, 1, 10, 33, &p);
	jit_start(1.0, 0, 1001, 0x77, "Main");
	p.n = 0;			/* MethodLoadVerbose_V1 */
	put(&p, 0x77, 8);
	put(&p, 0x5000, 8);
	put(&p, 0x10000, 8);
	put(&p, 256, 4);
	put(&p, 0x06000001, 4);
	put(&p, 0x8 | 3u << 7, 4);	/* Jitted, tier 3: QuickJitted */
	put_wstr(&p, "App.Program");
	put_wstr(&p, "Main");
	put_wstr(&p, "void  ()");
	put(&p, 9, 2);
	add_event(3.5, 0, 1001, 143, 1, 9, 37, &p);

	alloc_tick(10.0, 0, 1001, 100000, "System.String");
	walk(10.01, 0, 1001, 3, f, 3);
	walk(15.0, 1, 1002, 3, f, 3);
	alloc_tick(20.0, 0, 1001, 150000, "System.Byte[]");
	walk(20.01, 0, 1001, 3, f, 3);
	alloc_tick(25.0, 1, 1002, 200000, "System.Object");
	walk(25.01, 1, 1002, 5, f, 2);
	walk(26.0, 1, 1002, 3, f, 3);
	alloc_tick(30.0, 0, 1001, 5000000000ull, "App.Big");
	alloc_tick(30.005, 1, 1002, 300000, "System.Object");
	walk(30.01, 0, 1001, 3, f, 3);
	static const uint64_t k[1] = { 0x10040 };
	alloc_tick(35.0, 0, 1001, 400000, "System.Kernel");
	kernel_stack(35.0, 0, 1001, 35.0, k, 1);
	walk(35.01, 0, 1001, 3, f, 3);

	p.n = 0;			/* ExceptionThrown_V1 */
	put_wstr(&p, "System.InvalidOperationException");
	memset(msg, 'm', 300);
	memcpy(msg, "bad state; ", 11);
	msg[300] = '\0';
	put_wstr(&p, msg);
	put_ptr(&p, 0x10090);
	put(&p, 0x80131509u, 4);
	put(&p, 0x10, 2);
	put(&p, 9, 2);
	add_event(40.0, 0, 1001, 80, 1, 7, 1, &p);
	walk(40.01, 0, 1001, 3, f, 3);
	jit_start(46.0, 1, 1002, 0x78, "Never");
	gc_events();
}

static int
cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pointer-size", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL;
	int c;

	cli_init("clrgen");
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'p': psize = atoi(optarg); break;
		default: cli_usage_error("usage: clrgen -o OUT.etl [--pointer-size 4|8]");
		}
	}
	if (out == NULL || (psize != 4 && psize != 8))
		cli_usage_error("usage: clrgen -o OUT.etl [--pointer-size 4|8]");
	model();
	qsort(recs, nrecs, sizeof *recs, cmp_rec);

	struct etlw_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.pointer_size = psize;
	cfg.ncpus = 2;
	cfg.buffer_size = 65536;
	cfg.version[0] = 10;
	cfg.os_build = 19045;
	cfg.cpu_mhz = 3000;
	cfg.clock_freq = FREQ;
	cfg.start_filetime = 133500000000000000ull;
	cfg.end_filetime = cfg.start_filetime + MS(60);
	cfg.boot_filetime = cfg.start_filetime - 36000000000ull;
	cfg.log_file_mode = 0x1;
	cfg.logger_id = 31;
	cfg.controller_pid = 4242;
	cfg.controller_tid = 4243;
	cfg.tz_name = "@tzres.dll,-322";
	cfg.logger_name = "ClrSession";
	cfg.logfile_name = out;
	struct etlw *w = etlw_open(out, &cfg);
	for (size_t i = 0; i < nrecs; i++) {
		etlw_append(w, recs[i].cpu, recs[i].b, recs[i].len);
		free(recs[i].b);
	}
	free(recs);
	etlw_close(w);
	return 0;
}
