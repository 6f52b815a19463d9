/*
 * views.c - call tree, caller/callee and by-name views on lib/stacks,
 * and the speedscope JSON writer.
 */
#include "report/views.h"
#include "base/escape.h"
#include "report/numfmt.h"
#include "base/cli.h"
#include "base/intern.h"

#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* shared formatting                                                   */

static void
put_value(struct outbuf *ob, double v, int width, int tsv)
{
	char b[64];

	if (tsv)
		fmt_num(b, v);
	else
		fmt_thousands(b, v, 3);
	if (!tsv)
		for (int i = (int)strlen(b); i < width; i++)
			ob_putc(ob, ' ');
	ob_puts(ob, b);
}

static void
put_pct(struct outbuf *ob, double v, double total, int width, int tsv)
{
	char b[32];

	snprintf(b, sizeof(b), "%.2f", total != 0 ? 100 * v / total : 0);
	if (!tsv)
		for (int i = (int)strlen(b); i < width; i++)
			ob_putc(ob, ' ');
	ob_puts(ob, b);
}

static void
sep(struct outbuf *ob, int tsv)
{
	ob_puts(ob, tsv ? "\t" : "  ");
}

/*
 * --error: the sampling error of a row's inclusive share, in percentage
 * points at 95% confidence.  A row holding K of N samples is a binomial
 * draw: its share could have come out 1.96 * sqrt(p (1 - p) / N) away
 * (p = K/N, the normal approximation).  This is why PerfView asks for
 * about 1,000 samples: below that a 10% row is +-2 points or worse.
 * Durations measured exactly (DPC, thread time) have no sampling error;
 * the column then only says how many events the share rests on.
 */
static void
put_error(struct outbuf *ob, int64_t k, int64_t n, int tsv)
{
	char b[32];
	double p = n > 0 ? (double)k / (double)n : 0;

	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	snprintf(b, sizeof(b), "%.2f", n > 0 ? 100 * 1.96 * sqrt(p * (1 - p) / (double)n) : 0);
	if (!tsv)
		for (int i = (int)strlen(b); i < 7; i++)
			ob_putc(ob, ' ');
	ob_puts(ob, b);
	sep(ob, tsv);
}

/*
 * A tree line's indentation: one space per level, then "+ ".  Past
 * VIEW_MAX_INDENT levels the indentation stops growing and the level is
 * written as a number ("+ [depth 300] "), so a line's length does not
 * grow with the depth and the text stays linear in the input.
 */
static void
put_indent(struct outbuf *ob, int depth)
{
	int i, n = depth < VIEW_MAX_INDENT ? depth : VIEW_MAX_INDENT;

	for (i = 0; i < n; i++)
		ob_putc(ob, ' ');
	if (depth > VIEW_MAX_INDENT)
		ob_printf(ob, "+ [depth %d] ", depth);
	else if (depth)
		ob_puts(ob, "+ ");
}

/* ------------------------------------------------------------------ */
/* call tree                                                           */

struct walk {
	uint32_t id;
	int depth;
};

static int
node_hidden(const struct stk_node *n)
{
	return n->folded;
}

int
view_tree(struct stk *S, const struct view_opts *o, struct outbuf *ob)
{
	double div = stk_unit_div(S);
	const struct stk_node *root = stk_node(S, STK_ROOT);
	double total = (double)root->inc / div;
	double minw = o->min_percent > 0 ? fabs(total) * o->min_percent / 100 : 0;
	struct walk *stk;
	size_t sp = 0, cap = 256, nkids, k;
	uint32_t *kids = NULL;
	size_t kcap = 0;
	int tsv = o->tsv;

	if (root->inc == 0 && root->child == STK_NONE)
		return -1;
	stk_sort_children(S, 0);
	if (tsv)
		ob_printf(ob, "#depth\tinc_%s\tinc%%\t%sexc_%s\texc%%\tname\n", stk_unit_name(S),
		    o->error ? "inc%_err95\t" : "", stk_unit_name(S));
	else
		ob_printf(ob, "%14s  %7s  %s%14s  %7s  name\n", "inc", "inc%",
		    o->error ? " +-95%  " : "", "exc", "exc%");
	stk = xmalloc(cap * sizeof(*stk));
	stk[sp].id = STK_ROOT;
	stk[sp++].depth = 0;
	while (sp) {
		struct walk w = stk[--sp];
		const struct stk_node *n = stk_node(S, w.id);
		uint32_t c, last = w.id;
		int chain = 1;

		/* a frame that only calls itself: shown once with [N frames] */
		while (w.id != STK_ROOT) {
			const struct stk_node *ln = stk_node(S, last);
			uint32_t only = ln->child;

			if (ln->exc != 0 || only == STK_NONE || stk_node(S, only)->sibling != STK_NONE ||
			    stk_node(S, only)->frame != n->frame || node_hidden(stk_node(S, only)))
				break;
			last = only;
			chain++;
		}
		if (tsv)
			ob_printf(ob, "%d\t", w.depth);
		put_value(ob, (double)n->inc / div, 14, tsv);
		sep(ob, tsv);
		put_pct(ob, (double)n->inc / div, total, 7, tsv);
		sep(ob, tsv);
		if (o->error)
			put_error(ob, n->inc_count, root->inc_count, tsv);
		put_value(ob, (double)stk_node(S, last)->exc / div, 14, tsv);
		sep(ob, tsv);
		put_pct(ob, (double)stk_node(S, last)->exc / div, total, 7, tsv);
		sep(ob, tsv);
		if (!tsv)
			put_indent(ob, w.depth);
		if (w.id == STK_ROOT)
			ob_puts(ob, "ROOT");
		else if (tsv)
			fmt_tsv_text(ob, stk_name(S, n->frame));
		else
			text_escape_str(ob, stk_name(S, n->frame));
		if (chain > 1)
			ob_printf(ob, " [%d frames]", chain);
		ob_putc(ob, '\n');
		if (o->max_depth > 0 && w.depth >= o->max_depth)
			continue;
		/* children in order: push reversed */
		nkids = 0;
		for (c = stk_node(S, last)->child; c != STK_NONE; c = stk_node(S, c)->sibling) {
			const struct stk_node *cn = stk_node(S, c);

			if (node_hidden(cn) || fabs((double)cn->inc / div) < minw || cn->inc == 0)
				continue;
			if (nkids == kcap) {
				kcap = kcap ? 2 * kcap : 64;
				kids = xrealloc(kids, kcap * sizeof(*kids));
			}
			kids[nkids++] = c;
		}
		for (k = nkids; k > 0; k--) {
			if (sp == cap) {
				cap *= 2;
				stk = xrealloc(stk, cap * sizeof(*stk));
			}
			stk[sp].id = kids[k - 1];
			stk[sp++].depth = w.depth + 1;
		}
	}
	free(stk);
	free(kids);
	return 0;
}

/* ------------------------------------------------------------------ */
/* by name                                                             */

int
view_byname(struct stk *S, const struct view_opts *o, struct outbuf *ob)
{
	struct stk_byname *rows;
	int n, i, tsv = o->tsv, when;
	double div = stk_unit_div(S);
	double total = (double)stk_node(S, STK_ROOT)->inc / div;

	if (stk_byname(S, &rows, &n) < 0 || n == 0) {
		if (n == 0)
			free(rows);
		return -1;
	}
	{
		double ws, we;

		when = stk_when_range(S, &ws, &we);
	}
	if (tsv)
		ob_printf(ob, "#exc_%s\texc%%\texc_count\tinc_%s\tinc%%\t%sinc_count\tfirst_ms\tlast_ms\t%sname\n",
		    stk_unit_name(S), stk_unit_name(S), o->error ? "inc%_err95\t" : "", when ? "when\t" : "");
	else
		ob_printf(ob, "%14s  %7s  %10s  %14s  %7s  %s%10s  %12s  %12s  %s%sname\n", "exc", "exc%",
		    "exc_ct", "inc", "inc%", o->error ? " +-95%  " : "", "inc_ct", "first_ms", "last_ms",
		    when ? "when                            " : "", when ? "  " : "");
	for (i = 0; i < n; i++) {
		struct stk_byname *r = &rows[i];
		char f[32], l[32];

		if (isnan(r->first))
			strcpy(f, "-"), strcpy(l, "-");
		else {
			snprintf(f, sizeof(f), "%.3f", r->first);
			snprintf(l, sizeof(l), "%.3f", r->last);
		}
		put_value(ob, (double)r->exc / div, 14, tsv);
		sep(ob, tsv);
		put_pct(ob, (double)r->exc / div, total, 7, tsv);
		sep(ob, tsv);
		ob_printf(ob, tsv ? "%lld" : "%10lld", (long long)r->exc_count);
		sep(ob, tsv);
		put_value(ob, (double)r->inc / div, 14, tsv);
		sep(ob, tsv);
		put_pct(ob, (double)r->inc / div, total, 7, tsv);
		sep(ob, tsv);
		if (o->error)
			put_error(ob, r->inc_count, stk_node(S, STK_ROOT)->inc_count, tsv);
		ob_printf(ob, tsv ? "%lld" : "%10lld", (long long)r->inc_count);
		sep(ob, tsv);
		ob_printf(ob, tsv ? "%s\t%s\t" : "%12s  %12s  ", f, l);
		if (when) {
			char w[STK_WHEN_BUCKETS + 1];

			stk_when_text(S, r->when, w);
			ob_puts(ob, w);
			ob_puts(ob, tsv ? "\t" : "  ");
		}
		if (tsv)
			fmt_tsv_text(ob, stk_name(S, r->frame));
		else
			text_escape_str(ob, stk_name(S, r->frame));
		ob_putc(ob, '\n');
	}
	free(rows);
	return 0;
}

/* ------------------------------------------------------------------ */
/* caller / callee                                                     */

/* a small tree of frame ids for the callers/callees trees */
struct ctree {
	struct cnode {
		uint32_t frame, parent, child, sibling;
		double inc, exc;
	} *n;
	size_t nn, cap;
};

static uint32_t
ct_child(struct ctree *t, uint32_t parent, uint32_t frame)
{
	uint32_t c;

	for (c = t->n[parent].child; c != STK_NONE; c = t->n[c].sibling)
		if (t->n[c].frame == frame)
			return c;
	if (t->nn == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->n = xrealloc(t->n, t->cap * sizeof(*t->n));
	}
	c = (uint32_t)t->nn++;
	t->n[c].frame = frame;
	t->n[c].parent = parent;
	t->n[c].child = STK_NONE;
	t->n[c].sibling = t->n[parent].child;
	t->n[c].inc = t->n[c].exc = 0;
	t->n[parent].child = c;
	return c;
}

static const struct ctree *sort_tree;

static int
by_inc(const void *a, const void *b)
{
	double x = fabs(sort_tree->n[*(const uint32_t *)a].inc);
	double y = fabs(sort_tree->n[*(const uint32_t *)b].inc);

	return (x < y) - (x > y);
}

static void
ct_print(struct ctree *t, struct stk *S, const struct view_opts *o, double total,
    struct outbuf *ob)
{
	struct walk *stk = xmalloc(t->nn * sizeof(*stk));
	uint32_t *kids = xmalloc(t->nn * sizeof(*kids));
	size_t sp = 0, nk, k;
	int tsv = o->tsv;
	double minw = o->min_percent > 0 ? fabs(total) * o->min_percent / 100 : 0;

	sort_tree = t;
	stk[sp].id = 0;
	stk[sp++].depth = 0;
	while (sp) {
		struct walk w = stk[--sp];
		struct cnode *n = &t->n[w.id];
		uint32_t c;

		if (tsv)
			ob_printf(ob, "%d\t", w.depth);
		put_value(ob, n->inc, 14, tsv);
		sep(ob, tsv);
		put_pct(ob, n->inc, total, 7, tsv);
		sep(ob, tsv);
		put_value(ob, n->exc, 14, tsv);
		sep(ob, tsv);
		put_pct(ob, n->exc, total, 7, tsv);
		sep(ob, tsv);
		if (!tsv)
			put_indent(ob, w.depth);
		if (n->frame == STK_NONE)
			ob_puts(ob, "[root]");
		else if (tsv)
			fmt_tsv_text(ob, stk_name(S, n->frame));
		else
			text_escape_str(ob, stk_name(S, n->frame));
		ob_putc(ob, '\n');
		nk = 0;
		for (c = n->child; c != STK_NONE; c = t->n[c].sibling)
			if (fabs(t->n[c].inc) >= minw && t->n[c].inc != 0)
				kids[nk++] = c;
		qsort(kids, nk, sizeof(*kids), by_inc);
		for (k = nk; k > 0; k--) {
			stk[sp].id = kids[k - 1];
			stk[sp++].depth = w.depth + 1;
		}
	}
	free(stk);
	free(kids);
}

struct imm {
	uint32_t frame;		/* STK_NONE: no caller (root) / no callee (self) */
	double w;
};

static void
imm_add(struct imm **v, size_t *n, size_t *cap, uint32_t frame, double w)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*v)[i].frame == frame) {
			(*v)[i].w += w;
			return;
		}
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[*n].frame = frame;
	(*v)[(*n)++].w = w;
}

static int
imm_cmp(const void *a, const void *b)
{
	double x = fabs(((const struct imm *)a)->w), y = fabs(((const struct imm *)b)->w);

	return (x < y) - (x > y);
}

static int
focus_match(const char *pat, const char *name)
{
	if (strcmp(pat, name) == 0)
		return 1;
	return strpbrk(pat, "*?[") != NULL && fnmatch(pat, name, 0) == 0;
}

int
view_caller_callee(struct stk *S, const struct view_opts *o, int callers,
    struct outbuf *ob)
{
	double div = stk_unit_div(S);
	double total = (double)stk_node(S, STK_ROOT)->inc / div;
	uint32_t nn = stk_nnodes(S), id, nf = stk_nframes(S), f;
	char *is_focus = xcalloc(nf + 1, 1);
	uint32_t *path = NULL;
	size_t pcap = 0, np, i, nimm = 0, capimm = 0, nmatch = 0;
	struct imm *imm = NULL;
	struct ctree t;
	double finc = 0, fexc = 0;
	int tsv = o->tsv;

	for (f = 0; f < nf; f++)
		if (focus_match(o->focus, stk_name(S, f))) {
			is_focus[f] = 1;
			nmatch++;
		}
	memset(&t, 0, sizeof(t));
	t.cap = 256;
	t.n = xmalloc(t.cap * sizeof(*t.n));
	t.nn = 1;
	t.n[0].frame = STK_NONE;
	t.n[0].parent = STK_NONE;
	t.n[0].child = STK_NONE;
	t.n[0].sibling = STK_NONE;
	t.n[0].inc = t.n[0].exc = 0;
	/* every distinct stack = every unfolded node with exclusive weight */
	for (id = 1; id < nn && nmatch; id++) {
		const struct stk_node *n = stk_node(S, id);
		double w;
		size_t occ = 0, deepest = 0;
		uint32_t p;

		if (n->folded || n->exc == 0)
			continue;
		np = 0;
		for (p = id; p != STK_ROOT && p != STK_NONE; p = stk_node(S, p)->parent) {
			if (np == pcap) {
				pcap = pcap ? 2 * pcap : 256;
				path = xrealloc(path, pcap * sizeof(*path));
			}
			path[np++] = stk_node(S, p)->frame;
		}
		/* path is leaf first: reverse to root first */
		for (i = 0; i < np / 2; i++) {
			uint32_t x = path[i];

			path[i] = path[np - 1 - i];
			path[np - 1 - i] = x;
		}
		for (i = 0; i < np; i++)
			if (is_focus[path[i]]) {
				occ++;
				deepest = i;
			}
		if (occ == 0)
			continue;
		w = (double)n->exc / div;
		finc += w;
		if (is_focus[path[np - 1]])
			fexc += w;
		/* immediate callers/callees: each occurrence gets 1/N */
		for (i = 0; i < np; i++) {
			if (!is_focus[path[i]])
				continue;
			if (callers)
				imm_add(&imm, &nimm, &capimm, i > 0 ? path[i - 1] : STK_NONE, w / (double)occ);
			else
				imm_add(&imm, &nimm, &capimm, i + 1 < np ? path[i + 1] : STK_NONE,
				    w / (double)occ);
		}
		/* the tree from the deepest occurrence */
		{
			uint32_t cur = 0;

			t.n[0].inc += w;
			if (callers) {
				for (i = deepest + 1; i-- > 0;) {
					cur = ct_child(&t, cur, path[i]);
					t.n[cur].inc += w;
				}
			} else {
				for (i = deepest; i < np; i++) {
					cur = ct_child(&t, cur, path[i]);
					t.n[cur].inc += w;
				}
				t.n[cur].exc += w;
			}
		}
	}
	free(path);
	free(is_focus);
	if (nmatch == 0 || finc == 0) {
		cli_warn("no sample contains the frame '%s'", o->focus);
		free(t.n);
		free(imm);
		return -1;
	}
	if (nimm > 1)
		qsort(imm, nimm, sizeof(*imm), imm_cmp);
	if (tsv)
		ob_printf(ob, "#focus\t%s\t%s\n", o->focus, stk_unit_name(S));
	else {
		ob_puts(ob, "Focus ");
		text_escape_str(ob, o->focus);
		ob_puts(ob, ": inclusive ");
		put_value(ob, finc, 0, 0);
		ob_printf(ob, " %s (%.2f%%), exclusive ", stk_unit_name(S), total ? 100 * finc / total : 0);
		put_value(ob, fexc, 0, 0);
		ob_printf(ob, " (%.2f%%)\n\n%s (a frame occurring N times on a stack gives 1/N to each)\n",
		    total ? 100 * fexc / total : 0, callers ? "Immediate callers" : "Immediate callees");
	}
	for (i = 0; i < nimm; i++) {
		if (tsv)
			ob_puts(ob, callers ? "caller\t" : "callee\t");
		put_value(ob, imm[i].w, 14, tsv);
		sep(ob, tsv);
		put_pct(ob, imm[i].w, total, 7, tsv);
		sep(ob, tsv);
		if (imm[i].frame == STK_NONE)
			ob_puts(ob, callers ? "[root]" : "[self]");
		else if (tsv)
			fmt_tsv_text(ob, stk_name(S, imm[i].frame));
		else
			text_escape_str(ob, stk_name(S, imm[i].frame));
		ob_putc(ob, '\n');
	}
	if (!tsv)
		ob_printf(ob, "\n%s tree (deepest occurrence of the focus on each stack)\n%14s  %7s  %14s  %7s  name\n",
		    callers ? "Callers" : "Callees", "inc", "inc%", "exc", "exc%");
	else
		ob_puts(ob, "#tree\n");
	/* skip the synthetic root: print from its single focus children */
	{
		uint32_t c;
		struct ctree sub = t;

		for (c = t.n[0].child; c != STK_NONE; c = t.n[c].sibling) {
			/* print each focus-rooted subtree with a temporary root */
			struct cnode save = t.n[0];

			t.n[0] = t.n[c];
			t.n[0].sibling = STK_NONE;
			sub = t;
			ct_print(&sub, S, o, total, ob);
			t.n[0] = save;
		}
	}
	free(t.n);
	free(imm);
	return 0;
}

/* ------------------------------------------------------------------ */
/* what the Idle rule removed                                          */

void
view_idle_note(const char *name, int64_t events, double removed, double total,
    const char *unit)
{
	char n[64], w[64];
	double pct = total != 0 ? 100 * removed / total : 0;

	if (events <= 0)
		return;
	fmt_thousands(n, (double)events, 0);
	fmt_thousands(w, removed, 3);
	if (strcmp(unit, "samples") == 0)
		cli_warn("%s%sremoved Idle: %s samples (%.1f%% of the total); "
		    "--keep-idle keeps them", name ? name : "", name ? ": " : "", w, pct);
	else
		cli_warn("%s%sremoved Idle: %s events, %s %s (%.1f%% of the total); "
		    "--keep-idle keeps them", name ? name : "", name ? ": " : "", n, w, unit, pct);
}

void
view_idle_note_stk(const char *name, const struct stk *S)
{
	const struct stk_stats *st = stk_get_stats(S);
	double div = stk_unit_div(S);

	view_idle_note(name, st->idle_events, (double)st->idle_metric / div,
	    ((double)st->metric + (double)st->idle_metric) / div, stk_unit_name(S));
}

/* ------------------------------------------------------------------ */
/* speedscope                                                          */

struct sprofile {
	char *name;
	long pid, tid;
	uint32_t *stack;	/* stack id per sample */
	double *w;
	double *t;		/* time column per sample (evt), for start order */
	size_t n, cap;
	double start, end;
	int have_time;
	int unordered;		/* a sample started before the one added before it */
};

struct speedscope {
	enum speedscope_by by;
	int no_unescape;
	struct intern frames;	/* frame names; the id is the index in "frames" */
	struct intern stacks;	/* stacks: sequences of frame ids, as bytes */
	/* profiles */
	struct sprofile *p;
	size_t np;
	uint32_t *cur;		/* frame ids of the sample being added */
	size_t curcap;
};

struct speedscope *
speedscope_new(enum speedscope_by by, int no_unescape)
{
	struct speedscope *ss = xcalloc(1, sizeof(*ss));

	ss->by = by;
	ss->no_unescape = no_unescape;
	intern_init(&ss->frames);
	intern_init(&ss->stacks);
	return ss;
}

/* The id of a stack, the frame ids F[0..N), kept as their bytes (F may be NULL when N is 0). */
static uint32_t
ss_stack(struct speedscope *ss, const uint32_t *f, size_t n)
{
	return intern_add(&ss->stacks, n ? (const char *)f : "", n * sizeof(*f));
}

/* Frame K (0-based) of stack SID; the bytes of an interned string need not be aligned. */
static uint32_t
ss_stack_frame(const struct speedscope *ss, uint32_t sid, size_t k)
{
	uint32_t id;

	memcpy(&id, intern_str(&ss->stacks, sid) + k * sizeof(id), sizeof(id));
	return id;
}

static struct sprofile *
ss_profile(struct speedscope *ss, const struct evt_event *ev)
{
	long pid = -1, tid = -1;
	const char *proc = "all";
	char name[512];
	size_t i;

	if (ev && ss->by != SS_ALL) {
		pid = ev->pid;
		proc = ev->process;
		if (ss->by == SS_THREAD)
			tid = ev->tid;
	}
	for (i = ss->np; i > 0; i--)
		if (ss->p[i - 1].pid == pid && ss->p[i - 1].tid == tid)
			return &ss->p[i - 1];
	if (ev && ss->by != SS_ALL) {
		char pb[256];
		size_t l = strlen(proc);

		if (l >= sizeof(pb))
			l = sizeof(pb) - 1;
		memcpy(pb, proc, l);
		pb[evt_unescape(pb, l)] = '\0';
		if (ss->by == SS_THREAD)
			snprintf(name, sizeof(name), "%s (%ld) Thread (%ld)", pb, pid, tid);
		else
			snprintf(name, sizeof(name), "%s (%ld)", pb, pid);
	} else
		snprintf(name, sizeof(name), "all");
	ss->p = xrealloc(ss->p, (ss->np + 1) * sizeof(*ss->p));
	memset(&ss->p[ss->np], 0, sizeof(ss->p[0]));
	ss->p[ss->np].name = xstrdup(name);
	ss->p[ss->np].pid = pid;
	ss->p[ss->np].tid = tid;
	return &ss->p[ss->np++];
}

void
speedscope_add(struct speedscope *ss, char *stack, size_t len, double w,
    const struct evt_event *ev)
{
	struct sprofile *p = ss_profile(ss, ev);
	char *s = stack, *end = stack + len, *semi;
	size_t nf = 0;
	uint32_t sid;

	while (len > 0 && s <= end) {
		size_t n;

		semi = memchr(s, ';', (size_t)(end - s));
		if (semi == NULL)
			semi = end;
		n = (size_t)(semi - s);
		if (!ss->no_unescape)
			n = evt_unescape(s, n);
		if (nf == ss->curcap) {
			ss->curcap = ss->curcap ? 2 * ss->curcap : 256;
			ss->cur = xrealloc(ss->cur, ss->curcap * sizeof(*ss->cur));
		}
		ss->cur[nf++] = intern_add(&ss->frames, s, n);
		s = semi + 1;
	}
	sid = ss_stack(ss, ss->cur, nf);
	if (ev) {
		if (!p->have_time || ev->time_ms < p->start)
			p->start = ev->time_ms;
		if (!p->have_time || ev->time_ms + w > p->end)
			p->end = ev->time_ms + w;
		p->have_time = 1;
	}
	/*
	 * Consecutive identical samples merge (the time order is kept).  evt
	 * comes in log order (docs/evt-format.md §2): an interval (DPC, ISR)
	 * is logged when it ends, so one that started earlier may come
	 * later; such a profile is sorted by start when written.
	 */
	double t = ev ? ev->time_ms : 0;
	if (p->n > 0 && t < p->t[p->n - 1])
		p->unordered = 1;
	else if (p->n > 0 && p->stack[p->n - 1] == sid) {
		p->w[p->n - 1] += w;
		return;
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->stack = xrealloc(p->stack, p->cap * sizeof(*p->stack));
		p->w = xrealloc(p->w, p->cap * sizeof(*p->w));
		p->t = xrealloc(p->t, p->cap * sizeof(*p->t));
	}
	p->stack[p->n] = sid;
	p->t[p->n] = t;
	p->w[p->n++] = w;
}

struct ss_time {
	double t;
	size_t i;
};

static int
ss_time_cmp(const void *a, const void *b)
{
	const struct ss_time *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);	/* stable: log order among equal starts */
}

/* A profile that went back in time: its samples in start order. */
static void
ss_sort_profile(struct sprofile *p)
{
	struct ss_time *o;
	uint32_t *stack;
	double *w;
	size_t k;

	if (!p->unordered)
		return;
	o = xmalloc(p->n * sizeof(*o));
	for (k = 0; k < p->n; k++) {
		o[k].t = p->t[k];
		o[k].i = k;
	}
	qsort(o, p->n, sizeof(*o), ss_time_cmp);
	stack = xmalloc(p->n * sizeof(*stack));
	w = xmalloc(p->n * sizeof(*w));
	for (k = 0; k < p->n; k++) {
		stack[k] = p->stack[o[k].i];
		w[k] = p->w[o[k].i];
		p->t[k] = o[k].t;
	}
	free(p->stack);
	free(p->w);
	p->stack = stack;
	p->w = w;
	p->unordered = 0;
	free(o);
}

static void
put_json_num(struct outbuf *ob, double v)
{
	char b[64];

	fmt_num(b, v);
	ob_puts(ob, b);
}

/* A profile's place in the file: its weight, its process's, and when it was first seen. */
struct ss_order {
	size_t index;
	long pid;
	double total, proc_total;
};

static int
ss_by_pid(const void *a, const void *b)
{
	const struct ss_order *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* the busiest process first, and in it the busiest thread; ties as first seen */
static int
ss_by_weight(const void *a, const void *b)
{
	const struct ss_order *x = a, *y = b;

	if (x->proc_total != y->proc_total)
		return x->proc_total > y->proc_total ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The order profiles are written in: speedscope opens on the first
 * (activeProfileIndex 0), so it is the busiest process's busiest
 * thread (--by process: the busiest process), not the first seen.
 */
static struct ss_order *
ss_order(const struct speedscope *ss)
{
	struct ss_order *o = xcalloc(ss->np, sizeof(*o));
	size_t i, k, run;

	for (i = 0; i < ss->np; i++) {
		o[i].index = i;
		o[i].pid = ss->p[i].pid;
		for (k = 0; k < ss->p[i].n; k++)
			o[i].total += ss->p[i].w[k];
	}
	qsort(o, ss->np, sizeof(*o), ss_by_pid);
	for (i = 0; i < ss->np; i = run) {
		double sum = 0;

		for (run = i; run < ss->np && o[run].pid == o[i].pid; run++)
			sum += o[run].total;
		for (k = i; k < run; k++)
			o[k].proc_total = sum;
	}
	qsort(o, ss->np, sizeof(*o), ss_by_weight);
	return o;
}

/* speedscope's name for a unit of lib/stacks (NULL: folded counts, no unit) */
static const char *
ss_unit(const char *unit)
{
	if (unit != NULL && strcmp(unit, "us") == 0)
		return "microseconds";
	if (unit != NULL && strcmp(unit, "ms") == 0)
		return "milliseconds";
	if (unit != NULL && strcmp(unit, "bytes") == 0)
		return "bytes";		/* CLR allocations */
	return "none";
}

int
speedscope_write(struct speedscope *ss, const char *name, const char *unit,
    struct outbuf *ob)
{
	size_t i, k, j;
	struct ss_order *order;

	if (ss->np == 0)
		return -1;
	order = ss_order(ss);
	ob_puts(ob, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	    "\"exporter\":\"etlkit-render@" ETLKIT_VERSION "\",\"name\":\"");
	json_escape(ob, name, strlen(name));
	ob_puts(ob, "\",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
	for (i = 0; i < ss->frames.n; i++) {
		ob_puts(ob, i ? ",\n{\"name\":\"" : "\n{\"name\":\"");
		json_escape(ob, intern_str(&ss->frames, (uint32_t)i),
		    intern_len(&ss->frames, (uint32_t)i));
		ob_puts(ob, "\"}");
	}
	ob_puts(ob, "]},\"profiles\":[");
	for (i = 0; i < ss->np; i++) {
		struct sprofile *p = &ss->p[order[i].index];

		ss_sort_profile(p);
		ob_puts(ob, i ? ",\n{\"type\":\"sampled\",\"name\":\"" : "\n{\"type\":\"sampled\",\"name\":\"");
		json_escape(ob, p->name, strlen(p->name));
		ob_printf(ob, "\",\"unit\":\"%s\",\"startValue\":", ss_unit(unit));
		put_json_num(ob, 0);
		ob_puts(ob, ",\"endValue\":");
		put_json_num(ob, order[i].total);
		ob_puts(ob, ",\"samples\":[");
		for (k = 0; k < p->n; k++) {
			uint32_t sid = p->stack[k];

			ob_puts(ob, k ? ",[" : "[");
			for (j = 0; j < intern_len(&ss->stacks, sid) / sizeof(uint32_t); j++) {
				if (j)
					ob_putc(ob, ',');
				ob_printf(ob, "%u", ss_stack_frame(ss, sid, j));
			}
			ob_putc(ob, ']');
		}
		ob_puts(ob, "],\"weights\":[");
		for (k = 0; k < p->n; k++) {
			if (k)
				ob_putc(ob, ',');
			put_json_num(ob, p->w[k]);
		}
		ob_puts(ob, "]}");
	}
	ob_puts(ob, "]}\n");
	free(order);
	return 0;
}

void
speedscope_free(struct speedscope *ss)
{
	size_t i;

	if (ss == NULL)
		return;
	for (i = 0; i < ss->np; i++) {
		free(ss->p[i].name);
		free(ss->p[i].stack);
		free(ss->p[i].w);
		free(ss->p[i].t);
	}
	free(ss->p);
	intern_release(&ss->frames);
	intern_release(&ss->stacks);
	free(ss->cur);
	free(ss);
}
