/* store_pg.h - the central store on PostgreSQL, given by a connection URI
 * (postgresql://... or postgres://...): every difference between the two
 * engines lives in store_pg.c.
 *
 * The tables, identities, views and column names are those of the SQLite
 * schema (schema.c): the PostgreSQL DDL is made from an SQLite template
 * database at run time, so the same SQL a user writes runs on both. The
 * differences: integers are bigint, ids come from identity columns,
 * `connection` and `exchange` are partitioned by day (UTC) on t1_ns and
 * t3_ns (a partition made as rows of its day arrive; rows without a start
 * time in the table's DEFAULT partition), so their identities carry the
 * start time too (UNIQUE NULLS NOT DISTINCT); the schema version is kept
 * in the table observe_schema. docs/fleet.md shows it in use.
 *
 * The password comes from PGPASSWORD or ~/.pgpass as libpq finds it: a URI
 * with a password in it is refused (it would show in ps), and no message
 * prints one. Built without libpq, every function fails with a message
 * that says so.
 */
#ifndef OBSERVE_STORE_PG_H
#define OBSERVE_STORE_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

typedef struct obs_pg obs_pg;

/* Whether target names a PostgreSQL database (postgresql:// or
 * postgres://) rather than an SQLite file. */
bool obs_pg_is_uri(const char *target);

/* Whether this build can reach PostgreSQL (it was built with libpq). */
bool obs_pg_available(void);

/* Connect, create the schema or upgrade it. NULL on error, with a message
 * in err naming the database (without any password) and the reason:
 * "cannot connect: ...", "schema version N is newer ...". */
obs_pg *obs_pg_open(const char *uri, char *err, size_t errlen);
void obs_pg_close(obs_pg *pg);

/* The URI as it may be shown: user, host, port, database; no password. */
const char *obs_pg_name(const obs_pg *pg);

/* Merge the client database attached to src as "src" (checked by the
 * caller) into the store: its rows copied into staging tables (COPY),
 * then one INSERT ... ON CONFLICT per table in one transaction. New rows
 * are added, rows still in flight brought up to date, nothing else
 * changes; a pull running at the same time is safe. 0 with
 * *exchanges_new, or -1 with the reason in why ("cannot merge: ..."). */
int obs_pg_merge(obs_pg *pg, sqlite3 *src, int64_t *exchanges_new, char *why,
		 size_t whylen);

/* Copy the whole store into a new SQLite database at path (made by
 * obs_store_open), for the manager's reading commands. 0, or -1 with the
 * reason in err. */
int obs_pg_snapshot(obs_pg *pg, const char *path, char *err, size_t errlen);

/* Drop the days before before_ns (epoch ns, a UTC midnight): the
 * connections that started before it with their exchanges (whole
 * partitions), then the processes left with no connection.
 * *connections and *exchanges: the rows removed. 0, or -1 with err. */
int obs_pg_prune(obs_pg *pg, int64_t before_ns, int64_t *connections,
		 int64_t *exchanges, char *err, size_t errlen);

/* The parameters $1..$n of a statement, as libpq takes them: values[i] as
 * text (NULL: SQL NULL), or, where binary[i] is not 0, lengths[i] bytes
 * (a bytea). */
struct obs_pg_params {
	int n;
	const char *const *values;
	const int *lengths, *binary;
};

/* Run the query sql (parameters p, NULL for none) and put its rows, in
 * their order, into the table `table` of into, made afresh (dropped
 * first): a column c0, c1 ... per column of the result, integers and truth
 * values as integers, floating point as reals, bytea as blobs, the rest as
 * text. What the OTLP push reads of the store comes this way (otel/source.h).
 * 0, or -1 with the store's name and the reason in err. */
int obs_pg_select(obs_pg *pg, const char *sql, const struct obs_pg_params *p,
		  sqlite3 *into, const char *table, char *err, size_t errlen);

/* Run sql, which gives no rows: with p, one statement; without (NULL), any
 * number of them. 0, or -1 with the store's name and the reason in err. */
int obs_pg_command(obs_pg *pg, const char *sql, const struct obs_pg_params *p,
		   char *err, size_t errlen);

/* Create in the store, when missing, the table `table` that ddl (SQLite's
 * CREATE TABLE IF NOT EXISTS of a table outside the versioned schema, such
 * as otlp_mark) makes, mirrored as the schema's tables are: the same
 * columns, integers bigint, blobs bytea, the rest text, the same primary
 * key. 0, or -1 with err. */
int obs_pg_mirror(obs_pg *pg, const char *ddl, const char *table, char *err,
		  size_t errlen);

#endif
