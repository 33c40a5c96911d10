/* findings.c - the findings (findings.h, docs/findings.md): for each, the
 * SQL over the views that finds its subjects (a server, a program run, a
 * name), the test against its named thresholds, the evidence and the
 * advice; then the ranking by time at stake and the output.
 *
 * A program run is a process (client, pid, start): a finding about how a
 * program uses connections (no_reuse, client_stall, dns repeats) is judged
 * per process, never across unrelated runs that share a database.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses.h"
#include "db.h"
#include "filter.h"
#include "findings.h"
#include "stats.h"
#include "text.h"

struct idle;
struct wait_list;

/* What every finding's query needs: the database, the filter over
 * exchange_metrics and the same over connection_metrics m. */
struct scan {
	sqlite3 *db;
	const char *where, *conns;
	struct findings *out;
	struct idle *idle;	 /* idle_close's rows of one server */
	struct wait_list *waits; /* server_wait's servers */
	struct vec *vals;	 /* values()'s vector */
	const struct findings_sizes *sizes; /* transfer_limited's fits */
	struct findings_rows *rows;	    /* client_stall's, server_wait's */
	struct findings_rows *own_rows;	    /* read here: freed at the end */
};

static int say_nomem(void)
{
	fprintf(stderr, "manager: out of memory\n");
	return 2;
}

/* A new finding in s->out, NULL when out of memory. */
static struct finding *add(struct scan *s, const char *id, double at_stake)
{
	struct findings *f = s->out;
	struct finding *x;

	if (f->n == f->cap) {
		size_t more = f->cap ? f->cap * 2 : 16;
		x = realloc(f->v, more * sizeof(*x));
		if (!x)
			return NULL;
		f->v = x;
		f->cap = more;
	}
	x = &f->v[f->n++];
	memset(x, 0, sizeof(*x));
	x->id = id;
	x->at_stake_ms = at_stake;
	return x;
}

static void put(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* The rows of a query (sqlite3_mprintf'd by the caller, freed here), each
 * given to fn: 0, or 2 on error (said). fn returns 0, or 2 (said). */
typedef int (*row_fn)(struct scan *s, sqlite3_stmt *st);
static int each_row(struct scan *s, char *sql, row_fn fn)
{
	sqlite3_stmt *st;
	int rc;

	if (!sql)
		return say_nomem();
	st = db_prepare(s->db, sql);
	sqlite3_free(sql);
	if (!st)
		return 2;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (fn(s, st) != 0) {
			sqlite3_finalize(st);
			return 2;
		}
	if (rc != SQLITE_DONE)
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : 2;
}

/* Column col as text, "?" when NULL. */
static const char *text(sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	return t ? t : "?";
}

/* A program's name without its directory. */
static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static int push_value(struct scan *s, sqlite3_stmt *st)
{
	if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		return 0;
	return vec_push(s->vals, sqlite3_column_double(st, 0)) == 0
		       ? 0
		       : say_nomem();
}

/* The values of a query's first column, sorted, into v (emptied first):
 * 0, or 2 (said). sql is freed. */
static int values(struct scan *s, char *sql, struct vec *v)
{
	int rc;

	v->n = 0;
	s->vals = v;
	rc = each_row(s, sql, push_value);
	if (rc == 0)
		stats_sort(v->v, v->n);
	return rc;
}

static double p(const struct vec *v, double pct)
{
	return v->n ? stats_percentile(v->v, v->n, pct) : NAN;
}

#define SERVER "m.peer_addr || ':' || m.peer_port"

/* ---- no_reuse: per program run and server ------------------------------ */

/* The most exchanges a server kept on one connection, for any client and
 * any filter: whether its responses allow keep-alive at all. -1 on error
 * (said). Asked only when no_reuse fires: it reads every connection to the
 * server (the index on peer_addr, peer_port). */
static int64_t most_per_connection(struct scan *s, sqlite3_stmt *row)
{
	char *sql = sqlite3_mprintf(
		"SELECT max(n) FROM (SELECT (SELECT count(*) FROM exchange e "
		"WHERE e.connection_id = c.id) AS n FROM connection c WHERE "
		"c.peer_addr = %Q AND c.peer_port = %d)",
		text(row, 9), sqlite3_column_int(row, 10));
	sqlite3_stmt *st = sql ? db_prepare(s->db, sql) : NULL;
	int64_t most = -1;

	if (!sql)
		say_nomem();
	sqlite3_free(sql);
	if (!st)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		most = sqlite3_column_int64(st, 0);
	else
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	return most;
}

static int no_reuse_row(struct scan *s, sqlite3_stmt *st)
{
	double conns = sqlite3_column_double(st, 4);
	double exch = sqlite3_column_double(st, 5);
	double setup = sqlite3_column_double(st, 6);
	double client_closed = sqlite3_column_double(st, 7);
	/* a connection the server closed after it idled was reusable:
	 * that is idle_close's finding, not this one's */
	double idle_closed = sqlite3_column_double(st, 8);
	struct finding *f;
	int64_t most;

	if (exch < FINDINGS_MIN_EXCHANGES ||
	    conns - idle_closed < FINDINGS_NO_REUSE_MIN_NEW_SHARE * exch)
		return 0;
	if ((most = most_per_connection(s, st)) < 0)
		return 2;
	/* reuse would open one connection where this run opened conns: the
	 * handshakes of the others are the time at stake */
	if (!(f = add(s, "no_reuse", setup * (conns - 1) / conns)))
		return say_nomem();
	put(f->subject, sizeof(f->subject), "program %s (pid %d) to %s",
	    base_name(text(st, 1)), sqlite3_column_int(st, 2), text(st, 3));
	put(f->evidence, sizeof(f->evidence),
	    "%.0f exchanges on %.0f connections (%.2f per connection); "
	    "connect + TLS %.3f ms per connection, %.1f ms in all; "
	    "%.0f%% closed by the client; the server kept up to %lld "
	    "exchanges on one connection",
	    exch, conns, exch / conns, setup / conns, setup,
	    100 * client_closed / conns, (long long)most);
	put(f->advice, sizeof(f->advice), "%s",
	    client_closed * 2 >= conns
		    ? "the client closes each connection after its exchange: "
		      "keep connections open and reuse them (HTTP keep-alive, "
		      "a connection pool, ab -k, one curl for several URLs)"
		    : "each connection ends with its response: have the client "
		      "ask for keep-alive (HTTP/1.1, Connection: keep-alive, "
		      "ab -k) and check that the server allows it (nginx "
		      "keepalive_timeout, keepalive_requests)");
	return 0;
}

static int no_reuse(struct scan *s)
{
	return each_row(
		s,
		sqlite3_mprintf(
			"SELECT c.process_id, m.program, m.pid, " SERVER
			" AS server, count(*), total(m.exchanges), "
			"total(coalesce(m.te_ms, 0) + coalesce(m.tls_ms, 0)), "
			"total(m.end_class = 'client_close'), "
			"total(m.end_class = 'server_close' AND m.teof_ns - "
			"(SELECT max(e.t6_ns) FROM exchange e WHERE "
			"e.connection_id = m.connection_id) >= %lld), "
			"m.peer_addr, m.peer_port FROM connection_metrics m "
			"JOIN connection c ON c.id = m.connection_id WHERE "
			"(%s) AND m.exchanges > 0 GROUP BY c.process_id, "
			"server ORDER BY c.process_id, server",
			(long long)(ANALYSES_IDLE_CLOSE_MIN_MS * 1e6),
			s->conns),
		no_reuse_row);
}

/* ---- groups: one query, its rows grouped by their first column --------- */

#define GROUP_COLS 5
/* A group's values: per column (2, 3, ... of the query) the values that
 * are not NULL, sorted. */
struct group {
	const char *key, *label; /* columns 0 and 1 */
	struct vec v[GROUP_COLS];
};
typedef int (*group_fn)(struct scan *s, struct group *g);

/* each_group's groups as the rows come: keys found through a hash of
 * their text (open addressing, a power of two slots, at most half full). */
struct group_at {
	char *key, *label;
	bool null;   /* the key was NULL (shown "?"): first */
	int64_t num; /* the key as a number */
	struct vec v[GROUP_COLS];
	size_t rows, counted; /* findings_rows_add's */
};
struct groups {
	struct group_at *v;
	size_t n, cap;
	size_t *slot; /* index + 1, 0: free */
	size_t nslots;
	bool numeric; /* keys in numeric order, else in strcmp's */
};

static uint64_t hash_text(const char *t)
{
	uint64_t h = 14695981039346656037u; /* FNV-1a */

	for (; *t; t++)
		h = (h ^ (unsigned char)*t) * 1099511628211u;
	return h;
}

/* The group of key (label: of its first row), added if new. NULL when out
 * of memory. */
static struct group_at *group_of(struct groups *gs, const char *key, bool null,
				 const char *label)
{
	size_t i;

	if (2 * (gs->n + 1) > gs->nslots) {
		size_t nslots = gs->nslots ? gs->nslots * 2 : 64;
		size_t *slot = calloc(nslots, sizeof(*slot));

		if (!slot)
			return NULL;
		for (size_t k = 0; k < gs->n; k++) {
			for (i = hash_text(gs->v[k].key) & (nslots - 1);
			     slot[i]; i = (i + 1) & (nslots - 1))
				;
			slot[i] = k + 1;
		}
		free(gs->slot);
		gs->slot = slot;
		gs->nslots = nslots;
	}
	for (i = hash_text(key) & (gs->nslots - 1); gs->slot[i];
	     i = (i + 1) & (gs->nslots - 1)) {
		struct group_at *g = &gs->v[gs->slot[i] - 1];

		if (g->null == null && strcmp(g->key, key) == 0)
			return g;
	}
	if (gs->n == gs->cap) {
		size_t more = gs->cap ? gs->cap * 2 : 16;
		void *x = realloc(gs->v, more * sizeof(*gs->v));

		if (!x)
			return NULL;
		gs->v = x;
		gs->cap = more;
	}
	gs->v[gs->n] = (struct group_at){ .null = null,
					  .num = strtoll(key, NULL, 10) };
	if (!(gs->v[gs->n].key = strdup(key)) ||
	    !(gs->v[gs->n].label = strdup(label))) {
		free(gs->v[gs->n].key);
		return NULL;
	}
	gs->slot[i] = ++gs->n;
	return &gs->v[gs->n - 1];
}

/* The order of the groups' keys: as SQLite's ORDER BY would have them. */
static int group_order(const void *a, const void *b, void *numeric)
{
	const struct group_at *x = *(struct group_at *const *)a,
			      *y = *(struct group_at *const *)b;

	if (x->null != y->null)
		return x->null ? -1 : 1;
	if (*(bool *)numeric)
		return (x->num > y->num) - (x->num < y->num);
	return strcmp(x->key, y->key);
}

/* The groups in the keys' order, malloc'd; NULL when out of memory
 * (said). */
static struct group_at **groups_ordered(struct groups *gs)
{
	struct group_at **order = calloc(gs->n + 1, sizeof(*order));

	if (!order) {
		say_nomem();
		return NULL;
	}
	for (size_t i = 0; i < gs->n; i++)
		order[i] = &gs->v[i];
	qsort_r(order, gs->n, sizeof(*order), group_order, &gs->numeric);
	return order;
}

static void groups_free(struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		free(gs->v[i].key);
		free(gs->v[i].label);
		for (int c = 0; c < GROUP_COLS; c++)
			vec_free(&gs->v[i].v[c]);
	}
	free(gs->v);
	free(gs->slot);
	memset(gs, 0, sizeof(*gs));
}

/* Each group's values sorted, fn called for each in the keys' order. */
static int groups_call(struct scan *s, struct groups *gs, int ncols,
		       group_fn fn)
{
	struct group_at **order = groups_ordered(gs);
	int rc = 0;

	if (!order)
		return 2;
	for (size_t i = 0; rc == 0 && i < gs->n; i++) {
		struct group g = { order[i]->key, order[i]->label, { { 0 } } };

		for (int c = 0; c < ncols; c++) {
			stats_sort(order[i]->v[c].v, order[i]->v[c].n);
			g.v[c] = order[i]->v[c];
		}
		rc = fn(s, &g);
	}
	free(order);
	return rc;
}

/* The rows of sql (freed here; column 0 the key, a number when numeric;
 * column 1 a label; then up to GROUP_COLS values, NULLs left out), one
 * call of fn per key, in the keys' order (a NULL key, "?", first), each
 * column's values sorted: 0, or 2 (said). One pass over the data in any
 * order (no sort by SQLite), whatever the number of groups. */
static int each_group(struct scan *s, char *sql, bool numeric, group_fn fn)
{
	struct groups gs = { .numeric = numeric };
	struct group_at *g = NULL;
	sqlite3_stmt *st;
	int rc = 0, step, ncols;

	if (!sql)
		return say_nomem();
	st = db_prepare(s->db, sql);
	sqlite3_free(sql);
	if (!st)
		return 2;
	ncols = sqlite3_column_count(st) - 2;
	if (ncols > GROUP_COLS)
		ncols = GROUP_COLS;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		bool null = sqlite3_column_type(st, 0) == SQLITE_NULL;
		const char *k = text(st, 0);

		/* the rows of a group mostly come together */
		if ((!g || g->null != null || strcmp(g->key, k) != 0) &&
		    !(g = group_of(&gs, k, null, text(st, 1)))) {
			rc = say_nomem();
			break;
		}
		for (int i = 0; i < ncols; i++)
			if (sqlite3_column_type(st, 2 + i) != SQLITE_NULL &&
			    vec_push(&g->v[i],
				     sqlite3_column_double(st, 2 + i)) != 0) {
				rc = say_nomem();
				break;
			}
		if (rc)
			break;
	}
	if (rc == 0 && step != SQLITE_DONE) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(s->db));
		rc = 2;
	}
	sqlite3_finalize(st);
	if (rc == 0)
		rc = groups_call(s, &gs, ncols, fn);
	groups_free(&gs);
	return rc;
}

/* What client_stall and server_wait take of every exchange (one pass: the
 * report's keep-alive view's, or rows_read's). */
struct findings_rows {
	/* by program run (process.id): v[0] the gaps from ..MIN_MS to
	 * ..MAX_MS, rows the exchanges, counted the gaps */
	struct groups runs;
	struct group_at *last; /* the previous row's */
	/* by server: v[0] Tw, v[1] Trecv, v[2] Tw less the path's round
	 * trip (at least 0), of the exchanges with a Tw */
	struct groups servers;
	struct group_at *last_server;
};

struct findings_rows *findings_rows_new(void)
{
	struct findings_rows *st = calloc(1, sizeof(*st));

	if (!st)
		say_nomem();
	else
		st->runs.numeric = true;
	return st;
}

void findings_rows_free(struct findings_rows *st)
{
	if (!st)
		return;
	groups_free(&st->runs);
	groups_free(&st->servers);
	free(st);
}

/* The group of key in gs, *last tried first. NULL when out of memory. */
static struct group_at *group_cached(struct groups *gs, struct group_at **last,
				     const char *key, bool null)
{
	if (!*last || (*last)->null != null || strcmp((*last)->key, key) != 0)
		*last = group_of(gs, key, null, "");
	return *last;
}

int findings_rows_add(void *rows, const struct analyses_row *r)
{
	struct findings_rows *st = rows;
	struct group_at *g = st->last, *w;
	double think;

	if (!g || g->num != r->process) {
		char key[24];

		snprintf(key, sizeof(key), "%lld", (long long)r->process);
		if (!(g = st->last = group_of(&st->runs, key, false, "")))
			goto nomem;
	}
	g->rows++;
	if (r->has_gap) {
		g->counted++;
		/* the stalls: longer gaps are the user's or the program's
		 * idle time, shorter ones no stall */
		if (r->gap >= FINDINGS_STALL_MIN_MS &&
		    r->gap <= FINDINGS_STALL_MAX_MS &&
		    vec_push(&g->v[0], r->gap) != 0)
			goto nomem;
	}
	if (!r->has_tw)
		return 0;
	/* the server's own time: Tw less the path's round trip, where
	 * TCP_INFO gave it (as SQLite's max(tw - rtt / 1e3, 0)) */
	think = r->tw - (r->has_rtt ? r->min_rtt_us / 1e3 : 0);
	if (!(think > 0))
		think = 0;
	if (!(w = group_cached(&st->servers, &st->last_server,
			       r->server ? r->server : "?", !r->server)) ||
	    vec_push(&w->v[0], r->tw) != 0 ||
	    (r->has_trecv && vec_push(&w->v[1], r->trecv) != 0) ||
	    vec_push(&w->v[2], think) != 0)
		goto nomem;
	return 0;
nomem:
	say_nomem();
	return -1;
}

/* The rows the caller gave, else read once here (for both findings).
 * NULL on error (said). */
static struct findings_rows *rows_of(struct scan *s)
{
	if (s->rows)
		return s->rows;
	if (!(s->own_rows = findings_rows_new()))
		return NULL;
	if (analyses_rows(s->db, s->where, findings_rows_add, s->own_rows)) {
		findings_rows_free(s->own_rows);
		s->own_rows = NULL;
		return NULL;
	}
	return s->rows = s->own_rows;
}

static double sum(const struct vec *v)
{
	return v->n ? stats_mean(v->v, v->n) * v->n : 0;
}

/* ---- handshake_share: per server --------------------------------------- */

static int handshake_group(struct scan *s, struct group *g)
{
	const struct vec *te = &g->v[0], *tls = &g->v[1], *both = &g->v[2];
	double setup = sum(both), tt = sum(&g->v[3]), exch = sum(&g->v[4]);
	struct finding *f;

	/* the share of one connection, or a few, is the noise of their
	 * connects (a loaded machine delays a loopback connect by tens of
	 * ms), not the server's */
	if (exch < FINDINGS_MIN_EXCHANGES ||
	    both->n < FINDINGS_MIN_CONNECTIONS || tt <= 0 ||
	    setup < FINDINGS_HANDSHAKE_MIN_SHARE * tt ||
	    p(both, 50) < FINDINGS_HANDSHAKE_MIN_MS)
		return 0;
	if (!(f = add(s, "handshake_share", setup)))
		return say_nomem();
	put(f->subject, sizeof(f->subject), "server %s", g->key);
	put(f->evidence, sizeof(f->evidence),
	    "connect + TLS %.0f%% of Tt over %zu connections; Te p50 %.3f "
	    "ms; %.1f ms in all; ",
	    100 * setup / tt, both->n, p(te, 50), setup);
	put(f->evidence + strlen(f->evidence),
	    sizeof(f->evidence) - strlen(f->evidence),
	    tls->n ? "TLS p50 %.3f ms" : "no TLS", p(tls, 50));
	put(f->advice, sizeof(f->advice),
	    "open fewer connections: reuse them (keep-alive, HTTP/2), resume "
	    "TLS sessions (tickets, 0-RTT), or move the server nearer");
	return 0;
}

static int handshake_share(struct scan *s)
{
	return each_group(
		s,
		sqlite3_mprintf(
			"SELECT " SERVER " AS server, NULL, m.te_ms, m.tls_ms, "
			"coalesce(m.te_ms, 0) + coalesce(m.tls_ms, 0), "
			"m.tt_ms, m.exchanges FROM connection_metrics m WHERE "
			"(%s) AND m.exchanges > 0 AND m.tt_ms IS NOT NULL",
			s->conns),
		false, handshake_group);
}

/* ---- server_wait: per server, against the others ---------------------- */

struct wait_server {
	char server[64];
	double n, tw50, tw99, trecv50, sum_tw, sum_trecv, think;
};

struct wait_list {
	struct wait_server *v;
	size_t n, cap;
};

static int wait_group(struct scan *s, struct group *g)
{
	struct wait_list *l = s->waits;
	struct wait_server *w;

	if (l->n == l->cap) {
		size_t more = l->cap ? l->cap * 2 : 16;
		void *x = realloc(l->v, more * sizeof(*l->v));

		if (!x)
			return say_nomem();
		l->v = x;
		l->cap = more;
	}
	w = &l->v[l->n++];
	snprintf(w->server, sizeof(w->server), "%s", g->key);
	w->n = g->v[0].n;
	w->tw50 = p(&g->v[0], 50);
	w->tw99 = p(&g->v[0], 99);
	w->trecv50 = p(&g->v[1], 50);
	w->sum_tw = sum(&g->v[0]);
	w->sum_trecv = sum(&g->v[1]);
	w->think = sum(&g->v[2]);
	return 0;
}

/* One server's finding, if it has one, against the others' p50s. */
static int wait_judge(struct scan *s, const struct wait_list *l, size_t i)
{
	const struct wait_server *w = &l->v[i];
	struct vec others = { 0 };
	double other50 = NAN, share;
	bool dominates, stands_out;
	struct finding *f;

	if (w->n < FINDINGS_MIN_EXCHANGES ||
	    !(w->tw50 >= FINDINGS_SERVER_WAIT_MIN_MS))
		return 0;
	for (size_t j = 0; j < l->n; j++)
		if (j != i && l->v[j].n >= FINDINGS_MIN_EXCHANGES &&
		    vec_push(&others, l->v[j].tw50) != 0) {
			vec_free(&others);
			return say_nomem();
		}
	if (others.n) {
		stats_sort(others.v, others.n);
		other50 = p(&others, 50);
	}
	vec_free(&others);
	share = w->sum_tw / (w->sum_tw + w->sum_trecv);
	dominates = share >= FINDINGS_SERVER_WAIT_MIN_SHARE;
	stands_out = other50 >= 0 &&
		     w->tw50 >= FINDINGS_SERVER_WAIT_FACTOR * other50;
	if (!dominates && !stands_out)
		return 0;
	if (!(f = add(s, "server_wait", w->think)))
		return say_nomem();
	put(f->subject, sizeof(f->subject), "server %s", w->server);
	put(f->evidence, sizeof(f->evidence),
	    "Tw p50 %.3f ms, p99 %.3f ms over %.0f exchanges; Trecv p50 "
	    "%.3f ms; waiting %.0f%% of Tw + Trecv; the other servers' Tw "
	    "p50 %s",
	    w->tw50, w->tw99, w->n, w->trecv50, 100 * share,
	    isnan(other50) ? "(no other server)" : "");
	if (!isnan(other50)) {
		size_t len = strlen(f->evidence);
		put(f->evidence + len, sizeof(f->evidence) - len, "%.3f ms",
		    other50);
	}
	put(f->advice, sizeof(f->advice),
	    "the server takes the time before its first byte: look at what "
	    "it does per request (its logs' request time, the application, "
	    "its database, its queue of workers); caching the answer or "
	    "sending headers early helps");
	return 0;
}

static int server_wait(struct scan *s)
{
	struct findings_rows *rows = rows_of(s);
	struct wait_list l = { 0 };
	int rc;

	if (!rows)
		return 2;
	s->waits = &l;
	rc = groups_call(s, &rows->servers, 3, wait_group);
	for (size_t i = 0; rc == 0 && i < l.n; i++)
		rc = wait_judge(s, &l, i);
	free(l.v);
	return rc;
}

/* ---- transfer_limited: the seed 002 fit per server --------------------- */

int findings_sizes_add(struct findings_sizes *sizes,
		       const struct analyses_size_fit *fit)
{
	struct findings_size *z;
	double a = fit->ts_a;

	if (sizes->n == sizes->cap) {
		size_t more = sizes->cap ? sizes->cap * 2 : 16;
		void *x = realloc(sizes->v, more * sizeof(*sizes->v));

		if (!x) {
			say_nomem();
			return -1;
		}
		sizes->v = x;
		sizes->cap = more;
	}
	z = &sizes->v[sizes->n];
	*z = (struct findings_size){ .n = fit->n, .a = a, .b = fit->ts_b };
	if (!(z->server = strdup(fit->server))) {
		say_nomem();
		return -1;
	}
	sizes->n++;
	if (!fit->n)
		return 0;
	z->dr_first = fit->dr[0];
	z->dr_last = fit->dr[fit->n - 1];
	/* dr is ascending: its p50 is the middle value */
	z->dr_p50 = stats_percentile(fit->dr, fit->n, 50);
	for (size_t i = 0; i < fit->n; i++) {
		z->sum_t += fit->t_ms[i];
		z->sum_size += a * fit->dr[i];
	}
	return 0;
}

static int sizes_add(void *sizes, const struct analyses_size_fit *fit)
{
	return findings_sizes_add(sizes, fit);
}

void findings_sizes_free(struct findings_sizes *sizes)
{
	for (size_t i = 0; i < sizes->n; i++)
		free(sizes->v[i].server);
	free(sizes->v);
	memset(sizes, 0, sizeof(*sizes));
}

/* One server's transfer_limited finding, if it has one. 0, or -1 (said). */
static int transfer_judge(struct scan *s, const struct findings_size *z)
{
	double a = z->a, rate;
	struct vec path = { 0 }, rr = { 0 };
	struct finding *f;
	char *sql;

	if (z->n < FINDINGS_MIN_EXCHANGES || !(a > 0) ||
	    z->dr_last < FINDINGS_TRANSFER_MIN_SPAN * z->dr_first)
		return 0;
	if (z->sum_size < FINDINGS_TRANSFER_MIN_SHARE * z->sum_t ||
	    a * z->dr_p50 < FINDINGS_TRANSFER_MIN_MS)
		return 0;
	sql = sqlite3_mprintf("SELECT m.delivery_rate FROM connection_metrics "
			      "m WHERE (%s) AND " SERVER " = %Q AND "
			      "m.delivery_rate > 0",
			      s->conns, z->server);
	if (values(s, sql, &path) != 0)
		return -1;
	/* Rr = Dr / Tr of the exchanges, as manager stats shows it */
	sql = sqlite3_mprintf("SELECT rr FROM exchange_metrics WHERE (%s) AND "
			      "peer_addr || ':' || peer_port = %Q AND rr > 0",
			      s->where, z->server);
	if (values(s, sql, &rr) != 0) {
		vec_free(&path);
		return -1;
	}
	rate = 1e-3 / a; /* bytes per ms -> MB/s: a in ms per byte */
	if (!(f = add(s, "transfer_limited", z->sum_size))) {
		vec_free(&path);
		vec_free(&rr);
		say_nomem();
		return -1;
	}
	put(f->subject, sizeof(f->subject), "server %s", z->server);
	put(f->evidence, sizeof(f->evidence),
	    "T6 - T4 = a Dr + b over %zu exchanges (Theil-Sen): a %.4f us/B "
	    "(%.3f MB/s), b %.3f ms; the size term %.0f%% of the time; Rr "
	    "p50 %.3f MB/s; path delivery rate p50 %s%.3f MB/s",
	    z->n, a * 1e3, rate, z->b, 100 * z->sum_size / z->sum_t,
	    rr.n ? p(&rr, 50) / 1e6 : 0.0, path.n ? "" : "(unknown) ",
	    path.n ? p(&path, 50) / 1e6 : 0.0);
	put(f->advice, sizeof(f->advice), "%s",
	    path.n && rate * 1e6 < FINDINGS_TRANSFER_PATH_SHARE * p(&path, 50)
		    ? "the responses come far slower than the path delivers: "
		      "the server sends slowly or the client reads slowly "
		      "(socket buffers, TCP windows, a rate limit, the "
		      "server's disk or application)"
		    : "the time grows with the bytes: send fewer (compression, "
		      "smaller images, caching, ranges) or give the path more "
		      "bandwidth");
	vec_free(&path);
	vec_free(&rr);
	return 0;
}

static int transfer_limited(struct scan *s)
{
	struct findings_sizes own = { 0 };
	int rc = 0;

	/* the fits made by the caller (the report's size plot), else here:
	 * one pass either way */
	if (!s->sizes) {
		if ((rc = analyses_size_each(s->db, s->where, sizes_add, &own)))
			goto out;
		s->sizes = &own;
	}
	for (size_t i = 0; rc == 0 && i < s->sizes->n; i++)
		if (transfer_judge(s, &s->sizes->v[i]) != 0)
			rc = 2;
out:
	if (s->sizes == &own)
		s->sizes = NULL;
	findings_sizes_free(&own);
	return rc;
}

/* ---- idle_close: reconnects after the server closed an idle one -------- */

struct idle {
	char server[64];
	struct vec closes, gaps, setup;
};

static int idle_flush(struct scan *s, struct idle *k)
{
	double rec = NAN, setup;
	const char *shape;
	struct finding *f;

	double exchanges = 0;
	char *sql;
	sqlite3_stmt *st;

	if (!k->server[0] || k->gaps.n < FINDINGS_IDLE_CLOSE_MIN_RECONNECTS)
		return 0;
	/* the server's exchanges: once per server that had reconnects */
	sql = sqlite3_mprintf("SELECT count(*) FROM exchange_metrics WHERE "
			      "(%s) AND peer_addr || ':' || peer_port = %Q",
			      s->where, k->server);
	if (!sql)
		return say_nomem();
	st = db_prepare(s->db, sql);
	sqlite3_free(sql);
	if (!st)
		return 2;
	if (sqlite3_step(st) != SQLITE_ROW) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return 2;
	}
	exchanges = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	if (exchanges < FINDINGS_MIN_EXCHANGES)
		return 0;
	stats_sort(k->closes.v, k->closes.n);
	stats_sort(k->gaps.v, k->gaps.n);
	/* the client came back soon after the close: a longer timeout
	 * would have kept the connection */
	if (p(&k->gaps, 50) > FINDINGS_IDLE_CLOSE_REACH * p(&k->closes, 50))
		return 0;
	if (stats_keepalive_advice(k->gaps.v, k->gaps.n, &rec, &shape) != 0)
		return say_nomem();
	setup = stats_mean(k->setup.v, k->setup.n) * k->setup.n;
	if (!(f = add(s, "idle_close", setup)))
		return say_nomem();
	put(f->subject, sizeof(f->subject), "server %s", k->server);
	put(f->evidence, sizeof(f->evidence),
	    "%zu reconnects after the server closed an idle connection; the "
	    "close seen after p50 %.1f ms idle (min %.1f ms), the client came "
	    "back after p50 %.1f ms (p90 %.1f ms); connect + TLS %.1f ms in "
	    "all",
	    k->gaps.n, p(&k->closes, 50), k->closes.v[0], p(&k->gaps, 50),
	    p(&k->gaps, 90), setup);
	put(f->advice, sizeof(f->advice),
	    "raise the server's keep-alive timeout above the client's gaps "
	    "(recommended %.0f ms: mean + 7 sd of the gaps, within 100 ms to "
	    "15 s), or have the client send sooner",
	    rec);
	return 0;
}

static int idle_row(struct scan *s, sqlite3_stmt *st)
{
	struct idle *k = s->idle; /* the rows come ordered by server */
	const char *server = text(st, 0);

	if (strcmp(server, k->server) != 0) {
		if (idle_flush(s, k) != 0)
			return 2;
		snprintf(k->server, sizeof(k->server), "%s", server);
		k->closes.n = k->gaps.n = k->setup.n = 0;
	}
	if (vec_push(&k->closes, sqlite3_column_double(st, 1)) != 0 ||
	    vec_push(&k->gaps, sqlite3_column_double(st, 2)) != 0 ||
	    vec_push(&k->setup, sqlite3_column_double(st, 3)) != 0)
		return say_nomem();
	return 0;
}

static int idle_close(struct scan *s)
{
	struct idle idle = { 0 }, *k = &idle;
	int rc;

	s->idle = k;
	/* a connection of a process opened after its previous one to the
	 * same server was closed by the server at least
	 * ANALYSES_IDLE_CLOSE_MIN_MS after its last response: the close's
	 * delay, the client's gap (last response to the new connect) and
	 * the new connection's setup */
	rc = each_row(
		s,
		sqlite3_mprintf(
			"WITH k AS (SELECT id, lag(id) OVER (PARTITION BY "
			"process_id, peer_addr, peer_port ORDER BY seq) AS prev "
			"FROM connection) SELECT " SERVER ", (pc.teof_ns - "
			"pe.t6_ns) / 1e6, (m.t1_ns - pe.t6_ns) / 1e6, "
			"coalesce(m.te_ms, 0) + coalesce(m.tls_ms, 0) FROM k "
			"JOIN connection_metrics m ON m.connection_id = k.id "
			"JOIN connection pc ON pc.id = k.prev JOIN exchange pe "
			"ON pe.connection_id = pc.id AND pe.seq = (SELECT "
			"max(seq) FROM exchange WHERE connection_id = pc.id) "
			"WHERE (%s) AND pc.end_class = 'server_close' AND "
			"pe.tfb_ns IS NOT NULL AND pc.teof_ns >= pe.t6_ns + "
			"%lld AND pc.teof_ns <= m.t1_ns ORDER BY 1",
			s->conns,
			(long long)(ANALYSES_IDLE_CLOSE_MIN_MS * 1e6)),
		idle_row);
	if (rc == 0)
		rc = idle_flush(s, k);
	vec_free(&k->closes);
	vec_free(&k->gaps);
	vec_free(&k->setup);
	return rc;
}

/* ---- saturation: the endings' windows of seed 000 ---------------------- */

static int saturation(struct scan *s)
{
	struct analyses_endings_row *rows;
	size_t n, i = 0;
	char *sql;
	sqlite3_stmt *st;
	int rc = 0;

	if (analyses_endings_collect(s->db, s->where,
				     FINDINGS_SATURATION_WINDOW_S, &rows,
				     &n) != 0)
		return 2;
	/* the users' time in the failed and given-up connections of a
	 * window */
	sql = sqlite3_mprintf(
		"SELECT total(m.tt_ms) FROM connection_metrics m WHERE (%s) AND " SERVER
		" = ?1 AND m.t1_ns >= ?2 AND m.t1_ns < ?2 + ?3 AND "
		"(m.end_class IN ('reset', 'timeout', 'refused', "
		"'connect_error') OR (m.end_class = 'client_close' AND (SELECT "
		"e.ds > 0 AND e.tfb_ns IS NULL FROM exchange e WHERE "
		"e.connection_id = m.connection_id ORDER BY e.seq DESC LIMIT "
		"1)))",
		s->conns);
	st = sql ? db_prepare(s->db, sql) : NULL;
	if (!st) {
		rc = sql ? 2 : say_nomem();
		sqlite3_free(sql);
		free(rows);
		return rc;
	}
	sqlite3_free(sql);
	while (rc == 0 && i < n) {
		size_t j = i, windows = 0;
		double conns = 0, at_stake = 0, failed = 0, resets = 0,
		       timeouts = 0, aborted = 0;
		const char *worst = "normal";
		struct finding *f;

		for (; j < n && strcmp(rows[j].server, rows[i].server) == 0;
		     j++) {
			const struct analyses_endings_row *r = &rows[j];

			if (strcmp(r->state, "normal") == 0 ||
			    r->n < FINDINGS_SATURATION_MIN_WINDOW_CONNS)
				continue;
			windows++;
			conns += r->n;
			failed += r->c[ANALYSES_END_FAILED];
			resets += r->c[ANALYSES_END_RESET];
			timeouts += r->c[ANALYSES_END_TIMEOUT];
			aborted += r->c[ANALYSES_END_ABORTED];
			if (strcmp(r->state, "stopped") == 0 ||
			    strcmp(worst, "normal") == 0)
				worst = r->state;
			sqlite3_bind_text(st, 1, r->server, -1,
					  SQLITE_TRANSIENT);
			sqlite3_bind_int64(st, 2, r->window_ns);
			sqlite3_bind_int64(
				st, 3,
				(int64_t)(FINDINGS_SATURATION_WINDOW_S * 1e9));
			if (sqlite3_step(st) == SQLITE_ROW)
				at_stake += sqlite3_column_double(st, 0);
			else
				rc = 2;
			sqlite3_reset(st);
		}
		if (rc) {
			fprintf(stderr, "manager: %s\n", sqlite3_errmsg(s->db));
			break;
		}
		if (windows && conns >= FINDINGS_MIN_CONNECTIONS) {
			if (!(f = add(s, "saturation", at_stake))) {
				rc = say_nomem();
				break;
			}
			put(f->subject, sizeof(f->subject), "server %s",
			    rows[i].server);
			put(f->evidence, sizeof(f->evidence),
			    "%zu windows of %.0f s judged %s: %.0f "
			    "connections, %.0f failed to connect, %.0f reset, "
			    "%.0f timed out, %.0f given up before an answer",
			    windows, FINDINGS_SATURATION_WINDOW_S, worst, conns,
			    failed, resets, timeouts, aborted);
			put(f->advice, sizeof(f->advice), "%s",
			    strcmp(worst, "stopped") == 0
				    ? "the server refused or could not be "
				      "reached: is it running, listening, "
				      "its backlog (listen queue) large "
				      "enough?"
				    : "the server fails under the load of "
				      "these windows: more workers or "
				      "capacity, a larger listen backlog, "
				      "and clients that back off instead of "
				      "retrying at once");
		}
		i = j;
	}
	sqlite3_finalize(st);
	free(rows);
	return rc;
}

/* ---- dns_slow: per name ----------------------------------------------- */

static int dns_row(struct scan *s, sqlite3_stmt *st)
{
	const char *name = text(st, 0);
	double lookups = sqlite3_column_double(st, 1);
	double repeats = sqlite3_column_double(st, 2);
	double total = sqlite3_column_double(st, 3);
	double repeated_ms = sqlite3_column_double(st, 4);
	struct vec ms = { 0 };
	bool slow, repeat;
	struct finding *f;
	int rc;

	rc = values(s,
		    sqlite3_mprintf("SELECT m.dns_ms FROM connection_metrics m "
				    "WHERE (%s) AND m.dns_name = %Q AND "
				    "m.dns_ms IS NOT NULL",
				    s->conns, name),
		    &ms);
	slow = rc == 0 && lookups >= FINDINGS_DNS_MIN_LOOKUPS &&
	       p(&ms, 50) >= FINDINGS_DNS_SLOW_MS;
	repeat = rc == 0 && repeats >= FINDINGS_DNS_MIN_REPEATS;
	if (slow || repeat) {
		if (!(f = add(s, "dns_slow", slow ? total : repeated_ms))) {
			vec_free(&ms);
			return say_nomem();
		}
		put(f->subject, sizeof(f->subject), "name %s", name);
		put(f->evidence, sizeof(f->evidence),
		    "%.0f lookups, dns_ms p50 %.3f ms, p90 %.3f ms, %.1f ms in "
		    "all; up to %.0f lookups of it in one program run",
		    lookups, p(&ms, 50), p(&ms, 90), total, repeats);
		put(f->advice, sizeof(f->advice), "%s",
		    repeat ? "the program looks the name up again for each "
			     "connection: resolve once and keep the address "
			     "(or reuse the connection), or run a caching "
			     "resolver (nscd, systemd-resolved)"
			   : "the lookups are slow: a resolver nearer or "
			     "caching, a longer TTL on the name, or look it "
			     "up ahead of the request");
	}
	vec_free(&ms);
	return rc;
}

static int dns_slow(struct scan *s)
{
	/* per name: the lookups, the most in one process, their total time,
	 * and that of the lookups a process made again */
	return each_row(
		s,
		sqlite3_mprintf(
			"SELECT name, sum(n), max(n), total(ms), total(again) "
			"FROM (SELECT m.dns_name AS name, count(*) AS n, "
			"total(m.dns_ms) AS ms, total(m.dns_ms) - "
			"min(m.dns_ms) AS again FROM connection_metrics m JOIN "
			"connection c ON c.id = m.connection_id WHERE (%s) AND "
			"m.dns_ms IS NOT NULL GROUP BY m.dns_name, "
			"c.process_id) GROUP BY name ORDER BY name",
			s->conns),
		dns_row);
}

/* ---- client_stall: per program run ------------------------------------- */

/* A program run's finding, if it has one; label finds its name. */
static int stall_judge(struct scan *s, struct group_at *g, sqlite3_stmt *label)
{
	const struct vec *stalls = &g->v[0];
	double exch = g->rows, total = 0;
	size_t n = stalls->n;
	struct finding *f;

	if (exch < FINDINGS_MIN_EXCHANGES || !g->counted)
		return 0;
	stats_sort(g->v[0].v, g->v[0].n);
	for (size_t i = 0; i < n; i++)
		total += stalls->v[i];
	if (!n || (double)n < FINDINGS_STALL_MIN_SHARE * g->counted)
		return 0;
	if (!(f = add(s, "client_stall", total)))
		return say_nomem();
	sqlite3_bind_int64(label, 1, g->num);
	put(f->subject, sizeof(f->subject), "program %s",
	    sqlite3_step(label) == SQLITE_ROW ? text(label, 0) : "?");
	sqlite3_reset(label);
	put(f->evidence, sizeof(f->evidence),
	    "%zu of %zu gaps between a response and the next request on the "
	    "connection last %.0f to %.0f ms: p50 %.1f ms, p90 %.1f ms, %.1f "
	    "ms in all, over %.0f exchanges",
	    n, g->counted, FINDINGS_STALL_MIN_MS, FINDINGS_STALL_MAX_MS,
	    stats_percentile(stalls->v, n, 50),
	    stats_percentile(stalls->v, n, 90), total, exch);
	put(f->advice, sizeof(f->advice),
	    "the program, not the network, waits before its next request: "
	    "send the requests it already knows sooner (in parallel, "
	    "pipelined, over HTTP/2) and look at what it does between "
	    "responses (parsing, CPU, a sleep, a lock)");
	return 0;
}

static int client_stall(struct scan *s)
{
	struct findings_rows *st = rows_of(s);
	struct group_at **order = NULL;
	sqlite3_stmt *label = NULL;
	int rc = 2;

	if (!st)
		return 2;
	/* the label, of the runs that have the finding only: the program's
	 * name without its directory, its pid */
	label = db_prepare(
		s->db,
		"SELECT replace(program, rtrim(program, replace(program, "
		"'/', '')), '') || ' (pid ' || pid || ')' FROM process "
		"WHERE id = ?1");
	if (!label || !(order = groups_ordered(&st->runs)))
		goto out;
	rc = 0;
	for (size_t i = 0; rc == 0 && i < st->runs.n; i++)
		rc = stall_judge(s, order[i], label);
out:
	free(order);
	sqlite3_finalize(label);
	return rc;
}

/* ---- retransmits: per server ------------------------------------------- */

static int retrans_row(struct scan *s, sqlite3_stmt *st)
{
	/* columns 1 to 6: connections, exchanges, connections with
	 * retransmissions, retransmissions, their cost, the mean rtt */
	enum { CONNS = 1, EXCH, WITH, RETRANS, COST, RTT, NCOL };
	double c[NCOL];
	struct finding *f;

	for (int i = CONNS; i < NCOL; i++)
		c[i] = sqlite3_column_double(st, i);
	if ((c[EXCH] < FINDINGS_MIN_EXCHANGES &&
	     c[CONNS] < FINDINGS_MIN_CONNECTIONS) ||
	    c[RETRANS] < FINDINGS_RETRANS_MIN ||
	    c[WITH] < FINDINGS_RETRANS_MIN_SHARE * c[CONNS])
		return 0;
	if (!(f = add(s, "retransmits", c[COST])))
		return say_nomem();
	put(f->subject, sizeof(f->subject), "server %s", text(st, 0));
	put(f->evidence, sizeof(f->evidence),
	    "%.0f retransmissions on %.0f of %.0f connections (%.0f%%); rtt "
	    "mean %.3f ms; each costs about a round trip (a timeout: 200 ms "
	    "or more)",
	    c[RETRANS], c[WITH], c[CONNS], 100 * c[WITH] / c[CONNS], c[RTT]);
	put(f->advice, sizeof(f->advice),
	    "packets are lost on the path: look at the links and queues "
	    "between (interface errors, a full buffer, Wi-Fi); a congestion "
	    "control that tolerates loss (BBR) or a server nearer helps");
	return 0;
}

static int retransmits(struct scan *s)
{
	return each_row(
		s,
		sqlite3_mprintf(
			"SELECT " SERVER " AS server, count(*), "
			"total(m.exchanges), total(m.retrans > 0), "
			"total(m.retrans), total(min(m.retrans * m.rtt_ms, "
			"coalesce(m.tt_ms, m.retrans * m.rtt_ms))), "
			"avg(m.rtt_ms) FROM connection_metrics m WHERE (%s) "
			"AND m.retrans IS NOT NULL GROUP BY server ORDER BY 1",
			s->conns),
		retrans_row);
}

/* ---- errors: per server ------------------------------------------------ */

static int errors_row(struct scan *s, sqlite3_stmt *st)
{
	/* columns 3 to 7: failed connects, resets, timeouts, HTTP 5xx,
	 * reset streams */
	double conns = sqlite3_column_double(st, 1);
	double exch = sqlite3_column_double(st, 2);
	double volume = conns > exch ? conns : exch;
	double kind[5], all = 0;
	struct finding *f;

	for (int i = 0; i < 5; i++)
		all += kind[i] = sqlite3_column_double(st, 3 + i);
	if (volume < FINDINGS_MIN_CONNECTIONS || all < FINDINGS_ERRORS_MIN ||
	    all < FINDINGS_ERRORS_MIN_SHARE * volume)
		return 0;
	if (!(f = add(s, "errors", sqlite3_column_double(st, 8))))
		return say_nomem();
	put(f->subject, sizeof(f->subject), "server %s", text(st, 0));
	put(f->evidence, sizeof(f->evidence),
	    "%.0f failed connects, %.0f resets, %.0f timeouts, %.0f HTTP 5xx, "
	    "%.0f reset streams over %.0f connections and %.0f exchanges",
	    kind[0], kind[1], kind[2], kind[3], kind[4], conns, exch);
	put(f->advice, sizeof(f->advice), "%s",
	    kind[3] >= all / 2
		    ? "the server answers with errors: its error log says why"
	    : kind[0] >= all / 2
		    ? "connects fail: is the server running and listening on "
		      "that address, a firewall in between?"
		    : "connections break: the server (or something between) "
		      "resets or stalls them; its error log, its limits "
		      "(workers, timeouts) and the clients' own timeouts");
	return 0;
}

static int errors(struct scan *s)
{
	/* the time at stake: the failed connections' Tt, the 5xx exchanges'
	 * T6 - T3 */
	return each_row(
		s,
		sqlite3_mprintf(
			"SELECT " SERVER " AS server, count(*), "
			"total(m.exchanges), total(m.end_class IN ('refused', "
			"'connect_error')), total(m.end_class = 'reset'), "
			"total(m.end_class = 'timeout'), total((SELECT "
			"count(*) FROM exchange e WHERE e.connection_id = "
			"m.connection_id AND e.status >= 500)), total((SELECT "
			"count(*) FROM exchange e WHERE e.connection_id = "
			"m.connection_id AND e.stream_error > 0)), "
			"total(CASE WHEN m.end_class IN ('refused', "
			"'connect_error', 'reset', 'timeout') THEN m.tt_ms "
			"END) + total((SELECT total(e.t6_ns - e.t3_ns) / 1e6 "
			"FROM exchange e WHERE e.connection_id = "
			"m.connection_id AND e.status >= 500)) FROM "
			"connection_metrics m WHERE (%s) GROUP BY server "
			"ORDER BY 1",
			s->conns),
		errors_row);
}

/* ---- all of them ------------------------------------------------------- */

static int by_stake(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->at_stake_ms != y->at_stake_ms)
		return x->at_stake_ms < y->at_stake_ms ? 1 : -1;
	if (strcmp(x->id, y->id) != 0)
		return strcmp(x->id, y->id);
	return strcmp(x->subject, y->subject);
}

/* The findings over the exchanges where keeps and the connections conns
 * keeps (over connection_metrics m), ranked. */
static int collect(sqlite3 *db, const char *where, const char *conns,
		   const struct findings_given *given, struct findings *out)
{
	static int (*const each[])(struct scan *) = {
		no_reuse,    handshake_share, server_wait, transfer_limited,
		idle_close,  saturation,      dns_slow,	   client_stall,
		retransmits, errors,
	};
	struct scan s = { .db = db,
			  .where = where,
			  .conns = conns,
			  .out = out,
			  .sizes = given ? given->sizes : NULL,
			  .rows = given ? given->rows : NULL };
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; rc == 0 && i < sizeof(each) / sizeof(*each); i++)
		rc = each[i](&s);
	findings_rows_free(s.own_rows);
	if (rc != 0) {
		findings_free(out);
		return 2;
	}
	for (size_t i = 0; i < out->n; i++)
		if (!(out->v[i].at_stake_ms >= 0))
			out->v[i].at_stake_ms = 0;
	if (out->n) /* v is NULL when none fired */
		qsort(out->v, out->n, sizeof(*out->v), by_stake);
	return 0;
}

int findings_collect(sqlite3 *db, const char *where, struct findings *out)
{
	return findings_collect_given(db, where, NULL, out);
}

int findings_collect_given(sqlite3 *db, const char *where,
			   const struct findings_given *given,
			   struct findings *out)
{
	char *conns = filter_connections(where ? where : "1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (!conns)
		return say_nomem();
	rc = collect(db, where ? where : "1", conns, given, out);
	sqlite3_free(conns);
	return rc;
}

int findings_collect_processes(sqlite3 *db, const char *ids,
			       struct findings *out)
{
	char *where = sqlite3_mprintf("connection_id IN (SELECT id FROM "
				      "connection WHERE process_id IN (%s))",
				      ids);
	char *conns = sqlite3_mprintf("m.connection_id IN (SELECT id FROM "
				      "connection WHERE process_id IN (%s))",
				      ids);
	int rc;

	memset(out, 0, sizeof(*out));
	rc = where && conns ? collect(db, where, conns, NULL, out)
			    : say_nomem();
	sqlite3_free(where);
	sqlite3_free(conns);
	return rc;
}

void findings_free(struct findings *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

void findings_print(const struct findings *f, bool csv, bool always, FILE *out)
{
	if (csv) {
		fprintf(out,
			"finding,subject,time_at_stake_ms,evidence,advice\n");
		for (size_t i = 0; i < f->n; i++) {
			const struct finding *x = &f->v[i];

			fprintf(out, "%s,", x->id);
			text_csv_cell(out, x->subject, 0);
			fprintf(out, ",%.3f,", x->at_stake_ms);
			text_csv_cell(out, x->evidence, 0);
			fputc(',', out);
			text_csv_cell(out, x->advice, 0);
			fputc('\n', out);
		}
		return;
	}
	if (!f->n) {
		if (always)
			fprintf(out, "no finding: nothing stands out\n");
		return;
	}
	fprintf(out, "findings, the most time at stake first:\n");
	for (size_t i = 0; i < f->n; i++) {
		const struct finding *x = &f->v[i];

		fprintf(out, "%zu. %s, ", i + 1, x->id);
		text_tty_put(out, x->subject);
		fprintf(out, ": %.1f ms at stake\n   ", x->at_stake_ms);
		text_tty_put(out, x->evidence);
		fprintf(out, "\n   -> ");
		text_tty_put(out, x->advice);
		fputc('\n', out);
	}
}
