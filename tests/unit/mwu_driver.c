/* mwu_driver.c - stats_mann_whitney() (manager/stats.c) on samples read
 * from stdin, for tests/unit/mwu_scipy.py to check against SciPy. Each case
 * is a line "NA NB" and then NA + NB values; each answer a line
 * "U P EXACT" (%.17g). */
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

/* n values from stdin, sorted; NULL on a read error or out of memory. */
static double *read_sample(size_t n)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		if (scanf("%lf", &v[i]) != 1) {
			free(v);
			return NULL;
		}
	if (v)
		stats_sort(v, n);
	return v;
}

int main(void)
{
	size_t na, nb;

	while (scanf("%zu %zu", &na, &nb) == 2) {
		double *a = read_sample(na), *b = a ? read_sample(nb) : NULL;
		struct stats_mwu r;

		if (!a || !b || stats_mann_whitney(a, na, b, nb, &r) != 0) {
			fprintf(stderr,
				"mwu_driver: bad input or out of memory\n");
			return 1;
		}
		printf("%.17g %.17g %d\n", r.u, r.p, r.exact);
		free(a);
		free(b);
	}
	return 0;
}
