/*
 * esmanifest.c - EventSource manifests carried in the trace (see
 * esmanifest.h): the chunks reassembled per provider, then the subset of
 * the manifest schema an EventSource writes, read by a small XML tag
 * scanner of our own (no DTDs, no namespaces beyond the prefixes in
 * attribute values, entities &amp; &lt; &gt; &quot; &apos; &#N; &#xN;).
 * Each event becomes a TRACE_EVENT_INFO blob (lib/etl/tdhbuild.c) with
 * its task and opcode names, so that tdh names it as TraceEvent does
 * ("TaskExecute/Start", or the task alone for win:Info), and each map an
 * EVENT_MAP_INFO with the string table's names.
 *
 * Bounds: a manifest is at most ESM_MAX_BYTES (the half-read ones
 * ESM_MAX_PENDING together), a template at most
 * MAX_FIELDS fields, a map at most MAX_MAP entries, a name at most
 * MAX_NAME bytes; a chunk out of sequence drops the manifest (counted).
 * Templates with <struct> members are not supported: their events keep
 * their hex payload.
 */
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/strbuf.h"
#include "etl/esmanifest.h"
#include "etl/tdhbuild.h"

#define ESM_MAX_BYTES (16u << 20)
#define MAX_FIELDS 128
#define MAX_MAP 4096
#define MAX_NAME 256
#define MAX_PENDING 256		/* providers with a manifest half read */
#define ESM_MAX_PENDING (32u << 20)	/* and the bytes they hold together */

struct pending {
	uint8_t guid[16];
	uint16_t total, next;
	struct strbuf text;
};

struct esm {
	struct pending *p;
	size_t np, capp;
	struct esm_stats st;
};

struct esm *
esm_new(void)
{
	return xcalloc(1, sizeof(struct esm));
}

void
esm_free(struct esm *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->np; i++)
		strbuf_release(&m->p[i].text);
	free(m->p);
	free(m);
}

const struct esm_stats *
esm_stats(const struct esm *m)
{
	return &m->st;
}

/* ---------- the XML subset ---------- */

/* A tag: its name and the text of its attributes. */
struct tag {
	const char *name, *attrs;
	size_t nlen, alen;
	int close;		/* </name> */
};

/*
 * The next tag at or after *POS in TEXT[0..len); comments, processing
 * instructions and declarations are skipped.  Returns 0 at the end (or
 * on a tag that never closes).
 */
static int
next_tag(const char *text, size_t len, size_t *pos, struct tag *t)
{
	size_t i = *pos;
	for (;;) {
		const char *lt = i < len ? memchr(text + i, '<', len - i) : NULL;
		if (!lt)
			return 0;
		i = (size_t)(lt - text);
		if (len - i >= 4 && memcmp(text + i, "<!--", 4) == 0) {
			size_t k;
			for (k = i + 4; k + 3 <= len && memcmp(text + k, "-->", 3) != 0; k++)
				;
			if (k + 3 > len)
				return 0;
			i = k + 3;
			continue;
		}
		const char *gt = memchr(text + i, '>', len - i);
		if (!gt)
			return 0;
		size_t end = (size_t)(gt - text);
		if (i + 1 < len && (text[i + 1] == '?' || text[i + 1] == '!')) {
			i = end + 1;
			continue;
		}
		size_t s = i + 1;
		t->close = s < end && text[s] == '/';
		if (t->close)
			s++;
		t->name = text + s;
		t->nlen = strcspn(t->name, " \t\r\n/>");
		if (s + t->nlen > end)
			t->nlen = end - s;
		t->attrs = t->name + t->nlen;
		t->alen = end - (s + t->nlen);
		*pos = end + 1;
		return 1;
	}
}

static int
tag_is(const struct tag *t, const char *name)
{
	return t->nlen == strlen(name) && memcmp(t->name, name, t->nlen) == 0;
}

/* Appends the UTF-8 of code point CP (bounded by CAP). */
static size_t
put_utf8(char *out, size_t o, size_t cap, unsigned long cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else if (cp < 0x110000) {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	} else
		return o;
	if (o + n >= cap)
		return o;
	memcpy(out + o, b, n);
	return o + n;
}

/*
 * Attribute NAME of tag T into OUT (entities decoded, at most CAP - 1
 * bytes, NUL-terminated).  Returns 1 if the tag has it.
 */
static int
attr(const struct tag *t, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	const char *a = t->attrs, *end = t->attrs + t->alen;
	while (a < end) {
		while (a < end && (*a == ' ' || *a == '\t' || *a == '\r' || *a == '\n'))
			a++;
		const char *eq = a;
		while (eq < end && *eq != '=' && *eq != ' ')
			eq++;
		if (eq >= end || *eq != '=' || eq + 1 >= end || (eq[1] != '"' && eq[1] != '\''))
			return 0;
		char q = eq[1];
		const char *v = eq + 2, *ve = v;
		while (ve < end && *ve != q)
			ve++;
		if (ve >= end)
			return 0;
		if ((size_t)(eq - a) == nl && memcmp(a, name, nl) == 0) {
			size_t o = 0;
			for (const char *s = v; s < ve; s++) {
				if (*s != '&') {
					if (o + 1 < cap)
						out[o++] = *s;
					continue;
				}
				const char *semi = memchr(s, ';', (size_t)(ve - s));
				if (!semi || semi - s > 10) {
					if (o + 1 < cap)
						out[o++] = '&';
					continue;
				}
				size_t el = (size_t)(semi - s - 1);
				const char *e = s + 1;
				char ch = 0;
				if (el == 3 && memcmp(e, "amp", 3) == 0)
					ch = '&';
				else if (el == 2 && memcmp(e, "lt", 2) == 0)
					ch = '<';
				else if (el == 2 && memcmp(e, "gt", 2) == 0)
					ch = '>';
				else if (el == 4 && memcmp(e, "quot", 4) == 0)
					ch = '"';
				else if (el == 4 && memcmp(e, "apos", 4) == 0)
					ch = '\'';
				else if (el >= 2 && e[0] == '#') {
					char num[12];
					memcpy(num, e + 1, el - 1);
					num[el - 1] = '\0';
					unsigned long cp = num[0] == 'x' ? strtoul(num + 1, NULL, 16) :
					    strtoul(num, NULL, 10);
					o = put_utf8(out, o, cap, cp);
					s = semi;
					continue;
				}
				if (!ch) {
					if (o + 1 < cap)
						out[o++] = '&';
					continue;
				}
				if (o + 1 < cap)
					out[o++] = ch;
				s = semi;
			}
			out[o] = '\0';
			return 1;
		}
		a = ve + 1;
	}
	return 0;
}

/* ---------- what a manifest holds ---------- */

struct named {
	char *name;
	uint32_t value;
};

struct field {
	char name[MAX_NAME], map[MAX_NAME], count[MAX_NAME], length[MAX_NAME];
	uint16_t in;
};

struct template {
	char tid[MAX_NAME];
	struct field *f;
	unsigned nf;
	int unsupported;	/* <struct> members, or too many fields */
};

struct emap {
	char name[MAX_NAME];
	int bitmap;
	uint32_t *values;
	char **msgs;		/* "$(string.ID)" or the text itself */
	size_t n, cap;
};

struct event {
	uint16_t id;
	uint8_t version, level, opcode;
	uint16_t task;
	char task_name[MAX_NAME], opcode_name[MAX_NAME], tmpl[MAX_NAME];
};

struct manifest {
	char provider[MAX_NAME];
	struct named *tasks, *opcodes;
	size_t ntasks, captasks, nopcodes, capopcodes;
	struct named *strs;	/* string table: name = id, value = index into strval */
	char **strval;
	size_t nstrs, capstrs;
	struct template *tm;
	size_t ntm, captm;
	struct emap *maps;
	size_t nmaps, capmaps;
	struct event *ev;
	size_t nev, capev;
};

static void
add_named(struct named **arr, size_t *n, size_t *cap, const char *name, uint32_t value)
{
	XGROW(*arr, *n, *cap, 16);
	(*arr)[*n].name = xstrdup(name);
	(*arr)[(*n)++].value = value;
}

static const struct named *
find_named(const struct named *arr, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(arr[i].name, name) == 0)
			return &arr[i];
	return NULL;
}

static void
free_manifest(struct manifest *m)
{
	for (size_t i = 0; i < m->ntasks; i++)
		free(m->tasks[i].name);
	for (size_t i = 0; i < m->nopcodes; i++)
		free(m->opcodes[i].name);
	for (size_t i = 0; i < m->nstrs; i++) {
		free(m->strs[i].name);
		free(m->strval[i]);
	}
	for (size_t i = 0; i < m->ntm; i++)
		free(m->tm[i].f);
	for (size_t i = 0; i < m->nmaps; i++) {
		for (size_t k = 0; k < m->maps[i].n; k++)
			free(m->maps[i].msgs[k]);
		free(m->maps[i].values);
		free(m->maps[i].msgs);
	}
	free(m->tasks);
	free(m->opcodes);
	free(m->strs);
	free(m->strval);
	free(m->tm);
	free(m->maps);
	free(m->ev);
}

/* The manifest's in-types ("win:Int32") as TDH's numbers; 0 for an unknown one. */
static uint16_t
in_type(const char *s)
{
	static const char *const names[] = { NULL, "UnicodeString", "AnsiString", "Int8", "UInt8",
	    "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64", "Float", "Double", "Boolean",
	    "Binary", "GUID", "Pointer", "FILETIME", "SYSTEMTIME", "SID", "HexInt32", "HexInt64" };
	if (strncmp(s, "win:", 4) == 0)
		s += 4;
	for (uint16_t i = 1; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return 0;
}

/* The standard opcodes (winmeta.xml) an EventSource names without defining them. */
static int
std_opcode(const char *s, uint32_t *v)
{
	static const struct { const char *name; uint32_t v; } ops[] = {
		{ "win:Info", 0 }, { "win:Start", 1 }, { "win:Stop", 2 }, { "win:DC_Start", 3 },
		{ "win:DC_Stop", 4 }, { "win:Extension", 5 }, { "win:Reply", 6 }, { "win:Resume", 7 },
		{ "win:Suspend", 8 }, { "win:Send", 9 }, { "win:Receive", 240 },
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(s, ops[i].name) == 0) {
			*v = ops[i].v;
			return 1;
		}
	return 0;
}

static uint8_t
level_of(const char *s)
{
	static const char *const names[] = { "win:LogAlways", "win:Critical", "win:Error",
	    "win:Warning", "win:Informational", "win:Verbose" };
	for (uint8_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return (uint8_t)strtoul(s, NULL, 0);
}

/* One pass over the tags: everything the manifest defines, names resolved later. */
static int
read_manifest(struct manifest *m, const char *text, size_t len)
{
	size_t pos = 0;
	struct tag t;
	char v[MAX_NAME], w[MAX_NAME];
	struct template *cur_tm = NULL;
	struct emap *cur_map = NULL;
	int seen_provider = 0;

	while (next_tag(text, len, &pos, &t)) {
		if (t.close) {
			if (tag_is(&t, "template"))
				cur_tm = NULL;
			else if (tag_is(&t, "valueMap") || tag_is(&t, "bitMap"))
				cur_map = NULL;
			continue;
		}
		if (tag_is(&t, "provider")) {
			if (seen_provider++)
				break;	/* one provider per EventSource manifest */
			if (attr(&t, "name", v, sizeof v))
				memcpy(m->provider, v, sizeof v);
		} else if (tag_is(&t, "task") && attr(&t, "name", v, sizeof v) && attr(&t, "value", w, sizeof w)) {
			add_named(&m->tasks, &m->ntasks, &m->captasks, v, (uint32_t)strtoul(w, NULL, 0));
		} else if (tag_is(&t, "opcode") && attr(&t, "name", v, sizeof v) &&
		    attr(&t, "value", w, sizeof w)) {
			add_named(&m->opcodes, &m->nopcodes, &m->capopcodes, v, (uint32_t)strtoul(w, NULL, 0));
		} else if ((tag_is(&t, "valueMap") || tag_is(&t, "bitMap")) && attr(&t, "name", v, sizeof v)) {
			XGROW(m->maps, m->nmaps, m->capmaps, 16);
			cur_map = &m->maps[m->nmaps++];
			memset(cur_map, 0, sizeof *cur_map);
			memcpy(cur_map->name, v, sizeof v);
			cur_map->bitmap = tag_is(&t, "bitMap");
		} else if (tag_is(&t, "map") && cur_map && cur_map->n < MAX_MAP &&
		    attr(&t, "value", v, sizeof v) && attr(&t, "message", w, sizeof w)) {
			if (cur_map->n == cur_map->cap) {
				cur_map->cap = cur_map->cap ? cur_map->cap * 2 : 16;
				cur_map->values = xrealloc(cur_map->values, cur_map->cap * sizeof *cur_map->values);
				cur_map->msgs = xrealloc(cur_map->msgs, cur_map->cap * sizeof *cur_map->msgs);
			}
			cur_map->values[cur_map->n] = (uint32_t)strtoul(v, NULL, 0);
			cur_map->msgs[cur_map->n++] = xstrdup(w);
		} else if (tag_is(&t, "template") && attr(&t, "tid", v, sizeof v)) {
			XGROW(m->tm, m->ntm, m->captm, 16);
			cur_tm = &m->tm[m->ntm++];
			memset(cur_tm, 0, sizeof *cur_tm);
			memcpy(cur_tm->tid, v, sizeof v);
		} else if (tag_is(&t, "struct") && cur_tm) {
			cur_tm->unsupported = 1;
		} else if (tag_is(&t, "data") && cur_tm && !cur_tm->unsupported) {
			if (cur_tm->nf == MAX_FIELDS || !attr(&t, "name", v, sizeof v) ||
			    !attr(&t, "inType", w, sizeof w) || !in_type(w)) {
				cur_tm->unsupported = 1;
				continue;
			}
			cur_tm->f = xrealloc(cur_tm->f, (cur_tm->nf + 1) * sizeof *cur_tm->f);
			struct field *f = &cur_tm->f[cur_tm->nf++];
			memset(f, 0, sizeof *f);
			memcpy(f->name, v, sizeof v);
			f->in = in_type(w);
			attr(&t, "map", f->map, sizeof f->map);
			attr(&t, "count", f->count, sizeof f->count);
			attr(&t, "length", f->length, sizeof f->length);
		} else if (tag_is(&t, "event") && attr(&t, "value", v, sizeof v)) {
			XGROW(m->ev, m->nev, m->capev, 16);
			struct event *e = &m->ev[m->nev++];
			memset(e, 0, sizeof *e);
			e->id = (uint16_t)strtoul(v, NULL, 0);
			if (attr(&t, "version", w, sizeof w))
				e->version = (uint8_t)strtoul(w, NULL, 0);
			if (attr(&t, "level", w, sizeof w))
				e->level = level_of(w);
			attr(&t, "task", e->task_name, sizeof e->task_name);
			attr(&t, "opcode", e->opcode_name, sizeof e->opcode_name);
			attr(&t, "template", e->tmpl, sizeof e->tmpl);
		} else if (tag_is(&t, "string") && attr(&t, "id", v, sizeof v) && attr(&t, "value", w, sizeof w)) {
			XGROW(m->strs, m->nstrs, m->capstrs, 16);
			m->strval = xrealloc(m->strval, m->capstrs * sizeof *m->strval);
			m->strs[m->nstrs].name = xstrdup(v);
			m->strs[m->nstrs].value = (uint32_t)m->nstrs;
			m->strval[m->nstrs++] = xstrdup(w);
		}
	}
	return seen_provider ? 0 : -1;
}

/* A message: "$(string.ID)" from the string table, else the text as written. */
static const char *
message(const struct manifest *m, const char *msg)
{
	size_t n = strlen(msg);
	if (n > 10 && strncmp(msg, "$(string.", 9) == 0 && msg[n - 1] == ')') {
		for (size_t i = 0; i < m->nstrs; i++)
			if (strlen(m->strs[i].name) == n - 10 && memcmp(m->strs[i].name, msg + 9, n - 10) == 0)
				return m->strval[m->strs[i].value];
	}
	return msg;
}

static const struct template *
find_template(const struct manifest *m, const char *tid)
{
	for (size_t i = 0; i < m->ntm; i++)
		if (strcmp(m->tm[i].tid, tid) == 0)
			return &m->tm[i];
	return NULL;
}

/* Field index of NAME among the first N of T, or -1. */
static int
field_index(const struct template *t, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(t->f[i].name, name) == 0)
			return (int)i;
	return -1;
}

enum { PF_PARAM_LENGTH = 0x2, PF_PARAM_COUNT = 0x4 };

/* Event E's schema into DB; 0 stored, -1 not (unsupported or unknown template). */
static int
store_event(struct tdh_db *db, const uint8_t *guid, const struct manifest *m, const struct event *e,
    uint8_t **blob, size_t *cap)
{
	const struct template *t = NULL;
	if (*e->tmpl) {
		t = find_template(m, e->tmpl);
		if (!t || t->unsupported)
			return -1;
	}
	unsigned nf = t ? t->nf : 0;
	struct tdh_prop_def *props = xcalloc(nf ? nf : 1, sizeof *props);
	for (unsigned i = 0; i < nf; i++) {
		const struct field *f = &t->f[i];
		props[i].name = f->name;
		props[i].in = f->in;
		props[i].count = 1;
		props[i].map = *f->map ? f->map : NULL;
		int k;
		if (*f->count) {
			if ((k = field_index(t, i, f->count)) >= 0) {
				props[i].flags |= PF_PARAM_COUNT;
				props[i].count = (uint16_t)k;
			} else
				props[i].count = (uint16_t)strtoul(f->count, NULL, 0);
		}
		if (*f->length) {
			if ((k = field_index(t, i, f->length)) >= 0) {
				props[i].flags |= PF_PARAM_LENGTH;
				props[i].length = (uint16_t)k;
			} else
				props[i].length = (uint16_t)strtoul(f->length, NULL, 0);
		}
	}
	uint32_t opcode = 0;
	const struct named *op = find_named(m->opcodes, m->nopcodes, e->opcode_name);
	if (op)
		opcode = op->value;
	else if (*e->opcode_name)
		std_opcode(e->opcode_name, &opcode);
	const struct named *task = find_named(m->tasks, m->ntasks, e->task_name);
	struct tdh_event_def d = { guid, e->id, e->version, 0, e->level, (uint8_t)opcode,
	    (uint16_t)(task ? task->value : 0), 0, m->provider, *e->task_name ? e->task_name : NULL,
	    *e->opcode_name ? e->opcode_name : NULL, NULL, props, nf, nf };
	size_t len = tdh_build_event_info(&d, NULL, 0);
	if (len > *cap) {
		*cap = len;
		*blob = xrealloc(*blob, *cap);
	}
	tdh_build_event_info(&d, *blob, *cap);
	free(props);
	return tdh_add_event_info(db, *blob, len);
}

static void
store_map(struct tdh_db *db, const uint8_t *guid, const struct manifest *m, const struct emap *e,
    uint8_t **blob, size_t *cap)
{
	const char **names = xcalloc(e->n ? e->n : 1, sizeof *names);
	for (size_t k = 0; k < e->n; k++)
		names[k] = message(m, e->msgs[k]);
	size_t len = tdh_build_map_info(guid, e->name, e->bitmap, e->values, names, e->n, NULL, 0);
	if (len > *cap) {
		*cap = len;
		*blob = xrealloc(*blob, *cap);
	}
	tdh_build_map_info(guid, e->name, e->bitmap, e->values, names, e->n, *blob, *cap);
	tdh_add_map_info(db, *blob, len);
	free(names);
}

int
esm_parse(struct tdh_db *db, const uint8_t *guid, const char *text, size_t len)
{
	struct manifest m;
	memset(&m, 0, sizeof m);
	if (len > ESM_MAX_BYTES || read_manifest(&m, text, len) < 0) {
		free_manifest(&m);
		return -1;
	}
	uint8_t *blob = NULL;
	size_t cap = 0;
	int stored = 0;
	for (size_t i = 0; i < m.nmaps; i++)
		store_map(db, guid, &m, &m.maps[i], &blob, &cap);
	for (size_t i = 0; i < m.nev; i++)
		if (store_event(db, guid, &m, &m.ev[i], &blob, &cap) == 0)
			stored++;
	free(blob);
	free_manifest(&m);
	return stored;
}

/* ---------- the chunks ---------- */

static struct pending *
pending_of(struct esm *m, const uint8_t *guid)
{
	for (size_t i = 0; i < m->np; i++)
		if (memcmp(m->p[i].guid, guid, 16) == 0)
			return &m->p[i];
	if (m->np == MAX_PENDING)
		return NULL;
	XGROW(m->p, m->np, m->capp, 16);
	struct pending *p = &m->p[m->np++];
	memset(p, 0, sizeof *p);
	memcpy(p->guid, guid, 16);
	return p;
}

/* What the half-read manifests hold: bounded, so that a hostile trace cannot make memory grow. */
static size_t
pending_bytes(const struct esm *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->np; i++)
		n += m->p[i].text.len;
	return n;
}

int
esm_collect(struct esm *m, struct tdh_db *db, const struct etl_event *ev)
{
	if (ev->hkind != ETL_HK_EVENT || ev->id != 0xfffe || ev->opcode != 0xfe || !ev->guid)
		return 0;
	const uint8_t *p = ev->payload;
	if (ev->plen < 8 || p[0] != 1 || p[3] != 0x5b) {
		m->st.damaged++;	/* not an XML manifest envelope */
		return 1;
	}
	uint16_t total = etl_u16(p + 4), number = etl_u16(p + 6);
	struct pending *q = pending_of(m, ev->guid);
	if (!q) {
		m->st.damaged++;
		return 1;
	}
	if (number == 0) {
		q->text.len = 0;
		q->total = total;
		q->next = 0;
	}
	if (total == 0 || total != q->total || number != q->next ||
	    q->text.len + (ev->plen - 8) > ESM_MAX_BYTES || pending_bytes(m) + (ev->plen - 8) > ESM_MAX_PENDING) {
		/* out of sequence (a lost chunk): this copy of the manifest is lost */
		if (q->total)
			m->st.damaged++;
		q->total = 0;
		q->text.len = 0;
		return 1;
	}
	strbuf_add(&q->text, p + 8, ev->plen - 8);
	if (++q->next < total)
		return 1;
	if (esm_parse(db, ev->guid, q->text.s, q->text.len) < 0)
		m->st.damaged++;
	else
		m->st.manifests++;
	q->total = 0;
	q->text.len = 0;
	return 1;
}
