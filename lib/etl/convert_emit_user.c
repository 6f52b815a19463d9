/*
 * convert_emit_user.c - pass 2's decoders of user-mode providers: CLR
 * method loads (their stack walks, allocation ticks and exceptions:
 * convert_clr.c), KernelTraceControl's ImageID and DbgID, and every other
 * event (manifest, TraceLogging, WPP, classic) with its fields decoded by
 * its TraceLogging schema or by a manifest schema the trace embeds, else
 * its payload in hex.
 */
#include <string.h>

#include "base/hash.h"
#include "etl/convert_int.h"
#include "etl/knownschemas.h"
#include "etl/tracelogging.h"

/* evt readers take at most EVT_MAX_ATTRS attributes: room for the fixed ones */
#define MAX_FIELDS (EVT_MAX_ATTRS - 16)

struct fieldctx {
	struct evtw_line *l;
	unsigned n, dropped;
};

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
static struct key_memo {
	const char *name;
	size_t len;		/* 0: the slot is empty */
	char raw[KEY_MEMO_NAME];
	char key[KEY_MEMO_NAME];
} key_memo[1u << KEY_MEMO_BITS];

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
	if (!key_char['a'])
		key_chars_init();
	size_t nl = strnlen(name, FIELD_NAME_MAX);
	char *o = evtw_room(l, 3 + (nl > KEY_MEMO_NAME ? nl : KEY_MEMO_NAME) + 2);
	memcpy(o, "\tp.", 3);
	o += 3;
	struct key_memo *km = NULL;
	if (nl > 0 && nl <= KEY_MEMO_NAME) {
		km = &key_memo[((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull) >> (64 - KEY_MEMO_BITS)];
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
	char provider_buf[256];
	const char *provider;	/* the provider traits' name, NULL if none */
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

	x->provider = NULL;
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
			etl_astr(d + 2, sz - 2, x->provider_buf, sizeof x->provider_buf, NULL);
			if (*x->provider_buf)
				x->provider = x->provider_buf;
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
static struct header_memo {
	struct header_key k;
	char prov[128];
	uint16_t len;		/* 0: the slot is empty */
	char text[512];
} header_memo[1u << HEADER_MEMO_BITS];

static void
write_header_attrs(struct evtw_line *l, const struct etl_event *ev, const char *prov)
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
	struct header_memo *m = &header_memo[hash_u64(hash_bytes(&k, sizeof k) ^ pl) >>
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
write_fields(struct conv *c, const struct etl_event *ev, const struct ext_items *x)
{
	struct evtw_line *l = &c->l;
	size_t mark = l->n;
	int decoded = 0;
	struct fieldctx fc = { l, 0, 0 };

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
		const char *label = tdh_event_label(c->tdh, ev);
		if (label)
			evtw_kv_s(l, "event", label);
		if (tdh_decode_event(c->tdh, ev, field_cb, &fc) == 0)
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
		kind = ev->hkind == ETL_HK_WPP ? "WPP" : "Event";
	if (!conv_begin(c, kind, ns, ev->cpu, line_pid, tid, weight, ev->ts))
		return;
	if (clr_kind)
		conv_clr_leaf(c, ev);
	read_ext_items(ev, &x);
	const char *prov = x.provider;
	if (!prov)
		prov = conv_provider_name(ev->guid, 0);
	if (!prov)
		prov = tdh_provider_name(c->tdh, ev->guid);
	if (line_pid != pid)
		evtw_kv_i(&c->l, "logged_by_pid", pid);
	write_header_attrs(&c->l, ev, prov);
	write_fields(c, ev, &x);
	size_t nf = user_stack(c, ev, &x, tid);
	/* the stack is the logging thread's: its frames are named in the logging process */
	conv_finish(c, pid < 0 ? ETL_NO_ID : (uint32_t)pid, c->frames, nf, ev->ts);
}

void
conv_emit_classic(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->plen, P = c->P;
	char s1[1024], s2[1024];
	int64_t tid = htid(ev);

	if (conv_is_provider(ev->guid, P_IMAGEID) && ev->type == 0 && n > 2 * P + 8) {
		uint32_t ipid = etl_u32(p + 2 * P);
		if (!conv_begin(c, "ImageID", ns, ev->cpu, ipid, tid, 0, ev->ts))
			return;
		etl_wstr(p + 2 * P + 8, n - 2 * P - 8, s1, sizeof s1, NULL);
		evtw_kv_x(&c->l, "base", ptr_at(c, p));
		evtw_kv_x(&c->l, "size", ptr_at(c, p + P));
		evtw_kv_u(&c->l, "timestamp", etl_u32(p + 2 * P + 4));
		evtw_kv_s(&c->l, "image", s1);
		conv_finish(c, 0, NULL, 0, ev->ts);
		return;
	}
	if (conv_is_provider(ev->guid, P_IMAGEID) && ev->type == 36 && n >= P + 24) {
		uint32_t ipid = etl_u32(p + P);
		if (!conv_begin(c, "DbgID_RSDS", ns, ev->cpu, ipid, tid, 0, ev->ts))
			return;
		etl_guid_str(s2, p + P + 4);
		etl_astr(p + P + 24, n - P - 24, s1, sizeof s1, NULL);
		evtw_kv_x(&c->l, "base", ptr_at(c, p));
		evtw_kv_s(&c->l, "guid", s2);
		evtw_kv_u(&c->l, "age", etl_u32(p + P + 20));
		evtw_kv_s(&c->l, "pdb", s1);
		conv_finish(c, 0, NULL, 0, ev->ts);
		return;
	}
	conv_emit_user(c, ev, ns);
}


/* CLR MethodLoad/MethodUnload (rundown: MethodDCStart/DCEnd): the methods the JIT made. */
static int
emit_clr_method(struct conv *c, const struct etl_event *ev, int64_t ns)
{
	const uint8_t *p = ev->payload;
	int rd = conv_is_provider(ev->guid, P_CLR_RUNDOWN);

	if (!rd && !conv_is_provider(ev->guid, P_CLR))
		return 0;
	if ((ev->id != 143 && ev->id != 144) || ev->plen < 36)
		return 0;
	const char *kind = !rd && ev->id == 144 ? "MethodUnload" : "MethodLoad";
	int64_t tid = htid(ev);
	int64_t pid = hpid(ev);
	if (!conv_begin(c, kind, ns, ev->cpu, pid, tid, 0, ev->ts))
		return 1;
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
	evtw_kv_x(&c->l, "module_id", etl_u64(p + 8));
	/* MethodFlags: Jitted (0x8), and from .NET Core 3 the optimization tier in bits 7-9 */
	static const char *const tiers[] = { NULL, "MinOptJitted", "Optimized", "QuickJitted",
	    "OptimizedTier1", "OptimizedTier1OSR", "QuickJittedInstrumented", "OptimizedTier1Instrumented" };
	uint32_t flags = etl_u32(p + 32);
	if ((flags & 0x8) && tiers[(flags >> 7) & 7])
		evtw_kv_s(&c->l, "tier", tiers[(flags >> 7) & 7]);
	if (rd)
		evtw_kv_u(&c->l, "rundown", 1);
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
