/* feed.c - the metrics from the rows of a database (see feed.h): an
 * exchange gives the request's duration (T3 to T6, or to the last time it
 * has), its wait (T4 to TFB) and transfer (TFB to T6); a connection its
 * duration (T1 to T7), its connect (T1 to T2, when it succeeded) and its
 * TLS handshake. The labels: where the request went (otlp_target: the
 * Host header's name, else the name looked up, else the address), the
 * program's base name, the client, the method and the status class. */
#define _GNU_SOURCE
#include "feed.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "otlp.h"

#define FEED_BATCH 1024

struct otel_feed {
	struct otel_metrics *m;
	struct otel_cursor cursors[2]; /* exchanges, connections */
};

/* The columns both queries begin with. */
enum { C_TLS, C_DNS_NAME, C_PEER_ADDR, C_PEER_PORT, C_PROGRAM, C_CLIENT };
#define COMMON_COLUMNS                                                         \
	"c.tls, c.dns_name, c.peer_addr, c.peer_port, p.program, cl.name, "
#define COMMON_JOINS                                                           \
	" JOIN process p ON p.id = c.process_id"                               \
	" JOIN client cl ON cl.id = p.client_id"

enum { E_T3 = C_CLIENT + 1, E_T4, E_TFB, E_T6, E_METHOD, E_STATUS, E_HOST };
static const char exchange_sql[] =
	"SELECT " COMMON_COLUMNS "e.t3_ns, e.t4_ns, e.tfb_ns, e.t6_ns, "
	"e.method, e.status, e.host FROM exchange e"
	" JOIN connection c ON c.id = e.connection_id" COMMON_JOINS
	" WHERE e.id = ?1";

enum { K_T1 = C_CLIENT + 1, K_T2, K_T7, K_ERROR, K_TLS_START, K_TLS_END };
static const char connection_sql[] =
	"SELECT " COMMON_COLUMNS "c.t1_ns, c.t2_ns, c.t7_ns, c.connect_error, "
	"c.tls_start_ns, c.tls_end_ns FROM connection c" COMMON_JOINS
	" WHERE c.id = ?1";

struct otel_feed *otel_feed_new(struct otel_metrics *m)
{
	struct otel_feed *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->m = m;
	f->cursors[0].rows = OTEL_EXCHANGES;
	f->cursors[1].rows = OTEL_CONNECTIONS;
	return f;
}

void otel_feed_free(struct otel_feed *f)
{
	if (!f)
		return;
	otel_cursor_free(&f->cursors[0]);
	otel_cursor_free(&f->cursors[1]);
	free(f);
}

static bool known(sqlite3_stmt *st, int c)
{
	return sqlite3_column_type(st, c) != SQLITE_NULL;
}

static const char *text(sqlite3_stmt *st, int c)
{
	return (const char *)sqlite3_column_text(st, c);
}

/* seconds from column a to column b, when both are known (else -1) */
static double span(sqlite3_stmt *st, int a, int b)
{
	if (!known(st, a) || !known(st, b))
		return -1;
	return (double)(sqlite3_column_int64(st, b) -
			sqlite3_column_int64(st, a)) /
	       1e9;
}

/* The labels of the row in st; host the request's Host (NULL for a
 * connection). t holds the text they point into. */
static void labels_of(sqlite3_stmt *st, const char *host, struct otlp_target *t,
		      struct otel_labels *l)
{
	const char *program = text(st, C_PROGRAM);
	const char *slash = program ? strrchr(program, '/') : NULL;

	otlp_target(t, sqlite3_column_int(st, C_TLS) != 0, host,
		    text(st, C_DNS_NAME), text(st, C_PEER_ADDR),
		    sqlite3_column_int(st, C_PEER_PORT), NULL);
	memset(l, 0, sizeof(*l));
	l->server_address = t->address;
	l->server_port = t->port;
	l->program = slash ? slash + 1 : program;
	l->client = text(st, C_CLIENT);
}

static int observe_exchange(struct otel_metrics *m, sqlite3_stmt *st)
{
	struct otlp_target t;
	struct otel_labels l;
	int status = sqlite3_column_int(st, E_STATUS);
	int end = known(st, E_T6) ? E_T6 : known(st, E_TFB) ? E_TFB : E_T4;
	char class[8];
	int rc = 0;

	labels_of(st, text(st, E_HOST), &t, &l);
	l.method = otlp_method(text(st, E_METHOD));
	if (status >= 100 && status <= 599) {
		snprintf(class, sizeof(class), "%dxx", status / 100);
		l.status_class = class;
	}
	rc |= otel_metrics_observe(m, OTEL_M_REQUEST, &l, span(st, E_T3, end));
	rc |= otel_metrics_observe(m, OTEL_M_WAIT, &l, span(st, E_T4, E_TFB));
	rc |= otel_metrics_observe(m, OTEL_M_TRANSFER, &l,
				   span(st, E_TFB, E_T6));
	return rc;
}

static int observe_connection(struct otel_metrics *m, sqlite3_stmt *st)
{
	struct otlp_target t;
	struct otel_labels l;
	int rc = 0;

	labels_of(st, NULL, &t, &l);
	rc |= otel_metrics_observe(m, OTEL_M_CONNECTION, &l,
				   span(st, K_T1, K_T7));
	if (!known(st, K_ERROR))
		rc |= otel_metrics_observe(m, OTEL_M_CONNECT, &l,
					   span(st, K_T1, K_T2));
	rc |= otel_metrics_observe(m, OTEL_M_TLS, &l,
				   span(st, K_TLS_START, K_TLS_END));
	return rc;
}

/* One cursor's rows to the end: batches of FEED_BATCH. */
static int run_cursor(struct otel_feed *f, sqlite3 *db, struct otel_cursor *c,
		      char *err, size_t errlen)
{
	const char *sql =
		c->rows == OTEL_EXCHANGES ? exchange_sql : connection_sql;
	sqlite3_stmt *st = NULL;
	struct otel_batch b = { 0 };
	int rc = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	for (;;) {
		if (otel_cursor_batch(db, c, FEED_BATCH, &b, err, errlen) != 0)
			goto out;
		for (size_t i = 0; i < b.n; i++) {
			sqlite3_bind_int64(st, 1, b.ids[i]);
			if (sqlite3_step(st) == SQLITE_ROW &&
			    (c->rows == OTEL_EXCHANGES
				     ? observe_exchange(f->m, st)
				     : observe_connection(f->m, st)) != 0) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			sqlite3_reset(st);
		}
		if (otel_cursor_advance(c, &b) != 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		if (b.n < FEED_BATCH)
			break;
		otel_batch_free(&b);
	}
	rc = 0;
out:
	otel_batch_free(&b);
	sqlite3_finalize(st);
	return rc;
}

int otel_feed_run(struct otel_feed *f, sqlite3 *db, char *err, size_t errlen)
{
	if (run_cursor(f, db, &f->cursors[0], err, errlen) != 0 ||
	    run_cursor(f, db, &f->cursors[1], err, errlen) != 0)
		return -1;
	return 0;
}
