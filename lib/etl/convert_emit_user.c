/*
 * convert_emit_user.c - pass 2's decoders of user-mode providers: CLR
 * method loads (their stack walks, allocation ticks and exceptions:
 * convert_clr.c), KernelTraceControl's ImageID and DbgID, and every other
 * event (manifest, TraceLogging, WPP, classic) with its fields decoded by
 * its TraceLogging schema or by a manifest schema the trace embeds, else
 * its payload in hex.
 *
 * What a line's attributes say depends on its event alone (and pass 1's
 * schemas), so the reader's worker writes them ahead, in the prepare
 * hook (conv_prep_fields, called from convert_prep.c), and the caller's
 * thread copies the text.  One function writes each text on either
 * thread: without a record (no worker's hook ran for the event) the
 * caller's thread calls it itself.  Each thread decodes with its own
 * memos (struct conv_fields); the schemas are sealed before pass 2.
 */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "etl/convert_int.h"
#include "etl/knownschemas.h"
#include "etl/tracelogging.h"

/* evt readers take at most EVT_MAX_ATTRS attributes: room for the fixed ones */
#define MAX_FIELDS (EVT_MAX_ATTRS - 16)

/* A field name's byte in an attribute key: keys are [A-Za-z0-9_.:-]+, anything else becomes '_'. */
static char key_char[256];

static void
key_chars_init(void)
{
	for (int ch = 0; ch < 256; ch++) {
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '_' || ch == '.' || ch == ':' || ch == '-';
		key_char[ch] = ok ? (char)ch : '_';
	}
}

/* The longest field name kept in a key ("p." and 297 bytes) */
#define FIELD_NAME_MAX 297

/*
 * Field names made keys lately: a schema's names are asked for again on
 * every event it decodes, and a copy is cheaper than mapping byte by
 * byte.  Found by the name's address, taken only when its bytes are the
 * same too (a nested field's name is put together in a reused buffer).
 */
#define KEY_MEMO_BITS 8
#define KEY_MEMO_NAME 48
struct key_memo {
	const char *name;
	size_t len;		/* 0: the slot is empty */
	char raw[KEY_MEMO_NAME];
	char key[KEY_MEMO_NAME];
};

/*
 * What header_attrs() writes depends on the provider's name and the
 * header's GUID and ids alone, and a trace's user events repeat a few
 * dozen of them (every allocation tick the same): their texts are kept,
 * keyed by all of it (the name by its text, so a key never outlives what
 * it names).  Direct-mapped, fixed size; a longer text is not kept.
 */
#define HEADER_MEMO_BITS 6
struct header_key {
	uint8_t guid[16];
	int hkind;
	uint64_t keywords;
	uint16_t id, task, version, message_id;
	uint8_t level, opcode, channel, type;
	uint8_t has_prov;	/* (without a name, provider= is the GUID) */
};
struct header_memo {
	struct header_key k;
	char prov[128];
	uint16_t len;		/* 0: the slot is empty */
	char text[512];
};

/*
 * One thread's state for writing attributes: its memos, its decoder's,
 * and (on a worker) the line it writes a record's text into.  The
 * caller's thread has one (conv.fields), each file's worker another
 * (source.fields): a memo is never shared between threads.
 */
struct conv_fields {
	struct key_memo key_memo[1u << KEY_MEMO_BITS];
	struct header_memo header_memo[1u << HEADER_MEMO_BITS];
	struct tdh_local *tdh;
	struct evtw_line l;
};

struct fieldctx {
	struct evtw_line *l;
	struct key_memo *key_memo;
	unsigned n, dropped;
};

/* "\tp.NAME=VALUE", the name made a key, the value escaped */
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
	size_t nl = strnlen(name, FIELD_NAME_MAX);
	char *o = evtw_room(l, 3 + (nl > KEY_MEMO_NAME ? nl : KEY_MEMO_NAME) + 2);
	memcpy(o, "\tp.", 3);
	o += 3;
	struct key_memo *km = NULL;
	if (nl > 0 && nl <= KEY_MEMO_NAME) {
		km = &fc->key_memo[((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull) >> (64 - KEY_MEMO_BITS)];
		if (km->len == nl && km->name == name && memcmp(km->raw, name, nl) == 0) {
			memcpy(o, km->key, KEY_MEMO_NAME);	/* (all of it: a few wide moves) */
			o += nl;
			goto value;
		}
	}
	for (size_t i = 0; i < nl; i++)
		o[i] = key_char[(uint8_t)name[i]];
	if (km) {
		km->name = name;
		km->len = nl;
		memcpy(km->raw, name, nl);
		memcpy(km->key, o, nl);
	}
	o += nl;
	if (nl == 0)
		*o++ = '_';
value:
	*o++ = '=';
	l->n = (size_t)(o - l->b);
	evtw_esc(l, value, vlen, 0);
}

/* What an event's extended data items give. */
struct ext_items {
	const uint8_t *traits;	/* the provider traits (their name at 2), NULL if none */
	size_t traitslen;
	const uint8_t *schema;	/* a TraceLogging schema */
	size_t schemalen;
	const uint8_t *stack;	/* a stack (STACK_TRACE32/64), innermost first */
	size_t stacklen;
	int stack32;
	int has_stack_key;	/* or the key of a cached stack */
	uint64_t stack_key;
};

static void
read_ext_items(const struct etl_event *ev, struct ext_items *x)
{
	size_t q = 0;

	x->traits = NULL;
	x->traitslen = 0;
	x->schema = x->stack = NULL;
	x->schemalen = x->stacklen = 0;
	x->stack32 = x->has_stack_key = 0;
	x->stack_key = 0;
	if (!ev->ext)
		return;
	while (q + 8 <= ev->extlen) {
		unsigned type = etl_u16(ev->ext + q + 2), sz = etl_u16(ev->ext + q + 6);
		const uint8_t *d = ev->ext + q + 8;
		if (q + 8 + sz > ev->extlen)
			break;
		if (type == 12 && sz > 3) {
			x->traits = d;
			x->traitslen = sz;
		} else if (type == 11) {
			x->schema = d;
			x->schemalen = sz;
		} else if ((type == 6 || type == 5) && sz >= 8) {
			x->stack = d + 8;
			x->stacklen = sz - 8;
			x->stack32 = type == 5;
		} else if ((type == 17 || type == 18) && sz >= 12) {
			/* STACK_KEY32/64 [src]: u64 MatchId, then the key of a cached stack */
			x->stack_key = type == 18 && sz >= 16 ? etl_u64(d + 8) : etl_u32(d + 8);
			x->has_stack_key = 1;
		}
		q += 8 + ((sz + 7u) & ~7u);
	}
}

/* provider=, guid= and the header's ids */
static void
header_attrs(struct evtw_line *l, const struct etl_event *ev, const char *prov, const char *gs)
{
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
}

/* header_attrs() through the thread's memo (struct header_memo) */
static void
write_header_attrs(struct conv_fields *fs, struct evtw_line *l, const struct etl_event *ev,
    const char *prov)
{
	struct header_key k;
	char gs[40];

	memset(&k, 0, sizeof k);	/* (no padding left to chance: keys are compared whole) */
	if (ev->guid)
		memcpy(k.guid, ev->guid, 16);
	k.hkind = ev->hkind;
	k.keywords = ev->keywords;
	k.id = ev->id;
	k.task = ev->task;
	k.version = ev->version;
	k.message_id = ev->message_id;
	k.level = ev->level;
	k.opcode = ev->opcode;
	k.channel = ev->channel;
	k.type = ev->type;
	k.has_prov = prov != NULL;
	size_t pl = prov ? strlen(prov) : 0;
	struct header_memo *m = &fs->header_memo[hash_u64(hash_bytes(&k, sizeof k) ^ pl) >>
	    (64 - HEADER_MEMO_BITS)];
	if (m->len && pl < sizeof m->prov && memcmp(&m->k, &k, sizeof k) == 0 &&
	    strncmp(m->prov, prov ? prov : "", sizeof m->prov) == 0) {
		evtw_mem(l, m->text, m->len);
		return;
	}
	if (ev->guid)
		etl_guid_str(gs, ev->guid);
	else
		strcpy(gs, "00000000-0000-0000-0000-000000000000");
	size_t at = l->n;
	header_attrs(l, ev, prov, gs);
	size_t n = l->n - at;
	if (pl >= sizeof m->prov || n > sizeof m->text) {
		m->len = 0;
		return;
	}
	m->k = k;
	memcpy(m->prov, prov ? prov : "", pl + 1);
	memcpy(m->text, l->b + at, n);
	m->len = (uint16_t)n;
}

/* The payload as p.NAME= fields (TraceLogging or an embedded manifest schema), else hex=. */
static void
write_fields(const struct tdh_db *db, struct conv_fields *fs, struct evtw_line *l,
    const struct etl_event *ev, const struct ext_items *x)
{
	size_t mark = l->n;
	int decoded = 0;
	struct fieldctx fc = { l, fs->key_memo, 0, 0 };

	if (x->schema) {
		char evname[256];
		if (tl_decode(x->schema, x->schemalen, ev->payload, ev->plen, ev->hdr64 ? 8 : 4, evname,
		    sizeof evname, field_cb, &fc) == 0)
			decoded = 1;
		else
			l->n = mark;
	}
	if (!decoded && (ev->hkind == ETL_HK_EVENT || ev->hkind == ETL_HK_FULL)) {
		/* manifest events whose schema the trace embeds (xperf/PerfView merges) */
		fc.n = fc.dropped = 0;
		const char *label = tdh_event_label(db, fs->tdh, ev);
		if (label)
			evtw_kv_s(l, "event", label);
		if (tdh_decode_event(db, fs->tdh, ev, field_cb, &fc) == 0)
			decoded = 1;
		else
			l->n = mark;
	}
	if (!decoded && conv_is_provider(ev->guid, P_CLR) && (ev->id == 143 || ev->id == 144) &&
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
}

static void
frames_room(struct conv *c, size_t nf)
{
	while (nf > c->capframes) {
		c->capframes = c->capframes ? c->capframes * 2 : 256;
		c->frames = xrealloc(c->frames, c->capframes * sizeof *c->frames);
	}
}

/*
 * The event's own stack (an extended item, with kframes=) into c->frames;
 * else the line waits for stack records of thread TID.  Returns the frames.
 */
static size_t
user_stack(struct conv *c, const struct etl_event *ev, const struct ext_items *x, int64_t tid)
{
	size_t nf = 0;

	if (x->stack) {
		size_t w = x->stack32 ? 4 : 8;
		nf = x->stacklen / w;
		frames_room(c, nf);
		for (size_t i = 0; i < nf; i++)
			c->frames[i] = x->stack32 ? etl_u32(x->stack + 4 * i) : etl_u64(x->stack + 8 * i);
		evtw_kv_u(&c->l, "kframes", conv_count_kernel(c, c->frames, nf));
	} else if (x->has_stack_key) {
		const struct keydef *d = conv_resolve_key(c, x->stack_key, ev->ts, (uint32_t)ev->cpu,
		    c->cur_seq);
		if (d) {
			nf = d->len;
			frames_room(c, nf);
			if (nf)
				memcpy(c->frames, c->fr + d->idx, nf * sizeof *c->frames);
			evtw_kv_u(&c->l, "kframes", conv_count_kernel(c, c->frames, nf));
		} else
			c->unresolved++;
	} else if (tid > 0)
		nf = conv_stack_of(c, (uint32_t)tid);
	return nf;
}

/*
 * The attributes of a user-mode event's line after its columns and
 * before its stack: logged_by_pid=, the header's, the fields.  They
 * depend on the event alone: a worker writes them ahead.
 */
static void
user_attrs(const struct tdh_db *db, struct conv_fields *fs, struct evtw_line *l,
    const struct etl_event *ev, const struct ext_items *x)
{
	char traits[256];
	const char *prov = NULL;
	uint32_t subject;

	if (x->traits) {
		etl_astr(x->traits + 2, x->traitslen - 2, traits, sizeof traits, NULL);
		if (*traits)
			prov = traits;
	}
	if (!prov)
		prov = conv_provider_name(ev->guid, 0);
	if (!prov)
		prov = tdh_provider_name(db, ev->guid);
	if (ks_subject_pid(ev, ev->hdr64 ? 8 : 4, &subject) && (int64_t)subject != hpid(ev))
		evtw_kv_i(l, "logged_by_pid", hpid(ev));
	write_header_attrs(fs, l, ev, prov);
	write_fields(db, fs, l, ev, x);
}

/* The record TAG a worker prepared for the current event, copied into the line: 1, else 0. */
static int
copy_prepared(struct conv *c, unsigned tag)
{
	size_t n;
	const void *p = conv_prep_find(c, tag, &n);

	if (!p)
		return 0;
	evtw_mem(&c->l, p, n);
	return 1;
}

/* A user-mode event's line kind when it has no CLR kind (conv_clr_kind). */
static const char *
user_kind_plain(const struct etl_event *ev)
{
	return ev->hkind == ETL_HK_WPP ? "WPP" : "Event";
}

/*
 * Any user-mode event: its provider, header ids, fields and stack.  What
 * only the line needs is worked out once a filter kept it.
 */
void
conv_emit_user(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	struct ext_items x;

	int64_t tid = htid(ev), pid = hpid(ev), line_pid = pid;
	uint32_t subject;
	/* an event about another process (a parent logs its child's start) is that process's */
	if (ks_subject_pid(ev, ev->hdr64 ? 8 : 4, &subject))
		line_pid = subject;
	int64_t weight = 0;
	const char *kind = ev->hkind == ETL_HK_WPP ? NULL : conv_clr_kind(c, ev, &weight);
	int clr_kind = kind != NULL;
	if (!kind)
		kind = user_kind_plain(ev);
	if (!conv_begin(c, kind, ns, ev->cpu, line_pid, tid, weight, ev->ts))
		return;
	if (clr_kind)
		conv_clr_leaf(c, ev);
	read_ext_items(ev, &x);
	if (!copy_prepared(c, PREP_USER_ATTRS))
		user_attrs(c->tdh, c->fields, &c->l, ev, &x);
	size_t nf = user_stack(c, ev, &x, tid);
	/* the stack is the logging thread's: its frames are named in the logging process */
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

/* KernelTraceControl's ImageID (type 0) and DbgID_RSDS (type 36), pointers P bytes: the kind, or NULL. */
static const char *
image_id_kind(const struct etl_event *ev, size_t P)
{
	if (!conv_is_provider(ev->guid, P_IMAGEID))
		return NULL;
	if (ev->type == 0 && ev->plen > 2 * P + 8)
		return "ImageID";
	if (ev->type == 36 && ev->plen >= P + 24)
		return "DbgID_RSDS";
	return NULL;
}

static uint64_t
ptr_of(const uint8_t *p, size_t P)
{
	return P == 8 ? etl_u64(p) : etl_u32(p);
}

/* The attributes of the line image_id_kind() names. */
static void
image_id_attrs(struct evtw_line *l, const struct etl_event *ev, size_t P)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen;
	char s1[1024], s2[1024];

	if (ev->type == 0) {
		etl_wstr(p + 2 * P + 8, n - 2 * P - 8, s1, sizeof s1, NULL);
		evtw_kv_x(l, "base", ptr_of(p, P));
		evtw_kv_x(l, "size", ptr_of(p + P, P));
		evtw_kv_u(l, "timestamp", etl_u32(p + 2 * P + 4));
		evtw_kv_s(l, "image", s1);
		return;
	}
	etl_guid_str(s2, p + P + 4);
	etl_astr(p + P + 24, n - P - 24, s1, sizeof s1, NULL);
	evtw_kv_x(l, "base", ptr_of(p, P));
	evtw_kv_s(l, "guid", s2);
	evtw_kv_u(l, "age", etl_u32(p + P + 20));
	evtw_kv_s(l, "pdb", s1);
}

void
conv_emit_classic(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const char *kind = image_id_kind(ev, c->P);

	if (!kind) {
		conv_emit_user(c, ev, ns);
		return;
	}
	/* the image's process: after ImageBase and ImageSize, after ImageBase */
	uint32_t ipid = etl_u32(ev->payload + (ev->type == 0 ? 2 * c->P : c->P));
	if (!conv_begin(c, kind, ns, ev->cpu, ipid, htid(ev), 0, ev->ts))
		return;
	if (!copy_prepared(c, PREP_IMAGE_ID))
		image_id_attrs(&c->l, ev, c->P);
	conv_finish(c, 0, NULL, 0, ev->ts);
}

/* CLR MethodLoad/MethodUnload (rundown: MethodDCStart/DCEnd): the kind, or NULL for another event. */
static const char *
clr_method_kind(const struct etl_event *ev)
{
	int rd = conv_is_provider(ev->guid, P_CLR_RUNDOWN);

	if (!rd && !conv_is_provider(ev->guid, P_CLR))
		return NULL;
	if ((ev->id != 143 && ev->id != 144) || ev->plen < 36)
		return NULL;
	return !rd && ev->id == 144 ? "MethodUnload" : "MethodLoad";
}

/* The attributes of a line clr_method_kind() names: the method the JIT made. */
static void
clr_method_attrs(struct evtw_line *l, const struct etl_event *ev)
{
	const uint8_t *p = ev->payload;
	char nsb[1024], nm[1024];
	size_t used;

	etl_wstr(p + 36, ev->plen - 36, nsb, sizeof nsb, &used);
	nm[0] = '\0';
	if (36 + used < ev->plen)
		etl_wstr(p + 36 + used, ev->plen - 36 - used, nm, sizeof nm, NULL);
	evtw_key(l, "method");
	if (*nsb) {
		evtw_esc(l, nsb, strlen(nsb), 0);
		evtw_ch(l, '.');
	}
	evtw_esc(l, nm, strlen(nm), 0);
	evtw_kv_x(l, "start", etl_u64(p + 16));
	evtw_kv_u(l, "size", etl_u32(p + 24));
	evtw_kv_x(l, "module_id", etl_u64(p + 8));
	/* MethodFlags: Jitted (0x8), and from .NET Core 3 the optimization tier in bits 7-9 */
	static const char *const tiers[] = { NULL, "MinOptJitted", "Optimized", "QuickJitted",
	    "OptimizedTier1", "OptimizedTier1OSR", "QuickJittedInstrumented", "OptimizedTier1Instrumented" };
	uint32_t flags = etl_u32(p + 32);
	if ((flags & 0x8) && tiers[(flags >> 7) & 7])
		evtw_kv_s(l, "tier", tiers[(flags >> 7) & 7]);
	if (conv_is_provider(ev->guid, P_CLR_RUNDOWN))
		evtw_kv_u(l, "rundown", 1);
}

static int
emit_clr_method(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const char *kind = clr_method_kind(ev);

	if (!kind)
		return 0;
	if (!conv_begin(c, kind, ns, ev->cpu, hpid(ev), htid(ev), 0, ev->ts))
		return 1;
	if (!copy_prepared(c, PREP_CLR_METHOD))
		clr_method_attrs(&c->l, ev);
	conv_finish(c, 0, NULL, 0, ev->ts);
	return 1;
}

/*
 * Events with an EVENT_HEADER (manifest, TraceLogging).  A CLR stack walk
 * is no line of its own: its frames join its event's (convert_clr.c).
 */
void
conv_emit_event(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	if (conv_clr_walk(c, ev))
		return;
	conv_clr_before(c, ev);
	if (!emit_clr_method(c, ev, ns))
		conv_emit_user(c, ev, ns);
	c->clr_line = c->want_clr = 0;
	c->leaf.n = 0;
}

/* ---------- ahead, on the reader's worker ---------- */

static struct conv_fields *
fields_new(void)
{
	struct conv_fields *fs = xcalloc(1, sizeof *fs);
	fs->tdh = tdh_local_new();
	return fs;
}

static void
fields_free(struct conv_fields *fs)
{
	if (!fs)
		return;
	tdh_local_free(fs->tdh);
	evtw_free(&fs->l);
	free(fs);
}

/*
 * Pass 2 starts: pass 1's schemas are sealed (read only from now on, by
 * several threads), and each thread that writes attributes gets its own
 * state: the caller's, and each file's worker.
 */
void
conv_fields_start(struct conv *c)
{
	key_chars_init();
	tdh_seal(c->tdh);
	c->fields = fields_new();
	for (size_t i = 0; i < c->nsrc; i++)
		c->src[i].fields = fields_new();
}

void
conv_fields_free(struct conv *c)
{
	fields_free(c->fields);
	c->fields = NULL;
	for (size_t i = 0; i < c->nsrc; i++) {
		fields_free(c->src[i].fields);
		c->src[i].fields = NULL;
	}
}

/*
 * Whether a line of KIND for EV would pass -k and --from/--to (the
 * filters cheap to ask ahead; -p needs the process model, so the text is
 * made and perhaps not used).  EV->ns is this file's clock: the line's
 * time adds the file's offset, as pass 2 does.
 */
static int
may_show(const struct conv *c, const struct source *s, const struct etl_event *ev, const char *kind)
{
	int64_t ns = s->off_ns + ev->ns;
	return ns >= c->from_ns && ns <= c->to_ns && conv_kind_wanted(c, kind);
}

/*
 * The prepare hook's part for the attributes, on S's worker: EV's
 * attribute text, as its emitter above would write it, as a record for
 * the caller's thread to copy.  Reads only pass 1's sealed schemas, the
 * options and the file's header; writes only S's conv_fields.  Inline
 * (no worker: -j 1) it does nothing, as a record would only add copies:
 * the caller's thread writes the text itself, with the same functions.
 *
 * A record's size is bounded by the payload's: it is the text the line
 * would get, whose fields are at most MAX_FIELDS values each made from
 * bytes of the payload (a value's text is at most a few times the bytes
 * it reads: hex, escapes, number digits), plus fixed-size header texts.
 */
void
conv_prep_fields(const struct conv *c, struct source *s, const struct etl_event *ev,
    struct etl_prep *out)
{
	struct conv_fields *fs = s->fields;
	struct evtw_line *l = &fs->l;
	int classic = ev->hkind == ETL_HK_FULL || ev->hkind == ETL_HK_INSTANCE;
	const char *kind;
	int64_t weight;
	unsigned tag;

	if (!classic && ev->hkind != ETL_HK_EVENT && ev->hkind != ETL_HK_WPP)
		return;		/* (kernel events: convert_emit_kernel.c) */
	if (!etl_prep_ahead(s->r))
		return;		/* inline (-j 1): the caller's thread writes the text itself, no copies */
	if (ev->hkind == ETL_HK_EVENT && conv_clr_is_walk(ev))
		return;		/* no line */
	size_t P = etl_info(s->r)->pointer_size;
	l->n = 0;
	if (classic && (kind = image_id_kind(ev, P)) != NULL) {
		if (!may_show(c, s, ev, kind))
			return;
		image_id_attrs(l, ev, P);
		tag = PREP_IMAGE_ID;
	} else if (ev->hkind == ETL_HK_EVENT && (kind = clr_method_kind(ev)) != NULL) {
		if (!may_show(c, s, ev, kind))
			return;
		clr_method_attrs(l, ev);
		tag = PREP_CLR_METHOD;
	} else {
		struct ext_items x;
		const char *clr = ev->hkind == ETL_HK_WPP ? NULL : conv_clr_kind_of(ev, &weight);
		if (!may_show(c, s, ev, clr ? clr : user_kind_plain(ev)))
			return;
		if (clr) {
			conv_clr_leaf_text(l, ev);	/* (an allocation tick's or exception's) */
			conv_prep_put(out, PREP_CLR_LEAF, l->b, l->n);
			l->n = 0;
		}
		read_ext_items(ev, &x);
		user_attrs(c->tdh, fs, l, ev, &x);
		tag = PREP_USER_ATTRS;
	}
	conv_prep_put(out, tag, l->b, l->n);
}
