/* analyses.c - the analyses of the other seeds, for manager stats --view
 * and the report's plots: their figures read from the database, and their
 * tables as text or CSV.
 *
 *   endings    how connections ended, per server and time window, and the
 *              server's state judged from the ratios (seed 000)
 *   keepalive  idle gaps between a response and the next request on the
 *              same connection, the server's idle close (an estimate of its
 *              keep-alive timeout), a recommended timeout (seed 003)
 *   size       T6 - T4 = a * Dr + b per server (the response time: from
 *              the request sent to the response complete, Tw + Trecv),
 *              least squares and Theil-Sen (seed 002): b the fixed cost of a
 *              request, 1/a the bandwidth. Not Tr = T6 - T5: a client that
 *              polls before it reads enters its first receive only when the
 *              answer is there, so its Tr leaves the server's time out
 *   family     IPv4 against IPv6, TLS against plain (seed 000)
 *
 * Every figure comes from one SQL query over the views and a little
 * arithmetic (stats.c); the definitions are in docs/analyses.md.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses.h"
#include "db.h"
#include "filter.h"
#include "stats.h"

/* The reason an analysis stopped, on stderr. */
static int say_nomem(void)
{
	fprintf(stderr, "manager: out of memory\n");
	return 2;
}

/* ---- endings ----------------------------------------------------------------
 */

/* Every connection is in one class; those with no end seen (unterminated,
 * or still open when the spool was last sliced: no class yet) count as
 * unterminated, so that the classes add up to the connections. A
 * connection is aborted when the client gave up on it: it closed (or
 * reset, or timed out) while its last exchange had sent a request and got
 * no byte of answer. */
static const char endings_sql[] =
	"SELECT peer_addr || ':' || peer_port AS server,"
	"  CAST(t1_ns / ?1 AS INTEGER) * ?1 AS window, count(*),"
	"  total(end_class = 'server_close'), total(end_class = 'client_close'),"
	"  total(end_class = 'reset'), total(end_class = 'timeout'),"
	"  total(end_class IN ('refused', 'connect_error')),"
	"  total(end_class = 'exit'), total(end_class = 'lost'),"
	"  total(end_class IS NULL OR end_class NOT IN ('server_close',"
	"    'client_close', 'reset', 'timeout', 'refused', 'connect_error',"
	"    'exit', 'lost')),"
	"  total(end_class IN ('client_close', 'reset', 'timeout') AND"
	"    (SELECT e.ds > 0 AND e.tfb_ns IS NULL FROM exchange e"
	"     WHERE e.connection_id = m.connection_id ORDER BY e.seq DESC"
	"     LIMIT 1))"
	" FROM connection_metrics m WHERE %s AND t1_ns IS NOT NULL"
	" GROUP BY server, window ORDER BY server, window";

int analyses_endings_collect(sqlite3 *db, const char *where, double window_s,
			     struct analyses_endings_row **rows, size_t *n)
{
	char *filter = filter_connections(where);
	char *sql = filter ? sqlite3_mprintf(endings_sql, filter) : NULL;
	sqlite3_stmt *st = sql ? db_prepare(db, sql) : NULL;
	size_t cap = 0;
	int rc;

	*rows = NULL;
	*n = 0;
	if (!sql) {
		sqlite3_free(filter);
		return say_nomem();
	}
	sqlite3_free(sql);
	sqlite3_free(filter);
	if (!st)
		return 2;
	/* the whole span is one window unless --window says otherwise */
	sqlite3_bind_int64(
		st, 1, window_s > 0 ? (int64_t)(window_s * 1e9) : INT64_MAX);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct analyses_endings_row *e;

		if (*n == cap) {
			size_t more = cap ? cap * 2 : 64;
			e = realloc(*rows, more * sizeof(*e));
			if (!e) {
				rc = SQLITE_NOMEM;
				break;
			}
			*rows = e;
			cap = more;
		}
		e = &(*rows)[(*n)++];
		snprintf(e->server, sizeof(e->server), "%s",
			 (const char *)sqlite3_column_text(st, 0));
		e->window_ns = window_s > 0 ? sqlite3_column_int64(st, 1) : 0;
		e->n = sqlite3_column_double(st, 2);
		for (int i = 0; i < ANALYSES_END_COUNT; i++)
			e->c[i] = sqlite3_column_double(st, 3 + i);
		e->state = stats_server_state(e->n, e->c[ANALYSES_END_FAILED],
					      e->c[ANALYSES_END_ABORTED],
					      e->c[ANALYSES_END_RESET],
					      e->c[ANALYSES_END_TIMEOUT]);
	}
	if (rc != SQLITE_DONE)
		fprintf(stderr, "manager: %s\n",
			rc == SQLITE_NOMEM ? "out of memory"
					   : sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*rows);
		*rows = NULL;
		*n = 0;
		return 2;
	}
	return 0;
}

static int view_endings(sqlite3 *db, const char *where, double window_s,
			bool csv, FILE *out)
{
	struct analyses_endings_row *rows;
	size_t n;

	if (analyses_endings_collect(db, where, window_s, &rows, &n) != 0)
		return 2;
	if (csv)
		fprintf(out, "server,window_start_ns,connections,server_close,"
			     "client_close,reset,timeout,refused,exit,lost,"
			     "unterminated,aborted,state\n");
	else
		fprintf(out,
			"%-22s %-20s %7s %7s %7s %6s %7s %7s %7s %7s %7s %7s  "
			"%s\n",
			"server", "window (UTC)", "conns", "srv_fin", "cli_fin",
			"reset", "timeout", "refused", "exit", "lost", "unterm",
			"aborted", "state");
	for (size_t k = 0; k < n; k++) {
		const struct analyses_endings_row *e = &rows[k];

		if (csv) {
			fprintf(out, "%s,%lld,%.0f", e->server,
				(long long)e->window_ns, e->n);
			for (int i = 0; i < ANALYSES_END_COUNT; i++)
				fprintf(out, ",%.0f", e->c[i]);
			fprintf(out, ",%s\n", e->state);
		} else {
			char when[32] = "all";
			if (window_s > 0) {
				time_t secs =
					(time_t)(e->window_ns / 1000000000);
				struct tm tm;
				gmtime_r(&secs, &tm);
				strftime(when, sizeof(when),
					 "%Y-%m-%d %H:%M:%S", &tm);
			}
			fprintf(out, "%-22.22s %-20s %7.0f", e->server, when,
				e->n);
			for (int i = 0; i < ANALYSES_END_COUNT; i++)
				fprintf(out, " %6.1f%%",
					100.0 * e->c[i] / e->n);
			fprintf(out, "  %s\n", e->state);
		}
	}
	free(rows);
	return 0;
}

/* ---- keep-alive ---------------------------------------------------------- */

/* The values of st (its ?1 bound to server) at or above min into v, the
 * others counted in *below. SQLITE_DONE, SQLITE_NOMEM, or SQLite's error. */
static int collect(sqlite3_stmt *st, const char *server, double min,
		   struct vec *v, size_t *below)
{
	int rc;

	sqlite3_bind_text(st, 1, server, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double x = sqlite3_column_double(st, 0);

		if (x < min)
			(*below)++;
		else if (vec_push(v, x) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	sqlite3_reset(st);
	return rc;
}

/* The servers of the keep-alive view, in order (name NULL: unknown, the
 * first if any), each with its gaps. */
struct ka_server {
	char *name;
	struct vec gaps;
};

static int ka_cmp(const void *name, const void *server)
{
	return strcmp(name, ((const struct ka_server *)server)->name);
}

/* The server named name among the n of v (in order, a NULL name first):
 * NULL when none. */
static struct ka_server *ka_find(struct ka_server *v, size_t n,
				 const char *name)
{
	size_t skip = n && !v[0].name ? 1 : 0;

	return n > skip ? bsearch(name, v + skip, n - skip, sizeof(*v), ka_cmp)
			: NULL;
}

/* One pass over the exchanges the filter keeps (%s), through the stored
 * view, with what struct analyses_row holds of each, in these columns. The
 * filter is applied inside: connection has columns of the same names. */
#define ROWS_SQL                                                               \
	"SELECT e.peer_addr || ':' || e.peer_port, e.tgap_ms, c.process_id, "  \
	"e.tw_ms, e.trecv_ms, c.min_rtt_us FROM (SELECT * FROM " DB_GAPS_VIEW  \
	" WHERE (%s)) e JOIN connection c ON c.id = e.connection_id"

/* The row of a ROWS_SQL statement; r->server lives until the next step. */
static void row_read(sqlite3_stmt *st, struct analyses_row *r)
{
	*r = (struct analyses_row){
		.server = (const char *)sqlite3_column_text(st, 0),
		.has_gap = sqlite3_column_type(st, 1) != SQLITE_NULL,
		.gap = sqlite3_column_double(st, 1),
		.process = sqlite3_column_int64(st, 2),
		.has_tw = sqlite3_column_type(st, 3) != SQLITE_NULL,
		.tw = sqlite3_column_double(st, 3),
		.has_trecv = sqlite3_column_type(st, 4) != SQLITE_NULL,
		.trecv = sqlite3_column_double(st, 4),
		.has_rtt = sqlite3_column_type(st, 5) != SQLITE_NULL,
		.min_rtt_us = sqlite3_column_double(st, 5),
	};
}

int analyses_rows(sqlite3 *db, const char *where, analyses_row_fn fn, void *ctx)
{
	char *sql = sqlite3_mprintf(ROWS_SQL, where ? where : "1");
	sqlite3_stmt *st = sql ? db_prepare(db, sql) : NULL;
	int rc;

	sqlite3_free(sql);
	if (!st)
		return sql ? 2 : say_nomem();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct analyses_row r;

		row_read(st, &r);
		if (fn(ctx, &r) != 0)
			break;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : 2;
}

/* The servers of st (one column, in order), then every server's gaps from
 * one pass of gaps (rows: server, gap, process, tw, trecv, min_rtt_us;
 * the gaps above 0 kept, every row given to row_fn if any), sorted.
 * SQLITE_DONE, SQLITE_NOMEM, SQLITE_ABORT (said by row_fn) or SQLite's
 * error. */
static int ka_servers(sqlite3_stmt *st, sqlite3_stmt *gaps,
		      analyses_row_fn row_fn, void *row_ctx,
		      struct ka_server **v, size_t *n)
{
	struct ka_server *last = NULL;
	size_t cap = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		if (*n == cap) {
			size_t more = cap ? cap * 2 : 16;
			struct ka_server *x = realloc(*v, more * sizeof(*x));

			if (!x)
				return SQLITE_NOMEM;
			*v = x;
			cap = more;
		}
		(*v)[*n] = (struct ka_server){ NULL, { 0 } };
		if (name && !((*v)[*n].name = strdup(name)))
			return SQLITE_NOMEM;
		++*n;
	}
	if (rc != SQLITE_DONE)
		return rc;
	while ((rc = sqlite3_step(gaps)) == SQLITE_ROW) {
		struct analyses_row r;

		row_read(gaps, &r);
		if (row_fn && row_fn(row_ctx, &r) != 0)
			return SQLITE_ABORT;
		if (!r.server || !r.has_gap || !(r.gap > 0))
			continue;
		if (!last || strcmp(r.server, last->name) != 0)
			last = ka_find(*v, *n, r.server);
		if (last && vec_push(&last->gaps, r.gap) != 0)
			return SQLITE_NOMEM;
	}
	for (size_t i = 0; i < *n; i++)
		stats_sort((*v)[i].gaps.v, (*v)[i].gaps.n);
	return rc;
}

int analyses_keepalive_each(sqlite3 *db, const char *where,
			    analyses_keepalive_fn fn, void *ctx,
			    analyses_row_fn row_fn, void *row_ctx)
{
	char *sql, *filter = filter_connections(where);
	sqlite3_stmt *servers = NULL, *gaps = NULL, *idle = NULL, *rec = NULL;
	struct ka_server *v = NULL;
	size_t nv = 0;
	int rc = SQLITE_OK;

	if (!filter)
		return say_nomem();
	/* the connection table, not the view: the filter names only
	 * m.connection_id (0.9 s a pass through the view at 1 M exchanges) */
	sql = sqlite3_mprintf(
		"SELECT DISTINCT peer_addr || ':' || peer_port "
		"FROM (SELECT id AS connection_id, peer_addr, "
		"peer_port FROM connection) m WHERE %s ORDER BY 1",
		filter);
	servers = sql ? db_prepare(db, sql) : NULL;
	sqlite3_free(sql);
	/* every server's gaps in one pass (with what row_fn takes of every
	 * exchange) */
	sql = servers ? sqlite3_mprintf(ROWS_SQL, where ? where : "1") : NULL;
	gaps = sql ? db_prepare(db, sql) : NULL;
	sqlite3_free(sql);
	/* the server closed a connection after its last response: from that
	 * response's end to the end of stream. Under the threshold the close
	 * came with the response (Connection: close), not after idling. */
	sql = gaps ? sqlite3_mprintf(
			     "SELECT (m.teof_ns - e.t6_ns) / 1e6 FROM "
			     "connection_metrics m JOIN exchange e ON "
			     "e.connection_id = m.connection_id AND e.seq = "
			     "m.exchanges WHERE %s AND m.peer_addr || ':' || "
			     "m.peer_port = ?1 AND m.end_class = 'server_close' "
			     "AND m.teof_ns >= e.t6_ns AND e.tfb_ns IS NOT NULL "
			     "ORDER BY 1",
			     filter)
		   : NULL;
	idle = sql ? db_prepare(db, sql) : NULL;
	sqlite3_free(sql);
	/* a new connection of the same process to the same server, opened
	 * after an idle close of the previous one */
	sql = idle ? sqlite3_mprintf(
			     "SELECT count(*) FROM connection_metrics m JOIN "
			     "connection_metrics p ON p.pid = m.pid AND "
			     "p.program = m.program AND p.client = m.client AND "
			     "p.peer_addr = m.peer_addr AND p.peer_port = "
			     "m.peer_port AND p.end_class = 'server_close' AND "
			     "p.teof_ns <= m.t1_ns AND p.connection_id = (SELECT "
			     "max(q.connection_id) FROM connection_metrics q "
			     "WHERE q.pid = m.pid AND q.client = m.client AND "
			     "q.peer_addr = m.peer_addr AND q.peer_port = "
			     "m.peer_port AND q.connection_id < m.connection_id) "
			     "JOIN exchange pe ON pe.connection_id = "
			     "p.connection_id AND pe.seq = p.exchanges AND "
			     "pe.tfb_ns IS NOT NULL AND p.teof_ns - pe.t6_ns >= "
			     "%lld WHERE %s AND m.peer_addr || ':' || "
			     "m.peer_port = ?1",
			     (long long)(ANALYSES_IDLE_CLOSE_MIN_MS * 1e6),
			     filter)
		   : NULL;
	rec = sql ? db_prepare(db, sql) : NULL;
	sqlite3_free(filter);
	if (!rec) {
		if (!sql)
			say_nomem(); /* else db_prepare said why */
		sqlite3_free(sql);
		rc = SQLITE_ERROR;
		goto out;
	}
	sqlite3_free(sql);
	rc = ka_servers(servers, gaps, row_fn, row_ctx, &v, &nv);
	for (size_t i = 0; rc == SQLITE_DONE && i < nv; i++) {
		struct analyses_keepalive k = { .server = v[i].name ? v[i].name
								    : "?" };
		struct vec c = { 0 };

		rc = collect(idle, k.server, ANALYSES_IDLE_CLOSE_MIN_MS, &c,
			     &k.closes_with_response);
		if (rc == SQLITE_DONE) {
			sqlite3_bind_text(rec, 1, k.server, -1,
					  SQLITE_TRANSIENT);
			if ((rc = sqlite3_step(rec)) == SQLITE_ROW) {
				k.reconnects = sqlite3_column_int64(rec, 0);
				rc = SQLITE_DONE;
			}
			sqlite3_reset(rec);
		}
		k.gaps = v[i].gaps.v;
		k.ngaps = v[i].gaps.n;
		k.closes = c.v;
		k.ncloses = c.n;
		if (rc == SQLITE_DONE &&
		    stats_keepalive_advice(k.gaps, k.ngaps, &k.recommended_ms,
					   &k.shape) != 0)
			rc = SQLITE_NOMEM;
		if (rc == SQLITE_DONE && fn(ctx, &k) != 0)
			rc = SQLITE_ABORT; /* said by fn */
		vec_free(&c);
		if (rc != SQLITE_DONE)
			break;
	}
	if (rc == SQLITE_NOMEM)
		say_nomem();
	else if (rc != SQLITE_DONE && rc != SQLITE_ABORT)
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
out:
	sqlite3_finalize(servers);
	sqlite3_finalize(gaps);
	sqlite3_finalize(idle);
	sqlite3_finalize(rec);
	for (size_t i = 0; i < nv; i++) {
		free(v[i].name);
		vec_free(&v[i].gaps);
	}
	free(v);
	return rc == SQLITE_DONE ? 0 : 2;
}

int analyses_keepalive_print(void *table, const struct analyses_keepalive *k)
{
	const struct analyses_table *p = table;
	const double *g = k->gaps, *c = k->closes;
	size_t ng = k->ngaps, nc = k->ncloses;

#define P(v, n, p) ((n) ? stats_percentile((v), (n), (p)) : NAN)
	if (p->csv)
		fprintf(p->out,
			"%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%zu,%.3f,%.3f,%zu,"
			"%lld,%.3f,%s\n",
			k->server, ng, stats_mean(g, ng), stats_sd(g, ng),
			P(g, ng, 50), P(g, ng, 90), ng ? g[ng - 1] : NAN, nc,
			P(c, nc, 50), nc ? c[0] : NAN, k->closes_with_response,
			(long long)k->reconnects, k->recommended_ms, k->shape);
	else
		fprintf(p->out,
			"%-22.22s %6zu %9.1f %9.1f %9.1f %9.1f %6zu %11.1f "
			"%11.1f %8zu %6lld %11.1f  %s\n",
			k->server, ng, stats_mean(g, ng), stats_sd(g, ng),
			P(g, ng, 50), P(g, ng, 90), nc, P(c, nc, 50),
			nc ? c[0] : NAN, k->closes_with_response,
			(long long)k->reconnects, k->recommended_ms, k->shape);
#undef P
	return 0;
}

void analyses_keepalive_header(bool csv, FILE *out)
{
	if (csv)
		fprintf(out,
			"server,gaps,gap_mean_ms,gap_sd_ms,gap_p50_ms,"
			"gap_p90_ms,gap_max_ms,idle_closes,idle_close_p50_ms,"
			"idle_close_min_ms,closes_with_response,"
			"reconnects_after_idle_close,recommended_timeout_ms,"
			"shape\n");
	else
		fprintf(out,
			"%-22s %6s %9s %9s %9s %9s %6s %11s %11s %8s %6s %11s  "
			"%s\n",
			"server", "gaps", "mean ms", "sd ms", "p50 ms",
			"p90 ms", "idle", "close p50", "close min", "at resp",
			"reconn", "recommend", "histogram");
}

static int view_keepalive(sqlite3 *db, const char *where, bool csv, FILE *out)
{
	struct analyses_table p = { out, csv };

	analyses_keepalive_header(csv, out);
	return analyses_keepalive_each(db, where, analyses_keepalive_print, &p,
				       NULL, NULL);
}

/* ---- size ------------------------------------------------------------------
 */

int analyses_size_each(sqlite3 *db, const char *where, analyses_size_fn fn,
		       void *ctx)
{
	char *sql = sqlite3_mprintf(
		"SELECT peer_addr || ':' || peer_port, dr, (t6_ns - t4_ns) / 1e6 "
		"FROM exchange_metrics WHERE (%s) AND dr > 0 AND t6_ns > t4_ns "
		"ORDER BY 1, dr",
		where ? where : "1");
	sqlite3_stmt *st = sql ? db_prepare(db, sql) : NULL;
	struct vec x = { 0 }, y = { 0 };
	char *server = NULL;
	int rc;

	if (!sql)
		return say_nomem();
	sqlite3_free(sql);
	if (!st)
		return 2;
	for (;;) {
		const char *s = NULL;

		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW &&
		    !(s = (const char *)sqlite3_column_text(st, 0)))
			s = "?";
		if (server && (!s || strcmp(s, server) != 0)) {
			struct analyses_size_fit f = { .server = server,
						       .dr = x.v,
						       .t_ms = y.v,
						       .n = x.n };
			stats_fit_ls(x.v, y.v, x.n, &f.a, &f.b, &f.r2);
			if (stats_fit_theil_sen(x.v, y.v, x.n, &f.ts_a,
						&f.ts_b) != 0) {
				rc = SQLITE_NOMEM;
				break;
			}
			if (fn(ctx, &f) != 0) {
				rc = SQLITE_ABORT; /* said by fn */
				break;
			}
			x.n = y.n = 0;
			free(server);
			server = NULL;
		}
		if (!s)
			break;
		if ((!server && !(server = strdup(s))) ||
		    vec_push(&x, sqlite3_column_double(st, 1)) != 0 ||
		    vec_push(&y, sqlite3_column_double(st, 2)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	if (rc == SQLITE_NOMEM)
		say_nomem();
	else if (rc != SQLITE_DONE && rc != SQLITE_ABORT)
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
	free(server);
	vec_free(&x);
	vec_free(&y);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : 2;
}

int analyses_size_print(void *table, const struct analyses_size_fit *f)
{
	const struct analyses_table *p = table;

	/* a in ms per byte: us per byte = a * 1000 */
	if (p->csv)
		fprintf(p->out, "%s,%zu,%.6f,%.4f,%.3f,%.2f,%.4f,%.6f,%.4f\n",
			f->server, f->n, f->a * 1e3, f->b, 1e-3 / f->a,
			1e3 / f->b, f->r2, f->ts_a * 1e3, f->ts_b);
	else
		fprintf(p->out,
			"%-22.22s %7zu %12.6f %10.4f %12.3f %10.2f %6.3f "
			"%12.6f %10.4f\n",
			f->server, f->n, f->a * 1e3, f->b, 1e-3 / f->a,
			1e3 / f->b, f->r2, f->ts_a * 1e3, f->ts_b);
	return 0;
}

void analyses_size_header(bool csv, FILE *out)
{
	if (csv)
		fprintf(out,
			"server,n,a_us_per_byte,b_ms,bandwidth_mb_s,rate_per_s,"
			"r2,ts_a_us_per_byte,ts_b_ms\n");
	else
		fprintf(out, "%-22s %7s %12s %10s %12s %10s %6s %12s %10s\n",
			"server", "n", "a us/byte", "b ms", "1/a MB/s",
			"1/b req/s", "R2", "TS a us/B", "TS b ms");
}

static int view_size(sqlite3 *db, const char *where, bool csv, FILE *out)
{
	struct analyses_table p = { out, csv };

	analyses_size_header(csv, out);
	return analyses_size_each(db, where, analyses_size_print, &p);
}

/* ---- family and TLS -------------------------------------------------------
 */

#define FAMILY_COLS 5 /* te_ms, tls_ms, tw_ms, tr_ms, tt_ms */
#define FAMILY_KEYS 4 /* IPv4 and IPv6, with and without TLS */

/* One pass over the exchanges the filter keeps: each figure's values of
 * each group (v[family == 6][tls][column], the connections' figures from
 * their first exchange), sorted. SQLITE_DONE, SQLITE_NOMEM, or SQLite's
 * error (said). */
static int family_values(sqlite3 *db, const char *where,
			 struct vec v[2][2][FAMILY_COLS])
{
	char *sql = sqlite3_mprintf(
		"SELECT CASE WHEN peer_addr LIKE '%%:%%' THEN 6 ELSE 4 END, "
		"tls, seq = 1, te_ms, tls_ms, tw_ms, tr_ms, tt_ms FROM "
		"exchange_metrics WHERE (%s)",
		where ? where : "1");
	sqlite3_stmt *st = sql ? db_prepare(db, sql) : NULL;
	int rc;

	sqlite3_free(sql);
	if (!st)
		return sql ? SQLITE_ABORT : SQLITE_NOMEM;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int tls = sqlite3_column_int(st, 1);
		bool first = sqlite3_column_int(st, 2);
		struct vec *g = v[sqlite3_column_int(st, 0) == 6][tls != 0];

		/* a group is a family and tls 0 or 1: NULL or another
		 * value is in none */
		if (sqlite3_column_type(st, 1) == SQLITE_NULL ||
		    (tls != 0 && tls != 1))
			continue;
		for (int i = 0; i < FAMILY_COLS; i++) {
			/* connection figures once per connection */
			bool per_conn = i < 2 || i == 4;

			if ((per_conn && !first) ||
			    sqlite3_column_type(st, 3 + i) == SQLITE_NULL)
				continue;
			if (vec_push(&g[i], sqlite3_column_double(st, 3 + i)) !=
			    0) {
				rc = SQLITE_NOMEM;
				break;
			}
		}
		if (rc == SQLITE_NOMEM)
			break;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_NOMEM) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
		rc = SQLITE_ABORT;
	}
	sqlite3_finalize(st);
	for (int k = 0; k < FAMILY_KEYS; k++)
		for (int i = 0; i < FAMILY_COLS; i++)
			stats_sort(v[k / 2][k % 2][i].v, v[k / 2][k % 2][i].n);
	return rc;
}

int analyses_family(sqlite3 *db, const char *where, FILE *csv, FILE *text)
{
	static const char *const cols[FAMILY_COLS] = { "te_ms", "tls_ms",
						       "tw_ms", "tr_ms",
						       "tt_ms" };
	struct vec v[2][2][FAMILY_COLS] = { { { { 0 } } } };
	char *sql;
	sqlite3_stmt *groups;
	int rc;

	/* the groups of the connections with an exchange the filter keeps
	 * (family and tls are the connection's): no pass through every
	 * exchange (2.2 s at 1 M exchanges) */
	sql = sqlite3_mprintf(
		"SELECT DISTINCT CASE WHEN c.peer_addr LIKE '%%:%%' THEN 6 "
		"ELSE 4 END, c.tls FROM connection c WHERE EXISTS (SELECT 1 "
		"FROM exchange_metrics x WHERE x.connection_id = c.id AND "
		"(%s)) ORDER BY 1, 2",
		where ? where : "1");
	groups = sql ? db_prepare(db, sql) : NULL;
	if (!sql)
		return say_nomem();
	sqlite3_free(sql);
	if (!groups)
		return 2;
	/* every group's figures in one pass (a group's values are those of
	 * its family with tls = the group's tls, as an integer) */
	if ((rc = family_values(db, where, v)) != SQLITE_DONE)
		goto out;
	if (csv)
		fprintf(csv, "family,tls,metric,count,p50,p90,mean\n");
	if (text)
		fprintf(text, "%-6s %-5s %-7s %8s %10s %10s %10s\n", "family",
			"tls", "metric", "count", "p50", "p90", "mean");
	while ((rc = sqlite3_step(groups)) == SQLITE_ROW) {
		int family = sqlite3_column_int(groups, 0);
		int tls = sqlite3_column_int(groups, 1);

		for (size_t i = 0; i < FAMILY_COLS; i++) {
			const struct vec *x =
				tls == 0 || tls == 1 ? &v[family == 6][tls][i]
						     : &(const struct vec){ 0 };

			if (x->n && csv)
				fprintf(csv, "%d,%d,%s,%zu,%.4f,%.4f,%.4f\n",
					family, tls, cols[i], x->n,
					stats_percentile(x->v, x->n, 50),
					stats_percentile(x->v, x->n, 90),
					stats_mean(x->v, x->n));
			if (x->n && text)
				fprintf(text,
					"IPv%-3d %-5s %-7s %8zu %10.3f %10.3f "
					"%10.3f\n",
					family, tls ? "yes" : "no", cols[i],
					x->n, stats_percentile(x->v, x->n, 50),
					stats_percentile(x->v, x->n, 90),
					stats_mean(x->v, x->n));
		}
	}
	if (rc != SQLITE_DONE)
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
out:
	if (rc == SQLITE_NOMEM)
		say_nomem();
	for (int k = 0; k < FAMILY_KEYS; k++)
		for (int i = 0; i < FAMILY_COLS; i++)
			vec_free(&v[k / 2][k % 2][i]);
	sqlite3_finalize(groups);
	return rc == SQLITE_DONE ? 0 : 2;
}

int analyses_view(sqlite3 *db, const char *view, const char *where,
		  double window_s, bool csv, FILE *out)
{
	if (strcmp(view, "endings") == 0)
		return view_endings(db, where, window_s, csv, out);
	if (strcmp(view, "keepalive") == 0)
		return view_keepalive(db, where, csv, out);
	if (strcmp(view, "size") == 0)
		return view_size(db, where, csv, out);
	if (strcmp(view, "family") == 0)
		return analyses_family(db, where, csv ? out : NULL,
				       csv ? NULL : out);
	fprintf(stderr,
		"manager: --view %s: endings, keepalive, size or family\n",
		view);
	return 2;
}
