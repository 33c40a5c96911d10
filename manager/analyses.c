/* analyses.c - manager stats --view: the analyses of the other seeds.
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
 * arithmetic here; the definitions are in docs/analyses.md.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manager.h"

/* ---- small helpers ---------------------------------------------------------
 */

struct vec {
	double *v;
	size_t n, cap;
};

static int vec_push(struct vec *x, double v)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 256;
		double *more = realloc(x->v, cap * sizeof(*more));
		if (!more)
			return -1;
		x->v = more;
		x->cap = cap;
	}
	x->v[x->n++] = v;
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double mean_of(const double *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : NAN;
}

static double sd_of(const double *v, size_t n)
{
	double m = mean_of(v, n), s = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return sqrt(s / (double)(n - 1));
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
		return NULL;
	}
	return st;
}

/* "m.connection_id IN (...)" restricting connections (of a query whose
 * connection_metrics is named m) to those with an exchange the filter
 * keeps; "1" with no filter (a connection that never got an exchange, e.g.
 * refused, counts then). sqlite3_malloc'd. */
char *manager_conn_filter(const char *where)
{
	if (!where || strcmp(where, "1") == 0)
		return sqlite3_mprintf("1");
	return sqlite3_mprintf("m.connection_id IN (SELECT x.connection_id "
			       "FROM exchange_metrics x WHERE (%s))",
			       where);
}

/* ---- endings ----------------------------------------------------------------
 */

/* A connection is aborted when the client gave up on it: it closed (or
 * reset, or timed out) while its last exchange had sent a request and got
 * no byte of answer. */
static const char endings_sql[] =
	"SELECT peer_addr || ':' || peer_port AS server,"
	"  CAST(t1_ns / ?1 AS INTEGER) * ?1 AS window, count(*),"
	"  total(end_class = 'server_close'), total(end_class = 'client_close'),"
	"  total(end_class = 'reset'), total(end_class = 'timeout'),"
	"  total(end_class IN ('refused', 'connect_error')),"
	"  total(end_class = 'unterminated'),"
	"  total(end_class IN ('client_close', 'reset', 'timeout') AND"
	"    (SELECT e.ds > 0 AND e.tfb_ns IS NULL FROM exchange e"
	"     WHERE e.connection_id = m.connection_id ORDER BY e.seq DESC"
	"     LIMIT 1))"
	" FROM connection_metrics m WHERE %s AND t1_ns IS NOT NULL"
	" GROUP BY server, window ORDER BY server, window";

const char *manager_server_state(double n, double failed, double aborted,
				 double reset, double timeout)
{
	if (n <= 0)
		return "-";
	if (failed / n >= 0.5)
		return "stopped";
	if ((aborted + reset + timeout) / n >= 0.25)
		return "saturated";
	return "normal";
}

int manager_endings_collect(sqlite3 *db, const char *where, double window_s,
			    struct manager_endings_row **rows, size_t *n)
{
	char *filter = manager_conn_filter(where);
	char *sql = sqlite3_mprintf(endings_sql, filter);
	sqlite3_stmt *st = sql ? prepare(db, sql) : NULL;
	size_t cap = 0;
	int rc;

	sqlite3_free(sql);
	sqlite3_free(filter);
	*rows = NULL;
	*n = 0;
	if (!st)
		return 2;
	/* the whole span is one window unless --window says otherwise */
	sqlite3_bind_int64(
		st, 1, window_s > 0 ? (int64_t)(window_s * 1e9) : INT64_MAX);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct manager_endings_row *e;

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
		for (int i = 0; i < MANAGER_END_COUNT; i++)
			e->c[i] = sqlite3_column_double(st, 3 + i);
		e->state = manager_server_state(e->n, e->c[MANAGER_END_FAILED],
						e->c[MANAGER_END_ABORTED],
						e->c[MANAGER_END_RESET],
						e->c[MANAGER_END_TIMEOUT]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
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
	struct manager_endings_row *rows;
	size_t n;

	if (manager_endings_collect(db, where, window_s, &rows, &n) != 0)
		return 2;
	if (csv)
		fprintf(out, "server,window_start_ns,connections,server_close,"
			     "client_close,reset,timeout,refused,unterminated,"
			     "aborted,state\n");
	else
		fprintf(out,
			"%-22s %-20s %7s %7s %7s %6s %7s %7s %7s %7s  %s\n",
			"server", "window (UTC)", "conns", "srv_fin", "cli_fin",
			"reset", "timeout", "refused", "unterm", "aborted",
			"state");
	for (size_t k = 0; k < n; k++) {
		const struct manager_endings_row *e = &rows[k];

		if (csv) {
			fprintf(out, "%s,%lld,%.0f", e->server,
				(long long)e->window_ns, e->n);
			for (int i = 0; i < MANAGER_END_COUNT; i++)
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
			for (int i = 0; i < MANAGER_END_COUNT; i++)
				fprintf(out, " %6.1f%%",
					100.0 * e->c[i] / e->n);
			fprintf(out, "  %s\n", e->state);
		}
	}
	free(rows);
	return 0;
}

/* ---- keep-alive ---------------------------------------------------------- */

/* The recommendation of seed 003 from the idle gaps (ms): mu + 7 sigma,
 * clamped to [100 ms, 15 s], and the shape of the histogram (10 ms bins)
 * of the shortest 70%: one mode in 0-100 ms falling away means most
 * requests come quickly and the rest are slow thinkers (lengthen); a peak
 * further out means a regular pause the timeout should cover no longer
 * than needed (shorten). */
void manager_keepalive_advice(const double *sorted, size_t n,
			      double *recommended_ms, const char **shape)
{
	size_t m = (size_t)ceil(0.7 * (double)n), bins;
	unsigned int *h;
	size_t mode = 0;
	bool falling = true, peak = false;

	*recommended_ms = NAN;
	*shape = "-";
	if (n == 0)
		return;
	*recommended_ms = mean_of(sorted, n) + 7 * sd_of(sorted, n);
	if (*recommended_ms < 100)
		*recommended_ms = 100;
	if (*recommended_ms > 15000)
		*recommended_ms = 15000;
	if (m < 10) {
		*shape = "too few gaps";
		return;
	}
	bins = (size_t)(sorted[m - 1] / 10.0) + 1;
	if (bins > 100000)
		bins = 100000;
	h = calloc(bins, sizeof(*h));
	if (!h)
		return;
	for (size_t i = 0; i < m; i++) {
		size_t b = (size_t)(sorted[i] / 10.0);
		h[b < bins ? b : bins - 1]++;
	}
	for (size_t b = 1; b < bins; b++)
		if (h[b] > h[mode])
			mode = b;
	for (size_t b = mode + 1; b < bins; b++) {
		/* a bin clearly above its left neighbour is a new peak */
		if (h[b] > h[b - 1] + 2 && h[b] * 10 > h[mode]) {
			falling = false;
			if (b * 10 >= 100)
				peak = true;
		}
	}
	if (mode * 10 < 100 && falling)
		*shape = "falling from a 0-100 ms mode: lengthen";
	else if (peak || mode * 10 >= 100)
		*shape = "peaks beyond 100 ms: shorten";
	else
		*shape = "no clear shape";
	free(h);
}

int manager_keepalive_each(sqlite3 *db, const char *where,
			   manager_keepalive_fn fn, void *ctx)
{
	char *sql, *filter = manager_conn_filter(where);
	sqlite3_stmt *servers, *gaps = NULL, *idle = NULL, *rec = NULL;
	int rc = 0;

	sql = sqlite3_mprintf("SELECT DISTINCT peer_addr || ':' || peer_port "
			      "FROM connection_metrics m WHERE %s ORDER BY 1",
			      filter);
	servers = sql ? prepare(db, sql) : NULL;
	sqlite3_free(sql);
	sql = sqlite3_mprintf("SELECT tgap_ms FROM exchange_metrics WHERE (%s)"
			      " AND peer_addr || ':' || peer_port = ?1 AND "
			      "tgap_ms > 0 ORDER BY tgap_ms",
			      where ? where : "1");
	gaps = sql ? prepare(db, sql) : NULL;
	sqlite3_free(sql);
	/* the server closed a connection after its last response: from that
	 * response's end to the end of stream. Under the threshold the close
	 * came with the response (Connection: close), not after idling. */
	sql = sqlite3_mprintf(
		"SELECT (m.teof_ns - e.t6_ns) / 1e6 FROM connection_metrics m "
		"JOIN exchange e ON e.connection_id = m.connection_id AND "
		"e.seq = m.exchanges WHERE %s AND m.peer_addr || ':' || "
		"m.peer_port = ?1 AND m.end_class = 'server_close' AND "
		"m.teof_ns >= e.t6_ns AND e.tfb_ns IS NOT NULL ORDER BY 1",
		filter);
	idle = sql ? prepare(db, sql) : NULL;
	sqlite3_free(sql);
	/* a new connection of the same process to the same server, opened
	 * after an idle close of the previous one */
	sql = sqlite3_mprintf(
		"SELECT count(*) FROM connection_metrics m JOIN connection_metrics "
		"p ON p.pid = m.pid AND p.program = m.program AND p.client = "
		"m.client AND p.peer_addr = m.peer_addr AND p.peer_port = "
		"m.peer_port AND p.end_class = 'server_close' AND p.teof_ns <= "
		"m.t1_ns AND p.connection_id = (SELECT max(q.connection_id) FROM "
		"connection_metrics q WHERE q.pid = m.pid AND q.client = m.client"
		" AND q.peer_addr = m.peer_addr AND q.peer_port = m.peer_port AND "
		"q.connection_id < m.connection_id) JOIN exchange pe ON "
		"pe.connection_id = p.connection_id AND pe.seq = p.exchanges AND "
		"pe.tfb_ns IS NOT NULL AND p.teof_ns - pe.t6_ns >= %lld "
		"WHERE %s AND m.peer_addr || ':' || m.peer_port = ?1",
		(long long)(MANAGER_IDLE_CLOSE_MIN_MS * 1e6), filter);
	rec = sql ? prepare(db, sql) : NULL;
	sqlite3_free(sql);
	sqlite3_free(filter);
	if (!servers || !gaps || !idle || !rec) {
		rc = 2;
		goto out;
	}
	while (sqlite3_step(servers) == SQLITE_ROW) {
		struct manager_keepalive k = {
			.server = (const char *)sqlite3_column_text(servers, 0)
		};
		struct vec g = { 0 }, c = { 0 };

		sqlite3_bind_text(gaps, 1, k.server, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(gaps) == SQLITE_ROW)
			vec_push(&g, sqlite3_column_double(gaps, 0));
		sqlite3_reset(gaps);
		sqlite3_bind_text(idle, 1, k.server, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(idle) == SQLITE_ROW) {
			double ms = sqlite3_column_double(idle, 0);
			if (ms >= MANAGER_IDLE_CLOSE_MIN_MS)
				vec_push(&c, ms);
			else
				k.closes_with_response++;
		}
		sqlite3_reset(idle);
		sqlite3_bind_text(rec, 1, k.server, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(rec) == SQLITE_ROW)
			k.reconnects = sqlite3_column_int64(rec, 0);
		sqlite3_reset(rec);
		k.gaps = g.v;
		k.ngaps = g.n;
		k.closes = c.v;
		k.ncloses = c.n;
		manager_keepalive_advice(g.v, g.n, &k.recommended_ms, &k.shape);
		fn(ctx, &k);
		free(g.v);
		free(c.v);
	}
out:
	sqlite3_finalize(servers);
	sqlite3_finalize(gaps);
	sqlite3_finalize(idle);
	sqlite3_finalize(rec);
	return rc;
}

struct keepalive_print {
	FILE *out;
	bool csv;
};

static void keepalive_print(void *ctx, const struct manager_keepalive *k)
{
	const struct keepalive_print *p = ctx;
	const double *g = k->gaps, *c = k->closes;
	size_t ng = k->ngaps, nc = k->ncloses;

#define P(v, n, p) ((n) ? manager_percentile((v), (n), (p)) : NAN)
	if (p->csv)
		fprintf(p->out,
			"%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%zu,%.3f,%.3f,%zu,"
			"%lld,%.3f,%s\n",
			k->server, ng, mean_of(g, ng), sd_of(g, ng),
			P(g, ng, 50), P(g, ng, 90), ng ? g[ng - 1] : NAN, nc,
			P(c, nc, 50), nc ? c[0] : NAN, k->closes_with_response,
			(long long)k->reconnects, k->recommended_ms, k->shape);
	else
		fprintf(p->out,
			"%-22.22s %6zu %9.1f %9.1f %9.1f %9.1f %6zu %11.1f "
			"%11.1f %8zu %6lld %11.1f  %s\n",
			k->server, ng, mean_of(g, ng), sd_of(g, ng),
			P(g, ng, 50), P(g, ng, 90), nc, P(c, nc, 50),
			nc ? c[0] : NAN, k->closes_with_response,
			(long long)k->reconnects, k->recommended_ms, k->shape);
#undef P
}

static int view_keepalive(sqlite3 *db, const char *where, bool csv, FILE *out)
{
	struct keepalive_print p = { out, csv };

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
	return manager_keepalive_each(db, where, keepalive_print, &p);
}

/* ---- size ------------------------------------------------------------------
 */

/* Least squares fit y = a x + b; r2 the coefficient of determination. */
void manager_fit_ls(const double *x, const double *y, size_t n, double *a,
		    double *b, double *r2)
{
	double mx = mean_of(x, n), my = mean_of(y, n), sxx = 0, sxy = 0,
	       syy = 0;

	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	*a = sxx > 0 ? sxy / sxx : NAN;
	*b = my - *a * mx;
	*r2 = sxx > 0 && syy > 0 ? sxy * sxy / (sxx * syy) : NAN;
}

/* Theil-Sen: the median of the slopes between pairs of points (on at most
 * 2,000 points taken evenly), the intercept the median of y - a x. Robust
 * against the outliers a shared machine or network produces. */
void manager_fit_theil_sen(const double *x, const double *y, size_t n,
			   double *a, double *b)
{
	size_t k = n < 2000 ? n : 2000, m = 0;
	double *slopes, *rest;

	*a = *b = NAN;
	if (k < 2)
		return;
	slopes = malloc(k * (k - 1) / 2 * sizeof(*slopes));
	rest = malloc(n * sizeof(*rest));
	if (!slopes || !rest)
		goto out;
	for (size_t i = 0; i < k; i++) {
		size_t pi = i * n / k;
		for (size_t j = i + 1; j < k; j++) {
			size_t pj = j * n / k;
			if (x[pj] != x[pi])
				slopes[m++] = (y[pj] - y[pi]) / (x[pj] - x[pi]);
		}
	}
	if (m == 0)
		goto out;
	qsort(slopes, m, sizeof(*slopes), dbl_cmp);
	*a = m % 2 ? slopes[m / 2] : (slopes[m / 2 - 1] + slopes[m / 2]) / 2;
	for (size_t i = 0; i < n; i++)
		rest[i] = y[i] - *a * x[i];
	qsort(rest, n, sizeof(*rest), dbl_cmp);
	*b = n % 2 ? rest[n / 2] : (rest[n / 2 - 1] + rest[n / 2]) / 2;
out:
	free(slopes);
	free(rest);
}

int manager_size_each(sqlite3 *db, const char *where, manager_size_fn fn,
		      void *ctx)
{
	char *sql = sqlite3_mprintf(
		"SELECT peer_addr || ':' || peer_port, dr, (t6_ns - t4_ns) / 1e6 "
		"FROM exchange_metrics WHERE (%s) AND dr > 0 AND t6_ns > t4_ns "
		"ORDER BY 1, dr",
		where ? where : "1");
	sqlite3_stmt *st = sql ? prepare(db, sql) : NULL;
	struct vec x = { 0 }, y = { 0 };
	char *server = NULL;
	int rc;

	sqlite3_free(sql);
	if (!st)
		return 2;
	for (;;) {
		rc = sqlite3_step(st);
		const char *s =
			rc == SQLITE_ROW
				? (const char *)sqlite3_column_text(st, 0)
				: NULL;
		if (server && (!s || strcmp(s, server) != 0)) {
			struct manager_size_fit f = { .server = server,
						      .dr = x.v,
						      .t_ms = y.v,
						      .n = x.n };
			manager_fit_ls(x.v, y.v, x.n, &f.a, &f.b, &f.r2);
			manager_fit_theil_sen(x.v, y.v, x.n, &f.ts_a, &f.ts_b);
			fn(ctx, &f);
			x.n = y.n = 0;
			free(server);
			server = NULL;
		}
		if (!s)
			break;
		if (!server)
			server = strdup(s);
		vec_push(&x, sqlite3_column_double(st, 1));
		vec_push(&y, sqlite3_column_double(st, 2));
	}
	free(server);
	free(x.v);
	free(y.v);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : 2;
}

struct size_print {
	FILE *out;
	bool csv;
};

static void size_print(void *ctx, const struct manager_size_fit *f)
{
	const struct size_print *p = ctx;

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
}

static int view_size(sqlite3 *db, const char *where, bool csv, FILE *out)
{
	struct size_print p = { out, csv };

	if (csv)
		fprintf(out,
			"server,n,a_us_per_byte,b_ms,bandwidth_mb_s,rate_per_s,"
			"r2,ts_a_us_per_byte,ts_b_ms\n");
	else
		fprintf(out, "%-22s %7s %12s %10s %12s %10s %6s %12s %10s\n",
			"server", "n", "a us/byte", "b ms", "1/a MB/s",
			"1/b req/s", "R2", "TS a us/B", "TS b ms");
	return manager_size_each(db, where, size_print, &p);
}

/* ---- family and TLS -------------------------------------------------------
 */

static int view_family(sqlite3 *db, const char *where, bool csv, FILE *out)
{
	static const char *const cols[] = { "te_ms", "tls_ms", "tw_ms", "tr_ms",
					    "tt_ms" };
	char *sql;
	sqlite3_stmt *groups, *st;
	int rc = 0;

	sql = sqlite3_mprintf(
		"SELECT DISTINCT CASE WHEN peer_addr LIKE '%%:%%' THEN 6 ELSE 4 "
		"END, tls FROM exchange_metrics WHERE (%s) ORDER BY 1, 2",
		where ? where : "1");
	groups = sql ? prepare(db, sql) : NULL;
	sqlite3_free(sql);
	if (!groups)
		return 2;
	if (csv)
		fprintf(out, "family,tls,metric,count,p50,p90,mean\n");
	else
		fprintf(out, "%-6s %-5s %-7s %8s %10s %10s %10s\n", "family",
			"tls", "metric", "count", "p50", "p90", "mean");
	while (sqlite3_step(groups) == SQLITE_ROW) {
		int family = sqlite3_column_int(groups, 0);
		int tls = sqlite3_column_int(groups, 1);

		for (size_t i = 0; i < sizeof(cols) / sizeof(*cols); i++) {
			struct vec v = { 0 };
			bool per_conn = i < 2 || i == 4;

			/* connection figures once per connection */
			sql = sqlite3_mprintf(
				"SELECT %s FROM exchange_metrics WHERE (%s) AND "
				"(CASE WHEN peer_addr LIKE '%%:%%' THEN 6 ELSE "
				"4 END) = %d AND tls = %d AND %s IS NOT NULL %s "
				"ORDER BY 1",
				cols[i], where ? where : "1", family, tls,
				cols[i], per_conn ? "AND seq = 1" : "");
			st = sql ? prepare(db, sql) : NULL;
			sqlite3_free(sql);
			if (!st) {
				rc = 2;
				continue;
			}
			while (sqlite3_step(st) == SQLITE_ROW)
				vec_push(&v, sqlite3_column_double(st, 0));
			sqlite3_finalize(st);
			if (v.n == 0)
				continue;
			if (csv)
				fprintf(out, "%d,%d,%s,%zu,%.4f,%.4f,%.4f\n",
					family, tls, cols[i], v.n,
					manager_percentile(v.v, v.n, 50),
					manager_percentile(v.v, v.n, 90),
					mean_of(v.v, v.n));
			else
				fprintf(out,
					"IPv%-3d %-5s %-7s %8zu %10.3f %10.3f "
					"%10.3f\n",
					family, tls ? "yes" : "no", cols[i],
					v.n, manager_percentile(v.v, v.n, 50),
					manager_percentile(v.v, v.n, 90),
					mean_of(v.v, v.n));
			free(v.v);
		}
	}
	sqlite3_finalize(groups);
	return rc;
}

int manager_view(sqlite3 *db, const char *view, const char *where,
		 double window_s, bool csv, FILE *out)
{
	if (strcmp(view, "endings") == 0)
		return view_endings(db, where, window_s, csv, out);
	if (strcmp(view, "keepalive") == 0)
		return view_keepalive(db, where, csv, out);
	if (strcmp(view, "size") == 0)
		return view_size(db, where, csv, out);
	if (strcmp(view, "family") == 0)
		return view_family(db, where, csv, out);
	fprintf(stderr,
		"manager: --view %s: endings, keepalive, size or family\n",
		view);
	return 2;
}
