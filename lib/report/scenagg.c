/*
 * scenagg.c - multi-scenario stack aggregation: an exact (integer) sum
 * keyed by (scenario, stack), folded and by-name output with PerfView's
 * Which histogram.
 */
#define _POSIX_C_SOURCE 200809L
#include "report/scenagg.h"
#include "base/cli.h"
#include "base/intern.h"
#include "evt/evt.h"
#include "stacks/stacks.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINE_WARNINGS 5

/* ------------------------------------------------------------------ */
/* storage                                                             */

struct cell {
	int32_t scen;
	int64_t val;
};

/*
 * One distinct stack's weight per scenario (sparse); the stack's id in
 * the interning table is its index.  The first scenario's cell is
 * inline: a stack seen in one scenario, the common case, costs no
 * allocation of its own.
 */
struct entry {
	uint32_t ncell, capmore;
	struct cell one;	/* cell 0 */
	struct cell *more;	/* cells 1.. */
};

struct scenario {
	char *name;
	unsigned long files;
	int rank;		/* position in name order */
};

struct scenagg {
	struct intern stacks;	/* the distinct stacks; an id indexes ent */
	struct entry *ent;
	size_t nent, capent;
	struct scenario *scen;
	int nscen, capscen;
};

/* the entry's cell I (< ncell) */
static struct cell *
ecell(const struct entry *e, uint32_t i)
{
	return i == 0 ? (struct cell *)&e->one : &e->more[i - 1];
}

struct scenagg *
scenagg_new(void)
{
	struct scenagg *sa = xcalloc(1, sizeof(*sa));

	intern_init(&sa->stacks);
	return sa;
}

void
scenagg_free(struct scenagg *sa)
{
	size_t i;
	int s;

	if (sa == NULL)
		return;
	for (i = 0; i < sa->nent; i++)
		free(sa->ent[i].more);
	free(sa->ent);
	intern_release(&sa->stacks);
	for (s = 0; s < sa->nscen; s++)
		free(sa->scen[s].name);
	free(sa->scen);
	free(sa);
}

int
scenagg_scenario(struct scenagg *sa, const char *name)
{
	int i;

	for (i = 0; i < sa->nscen; i++)
		if (strcmp(sa->scen[i].name, name) == 0)
			return i;
	if (sa->nscen == sa->capscen) {
		sa->capscen = sa->capscen ? 2 * sa->capscen : 16;
		sa->scen = xrealloc(sa->scen, (size_t)sa->capscen * sizeof(*sa->scen));
	}
	sa->scen[sa->nscen].name = xstrdup(name);
	sa->scen[sa->nscen].files = 0;
	sa->scen[sa->nscen].rank = 0;
	return sa->nscen++;
}

int
scenagg_nscenarios(const struct scenagg *sa)
{
	return sa->nscen;
}

void
scenagg_count_file(struct scenagg *sa, int id)
{
	sa->scen[id].files++;
}

static struct entry *
lookup(struct scenagg *sa, const char *stack, size_t len)
{
	uint32_t id = intern_add(&sa->stacks, stack, len);

	if (id == sa->nent) {
		if (sa->nent == sa->capent) {
			sa->capent = sa->capent ? 2 * sa->capent : 1024;
			sa->ent = xrealloc(sa->ent, sa->capent * sizeof(*sa->ent));
		}
		memset(&sa->ent[sa->nent++], 0, sizeof(*sa->ent));
	}
	return &sa->ent[id];
}

/* Adds WEIGHT (x 10^6) to STACK (folded text, root first) in scenario SCEN. */
static void
scenagg_add(struct scenagg *sa, int scen, const char *stack, size_t len, int64_t weight)
{
	struct entry *e = lookup(sa, stack, len);
	uint32_t i;

	/* inputs come one scenario at a time, so the last cell is the usual hit */
	if (e->ncell > 0 && ecell(e, e->ncell - 1)->scen == scen) {
		ecell(e, e->ncell - 1)->val += weight;
		return;
	}
	for (i = 0; i + 1 < e->ncell; i++)
		if (ecell(e, i)->scen == scen) {
			ecell(e, i)->val += weight;
			return;
		}
	if (e->ncell > 0 && e->ncell - 1 == e->capmore) {
		e->capmore = e->capmore ? 2 * e->capmore : 2;
		e->more = xrealloc(e->more, e->capmore * sizeof(*e->more));
	}
	ecell(e, e->ncell)->scen = scen;
	ecell(e, e->ncell)->val = weight;
	e->ncell++;
}

/* ------------------------------------------------------------------ */
/* input                                                               */

static int64_t
to_micro(double v)
{
	return (int64_t)llround(v * SCENAGG_UNIT);
}

static void
line_warning(const char *path, unsigned long lineno, const char *why,
    struct scenagg_file_stats *st)
{
	st->skipped++;
	if (st->skipped <= MAX_LINE_WARNINGS)
		cli_warn("%s:%lu: %s", path, lineno, why);
	else if (st->skipped == MAX_LINE_WARNINGS + 1)
		cli_warn("%s: more malformed lines; counting them", path);
}

int
scenagg_read(struct scenagg *sa, int scen, const char *path, struct scenagg_file_stats *st)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int first = 1;
	struct evt_stack_cut cut = { 0 };

	memset(st, 0, sizeof(*st));
	if (lr == NULL)
		return -1;
	while ((line = lr_next(lr, &len)) != NULL) {
		enum evt_linetype t = evt_classify(line, len);

		if (t == EVT_BLANK)
			continue;
		if (first) {
			first = 0;
			if (t == EVT_HEADER) {
				cli_warn("%s:%lu: %s", path, lr_lineno(lr), scen == SCENAGG_MERGE ?
				    "merge input must be folded stacks with a scenario frame, not evt" :
				    "evt input goes through scenagg_read_stacks");
				st->skipped++;
				break;
			}
		}
		{
			char *stack;
			size_t slen;
			double c1, c2;
			int has2, s = scen;
			int64_t w;

			if (folded_parse(line, len, &stack, &slen, &c1, &c2, &has2) < 0) {
				line_warning(path, lr_lineno(lr),
				    FOLDED_MALFORMED, st);
				continue;
			}
			if (has2) {
				line_warning(path, lr_lineno(lr),
				    "two-column (diff) folded line; aggregate sums one column", st);
				continue;
			}
			if (scen == SCENAGG_MERGE) {
				char *semi = memchr(stack, ';', slen);
				char save;

				if (semi == NULL || semi == stack || semi + 1 == stack + slen) {
					line_warning(path, lr_lineno(lr),
					    "merge input line has no scenario frame", st);
					continue;
				}
				save = *semi;
				*semi = '\0';
				s = scenagg_scenario(sa, stack);
				*semi = save;
				slen -= (size_t)(semi + 1 - stack);
				stack = semi + 1;
			}
			stack = evt_cut_stack(&cut, stack, &slen, lr_lineno(lr));
			w = to_micro(c1);
			scenagg_add(sa, s, stack, slen, w);
			st->lines++;
			st->weight += w;
		}
		lr_progress(lr);
	}
	/* lr_finish says what stopped the input (a trace, not text, is fatal) */
	st->error = lr_error(lr) ? "read error" : NULL;
	st->skipped += lr_finish(lr) - (st->error != NULL);	/* too long, NUL bytes */
	evt_cut_report(&cut, path);
	evt_cut_free(&cut);
	lr_close(lr);
	return 0;
}

int
scenagg_read_stacks(struct scenagg *sa, int scen, const char *path,
    const struct stk_config *cfg, struct scenagg_file_stats *st)
{
	struct stk *S;
	const struct stk_stats *ss;
	uint32_t id;
	int depth = 0;
	size_t cap = 4096, len;
	char *buf;
	int64_t factor;

	memset(st, 0, sizeof(*st));
	if (strcmp(path, "-") != 0 && access(path, R_OK) != 0)
		return -1;	/* stk_read would exit: one bad file must not stop the others */
	S = stk_new(cfg);
	st->skipped = (unsigned long)stk_read(S, path);
	stk_finish(S);
	/* stk metrics are millionths of the input unit; ours are millionths of the output unit */
	factor = (int64_t)llround(1e6 / stk_unit_div(S));
	buf = xmalloc(cap);
	for (id = stk_next(S, STK_ROOT, &depth); id != STK_NONE; id = stk_next(S, id, &depth)) {
		const struct stk_node *n = stk_node(S, id);

		if (n->exc == 0)
			continue;
		while ((len = stk_path_text(S, id, buf, cap)) >= cap) {
			cap = len + 1;
			buf = xrealloc(buf, cap);
		}
		scenagg_add(sa, scen, buf, len, n->exc * factor);
		st->lines++;
		st->weight += n->exc * factor;
	}
	ss = stk_get_stats(S);
	st->ignored = (unsigned long)ss->other_kinds;
	st->idle_events = ss->idle_events;
	st->idle_weight = ss->idle_metric * factor;
	st->read_weight = (ss->metric + ss->idle_metric) * factor;
	free(buf);
	stk_free(S);
	return 0;
}

int
scenagg_is_evt(const char *path)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int evt = 0;

	if (lr == NULL)
		return -1;
	lr_set_quiet(lr);	/* a peek: the real read reports bad lines */
	while ((line = lr_next(lr, &len)) != NULL) {
		if (len == 0)
			continue;
		evt = evt_classify(line, len) == EVT_HEADER;
		break;
	}
	lr_close(lr);
	return evt;
}

char *
scenagg_header_scenario(const char *path)
{
	struct linereader *lr = lr_open(path);
	char *line, *name = NULL;
	size_t len;

	if (lr == NULL)
		return NULL;
	lr_set_quiet(lr);	/* a peek: the real read reports bad lines */
	while ((line = lr_next(lr, &len)) != NULL) {
		struct evt_header h;
		const char *why, *v;

		if (len == 0)
			continue;
		if (evt_classify(line, len) == EVT_HEADER &&
		    evt_parse_header(line, len, &h, &why) == 0 &&
		    (v = evt_header_get(&h, "scenario")) != NULL && *v) {
			name = xstrdup(v);
			evt_unescape(name, strlen(name));
		}
		break;
	}
	lr_close(lr);
	return name;
}

/* ------------------------------------------------------------------ */
/* output                                                              */

/* Formats V (x 10^6) as the shortest exact decimal.  Returns the length. */
static int
scenagg_format(char *out, int64_t v)
{
	return evt_format_fixed6(out, v);	/* SCENAGG_UNIT is 10^6 */
}

static struct scenagg *sort_sa;

static int
cmp_scen_rank(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return strcmp(sort_sa->scen[x].name, sort_sa->scen[y].name);
}

/* Sets scen[].rank to the position of each scenario in name order. */
static void
rank_scenarios(struct scenagg *sa)
{
	int *order = xmalloc(((size_t)sa->nscen + 1) * sizeof(*order));
	int i;

	for (i = 0; i < sa->nscen; i++)
		order[i] = i;
	sort_sa = sa;
	qsort(order, (size_t)sa->nscen, sizeof(*order), cmp_scen_rank);
	for (i = 0; i < sa->nscen; i++)
		sa->scen[order[i]].rank = i;
	free(order);
}

/* One output line: a stack (entry) in a scenario (or all scenarios: scen -1). */
struct outline {
	uint32_t ent;
	int32_t scen;
	int64_t val;
	int64_t frac;		/* remainder for largest-remainder rounding */
};

/* the strings A and B (ids) of T in byte order */
static int
cmp_text(const struct intern *t, uint32_t a, uint32_t b)
{
	uint32_t la = intern_len(t, a), lb = intern_len(t, b);
	int c = memcmp(intern_str(t, a), intern_str(t, b), la < lb ? la : lb);

	if (c)
		return c;
	return (la > lb) - (la < lb);
}

static int
cmp_outline(const void *a, const void *b)
{
	const struct outline *x = a, *y = b;

	if (x->scen != y->scen) {
		int rx = x->scen < 0 ? -1 : sort_sa->scen[x->scen].rank;
		int ry = y->scen < 0 ? -1 : sort_sa->scen[y->scen].rank;

		if (rx != ry)
			return rx < ry ? -1 : 1;
	}
	return cmp_text(&sort_sa->stacks, x->ent, y->ent);
}

static int
cmp_frac_desc(const void *a, const void *b)
{
	const struct outline *x = *(const struct outline * const *)a;
	const struct outline *y = *(const struct outline * const *)b;

	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x < y ? -1 : x > y;	/* stable: keep output order */
}

/* Divides by the scenario count (mean) and rounds (integer) as asked. */
static void
finish_values(struct outline *ol, size_t n, int nscen, const struct scenagg_out_opts *oo)
{
	size_t i;

	if (oo->mean && nscen > 1)
		for (i = 0; i < n; i++) {
			int64_t v = ol[i].val, d = nscen;

			ol[i].val = v >= 0 ? (v + d / 2) / d : -((-v + d / 2) / d);
		}
	if (oo->integer) {
		/* largest remainder: the rounded lines add up to the rounded total */
		int64_t total = 0, floors = 0, want;
		struct outline **byfrac = xmalloc((n + 1) * sizeof(*byfrac));

		for (i = 0; i < n; i++) {
			int64_t v = ol[i].val, f = v % SCENAGG_UNIT;

			if (f < 0)
				f += SCENAGG_UNIT;
			total += v;
			ol[i].val = v - f;
			ol[i].frac = f;
			floors += ol[i].val;
			byfrac[i] = &ol[i];
		}
		want = total >= 0 ? (total + SCENAGG_UNIT / 2) / SCENAGG_UNIT * SCENAGG_UNIT :
		    -((-total + SCENAGG_UNIT / 2) / SCENAGG_UNIT) * SCENAGG_UNIT;
		qsort(byfrac, n, sizeof(*byfrac), cmp_frac_desc);
		for (i = 0; i < n && floors < want; i++) {
			byfrac[i]->val += SCENAGG_UNIT;
			floors += SCENAGG_UNIT;
		}
		free(byfrac);
	}
}

/* Collects the output lines in output order. */
static struct outline *
collect_lines(struct scenagg *sa, const struct scenagg_out_opts *oo, size_t *np)
{
	struct outline *ol;
	size_t n = 0, i, cap = 0;
	uint32_t c;

	for (i = 0; i < sa->nent; i++)
		cap += oo->scenario_frame ? sa->ent[i].ncell : 1;
	ol = xmalloc((cap + 1) * sizeof(*ol));
	for (i = 0; i < sa->nent; i++) {
		struct entry *e = &sa->ent[i];

		if (oo->scenario_frame) {
			for (c = 0; c < e->ncell; c++) {
				ol[n].ent = (uint32_t)i;
				ol[n].scen = ecell(e, c)->scen;
				ol[n].val = ecell(e, c)->val;
				n++;
			}
		} else {
			int64_t v = 0;

			for (c = 0; c < e->ncell; c++)
				v += ecell(e, c)->val;
			ol[n].ent = (uint32_t)i;
			ol[n].scen = -1;
			ol[n].val = v;
			n++;
		}
	}
	rank_scenarios(sa);
	sort_sa = sa;
	qsort(ol, n, sizeof(*ol), cmp_outline);
	finish_values(ol, n, sa->nscen, oo);
	*np = n;
	return ol;
}

void
scenagg_write_folded(struct scenagg *sa, struct outbuf *ob,
    const struct scenagg_out_opts *oo)
{
	size_t n, i;
	struct outline *ol = collect_lines(sa, oo, &n);
	char num[32];

	for (i = 0; i < n; i++) {
		uint32_t id = ol[i].ent;

		if (ol[i].val == 0 && oo->integer)
			continue;	/* "stack 0" lines only confuse flame graph tools */
		if (ol[i].scen >= 0) {
			ob_puts(ob, sa->scen[ol[i].scen].name);
			ob_putc(ob, ';');
		}
		ob_write(ob, intern_str(&sa->stacks, id), intern_len(&sa->stacks, id));
		ob_putc(ob, ' ');
		ob_write(ob, num, (size_t)scenagg_format(num, ol[i].val));
		ob_putc(ob, '\n');
	}
	free(ol);
}

/* ------------------------------------------------------------------ */
/* by-name                                                             */

/* a frame name's weights; its text is the table's string ID */
struct name {
	uint32_t id;
	uint32_t ncell, capcell;
	int64_t exc, inc;
	size_t stamp;		/* last output line counted (once per stack) */
	struct cell *cells;	/* inclusive per scenario, in rank order */
};

struct nametab {
	struct intern names;	/* an id indexes v until v is sorted */
	struct name *v;
	size_t n, cap;
};

static struct name *
name_lookup(struct nametab *t, const char *s, size_t len)
{
	uint32_t id = intern_add(&t->names, s, len);
	struct name *nm;

	if (id < t->n)
		return &t->v[id];
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	nm = &t->v[t->n++];
	memset(nm, 0, sizeof(*nm));
	nm->id = id;
	nm->stamp = (size_t)-1;
	return nm;
}

static void
name_add(struct name *nm, int rank, int64_t v)
{
	uint32_t c;

	nm->inc += v;
	for (c = nm->ncell; c > 0; c--)
		if (nm->cells[c - 1].scen == rank) {
			nm->cells[c - 1].val += v;
			return;
		}
	if (nm->ncell == nm->capcell) {
		nm->capcell = nm->capcell ? 2 * nm->capcell : 2;
		nm->cells = xrealloc(nm->cells, nm->capcell * sizeof(*nm->cells));
	}
	nm->cells[nm->ncell].scen = rank;
	nm->cells[nm->ncell].val = v;
	nm->ncell++;
}

static void
count_frame(struct nametab *t, const char *s, size_t len, size_t line, int rank,
    int64_t v, int leaf)
{
	struct name *nm = name_lookup(t, s, len);

	if (leaf)
		nm->exc += v;
	if (nm->stamp == line)
		return;		/* recursion: inclusive counts a stack once */
	nm->stamp = line;
	name_add(nm, rank, v);
}

static const struct intern *sort_names;

static int
cmp_name(const void *a, const void *b)
{
	const struct name *x = a, *y = b;
	int64_t ex = x->exc < 0 ? -x->exc : x->exc, ey = y->exc < 0 ? -y->exc : y->exc;
	int64_t ix = x->inc < 0 ? -x->inc : x->inc, iy = y->inc < 0 ? -y->inc : y->inc;

	if (ex != ey)
		return ex > ey ? -1 : 1;
	if (ix != iy)
		return ix > iy ? -1 : 1;
	return cmp_text(sort_names, x->id, y->id);
}

/*
 * PerfView's histogram character for METRIC at SCALE (100% = SCALE):
 * '_' none, '.' < 0.1%, 'o' < 1%, '0'-'9' tens of percent, 'A'.. from
 * 100% in 10% steps, '*' from 350%; negatives 'a'.. and '@'.
 */
static char
scenagg_histchar(double metric, double scale)
{
	int bucket;

	if (scale <= 0 || metric == 0)
		return '_';
	bucket = (int)(metric / scale * 10);
	if (metric > 0) {
		if (bucket < 10) {
			if (bucket == 0 && metric / scale < .01)
				return metric / scale < .001 ? '.' : 'o';
			return (char)('0' + bucket);
		}
		bucket -= 10;
		return bucket < 25 ? (char)('A' + bucket) : '*';
	}
	bucket = -bucket;
	return bucket < 25 ? (char)('a' + bucket) : '@';
}

/* The Which column: one character per scenario, at most 32 (averaged). */
static void
which_string(char *out, const struct name *nm, int nscen, double scale)
{
	double sum[32] = { 0 };
	int cnt[32] = { 0 };
	int nchar = nscen < 32 ? nscen : 32, r, i;
	uint32_t c = 0;

	for (r = 0; r < nscen; r++)
		cnt[(int)((int64_t)r * nchar / nscen)]++;
	for (c = 0; c < nm->ncell; c++) {
		r = nm->cells[c].scen;
		sum[(int)((int64_t)r * nchar / nscen)] += (double)nm->cells[c].val;
	}
	for (i = 0; i < nchar; i++)
		out[i] = scenagg_histchar(cnt[i] ? sum[i] / cnt[i] : 0, scale);
	out[nchar] = '\0';
}

static void
put_percent(struct outbuf *ob, int64_t v, int64_t total)
{
	ob_printf(ob, "\t%.2f", total ? 100.0 * (double)v / (double)total : 0.0);
}

static int64_t
mean_of(int64_t v, int nscen, const struct scenagg_out_opts *oo)
{
	int64_t d = nscen;

	if (!oo->mean || nscen <= 1)
		return v;
	return v >= 0 ? (v + d / 2) / d : -((-v + d / 2) / d);
}

void
scenagg_write_byname(struct scenagg *sa, struct outbuf *ob,
    const struct scenagg_out_opts *oo)
{
	struct nametab t = { 0 };
	size_t i, line = 0;
	int64_t total = 0, *scen_total, *per, maxscen = 0;
	int *by_rank, r;
	char num[32], which[33];

	rank_scenarios(sa);
	intern_init(&t.names);
	scen_total = xcalloc((size_t)sa->nscen + 1, sizeof(*scen_total));
	per = xcalloc((size_t)sa->nscen + 1, sizeof(*per));
	by_rank = xmalloc(((size_t)sa->nscen + 1) * sizeof(*by_rank));
	for (r = 0; r < sa->nscen; r++)
		by_rank[sa->scen[r].rank] = r;

	/* every (scenario, stack) cell, each frame counted once per stack */
	for (i = 0; i < sa->nent; i++) {
		struct entry *e = &sa->ent[i];
		uint32_t c;

		for (c = 0; c < e->ncell; c++, line++) {
			const char *p = intern_str(&sa->stacks, (uint32_t)i);
			const char *end = p + intern_len(&sa->stacks, (uint32_t)i);
			int64_t v = mean_of(ecell(e, c)->val, sa->nscen, oo);
			const char *sname = sa->scen[ecell(e, c)->scen].name;

			r = sa->scen[ecell(e, c)->scen].rank;
			total += v;
			scen_total[r] += v;
			if (oo->scenario_frame)
				count_frame(&t, sname, strlen(sname), line, r, v, 0);
			while (p < end) {
				const char *q = memchr(p, ';', (size_t)(end - p));

				if (q == NULL)
					q = end;
				count_frame(&t, p, (size_t)(q - p), line, r, v, q == end);
				p = q + 1;
			}
		}
	}
	for (r = 0; r < sa->nscen; r++) {
		int64_t a = scen_total[r] < 0 ? -scen_total[r] : scen_total[r];

		if (a > maxscen)
			maxscen = a;
	}

	scenagg_format(num, total);
	ob_printf(ob, "#byname\ttotal=%s\tscenarios=%d\tmode=%s\n", num, sa->nscen,
	    oo->mean ? "mean" : "sum");
	for (r = 0; r < sa->nscen; r++) {
		scenagg_format(num, scen_total[r]);
		ob_printf(ob, "#scenario\t%d\t%s\tfiles=%lu\ttotal=%s\n", r + 1,
		    sa->scen[by_rank[r]].name, sa->scen[by_rank[r]].files, num);
	}
	ob_puts(ob, "name\texc\texc%\tinc\tinc%\twhich");
	for (r = 0; r < sa->nscen; r++) {
		ob_putc(ob, '\t');
		ob_puts(ob, sa->scen[by_rank[r]].name);
	}
	ob_putc(ob, '\n');

	sort_names = &t.names;
	qsort(t.v, t.n, sizeof(*t.v), cmp_name);
	for (i = 0; i < t.n; i++) {
		struct name *nm = &t.v[i];
		uint32_t c;

		ob_write(ob, intern_str(&t.names, nm->id), intern_len(&t.names, nm->id));
		ob_putc(ob, '\t');
		ob_write(ob, num, (size_t)scenagg_format(num, nm->exc));
		put_percent(ob, nm->exc, total);
		ob_putc(ob, '\t');
		ob_write(ob, num, (size_t)scenagg_format(num, nm->inc));
		put_percent(ob, nm->inc, total);
		which_string(which, nm, sa->nscen, (double)maxscen / 2);
		ob_putc(ob, '\t');
		ob_puts(ob, which);
		memset(per, 0, (size_t)sa->nscen * sizeof(*per));
		for (c = 0; c < nm->ncell; c++)
			per[nm->cells[c].scen] += nm->cells[c].val;
		for (r = 0; r < sa->nscen; r++) {
			ob_putc(ob, '\t');
			ob_write(ob, num, (size_t)scenagg_format(num, per[r]));
		}
		ob_putc(ob, '\n');
		free(nm->cells);
	}
	free(t.v);
	intern_release(&t.names);
	free(scen_total);
	free(per);
	free(by_rank);
}

/* ------------------------------------------------------------------ */
/* scenario names                                                      */

/* Does class "[...]" at P match C?  Sets *end past the ']'; 0 with *end NULL if unterminated. */
static int
glob_class(const char *p, int c, const char **end)
{
	const char *q = p + 1;
	int neg = 0, hit = 0;

	if (*q == '!' || *q == '^') {
		neg = 1;
		q++;
	}
	if (*q == ']') {
		hit = c == ']';
		q++;
	}
	while (*q && *q != ']') {
		if (q[1] == '-' && q[2] && q[2] != ']') {
			if (c >= (unsigned char)q[0] && c <= (unsigned char)q[2])
				hit = 1;
			q += 3;
		} else {
			if ((unsigned char)*q == c)
				hit = 1;
			q++;
		}
	}
	if (*q != ']') {
		*end = NULL;
		return 0;
	}
	*end = q + 1;
	return hit != neg;
}

static int
glob_rec(const char *p, const char *s, const char *s0, size_t cs[], size_t cl[],
    int idx, int ncap, int *nstars, int depth, long *budget)
{
	if (depth > 64 || --*budget < 0)
		return 0;	/* absurd patterns do not get to backtrack forever */
	for (;;) {
		if (*p == '\0') {
			if (*s != '\0')
				return 0;
			*nstars = idx;
			return 1;
		}
		if (*p == '*') {
			/* shortest first ("run-*.*" on "run-2.folded.gz" gives "2"); within one path component */
			size_t max = strcspn(s, "/"), n;

			for (n = 0; n <= max; n++)
				if (glob_rec(p + 1, s + n, s0, cs, cl, idx + 1, ncap, nstars, depth + 1,
				    budget)) {
					if (idx < ncap) {
						cs[idx] = (size_t)(s - s0);
						cl[idx] = n;
					}
					return 1;
				}
			return 0;
		}
		if (*s == '\0')
			return 0;
		if (*p == '?') {
			if (*s == '/')
				return 0;
		} else if (*p == '[') {
			const char *end;
			int hit = glob_class(p, (unsigned char)*s, &end);

			if (end != NULL) {
				if (!hit)
					return 0;
				p = end;
				s++;
				continue;
			}
			if (*s != '[')
				return 0;
		} else if (*p != *s)
			return 0;
		p++;
		s++;
	}
}

int
scenagg_glob(const char *pat, const char *s, size_t cap_start[], size_t cap_len[],
    int ncap, int *ncaptured)
{
	int nstars = 0;
	long budget = 1000000;

	if (!glob_rec(pat, s, s, cap_start, cap_len, 0, ncap, &nstars, 0, &budget))
		return 0;
	if (ncaptured)
		*ncaptured = nstars < ncap ? nstars : ncap;
	return 1;
}

static const char *const data_suffixes[] = {
	".gz", ".zip", ".etl", ".evt", ".folded", ".collapsed", ".stacks", ".txt", ".tsv", NULL
};

/* Base name of PATH without its data suffixes (".etl.zip", ".folded.gz"...). */
static char *
stem(const char *path)
{
	const char *b = strrchr(path, '/');
	char *s = xstrdup(b ? b + 1 : path);
	int again = 1, i;

	while (again) {
		size_t n = strlen(s);

		again = 0;
		for (i = 0; data_suffixes[i]; i++) {
			size_t k = strlen(data_suffixes[i]);

			if (n > k && strcmp(s + n - k, data_suffixes[i]) == 0) {
				s[n - k] = '\0';
				again = 1;
				break;
			}
		}
	}
	return s;
}

/* A scenario name becomes a frame: no ';', no control characters. */
static void
frame_safe(char *s)
{
	for (; *s; s++)
		if (*s == ';')
			*s = ':';
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '_';
}

char *
scenagg_name_from_path(const char *path, const char *pat, const char *name)
{
	const char *b = strrchr(path, '/');
	const char *base = b ? b + 1 : path;
	char *st = stem(path), *out;
	size_t cs[9], cl[9], o = 0, cap;
	int nc = 0;
	const char *p;

	if (pat && *pat) {
		/* a pattern with a '/' is matched against the whole path */
		const char *subject = strchr(pat, '/') ? path : base;

		if (!scenagg_glob(pat, subject, cs, cl, 9, &nc)) {
			free(st);
			return NULL;
		}
		base = subject;
	}
	if (name == NULL || *name == '\0')
		name = "$1";
	/* every "$k" expands to at most the longer of the path and the stem */
	cap = strlen(name) + (strlen(name) / 2 + 1) * (strlen(path) + strlen(st)) + 1;
	out = xmalloc(cap);
	for (p = name; *p; p++) {
		if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
			int k = p[1] - '0';

			if (k == 0 || (nc == 0 && k == 1)) {
				memcpy(out + o, st, strlen(st));
				o += strlen(st);
			} else if (k - 1 < nc) {
				memcpy(out + o, base + cs[k - 1], cl[k - 1]);
				o += cl[k - 1];
			}
			p++;
			continue;
		}
		out[o++] = *p;
	}
	out[o] = '\0';
	free(st);
	frame_safe(out);
	if (*out == '\0') {
		free(out);
		out = xstrdup("?");
	}
	return out;
}
