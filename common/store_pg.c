/* store_pg.c - the central store on PostgreSQL: every difference between
 * the engines, in one place (see store_pg.h): the DDL made from the SQLite
 * template, partitions by day, the merge by COPY and INSERT ... ON
 * CONFLICT, the snapshot the reading commands use, pruning, and the
 * queries and mirrored tables of other modules (the OTLP push). */
#define _GNU_SOURCE
#include "store_pg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool obs_pg_is_uri(const char *target)
{
	return target && (strncmp(target, "postgresql://", 13) == 0 ||
			  strncmp(target, "postgres://", 11) == 0);
}

#ifndef OBSERVE_HAVE_LIBPQ

bool obs_pg_available(void)
{
	return false;
}

obs_pg *obs_pg_open(const char *uri, char *err, size_t errlen)
{
	(void)uri;
	snprintf(err, errlen,
		 "PostgreSQL: this observe was built without libpq (Debian "
		 "package libpq-dev)");
	return NULL;
}

void obs_pg_close(obs_pg *pg)
{
	(void)pg;
}

const char *obs_pg_name(const obs_pg *pg)
{
	(void)pg;
	return "";
}

int obs_pg_merge(obs_pg *pg, sqlite3 *src, int64_t *exchanges_new, char *why,
		 size_t whylen)
{
	(void)pg, (void)src, (void)exchanges_new;
	snprintf(why, whylen, "built without libpq");
	return -1;
}

int obs_pg_snapshot(obs_pg *pg, const char *path, char *err, size_t errlen)
{
	(void)pg, (void)path;
	snprintf(err, errlen, "built without libpq");
	return -1;
}

int obs_pg_prune(obs_pg *pg, int64_t before_ns, int64_t *connections,
		 int64_t *exchanges, char *err, size_t errlen)
{
	(void)pg, (void)before_ns, (void)connections, (void)exchanges;
	snprintf(err, errlen, "built without libpq");
	return -1;
}

int obs_pg_select(obs_pg *pg, const char *sql, const struct obs_pg_params *p,
		  sqlite3 *into, const char *table, char *err, size_t errlen)
{
	(void)pg, (void)sql, (void)p, (void)into, (void)table;
	snprintf(err, errlen, "built without libpq");
	return -1;
}

int obs_pg_command(obs_pg *pg, const char *sql, const struct obs_pg_params *p,
		   char *err, size_t errlen)
{
	(void)pg, (void)sql, (void)p;
	snprintf(err, errlen, "built without libpq");
	return -1;
}

int obs_pg_mirror(obs_pg *pg, const char *ddl, const char *table, char *err,
		  size_t errlen)
{
	(void)pg, (void)ddl, (void)table;
	snprintf(err, errlen, "built without libpq");
	return -1;
}

#else

#include <libpq-fe.h>

#include "schema.h"
#include "store.h"
#include "text.h"

#define DAY_NS 86400000000000LL
/* pg_advisory_xact_lock key of schema and partition changes ("obsv") */
#define DDL_LOCK "1868723062"

static const char *const tables[] = { "client", "process", "connection",
				      "exchange" };
#define N_TABLES (sizeof(tables) / sizeof(*tables))

/* The partitioned tables and their key: the start time. */
static const char *partition_key(const char *table)
{
	if (strcmp(table, "connection") == 0)
		return "t1_ns";
	if (strcmp(table, "exchange") == 0)
		return "t3_ns";
	return NULL;
}

/* ---- text --------------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_grow(struct sbuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 1024;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return;
	}
	b->s = s;
	b->cap = cap;
}

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

__attribute__((format(printf, 2, 3))) static void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_grow(b, (size_t)n);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static const char *sb_str(const struct sbuf *b)
{
	return b->s ? b->s : "";
}

/* libpq's message on one line: newlines and tabs as "; " and " ". */
static void one_line(const char *msg, char *out, size_t size)
{
	size_t o = 0;

	if (!out || size == 0)
		return;

	for (const char *p = msg; *p && o + 3 < size; p++) {
		if (*p == '\n') {
			if (p[1] && p[1] != '\n')
				o += (size_t)snprintf(out + o, size - o, "; ");
		} else {
			out[o++] = *p == '\t' ? ' ' : *p;
		}
	}
	while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == ';'))
		o--;
	out[o < size ? o : size - 1] = '\0';
}

/* ---- connection --------------------------------------------------------- */

struct obs_pg {
	PGconn *conn;
	char name[512];
	sqlite3 *tpl; /* the SQLite template: the central schema */
	/* the days whose partitions exist, by table (a cache) */
	int64_t *days[N_TABLES];
	size_t n_days[N_TABLES], cap_days[N_TABLES];
};

bool obs_pg_available(void)
{
	return true;
}

const char *obs_pg_name(const obs_pg *pg)
{
	return pg->name;
}

/* The URI as it may be shown, from what it names; -1 when it has a
 * password or does not parse (err says which). */
static int show_name(const char *uri, char *name, size_t size, char *err,
		     size_t errlen)
{
	char *msg = NULL;
	PQconninfoOption *opts = PQconninfoParse(uri, &msg);
	const char *user = "", *host = "", *port = "", *db = "";
	int rc = 0;

	if (!opts) {
		snprintf(err, errlen, "not a PostgreSQL URI: %s",
			 msg ? msg : "out of memory");
		one_line(err, err, errlen);
		PQfreemem(msg);
		return -1;
	}
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		if (!o->val)
			continue;
		if (strcmp(o->keyword, "password") == 0)
			rc = -1;
		else if (strcmp(o->keyword, "user") == 0)
			user = o->val;
		else if (strcmp(o->keyword, "host") == 0)
			host = o->val;
		else if (strcmp(o->keyword, "port") == 0)
			port = o->val;
		else if (strcmp(o->keyword, "dbname") == 0)
			db = o->val;
	}
	if (host[0] == '/')
		snprintf(name, size, "postgresql://%s%s/%s?host=%s", user,
			 *user ? "@" : "", db, host);
	else
		snprintf(name, size, "postgresql://%s%s%s%s%s/%s", user,
			 *user ? "@" : "", host, *port ? ":" : "", port, db);
	if (rc)
		snprintf(err, errlen,
			 "%s: a password in the URI would show in the process "
			 "list: give it in PGPASSWORD or ~/.pgpass",
			 name);
	PQconninfoFree(opts);
	return rc;
}

static void ignore_notice(void *arg, const char *message)
{
	(void)arg, (void)message;
}

/* sql run with the parameters p: one statement; without (NULL), any
 * number of them. */
static PGresult *exec_params(obs_pg *pg, const char *sql,
			     const struct obs_pg_params *p)
{
	if (!p)
		return PQexec(pg->conn, sql);
	return PQexecParams(pg->conn, sql, p->n, NULL, p->values, p->lengths,
			    p->binary, 0);
}

/* Run sql with the parameters p (NULL: none), no rows wanted. 0, or -1
 * with the server's message. */
static int run_params(obs_pg *pg, const char *sql,
		      const struct obs_pg_params *p, char *err, size_t errlen)
{
	PGresult *r = exec_params(pg, sql, p);
	ExecStatusType st = PQresultStatus(r);
	int rc = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		one_line(PQerrorMessage(pg->conn), err, errlen);
		rc = -1;
	}
	PQclear(r);
	return rc;
}

/* Run sql (no rows wanted). 0, or -1 with the server's message. */
static int run(obs_pg *pg, const char *sql, char *err, size_t errlen)
{
	return run_params(pg, sql, NULL, err, errlen);
}

/* The first column of the first row of sql as an integer; -1 with err on
 * error, def when there is no row or it is NULL. */
static int64_t query_int(obs_pg *pg, const char *sql, int64_t def, char *err,
			 size_t errlen)
{
	PGresult *r = PQexec(pg->conn, sql);
	int64_t v = def;

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		one_line(PQerrorMessage(pg->conn), err, errlen);
		v = -1;
	} else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0)) {
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	}
	PQclear(r);
	return v;
}

/* ---- schema ------------------------------------------------------------- */

/* SQLite's column type as PostgreSQL's. */
static const char *pg_type(const char *type)
{
	if (strcasestr(type, "INT"))
		return "bigint";
	if (strcasestr(type, "BLOB"))
		return "bytea";
	if (strcasestr(type, "REAL") || strcasestr(type, "DOUB"))
		return "float8";
	return "text";
}

/* The columns of an index of the template, comma-separated. */
static void index_columns(sqlite3 *tpl, const char *index, struct sbuf *b)
{
	sqlite3_stmt *st = NULL;
	bool first = true;

	sqlite3_prepare_v2(tpl,
			   "SELECT name FROM pragma_index_info(?1) ORDER BY "
			   "seqno",
			   -1, &st, NULL);
	sqlite3_bind_text(st, 1, index, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		sb_printf(b, "%s%s", first ? "" : ", ",
			  (const char *)sqlite3_column_text(st, 0));
		first = false;
	}
	sqlite3_finalize(st);
}

/* One column's definition (without its identity) from the template's
 * table_info row. */
static void column_def(sqlite3_stmt *st, struct sbuf *b)
{
	const char *dflt = (const char *)sqlite3_column_text(st, 3);

	sb_printf(b, "%s %s", (const char *)sqlite3_column_text(st, 0),
		  pg_type((const char *)sqlite3_column_text(st, 1)));
	if (sqlite3_column_int(st, 2))
		sb_printf(b, " NOT NULL");
	if (dflt)
		sb_printf(b, " DEFAULT %s", dflt);
}

#define TABLE_INFO                                                             \
	"SELECT name, type, \"notnull\", dflt_value, pk FROM "                 \
	"pragma_table_info(?1) ORDER BY cid"

/* CREATE TABLE (and its indexes, its DEFAULT partition), then every
 * column added with IF NOT EXISTS: an older store gets the new ones. */
static void table_ddl(sqlite3 *tpl, const char *table, struct sbuf *b)
{
	const char *key = partition_key(table);
	sqlite3_stmt *st = NULL;
	struct sbuf alter = { 0 };
	bool first = true;

	sb_printf(b, "CREATE TABLE IF NOT EXISTS %s(", table);
	sqlite3_prepare_v2(tpl, TABLE_INFO, -1, &st, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		sb_printf(b, "%s", first ? "\n  " : ",\n  ");
		first = false;
		if (sqlite3_column_int(st, 4) &&
		    strcmp(pg_type((const char *)sqlite3_column_text(st, 1)),
			   "bigint") != 0) {
			/* a key of another type (otlp_mark's endpoint) */
			column_def(st, b);
			sb_printf(b, " PRIMARY KEY");
			continue;
		}
		if (sqlite3_column_int(st, 4)) {
			/* a partitioned table has no primary key on id alone:
			 * the identity column still numbers its rows */
			sb_printf(
				b,
				"%s bigint GENERATED BY DEFAULT AS IDENTITY%s",
				(const char *)sqlite3_column_text(st, 0),
				key ? "" : " PRIMARY KEY");
			continue;
		}
		column_def(st, b);
		sb_printf(&alter, "ALTER TABLE %s ADD COLUMN IF NOT EXISTS ",
			  table);
		column_def(st, &alter);
		sb_printf(&alter, ";\n");
	}
	sqlite3_finalize(st);
	/* a reference to a partitioned table would need its key in it */
	sqlite3_prepare_v2(tpl,
			   "SELECT \"from\", \"table\", \"to\" FROM "
			   "pragma_foreign_key_list(?1)",
			   -1, &st, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *to = (const char *)sqlite3_column_text(st, 1);
		if (!partition_key(to))
			sb_printf(b, ",\n  FOREIGN KEY(%s) REFERENCES %s(%s)",
				  (const char *)sqlite3_column_text(st, 0), to,
				  (const char *)sqlite3_column_text(st, 2));
	}
	sqlite3_finalize(st);
	/* the identities; on a partitioned table with its key, which may be
	 * NULL (a row without a start time) and still identifies */
	sqlite3_prepare_v2(tpl,
			   "SELECT name, origin FROM pragma_index_list(?1) "
			   "WHERE origin IN ('u', 'c') ORDER BY name",
			   -1, &st, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	struct sbuf indexes = { 0 };
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *index = (const char *)sqlite3_column_text(st, 0);
		if (strcmp((const char *)sqlite3_column_text(st, 1), "u") ==
		    0) {
			sb_printf(b, ",\n  UNIQUE%s (",
				  key ? " NULLS NOT DISTINCT" : "");
			index_columns(tpl, index, b);
			if (key)
				sb_printf(b, ", %s", key);
			sb_printf(b, ")");
		} else {
			sb_printf(&indexes,
				  "CREATE INDEX IF NOT EXISTS %s ON %s(", index,
				  table);
			index_columns(tpl, index, &indexes);
			sb_printf(&indexes, ");\n");
		}
	}
	sqlite3_finalize(st);
	sb_printf(b, ")");
	if (key)
		sb_printf(b,
			  " PARTITION BY RANGE (%s);\n"
			  "CREATE TABLE IF NOT EXISTS %s_undated PARTITION OF "
			  "%s DEFAULT;\n"
			  "CREATE INDEX IF NOT EXISTS %s_id ON %s(id)",
			  key, table, table, table, table);
	sb_printf(b, ";\n%s%s", sb_str(&alter), sb_str(&indexes));
	b->oom |= alter.oom || indexes.oom;
	free(alter.s);
	free(indexes.s);
}

/* A view of the template for PostgreSQL: its float literals (1e6, 1e9)
 * made float8, so the durations and rates are the same doubles as
 * SQLite's rather than numeric. total() is an aggregate of ours there. */
static void view_ddl(const char *sql, struct sbuf *b)
{
	const char *p = sql;

	while (*p) {
		if (*p == '\'') {
			const char *q = strchr(p + 1, '\'');
			q = q ? q + 1 : p + strlen(p);
			sb_put(b, p, (size_t)(q - p));
			p = q;
			continue;
		}
		bool word_start =
			p == sql || !(p[-1] == '_' || p[-1] == '.' ||
				      (p[-1] >= '0' && p[-1] <= '9') ||
				      (p[-1] | 0x20) >= 'a');
		if (word_start && *p >= '0' && *p <= '9') {
			size_t n = strspn(p, "0123456789.eE");
			sb_put(b, p, n);
			if (memchr(p, 'e', n) || memchr(p, 'E', n))
				sb_printf(b, "::float8");
			p += n;
			continue;
		}
		sb_put(b, p++, 1);
	}
	sb_printf(b, ";\n");
}

static const char functions_sql[] =
	"CREATE OR REPLACE AGGREGATE total(float8) (SFUNC = float8pl, "
	"STYPE = float8, INITCOND = '0');\n"
	/* the partition of a table's day (days since the epoch, UTC) */
	"CREATE OR REPLACE FUNCTION observe_day_partition(tab text, day "
	"bigint) RETURNS void LANGUAGE plpgsql AS $$\n"
	"DECLARE part text := tab || '_' || to_char(to_timestamp(day * 86400) "
	"AT TIME ZONE 'UTC', 'YYYYMMDD');\n"
	"BEGIN\n"
	"  IF to_regclass(part) IS NULL THEN\n"
	"    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM "
	"(%s) TO (%s)', part, tab, day * 86400000000000, (day + 1) * "
	"86400000000000);\n"
	"  END IF;\n"
	"END $$;\n";

/* The whole DDL of this schema version, from the template. */
static void schema_ddl(sqlite3 *tpl, struct sbuf *b)
{
	sqlite3_stmt *st = NULL;

	sb_printf(b, "%s", functions_sql);
	sb_printf(b, "DROP VIEW IF EXISTS connection_metrics, "
		     "exchange_metrics;\n");
	for (size_t i = 0; i < N_TABLES; i++)
		table_ddl(tpl, tables[i], b);
	sqlite3_prepare_v2(tpl,
			   "SELECT sql FROM sqlite_master WHERE type = 'view' "
			   "ORDER BY name",
			   -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW)
		view_ddl((const char *)sqlite3_column_text(st, 0), b);
	sqlite3_finalize(st);
	sb_printf(b,
		  "CREATE TABLE IF NOT EXISTS observe_schema(version integer "
		  "NOT NULL);\n"
		  "DELETE FROM observe_schema;\n"
		  "INSERT INTO observe_schema VALUES(%d);\n",
		  OBS_SCHEMA_VERSION);
}

/* The schema version of the store: 0 when it has none, -1 on error. */
static int64_t store_version(obs_pg *pg, char *err, size_t errlen)
{
	int64_t has = query_int(
		pg, "SELECT (to_regclass('observe_schema') IS NOT NULL)::int",
		0, err, errlen);
	if (has <= 0)
		return has;
	return query_int(pg, "SELECT max(version) FROM observe_schema", 0, err,
			 errlen);
}

static int ensure_schema(obs_pg *pg, char *err, size_t errlen)
{
	char msg[400];
	int64_t version;
	struct sbuf ddl = { 0 };
	int rc = -1;

	if (run(pg, "BEGIN; SELECT pg_advisory_xact_lock(" DDL_LOCK ")", msg,
		sizeof(msg)) != 0)
		goto out;
	version = store_version(pg, msg, sizeof(msg));
	if (version < 0)
		goto out;
	if (version > OBS_SCHEMA_VERSION) {
		snprintf(msg, sizeof(msg),
			 "schema version %lld is newer than this program's "
			 "(%d)",
			 (long long)version, OBS_SCHEMA_VERSION);
		goto out;
	}
	if (version == OBS_SCHEMA_VERSION) {
		rc = run(pg, "COMMIT", msg, sizeof(msg));
		goto out;
	}
	if (version == 0 &&
	    query_int(pg,
		      "SELECT count(*) FROM unnest(ARRAY['client', 'process', "
		      "'connection', 'exchange']) t WHERE to_regclass(t) IS "
		      "NOT NULL",
		      0, msg, sizeof(msg)) != 0) {
		snprintf(msg, sizeof(msg),
			 "not an observe database (it has tables named like "
			 "ours and no observe_schema)");
		goto out;
	}
	schema_ddl(pg->tpl, &ddl);
	if (ddl.oom) {
		snprintf(msg, sizeof(msg), "out of memory");
		goto out;
	}
	if (run(pg, sb_str(&ddl), msg, sizeof(msg)) == 0)
		rc = run(pg, "COMMIT", msg, sizeof(msg));
out:
	if (rc != 0) {
		run(pg, "ROLLBACK", err, errlen);
		snprintf(err, errlen, "%s: cannot create the schema: %s",
			 pg->name, msg);
	}
	free(ddl.s);
	return rc;
}

obs_pg *obs_pg_open(const char *uri, char *err, size_t errlen)
{
	obs_pg *pg = calloc(1, sizeof(*pg));
	char msg[600];

	if (!pg) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (show_name(uri, pg->name, sizeof(pg->name), err, errlen) != 0) {
		free(pg);
		return NULL;
	}
	pg->conn = PQconnectdb(uri);
	if (!pg->conn || PQstatus(pg->conn) != CONNECTION_OK) {
		one_line(pg->conn ? PQerrorMessage(pg->conn) : "out of memory",
			 msg, sizeof(msg));
		snprintf(err, errlen, "%s: cannot connect: %s", pg->name, msg);
		obs_pg_close(pg);
		return NULL;
	}
	PQsetNoticeProcessor(pg->conn, ignore_notice, NULL);
	/* the template: an SQLite central database's schema */
	if (sqlite3_open(":memory:", &pg->tpl) != SQLITE_OK ||
	    obs_schema_ensure(pg->tpl, ":memory:", msg, sizeof(msg)) != 0 ||
	    sqlite3_exec(pg->tpl, obs_schema_central_sql, NULL, NULL, NULL) !=
		    SQLITE_OK) {
		snprintf(err, errlen, "%s: the schema template: %s", pg->name,
			 sqlite3_errmsg(pg->tpl));
		obs_pg_close(pg);
		return NULL;
	}
	if (run(pg, "SET client_min_messages = warning; SET TIME ZONE 'UTC'",
		msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "%s: %s", pg->name, msg);
		obs_pg_close(pg);
		return NULL;
	}
	if (ensure_schema(pg, err, errlen) != 0) {
		obs_pg_close(pg);
		return NULL;
	}
	return pg;
}

void obs_pg_close(obs_pg *pg)
{
	if (!pg)
		return;
	PQfinish(pg->conn);
	sqlite3_close(pg->tpl);
	for (size_t i = 0; i < N_TABLES; i++)
		free(pg->days[i]);
	free(pg);
}

/* ---- merge -------------------------------------------------------------- */

/* The template's columns of table, comma-separated, each prefixed with
 * prefix (typed: followed by its PostgreSQL type); skip_id: leave the id
 * out. */
static void columns_of(sqlite3 *tpl, const char *table, const char *prefix,
		       bool skip_id, bool typed, struct sbuf *b)
{
	sqlite3_stmt *st = NULL;
	bool first = true;

	sqlite3_prepare_v2(tpl, TABLE_INFO, -1, &st, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (skip_id && sqlite3_column_int(st, 4))
			continue;
		sb_printf(b, "%s%s%s", first ? "" : ", ", prefix,
			  (const char *)sqlite3_column_text(st, 0));
		if (typed)
			sb_printf(b, " %s",
				  pg_type((const char *)sqlite3_column_text(
					  st, 1)));
		first = false;
	}
	sqlite3_finalize(st);
}

static void columns(sqlite3 *tpl, const char *table, const char *prefix,
		    bool skip_id, struct sbuf *b)
{
	columns_of(tpl, table, prefix, skip_id, false, b);
}

/* Text for COPY's text format: backslash, tab, newline and CR escaped,
 * bytes that are not UTF-8 (PostgreSQL refuses them) as U+FFFD. */
static void copy_text(struct sbuf *b, const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		bool valid;
		size_t len = text_utf8_len(s + i, n - i, &valid);
		if (!valid)
			sb_put(b, "\xef\xbf\xbd", 3);
		else if (s[i] == '\\')
			sb_put(b, "\\\\", 2);
		else if (s[i] == '\t')
			sb_put(b, "\\t", 2);
		else if (s[i] == '\n')
			sb_put(b, "\\n", 2);
		else if (s[i] == '\r')
			sb_put(b, "\\r", 2);
		else
			sb_put(b, (const char *)s + i, len);
		i += len;
	}
}

/* COPY the rows of query (on the source) into the staging table
 * s_table(cols). */
static int copy_rows(obs_pg *pg, sqlite3 *src, const char *query,
		     const char *table, const char *cols, char *err,
		     size_t errlen)
{
	struct sbuf sql = { 0 }, row = { 0 };
	sqlite3_stmt *st = NULL;
	PGresult *r;
	int rc = -1, n;

	if (sqlite3_prepare_v2(src, query, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(src));
		goto out;
	}
	sb_printf(&sql, "COPY s_%s(%s) FROM STDIN", table, cols);
	r = PQexec(pg->conn, sb_str(&sql));
	if (PQresultStatus(r) != PGRES_COPY_IN) {
		one_line(PQerrorMessage(pg->conn), err, errlen);
		PQclear(r);
		goto out;
	}
	PQclear(r);
	n = sqlite3_column_count(st);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++) {
			if (i)
				sb_put(&row, "\t", 1);
			switch (sqlite3_column_type(st, i)) {
			case SQLITE_NULL:
				sb_put(&row, "\\N", 2);
				break;
			case SQLITE_INTEGER:
				sb_printf(&row, "%lld",
					  sqlite3_column_int64(st, i));
				break;
			case SQLITE_FLOAT:
				sb_printf(&row, "%.17g",
					  sqlite3_column_double(st, i));
				break;
			default:
				copy_text(&row, sqlite3_column_text(st, i),
					  (size_t)sqlite3_column_bytes(st, i));
			}
		}
		sb_put(&row, "\n", 1);
		if (row.len >= 1 << 18) {
			if (row.oom ||
			    PQputCopyData(pg->conn, row.s, (int)row.len) != 1)
				break;
			row.len = 0;
		}
	}
	if (step != SQLITE_DONE) {
		PQputCopyEnd(pg->conn, "the source could not be read");
		snprintf(err, errlen, "%s",
			 row.oom ? "out of memory" : sqlite3_errmsg(src));
	} else if ((row.len &&
		    PQputCopyData(pg->conn, row.s, (int)row.len) != 1) ||
		   PQputCopyEnd(pg->conn, NULL) != 1) {
		one_line(PQerrorMessage(pg->conn), err, errlen);
		step = SQLITE_ERROR;
	}
	while ((r = PQgetResult(pg->conn))) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK &&
		    step == SQLITE_DONE) {
			one_line(PQerrorMessage(pg->conn), err, errlen);
			step = SQLITE_ERROR;
		}
		PQclear(r);
	}
	rc = step == SQLITE_DONE ? 0 : -1;
out:
	sqlite3_finalize(st);
	free(sql.s);
	free(row.s);
	return rc;
}

/* COPY the rows of src.table (those of where, if not NULL) into the
 * staging table s_table. */
static int copy_table(obs_pg *pg, sqlite3 *src, const char *table,
		      const char *where, char *err, size_t errlen)
{
	struct sbuf cols = { 0 }, sql = { 0 };
	int rc;

	columns(pg->tpl, table, "", false, &cols);
	sb_printf(&sql, "SELECT %s FROM src.%s%s%s", sb_str(&cols), table,
		  where ? " WHERE " : "", where ? where : "");
	rc = copy_rows(pg, src, sb_str(&sql), table, sb_str(&cols), err,
		       errlen);
	free(cols.s);
	free(sql.s);
	return rc;
}

static bool day_known(obs_pg *pg, size_t t, int64_t day)
{
	for (size_t i = 0; i < pg->n_days[t]; i++)
		if (pg->days[t][i] == day)
			return true;
	return false;
}

/* Make the partitions of the days the source's rows of table fall on
 * (one short transaction, serialised with other pulls). */
static int ensure_partitions(obs_pg *pg, sqlite3 *src, size_t t, char *err,
			     size_t errlen)
{
	const char *key = partition_key(tables[t]);
	struct sbuf sql = { 0 };
	sqlite3_stmt *st = NULL;
	int rc = 0;

	/* days since the epoch (UTC): floor, also before 1970 */
	sb_printf(&sql,
		  "SELECT DISTINCT (%s - ((%s %% %lld) + %lld) %% %lld) / %lld "
		  "FROM src.%s WHERE %s IS NOT NULL",
		  key, key, DAY_NS, DAY_NS, DAY_NS, DAY_NS, tables[t], key);
	if (sqlite3_prepare_v2(src, sb_str(&sql), -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(src));
		free(sql.s);
		return -1;
	}
	sql.len = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t day = sqlite3_column_int64(st, 0);
		if (day_known(pg, t, day))
			continue;
		if (pg->n_days[t] == pg->cap_days[t]) {
			size_t cap = pg->cap_days[t] ? 2 * pg->cap_days[t] : 16;
			int64_t *d = realloc(pg->days[t], cap * sizeof(*d));
			if (!d)
				break;
			pg->days[t] = d;
			pg->cap_days[t] = cap;
		}
		pg->days[t][pg->n_days[t]++] = day;
		sb_printf(&sql, "SELECT observe_day_partition('%s', %lld);\n",
			  tables[t], (long long)day);
	}
	sqlite3_finalize(st);
	if (sql.len) {
		struct sbuf tx = { 0 };
		sb_printf(&tx,
			  "BEGIN; SELECT pg_advisory_xact_lock(" DDL_LOCK
			  ");\n%sCOMMIT",
			  sb_str(&sql));
		rc = run(pg, sb_str(&tx), err, errlen);
		if (rc)
			run(pg, "ROLLBACK", NULL, 0);
		free(tx.s);
	}
	free(sql.s);
	return rc;
}

/* Whether col is one of the comma-separated list. */
static bool in_list(const char *list, const char *col)
{
	size_t n = strlen(col);

	for (const char *p = list; (p = strstr(p, col)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == ',') &&
		    (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* col = excluded.col for every column but the id and the identity's,
 * comma-separated. */
static void updates(obs_pg *pg, const char *table, const char *identity,
		    struct sbuf *b)
{
	sqlite3_stmt *st = NULL;
	bool first = true;

	sqlite3_prepare_v2(pg->tpl, TABLE_INFO, -1, &st, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);
		if (sqlite3_column_int(st, 4) || in_list(identity, c))
			continue;
		sb_printf(b, "%s%s = excluded.%s", first ? "" : ", ", c, c);
		first = false;
	}
	sqlite3_finalize(st);
}

/* The INSERT ... SELECT ... ON CONFLICT of a staging table whose first
 * column after the id, the parent's id, is mapped by map (src_id ->
 * dst_id); identity: its columns ("process_id, seq"), the first the
 * parent's, the second the order within it. Rows in flight (in_flight 0)
 * are brought up to date. */
static void upsert(obs_pg *pg, const char *table, const char *map,
		   const char *identity, const char *in_flight, struct sbuf *b)
{
	struct sbuf cols = { 0 }, rest = { 0 };
	const char *key = partition_key(table), *parent_end;
	const char *second = strchr(identity, ',') + 2;
	size_t second_len = strcspn(second, ",");

	columns(pg->tpl, table, "", true, &cols);
	columns(pg->tpl, table, "k.", true, &rest);
	parent_end = strchr(sb_str(&rest), ',');
	sb_printf(
		b,
		"INSERT INTO %s(%s) SELECT m.dst_id%s FROM s_%s k JOIN %s m "
		"ON m.src_id = k.%.*s ORDER BY 1, k.%.*s ON CONFLICT (%s%s%s) "
		"DO UPDATE SET ",
		table, sb_str(&cols), parent_end ? parent_end : "", table, map,
		(int)(strchr(identity, ',') - identity), identity,
		(int)second_len, second, identity, key ? ", " : "",
		key ? key : "");
	updates(pg, table, identity, b);
	sb_printf(b, " WHERE %s.%s = 0", table, in_flight);
	b->oom |= cols.oom || rest.oom;
	free(cols.s);
	free(rest.s);
}

/* The source's time span: t1_ns of its connections, t3_ns of its
 * exchanges (the partitions its rows may be in). */
struct span {
	int64_t lo, hi, elo, ehi;
};

/* A checksum of a connection's exchanges, the same on both engines: their
 * count, how many are in flight, and the sum of t3_ns modulo a prime. */
#define EXCH_SUM                                                               \
	"count(*), sum(CASE WHEN complete = 0 THEN 1 ELSE 0 END), "            \
	"sum(coalesce(t3_ns, 0) %% 1000000007)"

/* The source's connections whose exchanges the store has already, all
 * complete: their exchanges need not travel again (a pull of an unchanged
 * source sends connections, not exchanges). Their source ids into the
 * source connection's temp.skip. */
static int skip_known(obs_pg *pg, sqlite3 *src, const struct span *sp,
		      char *err, size_t errlen)
{
	struct sbuf sql = { 0 };
	sqlite3_stmt *ins = NULL;
	PGresult *r = NULL;
	int rc = -1;

	if (sqlite3_exec(src,
			 "CREATE TEMP TABLE IF NOT EXISTS skip(id INTEGER "
			 "PRIMARY KEY); DELETE FROM temp.skip",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(src, "INSERT INTO temp.skip VALUES(?1)", -1,
			       &ins, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(src));
		goto out;
	}
	sb_printf(&sql, "SELECT connection_id, " EXCH_SUM " FROM src.exchange "
			"GROUP BY connection_id");
	if (copy_rows(pg, src, sb_str(&sql), "csum", "src_id, n, open, ck", err,
		      errlen) != 0)
		goto out;
	sql.len = 0;
	sb_printf(&sql,
		  "SELECT m.src_id FROM connection_map m JOIN s_connection k "
		  "ON k.id = m.src_id JOIN s_csum s ON s.src_id = m.src_id "
		  /* per connection: an index range scan of the partitions of
		   * the source's span */
		  "CROSS JOIN LATERAL (SELECT " EXCH_SUM " FROM exchange e "
		  "WHERE e.connection_id = m.dst_id AND (e.t3_ns BETWEEN %lld "
		  "AND %lld OR e.t3_ns IS NULL)) g(n, open, ck) WHERE "
		  "k.complete = 1 AND s.open = 0 AND g.open = 0 AND g.n = s.n "
		  "AND g.ck = s.ck",
		  (long long)sp->elo, (long long)sp->ehi);
	r = PQexec(pg->conn, sb_str(&sql));
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		one_line(PQerrorMessage(pg->conn), err, errlen);
		goto out;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		sqlite3_bind_int64(ins, 1,
				   strtoll(PQgetvalue(r, i, 0), NULL, 10));
		if (sqlite3_step(ins) != SQLITE_DONE) {
			snprintf(err, errlen, "%s", sqlite3_errmsg(src));
			goto out;
		}
		sqlite3_reset(ins);
	}
	rc = 0;
out:
	PQclear(r);
	sqlite3_finalize(ins);
	free(sql.s);
	return rc;
}

/* One try of the merge, in one transaction. */
static int merge_once(obs_pg *pg, sqlite3 *src, const struct span *sp,
		      int64_t *exchanges_new, char *err, size_t errlen)
{
	struct sbuf sql = { 0 }, cols = { 0 };
	int64_t first;
	int rc = -1;

	sb_printf(&sql,
		  "BEGIN;\n"
		  "CREATE TEMP TABLE s_csum(src_id bigint, n bigint, open "
		  "bigint, ck bigint) ON COMMIT DROP;\n");
	for (size_t t = 0; t < N_TABLES; t++) {
		/* staging tables: the source's columns, ids and all */
		cols.len = 0;
		columns_of(pg->tpl, tables[t], "", false, true, &cols);
		sb_printf(&sql, "CREATE TEMP TABLE s_%s(%s) ON COMMIT DROP;\n",
			  tables[t], sb_str(&cols));
	}
	if (run(pg, sb_str(&sql), err, errlen) != 0)
		goto out;
	/* the exchanges come after the connections are merged */
	for (size_t t = 0; t < N_TABLES - 1; t++)
		if (copy_table(pg, src, tables[t], NULL, err, errlen) != 0)
			goto out;
	sql.len = 0;
	sb_printf(
		&sql,
		"ANALYZE s_client, s_process, s_connection;\n"
		"INSERT INTO client(name, host) SELECT name, host FROM "
		"s_client ORDER BY name ON CONFLICT (name) DO NOTHING;\n"
		"CREATE TEMP TABLE client_map ON COMMIT DROP AS SELECT "
		"s.id AS src_id, c.id AS dst_id FROM s_client s JOIN client c "
		"ON c.name = s.name;\n");
	upsert(pg, "process", "client_map", "client_id, pid, start_ns", "ended",
	       &sql);
	sb_printf(&sql,
		  ";\nCREATE TEMP TABLE process_map ON COMMIT DROP AS SELECT "
		  "k.id AS src_id, p.id AS dst_id FROM s_process k JOIN "
		  "client_map m ON m.src_id = k.client_id JOIN process p ON "
		  "p.client_id = m.dst_id AND p.pid = k.pid AND p.start_ns = "
		  "k.start_ns;\n");
	upsert(pg, "connection", "process_map", "process_id, seq", "complete",
	       &sql);
	/* the connections' ids: only the partitions of the source's days */
	sb_printf(&sql,
		  ";\nCREATE TEMP TABLE connection_map ON COMMIT DROP AS "
		  "SELECT k.id AS src_id, c.id AS dst_id FROM s_connection k "
		  "JOIN process_map m ON m.src_id = k.process_id JOIN "
		  "connection c ON c.process_id = m.dst_id AND c.seq = k.seq "
		  "AND (c.t1_ns BETWEEN %lld AND %lld OR c.t1_ns IS NULL) AND "
		  "c.t1_ns IS NOT DISTINCT FROM k.t1_ns;\n"
		  "ANALYZE connection_map",
		  (long long)sp->lo, (long long)sp->hi);
	if (sql.oom || run(pg, sb_str(&sql), err, errlen) != 0)
		goto out;
	if (skip_known(pg, src, sp, err, errlen) != 0 ||
	    copy_table(pg, src, "exchange",
		       "connection_id NOT IN (SELECT id FROM temp.skip)", err,
		       errlen) != 0 ||
	    run(pg, "ANALYZE s_exchange", err, errlen) != 0)
		goto out;
	/* the new exchanges: those numbered after this point (rows updated
	 * were numbered before, unless a pull that ran at the same time
	 * inserted them: then the count errs, never the rows) */
	first = query_int(pg,
			  "SELECT nextval(pg_get_serial_sequence('exchange', "
			  "'id'))",
			  0, err, errlen);
	if (first < 0)
		goto out;
	sql.len = 0;
	sb_printf(&sql, "WITH ins AS (");
	upsert(pg, "exchange", "connection_map", "connection_id, seq",
	       "complete", &sql);
	sb_printf(&sql,
		  " RETURNING id) SELECT count(*) FROM ins WHERE id > %lld",
		  (long long)first);
	if (sql.oom || cols.oom) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	*exchanges_new = query_int(pg, sb_str(&sql), 0, err, errlen);
	if (*exchanges_new < 0)
		goto out;
	rc = run(pg, "COMMIT", err, errlen);
out:
	if (rc != 0) {
		char ignore[64];
		run(pg, "ROLLBACK", ignore, sizeof(ignore));
	}
	free(sql.s);
	free(cols.s);
	return rc;
}

int obs_pg_merge(obs_pg *pg, sqlite3 *src, int64_t *exchanges_new, char *why,
		 size_t whylen)
{
	char err[400] = "";
	sqlite3_stmt *st = NULL;
	struct span sp = { 0 };
	int rc = -1;

	*exchanges_new = 0;
	for (size_t t = 0; t < N_TABLES; t++)
		if (partition_key(tables[t]) &&
		    ensure_partitions(pg, src, t, err, sizeof(err)) != 0)
			goto out;
	if (sqlite3_prepare_v2(src,
			       "SELECT coalesce(min(t1_ns), 0), "
			       "coalesce(max(t1_ns), 0), (SELECT "
			       "coalesce(min(t3_ns), 0) FROM src.exchange), "
			       "(SELECT coalesce(max(t3_ns), 0) FROM "
			       "src.exchange) FROM src.connection",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		sp.lo = sqlite3_column_int64(st, 0);
		sp.hi = sqlite3_column_int64(st, 1);
		sp.elo = sqlite3_column_int64(st, 2);
		sp.ehi = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	/* two pulls that insert the same rows may deadlock or conflict:
	 * the loser tries again */
	for (int attempt = 0; attempt < 5; attempt++) {
		rc = merge_once(pg, src, &sp, exchanges_new, err, sizeof(err));
		if (rc == 0 || (!strstr(err, "deadlock") &&
				!strstr(err, "could not serialize")))
			break;
	}
out:
	if (rc != 0)
		snprintf(why, whylen, "cannot merge into %s: %s", pg->name,
			 err);
	return rc;
}

/* ---- snapshot ----------------------------------------------------------- */

/* One field of a row of COPY's text format, unescaped in place; *p moves
 * past it and its tab or newline. NULL for \N. */
static char *copy_field(char **p, char *end)
{
	char *start = *p, *out = start, *c = start;

	if (c + 2 <= end && c[0] == '\\' && c[1] == 'N' &&
	    (c + 2 == end || c[2] == '\t' || c[2] == '\n')) {
		*p = c + 3;
		return NULL;
	}
	while (c < end && *c != '\t' && *c != '\n') {
		if (*c == '\\' && c + 1 < end) {
			c++;
			*out++ = *c == 't'   ? '\t'
				 : *c == 'n' ? '\n'
				 : *c == 'r' ? '\r'
					     : *c;
			c++;
		} else {
			*out++ = *c++;
		}
	}
	*p = c + 1;
	*out = '\0';
	return start;
}

/* Copy one table into the SQLite store (COPY ... TO STDOUT, a prepared
 * INSERT per row). */
static int snapshot_table(obs_pg *pg, sqlite3 *db, const char *table, char *err,
			  size_t errlen)
{
	struct sbuf cols = { 0 }, sql = { 0 };
	sqlite3_stmt *ins = NULL, *st = NULL;
	bool is_int[64];
	int n = 0, rc = -1, len;
	char *line = NULL;
	PGresult *r;

	columns(pg->tpl, table, "", false, &cols);
	sqlite3_prepare_v2(pg->tpl, TABLE_INFO, -1, &st, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW && n < 64)
		is_int[n++] = strcmp(pg_type((const char *)sqlite3_column_text(
					     st, 1)),
				     "bigint") == 0;
	sqlite3_finalize(st);
	sb_printf(&sql, "INSERT INTO %s(%s) VALUES(?", table, sb_str(&cols));
	for (int i = 1; i < n; i++)
		sb_printf(&sql, ", ?");
	sb_printf(&sql, ")");
	if (sqlite3_prepare_v2(db, sb_str(&sql), -1, &ins, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		goto out;
	}
	sql.len = 0;
	sb_printf(&sql, "COPY (SELECT %s FROM %s", sb_str(&cols), table);
	/* rows whose connection a prune took are not the store's */
	if (strcmp(table, "exchange") == 0)
		sb_printf(&sql, " WHERE connection_id IN (SELECT id FROM "
				"connection)");
	sb_printf(&sql, ") TO STDOUT");
	r = PQexec(pg->conn, sb_str(&sql));
	if (PQresultStatus(r) != PGRES_COPY_OUT) {
		one_line(PQerrorMessage(pg->conn), err, errlen);
		PQclear(r);
		goto out;
	}
	PQclear(r);
	rc = 0;
	while ((len = PQgetCopyData(pg->conn, &line, 0)) > 0) {
		char *p = line, *end = line + len;
		for (int i = 0; i < n && rc == 0; i++) {
			char *v = p < end ? copy_field(&p, end) : NULL;
			if (!v)
				sqlite3_bind_null(ins, i + 1);
			else if (is_int[i])
				sqlite3_bind_int64(ins, i + 1,
						   strtoll(v, NULL, 10));
			else
				sqlite3_bind_text(ins, i + 1, v, -1,
						  SQLITE_STATIC);
		}
		if (rc == 0 && sqlite3_step(ins) != SQLITE_DONE) {
			snprintf(err, errlen, "%s", sqlite3_errmsg(db));
			rc = -1;
		}
		sqlite3_reset(ins);
		PQfreemem(line);
		line = NULL;
	}
	if (len == -2 && rc == 0) {
		one_line(PQerrorMessage(pg->conn), err, errlen);
		rc = -1;
	}
	while ((r = PQgetResult(pg->conn))) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK && rc == 0) {
			one_line(PQerrorMessage(pg->conn), err, errlen);
			rc = -1;
		}
		PQclear(r);
	}
out:
	sqlite3_finalize(ins);
	free(cols.s);
	free(sql.s);
	return rc;
}

int obs_pg_snapshot(obs_pg *pg, const char *path, char *err, size_t errlen)
{
	char msg[400] = "";
	obs_store *s = obs_store_open(path, err, errlen);
	sqlite3 *db;
	int rc = -1;

	if (!s)
		return -1;
	db = obs_store_db(s);
	/* one consistent view of the store, whatever pulls run */
	if (run(pg, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", msg,
		sizeof(msg)) != 0)
		goto out;
	/* a scratch copy: no journal, no sync, no checks of what the store
	 * already checked */
	sqlite3_exec(db, obs_schema_central_sql, NULL, NULL, NULL);
	sqlite3_exec(db,
		     "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
		     "PRAGMA foreign_keys = OFF; PRAGMA cache_size = -262144; "
		     "BEGIN",
		     NULL, NULL, NULL);
	rc = 0;
	for (size_t t = 0; t < N_TABLES && rc == 0; t++)
		rc = snapshot_table(pg, db, tables[t], msg, sizeof(msg));
	if (run(pg, "COMMIT", msg[0] ? NULL : msg, msg[0] ? 0 : sizeof(msg)))
		rc = -1;
	if (sqlite3_exec(db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL,
			 NULL) != SQLITE_OK &&
	    rc == 0) {
		snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(db));
		rc = -1;
	}
	/* read-only afterwards: no WAL files to make */
	sqlite3_exec(db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
out:
	if (rc != 0)
		snprintf(err, errlen, "%s: cannot read: %s", pg->name, msg);
	obs_store_close(s);
	return rc;
}

/* ---- prune -------------------------------------------------------------- */

int obs_pg_prune(obs_pg *pg, int64_t before_ns, int64_t *connections,
		 int64_t *exchanges, char *err, size_t errlen)
{
	char msg[400] = "", day[16];
	struct sbuf sql = { 0 };
	PGresult *r = NULL;
	int rc = -1;
	time_t secs = (time_t)(before_ns / 1000000000);
	struct tm tm;

	*connections = *exchanges = 0;
	gmtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y%m%d", &tm);
	if (run(pg, "BEGIN; SELECT pg_advisory_xact_lock(" DDL_LOCK ")", msg,
		sizeof(msg)) != 0)
		goto out;
	/* the day partitions before the day, with their row counts */
	for (size_t t = 2; t < N_TABLES; t++) {
		sql.len = 0;
		sb_printf(&sql,
			  "SELECT c.relname FROM pg_inherits i JOIN pg_class c "
			  "ON c.oid = i.inhrelid WHERE i.inhparent = "
			  "'%s'::regclass AND c.relname ~ '^%s_[0-9]{8}$' AND "
			  "c.relname < '%s_%s'",
			  tables[t], tables[t], tables[t], day);
		r = PQexec(pg->conn, sb_str(&sql));
		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			one_line(PQerrorMessage(pg->conn), msg, sizeof(msg));
			goto out;
		}
		for (int i = 0; i < PQntuples(r); i++) {
			char q[160];
			int64_t n;
			snprintf(q, sizeof(q), "SELECT count(*) FROM %s",
				 PQgetvalue(r, i, 0));
			n = query_int(pg, q, 0, msg, sizeof(msg));
			snprintf(q, sizeof(q), "DROP TABLE %s",
				 PQgetvalue(r, i, 0));
			if (n < 0 || run(pg, q, msg, sizeof(msg)) != 0)
				goto out;
			*(t == 2 ? connections : exchanges) += n;
		}
		PQclear(r);
		r = NULL;
	}
	/* the exchanges of the connections gone, started after the day */
	sql.len = 0;
	sb_printf(&sql,
		  "WITH d AS (DELETE FROM exchange e WHERE NOT EXISTS (SELECT "
		  "1 FROM connection c WHERE c.id = e.connection_id) RETURNING "
		  "1) SELECT count(*) FROM d");
	int64_t n = query_int(pg, sb_str(&sql), 0, msg, sizeof(msg));
	if (n < 0)
		goto out;
	*exchanges += n;
	sql.len = 0;
	sb_printf(&sql,
		  "DELETE FROM process p WHERE p.start_ns < %lld AND NOT "
		  "EXISTS (SELECT 1 FROM connection c WHERE c.process_id = "
		  "p.id); COMMIT",
		  (long long)before_ns);
	rc = run(pg, sb_str(&sql), msg, sizeof(msg));
out:
	PQclear(r);
	if (rc != 0) {
		char ignore[64];
		run(pg, "ROLLBACK", ignore, sizeof(ignore));
		snprintf(err, errlen, "%s: cannot prune: %s", pg->name, msg);
	}
	free(sql.s);
	return rc;
}

/* ---- queries of other modules ------------------------------------------- */

/* PostgreSQL's oids of the types obs_pg_select reads (pg_type.dat) */
enum {
	OID_BOOL = 16,
	OID_BYTEA = 17,
	OID_INT8 = 20,
	OID_INT2 = 21,
	OID_INT4 = 23,
	OID_OID = 26,
	OID_FLOAT4 = 700,
	OID_FLOAT8 = 701,
	OID_NUMERIC = 1700,
};

/* Field col of row i of r bound to the parameter k of st, as its type
 * says. SQLite's result code. */
static int bind_field(sqlite3_stmt *st, int k, PGresult *r, int i, int col)
{
	const char *v = PQgetvalue(r, i, col);
	unsigned char *bytes;
	size_t n;
	int rc;

	if (PQgetisnull(r, i, col))
		return sqlite3_bind_null(st, k);
	switch (PQftype(r, col)) {
	case OID_BOOL:
		return sqlite3_bind_int(st, k, *v == 't');
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		return sqlite3_bind_int64(st, k, strtoll(v, NULL, 10));
	case OID_FLOAT4:
	case OID_FLOAT8:
	case OID_NUMERIC:
		return sqlite3_bind_double(st, k, strtod(v, NULL));
	case OID_BYTEA:
		if (!(bytes = PQunescapeBytea((const unsigned char *)v, &n)))
			return SQLITE_NOMEM;
		rc = sqlite3_bind_blob64(st, k, bytes, n, SQLITE_TRANSIENT);
		PQfreemem(bytes);
		return rc;
	default:
		return sqlite3_bind_text(st, k, v, PQgetlength(r, i, col),
					 SQLITE_STATIC);
	}
}

int obs_pg_select(obs_pg *pg, const char *sql, const struct obs_pg_params *p,
		  sqlite3 *into, const char *table, char *err, size_t errlen)
{
	PGresult *r = exec_params(pg, sql, p);
	struct sbuf ddl = { 0 }, ins_sql = { 0 };
	sqlite3_stmt *ins = NULL;
	char msg[400] = "out of memory";
	int rc = -1, cols;

	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) < 1) {
		one_line(PQresultStatus(r) == PGRES_TUPLES_OK
				 ? "a query without columns"
				 : PQerrorMessage(pg->conn),
			 msg, sizeof(msg));
		goto out;
	}
	cols = PQnfields(r);
	sb_printf(&ddl, "DROP TABLE IF EXISTS %s; CREATE TABLE %s(", table,
		  table);
	sb_printf(&ins_sql, "INSERT INTO %s VALUES(", table);
	for (int c = 0; c < cols; c++) {
		sb_printf(&ddl, "%sc%d", c ? ", " : "", c);
		sb_printf(&ins_sql, "%s?", c ? ", " : "");
	}
	sb_printf(&ddl, ")");
	sb_printf(&ins_sql, ")");
	if (ddl.oom || ins_sql.oom)
		goto out;
	if (sqlite3_exec(into, sb_str(&ddl), NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(into, sb_str(&ins_sql), -1, &ins, NULL) !=
		    SQLITE_OK)
		goto sqlite_error;
	for (int i = 0; i < PQntuples(r); i++) {
		for (int c = 0; c < cols; c++)
			if (bind_field(ins, c + 1, r, i, c) != SQLITE_OK)
				goto sqlite_error;
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto sqlite_error;
		sqlite3_reset(ins);
	}
	rc = 0;
	goto out;
sqlite_error:
	snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(into));
out:
	if (rc != 0)
		snprintf(err, errlen, "%s: %s", pg->name, msg);
	sqlite3_finalize(ins);
	PQclear(r);
	free(ddl.s);
	free(ins_sql.s);
	return rc;
}

int obs_pg_command(obs_pg *pg, const char *sql, const struct obs_pg_params *p,
		   char *err, size_t errlen)
{
	char msg[400];

	if (run_params(pg, sql, p, msg, sizeof(msg)) == 0)
		return 0;
	snprintf(err, errlen, "%s: %s", pg->name, msg);
	return -1;
}

int obs_pg_mirror(obs_pg *pg, const char *ddl, const char *table, char *err,
		  size_t errlen)
{
	struct sbuf sql = { 0 };
	char msg[400] = "out of memory";
	int rc = -1;

	if (sqlite3_exec(pg->tpl, ddl, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(pg->tpl));
		goto out;
	}
	/* serialised with the schema's changes, as they are */
	sb_printf(&sql, "BEGIN; SELECT pg_advisory_xact_lock(" DDL_LOCK ");\n");
	table_ddl(pg->tpl, table, &sql);
	sb_printf(&sql, "COMMIT");
	if (sql.oom)
		goto out;
	rc = run(pg, sb_str(&sql), msg, sizeof(msg));
	if (rc != 0)
		run(pg, "ROLLBACK", NULL, 0);
out:
	if (rc != 0)
		snprintf(err, errlen, "%s: cannot create the table %s: %s",
			 pg->name, table, msg);
	free(sql.s);
	return rc;
}

#endif
