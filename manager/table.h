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

/* The query of one metric's values per group: rows (group, value), the
 * group's name as `by` (client, server, program or path; per-connection
 * metrics are one group, "(connections)", by path) makes it, values not
 * NULL, ordered by group; column is of connection_metrics (per_connection)
 * or exchange_metrics, filtered by where as above. sqlite3_malloc'd, NULL
 * when out of memory. */
char *table_metric_sql(const char *by, const char *column, bool per_connection,
		       const char *where);

#endif
