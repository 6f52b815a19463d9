/*
 * flame_int.h - what the flame graph files share; filters use flame.h.
 *
 * The flame graph is three files, split where inferno splits its
 * flamegraph module (names are interned in base/intern.h):
 *   flame_tree.c     the tree: merging stacks, sorting, totals, layout
 *                    (widths, minimum-width pruning, boxes in order)
 *   flame_colours.c  palettes, names hashed to colours, the palette file,
 *                    differential and background colours
 *   flame_svg.c      the SVG writer: header, CSS, script, boxes, texts
 */
#ifndef ETLKIT_FLAME_INT_H
#define ETLKIT_FLAME_INT_H

#include "report/flame.h"
#include "base/intern.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Frame names are interned (base/intern.h): a node keeps an id.  The
 * comparison is inline: it runs for every frame a line shares with the
 * previous one.
 */
static inline int
flame_name_is(const struct intern *t, uint32_t id, const char *s, size_t n)
{
	return intern_len(t, id) == n && memcmp(intern_str(t, id), s, n) == 0;
}

/* ---------- flame_tree.c: the tree ---------- */

struct fnode {
	uint32_t parent;
	uint32_t child;		/* first child */
	uint32_t last;		/* last child (flame charts append here) */
	uint32_t sib;		/* next sibling */
	uint32_t name;		/* interned name id */
	uint32_t depth;
	double self, total;	/* weight ending here; inclusive */
};

/* A node's differential delta: its own and inclusive (differential graphs only). */
struct fdelta {
	double self, total;
};

#define NIL 0u			/* no node (node 0 is the root, never a child) */

struct frame_ref {
	char *p;
	size_t n;
};

struct flame {
	struct flame_opts o;
	struct fnode *nodes;
	size_t nnodes, capnodes;
	/*
	 * By node, once a line with two counts is seen (NULL before: most
	 * graphs are not differential, and 16 bytes less per node is 30%
	 * fewer pages to touch).
	 */
	struct fdelta *delta;
	/* interned frame names: few and hot, so lookups stay in cache */
	struct intern names;
	/*
	 * (parent, name) -> child; the key is in the slot, so probing never
	 * touches nodes.  Only the children of "indexed" parents are in it: a
	 * parent's few children are scanned, and its children go into the
	 * table once it has more (flame_tree.c says why).
	 */
	struct nslot { uint32_t parent, name, id; } *table;	/* id 0 = empty */
	size_t tabmask, ntab;
	uint8_t *indexed;	/* by node: 1 if its children are in the table */
	uint32_t *path;		/* nodes of the previous line, by depth */
	size_t *fend;		/* ...where each of its frames ended in its bytes */
	size_t pathlen, pathcap;
	char *prev;		/* the previous line's bytes as read (not unescaped) */
	size_t prevlen, prevcap;
	struct frame_ref *fr;
	size_t frcap;
	int is_diff;
	/*
	 * Whole-line cache: unsorted, unmerged input (raw collapsed samples)
	 * repeats the same stacks; a repeated line goes straight to its leaf.
	 * Turned off (and freed) when lines rarely repeat, as in merged input.
	 */
	struct intern lines;	/* the raw lines seen... */
	uint32_t *lleaf;	/* ...and the leaf of each, by line id */
	size_t nlines, caplines, lbytes;
	int lcache;		/* 1 on, 0 off */
	uint64_t lseen, lhits;
	/* palette file: name -> colour */
	struct flame_palfile *pal;
};

static inline const char *
flame_node_name(const struct flame *f, uint32_t id, size_t *len)
{
	if (id == 0) {
		*len = 3;
		return "all";
	}
	*len = intern_len(&f->names, f->nodes[id].name);
	return intern_str(&f->names, f->nodes[id].name);
}

/* Where the boxes go: flame_layout's answer. */
struct flame_layout {
	double total;		/* the weight of 100% (the sum, or --total) */
	double wpu;		/* pixels per unit of weight */
	double minw;		/* boxes lighter than this are not drawn */
	double maxdelta;	/* the largest |delta| (differential colour scale) */
	int maxdepth;		/* deepest drawn box */
	/* the drawn boxes, parents first, children left to right; x in weight units */
	struct flame_box { uint32_t id; double x; } *box;
	size_t nbox;
};

/*
 * Totals, sorting (not for flame charts) and the layout.  Returns -1
 * when there is no positive weight (nothing to draw, no boxes).
 */
int flame_layout(struct flame *f, struct flame_layout *l);
void flame_layout_free(struct flame_layout *l);

/* ---------- flame_colours.c ---------- */

/* The colour of NAME in PALETTE; -1 for an unknown palette. */
int flame_color(const char *palette, const char *name, size_t len,
    unsigned char rgb[3]);
/* Which annotation suffix (_[k] _[j] _[i] _[w]) NAME carries, or 0. */
int flame_annotation(const char *s, size_t n);
/* Differential colour: red grows, blue shrinks, white unchanged, scaled to MAXDELTA. */
void flame_diff_colour(double delta, double maxdelta, int negate, unsigned char rgb[3]);
/* The two background gradient colours for the options (IS_DIFF: grey). */
void flame_background(const struct flame_opts *o, int is_diff, const char **c1,
    const char **c2);
/* 1 if S is "#rrggbb". */
int flame_valid_hex_colour(const char *s);

/* The palette file ("name->rgb(r,g,b)" lines, as flamegraph.pl --cp). */
struct flame_palfile;

/* Reads PATH (absent: empty palette). */
struct flame_palfile *flame_palfile_load(const char *path);
/* The colour of NAME: from the file, else picked from PALETTE and remembered. */
void flame_palfile_colour(struct flame_palfile *pf, const char *palette,
    const char *name, size_t len, unsigned char rgb[3]);
/* Writes every colour back, sorted by name. */
void flame_palfile_save(struct flame_palfile *pf, const char *path);
void flame_palfile_free(struct flame_palfile *pf);

#endif
