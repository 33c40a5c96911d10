/* source.h - where the OTLP push and the metrics read their rows: an
 * SQLite database (the slicer's, a central one) or a central store on
 * PostgreSQL (common/store_pg.h), behind one small interface, so that the
 * cursor, the exporter and the feed are one code path for both.
 *
 * The queries are written once, in the SQL both engines take: parameters
 * $1, $2 ..., the ids a query is about in the table otel_ids (column id),
 * integers compared (x <> 0) rather than taken as truth values. Their rows
 * come back as an SQLite statement to step, whatever the engine. */
#ifndef OBSERVE_OTEL_SOURCE_H
#define OBSERVE_OTEL_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store_pg.h"

/* The table of the ids a query is about (otel_source_query). */
#define OTEL_IDS "otel_ids"

/* A parameter of a query: an integer, text (NUL-terminated), or n bytes
 * (NULL: SQL NULL). */
struct otel_value {
	enum { OTEL_INT, OTEL_TEXT, OTEL_BLOB } type;
	int64_t i;
	const void *p;
	size_t n;
};

/* otel_source_query's flags. OTEL_SETTLED: the rows as of a moment when
 * no writer is under way, so that an id below those the query returns
 * never turns up later (PostgreSQL numbers the rows of concurrent pulls
 * before they commit, not in the order they commit). */
enum { OTEL_SETTLED = 1 };

struct otel_source;

/* The source of an open SQLite database (kept open by the caller), or of a
 * PostgreSQL store (kept open by the caller too). NULL with err. */
struct otel_source *otel_source_sqlite(sqlite3 *db, char *err, size_t errlen);
struct otel_source *otel_source_pg(obs_pg *pg, char *err, size_t errlen);
void otel_source_close(struct otel_source *s);

/* The rows of the query sql, with $k bound to params[k - 1] and, when ids
 * is not NULL, otel_ids holding ids[0..n_ids); flags as above. *rows is to
 * be stepped, then finalized (sqlite3_finalize) before the next call. 0, or
 * -1 with the database's name and the reason in err. */
int otel_source_query(struct otel_source *s, const char *sql,
		      const struct otel_value *params, int n_params,
		      const int64_t *ids, size_t n_ids, int flags,
		      sqlite3_stmt **rows, char *err, size_t errlen);

/* Each row of the query (as otel_source_query) given to row(ctx, st),
 * which returns 0, or -1 when out of memory (the rest is not read). 0, or
 * -1 with err. */
int otel_source_each(struct otel_source *s, const char *sql,
		     const struct otel_value *params, int n_params,
		     const int64_t *ids, size_t n_ids, int flags,
		     int (*row)(void *ctx, sqlite3_stmt *st), void *ctx,
		     char *err, size_t errlen);

/* Run sql, which gives no rows, with params as above. 0, or -1 with err. */
int otel_source_exec(struct otel_source *s, const char *sql,
		     const struct otel_value *params, int n_params, char *err,
		     size_t errlen);

/* Create, when missing, the table `table` that ddl (SQLite's CREATE TABLE
 * IF NOT EXISTS) makes: on PostgreSQL its mirror (obs_pg_mirror). 0, or -1
 * with err. */
int otel_source_table(struct otel_source *s, const char *ddl, const char *table,
		      char *err, size_t errlen);

/* err gets the database's name and the reason a statement of
 * otel_source_query failed while stepped; -1. */
int otel_source_error(struct otel_source *s, char *err, size_t errlen);

#endif
