/* findings.h - where the users' time went and what to change: the
 * findings of manager findings, of the top of manager report and of the
 * end of observe's table (docs/findings.md). Each finding is computed by
 * SQL over the views and a little arithmetic (stats.c); the thresholds
 * are the named constants below, each explained in docs/findings.md. */
#ifndef OBSERVE_MANAGER_FINDINGS_H
#define OBSERVE_MANAGER_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "analyses.h"

/* Nothing fires on fewer exchanges than this (of the server, of the
 * program run, of the name: the finding's subject), nor, for the findings
 * counted in connections, on fewer connections than the second. */
#define FINDINGS_MIN_EXCHANGES 20
#define FINDINGS_MIN_CONNECTIONS 10

/* no_reuse: at least this share of a program run's exchanges to a server
 * opened a connection of their own. */
#define FINDINGS_NO_REUSE_MIN_NEW_SHARE 0.5
/* handshake_share: connect + TLS are at least this share of the
 * connections' Tt, and their p50 at least this long. */
#define FINDINGS_HANDSHAKE_MIN_SHARE 0.3
#define FINDINGS_HANDSHAKE_MIN_MS 5.0
/* server_wait: Tw p50 at least this long, and either the waits are at
 * least this share of Tw + Trecv, or this many times the p50 of the other
 * servers' Tw p50s. */
#define FINDINGS_SERVER_WAIT_MIN_MS 10.0
#define FINDINGS_SERVER_WAIT_MIN_SHARE 0.5
#define FINDINGS_SERVER_WAIT_FACTOR 5.0
/* transfer_limited: the size term a * Dr of the seed 002 fit is at least
 * this share of T6 - T4, its p50 at least this long, the sizes span at
 * least this ratio; the path is "far" faster below this share. */
#define FINDINGS_TRANSFER_MIN_SHARE 0.5
#define FINDINGS_TRANSFER_MIN_MS 10.0
#define FINDINGS_TRANSFER_MIN_SPAN 2.0
#define FINDINGS_TRANSFER_PATH_SHARE 0.25
/* idle_close: at least this many reconnects after an idle close, the
 * client back within this many times the server's idle timeout (p50s). */
#define FINDINGS_IDLE_CLOSE_MIN_RECONNECTS 5
#define FINDINGS_IDLE_CLOSE_REACH 4.0
/* saturation: windows of this many seconds, those of at least this many
 * connections judged (stats_server_state). */
#define FINDINGS_SATURATION_WINDOW_S 10.0
#define FINDINGS_SATURATION_MIN_WINDOW_CONNS 5
/* dns_slow: lookups of a name with a p50 this long (at least
 * FINDINGS_DNS_MIN_LOOKUPS of them), or this many of the same name in one
 * program run. */
#define FINDINGS_DNS_SLOW_MS 20.0
#define FINDINGS_DNS_MIN_LOOKUPS 5
#define FINDINGS_DNS_MIN_REPEATS 10
/* client_stall: gaps between a response and the next request on the
 * connection from ..MIN_MS to ..MAX_MS (longer: the user's or the
 * program's idle time, not a stall) make at least this share of the
 * program run's gaps. */
#define FINDINGS_STALL_MIN_MS 10.0
#define FINDINGS_STALL_MAX_MS 1000.0
#define FINDINGS_STALL_MIN_SHARE 0.5
/* retransmits: on at least this share of a server's connections (with
 * TCP_INFO), at least this many in all. */
#define FINDINGS_RETRANS_MIN_SHARE 0.1
#define FINDINGS_RETRANS_MIN 3
/* errors: at least this many failures, this share of the connections or
 * exchanges. */
#define FINDINGS_ERRORS_MIN 5
#define FINDINGS_ERRORS_MIN_SHARE 0.05

struct finding {
	const char *id;	    /* no_reuse, handshake_share, ... */
	char subject[192];  /* "server 127.0.0.1:80", "program ab (pid 7)
			     * to ...", "name example.org" */
	double at_stake_ms; /* the ranking key */
	char evidence[512];
	char advice[512];
};

struct findings {
	struct finding *v;
	size_t n, cap;
};

/* The findings over the exchanges the SQL expression where (over
 * exchange_metrics; NULL or "1": all) keeps, ranked by time at stake,
 * largest first, into f (findings_free). 0, or 2 on error (said on
 * stderr). */
int findings_collect(sqlite3 *db, const char *where, struct findings *f);
/* What transfer_limited takes of a server's size fit (analyses_size_each),
 * kept from a pass made for something else (the report's size plot), so
 * that the findings make no pass of their own for it: the fit's server,
 * its n, Theil-Sen's a and b, the smallest, largest and middle Dr, the
 * sums of T6 - T4 and of a * Dr. */
struct findings_size {
	char *server;
	size_t n;
	double a, b, dr_first, dr_last, dr_p50, sum_t, sum_size;
};
struct findings_sizes {
	struct findings_size *v;
	size_t n, cap;
};
/* fit's figures added to sizes (in the order of the fits: the servers').
 * 0, or -1 when out of memory (said). */
int findings_sizes_add(struct findings_sizes *sizes,
		       const struct analyses_size_fit *fit);
void findings_sizes_free(struct findings_sizes *sizes);
/* What client_stall and server_wait take of every exchange, kept from a
 * pass made for something else (the keep-alive view's, which passes
 * findings_rows_add as its analyses_row_fn). */
struct findings_rows;
struct findings_rows *findings_rows_new(void); /* NULL: out of memory */
/* One exchange (rows: a struct findings_rows). 0, or -1 when out of
 * memory (said). */
int findings_rows_add(void *rows, const struct analyses_row *r);
void findings_rows_free(struct findings_rows *rows);

/* What the caller read already for the findings (each NULL: read here). */
struct findings_given {
	const struct findings_sizes *sizes; /* every server's size fit */
	struct findings_rows *rows;	    /* every exchange's gap, Tw... */
};
int findings_collect_given(sqlite3 *db, const char *where,
			   const struct findings_given *given,
			   struct findings *out);

/* The same over the processes whose ids (process.id) are listed in ids
 * ("1,2,3": numbers only), their connections without an exchange (a
 * refused connect) too: observe's run. */
int findings_collect_processes(sqlite3 *db, const char *ids,
			       struct findings *f);
void findings_free(struct findings *f);

/* The findings as a table for people (nothing when there is none,
 * unless always: then "no finding"), or as CSV with the columns finding,
 * subject, time_at_stake_ms, evidence, advice (the header always). */
void findings_print(const struct findings *f, bool csv, bool always, FILE *out);

#endif
