/*
 * scenario.c - an etlgen scenario read from YAML into the model (see
 * scenario.h, docs/scenario-format.md): the machine, processes, threads,
 * images, --symbols functions, stacks and explicit events, with the YAML
 * accessors and model lookups that tests/tools/lib/generate.c and
 * scenwrite.c share.  Every error names FILE:LINE and exits 2.
 */
/* XSI (POSIX 2008 + X/Open 7) for strptime() and M_PI */
#define _XOPEN_SOURCE 700
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <yaml.h>

#include "base/cli.h"
#include "etl/etl.h"
#include "scenario.h"

const char *const scen_kind_names[NKINDS] = {
	"Sample", "DPC", "ThreadedDPC", "TimerDPC", "ISR", "CSwitch", "ReadyThread",
	"ProcessStart", "ProcessEnd", "ProcessDCStart", "ProcessDCEnd",
	"ThreadStart", "ThreadEnd", "ThreadDCStart", "ThreadDCEnd",
	"ImageLoad", "ImageUnload", "ImageDCStart", "ImageDCEnd",
	"Lost", "SampleInterval", "StackWalk", "ImageID", "DbgID_RSDS",
	"DiskRead", "DiskWrite", "DiskReadInit", "DiskWriteInit", "PageFaultHard",
	"FileIoName", "FileIoRundown", "FileIoCreate", "FileIoRead", "FileIoWrite",
	"FileIoClose", "FileIoOperationEnd",
	"TcpIpSend", "TcpIpRecv", "TcpIpConnect", "TcpIpDisconnect", "TcpIpRetransmit",
	"TcpIpAccept", "TcpIpReconnect", "TcpIpTCPCopy",
	"TcpIpSendIPV6", "TcpIpRecvIPV6", "TcpIpConnectIPV6", "TcpIpDisconnectIPV6",
	"TcpIpRetransmitIPV6", "TcpIpAcceptIPV6", "TcpIpReconnectIPV6", "TcpIpTCPCopyIPV6",
	"UdpIpSend", "UdpIpRecv", "UdpIpSendIPV6", "UdpIpRecvIPV6",
};

const char *const scen_wait_reasons[] = {
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
#define NWAIT ((int)(sizeof scen_wait_reasons / sizeof scen_wait_reasons[0]))

const char *const scen_thread_states[] = {
	"Initialized", "Ready", "Running", "Standby", "Terminated", "Waiting",
	"Transition", "DeferredReady",
};

struct scenario scen;

static uint64_t rng_state;

static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

double
scen_rng_unit(void)
{
	return (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
}

double
scen_rng_gauss(void)
{
	double u = scen_rng_unit(), v = scen_rng_unit();
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* ---------- YAML access ---------- */

static yaml_node_t *
node(int i)
{
	return yaml_document_get_node(&scen.doc, i);
}

__attribute__((noreturn, format(printf, 2, 3)))
void
scen_bad(const yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cli_fatal("%s:%lu: %s", scen.file, n ? (unsigned long)n->start_mark.line + 1 : 0ul, msg);
}

yaml_node_t *
scen_get(const yaml_node_t *map, const char *key)
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
void
scen_check_keys(const yaml_node_t *map, const char *const *ok)
{
	yaml_node_pair_t *p;
	int i;

	if (!map || map->type != YAML_MAPPING_NODE)
		scen_bad(map, "expected a mapping");
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(p->key);
		const char *name = k && k->type == YAML_SCALAR_NODE ? (char *)k->data.scalar.value : "?";
		for (i = 0; ok[i]; i++)
			if (strcmp(ok[i], name) == 0)
				break;
		if (!ok[i])
			scen_bad(k, "unknown key '%s'", name);
	}
}

const char *
scen_scalar(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		scen_bad(n, "expected a scalar value");
	return (const char *)n->data.scalar.value;
}

static const char *
str_or(const yaml_node_t *map, const char *key, const char *dflt)
{
	yaml_node_t *n = scen_get(map, key);
	return n ? scen_scalar(n) : dflt;
}

static uint64_t
u64_of(const yaml_node_t *n)
{
	const char *s = scen_scalar(n);
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		scen_bad(n, "'%s' is not an unsigned integer", s);
	return v;
}

uint64_t
scen_u64_or(const yaml_node_t *map, const char *key, uint64_t dflt)
{
	yaml_node_t *n = scen_get(map, key);
	return n ? u64_of(n) : dflt;
}

static int64_t
i64_or(const yaml_node_t *map, const char *key, int64_t lo, int64_t hi, int64_t dflt)
{
	yaml_node_t *n = scen_get(map, key);
	const char *s;
	char *end;
	long long v;

	if (!n)
		return dflt;
	s = scen_scalar(n);
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		scen_bad(n, "'%s' is not an integer in %lld..%lld", s, (long long)lo, (long long)hi);
	return v;
}

double
scen_num_of(const yaml_node_t *n)
{
	const char *s = scen_scalar(n);
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		scen_bad(n, "'%s' is not a number", s);
	return v;
}

double
scen_num_or(const yaml_node_t *map, const char *key, double dflt)
{
	yaml_node_t *n = scen_get(map, key);
	return n ? scen_num_of(n) : dflt;
}

static int
bool_of(const yaml_node_t *n)
{
	const char *s = scen_scalar(n);
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "1") || !strcmp(s, "on"))
		return 1;
	if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "0") || !strcmp(s, "off"))
		return 0;
	scen_bad(n, "'%s' is not a boolean", s);
}

int
scen_bool_or(const yaml_node_t *map, const char *key, int dflt)
{
	yaml_node_t *n = scen_get(map, key);
	return n ? bool_of(n) : dflt;
}

int64_t
scen_ms_to_ticks(double ms)
{
	return (int64_t)llround(ms * (double)scen.freq / 1000.0);
}

int64_t
scen_time_or(const yaml_node_t *map, const char *key, int64_t dflt)
{
	yaml_node_t *n = scen_get(map, key);
	return n ? scen_ms_to_ticks(scen_num_of(n)) : dflt;
}

int
scen_seq_len(const yaml_node_t *n)
{
	if (!n)
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		scen_bad(n, "expected a list");
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

yaml_node_t *
scen_seq_at(const yaml_node_t *n, int i)
{
	return node(n->data.sequence.items.start[i]);
}

static uint64_t fit_pointer(uint64_t a);

/* ---------- model lookups ---------- */

struct proc *
scen_proc_by_pid(uint32_t pid)
{
	int i;
	for (i = 0; i < scen.nproc; i++)
		if (scen.procs[i].pid == pid)
			return &scen.procs[i];
	return NULL;
}

struct thread *
scen_thread(uint32_t tid)
{
	int i;
	for (i = 0; i < scen.nthr; i++)
		if (scen.thr[i].tid == tid)
			return &scen.thr[i];
	return NULL;
}

/*
 * Windows reuses thread ids: a tid declared more than once has a life per
 * declaration, each with start and end and none overlapping another, and
 * an event names the one alive at its time.  (The idle threads, tid 0 on
 * every CPU, are not reused: scen_thread(0) stands for them all.)
 */
struct thread *
scen_thread_at(uint32_t tid, int64_t t)
{
	struct thread *first = scen_thread(tid);
	int i;

	if (!first || !first->reused)
		return first;
	for (i = (int)(first - scen.thr); i < scen.nthr; i++)
		if (scen.thr[i].tid == tid && scen.thr[i].start <= t && t <= scen.thr[i].end)
			return &scen.thr[i];
	return NULL;
}

static double
ms_of(int64_t t)
{
	return (double)t * 1000 / (double)scen.freq;
}

int
scen_is_kernel_addr(uint64_t a)
{
	return scen.psize == 8 ? a >= 0xFFFF800000000000ull : a >= 0x80000000ull;
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
struct image *
scen_resolve(uint32_t pid, uint64_t a)
{
	struct image *im = image_at(scen_proc_by_pid(pid), a);
	int i;

	if (im || !scen_is_kernel_addr(a))
		return im;
	for (i = 0; i < scen.nproc; i++)
		if ((im = image_at(&scen.procs[i], a)) && scen_is_kernel_addr(im->base))
			return im;
	return NULL;
}

static struct image *
image_named(uint32_t pid, const char *name, size_t len)
{
	struct proc *p = scen_proc_by_pid(pid);
	int i, j;

	for (j = -1; j < scen.nproc; j++) {
		struct proc *q = j < 0 ? p : &scen.procs[j];
		if (!q)
			continue;
		for (i = 0; i < q->nimg; i++) {
			struct image *im = &q->img[i];
			if (strlen(im->name) == len && strncasecmp(im->name, name, len) == 0 &&
			    (q == p || scen_is_kernel_addr(im->base)))
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
			if (etl_guid_parse(c, si->guid) < 0)
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
void
scen_frame_text(char *out, size_t cap, uint32_t pid, uint64_t a)
{
	struct image *im = scen_resolve(pid, a);
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
uint64_t
scen_frame_addr(const yaml_node_t *n, uint32_t pid)
{
	yaml_node_t *routines = scen_get(node(1), "routines");
	const char *s = scen_scalar(n), *sep;
	yaml_node_t *alias;
	struct image *im;
	char *end;
	uint64_t rva;

	if ((alias = scen_get(routines, s)) != NULL && alias != n) {
		static int depth;
		uint64_t a;
		if (++depth > 16)
			scen_bad(n, "routine '%s': aliases nested too deep (a loop?)", s);
		a = scen_frame_addr(alias, pid);
		depth--;
		if (nsymfuncs) {
			/* inside the stand-in function of that name, past its prologue */
			struct image *rim = scen_resolve(pid, a);
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
			scen_bad(n, "frame '%s' is not a routine name, MODULE+0xRVA or an address", s);
		return fit_pointer(a);
	}
	rva = strtoull(sep + 1, &end, 0);
	if (end == sep + 1 || *end)
		scen_bad(n, "frame '%s': bad RVA", s);
	im = image_named(pid, s, (size_t)(sep - s));
	if (!im)
		scen_bad(n, "frame '%s': no image '%.*s' in process %u or the kernel", s,
		    (int)(sep - s), s, pid);
	if (rva >= im->size)
		scen_bad(n, "frame '%s': RVA beyond the image size 0x%llx", s,
		    (unsigned long long)im->size);
	return im->base + rva;
}

/* A stack (list of frames, root first) or the name of one in "stacks:". */
struct rstack *
scen_make_stack(const yaml_node_t *n, uint32_t pid)
{
	struct rstack *st;
	size_t cap, len = 0;
	int i;

	if (n->type == YAML_SCALAR_NODE) {
		yaml_node_t *named = scen_get(scen_get(node(1), "stacks"), scen_scalar(n));
		if (!named)
			scen_bad(n, "no stack named '%s' under stacks:", scen_scalar(n));
		n = named;
	}
	if (n->type != YAML_SEQUENCE_NODE || scen_seq_len(n) == 0)
		scen_bad(n, "a stack is a non-empty list of frames, root first");
	st = xcalloc(1, sizeof *st);
	st->kslot = st->uslot = -1;
	st->n = scen_seq_len(n);
	st->addr = xmalloc((size_t)st->n * sizeof *st->addr);
	cap = (size_t)st->n * 64 + 1;
	st->text = xmalloc(cap);
	st->text[0] = '\0';
	for (i = 0; i < st->n; i++) {
		char f[300];
		size_t fl;
		st->addr[i] = scen_frame_addr(scen_seq_at(n, i), pid);
		scen_frame_text(f, sizeof f, pid, st->addr[i]);
		fl = strlen(f);
		if (len + fl + 2 > cap) {
			cap = (len + fl + 2) * 2;
			st->text = xrealloc(st->text, cap);
		}
		if (i)
			st->text[len++] = ';';
		memcpy(st->text + len, f, fl + 1);
		len += fl;
		if (scen_is_kernel_addr(st->addr[i]))
			st->nk++;
	}
	/* kernel frames must be the leaf end (user code calls into the kernel) */
	for (i = st->n - st->nk; i < st->n; i++)
		if (!scen_is_kernel_addr(st->addr[i]))
			scen_bad(n, "user-mode frame above a kernel-mode frame (stacks are root first)");
	scen.stacks = xrealloc(scen.stacks, (size_t)(scen.nstacks + 1) * sizeof *scen.stacks);
	scen.stacks[scen.nstacks++] = st;
	return st;
}

/* ---------- events ---------- */

struct gev *
scen_add_event(int kind, int cpu, int64_t t)
{
	struct gev *e;

	if (scen.nev == scen.capev) {
		scen.capev = scen.capev ? scen.capev * 2 : 4096;
		scen.ev = xrealloc(scen.ev, scen.capev * sizeof *scen.ev);
	}
	e = &scen.ev[scen.nev];
	memset(e, 0, sizeof *e);
	e->kind = (uint8_t)kind;
	e->cpu = (int16_t)cpu;
	e->t = t;
	e->seq = (uint32_t)scen.nev++;
	return e;
}

int
scen_kind_of(const yaml_node_t *n)
{
	const char *s = scen_scalar(n);
	int k;
	for (k = 0; k < NKINDS; k++)
		if (strcmp(scen_kind_names[k], s) == 0)
			return k;
	scen_bad(n, "unknown event kind '%s'", s);
}

int
scen_cpu_of(const yaml_node_t *n)
{
	uint64_t c = u64_of(n);
	if (c >= (uint64_t)scen.cpus)
		scen_bad(n, "CPU %llu, but the machine has %d CPUs", (unsigned long long)c, scen.cpus);
	return (int)c;
}

uint32_t
scen_tid_of(const yaml_node_t *n)
{
	uint64_t t = u64_of(n);
	if (!scen_thread((uint32_t)t))
		scen_bad(n, "thread %llu is not declared under any process", (unsigned long long)t);
	return (uint32_t)t;
}

uint32_t
scen_tid_one_life_of(const yaml_node_t *n)
{
	uint32_t tid = scen_tid_of(n);
	if (scen_thread(tid)->reused)
		scen_bad(n, "thread %u is reused (several lives): generators and timelines take a thread with one "
		    "(name a reused one in events:, at times its lives hold)", tid);
	return tid;
}

/*
 * The thread tid N names at time T (an event's): a reused tid's life
 * then.  An event between a reused tid's lives could be either's; a
 * scenario says which by its time, so it is refused.
 */
static struct thread *
thread_at(const yaml_node_t *n, int64_t t)
{
	uint32_t tid = scen_tid_of(n);
	struct thread *th = scen_thread_at(tid, t);

	if (!th)
		scen_bad(n, "thread %u is reused and none of its lives holds %g ms", tid, ms_of(t));
	return th;
}

static int
name_index(const yaml_node_t *n, const char *const *names, int count)
{
	const char *s = scen_scalar(n);
	int i;
	for (i = 0; i < count; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return (int)u64_of(n);
}

int
scen_wait_reason_of(const yaml_node_t *n)
{
	int r = name_index(n, scen_wait_reasons, NWAIT);
	if (r >= NWAIT)
		scen_bad(n, "wait reason %d out of range", r);
	return r;
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
	const char *s = scen_scalar(n);
	struct tm tm;
	double frac = 0;
	char *rest;
	time_t t;

	memset(&tm, 0, sizeof tm);
	rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		scen_bad(n, "'%s' is not YYYY-MM-DDTHH:MM:SS[.fff]Z", s);
	if (*rest == '.') {
		frac = strtod(rest, &rest);
	}
	if (*rest == 'Z')
		rest++;
	if (*rest)
		scen_bad(n, "'%s' is not YYYY-MM-DDTHH:MM:SS[.fff]Z", s);
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
		scen_bad(node(1), "the scenario needs a machine: section");
	scen_check_keys(m, keys);
	if (!scen_get(m, "cpus") || !scen_get(m, "duration_ms"))
		scen_bad(m, "machine: needs cpus and duration_ms");
	scen.cpus = (int)scen_u64_or(m, "cpus", 1);
	if (scen.cpus < 1 || scen.cpus > 1024)
		scen_bad(scen_get(m, "cpus"), "cpus must be 1..1024");
	if (!scen.psize)
		scen.psize = (int)scen_u64_or(m, "pointer_size", 8);
	if (scen.psize != 4 && scen.psize != 8)
		scen_bad(scen_get(m, "pointer_size"), "pointer_size must be 4 or 8");
	v = str_or(m, "os_version", "10.0.0.0");
	if (sscanf(v, "%u.%u.%u.%u", &a, &b, &c, &d) != 4 || a > 255 || b > 255 || c > 255 || d > 255)
		scen_bad(scen_get(m, "os_version"), "os_version is four numbers 0-255, e.g. 10.0.1.5");
	scen.version[0] = (uint8_t)a;
	scen.version[1] = (uint8_t)b;
	scen.version[2] = (uint8_t)c;
	scen.version[3] = (uint8_t)d;
	scen.os_build = (uint32_t)scen_u64_or(m, "os_build", 17763);
	scen.freq = scen_u64_or(m, "clock_freq", 10000000);
	if (scen.freq < 1000 || scen.freq > 10000000000ull)
		scen_bad(scen_get(m, "clock_freq"), "clock_freq out of range");
	scen.cpu_mhz = (uint32_t)scen_u64_or(m, "cpu_mhz", 2600);
	scen.start_ft = (n = scen_get(m, "start_utc")) ? parse_utc(n) : 132591024000000000ull;
	scen.boot_ft = (n = scen_get(m, "boot_utc")) ? parse_utc(n) : scen.start_ft - 36000000000ull;
	scen.start_qpc = scen_u64_or(m, "start_qpc", 36000ull * scen.freq);
	scen.duration = scen_time_or(m, "duration_ms", 0);
	if (scen.duration <= 0)
		scen_bad(scen_get(m, "duration_ms"), "duration_ms must be positive");
	scen.interval_ms = scen_num_or(m, "sample_interval_ms", 1);
	if (scen.interval_ms < 0.0001 || scen.interval_ms > 1000)
		scen_bad(scen_get(m, "sample_interval_ms"), "sample_interval_ms out of range");
	scen.buffer_size = (uint32_t)scen_u64_or(m, "buffer_size", 65536);
	if (scen.buffer_size < 4096 || scen.buffer_size > 1048576 || scen.buffer_size % 1024)
		scen_bad(scen_get(m, "buffer_size"), "buffer_size must be a multiple of 1024, 4 KiB to 1 MiB");
	if (scen.compress < 0)
		scen.compress = scen_bool_or(m, "compress", 0);
	if (scen.stack_mode < 0) {
		v = str_or(m, "stacks", "full");
		scen.stack_mode = !strcmp(v, "full") ? 0 : !strcmp(v, "keys") ? 1 : !strcmp(v, "split") ? 2 : -1;
		if (scen.stack_mode < 0)
			scen_bad(scen_get(m, "stacks"), "stacks: full, split or keys");
	}
	if (!scen.seed)
		scen.seed = scen_u64_or(m, "seed", 1);
	scen.events_lost = (uint32_t)scen_u64_or(m, "events_lost", 0);
	scen.buffers_lost = (uint32_t)scen_u64_or(m, "buffers_lost", 0);
	scen.logger_name = xstrdup(str_or(m, "logger_name", "NT Kernel Logger"));
	scen.rundown_pid = (uint32_t)scen_u64_or(m, "rundown_pid", 0);
	scen.rundown_tid = (uint32_t)scen_u64_or(m, "rundown_tid", 0);
	scen.rundown_end_tid = (uint32_t)scen_u64_or(m, "rundown_end_tid", scen.rundown_tid);
	if (scen.key_cache < 0)
		scen.key_cache = (int)scen_u64_or(m, "stack_key_cache", 0);
	if (scen.key_cache > 1000000)
		scen_bad(scen_get(m, "stack_key_cache"), "stack_key_cache too large");
}

/*
 * One scenario serves both pointer sizes: in a 32-bit trace a 64-bit
 * address is folded into the 32-bit space, kernel ones above 2 GiB.
 */
static uint64_t
fit_pointer(uint64_t a)
{
	if (scen.psize == 8 || a < 0x100000000ull)
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

	scen_check_keys(n, keys);
	if (!scen_get(n, "path") || !scen_get(n, "base") || !scen_get(n, "size"))
		scen_bad(n, "an image needs path, base and size");
	im->path = xstrdup(str_or(n, "path", ""));
	im->name = xstrdup(basename_of(im->path));
	im->base = fit_pointer(scen_u64_or(n, "base", 0));
	im->size = scen_u64_or(n, "size", 0);
	if (!im->size || (scen.psize == 4 && (im->base + im->size > 0x100000000ull)) ||
	    im->base + im->size < im->base)
		scen_bad(n, "image %s: base/size do not fit the pointer size", im->name);
	im->checksum = (uint32_t)scen_u64_or(n, "checksum", 0);
	im->timestamp = (uint32_t)scen_u64_or(n, "timestamp", 0);
	im->image_timestamp = (uint32_t)scen_u64_or(n, "image_timestamp", im->timestamp);
	im->original = xstrdup(str_or(n, "original_name", im->name));
	im->pdb = scen_get(n, "pdb") ? xstrdup(str_or(n, "pdb", "")) : NULL;
	if ((g = scen_get(n, "guid")) != NULL) {
		const char *s = scen_scalar(g);
		size_t i;
		if (etl_guid_parse(s, im->guid) < 0)
			scen_bad(g, "'%s' is not a GUID", s);
		snprintf(im->guidtext, sizeof im->guidtext, "%s", s[0] == '{' ? s + 1 : s);
		for (i = 0; im->guidtext[i]; i++) {
			if (im->guidtext[i] == '}')
				im->guidtext[i] = '\0';
			else if (im->guidtext[i] >= 'A' && im->guidtext[i] <= 'F')
				im->guidtext[i] = (char)(im->guidtext[i] - 'A' + 'a');
		}
	}
	im->age = (uint32_t)scen_u64_or(n, "age", 1);
	im->load = scen_time_or(n, "load_ms", SCEN_NONE);
	im->unload = scen_time_or(n, "unload_ms", SCEN_NONE);
	im->proc = p;
}

static void
add_thread(struct proc *p, uint32_t tid, int idle_cpu)
{
	struct thread *t;

	scen.thr = xrealloc(scen.thr, (size_t)(scen.nthr + 1) * sizeof *scen.thr);
	t = &scen.thr[scen.nthr++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->proc = p;
	t->start = t->end = SCEN_NONE;
	t->idle_cpu = idle_cpu;
	t->prio = idle_cpu >= 0 ? 0 : 8;
}

/*
 * Thread T (declaration TN) is a tid declared before: a reused id, as
 * Windows reuses them, allowed when every life of it has start_ms and
 * end_ms and none overlaps another (so each event's time names one).
 */
static void
check_reuse(const yaml_node_t *tn, struct thread *t)
{
	int i;

	if (t->start == SCEN_NONE || t->end == SCEN_NONE)
		scen_bad(tn, "tid %u declared twice: a reused tid needs start_ms and end_ms in every declaration",
		    t->tid);
	if (t->end <= t->start)
		scen_bad(tn, "tid %u: a reused tid's life ends after it starts (start_ms %g, end_ms %g)", t->tid,
		    ms_of(t->start), ms_of(t->end));
	for (i = 0; i < scen.nthr; i++) {
		struct thread *o = &scen.thr[i];
		if (o == t || o->tid != t->tid)
			continue;
		if (o->start == SCEN_NONE || o->end == SCEN_NONE)
			scen_bad(tn, "tid %u declared twice: a reused tid needs start_ms and end_ms in every declaration "
			    "(not so in %s, pid %u)", t->tid, o->proc->name, o->proc->pid);
		if (o->start <= t->end && t->start <= o->end)
			scen_bad(tn, "tid %u declared twice with overlapping lives: %g-%g ms here, %g-%g ms in %s "
			    "(pid %u); one life ends before the next starts", t->tid, ms_of(t->start), ms_of(t->end),
			    ms_of(o->start), ms_of(o->end), o->proc->name, o->proc->pid);
		o->reused = t->reused = 1;
	}
}

static void
parse_processes(const yaml_node_t *list)
{
	static const char *const keys[] = {"name", "pid", "parent", "session", "cmdline",
	    "start_ms", "end_ms", "exit", "images", "threads", NULL};
	static const char *const tkeys[] = {"tid", "start_addr", "name", "prio", "start_ms",
	    "end_ms", "rundown", NULL};
	int i, j, ti, np = scen_seq_len(list), have_idle = 0, have_system = 0, reused;
	yaml_node_t *idle_tn = NULL;

	scen.procs = xcalloc((size_t)np + 2, sizeof *scen.procs);
	for (i = 0; i < np; i++) {
		yaml_node_t *n = scen_seq_at(list, i), *imgs, *thr;
		struct proc *p = &scen.procs[scen.nproc++];
		scen_check_keys(n, keys);
		if (!scen_get(n, "name") || !scen_get(n, "pid"))
			scen_bad(n, "a process needs name and pid");
		p->name = xstrdup(str_or(n, "name", ""));
		p->pid = (uint32_t)scen_u64_or(n, "pid", 0);
		for (j = 0; j < scen.nproc - 1; j++)
			if (scen.procs[j].pid == p->pid)
				scen_bad(n, "pid %u declared twice", p->pid);
		p->parent = (uint32_t)scen_u64_or(n, "parent", 0);
		p->session = (uint32_t)scen_u64_or(n, "session", p->pid <= 4 ? 0xFFFFFFFFu : 0);
		p->cmdline = xstrdup(str_or(n, "cmdline", ""));
		p->start = scen_time_or(n, "start_ms", SCEN_NONE);
		p->end = scen_time_or(n, "end_ms", SCEN_NONE);
		p->exit = (uint32_t)scen_u64_or(n, "exit", 0);
		imgs = scen_get(n, "images");
		p->nimg = scen_seq_len(imgs);
		p->img = xcalloc((size_t)p->nimg + 1, sizeof *p->img);
		for (j = 0; j < p->nimg; j++)
			parse_image(p, &p->img[j], scen_seq_at(imgs, j));
		if (p->pid == 0)
			have_idle = 1;
		if (p->pid == 4)
			have_system = 1;
		(void)thr;
	}
	if (!have_idle) {
		struct proc *p = &scen.procs[scen.nproc++];
		p->name = xstrdup("Idle");
		p->cmdline = xstrdup("");
		p->session = 0xFFFFFFFFu;
		p->start = p->end = SCEN_NONE;
	}
	if (!have_system) {
		struct proc *p = &scen.procs[scen.nproc++];
		p->name = xstrdup("System");
		p->cmdline = xstrdup("");
		p->pid = 4;
		p->session = 0xFFFFFFFFu;
		p->start = p->end = SCEN_NONE;
	}
	for (i = 0; i < scen.nproc; i++)
		scen.procs[i].key = (scen.psize == 8 ? 0xFFFFFA8001000000ull : 0x84000000ull) + 0x1000ull * (uint64_t)i;
	/* threads: the idle threads (tid 0, one per CPU) and the declared ones */
	for (i = 0; i < scen.cpus; i++)
		add_thread(scen_proc_by_pid(0), 0, i);
	for (i = 0; i < np; i++) {
		yaml_node_t *n = scen_seq_at(list, i), *thr = scen_get(n, "threads");
		struct proc *p = &scen.procs[i];
		for (j = 0; j < scen_seq_len(thr); j++) {
			yaml_node_t *tn = scen_seq_at(thr, j);
			uint32_t tid;
			struct thread *t;
			scen_check_keys(tn, tkeys);
			if (!scen_get(tn, "tid"))
				scen_bad(tn, "a thread needs tid");
			tid = (uint32_t)u64_of(scen_get(tn, "tid"));
			if (tid == 0 && p->pid == 0) {
				idle_tn = tn;	/* settings for every CPU's idle thread */
				continue;
			}
			if (tid == 0)
				scen_bad(tn, "tid 0 is the idle threads' (declared under Idle, pid 0, if at all)");
			reused = scen_thread(tid) != NULL;
			add_thread(p, tid, -1);
			t = &scen.thr[scen.nthr - 1];
			t->name = scen_get(tn, "name") ? xstrdup(str_or(tn, "name", "")) : NULL;
			t->prio = (int)scen_u64_or(tn, "prio", 8);
			t->start = scen_time_or(tn, "start_ms", SCEN_NONE);
			t->end = scen_time_or(tn, "end_ms", SCEN_NONE);
			t->no_rundown = !scen_bool_or(tn, "rundown", 1);
			if (t->no_rundown && t->start != SCEN_NONE)
				scen_bad(tn, "rundown: no is for a thread without start_ms");
			if (reused)
				check_reuse(tn, t);
		}
	}
	/*
	 * now that all images are known, start addresses can be frames; the
	 * declarations in the order added (after the idle threads), since a
	 * reused tid's lives are told apart by that alone
	 */
	ti = scen.cpus;
	for (i = 0; i < np; i++) {
		yaml_node_t *thr = scen_get(scen_seq_at(list, i), "threads");
		for (j = 0; j < scen_seq_len(thr); j++) {
			yaml_node_t *tn = scen_seq_at(thr, j), *sa = scen_get(tn, "start_addr");
			struct thread *t;
			if (u64_of(scen_get(tn, "tid")) == 0)
				continue;	/* the idle threads' (below) */
			t = &scen.thr[ti++];
			if (sa)
				t->start_addr = scen_frame_addr(sa, t->proc->pid);
		}
	}
	if (idle_tn && scen_get(idle_tn, "start_addr")) {
		uint64_t a = scen_frame_addr(scen_get(idle_tn, "start_addr"), 0);
		for (i = 0; i < scen.nthr; i++)
			if (scen.thr[i].idle_cpu >= 0)
				scen.thr[i].start_addr = a;
	}
	for (i = 0; i < scen.nthr; i++) {
		struct proc *p = scen.thr[i].proc;
		p->thr = xrealloc(p->thr, (size_t)(p->nthr + 1) * sizeof *p->thr);
		p->thr[p->nthr++] = &scen.thr[i];
	}
	/* images built with PDBs take the PDB's identity */
	for (i = 0; i < scen.nproc; i++)
		for (j = 0; j < scen.procs[i].nimg; j++) {
			struct image *im = &scen.procs[i].img[j];
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

int
scen_is_dpc(int k)
{
	return k == K_DPC || k == K_TDPC || k == K_TIMERDPC || k == K_ISR;
}

static void
set_routine(struct gev *e, const yaml_node_t *n, const yaml_node_t *rt)
{
	if (!rt)
		scen_bad(n, "%s needs a routine", scen_kind_names[e->kind]);
	e->addr = scen_frame_addr(rt, 4);
}

static void
set_duration(struct gev *e, const yaml_node_t *dn)
{
	int64_t d;
	if (!dn)
		scen_bad(NULL, "a DPC/ISR needs duration_us");
	d = (int64_t)llround(scen_num_of(dn) * (double)scen.freq / 1e6);
	if (d < 0)
		scen_bad(dn, "negative duration");
	e->t = e->t0 + d;
}

uint32_t
scen_ready_header(const yaml_node_t *n)
{
	const char *h = n ? scen_scalar(n) : "perfinfo";

	if (!strcmp(h, "perfinfo"))
		return SCEN_HDR_PERFINFO;
	if (!strcmp(h, "full"))
		return SCEN_HDR_FULL;
	if (!strcmp(h, "compact"))
		return SCEN_HDR_COMPACT;
	scen_bad(n, "header is perfinfo (as real traces), compact or full");
}

/*
 * ReadyThread: real traces log it with a PERFINFO header (no thread id);
 * the readying thread is the one running on the CPU, and the StackWalk
 * that follows carries it (scen_resolve_wakers).  tid: names it anyway:
 * checked against the context switches, and needed for a stack whose
 * frames are in that thread's process.  header: compact or full writes
 * the old kinds, whose header names tid: (required then).
 */
static void
parse_ready(struct gev *e, const yaml_node_t *n)
{
	yaml_node_t *tn = scen_get(n, "tid"), *sn = scen_get(n, "stack");
	uint32_t hdr = scen_ready_header(scen_get(n, "header"));

	if (!scen_get(n, "ready_tid"))
		scen_bad(n, "ReadyThread needs ready_tid (and tid, the readying thread, with header: compact or full)");
	if (!tn && hdr != SCEN_HDR_PERFINFO)
		scen_bad(n, "a ReadyThread whose header names the readying thread needs tid");
	e->a[0] = tn ? thread_at(tn, e->t)->tid : SCEN_WAKER_RUNNING;
	e->a[1] = thread_at(scen_get(n, "ready_tid"), e->t)->tid;
	e->a[2] = (uint32_t)i64_or(n, "adjust_reason", -128, 127, 0) & 0xFF;
	e->a[3] = (uint32_t)i64_or(n, "adjust_incr", -128, 127, 0) & 0xFF;
	e->a[4] = (uint32_t)i64_or(n, "flags", -128, 127, 0) & 0xFF;
	e->a[5] = hdr;
	/* the waker's stack; without tid: its frames resolve as kernel frames */
	if (sn)
		e->stack = scen_make_stack(sn, tn ? scen_thread_at(e->a[0], e->t)->proc->pid : 4);
}

static int
cmp_event_time(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
scen_resolve_wakers(void)
{
	int64_t *cur = xmalloc((size_t)scen.cpus * sizeof *cur);
	size_t i;
	int c;

	if (scen.nev)	/* (qsort of no array is undefined) */
		qsort(scen.ev, scen.nev, sizeof *scen.ev, cmp_event_time);
	/* before a CPU's first CSwitch, the thread it switches out is the one running */
	for (c = 0; c < scen.cpus; c++)
		cur[c] = -1;
	for (i = scen.nev; i-- > 0;)
		if (scen.ev[i].kind == K_CSWITCH)
			cur[scen.ev[i].cpu] = scen.ev[i].a[1];
	for (i = 0; i < scen.nev; i++) {
		struct gev *e = &scen.ev[i];
		double ms = (double)e->t * 1000 / (double)scen.freq;
		if (e->kind == K_CSWITCH)
			cur[e->cpu] = e->a[0];
		if (e->kind != K_READY || (e->a[5] & 0xFF) != SCEN_HDR_PERFINFO)
			continue;
		if (cur[e->cpu] < 0) {
			/* no context switch at all on this CPU: a decoder cannot tell */
			if (e->gen && e->a[0] == SCEN_WAKER_RUNNING)
				e->stack = NULL;	/* a generator's: nobody to walk */
			if (e->a[0] == SCEN_WAKER_RUNNING && e->stack)
				cli_fatal("%s: ReadyThread at %.4f ms on CPU %d has a stack but no CSwitch on that CPU "
				    "says which thread runs there: give tid:", scen.file, ms, e->cpu);
			e->a[5] |= SCEN_WAKER_UNKNOWN;
		} else if (e->a[0] == SCEN_WAKER_RUNNING) {
			e->a[0] = (uint32_t)cur[e->cpu];
			if (!scen_thread_at(e->a[0], e->t))
				cli_fatal("%s: ReadyThread at %.4f ms on CPU %d: thread %u runs there, a reused tid "
				    "none of whose lives holds that time", scen.file, ms, e->cpu, e->a[0]);
		} else if (e->a[0] != (uint32_t)cur[e->cpu])
			cli_fatal("%s: ReadyThread at %.4f ms on CPU %d names thread %u, but thread %lld runs there "
			    "(the readying thread is the running one)", scen.file, ms, e->cpu, e->a[0],
			    (long long)cur[e->cpu]);
	}
	free(cur);
}

/* ---------- disk and file I/O events ---------- */

int
scen_is_io(int kind)
{
	return kind >= K_DISKREAD && kind <= K_FILEIOOPEND;
}

/*
 * One disk or file I/O event (docs/scenario-format.md): the fields each
 * kind's record carries, checked for what the kind needs.  The writer
 * (scenwrite.c write_io) lays them out as the kernel does.
 */
static void
parse_io_event(yaml_node_t *n)
{
	static const char *const keys[] = { "kind", "t_ms", "cpu", "tid", "irp", "disk", "bytes",
	    "offset", "elapsed_us", "file_object", "file_key", "file", "status", "va", "version",
	    NULL };
	scen_check_keys(n, keys);
	if (!scen_get(n, "t_ms") || !scen_get(n, "cpu"))
		scen_bad(n, "an event needs kind, t_ms and cpu");
	int kind = scen_kind_of(scen_get(n, "kind"));
	struct gev *e = scen_add_event(kind, scen_cpu_of(scen_get(n, "cpu")), scen_time_or(n, "t_ms", 0));
	struct gio *io = xcalloc(1, sizeof *io);
	e->obj = io;
	io->tid = scen_get(n, "tid") ? thread_at(scen_get(n, "tid"), e->t)->tid : 0;
	io->irp = scen_u64_or(n, "irp", 0);
	io->disk = (uint32_t)scen_u64_or(n, "disk", 0);
	io->bytes = (uint32_t)scen_u64_or(n, "bytes", 0);
	io->offset = scen_u64_or(n, "offset", 0);
	io->file_object = scen_u64_or(n, "file_object", 0);
	io->file_key = scen_u64_or(n, "file_key", 0);
	io->status = (uint32_t)scen_u64_or(n, "status", 0);
	io->va = scen_u64_or(n, "va", 0);
	io->version = (uint32_t)scen_u64_or(n, "version", 3);
	io->elapsed = (int64_t)llround(scen_num_or(n, "elapsed_us", 0) * (double)scen.freq / 1e6);
	io->file = scen_get(n, "file") ? scen_scalar(scen_get(n, "file")) : NULL;
	if (io->version != 2 && io->version != 3)
		scen_bad(n, "version is 2 (Windows 7) or 3");
	if (io->elapsed < 0 || io->elapsed > e->t)
		scen_bad(n, "elapsed_us must be between 0 and the event's time");
	int needs_tid = kind != K_FILEIONAME && kind != K_FILEIORUNDOWN && kind != K_FILEIOOPEND;
	if (needs_tid && !io->tid)
		scen_bad(n, "%s needs tid (the thread that issued it)", scen_kind_names[kind]);
	if ((kind == K_FILEIONAME || kind == K_FILEIORUNDOWN || kind == K_FILEIOCREATE) && !io->file)
		scen_bad(n, "%s needs file", scen_kind_names[kind]);
	if (kind != K_FILEIONAME && kind != K_FILEIORUNDOWN && kind != K_HARDFAULT && !io->irp)
		scen_bad(n, "%s needs irp", scen_kind_names[kind]);
}

/* ---------- TcpIp and UdpIp events ---------- */

int
scen_is_net(int kind)
{
	return kind >= K_TCPSEND && kind <= K_UDPRECV6;
}

static int
net_is_v6(int kind)
{
	return (kind >= K_TCPSEND6 && kind <= K_TCPCOPY6) || kind == K_UDPSEND6 ||
	    kind == K_UDPRECV6;
}

/* The MOF event types: TcpIp Send 10 ... Reconnect 16, TCPCopy 18, UdpIp Send 10, Recv 11; IPV6 +16. */
void
scen_net_id(int kind, int *group, int *type)
{
	static const int tcp[] = { 10, 11, 12, 13, 14, 15, 16, 18 };
	int v6 = net_is_v6(kind) ? 16 : 0;

	if (kind >= K_UDPSEND) {
		*group = 8;
		*type = 10 + (kind - K_UDPSEND) % 2 + v6;
	} else {
		*group = 6;
		*type = tcp[(kind - K_TCPSEND) % 8] + v6;
	}
}

static void
net_addr_of(const yaml_node_t *n, int v6, uint8_t *out)
{
	const char *s = scen_scalar(n);
	if (inet_pton(v6 ? AF_INET6 : AF_INET, s, out) != 1)
		scen_bad(n, "'%s' is not an %s address (this kind is %s)", s, v6 ? "IPv6" : "IPv4",
		    v6 ? "an IPV6 one" : "IPv4: the IPV6 kinds take IPv6 addresses");
}

static uint16_t
net_port_of(const yaml_node_t *map, const char *key)
{
	uint64_t v = scen_u64_or(map, key, 0);
	if (v > 65535)
		scen_bad(scen_get(map, key), "%s is 0..65535", key);
	return (uint16_t)v;
}

/*
 * One TcpIp or UdpIp event (docs/scenario-format.md): the connection's
 * process (pid: the payload's, the header names no thread), the bytes, and
 * the two endpoints.
 */
static void
parse_net_event(yaml_node_t *n)
{
	static const char *const keys[] = { "kind", "t_ms", "cpu", "pid", "bytes", "daddr",
	    "saddr", "dport", "sport", "payload_bytes", NULL };
	scen_check_keys(n, keys);
	if (!scen_get(n, "t_ms") || !scen_get(n, "cpu") || !scen_get(n, "pid") ||
	    !scen_get(n, "daddr") || !scen_get(n, "saddr"))
		scen_bad(n, "a network event needs kind, t_ms, cpu, pid, daddr and saddr");
	int kind = scen_kind_of(scen_get(n, "kind"));
	struct gev *e = scen_add_event(kind, scen_cpu_of(scen_get(n, "cpu")), scen_time_or(n, "t_ms", 0));
	struct gnet *net = xcalloc(1, sizeof *net);
	e->obj = net;
	uint64_t pid = scen_u64_or(n, "pid", 0), bytes = scen_u64_or(n, "bytes", 0);
	if (pid > UINT32_MAX || bytes > UINT32_MAX)
		scen_bad(n, "pid and bytes are 32-bit");
	net->pid = (uint32_t)pid;
	net->bytes = (uint32_t)bytes;
	net->v6 = net_is_v6(kind);
	net_addr_of(scen_get(n, "daddr"), net->v6, net->daddr);
	net_addr_of(scen_get(n, "saddr"), net->v6, net->saddr);
	net->dport = net_port_of(n, "dport");
	net->sport = net_port_of(n, "sport");
	net->cut = -1;
	if (scen_get(n, "payload_bytes")) {
		uint64_t cut = scen_u64_or(n, "payload_bytes", 0);
		if (cut > 2 * 16 + 12)
			scen_bad(n, "payload_bytes cuts the payload: 0..44");
		net->cut = (int)cut;
	}
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

	for (i = 0; i < scen_seq_len(list); i++) {
		yaml_node_t *n = scen_seq_at(list, i);
		int kind, cpu;
		struct gev *e;
		struct thread *t, *ot;

		if (scen_get(n, "kind") && scen_is_io(scen_kind_of(scen_get(n, "kind")))) {
			parse_io_event(n);	/* disk and file I/O: their own keys */
			continue;
		}
		if (scen_get(n, "kind") && scen_is_net(scen_kind_of(scen_get(n, "kind")))) {
			parse_net_event(n);	/* TcpIp and UdpIp: theirs */
			continue;
		}
		scen_check_keys(n, keys);
		if (!scen_get(n, "kind") || !scen_get(n, "t_ms") || !scen_get(n, "cpu"))
			scen_bad(n, "an event needs kind, t_ms and cpu");
		kind = scen_kind_of(scen_get(n, "kind"));
		cpu = scen_cpu_of(scen_get(n, "cpu"));
		e = scen_add_event(kind, cpu, scen_time_or(n, "t_ms", 0));
		switch (kind) {
		case K_SAMPLE:
			t = scen_get(n, "tid") ? thread_at(scen_get(n, "tid"), e->t) : scen_thread(0);
			e->a[0] = t->tid;
			e->a[1] = (uint32_t)scen_u64_or(n, "prio", (uint64_t)t->prio);
			e->a[2] = (uint32_t)scen_u64_or(n, "count", 1);
			e->a[3] = (uint32_t)(scen_bool_or(n, "dpc", 0) | scen_bool_or(n, "isr", 0) << 1);
			if (e->a[1] > 31 || e->a[2] < 1 || e->a[2] > 65535)
				scen_bad(n, "prio is 0..31, count 1..65535");
			if (scen_get(n, "stack")) {
				e->stack = scen_make_stack(scen_get(n, "stack"), t->proc->pid);
				e->addr = e->stack->addr[e->stack->n - 1];
			} else if (scen_get(n, "ip"))
				e->addr = scen_frame_addr(scen_get(n, "ip"), t->proc->pid);
			else
				scen_bad(n, "a Sample needs a stack or an ip");
			break;
		case K_DPC: case K_TDPC: case K_TIMERDPC: case K_ISR:
			e->t0 = e->t;
			set_routine(e, n, scen_get(n, "routine"));
			set_duration(e, scen_get(n, "duration_us"));
			e->a[0] = (uint32_t)scen_u64_or(n, "vector", 0);
			e->a[1] = (uint32_t)scen_bool_or(n, "msi", 0);
			e->a[2] = (uint32_t)scen_u64_or(n, "message", 0);
			e->a[3] = (uint32_t)scen_u64_or(n, "ret", 1);
			if (e->a[0] > 0xFFFF || e->a[3] > 255)
				scen_bad(n, "vector is 0..65535, ret 0..255");
			break;
		case K_CSWITCH:
			if (!scen_get(n, "new_tid") || !scen_get(n, "old_tid"))
				scen_bad(n, "CSwitch needs new_tid and old_tid");
			t = thread_at(scen_get(n, "new_tid"), e->t);
			ot = thread_at(scen_get(n, "old_tid"), e->t);
			e->a[0] = t->tid;
			e->a[1] = ot->tid;
			e->a[2] = (uint32_t)scen_u64_or(n, "new_prio", (uint64_t)t->prio);
			e->a[3] = (uint32_t)scen_u64_or(n, "old_prio", (uint64_t)ot->prio);
			e->a[4] = (uint32_t)(scen_get(n, "wait_reason") ? name_index(scen_get(n, "wait_reason"), scen_wait_reasons, NWAIT) : 6);
			e->a[4] |= (uint32_t)(scen_get(n, "old_state") ? name_index(scen_get(n, "old_state"), scen_thread_states, 8) : 5) << 8;
			e->a[4] |= (uint32_t)(strcmp(str_or(n, "wait_mode", "kernel"), "user") == 0) << 16;
			e->a[4] |= (uint32_t)(strcmp(str_or(n, "header", "compact"), "full") == 0) << 17;
			e->a[5] = (uint32_t)scen_u64_or(n, "wait_time", 0);
			if ((e->a[4] & 0xFF) >= (uint32_t)NWAIT || ((e->a[4] >> 8) & 0xFF) > 7 ||
			    e->a[2] > 31 || e->a[3] > 31)
				scen_bad(n, "CSwitch: wait_reason/old_state/priority out of range");
			if (scen_get(n, "stack")) {
				/* the new thread's stack at switch-in: where it blocked */
				if (e->a[0] == 0)
					scen_bad(n, "CSwitch: a stack is the new thread's; the idle thread has none");
				e->stack = scen_make_stack(scen_get(n, "stack"), t->proc->pid);
			}
			break;
		case K_READY:
			parse_ready(e, n);
			break;
		case K_LOST:
			e->a[0] = (uint32_t)scen_u64_or(n, "events", scen_get(n, "buffers") ? 0 : 1);
			e->a[1] = (uint32_t)scen_u64_or(n, "buffers", 0);
			if (e->a[1] > 1000)
				scen_bad(n, "at most 1000 lost buffers");
			scen.lost_total += e->a[0];
			scen.lost_buffers += e->a[1];
			break;
		case K_INTERVAL:
			e->a[0] = (uint32_t)llround(scen_num_or(n, "interval_ms", 1) * 10000);
			break;
		default:
			scen_bad(n, "%s events come from processes: or samples, not events:", scen_kind_names[kind]);
		}
	}
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
void
scen_emit_sources(const char *dir)
{
	yaml_node_t *routines = scen_get(node(1), "routines");
	yaml_node_pair_t *p;
	char path[4096];
	FILE *list;
	int i, j, k, nseen = 0;
	const char **seen = xcalloc(1, sizeof *seen);
	unsigned serial = 1;

	snprintf(path, sizeof path, "%s/modules.txt", dir);
	if (!(list = fopen(path, "w")))
		cli_fatal("%s: %s", path, strerror(errno));
	for (i = 0; i < scen.nproc; i++)
		for (j = 0; j < scen.procs[i].nimg; j++) {
			struct image *im = &scen.procs[i].img[j];
			FILE *fp = NULL;
			for (k = 0; k < nseen; k++)
				if (strcasecmp(seen[k], im->name) == 0)
					break;
			if (k < nseen || !routines || routines->type != YAML_MAPPING_NODE)
				continue;
			seen = xrealloc(seen, (size_t)(nseen + 1) * sizeof *seen);
			seen[nseen++] = im->name;
			for (p = routines->data.mapping.pairs.start; p < routines->data.mapping.pairs.top; p++) {
				const char *name = scen_scalar(node(p->key));
				const yaml_node_t *t = node(p->value);
				const char *sep;
				int hops;
				struct image *rim;
				/* follow aliases to "module+0xRVA"; only this image's routines */
				for (hops = 0; hops < 16 && scen_get(routines, scen_scalar(t)) && scen_get(routines, scen_scalar(t)) != t; hops++)
					t = scen_get(routines, scen_scalar(t));
				sep = strpbrk(scen_scalar(t), "+!");
				if (!sep || (size_t)(sep - scen_scalar(t)) != strlen(im->name) ||
				    strncasecmp(scen_scalar(t), im->name, strlen(im->name)) != 0 || !is_c_identifier(name))
					continue;
				rim = scen_resolve(scen.procs[i].pid, scen_frame_addr(t, scen.procs[i].pid));
				if (rim != im)
					continue;
				if (!fp) {
					snprintf(path, sizeof path, "%s/%s.c", dir, im->name);
					if (!(fp = fopen(path, "w")))
						cli_fatal("%s: %s", path, strerror(errno));
					fprintf(fp, "/* %s: stand-in code for the routines scenario %s names (etlgen --emit-c) */\n"
					    "volatile int etlgen_sink;\n", im->name, scen.file);
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

/* ---------- loading ---------- */

yaml_node_t *
scen_section(const char *key)
{
	return scen_get(node(1), key);
}

void
scen_load(const char *path, const char *symbols)
{
	static const char *const keys[] = {"machine", "processes", "routines", "stacks",
	    "events", "generate", "timeline", NULL};
	yaml_parser_t parser;
	yaml_node_t *root;
	FILE *fp;

	scen.file = path;
	fp = fopen(scen.file, "rb");
	if (!fp)
		cli_fatal("%s: %s", scen.file, strerror(errno));
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, fp);
	if (!yaml_parser_load(&parser, &scen.doc))
		cli_fatal("%s:%lu: %s", scen.file, (unsigned long)parser.problem_mark.line + 1,
		    parser.problem ? parser.problem : "YAML error");
	fclose(fp);
	yaml_parser_delete(&parser);
	root = yaml_document_get_root_node(&scen.doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		cli_fatal("%s: a scenario is a YAML mapping", scen.file);
	scen_check_keys(root, keys);
	parse_machine(scen_get(root, "machine"));
	rng_state = scen.seed;
	if (symbols)
		load_symbols(symbols);
	parse_processes(scen_get(root, "processes"));
}

void
scen_parse_events(void)
{
	parse_events(scen_section("events"));
}

void
scen_free(void)
{
	yaml_document_delete(&scen.doc);
}
