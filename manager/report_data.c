/* report_data.c - manager report's reading: the span, the connections and
 * exchanges the filter keeps per client, the throughput buckets, the
 * statistics and analyses as text (see report_data.h). Nothing is drawn or
 * written here. */
#define _GNU_SOURCE
#include "report_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses.h"
#include "db.h"
#include "filter.h"
#include "table.h"

const struct report_metric report_metrics[M_COUNT] = {
	[M_TT] = { "tt", "Tt, connection time (T7 - T1)", "ms" },
	[M_TE] = { "te", "Te, connection set-up (T2 - T1)", "ms" },
	[M_RA] = { "ra", "Ra, connection transfer rate", "bytes/s" },
	[M_TW] = { "tw", "Tw, wait for the first byte (TFB - T4)", "ms" },
	[M_TR] = { "tr", "Tr, response (T6 - T5)", "ms" },
	[M_RR] = { "rr", "Rr, response transfer rate", "bytes/s" },
};

static int points_push(struct report_points *p, double x, double y)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct report_point *more = realloc(p->v, cap * sizeof(*more));
		if (!more)
			return -1;
		p->v = more;
		p->cap = cap;
	}
	p->v[p->n].x = x;
	p->v[p->n].y = y;
	p->n++;
	return 0;
}

/* The client named name, added at the end if new; NULL when out of
 * memory (nothing added). */
static struct report_client *client_of(struct report_data *d, const char *name)
{
	struct report_client *more;
	char *copy;

	for (size_t i = 0; i < d->nc; i++)
		if (strcmp(d->c[i].name, name) == 0)
			return &d->c[i];
	copy = strdup(name);
	more = copy ? realloc(d->c, (d->nc + 1) * sizeof(*more)) : NULL;
	if (!more) {
		free(copy);
		return NULL;
	}
	d->c = more;
	memset(&d->c[d->nc], 0, sizeof(d->c[d->nc]));
	d->c[d->nc].name = copy;
	return &d->c[d->nc++];
}

/* sql (sqlite3_malloc'd, may be NULL: out of memory) prepared, and freed;
 * NULL with the reason said. */
static sqlite3_stmt *prepare(struct report_data *d, char *sql)
{
	sqlite3_stmt *st = NULL;

	if (!sql)
		fprintf(stderr, "manager: out of memory\n");
	else if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
		fprintf(stderr, "manager: %s: %s\n", d->db_path,
			sqlite3_errmsg(d->db));
	sqlite3_free(sql);
	return st;
}

/* The end of st's rows: rc is the last step's result, SQLITE_NOMEM when the
 * caller ran out of memory. st finalized; 0, or -1 with the reason said. */
static int finish(struct report_data *d, sqlite3_stmt *st, int rc)
{
	if (rc == SQLITE_NOMEM)
		fprintf(stderr, "manager: out of memory\n");
	else if (rc != SQLITE_DONE)
		fprintf(stderr, "manager: %s: %s\n", d->db_path,
			sqlite3_errmsg(d->db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The column's text, "" for NULL. */
static const char *text(sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);

	return t ? t : "";
}

/* A row of client (column 0) and three figures (columns 1 to 3, NULL
 * where unknown): the figures into the client's m[first..first + 2], the
 * client's connections (first M_TT) or exchanges counted. The client, or
 * NULL when out of memory. */
static struct report_client *figures_push(struct report_client *c,
					  sqlite3_stmt *st, int first)
{
	if (!c)
		return NULL;
	if (first == M_TT)
		c->connections++;
	else
		c->exchanges++;
	for (int i = 0; i < 3; i++)
		if (sqlite3_column_type(st, 1 + i) != SQLITE_NULL &&
		    vec_push(&c->m[first + i],
			     sqlite3_column_double(st, 1 + i)) != 0)
			return NULL;
	return c;
}

static struct report_client *figures_of_row(struct report_data *d,
					    sqlite3_stmt *st, int first)
{
	return figures_push(client_of(d, text(st, 0)), st, first);
}

/* Each client's exchanges the filter keeps, by client: the query's ?1
 * bound to each client's name in turn (d->c, in the clients' order), its
 * rows read by fn. SQLite reaches them through the indexes from the
 * client down, in no sort: far cheaper than one pass ORDER BY client,
 * which sorts every row (1.25 s against 0.16 s at 1 M exchanges). */
typedef int (*client_rows_fn)(struct report_data *d, size_t i, sqlite3_stmt *st,
			      void *ctx);

/* fn per row, and with st NULL after each client's rows. */
static int each_client(struct report_data *d, const char *columns,
		       client_rows_fn fn, void *ctx)
{
	sqlite3_stmt *st = prepare(
		d, sqlite3_mprintf("SELECT %s FROM exchange_metrics WHERE (%s) "
				   "AND client = ?1",
				   columns, d->where));
	int rc = SQLITE_DONE;

	if (!st)
		return -1;
	for (size_t i = 0; rc == SQLITE_DONE && i < d->nc; i++) {
		sqlite3_bind_text(st, 1, d->c[i].name, -1, SQLITE_STATIC);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if (fn(d, i, st, ctx) != 0) {
				rc = SQLITE_NOMEM;
				break;
			}
		if (rc == SQLITE_DONE && fn(d, i, NULL, ctx) != 0)
			rc = SQLITE_NOMEM;
		sqlite3_reset(st);
	}
	return finish(d, st, rc);
}

/* A client's row count (its offset among all rows, ordered by client,
 * follows), and the span. */
static int span_row(struct report_data *d, size_t i, sqlite3_stmt *st,
		    void *ctx)
{
	int64_t first, last;

	(void)ctx;
	if (!st)
		return 0;
	first = sqlite3_column_int64(st, 1);
	last = sqlite3_column_int64(st, 2);
	d->c[i].span_rows = (size_t)sqlite3_column_int64(st, 0);
	if (sqlite3_column_type(st, 1) != SQLITE_NULL &&
	    (!d->span_seen || first < d->t_first))
		d->t_first = first;
	if (sqlite3_column_type(st, 2) != SQLITE_NULL &&
	    (!d->span_seen || last > d->t_last))
		d->t_last = last;
	d->span_seen |= sqlite3_column_type(st, 1) != SQLITE_NULL;
	return 0;
}

/* The span and the row count, which decide the sampling; each client's
 * offset in the rows ordered by client. */
static int read_span(struct report_data *d)
{
	size_t rows = 0;

	if (each_client(d, "count(*), min(t3_ns), max(coalesce(t6_ns, t3_ns))",
			span_row, NULL) != 0)
		return -1;
	for (size_t i = 0; i < d->nc; i++) {
		d->c[i].offset = rows;
		rows += d->c[i].span_rows;
	}
	d->sample_every = rows > REPORT_MAX_POINTS
				  ? (size_t)(rows / REPORT_MAX_POINTS + 1)
				  : 1;
	d->bucket_s =
		stats_round_step((double)(d->t_last - d->t_first) / 1e9, 100);
	return 0;
}

/* The statistics table's lines of client c's connection figures. */
static void table_connections(struct table_build *t,
			      const struct report_client *c)
{
	static const int of[][2] = { { TABLE_TT, M_TT },
				     { TABLE_TE, M_TE },
				     { TABLE_RA, M_RA } };

	for (size_t i = 0; c && i < sizeof(of) / sizeof(*of); i++)
		table_build_group(t, of[i][0], c->name, c->m[of[i][1]].v,
				  c->m[of[i][1]].n);
}

/* Tt, Te, Ra of the connections with an exchange the filter keeps; the
 * statistics table's lines of them, client by client. */
static int read_connections(struct report_data *d, struct table_build *t)
{
	struct report_client *c;
	size_t last = SIZE_MAX; /* an index: a new client moves d->c */
	char *conns = filter_connections(d->where);
	sqlite3_stmt *st = prepare(
		d, conns ? sqlite3_mprintf("SELECT client, tt_ms, te_ms, ra "
					   "FROM connection_metrics m WHERE "
					   "%s ORDER BY client",
					   conns)
			 : NULL);
	int rc;

	sqlite3_free(conns);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!(c = figures_of_row(d, st, M_TT))) {
			rc = SQLITE_NOMEM;
			break;
		}
		if (last != (size_t)(c - d->c) && last != SIZE_MAX)
			table_connections(t, &d->c[last]);
		last = (size_t)(c - d->c);
	}
	if (rc == SQLITE_DONE && last != SIZE_MAX)
		table_connections(t, &d->c[last]);
	return finish(d, st, rc);
}

/* The bytes received per bucket of one client, in the pass over the
 * exchanges: summed by bucket number, put in the client's rate (buckets
 * in order, those with a response only) at the end. The sums are of whole
 * bytes: exact, whatever the order of the rows. */
struct buckets {
	struct report_client *c;
	double *sum;
	bool *seen;
	size_t n;
};

static int buckets_add(struct buckets *b, int64_t bucket, double bytes)
{
	if (bucket < 0)
		bucket = 0; /* not before the first request */
	if ((size_t)bucket >= b->n) {
		size_t n = b->n ? b->n : 128;
		double *sum;
		bool *seen;

		while (n <= (size_t)bucket)
			n *= 2;
		sum = realloc(b->sum, n * sizeof(*sum));
		if (sum)
			b->sum = sum;
		seen = sum ? realloc(b->seen, n * sizeof(*seen)) : NULL;
		if (!seen)
			return -1;
		b->seen = seen;
		memset(b->sum + b->n, 0, (n - b->n) * sizeof(*b->sum));
		memset(b->seen + b->n, 0, (n - b->n) * sizeof(*b->seen));
		b->n = n;
	}
	b->sum[bucket] += bytes;
	b->seen[bucket] = true;
	return 0;
}

/* The buckets into the rate of their client. */
static int buckets_flush(struct buckets *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->seen[i] &&
		    points_push(&b->c->rate, (double)i, b->sum[i]) != 0)
			return -1;
	return 0;
}

static int client_cmp(const void *name, const void *client)
{
	return strcmp(name, ((const struct report_client *)client)->name);
}

/* The index in d->c of the client named name (d->c is ordered by name, as
 * the connections' query gave it); SIZE_MAX when none. */
static size_t client_index(const struct report_data *d, const char *name)
{
	const struct report_client *c =
		d->nc ? bsearch(name, d->c, d->nc, sizeof(*d->c), client_cmp)
		      : NULL;

	if (c)
		return (size_t)(c - d->c);
	for (size_t i = 0; i < d->nc; i++) /* not in order after all */
		if (strcmp(name, d->c[i].name) == 0)
			return i;
	return SIZE_MAX;
}

/* Tw, Tr, Rr of the exchanges, the bytes per bucket, the samples of the
 * scatter and the series: one pass in the table's order (no sort), each
 * row's client found by name. */
static int read_exchanges(struct report_data *d)
{
	sqlite3_stmt *st = prepare(
		d, sqlite3_mprintf("SELECT client, tw_ms, tr_ms, rr, dr, "
				   "(t6_ns - t3_ns) / 1e6, t3_ns, t6_ns FROM "
				   "exchange_metrics WHERE (%s)",
				   d->where));
	int64_t bucket_ns = (int64_t)(d->bucket_s * 1e9);
	struct buckets *b = calloc(d->nc + 1, sizeof(*b));
	size_t last = SIZE_MAX;
	int rc = SQLITE_NOMEM;

	if (!st || !b)
		goto out;
	for (size_t i = 0; i < d->nc; i++)
		b[i].c = &d->c[i];
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = text(st, 0);
		struct report_client *c;
		size_t k;

		if (last == SIZE_MAX || strcmp(name, d->c[last].name) != 0)
			last = client_index(d, name);
		if (last == SIZE_MAX) { /* no connection of its client */
			fprintf(stderr,
				"manager: %s: an exchange of client %s, "
				"which has no connection\n",
				d->db_path, name);
			rc = SQLITE_ERROR;
			break;
		}
		c = &d->c[last];
		if (!figures_push(c, st, M_TW)) {
			rc = SQLITE_NOMEM;
			break;
		}
		/* the throughput: the bytes received by the bucket of T6 */
		if (sqlite3_column_type(st, 7) != SQLITE_NULL &&
		    buckets_add(&b[last],
				bucket_ns > 0 ? (sqlite3_column_int64(st, 7) -
						 d->t_first) /
							bucket_ns
					      : 0,
				sqlite3_column_double(st, 4)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		/* the k-th of all rows ordered by client */
		k = c->offset + c->ranked++;
		if (k % d->sample_every)
			continue;
		/* log-log: positive values only */
		if (sqlite3_column_int64(st, 4) > 0 &&
		    sqlite3_column_double(st, 5) > 0 &&
		    points_push(&c->scatter,
				(double)sqlite3_column_int64(st, 4),
				sqlite3_column_double(st, 5)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		if (sqlite3_column_type(st, 2) != SQLITE_NULL &&
		    points_push(
			    &c->series,
			    (double)(sqlite3_column_int64(st, 6) - d->t_first) /
				    1e9,
			    sqlite3_column_double(st, 2)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	for (size_t i = 0; rc == SQLITE_DONE && i < d->nc; i++)
		if (buckets_flush(&b[i]) != 0)
			rc = SQLITE_NOMEM;
out:
	for (size_t i = 0; b && i < d->nc; i++) {
		free(b[i].sum);
		free(b[i].seen);
	}
	free(b);
	if (!st)
		return -1;
	return finish(d, st, rc);
}

/* The statistics table's lines of client i's exchange figures (at the end
 * of its rows): Ts and Rs gathered in ts_rs (those the plots do not
 * keep), Tw, Tr, Rr the client's own. */
static int table_row(struct report_data *d, size_t i, sqlite3_stmt *st,
		     void *ctx)
{
	struct table_build *t = ((void **)ctx)[0];
	struct vec *ts_rs = ((void **)ctx)[1];
	const struct report_client *c = &d->c[i];

	if (st) {
		for (int k = 0; k < 2; k++)
			if (sqlite3_column_type(st, k) != SQLITE_NULL &&
			    vec_push(&ts_rs[k], sqlite3_column_double(st, k)) !=
				    0)
				return -1;
		return 0;
	}
	table_build_group(t, TABLE_TS, c->name, ts_rs[0].v, ts_rs[0].n);
	table_build_group(t, TABLE_TW, c->name, c->m[M_TW].v, c->m[M_TW].n);
	table_build_group(t, TABLE_TR, c->name, c->m[M_TR].v, c->m[M_TR].n);
	table_build_group(t, TABLE_RS, c->name, ts_rs[1].v, ts_rs[1].n);
	table_build_group(t, TABLE_RR, c->name, c->m[M_RR].v, c->m[M_RR].n);
	ts_rs[0].n = ts_rs[1].n = 0;
	return 0;
}

/* The statistics table's lines of the exchanges' figures, client by
 * client (after read_exchanges: Tw, Tr, Rr are complete). */
static int table_exchanges(struct report_data *d, struct table_build *t)
{
	struct vec ts_rs[2] = { { 0 } };
	void *ctx[2] = { t, ts_rs };
	int rc = each_client(d, "ts_ms, rs", table_row, ctx);

	vec_free(&ts_rs[0]);
	vec_free(&ts_rs[1]);
	return rc;
}

/* The statistics table per client, made in the passes above, into
 * d->stats. 0, or -1 (said). */
static int table_text(struct report_data *d, struct table_build *t)
{
	size_t len = 0;
	FILE *f = open_memstream(&d->stats, &len);
	int rc;

	if (!f) {
		fprintf(stderr, "manager: out of memory\n");
		return -1;
	}
	rc = table_build_end(t, "client", f);
	if (fclose(f) != 0 && rc == 0) {
		fprintf(stderr, "manager: out of memory\n");
		rc = 2;
	}
	return rc ? -1 : 0;
}

int report_data_read(struct report_data *d)
{
	struct table_build t;
	int rc = -1;

	/* the table sorts the figures as they come (in place), client by
	 * client; they are sorted below anyway */
	if (table_build_begin(&t, false, false) == 0 &&
	    read_connections(d, &t) == 0 && read_span(d) == 0 &&
	    read_exchanges(d) == 0 && table_exchanges(d, &t) == 0 &&
	    table_text(d, &t) == 0)
		rc = 0;
	table_build_free(&t);
	if (rc != 0)
		return -1;
	for (size_t i = 0; i < d->nc; i++)
		for (int m = 0; m < M_COUNT; m++) {
			struct vec *v = &d->c[i].m[m];
			struct report_figures *f = &d->c[i].f[m];

			stats_sort(v->v, v->n);
			if (!(f->n = v->n))
				continue;
			f->p50 = stats_percentile(v->v, v->n, 50);
			f->p90 = stats_percentile(v->v, v->n, 90);
			f->p99 = stats_percentile(v->v, v->n, 99);
			f->max = v->v[v->n - 1];
		}
	return 0;
}

void report_data_shrink(struct report_data *d)
{
	for (size_t i = 0; i < d->nc; i++)
		for (int m = 0; m < M_COUNT; m++)
			vec_free(&d->c[i].m[m]);
}

void report_data_free(struct report_data *d)
{
	for (size_t i = 0; i < d->nc; i++) {
		free(d->c[i].name);
		for (int m = 0; m < M_COUNT; m++)
			vec_free(&d->c[i].m[m]);
		free(d->c[i].scatter.v);
		free(d->c[i].series.v);
		free(d->c[i].rate.v);
	}
	free(d->c);
	d->c = NULL;
	d->nc = 0;
	free(d->stats);
	d->stats = NULL;
}

char *report_data_text(const struct report_data *d, const char *view)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f) {
		fprintf(stderr, "manager: out of memory\n");
		return NULL;
	}
	if (!view) /* made in report_data_read's passes */
		rc = d->stats && fputs(d->stats, f) < 0 ? 2 : 0;
	else
		rc = analyses_view(d->db, view, d->where, 0, false, f);
	if (fclose(f) != 0 && rc == 0) {
		fprintf(stderr, "manager: out of memory\n");
		rc = 2;
	}
	if (rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}
