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
	if (c->tt)	/* thread time: did it ready a thread? */
		tt_interrupt(c->tt, ev->cpu, start_ns, ns, isr, routine);
	int64_t tid = -1, pid = -1;
	if ((size_t)ev->cpu < c->ncur && c->cur_tid[ev->cpu] >= 0) {
		tid = c->cur_tid[ev->cpu];
		pid = tid == 0 ? 0 : images_thread_pid(c->img, (uint32_t)tid, ev->ts);
	}
	if (!conv_begin(c, kind, start_ns, ev->cpu, pid, tid, dur, ev->ts))
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
		tt_cswitch(c->tt, ev->cpu, ns, oldt, newt, (int8_t)p[9], (int8_t)p[8], p[12], p[13], p[14]);
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
	} else if (c->f.n)
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
	int readied = c->tt && tt_ready(c->tt, ev->cpu, ns, rt, tid);
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
	if (readied) {
		c->f.stash = 1;
		c->f.stash_tid = rt;
	}
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
		tt_thread_end(c->tt, ns, tid);
	else if (c->tt)
		tt_thread_start(c->tt, ns, tid, ev->type != 1);
	if (!conv_begin(c, names[ev->type], ns, ev->cpu, pid, tid, 0, ev->ts)) {
		if (c->f.n) {	/* a thread's end ends its wait: those lines are not dropped */
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
	if (c->tt && tid > 0)	/* thread time: DISK_TIME when its wait lasted as long */
		tt_disk_done(c->tt, (uint32_t)tid, (int64_t)((__int128)etl_u64(p + 24 + 2 * P) *
		    1000000000 / (__int128)c->info->clock_freq));
	if (!conv_begin(c, ev->type == 10 ? "DiskRead" : "DiskWrite", ns, ev->cpu, pid, tid, 0, ev->ts))
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
	size_t nf = tid > 0 ? conv_stack_of(c, (uint32_t)tid) : 0;
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
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
	if (!conv_begin(c, kind, ns, ev->cpu, pid, tid, 0, ev->ts))
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
	size_t nf = tid > 0 ? conv_stack_of(c, (uint32_t)tid) : 0;
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
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
	if (!conv_begin(c, names[ev->type], ns, ev->cpu, pid, tid, 0, ev->ts))
		return;
	if (ev->type == 14)
		evtw_kv_u(&c->l, "disk", etl_u32(ev->payload));
	else
		evtw_kv_x(&c->l, "irp", ptr_at(c, ev->payload));
	size_t nf = tid > 0 ? conv_stack_of(c, (uint32_t)tid) : 0;
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
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
	if (!conv_begin(c, "PageFaultHard", ns, ev->cpu, pid, tid, 0, ev->ts))
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
			conv_attach_stack(c, ev);
		return;	/* stacks: attached to their events; key definitions were read in pass 1 */
	}
	emit_generic_kernel(c, ev, ns);
}

