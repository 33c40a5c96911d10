/* analyses.h - the analyses of manager stats --view and of the report's
 * plots (docs/analyses.md): their figures read from a database, and their
 * tables as text or CSV. */
#ifndef OBSERVE_MANAGER_ANALYSES_H
#define OBSERVE_MANAGER_ANALYSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

/* manager stats --view VIEW: endings, keepalive, size or family, over the
 * exchanges the SQL expression where keeps; window_s > 0 splits endings
 * into windows of that many seconds. 0, or 2 on error (said on stderr). */
int analyses_view(sqlite3 *db, const char *view, const char *where,
		  double window_s, bool csv, FILE *out);

/* endings: how connections ended per server and time window (window_ns 0
 * when the whole span is one window). c[] counts connections by class:
 * the classes before ANALYSES_END_ABORTED add up to n (every connection
 * in one); ANALYSES_END_ABORTED overlaps the client_close, reset and
 * timeout ones. */
enum {
	ANALYSES_END_SERVER_CLOSE,
	ANALYSES_END_CLIENT_CLOSE,
	ANALYSES_END_RESET,
	ANALYSES_END_TIMEOUT,
	ANALYSES_END_FAILED, /* refused, connect_error */
	ANALYSES_END_EXIT,   /* open when the process left */
	ANALYSES_END_LOST,   /* closed where the layer could not see */
	/* no end seen: unterminated, or still open when last sliced */
	ANALYSES_END_UNTERMINATED,
	ANALYSES_END_ABORTED,
	ANALYSES_END_COUNT
};
struct analyses_endings_row {
	char server[64];
	int64_t window_ns;
	double n, c[ANALYSES_END_COUNT];
	const char *state; /* normal, saturated, stopped */
};
/* All rows, ordered by server and window, into a malloc'd array. 0, or 2
 * on error (said on stderr). */
int analyses_endings_collect(sqlite3 *db, const char *where, double window_s,
			     struct analyses_endings_row **rows, size_t *n);

/* keepalive: per server, the idle gaps (sorted, ms), the idle closes
 * (TEOF - the last response's T6, sorted, ms; a close sooner than
 * ANALYSES_IDLE_CLOSE_MIN_MS came with the response and is only counted),
 * reconnects after an idle close, the recommendation. */
#define ANALYSES_IDLE_CLOSE_MIN_MS 10.0
struct analyses_keepalive {
	const char *server;
	const double *gaps, *closes;
	size_t ngaps, ncloses, closes_with_response;
	int64_t reconnects;
	double recommended_ms;
	const char *shape;
};
/* Takes one server's figures (they live for the call only): 0, or -1 to
 * stop (the reason said on stderr). */
typedef int (*analyses_keepalive_fn)(void *ctx,
				     const struct analyses_keepalive *k);
/* An exchange as the keep-alive view's pass over the gaps reads it, for
 * the figures of another module (the findings' client_stall and
 * server_wait): its program run (process.id), its server (NULL when
 * unknown), its tgap_ms, tw_ms, trecv_ms and its connection's min_rtt_us,
 * each with whether it is known (not NULL). */
struct analyses_row {
	int64_t process;
	const char *server;
	bool has_gap, has_tw, has_trecv, has_rtt;
	double gap, tw, trecv, min_rtt_us;
};
/* Takes one row: 0, or -1 to stop (said). */
typedef int (*analyses_row_fn)(void *ctx, const struct analyses_row *r);
/* fn once per exchange the filter keeps, in one pass: 0, or 2 on error
 * (said; fn's own said by fn). */
int analyses_rows(sqlite3 *db, const char *where, analyses_row_fn fn,
		  void *ctx);
/* Calls fn once per server; row_fn (NULL: none) once per exchange the
 * filter keeps, in the same pass as the gaps. 0, or 2 on error (said on
 * stderr). */
int analyses_keepalive_each(sqlite3 *db, const char *where,
			    analyses_keepalive_fn fn, void *ctx,
			    analyses_row_fn row_fn, void *row_ctx);

/* size: per server, the exchanges' Dr (bytes, ascending) and T6 - T4 (ms),
 * and T = a * Dr + b fitted by least squares (r2) and Theil-Sen (ts_);
 * a in ms per byte, b in ms. */
struct analyses_size_fit {
	const char *server;
	const double *dr, *t_ms;
	size_t n;
	double a, b, r2, ts_a, ts_b;
};
/* Takes one server's fit (the data lives for the call only): 0, or -1 to
 * stop (the reason said on stderr). */
typedef int (*analyses_size_fn)(void *ctx, const struct analyses_size_fit *f);
/* Calls fn once per server. 0, or 2 on error (said on stderr). */
int analyses_size_each(sqlite3 *db, const char *where, analyses_size_fn fn,
		       void *ctx);

/* The tables of manager stats --view for those that walk the figures
 * themselves (the report, which draws and prints from one pass): a
 * view's header, then analyses_keepalive_print or analyses_size_print as
 * the fn of analyses_keepalive_each or analyses_size_each, with a struct
 * analyses_table as ctx. They return 0. */
struct analyses_table {
	FILE *out;
	bool csv;
};
void analyses_keepalive_header(bool csv, FILE *out);
int analyses_keepalive_print(void *table, const struct analyses_keepalive *k);
void analyses_size_header(bool csv, FILE *out);
int analyses_size_print(void *table, const struct analyses_size_fit *f);
/* The family view's table into csv and into text (either may be NULL),
 * from one computation. 0, or 2 on error (said on stderr). */
int analyses_family(sqlite3 *db, const char *where, FILE *csv, FILE *text);

#endif
