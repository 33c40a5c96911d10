/* stats.h - the manager's arithmetic, pure (no database, no output):
 * growable arrays of samples, mean and standard deviation, percentiles by
 * nearest rank, straight-line fits (least squares, Theil-Sen), the
 * keep-alive recommendation, the server state of the endings analysis,
 * round steps for time axes, and the Mann-Whitney U test. Definitions in
 * docs/analyses.md. */
#ifndef OBSERVE_MANAGER_STATS_H
#define OBSERVE_MANAGER_STATS_H

#include <stddef.h>

/* A growable array of doubles; { 0 } is an empty one. */
struct vec {
	double *v;
	size_t n, cap;
};

/* Append v: 0, or -1 when out of memory (x unchanged). */
int vec_push(struct vec *x, double v);
void vec_free(struct vec *x);

/* Sort n values ascending. */
void stats_sort(double *v, size_t n);

/* The mean of n values; NaN when n is 0. */
double stats_mean(const double *v, size_t n);

/* The sample standard deviation (n - 1 in the denominator); 0 when n < 2. */
double stats_sd(const double *v, size_t n);

/* Nearest rank percentile of n sorted values (n > 0): the value at rank
 * ceil(p/100 * n), 1-based; the smallest value for p = 0. */
double stats_percentile(const double *sorted, size_t n, double p);

/* Least squares fit y = a x + b of n points; r2 the coefficient of
 * determination. a, b and r2 are NaN when every x is the same (r2 also
 * when every y is). */
void stats_fit_ls(const double *x, const double *y, size_t n, double *a,
		  double *b, double *r2);

/* Theil-Sen fit y = a x + b: a the median of the slopes between pairs of
 * points (of at most 2,000 points taken evenly), b the median of y - a x.
 * NaN when fewer than two points have different x. 0, or -1 when out of
 * memory (a, b NaN). */
int stats_fit_theil_sen(const double *x, const double *y, size_t n, double *a,
			double *b);

/* The keep-alive recommendation of seed 003 from n sorted idle gaps (ms):
 * mu + 7 sigma clamped to [100 ms, 15 s] (NaN when n is 0), and the shape
 * of the histogram (10 ms bins) of the shortest 70% of the gaps:
 * "falling from a 0-100 ms mode: lengthen", "peaks beyond 100 ms: shorten",
 * "no clear shape", "too few gaps" (under 10 in the 70%), "-" (none).
 * 0, or -1 when out of memory (the shape is then "-"). */
int stats_keepalive_advice(const double *sorted, size_t n,
			   double *recommended_ms, const char **shape);

/* The server's state from how n connections of a time window ended:
 * "stopped" when at least half failed to connect, "saturated" when the
 * aborted, reset and timed out make a quarter or more, else "normal";
 * "-" when n is 0. */
const char *stats_server_state(double n, double failed, double aborted,
			       double reset, double timeout);

/* The two-sided Mann-Whitney U test of two samples (docs/analyses.md):
 * u is U of the first sample (the pairs (a, b) with a > b, a tie counting
 * one half); p its two-sided p-value, as scipy.stats.mannwhitneyu gives it
 * by default: exact (the distribution of U over every order of the values)
 * when the smaller sample has at most STATS_MWU_EXACT_MAX values, no value
 * is tied and na * nb <= STATS_MWU_EXACT_CELLS; otherwise the normal
 * approximation with the tie correction and the continuity correction
 * (z is then set, NaN when exact). p is 1 when every value is the same,
 * NaN (and u, z too) when a sample is empty. */
#define STATS_MWU_EXACT_MAX 8
#define STATS_MWU_EXACT_CELLS 1000000
struct stats_mwu {
	double u, z, p;
	int exact; /* 1: p exact, 0: normal approximation */
};

/* The test of a (na values) against b (nb values), both sorted ascending.
 * 0, or -1 when out of memory (the exact distribution). */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *r);

/* A step of 1, 2 or 5 times a power of ten (a millisecond to 5e6 s) that
 * cuts span_s seconds into at most `want` pieces where it can (the
 * largest step otherwise). */
double stats_round_step(double span_s, double want);

#endif
