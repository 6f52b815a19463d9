/*
 * diffstacks.c - two-sided stack tables and the evt/folded reader that
 * diff and overweight share (see diffstacks.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "report/diffstacks.h"
#include "base/cli.h"
#include "base/intern.h"
#include "base/mapfile.h"
#include "evt/evt.h"
#include "evt/gzwhole.h"
#include "report/views.h"
#include "stacks/stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ */
/* the table                                                           */

struct diffstacks {
	struct intern keys;	/* an id indexes e */
	struct diffstacks_entry *e;
	size_t n, cap;
	struct mapfile maps[2];	/* mapped inputs: keys point into them... */
	char *inflated[2];	/* ...or into small gzip files inflated whole */
	int nmaps, ninflated;
};

struct diffstacks *
diffstacks_new(void)
{
	struct diffstacks *t = xcalloc(1, sizeof(*t));

	intern_init(&t->keys);
	return t;
}

void
diffstacks_free(struct diffstacks *t)
{
	if (t == NULL)
		return;
	intern_release(&t->keys);
	while (t->nmaps > 0)
		mapfile_close(&t->maps[--t->nmaps]);
	while (t->ninflated > 0)
		free(t->inflated[--t->ninflated]);
	free(t->e);
	free(t);
}

/* KEY's index; a new key is copied, or kept where it is when IN_PLACE (a mapped file's bytes). */
static size_t
table_add(struct diffstacks *t, const char *key, size_t len, int in_place)
{
	uint32_t id = in_place ? intern_add_ref(&t->keys, key, len) : intern_add(&t->keys, key, len);

	if (id == t->n) {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 1024;
			t->e = xrealloc(t->e, t->cap * sizeof(*t->e));
		}
		memset(&t->e[t->n++], 0, sizeof(*t->e));
	}
	return id;
}

size_t
diffstacks_intern(struct diffstacks *t, const char *key, size_t len)
{
	return table_add(t, key, len, 0);
}

size_t
diffstacks_size(const struct diffstacks *t)
{
	return t->n;
}

struct diffstacks_entry *
diffstacks_at(struct diffstacks *t, size_t i)
{
	return &t->e[i];
}

const char *
diffstacks_key(const struct diffstacks *t, size_t i)
{
	return intern_str(&t->keys, (uint32_t)i);
}

size_t
diffstacks_key_len(const struct diffstacks *t, size_t i)
{
	return intern_len(&t->keys, (uint32_t)i);
}

/*
 * Sorting the keys.  Stacks are long (a few KB) and neighbours in the
 * order share most of their bytes, so a comparison sort spends its time
 * in memcmp over the same shared prefixes again and again: on two
 * 100 MB files of 42,000 stacks it was a fifth of diff's time.  This is
 * a multikey quicksort (Bentley and Sedgewick) on 8 bytes at a time:
 * keys are partitioned by their next 8 bytes, and only the keys equal
 * there go on to the following 8, so each byte of a shared prefix is
 * read about once per key.  The order is memcmp's, shorter first on a
 * tie, as before.
 */
struct skey {
	uint64_t w;		/* bytes [depth, depth + 8) big-endian, 0 past the end */
	const unsigned char *s;
	uint32_t len, id;
};

struct sseg {
	size_t lo, n, depth;
	int wvalid;		/* the keys' w are already those at depth */
};

static uint64_t
key_word(const struct skey *k, size_t depth)
{
	unsigned char b[8] = { 0 };
	uint64_t w = 0;
	size_t i, n;

	if (depth < k->len) {
		n = k->len - depth < 8 ? k->len - depth : 8;
		memcpy(b, k->s + depth, n);
	}
	for (i = 0; i < 8; i++)
		w = w << 8 | b[i];
	return w;
}

/* A against B, both sharing their first DEPTH bytes: memcmp, then shorter first. */
static int
key_cmp(const struct skey *a, const struct skey *b, size_t depth)
{
	uint32_t n = a->len < b->len ? a->len : b->len;
	int c = n > depth ? memcmp(a->s + depth, b->s + depth, n - depth) : 0;

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/*
 * The keys are 100 MB of text read in no order: each one's bytes at
 * DEPTH are asked for KEY_AHEAD keys before they are needed, so the
 * memory fetches overlap instead of waiting one by one.
 */
#define KEY_AHEAD 8

static void
key_prefetch(const struct skey *k, size_t depth)
{
#if defined(__GNUC__) || defined(__clang__)
	if (depth < k->len)
		__builtin_prefetch(k->s + depth);
#else
	(void)k;
	(void)depth;
#endif
}

/*
 * How many bytes past DEPTH all N keys share: the segment skips them in
 * one sequential pass instead of one partition per 8 bytes (a stack's
 * frames are tens of bytes, shared by every stack below them).
 */
static size_t
segment_lcp(const struct skey *a, size_t n, size_t depth)
{
	size_t lcp = a[0].len - depth, i, j, m;
	uint64_t x, y;

	for (i = 1; i < n && lcp > 0; i++) {
		const unsigned char *p = a[0].s + depth, *q = a[i].s + depth;

		if (i + KEY_AHEAD < n)
			key_prefetch(&a[i + KEY_AHEAD], depth);

		m = a[i].len - depth < lcp ? a[i].len - depth : lcp;
		for (j = 0; j + 8 <= m; j += 8) {
			memcpy(&x, p + j, 8);
			memcpy(&y, q + j, 8);
			if (x != y)
				break;
		}
		while (j < m && p[j] == q[j])
			j++;
		lcp = j;
	}
	return lcp;
}

static void
key_insertion_sort(struct skey *a, size_t n, size_t depth)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct skey t = a[i];

		for (j = i; j > 0 && key_cmp(&a[j - 1], &t, depth) > 0; j--)
			a[j] = a[j - 1];
		a[j] = t;
	}
}

static void
key_swap(struct skey *a, size_t i, size_t j)
{
	struct skey t = a[i];

	a[i] = a[j];
	a[j] = t;
}

static uint64_t
median3(uint64_t x, uint64_t y, uint64_t z)
{
	if (x < y)
		return y < z ? y : x < z ? z : x;
	return x < z ? x : y < z ? z : y;
}

static void
segs_push(struct sseg **st, size_t *sp, size_t *cap, struct sseg g)
{
	if (g.n < 2)
		return;
	if (*sp == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*st = xrealloc(*st, *cap * sizeof(**st));
	}
	(*st)[(*sp)++] = g;
}

static void
key_sort(struct skey *a, size_t n)
{
	struct sseg *st = NULL, g;
	size_t sp = 0, cap = 0, i, lt, gt, fin;
	uint64_t pw;

	segs_push(&st, &sp, &cap, (struct sseg){ 0, n, 0, 0 });
	while (sp) {
		struct skey *b;

		g = st[--sp];
		b = a + g.lo;
		if (g.n <= 12) {
			key_insertion_sort(b, g.n, g.depth);
			continue;
		}
		if (!g.wvalid) {
			/* (every key of a segment is longer than its depth) */
			g.depth += segment_lcp(b, g.n, g.depth);
			for (i = 0; i < g.n; i++) {
				if (i + KEY_AHEAD < g.n)
					key_prefetch(&b[i + KEY_AHEAD], g.depth);
				b[i].w = key_word(&b[i], g.depth);
			}
		}
		pw = median3(b[0].w, b[g.n / 2].w, b[g.n - 1].w);
		/* three ways: [0, lt) below, [lt, gt) equal, [gt, n) above */
		lt = 0;
		gt = g.n;
		i = 0;
		while (i < gt) {
			if (b[i].w < pw)
				key_swap(b, lt++, i++);
			else if (b[i].w > pw)
				key_swap(b, i, --gt);
			else
				i++;
		}
		segs_push(&st, &sp, &cap, (struct sseg){ g.lo, lt, g.depth, 1 });
		segs_push(&st, &sp, &cap, (struct sseg){ g.lo + gt, g.n - gt, g.depth, 1 });
		/* the equal keys that end within these 8 bytes come first, shortest first */
		fin = lt;
		for (i = lt; i < gt; i++)
			if (b[i].len <= g.depth + 8)
				key_swap(b, fin++, i);
		key_insertion_sort(b + lt, fin - lt, g.depth);
		segs_push(&st, &sp, &cap, (struct sseg){ g.lo + fin, gt - fin, g.depth + 8, 0 });
	}
	free(st);
}

/* Merges the sorted A[0..NA) and A[NA..N) through TMP. */
static void
key_merge(struct skey *a, size_t na, size_t n, struct skey *tmp)
{
	size_t i = 0, j = na, o = 0;

	while (i < na && j < n)
		tmp[o++] = key_cmp(&a[j], &a[i], 0) < 0 ? a[j++] : a[i++];
	while (i < na)
		tmp[o++] = a[i++];
	memcpy(a, tmp, o * sizeof(*a));
}

#define FEW_RUNS 8

/*
 * Input already mostly in order (a sorted file, or two: the keys of the
 * second file come after the first's) is a few ascending runs: found by
 * comparing neighbours, which lie side by side in memory, and merged.
 * Returns 0 when there are more than FEW_RUNS runs (then key_sort).
 */
static int
key_merge_runs(struct skey *a, size_t n)
{
	size_t run[FEW_RUNS + 1], nrun = 1, i, r;
	struct skey *tmp;

	run[0] = 0;
	for (i = 1; i < n; i++)
		if (key_cmp(&a[i - 1], &a[i], 0) > 0) {
			if (nrun == FEW_RUNS)
				return 0;
			run[nrun++] = i;
		}
	if (nrun == 1)
		return 1;
	tmp = xmalloc(n * sizeof(*tmp));
	/* fold the runs into the first, one at a time */
	for (r = 1; r < nrun; r++)
		key_merge(a, run[r], r + 1 < nrun ? run[r + 1] : n, tmp);
	free(tmp);
	return 1;
}

size_t *
diffstacks_sorted(struct diffstacks *t)
{
	size_t *ix = xmalloc((t->n ? t->n : 1) * sizeof(*ix)), i;
	struct skey *k = xmalloc((t->n ? t->n : 1) * sizeof(*k));

	for (i = 0; i < t->n; i++) {
		k[i].s = (const unsigned char *)intern_str(&t->keys, (uint32_t)i);
		k[i].len = intern_len(&t->keys, (uint32_t)i);
		k[i].id = (uint32_t)i;
	}
	if (!key_merge_runs(k, t->n))
		key_sort(k, t->n);
	for (i = 0; i < t->n; i++)
		ix[i] = k[i].id;
	free(k);
	return ix;
}

/* ------------------------------------------------------------------ */
/* options                                                             */

int
diffstacks_option(struct diffstacks_opts *o, struct stk_config *cfg, int opt, const char *arg)
{
	switch (opt) {
	case DIFFSTACKS_OPT_KEEPIDS:
		o->keep_ids = 1;
		return 1;
	case DIFFSTACKS_OPT_PERFIDS:
		o->perf_ids = 1;
		return 1;
	case DIFFSTACKS_OPT_STRIPHEX:
		o->strip_hex = 1;
		return 1;
	}
	if (!stk_option(cfg, opt, arg))
		return 0;
	/* patterns reshape folded input too; without them it is compared as it is */
	if (opt == STK_OPT_GROUP || opt == STK_OPT_FOLD || opt == STK_OPT_INCLUDE ||
	    opt == STK_OPT_EXCLUDE || opt == STK_OPT_PRESET)
		o->shape_folded = 1;
	if (opt == STK_OPT_FOLDPCT)
		o->fold_pct_given = 1;
	return 1;
}

void
diffstacks_options_done(struct diffstacks_opts *o, struct stk_config *cfg)
{
	if (o->fold_pct_given && cfg->fold_pct > 0)
		cli_warn("--fold-pct ignored: stacks are compared unfolded "
		    "(PerfView clears Fold%% on both inputs)");
	cfg->fold_pct = 0;
	if (!o->keep_ids) {
		cfg->no_scenario = 1;	/* a scenario name is an id too: it must not split stacks */
		/* evt: build the root frames without ids rather than strip them after */
		if (cfg->roots == STK_ROOTS_PID || cfg->roots == STK_ROOTS_TID)
			cfg->roots = STK_ROOTS_COMM;
	}
	o->stk = cfg;
}

/* ------------------------------------------------------------------ */
/* numbers                                                             */

int
diffstacks_format(char *out, double v)
{
	if (v == floor(v) && fabs(v) < 9.2e18) {
		/* printf's "%" PRId64, without printf: one call per output line */
		int64_t x = (int64_t)v;
		int n = 0;

		if (x < 0)
			out[n++] = '-';
		n += evt_format_u64(out + n, x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x);
		out[n] = '\0';
		return n;
	}
	if (fabs(v) >= 9.2e18 || !isfinite(v))
		return sprintf(out, "%.0f", v);
	if (fabs(v) >= 1e12) {		/* beyond evt_format_weight's range */
		int n = sprintf(out, "%.6f", v);

		while (out[n - 1] == '0')
			out[--n] = '\0';
		if (out[n - 1] == '.')
			out[--n] = '\0';
		return n;
	}
	return evt_format_weight(out, v);
}

/* ------------------------------------------------------------------ */
/* id stripping                                                        */

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Does [p, e) start with " (DIGITS)"?  Returns the length matched or 0. */
static size_t
paren_id(const char *p, const char *e)
{
	const char *q = p;

	if (e - q < 4 || q[0] != ' ' || q[1] != '(' || !is_digit(q[2]))
		return 0;
	for (q += 2; q < e && is_digit(*q); q++)
		;
	if (q == e || *q != ')')
		return 0;
	return (size_t)(q + 1 - p);
}

/* First " (DIGITS)" in [b, e), or NULL. */
static const char *
find_paren_id(const char *b, const char *e)
{
	const char *p;

	for (p = b; p + 4 <= e; p++) {
		p = memchr(p, ' ', (size_t)(e - p));
		if (p == NULL)
			return NULL;
		if (paren_id(p, e))
			return p;
	}
	return NULL;
}

static int
process_name(const char *s, size_t n)
{
	static const char *const names[] = { "Idle", "System", "Registry", "Secure System",
	    "Memory Compression", "Interrupts", "DPCs" };
	size_t i;

	if (n > 4 && strncasecmp(s + n - 4, ".exe", 4) == 0)
		return 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0)
			return 1;
	return 0;
}

static int
has_prefix(const char *b, const char *e, const char *pfx)
{
	size_t n = strlen(pfx);

	return (size_t)(e - b) >= n && memcmp(b, pfx, n) == 0;
}

/*
 * New length of the frame [b, e) with its id removed, written in place
 * (the result is always a prefix-or-shorter rewrite of the frame).
 */
static size_t
strip_frame(char *b, char *e, int perf_first)
{
	const char *p;
	size_t n = (size_t)(e - b), skip;

	/* PerfView: "Process64 NAME (PID) Args: ..." -> NAME (any characters, my-app too) */
	if (has_prefix(b, e, "Process32 ") || has_prefix(b, e, "Process64 ") ||
	    has_prefix(b, e, "Process ")) {
		skip = b[7] == ' ' ? 8 : 10;
		p = find_paren_id(b + skip, e);
		if (p != NULL && p > b + skip) {
			memmove(b, b + skip, (size_t)(p - (b + skip)));
			return (size_t)(p - (b + skip));
		}
		return n;
	}
	/* PerfView: "Thread (TID) CPU=12ms (label)" -> "Thread" */
	if (has_prefix(b, e, "Thread") && paren_id(b + 6, e))
		return 6;
	/*
	 * WPA's process column, "app.exe (1234)", "System (4)", "Idle (0)".
	 * Only process-looking names: "trace (2)" is a scenario (Windows
	 * names file copies so) and must stay apart from "trace".
	 */
	if (n > 4 && e[-1] == ')') {
		for (p = e - 2; p > b && is_digit(*p); p--)
			;
		if (p < e - 2 && p - b >= 2 && p[0] == '(' && p[-1] == ' ' && p - 1 > b &&
		    process_name(b, (size_t)(p - 1 - b)))
			return (size_t)(p - 1 - b);
	}
	/* perf's comm-PID and comm-PID/TID (stackcollapse-perf --pid/--tid), root frame only */
	if (perf_first && n > 2 && is_digit(e[-1])) {
		p = e - 1;
		while (p > b && is_digit(*p))
			p--;
		if (*p == '/' && p > b) {
			p--;
			if (!is_digit(*p))
				return n;
			while (p > b && is_digit(*p))
				p--;
		}
		if (*p == '-' && p > b)
			return (size_t)(p - b);
	}
	return n;
}

#define STRIP_FRAMES 3		/* scenario, process, thread: ids live only there */

/*
 * Strips process/thread ids from the leading pseudo-frames of STACK in
 * place (see diff.1): "Process64 app (12) Args: x" -> "app",
 * "Thread (7) CPU=3ms" -> "Thread", "app.exe (12)" -> "app.exe"; with
 * PERF also "app-12" and "app-12/34" as the first frame -> "app" (off by
 * default: "nightly-17" is more likely aggregate's scenario name than a
 * pid, and merging two scenarios would be silent data loss).  Returns
 * the new length.
 */
static size_t
diffstacks_strip_ids(char *stack, size_t len, int perf)
{
	char *b = stack, *end = stack + len, *e;
	int i;
	size_t n;

	for (i = 0; i < STRIP_FRAMES && b < end; i++) {
		e = memchr(b, ';', (size_t)(end - b));
		if (e == NULL)
			e = end;
		if (memchr(b, '!', (size_t)(e - b)) != NULL)
			break;		/* a code frame: the pseudo-frames are over */
		n = strip_frame(b, e, perf && i == 0);
		if (b + n < e) {
			memmove(b + n, e, (size_t)(end - e));
			end -= e - (b + n);
			e = b + n;
		}
		if (e == end)
			break;
		b = e + 1;
	}
	*end = '\0';
	return (size_t)(end - stack);
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

struct scratch {
	char *p;
	size_t cap;
};

static char *
scratch_room(struct scratch *s, size_t n)
{
	if (n > s->cap) {
		s->cap = n + n / 2 + 256;
		s->p = xrealloc(s->p, s->cap);
	}
	return s->p;
}

static int
is_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* difffolded -s: every 0x<hex> becomes 0x... so addresses do not split stacks. */
static char *
strip_hex(struct scratch *s, const char *in, size_t *len)
{
	size_t n = *len, i = 0, o = 0;
	char *out = scratch_room(s, n * 2 + 1);

	while (i < n) {
		if (in[i] == '0' && i + 2 < n + 1 && i + 1 < n && in[i + 1] == 'x' &&
		    i + 2 < n && is_hex((unsigned char)in[i + 2])) {
			i += 2;
			while (i < n && is_hex((unsigned char)in[i]))
				i++;
			memcpy(out + o, "0x...", 5);
			o += 5;
		} else
			out[o++] = in[i++];
	}
	out[o] = '\0';
	*len = o;
	return out;
}

struct reader {
	struct diffstacks *t;
	const struct diffstacks_opts *o;
	struct diffstacks_stats *st;
	struct linereader *lr;	/* NULL when the input is mapped */
	const char *name;	/* for messages: the reader's name of the input */
	unsigned long lineno;	/* of the line in hand */
	int mapped;		/* lines lie in a mapping or a whole inflated file... */
	int in_place;		/* ...and new keys stay there (else they are copied) */
	unsigned long skipped;	/* mapped: lines lr_next() would have skipped */
	struct scratch hex, path, ids;
	int side;
	int reported;
	struct stk *S;		/* stackfold's lib, for evt and shaped folded input */
	struct evt_stack_cut cut;	/* folded stacks cut to EVT_MAX_STACK_FRAMES */
};

static void
bad_line(struct reader *r, const char *why)
{
	int max = r->o->max_reports > 0 ? r->o->max_reports : 10;

	r->st->bad++;
	if (r->reported < max)
		cli_warn("%s:%lu: %s", r->name, r->lineno, why);
	else if (r->reported == max)
		cli_warn("%s: more unusable lines; counting them without a message",
		    r->name);
	r->reported++;
}

/*
 * Could diffstacks_strip_ids() change STACK?  Only a ')' in one of the
 * leading pseudo-frames (before the first code frame, '!') or, with
 * --perf-ids, a digit ending the first frame lets it: a stack without
 * either is kept as it is, in place.
 */
static int
ids_maybe(const char *stack, size_t len, int perf)
{
	const char *b = stack, *end = stack + len, *e;
	int i;

	for (i = 0; i < STRIP_FRAMES && b < end; i++) {
		e = memchr(b, ';', (size_t)(end - b));
		if (e == NULL)
			e = end;
		if (memchr(b, '!', (size_t)(e - b)) != NULL)
			return 0;
		if (memchr(b, ')', (size_t)(e - b)) != NULL)
			return 1;
		if (perf && i == 0 && e > b && is_digit(e[-1]))
			return 1;
		b = e + 1;
	}
	return 0;
}

/*
 * Id stripping, hex stripping, transform, then into the table.  IN_PLACE:
 * STACK lies in a mapped input and may be kept there as the key; a
 * stack that changes is rewritten in a scratch buffer and copied.
 */
static void
count_stack(struct reader *r, const char *stack, size_t len, int in_place,
    double w0, double w1, double n0, double n1)
{
	struct diffstacks_entry *e;
	size_t ix;

	if (!r->o->keep_ids && ids_maybe(stack, len, r->o->perf_ids)) {
		char *copy = scratch_room(&r->ids, len + 1);

		memcpy(copy, stack, len);
		len = diffstacks_strip_ids(copy, len, r->o->perf_ids);
		stack = copy;
		in_place = 0;
	}
	if (r->o->strip_hex) {
		stack = strip_hex(&r->hex, stack, &len);
		in_place = 0;
	}
	ix = table_add(r->t, stack, len, in_place);
	e = diffstacks_at(r->t, ix);
	e->w[0] += w0;
	e->w[1] += w1;
	e->n[0] += n0;
	e->n[1] += n1;
	r->st->counted++;
	r->st->total[0] += w0;
	r->st->total[1] += w1;
	r->st->samples[0] += n0;
	r->st->samples[1] += n1;
}

/*
 * Frames never carry control bytes (evt escapes them); a line that does
 * is garbage.  This reads every byte of every stack, so it is written
 * for the compiler to vectorise: 256 bytes a block, then 32, one test a
 * block (SSE2 does 16 bytes in five instructions, where the 8-byte
 * bit-twiddling below, "hasless"/"haszero", takes ten for 8).
 */
static int
has_control(const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	const unsigned char *u = (const unsigned char *)s;
	uint64_t v, d;
	size_t i = 0, k;
	unsigned char any;

	for (; i + 256 <= n; i += 256) {
		any = 0;
		for (k = 0; k < 256; k++)
			any |= (unsigned char)((u[i + k] < 0x20) | (u[i + k] == 0x7f));
		if (any)
			return 1;
	}
	for (; i + 32 <= n; i += 32) {
		any = 0;
		for (k = 0; k < 32; k++)
			any |= (unsigned char)((u[i + k] < 0x20) | (u[i + k] == 0x7f));
		if (any)
			return 1;
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&v, s + i, 8);
		d = v ^ (ones * 0x7f);
		if (((v - ones * 0x20) & ~v & high) || ((d - ones) & ~d & high))
			return 1;
	}
	for (; i < n; i++)
		if (u[i] < 0x20 || u[i] == 0x7f)
			return 1;
	return 0;
}

/* Messages for skipped lines, per input, as the line reader gives them. */
#define MAP_MAX_WARNINGS 10

/*
 * A mapped line the line reader would have skipped (too long, a NUL
 * byte): the same message, the same count, so both paths say the same.
 */
static void
map_skip(struct reader *r, const char *why)
{
	r->skipped++;
	if (r->skipped <= MAP_MAX_WARNINGS)
		cli_warn("%s:%lu: %s, line skipped", r->name, r->lineno, why);
	else if (r->skipped == MAP_MAX_WARNINGS + 1)
		cli_warn("%s: more lines skipped; counting them", r->name);
}

/* Mapped input: skips LINE[FROM..LEN) if it holds a NUL byte (lr_next() never hands one out). */
static int
map_nul(struct reader *r, const char *line, size_t from, size_t len)
{
	if (!r->mapped || memchr(line + from, '\0', len - from) == NULL)
		return 0;
	map_skip(r, "NUL byte in line");
	return 1;
}

static void
folded_line(struct reader *r, const char *line, size_t len)
{
	const char *stack = line, *cut;
	size_t slen;
	double c1, c2, per = r->o->per_sample > 0 ? r->o->per_sample : 1;
	int has2;

	if (folded_parse_span(line, len, &slen, &c1, &c2, &has2) < 0) {
		if (map_nul(r, line, 0, len))
			return;
		r->st->lines++;
		bad_line(r, FOLDED_MALFORMED);
		return;
	}
	if (has_control(stack, slen)) {
		if (map_nul(r, line, 0, len))
			return;
		r->st->lines++;
		bad_line(r, "control character in the stack");
		return;
	}
	if (map_nul(r, line, slen, len))	/* the counts' part */
		return;
	r->st->lines++;
	if (r->side < 0 && !has2) {
		bad_line(r, "one count where two were expected (\"stack base test\")");
		return;
	}
	if (r->side >= 0 && has2) {
		bad_line(r, "two counts (a diff line?) where one was expected");
		return;
	}
	if (c1 != floor(c1) || (has2 && c2 != floor(c2)))
		r->st->fractional = 1;
	/* (evt_cut_stack only reads the stack: a cut one is written to its own buffer) */
	cut = evt_cut_stack(&r->cut, (char *)(uintptr_t)stack, &slen, r->lineno);
	if (r->side < 0)
		count_stack(r, cut, slen, r->in_place && cut == stack, c1, c2, c1 / per, c2 / per);
	else if (r->side == 0)
		count_stack(r, cut, slen, r->in_place && cut == stack, c1, 0, c1 / per, 0);
	else
		count_stack(r, cut, slen, r->in_place && cut == stack, 0, c1, 0, c1 / per);
}

/*
 * A frame as it may appear in folded output (what stackfold writes):
 * no ';' or control bytes, not empty, and no " 123" at its end (which
 * flamegraph.pl would take for a count column).
 */
static size_t
put_frame(char *o, const char *s)
{
	size_t n = strlen(s), i, j;

	if (n == 0) {
		o[0] = '?';
		return 1;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		o[i] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '_' : (char)c;
	}
	j = n;
	while (j > 0 && (is_digit(o[j - 1]) || o[j - 1] == '.'))
		j--;
	if (j < n && j > 0 && o[j - 1] == ' ')
		o[j - 1] = '_';
	return n;
}

/* Every node of stackfold's tree with an exclusive metric becomes one stack. */
static void
take_tree(struct reader *r)
{
	struct stk *S = r->S;
	const struct stk_stats *ss;
	const struct stk_node *nd;
	double div = stk_unit_div(S), w;
	uint32_t id, *path = NULL;
	size_t cap = 0, len, need;
	int depth = 0, i;
	char *buf;

	stk_finish(S);
	nd = stk_node(S, STK_ROOT);
	if (nd->exc != 0 || nd->exc_count != 0) {
		buf = scratch_room(&r->path, 8);
		strcpy(buf, "ROOT");
		w = (double)nd->exc / div;
		count_stack(r, buf, 4, 0, r->side == 0 ? w : 0, r->side == 1 ? w : 0,
		    r->side == 0 ? (double)nd->exc_count : 0, r->side == 1 ? (double)nd->exc_count : 0);
	}
	for (id = stk_next(S, STK_ROOT, &depth); id != STK_NONE; id = stk_next(S, id, &depth)) {
		if ((size_t)depth > cap) {
			cap = (size_t)depth * 2 + 16;
			path = xrealloc(path, cap * sizeof(*path));
		}
		path[depth - 1] = id;
		nd = stk_node(S, id);
		if (nd->exc == 0 && nd->exc_count == 0)
			continue;
		need = 1;
		for (i = 0; i < depth; i++)
			need += strlen(stk_name(S, stk_node(S, path[i])->frame)) + 2;
		buf = scratch_room(&r->path, need);
		len = 0;
		for (i = 0; i < depth; i++) {
			if (i)
				buf[len++] = ';';
			len += put_frame(buf + len, stk_name(S, stk_node(S, path[i])->frame));
		}
		buf[len] = '\0';
		w = (double)nd->exc / div;
		count_stack(r, buf, len, 0, r->side == 0 ? w : 0, r->side == 1 ? w : 0,
		    r->side == 0 ? (double)nd->exc_count : 0, r->side == 1 ? (double)nd->exc_count : 0);
	}
	free(path);
	ss = stk_get_stats(S);
	r->st->ignored += (unsigned long)ss->other_kinds;
	r->st->counted = (unsigned long)ss->kept_events;
	r->st->dropped += (unsigned long)(ss->excluded_events + ss->notincluded_events);
	r->st->dropped_weight += (double)(ss->excluded_metric + ss->notincluded_metric) / div;
	r->st->idle = (unsigned long)ss->idle_events;
	r->st->idle_weight = (double)ss->idle_metric / div;
	view_idle_note_stk(r->name, S);
	r->st->fractional = r->o->stk->decimals > 0;
	if (strcmp(stk_unit_name(S), "count") != 0)
		snprintf(r->st->unit, sizeof(r->st->unit), "%s", stk_unit_name(S));
}

/*
 * Can a mapping of the file be read here, line by line like the line
 * reader would?  Not gzip, nothing the reader might take for a trace
 * (a zip, an ETL buffer header: it says so, the lines do not), and not
 * evt (stackfold's lib reads evt through the line reader): the first
 * line the reader would hand out must not be a header.
 */
static int
map_readable(const char *text, size_t n)
{
	const char *p = text, *e = text + n, *nl;
	size_t raw, len;

	if (n >= 2 && (unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b)
		return 0;
	if (n >= 4 && memcmp(p, "PK\3\4", 4) == 0)
		return 0;
	if (n >= 0x4c && (unsigned char)p[0x4b] == 0xc0)
		return 0;
	for (; p < e; p = nl < e ? nl + 1 : e) {
		nl = memchr(p, '\n', (size_t)(e - p));
		if (nl == NULL)
			nl = e;
		raw = (size_t)(nl - p);
		len = raw > 0 && p[raw - 1] == '\r' ? raw - 1 : raw;
		if (raw >= EVT_MAX_LINE || len == 0 || memchr(p, '\0', len) != NULL)
			continue;
		return evt_classify(p, len) != EVT_HEADER;
	}
	return 1;
}

/*
 * The mapped file's lines, cut as lr_next() cuts them: at '\n', one '\r'
 * dropped, the last line with or without its newline, lines of
 * EVT_MAX_LINE bytes or more and lines with a NUL byte skipped with the
 * reader's message.  Nothing is written: keys stay in the mapping.
 */
/*
 * A mapped input read after the first (RELEASE) copies its new stacks,
 * few in a diff, and hands its pages back to the page cache a MB at a
 * time as it goes, so resident memory is the first input's pages, which
 * the second one's lookups compare against, and the distinct stacks.
 */
#define RELEASE_STEP ((size_t)1 << 20)	/* a multiple of the page size */

static void
read_mapped(struct reader *r, const char *text, size_t n, int release)
{
	const char *p = text, *e = text + n, *nl, *line, *kept = text;
	size_t raw, len;

	for (; p < e; p = nl < e ? nl + 1 : e) {
		if (release && (size_t)(p - kept) >= 2 * RELEASE_STEP) {
			map_release(kept, RELEASE_STEP);
			kept += RELEASE_STEP;
		}
		nl = memchr(p, '\n', (size_t)(e - p));
		if (nl == NULL)
			nl = e;
		raw = (size_t)(nl - p);
		line = p;
		r->lineno++;
		if (raw >= EVT_MAX_LINE) {
			map_skip(r, "line too long (64 MiB or more)");
			continue;
		}
		len = raw > 0 && line[raw - 1] == '\r' ? raw - 1 : raw;
		if ((r->lineno & 0xffff) == 0)
			cli_progress((uint64_t)(nl - text), n);
		if (len == 0)
			continue;
		if (line[0] == '#') {	/* metadata, comments, a repeated header */
			map_nul(r, line, 0, len);
			continue;
		}
		folded_line(r, line, len);
	}
	cli_progress_end();
}

/* The line reader's loop: stdin, pipes, gzip, evt (through stackfold's lib). */
static int
read_lines(struct reader *r)
{
	struct diffstacks_stats *st = r->st;
	const struct diffstacks_opts *o = r->o;
	char *line;
	size_t len;
	int decided = 0, rc = 0, side = r->side;
	enum evt_linetype lt;

	while ((line = lr_next(r->lr, &len)) != NULL) {
		lr_progress(r->lr);
		r->lineno = lr_lineno(r->lr);
		lt = evt_classify(line, len);
		if (lt == EVT_BLANK)
			continue;
		if (!decided) {
			decided = 1;
			st->is_evt = lt == EVT_HEADER;
			if (st->is_evt) {
				struct evt_header h;
				const char *why;
				char *copy = xstrndup(line, len);

				if (side < 0) {
					cli_warn("%s: evt input has one side; the two-count form must be folded",
					    r->name);
					rc = -1;
				} else if (evt_parse_header(copy, len, &h, &why) < 0) {
					cli_warn("%s:%lu: %s", r->name, r->lineno, why);
					rc = -1;
				}
				free(copy);
				if (rc < 0)
					break;
			}
			if ((st->is_evt || (o->shape_folded && side >= 0)) && o->stk) {
				r->S = stk_new(o->stk);
				stk_reset_format(r->S);
			}
		}
		if (r->S) {
			const char *why;

			if (lt == EVT_EVENT)
				st->lines++;
			if (stk_feed(r->S, line, len, &why) < 0)
				bad_line(r, why);
			if (r->cut.first_line == 0 && stk_get_stats(r->S)->deep_stacks > 0)
				r->cut.first_line = r->lineno;
			continue;
		}
		if (lt != EVT_EVENT)
			continue;	/* metadata, comments, a repeated header */
		if (st->is_evt) {
			st->lines++;
			bad_line(r, "evt input needs stackfold's configuration");
		} else
			folded_line(r, line, len);
	}
	cli_progress_end();
	return rc;
}

int
diffstacks_read(struct diffstacks *t, int side, const char *path,
    const struct diffstacks_opts *o, struct diffstacks_stats *st)
{
	struct reader r;
	struct mapfile m;
	int rc = 0;
	const char *err;

	memset(&r, 0, sizeof(r));
	memset(st, 0, sizeof(*st));
	r.t = t;
	r.o = o;
	r.st = st;
	r.side = side;
	/* shaped folded input goes through stackfold's lib, which reads lines */
	if (!(o->shape_folded && side >= 0 && o->stk) && t->nmaps < 2 && t->ninflated < 2 &&
	    mapfile_open(&m, path)) {
		char *inflated = NULL;
		size_t n = m.n, inflated_n;
		int later = t->nmaps + t->ninflated > 0;

		if (gzwhole_inflate((const unsigned char *)m.p, m.n, &inflated, &inflated_n)) {
			mapfile_close(&m);
			n = inflated_n;
		}
		if (map_readable(inflated != NULL ? inflated : m.p, n)) {
			r.mapped = 1;
			r.in_place = inflated != NULL || !later;
			r.name = path;
			read_mapped(&r, inflated != NULL ? inflated : m.p, n, !r.in_place);
			if (inflated != NULL)
				t->inflated[t->ninflated++] = inflated;
			else if (r.in_place)
				t->maps[t->nmaps++] = m;
			else
				mapfile_close(&m);
		} else {
			free(inflated);
			mapfile_close(&m);
		}
	}
	if (!r.mapped) {
		r.lr = lr_open(path);
		if (r.lr == NULL) {
			cli_warn("%s: %s", path, strerror(errno));
			return -1;
		}
		r.name = lr_name(r.lr);
		rc = read_lines(&r);
	}
	if (r.S != NULL) {	/* lib/stacks cut them: its counts */
		r.cut.stacks = stk_get_stats(r.S)->deep_stacks;
		r.cut.frames = stk_get_stats(r.S)->elided_frames;
	}
	evt_cut_report(&r.cut, r.name);
	if (r.S != NULL) {
		if (rc == 0)
			take_tree(&r);
		stk_free(r.S);
		if (rc == 0 && st->is_evt && st->counted == 0 && st->dropped == 0 && st->ignored > 0)
			cli_warn("%s: none of its %lu events is of the kinds read (Sample unless --kind)",
			    r.name, st->ignored);
	}
	/* too long, NUL bytes: reported by the reader (or as it would) */
	st->bad += r.lr != NULL ? lr_skipped(r.lr) : r.skipped;
	if (rc == 0 && r.lr != NULL && (err = lr_error(r.lr)) != NULL) {
		/* the lines before the damage are kept, like every reader; none is no input */
		cli_warn("%s: %s", r.name, err);
		st->bad++;
		if (st->lines == 0)
			rc = -1;
	}
	if (rc == 0 && st->bad > 0)
		cli_warn("%s: %lu unusable line%s skipped", r.name, st->bad,
		    st->bad == 1 ? "" : "s");
	lr_close(r.lr);
	free(r.hex.p);
	free(r.path.p);
	free(r.ids.p);
	evt_cut_free(&r.cut);
	return rc;
}
