/* manager.h - the manager's commands, one file each. */
#ifndef OBSERVE_MANAGER_H
#define OBSERVE_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

/* manager pull -o CENTRAL.db SOURCE... (pull.c) */
int cmd_pull(int argc, char **argv);

/* manager report CENTRAL.db -o DIR [--where EXPR] [FILTER...] (report.c) */
int cmd_report(int argc, char **argv);

/* Nearest rank percentile of n sorted values (n > 0): the value at rank
 * ceil(p/100 * n), 1-based (main.c). */
double manager_percentile(const double *sorted, size_t n, double p);

/* manager stats --view VIEW (analyses.c): endings, keepalive, size or
 * family, over the exchanges the SQL expression where keeps; window_s > 0
 * splits endings into windows of that many seconds. 0, or 2 on error. */
int manager_view(sqlite3 *db, const char *view, const char *where,
		 double window_s, bool csv, FILE *out);
/* The stats table of manager stats (main.c), by client, server, program
 * or path. 0, or 2 on error. */
int manager_stats_table(sqlite3 *db, const char *by, const char *where,
			bool csv, FILE *out);
/* The SQL condition that keeps the connections (of a query whose
 * connection_metrics is named m) with an exchange the filter keeps; every
 * connection when there is no filter (where NULL or "1"), those with no
 * exchange too. sqlite3_malloc'd (sqlite3_free). */
char *manager_conn_filter(const char *where);

/* The analyses' figures, for the views and the report's plots. */

/* endings: how connections ended per server and time window (window_ns 0
 * when the whole span is one window). c[] counts connections by class;
 * MANAGER_END_ABORTED overlaps the client_close, reset and timeout ones. */
enum {
	MANAGER_END_SERVER_CLOSE,
	MANAGER_END_CLIENT_CLOSE,
	MANAGER_END_RESET,
	MANAGER_END_TIMEOUT,
	MANAGER_END_FAILED, /* refused, connect_error */
	MANAGER_END_UNTERMINATED,
	MANAGER_END_ABORTED,
	MANAGER_END_COUNT
};
struct manager_endings_row {
	char server[64];
	int64_t window_ns;
	double n, c[MANAGER_END_COUNT];
	const char *state; /* normal, saturated, stopped */
};
/* All rows, ordered by server and window, into a malloc'd array. 0, or 2
 * on error (said on stderr). */
int manager_endings_collect(sqlite3 *db, const char *where, double window_s,
			    struct manager_endings_row **rows, size_t *n);

/* keepalive: per server, the idle gaps (sorted, ms), the idle closes
 * (TEOF - the last response's T6, sorted, ms; a close sooner than
 * MANAGER_IDLE_CLOSE_MIN_MS came with the response and is only counted),
 * reconnects after an idle close, the recommendation. */
#define MANAGER_IDLE_CLOSE_MIN_MS 10.0
struct manager_keepalive {
	const char *server;
	const double *gaps, *closes;
	size_t ngaps, ncloses, closes_with_response;
	int64_t reconnects;
	double recommended_ms;
	const char *shape;
};
typedef void (*manager_keepalive_fn)(void *ctx,
				     const struct manager_keepalive *k);
/* Calls fn once per server (the data lives for the call only). 0 or 2. */
int manager_keepalive_each(sqlite3 *db, const char *where,
			   manager_keepalive_fn fn, void *ctx);

/* size: per server, the exchanges' Dr (bytes, ascending) and T6 - T4 (ms),
 * and T = a * Dr + b fitted by least squares (r2) and Theil-Sen (ts_);
 * a in ms per byte, b in ms. */
struct manager_size_fit {
	const char *server;
	const double *dr, *t_ms;
	size_t n;
	double a, b, r2, ts_a, ts_b;
};
typedef void (*manager_size_fn)(void *ctx, const struct manager_size_fit *f);
/* Calls fn once per server (the data lives for the call only). 0 or 2. */
int manager_size_each(sqlite3 *db, const char *where, manager_size_fn fn,
		      void *ctx);

/* The pieces. */
const char *manager_server_state(double n, double failed, double aborted,
				 double reset, double timeout);
void manager_keepalive_advice(const double *sorted, size_t n,
			      double *recommended_ms, const char **shape);
void manager_fit_ls(const double *x, const double *y, size_t n, double *a,
		    double *b, double *r2);
void manager_fit_theil_sen(const double *x, const double *y, size_t n,
			   double *a, double *b);

/* Opens an observe database read-only (stats, report), its SQL functions
 * registered; NULL, with a message naming the file and the reason, when
 * it is missing, no SQLite database, or of another schema version. */
sqlite3 *manager_open(const char *path);

/* The usage text of every command (main.c). */
void manager_usage(FILE *out);

#endif
