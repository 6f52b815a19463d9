/*
 * convert.c - ETL events → evt lines: the driver.
 *
 * Two passes over the trace (the files of one session merged on their
 * absolute times):
 *   1. file order (convert_pass1.c): the model of processes, threads,
 *      images, CLR methods, stacks (convert_stacks.c), the sampling
 *      interval and the time range;
 *   2. time order (per-CPU merge): every event becomes one evt line
 *      (convert_emit_kernel.c, convert_emit_user.c, convert_line.c), with
 *      its stack attached and its addresses resolved.
 * Then what could not be used, counted.  convert_int.h says what the
 * parts share.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "etl/convert_int.h"

/*
 * What pass 2 sees of the trace's health, whatever -k/-p/--from keep:
 * the three things that make a trace seriously unhealthy (lost events,
 * PROFILE and CSWITCH stacks both, no rundown for stacks to be named
 * by).  render health (lib/report/health.c) checks more from the evt.
 */
struct health_seen {
	uint64_t events, proc_dc, image_dc, sample_stacks, cswitch_stacks;
	uint64_t event_stacks;	/* EVENT_HEADER events with a stack item of their own */
	uint64_t *last_sample, *last_cswitch;	/* per CPU: global time of the last of each */
	size_t ncpu;
};

/* Does an event carry its stack in an extended data item (STACK_TRACE32/64, STACK_KEY32/64)? */
static int
has_ext_stack(const struct etl_event *ev)
{
	for (size_t q = 0; ev->ext && q + 8 <= ev->extlen;) {
		unsigned type = etl_u16(ev->ext + q + 2), sz = etl_u16(ev->ext + q + 6);

		if (type == 5 || type == 6 || type == 17 || type == 18)
			return 1;
		q += 8 + ((sz + 7u) & ~7u);
	}
	return 0;
}

/*
 * A kernel stack record (StackWalk Stack, StackKeyKernel, StackKeyUser)
 * names its event by EventTimeStamp and comes on the event's CPU: it is
 * a sample's or a context switch's when that time is the last of either
 * there (both at once tells nothing, and counts for neither).
 */
static void
health_see_stack(struct conv *c, const struct etl_event *ev, struct health_seen *h)
{
	if (ev->plen < 16 || (size_t)ev->cpu >= h->ncpu)
		return;
	uint64_t t = gts(c, etl_u64(ev->payload));
	int s = h->last_sample[ev->cpu] == t, w = h->last_cswitch[ev->cpu] == t;

	h->sample_stacks += s && !w;
	h->cswitch_stacks += w && !s;
}

static void
health_see(struct conv *c, const struct etl_event *ev, struct health_seen *h)
{
	/* stack records are parts of their events, not events of their own */
	h->events += !(ev->hkind <= ETL_HK_PERFINFO && ev->group == 24);
	if (ev->hkind == ETL_HK_EVENT)
		h->event_stacks += has_ext_stack(ev);
	if (ev->hkind > ETL_HK_PERFINFO)
		return;
	if (ev->group == 3 && ev->type == 3)
		h->proc_dc++;
	else if (ev->group == 20 && ev->type == 3)
		h->image_dc++;
	else if (ev->group == 15 && ev->type == 46 && (size_t)ev->cpu < h->ncpu)
		h->last_sample[ev->cpu] = ev->ts;
	else if (ev->group == 5 && ev->type == 36 && (size_t)ev->cpu < h->ncpu)
		h->last_cswitch[ev->cpu] = ev->ts;
	else if (ev->group == 24 && (ev->type == 32 || ev->type == 37 || ev->type == 38))
		health_see_stack(c, ev, h);
}

/*
 * Pass 2: whether events of KIND get stack records (the map pass 1 made,
 * fixed now), remembered by kind: every line asks, and a trace has few
 * kinds.  Two slots a kind may take (a pair): a kind that shares its
 * slot with another frequent one (ReadyThread and the Stack record that
 * follows each one do) would otherwise push it out on every event.
 */
static int
kind_stacked(struct conv *c, uint64_t kind)
{
	size_t i = (size_t)((kind * 0x9e3779b97f4a7c15ull) >> 58);
	if (c->stacked_memo[i].kind == kind)
		return c->stacked_memo[i].stacked;
	if (c->stacked_memo[i ^ 1].kind == kind)
		return c->stacked_memo[i ^ 1].stacked;
	if (c->stacked_memo[i].kind != 0 && c->stacked_memo[i ^ 1].kind == 0)
		i ^= 1;	/* (the pair's free slot; both taken: the first is reused) */
	c->stacked_memo[i].kind = kind;	/* (a key has bit 63 set: never 0) */
	c->stacked_memo[i].stacked = hmap_get(&c->stacked, kind, 0) != NULL;
	return c->stacked_memo[i].stacked;
}

/* Pass 2: one event (its time global already) to its decoder. */
static void
emit(struct conv *c, const struct etl_event *ev, struct health_seen *h)
{
	int64_t ns = (int64_t)(ev->ts - GBIAS);	/* ts is global already */
	c->cur_kind = conv_kind_key(ev) | 1ull << 63;
	c->cur_stacked = kind_stacked(c, c->cur_kind);
	c->cur_ev = ev;
	health_see(c, ev, h);

	switch (ev->hkind) {
	case ETL_HK_SYSTEM: case ETL_HK_COMPACT: case ETL_HK_PERFINFO:
		conv_emit_kernel(c, ev, ns);
		break;
	case ETL_HK_FULL: case ETL_HK_INSTANCE:
		conv_emit_classic(c, ev, ns);
		break;
	case ETL_HK_EVENT:
		conv_emit_event(c, ev, ns);
		break;
	case ETL_HK_WPP:
		conv_emit_user(c, ev, ns);
		break;
	default:
		if (conv_begin(c, "Unknown", ns, ev->cpu, -1, -1, 0, ev->ts)) {
			evtw_kv_hexbytes(&c->l, "hex", ev->raw, ev->rawlen);
			conv_finish(c, 0, NULL, 0, ev->ts);
		}
	}
}

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
	while ((s->ev = etl_next_ref(s->r))) {
		s->seq = c->cseq[i * c->ncur + (size_t)s->ev->cpu]++;
		if (!conv_ns_sane(c, s->ev->ns))
			continue;
		s->ev->ts = GBIAS + (uint64_t)(s->off_ns + s->ev->ns);	/* gts(), converted by the reader */
		s->have = 1;
		return;
	}
}

/*
 * -s/-e in ms (non-negative) to the nearest nanosecond: -e 8229.5842 is
 * 8229584199.99... ns as a double, and truncated it left out the line at
 * 8229.584200 that the inclusive window keeps.
 */
static int64_t
window_ns(double ms)
{
	double ns = ms * 1e6;
	return ns >= 9e18 ? INT64_MAX : llround(ns);
}

/* The sources on one clock (from the earliest start), the model's tables, the filters. */
static void
init(struct conv *c, struct etl_reader **rs, size_t nr, const struct etl2evt_opts *o,
    struct outbuf *ob)
{
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
			c->progress_total += etl_buffers(rs[i])[b].size;
			if (etl_buffers(rs[i])[b].cpu + 1u > c->ncur)
				c->ncur = etl_buffers(rs[i])[b].cpu + 1u;
		}
	}
	for (size_t i = 0; i < nr; i++)
		c->src[i].off_ns = (int64_t)(etl_info(rs[i])->start_time - c->ft0) * 100;
	c->lo_ns = -7 * 86400 * 1000000000LL;
	c->hi_ns = 7 * 86400 * 1000000000LL;
	use_source(c, 0);
	c->img = images_new(maxp);
	c->tdh = tdh_new();
	c->esm = esm_new();
	if (o->sym)
		images_set_symbols(c->img, o->sym, o->symcount, o->symctx);
	hmap_init(&c->pendmap);
	hmap_init(&c->stacked);
	hmap_init(&c->lastmap);
	hmap_init(&c->late);
	hmap_init(&c->framemap);
	hmap_init(&c->dropmap);
	c->kinds = split_list(o->kinds, &c->nkinds);
	c->kindlen = xcalloc(c->nkinds ? c->nkinds : 1, sizeof *c->kindlen);
	c->kindprefix = xcalloc(c->nkinds ? c->nkinds : 1, 1);
	for (size_t i = 0; i < c->nkinds; i++) {
		size_t kl = strlen(c->kinds[i]);
		c->kindprefix[i] = kl && c->kinds[i][kl - 1] == '*';
		c->kindlen[i] = kl - c->kindprefix[i];
	}
	c->procs = split_list(o->procs, &c->nprocs);
	c->from_ns = o->has_from ? window_ns(o->from_ms) : INT64_MIN;
	c->to_ns = o->has_to ? window_ns(o->to_ms) : INT64_MAX;
	c->cur_tid = xmalloc((c->ncur ? c->ncur : 1) * sizeof *c->cur_tid);
	c->cseq = xcalloc((nr ? nr : 1) * (c->ncur ? c->ncur : 1), sizeof *c->cseq);
	c->recent = xcalloc((c->ncur ? c->ncur : 1) * RECENT, sizeof *c->recent);
	c->recent_next = xcalloc(c->ncur ? c->ncur : 1, 1);
	for (size_t i = 0; i < c->ncur; i++)
		c->cur_tid[i] = -1;
	conv_tt_init(c);
}

/* Pass 1: the model, from every file in file order. */
static void
pass1(struct conv *c)
{
	struct etl_event *ev;
	uint64_t done = 0;

	for (size_t i = 0; i < c->nsrc; i++) {
		use_source(c, i);
		memset(c->recent, 0, (c->ncur ? c->ncur : 1) * RECENT * sizeof *c->recent);
		memset(c->recent_next, 0, c->ncur ? c->ncur : 1);
		etl_rewind(c->r, ETL_FILE_ORDER);
		while ((ev = etl_next_ref(c->r))) {
			c->cur_seq = c->cseq[i * c->ncur + (size_t)ev->cpu]++;
			conv_collect(c, ev);
			if (c->o->progress && (++c->progress_n & 0xffff) == 0)
				cli_progress((done + etl_progress(c->r)) / 2, c->progress_total);
		}
		done += etl_progress(c->r);
	}
	images_finish(c->img);
	conv_sort_keys(c);
	c->interval = c->first_interval ? c->first_interval : 10000;
	conv_tt_start(c);
}

/*
 * "Lost" lines at each file's start: the header's lost events, and each
 * lost buffer.  Written when the merge reaches that start (before the
 * first event at or after it), so that the stream stays in log order:
 * rundown stamped before the header, and a file that started later than
 * another, come on either side of them in time.  DONE[i] marks source i.
 */
static void
write_lost(struct conv *c, unsigned char *done, uint64_t upto)
{
	for (size_t i = 0; i < c->nsrc; i++) {
		if (done[i])
			continue;
		use_source(c, i);
		uint64_t t0 = gts(c, c->info->ts0);
		if (t0 > upto)
			continue;
		done[i] = 1;
		if (c->info->events_lost && conv_begin(c, "Lost", (int64_t)(t0 - GBIAS), -1, -1, -1, 0, t0)) {
			evtw_kv_u(&c->l, "events", c->info->events_lost);
			evtw_kv_u(&c->l, "buffers", c->info->buffers_lost);
			evtw_kv_s(&c->l, "source", "header");
			conv_finish(c, 0, NULL, 0, t0);
		}
		for (size_t k = 0; k < etl_nbuffers(c->r); k++) {
			const struct etl_buffer *b = &etl_buffers(c->r)[k];
			if ((b->flags & 0x6) && conv_begin(c, "Lost", (int64_t)(t0 - GBIAS), b->cpu, -1, -1, 0, t0)) {
				evtw_kv_u(&c->l, "events", 0);
				evtw_kv_u(&c->l, "buffers", (b->flags & 4) ? 1 : 0);
				evtw_kv_u(&c->l, "offset", b->offset);
				evtw_kv_s(&c->l, "source", (b->flags & 4) ? "buffer_lost" : "events_lost");
				conv_finish(c, 0, NULL, 0, t0);
			}
		}
	}
}

/* Pass 2: the events of all files in time order (CPU stream positions counted again). */
static void
pass2(struct conv *c, struct health_seen *h)
{
	size_t nr = c->nsrc;

	memset(c->cseq, 0, (nr ? nr : 1) * (c->ncur ? c->ncur : 1) * sizeof *c->cseq);
	conv_prep_start(c);
	for (size_t i = 0; i < nr; i++) {
		etl_rewind(c->src[i].r, ETL_TIME_ORDER);
		source_next(c, i);
	}
	unsigned char *lost_done = xcalloc(nr ? nr : 1, 1);
	for (;;) {
		size_t best = nr;
		for (size_t i = 0; i < nr; i++)
			if (c->src[i].have && (best == nr || c->src[i].ev->ts < c->src[best].ev->ts))
				best = i;
		write_lost(c, lost_done, best == nr ? UINT64_MAX : c->src[best].ev->ts);
		if (best == nr)
			break;
		use_source(c, best);
		c->cur_seq = c->src[best].seq;
		c->now = c->src[best].ev->ts;
		emit(c, c->src[best].ev, h);
		if (c->tt)
			tt_tick(c->tt, (int64_t)(c->now - GBIAS));
		source_next(c, best);
		if (c->o->progress && (++c->progress_n & 0xffff) == 0) {
			uint64_t p = 0;
			for (size_t i = 0; i < nr; i++)
				p += etl_progress(c->src[i].r);
			cli_progress(c->progress_total / 2 + p / 2, c->progress_total);
		}
	}
	conv_tt_finish(c);	/* (its pending lines are told before the window empties) */
	conv_prep_free(c);
	free(lost_done);
	conv_flush_window(c, 1);
	if (c->o->progress)
		cli_progress_end();
}

/*
 * A seriously unhealthy trace: one "#health" line (docs/evt-format.md
 * §1.2) and one warning on stderr, so that no one reads its numbers
 * without knowing.
 */
static void
report_health(struct conv *c, const struct health_seen *h)
{
	uint64_t lost = 0;
	struct strbuf why = STRBUF_INIT, rundown = STRBUF_INIT;
	char lostv[24], share[24];
	int stacks = h->sample_stacks || h->cswitch_stacks || c->stacked.n > 0 || h->event_stacks;

	for (size_t i = 0; i < c->nsrc; i++)
		lost += etl_info(c->src[i].r)->events_lost;
	if (lost)
		strbuf_addf(&why, "trace lost %.1f%% of its events (%llu of %llu)",
		    100.0 * (double)lost / (double)(lost + h->events), (unsigned long long)lost,
		    (unsigned long long)(lost + h->events));
	if (h->sample_stacks && h->cswitch_stacks)
		strbuf_addf(&why, "%sPROFILE and CSWITCH stacks both (switch stacks inflate stacked "
		    "CPU views)", why.len ? "; " : "");
	if (stacks && !h->proc_dc)
		strbuf_adds(&rundown, "process");
	if (stacks && !h->image_dc)
		strbuf_addf(&rundown, "%simage", rundown.len ? "," : "");
	if (rundown.len)
		strbuf_addf(&why, "%sno %s rundown (processes show as ?, frames as ?!?)",
		    why.len ? "; " : "", rundown.s);
	if (why.len) {
		snprintf(lostv, sizeof lostv, "%llu", (unsigned long long)lost);
		snprintf(share, sizeof share, "%.1f", lost ? 100.0 * (double)lost /
		    (double)(lost + h->events) : 0.0);
		const struct evtw_pair kv[] = {
			{ "events_lost", lost ? lostv : NULL }, { "lost_pct", lost ? share : NULL },
			{ "stacks", h->sample_stacks && h->cswitch_stacks ? "profile+cswitch" : NULL },
			{ "missing_rundown", rundown.len ? rundown.s : NULL }, { "detail", why.s },
		};
		evtw_meta(c->ob, "health", kv, sizeof kv / sizeof kv[0]);
		cli_warn("%s: unhealthy trace: %s; see 'render health'", c->o->source, why.s);
	}
	strbuf_release(&why);
	strbuf_release(&rundown);
}

/* What could not be used ("#skipped" lines), and "#stats".  Returns 1 if anything was skipped. */
static int
report(struct conv *c, struct etl2evt_result *res)
{
	struct outbuf *ob = c->ob;
	uint64_t damaged = 0, damaged_bytes = 0;

	for (size_t i = 0; i < c->nsrc; i++) {
		damaged += etl_damage(c->src[i].r)->buffers;
		damaged_bytes += etl_damage(c->src[i].r)->bytes;
	}
	evtw_skipped(ob, "stack", c->unmatched, "stacks whose event is not in the trace");
	if (c->unselected) {
		char n[24];
		snprintf(n, sizeof n, "%llu", (unsigned long long)c->unselected);
		const struct evtw_pair kv[] = { { "by", "etl2evt" }, { "reason", "not-selected" },
		    { "stacks", n }, { "detail", "stacks of events not selected (-k, -p, -s, -e)" } };
		evtw_meta(ob, "removed", kv, sizeof kv / sizeof kv[0]);
	}
	evtw_skipped(ob, "stack_key", c->unresolved, "stack keys without a definition");
	evtw_skipped(ob, "schema", tdh_stats(c->tdh)->damaged,
	    "embedded event schemas that could not be read");
	conv_tt_report(c);
	evtw_skipped(ob, "manifest", esm_stats(c->esm)->damaged,
	    "EventSource manifests that could not be read (a chunk missing, not XML, not a manifest)");
	evtw_skipped(ob, "dpc", c->bad_dpc, "DPC/ISR records with an impossible InitialTime");
	evtw_skipped(ob, "event", c->bad_ts, "timestamp outside the session");
	evtw_skipped(ob, "event", c->skipped_events, "events too short for their kind");
	char detail[80];
	snprintf(detail, sizeof detail, "corrupt or truncated buffers (%llu bytes)",
	    (unsigned long long)damaged_bytes);
	evtw_skipped(ob, "buffer", damaged, detail);
	evtw_skipped(ob, "stack", c->dup_stacks, "second stack records for the same part of one event");
	conv_clr_report(c);
	char events[24], recs[24], joined[24];
	snprintf(events, sizeof events, "%llu", (unsigned long long)c->events);
	snprintf(recs, sizeof recs, "%llu", (unsigned long long)c->nstackev);
	snprintf(joined, sizeof joined, "%llu", (unsigned long long)c->joined);
	/* every stack record is joined, or counted above (not selected, orphan, key, second, short) */
	const struct evtw_pair stats[] = { { "events", events }, { "stack_records", recs },
	    { "stacks_joined", joined } };
	evtw_meta(ob, "stats", stats, c->nstackev ? 3 : 1);

	if (res) {
		res->events = c->events;
		res->unmatched_stacks = c->unmatched;
		res->unresolved_keys = c->unresolved;
	}
	return damaged > 0 || c->skipped_events > 0 || c->bad_ts > 0 || c->bad_dpc > 0 || conv_clr_lost(c);
}

static void
free_conv(struct conv *c)
{
	for (size_t i = 0; i < c->nkinds; i++)
		free(c->kinds[i]);
	for (size_t i = 0; i < c->nprocs; i++)
		free(c->procs[i]);
	free(c->kinds);
	free(c->kindlen);
	free(c->kindprefix);
	free(c->procs);
	for (size_t i = 0; c->fq && i < c->qcap; i++)
		for (int k = 0; k < TT_MAXF; k++)
			free(c->fq[i].l[k].text.b);
	free(c->fq);
	free(c->q);
	free(c->wtext);
	free(c->fring);
	free(c->cseq);
	free(c->fr);
	free(c->kd);
	free(c->frames);
	free(c->cur_tid);
	conv_tt_free(c);
	conv_clr_free(c);
	evtw_free(&c->l);
	hmap_free(&c->pendmap);
	hmap_free(&c->stacked);
	hmap_free(&c->lastmap);
	hmap_free(&c->late);
	free(c->lates);
	free(c->last);
	free(c->recent);
	free(c->recent_next);
	hmap_free(&c->framemap);
	conv_free_lines(c);
	free(c->src);
	images_free(c->img);
	tdh_free(c->tdh);
	esm_free(c->esm);
}

int
etl2evt_convert(struct etl_reader **rs, size_t nr, const struct etl2evt_opts *o,
    struct outbuf *ob, struct etl2evt_result *res)
{
	struct conv c;

	init(&c, rs, nr, o, ob);
	pass1(&c);
	write_header(&c);
	struct health_seen health = { .ncpu = c.ncur };
	health.last_sample = xcalloc(c.ncur ? c.ncur : 1, sizeof *health.last_sample);
	health.last_cswitch = xcalloc(c.ncur ? c.ncur : 1, sizeof *health.last_cswitch);
	pass2(&c, &health);
	int partial = report(&c, res);
	report_health(&c, &health);
	free(health.last_sample);
	free(health.last_cswitch);
	free_conv(&c);
	return partial;
}
