/*
 * flame_tree.c - the flame graph's tree and its layout.
 *
 * The tree: nodes in one array (a parent always has a smaller index
 * than its children, so inclusive totals are one backwards pass), a
 * hash table keyed by (parent, name) for merging, and the current path
 * so that a line sharing a prefix with the previous one costs only a
 * byte comparison per shared frame.  Repeated whole lines (raw,
 * unmerged samples) go straight to their leaf through a line cache.
 *
 * The table holds only the children of parents with many of them.  A
 * line's frames below where it leaves the previous line are mostly new,
 * and a node created in this line has no children to look for; a
 * parent with a few children is answered by scanning them.  Every probe
 * of the table is a cache miss at 200,000 nodes, so on the real perf
 * file (211,249 nodes) this took the tree from 29% of the time to 5%.
 *
 * The layout: children sorted by name (input order for flame charts),
 * the width of 100%, the minimum weight drawn, and the drawn boxes in
 * writing order with their x and the depth of the image.
 */
#include "report/flame_int.h"
#include "base/cli.h"
#include "base/hash.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static uint32_t
new_node(struct flame *f, uint32_t parent, uint32_t name)
{
	struct fnode *n;

	if (f->nnodes == f->capnodes) {
		f->capnodes *= 2;
		f->nodes = xrealloc(f->nodes, f->capnodes * sizeof(*f->nodes));
		f->indexed = xrealloc(f->indexed, f->capnodes);
		if (f->delta)
			f->delta = xrealloc(f->delta, f->capnodes * sizeof(*f->delta));
	}
	if (f->delta)
		memset(&f->delta[f->nnodes], 0, sizeof(*f->delta));
	f->indexed[f->nnodes] = 0;
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
	return (size_t)hash_u64((uint64_t)parent << 32 | name);
}

/* Puts node ID (not yet in the table) into its slot. */
static void
table_put(struct flame *f, uint32_t id)
{
	size_t j = slot_hash(f->nodes[id].parent, f->nodes[id].name) & f->tabmask;

	while (f->table[j].id)
		j = (j + 1) & f->tabmask;
	f->table[j].parent = f->nodes[id].parent;
	f->table[j].name = f->nodes[id].name;
	f->table[j].id = id;
	f->ntab++;
}

/*
 * Doubles the table, filled again from the nodes of indexed parents:
 * the old table is freed first, so the two never live at once (at 10 M
 * nodes the old one is 100 MB more at the peak).
 */
static void
table_grow(struct flame *f)
{
	size_t i;

	free(f->table);
	f->tabmask = f->tabmask * 2 + 1;
	f->table = xcalloc(f->tabmask + 1, sizeof(*f->table));
	f->ntab = 0;
	for (i = 1; i < f->nnodes; i++)
		if (f->indexed[f->nodes[i].parent])
			table_put(f, (uint32_t)i);
}

static void
table_add(struct flame *f, uint32_t id)
{
	table_put(f, id);
	if (4 * f->ntab > 3 * f->tabmask)	/* 75% full, as the names */
		table_grow(f);
}

/* Children scanned before a parent's children go into the table. */
#define SCAN_CHILDREN 8

/* Puts the children of PARENT into the table, and its later ones as they come. */
static void
index_children(struct flame *f, uint32_t parent)
{
	uint32_t c;

	f->indexed[parent] = 1;
	for (c = f->nodes[parent].child; c != NIL; c = f->nodes[c].sib)
		table_add(f, c);
}

/* The child of PARENT named NAME, created if absent. */
static uint32_t
child(struct flame *f, uint32_t parent, uint32_t name)
{
	uint32_t id, c;
	size_t i, k = 0;

	if (f->o.flamechart) {
		/* time order: only the most recent child may be continued */
		id = f->nodes[parent].last;
		if (id != NIL && f->nodes[id].name == name)
			return id;
		return new_node(f, parent, name);
	}
	if (!f->indexed[parent]) {
		for (c = f->nodes[parent].child; c != NIL && k < SCAN_CHILDREN;
		    c = f->nodes[c].sib, k++)
			if (f->nodes[c].name == name)
				return c;
		if (c == NIL)
			return new_node(f, parent, name);
		index_children(f, parent);
	}
	i = slot_hash(parent, name) & f->tabmask;
	while (f->table[i].id != 0) {
		if (f->table[i].parent == parent && f->table[i].name == name)
			return f->table[i].id;
		i = (i + 1) & f->tabmask;
	}
	id = new_node(f, parent, name);
	table_add(f, id);
	return id;
}

struct flame *
flame_new(const struct flame_opts *o)
{
	struct flame *f = xcalloc(1, sizeof(*f));

	f->o = *o;
	f->capnodes = 4096;
	f->nodes = xmalloc(f->capnodes * sizeof(*f->nodes));
	f->indexed = xmalloc(f->capnodes);
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	f->indexed[0] = 0;
	f->nnodes = 1;		/* the root, "all" */
	f->tabmask = (1 << 14) - 1;
	f->table = xcalloc(f->tabmask + 1, sizeof(*f->table));
	intern_init(&f->names);
	f->pathcap = 256;
	f->path = xmalloc(f->pathcap * sizeof(*f->path));
	f->fend = xmalloc(f->pathcap * sizeof(*f->fend));
	f->frcap = 256;
	f->fr = xmalloc(f->frcap * sizeof(*f->fr));
	if (!o->flamechart) {
		f->lcache = 1;
		intern_init(&f->lines);
	}
	if (o->palette_file)
		f->pal = flame_palfile_load(o->palette_file);
	return f;
}

/*
 * Lines before deciding.  Short: merged input (the common case) never
 * repeats a line, and a small file read through the cache paid for
 * interning every line of it; raw samples repeat their hot stacks at once.
 */
#define LCACHE_PROBATION 512
#define LCACHE_MAX_BYTES ((size_t)256 << 20)

static void
lcache_off(struct flame *f)
{
	f->lcache = 0;
	intern_release(&f->lines);
	free(f->lleaf);
	f->lleaf = NULL;
}

static void flame_add_frames(struct flame *f, char *stack, size_t len, double value,
    double delta);

void
flame_add(struct flame *f, char *stack, size_t len, double count,
    double count2, int has2)
{
	double value = has2 ? count2 : count;
	double delta = has2 ? count2 - count : 0;
	uint32_t id, leaf;

	if (has2 && !f->is_diff) {
		f->is_diff = 1;
		f->delta = xcalloc(f->capnodes, sizeof(*f->delta));
	}
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
	/* the raw bytes are kept: the frames are unescaped in place below */
	id = intern_add(&f->lines, stack, len);
	if (id < f->nlines) {
		f->lhits++;
		leaf = f->lleaf[id];
		f->nodes[leaf].self += value;
		if (f->delta)
			f->delta[leaf].self += delta;
		return;
	}
	f->lbytes += len;
	if (f->lbytes > LCACHE_MAX_BYTES) {
		lcache_off(f);
		flame_add_frames(f, stack, len, value, delta);
		return;
	}
	if (f->nlines == f->caplines) {
		f->caplines = f->caplines ? 2 * f->caplines : 4096;
		f->lleaf = xrealloc(f->lleaf, f->caplines * sizeof(*f->lleaf));
	}
	flame_add_frames(f, stack, len, value, delta);
	f->lleaf[f->nlines++] = f->pathlen ? f->path[f->pathlen - 1] : 0;
}

/* The nodes of the line's frames from depth D on (the path above D is the previous line's). */
static void
add_path(struct flame *f, size_t d, size_t nf, double value, double delta)
{
	uint32_t parent = d ? f->path[d - 1] : 0, id;
	size_t fresh = f->nnodes;

	for (; d < nf; d++) {
		uint32_t name = intern_add(&f->names, f->fr[d].p, f->fr[d].n);

		/* a node made by this line has no children yet: nothing to look up */
		if (parent >= fresh)
			id = new_node(f, parent, name);
		else
			id = child(f, parent, name);
		f->path[d] = id;
		parent = id;
	}
	f->pathlen = nf;
	f->nodes[parent].self += value;
	if (f->delta)
		f->delta[parent].self += delta;
}

static void
frames_room(struct flame *f, size_t nf)
{
	if (nf == f->frcap) {
		f->frcap *= 2;
		f->fr = xrealloc(f->fr, f->frcap * sizeof(*f->fr));
	}
}

static void
path_room(struct flame *f, size_t nf)
{
	if (nf > f->pathcap) {
		while (nf > f->pathcap)
			f->pathcap *= 2;
		f->path = xrealloc(f->path, f->pathcap * sizeof(*f->path));
		f->fend = xrealloc(f->fend, f->pathcap * sizeof(*f->fend));
	}
}

/* --reverse: the frames leaf first, the shared prefix compared by name. */
static void
add_reversed(struct flame *f, char *stack, size_t len, double value, double delta)
{
	size_t nf = 0, d, i;
	char *p = stack, *end = stack + len, *semi;
	int unesc = !f->o.no_unescape && memchr(stack, '%', len) != NULL;

	/* split into frames; "%3B" inside a frame is decoded only after the split */
	while (p <= end && len > 0) {
		semi = memchr(p, ';', (size_t)(end - p));
		if (semi == NULL)
			semi = end;
		frames_room(f, nf);
		f->fr[nf].p = p;
		f->fr[nf].n = (size_t)(semi - p);
		if (unesc)
			f->fr[nf].n = evt_unescape(p, f->fr[nf].n);
		nf++;
		p = semi + 1;
	}
	for (i = 0; i < nf / 2; i++) {
		struct frame_ref t = f->fr[i];

		f->fr[i] = f->fr[nf - 1 - i];
		f->fr[nf - 1 - i] = t;
	}
	for (d = 0; d < nf && d < f->pathlen; d++)
		if (!flame_name_is(&f->names, f->nodes[f->path[d]].name, f->fr[d].p, f->fr[d].n))
			break;
	path_room(f, nf);
	add_path(f, d, nf, value, delta);
}

/* How many bytes A[0..N) and B[0..N) have in common from the start. */
static size_t
common_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	uint64_t x, y;

	for (; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/*
 * Adds one line.  The frames it shares with the previous line are found
 * by comparing the raw bytes once (the previous line's bytes are kept,
 * with where each of its frames ended): equal bytes are equal frames, so
 * only the frames after them are split, unescaped and looked up.  Names
 * equal after unescaping but not in bytes are found by the lookup.
 */
static void
flame_add_frames(struct flame *f, char *stack, size_t len, double value, double delta)
{
	size_t nf, d = 0, same, pos;
	char *p, *end = stack + len, *semi;
	int unesc;

	if (f->o.reverse) {
		add_reversed(f, stack, len, value, delta);
		return;
	}
	same = common_prefix(f->prev, stack, len < f->prevlen ? len : f->prevlen);
	/* frame d is shared when its bytes and its end (';' or the end of both) are */
	while (d < f->pathlen && (f->fend[d] < same || (f->fend[d] == f->prevlen &&
	    same == f->prevlen && (len == same || stack[same] == ';'))))
		d++;
	if (len + 1 > f->prevcap) {
		f->prevcap = len + 1 > 2 * f->prevcap ? len + 1 : 2 * f->prevcap;
		f->prev = xrealloc(f->prev, f->prevcap);
	}
	memcpy(f->prev + same, stack + same, len - same);
	f->prevlen = len;
	/* split the rest; "%3B" inside a frame is decoded only after the split */
	pos = d ? f->fend[d - 1] + 1 : 0;
	p = stack + pos;
	unesc = pos < len && !f->o.no_unescape && memchr(p, '%', len - pos) != NULL;
	nf = d;
	while (p <= end && len > 0) {
		semi = memchr(p, ';', (size_t)(end - p));
		if (semi == NULL)
			semi = end;
		frames_room(f, nf);
		path_room(f, nf + 1);
		f->fr[nf].p = p;
		f->fr[nf].n = (size_t)(semi - p);
		f->fend[nf] = (size_t)(semi - stack);
		if (unesc)
			f->fr[nf].n = evt_unescape(p, f->fr[nf].n);
		nf++;
		p = semi + 1;
	}
	add_path(f, d, nf, value, delta);
}

void
flame_set_countname(struct flame *f, const char *name)
{
	f->o.countname = name;
}

void
flame_free(struct flame *f)
{
	if (f == NULL)
		return;
	flame_palfile_free(f->pal);
	free(f->nodes);
	free(f->delta);
	free(f->indexed);
	intern_release(&f->names);
	free(f->table);
	free(f->path);
	free(f->fend);
	free(f->prev);
	free(f->fr);
	if (f->lcache)
		lcache_off(f);
	free(f);
}

/* ------------------------------------------------------------------ */
/* layout                                                              */

static const struct flame *sort_ctx;

static int
by_name(const void *a, const void *b)
{
	size_t xl, yl, n;
	const char *x = flame_node_name(sort_ctx, *(const uint32_t *)a, &xl);
	const char *y = flame_node_name(sort_ctx, *(const uint32_t *)b, &yl);
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
		/* no child or one (most nodes): nothing to sort, and no child to touch */
		if (f->nodes[i].child == f->nodes[i].last)
			continue;
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
		/* children of sorted input (stackfold's) mostly come in order already */
		for (k = 1; k < n && by_name(&kids[k - 1], &kids[k]) <= 0; k++)
			;
		if (k == n)
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

	for (i = 0; i < f->nnodes; i++)
		f->nodes[i].total = f->nodes[i].self;
	for (i = f->nnodes - 1; i > 0; i--)
		f->nodes[f->nodes[i].parent].total += f->nodes[i].total;
	if (f->delta == NULL)
		return;
	for (i = 0; i < f->nnodes; i++)
		f->delta[i].total = f->delta[i].self;
	for (i = f->nnodes - 1; i > 0; i--)
		f->delta[f->nodes[i].parent].total += f->delta[i].total;
}

/* Drawn: a positive weight no lighter than the minimum. */
static int
kept(const struct flame *f, const struct flame_layout *l, uint32_t id)
{
	return f->nodes[id].total > 0 && f->nodes[id].total >= l->minw;
}

/*
 * The drawn boxes in writing order (parents first, children left to
 * right) with their x, and the deepest one: a walk over kept subtrees.
 */
static void
place_boxes(const struct flame *f, struct flame_layout *l)
{
	struct item { uint32_t id; double x; } *stk;
	size_t sp = 0, cap = 1024, boxcap = 1024;
	uint32_t k;

	stk = xmalloc(cap * sizeof(*stk));
	l->box = xmalloc(boxcap * sizeof(*l->box));
	stk[sp].id = 0;
	stk[sp++].x = 0;
	while (sp) {
		struct item it = stk[--sp];
		size_t first = sp;
		double x = it.x;

		if (l->nbox == boxcap) {
			boxcap *= 2;
			l->box = xrealloc(l->box, boxcap * sizeof(*l->box));
		}
		l->box[l->nbox].id = it.id;
		l->box[l->nbox++].x = it.x;
		if ((int)f->nodes[it.id].depth > l->maxdepth)
			l->maxdepth = (int)f->nodes[it.id].depth;
		for (k = f->nodes[it.id].child; k != NIL; k = f->nodes[k].sib) {
			if (kept(f, l, k)) {
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

int
flame_layout(struct flame *f, struct flame_layout *l)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	compute_totals(f);
	l->total = f->nodes[0].total;
	if (!(l->total > 0))
		return -1;
	if (!f->o.flamechart)
		sort_children(f);
	if (f->o.total > l->total)
		l->total = f->o.total;
	l->wpu = (f->o.width - 20) / l->total;
	l->minw = f->o.minwidth_pct ? f->o.minwidth * l->total / 100 : f->o.minwidth / l->wpu;
	for (i = 0; f->delta != NULL && i < f->nnodes; i++) {
		double d = f->o.diffmode == FLAME_DIFF_INCLUSIVE ?
		    fabs(f->delta[i].total) : fabs(f->delta[i].self);

		if (d > l->maxdelta)
			l->maxdelta = d;
	}
	place_boxes(f, l);
	return 0;
}

void
flame_layout_free(struct flame_layout *l)
{
	free(l->box);
	l->box = NULL;
	l->nbox = 0;
}
