/* table.h - the statistics table of manager stats and the report. */
#ifndef OBSERVE_MANAGER_TABLE_H
#define OBSERVE_MANAGER_TABLE_H

#include <stdbool.h>
#include <stdio.h>
#include <sqlite3.h>

/* The table over the exchanges the SQL expression where keeps ("1": all),
 * grouped by `by` (client, server, program or path), as text or CSV.
 * 0, or 2 on error (said on stderr). */
int table_stats(sqlite3 *db, const char *by, const char *where, bool csv,
		FILE *out);

/* The table made from figures the caller has read (manager report's own
 * pass over the rows, so that the table costs no pass of its own): a
 * group's values of one metric at a time, in the order of the groups,
 * then the table. The metrics in the table's order: */
enum table_metric {
	TABLE_TT,
	TABLE_TE,
	TABLE_TS,
	TABLE_TW,
	TABLE_TR,
	TABLE_RS,
	TABLE_RR,
	TABLE_RA,
	TABLE_METRICS
};
struct table_build {
	FILE *lines[TABLE_METRICS]; /* each metric's lines */
	char *text[TABLE_METRICS];
	size_t len[TABLE_METRICS];
	double *scaled; /* the rates in MB/s */
	size_t cap;
	bool csv, tty, failed;
};
/* 0, or 2 when out of memory (said; table_build_free still due). */
int table_build_begin(struct table_build *b, bool csv, bool tty);
/* The values of metric m of group (as the views store them: the rates in
 * bytes/s) into its line; v sorted in place. Nothing when n is 0. */
void table_build_group(struct table_build *b, enum table_metric m,
		       const char *group, double *v, size_t n);
/* The header (its first column `by`) and the lines into out. 0, or 2 when
 * something failed (said). */
int table_build_end(struct table_build *b, const char *by, FILE *out);
void table_build_free(struct table_build *b);

/* The query of one metric's values per group: rows (group, value), the
 * group's name as `by` (client, server, program or path; per-connection
 * metrics are one group, "(connections)", by path) makes it, values not
 * NULL, ordered by group; column is of connection_metrics (per_connection)
 * or exchange_metrics, filtered by where as above. sqlite3_malloc'd, NULL
 * when out of memory. */
char *table_metric_sql(const char *by, const char *column, bool per_connection,
		       const char *where);

#endif
