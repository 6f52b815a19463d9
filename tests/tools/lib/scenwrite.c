/*
 * scenwrite.c - writes an etlgen scenario's model (scenario.h) as an .etl
 * through tests/tools/lib/etlwrite.c: each event as the kernel logger
 * records it (headers, payload layouts, stack records or stack keys,
 * rundowns, --repeat copies), and with --expect the evt lines etl2evt must
 * decode from it ("*" for a column the scenario does not decide).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cli.h"
#include "base/outbuf.h"
#include "etlwrite.h"
#include "evt/evt.h"
#include "generate.h"
#include "scenario.h"
#include "scenwrite.h"

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
	return scen.start_qpc + (uint64_t)t;
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
	return (int64_t)llroundl((long double)t * 1e9L / (long double)scen.freq);
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

/*
 * The expected lines are written here, not with lib/evt/evtwrite.h, on
 * purpose: they are what etl2evt is checked against, so they are built
 * by other code (evt_escape, printf) than the decoder's writer, and an
 * escaping or formatting bug in that writer cannot pass both sides.
 * They are not quite evt either: a "*" column matches anything.
 */
#define ANY (-2)	/* a "*" column */

/* the fixed columns; NAME NULL and ANY ids are written as "*" */
static void
ex_cols(struct out *o, int64_t t, int kind, int cpu, const char *name, long pid, long tid,
    const char *weight)
{
	char tb[40];

	fmt_ms(tb, t);
	ob_printf(o->ex, "%s\t%s\t%d\t", tb, scen_kind_names[kind], cpu);
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
 * The StackWalk records of a sample (and of a CSwitch: the new thread's;
 * of a ReadyThread: the readying thread's, the one running on the CPU)
 * are events of their own, logged after the event (header time later,
 * EventTimeStamp = the event's time):
 * full: one Stack; split: kernel part, then the user part 0.5 ms later (as
 * when the thread returns to user mode); keys: StackKeyKernel/User.  With
 * --user-delay MS, the user part of a sample taken in the kernel comes MS
 * later (split and keys).
 */
enum { PART_ALL, PART_KERNEL, PART_USER };

static void
add_stackwalks(void)
{
	size_t i, n = scen.nev;

	for (i = 0; i < n; i++) {
		struct gev s = scen.ev[i], *e;
		int nk, nu;
		if ((s.kind != K_SAMPLE && s.kind != K_CSWITCH && s.kind != K_READY) || !s.stack)
			continue;
		nk = s.stack->nk;
		nu = s.stack->n - nk;
		if (scen.stack_mode == 0) {
			e = scen_add_event(K_STACKWALK, s.cpu, s.t + 1);
			e->a[1] = PART_ALL;
		} else {
			if (nk) {
				e = scen_add_event(K_STACKWALK, s.cpu, s.t + 1);
				e->a[1] = PART_KERNEL;
				e->t0 = s.t;
				e->a[0] = s.a[0];
				e->stack = s.stack;
			}
			if (!nu)
				continue;
			e = scen_add_event(K_STACKWALK, s.cpu, s.t + (nk && (scen.stack_mode == 2 ||
			    scen.user_delay_ms >= 0) ? scen_ms_to_ticks(scen.user_delay_ms >= 0 ? scen.user_delay_ms : 0.5) +
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

	if (!scen.key_cache)
		return part == PART_KERNEL ? st->kkey : st->ukey;
	if (*slot >= 0) {
		kslots[*slot].last = ++kclock;
		return kslots[*slot].key;
	}
	if (nkslots < scen.key_cache) {
		victim = nkslots++;
		kslots[victim].key = (scen.psize == 8 ? 0xFFFFFA8003400000ull : 0x88400000ull) + 0x40ull * (uint64_t)(victim + 1);
	} else {
		for (i = 1; i < nkslots; i++)
			if (kslots[i].last < kslots[victim].last)
				victim = i;
		k = &kslots[victim];
		/* logged just before the reference that reuses the key */
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 24, 35, 2, 0, 0, ts(t) - 1);
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
	const struct thread *th = scen_thread_at(e->a[0], e->t0);	/* at the event's time */
	int part = (int)e->a[1], i;
	int lo = part == PART_KERNEL ? st->n - st->nk : 0;
	int hi = part == PART_USER ? st->n - st->nk : st->n;

	if (scen.stack_mode == 1) {
		{
			uint64_t key = key_for(o, e->stack, part, e->t, e->cpu);
			etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 24, part == PART_KERNEL ? 37 : 38, 2,
			    0, 0, ts(e->t));
			etlw_u64(&o->r, ts(e->t0));
			etlw_u32(&o->r, th->proc->pid);
			etlw_u32(&o->r, th->tid);
			etlw_ptr(&o->r, key);
			emit(o, e->cpu);
		}
		return;
	}
	etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 24, 32, 2, 0, 0, ts(e->t));
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
	const struct thread *th = scen_thread_at(e->a[0], e->t);
	char w[40];

	etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 15, 46, 2, 0, 0, ts(e->t));
	etlw_ptr(&o->r, e->addr);
	etlw_u32(&o->r, e->a[0]);
	etlw_u16(&o->r, (uint16_t)e->a[2]);
	etlw_u8(&o->r, (uint8_t)(e->a[1] << 3 | e->a[3]));
	etlw_u8(&o->r, 0);
	emit(o, e->cpu);
	if (!o->ex)
		return;
	evt_format_weight(w, scen.interval_ms * e->a[2]);
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
		scen_frame_text(f, sizeof f, th->proc->pid, e->addr);
		ob_printf(o->ex, "\tnostack=1\t%s\n", f);
	}
}

static void
write_dpc(struct out *o, const struct gev *e)
{
	static const int type[] = {[K_DPC] = 68, [K_TDPC] = 66, [K_TIMERDPC] = 69, [K_ISR] = 67};
	int t = e->kind == K_ISR && e->a[1] ? 50 : type[e->kind];
	char w[40], end[40], f[300];
	struct image *im = scen_resolve(4, e->addr);
	/* durations are between the two rounded times, so end_ms - time_ms == duration */
	int64_t dur_ns = tick_ns(e->t) - tick_ns(e->t0);

	etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 15, t, 2, 0, 0, ts(e->t));
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
	scen_frame_text(f, sizeof f, 4, e->addr);
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
	const struct thread *nt = scen_thread_at(e->a[0], e->t), *ot = scen_thread_at(e->a[1], e->t);
	int full = (e->a[4] >> 17) & 1;

	etlw_rec_kernel(&o->r, full ? ETLW_SYSTEM : ETLW_COMPACT, scen.psize, 5, 36, 4, 0, 0, ts(e->t));
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
	ob_printf(o->ex, "\tnew_prio=%u\told_prio=%u\twait_reason=%s\twait_mode=%s\told_state=%s\twait_time=%u\t%s\n",
	    e->a[2], e->a[3], scen_wait_reasons[e->a[4] & 0xFF], (e->a[4] >> 16) & 1 ? "user" : "kernel",
	    scen_thread_states[(e->a[4] >> 8) & 0xFF], e->a[5], e->stack ? e->stack->text : "");
}

/*
 * ReadyThread, by default with the PERFINFO header of real traces (no
 * thread id): the readying thread is the one running on the CPU, which
 * the expected line names (the thread-time contract, docs/evt-format.md)
 * and its StackWalk record carries (before the CPU's first CSwitch: the
 * thread that CSwitch switches out).  When no CSwitch on the CPU tells
 * who runs there, the expected line leaves the thread "*".
 */
static void
write_ready(struct out *o, const struct gev *e)
{
	uint32_t hdr = e->a[5] & 0xFF;
	int unknown = (e->a[5] & SCEN_WAKER_UNKNOWN) != 0;
	const struct thread *t = unknown ? NULL : scen_thread_at(e->a[0], e->t);
	const struct thread *rt = scen_thread_at(e->a[1], e->t);

	if (hdr == SCEN_HDR_PERFINFO)
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 5, 50, 2, 0, 0, ts(e->t));
	else
		etlw_rec_kernel(&o->r, hdr == SCEN_HDR_FULL ? ETLW_SYSTEM : ETLW_COMPACT, scen.psize, 5, 50, 2,
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
	ob_printf(o->ex, "\tready_tid=%u\tready_pid=%u\tadjust_reason=%d\tadjust_incr=%d\tflags=%d\t%s\n",
	    rt->tid, rt->proc->pid, (int8_t)e->a[2], (int8_t)e->a[3], (int8_t)e->a[4],
	    e->stack ? e->stack->text : "");
}

/* ---------- disk and file I/O ---------- */

/*
 * DiskIo (group 1) as the kernel logs it from Windows 8 on (version 3):
 * completions (Read 10, Write 11) under a PERFINFO header, so the thread
 * is the payload's IssuingThreadId; starts (ReadInit 12, WriteInit 13)
 * under a SYSTEM header of the issuing thread.
 */
static void
write_disk(struct out *o, const struct gev *e, const struct gio *io, const struct thread *th)
{
	int init = e->kind == K_DISKREADINIT || e->kind == K_DISKWRITEINIT;
	int type = e->kind == K_DISKREAD ? 10 : e->kind == K_DISKWRITE ? 11 :
	    e->kind == K_DISKREADINIT ? 12 : 13;
	char w[40], el[40];

	if (init) {
		etlw_rec_kernel(&o->r, ETLW_SYSTEM, scen.psize, 1, type, 3, th->tid, th->proc->pid,
		    ts(e->t));
		etlw_ptr(&o->r, io->irp);
		etlw_u32(&o->r, th->tid);
	} else {
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 1, type, 3, 0, 0, ts(e->t));
		etlw_u32(&o->r, io->disk);
		etlw_u32(&o->r, 0x43);			/* IrpFlags */
		etlw_u32(&o->r, io->bytes);
		etlw_u32(&o->r, 0);
		etlw_u64(&o->r, io->offset);
		etlw_ptr(&o->r, io->file_object);
		etlw_ptr(&o->r, io->irp);
		etlw_u64(&o->r, (uint64_t)io->elapsed);	/* HighResResponseTime */
		etlw_u32(&o->r, th->tid);
	}
	emit(o, e->cpu);
	if (!o->ex)
		return;
	if (init) {
		ex_head(o, e->t, e->kind, e->cpu, th, "0");
		ob_printf(o->ex, "\tirp=0x%llx\t\n", (unsigned long long)io->irp);
		return;
	}
	evt_format_weight_ns(w, tick_ns(io->elapsed));
	evt_format_time_ns(el, tick_ns(io->elapsed));
	ex_head(o, e->t, e->kind, e->cpu, th, w);
	ob_printf(o->ex, "\tdisk=%u\tbytes=%u\toffset=%llu\tirp_flags=0x43\tfile_object=0x%llx"
	    "\tirp=0x%llx\telapsed_ms=%s\t\n", io->disk, io->bytes, (unsigned long long)io->offset,
	    (unsigned long long)io->file_object, (unsigned long long)io->irp, el);
}

/* PageFault HardFault (group 2 type 32): InitialTime is the fault's start. */
static void
write_hardfault(struct out *o, const struct gev *e, const struct gio *io, const struct thread *th)
{
	char w[40], el[40];

	etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 2, 32, 2, 0, 0, ts(e->t));
	etlw_u64(&o->r, ts(e->t - io->elapsed));
	etlw_u64(&o->r, io->offset);
	etlw_ptr(&o->r, io->va);
	etlw_ptr(&o->r, io->file_object);
	etlw_u32(&o->r, th->tid);
	etlw_u32(&o->r, io->bytes);
	emit(o, e->cpu);
	if (!o->ex)
		return;
	evt_format_weight_ns(w, tick_ns(e->t) - tick_ns(e->t - io->elapsed));
	evt_format_time_ns(el, tick_ns(e->t) - tick_ns(e->t - io->elapsed));
	ex_head(o, e->t, e->kind, e->cpu, th, w);
	ob_printf(o->ex, "\tva=0x%llx\toffset=%llu\tbytes=%u\tfile_object=0x%llx\telapsed_ms=%s\t*\n",
	    (unsigned long long)io->va, (unsigned long long)io->offset, io->bytes,
	    (unsigned long long)io->file_object, el);
}

/*
 * The IRP, the thread and the pointers a FileIo operation starts with, in
 * the layout of its version: 3 puts the thread (u32) after the pointers,
 * 2 (Windows 7) puts it second, pointer-wide.
 */
static void
fileio_head(struct out *o, const struct gio *io, const uint64_t *ptrs, int n, uint32_t tid)
{
	etlw_ptr(&o->r, io->irp);
	if (io->version == 2)
		etlw_ptr(&o->r, tid);
	for (int i = 0; i < n; i++)
		etlw_ptr(&o->r, ptrs[i]);
	if (io->version != 2)
		etlw_u32(&o->r, tid);
}

/* FileIo (group 4): names, Create, Read, Write, Close and OperationEnd, PERFINFO headers. */
static void
write_fileio(struct out *o, const struct gev *e, const struct gio *io, const struct thread *th)
{
	static const int type[] = { [K_FILEIONAME] = 0, [K_FILEIORUNDOWN] = 36,
	    [K_FILEIOCREATE] = 64, [K_FILEIOREAD] = 67, [K_FILEIOWRITE] = 68,
	    [K_FILEIOCLOSE] = 66, [K_FILEIOOPEND] = 76 };
	uint64_t ptrs[2] = { io->file_object, io->file_key };
	uint32_t tid = th ? th->tid : 0;

	etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 4, type[e->kind], (int)io->version, 0, 0,
	    ts(e->t));
	switch (e->kind) {
	case K_FILEIONAME: case K_FILEIORUNDOWN:
		etlw_ptr(&o->r, io->file_object);
		etlw_wstr(&o->r, io->file);
		break;
	case K_FILEIOCREATE:
		fileio_head(o, io, ptrs, 1, tid);
		etlw_u32(&o->r, 0x1000000);		/* CreateOptions: FILE_OPEN << 24 */
		etlw_u32(&o->r, 0x80);			/* FileAttributes: normal */
		etlw_u32(&o->r, 1);			/* ShareAccess: read */
		etlw_wstr(&o->r, io->file);
		break;
	case K_FILEIOREAD: case K_FILEIOWRITE:
		etlw_u64(&o->r, io->offset);
		fileio_head(o, io, ptrs, 2, tid);
		etlw_u32(&o->r, io->bytes);
		etlw_u32(&o->r, 0);			/* IoFlags */
		break;
	case K_FILEIOCLOSE:
		fileio_head(o, io, ptrs, 2, tid);
		break;
	case K_FILEIOOPEND:
		etlw_ptr(&o->r, io->irp);
		etlw_ptr(&o->r, io->bytes);		/* ExtraInfo: bytes moved */
		etlw_u32(&o->r, io->status);
		break;
	}
	emit(o, e->cpu);
	if (!o->ex)
		return;
	if (th)
		ex_head(o, e->t, e->kind, e->cpu, th, "0");
	else
		ex_cols(o, e->t, e->kind, e->cpu, "?", -1, -1, "0");
	switch (e->kind) {
	case K_FILEIONAME: case K_FILEIORUNDOWN:
		ob_printf(o->ex, "\tfile_object=0x%llx\tfile=", (unsigned long long)io->file_object);
		ex_escaped(o->ex, io->file, 0);
		break;
	case K_FILEIOCREATE:
		ob_printf(o->ex, "\tirp=0x%llx\tfile_object=0x%llx\toptions=0x1000000\tattributes=0x80"
		    "\tshare=0x1\tfile=", (unsigned long long)io->irp, (unsigned long long)io->file_object);
		ex_escaped(o->ex, io->file, 0);
		break;
	case K_FILEIOREAD: case K_FILEIOWRITE:
		ob_printf(o->ex, "\toffset=%llu\tirp=0x%llx\tfile_object=0x%llx\tfile_key=0x%llx"
		    "\tbytes=%u\tio_flags=0x0", (unsigned long long)io->offset,
		    (unsigned long long)io->irp, (unsigned long long)io->file_object,
		    (unsigned long long)io->file_key, io->bytes);
		break;
	case K_FILEIOCLOSE:
		ob_printf(o->ex, "\tirp=0x%llx\tfile_object=0x%llx\tfile_key=0x%llx",
		    (unsigned long long)io->irp, (unsigned long long)io->file_object,
		    (unsigned long long)io->file_key);
		break;
	case K_FILEIOOPEND:
		ob_printf(o->ex, "\tirp=0x%llx\textra=0x%x\tstatus=0x%x", (unsigned long long)io->irp,
		    io->bytes, io->status);
		break;
	}
	ob_puts(o->ex, "\t\n");
}

static void
write_io(struct out *o, const struct gev *e)
{
	const struct gio *io = e->obj;
	const struct thread *th = io->tid ? scen_thread_at(io->tid, e->t) : NULL;

	if (e->kind == K_HARDFAULT)
		write_hardfault(o, e, io, th);
	else if (e->kind <= K_DISKWRITEINIT)
		write_disk(o, e, io, th);
	else
		write_fileio(o, e, io, th);
}

/* ---------- TcpIp and UdpIp ---------- */

/* an address as etl2evt writes it: dotted decimal, or all eight IPv6 groups in hex (no "::") */
static void
ex_netaddr(struct outbuf *ob, const char *key, const uint8_t *a, int v6)
{
	ob_printf(ob, "\t%s=", key);
	for (int i = 0; i < (v6 ? 8 : 4); i++) {
		if (v6)
			ob_printf(ob, "%s%x", i ? ":" : "", (unsigned)(a[2 * i] << 8 | a[2 * i + 1]));
		else
			ob_printf(ob, "%s%u", i ? "." : "", a[i]);
	}
}

static void
net_port(struct etlw_rec *r, uint16_t port)	/* network byte order */
{
	etlw_u8(r, (uint8_t)(port >> 8));
	etlw_u8(r, (uint8_t)port);
}

/*
 * TcpIp (group 6) and UdpIp (group 8), version 2, under a PERFINFO header
 * as in the corpus (no thread: the payload names the process).  The payload,
 * as TraceEvent's TcpIp*TraceData parsers read it: PID, size, daddr, saddr
 * (4 or 16 bytes), dport, sport (big-endian), then Send's startime and
 * endtime, Connect/Accept's TCP options (mss, sackopt, tsopt, wsopt, rcvwin,
 * rcvwinscale, sndwinscale), and every kind's seqnum and connid (pointer).
 */
static void
write_net(struct out *o, const struct gev *e)
{
	const struct gnet *net = e->obj;
	int group, type;
	size_t alen = net->v6 ? 16 : 4;

	scen_net_id(e->kind, &group, &type);
	etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, group, type, 2, 0, 0, ts(e->t));
	etlw_u32(&o->r, net->pid);
	etlw_u32(&o->r, net->bytes);
	etlw_bytes(&o->r, net->daddr, alen);
	etlw_bytes(&o->r, net->saddr, alen);
	net_port(&o->r, net->dport);
	net_port(&o->r, net->sport);
	int sub = group == 6 ? type % 16 : 0;	/* 10 Send, 12 Connect, 15 Accept */
	if (sub == 10) {
		etlw_u32(&o->r, 1000);		/* startime, endtime */
		etlw_u32(&o->r, 1001);
	} else if (sub == 12 || sub == 15) {
		etlw_u16(&o->r, 1460);		/* mss */
		etlw_u16(&o->r, 1);		/* sackopt */
		etlw_u16(&o->r, 0);		/* tsopt */
		etlw_u16(&o->r, 1);		/* wsopt */
		etlw_u32(&o->r, 65535);		/* rcvwin */
		etlw_u16(&o->r, 8);		/* rcvwinscale */
		etlw_u16(&o->r, 8);		/* sndwinscale */
	}
	etlw_u32(&o->r, (uint32_t)e->seq);	/* seqnum */
	etlw_ptr(&o->r, 0xffffe00012340000ull + e->seq);	/* connid */
	if (net->cut >= 0 && o->r.hdr + (size_t)net->cut < o->r.len)
		o->r.len = o->r.hdr + (size_t)net->cut;
	size_t plen = o->r.len - o->r.hdr;
	emit(o, e->cpu);
	if (!o->ex)
		return;
	if (plen < (net->v6 ? 44u : 20u)) {	/* too short for the fields: a generic line */
		char tb[40];
		fmt_ms(tb, e->t);
		ob_printf(o->ex, "%s\tKernel\t%d\t*\t*\t*\t0\tclass=%s\tgroup=%d\ttype=%d\tversion=2\thex=",
		    tb, e->cpu, group == 6 ? "TcpIp" : "UdpIp", group, type);
		for (size_t i = 0; i < plen; i++)
			ob_printf(o->ex, "%02x", o->r.b[o->r.hdr + i]);
		ob_puts(o->ex, "\t*\n");
		return;
	}
	const struct proc *p = scen_proc_by_pid(net->pid);
	ex_cols(o, e->t, e->kind, e->cpu, p ? p->name : NULL, (long)net->pid, -1, "0");
	ob_printf(o->ex, "\tbytes=%u", net->bytes);
	ex_netaddr(o->ex, "daddr", net->daddr, net->v6);
	ex_netaddr(o->ex, "saddr", net->saddr, net->v6);
	ob_printf(o->ex, "\tdport=%u\tsport=%u\t\n", net->dport, net->sport);
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
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 3, type[e->kind], 4, 0, 0, ts(e->t));
	else
		etlw_rec_kernel(&o->r, ETLW_SYSTEM, scen.psize, 3, type[e->kind], 4,
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
	uint64_t kstack = (scen.psize == 8 ? 0xFFFFD00020000000ull : 0x9a000000ull) + 0x8000ull * (uint64_t)(t - scen.thr);
	int user = t->proc->pid > 4;

	etlw_rec_kernel(&o->r, ETLW_SYSTEM, scen.psize, 5, type[e->kind], 3,
	    e->kind == K_TEND ? t->tid : 0, e->kind == K_TEND ? t->proc->pid : 0, ts(e->t));
	etlw_u32(&o->r, t->proc->pid);
	etlw_u32(&o->r, t->tid);
	etlw_ptr(&o->r, kstack + 0x6000);			/* StackBase */
	etlw_ptr(&o->r, kstack);				/* StackLimit */
	etlw_ptr(&o->r, user ? 0x100000ull + 0x100000ull * (uint64_t)(t - scen.thr) : 0);
	etlw_ptr(&o->r, user ? 0x0fc000ull + 0x100000ull * (uint64_t)(t - scen.thr) : 0);
	etlw_ptr(&o->r, t->idle_cpu >= 0 ? 1ull << (t->idle_cpu % (scen.psize * 8)) : (scen.psize == 8 ? ~0ull : 0xFFFFFFFFull));
	etlw_ptr(&o->r, t->start_addr);
	etlw_ptr(&o->r, user ? 0x7ff000ull - 0x2000ull * (uint64_t)(t - scen.thr) : 0);	/* TebBase */
	etlw_u32(&o->r, 0);
	etlw_u8(&o->r, (uint8_t)t->prio);
	etlw_u8(&o->r, 5);
	etlw_u8(&o->r, 2);
	etlw_u8(&o->r, 0);
	emit(o, e->cpu);
	if (t->name && (e->kind == K_TSTART || e->kind == K_TDCSTART)) {
		etlw_rec_kernel(&o->r, ETLW_SYSTEM, scen.psize, 5, 72, 2, 0, 0, ts(e->t));
		etlw_u32(&o->r, t->proc->pid);
		etlw_u32(&o->r, t->tid);
		etlw_wstr(&o->r, t->name);
		emit(o, e->cpu);
	}
	if (!o->ex)
		return;
	ex_cols(o, e->t, e->kind, e->cpu, t->proc->name, (long)t->proc->pid, (long)t->tid, "0");
	if (scen_resolve(t->proc->pid, t->start_addr)) {
		char f[300];
		scen_frame_text(f, sizeof f, t->proc->pid, t->start_addr);
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
	int kernel = scen_is_kernel_addr(im->base);
	int system_hdr = e->kind == K_ILOAD || e->kind == K_IUNLOAD || kernel;
	int ids = e->kind != K_IUNLOAD;
	uint32_t rtid = e->kind == K_IDCEND ? scen.rundown_end_tid : scen.rundown_tid;
	uint32_t htid = kernel ? rtid : 0xFFFFFFFFu;

	if (ids) {
		etlw_rec_classic(&o->r, scen.psize, imageid_guid, 0, 0, 2, htid, pid, ts(e->t));
		etlw_ptr(&o->r, im->base);
		etlw_ptr(&o->r, im->size);
		etlw_u32(&o->r, pid);
		etlw_u32(&o->r, im->timestamp);
		etlw_wstr(&o->r, im->original);
		emit(o, e->cpu);
		if (im->pdb) {
			etlw_rec_classic(&o->r, scen.psize, imageid_guid, 36, 0, 2, htid, pid, ts(e->t));
			etlw_ptr(&o->r, im->base);
			etlw_u32(&o->r, pid);
			etlw_bytes(&o->r, im->guid, 16);
			etlw_u32(&o->r, im->age);
			etlw_astr(&o->r, im->pdb);
			emit(o, e->cpu);
		}
	}
	if (system_hdr)
		etlw_rec_kernel(&o->r, ETLW_SYSTEM, scen.psize, group, type, 2,
		    kernel ? rtid : 0, kernel ? scen.rundown_pid : pid, ts(e->t));
	else
		etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, group, type, 2, 0, 0, ts(e->t));
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
	etlw_rec_kernel(&o->r, ETLW_SYSTEM, scen.psize, 15, 73, 3, 0, 0, ts(e->t));
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

	if (scen.key_cache) {
		for (i = 0; i < nkslots; i++) {
			etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 24, 36, 2, 0, 0, ts(t));
			etlw_ptr(&o->r, kslots[i].key);
			key_frames(&o->r, kslots[i].st, kslots[i].part);
			emit(o, 0);
		}
		return;
	}

	for (i = 0; i < scen.nstacks; i++) {
		struct rstack *st = scen.stacks[i];
		for (part = 0; part < 2; part++) {
			uint64_t key = part ? st->ukey : st->kkey;
			int lo = part ? 0 : st->n - st->nk, hi = part ? st->n - st->nk : st->n;
			if (!key)
				continue;
			etlw_rec_kernel(&o->r, ETLW_PERFINFO, scen.psize, 24, 36, 2, 0, 0, ts(t));
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
	uint64_t k = scen.psize == 8 ? 0xFFFFFA8003400000ull : 0x88400000ull;
	int i;

	for (i = 0; i < scen.nstacks; i++) {
		struct rstack *st = scen.stacks[i];
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
	uint64_t ft = scen.start_ft;
	time_t secs = (time_t)(ft / 10000000ull) - 11644473600LL;
	struct tm tm;

	gmtime_r(&secs, &tm);
	evt_format_weight(iv, scen.interval_ms);
	ob_printf(ex, "#evt\t1\tsource=%s\tos_version=%u.%u.%u.%u\tos_build=%u\tcpus=%d\tpointer_size=%d"
	    "\tclock=qpc\tclock_freq=%llu\tstart_utc=%04d-%02d-%02dT%02d:%02d:%02d.%07lluZ"
	    "\tevents_lost=%u\tbuffers_lost=%u\tsample_interval_ms=%s\n",
	    etl, scen.version[0], scen.version[1], scen.version[2], scen.version[3], scen.os_build, scen.cpus,
	    scen.psize, (unsigned long long)scen.freq, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	    tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned long long)(ft % 10000000ull),
	    scen.events_lost + scen.lost_total, scen.buffers_lost + scen.lost_buffers, iv);
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
	default:
		if (scen_is_io(e->kind))
			write_io(o, e);
		else if (scen_is_net(e->kind))
			write_net(o, e);
		break;
	}
}

uint64_t
scenwrite_trace(const char *path, const char *expect)
{
	struct etlw_config cfg;
	struct out o;
	struct outbuf ex;
	int64_t end = scen.duration, period = 1, last = 0, r;
	size_t i;
	uint64_t bytes;

	/* a reused tid's lives are written once; the copies' events would fall outside them */
	if (scen.repeat > 1)
		for (i = 0; i < (size_t)scen.nthr; i++)
			if (scen.thr[i].reused)
				cli_fatal("%s: --repeat: tid %u is reused (several lives), and the copies would fall "
				    "outside them", scen.file, scen.thr[i].tid);
	/* readying threads first (their stack records carry them), then stack records:
	 * a user part that comes late (--user-delay) can end the trace */
	scen_resolve_wakers();
	add_stackwalks();
	for (i = 0; i < scen.nev; i++)
		if (scen.ev[i].t > end)
			end = scen.ev[i].t;
	memset(&cfg, 0, sizeof cfg);
	cfg.pointer_size = scen.psize;
	cfg.ncpus = scen.cpus;
	cfg.buffer_size = scen.buffer_size;
	cfg.compress = scen.compress;
	memcpy(cfg.version, scen.version, 4);
	cfg.os_build = scen.os_build;
	cfg.cpu_mhz = scen.cpu_mhz;
	cfg.clock_freq = scen.freq;
	cfg.start_qpc = scen.start_qpc;
	cfg.start_filetime = scen.start_ft;
	cfg.end_filetime = scen.start_ft + (uint64_t)((long double)end * 1e7L / (long double)scen.freq);
	cfg.boot_filetime = scen.boot_ft;
	cfg.log_file_mode = 0x1;		/* EVENT_TRACE_FILE_MODE_SEQUENTIAL */
	cfg.events_lost = scen.events_lost;
	cfg.buffers_lost = scen.buffers_lost;
	cfg.logger_id = 0xFFFF & 28;
	cfg.controller_pid = 4;
	cfg.controller_tid = 8;
	cfg.tz_bias = 0;
	cfg.tz_name = "@tzres.dll,-322";
	cfg.logger_name = scen.logger_name;
	cfg.logfile_name = path;

	generate_lifecycle(end + 10);
	qsort(scen.ev, scen.nev, sizeof *scen.ev, cmp_time);
	for (i = 0; i < scen.nev; i++)
		if (!end_rundown(scen.ev[i].kind) && scen.ev[i].t >= period)
			period = scen.ev[i].t + 1;
	if (scen.repeat > 1)
		cfg.end_filetime = scen.start_ft + (uint64_t)((long double)(end + (scen.repeat - 1) * period) *
		    1e7L / (long double)scen.freq);
	if (scen.stack_mode == 1)
		assign_keys();
	if (scen.key_cache)
		kslots = xcalloc((size_t)scen.key_cache, sizeof *kslots);
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
	for (r = 0; r < scen.repeat; r++)
		for (i = 0; i < scen.nev; i++) {
			struct gev e = scen.ev[i];
			if (end_rundown(e.kind) || (r > 0 && once_only(e.kind)))
				continue;
			e.t += r * period;
			e.t0 += r * period;
			dispatch(&o, &e);
			if (e.t > scen.last_t)
				scen.last_t = e.t;
		}
	for (i = 0; i < scen.nev; i++)
		if (end_rundown(scen.ev[i].kind)) {
			struct gev e = scen.ev[i];
			e.t += (scen.repeat - 1) * period;
			dispatch(&o, &e);
			last = e.t;
		}
	if (last > scen.last_t)
		scen.last_t = last;
	if (scen.stack_mode == 1) {
		write_key_rundown(&o, last + 1);
		scen.last_t = last + 1;
	}
	bytes = etlw_close(o.w);
	if (expect)
		ob_close(&ex);
	etlw_rec_free(&o.r);
	return bytes;
}
