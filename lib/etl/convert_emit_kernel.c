/*
 * convert_emit_kernel.c - pass 2's decoders of kernel events (system,
 * compact and perfinfo headers): samples, context switches, DPC/ISR,
 * processes, threads, images, disk and file I/O, network, hard faults,
 * the sampling interval; any other kernel event as a "Kernel" line with
 * its payload in hex.  Stack records join their lines (convert_line.c).
 */
#include <stdio.h>
#include <string.h>

#include "etl/convert_int.h"

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
	if (!conv_begin(c, "Sample", ns, ev->cpu, pid, tid, w, ev->ts))
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
	conv_stack_of(c, tid);
	c->want_sample = 1;
	c->want_ip = ip;
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, NULL, 0, ev->ts);
	return;
generic:
	c->skipped_events++;
}

/* KEY=the frame of ADDR, and with MODKEY its module too */
static void
emit_frame_attr(struct conv *c, const char *key, uint32_t pid, uint64_t addr, uint64_t ts,
    const char *modkey)
{
	int flags = (c->o->full_paths ? FRAME_FULL_PATHS : 0) | FRAME_ADDRS;
	evtw_key(&c->l, key);
	images_frame_attr(c->img, pid, addr, ts, flags, &c->l, modkey);
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
	if (c->tt)	/* thread time: did it ready a thread? */
		conv_tt_interrupt(c, ev->cpu, start_ns, ns, isr, routine);
	int64_t tid = -1, pid = -1;
	if ((size_t)ev->cpu < c->ncur && c->cur_tid[ev->cpu] >= 0) {
		tid = c->cur_tid[ev->cpu];
		pid = tid == 0 ? 0 : images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	}
	if (!conv_begin(c, kind, start_ns, ev->cpu, pid, tid, dur, ev->ts))
		return;
	emit_frame_attr(c, "routine", 0, routine, ev->ts, "module");
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
	conv_finish(c, 0, NULL, 0, ev->ts);
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
	if (c->tt)	/* the intervals this switch ends follow its line */
		conv_tt_cswitch(c, ev->cpu, ns, oldt, newt, (int8_t)p[9], (int8_t)p[8], p[12], p[13],
		    p[14]);
	int64_t npid = newt == 0 ? 0 : images_thread_pid(c->img, newt, ev->ts);
	int64_t opid = oldt == 0 ? 0 : images_thread_pid(c->img, oldt, ev->ts);
	if (conv_begin(c, "CSwitch", ns, ev->cpu, npid, newt, 0, ev->ts)) {
		struct evtw_line *l = &c->l;
		evtw_kv_u(l, "old_tid", oldt);
		evtw_kv_i(l, "old_pid", opid);
		evtw_kv_s(l, "old_process", oldt == 0 ? "Idle" : conv_process_name(c, opid, ev->ts));
		evtw_kv_i(l, "new_prio", (int8_t)p[8]);
		evtw_kv_i(l, "old_prio", (int8_t)p[9]);
		unsigned wr = p[12], st = p[14];
		evtw_key(l, "wait_reason");
		if (tt_wait_reason_name(wr))
			evtw_str(l, tt_wait_reason_name(wr));
		else
			evtw_u64(l, wr);
		evtw_kv_s(l, "wait_mode", p[13] ? "user" : "kernel");
		evtw_key(l, "old_state");
		if (tt_thread_state_name(st))
			evtw_str(l, tt_thread_state_name(st));
		else
			evtw_u64(l, st);
		evtw_kv_u(l, "wait_time", etl_u32(p + 16));
		evtw_kv_u(l, "cstate", p[10]);
	} else if (CONV_TT_LINES(c))
		conv_begin_silent(c);	/* dropped, but its thread-time lines are not */
	else
		return;
	/* the CSwitch stack is the new thread's (compact headers carry no thread id) */
	size_t nf = newt != 0 ? conv_stack_of(c, newt) : 0;
	conv_finish(c, npid < 0 ? ETL_NO_ID : (uint32_t)npid, c->frames, nf, ev->ts);
}

/*
 * ReadyThread: the readying thread (the waker) is the header's, except
 * that PERFINFO headers (real traces) have none: then it is the thread
 * running on that CPU, which the StackWalk record that follows names too,
 * so the stack joins.  With thread time, the readied thread's wait ends.
 */
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
	if (ev->hkind == ETL_HK_PERFINFO || tid < 0) {
		tid = conv_tt_waker(c, ev->cpu);
		pid = -1;
	}
	if (pid < 0 && tid > 0)
		pid = images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	else if (tid == 0)
		pid = 0;
	int readied = c->tt && conv_tt_ready(c, ev->cpu, ns, rt, tid);
	if (conv_begin(c, "ReadyThread", ns, ev->cpu, pid, tid, 0, ev->ts)) {
		struct evtw_line *l = &c->l;
		evtw_kv_u(l, "ready_tid", rt);
		evtw_kv_i(l, "ready_pid", rt == 0 ? 0 : images_thread_pid(c->img, rt, ev->ts));
		evtw_kv_i(l, "adjust_reason", (int8_t)p[4]);
		evtw_kv_i(l, "adjust_incr", (int8_t)p[5]);
		evtw_kv_u(l, "flags", p[6]);
	} else if (readied)
		conv_begin_silent(c);	/* dropped, but its stack is the waker's */
	else
		return;
	size_t nf = tid >= 0 ? conv_stack_of(c, (uint32_t)tid) : 0;
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
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
	conv_decode_process(c, ev, &pi);
	if (!pi.ok) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	int64_t tid = htid(ev);
	c->tt_gen++;	/* (thread time's thread -> process cache) */
	if (!conv_begin(c, proc_kind(ev->type), ns, ev->cpu, pi.pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "parent", pi.ppid);
	evtw_kv_i(l, "session", (int32_t)pi.session);
	if (ev->type == 2 || ev->type == 4 || ev->type == 39)
		evtw_kv_u(l, "exit", pi.exit);
	evtw_kv_s(l, "image", pi.image);
	evtw_kv_s(l, "cmdline", pi.cmdline);
	conv_finish(c, 0, NULL, 0, ev->ts);
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
		if (!conv_begin(c, "ThreadSetName", ns, ev->cpu, pid, tid, 0, ev->ts))
			return;
		char name[1024];
		etl_wstr(p + 8, ev->plen - 8, name, sizeof name, NULL);
		evtw_kv_s(&c->l, "name", name);
		conv_finish(c, 0, NULL, 0, ev->ts);
		return;
	}
	c->tt_gen++;	/* (thread time's thread -> process cache) */
	if (c->tt && ev->type == 2)
		conv_tt_thread_end(c, ns, tid);
	else if (c->tt)
		conv_tt_thread_start(c, ns, tid, ev->type != 1);
	if (!conv_begin(c, names[ev->type], ns, ev->cpu, pid, tid, 0, ev->ts)) {
		if (CONV_TT_LINES(c)) {	/* a thread's end ends its wait: those lines are not dropped */
			conv_begin_silent(c);
			conv_finish(c, 0, NULL, 0, ev->ts);
		}
		return;
	}
	size_t sa = ev->version >= 3 ? 8 + 5 * P : 8 + 4 * P;
	if (ev->version >= 2 && ev->plen >= sa + P)
		emit_frame_attr(c, "start_addr", pid, ptr_at(c, p + sa), ev->ts, NULL);
	if (ev->version >= 3 && ev->plen >= 16 + 7 * P)
		evtw_kv_u(&c->l, "base_prio", p[12 + 7 * P]);
	const char *name = images_thread_name_of(c->img, tid);
	if (name)
		evtw_kv_s(&c->l, "name", name);
	conv_finish(c, 0, NULL, 0, ev->ts);
}

static void
emit_image(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	struct imginfo ii;
	conv_decode_image(c, ev, &ii);
	if (!ii.ok) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	const char *kind = ev->group == 3 || ev->type == 10 ? "ImageLoad" : ev->type == 2 ?
	    "ImageUnload" : ev->type == 3 ? "ImageDCStart" : "ImageDCEnd";
	int64_t tid = htid(ev);
	if (!conv_begin(c, kind, ns, ev->cpu, ii.pid, tid, 0, ev->ts))
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
	conv_finish(c, 0, NULL, 0, ev->ts);
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
	if (!conv_begin(c, "SampleInterval", ns, ev->cpu, hpid(ev),
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
	conv_finish(c, 0, NULL, 0, ev->ts);
}

/*
 * A duration in clock ticks (DiskIo's HighResResponseTime) in ns, or -1 when
 * it cannot be one (over a week: a damaged record).
 */
static int64_t
ticks_ns(const struct conv *c, uint64_t ticks)
{
	uint64_t f = c->info->clock_freq;
	if (f == 0 || ticks / f > 7 * 86400)
		return -1;
	return (int64_t)((__int128)ticks * 1000000000 / (__int128)f);
}

/*
 * The thread a DiskIo record names (IssuingThreadId, version 3 and later,
 * at OFF) when the payload has it, else the header's; then its process.
 * The thread that asked for the I/O need not be the one the record was
 * logged on (a DPC re-issuing it, the lazy writer...), and a stack record
 * names the latter: its stack is looked up with the header's thread.
 */
struct disk_who {
	int64_t tid, pid;	/* the line's */
	int64_t stid, spid;	/* the stack's */
};

static void
disk_thread(struct conv *c, const struct etl_event *ev, size_t off, struct disk_who *w)
{
	w->tid = w->stid = htid(ev);
	w->pid = w->spid = hpid(ev);
	if (ev->version >= 3 && ev->plen >= off + 4) {
		uint32_t itid = etl_u32(ev->payload + off);
		/* only a thread the trace knows: a damaged or misread id names nobody */
		if (itid != ETL_NO_ID && images_thread_pid(c->img, itid, ev->ts) >= 0)
			w->tid = itid;
	}
	if (w->stid < 0)
		w->stid = w->tid;
	int64_t *ids[2][2] = { { &w->tid, &w->pid }, { &w->stid, &w->spid } };
	for (int i = 0; i < 2; i++) {
		int64_t t = *ids[i][0], tp = t > 0 ? images_thread_pid(c->img, (uint32_t)t, ev->ts) : 0;
		if (t == 0 || tp >= 0 || *ids[i][1] < 0)
			*ids[i][1] = t < 0 ? -1 : tp;
	}
}

/* Ends a DiskIo line with the stack of the thread that logged it. */
static void
disk_finish(struct conv *c, const struct disk_who *w, uint64_t ts)
{
	size_t nf = w->stid > 0 ? conv_stack_of(c, (uint32_t)w->stid) : 0;
	conv_finish(c, w->spid < 0 ? ETL_NO_ID : (uint32_t)w->spid, c->frames, nf, ts);
}

/*
 * DiskIo Read/Write (group 1 types 10, 11), the completions.  Weighted by
 * the time since the I/O was issued, so a stack view of disk completions
 * sums disk time.  A completion is logged in whatever context the I/O ended
 * in; from version 3 (Windows 8) the payload names the thread that issued it,
 * which becomes the line's thread.  The IRP pairs it with its DiskReadInit or
 * DiskWriteInit.  Layout (TraceEvent's DiskIOTraceData, the kernel MOF):
 *   0 u32 DiskNumber, 4 u32 IrpFlags, 8 u32 TransferSize, 12 u32 Reserved,
 *   16 u64 ByteOffset, 24 P FileObject (the file key from Windows 8 on),
 *   24+P P Irp, 24+2P u64 HighResResponseTime (clock ticks),
 *   32+2P u32 IssuingThreadId (version 3).
 */
static void
emit_disk(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	if ((ev->type != 10 && ev->type != 11) || ev->plen < 24 + 2 * P + 8) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	struct disk_who w;
	disk_thread(c, ev, 32 + 2 * P, &w);
	int64_t elapsed = ticks_ns(c, etl_u64(p + 24 + 2 * P));
	if (c->tt && w.tid > 0)	/* thread time: DISK_TIME when its wait lasted as long */
		conv_tt_disk(c, (uint32_t)w.tid, elapsed > 0 ? elapsed : 0);
	if (!conv_begin(c, ev->type == 10 ? "DiskRead" : "DiskWrite", ns, ev->cpu, w.pid, w.tid,
	    elapsed > 0 ? elapsed : 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "disk", etl_u32(p));
	evtw_kv_u(l, "bytes", etl_u32(p + 8));
	evtw_kv_u(l, "offset", etl_u64(p + 16));
	evtw_kv_x(l, "irp_flags", etl_u32(p + 4));
	evtw_kv_x(l, "file_object", ptr_at(c, p + 24));
	evtw_kv_x(l, "irp", ptr_at(c, p + 24 + P));
	if (elapsed >= 0) {
		evtw_key(l, "elapsed_ms");
		evtw_time_ns(l, elapsed);
	}
	disk_finish(c, &w, ev->ts);
}

/*
 * DiskIo ReadInit, WriteInit, FlushInit (types 12, 13, 15): logged where the
 * I/O is issued, with its stack.  0 P Irp, P u32 IssuingThreadId (version 3).
 */
static void
emit_disk_init(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	static const char *const names[] = { [12] = "DiskReadInit", [13] = "DiskWriteInit",
	    [15] = "DiskFlushInit" };
	if (ev->plen < c->P) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	struct disk_who w;
	disk_thread(c, ev, c->P, &w);
	if (!conv_begin(c, names[ev->type], ns, ev->cpu, w.pid, w.tid, 0, ev->ts))
		return;
	evtw_kv_x(&c->l, "irp", ptr_at(c, ev->payload));
	disk_finish(c, &w, ev->ts);
}

/*
 * DiskIo FlushBuffers (type 14), a flush's completion, weighted like reads
 * and writes.  0 u32 DiskNumber, 4 u32 IrpFlags, 8 u64 HighResResponseTime,
 * 16 P Irp, 16+P u32 IssuingThreadId (version 3).
 */
static void
emit_disk_flush(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	unsigned P = c->P;
	if (ev->plen < 8) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	int full = ev->plen >= 16 + P;
	struct disk_who w;
	disk_thread(c, ev, 16 + P, &w);
	int64_t elapsed = full ? ticks_ns(c, etl_u64(p + 8)) : -1;
	if (!conv_begin(c, "DiskFlush", ns, ev->cpu, w.pid, w.tid, elapsed > 0 ? elapsed : 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "disk", etl_u32(p));
	if (full) {
		evtw_kv_x(l, "irp_flags", etl_u32(p + 4));
		evtw_kv_x(l, "irp", ptr_at(c, p + 16));
		if (elapsed >= 0) {
			evtw_key(l, "elapsed_ms");
			evtw_time_ns(l, elapsed);
		}
	}
	disk_finish(c, &w, ev->ts);
}

/*
 * Where the fields of a FileIo operation are.  The operations start with the
 * IRP, then N pointers (file object, file key, extra info...), the thread id
 * and the rest.  Version 2 (Windows 7 and before) puts the thread id second
 * and pointer-wide; version 3 puts it after the pointers as a u32.  Read and
 * Write have a u64 Offset before it all (BASE 8).  Offsets as in TraceEvent's
 * FileIO*TraceData (its HostOffset() arithmetic, both versions).
 */
/* The FileIo kinds by event type, and how many pointers follow their IRP. */
static const struct fileio_kind {
	unsigned type;
	const char *name;
	unsigned shape, nptr;
	size_t rest_len;	/* fixed bytes after the thread id */
} fileio_kinds[] = {
	{ 0, "Name", 'N', 0, 0 }, { 32, "FileCreate", 'N', 0, 0 }, { 35, "FileDelete", 'N', 0, 0 },
	{ 36, "Rundown", 'N', 0, 0 },
	{ 64, "Create", 'C', 1, 12 },
	{ 65, "Cleanup", 'S', 2, 0 }, { 66, "Close", 'S', 2, 0 }, { 73, "Flush", 'S', 2, 0 },
	{ 67, "Read", 'W', 2, 8 }, { 68, "Write", 'W', 2, 8 },
	{ 69, "SetInfo", 'I', 3, 4 }, { 70, "Delete", 'I', 3, 4 }, { 71, "Rename", 'I', 3, 4 },
	{ 74, "QueryInfo", 'I', 3, 4 }, { 75, "FSControl", 'I', 3, 4 },
	{ 72, "DirEnum", 'D', 2, 12 }, { 77, "DirNotify", 'D', 2, 12 },
	{ 76, "OperationEnd", 'E', 0, 0 },
	{ 79, "DeletePath", 'P', 3, 4 }, { 80, "RenamePath", 'P', 3, 4 }, { 81, "SetLinkPath", 'P', 3, 4 },
};

struct fileio_at {
	size_t irp, ptr, tid, rest;	/* ptr: the first of the N pointers */
};

static int
fileio_layout(const struct conv *c, const struct etl_event *ev, const struct fileio_kind *k,
    struct fileio_at *at)
{
	size_t P = c->P, base = k->shape == 'W' ? 8 : 0, n = k->nptr;
	at->irp = base;
	if (ev->version <= 2) {
		at->tid = base + P;
		at->ptr = base + 2 * P;
		at->rest = base + (2 + n) * P;
	} else {
		at->ptr = base + P;
		at->tid = base + (1 + n) * P;
		at->rest = at->tid + 4;
	}
	return ev->plen >= at->rest + k->rest_len;
}

/* FileIo names (Name, FileCreate, FileDelete, Rundown): 0 P FileObject or key, P W-str */
static int
fileio_name_attrs(struct conv *c, const struct etl_event *ev)
{
	char name[2048];
	if (ev->plen < c->P)
		return 0;
	evtw_kv_x(&c->l, "file_object", ptr_at(c, ev->payload));
	etl_wstr(ev->payload + c->P, ev->plen - c->P, name, sizeof name, NULL);
	evtw_kv_s(&c->l, "file", name);
	return 1;
}

/* The IRP and the pointers every operation but OperationEnd starts with. */
static void
fileio_ptrs(struct conv *c, const uint8_t *p, const struct fileio_at *at, unsigned n)
{
	static const char *const keys[] = { "file_object", "file_key", "extra" };
	evtw_kv_x(&c->l, "irp", ptr_at(c, p + at->irp));
	for (unsigned i = 0; i < n && i < 3; i++)
		evtw_kv_x(&c->l, keys[i], ptr_at(c, p + at->ptr + i * c->P));
}

static void
fileio_wstr_attr(struct conv *c, const char *key, const uint8_t *p, size_t len)
{
	char name[2048];
	etl_wstr(p, len, name, sizeof name, NULL);
	evtw_kv_s(&c->l, key, name);
}

/*
 * The attributes of one FileIo operation (shape letters in fileio_kinds):
 * C Create: OpenPath and the create options; W Read/Write: offset, size;
 * S Cleanup/Close/Flush: the pointers only; I SetInfo...FSControl: the info
 * class; D DirEnum/DirNotify: length, info class, index, the pattern;
 * P DeletePath...: the info class and the path; E OperationEnd: IRP, extra
 * info (bytes moved, for reads and writes) and NTSTATUS.  0 when the payload
 * is too short for its layout.
 */
static int
fileio_op_attrs(struct conv *c, const struct etl_event *ev, const struct fileio_kind *k)
{
	const uint8_t *p = ev->payload;
	struct fileio_at at;
	size_t P = c->P;
	if (k->shape == 'E') {
		if (ev->plen < 2 * P + 4)
			return 0;
		evtw_kv_x(&c->l, "irp", ptr_at(c, p));
		evtw_kv_x(&c->l, "extra", ptr_at(c, p + P));
		evtw_kv_x(&c->l, "status", etl_u32(p + 2 * P));
		return 1;
	}
	if (!fileio_layout(c, ev, k, &at))
		return 0;
	const uint8_t *r = p + at.rest;
	size_t rlen = ev->plen - at.rest;
	if (k->shape == 'W')
		evtw_kv_u(&c->l, "offset", etl_u64(p));
	fileio_ptrs(c, p, &at, k->nptr);
	switch (k->shape) {
	case 'C':
		evtw_kv_x(&c->l, "options", etl_u32(r));
		evtw_kv_x(&c->l, "attributes", etl_u32(r + 4));
		evtw_kv_x(&c->l, "share", etl_u32(r + 8));
		fileio_wstr_attr(c, "file", r + 12, rlen - 12);
		break;
	case 'W':
		evtw_kv_u(&c->l, "bytes", etl_u32(r));
		evtw_kv_x(&c->l, "io_flags", etl_u32(r + 4));
		break;
	case 'I':
		evtw_kv_u(&c->l, "info_class", etl_u32(r));
		break;
	case 'D':
		evtw_kv_u(&c->l, "length", etl_u32(r));
		evtw_kv_u(&c->l, "info_class", etl_u32(r + 4));
		evtw_kv_u(&c->l, "file_index", etl_u32(r + 8));
		fileio_wstr_attr(c, "file", r + 12, rlen - 12);
		break;
	case 'P':
		evtw_kv_u(&c->l, "info_class", etl_u32(r));
		fileio_wstr_attr(c, "file", r + 4, rlen - 4);
		break;
	}
	return 1;
}

/* The thread a FileIo operation names (TTID), else the header's. */
static int64_t
fileio_thread(const struct conv *c, const struct etl_event *ev, const struct fileio_kind *k)
{
	struct fileio_at at;
	if (k->shape != 'N' && k->shape != 'E' && fileio_layout(c, ev, k, &at)) {
		uint32_t t = etl_u32(ev->payload + at.tid);
		if (t != ETL_NO_ID)
			return t;
	}
	return htid(ev);
}

/*
 * FileIo (group 4).  The thread is the one the payload names (TTID) when it
 * has one: the record may be logged elsewhere.  A payload too short for its
 * layout keeps its bytes as hex=, so nothing is lost.
 */
static void
emit_fileio(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const struct fileio_kind *k = NULL;
	for (size_t i = 0; i < sizeof fileio_kinds / sizeof fileio_kinds[0]; i++)
		if (fileio_kinds[i].type == ev->type)
			k = &fileio_kinds[i];
	if (!k) {
		emit_generic_kernel(c, ev, ns);
		return;
	}
	char kind[40];
	snprintf(kind, sizeof kind, "FileIo%s", k->name);
	int64_t tid = fileio_thread(c, ev, k), pid = hpid(ev);
	if (pid < 0 && tid > 0)
		pid = images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	if (!conv_begin(c, kind, ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	int ok = k->shape == 'N' ? fileio_name_attrs(c, ev) : fileio_op_attrs(c, ev, k);
	if (!ok)
		evtw_kv_hexbytes(&c->l, "hex", ev->payload, ev->plen);
	size_t nf = tid > 0 ? conv_stack_of(c, (uint32_t)tid) : 0;
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static void
kv_ipaddr(struct evtw_line *l, const char *k, const uint8_t *p, int v6)
{
	/* (formatted in place, not by snprintf: a call per address was 1.3% of etl2evt on net) */
	evtw_key(l, k);
	char *o = evtw_room(l, 40);	/* 8 groups of 4 hex digits and 7 colons; 15 for IPv4 */
	char *start = o;
	if (v6) {
		for (int i = 0; i < 8; i++) {
			if (i)
				*o++ = ':';
			o += evtw_put_hex(o, (unsigned)(p[2 * i] << 8 | p[2 * i + 1]));
		}
	} else {
		for (int i = 0; i < 4; i++) {
			if (i)
				*o++ = '.';
			o += evtw_put_u64(o, p[i]);
		}
	}
	l->n += (size_t)(o - start);
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
	char kind[40];	/* (the two names joined without snprintf: one per event) */
	size_t pl = 5, sl = strlen(sub);
	memcpy(kind, udp ? "UdpIp" : "TcpIp", pl);
	memcpy(kind + pl, sub, sl + 1);
	uint32_t pid = etl_u32(p);
	if (!conv_begin(c, kind, ns, ev->cpu, pid, htid(ev), 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_u(l, "bytes", etl_u32(p + 4));
	kv_ipaddr(l, "daddr", p + 8, v6);
	kv_ipaddr(l, "saddr", p + (v6 ? 24 : 12), v6);
	const uint8_t *ports = p + (v6 ? 40 : 16);
	evtw_kv_u(l, "dport", (unsigned)(ports[0] << 8 | ports[1]));
	evtw_kv_u(l, "sport", (unsigned)(ports[2] << 8 | ports[3]));
	conv_finish(c, 0, NULL, 0, ev->ts);
}

/*
 * PageFault HardFault (group 2 type 32): a page read from disk, weighted by
 * how long the thread waited for it.  0 u64 InitialTime, 8 u64 ReadOffset,
 * 16 P VirtualAddress, 16+P P FileObject (the file key), 16+2P u32 ThreadId,
 * 20+2P u32 ByteCount.
 */
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
	int64_t start = (int64_t)(gts(c, etl_u64(p)) - GBIAS);
	/* a damaged InitialTime could be anything: the elapsed time only when it is one */
	int sane = start <= ns && start >= ns - 7 * 86400 * 1000000000LL;
	if (!conv_begin(c, "PageFaultHard", ns, ev->cpu, pid, tid, sane ? ns - start : 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_x(l, "va", ptr_at(c, p + 16));
	evtw_kv_u(l, "offset", etl_u64(p + 8));
	evtw_kv_u(l, "bytes", etl_u32(p + 20 + 2 * P));
	evtw_kv_x(l, "file_object", ptr_at(c, p + 16 + P));
	if (sane) {
		evtw_key(l, "elapsed_ms");
		evtw_time_ns(l, ns - start);
	}
	size_t nf = conv_stack_of(c, tid);
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

static void
emit_generic_kernel(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	int64_t tid = htid(ev), pid = hpid(ev);
	if (!conv_begin(c, "Kernel", ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	struct evtw_line *l = &c->l;
	evtw_kv_s(l, "class", conv_group_name(ev->group));
	evtw_kv_u(l, "group", ev->group);
	evtw_kv_u(l, "type", ev->type);
	evtw_kv_u(l, "version", ev->version);
	evtw_kv_hexbytes(l, "hex", ev->payload, ev->plen);
	size_t nf = tid > 0 ? conv_stack_of(c, (uint32_t)tid) : 0;
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

void
conv_emit_kernel(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	switch (ev->group) {
	case 0:
		if (ev->type == 0)
			return;	/* the logfile header: in the #evt header */
		break;
	case 1:
		if (ev->type == 12 || ev->type == 13 || ev->type == 15)
			emit_disk_init(c, ev, ns);
		else if (ev->type == 14)
			emit_disk_flush(c, ev, ns);
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
			conv_attach_stack(c, ev);
		return;	/* stacks: attached to their events; key definitions were read in pass 1 */
	}
	emit_generic_kernel(c, ev, ns);
}

