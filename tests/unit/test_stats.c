/* test_stats.c - the manager's arithmetic (manager/stats.c) on cases
 * computed by hand: nearest rank percentiles of small arrays, least
 * squares and Theil-Sen on points with known lines, the keep-alive
 * recommendation on constructed gaps, the server state at its thresholds,
 * the round steps of the time axes, the Mann-Whitney U test (exact and
 * normal p-values). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("got %.12g, want %.12g (within %g)", got, want, eps);
}

/* ceil(p/100 * n), 1-based: 5 values, p50 -> rank 3, p90 -> 5 (4.5 up),
 * p20 -> 1 (exactly 1), p21 -> 2, p0 and p1 -> 1, p100 -> 5. */
static void test_percentile_five(void **state)
{
	const double v[] = { 10, 20, 30, 40, 50 };

	(void)state;
	assert_near(stats_percentile(v, 5, 50), 30, 0);
	assert_near(stats_percentile(v, 5, 90), 50, 0);
	assert_near(stats_percentile(v, 5, 20), 10, 0);
	assert_near(stats_percentile(v, 5, 21), 20, 0);
	assert_near(stats_percentile(v, 5, 0), 10, 0);
	assert_near(stats_percentile(v, 5, 1), 10, 0);
	assert_near(stats_percentile(v, 5, 100), 50, 0);
}

/* 10 values: p90 is rank 9 exactly, p99 rank 10 (9.9 up), p50 rank 5;
 * 4 values: p50 rank 2, p75 rank 3; one value is every percentile. */
static void test_percentile_ranks(void **state)
{
	const double ten[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	const double four[] = { -3, 0.5, 7, 100 };
	const double one[] = { 42 };

	(void)state;
	assert_near(stats_percentile(ten, 10, 90), 9, 0);
	assert_near(stats_percentile(ten, 10, 99), 10, 0);
	assert_near(stats_percentile(ten, 10, 50), 5, 0);
	assert_near(stats_percentile(ten, 10, 91), 10, 0);
	assert_near(stats_percentile(four, 4, 50), 0.5, 0);
	assert_near(stats_percentile(four, 4, 75), 7, 0);
	assert_near(stats_percentile(four, 4, 76), 100, 0);
	assert_near(stats_percentile(one, 1, 0), 42, 0);
	assert_near(stats_percentile(one, 1, 50), 42, 0);
	assert_near(stats_percentile(one, 1, 99), 42, 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* stats_sort against qsort: random values with many repeats, sorted and
 * reversed runs, all equal, short and long (the insertion, quick and
 * heap paths). */
static void test_sort_against_qsort(void **state)
{
	static const size_t sizes[] = { 2, 3, 15, 16, 17, 100, 1000, 65537 };
	unsigned seed = 7;

	(void)state;
	for (size_t s = 0; s < N(sizes); s++)
		for (int shape = 0; shape < 5; shape++) {
			size_t n = sizes[s];
			double *a = malloc(n * sizeof(*a));
			double *b = malloc(n * sizeof(*b));

			assert_non_null(a);
			assert_non_null(b);
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245 + 12345;
				a[i] = shape == 0 ? (double)(seed >> 16 & 1023)
				       : shape == 1 ? (double)i
				       : shape == 2 ? (double)(n - i)
				       : shape == 3
					       ? 5.0
					       : (double)(seed >> 8) / 7.0 -
							 1e5;
			}
			memcpy(b, a, n * sizeof(*a));
			stats_sort(a, n);
			qsort(b, n, sizeof(*b), cmp_double);
			assert_memory_equal(a, b, n * sizeof(*a));
			free(a);
			free(b);
		}
}

static void test_sort_mean_sd(void **state)
{
	double v[] = { 4, -1, 3, 2, 2 };
	struct vec x = { 0 };

	(void)state;
	stats_sort(v, N(v));
	assert_near(v[0], -1, 0);
	assert_near(v[1], 2, 0);
	assert_near(v[4], 4, 0);
	/* mean 2; squares of deviations 9 0 0 1 4 = 14; sd sqrt(14/4) */
	assert_near(stats_mean(v, N(v)), 2, 1e-12);
	assert_near(stats_sd(v, N(v)), sqrt(3.5), 1e-12);
	assert_true(isnan(stats_mean(v, 0)));
	assert_near(stats_sd(v, 1), 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(vec_push(&x, i), 0);
	assert_int_equal(x.n, 1000);
	assert_near(stats_mean(x.v, x.n), 499.5, 1e-9);
	vec_free(&x);
	assert_null(x.v);
	assert_int_equal(x.n, 0);
}

/* y = 2x + 1 exactly: a 2, b 1, r2 1. (1,1), (2,2), (3,2): mean x 2, mean
 * y 5/3, sxx 2, sxy 1, syy 2/3: a 0.5, b 2/3, r2 1 / (2 * 2/3) = 0.75. */
static void test_least_squares(void **state)
{
	const double x1[] = { 0, 1, 2 }, y1[] = { 1, 3, 5 };
	const double x2[] = { 1, 2, 3 }, y2[] = { 1, 2, 2 };
	const double same_x[] = { 5, 5, 5 };
	double a, b, r2;

	(void)state;
	stats_fit_ls(x1, y1, 3, &a, &b, &r2);
	assert_near(a, 2, 1e-12);
	assert_near(b, 1, 1e-12);
	assert_near(r2, 1, 1e-12);
	stats_fit_ls(x2, y2, 3, &a, &b, &r2);
	assert_near(a, 0.5, 1e-12);
	assert_near(b, 2.0 / 3, 1e-12);
	assert_near(r2, 0.75, 1e-12);
	/* no spread in x: no line */
	stats_fit_ls(same_x, y1, 3, &a, &b, &r2);
	assert_true(isnan(a) && isnan(b) && isnan(r2));
	/* a flat line: a 0, b the level, r2 undefined (no spread in y) */
	stats_fit_ls(x1, same_x, 3, &a, &b, &r2);
	assert_near(a, 0, 0);
	assert_near(b, 5, 0);
	assert_true(isnan(r2));
}

/* Four points on y = x and one far off at (5, 100): the ten slopes are six
 * 1s and 99/4, 98/3, 97/2, 96: the median of ten is (1 + 1) / 2 = 1; the
 * residuals y - x are 0 0 0 0 95: median 0. Least squares is pulled away. */
static void test_theil_sen(void **state)
{
	const double x[] = { 1, 2, 3, 4, 5 }, y[] = { 1, 2, 3, 4, 100 };
	const double same_x[] = { 2, 2, 2 };
	double a, b, r2;

	(void)state;
	assert_int_equal(stats_fit_theil_sen(x, y, 5, &a, &b), 0);
	assert_near(a, 1, 1e-12);
	assert_near(b, 0, 1e-12);
	/* least squares: sxx 10, sxy 42 + 20 + 0 - 18 + 156 = 200: a 20,
	 * b 22 - 20 * 3 = -38, pulled by the one point */
	stats_fit_ls(x, y, 5, &a, &b, &r2);
	assert_near(a, 20, 1e-12);
	assert_near(b, -38, 1e-12);
	/* two points: the slope between them; residuals 1 - 3*1, 7 - 3*3:
	 * -2 and -2 */
	assert_int_equal(stats_fit_theil_sen(x, (double[]){ 1, 4 }, 2, &a, &b),
			 0);
	assert_near(a, 3, 1e-12);
	assert_near(b, -2, 1e-12);
	/* fewer than two points, or no two x apart: no line */
	assert_int_equal(stats_fit_theil_sen(x, y, 1, &a, &b), 0);
	assert_true(isnan(a) && isnan(b));
	assert_int_equal(stats_fit_theil_sen(same_x, y, 3, &a, &b), 0);
	assert_true(isnan(a) && isnan(b));
}

/* 5,001 points of y = 3x + 2 (integers: every slope is 3 exactly): the
 * 2,000 points taken evenly give the same line. */
static void test_theil_sen_sampled(void **state)
{
	enum { M = 5001 };
	double *x = malloc(M * sizeof(*x)), *y = malloc(M * sizeof(*y));
	double a, b;

	(void)state;
	assert_non_null(x);
	assert_non_null(y);
	for (int i = 0; i < M; i++) {
		x[i] = i;
		y[i] = 3.0 * i + 2;
	}
	assert_int_equal(stats_fit_theil_sen(x, y, M, &a, &b), 0);
	assert_near(a, 3, 0);
	assert_near(b, 2, 0);
	free(x);
	free(y);
}

static void test_keepalive_few_and_clamps(void **state)
{
	const double five[] = { 10, 20, 30, 40, 50 };
	double one_ms[20], slow[20], rec;
	const char *shape;

	(void)state;
	/* none: nothing to say */
	assert_int_equal(stats_keepalive_advice(five, 0, &rec, &shape), 0);
	assert_true(isnan(rec));
	assert_string_equal(shape, "-");
	/* mean 30, sd sqrt(1000/4): 30 + 7 sqrt(250) = 140.68 ms; 70% of 5
	 * is 4 gaps: too few for a shape */
	assert_int_equal(stats_keepalive_advice(five, 5, &rec, &shape), 0);
	assert_near(rec, 30 + 7 * sqrt(250), 1e-9);
	assert_string_equal(shape, "too few gaps");
	/* 20 gaps of 1 ms: 1 + 0 is under 100 ms: clamped to 100; one bin
	 * (0-10 ms), the mode, nothing after it: falling */
	for (int i = 0; i < 20; i++) {
		one_ms[i] = 1;
		slow[i] = 20000;
	}
	assert_int_equal(stats_keepalive_advice(one_ms, 20, &rec, &shape), 0);
	assert_near(rec, 100, 0);
	assert_string_equal(shape, "falling from a 0-100 ms mode: lengthen");
	/* 20 gaps of 20 s: clamped to 15 s; the mode at 20 s: shorten */
	assert_int_equal(stats_keepalive_advice(slow, 20, &rec, &shape), 0);
	assert_near(rec, 15000, 0);
	assert_string_equal(shape, "peaks beyond 100 ms: shorten");
}

static void test_keepalive_shapes(void **state)
{
	double two_peaks[20], near_peaks[20], late[20], rec;
	const char *shape;

	(void)state;
	/* 10 x 5 ms and 10 x 205 ms: mean 105, sd sqrt(20 * 100^2 / 19);
	 * the shortest 70% (14) are 10 x 5 and 4 x 205 ms: bin 0 holds 10,
	 * bin 20 (200 ms) 4, more than its empty neighbour + 2 and more than
	 * a tenth of the mode: a second peak beyond 100 ms */
	for (int i = 0; i < 20; i++) {
		two_peaks[i] = i < 10 ? 5 : 205;
		near_peaks[i] = i < 10 ? 5 : 55;
		late[i] = 150 + (i % 3);
	}
	assert_int_equal(stats_keepalive_advice(two_peaks, 20, &rec, &shape),
			 0);
	assert_near(rec, 105 + 7 * sqrt(200000.0 / 19), 1e-9);
	assert_string_equal(shape, "peaks beyond 100 ms: shorten");
	/* the same with the second peak at 55 ms: not falling, but no peak
	 * beyond 100 ms either */
	assert_int_equal(stats_keepalive_advice(near_peaks, 20, &rec, &shape),
			 0);
	assert_string_equal(shape, "no clear shape");
	/* every gap about 150 ms: the mode itself is beyond 100 ms */
	stats_sort(late, 20);
	assert_int_equal(stats_keepalive_advice(late, 20, &rec, &shape), 0);
	assert_string_equal(shape, "peaks beyond 100 ms: shorten");
}

/* Half failed: stopped; a quarter aborted, reset or timed out: saturated
 * (the thresholds themselves included); else normal; none: "-". */
static void test_server_state(void **state)
{
	(void)state;
	assert_string_equal(stats_server_state(0, 0, 0, 0, 0), "-");
	assert_string_equal(stats_server_state(10, 5, 0, 0, 0), "stopped");
	assert_string_equal(stats_server_state(10, 4, 0, 0, 0), "normal");
	assert_string_equal(stats_server_state(8, 0, 1, 0.5, 0.5), "saturated");
	assert_string_equal(stats_server_state(8, 0, 1, 0, 0.9), "normal");
	assert_string_equal(stats_server_state(4, 2, 1, 0, 0), "stopped");
	assert_string_equal(stats_server_state(100, 0, 0, 0, 24), "normal");
	assert_string_equal(stats_server_state(100, 0, 0, 0, 25), "saturated");
}

/* The smallest of 1, 2, 5 x 10^k (k >= -3) that cuts the span into at most
 * `want` pieces. */
static void test_round_step(void **state)
{
	(void)state;
	assert_near(stats_round_step(0.05, 100), 0.001, 1e-15);
	assert_near(stats_round_step(0, 100), 0.001, 1e-15);
	assert_near(stats_round_step(1, 100), 0.01, 1e-15);
	assert_near(stats_round_step(1.5, 100), 0.02, 1e-15);
	assert_near(stats_round_step(3, 30), 0.1, 1e-15);
	assert_near(stats_round_step(3.1, 30), 0.2, 1e-15);
	assert_near(stats_round_step(400, 100), 5, 1e-12);
	assert_near(stats_round_step(3600, 30), 200, 1e-9);
	/* beyond 5e6 s per piece: the largest step */
	assert_near(stats_round_step(1e12, 100), 5e6, 1e-3);
}

/* Exact p-values, no ties: the number of orders of the m + n values with
 * U = u is the number of partitions of u into at most m parts of at most n
 * each, out of C(m + n, m) orders; p = 2 P(U >= max(U_a, U_b)). */
static void test_mann_whitney_exact(void **state)
{
	const double low[] = { 1, 2, 3 }, high[] = { 4, 5, 6 };
	const double odd[] = { 1, 3, 5 }, even[] = { 2, 4, 6 };
	const double two[] = { 2.5, 4.5 }, four[] = { 1, 2, 3, 4 };
	const double one[] = { 9.5 };
	const double nine[] = { 1, 2, 3, 4, 6, 7, 8, 9, 10 };
	double eight[8], other[9];
	struct stats_mwu r;

	(void)state;
	/* every a below every b: U_a = 0, P(U >= 9) = 1/20 */
	assert_int_equal(stats_mann_whitney(low, 3, high, 3, &r), 0);
	assert_near(r.u, 0, 0);
	assert_true(r.exact);
	assert_near(r.p, 0.1, 1e-12);
	assert_true(isnan(r.z));
	/* the other way round: U_a = 9, the same p */
	assert_int_equal(stats_mann_whitney(high, 3, low, 3, &r), 0);
	assert_near(r.u, 9, 0);
	assert_near(r.p, 0.1, 1e-12);
	/* 3 > 2, 5 > 2, 5 > 4: U_a = 3, U_b = 6; the counts of u = 0..3 for
	 * m = n = 3 are 1, 1, 2, 3: P(U <= 3) = 7/20, p = 0.7 */
	assert_int_equal(stats_mann_whitney(odd, 3, even, 3, &r), 0);
	assert_near(r.u, 3, 0);
	assert_near(r.p, 0.7, 1e-12);
	/* U_a = 2 + 4 = 6 of 8; m = 2, n = 4: counts of u = 0..2 are 1, 1,
	 * 2 of C(6, 2) = 15: p = 2 * 4/15 */
	assert_int_equal(stats_mann_whitney(two, 2, four, 4, &r), 0);
	assert_near(r.u, 6, 0);
	assert_near(r.p, 8.0 / 15, 1e-12);
	/* one value: U uniform on 0..9; U_a = 8: p = 2 * 2/10 */
	assert_int_equal(stats_mann_whitney(one, 1, nine, 9, &r), 0);
	assert_near(r.u, 8, 0);
	assert_true(r.exact);
	assert_near(r.p, 0.4, 1e-12);
	/* 8 against 9, apart: p = 2 / C(17, 8) = 2/24310 */
	for (int i = 0; i < 8; i++)
		eight[i] = i;
	for (int i = 0; i < 9; i++)
		other[i] = 100 + i;
	assert_int_equal(stats_mann_whitney(eight, 8, other, 9, &r), 0);
	assert_true(r.exact);
	assert_near(r.p, 2.0 / 24310, 1e-15);
	/* 2 against 100,000: B = 0..99999, A = { 10.5, 20.5 }: U_a = 11 + 21
	 * = 32; partitions of u into at most 2 parts: floor(u/2) + 1, which
	 * sum to 289 over u = 0..32, of C(100002, 2) = 5000150001 orders */
	{
		enum { BIG = 100000 };
		double *big = malloc(BIG * sizeof(*big));
		const double pair[] = { 10.5, 20.5 };

		assert_non_null(big);
		for (int i = 0; i < BIG; i++)
			big[i] = i;
		assert_int_equal(stats_mann_whitney(pair, 2, big, BIG, &r), 0);
		assert_true(r.exact);
		assert_near(r.u, 32, 0);
		assert_near(r.p / (2.0 * 289 / 5000150001.0), 1, 1e-12);
		free(big);
	}
}

/* The normal approximation: both samples above 8 values, or a tie. */
static void test_mann_whitney_normal(void **state)
{
	const double a[] = { 1, 2, 2, 3 }, b[] = { 3, 4, 5, 5 };
	const double same[] = { 1, 2, 3 };
	const double twos[] = { 2, 2, 2 };
	double lo[10], hi[10];
	struct stats_mwu r;

	(void)state;
	/* ranks 1, 2.5, 2.5, 4.5 | 4.5, 6, 7.5, 7.5: R_a = 10.5, U_a = 0.5,
	 * U = 15.5, mu = 8; three ties of 2: sum t^3 - t = 18; s^2 = 16/12
	 * (9 - 18/56) = 11.5714286, z = (15.5 - 8 - 0.5)/3.4016803 =
	 * 2.0578066; p = 2 sf(z) = 0.0396087 (a normal table) */
	assert_int_equal(stats_mann_whitney(a, 4, b, 4, &r), 0);
	assert_false(r.exact);
	assert_near(r.u, 0.5, 0);
	assert_near(r.z, 2.0578066, 1e-7);
	assert_near(r.p, 0.0396087, 1e-7);
	/* 1..10 against 11..20: U = 100, mu = 50, s^2 = 100/12 * 21 = 175,
	 * z = 49.5/13.2287566 = 3.7418483, p = 1.82672e-4 */
	for (int i = 0; i < 10; i++) {
		lo[i] = i + 1;
		hi[i] = i + 11;
	}
	assert_int_equal(stats_mann_whitney(lo, 10, hi, 10, &r), 0);
	assert_false(r.exact);
	assert_near(r.u, 0, 0);
	assert_near(r.z, 3.7418483, 1e-7);
	assert_near(r.p, 1.82672e-4, 1e-9);
	/* a sample against itself: U = mu, z < 0, p = 1 */
	assert_int_equal(stats_mann_whitney(same, 3, same, 3, &r), 0);
	assert_near(r.u, 4.5, 0);
	assert_near(r.p, 1, 0);
	/* every value the same: no spread at all, p = 1 */
	assert_int_equal(stats_mann_whitney(twos, 2, twos, 3, &r), 0);
	assert_near(r.u, 3, 0);
	assert_near(r.p, 1, 0);
	/* an empty side: no test */
	assert_int_equal(stats_mann_whitney(same, 3, same, 0, &r), 0);
	assert_true(isnan(r.p) && isnan(r.u));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_five),
		cmocka_unit_test(test_percentile_ranks),
		cmocka_unit_test(test_sort_mean_sd),
		cmocka_unit_test(test_sort_against_qsort),
		cmocka_unit_test(test_least_squares),
		cmocka_unit_test(test_theil_sen),
		cmocka_unit_test(test_theil_sen_sampled),
		cmocka_unit_test(test_keepalive_few_and_clamps),
		cmocka_unit_test(test_keepalive_shapes),
		cmocka_unit_test(test_server_state),
		cmocka_unit_test(test_round_step),
		cmocka_unit_test(test_mann_whitney_exact),
		cmocka_unit_test(test_mann_whitney_normal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
