/*
 * convert_int.h - what the parts of the ETL -> evt conversion share (not
 * an interface for anyone else: lib/etl/convert.h is that).
 *
 * The conversion makes two passes over the trace (convert.c drives them):
 *   1. file order, headers only for most events (convert_pass1.c): the
 *      model of processes, threads, images, CLR methods, every stack and
 *      stack-key definition (convert_stacks.c), the sampling interval and
 *      the time range;
 *   2. time order (per-CPU merge): every event becomes one evt line
 *      (convert_emit_kernel.c, convert_emit_user.c), started and ended by
 *      convert_line.c, which keeps lines in a window until their stacks come.
 * Provider and kernel group names, and the --census counts, are in
 * convert_names.c; thread time's hooks and lines in convert_tt.c (over
 * threadtime.c).  Memory is the model, never the events themselves.
 */
#ifndef ETLKIT_CONVERT_INT_H
#define ETLKIT_CONVERT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/cli.h"
#include "base/hmap.h"
#include "base/strbuf.h"
#include "etl/convert.h"
#include "etl/esmanifest.h"
#include "etl/tdh.h"
#include "etl/threadtime.h"
#include "evt/evtwrite.h"

/* The thread and process ids of an event header, -1 for none. */
static inline int64_t
htid(const struct etl_event *ev)
{
	return ev->tid == ETL_NO_ID ? -1 : (int64_t)ev->tid;
}

static inline int64_t
hpid(const struct etl_event *ev)
{
	return ev->pid == ETL_NO_ID ? -1 : (int64_t)ev->pid;
}

/*
 * Thread-time lines (convert_tt.c) that follow an event's line: the
 * Running, Ready and Waiting intervals a CSwitch (or ThreadEnd) ends.  They
 * are written right after it, the ones of the thread switched in with its
 * stack and a pseudo-frame as leaf.  A ReadyThread's line stashes its
 * stack as the waker stack of the thread it readied; a line whose event a
 * filter dropped is built "silent" for its stack and followers alone.
 */
#define TT_MAXF 6
/*
 * One input of thread time's machine (lib/etl/threadtime.h), kept with
 * the line of its event when the output's writing thread makes the
 * thread-time lines (struct ttwriter in convert_tt.c): that thread runs
 * a machine of its own on them, in the order the lines are written,
 * which is the order of the events.
 */
enum ttfeed_op { TTF_CSWITCH = 1, TTF_READY, TTF_INTERRUPT, TTF_THREAD_START, TTF_THREAD_END,
    TTF_DISK, TTF_FINISH };
struct ttfeed {
	uint8_t op;		/* enum ttfeed_op */
	uint8_t wait_reason, wait_mode, old_state;	/* CSwitch */
	int8_t old_prio, new_prio;			/* CSwitch */
	uint8_t flag;		/* interrupt: an ISR; thread start: a rundown's */
	int32_t cpu;
	uint32_t tid, tid2;	/* CSwitch: old and new; ReadyThread: the readied */
	int64_t ts;
	int64_t arg;		/* interrupt: its start; ReadyThread: the waker; disk: ns taken */
	uint64_t routine;	/* interrupt */
	int64_t logged;		/* the event's time then (logged_ms=) */
	uint64_t gen;		/* c->tt_gen then (thread -> process texts) */
};
#define TT_MAXFEED 2	/* an event feeds the machine once; its line is never dropped */
struct ttfollow {
	struct ttline {
		struct evtw_line text;	/* the line without its stack column */
		uint32_t wtid;		/* waker_stack= from this thread's stash */
		uint8_t stack, wstack;	/* gets the event's stack; gets the waker_in= ... attributes */
		uint8_t win;		/* waker_in (enum tt_waker_in): TT_IN_PENDING until told */
		uint8_t pseudo_n;	/* strlen(pseudo), 0 without one: no strlen per line */
		uint8_t whole;		/* text is the whole line, its empty stack column and newline too */
		uint32_t ticket;
		uint64_t routine;
		const char *pseudo;	/* leaf pseudo-frame (TT_PSEUDO_ROOM bytes), or NULL */
	} l[TT_MAXF];
	/* (n to stash_tid are copied as one: convert_line.c, follow_into_slot) */
	uint8_t n;
	uint8_t npending;	/* followers whose waker_in is not known yet: the line waits */
	uint8_t silent;		/* the event's own line is not written */
	uint8_t stash;		/* a ReadyThread: its stack is stash_tid's waker stack */
	uint32_t stash_tid;
	/*
	 * With the writing thread: the machine's inputs to pass on, and how
	 * many intervals the caller's machine ended with them (L then holds
	 * only those whose waker_in the caller's thread tells: a DPC's or
	 * ISR's routine, or one still pending).
	 */
	uint8_t nfeed;
	uint8_t nemit;
	struct ttfeed feed[TT_MAXFEED];
};
/* Whether the line being built has thread-time lines to write, even if its own is dropped. */
#define CONV_TT_LINES(c) ((c)->f.n || (c)->f.nemit)

/*
 * An evt line waiting for its stack.  Stack records come after their
 * event (the kernel part just after it on the same CPU, the user part
 * when the thread returns to user mode), so pass 2 keeps lines in a
 * reorder window until their stacks arrive, or the window (time and
 * count) moves past them.  Memory: the window, not the trace.
 */
struct pend {
	uint64_t toff;		/* its text in the window's ring (conv.wtext): the line without */
	uint32_t tlen, leaflen;	/* its stack column, then its leaf pseudo-frames */
	uint64_t ts;		/* global */
	uint32_t tid, pid;
	uint64_t jkey;		/* its key in the pending map (convert_line.c: join_key) */
	uint32_t last;		/* its thread's entry in conv.last[], UINT32_MAX for none (set with want) */
	uint64_t ip;		/* samples: the sampled address */
	uint8_t want;		/* registered in the pending map */
	uint8_t sample;
	uint8_t has_k, has_u;
	uint8_t late;		/* got records kept by pass 1: the others may still come */
	uint8_t clr_wait;	/* waits for a CLR stack walk (convert_clr.c) */
	uint8_t clrstack;	/* got a CLR stack walk: clrstack=1 follows its text */
	/* its kernel and user frames (innermost first) in the frames' ring (conv.fring) */
	uint64_t kpos, upos;	/* the kernel part also holds frames given directly */
	uint32_t nk, nu;
	uint64_t fmark;		/* the ring's end when it came: its frames are all past it */
	/* (its thread-time lines are in conv.fq, beside it: most traces have none) */
};

#define QWIN_NS (1000 * 1000000LL)	/* how long a line may wait for its user stack */
#define LATE_NS 1000000u		/* stack records later than this are remembered one by one */
#define LATE_MAX (1u << 18)		/* up to this many */
#define QCAP (1u << 17)			/* and how many lines may wait */
#define CLR_WAIT_NS (50 * 1000000LL)	/* how long a CLR event's line waits for its stack walk */

/* A stack key's definition (KeyCreate, KeyDelete, KeyRundown): its frames in conv.fr[]. */
struct keydef {
	uint64_t key, ts, seq;	/* seq: position in its CPU's stream */
	uint32_t cpu;
	uint32_t idx, len;
	int create;
};

#define GBIAS ((uint64_t)1 << 62)	/* global times are GBIAS + ns since the earliest start */

/* One .etl file of the session. */
struct source {
	struct etl_reader *r;
	int64_t off_ns;		/* this file's start relative to the earliest start */
	struct etl_event *ev;	/* pass 2: its next event (ts already global), the reader's */
	uint64_t seq;		/* and its position in its CPU's stream */
	int have;
	struct conv *conv;	/* pass 2: its conversion (the prepare hook's context is the source) */
	struct conv_fields *fields;	/* pass 2: its worker's state for attributes (convert_emit_user.c) */
};

/* The conversion: its sources, the model pass 1 builds, pass 2's window and line. */
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
	struct esm *esm;	/* EventSource manifests being reassembled (lib/etl/esmanifest.c) */
	unsigned P;
	/* stacks */
	uint64_t nstackev;	/* Stack/StackKey records in the trace */
	uint64_t *cseq;		/* per source and CPU: events seen, both passes alike */
	uint64_t cur_seq;	/* the current event's position in its CPU's stream */
	struct pend *q;		/* ring of waiting lines, indexed by sequence & (qcap - 1) */
	size_t qcap;
	uint64_t qhead, qtail;	/* sequence numbers */
	struct ttfollow *fq;	/* each slot's thread-time lines (q's indexes), NULL while none waited */
	/*
	 * The waiting lines' texts, one after another in a ring of bytes
	 * (positions grow; a text never wraps): the window's bytes, reused
	 * while hot, rather than a buffer per slot that grew to the longest
	 * line it ever held.
	 */
	char *wtext;
	size_t wtcap;		/* a power of two */
	uint64_t wthead, wttail;
	uint64_t *fring;	/* and their frames alike (each part in one piece) */
	size_t frcap;		/* frames, a power of two */
	uint64_t frtail;
	struct hmap pendmap;	/* (join_key(tid, cpu), ts) → sequence of the waiting line */
	uint64_t now;		/* global time of the event being emitted */
	int want;		/* set by conv_stack_of(): the next conv_finish() waits for a stack */
	uint32_t want_tid;
	int want_sample;
	uint64_t want_ip;
	uint64_t unmatched;
	/*
	 * The event being emitted, and the stacks of events a filter (-k, -p,
	 * -s/-e) did not select: their (thread, time) keys wait in a ring
	 * as long as a line would wait for its stack, so that their records
	 * are counted as not selected, not as orphans.
	 */
	const struct etl_event *cur_ev;
	struct hmap dropmap;	/* (join key, ts) → low 32 bits of the ring position */
	struct dropkey { uint64_t key, ts; } *drop;
	size_t dropcap;
	uint64_t drophead, droptail;
	uint64_t unselected;
	uint64_t joined, dup_stacks;	/* stack records given to a line; a second one for the same part */
	int64_t line_tid, line_pid;	/* the thread and process columns of the line begun */
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
		uint8_t unselected;	/* pass 2: a filter dropped the event */
		uint32_t wait_us;	/* late records not kept: the longest delay, rounded up */
	} *lates;
	size_t nlate, caplate;
	uint64_t late_bits[64];	/* a bit per hash of (thread, time) of a late record: most lines have none */
	int late_overflow;
	struct recent { uint64_t ts, kind; } *recent;	/* per CPU, the last RECENT events */
	uint8_t *recent_next;	/* per CPU, the ring's slot the next event takes */
	uint64_t cur_kind;
	int cur_stacked;	/* pass 2: whether cur_kind is in stacked */
	struct { uint64_t kind; int stacked; } stacked_memo[64];	/* pass 2: stacked, by kind */
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
	/* per CPU, the old thread of its first CSwitch (pass 1): what ran before it, -1 none */
	int64_t *first_old, *first_ts;
	/* thread time (convert_tt.c), NULL with --no-thread-time */
	struct tt *tt;
	struct ttfollow f;	/* followers of the line being built */
	struct evtw_line ttout;	/* a follower's waker_in= and waker_routine= (rare: a routine) */
	struct strbuf ttattrs;	/* the waker_in= texts a batch of inputs carries (struct ttbatch) */
	uint64_t tt_overflow;	/* more of them than TT_MAXF (never, but counted) */
	int tt_finishing;	/* the end of the trace: they are written as they come */
	struct hmap ttpend;	/* (ticket, 0) -> sequence of the line whose follower waits for it */
	uint64_t tt_unresolved;	/* waker_in still unknown when the window let the line go */
	int64_t tt_max_intr;	/* the longest DPC/ISR (pass 1), ns */
	int64_t *tt_cpu_max_intr;	/* and each CPU's (ncur; -1: it has none) */
	int tt_intr_seen;	/* pass 1 saw DPC/ISR records (any pass 2 may feed the machine) */
	/*
	 * With the writing thread and no DPC/ISR records, nothing of the
	 * machine's is the caller's to tell (no waker is pending, none has a
	 * routine): only the writing thread's machine runs, and its counts
	 * are the ones reported (convert_tt.c, ttwriter_end).
	 */
	int tt_solo;
	uint64_t tt_intr_unseen;	/* DPC/ISR records pass 2 read and pass 1 did not (never) */
	struct ttstate *tts;	/* the texts thread-time lines copy (convert_tt.c) */
	struct ttwriter *ttw;	/* the writing thread makes them: inputs to it (convert_tt.c) */
	uint64_t tt_gen;	/* thread or process events so far: its thread -> process texts hold */
	/* filters */
	char **kinds;
	size_t nkinds;
	size_t *kindlen;	/* each kind's length, without a trailing '*' */
	uint8_t *kindprefix;	/* whether it ended in '*' (a prefix) */
	char **procs;
	size_t nprocs;
	int64_t from_ns, to_ns;
	int64_t lo_ns, hi_ns;	/* sane event times */
	int64_t sane_hi;	/* hi_ns past the current file's end (use_source) */
	uint64_t bad_ts;
	uint64_t bad_dpc;	/* DPC/ISR records with an impossible InitialTime */
	uint64_t progress_total, progress_n;	/* bytes to read, events read (for --progress) */
	/* CLR stack walks, allocations and exceptions (convert_clr.c) */
	struct clrjoin *clr;
	int clr_line, want_clr;	/* the line being built is a CLR event's; it waits for a walk */
	uint32_t clr_tid;
	struct evtw_line leaf;	/* its pseudo-frames, root first, escaped for the stack column */
	/* output */
	struct evtw_line l;
	struct evtw_line stackcol;	/* the stack column of the line being written */
	size_t line_mark;	/* where attributes start */
	uint64_t events;
	uint64_t unresolved;
	uint64_t skipped_events;
	uint64_t *frames;	/* scratch for one stack, innermost first */
	size_t capframes;
	struct conv_fields *fields;	/* the caller's thread's state for attributes (convert_emit_user.c) */
};

/* room for one more element: the converter's arrays start at 256 */
#define GROW(arr, n, cap) XGROW(arr, n, cap, 256)

static inline uint64_t
ptr_at(const struct conv *c, const uint8_t *p)
{
	return c->P == 8 ? etl_u64(p) : etl_u32(p);
}

/* A raw timestamp of the current source → global time (GBIAS + ns). */
static inline uint64_t
gts(const struct conv *c, uint64_t raw)
{
	return GBIAS + (uint64_t)(c->src[c->cur].off_ns + etl_ns(c->r, raw));
}

static inline void
use_source(struct conv *c, size_t i)
{
	if (c->r && c->r == c->src[i].r && c->cur == i)
		return;	/* (pass 2 asks per event; one file is the common case) */
	c->cur = i;
	c->r = c->src[i].r;
	c->info = etl_info(c->r);
	c->P = c->info->pointer_size;
	c->sane_hi = c->hi_ns;
	if (c->info->end_time > c->info->start_time &&
	    c->info->end_time - c->info->start_time < (uint64_t)365 * 86400 * 10000000)
		c->sane_hi += (int64_t)(c->info->end_time - c->info->start_time) * 100;
}

/* What identifies an event's kind for "does it get stacks": header class, group/type or provider/id. */
static inline uint64_t
conv_kind_key(const struct etl_event *ev)
{
	uint64_t k = (uint64_t)ev->hkind << 56;
	if (ev->hkind <= ETL_HK_PERFINFO)
		return k | (uint64_t)ev->group << 8 | ev->type;
	uint64_t g = ev->guid ? etl_u64(ev->guid) ^ (etl_u64(ev->guid + 8) * 31) : 0;
	return k ^ (g & 0x00ffffffffffffffull) ^ ((uint64_t)ev->id << 16) ^ ev->type;
}

/* Timestamps far outside the session (corrupt records) would make nonsense times. */
static inline int
conv_ns_sane(const struct conv *c, int64_t ns)
{
	return ns >= c->lo_ns && ns <= c->sane_hi;
}

#define RECENT 8	/* per CPU, the last events a stack record may belong to */

/* Process (group 3) and Image (group 20) payloads, decoded: both passes read them. */
struct procinfo {
	uint32_t pid, ppid, session, exit;
	char image[256];
	char cmdline[2048];
	int ok;
};

struct imginfo {
	uint64_t base, size;
	uint32_t pid, checksum, timestamp;
	char path[1024];
	int ok;
};

/* ---------- convert_names.c ---------- */

/* The providers conv_is_provider() knows by index (their place in the names table). */
enum { P_CLR = 0, P_CLR_RUNDOWN = 1, P_CLR_PRIVATE = 2, P_IMAGEID = 8, P_SYSCONFIGEX = 10 };

/* Known provider names: long (Microsoft-Windows-DotNETRuntime) and the census' short form. */
const char *conv_provider_name(const uint8_t *guid, int census_form);

/*
 * Whether GUID (as an event header holds it) is provider WHICH.  Asked of
 * most user events, several times, in both passes: inline, two 8-byte
 * compares against the GUIDs' bytes (the same GUIDs as the names table).
 */
static inline int
conv_is_provider(const uint8_t *guid, int which)
{
	static const uint8_t known[][16] = {
		[P_CLR] = { 0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc, 0x12, 0x4e,	/* e13c0d23-ccbc-4e12-931b-d9cc2eee27e4 */
		    0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4 },
		[P_CLR_RUNDOWN] = { 0x1c, 0x02, 0x69, 0xa6, 0x50, 0xc4, 0x09, 0x46,	/* a669021c-c450-4609-a035-5af59af4df18 */
		    0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18 },
		[P_CLR_PRIVATE] = { 0x54, 0xd7, 0x3f, 0x76, 0x86, 0x70, 0xfe, 0x4d,	/* 763fd754-7086-4dfe-95eb-c01a46faf4ca */
		    0x95, 0xeb, 0xc0, 0x1a, 0x46, 0xfa, 0xf4, 0xca },
		[P_IMAGEID] = { 0xd7, 0x75, 0xe6, 0xb3, 0x54, 0x25, 0x18, 0x4f,	/* b3e675d7-2554-4f18-830b-2762732560de */
		    0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde },
		[P_SYSCONFIGEX] = { 0x91, 0xee, 0x79, 0x9b, 0xfd, 0xb5, 0xc0, 0x41,	/* 9b79ee91-b5fd-41c0-a243-4248e266e9d0 */
		    0xa2, 0x43, 0x42, 0x48, 0xe2, 0x66, 0xe9, 0xd0 },
	};
	uint64_t a[2], b[2];
	if (!guid)
		return 0;
	memcpy(a, guid, 16);
	memcpy(b, known[which], 16);
	return a[0] == b[0] && a[1] == b[1];
}
/* A kernel event group's name ("DiskIo"), "Group" when unknown. */
const char *conv_group_name(unsigned group);

/* ---------- convert_stacks.c: the stack model ---------- */

void conv_remember(struct conv *c, const struct etl_event *ev);
void conv_collect_stackwalk(struct conv *c, const struct etl_event *ev);
void conv_sort_keys(struct conv *c);
const struct keydef *conv_resolve_key(const struct conv *c, uint64_t key, uint64_t ts, uint32_t cpu,
    uint64_t seq);
const uint32_t *conv_late_get(const struct conv *c, uint32_t tid, uint64_t evts);
void conv_apply_late(struct conv *c, struct pend *e);
int conv_applied_late(const struct conv *c, const struct etl_event *ev, uint32_t tid, uint64_t evts);
size_t conv_count_kernel(const struct conv *c, const uint64_t *f, size_t n);

/* ---------- convert_pass1.c ---------- */

void conv_collect(struct conv *c, struct etl_event *ev);
void conv_decode_process(const struct conv *c, const struct etl_event *ev, struct procinfo *pi);
void conv_decode_image(const struct conv *c, const struct etl_event *ev, struct imginfo *ii);

/* ---------- convert_line.c: pass 2's lines ---------- */

const char *conv_process_name(const struct conv *c, int64_t pid, uint64_t ts);
int conv_begin(struct conv *c, const char *kind, int64_t time_ns, int cpu, int64_t pid, int64_t tid,
    int64_t weight_ns, uint64_t ts);
size_t conv_stack_of(struct conv *c, uint32_t tid);
void conv_finish(struct conv *c, uint32_t pid, const uint64_t *frames, size_t n, uint64_t ts);
void conv_flush_window(struct conv *c, int all);
void conv_attach_stack(struct conv *c, const struct etl_event *ev);
void conv_frames_put(struct conv *c, struct pend *e, int user, const uint64_t *src, size_t k);
uint64_t *conv_frames_grow(struct conv *c, struct pend *e, int user, size_t k);
int conv_begin_line(struct conv *c, struct evtw_line *l, const char *kind, int64_t time_ns, int cpu,
    int64_t pid, int64_t tid, int64_t weight_ns, uint64_t ts);
int conv_kind_wanted(const struct conv *c, const char *kind);
int conv_named_wanted(const struct conv *c, const char *kind, int64_t time_ns, const char *proc,
    int64_t pid);
int conv_begin_named(struct conv *c, struct evtw_line *l, const char *kind, int64_t time_ns, int cpu,
    const char *proc, int64_t pid, int64_t tid, int64_t weight_ns, uint64_t ts);
void conv_begin_silent(struct conv *c);
void conv_write_followers(struct conv *c, struct ttfollow *f, const char *stack, size_t n);
/*
 * What the writing thread gets in the output besides text (evt text never
 * holds a NUL byte, docs/evt-format.md §4): the byte 0, then TTREC_FEED,
 * then a struct ttbatch: a line's machine inputs (NFEED struct ttfeed),
 * the waker_in= texts the caller's thread tells (each a uint32_t length
 * and its bytes, ATTRS bytes in all) and, unless the line was written
 * just before (FROM_LINE), its stack column (SN bytes).  Unfiltered output
 * only.
 */
enum { TTREC_FEED = 'f' };
struct ttbatch {
	uint32_t nfeed, attrs, sn, cn;	/* CN: the stack column of the line before, its length */
	uint8_t from_line;
};
void conv_tt_write_feeds(struct conv *c, struct ttfollow *f, const char *stack, size_t n,
    int from_line);
/*
 * A follower line at P, which has conv_follower_room() bytes: TEXT (its
 * buffer with TEXT_PAD bytes past it), then (WSTACK) the waker_in=
 * attributes A (TT_ATTR_ROOM bytes readable) and waker_stack=W, the stack
 * column (STACK, the pseudo-frame) and the newline.  Returns its end.
 */
#define TEXT_PAD 128
#define TT_ATTR_ROOM 24	/* (a waker_in= text's room: struct tt_attr) */
char *conv_put_follower(char *p, const struct evtw_line *text, int wstack, const char *a,
    size_t an, const char *w, size_t wn, const char *stack, size_t take, const char *pseudo,
    size_t pn);
static inline size_t
conv_follower_room(size_t tn, size_t an, size_t wn, size_t take)
{
	return tn + TEXT_PAD + an + TT_ATTR_ROOM + 16 + wn + 1 + take + 1 + TT_PSEUDO_ROOM + 1;
}

/* ---------- convert_tt.c: thread time's hooks ---------- */

void conv_tt_init(struct conv *c);
void conv_tt_learn(struct conv *c, const struct etl_event *ev);
void conv_tt_start(struct conv *c);
/*
 * Thread time's inputs from the decoders (c->tt set): to the machine, and
 * with the writing thread, kept with the line being built for its own.
 * conv_tt_ready() says whether the ReadyThread readied a waiting thread
 * (0 when only the writing thread's machine runs: c->tt_solo); then its
 * line's stack becomes that thread's waker stack.
 */
void conv_tt_cswitch(struct conv *c, int cpu, int64_t ts, uint32_t old_tid, uint32_t new_tid,
    int old_prio, int new_prio, uint8_t wait_reason, uint8_t wait_mode, uint8_t old_state);
int conv_tt_ready(struct conv *c, int cpu, int64_t ts, uint32_t ready_tid, int64_t waker_tid);
void conv_tt_thread_start(struct conv *c, int64_t ts, uint32_t tid, int rundown);
void conv_tt_thread_end(struct conv *c, int64_t ts, uint32_t tid);
void conv_tt_interrupt(struct conv *c, int cpu, int64_t start, int64_t end, int isr,
    uint64_t routine);
void conv_tt_disk(struct conv *c, uint32_t tid, int64_t elapsed_ns);
int64_t conv_tt_waker(const struct conv *c, int cpu);
void conv_tt_finish(struct conv *c);
void conv_tt_report(struct conv *c);
void conv_tt_free(struct conv *c);
struct ob_filtered;
/* ob_write_through()'s filter: batches of inputs made lines (CTX a struct ttwriter) */
void conv_tt_expand(void *ctx, const char *p, size_t n, struct ob_filtered *out);
struct tt_attr { char s[TT_ATTR_ROOM]; uint8_t n; };
extern const struct tt_attr conv_tt_in_attrs[TT_IN_PENDING];
const char *conv_tt_waker_routine(struct conv *c, const struct ttline *t, uint64_t ts, size_t *n);

/*
 * The waker_in= and waker_routine= attributes of follower T, as they are
 * known now: *N bytes at the pointer returned, of which TT_ATTR_ROOM may
 * be read (the writer copies a short one whole).  Mostly a fixed word,
 * inline (once a wait); a DPC's or ISR's routine is made by the call.
 */
static inline const char *
conv_tt_waker_attrs(struct conv *c, const struct ttline *t, uint64_t ts, size_t *n)
{
	if (t->win == TT_IN_THREAD || t->win == TT_IN_PENDING || !t->routine) {
		const struct tt_attr *a = &conv_tt_in_attrs[t->win == TT_IN_PENDING ? TT_IN_THREAD :
		    t->win];
		*n = a->n;
		return a->s;
	}
	return conv_tt_waker_routine(c, t, ts, n);
}
/*
 * STACK[0..N) (a ReadyThread's stack column) becomes thread TID's waker
 * stack (the writing thread, if it makes the thread-time lines, keeps its
 * own: struct ttwriter).
 */
void conv_tt_stash(struct conv *c, uint32_t tid, const char *stack, size_t n);
void conv_tt_queued(struct conv *c, const struct ttfollow *f, uint64_t seq);
void conv_tt_unqueued(struct conv *c, struct ttfollow *f);
void conv_free_lines(struct conv *c);

/* ---------- convert_prep.c: pass 2's work done ahead of the caller's thread ---------- */

/* Record tags: a line's attributes from 16 (each kind of work numbers its own). */
enum conv_prep_tag {
	PREP_NONE,
	PREP_USER_ATTRS = 16, PREP_CLR_METHOD, PREP_IMAGE_ID,	/* a line's attributes (convert_emit_user.c) */
	PREP_CLR_LEAF,		/* a CLR line's leaf pseudo-frame (convert_clr.c) */
};
void conv_prep_start(struct conv *c);
void conv_prep_event(void *ctx, const struct etl_event *ev, struct etl_prep *out);
void conv_prep_put(struct etl_prep *out, unsigned tag, const void *p, size_t n);
/* The current event's record TAG: *LEN bytes, or NULL. */
const void *conv_prep_find(const struct conv *c, unsigned tag, size_t *len);
void conv_prep_free(struct conv *c);

/* ---------- convert_clr.c: CLR stack walks, allocations, exceptions ---------- */

void conv_clr_learn(struct conv *c, const struct etl_event *ev);
void conv_clr_before(struct conv *c, const struct etl_event *ev);
void conv_clr_line(struct conv *c, int waits, uint64_t seq);
const char *conv_clr_kind(struct conv *c, const struct etl_event *ev, int64_t *weight);
const char *conv_clr_kind_of(const struct etl_event *ev, int64_t *weight);
int conv_clr_is_walk(const struct etl_event *ev);
void conv_clr_leaf(struct conv *c, const struct etl_event *ev);
void conv_clr_leaf_text(struct evtw_line *l, const struct etl_event *ev);
int conv_clr_walk(struct conv *c, const struct etl_event *ev);
void conv_clr_report(struct conv *c);
int conv_clr_lost(const struct conv *c);
void conv_clr_free(struct conv *c);

/* ---------- convert_emit_kernel.c, convert_emit_user.c: pass 2's decoders ---------- */

/* Each writes EV (time NS since the trace start) as one line, or none when a filter drops it. */
void conv_emit_kernel(struct conv *c, const struct etl_event *ev, int64_t ns);
void conv_emit_classic(struct conv *c, const struct etl_event *ev, int64_t ns);
void conv_emit_event(struct conv *c, const struct etl_event *ev, int64_t ns);
void conv_emit_user(struct conv *c, const struct etl_event *ev, int64_t ns);
/* The attributes written ahead (the prepare hook's part): each thread its own state. */
struct conv_fields;
void conv_fields_start(struct conv *c);
void conv_prep_fields(const struct conv *c, struct source *s, const struct etl_event *ev,
    struct etl_prep *out);
void conv_fields_free(struct conv *c);

#endif
