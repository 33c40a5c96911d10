/* compare.h - before and after: two selections (two databases, or one
 * with two filters) compared per group (server, path or client) and
 * metric (Te, Ts, Tw, Tr, Tt, Rr): n, p50, p90, p99 of each side, the
 * change p50(B)/p50(A), and the p-value of the two-sided Mann-Whitney U
 * test (stats.h). For manager compare and the report's --baseline. */
#ifndef OBSERVE_MANAGER_COMPARE_H
#define OBSERVE_MANAGER_COMPARE_H

#include <stdbool.h>
#include <stdio.h>
#include <sqlite3.h>

#include "stats.h"

enum { CMP_TE, CMP_TS, CMP_TW, CMP_TR, CMP_TT, CMP_RR, CMP_METRICS };

struct compare_metric {
	const char *name;   /* as printed: "Tw ms" */
	const char *column; /* of exchange_metrics or connection_metrics */
	bool per_connection;
	double scale; /* printed = stored * scale */
};
extern const struct compare_metric compare_metrics[CMP_METRICS];

/* One side: its database and the filter of its rows ("1" for all). */
struct compare_side {
	sqlite3 *db;
	const char *db_path; /* in messages */
	const char *where;
};

struct compare_group {
	char *name;
	struct vec v[2][CMP_METRICS]; /* [side A, B][metric], sorted, scaled */
};

struct compare {
	struct compare_group *g; /* ordered by name */
	size_t ng;
};

/* Read both sides grouped by `by` (server, path or client). 0, or -1
 * with the reason on stderr (what was read stays for compare_free). */
int compare_read(struct compare *c, const struct compare_side side[2],
		 const char *by);
void compare_free(struct compare *c);

/* The table: a row per group and metric with values on either side.
 * CSV columns: group, metric, n_a, n_b, p50_a, p50_b, p90_a, p90_b,
 * p99_a, p99_b, change, p_value (empty where undefined); text: the same
 * columns, aligned. 0, or -1 when out of memory (said). */
int compare_table(const struct compare *c, const char *by, bool csv, FILE *out);

#endif
