/*
 * overweight.c - PerfView's Overweight report on inclusive name maps
 * (see overweight.h for the formulas and what we add).
 */
#include "report/overweight.h"
#include "report/diffstacks.h"
#include "base/cli.h"
#include "base/hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A well-mixed 64-bit value per stack index (base/hash.h): XOR-ed, they
 * fingerprint a set of stacks.  Only compared for equality, never shown.
 */
static uint64_t
stack_print(uint64_t i)
{
	return hash_u64(i);
}

void
ow_inclusive(struct diffstacks *stacks, struct diffstacks *names)
{
	size_t i, n = diffstacks_size(stacks), ix;
	struct diffstacks_entry *s, *f;
	const char *b, *e, *end;
	uint32_t depth;

	for (i = 0; i < diffstacks_size(names); i++)
		diffstacks_at(names, i)->depth = UINT32_MAX;
	for (i = 0; i < n; i++) {
		s = diffstacks_at(stacks, i);
		if (s->w[0] == 0 && s->w[1] == 0)
			continue;
		end = diffstacks_key(stacks, i) + diffstacks_key_len(stacks, i);
		depth = 0;
		for (b = diffstacks_key(stacks, i); b <= end; b = e + 1, depth++) {
			e = memchr(b, ';', (size_t)(end - b));
			if (e == NULL)
				e = end;
			if (e > b) {
				ix = diffstacks_intern(names, b, (size_t)(e - b));
				f = diffstacks_at(names, ix);
				s = diffstacks_at(stacks, i);
				if (f->mark == 0) {
					f->depth = UINT32_MAX;	/* new name */
					f->set = 0;
				}
				if (depth < f->depth)
					f->depth = depth;
				/* a name recurring on one stack is counted once (PerfView ByName) */
				if (f->mark != (uint32_t)(i + 1)) {
					f->mark = (uint32_t)(i + 1);
					f->set ^= stack_print(i);
					f->w[0] += s->w[0];
					f->w[1] += s->w[1];
					f->n[0] += s->n[0];
					f->n[1] += s->n[1];
				}
			}
		}
	}
}

/* Sampling noise: W from n samples has a standard error of about W / sqrt(n). */
static void
noise(struct ow_row *r)
{
	double var = 0, sigma, d = fabs(r->delta);

	if (r->nbase > 0)
		var += r->base * r->base / r->nbase;
	if (r->ntest > 0)
		var += r->test * r->test / r->ntest;
	sigma = sqrt(var);
	if (d == 0) {
		r->noise = -1;
		r->noisy = 1;
		return;
	}
	r->noise = 100 * sigma / d;
	r->noisy = d < 2 * sigma;
}

static int ow_equal_totals;

static int
cmp_rows(const void *a, const void *b)
{
	const struct ow_row *x = a, *y = b;

	if (x->interest != y->interest)
		return x->interest > y->interest ? -1 : 1;
	if (x->has_overweight && y->has_overweight && x->overweight != y->overweight)
		return x->overweight > y->overweight ? -1 : 1;
	if (ow_equal_totals) {
		if (fabs(x->delta) != fabs(y->delta))
			return fabs(x->delta) > fabs(y->delta) ? -1 : 1;
	} else if (x->delta != y->delta)
		return x->delta < y->delta ? -1 : 1;
	if (x->depth != y->depth)	/* a tie down one path: the caller first */
		return x->depth < y->depth ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
cmp_only(const void *a, const void *b)
{
	const struct ow_row *x = a, *y = b;

	if (fabs(x->delta) != fabs(y->delta))
		return fabs(x->delta) > fabs(y->delta) ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return strcmp(x->name, y->name);
}

void
ow_compute(struct diffstacks *names, double base_total, double test_total,
    double base_samples, double test_samples, double min_resp,
    struct ow_report *r)
{
	size_t i, n = diffstacks_size(names);
	double total_delta = test_total - base_total;
	struct diffstacks_entry *e;
	struct ow_row row, *dst;

	memset(r, 0, sizeof(*r));
	r->base_total = base_total;
	r->test_total = test_total;
	r->base_samples = base_samples;
	r->test_samples = test_samples;
	r->equal_totals = total_delta == 0;
	r->growth = base_total != 0 ? test_total / base_total : INFINITY;
	r->rows = xcalloc(n ? n : 1, sizeof(*r->rows));
	r->only = xcalloc(n ? n : 1, sizeof(*r->only));
	for (i = 0; i < n; i++) {
		e = diffstacks_at(names, i);
		if (e->w[0] == 0 && e->w[1] == 0)
			continue;
		memset(&row, 0, sizeof(row));
		row.name = diffstacks_key(names, i);
		row.base = e->w[0];
		row.test = e->w[1];
		row.nbase = e->n[0];
		row.ntest = e->n[1];
		row.depth = e->depth;
		row.set = e->set;
		row.delta = row.test - row.base;
		row.where = row.base == 0 ? OW_TEST_ONLY : row.test == 0 ? OW_BASE_ONLY : OW_BOTH;
		if (r->equal_totals)
			row.resp = test_total != 0 ? row.delta / test_total * 100 : 0;
		else
			row.resp = row.delta / total_delta * 100;
		noise(&row);
		if (row.where == OW_BOTH) {
			r->nboth_all++;
			if (!r->equal_totals) {
				/* = delta / (base * (g - 1)) * 100, without rounding g */
				row.overweight = row.delta * base_total * 100 / (row.base * total_delta);
				row.has_overweight = 1;
			}
			row.interest = (row.has_overweight && fabs(row.overweight) > 110) +
			    (fabs(row.resp) > 5) + (fabs(row.resp) > 20) + (fabs(row.resp) > 100) +
			    (row.test < 0.95 * test_total) + (row.test < 0.75 * test_total);
			if (fabs(row.resp) < min_resp)
				continue;
			dst = &r->rows[r->nrows++];
		} else {
			r->nonly_all++;
			if (fabs(row.resp) < min_resp)
				continue;
			dst = &r->only[r->nonly++];
		}
		*dst = row;
	}
	ow_equal_totals = r->equal_totals;
	qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_rows);
	qsort(r->only, r->nonly, sizeof(*r->only), cmp_only);
}

static void
collapse_rows(struct ow_row *rows, size_t n)
{
	size_t i, lead = 0;

	for (i = 1; i < n; i++) {
		if (rows[i].set == rows[lead].set && rows[i].base == rows[lead].base &&
		    rows[i].test == rows[lead].test && rows[i].where == rows[lead].where) {
			rows[i].follower = 1;
			rows[lead].nsame++;
		} else
			lead = i;
	}
}

void
ow_collapse(struct ow_report *r)
{
	collapse_rows(r->rows, r->nrows);
	collapse_rows(r->only, r->nonly);
}

void
ow_free(struct ow_report *r)
{
	free(r->rows);
	free(r->only);
	memset(r, 0, sizeof(*r));
}
