/* manager.h - the manager's commands, one file each. */
#ifndef OBSERVE_MANAGER_H
#define OBSERVE_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
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
/* The pieces, for the report. */
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
