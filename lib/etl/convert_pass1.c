/*
 * convert_pass1.c - pass 1, in file order and mostly headers only: the
 * model pass 2 needs.  Processes, threads and their names, images (with
 * ImageID/DbgID and volume names), CLR modules and JIT methods, the
 * schemas the trace embeds, stack records (convert_stacks.c), the first
 * sampling interval and the time range.
 */
#include <stdio.h>
#include <string.h>

#include "etl/convert_int.h"

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

/* The four ids every Process version from 1 on has after its leading pointer. */
static void
process_ids(struct procinfo *pi, const uint8_t *q)
{
	pi->pid = etl_u32(q);
	pi->ppid = etl_u32(q + 4);
	pi->session = etl_u32(q + 8);
	pi->exit = etl_u32(q + 12);
}

void
conv_decode_process(const struct conv *c, const struct etl_event *ev, struct procinfo *pi)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen, P = c->P, off, used;

	memset(pi, 0, sizeof *pi);
	if (ev->version >= 3) {
		if (n < 2 * P + 16)
			return;
		process_ids(pi, p + P);
		off = 2 * P + 16 + (ev->version >= 4 ? 4 : 0);
	} else if (ev->version >= 1) {
		if (n < P + 16)
			return;
		process_ids(pi, p + P);
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

void
conv_decode_image(const struct conv *c, const struct etl_event *ev, struct imginfo *ii)
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
	char name[1024], full[2048];

	if ((!rundown && ev->id == 143) || (rundown && (ev->id == 143 || ev->id == 144))) {
		if (n < 36)
			return;
		uint64_t module = etl_u64(p + 8), start = etl_u64(p + 16);
		uint32_t size = etl_u32(p + 24);
		/* "namespace.name", or "name" without a namespace: decoded in place, not copied */
		size_t nl = etl_wstr(p + 36, n - 36, full, 1024, &used);
		if (nl)
			full[nl++] = '.';
		full[nl] = '\0';
		if (36 + used < n)
			etl_wstr(p + 36 + used, n - 36 - used, full + nl, 1024, NULL);
		images_method(c->img, ev->pid, start, size, module, full);
	} else if ((!rundown && ev->id == 152) || (rundown && (ev->id == 153 || ev->id == 154))) {
		if (n < 24)
			return;
		etl_wstr(p + 24, n - 24, name, sizeof name, NULL);
		images_clr_module(c->img, ev->pid, etl_u64(p), name);
	}
}

/* Classic events of KernelTraceControl (ImageID, DbgID) and SystemConfigEx (volumes); schemas */
static void
collect_classic(struct conv *c, const struct etl_event *ev)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen, P = c->P;
	char s1[1024], s2[1024];
	size_t used;

	if (tdh_collect(c->tdh, ev))
		return;	/* a MetaData EventInfo/EventMapInfo schema */
	if (conv_is_provider(ev->guid, P_IMAGEID)) {
		if (ev->type == 0 && n > 2 * P + 8) {
			etl_wstr(p + 2 * P + 8, n - 2 * P - 8, s1, sizeof s1, NULL);
			images_image_id(c->img, etl_u32(p + 2 * P), ptr_at(c, p), s1);
		} else if (ev->type == 36 && n >= P + 24) {
			etl_astr(p + P + 24, n - P - 24, s1, sizeof s1, NULL);
			images_dbgid(c->img, etl_u32(p + P), ptr_at(c, p), p + P + 4,
			    etl_u32(p + P + 20), s1);
		}
	} else if (conv_is_provider(ev->guid, P_SYSCONFIGEX) && ev->type == 35) {
		etl_wstr(p, n, s1, sizeof s1, &used);
		s2[0] = '\0';
		if (used < n)
			etl_wstr(p + used, n - used, s2, sizeof s2, NULL);
		images_volume(c->img, s1, s2);
	}
}

/* Process (with its image loads), Thread (and names), Image, StackWalk, the sampling interval */
static void
collect_kernel(struct conv *c, const struct etl_event *ev)
{
	switch (ev->group) {
	case 3:
		if (ev->type == 10) {
			struct imginfo ii;
			conv_decode_image(c, ev, &ii);
			if (ii.ok)
				images_image(c->img, ii.pid, ii.base, ii.size, ev->ts, PROC_START, ii.path);
		} else if (ev->type <= 4 || ev->type == 39) {
			struct procinfo pi;
			conv_decode_process(c, ev, &pi);
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
		if (ev->type == 36)
			conv_tt_learn(c, ev);
		if (ev->type == 72 && ev->plen >= 8) {
			char name[512];
			etl_wstr(ev->payload + 8, ev->plen - 8, name, sizeof name, NULL);
			images_thread_name(c->img, etl_u32(ev->payload + 4), name);
		}
		break;
	case 20:
		if (ev->type == 2 || ev->type == 3 || ev->type == 4 || ev->type == 10) {
			struct imginfo ii;
			conv_decode_image(c, ev, &ii);
			if (ii.ok)
				images_image(c->img, ii.pid, ii.base, ii.size, ev->ts, image_how(ev), ii.path);
		}
		break;
	case 24:
		conv_collect_stackwalk(c, ev);
		break;
	case 15:
		conv_tt_learn(c, ev);	/* DPC/ISR durations */
		if ((ev->type == 72 || ev->type == 73) && ev->plen >= 8 && !c->first_interval &&
		    etl_u32(ev->payload) == 0)
			c->first_interval = etl_u32(ev->payload + 4);
		break;
	}
}

/* Pass 1: what event EV (in file order) adds to the model.  Its time becomes global (gts). */
void
conv_collect(struct conv *c, struct etl_event *ev)
{
	int64_t ns = ev->ns;	/* (converted by the reader's thread) */
	if (!conv_ns_sane(c, ns)) {
		char msg[160];
		if (c->bad_ts++ == 0) {
			snprintf(msg, sizeof msg, "event with a timestamp outside the session "
			    "(record at buffer offset %u); such events are skipped", ev->rec_offset);
			etl_problem(c->r, ev->buf_offset, msg);
		}
		return;
	}
	ev->ts = GBIAS + (uint64_t)(c->src[c->cur].off_ns + ns);	/* gts(c, ev->ts) */
	conv_remember(c, ev);
	if (ev->ts) {
		if (!c->have_ts || ev->ts < c->min_ts)
			c->min_ts = ev->ts;
		if (!c->have_ts || ev->ts > c->max_ts)
			c->max_ts = ev->ts;
		c->have_ts = 1;
	}
	switch (ev->hkind) {
	case ETL_HK_SYSTEM: case ETL_HK_COMPACT: case ETL_HK_PERFINFO:
		collect_kernel(c, ev);
		break;
	case ETL_HK_FULL: case ETL_HK_INSTANCE:
		collect_classic(c, ev);
		break;
	case ETL_HK_EVENT:
		if (esm_collect(c->esm, c->tdh, ev))
			break;	/* a chunk of an EventSource manifest */
		conv_clr_learn(c, ev);
		if (conv_is_provider(ev->guid, P_CLR))
			collect_clr(c, ev, 0);
		else if (conv_is_provider(ev->guid, P_CLR_RUNDOWN))
			collect_clr(c, ev, 1);
		break;
	}
}
