/*
 * etlgen - write a synthetic .etl from a scenario (what no public trace has:
 * DPC, ThreadedDPC, TimerDPC, ISR, CSwitch, ReadyThread, compact headers,
 * 32-bit kernels, lost events).
 *
 * USAGE:  etlgen [-o OUT.etl] [--expect FILE] [--pointer-size 4|8]
 *                [--compress|--lznt1|--no-compress] [--stacks full|keys|split]
 *                [--key-cache N] [--seed N] SCENARIO.yaml
 *         etlgen --emit-c DIR SCENARIO.yaml
 *         (the independent check of the files written is tests/tools/etlwalk.c)
 *
 * INPUT:  a YAML scenario (docs/scenario-format.md): machine, processes with
 *         threads and images, routines, stacks, explicit events and
 *         generators ("163000 DPCs of ndis.sys on CPUs 0,2,4,6").
 *
 * OUTPUT: an .etl in the kernel logger's layout (tests/tools/lib/etlwrite.c), and with
 *         --expect the evt lines etl2evt must decode from it, e.g.
 *   0.200000	DPC	2	*	*	*	0.2205	routine=ndis.sys!0x1a2b0	module=ndis.sys	duration_us=220.500	end_ms=0.420500	*
 *         "*" = a column the scenario does not decide (compared as "any").
 */
/* XSI (POSIX 2008 + X/Open 7) for strptime() and M_PI */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <yaml.h>

#include "base/cli.h"
#include "etlwrite.h"
#include "evt/evt.h"

#define NONE INT64_MIN		/* "no time": the object is in the rundown */

enum kind {
	K_SAMPLE, K_DPC, K_TDPC, K_TIMERDPC, K_ISR, K_CSWITCH, K_READY,
	K_PSTART, K_PEND, K_PDCSTART, K_PDCEND,
	K_TSTART, K_TEND, K_TDCSTART, K_TDCEND,
	K_ILOAD, K_IUNLOAD, K_IDCSTART, K_IDCEND,
	K_LOST, K_INTERVAL, K_STACKWALK, K_IMAGEID, K_DBGID, NKINDS
};

static const char *kind_names[NKINDS] = {
	"Sample", "DPC", "ThreadedDPC", "TimerDPC", "ISR", "CSwitch", "ReadyThread",
	"ProcessStart", "ProcessEnd", "ProcessDCStart", "ProcessDCEnd",
	"ThreadStart", "ThreadEnd", "ThreadDCStart", "ThreadDCEnd",
	"ImageLoad", "ImageUnload", "ImageDCStart", "ImageDCEnd",
	"Lost", "SampleInterval", "StackWalk", "ImageID", "DbgID_RSDS",
};

static const char *wait_reasons[] = {
	"Executive", "FreePage", "PageIn", "PoolAllocation", "DelayExecution",
	"Suspended", "UserRequest", "WrExecutive", "WrFreePage", "WrPageIn",
	"WrPoolAllocation", "WrDelayExecution", "WrSuspended", "WrUserRequest",
	"WrEventPair", "WrQueue", "WrLpcReceive", "WrLpcReply", "WrVirtualMemory",
	"WrPageOut", "WrRendezvous", "WrKeyedEvent", "WrTerminated",
	"WrProcessInSwap", "WrCpuRateControl", "WrCalloutStack", "WrKernel",
	"WrResource", "WrPushLock", "WrMutex", "WrQuantumEnd", "WrDispatchInt",
	"WrPreempted", "WrYieldExecution", "WrFastMutex", "WrGuardedMutex",
	"WrRundown", "WrAlertByThreadId", "WrDeferredPreempt",
};
#define NWAIT ((int)(sizeof wait_reasons / sizeof wait_reasons[0]))

static const char *thread_states[] = {
	"Initialized", "Ready", "Running", "Standby", "Terminated", "Waiting",
	"Transition", "DeferredReady",
};

/* ---------- the scenario model ---------- */

struct proc;

struct image {
	char *path, *name;
	uint64_t base, size;
	uint32_t checksum, timestamp, image_timestamp;
	char *original;			/* ImageID OriginalFileName */
	char *pdb;
	uint8_t guid[16];
	char guidtext[40];
	uint32_t age;
	int64_t load, unload;		/* ticks from the header event or NONE */
	struct proc *proc;
};

struct thread {
	uint32_t tid;
	struct proc *proc;
	uint64_t start_addr;
	char *name;
	int prio;
	int64_t start, end;
	int idle_cpu;			/* the idle thread of this CPU, or -1 */
};

struct proc {
	char *name, *cmdline;
	uint32_t pid, parent, session, exit;
	int64_t start, end;
	uint64_t key;			/* UniqueProcessKey (EPROCESS) */
	struct image *img;
	int nimg;
	struct thread **thr;
	int nthr;
};

struct rstack {
	int n, nk;			/* frames, of which kernel frames (leaf side) */
	uint64_t *addr;			/* root first */
	char *text;			/* the evt stack column */
	uint64_t kkey, ukey;		/* stack keys, 0 = not assigned */
	int kslot, uslot;		/* with a key cache: the slot holding it, or -1 */
};

struct gev {
	int64_t t;			/* header timestamp (ticks from the header event) */
	int64_t t0;			/* DPC/ISR: InitialTime */
	uint32_t seq;
	int16_t cpu;
	uint8_t kind;
	uint8_t gen;			/* made by a generator (may be moved) */
	uint32_t a[6];
	uint64_t addr;
	void *obj;
	struct rstack *stack;
};

static struct {
	/* machine */
	int cpus, psize;
	uint8_t version[4];
	uint32_t os_build, cpu_mhz;
	uint64_t freq, start_qpc, start_ft, boot_ft;
	int64_t duration;		/* ticks */
	double interval_ms;
	uint32_t buffer_size;
	int compress;
	int stack_mode;			/* 0 full, 1 keys, 2 split user part */
	uint64_t seed;
	uint32_t events_lost, buffers_lost;
	uint32_t rundown_pid, rundown_tid, rundown_end_tid;
	int key_cache;			/* stack key cache entries, 0 = no eviction */
	double user_delay_ms;		/* split/keys: the user part of a kernel-mode sample comes this late */
	int64_t repeat;			/* --repeat: copies of the trace body */
	char *logger_name;
	/* model */
	struct proc *procs;
	int nproc;
	struct thread *thr;
	int nthr;
	struct rstack **stacks;
	int nstacks;
	struct gev *ev;
	size_t nev, capev;
	uint32_t lost_total, lost_buffers;
	yaml_document_t doc;
	const char *file;
} S;

static uint64_t rng_state;

static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double
rng_unit(void)
{
	return (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
}

static double
rng_gauss(void)
{
	double u = rng_unit(), v = rng_unit();
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* ---------- YAML access ---------- */

static yaml_node_t *
node(int i)
{
	return yaml_document_get_node(&S.doc, i);
}

__attribute__((noreturn, format(printf, 2, 3)))
static void
bad(const yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cli_fatal("%s:%lu: %s", S.file, n ? (unsigned long)n->start_mark.line + 1 : 0ul, msg);
}

static yaml_node_t *
get(const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(p->key);
		if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
			return node(p->value);
	}
	return NULL;
}

/* Rejects keys of MAP that are not in the NULL-terminated list. */
static void
check_keys(const yaml_node_t *map, const char *const *ok)
{
	yaml_node_pair_t *p;
	int i;

	if (!map || map->type != YAML_MAPPING_NODE)
		bad(map, "expected a mapping");
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(p->key);
		const char *name = k && k->type == YAML_SCALAR_NODE ? (char *)k->data.scalar.value : "?";
		for (i = 0; ok[i]; i++)
			if (strcmp(ok[i], name) == 0)
				break;
		if (!ok[i])
			bad(k, "unknown key '%s'", name);
	}
}

static const char *
scalar(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		bad(n, "expected a scalar value");
	return (const char *)n->data.scalar.value;
}

static const char *
str_or(const yaml_node_t *map, const char *key, const char *dflt)
{
	yaml_node_t *n = get(map, key);
	return n ? scalar(n) : dflt;
}

static uint64_t
u64_of(const yaml_node_t *n)
{
	const char *s = scalar(n);
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		bad(n, "'%s' is not an unsigned integer", s);
	return v;
}

static uint64_t
u64_or(const yaml_node_t *map, const char *key, uint64_t dflt)
{
	yaml_node_t *n = get(map, key);
	return n ? u64_of(n) : dflt;
}

static int64_t
i64_or(const yaml_node_t *map, const char *key, int64_t lo, int64_t hi, int64_t dflt)
{
	yaml_node_t *n = get(map, key);
	const char *s;
	char *end;
	long long v;

	if (!n)
		return dflt;
	s = scalar(n);
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		bad(n, "'%s' is not an integer in %lld..%lld", s, (long long)lo, (long long)hi);
	return v;
}

static double
num_of(const yaml_node_t *n)
{
	const char *s = scalar(n);
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		bad(n, "'%s' is not a number", s);
	return v;
}

static double
num_or(const yaml_node_t *map, const char *key, double dflt)
{
	yaml_node_t *n = get(map, key);
	return n ? num_of(n) : dflt;
}

static int
bool_of(const yaml_node_t *n)
{
	const char *s = scalar(n);
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "1") || !strcmp(s, "on"))
		return 1;
	if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "0") || !strcmp(s, "off"))
		return 0;
	bad(n, "'%s' is not a boolean", s);
}

static int
bool_or(const yaml_node_t *map, const char *key, int dflt)
{
	yaml_node_t *n = get(map, key);
	return n ? bool_of(n) : dflt;
}

static int64_t
ms_to_ticks(double ms)
{
	return (int64_t)llround(ms * (double)S.freq / 1000.0);
}

static int64_t
time_or(const yaml_node_t *map, const char *key, int64_t dflt)
{
	yaml_node_t *n = get(map, key);
	return n ? ms_to_ticks(num_of(n)) : dflt;
}

static int
seq_len(const yaml_node_t *n)
{
	if (!n)
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		bad(n, "expected a list");
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *
seq_at(const yaml_node_t *n, int i)
{
	return node(n->data.sequence.items.start[i]);
}

static uint64_t fit_pointer(uint64_t a);

/* ---------- model lookups ---------- */

static struct proc *
proc_by_pid(uint32_t pid)
{
	int i;
	for (i = 0; i < S.nproc; i++)
		if (S.procs[i].pid == pid)
			return &S.procs[i];
	return NULL;
}

static struct thread *
thread_by_tid(uint32_t tid)
{
	int i;
	for (i = 0; i < S.nthr; i++)
		if (S.thr[i].tid == tid)
			return &S.thr[i];
	return NULL;
}

static int
is_kernel_addr(uint64_t a)
{
	return S.psize == 8 ? a >= 0xFFFF800000000000ull : a >= 0x80000000ull;
}

static struct image *
image_at(const struct proc *p, uint64_t a)
{
	int i;
	if (!p)
		return NULL;
	for (i = 0; i < p->nimg; i++)
		if (a >= p->img[i].base && a - p->img[i].base < p->img[i].size)
			return &p->img[i];
	return NULL;
}

/* The image holding address A as seen from process PID (kernel images are global). */
static struct image *
resolve(uint32_t pid, uint64_t a)
{
	struct image *im = image_at(proc_by_pid(pid), a);
	int i;

	if (im || !is_kernel_addr(a))
		return im;
	for (i = 0; i < S.nproc; i++)
		if ((im = image_at(&S.procs[i], a)) && is_kernel_addr(im->base))
			return im;
	return NULL;
}

static struct image *
image_named(uint32_t pid, const char *name, size_t len)
{
	struct proc *p = proc_by_pid(pid);
	int i, j;

	for (j = -1; j < S.nproc; j++) {
		struct proc *q = j < 0 ? p : &S.procs[j];
		if (!q)
			continue;
		for (i = 0; i < q->nimg; i++) {
			struct image *im = &q->img[i];
			if (strlen(im->name) == len && strncasecmp(im->name, name, len) == 0 &&
			    (q == p || is_kernel_addr(im->base)))
				return im;
		}
	}
	return NULL;
}

/*
 * --symbols MAP: the functions of stand-in images built with real PDBs
 * (tests/scenarios/build-symbols.sh).  Lines:
 *   image MODULE PDBNAME GUID AGE
 *   func MODULE NAME RVA SIZE
 * Routines named in the scenario are placed inside the function of that
 * name, images get the PDB's identity (DbgID_RSDS), and the expected
 * frames become MODULE!NAME, as etl2evt --symbols prints them.
 */
struct symfunc {
	char *module, *name;
	uint64_t rva, size;
};
struct symimg {
	char *module, *pdb;
	uint8_t guid[16];
	char guidtext[40];
	uint32_t age;
};
static struct symfunc *symfuncs;
static int nsymfuncs;
static struct symimg *symimgs;
static int nsymimgs;

static void
load_symbols(const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[4096], a[1024], b[1024], c[1024];
	unsigned long long x, y;
	unsigned long lineno = 0;

	if (!fp)
		cli_fatal("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof line, fp)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "func %1023s %1023s %llx %llx", a, b, &x, &y) == 4) {
			symfuncs = xrealloc(symfuncs, (size_t)(nsymfuncs + 1) * sizeof *symfuncs);
			symfuncs[nsymfuncs].module = xstrdup(a);
			symfuncs[nsymfuncs].name = xstrdup(b);
			symfuncs[nsymfuncs].rva = x;
			symfuncs[nsymfuncs++].size = y;
		} else if (sscanf(line, "image %1023s %1023s %1023s %llu", a, b, c, &x) == 4) {
			struct symimg *si;
			size_t i;
			symimgs = xrealloc(symimgs, (size_t)(nsymimgs + 1) * sizeof *symimgs);
			si = &symimgs[nsymimgs++];
			si->module = xstrdup(a);
			si->pdb = xstrdup(b);
			si->age = (uint32_t)x;
			if (etlw_parse_guid(c, si->guid) < 0)
				cli_fatal("%s:%lu: bad GUID '%s'", path, lineno, c);
			snprintf(si->guidtext, sizeof si->guidtext, "%.38s", c[0] == '{' ? c + 1 : c);
			for (i = 0; si->guidtext[i]; i++)
				if (si->guidtext[i] == '}')
					si->guidtext[i] = '\0';
				else if (si->guidtext[i] >= 'A' && si->guidtext[i] <= 'F')
					si->guidtext[i] = (char)(si->guidtext[i] - 'A' + 'a');
		} else
			cli_fatal("%s:%lu: not 'image MODULE PDB GUID AGE' or 'func MODULE NAME RVA SIZE'",
			    path, lineno);
	}
	fclose(fp);
}

static const struct symfunc *
symfunc_at(const char *module, uint64_t rva)
{
	int i;
	for (i = 0; i < nsymfuncs; i++)
		if (strcasecmp(symfuncs[i].module, module) == 0 && rva >= symfuncs[i].rva &&
		    rva - symfuncs[i].rva < symfuncs[i].size)
			return &symfuncs[i];
	return NULL;
}

static const struct symfunc *
symfunc_named(const char *module, const char *name)
{
	int i;
	for (i = 0; i < nsymfuncs; i++)
		if (strcasecmp(symfuncs[i].module, module) == 0 && strcmp(symfuncs[i].name, name) == 0)
			return &symfuncs[i];
	return NULL;
}

/* evt text of a frame at A in process PID. */
static void
frame_text(char *out, size_t cap, uint32_t pid, uint64_t a)
{
	struct image *im = resolve(pid, a);
	const struct symfunc *f;

	if (im && (f = symfunc_at(im->name, a - im->base)) != NULL)
		snprintf(out, cap, "%s!%s", im->name, f->name);
	else if (im)
		snprintf(out, cap, "%s!0x%llx", im->name, (unsigned long long)(a - im->base));
	else
		snprintf(out, cap, "?!?");
}

/*
 * A frame: a routine name from "routines:", "module+0xRVA", "module!0xRVA"
 * or a plain address.  Resolved in process PID.
 */
static uint64_t
frame_addr(const yaml_node_t *n, uint32_t pid)
{
	yaml_node_t *routines = get(node(1), "routines");
	const char *s = scalar(n), *sep;
	yaml_node_t *alias;
	struct image *im;
	char *end;
	uint64_t rva;

	if ((alias = get(routines, s)) != NULL && alias != n) {
		static int depth;
		uint64_t a;
		if (++depth > 16)
			bad(n, "routine '%s': aliases nested too deep (a loop?)", s);
		a = frame_addr(alias, pid);
		depth--;
		if (nsymfuncs) {
			/* inside the stand-in function of that name, past its prologue */
			struct image *rim = resolve(pid, a);
			const struct symfunc *f = rim ? symfunc_named(rim->name, s) : NULL;
			if (f)
				a = rim->base + f->rva + (f->size > 8 ? 4 : 0);
		}
		return a;
	}
	sep = strpbrk(s, "+!");
	if (!sep) {
		uint64_t a = strtoull(s, &end, 0);
		if (end == s || *end)
			bad(n, "frame '%s' is not a routine name, MODULE+0xRVA or an address", s);
		return fit_pointer(a);
	}
	rva = strtoull(sep + 1, &end, 0);
	if (end == sep + 1 || *end)
		bad(n, "frame '%s': bad RVA", s);
	im = image_named(pid, s, (size_t)(sep - s));
	if (!im)
		bad(n, "frame '%s': no image '%.*s' in process %u or the kernel", s,
		    (int)(sep - s), s, pid);
	if (rva >= im->size)
		bad(n, "frame '%s': RVA beyond the image size 0x%llx", s,
		    (unsigned long long)im->size);
	return im->base + rva;
}

/* A stack (list of frames, root first) or the name of one in "stacks:". */
static struct rstack *
make_stack(const yaml_node_t *n, uint32_t pid)
{
	struct rstack *st;
	size_t cap, len = 0;
	int i;

	if (n->type == YAML_SCALAR_NODE) {
		yaml_node_t *named = get(get(node(1), "stacks"), scalar(n));
		if (!named)
			bad(n, "no stack named '%s' under stacks:", scalar(n));
		n = named;
	}
	if (n->type != YAML_SEQUENCE_NODE || seq_len(n) == 0)
		bad(n, "a stack is a non-empty list of frames, root first");
	st = xcalloc(1, sizeof *st);
	st->kslot = st->uslot = -1;
	st->n = seq_len(n);
	st->addr = xmalloc((size_t)st->n * sizeof *st->addr);
	cap = (size_t)st->n * 64 + 1;
	st->text = xmalloc(cap);
	st->text[0] = '\0';
	for (i = 0; i < st->n; i++) {
		char f[300];
		size_t fl;
		st->addr[i] = frame_addr(seq_at(n, i), pid);
		frame_text(f, sizeof f, pid, st->addr[i]);
		fl = strlen(f);
		if (len + fl + 2 > cap) {
			cap = (len + fl + 2) * 2;
			st->text = xrealloc(st->text, cap);
		}
		if (i)
			st->text[len++] = ';';
		memcpy(st->text + len, f, fl + 1);
		len += fl;
		if (is_kernel_addr(st->addr[i]))
			st->nk++;
	}
	/* kernel frames must be the leaf end (user code calls into the kernel) */
	for (i = st->n - st->nk; i < st->n; i++)
		if (!is_kernel_addr(st->addr[i]))
			bad(n, "user-mode frame above a kernel-mode frame (stacks are root first)");
	S.stacks = xrealloc(S.stacks, (size_t)(S.nstacks + 1) * sizeof *S.stacks);
	S.stacks[S.nstacks++] = st;
	return st;
}

/* ---------- events ---------- */

static struct gev *
add_event(int kind, int cpu, int64_t t)
{
	struct gev *e;

	if (S.nev == S.capev) {
		S.capev = S.capev ? S.capev * 2 : 4096;
		S.ev = xrealloc(S.ev, S.capev * sizeof *S.ev);
	}
	e = &S.ev[S.nev];
	memset(e, 0, sizeof *e);
	e->kind = (uint8_t)kind;
	e->cpu = (int16_t)cpu;
	e->t = t;
	e->seq = (uint32_t)S.nev++;
	return e;
}

static int
kind_of(const yaml_node_t *n)
{
	const char *s = scalar(n);
	int k;
	for (k = 0; k < NKINDS; k++)
		if (strcmp(kind_names[k], s) == 0)
			return k;
	bad(n, "unknown event kind '%s'", s);
}

static int
cpu_of(const yaml_node_t *n)
{
	uint64_t c = u64_of(n);
	if (c >= (uint64_t)S.cpus)
		bad(n, "CPU %llu, but the machine has %d CPUs", (unsigned long long)c, S.cpus);
	return (int)c;
}

static uint32_t
tid_of(const yaml_node_t *n)
{
	uint64_t t = u64_of(n);
	if (!thread_by_tid((uint32_t)t))
		bad(n, "thread %llu is not declared under any process", (unsigned long long)t);
	return (uint32_t)t;
}

static int
name_index(const yaml_node_t *n, const char *const *names, int count)
{
	const char *s = scalar(n);
	int i;
	for (i = 0; i < count; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return (int)u64_of(n);
}

/* ---------- parsing the scenario ---------- */


/*
 * timegm() for a broken-down UTC time (timegm is not in POSIX 2008):
 * days since 1970-01-01 by the proleptic Gregorian calendar, counted
 * from March so that the leap day ends the year.
 */
static int64_t
utc_seconds(const struct tm *tm)
{
	int64_t m = tm->tm_mon + 1;
	int64_t y = (int64_t)tm->tm_year + 1900 - (m <= 2);
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;			/* [0, 399] */
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + tm->tm_mday - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = era * 146097 + doe - 719468;	/* 719468: 0000-03-01 to 1970-01-01 */

	return days * 86400 + tm->tm_hour * 3600 + tm->tm_min * 60 + tm->tm_sec;
}
static uint64_t
parse_utc(const yaml_node_t *n)
{
	const char *s = scalar(n);
	struct tm tm;
	double frac = 0;
	char *rest;
	time_t t;

	memset(&tm, 0, sizeof tm);
	rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		bad(n, "'%s' is not YYYY-MM-DDTHH:MM:SS[.fff]Z", s);
	if (*rest == '.') {
		frac = strtod(rest, &rest);
	}
	if (*rest == 'Z')
		rest++;
	if (*rest)
		bad(n, "'%s' is not YYYY-MM-DDTHH:MM:SS[.fff]Z", s);
	t = utc_seconds(&tm);
	return (uint64_t)(t + 11644473600LL) * 10000000ull + (uint64_t)llround(frac * 1e7);
}

static void
parse_machine(const yaml_node_t *m)
{
	static const char *const keys[] = {"cpus", "pointer_size", "os_version", "os_build",
	    "clock_freq", "cpu_mhz", "start_utc", "boot_utc", "start_qpc", "duration_ms",
	    "sample_interval_ms", "buffer_size", "compress", "stacks", "seed", "events_lost",
	    "buffers_lost", "logger_name", "rundown_pid", "rundown_tid", "rundown_end_tid", "stack_key_cache", NULL};
	const char *v;
	unsigned a, b, c, d;
	yaml_node_t *n;

	if (!m)
		bad(node(1), "the scenario needs a machine: section");
	check_keys(m, keys);
	if (!get(m, "cpus") || !get(m, "duration_ms"))
		bad(m, "machine: needs cpus and duration_ms");
	S.cpus = (int)u64_or(m, "cpus", 1);
	if (S.cpus < 1 || S.cpus > 1024)
		bad(get(m, "cpus"), "cpus must be 1..1024");
	if (!S.psize)
		S.psize = (int)u64_or(m, "pointer_size", 8);
	if (S.psize != 4 && S.psize != 8)
		bad(get(m, "pointer_size"), "pointer_size must be 4 or 8");
	v = str_or(m, "os_version", "10.0.0.0");
	if (sscanf(v, "%u.%u.%u.%u", &a, &b, &c, &d) != 4 || a > 255 || b > 255 || c > 255 || d > 255)
		bad(get(m, "os_version"), "os_version is four numbers 0-255, e.g. 10.0.1.5");
	S.version[0] = (uint8_t)a;
	S.version[1] = (uint8_t)b;
	S.version[2] = (uint8_t)c;
	S.version[3] = (uint8_t)d;
	S.os_build = (uint32_t)u64_or(m, "os_build", 17763);
	S.freq = u64_or(m, "clock_freq", 10000000);
	if (S.freq < 1000 || S.freq > 10000000000ull)
		bad(get(m, "clock_freq"), "clock_freq out of range");
	S.cpu_mhz = (uint32_t)u64_or(m, "cpu_mhz", 2600);
	S.start_ft = (n = get(m, "start_utc")) ? parse_utc(n) : 132591024000000000ull;
	S.boot_ft = (n = get(m, "boot_utc")) ? parse_utc(n) : S.start_ft - 36000000000ull;
	S.start_qpc = u64_or(m, "start_qpc", 36000ull * S.freq);
	S.duration = time_or(m, "duration_ms", 0);
	if (S.duration <= 0)
		bad(get(m, "duration_ms"), "duration_ms must be positive");
	S.interval_ms = num_or(m, "sample_interval_ms", 1);
	if (S.interval_ms < 0.0001 || S.interval_ms > 1000)
		bad(get(m, "sample_interval_ms"), "sample_interval_ms out of range");
	S.buffer_size = (uint32_t)u64_or(m, "buffer_size", 65536);
	if (S.buffer_size < 4096 || S.buffer_size > 1048576 || S.buffer_size % 1024)
		bad(get(m, "buffer_size"), "buffer_size must be a multiple of 1024, 4 KiB to 1 MiB");
	if (S.compress < 0)
		S.compress = bool_or(m, "compress", 0);
	if (S.stack_mode < 0) {
		v = str_or(m, "stacks", "full");
		S.stack_mode = !strcmp(v, "full") ? 0 : !strcmp(v, "keys") ? 1 : !strcmp(v, "split") ? 2 : -1;
		if (S.stack_mode < 0)
			bad(get(m, "stacks"), "stacks: full, split or keys");
	}
	if (!S.seed)
		S.seed = u64_or(m, "seed", 1);
	S.events_lost = (uint32_t)u64_or(m, "events_lost", 0);
	S.buffers_lost = (uint32_t)u64_or(m, "buffers_lost", 0);
	S.logger_name = xstrdup(str_or(m, "logger_name", "NT Kernel Logger"));
	S.rundown_pid = (uint32_t)u64_or(m, "rundown_pid", 0);
	S.rundown_tid = (uint32_t)u64_or(m, "rundown_tid", 0);
	S.rundown_end_tid = (uint32_t)u64_or(m, "rundown_end_tid", S.rundown_tid);
	if (S.key_cache < 0)
		S.key_cache = (int)u64_or(m, "stack_key_cache", 0);
	if (S.key_cache > 1000000)
		bad(get(m, "stack_key_cache"), "stack_key_cache too large");
}

/*
 * One scenario serves both pointer sizes: in a 32-bit trace a 64-bit
 * address is folded into the 32-bit space, kernel ones above 2 GiB.
 */
static uint64_t
fit_pointer(uint64_t a)
{
	if (S.psize == 8 || a < 0x100000000ull)
		return a;
	if (a >= 0xFFFF800000000000ull)
		return 0x80000000ull | (a & 0x7FFFFFFFull);
	return a & 0x7FFFFFFFull;
}

static const char *
basename_of(const char *path)
{
	const char *s = path + strlen(path);
	while (s > path && s[-1] != '\\' && s[-1] != '/')
		s--;
	return s;
}

static void
parse_image(struct proc *p, struct image *im, const yaml_node_t *n)
{
	static const char *const keys[] = {"path", "base", "size", "checksum", "timestamp",
	    "image_timestamp", "original_name", "pdb", "guid", "age", "load_ms", "unload_ms", NULL};
	yaml_node_t *g;

	check_keys(n, keys);
	if (!get(n, "path") || !get(n, "base") || !get(n, "size"))
		bad(n, "an image needs path, base and size");
	im->path = xstrdup(str_or(n, "path", ""));
	im->name = xstrdup(basename_of(im->path));
	im->base = fit_pointer(u64_or(n, "base", 0));
	im->size = u64_or(n, "size", 0);
	if (!im->size || (S.psize == 4 && (im->base + im->size > 0x100000000ull)) ||
	    im->base + im->size < im->base)
		bad(n, "image %s: base/size do not fit the pointer size", im->name);
	im->checksum = (uint32_t)u64_or(n, "checksum", 0);
	im->timestamp = (uint32_t)u64_or(n, "timestamp", 0);
	im->image_timestamp = (uint32_t)u64_or(n, "image_timestamp", im->timestamp);
	im->original = xstrdup(str_or(n, "original_name", im->name));
	im->pdb = get(n, "pdb") ? xstrdup(str_or(n, "pdb", "")) : NULL;
	if ((g = get(n, "guid")) != NULL) {
		const char *s = scalar(g);
		size_t i;
		if (etlw_parse_guid(s, im->guid) < 0)
			bad(g, "'%s' is not a GUID", s);
		snprintf(im->guidtext, sizeof im->guidtext, "%s", s[0] == '{' ? s + 1 : s);
		for (i = 0; im->guidtext[i]; i++) {
			if (im->guidtext[i] == '}')
				im->guidtext[i] = '\0';
			else if (im->guidtext[i] >= 'A' && im->guidtext[i] <= 'F')
				im->guidtext[i] = (char)(im->guidtext[i] - 'A' + 'a');
		}
	}
	im->age = (uint32_t)u64_or(n, "age", 1);
	im->load = time_or(n, "load_ms", NONE);
	im->unload = time_or(n, "unload_ms", NONE);
	im->proc = p;
}

static void
add_thread(struct proc *p, uint32_t tid, int idle_cpu)
{
	struct thread *t;

	S.thr = xrealloc(S.thr, (size_t)(S.nthr + 1) * sizeof *S.thr);
	t = &S.thr[S.nthr++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->proc = p;
	t->start = t->end = NONE;
	t->idle_cpu = idle_cpu;
	t->prio = idle_cpu >= 0 ? 0 : 8;
}

static void
parse_processes(const yaml_node_t *list)
{
	static const char *const keys[] = {"name", "pid", "parent", "session", "cmdline",
	    "start_ms", "end_ms", "exit", "images", "threads", NULL};
	static const char *const tkeys[] = {"tid", "start_addr", "name", "prio", "start_ms",
	    "end_ms", NULL};
	int i, j, np = seq_len(list), have_idle = 0, have_system = 0;
	yaml_node_t *idle_tn = NULL;

	S.procs = xcalloc((size_t)np + 2, sizeof *S.procs);
	for (i = 0; i < np; i++) {
		yaml_node_t *n = seq_at(list, i), *imgs, *thr;
		struct proc *p = &S.procs[S.nproc++];
		check_keys(n, keys);
		if (!get(n, "name") || !get(n, "pid"))
			bad(n, "a process needs name and pid");
		p->name = xstrdup(str_or(n, "name", ""));
		p->pid = (uint32_t)u64_or(n, "pid", 0);
		for (j = 0; j < S.nproc - 1; j++)
			if (S.procs[j].pid == p->pid)
				bad(n, "pid %u declared twice", p->pid);
		p->parent = (uint32_t)u64_or(n, "parent", 0);
		p->session = (uint32_t)u64_or(n, "session", p->pid <= 4 ? 0xFFFFFFFFu : 0);
		p->cmdline = xstrdup(str_or(n, "cmdline", ""));
		p->start = time_or(n, "start_ms", NONE);
		p->end = time_or(n, "end_ms", NONE);
		p->exit = (uint32_t)u64_or(n, "exit", 0);
		imgs = get(n, "images");
		p->nimg = seq_len(imgs);
		p->img = xcalloc((size_t)p->nimg + 1, sizeof *p->img);
		for (j = 0; j < p->nimg; j++)
			parse_image(p, &p->img[j], seq_at(imgs, j));
		if (p->pid == 0)
			have_idle = 1;
		if (p->pid == 4)
			have_system = 1;
		(void)thr;
	}
	if (!have_idle) {
		struct proc *p = &S.procs[S.nproc++];
		p->name = xstrdup("Idle");
		p->cmdline = xstrdup("");
		p->session = 0xFFFFFFFFu;
		p->start = p->end = NONE;
	}
	if (!have_system) {
		struct proc *p = &S.procs[S.nproc++];
		p->name = xstrdup("System");
		p->cmdline = xstrdup("");
		p->pid = 4;
		p->session = 0xFFFFFFFFu;
		p->start = p->end = NONE;
	}
	for (i = 0; i < S.nproc; i++)
		S.procs[i].key = (S.psize == 8 ? 0xFFFFFA8001000000ull : 0x84000000ull) + 0x1000ull * (uint64_t)i;
	/* threads: the idle threads (tid 0, one per CPU) and the declared ones */
	for (i = 0; i < S.cpus; i++)
		add_thread(proc_by_pid(0), 0, i);
	for (i = 0; i < np; i++) {
		yaml_node_t *n = seq_at(list, i), *thr = get(n, "threads");
		struct proc *p = &S.procs[i];
		for (j = 0; j < seq_len(thr); j++) {
			yaml_node_t *tn = seq_at(thr, j);
			uint32_t tid;
			struct thread *t;
			check_keys(tn, tkeys);
			if (!get(tn, "tid"))
				bad(tn, "a thread needs tid");
			tid = (uint32_t)u64_of(get(tn, "tid"));
			if (tid == 0 && p->pid == 0) {
				idle_tn = tn;	/* settings for every CPU's idle thread */
				continue;
			}
			if (tid == 0 || thread_by_tid(tid))
				bad(tn, "tid %u is 0 or declared twice", tid);
			add_thread(p, tid, -1);
			t = &S.thr[S.nthr - 1];
			t->name = get(tn, "name") ? xstrdup(str_or(tn, "name", "")) : NULL;
			t->prio = (int)u64_or(tn, "prio", 8);
			t->start = time_or(tn, "start_ms", NONE);
			t->end = time_or(tn, "end_ms", NONE);
		}
	}
	/* now that all images are known, start addresses can be frames */
	for (i = 0; i < np; i++) {
		yaml_node_t *thr = get(seq_at(list, i), "threads");
		for (j = 0; j < seq_len(thr); j++) {
			yaml_node_t *tn = seq_at(thr, j), *sa = get(tn, "start_addr");
			struct thread *t = thread_by_tid((uint32_t)u64_of(get(tn, "tid")));
			if (sa && tn != idle_tn)
				t->start_addr = frame_addr(sa, t->proc->pid);
		}
	}
	if (idle_tn && get(idle_tn, "start_addr")) {
		uint64_t a = frame_addr(get(idle_tn, "start_addr"), 0);
		for (i = 0; i < S.nthr; i++)
			if (S.thr[i].idle_cpu >= 0)
				S.thr[i].start_addr = a;
	}
	for (i = 0; i < S.nthr; i++) {
		struct proc *p = S.thr[i].proc;
		p->thr = xrealloc(p->thr, (size_t)(p->nthr + 1) * sizeof *p->thr);
		p->thr[p->nthr++] = &S.thr[i];
	}
	/* images built with PDBs take the PDB's identity */
	for (i = 0; i < S.nproc; i++)
		for (j = 0; j < S.procs[i].nimg; j++) {
			struct image *im = &S.procs[i].img[j];
			int k;
			for (k = 0; k < nsymimgs; k++)
				if (strcasecmp(symimgs[k].module, im->name) == 0) {
					im->pdb = symimgs[k].pdb;
					memcpy(im->guid, symimgs[k].guid, 16);
					memcpy(im->guidtext, symimgs[k].guidtext, sizeof im->guidtext);
					im->age = symimgs[k].age;
				}
		}
}

/* ---------- explicit events ---------- */

static int
isdpc(int k)
{
	return k == K_DPC || k == K_TDPC || k == K_TIMERDPC || k == K_ISR;
}

static void
set_routine(struct gev *e, const yaml_node_t *n, const yaml_node_t *rt)
{
	if (!rt)
		bad(n, "%s needs a routine", kind_names[e->kind]);
	e->addr = frame_addr(rt, 4);
}

static void
set_duration(struct gev *e, const yaml_node_t *dn)
{
	int64_t d;
	if (!dn)
		bad(NULL, "a DPC/ISR needs duration_us");
	d = (int64_t)llround(num_of(dn) * (double)S.freq / 1e6);
	if (d < 0)
		bad(dn, "negative duration");
	e->t = e->t0 + d;
}

static void
parse_events(const yaml_node_t *list)
{
	static const char *const keys[] = {"kind", "t_ms", "cpu", "tid", "stack", "ip", "prio",
	    "count", "dpc", "isr", "routine", "duration_us", "vector", "msi", "message", "ret",
	    "new_tid", "old_tid", "new_prio", "old_prio", "wait_reason", "wait_mode", "old_state",
	    "wait_time", "header", "ready_tid", "adjust_reason", "adjust_incr", "flags",
	    "events", "buffers", "interval_ms", NULL};
	int i;

	for (i = 0; i < seq_len(list); i++) {
		yaml_node_t *n = seq_at(list, i);
		int kind, cpu;
		struct gev *e;
		struct thread *t;

		check_keys(n, keys);
		if (!get(n, "kind") || !get(n, "t_ms") || !get(n, "cpu"))
			bad(n, "an event needs kind, t_ms and cpu");
		kind = kind_of(get(n, "kind"));
		cpu = cpu_of(get(n, "cpu"));
		e = add_event(kind, cpu, time_or(n, "t_ms", 0));
		switch (kind) {
		case K_SAMPLE:
			e->a[0] = get(n, "tid") ? tid_of(get(n, "tid")) : 0;
			t = thread_by_tid(e->a[0]);
			e->a[1] = (uint32_t)u64_or(n, "prio", (uint64_t)t->prio);
			e->a[2] = (uint32_t)u64_or(n, "count", 1);
			e->a[3] = (uint32_t)(bool_or(n, "dpc", 0) | bool_or(n, "isr", 0) << 1);
			if (e->a[1] > 31 || e->a[2] < 1 || e->a[2] > 65535)
				bad(n, "prio is 0..31, count 1..65535");
			if (get(n, "stack")) {
				e->stack = make_stack(get(n, "stack"), t->proc->pid);
				e->addr = e->stack->addr[e->stack->n - 1];
			} else if (get(n, "ip"))
				e->addr = frame_addr(get(n, "ip"), t->proc->pid);
			else
				bad(n, "a Sample needs a stack or an ip");
			break;
		case K_DPC: case K_TDPC: case K_TIMERDPC: case K_ISR:
			e->t0 = e->t;
			set_routine(e, n, get(n, "routine"));
			set_duration(e, get(n, "duration_us"));
			e->a[0] = (uint32_t)u64_or(n, "vector", 0);
			e->a[1] = (uint32_t)bool_or(n, "msi", 0);
			e->a[2] = (uint32_t)u64_or(n, "message", 0);
			e->a[3] = (uint32_t)u64_or(n, "ret", 1);
			if (e->a[0] > 0xFFFF || e->a[3] > 255)
				bad(n, "vector is 0..65535, ret 0..255");
			break;
		case K_CSWITCH:
			if (!get(n, "new_tid") || !get(n, "old_tid"))
				bad(n, "CSwitch needs new_tid and old_tid");
			e->a[0] = tid_of(get(n, "new_tid"));
			e->a[1] = tid_of(get(n, "old_tid"));
			e->a[2] = (uint32_t)u64_or(n, "new_prio", (uint64_t)thread_by_tid(e->a[0])->prio);
			e->a[3] = (uint32_t)u64_or(n, "old_prio", (uint64_t)thread_by_tid(e->a[1])->prio);
			e->a[4] = (uint32_t)(get(n, "wait_reason") ? name_index(get(n, "wait_reason"), wait_reasons, NWAIT) : 6);
			e->a[4] |= (uint32_t)(get(n, "old_state") ? name_index(get(n, "old_state"), thread_states, 8) : 5) << 8;
			e->a[4] |= (uint32_t)(strcmp(str_or(n, "wait_mode", "kernel"), "user") == 0) << 16;
			e->a[4] |= (uint32_t)(strcmp(str_or(n, "header", "compact"), "full") == 0) << 17;
			e->a[5] = (uint32_t)u64_or(n, "wait_time", 0);
			if ((e->a[4] & 0xFF) >= (uint32_t)NWAIT || ((e->a[4] >> 8) & 0xFF) > 7 ||
			    e->a[2] > 31 || e->a[3] > 31)
				bad(n, "CSwitch: wait_reason/old_state/priority out of range");
			break;
		case K_READY:
			if (!get(n, "tid") || !get(n, "ready_tid"))
				bad(n, "ReadyThread needs tid (the readying thread) and ready_tid");
			e->a[0] = tid_of(get(n, "tid"));
			e->a[1] = tid_of(get(n, "ready_tid"));
			e->a[2] = (uint32_t)i64_or(n, "adjust_reason", -128, 127, 0) & 0xFF;
			e->a[3] = (uint32_t)i64_or(n, "adjust_incr", -128, 127, 0) & 0xFF;
			e->a[4] = (uint32_t)i64_or(n, "flags", -128, 127, 0) & 0xFF;
			e->a[5] = strcmp(str_or(n, "header", "compact"), "full") == 0;
			break;
		case K_LOST:
			e->a[0] = (uint32_t)u64_or(n, "events", get(n, "buffers") ? 0 : 1);
			e->a[1] = (uint32_t)u64_or(n, "buffers", 0);
			if (e->a[1] > 1000)
				bad(n, "at most 1000 lost buffers");
			S.lost_total += e->a[0];
			S.lost_buffers += e->a[1];
			break;
		case K_INTERVAL:
			e->a[0] = (uint32_t)llround(num_or(n, "interval_ms", 1) * 10000);
			break;
		default:
			bad(n, "%s events come from processes: or samples, not events:", kind_names[kind]);
		}
	}
}

/* ---------- generators ---------- */

struct wstack {
	double w;
	struct rstack *st;
	uint32_t tid;
	int prio;
};

struct gen {
	int kind;
	struct wstack *ws;
	int nws;
	double wsum;
};

static int
parse_cpus(const yaml_node_t *n, int *cpus)
{
	int k = 0, i;

	if (!n || (n->type == YAML_SCALAR_NODE && strcmp(scalar(n), "all") == 0)) {
		for (i = 0; i < S.cpus; i++)
			cpus[k++] = i;
		return k;
	}
	for (i = 0; i < seq_len(n); i++) {
		int c = cpu_of(seq_at(n, i)), j;
		for (j = 0; j < k; j++)
			if (cpus[j] == c)
				bad(seq_at(n, i), "CPU %d listed twice", c);
		cpus[k++] = c;
	}
	if (!k)
		bad(n, "empty CPU list");
	return k;
}

/* stacks: [{weight, tid, stack, prio}] or stack: (one). */
static void
parse_weighted(struct gen *g, const yaml_node_t *n, uint32_t dflt_tid)
{
	static const char *const keys[] = {"weight", "tid", "stack", "prio", NULL};
	yaml_node_t *list = get(n, "stacks"), *one = get(n, "stack");
	int i;

	if (list && one)
		bad(n, "give stack: or stacks:, not both");
	if (one) {
		g->ws = xcalloc(1, sizeof *g->ws);
		g->nws = 1;
		g->ws[0].w = 1;
		g->ws[0].tid = get(n, "tid") ? tid_of(get(n, "tid")) : dflt_tid;
		g->ws[0].prio = (int)u64_or(n, "prio", (uint64_t)thread_by_tid(g->ws[0].tid)->prio);
		g->ws[0].st = make_stack(one, thread_by_tid(g->ws[0].tid)->proc->pid);
		g->wsum = 1;
		return;
	}
	g->nws = seq_len(list);
	g->ws = xcalloc((size_t)g->nws + 1, sizeof *g->ws);
	for (i = 0; i < g->nws; i++) {
		yaml_node_t *e = seq_at(list, i);
		struct wstack *w = &g->ws[i];
		check_keys(e, keys);
		w->w = num_or(e, "weight", 1);
		if (w->w <= 0)
			bad(e, "weight must be positive");
		w->tid = get(e, "tid") ? tid_of(get(e, "tid")) : (get(n, "tid") ? tid_of(get(n, "tid")) : dflt_tid);
		w->prio = (int)u64_or(e, "prio", (uint64_t)thread_by_tid(w->tid)->prio);
		w->st = get(e, "stack") ? make_stack(get(e, "stack"), thread_by_tid(w->tid)->proc->pid) : NULL;
		g->wsum += w->w;
	}
}

static struct wstack *
pick(const struct gen *g)
{
	double r = rng_unit() * g->wsum;
	int i;

	if (!g->nws)
		return NULL;
	for (i = 0; i < g->nws - 1; i++) {
		r -= g->ws[i].w;
		if (r < 0)
			break;
	}
	return &g->ws[i];
}

/* DPC/ISR generator: COUNT routines spread over CPUS, no overlap on a CPU. */
static void
gen_dpc(const yaml_node_t *n, int kind)
{
	int cpus[1024], nc = parse_cpus(get(n, "cpus"), cpus), i, c;
	uint64_t count = u64_or(n, "count", 0);
	int64_t from = time_or(n, "from_ms", 0), to = time_or(n, "to_ms", S.duration);
	yaml_node_t *dn = get(n, "duration_us"), *rt = get(n, "routine");
	double mean, sd, lo, hi;
	struct gen g;
	uint64_t routine;
	uint32_t a[6];

	memset(&g, 0, sizeof g);
	a[0] = (uint32_t)u64_or(n, "vector", 0);
	a[1] = (uint32_t)bool_or(n, "msi", 0);
	a[2] = (uint32_t)u64_or(n, "message", 0);
	a[3] = (uint32_t)u64_or(n, "ret", 1);
	a[4] = a[5] = 0;
	if (a[0] > 0xFFFF || a[3] > 255)
		bad(n, "vector is 0..65535, ret 0..255");
	if (!rt || !dn || !count)
		bad(n, "a %s generator needs routine, count and duration_us", kind_names[kind]);
	routine = frame_addr(rt, 4);
	if (dn->type == YAML_MAPPING_NODE) {
		static const char *const dk[] = {"mean", "jitter", "min", "max", NULL};
		check_keys(dn, dk);
		mean = num_or(dn, "mean", 0);
		sd = num_or(dn, "jitter", 0);
		lo = num_or(dn, "min", mean > 3 * sd ? mean - 3 * sd : mean / 4);
		hi = num_or(dn, "max", mean + 3 * sd);
	} else {
		mean = num_of(dn);
		sd = 0;
		lo = hi = mean;
	}
	if (mean <= 0 || lo < 0 || hi < lo)
		bad(dn, "duration_us: mean must be positive and min <= max");
	if (to <= from)
		bad(n, "to_ms must be after from_ms");
	parse_weighted(&g, n, 0);
	for (c = 0; c < nc; c++) {
		uint64_t k = count / (uint64_t)nc + ((uint64_t)c < count % (uint64_t)nc);
		int64_t *dur, busy = 0;
		double *gap, gsum = 0, acc = 0;
		if (!k)
			continue;
		dur = xmalloc(k * sizeof *dur);
		gap = xmalloc((k + 1) * sizeof *gap);
		for (i = 0; (uint64_t)i < k; i++) {
			double us = mean + sd * rng_gauss();
			us = us < lo ? lo : us > hi ? hi : us;
			dur[i] = (int64_t)llround(us * (double)S.freq / 1e6);
			if (dur[i] < 1)
				dur[i] = 1;
			busy += dur[i];
		}
		if (busy + (int64_t)k + 1 > to - from)
			bad(n, "%llu %s of ~%.1f us do not fit %.3f ms on one CPU",
			    (unsigned long long)k, kind_names[kind], mean, (double)(to - from) * 1000 / (double)S.freq);
		for (i = 0; (uint64_t)i <= k; i++) {
			gap[i] = -log(1 - rng_unit());
			gsum += gap[i];
		}
		/* free time is cut into k+1 random gaps; 1 tick kept between neighbours */
		{
			int64_t free_ticks = to - from - busy - (int64_t)k - 1, before = 0;
			for (i = 0; (uint64_t)i < k; i++) {
				struct wstack *w = pick(&g);
				struct gev *e = add_event(kind, cpus[c], 0);
				acc += gap[i];
				e->gen = 1;
				e->t0 = from + (int64_t)floor(acc / gsum * (double)free_ticks) + before + 1;
				e->t = e->t0 + dur[i];
				e->addr = routine;
				memcpy(e->a, a, sizeof a);
				e->a[4] = w ? w->tid : 0;
				e->a[5] = w ? (uint32_t)w->prio : 0;
				e->stack = w ? w->st : NULL;
				before += dur[i] + 1;
			}
		}
		free(dur);
		free(gap);
	}
	free(g.ws);
}

static int
cmp_interval(const void *a, const void *b)
{
	const struct gev *x = *(struct gev *const *)a, *y = *(struct gev *const *)b;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* DPC/ISR intervals per CPU, sorted; generated ones moved so none overlap. */
struct ivl {
	int cpu, kind;
	int64_t t0, t;
	uint32_t tid, prio;
	struct rstack *st;
};
static struct ivl *dpcs;
static size_t ndpcs;

static void
settle_dpcs(void)
{
	struct gev **v = xmalloc((S.nev + 1) * sizeof *v);
	size_t i, n = 0;

	for (i = 0; i < S.nev; i++)
		if (isdpc(S.ev[i].kind))
			v[n++] = &S.ev[i];
	qsort(v, n, sizeof *v, cmp_interval);
	for (i = 1; i < n; i++) {
		struct gev *p = v[i - 1], *e = v[i];
		if (p->cpu == e->cpu && e->gen && e->t0 <= p->t) {
			int64_t shift = p->t + 1 - e->t0;
			e->t0 += shift;
			e->t += shift;
		}
	}
	/* copies: S.ev moves when samples are added */
	dpcs = xcalloc(n + 1, sizeof *dpcs);
	for (i = 0; i < n; i++) {
		dpcs[i].cpu = v[i]->cpu;
		dpcs[i].kind = v[i]->kind;
		dpcs[i].t0 = v[i]->t0;
		dpcs[i].t = v[i]->t;
		dpcs[i].tid = v[i]->a[4];
		dpcs[i].prio = v[i]->a[5];
		dpcs[i].st = v[i]->stack;
	}
	ndpcs = n;
	free(v);
}

/* Which thread runs on a CPU when (from generated context switches). */
struct run {
	int cpu;
	int64_t t;
	uint32_t tid;
};
static struct run *runs;
static size_t nruns, capruns;

static int
cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	return x->t < y->t ? -1 : x->t > y->t;
}

static uint32_t
running(int cpu, int64_t t)
{
	size_t lo = 0, hi = nruns;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (runs[mid].cpu < cpu || (runs[mid].cpu == cpu && runs[mid].t <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && runs[lo - 1].cpu == cpu ? runs[lo - 1].tid : 0;
}

static int64_t
draw_ms(const yaml_node_t *n, const char *key, double dmean, double djit)
{
	yaml_node_t *d = get(n, key);
	double mean = dmean, jit = djit, v;

	if (d && d->type == YAML_MAPPING_NODE) {
		mean = num_or(d, "mean", dmean);
		jit = num_or(d, "jitter", 0);
	} else if (d) {
		mean = num_of(d);
		jit = 0;
	}
	if (mean <= 0 || jit < 0)
		bad(d ? d : n, "%s: mean must be positive", key);
	v = mean + jit * rng_gauss();
	if (v < mean / 10)
		v = mean / 10;
	return ms_to_ticks(v) > 2 ? ms_to_ticks(v) : 2;
}

/*
 * CSwitch generator: on each CPU its share of THREADS (dealt round robin,
 * so a thread never runs on two CPUs) alternates with the idle thread:
 * run a quantum, wait (WrQueue, user mode), idle, then the next thread is
 * readied (ReadyThread by READY_BY, when given) and switched in.
 */
static void
gen_cswitch(const yaml_node_t *n)
{
	int cpus[1024], nc = parse_cpus(get(n, "cpus"), cpus), c, i, nt;
	int64_t from = time_or(n, "from_ms", 0), to = time_or(n, "to_ms", S.duration);
	yaml_node_t *tl = get(n, "threads");
	uint32_t *tids, by = get(n, "ready_by") ? tid_of(get(n, "ready_by")) : 0;

	nt = seq_len(tl);
	if (!nt)
		bad(n, "a CSwitch generator needs threads: [TID, ...]");
	tids = xmalloc((size_t)nt * sizeof *tids);
	for (i = 0; i < nt; i++) {
		tids[i] = tid_of(seq_at(tl, i));
		if (tids[i] == 0)
			bad(seq_at(tl, i), "the idle thread takes turns by itself; list other threads");
	}
	for (c = 0; c < nc; c++) {
		int cpu = cpus[c], k = 0, mine = 0;
		int64_t t = from + 1;
		for (i = c; i < nt; i += nc)
			mine++;
		if (!mine)
			continue;
		while (t < to) {
			uint32_t tid = tids[c + nc * (k++ % mine)];
			struct thread *th = thread_by_tid(tid);
			int64_t idle = draw_ms(n, "idle_ms", 1, 0.5), q = draw_ms(n, "quantum_ms", 2, 1);
			struct gev *e;
			if (t + idle + q >= to)
				break;
			t += idle;
			if (by) {
				e = add_event(K_READY, cpu, t - 1);
				e->a[0] = by;
				e->a[1] = tid;
				e->a[2] = 1;		/* AdjustReason: unwait */
				e->a[3] = 1;		/* priority boost */
				e->gen = 1;
			}
			e = add_event(K_CSWITCH, cpu, t);
			e->a[0] = tid;
			e->a[1] = 0;
			e->a[2] = (uint32_t)th->prio;
			e->a[3] = 0;
			e->a[4] = 0u | 1u << 8;			/* Executive, old state Ready */
			e->a[5] = (uint32_t)((idle * 1000) / (int64_t)S.freq);	/* ms waited */
			e->gen = 1;
			if (nruns + 2 > capruns) {
				capruns = capruns ? capruns * 2 : 1024;
				runs = xrealloc(runs, capruns * sizeof *runs);
			}
			runs[nruns++] = (struct run){cpu, t, tid};
			t += q;
			e = add_event(K_CSWITCH, cpu, t);
			e->a[0] = 0;
			e->a[1] = tid;
			e->a[2] = 0;
			e->a[3] = (uint32_t)th->prio;
			e->a[4] = 15u | 5u << 8 | 1u << 16;	/* WrQueue, Waiting, user mode */
			e->a[5] = 0;
			e->gen = 1;
			runs[nruns++] = (struct run){cpu, t, 0};
		}
	}
	free(tids);
	qsort(runs, nruns, sizeof *runs, cmp_run);
}

/* Sample generator: every interval on each CPU, from a weighted set. */
static void
gen_samples(const yaml_node_t *n)
{
	int cpus[1024], nc = parse_cpus(get(n, "cpus"), cpus), c;
	int64_t from = time_or(n, "from_ms", 0), to = time_or(n, "to_ms", S.duration);
	int64_t step = ms_to_ticks(num_or(n, "interval_ms", S.interval_ms));
	struct gen g;
	size_t di = 0;
	int follow = bool_or(n, "running", 0);

	memset(&g, 0, sizeof g);
	if (step < 1)
		bad(n, "interval too small for the clock");
	parse_weighted(&g, n, 0);
	if (!g.nws)
		bad(n, "a Sample generator needs stacks");
	for (c = 0; c < nc; c++) {
		int cpu = cpus[c];
		/* CPUs' timer interrupts are not simultaneous: spread them */
		int64_t t = from + (step * cpu) / (S.cpus + 1) + 1;
		while (di > 0 && dpcs[di - 1].cpu >= cpu)
			di--;
		while (di < ndpcs && dpcs[di].cpu < cpu)
			di++;
		for (; t < to; t += step) {
			struct wstack *w = pick(&g);
			struct gev *e;
			struct ivl *in = NULL;
			while (di < ndpcs && dpcs[di].cpu == cpu && dpcs[di].t <= t)
				di++;
			if (di < ndpcs && dpcs[di].cpu == cpu && dpcs[di].t0 <= t)
				in = &dpcs[di];
			if (follow) {
				/* the stack of the thread the context switches put there */
				uint32_t tid = running(cpu, t);
				double sum = 0, r;
				int k;
				for (k = 0; k < g.nws; k++)
					if (g.ws[k].tid == tid)
						sum += g.ws[k].w;
				if (sum <= 0)
					bad(n, "running: no stack for thread %u, which runs on CPU %d at %.3f ms",
					    tid, cpu, (double)t * 1000 / (double)S.freq);
				r = rng_unit() * sum;
				for (k = 0; k < g.nws; k++)
					if (g.ws[k].tid == tid && (r -= g.ws[k].w) < 0)
						break;
				w = &g.ws[k < g.nws ? k : g.nws - 1];
				while (w->tid != tid)
					w--;
			}
			e = add_event(K_SAMPLE, cpu, t);
			if (in && in->st) {
				/* the DPC's stack, charged to the thread it interrupted */
				e->a[0] = in->tid;
				e->a[1] = in->prio;
				e->a[3] = in->kind == K_ISR ? 2 : 1;
				e->stack = in->st;
			} else {
				/* a DPC without a stack: the interrupted thread's, flagged */
				if (in)
					e->a[3] = in->kind == K_ISR ? 2 : 1;
				e->a[0] = w->tid;
				e->a[1] = (uint32_t)w->prio;
				e->stack = w->st;
			}
			if (!e->stack)
				bad(n, "the sample stacks need a stack each");
			e->a[2] = 1;
			e->addr = e->stack->addr[e->stack->n - 1];
			e->gen = 1;
		}
	}
	free(g.ws);
}

static void
parse_generators(const yaml_node_t *list)
{
	static const char *const keys[] = {"kind", "cpus", "count", "from_ms", "to_ms", "routine",
	    "duration_us", "stack", "stacks", "tid", "prio", "vector", "msi", "message", "ret",
	    "interval_ms", "threads", "quantum_ms", "idle_ms", "ready_by", "running", NULL};
	int i, pass;

	/* DPCs and ISRs first: samples need to know which of them they fall into */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < seq_len(list); i++) {
			yaml_node_t *n = seq_at(list, i);
			int kind;
			check_keys(n, keys);
			if (!get(n, "kind"))
				bad(n, "a generator needs kind");
			kind = kind_of(get(n, "kind"));
			if (pass == 0 && isdpc(kind))
				gen_dpc(n, kind);
			else if (pass == 0 && kind == K_CSWITCH)
				gen_cswitch(n);
			else if (pass == 1 && kind == K_SAMPLE)
				gen_samples(n);
			else if (!isdpc(kind) && kind != K_SAMPLE && kind != K_CSWITCH)
				bad(n, "no generator for %s (DPC, ThreadedDPC, TimerDPC, ISR, CSwitch, Sample)",
				    kind_names[kind]);
		}
		if (pass == 0)
			settle_dpcs();
	}
}

/* Process/thread/image start, end and rundown events. */
static void
lifecycle_events(int64_t end)
{
	int64_t t = 1, te = end;
	int i, j;

	for (i = 0; i < S.nproc; i++) {
		struct proc *p = &S.procs[i];
		struct gev *e;
		if (p->start == NONE)
			e = add_event(K_PDCSTART, 0, t++);
		else
			e = add_event(K_PSTART, 0, p->start);
		e->obj = p;
		for (j = 0; j < p->nthr; j++) {
			struct thread *th = p->thr[j];
			if (th->start == NONE)
				e = add_event(K_TDCSTART, 0, t++);
			else
				e = add_event(K_TSTART, 0, th->start);
			e->obj = th;
			if (th->end != NONE)
				add_event(K_TEND, 0, th->end)->obj = th;
			else
				add_event(K_TDCEND, 0, te++)->obj = th;
		}
		for (j = 0; j < p->nimg; j++) {
			struct image *im = &p->img[j];
			if (im->load == NONE)
				e = add_event(K_IDCSTART, 0, t++);
			else
				e = add_event(K_ILOAD, 0, im->load);
			e->obj = im;
			if (im->unload != NONE)
				add_event(K_IUNLOAD, 0, im->unload)->obj = im;
			else
				add_event(K_IDCEND, 0, te++)->obj = im;
		}
		if (p->end != NONE)
			e = add_event(K_PEND, 0, p->end);
		else
			e = add_event(K_PDCEND, 0, te++);
		e->obj = p;
	}
	add_event(K_INTERVAL, 0, t++)->a[0] = (uint32_t)llround(S.interval_ms * 10000);
}

/* ---------- writing ---------- */

static int
cmp_time(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const uint8_t imageid_guid[16] = {
	0xd7, 0x75, 0xe6, 0xb3, 0x54, 0x25, 0x18, 0x4f,
	0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde,
};

struct out {
	struct etlw *w;
	struct etlw_rec r;
	struct outbuf *ex;
	uint64_t keynext;
};

static uint64_t
ts(int64_t t)
{
	return S.start_qpc + (uint64_t)t;
}

static void
emit(struct out *o, int cpu)
{
	etlw_rec_finish(&o->r);
	etlw_append(o->w, cpu, o->r.b, o->r.len);
}

/* ticks from the header event -> ns, rounded to the nearest */
static int64_t
tick_ns(int64_t t)
{
	return (int64_t)llroundl((long double)t * 1e9L / (long double)S.freq);
}

/* time column text: ticks -> ms with 6 digits */
static void
fmt_ms(char *buf, int64_t t)
{
	evt_format_time_ns(buf, tick_ns(t));
}

static void
ex_escaped(struct outbuf *ob, const char *s, int in_stack)
{
	size_t n = strlen(s);
	char *p = ob_reserve(ob, 3 * n + 1);
	ob_commit(ob, evt_escape(p, s, n, in_stack));
}

#define ANY (-2)	/* a "*" column */

/* the fixed columns; NAME NULL and ANY ids are written as "*" */
static void
ex_cols(struct out *o, int64_t t, int kind, int cpu, const char *name, long pid, long tid,
    const char *weight)
{
	char tb[40];

	fmt_ms(tb, t);
	ob_printf(o->ex, "%s\t%s\t%d\t", tb, kind_names[kind], cpu);
	if (name)
		ex_escaped(o->ex, name, 0);
	else
		ob_putc(o->ex, '*');
	if (pid == ANY)
		ob_puts(o->ex, "\t*");
	else
		ob_printf(o->ex, "\t%ld", pid);
	if (tid == ANY)
		ob_puts(o->ex, "\t*");
	else
		ob_printf(o->ex, "\t%ld", tid);
	ob_printf(o->ex, "\t%s", weight);
}

static void
ex_head(struct out *o, int64_t t, int kind, int cpu, const struct thread *th, const char *weight)
{
	if (th)
		ex_cols(o, t, kind, cpu, th->proc->name, (long)th->proc->pid, (long)th->tid, weight);
	else
		ex_cols(o, t, kind, cpu, NULL, ANY, ANY, weight);
}

/*
 * The StackWalk records of a sample are events of their own, logged after
 * the sample (header time later, EventTimeStamp = the sample's time):
 * full: one Stack; split: kernel part, then the user part 0.5 ms later (as
 * when the thread returns to user mode); keys: StackKeyKernel/User.  With
 * --user-delay MS, the user part of a sample taken in the kernel comes MS
 * later (split and keys).
 */
enum { PART_ALL, PART_KERNEL, PART_USER };

static void
add_stackwalks(void)
{
	size_t i, n = S.nev;

	for (i = 0; i < n; i++) {
		struct gev s = S.ev[i], *e;
		int nk, nu;
		if (s.kind != K_SAMPLE || !s.stack)
			continue;
		nk = s.stack->nk;
		nu = s.stack->n - nk;
		if (S.stack_mode == 0) {
			e = add_event(K_STACKWALK, s.cpu, s.t + 1);
			e->a[1] = PART_ALL;
		} else {
			if (nk) {
				e = add_event(K_STACKWALK, s.cpu, s.t + 1);
				e->a[1] = PART_KERNEL;
				e->t0 = s.t;
				e->a[0] = s.a[0];
				e->stack = s.stack;
			}
			if (!nu)
				continue;
			e = add_event(K_STACKWALK, s.cpu, s.t + (nk && (S.stack_mode == 2 ||
			    S.user_delay_ms >= 0) ? ms_to_ticks(S.user_delay_ms >= 0 ? S.user_delay_ms : 0.5) +
			    2 : 2));
			e->a[1] = PART_USER;
		}
		e->t0 = s.t;
		e->a[0] = s.a[0];
		e->stack = s.stack;
	}
}

/*
 * With a key cache of N entries (machine: stack_key_cache), keys are
 * handed out as the kernel does: when the cache is full the least recently
 * used key is evicted with a KeyDelete event carrying its frames, and its
 * value is reused for the new stack.  A decoder must resolve each
 * reference with the definition current at its time.
 */
struct kslot {
	struct rstack *st;
	int part;
	uint64_t key, last;
};
static struct kslot *kslots;
static int nkslots;
static uint64_t kclock;

static void
key_frames(struct etlw_rec *r, const struct rstack *st, int part)
{
	int lo = part == PART_KERNEL ? st->n - st->nk : 0;
	int hi = part == PART_USER ? st->n - st->nk : st->n, j;

	for (j = hi - 1; j >= lo; j--)		/* innermost first */
		etlw_ptr(r, st->addr[j]);
}

static uint64_t
key_for(struct out *o, struct rstack *st, int part, int64_t t, int cpu)
{
	int *slot = part == PART_KERNEL ? &st->kslot : &st->uslot, i, victim = 0;
	struct kslot *k;

	if (!S.key_cache)
		return part == PART_KERNEL ? st->kkey : st->ukey;
	if (*slot >= 0) {
		kslots[*slot].last = ++kclock;
		return kslots[*slot].key;
	}
	if (nkslots < S.key_cache) {
		victim = nkslots++;
		kslots[victim].key = (S.psize == 8 ? 0xFFFFFA8003400000ull : 0x88400000ull) + 0x40ull * (uint64_t)(victim + 1);
	} else {
		for (i = 1; i < nkslots; i++)
			if (kslots[i].last < kslots[victim].last)
				victim = i;
		k = &kslots[victim];
		/* logged just before the reference that reuses the key */
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 24, 35, 2, 0, 0, ts(t) - 1);
		etlw_ptr(&o->r, k->key);
		key_frames(&o->r, k->st, k->part);
		emit(o, cpu);
		*(k->part == PART_KERNEL ? &k->st->kslot : &k->st->uslot) = -1;
	}
	k = &kslots[victim];
	k->st = st;
	k->part = part;
	k->last = ++kclock;
	*slot = victim;
	return k->key;
}

static void
write_stackwalk(struct out *o, const struct gev *e)
{
	const struct rstack *st = e->stack;
	const struct thread *th = thread_by_tid(e->a[0]);
	int part = (int)e->a[1], i;
	int lo = part == PART_KERNEL ? st->n - st->nk : 0;
	int hi = part == PART_USER ? st->n - st->nk : st->n;

	if (S.stack_mode == 1) {
		{
			uint64_t key = key_for(o, e->stack, part, e->t, e->cpu);
			etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 24, part == PART_KERNEL ? 37 : 38, 2,
			    0, 0, ts(e->t));
			etlw_u64(&o->r, ts(e->t0));
			etlw_u32(&o->r, th->proc->pid);
			etlw_u32(&o->r, th->tid);
			etlw_ptr(&o->r, key);
			emit(o, e->cpu);
		}
		return;
	}
	etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 24, 32, 2, 0, 0, ts(e->t));
	etlw_u64(&o->r, ts(e->t0));
	etlw_u32(&o->r, th->proc->pid);
	etlw_u32(&o->r, th->tid);
	for (i = hi - 1; i >= lo; i--)		/* innermost first */
		etlw_ptr(&o->r, st->addr[i]);
	emit(o, e->cpu);
}

static void
write_sample(struct out *o, const struct gev *e)
{
	const struct thread *th = thread_by_tid(e->a[0]);
	char w[40];

	etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 15, 46, 2, 0, 0, ts(e->t));
	etlw_ptr(&o->r, e->addr);
	etlw_u32(&o->r, e->a[0]);
	etlw_u16(&o->r, (uint16_t)e->a[2]);
	etlw_u8(&o->r, (uint8_t)(e->a[1] << 3 | e->a[3]));
	etlw_u8(&o->r, 0);
	emit(o, e->cpu);
	if (!o->ex)
		return;
	evt_format_weight(w, S.interval_ms * e->a[2]);
	/* the idle thread's tid is 0 on every CPU: one thread struct stands for all */
	ex_head(o, e->t, K_SAMPLE, e->cpu, th, w);
	ob_printf(o->ex, "\tip=0x%llx\tprio=%u", (unsigned long long)e->addr, e->a[1]);
	if (e->a[2] != 1)
		ob_printf(o->ex, "\tcount=%u", e->a[2]);
	if (e->a[3] & 1)
		ob_puts(o->ex, "\tdpc=1");
	if (e->a[3] & 2)
		ob_puts(o->ex, "\tisr=1");
	if (e->stack)
		ob_printf(o->ex, "\t%s\n", e->stack->text);
	else {
		/* without StackWalk events: the IP as a one-frame stack (PerfView) */
		char f[300];
		frame_text(f, sizeof f, th->proc->pid, e->addr);
		ob_printf(o->ex, "\tnostack=1\t%s\n", f);
	}
}

static void
write_dpc(struct out *o, const struct gev *e)
{
	static const int type[] = {[K_DPC] = 68, [K_TDPC] = 66, [K_TIMERDPC] = 69, [K_ISR] = 67};
	int t = e->kind == K_ISR && e->a[1] ? 50 : type[e->kind];
	char w[40], end[40], f[300];
	struct image *im = resolve(4, e->addr);
	/* durations are between the two rounded times, so end_ms - time_ms == duration */
	int64_t dur_ns = tick_ns(e->t) - tick_ns(e->t0);

	etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 15, t, 2, 0, 0, ts(e->t));
	etlw_u64(&o->r, ts(e->t0));
	etlw_ptr(&o->r, e->addr);
	if (e->kind == K_ISR) {
		etlw_u8(&o->r, (uint8_t)e->a[3]);
		etlw_u16(&o->r, (uint16_t)e->a[0]);
		etlw_u8(&o->r, 0);
		if (e->a[1])
			etlw_u32(&o->r, e->a[2]);
	}
	emit(o, e->cpu);
	if (!o->ex)
		return;
	evt_format_weight(w, (double)dur_ns / 1e6);
	fmt_ms(end, e->t);
	frame_text(f, sizeof f, 4, e->addr);
	ex_head(o, e->t0, e->kind, e->cpu, NULL, w);
	ob_printf(o->ex, "\troutine=%s\tmodule=%s\tduration_us=%lld.%03lld\tend_ms=%s", f,
	    im ? im->name : "?", (long long)(dur_ns / 1000), (long long)(dur_ns % 1000), end);
	if (e->kind == K_ISR) {
		ob_printf(o->ex, "\tvector=%u", e->a[0]);
		if (e->a[1])
			ob_printf(o->ex, "\tmsi=1\tmessage=%u", e->a[2]);
		ob_printf(o->ex, "\tret=%u", e->a[3]);
	}
	ob_puts(o->ex, "\t*\n");
}

static void
write_cswitch(struct out *o, const struct gev *e)
{
	const struct thread *nt = thread_by_tid(e->a[0]), *ot = thread_by_tid(e->a[1]);
	int full = (e->a[4] >> 17) & 1;

	etlw_rec_kernel(&o->r, full ? ETLW_SYSTEM : ETLW_COMPACT, S.psize, 5, 36, 4, 0, 0, ts(e->t));
	etlw_u32(&o->r, e->a[0]);
	etlw_u32(&o->r, e->a[1]);
	etlw_u8(&o->r, (uint8_t)e->a[2]);
	etlw_u8(&o->r, (uint8_t)e->a[3]);
	etlw_u8(&o->r, 1);				/* PreviousCState */
	etlw_u8(&o->r, 0);
	etlw_u8(&o->r, (uint8_t)(e->a[4] & 0xFF));	/* wait reason */
	etlw_u8(&o->r, (uint8_t)((e->a[4] >> 16) & 1));	/* wait mode */
	etlw_u8(&o->r, (uint8_t)((e->a[4] >> 8) & 0xFF));	/* old state */
	etlw_u8(&o->r, (uint8_t)e->cpu);			/* ideal processor */
	etlw_u32(&o->r, e->a[5]);
	etlw_u32(&o->r, 0);
	emit(o, e->cpu);
	if (!o->ex)
		return;
	ex_head(o, e->t, K_CSWITCH, e->cpu, nt, "0");
	ob_printf(o->ex, "\told_tid=%u\told_pid=%u\told_process=", ot->tid, ot->proc->pid);
	ex_escaped(o->ex, ot->proc->name, 0);
	ob_printf(o->ex, "\tnew_prio=%u\told_prio=%u\twait_reason=%s\twait_mode=%s\told_state=%s\twait_time=%u\t\n",
	    e->a[2], e->a[3], wait_reasons[e->a[4] & 0xFF], (e->a[4] >> 16) & 1 ? "user" : "kernel",
	    thread_states[(e->a[4] >> 8) & 0xFF], e->a[5]);
}

static void
write_ready(struct out *o, const struct gev *e)
{
	const struct thread *t = thread_by_tid(e->a[0]), *rt = thread_by_tid(e->a[1]);

	etlw_rec_kernel(&o->r, e->a[5] ? ETLW_SYSTEM : ETLW_COMPACT, S.psize, 5, 50, 2,
	    t->tid, t->proc->pid, ts(e->t));
	etlw_u32(&o->r, e->a[1]);
	etlw_u8(&o->r, (uint8_t)e->a[2]);
	etlw_u8(&o->r, (uint8_t)e->a[3]);
	etlw_u8(&o->r, (uint8_t)e->a[4]);
	etlw_u8(&o->r, 0);
	emit(o, e->cpu);
	if (!o->ex)
		return;
	ex_head(o, e->t, K_READY, e->cpu, t, "0");
	ob_printf(o->ex, "\tready_tid=%u\tready_pid=%u\tadjust_reason=%d\tadjust_incr=%d\tflags=%d\t\n",
	    rt->tid, rt->proc->pid, (int8_t)e->a[2], (int8_t)e->a[3], (int8_t)e->a[4]);
}

/* a running process's ExitStatus is STATUS_PENDING (259), Idle's 0 (as in net.4.5.2.x64) */
static uint32_t
rundown_exit(const struct proc *p)
{
	return p->pid == 0 ? 0 : 259;
}

static void
write_process(struct out *o, const struct gev *e)
{
	const struct proc *p = e->obj;
	static const int type[] = {[K_PSTART] = 1, [K_PEND] = 2, [K_PDCSTART] = 3, [K_PDCEND] = 4};
	static const uint8_t sid[12] = {1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0};	/* S-1-5-18 */
	int rundown = e->kind == K_PDCSTART || e->kind == K_PDCEND;

	if (rundown)
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 3, type[e->kind], 4, 0, 0, ts(e->t));
	else
		etlw_rec_kernel(&o->r, ETLW_SYSTEM, S.psize, 3, type[e->kind], 4,
		    0, e->kind == K_PSTART ? p->parent : p->pid, ts(e->t));
	etlw_ptr(&o->r, p->key);
	etlw_u32(&o->r, p->pid);
	etlw_u32(&o->r, p->parent);
	etlw_u32(&o->r, p->session);
	etlw_u32(&o->r, e->kind == K_PEND ? p->exit : e->kind == K_PSTART ? 0 : rundown_exit(p));
	etlw_ptr(&o->r, 0x1aa000ull + 0x1000ull * p->pid);	/* DirectoryTableBase */
	etlw_u32(&o->r, 0);					/* Flags */
	etlw_ptr(&o->r, p->key + 0x800);			/* TOKEN_USER: SID pointer */
	etlw_ptr(&o->r, 0);					/* attributes */
	etlw_bytes(&o->r, sid, sizeof sid);
	etlw_astr(&o->r, p->name);
	etlw_wstr(&o->r, p->cmdline);
	etlw_wstr(&o->r, "");
	etlw_wstr(&o->r, "");
	emit(o, e->cpu);
	if (!o->ex)
		return;
	ex_cols(o, e->t, e->kind, e->cpu, p->name, (long)p->pid, ANY, "0");
	ob_printf(o->ex, "\tparent=%u\tsession=%d\timage=", p->parent, (int32_t)p->session);
	ex_escaped(o->ex, p->name, 0);
	if (*p->cmdline) {
		ob_puts(o->ex, "\tcmdline=");
		ex_escaped(o->ex, p->cmdline, 0);
	}
	if (e->kind == K_PEND || e->kind == K_PDCEND)
		ob_printf(o->ex, "\texit=%u", e->kind == K_PEND ? p->exit : rundown_exit(p));
	ob_puts(o->ex, "\t*\n");
}

static void
write_thread(struct out *o, const struct gev *e)
{
	const struct thread *t = e->obj;
	static const int type[] = {[K_TSTART] = 1, [K_TEND] = 2, [K_TDCSTART] = 3, [K_TDCEND] = 4};
	uint64_t kstack = (S.psize == 8 ? 0xFFFFD00020000000ull : 0x9a000000ull) + 0x8000ull * (uint64_t)(t - S.thr);
	int user = t->proc->pid > 4;

	etlw_rec_kernel(&o->r, ETLW_SYSTEM, S.psize, 5, type[e->kind], 3,
	    e->kind == K_TEND ? t->tid : 0, e->kind == K_TEND ? t->proc->pid : 0, ts(e->t));
	etlw_u32(&o->r, t->proc->pid);
	etlw_u32(&o->r, t->tid);
	etlw_ptr(&o->r, kstack + 0x6000);			/* StackBase */
	etlw_ptr(&o->r, kstack);				/* StackLimit */
	etlw_ptr(&o->r, user ? 0x100000ull + 0x100000ull * (uint64_t)(t - S.thr) : 0);
	etlw_ptr(&o->r, user ? 0x0fc000ull + 0x100000ull * (uint64_t)(t - S.thr) : 0);
	etlw_ptr(&o->r, t->idle_cpu >= 0 ? 1ull << (t->idle_cpu % (S.psize * 8)) : (S.psize == 8 ? ~0ull : 0xFFFFFFFFull));
	etlw_ptr(&o->r, t->start_addr);
	etlw_ptr(&o->r, user ? 0x7ff000ull - 0x2000ull * (uint64_t)(t - S.thr) : 0);	/* TebBase */
	etlw_u32(&o->r, 0);
	etlw_u8(&o->r, (uint8_t)t->prio);
	etlw_u8(&o->r, 5);
	etlw_u8(&o->r, 2);
	etlw_u8(&o->r, 0);
	emit(o, e->cpu);
	if (t->name && (e->kind == K_TSTART || e->kind == K_TDCSTART)) {
		etlw_rec_kernel(&o->r, ETLW_SYSTEM, S.psize, 5, 72, 2, 0, 0, ts(e->t));
		etlw_u32(&o->r, t->proc->pid);
		etlw_u32(&o->r, t->tid);
		etlw_wstr(&o->r, t->name);
		emit(o, e->cpu);
	}
	if (!o->ex)
		return;
	ex_cols(o, e->t, e->kind, e->cpu, t->proc->name, (long)t->proc->pid, (long)t->tid, "0");
	if (resolve(t->proc->pid, t->start_addr)) {
		char f[300];
		frame_text(f, sizeof f, t->proc->pid, t->start_addr);
		ob_printf(o->ex, "\tstart_addr=%s", f);
	}
	ob_puts(o->ex, "\t*\n");
}

/*
 * Images as the kernel and xperf's merge write them (net.4.5.2.x64): for a
 * rundown or load, first ImageID and (with a PDB) DbgID_RSDS, then the
 * Image event at the same time.  Kernel images use the SYSTEM header with
 * the rundown thread, user ones the PERFINFO header.
 */
static void
write_image(struct out *o, const struct gev *e)
{
	const struct image *im = e->obj;
	uint32_t pid = im->proc->pid;
	int group = e->kind == K_ILOAD ? 3 : 20;
	int type = e->kind == K_ILOAD ? 10 : e->kind == K_IUNLOAD ? 2 : e->kind == K_IDCSTART ? 3 : 4;
	int kernel = is_kernel_addr(im->base);
	int system_hdr = e->kind == K_ILOAD || e->kind == K_IUNLOAD || kernel;
	int ids = e->kind != K_IUNLOAD;
	uint32_t rtid = e->kind == K_IDCEND ? S.rundown_end_tid : S.rundown_tid;
	uint32_t htid = kernel ? rtid : 0xFFFFFFFFu;

	if (ids) {
		etlw_rec_classic(&o->r, S.psize, imageid_guid, 0, 0, 2, htid, pid, ts(e->t));
		etlw_ptr(&o->r, im->base);
		etlw_ptr(&o->r, im->size);
		etlw_u32(&o->r, pid);
		etlw_u32(&o->r, im->timestamp);
		etlw_wstr(&o->r, im->original);
		emit(o, e->cpu);
		if (im->pdb) {
			etlw_rec_classic(&o->r, S.psize, imageid_guid, 36, 0, 2, htid, pid, ts(e->t));
			etlw_ptr(&o->r, im->base);
			etlw_u32(&o->r, pid);
			etlw_bytes(&o->r, im->guid, 16);
			etlw_u32(&o->r, im->age);
			etlw_astr(&o->r, im->pdb);
			emit(o, e->cpu);
		}
	}
	if (system_hdr)
		etlw_rec_kernel(&o->r, ETLW_SYSTEM, S.psize, group, type, 2,
		    kernel ? rtid : 0, kernel ? S.rundown_pid : pid, ts(e->t));
	else
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, group, type, 2, 0, 0, ts(e->t));
	etlw_ptr(&o->r, im->base);
	etlw_ptr(&o->r, im->size);
	etlw_u32(&o->r, pid);
	etlw_u32(&o->r, im->checksum);
	etlw_u32(&o->r, im->image_timestamp);
	etlw_u32(&o->r, 0);			/* SignatureLevel/Type/Reserved0 */
	etlw_ptr(&o->r, kernel ? 0 : im->base);	/* DefaultBase */
	etlw_bytes(&o->r, (uint8_t[16]){0}, 16);
	etlw_wstr(&o->r, im->path);
	emit(o, e->cpu);
	if (!o->ex)
		return;
	if (ids) {
		ex_cols(o, e->t, K_IMAGEID, e->cpu, im->proc->name, (long)pid,
		    htid == 0xFFFFFFFFu ? -1 : (long)htid, "0");
		ob_printf(o->ex, "\tbase=0x%llx\tsize=0x%llx\ttimestamp=%u\timage=",
		    (unsigned long long)im->base, (unsigned long long)im->size, im->timestamp);
		ex_escaped(o->ex, im->original, 0);
		ob_puts(o->ex, "\t*\n");
		if (im->pdb) {
			ex_cols(o, e->t, K_DBGID, e->cpu, im->proc->name, (long)pid,
			    htid == 0xFFFFFFFFu ? -1 : (long)htid, "0");
			ob_printf(o->ex, "\tbase=0x%llx\tguid=%s\tage=%u\tpdb=",
			    (unsigned long long)im->base, im->guidtext, im->age);
			ex_escaped(o->ex, im->pdb, 0);
			ob_puts(o->ex, "\t*\n");
		}
	}
	ex_cols(o, e->t, e->kind, e->cpu, im->proc->name, (long)pid, ANY, "0");
	ob_printf(o->ex, "\tbase=0x%llx\tsize=0x%llx\tpath=", (unsigned long long)im->base,
	    (unsigned long long)im->size);
	ex_escaped(o->ex, im->path, 0);
	ob_printf(o->ex, "\tchecksum=0x%x\ttimestamp=%u\t*\n", im->checksum, im->image_timestamp);
}

static void
write_interval(struct out *o, const struct gev *e)
{
	/* SampledProfileInterval CollectionStart, as in net.4.5.2.x64 */
	etlw_rec_kernel(&o->r, ETLW_SYSTEM, S.psize, 15, 73, 3, 0, 0, ts(e->t));
	etlw_u32(&o->r, 0);
	etlw_u32(&o->r, e->a[0]);
	etlw_u32(&o->r, e->a[0]);
	etlw_wstr(&o->r, "Timer");
	emit(o, e->cpu);
	if (!o->ex)
		return;
	{
		char v[40];
		evt_format_weight(v, e->a[0] / 10000.0);
		ex_head(o, e->t, K_INTERVAL, e->cpu, NULL, "0");
		ob_printf(o->ex, "\tinterval_ms=%s\t*\n", v);
	}
}

/* Assigns stack keys and writes their definitions (KeyRundown) at time T. */
static void
write_key_rundown(struct out *o, int64_t t)
{
	int i, j, part;

	if (S.key_cache) {
		for (i = 0; i < nkslots; i++) {
			etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 24, 36, 2, 0, 0, ts(t));
			etlw_ptr(&o->r, kslots[i].key);
			key_frames(&o->r, kslots[i].st, kslots[i].part);
			emit(o, 0);
		}
		return;
	}

	for (i = 0; i < S.nstacks; i++) {
		struct rstack *st = S.stacks[i];
		for (part = 0; part < 2; part++) {
			uint64_t key = part ? st->ukey : st->kkey;
			int lo = part ? 0 : st->n - st->nk, hi = part ? st->n - st->nk : st->n;
			if (!key)
				continue;
			etlw_rec_kernel(&o->r, ETLW_PERFINFO, S.psize, 24, 36, 2, 0, 0, ts(t));
			etlw_ptr(&o->r, key);
			for (j = hi - 1; j >= lo; j--)
				etlw_ptr(&o->r, st->addr[j]);
			emit(o, 0);
		}
	}
}

static void
assign_keys(void)
{
	uint64_t k = S.psize == 8 ? 0xFFFFFA8003400000ull : 0x88400000ull;
	int i;

	for (i = 0; i < S.nstacks; i++) {
		struct rstack *st = S.stacks[i];
		if (st->nk)
			st->kkey = (k += 0x40);
		if (st->n > st->nk)
			st->ukey = (k += 0x40);
	}
}

static void
expect_header(struct outbuf *ex, const char *etl)
{
	char iv[40];
	uint64_t ft = S.start_ft;
	time_t secs = (time_t)(ft / 10000000ull) - 11644473600LL;
	struct tm tm;

	gmtime_r(&secs, &tm);
	evt_format_weight(iv, S.interval_ms);
	ob_printf(ex, "#evt\t1\tsource=%s\tos_version=%u.%u.%u.%u\tos_build=%u\tcpus=%d\tpointer_size=%d"
	    "\tclock=qpc\tclock_freq=%llu\tstart_utc=%04d-%02d-%02dT%02d:%02d:%02d.%07lluZ"
	    "\tevents_lost=%u\tbuffers_lost=%u\tsample_interval_ms=%s\n",
	    etl, S.version[0], S.version[1], S.version[2], S.version[3], S.os_build, S.cpus,
	    S.psize, (unsigned long long)S.freq, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	    tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned long long)(ft % 10000000ull),
	    S.events_lost + S.lost_total, S.buffers_lost + S.lost_buffers, iv);
}

static int
end_rundown(int k)
{
	return k == K_PDCEND || k == K_TDCEND || k == K_IDCEND;
}

static int
once_only(int k)
{
	return k == K_PSTART || k == K_PEND || k == K_PDCSTART || k == K_TSTART || k == K_TEND ||
	    k == K_TDCSTART || k == K_ILOAD || k == K_IUNLOAD || k == K_IDCSTART || k == K_INTERVAL;
}

static void
dispatch(struct out *o, struct gev *e)
{
	switch (e->kind) {
	case K_SAMPLE: write_sample(o, e); break;
	case K_DPC: case K_TDPC: case K_TIMERDPC: case K_ISR: write_dpc(o, e); break;
	case K_CSWITCH: write_cswitch(o, e); break;
	case K_READY: write_ready(o, e); break;
	case K_PSTART: case K_PEND: case K_PDCSTART: case K_PDCEND: write_process(o, e); break;
	case K_TSTART: case K_TEND: case K_TDCSTART: case K_TDCEND: write_thread(o, e); break;
	case K_ILOAD: case K_IUNLOAD: case K_IDCSTART: case K_IDCEND: write_image(o, e); break;
	case K_LOST:
		if (e->a[0])
			etlw_events_lost(o->w, e->cpu, e->a[0]);
		if (e->a[1])
			etlw_buffers_lost(o->w, e->cpu, e->a[1]);
		break;
	case K_INTERVAL: write_interval(o, e); break;
	case K_STACKWALK: write_stackwalk(o, e); break;
	default: break;
	}
}

static uint64_t
write_trace(const char *path, const char *expect)
{
	struct etlw_config cfg;
	struct out o;
	struct outbuf ex;
	int64_t end = S.duration, period = 1, last = 0, r;
	size_t i;
	uint64_t bytes;

	/* stack records first: a user part that comes late (--user-delay) can end the trace */
	add_stackwalks();
	for (i = 0; i < S.nev; i++)
		if (S.ev[i].t > end)
			end = S.ev[i].t;
	memset(&cfg, 0, sizeof cfg);
	cfg.pointer_size = S.psize;
	cfg.ncpus = S.cpus;
	cfg.buffer_size = S.buffer_size;
	cfg.compress = S.compress;
	memcpy(cfg.version, S.version, 4);
	cfg.os_build = S.os_build;
	cfg.cpu_mhz = S.cpu_mhz;
	cfg.clock_freq = S.freq;
	cfg.start_qpc = S.start_qpc;
	cfg.start_filetime = S.start_ft;
	cfg.end_filetime = S.start_ft + (uint64_t)((long double)end * 1e7L / (long double)S.freq);
	cfg.boot_filetime = S.boot_ft;
	cfg.log_file_mode = 0x1;		/* EVENT_TRACE_FILE_MODE_SEQUENTIAL */
	cfg.events_lost = S.events_lost;
	cfg.buffers_lost = S.buffers_lost;
	cfg.logger_id = 0xFFFF & 28;
	cfg.controller_pid = 4;
	cfg.controller_tid = 8;
	cfg.tz_bias = 0;
	cfg.tz_name = "@tzres.dll,-322";
	cfg.logger_name = S.logger_name;
	cfg.logfile_name = path;

	lifecycle_events(end + 10);
	qsort(S.ev, S.nev, sizeof *S.ev, cmp_time);
	for (i = 0; i < S.nev; i++)
		if (!end_rundown(S.ev[i].kind) && S.ev[i].t >= period)
			period = S.ev[i].t + 1;
	if (S.repeat > 1)
		cfg.end_filetime = S.start_ft + (uint64_t)((long double)(end + (S.repeat - 1) * period) *
		    1e7L / (long double)S.freq);
	if (S.stack_mode == 1)
		assign_keys();
	if (S.key_cache)
		kslots = xcalloc((size_t)S.key_cache, sizeof *kslots);
	memset(&o, 0, sizeof o);
	etlw_rec_init(&o.r);
	o.w = etlw_open(path, &cfg);
	if (expect) {
		ob_open(&ex, expect);
		o.ex = &ex;
		expect_header(&ex, path);
	}
	/*
	 * --repeat N: the body of the trace N times, each copy shifted by one
	 * period (memory and speed benchmarks on big files from a small
	 * model); rundowns and process/thread/image events once.
	 */
	for (r = 0; r < S.repeat; r++)
		for (i = 0; i < S.nev; i++) {
			struct gev e = S.ev[i];
			if (end_rundown(e.kind) || (r > 0 && once_only(e.kind)))
				continue;
			e.t += r * period;
			e.t0 += r * period;
			dispatch(&o, &e);
		}
	for (i = 0; i < S.nev; i++)
		if (end_rundown(S.ev[i].kind)) {
			struct gev e = S.ev[i];
			e.t += (S.repeat - 1) * period;
			dispatch(&o, &e);
			last = e.t;
		}
	if (S.stack_mode == 1)
		write_key_rundown(&o, last + 1);
	bytes = etlw_close(o.w);
	if (expect)
		ob_close(&ex);
	etlw_rec_free(&o.r);
	return bytes;
}

/* ---------- --emit-c: stand-in sources for the named routines ---------- */

static int
is_c_identifier(const char *s)
{
	const char *p = s;
	if (!*p || !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
		return 0;
	for (; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

/*
 * Writes DIR/MODULE.c for every image that has named routines, and
 * DIR/modules.txt ("MODULE PDBNAME"), for build-symbols.sh.
 */
static void
emit_sources(const char *dir)
{
	yaml_node_t *routines = get(node(1), "routines");
	yaml_node_pair_t *p;
	char path[4096];
	FILE *list;
	int i, j, k, nseen = 0;
	const char **seen = xcalloc(1, sizeof *seen);
	unsigned serial = 1;

	snprintf(path, sizeof path, "%s/modules.txt", dir);
	if (!(list = fopen(path, "w")))
		cli_fatal("%s: %s", path, strerror(errno));
	for (i = 0; i < S.nproc; i++)
		for (j = 0; j < S.procs[i].nimg; j++) {
			struct image *im = &S.procs[i].img[j];
			FILE *fp = NULL;
			for (k = 0; k < nseen; k++)
				if (strcasecmp(seen[k], im->name) == 0)
					break;
			if (k < nseen || !routines || routines->type != YAML_MAPPING_NODE)
				continue;
			seen = xrealloc(seen, (size_t)(nseen + 1) * sizeof *seen);
			seen[nseen++] = im->name;
			for (p = routines->data.mapping.pairs.start; p < routines->data.mapping.pairs.top; p++) {
				const char *name = scalar(node(p->key));
				const yaml_node_t *t = node(p->value);
				const char *sep;
				int hops;
				struct image *rim;
				/* follow aliases to "module+0xRVA"; only this image's routines */
				for (hops = 0; hops < 16 && get(routines, scalar(t)) && get(routines, scalar(t)) != t; hops++)
					t = get(routines, scalar(t));
				sep = strpbrk(scalar(t), "+!");
				if (!sep || (size_t)(sep - scalar(t)) != strlen(im->name) ||
				    strncasecmp(scalar(t), im->name, strlen(im->name)) != 0 || !is_c_identifier(name))
					continue;
				rim = resolve(S.procs[i].pid, frame_addr(t, S.procs[i].pid));
				if (rim != im)
					continue;
				if (!fp) {
					snprintf(path, sizeof path, "%s/%s.c", dir, im->name);
					if (!(fp = fopen(path, "w")))
						cli_fatal("%s: %s", path, strerror(errno));
					fprintf(fp, "/* %s: stand-in code for the routines scenario %s names (etlgen --emit-c) */\n"
					    "volatile int etlgen_sink;\n", im->name, S.file);
				}
				fprintf(fp, "__declspec(noinline) void %s(void) { int i; for (i = 0; i < %u; i++) etlgen_sink += i * %u; }\n",
				    name, 16 + serial % 7, serial);
				serial++;
			}
			if (fp) {
				if (fclose(fp) != 0)
					cli_fatal("%s: write error", path);
				if (im->pdb)
					fprintf(list, "%s %s\n", im->name, basename_of(im->pdb));
				else {
					const char *dot = strrchr(im->name, '.');
					fprintf(list, "%s %.*s.pdb\n", im->name,
					    (int)(dot ? (size_t)(dot - im->name) : strlen(im->name)), im->name);
				}
			}
		}
	free(seen);
	if (fclose(list) != 0)
		cli_fatal("%s/modules.txt: write error", dir);
}

/* ---------- main ---------- */

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: etlgen [-o OUT.etl] [--expect FILE] [--pointer-size 4|8] [--compress|--lznt1|--no-compress] [--stacks full|split|keys] [--key-cache N] [--user-delay MS] [--seed N] [--symbols MAP] [--repeat N] SCENARIO.yaml | --emit-c DIR SCENARIO.yaml\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"expect", required_argument, NULL, 'e'},
		{"pointer-size", required_argument, NULL, 'p'},
		{"compress", no_argument, NULL, 'z'},
		{"no-compress", no_argument, NULL, 'Z'},
		{"lznt1", no_argument, NULL, 'L'},
		{"stacks", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"key-cache", required_argument, NULL, 'K'},
		{"repeat", required_argument, NULL, 'R'},
		{"user-delay", required_argument, NULL, 'D'},
		{"symbols", required_argument, NULL, 'y'},
		{"emit-c", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *out = "out.etl", *expect = NULL, *symbols = NULL, *emit_c = NULL;
	int c;
	FILE *fp;
	yaml_parser_t parser;
	yaml_node_t *root;
	uint64_t bytes;

	cli_init(argv[0]);
	S.compress = -1;
	S.stack_mode = -1;
	S.key_cache = -1;
	S.repeat = 1;
	S.user_delay_ms = -1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'e': expect = optarg; break;
		case 'p':
			S.psize = (int)cli_integer("--pointer-size", optarg);
			if (S.psize != 4 && S.psize != 8)
				cli_usage_error("--pointer-size is 4 or 8");
			break;
		case 'z': S.compress = 1; break;
		case 'Z': S.compress = 0; break;
		case 'L': S.compress = 2; break;
		case 'D':
			S.user_delay_ms = strtod(optarg, NULL);
			if (!(S.user_delay_ms >= 0 && S.user_delay_ms <= 60000))
				cli_usage_error("--user-delay is 0 to 60000 ms");
			break;
		case 's':
			S.stack_mode = !strcmp(optarg, "full") ? 0 : !strcmp(optarg, "keys") ? 1 :
			    !strcmp(optarg, "split") ? 2 : -1;
			if (S.stack_mode < 0)
				cli_usage_error("--stacks is full, split or keys");
			break;
		case 'S': S.seed = (uint64_t)cli_integer("--seed", optarg); break;
		case 'K': S.key_cache = (int)cli_integer("--key-cache", optarg); break;
		case 'R':
			S.repeat = cli_integer("--repeat", optarg);
			if (S.repeat < 1 || S.repeat > 100000)
				cli_usage_error("--repeat is 1..100000");
			break;
		case 'y': symbols = optarg; break;
		case 'c': emit_c = optarg; break;
		case 'h': usage(0); break;
		case 'V': cli_version(); break;
		default: usage(2);
		}
	}
	if (optind != argc - 1)
		usage(2);
	if (S.repeat > 1 && expect)
		cli_usage_error("--expect describes one period; it cannot be used with --repeat");

	S.file = argv[optind];
	fp = fopen(S.file, "rb");
	if (!fp)
		cli_fatal("%s: %s", S.file, strerror(errno));
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, fp);
	if (!yaml_parser_load(&parser, &S.doc))
		cli_fatal("%s:%lu: %s", S.file, (unsigned long)parser.problem_mark.line + 1,
		    parser.problem ? parser.problem : "YAML error");
	fclose(fp);
	root = yaml_document_get_root_node(&S.doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		cli_fatal("%s: a scenario is a YAML mapping", S.file);
	{
		static const char *const keys[] = {"machine", "processes", "routines", "stacks",
		    "events", "generate", NULL};
		check_keys(root, keys);
	}
	parse_machine(get(root, "machine"));
	rng_state = S.seed;
	if (symbols)
		load_symbols(symbols);
	parse_processes(get(root, "processes"));
	if (emit_c) {
		emit_sources(emit_c);
		return 0;
	}
	parse_events(get(root, "events"));
	parse_generators(get(root, "generate"));
	bytes = write_trace(out, expect);
	fprintf(stderr, "%s: %s: %llu events, %llu bytes\n", cli_progname(), out,
	    (unsigned long long)S.nev, (unsigned long long)bytes);
	yaml_document_delete(&S.doc);
	yaml_parser_delete(&parser);
	return 0;
}
