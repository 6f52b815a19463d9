/*
 * flame.h - flame graph layout and the interactive SVG writer.
 *
 * Stacks are added one line at a time (root first, ";"-separated, as in
 * folded stacks and the evt stack column) and merged into a tree; the
 * SVG is written at the end.  Like flamegraph.pl: children sorted by
 * name (or input order for flame charts), boxes narrower than the
 * minimum width omitted (nothing re-attributed), per-name colours,
 * click to zoom, regex search with "Matched: x%", tooltips.
 *
 * Lines are merged as they arrive; a line that shares a prefix with the
 * previous line (sorted input, as stackfold writes) reuses that path
 * without hashing, so memory grows with distinct stacks only.
 *
 * The code: flame_tree.c (tree, layout), flame_colours.c (palettes),
 * flame_svg.c (the writer); flame_int.h is what they share.
 */
#ifndef ETLKIT_FLAME_H
#define ETLKIT_FLAME_H

#include "evt/evt.h"

enum flame_diff { FLAME_DIFF_LEAF, FLAME_DIFF_INCLUSIVE };

struct flame_opts {
	const char *title;	/* NULL: "Flame Graph" / "Icicle Graph" / "Flame Chart" */
	const char *subtitle;
	const char *countname;	/* "samples" */
	const char *nametype;	/* "Function:" */
	const char *notes;
	const char *fonttype;	/* "Verdana" */
	const char *palette;	/* "hot" */
	const char *bgcolors;	/* NULL: by palette */
	const char *palette_file;	/* consistent palette (read and updated) */
	const char *searchcolor;	/* "#e600e6" */
	double width;		/* 1200 */
	double frameheight;	/* 16 */
	double fontsize;	/* 12 */
	double fontwidth;	/* 0.59 */
	double minwidth;	/* 0.1 (pixels, or percent of total with minwidth_pct) */
	int minwidth_pct;
	double factor;		/* 1: multiplies displayed counts */
	double total;		/* 0: use the sum; larger values set 100% */
	int inverted;		/* icicle */
	int reverse;		/* merge from the leaves */
	int flamechart;		/* input order; only adjacent lines merge */
	int negate;		/* differential: swap red and blue */
	enum flame_diff diffmode;
	int no_unescape;	/* do not decode %XX escapes in frame names */
};

void flame_opts_init(struct flame_opts *o);

struct flame;

struct flame *flame_new(const struct flame_opts *o);
/*
 * Adds one stack.  STACK[0..LEN) is modified (split, unescaped).  With
 * HAS2 the line is differential: widths come from COUNT2 and the delta
 * is COUNT2 - COUNT.
 */
void flame_add(struct flame *f, char *stack, size_t len, double count,
    double count2, int has2);
/* Changes the count name (e.g. "ms" once the input turns out to be evt). */
void flame_set_countname(struct flame *f, const char *name);
/*
 * Writes the SVG.  Returns 0, or -1 when there was no input with a
 * positive weight (an error SVG is written, as flamegraph.pl does).
 */
int flame_write_svg(struct flame *f, struct outbuf *ob);
void flame_free(struct flame *f);

/* 1 if PALETTE is a known palette name (hot, mem, io, ..., etw). */
int flame_palette_known(const char *palette);

#endif
