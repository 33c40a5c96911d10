/* stats.c - the manager's arithmetic: samples, mean, sd, nearest rank
 * percentiles, least squares and Theil-Sen fits, the keep-alive advice,
 * the server state, round steps (see stats.h). Pure: no database, no
 * output; tested with hand-computed cases in tests/unit/test_stats.c. */
#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

int vec_push(struct vec *x, double v)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 256;
		double *more = realloc(x->v, cap * sizeof(*more));
		if (!more)
			return -1;
		x->v = more;
		x->cap = cap;
	}
	x->v[x->n++] = v;
	return 0;
}

void vec_free(struct vec *x)
{
	free(x->v);
	x->v = NULL;
	x->n = x->cap = 0;
}

/* Sorting doubles in place: quicksort on the median of three, insertion
 * sort below SORT_SHORT values, heapsort past a depth of 2 log2 n (never
 * quadratic). The same order as qsort with a comparison function, three
 * to four times faster (no call per comparison) and without the buffer
 * of n values glibc's qsort merges through. */
#define SORT_SHORT 16

static void swap(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

static void sort_insertion(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static void sort_sift(double *v, size_t n, size_t i)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && v[c + 1] > v[c])
			c++;
		if (!(v[c] > v[i]))
			return;
		swap(&v[i], &v[c]);
	}
}

static void sort_heap(double *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sort_sift(v, n, i);
	for (size_t i = n; i-- > 1;) {
		swap(&v[0], &v[i]);
		sort_sift(v, i, 0);
	}
}

static void sort_quick(double *v, size_t n, int depth)
{
	while (n > SORT_SHORT) {
		size_t mid = n / 2;
		ptrdiff_t i = -1, j = (ptrdiff_t)n;
		double pivot;

		if (depth-- == 0) {
			sort_heap(v, n);
			return;
		}
		/* v[0] <= v[mid] <= v[n - 1]: both scans stop inside */
		if (v[mid] < v[0])
			swap(&v[mid], &v[0]);
		if (v[n - 1] < v[mid]) {
			swap(&v[n - 1], &v[mid]);
			if (v[mid] < v[0])
				swap(&v[mid], &v[0]);
		}
		pivot = v[mid];
		for (;;) {
			do
				i++;
			while (v[i] < pivot);
			do
				j--;
			while (v[j] > pivot);
			if (i >= j)
				break;
			swap(&v[i], &v[j]);
		}
		/* v[0..j] <= pivot <= v[j + 1..n - 1]; the shorter side
		 * first, the longer one in this loop */
		if ((size_t)j + 1 < n - (size_t)j - 1) {
			sort_quick(v, (size_t)j + 1, depth);
			v += j + 1;
			n -= (size_t)j + 1;
		} else {
			sort_quick(v + j + 1, n - (size_t)j - 1, depth);
			n = (size_t)j + 1;
		}
	}
	sort_insertion(v, n);
}

void stats_sort(double *v, size_t n)
{
	int depth = 0;
	size_t i = 1;

	/* already in order (a vector sorted before, all alike): one look */
	while (i < n && !(v[i] < v[i - 1]))
		i++;
	if (i >= n)
		return;
	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	sort_quick(v, n, depth);
}

double stats_mean(const double *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : NAN;
}

double stats_sd(const double *v, size_t n)
{
	double m = stats_mean(v, n), s = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return sqrt(s / (double)(n - 1));
}

double stats_percentile(const double *sorted, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)n);

	if ((double)rank < p / 100.0 * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

void stats_fit_ls(const double *x, const double *y, size_t n, double *a,
		  double *b, double *r2)
{
	double mx = stats_mean(x, n), my = stats_mean(y, n), sxx = 0, sxy = 0,
	       syy = 0;

	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	*a = sxx > 0 ? sxy / sxx : NAN;
	*b = my - *a * mx;
	*r2 = sxx > 0 && syy > 0 ? sxy * sxy / (sxx * syy) : NAN;
}

/* The median of n sorted values (n > 0). */
static double median(const double *sorted, size_t n)
{
	return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

int stats_fit_theil_sen(const double *x, const double *y, size_t n, double *a,
			double *b)
{
	size_t k = n < 2000 ? n : 2000, m = 0;
	double *slopes = NULL, *rest = NULL;
	int rc = 0;

	*a = *b = NAN;
	if (k < 2)
		return 0;
	slopes = malloc(k * (k - 1) / 2 * sizeof(*slopes));
	rest = malloc(n * sizeof(*rest));
	if (!slopes || !rest) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < k; i++) {
		size_t pi = i * n / k;
		for (size_t j = i + 1; j < k; j++) {
			size_t pj = j * n / k;
			if (x[pj] != x[pi])
				slopes[m++] = (y[pj] - y[pi]) / (x[pj] - x[pi]);
		}
	}
	if (m == 0)
		goto out;
	stats_sort(slopes, m);
	*a = median(slopes, m);
	for (size_t i = 0; i < n; i++)
		rest[i] = y[i] - *a * x[i];
	stats_sort(rest, n);
	*b = median(rest, n);
out:
	free(slopes);
	free(rest);
	return rc;
}

/* One mode in 0-100 ms falling away means most requests come quickly and
 * the rest are slow thinkers (lengthen); a peak further out means a
 * regular pause the timeout should cover no longer than needed
 * (shorten). */
int stats_keepalive_advice(const double *sorted, size_t n,
			   double *recommended_ms, const char **shape)
{
	size_t m = (size_t)ceil(0.7 * (double)n), bins;
	unsigned int *h;
	size_t mode = 0;
	bool falling = true, peak = false;

	*recommended_ms = NAN;
	*shape = "-";
	if (n == 0)
		return 0;
	*recommended_ms = stats_mean(sorted, n) + 7 * stats_sd(sorted, n);
	if (*recommended_ms < 100)
		*recommended_ms = 100;
	if (*recommended_ms > 15000)
		*recommended_ms = 15000;
	if (m < 10) {
		*shape = "too few gaps";
		return 0;
	}
	bins = (size_t)(sorted[m - 1] / 10.0) + 1;
	if (bins > 100000)
		bins = 100000;
	h = calloc(bins, sizeof(*h));
	if (!h)
		return -1;
	for (size_t i = 0; i < m; i++) {
		size_t b = (size_t)(sorted[i] / 10.0);
		h[b < bins ? b : bins - 1]++;
	}
	for (size_t b = 1; b < bins; b++)
		if (h[b] > h[mode])
			mode = b;
	for (size_t b = mode + 1; b < bins; b++) {
		/* a bin clearly above its left neighbour is a new peak */
		if (h[b] > h[b - 1] + 2 && h[b] * 10 > h[mode]) {
			falling = false;
			if (b * 10 >= 100)
				peak = true;
		}
	}
	if (mode * 10 < 100 && falling)
		*shape = "falling from a 0-100 ms mode: lengthen";
	else if (peak || mode * 10 >= 100)
		*shape = "peaks beyond 100 ms: shorten";
	else
		*shape = "no clear shape";
	free(h);
	return 0;
}

const char *stats_server_state(double n, double failed, double aborted,
			       double reset, double timeout)
{
	if (n <= 0)
		return "-";
	if (failed / n >= 0.5)
		return "stopped";
	if ((aborted + reset + timeout) / n >= 0.25)
		return "saturated";
	return "normal";
}

double stats_round_step(double span_s, double want)
{
	double w = 0.001;

	for (int k = -3; k <= 6 && span_s / w > want; k++)
		for (int j = 0; j < 3 && span_s / w > want; j++)
			w = (j == 0 ? 1 : j == 1 ? 2 : 5) * pow(10, k);
	return w;
}

/* P(U <= k) for samples of m and n values with no tie, every order of the
 * m + n values equally likely: the number of orders with U = u is the
 * coefficient of q^u in the Gaussian binomial [m + n, m]_q =
 * prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), of which only the terms up to
 * q^k are needed. -1 when out of memory. */
static double mwu_exact_cdf(size_t m, size_t n, size_t k)
{
	double *c = calloc(k + 1, sizeof(*c)), sum = 0, orders = 1;

	if (!c)
		return -1;
	c[0] = 1;
	for (size_t i = 1; i <= m; i++) {
		for (size_t j = k + 1; j-- > n + i;) /* from the top */
			c[j] -= c[j - (n + i)];
		for (size_t j = i; j <= k; j++)
			c[j] += c[j - i];
		orders = orders * (double)(n + i) / (double)i;
	}
	for (size_t j = 0; j <= k; j++)
		sum += c[j];
	free(c);
	return sum / orders;
}

/* Walk the two sorted samples as one: each run of equal values gets the
 * mean of its ranks; rank_a is the sum of a's ranks, ties the sum of
 * t^3 - t over the runs of length t. */
static void mwu_ranks(const double *a, size_t na, const double *b, size_t nb,
		      double *rank_a, double *ties)
{
	size_t i = 0, j = 0, rank = 1;

	*rank_a = *ties = 0;
	while (i < na || j < nb) {
		double v = j == nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
		size_t ta = 0, tb = 0;
		double t;

		while (i < na && a[i] == v)
			i++, ta++;
		while (j < nb && b[j] == v)
			j++, tb++;
		t = (double)(ta + tb);
		*rank_a += (double)ta * ((double)rank + (t - 1) / 2);
		*ties += t * t * t - t;
		rank += ta + tb;
	}
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *r)
{
	double rank_a, ties, mn = (double)na * (double)nb,
			     n = (double)(na + nb);
	double u, mu, s;
	size_t small = na < nb ? na : nb, large = na < nb ? nb : na;

	r->u = r->z = r->p = NAN;
	r->exact = 0;
	if (na == 0 || nb == 0)
		return 0;
	mwu_ranks(a, na, b, nb, &rank_a, &ties);
	r->u = rank_a - (double)na * ((double)na + 1) / 2;
	u = fmax(r->u, mn - r->u); /* the larger of U(a) and U(b) */
	if (ties == 0 && small <= STATS_MWU_EXACT_MAX &&
	    mn <= STATS_MWU_EXACT_CELLS) {
		/* P(U >= u) = P(U <= mn - u): the distribution is symmetric */
		double cdf = mwu_exact_cdf(small, large, (size_t)(mn - u));

		if (cdf < 0)
			return -1;
		r->exact = 1;
		r->p = fmin(1, 2 * cdf);
		return 0;
	}
	mu = mn / 2;
	s = sqrt(mn / 12 * ((n + 1) - ties / (n * (n - 1))));
	if (!(s > 0)) { /* every value the same */
		r->z = 0;
		r->p = 1;
		return 0;
	}
	r->z = (u - mu - 0.5) / s;
	/* twice the normal survival function, sf(z) = erfc(z / sqrt 2) / 2 */
	r->p = fmin(1, erfc(r->z / sqrt(2)));
	return 0;
}
