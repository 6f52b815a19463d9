/*
 * flame.c - flame graph tree, layout, colours and the SVG writer.
 *
 * The tree: nodes in one array (a parent always has a smaller index
 * than its children, so inclusive totals are one backwards pass), a
 * hash table keyed by (parent, name) for merging, and the current path
 * so that a line sharing a prefix with the previous one costs only a
 * byte comparison per shared frame.
 *
 * The SVG is compact: per box one <g> with the full name in <title>, a
 * <rect> carrying the weight in "v" (and the delta in "d"), and a
 * <text> only when a label fits.  Tooltip text (weight, percent with
 * thousands separators) is computed by the embedded script on hover,
 * so it is not repeated per box.  Names are written only through
 * xml_escape(), never into the script.
 */
#include "report/flame.h"
#include "base/escape.h"
#include "report/numfmt.h"
#include "base/cli.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fnode {
	uint32_t parent;
	uint32_t child;		/* first child */
	uint32_t last;		/* last child (flame charts append here) */
	uint32_t sib;		/* next sibling */
	uint32_t name;		/* interned name id */
	uint32_t depth;
	double self, total;	/* weight ending here; inclusive */
	double dself, dtotal;	/* differential delta: leaf; inclusive */
};

struct frame_ref {
	char *p;
	size_t n;
};

struct flame {
	struct flame_opts o;
	struct fnode *nodes;
	size_t nnodes, capnodes;
	/* interned frame names: few and hot, so lookups stay in cache */
	char *names;
	size_t namelen, namecap;
	uint32_t *nm_off, *nm_len, *nm_hash;
	size_t nnames, capnames;
	uint32_t *ntab;		/* name id + 1, 0 = empty */
	size_t nmask;
	/* (parent, name) -> child; the key is in the slot, so probing never touches nodes */
	struct nslot { uint32_t parent, name, id; } *table;	/* id 0 = empty */
	size_t tabmask;
	uint32_t *path;		/* nodes of the previous line, by depth */
	size_t pathlen, pathcap;
	struct frame_ref *fr;
	size_t frcap;
	int is_diff;
	/*
	 * Whole-line cache: unsorted, unmerged input (raw collapsed samples)
	 * repeats the same stacks; a repeated line goes straight to its leaf.
	 * Turned off (and freed) when lines rarely repeat, as in merged input.
	 */
	struct lslot { uint64_t h; uint64_t off; uint32_t len, leaf; } *ltab;
	size_t lmask, nlines;
	char *larena;
	size_t llen, lcap;
	int lcache;		/* 1 on, 0 off */
	uint64_t lseen, lhits;
	/* palette file: name -> colour */
	struct palmap *pal;
};

#define NIL 0u			/* no node (node 0 is the root, never a child) */

/* ------------------------------------------------------------------ */
/* hashing                                                             */

static uint64_t
hash_bytes(const char *s, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull), w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	return h;
}

/* ------------------------------------------------------------------ */
/* palette file: "name->rgb(r,g,b)" lines, as flamegraph.pl --cp       */

struct palent {
	char *name;
	size_t len;
	unsigned char rgb[3];
	int used;
};

struct palmap {
	struct palent *e;
	size_t n, cap;
	uint32_t *tab;
	size_t mask;
};

static struct palent *
pal_find(struct palmap *m, const char *name, size_t len, int add)
{
	size_t i = (size_t)hash_bytes(name, len, 7) & m->mask;

	while (m->tab[i]) {
		struct palent *e = &m->e[m->tab[i] - 1];

		if (e->len == len && memcmp(e->name, name, len) == 0)
			return e;
		i = (i + 1) & m->mask;
	}
	if (!add)
		return NULL;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->e = xrealloc(m->e, m->cap * sizeof(*m->e));
	}
	m->e[m->n].name = xstrndup(name, len);
	m->e[m->n].len = len;
	m->e[m->n].used = 0;
	m->tab[i] = (uint32_t)++m->n;
	if (2 * m->n > m->mask) {	/* grow and rehash */
		size_t k, j;

		m->mask = 2 * m->mask + 1;
		free(m->tab);
		m->tab = xcalloc(m->mask + 1, sizeof(*m->tab));
		for (k = 0; k < m->n; k++) {
			j = (size_t)hash_bytes(m->e[k].name, m->e[k].len, 7) & m->mask;
			while (m->tab[j])
				j = (j + 1) & m->mask;
			m->tab[j] = (uint32_t)(k + 1);
		}
	}
	return &m->e[m->n - 1];
}

static struct palmap *
pal_load(const char *path)
{
	struct palmap *m = xcalloc(1, sizeof(*m));
	FILE *fp;
	char line[8192];
	unsigned long lineno = 0;

	m->mask = 1023;
	m->tab = xcalloc(m->mask + 1, sizeof(*m->tab));
	if ((fp = fopen(path, "r")) == NULL) {
		if (errno != ENOENT)
			cli_warn("%s: %s", path, strerror(errno));
		return m;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *arrow;
		unsigned r, g, b;
		struct palent *e;
		size_t n = strlen(line);

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		arrow = strstr(line, "->rgb(");
		if (arrow == NULL || sscanf(arrow + 6, "%u,%u,%u", &r, &g, &b) != 3 ||
		    r > 255 || g > 255 || b > 255) {
			if (n > 0)
				cli_warn("%s:%lu: not a palette line (name->rgb(r,g,b)), ignored",
				    path, lineno);
			continue;
		}
		e = pal_find(m, line, (size_t)(arrow - line), 1);
		e->rgb[0] = (unsigned char)r;
		e->rgb[1] = (unsigned char)g;
		e->rgb[2] = (unsigned char)b;
		e->used = 1;
	}
	fclose(fp);
	return m;
}

static int
palent_cmp(const void *a, const void *b)
{
	const struct palent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void
pal_save(struct palmap *m, const char *path)
{
	FILE *fp = fopen(path, "w");
	size_t i;

	if (fp == NULL) {
		cli_warn("%s: %s (palette not saved)", path, strerror(errno));
		return;
	}
	if (m->n > 1)
		qsort(m->e, m->n, sizeof(*m->e), palent_cmp);
	for (i = 0; i < m->n; i++) {
		/* a name with a newline cannot be stored in this format */
		if (memchr(m->e[i].name, '\n', m->e[i].len))
			continue;
		fwrite(m->e[i].name, 1, m->e[i].len, fp);
		fprintf(fp, "->rgb(%u,%u,%u)\n", m->e[i].rgb[0], m->e[i].rgb[1],
		    m->e[i].rgb[2]);
	}
	if (fclose(fp) != 0)
		cli_warn("%s: write error", path);
}

static void
pal_free(struct palmap *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++)
		free(m->e[i].name);
	free(m->e);
	free(m->tab);
	free(m);
}

/* ------------------------------------------------------------------ */
/* colours                                                             */

static const char *const palettes[] = {
	"hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "python",
	"rust", "etw", "red", "green", "blue", "aqua", "yellow", "purple",
	"orange", NULL
};

int
flame_palette_known(const char *p)
{
	int i;

	for (i = 0; palettes[i]; i++)
		if (strcmp(p, palettes[i]) == 0)
			return 1;
	return 0;
}

static int
has_sub(const char *s, size_t n, const char *sub)
{
	size_t k = strlen(sub), i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(s + i, sub, k) == 0)
			return 1;
	return 0;
}

static int
ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static void
set_rgb(unsigned char rgb[3], double r, double g, double b)
{
	rgb[0] = (unsigned char)r;
	rgb[1] = (unsigned char)g;
	rgb[2] = (unsigned char)b;
}

/* The single-hue palettes of flamegraph.pl, V1 V2 V3 in [0,1). */
static void
hue(const char *h, double v1, double v2, double v3, unsigned char rgb[3])
{
	if (strcmp(h, "hot") == 0)
		set_rgb(rgb, 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
	else if (strcmp(h, "mem") == 0)
		set_rgb(rgb, 0, 190 + (int)(50 * v2), (int)(210 * v1));
	else if (strcmp(h, "io") == 0)
		set_rgb(rgb, 80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v2));
	else if (strcmp(h, "red") == 0)
		set_rgb(rgb, 200 + (int)(55 * v1), 50 + (int)(80 * v1), 50 + (int)(80 * v1));
	else if (strcmp(h, "green") == 0)
		set_rgb(rgb, 50 + (int)(60 * v1), 200 + (int)(55 * v1), 50 + (int)(60 * v1));
	else if (strcmp(h, "blue") == 0)
		set_rgb(rgb, 80 + (int)(60 * v1), 80 + (int)(60 * v1), 205 + (int)(50 * v1));
	else if (strcmp(h, "yellow") == 0)
		set_rgb(rgb, 175 + (int)(55 * v1), 175 + (int)(55 * v1), 50 + (int)(20 * v1));
	else if (strcmp(h, "purple") == 0)
		set_rgb(rgb, 190 + (int)(65 * v1), 80 + (int)(60 * v1), 190 + (int)(65 * v1));
	else if (strcmp(h, "aqua") == 0)
		set_rgb(rgb, 50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
	else if (strcmp(h, "orange") == 0)
		set_rgb(rgb, 190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
	else
		set_rgb(rgb, 160, 160, 160);
}

/* Which annotation suffix (_[k] _[j] _[i] _[w]) NAME carries, or 0. */
static int
annotation(const char *s, size_t n)
{
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    strchr("kjiw", s[n - 2]))
		return s[n - 2];
	return 0;
}

/* The palette's choice of hue for a name (multi-hue palettes). */
static const char *
pick_hue(const char *pal, const char *s, size_t n, int ann)
{
	if (strcmp(pal, "wakeup") == 0)
		return "aqua";
	if (strcmp(pal, "chain") == 0)
		return ann == 'w' ? "aqua" : "blue";
	if (strcmp(pal, "java") == 0 || strcmp(pal, "js") == 0 ||
	    strcmp(pal, "perl") == 0) {
		if (ann == 'k')
			return "orange";
		if (ann == 'j')
			return "green";
		if (ann == 'i')
			return "aqua";
		if (strcmp(pal, "perl") == 0)
			return has_sub(s, n, "::") ? "yellow" :
			    (has_sub(s, n, ".pm") || has_sub(s, n, ".pl")) ? "green" : "red";
		if (strcmp(pal, "js") == 0)
			return has_sub(s, n, "/") ? "green" :
			    has_sub(s, n, "::") ? "yellow" : "red";
		return (has_sub(s, n, "/") || (n > 5 && (memcmp(s, "java.", 5) == 0 ||
		    memcmp(s, "org.", 4) == 0 || memcmp(s, "com.", 4) == 0))) ?
		    "green" : has_sub(s, n, "::") ? "yellow" : "red";
	}
	if (strcmp(pal, "python") == 0)
		return has_sub(s, n, "site-packages") ? "aqua" :
		    (has_sub(s, n, ".py") || has_sub(s, n, "python")) ? "yellow" : "red";
	if (strcmp(pal, "rust") == 0)
		return (n >= 5 && (memcmp(s, "core:", 5) == 0 || memcmp(s, "std::", 5) == 0 ||
		    (n >= 6 && memcmp(s, "alloc:", 6) == 0))) ? "orange" :
		    has_sub(s, n, "::") ? "aqua" : "red";
	if (strcmp(pal, "etw") == 0) {
		/* Windows frames "module!function": kernel, managed, native */
		const char *bang = memchr(s, '!', n);
		size_t ml = bang ? (size_t)(bang - s) : n;

		if (ann == 'k' || ends_with(s, ml, ".sys") || ends_with(s, ml, ".SYS") ||
		    (ml == 12 && memcmp(s, "ntoskrnl.exe", 12) == 0) ||
		    (ml == 7 && memcmp(s, "hal.dll", 7) == 0))
			return "orange";
		if (ann == 'j' || ends_with(s, ml, ".ni.dll") ||
		    (bang && ml == 12 && memcmp(s, "mscorlib.dll", 12) == 0) ||
		    (bang && (has_sub(bang, n - ml, "System.") || has_sub(bang, n - ml, "Microsoft."))))
			return "green";
		if (ml == 1 && s[0] == '?')
			return "grey";
		return "hot";
	}
	return pal;
}

int
flame_color(const char *pal, const char *s, size_t n, unsigned char rgb[3])
{
	int ann;
	uint64_t h;
	double v1, v2, v3;
	const char *hname;

	if (!flame_palette_known(pal))
		return -1;
	ann = annotation(s, n);
	if ((n == 1 && s[0] == '-') || (n == 2 && s[0] == '-' && s[1] == '-')) {
		set_rgb(rgb, 160, 160, 160);
		return 0;
	}
	if (ann)
		n -= 4;
	/* stable per name: the same function has the same colour everywhere */
	h = hash_bytes(s, n, 0x5eed);
	v1 = (double)(h & 0xffff) / 65536.0;
	v2 = (double)((h >> 16) & 0xffff) / 65536.0;
	v3 = (double)((h >> 32) & 0xffff) / 65536.0;
	hname = pick_hue(pal, s, n, ann);
	hue(hname, v1, v2, v3, rgb);
	return 0;
}

/* ------------------------------------------------------------------ */
/* tree                                                                */

void
flame_opts_init(struct flame_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->countname = "samples";
	o->nametype = "Function:";
	o->fonttype = "Verdana";
	o->palette = "hot";
	o->searchcolor = "#e600e6";
	o->width = 1200;
	o->frameheight = 16;
	o->fontsize = 12;
	o->fontwidth = 0.59;
	o->minwidth = 0.1;
	o->factor = 1;
}

/* The id of name S[0..N), interned on first use. */
static uint32_t
intern(struct flame *f, const char *s, size_t n)
{
	uint32_t h = (uint32_t)hash_bytes(s, n, 0x9e37), id;
	size_t i = h & f->nmask, k, j;

	while ((id = f->ntab[i]) != 0) {
		id--;
		if (f->nm_hash[id] == h && f->nm_len[id] == n &&
		    memcmp(f->names + f->nm_off[id], s, n) == 0)
			return id;
		i = (i + 1) & f->nmask;
	}
	if (f->nnames == f->capnames) {
		f->capnames = f->capnames ? 2 * f->capnames : 1024;
		f->nm_off = xrealloc(f->nm_off, f->capnames * sizeof(*f->nm_off));
		f->nm_len = xrealloc(f->nm_len, f->capnames * sizeof(*f->nm_len));
		f->nm_hash = xrealloc(f->nm_hash, f->capnames * sizeof(*f->nm_hash));
	}
	if (f->namelen + n >= 0xfffffff0u)
		cli_fatal("flame graph: more than 4 GB of frame names");
	if (f->namelen + n > f->namecap) {
		while (f->namelen + n > f->namecap)
			f->namecap *= 2;
		f->names = xrealloc(f->names, f->namecap);
	}
	memcpy(f->names + f->namelen, s, n);
	id = (uint32_t)f->nnames++;
	f->nm_off[id] = (uint32_t)f->namelen;
	f->nm_len[id] = (uint32_t)n;
	f->nm_hash[id] = h;
	f->namelen += n;
	f->ntab[i] = id + 1;
	if (4 * f->nnames > 3 * f->nmask) {	/* 75% full: probes stay short, the table small */
		free(f->ntab);
		f->nmask = 2 * f->nmask + 1;
		f->ntab = xcalloc(f->nmask + 1, sizeof(*f->ntab));
		for (k = 0; k < f->nnames; k++) {
			j = f->nm_hash[k] & f->nmask;
			while (f->ntab[j])
				j = (j + 1) & f->nmask;
			f->ntab[j] = (uint32_t)(k + 1);
		}
	}
	return id;
}

static const char *
node_name(const struct flame *f, uint32_t id, size_t *len)
{
	if (id == 0) {
		*len = 3;
		return "all";
	}
	*len = f->nm_len[f->nodes[id].name];
	return f->names + f->nm_off[f->nodes[id].name];
}

static uint32_t
new_node(struct flame *f, uint32_t parent, uint32_t name)
{
	struct fnode *n;

	if (f->nnodes == f->capnodes) {
		f->capnodes *= 2;
		f->nodes = xrealloc(f->nodes, f->capnodes * sizeof(*f->nodes));
	}
	if (f->nnodes >= 0xfffffff0u)
		cli_fatal("flame graph: more than 4 billion frames");
	n = &f->nodes[f->nnodes];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->name = name;
	n->depth = f->nodes[parent].depth + 1;
	/* append to the parent's children */
	if (f->nodes[parent].last)
		f->nodes[f->nodes[parent].last].sib = (uint32_t)f->nnodes;
	else
		f->nodes[parent].child = (uint32_t)f->nnodes;
	f->nodes[parent].last = (uint32_t)f->nnodes;
	return (uint32_t)f->nnodes++;
}

static size_t
slot_hash(uint32_t parent, uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 29));
}

/*
 * Doubles the table, filled again from the nodes (every node but the
 * root is in it): the old table is freed first, so the two never live
 * at once (at 10 M nodes the old one is 100 MB more at the peak).
 */
static void
table_grow(struct flame *f)
{
	size_t i, j, newmask = f->tabmask * 2 + 1;

	free(f->table);
	f->table = xcalloc(newmask + 1, sizeof(*f->table));
	f->tabmask = newmask;
	for (i = 1; i < f->nnodes; i++) {
		j = slot_hash(f->nodes[i].parent, f->nodes[i].name) & newmask;
		while (f->table[j].id)
			j = (j + 1) & newmask;
		f->table[j].parent = f->nodes[i].parent;
		f->table[j].name = f->nodes[i].name;
		f->table[j].id = (uint32_t)i;
	}
}

static int
name_eq(const struct flame *f, uint32_t id, const char *s, size_t n)
{
	uint32_t nm = f->nodes[id].name;

	return f->nm_len[nm] == n && memcmp(f->names + f->nm_off[nm], s, n) == 0;
}

/* The child of PARENT named S, created if absent. */
static uint32_t
child(struct flame *f, uint32_t parent, const char *s, size_t n)
{
	uint32_t name = intern(f, s, n), id;
	size_t i;

	if (f->o.flamechart) {
		/* time order: only the most recent child may be continued */
		id = f->nodes[parent].last;
		if (id != NIL && f->nodes[id].name == name)
			return id;
		return new_node(f, parent, name);
	}
	i = slot_hash(parent, name) & f->tabmask;
	while (f->table[i].id != 0) {
		if (f->table[i].parent == parent && f->table[i].name == name)
			return f->table[i].id;
		i = (i + 1) & f->tabmask;
	}
	id = new_node(f, parent, name);
	f->table[i].parent = parent;
	f->table[i].name = name;
	f->table[i].id = id;
	if (4 * f->nnodes > 3 * f->tabmask)	/* 75% full, as the names */
		table_grow(f);
	return id;
}

struct flame *
flame_new(const struct flame_opts *o)
{
	struct flame *f = xcalloc(1, sizeof(*f));

	f->o = *o;
	f->capnodes = 4096;
	f->nodes = xmalloc(f->capnodes * sizeof(*f->nodes));
	f->namecap = 1 << 16;
	f->names = xmalloc(f->namecap);
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	f->nnodes = 1;		/* the root, "all" */
	f->tabmask = (1 << 14) - 1;
	f->table = xcalloc(f->tabmask + 1, sizeof(*f->table));
	f->nmask = (1 << 12) - 1;
	f->ntab = xcalloc(f->nmask + 1, sizeof(*f->ntab));
	f->pathcap = 256;
	f->path = xmalloc(f->pathcap * sizeof(*f->path));
	f->frcap = 256;
	f->fr = xmalloc(f->frcap * sizeof(*f->fr));
	if (!o->flamechart) {
		f->lcache = 1;
		f->lmask = (1 << 14) - 1;
		f->ltab = xcalloc(f->lmask + 1, sizeof(*f->ltab));
		f->lcap = 1 << 20;
		f->larena = xmalloc(f->lcap);
	}
	if (o->palette_file)
		f->pal = pal_load(o->palette_file);
	return f;
}

#define LCACHE_PROBATION 4096	/* lines before deciding */
#define LCACHE_MAX_BYTES ((size_t)256 << 20)

static void
lcache_off(struct flame *f)
{
	f->lcache = 0;
	free(f->ltab);
	free(f->larena);
	f->ltab = NULL;
	f->larena = NULL;
}

static void
lcache_grow(struct flame *f)
{
	size_t i, j, newmask = f->lmask * 2 + 1;
	struct lslot *t = xcalloc(newmask + 1, sizeof(*t));

	for (i = 0; i <= f->lmask; i++) {
		if (f->ltab[i].len == 0)
			continue;
		j = (size_t)f->ltab[i].h & newmask;
		while (t[j].len)
			j = (j + 1) & newmask;
		t[j] = f->ltab[i];
	}
	free(f->ltab);
	f->ltab = t;
	f->lmask = newmask;
}

/* Looks LINE up; returns its leaf, or NIL with *SLOT where to insert it. */
static uint32_t
lcache_find(struct flame *f, const char *line, size_t len, uint64_t h, size_t *slot)
{
	size_t i = (size_t)h & f->lmask;

	while (f->ltab[i].len) {
		if (f->ltab[i].h == h && f->ltab[i].len == len &&
		    memcmp(f->larena + f->ltab[i].off, line, len) == 0)
			return f->ltab[i].leaf;
		i = (i + 1) & f->lmask;
	}
	*slot = i;
	return NIL;
}

static void flame_add_frames(struct flame *f, char *stack, size_t len, double value,
    double delta);

void
flame_add(struct flame *f, char *stack, size_t len, double count,
    double count2, int has2)
{
	double value = has2 ? count2 : count;
	double delta = has2 ? count2 - count : 0;
	uint64_t h = 0;
	size_t slot = 0, off = 0;
	uint32_t leaf;

	if (has2)
		f->is_diff = 1;
	if (!f->lcache || len == 0 || len > 0xffffffu) {
		flame_add_frames(f, stack, len, value, delta);
		return;
	}
	f->lseen++;
	if (f->lseen == LCACHE_PROBATION && f->lhits * 4 < f->lseen) {
		lcache_off(f);
		flame_add_frames(f, stack, len, value, delta);
		return;
	}
	h = hash_bytes(stack, len, 0x11);
	if ((leaf = lcache_find(f, stack, len, h, &slot)) != NIL) {
		f->lhits++;
		f->nodes[leaf].self += value;
		f->nodes[leaf].dself += delta;
		return;
	}
	/* keep the raw bytes: the frames are unescaped in place below */
	if (f->llen + len > LCACHE_MAX_BYTES) {
		lcache_off(f);
		flame_add_frames(f, stack, len, value, delta);
		return;
	}
	if (f->llen + len > f->lcap) {
		while (f->llen + len > f->lcap)
			f->lcap *= 2;
		f->larena = xrealloc(f->larena, f->lcap);
	}
	off = f->llen;
	memcpy(f->larena + off, stack, len);
	f->llen += len;
	flame_add_frames(f, stack, len, value, delta);
	f->ltab[slot].h = h;
	f->ltab[slot].off = off;
	f->ltab[slot].len = (uint32_t)len;
	f->ltab[slot].leaf = f->pathlen ? f->path[f->pathlen - 1] : 0;
	if (2 * ++f->nlines > f->lmask)
		lcache_grow(f);
}

/* Adds one line frame by frame (reusing the previous line's path). */
static void
flame_add_frames(struct flame *f, char *stack, size_t len, double value, double delta)
{
	size_t nf = 0, d, i;
	char *p = stack, *end = stack + len, *semi;
	uint32_t parent, id;
	int unesc = !f->o.no_unescape && memchr(stack, '%', len) != NULL;

	/* split into frames; "%3B" inside a frame is decoded only after the split */
	while (p <= end && len > 0) {
		semi = memchr(p, ';', (size_t)(end - p));
		if (semi == NULL)
			semi = end;
		if (nf == f->frcap) {
			f->frcap *= 2;
			f->fr = xrealloc(f->fr, f->frcap * sizeof(*f->fr));
		}
		f->fr[nf].p = p;
		f->fr[nf].n = (size_t)(semi - p);
		if (unesc)
			f->fr[nf].n = evt_unescape(p, f->fr[nf].n);
		nf++;
		p = semi + 1;
	}
	if (f->o.reverse)
		for (i = 0; i < nf / 2; i++) {
			struct frame_ref t = f->fr[i];

			f->fr[i] = f->fr[nf - 1 - i];
			f->fr[nf - 1 - i] = t;
		}
	/* shared prefix with the previous line */
	for (d = 0; d < nf && d < f->pathlen; d++)
		if (!name_eq(f, f->path[d], f->fr[d].p, f->fr[d].n))
			break;
	if (nf > f->pathcap) {
		while (nf > f->pathcap)
			f->pathcap *= 2;
		f->path = xrealloc(f->path, f->pathcap * sizeof(*f->path));
	}
	parent = d ? f->path[d - 1] : 0;
	for (; d < nf; d++) {
		id = child(f, parent, f->fr[d].p, f->fr[d].n);
		f->path[d] = id;
		parent = id;
	}
	f->pathlen = nf;
	f->nodes[parent].self += value;
	f->nodes[parent].dself += delta;
}

void
flame_set_countname(struct flame *f, const char *name)
{
	f->o.countname = name;
}

double
flame_total(const struct flame *f)
{
	double t = 0;
	size_t i;

	for (i = 0; i < f->nnodes; i++)
		t += f->nodes[i].self;
	return t;
}

size_t
flame_nodes(const struct flame *f)
{
	return f->nnodes - 1;
}

void
flame_free(struct flame *f)
{
	if (f == NULL)
		return;
	pal_free(f->pal);
	free(f->nodes);
	free(f->names);
	free(f->nm_off);
	free(f->nm_len);
	free(f->nm_hash);
	free(f->ntab);
	free(f->table);
	free(f->path);
	free(f->fr);
	free(f->ltab);
	free(f->larena);
	free(f);
}

/* ------------------------------------------------------------------ */
/* layout                                                              */

static const struct flame *sort_ctx;

static int
by_name(const void *a, const void *b)
{
	size_t xl, yl, n;
	const char *x = node_name(sort_ctx, *(const uint32_t *)a, &xl);
	const char *y = node_name(sort_ctx, *(const uint32_t *)b, &yl);
	int c;

	n = xl < yl ? xl : yl;
	c = memcmp(x, y, n);
	return c ? c : (xl > yl) - (xl < yl);
}

/* Sorts the children of every node by name (relinking the sibling lists). */
static void
sort_children(struct flame *f)
{
	uint32_t *kids = NULL;
	size_t cap = 0, n, i, k;
	uint32_t c;

	sort_ctx = f;
	for (i = 0; i < f->nnodes; i++) {
		n = 0;
		for (c = f->nodes[i].child; c != NIL; c = f->nodes[c].sib) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				kids = xrealloc(kids, cap * sizeof(*kids));
			}
			kids[n++] = c;
		}
		if (n < 2)
			continue;
		qsort(kids, n, sizeof(*kids), by_name);
		f->nodes[i].child = kids[0];
		for (k = 0; k + 1 < n; k++)
			f->nodes[kids[k]].sib = kids[k + 1];
		f->nodes[kids[n - 1]].sib = NIL;
		f->nodes[i].last = kids[n - 1];
	}
	free(kids);
}

static void
compute_totals(struct flame *f)
{
	size_t i;

	for (i = 0; i < f->nnodes; i++) {
		f->nodes[i].total = f->nodes[i].self;
		f->nodes[i].dtotal = f->nodes[i].dself;
	}
	for (i = f->nnodes - 1; i > 0; i--) {
		f->nodes[f->nodes[i].parent].total += f->nodes[i].total;
		f->nodes[f->nodes[i].parent].dtotal += f->nodes[i].dtotal;
	}
}

/* ------------------------------------------------------------------ */
/* SVG                                                                 */

/* Writes V/10 as "12.3" or "12". */
static void
put_tenths(struct outbuf *ob, int64_t v)
{
	char tmp[32];
	int n = 0, neg = v < 0;
	uint64_t u = neg ? (uint64_t)(-v) : (uint64_t)v;
	char *o;

	if (u % 10)
		tmp[n++] = (char)('0' + u % 10), tmp[n++] = '.';
	u /= 10;
	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (neg)
		tmp[n++] = '-';
	o = ob_reserve(ob, (size_t)n);
	for (int i = 0; i < n; i++)
		o[i] = tmp[n - 1 - i];
	ob_commit(ob, (size_t)n);
}

static void
put_num(struct outbuf *ob, double v)
{
	char tmp[64];

	ob_write(ob, tmp, (size_t)fmt_num(tmp, v));
}

/* Only characters that cannot break out of a CSS value. */
static void
put_css_safe(struct outbuf *ob, const char *s)
{
	for (; *s; s++)
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(" ,-_.", *s))
			ob_putc(ob, *s);
}

static int
valid_hex_colour(const char *s)
{
	size_t i;

	if (s == NULL || s[0] != '#' || strlen(s) != 7)
		return 0;
	for (i = 1; i < 7; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return 0;
	return 1;
}

static void
background(const struct flame_opts *o, int is_diff, const char **c1, const char **c2)
{
	const char *bg = o->bgcolors;

	if (bg == NULL) {
		if (is_diff)
			bg = "grey";
		else if (strcmp(o->palette, "mem") == 0)
			bg = "green";
		else if (strcmp(o->palette, "io") == 0 || strcmp(o->palette, "wakeup") == 0 ||
		    strcmp(o->palette, "chain") == 0)
			bg = "blue";
		else
			bg = "yellow";
	}
	if (strcmp(bg, "blue") == 0)
		*c1 = "#eeeeee", *c2 = "#e0e0ff";
	else if (strcmp(bg, "green") == 0)
		*c1 = "#eef2ee", *c2 = "#e0ffe0";
	else if (strcmp(bg, "grey") == 0)
		*c1 = "#f8f8f8", *c2 = "#e8e8e8";
	else if (valid_hex_colour(bg))
		*c1 = *c2 = bg;
	else
		*c1 = "#eeeeee", *c2 = "#eeeeb0";
}

/*
 * The embedded script.  It reads names only from the DOM (title text),
 * so nothing from the trace is ever parsed as code.  Exposes
 * fg_search(re), fg_zoom(name|index), fg_unzoom(), fg_boxes() for
 * tests; ?s=REGEX and ?x=&y= in the URL search and zoom on load.
 */
static const char flame_js[] =
"(function(){'use strict';\n"
"var NS='http://www.w3.org/2000/svg',svg,fr,W,xp,fs,fw,inv,total,cn,fac,diff,nt,ty,"
"det,mt,unz,boxes=[],zoomed=null,term=null,ic=false,sc;\n"
"function $(id){return document.getElementById(id);}\n"
"function fmt(v){v=Math.round(v*1000)/1000;var s=String(v);if(s.indexOf('e')>=0)return s;"
"var p=s.split('.');p[0]=p[0].replace(/\\B(?=(\\d{3})+(?!\\d))/g,',');return p.join('.');}\n"
"function pct(v){return total>0?(100*v/total).toFixed(2):'0.00';}\n"
"function info(b){var s=b.n+' ('+fmt(b.v*fac)+' '+cn+', '+pct(b.v)+'%';"
"if(b.d!==null)s+='; '+(b.d>=0?'+':'')+pct(b.d)+'%';return s+')';}\n"
"function label(b,x,w){var c=Math.floor(w/(fs*fw)),s='';"
"if(c>=3)s=b.n.length<=c?b.n:b.n.substr(0,c-2)+'..';"
"if(!b.t&&s){b.t=document.createElementNS(NS,'text');b.t.setAttribute('y',b.y+ty);b.g.appendChild(b.t);}"
"if(b.t){b.t.setAttribute('x',(x+3).toFixed(1));b.t.textContent=s;}}\n"
"function place(b,x,w){b.r.setAttribute('x',x.toFixed(1));b.r.setAttribute('width',w.toFixed(1));"
"label(b,x,w);b.g.removeAttribute('display');}\n"
"function hide(b){b.g.setAttribute('display','none');}\n"
"function url(){try{var q=[];if(zoomed)q.push('x='+zoomed.x,'y='+zoomed.y);if(term)q.push('s='+encodeURIComponent(term));"
"history.replaceState(null,'',location.pathname+(q.length?'?'+q.join('&'):''));}catch(x){}}\n"
"function zoom(z){var sc2=(W-2*xp)/z.w,e=0.05,i,b,up;zoomed=z;unz.removeAttribute('display');"
"for(i=0;i<boxes.length;i++){b=boxes[i];up=inv?b.y<z.y:b.y>z.y;"
"if(up){if(b.x<=z.x+e&&b.x+b.w>=z.x+z.w-e){place(b,xp,W-2*xp);b.g.setAttribute('opacity','0.5');}else hide(b);}"
"else if(b.x>=z.x-e&&b.x+b.w<=z.x+z.w+e){place(b,xp+(b.x-z.x)*sc2,b.w*sc2);b.g.removeAttribute('opacity');}"
"else hide(b);}"
"svg.setAttribute('fg-zoom',z.n);url();}\n"
"function unzoom(){var i,b;zoomed=null;unz.setAttribute('display','none');"
"for(i=0;i<boxes.length;i++){b=boxes[i];place(b,b.x,b.w);b.g.removeAttribute('opacity');}"
"svg.removeAttribute('fg-zoom');url();}\n"
"function reset(){var i;term=null;for(i=0;i<boxes.length;i++)boxes[i].r.setAttribute('fill',boxes[i].f);"
"mt.textContent=' ';svg.removeAttribute('fg-matched');url();}\n"
"function search(t){var re,i,b,m=[],end=-1,sum=0;if(t===null||t===undefined||t===''){reset();return null;}"
"try{re=new RegExp(t,ic?'i':'');}catch(x){mt.textContent='Bad regex: '+x.message;return null;}"
"term=t;for(i=0;i<boxes.length;i++){b=boxes[i];if(re.test(b.n)){b.r.setAttribute('fill',sc);m.push(b);}"
"else b.r.setAttribute('fill',b.f);}"
"m.sort(function(a,c){return a.x-c.x||c.w-a.w;});"
"for(i=0;i<m.length;i++){b=m[i];if(b.x>=end-0.05){sum+=b.v;end=b.x+b.w;}}"
"var p=total>0?(100*sum/total).toFixed(1):'0.0';mt.textContent='Matched: '+p+'%';"
"svg.setAttribute('fg-matched',p);url();return +p;}\n"
"function box(ev){var g=ev.target;while(g&&g.parentNode!==fr)g=g.parentNode;return g&&g.fgi!==undefined?boxes[g.fgi]:null;}\n"
"function init(){var i,g,r,ti,gs,p;svg=document.documentElement;fr=$('frames');"
"W=+svg.getAttribute('width');xp=+fr.getAttribute('xpad');fs=+fr.getAttribute('fs');fw=+fr.getAttribute('fw');"
"ty=+fr.getAttribute('ty');inv=fr.getAttribute('inv')==='1';total=+fr.getAttribute('total');"
"cn=fr.getAttribute('cname');fac=+fr.getAttribute('factor')||1;nt=fr.getAttribute('ntype');sc=fr.getAttribute('sc');"
"det=$('details');mt=$('matched');unz=$('unzoom');gs=fr.children;"
"for(i=0;i<gs.length;i++){g=gs[i];r=g.getElementsByTagName('rect')[0];ti=g.getElementsByTagName('title')[0];"
"if(!r)continue;g.fgi=boxes.length;boxes.push({g:g,r:r,ti:ti,t:g.getElementsByTagName('text')[0]||null,"
"n:ti?ti.textContent:'',x:+r.getAttribute('x'),w:+r.getAttribute('width'),y:+r.getAttribute('y'),"
"v:+r.getAttribute('v'),d:r.hasAttribute('d')?+r.getAttribute('d'):null,f:r.getAttribute('fill')});}"
"fr.addEventListener('mouseover',function(ev){var b=box(ev);if(!b)return;var s=info(b);"
"if(b.ti)b.ti.textContent=s;det.textContent=nt+' '+s;});"
"fr.addEventListener('mouseout',function(ev){var b=box(ev);if(b&&b.ti)b.ti.textContent=b.n;det.textContent=' ';});"
"fr.addEventListener('click',function(ev){var b=box(ev);if(b)zoom(b);});"
"unz.addEventListener('click',unzoom);"
"$('search').addEventListener('click',function(){search(prompt('Enter a search term (regexp allowed, eg: ^ntdll)',term||''));});"
"$('ic').addEventListener('click',function(){ic=!ic;$('ic').setAttribute('fill',ic?'#000':'#aaa');if(term)search(term);});"
"document.addEventListener('keydown',function(ev){if(ev.keyCode===114||(ev.ctrlKey&&ev.keyCode===70)){ev.preventDefault();"
"search(prompt('Enter a search term (regexp allowed, eg: ^ntdll)',term||''));}"
"else if(ev.ctrlKey&&ev.keyCode===73){ev.preventDefault();ic=!ic;if(term)search(term);}"
"else if(ev.keyCode===27){reset();unzoom();}});"
"window.fg_search=search;window.fg_unzoom=unzoom;window.fg_boxes=function(){return boxes;};"
"window.fg_info=info;"
"window.fg_zoom=function(k){for(var j=0;j<boxes.length;j++)if(j===k||boxes[j].n===k){zoom(boxes[j]);return true;}return false;};"
"try{p=new URLSearchParams(location.search);"
"if(p.get('x')!==null&&p.get('y')!==null){var qx=+p.get('x'),qy=+p.get('y');"
"for(i=0;i<boxes.length;i++){g=boxes[i];if(g.y===qy&&qx>=g.x&&qx<g.x+g.w){zoom(g);break;}}}"
"if(p.get('s'))search(p.get('s'));}catch(x){}"
"svg.setAttribute('fg-ready','1');}\n"
"window.addEventListener('load',init);})();\n";

struct emit_ctx {
	struct flame *f;
	struct outbuf *ob;
	double wpu;		/* pixels per unit of weight */
	double minw;		/* minimum weight drawn */
	double maxdelta;
	double imgheight, ypad1, ypad2;
	int maxdepth;
};

static int
kept(const struct emit_ctx *c, uint32_t id)
{
	return c->f->nodes[id].total > 0 && c->f->nodes[id].total >= c->minw;
}

/* Deepest drawn box, walking only kept subtrees. */
static int
max_depth(struct emit_ctx *c)
{
	uint32_t *stk = xmalloc(c->f->nnodes * sizeof(*stk));
	size_t sp = 0;
	int m = 0;

	stk[sp++] = 0;
	while (sp) {
		uint32_t id = stk[--sp], k;

		if ((int)c->f->nodes[id].depth > m)
			m = (int)c->f->nodes[id].depth;
		for (k = c->f->nodes[id].child; k != NIL; k = c->f->nodes[k].sib)
			if (kept(c, k))
				stk[sp++] = k;
	}
	free(stk);
	return m;
}

static void
diff_colour(const struct emit_ctx *c, double delta, unsigned char rgb[3])
{
	double v = c->f->o.negate ? -delta : delta, m = c->maxdelta;

	rgb[0] = rgb[1] = rgb[2] = 255;
	if (m <= 0)
		return;
	if (v > m)
		v = m;
	if (v < -m)
		v = -m;
	if (v > 0)
		rgb[1] = rgb[2] = (unsigned char)(int)(210 * (m - v) / m);
	else if (v < 0)
		rgb[0] = rgb[1] = (unsigned char)(int)(210 * (m + v) / m);
}

static void
box_colour(struct emit_ctx *c, uint32_t id, const char *name, size_t len,
    unsigned char rgb[3])
{
	struct flame *f = c->f;
	struct palent *e;

	if (f->is_diff) {
		diff_colour(c, f->o.diffmode == FLAME_DIFF_INCLUSIVE ?
		    f->nodes[id].dtotal : f->nodes[id].dself, rgb);
		return;
	}
	if (f->pal) {
		e = pal_find(f->pal, name, len, 1);
		if (!e->used) {
			flame_color(f->o.palette, name, len, e->rgb);
			e->used = 1;
		}
		memcpy(rgb, e->rgb, 3);
		return;
	}
	flame_color(f->o.palette, name, len, rgb);
}

static void
emit_box(struct emit_ctx *c, uint32_t id, double x)
{
	struct flame *f = c->f;
	struct fnode *n = &f->nodes[id];
	struct outbuf *ob = c->ob;
	size_t len;
	const char *name = node_name(f, id, &len);
	size_t shown = len;
	int64_t x1, x2;
	double y, wpx;
	unsigned char rgb[3];
	char col[8];
	size_t chars;

	if (id && annotation(name, len))
		shown = len - 4;
	/* round both ends, so a child never pokes out of its parent */
	x1 = llround((10 + x * c->wpu) * 10);
	x2 = llround((10 + (x + n->total) * c->wpu) * 10);
	if (f->o.inverted)
		y = c->ypad1 + n->depth * f->o.frameheight;
	else
		y = c->imgheight - c->ypad2 - (n->depth + 1) * f->o.frameheight;
	box_colour(c, id, name, len, rgb);
	snprintf(col, sizeof(col), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
	ob_puts(ob, "<g><title>");
	xml_escape(ob, name, shown);
	ob_puts(ob, "</title><rect x=\"");
	put_tenths(ob, x1);
	ob_puts(ob, "\" y=\"");
	put_tenths(ob, llround(y * 10));
	ob_puts(ob, "\" width=\"");
	put_tenths(ob, x2 - x1);
	ob_puts(ob, "\" height=\"");
	put_tenths(ob, llround((f->o.frameheight - 1) * 10));
	ob_puts(ob, "\" fill=\"");
	ob_puts(ob, col);
	ob_puts(ob, "\" v=\"");
	put_num(ob, n->total);
	if (f->is_diff) {
		ob_puts(ob, "\" d=\"");
		put_num(ob, f->o.diffmode == FLAME_DIFF_INCLUSIVE ? n->dtotal : n->dself);
	}
	ob_puts(ob, "\"/>");
	wpx = (double)(x2 - x1) / 10;
	chars = (size_t)(wpx / (f->o.fontsize * f->o.fontwidth));
	if (chars >= 3) {
		size_t nch = utf8_chars(name, shown);

		ob_puts(ob, "<text x=\"");
		put_tenths(ob, x1 + 30);
		ob_puts(ob, "\" y=\"");
		put_tenths(ob, llround((y + f->o.frameheight / 2 + f->o.fontsize / 2 - 3.5) * 10));
		ob_puts(ob, "\">");
		if (nch <= chars)
			xml_escape(ob, name, shown);
		else {
			xml_escape(ob, name, utf8_prefix(name, shown, chars - 2));
			ob_puts(ob, "..");
		}
		ob_puts(ob, "</text>");
	}
	ob_puts(ob, "</g>\n");
}

static void
emit_boxes(struct emit_ctx *c)
{
	struct flame *f = c->f;
	struct item { uint32_t id; double x; } *stk;
	size_t sp = 0, cap = 1024;
	uint32_t k;

	stk = xmalloc(cap * sizeof(*stk));
	stk[sp].id = 0;
	stk[sp++].x = 0;
	while (sp) {
		struct item it = stk[--sp];
		size_t first = sp;
		double x = it.x;

		emit_box(c, it.id, it.x);
		for (k = f->nodes[it.id].child; k != NIL; k = f->nodes[k].sib) {
			if (kept(c, k)) {
				if (sp == cap) {
					cap *= 2;
					stk = xrealloc(stk, cap * sizeof(*stk));
				}
				stk[sp].id = k;
				stk[sp++].x = x;
			}
			x += f->nodes[k].total;
		}
		/* reverse so that children are written left to right */
		for (size_t a = first, b = sp; b > a + 1; a++, b--) {
			struct item t = stk[a];

			stk[a] = stk[b - 1];
			stk[b - 1] = t;
		}
	}
	free(stk);
}

static void
svg_head(struct outbuf *ob, const struct flame_opts *o, double h, const char *bg1,
    const char *bg2)
{
	ob_puts(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	    "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
	    "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<svg version=\"1.1\" width=\"");
	put_num(ob, o->width);
	ob_puts(ob, "\" height=\"");
	put_num(ob, h);
	ob_puts(ob, "\" viewBox=\"0 0 ");
	put_num(ob, o->width);
	ob_putc(ob, ' ');
	put_num(ob, h);
	ob_puts(ob, "\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n");
	ob_puts(ob, "<!-- Flame graph by etlkit render; see docs/render.1 -->\n");
	if (o->notes) {
		ob_puts(ob, "<desc id=\"notes\">");
		xml_escape_str(ob, o->notes);
		ob_puts(ob, "</desc>\n");
	}
	ob_printf(ob, "<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	    "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
	    "</linearGradient></defs>\n", bg1, bg2);
	ob_puts(ob, "<style type=\"text/css\"><![CDATA[\ntext{font-family:");
	put_css_safe(ob, o->fonttype);
	ob_printf(ob, ",sans-serif;font-size:%gpx;fill:#000}\n#title{text-anchor:middle;font-size:%gpx}\n"
	    "#subtitle{text-anchor:middle;fill:#a0a0a0}\n"
	    "#frames text{pointer-events:none}\n#frames g:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}\n"
	    ".btn{cursor:pointer}\n.btn:hover{opacity:0.7}\n]]></style>\n",
	    o->fontsize, o->fontsize + 5);
	ob_puts(ob, "<script type=\"text/ecmascript\"><![CDATA[\n");
	ob_puts(ob, flame_js);
	ob_puts(ob, "]]></script>\n");
	ob_puts(ob, "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"url(#bg)\"/>\n");
}

static const char *
default_title(const struct flame_opts *o)
{
	if (o->title)
		return o->title;
	if (o->flamechart)
		return "Flame Chart";
	if (o->inverted)
		return "Icicle Graph";
	return "Flame Graph";
}

static void
svg_texts(struct outbuf *ob, const struct flame_opts *o, double h)
{
	double w = o->width;

	ob_printf(ob, "<text id=\"title\" x=\"%g\" y=\"%g\">", w / 2, o->fontsize * 2);
	xml_escape_str(ob, default_title(o));
	ob_puts(ob, "</text>\n");
	if (o->subtitle) {
		ob_printf(ob, "<text id=\"subtitle\" x=\"%g\" y=\"%g\">", w / 2, o->fontsize * 4);
		xml_escape_str(ob, o->subtitle);
		ob_puts(ob, "</text>\n");
	}
	ob_printf(ob, "<text id=\"details\" x=\"10\" y=\"%g\"> </text>\n", h - o->fontsize / 2 - 5);
	ob_printf(ob, "<text id=\"unzoom\" class=\"btn\" x=\"10\" y=\"%g\" display=\"none\">Reset Zoom</text>\n",
	    o->fontsize * 2);
	ob_printf(ob, "<text id=\"search\" class=\"btn\" x=\"%g\" y=\"%g\">Search</text>\n",
	    w - 110, o->fontsize * 2);
	ob_printf(ob, "<text id=\"ic\" class=\"btn\" x=\"%g\" y=\"%g\" fill=\"#aaa\">ic</text>\n",
	    w - 26, o->fontsize * 2);
	ob_printf(ob, "<text id=\"matched\" x=\"%g\" y=\"%g\"> </text>\n", w - 110,
	    h - o->fontsize / 2 - 5);
}

int
flame_write_svg(struct flame *f, struct outbuf *ob)
{
	struct emit_ctx c;
	const char *bg1, *bg2;
	double total, ypad1, ypad2, h;
	size_t i;

	memset(&c, 0, sizeof(c));
	c.f = f;
	c.ob = ob;
	compute_totals(f);
	total = f->nodes[0].total;
	if (!(total > 0)) {
		/* what flamegraph.pl does with no valid input */
		h = 60;
		background(&f->o, 0, &bg1, &bg2);
		ob_puts(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"");
		put_num(ob, f->o.width);
		ob_puts(ob, "\" height=\"60\" xmlns=\"http://www.w3.org/2000/svg\">\n");
		ob_printf(ob, "<text x=\"%g\" y=\"30\" text-anchor=\"middle\" font-size=\"17\">"
		    "ERROR: No valid input provided to flame graph</text>\n</svg>\n", f->o.width / 2);
		return -1;
	}
	if (!f->o.flamechart)
		sort_children(f);
	if (f->o.total > total)
		total = f->o.total;
	c.wpu = (f->o.width - 20) / total;
	c.minw = f->o.minwidth_pct ? f->o.minwidth * total / 100 : f->o.minwidth / c.wpu;
	for (i = 0; i < f->nnodes; i++) {
		double d = f->o.diffmode == FLAME_DIFF_INCLUSIVE ?
		    fabs(f->nodes[i].dtotal) : fabs(f->nodes[i].dself);

		if (d > c.maxdelta)
			c.maxdelta = d;
	}
	c.maxdepth = max_depth(&c);
	ypad1 = f->o.fontsize * 3 + (f->o.subtitle ? f->o.fontsize * 2 : 0);
	ypad2 = f->o.fontsize * 2 + 10;
	h = (c.maxdepth + 1) * f->o.frameheight + ypad1 + ypad2;
	c.imgheight = h;
	c.ypad1 = ypad1;
	c.ypad2 = ypad2;
	background(&f->o, f->is_diff, &bg1, &bg2);
	svg_head(ob, &f->o, h, bg1, bg2);
	svg_texts(ob, &f->o, h);
	ob_puts(ob, "<g id=\"frames\" xpad=\"10\" fs=\"");
	put_num(ob, f->o.fontsize);
	ob_puts(ob, "\" fw=\"");
	put_num(ob, f->o.fontwidth);
	ob_puts(ob, "\" ty=\"");
	put_num(ob, f->o.frameheight / 2 + f->o.fontsize / 2 - 3.5);
	ob_puts(ob, "\" inv=\"");
	ob_putc(ob, f->o.inverted ? '1' : '0');
	ob_puts(ob, "\" total=\"");
	put_num(ob, total);
	ob_puts(ob, "\" factor=\"");
	put_num(ob, f->o.factor);
	ob_puts(ob, "\" cname=\"");
	xml_escape_str(ob, f->o.countname);
	ob_puts(ob, "\" ntype=\"");
	xml_escape_str(ob, f->o.nametype);
	ob_puts(ob, "\" sc=\"");
	ob_puts(ob, valid_hex_colour(f->o.searchcolor) ? f->o.searchcolor : "#e600e6");
	if (f->is_diff)
		ob_puts(ob, f->o.diffmode == FLAME_DIFF_INCLUSIVE ? "\" diff=\"inclusive" : "\" diff=\"leaf");
	ob_puts(ob, "\">\n");
	emit_boxes(&c);
	ob_puts(ob, "</g>\n</svg>\n");
	if (f->pal)
		pal_save(f->pal, f->o.palette_file);
	return 0;
}
