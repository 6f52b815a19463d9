/*
 * overweight.h - PerfView's Overweight report (Regression -> Overweight),
 * computed on name -> (base, test) inclusive maps.
 *
 * ../shared/docs/reference-semantics.md §2.8:
 *   growth      g = test_total / base_total
 *   delta       test - base                        (per name)
 *   overweight  delta / (base * (g - 1)) * 100
 *   resp.       delta / (test_total - base_total) * 100
 *   interest    0..6: +1 |ow| > 110, +1 |resp| > 5, +1 |resp| > 20,
 *               +1 |resp| > 100, +1 test/test_total < 0.95, +1 < 0.75
 *   order       interest desc, overweight desc, delta asc
 *   cut         |resp| >= 2 (configurable)
 * Beyond PerfView: names found in only one trace are kept in their own
 * list (PerfView drops them), every row carries a sampling-noise
 * estimate, and equal totals (g = 1) do not divide by zero: overweight
 * is then undefined and "resp." becomes delta / total * 100 (the
 * share of the profile that moved), so the report still ranks changes.
 * Rows that tie in PerfView's order (a regression keeps the same
 * overweight down its whole path) are ordered caller first: the name
 * that occurs nearest the root, where the regression enters.
 *
 * Noise: a weight W made of n samples is uncertain by about W / sqrt(n)
 * (relative error 1/sqrt(n)), so the delta of a name has a standard
 * error s = sqrt(b^2/n_b + t^2/n_t); the noise column is s / |delta|
 * and a row is "noisy" when |delta| < 2 s.  For 1-ms samples this is
 * sqrt(n_b + n_t) / |n_t - n_b|; for measured durations (DPC events) it
 * treats the events as a sample of the routine's behaviour.
 */
#ifndef ETLKIT_OVERWEIGHT_H
#define ETLKIT_OVERWEIGHT_H

#include <stddef.h>

struct diffstacks;

enum ow_where { OW_BOTH, OW_BASE_ONLY, OW_TEST_ONLY };

struct ow_row {
	const char *name;
	enum ow_where where;
	double base, test;	/* inclusive weight */
	double nbase, ntest;	/* inclusive samples */
	double delta;
	double overweight;	/* % ; valid when has_overweight */
	int has_overweight;
	double resp;		/* % of the total delta (or of the total if totals are equal) */
	int interest;
	double noise;		/* relative error of the delta in % (see ow_compute); <0: infinite */
	int noisy;		/* the change is under two standard errors */
	unsigned depth;		/* least depth (0 = root frame) at which the name occurs */
	unsigned long long set;	/* fingerprint of the stacks the name occurs on */
	size_t nsame;		/* ow_collapse: rows folded into this one */
	int follower;		/* ow_collapse: same stacks as the row above; not shown */
};

struct ow_report {
	double base_total, test_total;
	double base_samples, test_samples;
	double growth;		/* test/base; 0 when base_total is 0 */
	int equal_totals;	/* no growth: overweight undefined */
	struct ow_row *rows;	/* names in both traces, sorted, cut applied */
	size_t nrows;
	struct ow_row *only;	/* names in one trace only, by |delta| desc, cut applied */
	size_t nonly;
	size_t nboth_all, nonly_all;	/* before the cut */
};

/*
 * Inclusive weight per frame name: every stack of STACKS adds its
 * weights once to each distinct frame on it (recursion counted once).
 * NAMES receives the frames.
 */
void ow_inclusive(struct diffstacks *stacks, struct diffstacks *names);

/*
 * Builds the report from a name table (w[0]/w[1] inclusive weight,
 * n[0]/n[1] inclusive samples) and the two totals.  MIN_RESP is the cut
 * in percent (PerfView: 2).  Row names point into NAMES.
 */
void ow_compute(struct diffstacks *names, double base_total, double test_total,
    double base_samples, double test_samples, double min_resp,
    struct ow_report *r);
/*
 * Optional, beyond PerfView: a row whose name occurs on exactly the same
 * stacks as the row above it (same weights, same stack set) is marked a
 * follower and counted in the first row's nsame.  A regression path
 * A -> B -> C where B and C are only ever called from A then reads as
 * one row, "A (+2 on the same stacks)".  Rows stay in the arrays.
 */
void ow_collapse(struct ow_report *r);
void ow_free(struct ow_report *r);

#endif
