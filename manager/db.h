/* db.h - the manager's read-only access to an observe database (stats,
 * report): opened with its schema checked, statements prepared with their
 * errors said. */
#ifndef OBSERVE_MANAGER_DB_H
#define OBSERVE_MANAGER_DB_H

#include <stddef.h>
#include <sqlite3.h>

/* Opens an observe database read-only, the filters' SQL functions
 * registered; NULL, with a message naming the file and the reason on
 * stderr, when it is missing, no SQLite database, or of another schema
 * version. A postgresql:// URI is read through a snapshot of the store
 * into a private temporary SQLite file (store_pg.h), gone when the
 * connection closes. exchange_metrics is then the readers' view
 * (obs_schema_reader_view_sql): the next exchange looked up only where
 * tgap_ms is read. */
sqlite3 *db_open(const char *path);

/* The view to read when every row's tgap_ms is read: the stored one, whose
 * join finds the next exchanges faster than the readers' view looks each
 * up. The same columns, the same values (also on a connection without the
 * readers' view: observe's). */
#define DB_GAPS_VIEW "main.exchange_metrics"

/* db_open, and the filter expression where (NULL: none) checked against
 * it: NULL, with the file and the reason on stderr, when it is refused. */
sqlite3 *db_open_where(const char *path, const char *where);

/* Whether the layer lost records in the database's processes (its spool
 * full: process.dropped): 1 with "N records lost by the layer (spool full)
 * in M processes" in buf, else 0 (also when it cannot tell). */
int db_dropped(sqlite3 *db, char *buf, size_t size);

/* A prepared statement, or NULL with SQLite's message on stderr. */
sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql);

#endif
