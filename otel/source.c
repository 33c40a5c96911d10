/* source.c - the rows of the OTLP push and the metrics from SQLite or from
 * PostgreSQL (see source.h): on SQLite the queries run on the database
 * itself; on PostgreSQL they run on the store and their rows come through
 * a scratch SQLite database in memory (obs_pg_select). */
#define _GNU_SOURCE
#include "source.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A query, as otel_source_query takes it. */
struct query {
	const char *sql;
	const struct otel_value *params;
	int n_params;
	const int64_t *ids; /* NULL: otel_ids is not read */
	size_t n_ids;
	int flags;
};

/* What differs between the engines. */
struct source_ops {
	int (*query)(struct otel_source *s, const struct query *q,
		     sqlite3_stmt **rows, char *err, size_t errlen);
	int (*exec)(struct otel_source *s, const char *sql,
		    const struct otel_value *params, int n_params, char *err,
		    size_t errlen);
	int (*table)(struct otel_source *s, const char *ddl, const char *table,
		     char *err, size_t errlen);
	const char *ids_ddl; /* the table otel_ids, made when missing */
};

struct otel_source {
	const struct source_ops *ops;
	const char *name; /* the database, as messages name it */
	/* SQLite: the database; PostgreSQL: the scratch database the rows
	 * come through */
	sqlite3 *db;
	obs_pg *pg; /* PostgreSQL: the store */
};

int otel_source_error(struct otel_source *s, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", s->name, sqlite3_errmsg(s->db));
	return -1;
}

/* sql prepared on s->db, with $k bound to params[k - 1]. 0, or -1 with
 * err. */
static int prepare(struct otel_source *s, const char *sql,
		   const struct otel_value *params, int n_params,
		   sqlite3_stmt **st, char *err, size_t errlen)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return otel_source_error(s, err, errlen);
	for (int k = 1; k <= n_params; k++) {
		const struct otel_value *v = &params[k - 1];
		char name[16];
		int i;

		snprintf(name, sizeof(name), "$%d", k);
		if (!(i = sqlite3_bind_parameter_index(*st, name)))
			continue;
		if (v->type == OTEL_INT)
			sqlite3_bind_int64(*st, i, v->i);
		else if (!v->p)
			sqlite3_bind_null(*st, i);
		else if (v->type == OTEL_TEXT)
			sqlite3_bind_text(*st, i, v->p, -1, SQLITE_STATIC);
		else
			sqlite3_bind_blob64(*st, i, v->p, v->n, SQLITE_STATIC);
	}
	return 0;
}

/* ---- SQLite --------------------------------------------------------------
 * One writer at a time, and a reader sees whole transactions: what a query
 * reads is settled. */

/* temp.otel_ids: ids[0..n). */
static int sqlite_ids(struct otel_source *s, const int64_t *ids, size_t n,
		      char *err, size_t errlen)
{
	sqlite3_stmt *ins = NULL;
	int rc = -1;

	if (sqlite3_exec(s->db, "DELETE FROM temp." OTEL_IDS, NULL, NULL,
			 NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
			       "INSERT OR IGNORE INTO temp." OTEL_IDS
			       "(id) VALUES(?1)",
			       -1, &ins, NULL) != SQLITE_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(ins, 1, ids[i]);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
		sqlite3_reset(ins);
	}
	rc = 0;
out:
	if (rc != 0)
		otel_source_error(s, err, errlen);
	sqlite3_finalize(ins);
	return rc;
}

static int sqlite_query(struct otel_source *s, const struct query *q,
			sqlite3_stmt **rows, char *err, size_t errlen)
{
	if (q->ids && sqlite_ids(s, q->ids, q->n_ids, err, errlen) != 0)
		return -1;
	return prepare(s, q->sql, q->params, q->n_params, rows, err, errlen);
}

static int sqlite_exec(struct otel_source *s, const char *sql,
		       const struct otel_value *params, int n_params, char *err,
		       size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int step, rc = 0;

	if (prepare(s, sql, params, n_params, &st, err, errlen) != 0)
		return -1;
	step = sqlite3_step(st);
	if (step != SQLITE_DONE && step != SQLITE_ROW)
		rc = otel_source_error(s, err, errlen);
	sqlite3_finalize(st);
	return rc;
}

static int sqlite_table(struct otel_source *s, const char *ddl,
			const char *table, char *err, size_t errlen)
{
	(void)table;
	if (sqlite3_exec(s->db, ddl, NULL, NULL, NULL) != SQLITE_OK)
		return otel_source_error(s, err, errlen);
	return 0;
}

static const struct source_ops sqlite_ops = {
	sqlite_query, sqlite_exec, sqlite_table,
	"CREATE TEMP TABLE IF NOT EXISTS " OTEL_IDS "(id INTEGER PRIMARY KEY)"
};

/* ---- PostgreSQL ----------------------------------------------------------
 * The rows of a query land in the scratch table otel_rows. A settled query
 * runs after LOCK TABLE ... IN SHARE MODE, which waits for the pulls under
 * way to end and holds new ones back until the query is done: every row
 * numbered so far is then committed (or gone for good). connection before
 * exchange, the order in which a pull writes them. */

#define PG_PARAMS_MAX 8
#define PG_ROWS "otel_rows"

/* Parameters as libpq takes them: integers in decimal text. */
struct pg_params {
	struct obs_pg_params p;
	const char *values[PG_PARAMS_MAX];
	int lengths[PG_PARAMS_MAX], binary[PG_PARAMS_MAX];
	char numbers[PG_PARAMS_MAX][24];
};

static int pg_params(const struct otel_value *v, int n, struct pg_params *out,
		     char *err, size_t errlen)
{
	if (n > PG_PARAMS_MAX) {
		snprintf(err, errlen, "more than %d parameters", PG_PARAMS_MAX);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->p = (struct obs_pg_params){ n, out->values, out->lengths,
					 out->binary };
	for (int i = 0; i < n; i++) {
		if (v[i].type == OTEL_INT) {
			snprintf(out->numbers[i], sizeof(out->numbers[i]),
				 "%" PRId64, v[i].i);
			out->values[i] = out->numbers[i];
			continue;
		}
		out->values[i] = v[i].p;
		out->binary[i] = v[i].type == OTEL_BLOB;
		out->lengths[i] = v[i].type == OTEL_BLOB ? (int)v[i].n : 0;
	}
	return 0;
}

/* otel_ids on the store: ids[0..n) (integers written into the SQL: one
 * round trip), analysed so that the planner joins them by index. */
static int pg_ids(struct otel_source *s, const int64_t *ids, size_t n,
		  char *err, size_t errlen)
{
	char *sql = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&sql, &len);
	int rc = -1;

	if (!out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fputs("TRUNCATE " OTEL_IDS "; INSERT INTO " OTEL_IDS
	      " SELECT DISTINCT unnest('{",
	      out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%" PRId64, i ? "," : "", ids[i]);
	fputs("}'::bigint[]); ANALYZE " OTEL_IDS, out);
	if (fclose(out) != 0)
		snprintf(err, errlen, "out of memory");
	else
		rc = obs_pg_command(s->pg, sql, NULL, err, errlen);
	free(sql);
	return rc;
}

static int pg_query(struct otel_source *s, const struct query *q,
		    sqlite3_stmt **rows, char *err, size_t errlen)
{
	bool settled = q->flags & OTEL_SETTLED;
	struct pg_params p;
	char ignore[64];

	if (settled && obs_pg_command(s->pg,
				      "BEGIN; LOCK TABLE connection, exchange "
				      "IN SHARE MODE",
				      NULL, err, errlen) != 0)
		goto fail;
	if ((q->ids && pg_ids(s, q->ids, q->n_ids, err, errlen) != 0) ||
	    pg_params(q->params, q->n_params, &p, err, errlen) != 0 ||
	    obs_pg_select(s->pg, q->sql, &p.p, s->db, PG_ROWS, err, errlen) !=
		    0)
		goto fail;
	if (settled && obs_pg_command(s->pg, "COMMIT", NULL, err, errlen) != 0)
		goto fail;
	return prepare(s, "SELECT * FROM " PG_ROWS " ORDER BY rowid", NULL, 0,
		       rows, err, errlen);
fail:
	if (settled)
		obs_pg_command(s->pg, "ROLLBACK", NULL, ignore, sizeof(ignore));
	return -1;
}

static int pg_exec(struct otel_source *s, const char *sql,
		   const struct otel_value *params, int n_params, char *err,
		   size_t errlen)
{
	struct pg_params p;

	if (pg_params(params, n_params, &p, err, errlen) != 0)
		return -1;
	return obs_pg_command(s->pg, sql, &p.p, err, errlen);
}

static int pg_table(struct otel_source *s, const char *ddl, const char *table,
		    char *err, size_t errlen)
{
	return obs_pg_mirror(s->pg, ddl, table, err, errlen);
}

static const struct source_ops pg_ops = {
	pg_query, pg_exec, pg_table,
	"CREATE TEMP TABLE IF NOT EXISTS " OTEL_IDS "(id bigint PRIMARY KEY)"
};

/* ---- the interface ------------------------------------------------------- */

/* A source of ops reading db (NULL: a scratch one of its own) or pg. NULL
 * with err. */
static struct otel_source *source_new(const struct source_ops *ops, sqlite3 *db,
				      obs_pg *pg, const char *name, char *err,
				      size_t errlen)
{
	struct otel_source *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*s = (struct otel_source){ ops, name, db, pg };
	if (!db && sqlite3_open(":memory:", &s->db) != SQLITE_OK) {
		snprintf(err, errlen, "%s: a scratch database: %s", name,
			 sqlite3_errmsg(s->db));
		goto fail;
	}
	if (ops->exec(s, ops->ids_ddl, NULL, 0, err, errlen) != 0)
		goto fail;
	return s;
fail:
	if (!db)
		sqlite3_close(s->db);
	free(s);
	return NULL;
}

struct otel_source *otel_source_sqlite(sqlite3 *db, char *err, size_t errlen)
{
	return source_new(&sqlite_ops, db, NULL,
			  sqlite3_db_filename(db, "main"), err, errlen);
}

struct otel_source *otel_source_pg(obs_pg *pg, char *err, size_t errlen)
{
	return source_new(&pg_ops, NULL, pg, obs_pg_name(pg), err, errlen);
}

void otel_source_close(struct otel_source *s)
{
	if (s && s->pg) /* its scratch database */
		sqlite3_close(s->db);
	free(s);
}

int otel_source_query(struct otel_source *s, const char *sql,
		      const struct otel_value *params, int n_params,
		      const int64_t *ids, size_t n_ids, int flags,
		      sqlite3_stmt **rows, char *err, size_t errlen)
{
	struct query q = { sql, params, n_params, ids, n_ids, flags };

	*rows = NULL;
	return s->ops->query(s, &q, rows, err, errlen);
}

int otel_source_each(struct otel_source *s, const char *sql,
		     const struct otel_value *params, int n_params,
		     const int64_t *ids, size_t n_ids, int flags,
		     int (*row)(void *ctx, sqlite3_stmt *st), void *ctx,
		     char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int step, rc = -1;

	if (otel_source_query(s, sql, params, n_params, ids, n_ids, flags, &st,
			      err, errlen) != 0)
		return -1;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		if (row(ctx, st) != 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	if (step != SQLITE_DONE) {
		otel_source_error(s, err, errlen);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

int otel_source_exec(struct otel_source *s, const char *sql,
		     const struct otel_value *params, int n_params, char *err,
		     size_t errlen)
{
	return s->ops->exec(s, sql, params, n_params, err, errlen);
}

int otel_source_table(struct otel_source *s, const char *ddl, const char *table,
		      char *err, size_t errlen)
{
	return s->ops->table(s, ddl, table, err, errlen);
}
