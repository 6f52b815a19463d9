/*
 * tdh.c - TRACE_EVENT_INFO / EVENT_MAP_INFO schemas embedded in traces,
 * and payload decoding with them (see tdh.h).
 *
 * TRACE_EVENT_INFO (all offsets from the blob's start, strings UTF-16Z):
 *   0 ProviderGuid, 16 EventGuid, 32 EVENT_DESCRIPTOR {u16 Id, u8 Version,
 *   u8 Channel, u8 Level, u8 Opcode, u16 Task, u64 Keyword}, 48 u32
 *   DecodingSource (0 manifest, 1 WBEM/MOF, 2 WPP, 3 TraceLogging), 52..88
 *   u32 offsets of ProviderName, LevelName, ChannelName, KeywordsName,
 *   TaskName, OpcodeName, EventMessage, ProviderMessage, BinaryXML, u32
 *   BinaryXMLSize, 92 EventNameOffset, 96 EventAttributesOffset, 100
 *   PropertyCount, 104 TopLevelPropertyCount, 108 Flags, 112 the
 *   EVENT_PROPERTY_INFO array, 24 bytes each: u32 Flags, u32 NameOffset,
 *   {u16 InType, u16 OutType, u32 MapNameOffset} or {u16 StructStartIndex,
 *   u16 NumOfStructMembers, u32 -}, u16 count or count property index,
 *   u16 length or length property index, u32 reserved/tags.
 * EVENT_MAP_INFO: u32 NameOffset, u32 Flag (1 value map, 2 bitmap, 8/16
 *   the WBEM ones), u32 EntryCount, u32 value type (0 = ULONG), then
 *   entries {u32 OutputOffset (name), u32 Value}.
 * Verified on net.4.5.2.x64 and diaghub against TraceEvent's decode.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/hash.h"
#include "base/strbuf.h"
#include "evt/evt.h"
#include "evt/evtwrite.h"
#include "etl/knownschemas.h"
#include "etl/tdh.h"
#include "etl/wperf.h"

/* PROPERTY_FLAGS */
enum {
	PF_STRUCT = 0x1, PF_PARAM_LENGTH = 0x2, PF_PARAM_COUNT = 0x4, PF_WBEMXML = 0x8,
	PF_FIXED_LENGTH = 0x10, PF_FIXED_COUNT = 0x20, PF_CUSTOM_SCHEMA = 0x80
};

/* TDH in-types and out-types used here */
enum {
	IT_NULL, IT_USTR, IT_ASTR, IT_I8, IT_U8, IT_I16, IT_U16, IT_I32, IT_U32, IT_I64, IT_U64,
	IT_FLOAT, IT_DOUBLE, IT_BOOL, IT_BINARY, IT_GUID, IT_POINTER, IT_FILETIME, IT_SYSTEMTIME,
	IT_SID, IT_HEX32, IT_HEX64, IT_CUSTR, IT_CASTR, IT_RES24, IT_CBINARY,
	IT_W_CUSTR = 300, IT_W_CASTR, IT_W_RCUSTR, IT_W_RCASTR, IT_W_NNTUSTR, IT_W_NNTASTR,
	IT_W_UCHAR, IT_W_ACHAR, IT_W_SIZET, IT_W_HEXDUMP, IT_W_SID
};
enum {
	OT_STRING = 1, OT_BOOLEAN = 13, OT_HEX8 = 16, OT_HEX16, OT_HEX32, OT_HEX64, OT_PORT = 22,
	OT_IPV4, OT_IPV6, OT_SOCKADDR, OT_ERRORCODE = 29, OT_WIN32ERROR, OT_NTSTATUS, OT_HRESULT,
	OT_CODEPTR = 37
};

#define MAX_PROPS 4096
#define MAX_DEPTH 8
#define MAX_VALUES 100000	/* per event: bounds the work a hostile schema can cause */

struct prop {
	char *name;
	size_t namelen;		/* strlen(name): decoding asks it of every property */
	uint32_t flags;
	uint16_t in, out;	/* or struct start, member count */
	char *map;
	/*
	 * Which map that name finds (decoding's own memo, not the schema): an
	 * index + 1 in the database's maps, 0 for none, worked out while the
	 * database had map_for - 1 maps (0: not yet).  A search compares the
	 * name with every map's, and an event decodes several mapped values.
	 */
	size_t map_at, map_for;
	uint16_t count, length;
	int hidden;		/* the count/length prefix of the next property (TraceEvent drops it) */
};

struct tdh_event {
	uint8_t guid[16];	/* provider (manifest) or event class (classic) */
	uint16_t id;
	uint8_t version, opcode;
	int classic, builtin, userdata;
	char *provider, *name;
	struct prop *p;
	uint32_t np, ntop;
};

struct mapent {
	uint32_t value;
	char *name;
};

struct map {
	uint8_t guid[16];
	char *name;
	int bitmap;
	struct mapent *e;
	uint32_t n;
};

struct tdh_db {
	struct tdh_event **ev;
	size_t nev, capev;
	struct { uint8_t guid[16]; const char *name; } *prov;	/* distinct providers with a name */
	size_t nprov, capprov;
	uint32_t *slot;		/* open addressing: index + 1 of the preferred schema per key */
	size_t nslot;		/* a power of two, at least twice nev */
	struct map *maps;
	size_t nmaps, capmaps;
	size_t nbuiltin_maps;	/* the first maps are built in: a trace's own map of the name wins */
	struct tdh_stats st;
	int sealed;		/* tdh_seal(): no schema or map is added any more */
	struct tdh_local *own;	/* the memos of callers that pass none (one thread) */
};

/*
 * What decoding keeps from event to event, per thread: the database is
 * only read once sealed, so several threads decode with it at once,
 * each with its own tdh_local.
 */
struct tdh_local {
	struct strbuf scratch;	/* a value's text (its buffer serves the next event) */
	/*
	 * The schema an event's key found last: an event asks twice (its
	 * label, its fields), and events come in runs of one kind.  Valid
	 * while the database holds nev - 1 schemas (0: empty).
	 */
	struct schema_memo {
		size_t nev;
		uint8_t guid[16];
		unsigned id, version;
		int classic;
		const struct tdh_event *e;
	} smemo;
};

static const uint8_t metadata_guid[16] = {
	0xc1, 0xf6, 0xcc, 0xbb, 0xd1, 0x6c, 0xc4, 0x48, 0x80, 0xff, 0x83, 0x94, 0x82, 0xe3, 0x76, 0x71
};

int
tdh_is_metadata(const uint8_t *guid)
{
	return guid && memcmp(guid, metadata_guid, 16) == 0;
}

/* A UTF-16Z string at OFF inside BLOB[0..len) as UTF-8, or NULL if OFF is 0 or out of range. */
static char *
blob_str(const uint8_t *blob, size_t len, uint32_t off)
{
	if (off == 0 || off >= len)
		return NULL;
	size_t cap = (len - off) / 2 * 3 + 4, used;
	char *s = xmalloc(cap);
	etl_wstr(blob + off, len - off, s, cap, &used);
	return s;
}

static char *
trimmed(char *s)
{
	if (!s)
		return s;
	size_t n = strlen(s), a = 0;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	while (s[a] == ' ' || s[a] == '\t')
		a++;
	if (a)
		memmove(s, s + a, n - a + 1);
	return s;
}

/* A built-in schema: one the trace's own (embedded) schema for the same event displaces. */
static int
add_builtin(void *dbp, const uint8_t *blob, size_t len)
{
	struct tdh_db *db = dbp;
	size_t before = db->nev;
	int r = tdh_add_event_info(db, blob, len);
	if (db->nev > before)
		db->ev[before]->builtin = 1;
	return r;
}

static int
add_builtin_map(void *dbp, const uint8_t *rec, size_t len)
{
	return tdh_add_map_info(dbp, rec, len);
}

struct tdh_db *
tdh_new(void)
{
	struct tdh_db *db = xcalloc(1, sizeof *db);
	db->own = tdh_local_new();
	const uint8_t *blob;
	size_t len;
	for (int i = 0; (blob = wperf_schema_blob(i, &len)) != NULL; i++)
		add_builtin(db, blob, len);
	/* the CLR and kernel providers (lib/etl/knownschemas.c) */
	ks_load(db, add_builtin, add_builtin_map);
	db->st.events = db->st.maps = 0;
	db->nbuiltin_maps = db->nmaps;
	return db;
}

static void
free_event(struct tdh_event *e)
{
	for (uint32_t i = 0; i < e->np; i++) {
		free(e->p[i].name);
		free(e->p[i].map);
	}
	free(e->p);
	free(e->provider);
	free(e->name);
	free(e);
}

void
tdh_free(struct tdh_db *db)
{
	if (!db)
		return;
	tdh_local_free(db->own);
	for (size_t i = 0; i < db->nev; i++)
		free_event(db->ev[i]);
	free(db->ev);
	free(db->slot);
	free(db->prov);
	for (size_t i = 0; i < db->nmaps; i++) {
		for (uint32_t k = 0; k < db->maps[i].n; k++)
			free(db->maps[i].e[k].name);
		free(db->maps[i].e);
		free(db->maps[i].name);
	}
	free(db->maps);
	free(db);
}

struct tdh_local *
tdh_local_new(void)
{
	return xcalloc(1, sizeof(struct tdh_local));
}

void
tdh_local_free(struct tdh_local *loc)
{
	if (!loc)
		return;
	strbuf_release(&loc->scratch);
	free(loc);
}

const struct tdh_stats *
tdh_stats(const struct tdh_db *db)
{
	return &db->st;
}

static uint64_t
key_hash(const uint8_t *guid, unsigned id, unsigned version, int classic)
{
	return hash_u64(hash_bytes(guid, 16) ^ (uint64_t)id << 32 ^ (uint64_t)version << 1 ^
	    (unsigned)classic);
}

static int
same_key(const struct tdh_event *e, const uint8_t *guid, unsigned id, unsigned version, int classic)
{
	return e->classic == classic && e->version == version && (classic ? e->opcode : e->id) == id &&
	    memcmp(e->guid, guid, 16) == 0;
}

static size_t
find_slot(const struct tdh_db *db, const uint8_t *guid, unsigned id, unsigned version, int classic)
{
	size_t mask = db->nslot - 1, i = (size_t)key_hash(guid, id, version, classic) & mask;
	while (db->slot[i] && !same_key(db->ev[db->slot[i] - 1], guid, id, version, classic))
		i = (i + 1) & mask;
	return i;
}

static struct tdh_event *
lookup(const struct tdh_db *db, const uint8_t *guid, unsigned id, unsigned version, int classic)
{
	if (!guid || !db->nslot)
		return NULL;
	uint32_t k = db->slot[find_slot(db, guid, id, version, classic)];
	return k ? db->ev[k - 1] : NULL;
}

/* Indexes db->ev[i]; an embedded schema displaces a built-in one, else the first stays. */
static void
index_event(struct tdh_db *db, size_t i)
{
	if (2 * (i + 1) > db->nslot) {
		free(db->slot);
		db->nslot = db->nslot ? db->nslot * 2 : 64;
		db->slot = xcalloc(db->nslot, sizeof *db->slot);
		for (size_t k = 0; k < i; k++)
			index_event(db, k);
	}
	const struct tdh_event *e = db->ev[i];
	size_t at = find_slot(db, e->guid, e->classic ? e->opcode : e->id, e->version, e->classic);
	if (!db->slot[at] || (db->ev[db->slot[at] - 1]->builtin && !e->builtin))
		db->slot[at] = (uint32_t)(i + 1);
}

const struct tdh_event *
tdh_find(const struct tdh_db *db, const uint8_t *guid, unsigned id, unsigned version)
{
	return lookup(db, guid, id, version, 0);
}

const struct tdh_event *
tdh_find_classic(const struct tdh_db *db, const uint8_t *guid, unsigned type, unsigned version)
{
	return lookup(db, guid, type, version, 1);
}

const char *
tdh_event_name(const struct tdh_event *e)
{
	return e->name ? e->name : "";
}

const char *
tdh_provider_name(const struct tdh_db *db, const uint8_t *guid)
{
	if (!guid)
		return NULL;
	for (size_t i = 0; i < db->nprov; i++)
		if (memcmp(db->prov[i].guid, guid, 16) == 0)
			return db->prov[i].name;
	return NULL;
}

static void
add_provider(struct tdh_db *db, const struct tdh_event *e)
{
	if (e->classic || !e->provider || !*e->provider || tdh_provider_name(db, e->guid))
		return;
	XGROW(db->prov, db->nprov, db->capprov, 16);
	memcpy(db->prov[db->nprov].guid, e->guid, 16);
	db->prov[db->nprov++].name = e->provider;
}

/* "Task/Opcode" as TraceEvent names manifest events ("win:" dropped, opcode 0 omitted). */
static char *
event_label(const uint8_t *b, size_t len, unsigned id, unsigned opcode)
{
	char *ev = trimmed(blob_str(b, len, etl_u32(b + 92)));
	if (ev && *ev)
		return ev;
	free(ev);
	char *task = trimmed(blob_str(b, len, etl_u32(b + 68)));
	char *op = trimmed(blob_str(b, len, etl_u32(b + 72)));
	const char *o = op ? op : "";
	if (strncmp(o, "win:", 4) == 0)
		o += 4;
	size_t n = (task ? strlen(task) : 0) + strlen(o) + 32;
	char *s = xmalloc(n);
	if (task && *task)
		snprintf(s, n, "%s%s%s", task, opcode && *o ? "/" : "", opcode ? o : "");
	else if (*o && opcode)
		snprintf(s, n, "EventID(%u)/%s", id, o);
	else
		snprintf(s, n, "EventID(%u)", id);
	free(task);
	free(op);
	return s;
}

int
tdh_add_event_info(struct tdh_db *db, const uint8_t *b, size_t len)
{
	if (db->sealed)
		cli_fatal("tdh: a schema added after the database was sealed");
	if (len < 112 || len > (1u << 30))
		goto bad;
	uint32_t np = etl_u32(b + 100), ntop = etl_u32(b + 104), src = etl_u32(b + 48);
	if (np > MAX_PROPS || ntop > np || 112 + (size_t)np * 24 > len || src > 1)
		goto bad;
	int classic = src == 1;
	unsigned id = etl_u16(b + 32), version = b[34], opcode = b[37];
	const uint8_t *guid = classic ? b + 16 : b;
	struct tdh_event *old = lookup(db, guid, classic ? opcode : id, version, classic);
	if (old && !old->builtin)
		return 0;	/* merges repeat schemas: the first one wins */
	struct tdh_event *e = xcalloc(1, sizeof *e);
	memcpy(e->guid, guid, 16);
	e->id = (uint16_t)id;
	e->version = (uint8_t)version;
	e->opcode = (uint8_t)opcode;
	e->classic = classic;
	e->userdata = (etl_u32(b + 108) & 2) != 0;
	e->np = np;
	e->ntop = ntop;
	e->p = xcalloc(np ? np : 1, sizeof *e->p);
	for (uint32_t i = 0; i < np; i++) {
		const uint8_t *q = b + 112 + (size_t)i * 24;
		struct prop *p = &e->p[i];
		p->flags = etl_u32(q);
		p->name = blob_str(b, len, etl_u32(q + 4));
		p->in = etl_u16(q + 8);
		p->out = etl_u16(q + 10);
		p->count = etl_u16(q + 16);
		p->length = etl_u16(q + 18);
		if (!p->name)
			p->name = xstrdup("");
		p->namelen = strlen(p->name);
		if (p->flags & PF_STRUCT) {
			/* members must lie inside the array and after this property (no cycles) */
			if ((uint32_t)p->in + p->out > np || p->in <= i)
				goto bad_event;
		} else if (etl_u32(q + 12))
			p->map = blob_str(b, len, etl_u32(q + 12));
		if ((p->flags & PF_PARAM_COUNT) && p->count >= np)
			goto bad_event;
		if ((p->flags & PF_PARAM_LENGTH) && p->length >= np)
			goto bad_event;
	}
	for (uint32_t i = 1; i < np; i++) {
		const struct prop *p = &e->p[i];
		if (((p->flags & PF_PARAM_COUNT) && p->count == i - 1) ||
		    ((p->flags & PF_PARAM_LENGTH) && p->length == i - 1))
			e->p[i - 1].hidden = 1;
	}
	e->provider = trimmed(blob_str(b, len, etl_u32(b + 52)));
	e->name = event_label(b, len, id, opcode);
	XGROW(db->ev, db->nev, db->capev, 16);
	db->ev[db->nev++] = e;
	index_event(db, db->nev - 1);
	add_provider(db, e);
	db->st.events++;
	return 0;
bad_event:
	free_event(e);
bad:
	db->st.damaged++;
	return -1;
}

static int
cmp_mapent(const void *a, const void *b)
{
	const struct mapent *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

int
tdh_add_map_info(struct tdh_db *db, const uint8_t *rec, size_t len)
{
	if (db->sealed)
		cli_fatal("tdh: a value map added after the database was sealed");
	if (len < 16 + 16)
		goto bad;
	const uint8_t *b = rec + 16;
	size_t n = len - 16;
	uint32_t flag = etl_u32(b + 4), cnt = etl_u32(b + 8), vtype = etl_u32(b + 12);
	if (cnt > (n - 16) / 8 || vtype != 0 || !(flag & (1 | 2 | 8 | 16)))
		goto bad;
	char *name = blob_str(b, n, etl_u32(b));
	if (!name)
		goto bad;
	for (size_t i = db->nbuiltin_maps; i < db->nmaps; i++)
		if (memcmp(db->maps[i].guid, rec, 16) == 0 && strcmp(db->maps[i].name, name) == 0) {
			free(name);
			return 0;
		}
	struct map m;
	memcpy(m.guid, rec, 16);
	m.name = name;
	m.bitmap = (flag & (2 | 16)) != 0;
	m.n = cnt;
	m.e = xcalloc(cnt ? cnt : 1, sizeof *m.e);
	for (uint32_t k = 0; k < cnt; k++) {
		m.e[k].name = trimmed(blob_str(b, n, etl_u32(b + 16 + 8 * (size_t)k)));
		if (!m.e[k].name)
			m.e[k].name = xstrdup("");
		m.e[k].value = etl_u32(b + 16 + 8 * (size_t)k + 4);
	}
	qsort(m.e, cnt, sizeof *m.e, cmp_mapent);
	XGROW(db->maps, db->nmaps, db->capmaps, 16);
	db->maps[db->nmaps++] = m;
	db->st.maps++;
	return 0;
bad:
	db->st.damaged++;
	return -1;
}

int
tdh_collect(struct tdh_db *db, const struct etl_event *ev)
{
	if ((ev->hkind != ETL_HK_FULL && ev->hkind != ETL_HK_INSTANCE) || !tdh_is_metadata(ev->guid))
		return 0;
	if (ev->type == 32)
		tdh_add_event_info(db, ev->payload, ev->plen);
	else if (ev->type == 33)
		tdh_add_map_info(db, ev->payload, ev->plen);
	return 1;
}

/* ---------- decoding ---------- */

/*
 * Numbers without printf: the decoder writes millions of them, straight
 * into the buffer (room made first), not through a copy.
 */
static void
bput_u64(struct strbuf *v, uint64_t x)
{
	if (v->cap - v->len <= 21)
		strbuf_grow(v, 21);
	v->len += evtw_put_u64(v->s + v->len, x);	/* (inline: a value is mostly a number) */
	v->s[v->len] = '\0';
}

static void
bput_i64(struct strbuf *v, int64_t x)
{
	if (x < 0) {
		strbuf_add(v, "-", 1);
		bput_u64(v, (uint64_t)(-(x + 1)) + 1);
	} else
		bput_u64(v, (uint64_t)x);
}

/* "0x" and lower-case hex digits, at least WIDTH of them */
static void
bput_hex(struct strbuf *v, uint64_t x, int width)
{
	if (v->cap - v->len <= 18)
		strbuf_grow(v, 18);
	char *o = v->s + v->len;
	o[0] = '0';
	o[1] = 'x';
	v->len += 2 + (width == 1 ? evtw_put_hex(o + 2, x) : (size_t)evt_format_hex(o + 2, x, width));
	v->s[v->len] = '\0';
}

static void
bhex(struct strbuf *v, const uint8_t *p, size_t n)
{
	char t[512];
	for (size_t i = 0; i < n; i += sizeof t / 2) {
		size_t k = n - i < sizeof t / 2 ? n - i : sizeof t / 2;
		evt_format_hexbytes(t, p + i, k);
		strbuf_add(v, t, 2 * k);
	}
}

/* UTF-16 (BYTES bytes) or 8-bit text to UTF-8, trailing NULs dropped. */
static void
bstr(struct strbuf *v, const uint8_t *p, size_t bytes, int wide)
{
	size_t cap = bytes * 2 + 4;
	char stackbuf[1024], *s = cap <= sizeof stackbuf ? stackbuf : xmalloc(cap);
	size_t n = wide ? etl_wstr(p, bytes, s, cap, NULL) : etl_astr(p, bytes, s, cap, NULL);
	strbuf_add(v, s, n);
	if (s != stackbuf)
		free(s);
}

struct dec {
	const struct tdh_db *db;
	const struct tdh_event *e;
	const uint8_t *d;
	size_t len, off;
	unsigned psize;
	uint64_t *ival;		/* last integer value of each property (for counts/lengths) */
	uint8_t *have;
	unsigned long values;
	tdh_field_fn fn;
	void *ctx;
	struct strbuf v;
	char name[512];
};

/* Works out which map property P of schema E names (its memo, see struct prop). */
static void
resolve_map(const struct tdh_db *db, const struct tdh_event *e, struct prop *p)
{
	/* the trace's own maps first (stored after the built-in ones), then the built-in ones */
	p->map_at = 0;
	p->map_for = db->nmaps + 1;
	for (size_t k = 0; k < db->nmaps; k++) {
		size_t i = (k + db->nbuiltin_maps) % db->nmaps;
		if (strcmp(db->maps[i].name, p->map) == 0 && memcmp(db->maps[i].guid, e->guid, 16) == 0) {
			p->map_at = i + 1;
			return;
		}
	}
}

/*
 * Once sealed, every memo is worked out already (tdh_seal): decoding
 * writes nothing shared, so threads may decode at once.
 */
static const struct map *
find_map(const struct dec *x, struct prop *p)
{
	const struct tdh_db *db = x->db;
	if (p->map_for != db->nmaps + 1)
		resolve_map(db, x->e, p);
	return p->map_at ? &db->maps[p->map_at - 1] : NULL;
}

void
tdh_seal(struct tdh_db *db)
{
	if (db->sealed)
		return;
	db->sealed = 1;
	for (size_t i = 0; i < db->nev; i++) {
		struct tdh_event *e = db->ev[i];
		for (uint32_t k = 0; k < e->np; k++)
			if (e->p[k].map)
				resolve_map(db, e, &e->p[k]);
	}
}

/* A mapped integer as TraceEvent renders it; 0 if the map does not apply. */
static int
put_mapped(struct strbuf *v, const struct map *m, uint64_t x)
{
	if (!m->bitmap) {
		size_t lo = 0, hi = m->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (m->e[mid].value == x) {
				strbuf_add(v, m->e[mid].name, strlen(m->e[mid].name));
				return 1;
			}
			if (m->e[mid].value < x)
				lo = mid + 1;
			else
				hi = mid;
		}
		return 0;
	}
	size_t start = v->len;
	if (x == 0 && m->n && m->e[0].value == 0) {
		/* a flags enum's name for no flag ("None"); entries are sorted by value */
		strbuf_add(v, m->e[0].name, strlen(m->e[0].name));
		return 1;
	}
	for (uint32_t k = 0; k < m->n && x; k++)
		if (m->e[k].value & x) {
			if (v->len > start)
				strbuf_add(v, "|", 1);
			strbuf_add(v, m->e[k].name, strlen(m->e[k].name));
			x &= ~(uint64_t)m->e[k].value;
		}
	if (x) {
		if (v->len > start)
			strbuf_add(v, "|", 1);
		strbuf_addf(v, "0x%" PRIx64, x);
	} else if (v->len == start)
		strbuf_add(v, "0", 1);
	return 1;
}

static void
put_systemtime(struct strbuf *v, const uint8_t *p)
{
	strbuf_addf(v, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", etl_u16(p), etl_u16(p + 2), etl_u16(p + 6),
	    etl_u16(p + 8), etl_u16(p + 10), etl_u16(p + 12), etl_u16(p + 14));
}

static void
put_sid(struct strbuf *v, const uint8_t *p, size_t n)
{
	uint64_t auth = 0;
	for (int i = 2; i < 8; i++)
		auth = auth << 8 | p[i];
	strbuf_addf(v, "S-%u-%" PRIu64, p[0], auth);
	for (size_t i = 0; i < p[1] && 8 + 4 * i + 4 <= n; i++)
		strbuf_addf(v, "-%u", etl_u32(p + 8 + 4 * i));
}

/* sockaddr (SOCKADDR_IN / SOCKADDR_IN6) as "a.b.c.d:port" / "[v6]:port"; 0 if not one. */
static int
put_sockaddr(struct strbuf *v, const uint8_t *p, size_t n)
{
	char t[INET6_ADDRSTRLEN];
	if (n >= 8 && etl_u16(p) == 2) {
		inet_ntop(AF_INET, p + 4, t, sizeof t);
		strbuf_addf(v, "%s:%u", t, (unsigned)(p[2] << 8 | p[3]));
		return 1;
	}
	if (n >= 24 && etl_u16(p) == 23) {
		inet_ntop(AF_INET6, p + 8, t, sizeof t);
		strbuf_addf(v, "[%s]:%u", t, (unsigned)(p[2] << 8 | p[3]));
		return 1;
	}
	return 0;
}

static void
put_int(struct strbuf *v, unsigned in, unsigned out, uint64_t x, size_t size)
{
	int sgn = in == IT_I8 || in == IT_I16 || in == IT_I32 || in == IT_I64;
	switch (out) {
	case OT_BOOLEAN:
		strbuf_add(v, x ? "true" : "false", x ? 4 : 5);
		return;
	case OT_HEX8: case OT_HEX16: case OT_HEX32: case OT_HEX64: case OT_CODEPTR:
		bput_hex(v, x, 1);
		return;
	case OT_NTSTATUS: case OT_HRESULT: case OT_ERRORCODE:
		bput_hex(v, x, 8);
		return;
	case OT_PORT:
		if (size == 2) {
			bput_u64(v, (x & 0xff) << 8 | (x >> 8 & 0xff));
			return;
		}
		break;
	case OT_IPV4:
		if (size == 4) {
			strbuf_addf(v, "%u.%u.%u.%u", (unsigned)(x & 0xff), (unsigned)(x >> 8 & 0xff),
			    (unsigned)(x >> 16 & 0xff), (unsigned)(x >> 24));
			return;
		}
		break;
	}
	if (in == IT_HEX32 || in == IT_HEX64 || in == IT_POINTER) {
		bput_hex(v, x, 1);
		return;
	}
	if (sgn) {
		int64_t s = size == 1 ? (int8_t)x : size == 2 ? (int16_t)x : size == 4 ? (int32_t)x :
		    (int64_t)x;
		bput_i64(v, s);
	} else
		bput_u64(v, x);
}

static size_t
int_size(unsigned in, unsigned psize)
{
	switch (in) {
	case IT_I8: case IT_U8: case IT_W_ACHAR: return 1;
	case IT_I16: case IT_U16: case IT_W_UCHAR: return 2;
	case IT_I32: case IT_U32: case IT_HEX32: case IT_BOOL: return 4;
	case IT_I64: case IT_U64: case IT_HEX64: return 8;
	case IT_POINTER: case IT_W_SIZET: return psize;
	}
	return 0;
}

/*
 * One element of property P at x->off into x->v.  LEN/HASLEN: the
 * property's length (strings, binary).  *IVAL gets integer values.
 * Returns 0 or -1 (data too short, unknown type).
 */
static int
one_value(struct dec *x, struct prop *p, size_t isz, size_t len, int haslen, uint64_t *ival)
{
	const uint8_t *d = x->d + x->off;
	size_t room = x->len - x->off, n, used;
	unsigned in = p->in;

	if (isz) {
		if (room < isz)
			return -1;
		uint64_t val = isz == 8 ? etl_u64(d) : isz == 4 ? etl_u32(d) : isz == 2 ? etl_u16(d) : d[0];
		*ival = val;
		x->off += isz;
		if (in == IT_BOOL) {
			strbuf_add(&x->v, val ? "true" : "false", val ? 4 : 5);
			return 0;
		}
		if (in == IT_W_UCHAR || in == IT_W_ACHAR) {
			bstr(&x->v, d, isz, in == IT_W_UCHAR);
			return 0;
		}
		const struct map *m = p->map ? find_map(x, p) : NULL;
		if (m && put_mapped(&x->v, m, val))
			return 0;
		put_int(&x->v, in, p->out, val, isz);
		return 0;
	}
	switch (in) {
	case IT_USTR: case IT_ASTR: {
		int wide = in == IT_USTR;
		if (haslen) {
			n = len * (wide ? 2 : 1);
			if (n > room)
				return -1;
			used = n;
		} else {
			/* to the NUL (inclusive), or the end of the data */
			n = used = room;
			for (size_t k = 0; wide ? k + 1 < room : k < room; k += wide ? 2 : 1)
				if (d[k] == 0 && (!wide || d[k + 1] == 0)) {
					n = k;
					used = k + (wide ? 2 : 1);
					break;
				}
		}
		bstr(&x->v, d, n, wide);
		x->off += used;
		return 0;
	}
	case IT_FLOAT: {
		if (room < 4)
			return -1;
		float f;
		uint32_t u = etl_u32(d);
		memcpy(&f, &u, 4);
		strbuf_addf(&x->v, "%.9g", (double)f);
		x->off += 4;
		return 0;
	}
	case IT_DOUBLE: {
		if (room < 8)
			return -1;
		double f;
		uint64_t u = etl_u64(d);
		memcpy(&f, &u, 8);
		strbuf_addf(&x->v, "%.17g", f);
		x->off += 8;
		return 0;
	}
	case IT_GUID: {
		char g[40];
		if (room < 16)
			return -1;
		etl_guid_str(g, d);
		strbuf_add(&x->v, g, strlen(g));
		x->off += 16;
		return 0;
	}
	case IT_FILETIME: {
		char t[40];
		if (room < 8)
			return -1;
		etl_filetime_str(t, etl_u64(d));
		strbuf_add(&x->v, t, strlen(t));
		x->off += 8;
		return 0;
	}
	case IT_SYSTEMTIME:
		if (room < 16)
			return -1;
		put_systemtime(&x->v, d);
		x->off += 16;
		return 0;
	case IT_SID: case IT_W_SID: {
		size_t skip = 0;
		if (in == IT_W_SID) {
			/* TOKEN_USER: pointer, u32 attributes (padded to a pointer), then the SID */
			skip = 2 * (size_t)x->psize;
			if (room >= 4 && etl_u32(d) == 0 && room < skip + 8) {
				strbuf_add(&x->v, "", 0);
				x->off += room < 4 ? room : 4;
				return 0;
			}
		}
		if (room < skip + 8)
			return -1;
		n = 8 + 4 * (size_t)d[skip + 1];
		if (room < skip + n)
			return -1;
		put_sid(&x->v, d + skip, n);
		x->off += skip + n;
		return 0;
	}
	case IT_BINARY:
		n = haslen ? len : room;
		if (n > room)
			return -1;
		if (!((p->out == OT_SOCKADDR) && put_sockaddr(&x->v, d, n))) {
			if (p->out == OT_IPV6 && n == 16) {
				char t[INET6_ADDRSTRLEN];
				inet_ntop(AF_INET6, d, t, sizeof t);
				strbuf_add(&x->v, t, strlen(t));
			} else
				bhex(&x->v, d, n);
		}
		x->off += n;
		return 0;
	case IT_CUSTR: case IT_CASTR: case IT_CBINARY:
	case IT_W_CUSTR: case IT_W_CASTR: case IT_W_RCUSTR: case IT_W_RCASTR:
		if (room < 2)
			return -1;
		n = (in == IT_W_RCUSTR || in == IT_W_RCASTR) ? (size_t)(d[0] << 8 | d[1]) : etl_u16(d);
		if (n > room - 2)
			return -1;
		if (in == IT_CBINARY)
			bhex(&x->v, d + 2, n);
		else
			bstr(&x->v, d + 2, n, in == IT_CUSTR || in == IT_W_CUSTR || in == IT_W_RCUSTR);
		x->off += 2 + n;
		return 0;
	case IT_W_NNTUSTR: case IT_W_NNTASTR:
		bstr(&x->v, d, room, in == IT_W_NNTUSTR);
		x->off += room;
		return 0;
	case IT_W_HEXDUMP:
		if (room < 4)
			return -1;
		n = etl_u32(d);
		if (n > room - 4)
			return -1;
		bhex(&x->v, d + 4, n);
		x->off += 4 + n;
		return 0;
	}
	return -1;
}

static int decode_range(struct dec *x, uint32_t start, uint32_t n, const char *prefix, int depth);

/* Element count of property I (1 for a scalar); *ARRAY set when it is an array. */
static int
prop_count(struct dec *x, uint32_t i, uint64_t *count, int *array)
{
	const struct prop *p = &x->e->p[i];
	*array = 0;
	if (p->flags & PF_PARAM_COUNT) {
		if (p->count >= x->e->np || !x->have[p->count])
			return -1;
		*count = x->ival[p->count];
		*array = 1;
	} else {
		*count = p->count;
		if ((p->flags & PF_FIXED_COUNT) || p->count > 1)
			*array = 1;
		else
			*count = 1;
	}
	return 0;
}

static void
emit(struct dec *x, const char *name)
{
	x->fn(x->ctx, name, strbuf_str(&x->v), x->v.len);
}

static int
decode_prop(struct dec *x, uint32_t i, const char *prefix, int depth)
{
	struct prop *p = &x->e->p[i];
	char full[512];
	uint64_t count;
	int array;

	const char *name = p->name;	/* a top-level property's name as it is */
	if (*prefix) {
		/* prefix + name, cut to fit as snprintf would */
		size_t pl = strlen(prefix), nl = p->namelen;
		if (pl > sizeof full - 1)
			pl = sizeof full - 1;
		if (nl > sizeof full - 1 - pl)
			nl = sizeof full - 1 - pl;
		memcpy(full, prefix, pl);
		memcpy(full + pl, p->name, nl);
		full[pl + nl] = '\0';
		name = full;
	} else if (p->namelen > sizeof full - 1) {
		memcpy(full, name, sizeof full - 1);
		full[sizeof full - 1] = '\0';
		name = full;
	}
	if (prop_count(x, i, &count, &array) < 0)
		return -1;
	if (count > x->len + 1 && count > 65535)
		return -1;
	if (p->flags & PF_STRUCT) {
		if (depth >= MAX_DEPTH)
			return -1;
		for (uint64_t k = 0; k < count; k++) {
			char pre[600];
			if (array)
				snprintf(pre, sizeof pre, "%s.%" PRIu64 ".", name, k);
			else
				snprintf(pre, sizeof pre, "%s.", name);
			size_t before = x->off;
			if (decode_range(x, p->in, p->out, pre, depth + 1) < 0)
				return -1;
			if (x->off == before && ++x->values > MAX_VALUES)
				return -1;
		}
		return 0;
	}
	size_t len = p->length;
	int haslen = (p->flags & PF_FIXED_LENGTH) || p->length > 0;
	if (p->flags & PF_PARAM_LENGTH) {
		if (p->length >= x->e->np || !x->have[p->length])
			return -1;
		len = x->ival[p->length];
		haslen = 1;
		if (len > x->len)
			return -1;
	}
	strbuf_reset(&x->v);
	/* character arrays are strings, byte arrays hex */
	if (array && (p->in == IT_U8 || p->in == IT_I8 || (p->in == IT_U16 && p->out == OT_STRING))) {
		size_t bytes = count * (p->in == IT_U16 ? 2 : 1);
		if (bytes > x->len - x->off)
			return -1;
		if (p->out == OT_STRING)
			bstr(&x->v, x->d + x->off, bytes, p->in == IT_U16);
		else
			bhex(&x->v, x->d + x->off, bytes);
		x->off += bytes;
		emit(x, name);
		return 0;
	}
	uint64_t ival = 0;
	size_t isz = int_size(p->in, x->psize);
	for (uint64_t k = 0; k < count; k++) {
		if (++x->values > MAX_VALUES)
			return -1;
		if (k)
			strbuf_add(&x->v, ",", 1);
		if (one_value(x, p, isz, len, haslen, &ival) < 0)
			return -1;
	}
	if (!array && isz) {
		x->ival[i] = ival;
		x->have[i] = 1;
	}
	if (!p->hidden)
		emit(x, name);
	return 0;
}

static int
decode_range(struct dec *x, uint32_t start, uint32_t n, const char *prefix, int depth)
{
	for (uint32_t i = start; i < start + n; i++)
		if (decode_prop(x, i, prefix, depth) < 0)
			return -1;
	return 0;
}

static int
decode_in(const struct tdh_db *db, struct tdh_local *loc, const struct tdh_event *e,
    const uint8_t *data, size_t len, unsigned psize, tdh_field_fn fn, void *ctx)
{
	if (!e || (psize != 4 && psize != 8))
		return -1;
	struct dec x = { .db = db, .e = e, .d = data, .len = data ? len : 0, .psize = psize,
	    .fn = fn, .ctx = ctx, .v = loc->scratch };
	/* most schemas have a few properties: their values on the stack, no allocation per event */
	uint64_t ival[64];
	uint8_t have[64];
	int small = e->np <= 64;
	x.ival = small ? ival : xcalloc(e->np, sizeof *x.ival);
	x.have = small ? have : xcalloc(e->np, 1);
	if (small)
		memset(have, 0, e->np ? e->np : 1);
	int r = decode_range(&x, 0, e->ntop, "", 0);
	if (!small) {
		free(x.ival);
		free(x.have);
	}
	loc->scratch = x.v;	/* (its buffer, grown or not, serves the next event) */
	return r;
}

int
tdh_decode(const struct tdh_db *db, const struct tdh_event *e, const uint8_t *data, size_t len,
    unsigned psize, tdh_field_fn fn, void *ctx)
{
	return decode_in(db, db->own, e, data, len, psize, fn, ctx);
}

static const struct tdh_event *
schema_of(const struct tdh_db *db, struct tdh_local *loc, const struct etl_event *ev)
{
	if (!db || !ev->guid)
		return NULL;
	int classic;
	unsigned id;
	if (ev->hkind == ETL_HK_EVENT) {
		classic = 0;
		id = ev->id;
	} else if (ev->hkind == ETL_HK_FULL || ev->hkind == ETL_HK_INSTANCE) {
		classic = 1;
		id = ev->type;	/* classic events are keyed by their opcode */
	} else
		return NULL;
	struct schema_memo *m = &(loc ? loc : db->own)->smemo;
	if (m->nev == db->nev + 1 && m->classic == classic && m->id == id &&
	    m->version == ev->version && memcmp(m->guid, ev->guid, 16) == 0)
		return m->e;
	m->e = lookup(db, ev->guid, id, ev->version, classic);
	m->nev = db->nev + 1;
	memcpy(m->guid, ev->guid, 16);
	m->id = id;
	m->version = ev->version;
	m->classic = classic;
	return m->e;
}

const char *
tdh_event_label(const struct tdh_db *db, struct tdh_local *loc, const struct etl_event *ev)
{
	const struct tdh_event *e = schema_of(db, loc, ev);
	return e && e->name && *e->name ? e->name : NULL;
}

int
tdh_decode_event(const struct tdh_db *db, struct tdh_local *loc, const struct etl_event *ev,
    tdh_field_fn fn, void *ctx)
{
	const struct tdh_event *e = schema_of(db, loc, ev);
	if (!e)
		return -1;
	return decode_in(db, loc ? loc : db->own, e, ev->payload, ev->plen, ev->hdr64 ? 8 : 4, fn, ctx);
}
