/*
 * convert.c - ETL events → evt lines.
 *
 * Two passes over the trace:
 *   1. file order, headers only for most events: collects processes,
 *      threads, images (with ImageID/DbgID and volume names), CLR
 *      modules and JIT methods, every stack (StackWalk Stack events and
 *      the Win8+ stack keys with their KeyDelete/KeyRundown definitions,
 *      which can come much later than the events that use them), the
 *      sampling interval, and the time range.
 *   2. time order (per-CPU merge): every event becomes one evt line,
 *      with its stack attached and its addresses resolved.
 * Memory is the model (processes, images, distinct stacks), never the
 * events themselves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cli.h"
#include "etl/convert.h"
#include "evt/evtwrite.h"
#include "base/hmap.h"
#include "etl/tracelogging.h"
#include "etl/tdh.h"

/* ---------- GUIDs ---------- */

static int
parse_guid(const char *s, uint8_t out[16])
{
	unsigned v[11];
	if (sscanf(s, "%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x", &v[0], &v[1], &v[2], &v[3], &v[4],
	    &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]) != 11)
		return -1;
	out[0] = (uint8_t)v[0];
	out[1] = (uint8_t)(v[0] >> 8);
	out[2] = (uint8_t)(v[0] >> 16);
	out[3] = (uint8_t)(v[0] >> 24);
	out[4] = (uint8_t)v[1];
	out[5] = (uint8_t)(v[1] >> 8);
	out[6] = (uint8_t)v[2];
	out[7] = (uint8_t)(v[2] >> 8);
	for (int i = 0; i < 8; i++)
		out[8 + i] = (uint8_t)v[3 + i];
	return 0;
}

static const struct {
	const char *guid, *name, *census;
} providers[] = {
	{ "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", "Microsoft-Windows-DotNETRuntime", "DotNETRuntime" },
	{ "a669021c-c450-4609-a035-5af59af4df18", "Microsoft-Windows-DotNETRuntimeRundown", "DotNETRuntimeRundown" },
	{ "763fd754-7086-4dfe-95eb-c01a46faf4ca", "Microsoft-Windows-DotNETRuntimePrivate", "DotNETRuntimePrivate" },
	{ "47c3ba0c-77f1-4eb0-8d4d-aef447f16a85", "Microsoft-Windows-DotNETRuntimeStress", "DotNETRuntimeStress" },
	{ "edd08927-9cc4-4e65-b970-c2560fb5c289", "Microsoft-Windows-Kernel-File", "Kernel-File" },
	{ "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", "Microsoft-Windows-Kernel-Process", "Kernel-Process" },
	{ "b675ec37-bdb6-4648-bc92-f3fdc74d3ca2", "Microsoft-Windows-Kernel-EventTracing", "Kernel-EventTracing" },
	{ "a8a71ac1-040f-54a2-07ca-00a89b5ab761", "PerfViewLogger", "PerfViewLogger" },
	{ "b3e675d7-2554-4f18-830b-2762732560de", "KernelTraceControl", "KernelTraceControl(ImageId/DbgId)" },
	{ "bbccf6c1-6cd1-48c4-80ff-839482e37671", "KernelTraceControl-MetaData", "KernelTraceControl:MetaData" },
	{ "9b79ee91-b5fd-41c0-a243-4248e266e9d0", "SystemConfigEx", "Kernel:SysConfig(Build/Paths/Volume)" },
	{ "ed54dff8-c409-4cf6-bf83-05e1e61a09c4", "KernelTraceControl-WinSat", "KernelTraceControl:WinSat" },
	{ "dd5ef90a-6398-47a4-ad34-4dcecdef795f", "Microsoft-Windows-HttpService", NULL },
	{ "a0c1853b-5c40-4b15-8766-3cf1c58f985a", "Microsoft-Windows-PowerShell", NULL },
	{ "9e814aad-3204-11d2-9a82-006008a86939", "NT Kernel Logger", NULL },
};
#define NPROVIDERS (sizeof providers / sizeof providers[0])
static uint8_t provider_guid[NPROVIDERS][16];
static int providers_ready;

const char *
etl_provider_name(const uint8_t *guid, int census_form)
{
	if (!providers_ready) {
		for (size_t i = 0; i < NPROVIDERS; i++)
			parse_guid(providers[i].guid, provider_guid[i]);
		providers_ready = 1;
	}
	if (!guid)
		return NULL;
	for (size_t i = 0; i < NPROVIDERS; i++)
		if (memcmp(guid, provider_guid[i], 16) == 0)
			return census_form ? providers[i].census : providers[i].name;
	return NULL;
}

enum { P_CLR = 0, P_CLR_RUNDOWN = 1, P_IMAGEID = 8, P_SYSCONFIGEX = 10 };

static int
is_provider(const uint8_t *g, int which)
{
	if (!providers_ready)
		etl_provider_name(NULL, 0);
	return g && memcmp(g, provider_guid[which], 16) == 0;
}

static int64_t
htid(const struct etl_event *ev)
{
	return ev->tid == ETL_NO_ID ? -1 : (int64_t)ev->tid;
}

static int64_t
hpid(const struct etl_event *ev)
{
	return ev->pid == ETL_NO_ID ? -1 : (int64_t)ev->pid;
}

/* ---------- kernel names ---------- */

static const char *const group_names[] = {
	"Header", "DiskIo", "PageFault", "Process", "FileIo", "Thread", "TcpIp", "Job", "UdpIp",
	"Registry", "DbgPrint", "Config", "Spare1", "WNF", "Pool", "PerfInfo", "Heap", "Object",
	"Power", "ModBound", "Image", "Dpc", "CC", "CritSec", "StackWalk", "UMS", "ALPC", "SplitIo",
	"ThreadPool", "Hypervisor", "HypervisorX",
};

static const char *
group_name(unsigned g)
{
	return g < sizeof group_names / sizeof group_names[0] ? group_names[g] : "Group";
}

static const char *const wait_reasons[] = {
	"Executive", "FreePage", "PageIn", "PoolAllocation", "DelayExecution", "Suspended",
	"UserRequest", "WrExecutive", "WrFreePage", "WrPageIn", "WrPoolAllocation",
	"WrDelayExecution", "WrSuspended", "WrUserRequest", "WrEventPair", "WrQueue",
	"WrLpcReceive", "WrLpcReply", "WrVirtualMemory", "WrPageOut", "WrRendezvous",
	"WrKeyedEvent", "WrTerminated", "WrProcessInSwap", "WrCpuRateControl", "WrCalloutStack",
	"WrKernel", "WrResource", "WrPushLock", "WrMutex", "WrQuantumEnd", "WrDispatchInt",
	"WrPreempted", "WrYieldExecution", "WrFastMutex", "WrGuardedMutex", "WrRundown",
	"WrAlertByThreadId", "WrDeferredPreempt", "WrPhysicalFault",
};

static const char *const thread_states[] = {
	"Initialized", "Ready", "Running", "Standby", "Terminated", "Waiting", "Transition",
	"DeferredReady", "GateWaitObsolete", "WaitingForProcessInSwap",
};

/* ---------- stacks (pass 1) ---------- */

/*
 * An evt line waiting for its stack.  Stack records come after their
 * event (the kernel part just after it on the same CPU, the user part
 * when the thread returns to user mode), so pass 2 keeps lines in a
 * reorder window until their stacks arrive, or the window (time and
 * count) moves past them.  Memory: the window, not the trace.
 */
struct pend {
	struct evtw_line text;	/* the line without its stack column */
	uint64_t ts;		/* global */
	uint32_t tid, pid;
	uint64_t ip;		/* samples: the sampled address */
	uint8_t want;		/* registered in the pending map */
	uint8_t sample;
	uint8_t has_k, has_u;
	uint8_t late;		/* got records kept by pass 1: the others may still come */
	uint64_t *kf, *uf;	/* innermost first; kf also holds frames given directly */
	uint32_t nk, nu, capk, capu;
};

#define QWIN_NS (1000 * 1000000LL)	/* how long a line may wait for its user stack */
#define LATE_NS 1000000u		/* stack records later than this are remembered one by one */
#define LATE_MAX (1u << 18)		/* up to this many */
#define QCAP (1u << 17)			/* and how many lines may wait */

struct keydef {
	uint64_t key, ts, seq;	/* seq: position in its CPU's stream */
	uint32_t cpu;
	uint32_t idx, len;
	int create;
};

#define GBIAS ((uint64_t)1 << 62)	/* global times are GBIAS + ns since the earliest start */

struct source {
	struct etl_reader *r;
	int64_t off_ns;		/* this file's start relative to the earliest start */
	struct etl_event ev;	/* pass 2: its next event (ts already global) */
	uint64_t seq;		/* and its position in its CPU's stream */
	int have;
};

struct conv {
	struct source *src;
	size_t nsrc, cur;
	uint64_t ft0;		/* FILETIME of the earliest start */
	struct etl_reader *r;	/* the current source's reader */
	const struct etl_info *info;
	const struct etl2evt_opts *o;
	struct outbuf *ob;
	struct images *img;
	struct tdh_db *tdh;	/* manifest schemas embedded in the trace (lib/etl/tdh.c) */
	unsigned P;
	/* stacks */
	uint64_t nstackev;	/* Stack/StackKey records in the trace */
	uint64_t *cseq;		/* per source and CPU: events seen, both passes alike */
	uint64_t cur_seq;	/* the current event's position in its CPU's stream */
	struct pend *q;		/* ring of waiting lines, indexed by sequence & (qcap - 1) */
	size_t qcap;
	uint64_t qhead, qtail;	/* sequence numbers */
	struct hmap pendmap;	/* (tid, ts) → sequence of the waiting line */
	uint64_t now;		/* global time of the event being emitted */
	int want;		/* set by stack_of(): the next finish() waits for a stack */
	uint32_t want_tid;
	int want_sample;
	uint64_t want_ip;
	uint64_t unmatched;
	/* which event kinds get stacks (learned in pass 1), so pass 2 makes only those wait */
	struct hmap stacked;
	/*
	 * Per thread (learned in pass 1): the time of the last event that gets
	 * a stack record, of the last that gets a user-mode part, and the
	 * longest a record came after its event.  A line waits for nothing
	 * after them, so it does not hold the window (and every line behind
	 * it) for QWIN_NS: on a Windows 7 trace, whose stacks come at once
	 * or never, the window stays a few lines deep.
	 */
	struct hmap lastmap;	/* (tid, 0) → index in last[] */
	struct last_stack { uint64_t any, user, maxlat; } *last;
	size_t nlast, caplast;
	/*
	 * The events whose stack records came over LATE_NS after them (rare:
	 * a thread's one late record would otherwise make all its lines wait
	 * that long, and every line behind them): pass 1 keeps their Stack
	 * records' frames and their stack-key records' keys, so that pass 2
	 * attaches them when the event comes and ignores the record when it
	 * comes.  A second record for the same part is not kept; its event
	 * waits for it (up to .wait_us).  Past LATE_MAX such events, lines wait
	 * their thread's longest delay instead.
	 */
	struct hmap late;	/* (tid, event time) → index in lates[] */
	struct late_stack {
		struct late_part {	/* the kernel part (k) and the user part (u) */
			uint8_t have, is_key;
			uint32_t idx, len;	/* Stack record: its frames in fr[] */
			uint64_t key, ts, seq;	/* stack-key record: resolved in pass 2 */
			uint32_t cpu;
		} k, u;
		uint8_t whole;		/* the kernel Stack record reaches user space */
		uint8_t applied;	/* pass 2 gave them to the event's line */
		uint32_t wait_us;	/* late records not kept: the longest delay, rounded up */
	} *lates;
	size_t nlate, caplate;
	int late_overflow;
	struct recent { uint64_t ts, kind; } *recent;	/* per CPU, the last RECENT events */
	uint64_t cur_kind;
	struct hmap framemap;	/* (hash, length) → frames in fr[] */
	uint64_t *fr;
	size_t nfr, capfr;
	struct keydef *kd;
	size_t nkd, capkd;
	/* time */
	uint64_t min_ts, max_ts;
	int have_ts;
	uint32_t first_interval;	/* 100 ns units; 0 = none seen */
	uint32_t interval;		/* in force during pass 2 */
	/* per CPU running thread (from CSwitch) for DPC/ISR attribution */
	int64_t *cur_tid;
	size_t ncur;
	/* filters */
	char **kinds;
	size_t nkinds;
	char **procs;
	size_t nprocs;
	int64_t from_ns, to_ns;
	int64_t lo_ns, hi_ns;	/* sane event times */
	uint64_t bad_ts;
	uint64_t bad_dpc;	/* DPC/ISR records with an impossible InitialTime */
	uint64_t seq;		/* pass 1: events seen, for ordering ties */
	/* output */
	struct evtw_line l;
	size_t line_mark;	/* where attributes start */
	uint64_t events;
	uint64_t unresolved;
	uint64_t skipped_events;
	uint64_t frames_buf_cap;
	uint64_t *frames;	/* scratch for one stack, innermost first */
	size_t nframes, capframes;
	/*
	 * Frame texts as written (escaped), by image and address: the same
	 * few thousand frames make most stacks, and making a frame (image
	 * lookup aside) is most of the cost of a stack column.
	 */
	struct frame_text {
		const void *image;	/* NULL: free */
		uint64_t addr;
		char *text;
		size_t len, cap;
		int resolved;		/* the symbol hook named it (its lookups are still counted) */
	} *ftext;
};

#define FTEXT_BITS 12

#define GROW(arr, n, cap) do { \
	if ((n) == (cap)) { \
		(cap) = (cap) ? (cap) * 2 : 256; \
		(arr) = xrealloc((arr), (cap) * sizeof *(arr)); \
	} \
} while (0)

static uint64_t
ptr_at(const struct conv *c, const uint8_t *p)
{
	return c->P == 8 ? etl_u64(p) : etl_u32(p);
}

/* A raw timestamp of the current source → global time (GBIAS + ns). */
static uint64_t
gts(const struct conv *c, uint64_t raw)
{
	return GBIAS + (uint64_t)(c->src[c->cur].off_ns + etl_ns(c->r, raw));
}

static void
use_source(struct conv *c, size_t i)
{
	c->cur = i;
	c->r = c->src[i].r;
	c->info = etl_info(c->r);
	c->P = c->info->pointer_size;
}

/*
 * Stores N frames (P-sized, innermost first) once: identical stacks share
 * one copy, so memory grows with distinct stacks, not with samples.
 */
static uint32_t
add_frames(struct conv *c, const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= ptr_at(c, p + i * c->P);
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	uint32_t *known = hmap_get(&c->framemap, h, n);
	if (known) {
		size_t i;
		for (i = 0; i < n; i++)
			if (c->fr[*known + i] != ptr_at(c, p + i * c->P))
				break;
		if (i == n)
			return *known;
	}
	uint32_t start = (uint32_t)c->nfr;
	while (c->nfr + n > c->capfr) {
		c->capfr = c->capfr ? c->capfr * 2 : 4096;
		c->fr = xrealloc(c->fr, c->capfr * sizeof *c->fr);
	}
	for (size_t i = 0; i < n; i++)
		c->fr[c->nfr++] = ptr_at(c, p + i * c->P);
	if (!known)
		hmap_put(&c->framemap, h, n, start);
	return start;
}

#define RECENT 8

/* What identifies an event's kind for "does it get stacks": header class, group/type or provider/id. */
static uint64_t
kind_key(const struct etl_event *ev)
{
	uint64_t k = (uint64_t)ev->hkind << 56;
	if (ev->hkind <= ETL_HK_PERFINFO)
		return k | (uint64_t)ev->group << 8 | ev->type;
	uint64_t g = ev->guid ? etl_u64(ev->guid) ^ (etl_u64(ev->guid + 8) * 31) : 0;
	return k ^ (g & 0x00ffffffffffffffull) ^ ((uint64_t)ev->id << 16) ^ ev->type;
}

/* Pass 1: a stack record names its event by time; the event is among the CPU's last few. */
static void
learn_stacked(struct conv *c, const struct etl_event *ev, uint64_t evts)
{
	if ((size_t)ev->cpu >= c->ncur)
		return;
	struct recent *r = c->recent + (size_t)ev->cpu * RECENT;
	for (int i = 0; i < RECENT; i++)
		if (r[i].ts == evts && r[i].kind)
			hmap_put(&c->stacked, r[i].kind, 0, 1);
}

static void
remember(struct conv *c, const struct etl_event *ev)
{
	if ((size_t)ev->cpu >= c->ncur || (ev->hkind == ETL_HK_PERFINFO && ev->group == 24))
		return;
	struct recent *r = c->recent + (size_t)ev->cpu * RECENT;
	memmove(r + 1, r, (RECENT - 1) * sizeof *r);
	r[0].ts = ev->ts;
	r[0].kind = kind_key(ev) | 1ull << 63;
}

/* Whether a Stack/StackKey record (of at least 16 + P bytes) is an event's kernel part. */
static int
kernel_part(const struct conv *c, const struct etl_event *ev)
{
	if (ev->type != 32)
		return ev->type == 37;
	return ev->plen >= 16 + c->P && images_is_kernel(c->img, ptr_at(c, ev->payload + 16));
}

/* A Stack record whose outermost frame is in user space holds the user part too. */
static int
stack_has_user(const struct conv *c, const struct etl_event *ev)
{
	if (ev->type != 32)
		return ev->type == 38;
	size_t nf = (ev->plen - 16) / c->P;
	return nf > 0 && !images_is_kernel(c->img, ptr_at(c, ev->payload + 16 + (nf - 1) * c->P));
}

static void frames_put(uint64_t **f, uint32_t *n, uint32_t *cap, const uint64_t *src, size_t k);
static const struct keydef *resolve_key(const struct conv *c, uint64_t key, uint64_t ts, uint32_t cpu,
    uint64_t seq);

/* Pass 1: a stack record for (TID, EVTS) came over LATE_NS after it. */
static void
learn_late(struct conv *c, const struct etl_event *ev, uint32_t tid, uint64_t evts)
{
	if (c->late_overflow)
		return;
	uint32_t *i = hmap_get(&c->late, tid, evts);
	if (!i) {
		if (c->nlate == LATE_MAX) {
			c->late_overflow = 1;
			return;
		}
		GROW(c->lates, c->nlate, c->caplate);
		memset(&c->lates[c->nlate], 0, sizeof *c->lates);
		hmap_put(&c->late, tid, evts, (uint32_t)c->nlate);
		i = hmap_get(&c->late, tid, evts);
		c->nlate++;
	}
	struct late_stack *L = &c->lates[*i];
	size_t nf = (ev->plen - 16) / c->P;
	const uint8_t *f = ev->payload + 16;
	int kernel = kernel_part(c, ev);
	struct late_part *part = kernel ? &L->k : &L->u;
	if (!part->have && (ev->type != 32 || nf > 0)) {
		part->have = 1;
		if (ev->type == 32) {
			part->idx = add_frames(c, f, nf);
			part->len = (uint32_t)nf;
			if (kernel)
				L->whole = !images_is_kernel(c->img, ptr_at(c, f + (nf - 1) * c->P));
		} else {
			/* the key's definition may come later in the trace: resolved in pass 2 */
			part->is_key = 1;
			part->key = ptr_at(c, f);
			part->ts = ev->ts;
			part->cpu = (uint32_t)ev->cpu;
			part->seq = c->cur_seq;
		}
		return;
	}
	uint64_t us = (ev->ts - evts + 999) / 1000 + 1;	/* pass 1 times are global already */
	if (us > L->wait_us)
		L->wait_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* A kept part's frames into a line; a key that does not resolve is counted, as attach_stack does. */
static int
late_frames(struct conv *c, const struct late_part *part, uint64_t **f, uint32_t *n, uint32_t *cap)
{
	if (!part->is_key) {
		frames_put(f, n, cap, c->fr + part->idx, part->len);
		return 1;
	}
	const struct keydef *d = resolve_key(c, part->key, part->ts, part->cpu, part->seq);
	if (!d) {
		c->unresolved++;
		return 0;
	}
	frames_put(f, n, cap, c->fr + d->idx, d->len);
	return 1;
}

/* Pass 2: a line that waits for a stack gets the late records pass 1 kept for it. */
static void
apply_late(struct conv *c, struct pend *e)
{
	uint32_t *i = hmap_get(&c->late, e->tid, e->ts);
	if (!i)
		return;
	struct late_stack *L = &c->lates[*i];
	if (L->k.have && late_frames(c, &L->k, &e->kf, &e->nk, &e->capk)) {
		e->has_k = 1;
		if (L->whole)
			e->has_u = 1;
	}
	if (L->u.have && late_frames(c, &L->u, &e->uf, &e->nu, &e->capu))
		e->has_u = 1;
	L->applied = 1;
	e->late = 1;
}

/* Pass 2: whether this stack record was given to its line already (by apply_late). */
static int
applied_late(const struct conv *c, const struct etl_event *ev, uint32_t tid, uint64_t evts)
{
	if (c->nlate == 0)
		return 0;
	const uint32_t *i = hmap_get(&c->late, tid, evts);
	if (!i || !c->lates[*i].applied)
		return 0;
	const struct late_stack *L = &c->lates[*i];
	const struct late_part *part = kernel_part(c, ev) ? &L->k : &L->u;
	size_t nf = (ev->plen - 16) / c->P;
	const uint8_t *f = ev->payload + 16;
	if (ev->type != 32)	/* the very key record kept: same key, same place in its CPU's stream */
		return part->have && part->is_key && part->key == ptr_at(c, f) &&
		    part->ts == ev->ts && part->cpu == (uint32_t)ev->cpu && part->seq == c->cur_seq;
	/* the very Stack record kept: same frames */
	if (nf == 0 || !part->have || part->is_key || part->len != nf)
		return 0;
	for (size_t k = 0; k < nf; k++)
		if (c->fr[part->idx + k] != ptr_at(c, f + k * c->P))
			return 0;
	return 1;
}

/* Pass 1: thread TID's event at EVTS gets a stack record at TS (with a user part: USER). */
static void
learn_last(struct conv *c, uint32_t tid, uint64_t evts, uint64_t ts, int user)
{
	uint32_t *i = hmap_get(&c->lastmap, tid, 0);
	if (!i) {
		GROW(c->last, c->nlast, c->caplast);
		c->last[c->nlast].any = c->last[c->nlast].user = c->last[c->nlast].maxlat = 0;
		hmap_put(&c->lastmap, tid, 0, (uint32_t)c->nlast);
		i = hmap_get(&c->lastmap, tid, 0);
		c->nlast++;
	}
	struct last_stack *l = &c->last[*i];
	if (evts > l->any)
		l->any = evts;
	if (user && evts > l->user)
		l->user = evts;
	if (ts > evts && ts - evts > l->maxlat)
		l->maxlat = ts - evts;
}

static void
collect_stackwalk(struct conv *c, const struct etl_event *ev)
{
	const uint8_t *p = ev->payload;
	uint32_t n = ev->plen;

	switch (ev->type) {
	case 32: case 37: case 38: {	/* Stack / StackKeyKernel / StackKeyUser: ts, pid, tid, ... */
		c->nstackev++;
		uint64_t evts = n >= 8 ? gts(c, etl_u64(p)) : 0;
		if (n >= 8)
			learn_stacked(c, ev, evts);
		if (n >= 16 + c->P) {
			learn_last(c, etl_u32(p + 12), evts, ev->ts, stack_has_user(c, ev));
			if (ev->ts > evts && ev->ts - evts > LATE_NS)
				learn_late(c, ev, etl_u32(p + 12), evts);
		}
		if (n >= 16 && etl_u32(p + 8) != 0 && etl_u32(p + 12) != 0 &&
		    images_thread_pid_early(c->img, etl_u32(p + 12)) < 0)
			/* a thread without Thread events: its process from the stack record */
			images_thread(c->img, etl_u32(p + 12), etl_u32(p + 8), TS_NONE, PROC_DCSTART);
		break;
	}
	case 34: case 35: case 36:	/* KeyCreate / KeyDelete / KeyRundown: key, frames */
		if (n >= c->P) {
			size_t nf = (n - c->P) / c->P;
			GROW(c->kd, c->nkd, c->capkd);
			struct keydef *d = &c->kd[c->nkd++];
			d->key = ptr_at(c, p);
			d->ts = ev->ts;
			d->seq = c->cur_seq;
			d->cpu = (uint32_t)ev->cpu;
			d->idx = add_frames(c, p + c->P, nf);
			d->len = (uint32_t)nf;
			d->create = ev->type == 34;
		}
		break;
	}
}

static int
cmp_keydef(const void *a, const void *b)
{
	const struct keydef *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The frames of KEY as referenced by a StackKey record at TS (its own
 * header time) on CPU, SEQ-th in that CPU's stream.  A KeyDelete or
 * KeyRundown carries the frames of the key's life that ends there, so
 * the first of them after the reference: a key evicted and reused at the
 * same moment is deleted before the new reference is logged.  A
 * KeyCreate starts a life: the last create before the reference, when
 * no delete follows.
 */
static const struct keydef *
resolve_key(const struct conv *c, uint64_t key, uint64_t ts, uint32_t cpu, uint64_t seq)
{
	size_t lo = 0, hi = c->nkd;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct keydef *d = &c->kd[mid];
		if (d->key < key || (d->key == key && d->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t first_after = lo;
	for (size_t i = lo; i < c->nkd && c->kd[i].key == key; i++) {
		const struct keydef *d = &c->kd[i];
		/* same tick: only a definition logged after the reference on the same CPU */
		if (d->ts == ts && !(d->cpu == cpu && d->seq > seq)) {
			first_after = i + 1;
			continue;
		}
		if (!d->create)
			return d;
	}
	if (first_after > 0 && c->kd[first_after - 1].key == key)
		return &c->kd[first_after - 1];
	return NULL;
}

/* ---------- pass 1 ---------- */

static size_t
skip_sid(const struct conv *c, const uint8_t *p, size_t off, size_t n)
{
	if (off + 4 > n)
		return n;
	if (etl_u32(p + off) == 0)
		return off + 4;
	off += 2 * c->P;
	if (off + 8 > n)
		return n;
	return off + 8 + 4 * (size_t)p[off + 1];
}

struct procinfo {
	uint32_t pid, ppid, session, exit;
	char image[256];
	char cmdline[2048];
	int ok;
};

static void
decode_process(const struct conv *c, const struct etl_event *ev, struct procinfo *pi)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen, P = c->P, off, used;

	memset(pi, 0, sizeof *pi);
	if (ev->version >= 3) {
		if (n < 2 * P + 16)
			return;
		pi->pid = etl_u32(p + P);
		pi->ppid = etl_u32(p + P + 4);
		pi->session = etl_u32(p + P + 8);
		pi->exit = etl_u32(p + P + 12);
		off = 2 * P + 16 + (ev->version >= 4 ? 4 : 0);
	} else if (ev->version >= 1) {
		if (n < P + 16)
			return;
		pi->pid = etl_u32(p + P);
		pi->ppid = etl_u32(p + P + 4);
		pi->session = etl_u32(p + P + 8);
		pi->exit = etl_u32(p + P + 12);
		off = P + 16;
	} else {
		if (n < 8)
			return;
		pi->pid = etl_u32(p);
		pi->ppid = etl_u32(p + 4);
		off = 8;
	}
	off = skip_sid(c, p, off, n);
	if (off < n) {
		etl_astr(p + off, n - off, pi->image, sizeof pi->image, &used);
		off += used;
		if (off < n)
			etl_wstr(p + off, n - off, pi->cmdline, sizeof pi->cmdline, NULL);
	}
	pi->ok = 1;
}

struct imginfo {
	uint64_t base, size;
	uint32_t pid, checksum, timestamp;
	char path[1024];
	int ok;
};

static void
decode_image(const struct conv *c, const struct etl_event *ev, struct imginfo *ii)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen, P = c->P, off;

	memset(ii, 0, sizeof *ii);
	if (n < 2 * P)
		return;
	ii->base = ptr_at(c, p);
	ii->size = ptr_at(c, p + P);
	if (ev->version >= 2) {
		if (n < 3 * P + 32)
			return;
		ii->pid = etl_u32(p + 2 * P);
		ii->checksum = etl_u32(p + 2 * P + 4);
		ii->timestamp = etl_u32(p + 2 * P + 8);
		off = 3 * P + 32;
	} else if (ev->version == 1) {
		if (n < 2 * P + 4)
			return;
		ii->pid = etl_u32(p + 2 * P);
		off = 2 * P + 4;
	} else {
		ii->pid = ev->pid;
		off = 2 * P;
	}
	if (off < n)
		etl_wstr(p + off, n - off, ii->path, sizeof ii->path, NULL);
	ii->ok = 1;
}

static int
image_how(const struct etl_event *ev)
{
	if (ev->group == 3 || ev->type == 10)
		return PROC_START;
	return ev->type == 2 ? PROC_END : ev->type == 3 ? PROC_DCSTART : PROC_DCEND;
}

static void
collect_clr(struct conv *c, const struct etl_event *ev, int rundown)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen, used;
	char ns[1024], name[1024], full[2100];

	if ((!rundown && ev->id == 143) || (rundown && (ev->id == 143 || ev->id == 144))) {
		if (n < 36)
			return;
		uint64_t module = etl_u64(p + 8), start = etl_u64(p + 16);
		uint32_t size = etl_u32(p + 24);
		etl_wstr(p + 36, n - 36, ns, sizeof ns, &used);
		name[0] = '\0';
		if (36 + used < n)
			etl_wstr(p + 36 + used, n - 36 - used, name, sizeof name, NULL);
		if (*ns)
			snprintf(full, sizeof full, "%s.%s", ns, name);
		else
			snprintf(full, sizeof full, "%s", name);
		images_method(c->img, ev->pid, start, size, module, full);
	} else if ((!rundown && ev->id == 152) || (rundown && (ev->id == 153 || ev->id == 154))) {
		if (n < 24)
			return;
		etl_wstr(p + 24, n - 24, name, sizeof name, NULL);
		images_clr_module(c->img, ev->pid, etl_u64(p), name);
	}
}

/* Timestamps far outside the session (corrupt records) would make nonsense times. */
static int
ts_sane(struct conv *c, const struct etl_event *ev)
{
	int64_t ns = etl_ns(c->r, ev->ts), hi = c->hi_ns;
	if (c->info->end_time > c->info->start_time &&
	    c->info->end_time - c->info->start_time < (uint64_t)365 * 86400 * 10000000)
		hi += (int64_t)(c->info->end_time - c->info->start_time) * 100;
	return ns >= c->lo_ns && ns <= hi;
}

static void
collect(struct conv *c, const struct etl_event *ev)
{
	if (!ts_sane(c, ev)) {
		char msg[160];
		if (c->bad_ts++ == 0) {
			snprintf(msg, sizeof msg, "event with a timestamp outside the session "
			    "(record at buffer offset %u); such events are skipped", ev->rec_offset);
			etl_problem(c->r, ev->buf_offset, msg);
		}
		return;
	}
	c->seq++;
	struct etl_event gev = *ev;
	gev.ts = gts(c, ev->ts);
	ev = &gev;
	remember(c, ev);
	if (ev->ts) {
		if (!c->have_ts || ev->ts < c->min_ts)
			c->min_ts = ev->ts;
		if (!c->have_ts || ev->ts > c->max_ts)
			c->max_ts = ev->ts;
		c->have_ts = 1;
	}
	switch (ev->hkind) {
	case ETL_HK_SYSTEM: case ETL_HK_COMPACT: case ETL_HK_PERFINFO:
		break;
	case ETL_HK_FULL: case ETL_HK_INSTANCE: {
		const uint8_t *p = ev->payload;
		size_t n = ev->plen, P = c->P;
		char s1[1024], s2[1024];
		size_t used;
		if (tdh_collect(c->tdh, ev))
			return;	/* a MetaData EventInfo/EventMapInfo schema */
		if (is_provider(ev->guid, P_IMAGEID)) {
			if (ev->type == 0 && n > 2 * P + 8) {
				etl_wstr(p + 2 * P + 8, n - 2 * P - 8, s1, sizeof s1, NULL);
				images_image_id(c->img, etl_u32(p + 2 * P), ptr_at(c, p), s1);
			} else if (ev->type == 36 && n >= P + 24) {
				etl_astr(p + P + 24, n - P - 24, s1, sizeof s1, NULL);
				images_dbgid(c->img, etl_u32(p + P), ptr_at(c, p), p + P + 4,
				    etl_u32(p + P + 20), s1);
			}
		} else if (is_provider(ev->guid, P_SYSCONFIGEX) && ev->type == 35) {
			etl_wstr(p, n, s1, sizeof s1, &used);
			s2[0] = '\0';
			if (used < n)
				etl_wstr(p + used, n - used, s2, sizeof s2, NULL);
			images_volume(c->img, s1, s2);
		}
		return;
	}
	case ETL_HK_EVENT:
		if (is_provider(ev->guid, P_CLR))
			collect_clr(c, ev, 0);
		else if (is_provider(ev->guid, P_CLR_RUNDOWN))
			collect_clr(c, ev, 1);
		return;
	default:
		return;
	}
	/* kernel events */
	switch (ev->group) {
	case 3:
		if (ev->type == 10) {
			struct imginfo ii;
			decode_image(c, ev, &ii);
			if (ii.ok)
				images_image(c->img, ii.pid, ii.base, ii.size, ev->ts, PROC_START, ii.path);
		} else if (ev->type <= 4 || ev->type == 39) {
			struct procinfo pi;
			decode_process(c, ev, &pi);
			if (pi.ok)
				images_process(c->img, pi.pid, ev->ts,
				    ev->type == 1 ? PROC_START : ev->type == 3 ? PROC_DCSTART :
				    ev->type == 4 ? PROC_DCEND : PROC_END, pi.image, pi.cmdline);
		}
		break;
	case 5:
		if (ev->type >= 1 && ev->type <= 4 && ev->plen >= 8)
			images_thread(c->img, etl_u32(ev->payload + 4), etl_u32(ev->payload), ev->ts,
			    ev->type == 1 ? PROC_START : ev->type == 2 ? PROC_END :
			    ev->type == 3 ? PROC_DCSTART : PROC_DCEND);
		if (ev->type >= 1 && ev->type <= 4 && ev->version >= 4 && ev->plen > 16 + 7 * c->P) {
			char name[512];
			etl_wstr(ev->payload + 16 + 7 * c->P, ev->plen - 16 - 7 * c->P, name, sizeof name, NULL);
			images_thread_name(c->img, etl_u32(ev->payload + 4), name);
		}
		if (ev->type == 72 && ev->plen >= 8) {
			char name[512];
			etl_wstr(ev->payload + 8, ev->plen - 8, name, sizeof name, NULL);
			images_thread_name(c->img, etl_u32(ev->payload + 4), name);
		}
		break;
	case 20:
		if (ev->type == 2 || ev->type == 3 || ev->type == 4 || ev->type == 10) {
			struct imginfo ii;
			decode_image(c, ev, &ii);
			if (ii.ok)
				images_image(c->img, ii.pid, ii.base, ii.size, ev->ts, image_how(ev), ii.path);
		}
		break;
	case 24:
		collect_stackwalk(c, ev);
		break;
	case 15:
		if ((ev->type == 72 || ev->type == 73) && ev->plen >= 8 && !c->first_interval &&
		    etl_u32(ev->payload) == 0)
			c->first_interval = etl_u32(ev->payload + 4);
		break;
	}
}

/* ---------- pass 2: one event → one line ---------- */

static int
kind_wanted(const struct conv *c, const char *kind)
{
	if (!c->nkinds)
		return 1;
	for (size_t i = 0; i < c->nkinds; i++) {
		size_t kl = strlen(c->kinds[i]);
		/* "FileIo*" style prefixes */
		if (kl && c->kinds[i][kl - 1] == '*') {
			if (strncmp(kind, c->kinds[i], kl - 1) == 0)
				return 1;
		} else if (strcmp(kind, c->kinds[i]) == 0)
			return 1;
	}
	return 0;
}

static int
proc_wanted(const struct conv *c, const char *name, int64_t pid)
{
	if (!c->nprocs)
		return 1;
	for (size_t i = 0; i < c->nprocs; i++) {
		char *end;
		long v = strtol(c->procs[i], &end, 10);
		if (*end == '\0' && end != c->procs[i]) {
			if (v == pid)
				return 1;
		} else if (strcasecmp(c->procs[i], name) == 0)
			return 1;
		else {
			/* "app" matches "app.exe" */
			size_t pl = strlen(c->procs[i]);
			if (strncasecmp(c->procs[i], name, pl) == 0 && name[pl] == '.')
				return 1;
		}
	}
	return 0;
}

static const char *
pname(const struct conv *c, int64_t pid, uint64_t ts)
{
	if (pid < 0)
		return "?";
	return images_process_name(c->img, (uint32_t)pid, ts);
}

/*
 * Starts a line.  Returns 0 when a filter drops the event (nothing is
 * written then).  TIME_NS is the time column (DPC/ISR: their start).
 */
static int
begin(struct conv *c, const char *kind, int64_t time_ns, int cpu, int64_t pid, int64_t tid,
    int64_t weight_ns, uint64_t ts)
{
	if (!kind_wanted(c, kind))
		return 0;
	if (time_ns < c->from_ns || time_ns > c->to_ns)
		return 0;
	const char *proc = pid == 0 && tid == 0 ? "Idle" : pname(c, pid, ts);
	if (!proc_wanted(c, proc, pid))
		return 0;
	evtw_begin(&c->l, time_ns, kind, cpu, proc, pid, tid, weight_ns);
	if (c->o->utc) {
		char u[32];
		etl_filetime_str(u, c->ft0 + (uint64_t)((int64_t)(ts - GBIAS) / 100));
		evtw_kv_s(&c->l, "utc", u);
	}
	return 1;
}

/* The line being built waits for the stack records of (TID, TS), if its kind ever gets any. */
static size_t
stack_of(struct conv *c, uint32_t tid, uint64_t ts, uint32_t *pid)
{
	(void)ts;
	(void)pid;
	c->nframes = 0;
	if (!hmap_get(&c->stacked, c->cur_kind, 0))
		return 0;
	c->want = 1;
	c->want_tid = tid;
	c->nframes = 0;
	return 0;
}

/* Appends the stack column (root first) and the newline to L, and writes it. */
static void
write_line(struct conv *c, struct evtw_line *l, uint32_t pid, const uint64_t *frames, size_t n, uint64_t ts)
{
	char fbuf[2048];
	int flags = (c->o->full_paths ? FRAME_FULL_PATHS : 0) | (c->o->addrs ? FRAME_ADDRS : 0);

	evtw_stack_begin(l);
	for (size_t i = n; i-- > 0;) {
		/* the image first: a frame of an image is its text, made once and kept */
		const void *im = images_frame_image(c->img, pid, frames[i], ts);
		struct frame_text *ft = NULL;
		if (im) {
			uint64_t h = ((uint64_t)(uintptr_t)im ^ frames[i]) * 0x9e3779b97f4a7c15ull;
			ft = &c->ftext[h >> (64 - FTEXT_BITS)];
			if (ft->image == im && ft->addr == frames[i]) {
				evtw_mem(l, ft->text, ft->len);
				images_count_lookup(c->img, im, ft->resolved);
				if (i)
					evtw_frame_sep(l);
				continue;
			}
		}
		int resolved;
		size_t fl = images_frame(c->img, pid, frames[i], ts, flags, fbuf, sizeof fbuf, NULL,
		    &resolved);
		size_t at = l->n;
		evtw_frame(l, fbuf, fl);
		if (ft) {
			size_t len = l->n - at;
			if (ft->cap < len) {
				free(ft->text);
				ft->cap = len;
				ft->text = xmalloc(len);
			}
			memcpy(ft->text, l->b + at, len);
			ft->len = len;
			ft->image = im;
			ft->addr = frames[i];
			ft->resolved = resolved;
		}
		if (i)
			evtw_frame_sep(l);
	}
	evtw_end(l);
	ob_write(c->ob, l->b, l->n);
	c->events++;
}

static size_t
count_kernel(const struct conv *c, const uint64_t *f, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (images_is_kernel(c->img, f[i]))
			k++;
	return k;
}

static void
frames_put(uint64_t **f, uint32_t *n, uint32_t *cap, const uint64_t *src, size_t k)
{
	if (*n + k > *cap) {
		while (*n + k > *cap)
			*cap = *cap ? *cap * 2 : 64;
		*f = xrealloc(*f, *cap * sizeof **f);
	}
	if (k)
		memcpy(*f + *n, src, k * sizeof *src);
	*n += (uint32_t)k;
}

/* Writes a waiting line with the stack it got (samples: kframes=, or nostack=1 and the IP). */
static void
flush_pend(struct conv *c, struct pend *e)
{
	if (e->want)
		hmap_del(&c->pendmap, e->tid, e->ts);
	size_t need = (size_t)e->nk + e->nu + 1;
	if (need > c->capframes) {
		c->capframes = need * 2;
		c->frames = xrealloc(c->frames, c->capframes * sizeof *c->frames);
	}
	if (e->nk)
		memcpy(c->frames, e->kf, e->nk * sizeof *c->frames);
	if (e->nu)
		memcpy(c->frames + e->nk, e->uf, e->nu * sizeof *c->frames);
	size_t nf = (size_t)e->nk + e->nu;
	if (e->sample) {
		if (nf == 0) {
			/* no stack was recorded: the sampled address alone, as PerfView shows it */
			c->frames[0] = e->ip;
			nf = 1;
			evtw_kv_u(&e->text, "nostack", 1);
		}
		evtw_kv_u(&e->text, "kframes", count_kernel(c, c->frames, nf));
	}
	write_line(c, &e->text, e->pid, c->frames, nf, e->ts);
}

/*
 * A waiting line can go when it waits for nothing more: no stack wanted, or
 * its user part came (it comes last), or a kernel-only thread's kernel part
 * came, or pass 1 saw no later stack record (with a user part) for its
 * thread, or none of the thread's records came as long after its event.
 */
static int
pend_done(const struct conv *c, const struct pend *e)
{
	if (!e->want)
		return 1;
	/* a sample taken in the kernel has a kernel part, which may come after the user part */
	int user_done = e->has_u && (e->has_k || !e->sample || !images_is_kernel(c->img, e->ip));
	if (e->late ? e->has_k && e->has_u : user_done || (e->has_k && (e->pid == 4 || e->pid == 0)))
		return 1;
	uint32_t *i = hmap_get(&c->lastmap, e->tid, 0);
	if (!i)
		return 1;
	const struct last_stack *l = &c->last[*i];
	if (e->ts > l->any || (e->has_k && e->ts > l->user))
		return 1;
	uint64_t wait = l->maxlat;
	if (wait > LATE_NS && !c->late_overflow) {
		/* its late records (if any) are attached already, unless they were stack keys */
		const uint32_t *li = hmap_get(&c->late, e->tid, e->ts);
		wait = li && c->lates[*li].wait_us ? (uint64_t)c->lates[*li].wait_us * 1000 : LATE_NS;
	}
	return c->now > e->ts && c->now - e->ts > wait;	/* (no wrap-around on a wild delay) */
}

static void
flush_window(struct conv *c, int all)
{
	while (c->qhead < c->qtail) {
		struct pend *e = &c->q[c->qhead & (c->qcap - 1)];
		if (!all && !pend_done(c, e) && c->qtail - c->qhead <= QCAP &&
		    e->ts + (uint64_t)QWIN_NS >= c->now)
			break;
		flush_pend(c, e);
		c->qhead++;
	}
}

static struct pend *
queue_push(struct conv *c)
{
	if (c->qtail - c->qhead == c->qcap) {
		/* grow the ring, keeping each entry at sequence & (cap - 1) */
		size_t ncap = c->qcap ? c->qcap * 2 : 1024;
		struct pend *nq = xcalloc(ncap, sizeof *nq);
		/* every old slot (waiting or not: free slots keep their buffers) gets its own new one */
		for (uint64_t q = c->qhead; q < c->qhead + c->qcap; q++)
			nq[q & (ncap - 1)] = c->q[q & (c->qcap - 1)];
		free(c->q);
		c->q = nq;
		c->qcap = ncap;
	}
	struct pend *e = &c->q[c->qtail & (c->qcap - 1)];
	c->qtail++;
	e->nk = e->nu = 0;
	e->has_k = e->has_u = 0;
	e->want = e->sample = 0;
	e->late = 0;
	return e;
}

/*
 * Ends the line started by begin(): written now, or kept in the window
 * when stack_of() asked for a stack (or when earlier lines still wait,
 * so that the output stays in time order).  FRAMES, when given, are the
 * event's own stack (innermost first).
 */
static void
finish(struct conv *c, uint32_t pid, const uint64_t *frames, size_t n, uint64_t ts)
{
	int want = c->want && c->nstackev > 0;
	int sample = c->want_sample;
	c->want = 0;
	c->want_sample = 0;
	if (!want && !sample && c->qhead == c->qtail) {
		write_line(c, &c->l, pid, frames, n, ts);
		return;
	}
	struct pend *e = queue_push(c);
	e->text.n = 0;
	evtw_mem(&e->text, c->l.b, c->l.n);
	e->ts = ts;
	e->pid = pid;
	e->tid = c->want_tid;
	e->sample = (uint8_t)sample;
	e->ip = c->want_ip;
	if (frames && n) {
		frames_put(&e->kf, &e->nk, &e->capk, frames, n);
		e->has_k = e->has_u = 1;
	}
	if (want) {
		e->want = 1;
		hmap_put(&c->pendmap, e->tid, ts, (uint32_t)(c->qtail - 1));
		if (c->nlate)
			apply_late(c, e);
	}
	flush_window(c, 0);
}

/* Pass 2: a Stack or StackKey record joins the line it belongs to. */
static void
attach_stack(struct conv *c, const struct etl_event *ev)
{
	const uint8_t *p = ev->payload;
	uint32_t n = ev->plen;
	if (n < 16 + c->P)
		return;
	uint32_t tid = etl_u32(p + 12);
	uint64_t ts = gts(c, etl_u64(p));
	if (applied_late(c, ev, tid, ts))
		return;
	uint32_t *seqp = hmap_get(&c->pendmap, tid, ts);
	struct pend *e = NULL;
	if (seqp) {
		/* the map holds the low 32 bits of the sequence; the window is far smaller */
		uint64_t seq = (c->qtail & ~(uint64_t)0xffffffffu) | *seqp;
		if (seq >= c->qtail)
			seq -= (uint64_t)1 << 32;
		if (seq >= c->qhead && seq < c->qtail)
			e = &c->q[seq & (c->qcap - 1)];
	}
	if (!e) {
		c->unmatched++;
		return;
	}
	const uint64_t *f = NULL;
	size_t nf = 0;
	uint64_t tmp[1];
	(void)tmp;
	int kernel;
	if (ev->type == 32) {
		nf = (n - 16) / c->P;
		if (nf > c->capframes) {
			c->capframes = nf * 2;
			c->frames = xrealloc(c->frames, c->capframes * sizeof *c->frames);
		}
		for (size_t i = 0; i < nf; i++)
			c->frames[i] = ptr_at(c, p + 16 + i * c->P);
		f = c->frames;
		kernel = images_is_kernel(c->img, f[0]);
	} else {
		const struct keydef *d = resolve_key(c, ptr_at(c, p + 16), ev->ts, (uint32_t)ev->cpu,
		    c->cur_seq);
		if (!d) {
			c->unresolved++;
			return;
		}
		f = c->fr + d->idx;
		nf = d->len;
		kernel = ev->type == 37;
	}
	if (kernel && !e->has_k) {
		frames_put(&e->kf, &e->nk, &e->capk, f, nf);
		e->has_k = 1;
		/* one record from the kernel out to user space (Windows 7): the whole stack */
		if (ev->type == 32 && nf > 0 && !images_is_kernel(c->img, f[nf - 1]))
			e->has_u = 1;
	} else if (!kernel && !e->has_u) {
		frames_put(&e->uf, &e->nu, &e->capu, f, nf);
		e->has_u = 1;
	}
	flush_window(c, 0);
}

static void
emit_sample(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	if (ev->plen < P + 8)
		goto generic;
	uint64_t ip = ptr_at(c, p);
	uint32_t tid = etl_u32(p + P);
	unsigned count = etl_u16(p + P + 4), fl = p[P + 6];
	int64_t pid = tid == 0 ? 0 : images_thread_pid(c->img, tid, ev->ts);
	int64_t w = (int64_t)c->interval * 100 * (count ? count : 1);
	if (!begin(c, "Sample", ns, ev->cpu, pid, tid, w, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_x(l, "ip", ip);
	evtw_kv_u(l, "prio", fl >> 3);
	if (count != 1)
		evtw_kv_u(l, "count", count);
	if (fl & 1)
		evtw_kv_u(l, "dpc", 1);
	if (fl & 2)
		evtw_kv_u(l, "isr", 1);
	/* kframes= (and nostack=1) are added when the stack is known */
	stack_of(c, tid, ev->ts, NULL);
	c->want_sample = 1;
	c->want_ip = ip;
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, NULL, 0, ev->ts);
	return;
generic:
	c->skipped_events++;
}

static void
emit_frame_attr(struct conv *c, const char *key, uint32_t pid, uint64_t addr, uint64_t ts,
    const char **mod)
{
	char fbuf[2048];
	int flags = (c->o->full_paths ? FRAME_FULL_PATHS : 0) | FRAME_ADDRS;
	size_t n = images_frame(c->img, pid, addr, ts, flags, fbuf, sizeof fbuf, mod, NULL);
	evtw_key(&c->l, key);
	evtw_esc(&c->l, fbuf, n, 0);
}

static void emit_generic_kernel(struct conv *c, const struct etl_event *ev, int64_t ns);

static void
emit_dpc_isr(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	int isr = ev->type == 67 || ev->type == 50;
	const char *kind = ev->type == 66 ? "ThreadedDPC" : ev->type == 68 ? "DPC" :
	    ev->type == 69 ? "TimerDPC" : "ISR";
	if (ev->plen < 8 + P + (isr ? 4u : 0u) + (ev->type == 50 ? 4u : 0u)) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	uint64_t initial = etl_u64(p), routine = ptr_at(c, p + 8);
	int64_t start_ns = (int64_t)(gts(c, initial) - GBIAS);
	if (initial == 0 || start_ns > ns || start_ns < ns - 60 * 1000000000LL) {
		/* an InitialTime after the end, or a routine "running" for over a minute: corrupt
		 * (NS is a sane event time, so the bounds cannot overflow; a wild start could) */
		c->bad_dpc++;
		return;
	}
	int64_t dur = ns - start_ns;
	int64_t tid = -1, pid = -1;
	if ((size_t)ev->cpu < c->ncur && c->cur_tid[ev->cpu] >= 0) {
		tid = c->cur_tid[ev->cpu];
		pid = tid == 0 ? 0 : images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	}
	if (!begin(c, kind, start_ns, ev->cpu, pid, tid, dur, ev->ts))
		return;
	const char *mod = "?";
	emit_frame_attr(c, "routine", 0, routine, ev->ts, &mod);
	evtw_kv_s(&c->l, "module", mod);
	evtw_key(&c->l, "duration_us");
	evtw_us3(&c->l, dur);
	evtw_key(&c->l, "end_ms");
	evtw_time_ns(&c->l, ns);
	if (isr) {
		evtw_kv_u(&c->l, "vector", etl_u16(p + 9 + P));
		if (ev->type == 50) {
			evtw_kv_u(&c->l, "msi", 1);
			evtw_kv_u(&c->l, "message", etl_u32(p + 12 + P));
		}
		evtw_kv_u(&c->l, "ret", p[8 + P]);
	}
	finish(c, 0, NULL, 0, ev->ts);
}

static void
emit_cswitch(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	if (ev->plen < 24) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	uint32_t newt = etl_u32(p), oldt = etl_u32(p + 4);
	if ((size_t)ev->cpu < c->ncur)
		c->cur_tid[ev->cpu] = newt;
	int64_t npid = newt == 0 ? 0 : images_thread_pid(c->img, newt, ev->ts);
	int64_t opid = oldt == 0 ? 0 : images_thread_pid(c->img, oldt, ev->ts);
	if (!begin(c, "CSwitch", ns, ev->cpu, npid, newt, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "old_tid", oldt);
	evtw_kv_i(l, "old_pid", opid);
	evtw_kv_s(l, "old_process", oldt == 0 ? "Idle" : pname(c, opid, ev->ts));
	evtw_kv_i(l, "new_prio", (int8_t)p[8]);
	evtw_kv_i(l, "old_prio", (int8_t)p[9]);
	unsigned wr = p[12], st = p[14];
	evtw_key(l, "wait_reason");
	if (wr < sizeof wait_reasons / sizeof wait_reasons[0])
		evtw_str(l, wait_reasons[wr]);
	else
		evtw_u64(l, wr);
	evtw_kv_s(l, "wait_mode", p[13] ? "user" : "kernel");
	evtw_key(l, "old_state");
	if (st < sizeof thread_states / sizeof thread_states[0])
		evtw_str(l, thread_states[st]);
	else
		evtw_u64(l, st);
	evtw_kv_u(l, "wait_time", etl_u32(p + 16));
	evtw_kv_u(l, "cstate", p[10]);
	/* the CSwitch stack is the new thread's (compact headers carry no thread id) */
	size_t nf = newt != 0 ? stack_of(c, newt, ev->ts, NULL) : 0;
	finish(c, npid < 0 ? ETL_NO_ID : (uint32_t)npid, c->frames, nf, ev->ts);
}

static void
emit_ready(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	if (ev->plen < 8) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	uint32_t rt = etl_u32(p);
	int64_t tid = htid(ev);
	int64_t pid = hpid(ev);
	if (pid < 0 && tid > 0)
		pid = images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	if (!begin(c, "ReadyThread", ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "ready_tid", rt);
	evtw_kv_i(l, "ready_pid", rt == 0 ? 0 : images_thread_pid(c->img, rt, ev->ts));
	evtw_kv_i(l, "adjust_reason", (int8_t)p[4]);
	evtw_kv_i(l, "adjust_incr", (int8_t)p[5]);
	evtw_kv_u(l, "flags", p[6]);
	size_t nf = tid > 0 ? stack_of(c, (uint32_t)tid, ev->ts, NULL) : 0;
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static const char *
proc_kind(unsigned type)
{
	switch (type) {
	case 1: return "ProcessStart";
	case 2: return "ProcessEnd";
	case 3: return "ProcessDCStart";
	case 4: return "ProcessDCEnd";
	case 39: return "ProcessDefunct";
	}
	return NULL;
}

static void
emit_process(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	struct procinfo pi;
	decode_process(c, ev, &pi);
	if (!pi.ok) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	int64_t tid = htid(ev);
	if (!begin(c, proc_kind(ev->type), ns, ev->cpu, pi.pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "parent", pi.ppid);
	evtw_kv_i(l, "session", (int32_t)pi.session);
	if (ev->type == 2 || ev->type == 4 || ev->type == 39)
		evtw_kv_u(l, "exit", pi.exit);
	evtw_kv_s(l, "image", pi.image);
	evtw_kv_s(l, "cmdline", pi.cmdline);
	finish(c, 0, NULL, 0, ev->ts);
}

static void
emit_thread(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	static const char *const names[] = { NULL, "ThreadStart", "ThreadEnd", "ThreadDCStart",
	    "ThreadDCEnd" };
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	if (ev->plen < 8) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	uint32_t pid = etl_u32(p), tid = etl_u32(p + 4);
	if (ev->type == 72) {
		if (!begin(c, "ThreadSetName", ns, ev->cpu, pid, tid, 0, ev->ts))
			return;
		char name[1024];
		etl_wstr(p + 8, ev->plen - 8, name, sizeof name, NULL);
		evtw_kv_s(&c->l, "name", name);
		finish(c, 0, NULL, 0, ev->ts);
		return;
	}
	if (!begin(c, names[ev->type], ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	size_t sa = ev->version >= 3 ? 8 + 5 * P : 8 + 4 * P;
	if (ev->version >= 2 && ev->plen >= sa + P)
		emit_frame_attr(c, "start_addr", pid, ptr_at(c, p + sa), ev->ts, NULL);
	if (ev->version >= 3 && ev->plen >= 16 + 7 * P)
		evtw_kv_u(&c->l, "base_prio", p[12 + 7 * P]);
	const char *name = images_thread_name_of(c->img, tid);
	if (name)
		evtw_kv_s(&c->l, "name", name);
	finish(c, 0, NULL, 0, ev->ts);
}

static void
emit_image(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	struct imginfo ii;
	decode_image(c, ev, &ii);
	if (!ii.ok) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	const char *kind = ev->group == 3 || ev->type == 10 ? "ImageLoad" : ev->type == 2 ?
	    "ImageUnload" : ev->type == 3 ? "ImageDCStart" : "ImageDCEnd";
	int64_t tid = htid(ev);
	if (!begin(c, kind, ns, ev->cpu, ii.pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_x(l, "base", ii.base);
	evtw_kv_x(l, "size", ii.size);
	char dos[1100];
	evtw_kv_s(l, "path", c->o->full_paths ? images_dos_path(c->img, ii.path, dos, sizeof dos) : ii.path);
	if (ev->version >= 2) {
		evtw_kv_x(l, "checksum", ii.checksum);
		evtw_kv_u(l, "timestamp", ii.timestamp);
	}
	finish(c, 0, NULL, 0, ev->ts);
}

static void
emit_interval(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	if (ev->plen < 12) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	uint32_t src = etl_u32(p), nw = etl_u32(p + 4), old = etl_u32(p + 8);
	if (src == 0 && nw && ev->type != 74)
		c->interval = nw;
	if (!begin(c, "SampleInterval", ns, ev->cpu, hpid(ev),
	    htid(ev), 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "source", src);
	evtw_key(l, "interval_ms");
	evtw_weight_ns(l, (int64_t)nw * 100);
	evtw_key(l, "old_interval_ms");
	evtw_weight_ns(l, (int64_t)old * 100);
	evtw_kv_s(l, "what", ev->type == 72 ? "SetInterval" : ev->type == 73 ? "CollectionStart" :
	    "CollectionEnd");
	if (ev->plen > 12) {
		char name[256];
		etl_wstr(p + 12, ev->plen - 12, name, sizeof name, NULL);
		if (*name)
			evtw_kv_s(l, "source_name", name);
	}
	finish(c, 0, NULL, 0, ev->ts);
}

static void
emit_disk(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	if ((ev->type != 10 && ev->type != 11) || ev->plen < 24 + 2 * P + 8) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	uint32_t itid = ev->plen >= 24 + 2 * P + 12 ? etl_u32(p + 24 + 2 * P + 8) : ETL_NO_ID;
	int64_t tid = itid != ETL_NO_ID ? itid : htid(ev);
	int64_t pid = tid > 0 ? images_thread_pid(c->img, (uint32_t)tid, ev->ts) : -1;
	if (!begin(c, ev->type == 10 ? "DiskRead" : "DiskWrite", ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "disk", etl_u32(p));
	evtw_kv_u(l, "bytes", etl_u32(p + 8));
	evtw_kv_u(l, "offset", etl_u64(p + 16));
	evtw_kv_x(l, "irp_flags", etl_u32(p + 4));
	evtw_kv_x(l, "file_object", ptr_at(c, p + 24));
	uint64_t resp = etl_u64(p + 24 + 2 * P);
	evtw_key(l, "elapsed_ms");
	evtw_time_ns(l, (int64_t)((__int128)resp * 1000000000 / (__int128)c->info->clock_freq));
	size_t nf = tid > 0 ? stack_of(c, (uint32_t)tid, ev->ts, NULL) : 0;
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static void
emit_fileio(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	char kind[40], name[2048];
	static const struct { unsigned t; const char *n; } fk[] = {
		{ 0, "Name" }, { 32, "FileCreate" }, { 35, "FileDelete" }, { 36, "Rundown" },
		{ 64, "Create" }, { 65, "Cleanup" }, { 66, "Close" }, { 67, "Read" }, { 68, "Write" },
		{ 69, "SetInfo" }, { 70, "Delete" }, { 71, "Rename" }, { 72, "DirEnum" },
		{ 73, "Flush" }, { 74, "QueryInfo" }, { 75, "FSControl" }, { 76, "OperationEnd" },
		{ 77, "DirNotify" }, { 79, "DeletePath" }, { 80, "RenamePath" },
	};
	const char *sub = NULL;
	for (size_t i = 0; i < sizeof fk / sizeof fk[0]; i++)
		if (fk[i].t == ev->type)
			sub = fk[i].n;
	if (!sub) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	snprintf(kind, sizeof kind, "FileIo%s", sub);
	int64_t tid = htid(ev), pid = hpid(ev);
	int named = ev->type == 0 || ev->type == 32 || ev->type == 35 || ev->type == 36;
	if (ev->type == 64 && ev->plen >= 2 * P + 16)
		tid = etl_u32(p + 2 * P);
	else if ((ev->type == 67 || ev->type == 68) && ev->plen >= 8 + 3 * P + 12)
		tid = etl_u32(p + 8 + 3 * P);
	if (pid < 0 && tid > 0)
		pid = images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	if (!begin(c, kind, ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	if (named && ev->plen >= P) {
		evtw_kv_x(l, "file_object", ptr_at(c, p));
		etl_wstr(p + P, ev->plen - P, name, sizeof name, NULL);
		evtw_kv_s(l, "file", name);
	} else if (ev->type == 64 && ev->plen >= 2 * P + 16) {
		evtw_kv_x(l, "file_object", ptr_at(c, p + P));
		evtw_kv_x(l, "options", etl_u32(p + 2 * P + 4));
		evtw_kv_x(l, "attributes", etl_u32(p + 2 * P + 8));
		evtw_kv_x(l, "share", etl_u32(p + 2 * P + 12));
		etl_wstr(p + 2 * P + 16, ev->plen - 2 * P - 16, name, sizeof name, NULL);
		evtw_kv_s(l, "file", name);
	} else if ((ev->type == 67 || ev->type == 68) && ev->plen >= 8 + 3 * P + 12) {
		evtw_kv_u(l, "offset", etl_u64(p));
		evtw_kv_x(l, "file_object", ptr_at(c, p + 8 + P));
		evtw_kv_u(l, "bytes", etl_u32(p + 8 + 3 * P + 4));
		evtw_kv_x(l, "io_flags", etl_u32(p + 8 + 3 * P + 8));
	} else
		evtw_kv_hexbytes(l, "hex", p, ev->plen);
	size_t nf = tid > 0 ? stack_of(c, (uint32_t)tid, ev->ts, NULL) : 0;
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static void
kv_ipaddr(struct evtw_line *l, const char *k, const uint8_t *p, int v6)
{
	char buf[64];
	if (v6) {
		int n = 0;
		for (int i = 0; i < 8; i++)
			n += snprintf(buf + n, sizeof buf - (size_t)n, i ? ":%x" : "%x",
			    (unsigned)(p[2 * i] << 8 | p[2 * i + 1]));
	} else
		snprintf(buf, sizeof buf, "%u.%u.%u.%u", p[0], p[1], p[2], p[3]);
	evtw_kv_s(l, k, buf);
}

/* TcpIp (group 6) and UdpIp (group 8) send/receive/connect...: PID, size, addresses, ports */
static void
emit_net(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	static const char *const tcp[] = { [10] = "Send", [11] = "Recv", [12] = "Connect",
	    [13] = "Disconnect", [14] = "Retransmit", [15] = "Accept", [16] = "Reconnect",
	    [18] = "TCPCopy", [26] = "SendIPV6", [27] = "RecvIPV6", [28] = "ConnectIPV6",
	    [29] = "DisconnectIPV6", [30] = "RetransmitIPV6", [31] = "AcceptIPV6",
	    [32] = "ReconnectIPV6", [34] = "TCPCopyIPV6" };
	const uint8_t *p = ev->payload;
	int udp = ev->group == 8;
	const char *sub = ev->type < sizeof tcp / sizeof tcp[0] ? tcp[ev->type] : NULL;
	if (udp && ev->type != 10 && ev->type != 11 && ev->type != 26 && ev->type != 27)
		sub = NULL;
	int v6 = ev->type >= 26;
	if (!sub || ev->plen < (v6 ? 44u : 20u)) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	char kind[40];
	snprintf(kind, sizeof kind, "%s%s", udp ? "UdpIp" : "TcpIp", sub);
	uint32_t pid = etl_u32(p);
	if (!begin(c, kind, ns, ev->cpu, pid, htid(ev), 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "bytes", etl_u32(p + 4));
	kv_ipaddr(l, "daddr", p + 8, v6);
	kv_ipaddr(l, "saddr", p + (v6 ? 24 : 12), v6);
	const uint8_t *ports = p + (v6 ? 40 : 16);
	evtw_kv_u(l, "dport", (unsigned)(ports[0] << 8 | ports[1]));
	evtw_kv_u(l, "sport", (unsigned)(ports[2] << 8 | ports[3]));
	finish(c, 0, NULL, 0, ev->ts);
}

/* DiskIo initiation events and flushes: just the IRP, to pair with the completion */
static void
emit_disk_init(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	static const char *const names[] = { [12] = "DiskReadInit", [13] = "DiskWriteInit",
	    [14] = "DiskFlush", [15] = "DiskFlushInit" };
	if (ev->plen < c->P || (ev->type == 14 && ev->plen < 8)) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	int64_t tid = htid(ev), pid = hpid(ev);
	if (pid < 0 && tid > 0)
		pid = images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	if (!begin(c, names[ev->type], ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	if (ev->type == 14)
		evtw_kv_u(&c->l, "disk", etl_u32(ev->payload));
	else
		evtw_kv_x(&c->l, "irp", ptr_at(c, ev->payload));
	size_t nf = tid > 0 ? stack_of(c, (uint32_t)tid, ev->ts, NULL) : 0;
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

/* PageFault HardFault (group 2 type 32): a page read from disk */
static void
emit_hardfault(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	if (ev->plen < 16 + 2 * P + 8) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	uint32_t tid = etl_u32(p + 16 + 2 * P);
	int64_t pid = images_thread_pid(c->img, tid, ev->ts);
	if (!begin(c, "PageFaultHard", ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_x(l, "va", ptr_at(c, p + 16));
	evtw_kv_u(l, "offset", etl_u64(p + 8));
	evtw_kv_u(l, "bytes", etl_u32(p + 20 + 2 * P));
	evtw_kv_x(l, "file_object", ptr_at(c, p + 16 + P));
	int64_t start = (int64_t)(gts(c, etl_u64(p)) - GBIAS);
	/* a damaged InitialTime could be anything: the elapsed time only when it is one */
	if (start <= ns && start >= ns - 7 * 86400 * 1000000000LL) {
		evtw_key(l, "elapsed_ms");
		evtw_time_ns(l, ns - start);
	}
	size_t nf = stack_of(c, tid, ev->ts, NULL);
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static void
emit_generic_kernel(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	int64_t tid = htid(ev), pid = hpid(ev);
	if (!begin(c, "Kernel", ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_s(l, "class", group_name(ev->group));
	evtw_kv_u(l, "group", ev->group);
	evtw_kv_u(l, "type", ev->type);
	evtw_kv_u(l, "version", ev->version);
	evtw_kv_hexbytes(l, "hex", ev->payload, ev->plen);
	size_t nf = tid > 0 ? stack_of(c, (uint32_t)tid, ev->ts, NULL) : 0;
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static void
emit_kernel(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	switch (ev->group) {
	case 0:
		if (ev->type == 0)
			return;	/* the logfile header: in the #evt header */
		break;
	case 1:
		if (ev->type >= 12 && ev->type <= 15)
			emit_disk_init(c, ev, ns);
		else
			emit_disk(c, ev, ns);
		return;
	case 2:
		if (ev->type == 32) {
			emit_hardfault(c, ev, ns);
			return;
		}
		break;
	case 6: case 8:
		emit_net(c, ev, ns);
		return;
	case 3:
		if (ev->type == 10) {
			emit_image(c, ev, ns);
			return;
		}
		if (proc_kind(ev->type)) {
			emit_process(c, ev, ns);
			return;
		}
		break;
	case 4:
		emit_fileio(c, ev, ns);
		return;
	case 5:
		if ((ev->type >= 1 && ev->type <= 4) || ev->type == 72) {
			emit_thread(c, ev, ns);
			return;
		}
		if (ev->type == 36) {
			emit_cswitch(c, ev, ns);
			return;
		}
		if (ev->type == 50) {
			emit_ready(c, ev, ns);
			return;
		}
		break;
	case 15:
		switch (ev->type) {
		case 46:
			emit_sample(c, ev, ns);
			return;
		case 66: case 68: case 69: case 67: case 50:
			emit_dpc_isr(c, ev, ns);
			return;
		case 72: case 73: case 74:
			emit_interval(c, ev, ns);
			return;
		}
		break;
	case 20:
		if (ev->type == 2 || ev->type == 3 || ev->type == 4 || ev->type == 10) {
			emit_image(c, ev, ns);
			return;
		}
		break;
	case 24:
		if (ev->type == 32 || ev->type == 37 || ev->type == 38)
			attach_stack(c, ev);
		return;	/* stacks: attached to their events; key definitions were read in pass 1 */
	}
	emit_generic_kernel(c, ev, ns);
}

/* ---------- user events ---------- */

/* evt readers take at most EVT_MAX_ATTRS attributes: room for the fixed ones */
#define MAX_FIELDS (EVT_MAX_ATTRS - 16)

struct fieldctx {
	struct evtw_line *l;
	unsigned n, dropped;
};

static void
field_cb(void *ctx, const char *name, const char *value, size_t vlen)
{
	struct fieldctx *fc = ctx;
	struct evtw_line *l = fc->l;
	if (fc->n >= MAX_FIELDS) {
		fc->dropped++;
		return;
	}
	fc->n++;
	char key[300];
	size_t k = 0;
	/* attribute keys are [A-Za-z0-9_.:-]+: anything else in a field name becomes '_' */
	memcpy(key, "p.", 2);
	k = 2;
	for (const char *s = name; *s && k < sizeof key - 1; s++) {
		char ch = *s;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '_' || ch == '.' || ch == ':' || ch == '-';
		key[k++] = ok ? ch : '_';
	}
	if (k == 2)
		key[k++] = '_';
	key[k] = '\0';
	evtw_key(l, key);
	evtw_esc(l, value, vlen, 0);
}

static void
emit_user(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	char gs[40], pname_buf[256];
	const char *prov = NULL;
	const uint8_t *schema = NULL, *stack = NULL;
	size_t schemalen = 0, stacklen = 0;
	int stack32 = 0, has_stack_key = 0;
	uint64_t stack_key = 0;

	/* extended items: provider traits (name), TraceLogging schema, stacks */
	if (ev->ext) {
		size_t q = 0;
		while (q + 8 <= ev->extlen) {
			unsigned type = etl_u16(ev->ext + q + 2), sz = etl_u16(ev->ext + q + 6);
			const uint8_t *d = ev->ext + q + 8;
			if (q + 8 + sz > ev->extlen)
				break;
			if (type == 12 && sz > 3) {
				etl_astr(d + 2, sz - 2, pname_buf, sizeof pname_buf, NULL);
				if (*pname_buf)
					prov = pname_buf;
			} else if (type == 11) {
				schema = d;
				schemalen = sz;
			} else if ((type == 6 || type == 5) && sz >= 8) {
				stack = d + 8;
				stacklen = sz - 8;
				stack32 = type == 5;
			} else if ((type == 17 || type == 18) && sz >= 12) {
				/* STACK_KEY32/64 [src]: u64 MatchId, then the key of a cached stack */
				stack_key = type == 18 && sz >= 16 ? etl_u64(d + 8) : etl_u32(d + 8);
				has_stack_key = 1;
			}
			q += 8 + ((sz + 7u) & ~7u);
		}
	}
	if (!prov)
		prov = etl_provider_name(ev->guid, 0);
	if (!prov)
		prov = tdh_provider_name(c->tdh, ev->guid);
	if (ev->guid)
		etl_guid_str(gs, ev->guid);
	else
		strcpy(gs, "00000000-0000-0000-0000-000000000000");
	int64_t tid = htid(ev), pid = hpid(ev);
	if (!begin(c, ev->hkind == ETL_HK_WPP ? "WPP" : "Event", ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_s(l, "provider", prov ? prov : gs);
	evtw_kv_s(l, "guid", gs);
	if (ev->hkind == ETL_HK_EVENT) {
		evtw_kv_u(l, "id", ev->id);
		evtw_kv_u(l, "version", ev->version);
		evtw_kv_u(l, "opcode", ev->opcode);
		evtw_kv_u(l, "task", ev->task);
		evtw_kv_u(l, "level", ev->level);
		evtw_kv_x(l, "keywords", ev->keywords);
		if (ev->channel)
			evtw_kv_u(l, "channel", ev->channel);
	} else if (ev->hkind == ETL_HK_WPP) {
		evtw_kv_u(l, "id", ev->message_id);
	} else {
		evtw_kv_u(l, "type", ev->type);
		evtw_kv_u(l, "version", ev->version);
		evtw_kv_u(l, "level", ev->level);
	}
	size_t mark = l->n;
	int decoded = 0;
	struct fieldctx fc = { l, 0, 0 };
	if (schema) {
		char evname[256];
		if (tl_decode(schema, schemalen, ev->payload, ev->plen, ev->hdr64 ? 8 : 4, evname,
		    sizeof evname, field_cb, &fc) == 0)
			decoded = 1;
		else
			l->n = mark;
	}
	if (!decoded && (ev->hkind == ETL_HK_EVENT || ev->hkind == ETL_HK_FULL)) {
		/* manifest events whose schema the trace embeds (xperf/PerfView merges) */
		fc.n = fc.dropped = 0;
		if (tdh_decode_event(c->tdh, ev, field_cb, &fc) == 0)
			decoded = 1;
		else
			l->n = mark;
	}
	if (!decoded && is_provider(ev->guid, P_CLR) && (ev->id == 143 || ev->id == 144) &&
	    ev->plen >= 36) {
		/* method names for the JIT: handy for grepping */
		char nsb[512], nm[512];
		size_t used;
		etl_wstr(ev->payload + 36, ev->plen - 36, nsb, sizeof nsb, &used);
		nm[0] = '\0';
		if (36 + used < ev->plen)
			etl_wstr(ev->payload + 36 + used, ev->plen - 36 - used, nm, sizeof nm, NULL);
		evtw_kv_s(l, "method", nsb);
		evtw_str(l, ".");
		evtw_esc(l, nm, strlen(nm), 0);
		evtw_kv_x(l, "start", etl_u64(ev->payload + 16));
		evtw_kv_u(l, "size", etl_u32(ev->payload + 24));
	}
	if (decoded && fc.dropped)
		evtw_kv_u(l, "p._more_fields", fc.dropped);	/* beyond what evt readers take */
	if (!decoded && ev->plen)
		evtw_kv_hexbytes(l, "hex", ev->payload, ev->plen);
	size_t nf = 0;
	c->nframes = 0;
	if (stack) {
		size_t w = stack32 ? 4 : 8;
		nf = stacklen / w;
		while (nf > c->capframes) {
			c->capframes = c->capframes ? c->capframes * 2 : 256;
			c->frames = xrealloc(c->frames, c->capframes * sizeof *c->frames);
		}
		for (size_t i = 0; i < nf; i++)
			c->frames[i] = stack32 ? etl_u32(stack + 4 * i) : etl_u64(stack + 8 * i);
		evtw_kv_u(l, "kframes", count_kernel(c, c->frames, nf));
	} else if (has_stack_key) {
		const struct keydef *d = resolve_key(c, stack_key, ev->ts, (uint32_t)ev->cpu, c->cur_seq);
		if (d) {
			nf = d->len;
			while (nf > c->capframes) {
				c->capframes = c->capframes ? c->capframes * 2 : 256;
				c->frames = xrealloc(c->frames, c->capframes * sizeof *c->frames);
			}
			if (nf)
				memcpy(c->frames, c->fr + d->idx, nf * sizeof *c->frames);
			evtw_kv_u(l, "kframes", count_kernel(c, c->frames, nf));
		} else
			c->unresolved++;
	} else if (tid > 0)
		nf = stack_of(c, (uint32_t)tid, ev->ts, NULL);
	finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static void
emit_classic(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen, P = c->P;
	char s1[1024], s2[1024];
	int64_t tid = htid(ev);

	if (is_provider(ev->guid, P_IMAGEID) && ev->type == 0 && n > 2 * P + 8) {
		uint32_t ipid = etl_u32(p + 2 * P);
		if (!begin(c, "ImageID", ns, ev->cpu, ipid, tid, 0, ev->ts))
			return;
		etl_wstr(p + 2 * P + 8, n - 2 * P - 8, s1, sizeof s1, NULL);
		evtw_kv_x(&c->l, "base", ptr_at(c, p));
		evtw_kv_x(&c->l, "size", ptr_at(c, p + P));
		evtw_kv_u(&c->l, "timestamp", etl_u32(p + 2 * P + 4));
		evtw_kv_s(&c->l, "image", s1);
		finish(c, 0, NULL, 0, ev->ts);
		return;
	}
	if (is_provider(ev->guid, P_IMAGEID) && ev->type == 36 && n >= P + 24) {
		uint32_t ipid = etl_u32(p + P);
		if (!begin(c, "DbgID_RSDS", ns, ev->cpu, ipid, tid, 0, ev->ts))
			return;
		etl_guid_str(s2, p + P + 4);
		etl_astr(p + P + 24, n - P - 24, s1, sizeof s1, NULL);
		evtw_kv_x(&c->l, "base", ptr_at(c, p));
		evtw_kv_s(&c->l, "guid", s2);
		evtw_kv_u(&c->l, "age", etl_u32(p + P + 20));
		evtw_kv_s(&c->l, "pdb", s1);
		finish(c, 0, NULL, 0, ev->ts);
		return;
	}
	emit_user(c, ev, ns);
}

static void
emit(struct conv *c, const struct etl_event *ev)
{
	int64_t ns = (int64_t)(ev->ts - GBIAS);	/* ts is global already */
	c->cur_kind = kind_key(ev) | 1ull << 63;

	switch (ev->hkind) {
	case ETL_HK_SYSTEM: case ETL_HK_COMPACT: case ETL_HK_PERFINFO:
		emit_kernel(c, ev, ns);
		break;
	case ETL_HK_FULL: case ETL_HK_INSTANCE:
		emit_classic(c, ev, ns);
		break;
	case ETL_HK_EVENT:
		if (is_provider(ev->guid, P_CLR) || is_provider(ev->guid, P_CLR_RUNDOWN)) {
			int rd = is_provider(ev->guid, P_CLR_RUNDOWN);
			if ((!rd && (ev->id == 143 || ev->id == 144)) || (rd && (ev->id == 143 || ev->id == 144))) {
				const uint8_t *p = ev->payload;
				if (ev->plen >= 36) {
					const char *kind = !rd && ev->id == 144 ? "MethodUnload" : "MethodLoad";
					int64_t tid = htid(ev);
					int64_t pid = hpid(ev);
					if (!begin(c, kind, ns, ev->cpu, pid, tid, 0, ev->ts))
						return;
					char nsb[1024], nm[1024];
					size_t used;
					etl_wstr(p + 36, ev->plen - 36, nsb, sizeof nsb, &used);
					nm[0] = '\0';
					if (36 + used < ev->plen)
						etl_wstr(p + 36 + used, ev->plen - 36 - used, nm, sizeof nm, NULL);
					evtw_key(&c->l, "method");
					if (*nsb) {
						evtw_esc(&c->l, nsb, strlen(nsb), 0);
						evtw_ch(&c->l, '.');
					}
					evtw_esc(&c->l, nm, strlen(nm), 0);
					evtw_kv_x(&c->l, "start", etl_u64(p + 16));
					evtw_kv_u(&c->l, "size", etl_u32(p + 24));
					char mod[64];
					snprintf(mod, sizeof mod, "0x%llx", (unsigned long long)etl_u64(p + 8));
					evtw_kv_s(&c->l, "module_id", mod);
					if (rd)
						evtw_kv_u(&c->l, "rundown", 1);
					finish(c, 0, NULL, 0, ev->ts);
					return;
				}
			}
		}
		emit_user(c, ev, ns);
		break;
	case ETL_HK_WPP:
		emit_user(c, ev, ns);
		break;
	default:
		if (begin(c, "Unknown", ns, ev->cpu, -1, -1, 0, ev->ts)) {
			evtw_kv_hexbytes(&c->l, "hex", ev->raw, ev->rawlen);
			finish(c, 0, NULL, 0, ev->ts);
		}
	}
}

/* ---------- driver ---------- */

static char **
split_list(const char *s, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!s)
		return NULL;
	char *dup = xstrdup(s), *save = NULL;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		GROW(v, *n, cap);
		v[(*n)++] = xstrdup(t);
	}
	free(dup);
	return v;
}

static void
write_header(struct conv *c)
{
	const struct etl_info *in = etl_info(c->src[0].r);
	static const char *const clocks[] = { "qpc", "qpc", "systime", "cycles" };
	uint32_t ncpu = 0, lost = 0, blost = 0;
	size_t nbuf = 0, ncomp = 0;

	/* several files (a .diagsession): one machine, the earliest start, sums */
	for (size_t s = 0; s < c->nsrc; s++) {
		const struct etl_info *si = etl_info(c->src[s].r);
		if (si->ncpu > ncpu)
			ncpu = si->ncpu;
		lost += si->events_lost;
		blost += si->buffers_lost;
		nbuf += etl_nbuffers(c->src[s].r);
		for (size_t i = 0; i < etl_nbuffers(c->src[s].r); i++)
			if (etl_buffers(c->src[s].r)[i].flags & 0x40)
				ncomp++;
	}
	char osv[64], build[16], cpus[16], psize[16], freq[24], start[32], dur[40], elost[16];
	char blostv[16], iv[40], nbufv[24], ncompv[24], files[24];
	snprintf(osv, sizeof osv, "%u.%u.%u.%u", in->version[0], in->version[1], in->version[2],
	    in->version[3]);
	snprintf(build, sizeof build, "%u", in->build);
	snprintf(cpus, sizeof cpus, "%u", ncpu);
	snprintf(psize, sizeof psize, "%u", in->pointer_size);
	snprintf(freq, sizeof freq, "%llu", (unsigned long long)in->clock_freq);
	etl_filetime_str(start, c->ft0);
	evt_format_time_ns(dur, c->have_ts ? (int64_t)(c->max_ts - c->min_ts) : 0);
	snprintf(elost, sizeof elost, "%u", lost);
	snprintf(blostv, sizeof blostv, "%u", blost);
	evt_format_weight(iv, (c->first_interval ? c->first_interval : 10000) / 10000.0);
	snprintf(nbufv, sizeof nbufv, "%zu", nbuf);
	snprintf(ncompv, sizeof ncompv, "%zu", ncomp);
	snprintf(files, sizeof files, "%zu", c->nsrc);
	const struct evtw_pair kv[] = {
		{ "source", c->o->source }, { "os_version", osv }, { "os_build", build },
		{ "cpus", cpus }, { "pointer_size", psize },
		{ "clock", clocks[in->clock_type <= 3 ? in->clock_type : 1] }, { "clock_freq", freq },
		{ "start_utc", start }, { "duration_ms", dur }, { "events_lost", elost },
		{ "buffers_lost", blostv }, { "sample_interval_ms", iv }, { "buffers", nbufv },
		{ "compressed_buffers", ncompv }, { "logger", in->logger_name },
		{ "files", c->nsrc > 1 ? files : NULL },
	};
	evtw_header(c->ob, kv, sizeof kv / sizeof kv[0]);
}

/* Pass 2 for source I: its next sane event, with a global timestamp. */
static void
source_next(struct conv *c, size_t i)
{
	struct source *s = &c->src[i];
	use_source(c, i);
	s->have = 0;
	while (etl_next(s->r, &s->ev)) {
		s->seq = c->cseq[i * c->ncur + (size_t)s->ev.cpu]++;
		if (!ts_sane(c, &s->ev))
			continue;
		s->ev.ts = gts(c, s->ev.ts);
		s->have = 1;
		return;
	}
}

int
etl2evt_convert(struct etl_reader **rs, size_t nr, const struct etl2evt_opts *o,
    struct outbuf *ob, struct etl2evt_result *res)
{
	struct conv cv, *c = &cv;
	struct etl_event ev;
	uint64_t total = 0, done = 0, n = 0;
	unsigned maxp = 4;

	memset(c, 0, sizeof *c);
	c->o = o;
	c->ob = ob;
	c->nsrc = nr;
	c->src = xcalloc(nr ? nr : 1, sizeof *c->src);
	for (size_t i = 0; i < nr; i++) {
		const struct etl_info *in = etl_info(rs[i]);
		c->src[i].r = rs[i];
		if (i == 0 || in->start_time < c->ft0)
			c->ft0 = in->start_time;
		if (in->pointer_size > maxp)
			maxp = in->pointer_size;
		for (size_t b = 0; b < etl_nbuffers(rs[i]); b++) {
			total += etl_buffers(rs[i])[b].size;
			if (etl_buffers(rs[i])[b].cpu + 1u > c->ncur)
				c->ncur = etl_buffers(rs[i])[b].cpu + 1u;
		}
	}
	for (size_t i = 0; i < nr; i++)
		c->src[i].off_ns = (int64_t)(etl_info(rs[i])->start_time - c->ft0) * 100;
	use_source(c, 0);
	c->img = images_new(maxp);
	c->tdh = tdh_new();
	if (o->sym)
		images_set_symbols(c->img, o->sym, o->symcount, o->symctx);
	hmap_init(&c->pendmap);
	hmap_init(&c->stacked);
	hmap_init(&c->lastmap);
	hmap_init(&c->late);
	hmap_init(&c->framemap);
	c->kinds = split_list(o->kinds, &c->nkinds);
	c->procs = split_list(o->procs, &c->nprocs);
	c->from_ns = o->has_from ? (int64_t)(o->from_ms * 1e6) : INT64_MIN;
	c->to_ns = o->has_to ? (int64_t)(o->to_ms * 1e6) : INT64_MAX;
	c->cur_tid = xmalloc((c->ncur ? c->ncur : 1) * sizeof *c->cur_tid);
	c->cseq = xcalloc((nr ? nr : 1) * (c->ncur ? c->ncur : 1), sizeof *c->cseq);
	c->recent = xcalloc((c->ncur ? c->ncur : 1) * RECENT, sizeof *c->recent);
	c->ftext = xcalloc((size_t)1 << FTEXT_BITS, sizeof *c->ftext);
	for (size_t i = 0; i < c->ncur; i++)
		c->cur_tid[i] = -1;
	c->lo_ns = -7 * 86400 * 1000000000LL;
	c->hi_ns = 7 * 86400 * 1000000000LL;

	/* pass 1: the model, from every file */
	for (size_t i = 0; i < nr; i++) {
		use_source(c, i);
		memset(c->recent, 0, (c->ncur ? c->ncur : 1) * RECENT * sizeof *c->recent);
		etl_rewind(c->r, ETL_FILE_ORDER);
		while (etl_next(c->r, &ev)) {
			c->cur_seq = c->cseq[i * c->ncur + (size_t)ev.cpu]++;
			collect(c, &ev);
			if (o->progress && (++n & 0xffff) == 0)
				cli_progress((done + etl_progress(c->r)) / 2, total);
		}
		done += etl_progress(c->r);
	}
	images_finish(c->img);
	if (c->nkd)
		qsort(c->kd, c->nkd, sizeof *c->kd, cmp_keydef);
	c->interval = c->first_interval ? c->first_interval : 10000;

	write_header(c);
	uint64_t damaged = 0, damaged_bytes = 0;
	for (size_t i = 0; i < nr; i++) {
		use_source(c, i);
		uint64_t t0 = gts(c, c->info->ts0);
		if (c->info->events_lost && begin(c, "Lost", (int64_t)(t0 - GBIAS), -1, -1, -1, 0, t0)) {
			evtw_kv_u(&c->l, "events", c->info->events_lost);
			evtw_kv_u(&c->l, "buffers", c->info->buffers_lost);
			evtw_kv_s(&c->l, "source", "header");
			finish(c, 0, NULL, 0, t0);
		}
		for (size_t k = 0; k < etl_nbuffers(c->r); k++) {
			const struct etl_buffer *b = &etl_buffers(c->r)[k];
			if ((b->flags & 0x6) && begin(c, "Lost", (int64_t)(t0 - GBIAS), b->cpu, -1, -1, 0, t0)) {
				evtw_kv_u(&c->l, "events", 0);
				evtw_kv_u(&c->l, "buffers", (b->flags & 4) ? 1 : 0);
				evtw_kv_u(&c->l, "offset", b->offset);
				evtw_kv_s(&c->l, "source", (b->flags & 4) ? "buffer_lost" : "events_lost");
				finish(c, 0, NULL, 0, t0);
			}
		}
	}

	/* pass 2: the events of all files in time order (CPU stream positions counted again) */
	memset(c->cseq, 0, (nr ? nr : 1) * (c->ncur ? c->ncur : 1) * sizeof *c->cseq);
	for (size_t i = 0; i < nr; i++) {
		etl_rewind(c->src[i].r, ETL_TIME_ORDER);
		source_next(c, i);
	}
	for (;;) {
		size_t best = nr;
		for (size_t i = 0; i < nr; i++)
			if (c->src[i].have && (best == nr || c->src[i].ev.ts < c->src[best].ev.ts))
				best = i;
		if (best == nr)
			break;
		use_source(c, best);
		c->cur_seq = c->src[best].seq;
		c->now = c->src[best].ev.ts;
		emit(c, &c->src[best].ev);
		source_next(c, best);
		if (o->progress && (++n & 0xffff) == 0) {
			uint64_t p = 0;
			for (size_t i = 0; i < nr; i++)
				p += etl_progress(c->src[i].r);
			cli_progress(total / 2 + p / 2, total);
		}
	}
	flush_window(c, 1);
	if (o->progress)
		cli_progress_end();
	for (size_t i = 0; i < nr; i++) {
		damaged += etl_damage(c->src[i].r)->buffers;
		damaged_bytes += etl_damage(c->src[i].r)->bytes;
	}

	/* what could not be used */
	uint64_t unmatched = c->unmatched;
	evtw_skipped(ob, "stack", unmatched, "stacks whose event is not in the trace");
	evtw_skipped(ob, "stack_key", c->unresolved, "stack keys without a definition");
	evtw_skipped(ob, "schema", tdh_stats(c->tdh)->damaged,
	    "embedded event schemas that could not be read");
	evtw_skipped(ob, "dpc", c->bad_dpc, "DPC/ISR records with an impossible InitialTime");
	evtw_skipped(ob, "event", c->bad_ts, "timestamp outside the session");
	evtw_skipped(ob, "event", c->skipped_events, "events too short for their kind");
	char detail[80];
	snprintf(detail, sizeof detail, "corrupt or truncated buffers (%llu bytes)",
	    (unsigned long long)damaged_bytes);
	evtw_skipped(ob, "buffer", damaged, detail);
	char events[24];
	snprintf(events, sizeof events, "%llu", (unsigned long long)c->events);
	const struct evtw_pair stats[] = { { "events", events } };
	evtw_meta(ob, "stats", stats, 1);

	if (res) {
		res->events = c->events;
		res->unmatched_stacks = unmatched;
		res->unresolved_keys = c->unresolved;
	}
	int partial = damaged > 0 || c->skipped_events > 0 || c->bad_ts > 0 || c->bad_dpc > 0;
	for (size_t i = 0; i < c->nkinds; i++)
		free(c->kinds[i]);
	for (size_t i = 0; i < c->nprocs; i++)
		free(c->procs[i]);
	free(c->kinds);
	free(c->procs);
	for (size_t i = 0; i < c->qcap; i++) {
		free(c->q[i].text.b);
		free(c->q[i].kf);
		free(c->q[i].uf);
	}
	free(c->q);
	free(c->cseq);
	free(c->fr);
	free(c->kd);
	free(c->frames);
	free(c->cur_tid);
	free(c->l.b);
	hmap_free(&c->pendmap);
	hmap_free(&c->stacked);
	hmap_free(&c->lastmap);
	hmap_free(&c->late);
	for (size_t i = 0; i < (size_t)1 << FTEXT_BITS; i++)
		free(c->ftext[i].text);
	free(c->ftext);
	free(c->lates);
	free(c->last);
	free(c->recent);
	hmap_free(&c->framemap);
	free(c->src);
	images_free(c->img);
	tdh_free(c->tdh);
	return partial;
}

/* ---------- census ---------- */

struct ckey {
	char text[160];
	uint64_t count;
};

static int
cmp_ckey(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

void
etl_census(struct etl_reader *r, struct outbuf *ob)
{
	static const char *const hk[] = { "SYSTEM", "COMPACT", "PERFINFO", "FULL", "INSTANCE",
	    "EVENT_HEADER", "WPP", "OTHER" };
	struct ckey *k = NULL;
	size_t nk = 0, cap = 0;
	struct hmap idx;
	struct etl_event ev;
	char text[160], gs[40];
	uint64_t total = 0;

	hmap_init(&idx);
	etl_rewind(r, ETL_FILE_ORDER);
	while (etl_next(r, &ev)) {
		const char *bits = ev.hkind == ETL_HK_WPP || ev.hkind == ETL_HK_OTHER ? "" :
		    ev.hdr64 ? "64" : "32";
		char hname[32];
		snprintf(hname, sizeof hname, "%s%s", hk[ev.hkind], bits);
		switch (ev.hkind) {
		case ETL_HK_SYSTEM: case ETL_HK_COMPACT: case ETL_HK_PERFINFO:
			snprintf(text, sizeof text, "K %-10s %s g=0x%02x t=0x%02x(%u)", hname,
			    group_name(ev.group), ev.group, ev.type, ev.type);
			break;
		case ETL_HK_FULL: case ETL_HK_INSTANCE: {
			const char *nm = etl_provider_name(ev.guid, 1);
			etl_guid_str(gs, ev.guid);
			snprintf(text, sizeof text, "F %s %s type=%u", hname, nm ? nm : gs, ev.type);
			break;
		}
		case ETL_HK_EVENT: {
			const char *nm = etl_provider_name(ev.guid, 1);
			etl_guid_str(gs, ev.guid);
			snprintf(text, sizeof text, "E %s %s", hname, nm ? nm : gs);
			break;
		}
		default:
			snprintf(text, sizeof text, "W %s id=%u", hname, ev.message_id);
		}
		/* index by a hash of the text */
		uint64_t h = 1469598103934665603ull;
		for (const char *s = text; *s; s++)
			h = (h ^ (uint8_t)*s) * 1099511628211ull;
		uint32_t *i = hmap_get(&idx, h, 0);
		if (!i) {
			GROW(k, nk, cap);
			snprintf(k[nk].text, sizeof k[nk].text, "%s", text);
			k[nk].count = 0;
			hmap_put(&idx, h, 0, (uint32_t)nk);
			i = hmap_get(&idx, h, 0);
			nk++;
		}
		k[*i].count++;
		total++;
	}
	if (nk)
		qsort(k, nk, sizeof *k, cmp_ckey);
	ob_printf(ob, "events parsed: %llu\n", (unsigned long long)total);
	for (size_t i = 0; i < nk; i++)
		ob_printf(ob, "%9llu  %s\n", (unsigned long long)k[i].count, k[i].text);
	free(k);
	hmap_free(&idx);
}
