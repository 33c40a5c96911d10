/* schema.h - the tables' shape, in one place: the DDL and the views, the
 * schema version and its upgrade, and the SQL of every statement that
 * writes rows (ingest, merge, filter). A store for another engine mirrors
 * this module. The tables and views are documented in docs/schema.md.
 *
 * The functions that run SQL take an open SQLite connection; messages name
 * the database file (path) and the reason.
 */
#ifndef OBSERVE_SCHEMA_H
#define OBSERVE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

/* Kept in PRAGMA user_version. */
#define OBS_SCHEMA_VERSION 4

/* Create the schema in an empty database, upgrade one of versions 1 to 3,
 * accept one of this version. A database of a newer version, or one with tables
 * of its own and no version, is refused. 0, or -1 with a message in err. */
int obs_schema_ensure(sqlite3 *db, const char *path, char *err, size_t errlen);

/* The schema version of the attached database `schema` ("main", "src"):
 * its user_version, or -1 when it cannot be read (err: SQLite's reason). */
int obs_schema_version(sqlite3 *db, const char *schema, char *err,
		       size_t errlen);

/* The message for a database of an older version that the manager does
 * not read: how to upgrade it. */
void obs_schema_too_old(int version, char *why, size_t whylen);

/* The largest id of table (e.g. "exchange", "main.exchange"), 0 when it is
 * empty, -1 on error. */
int64_t obs_schema_max_id(sqlite3 *db, const char *table);

/* The statements of ingest (common/store.c), prepared once per store. The
 * parameters of each are listed; times are epoch ns or NULL. */
enum obs_ingest_sql {
	/* ?1 name, ?2 host; a known name changes nothing */
	OBS_SQL_CLIENT_INS,
	/* ?1 name -> id */
	OBS_SQL_CLIENT_GET,
	/* ?1 client_id, ?2 pid, ?3 ppid, ?4 start_ns, ?5 end_ns, ?6 ended,
	 * ?7 host, ?8 program, ?9 argv, ?10 spool, ?11 dropped -> id; a known
	 * process gets end_ns, ended and dropped */
	OBS_SQL_PROCESS_UPSERT,
	/* ?1 process_id, ?2 seq -> id */
	OBS_SQL_CONN_GET,
	/* ?1 process_id, ?2 seq, then OBS_SQL_CONN_COLUMNS as ?3..?24, on a
	 * row still in flight (complete = 0) */
	OBS_SQL_CONN_UPD,
	/* ?1 connection_id, ?2 seq, then OBS_SQL_EXCH_COLUMNS as ?3..?20,
	 * ?21 host, ?22 path; a known exchange changes nothing */
	OBS_SQL_EXCH_INS,
	/* as OBS_SQL_EXCH_INS up to ?20, on a row still in flight
	 * (complete = 0) whose id is below ?21 (a row stored before) */
	OBS_SQL_EXCH_UPD,
	/* ?1 connection_id, ?2 seq */
	OBS_SQL_EXCH_DEL,
	/* ?1 connection_id, ?2 seq, ?3 host, ?4 path, on a row whose id is
	 * below ?5 */
	OBS_SQL_HTTP_UPD,
	/* ?1 process_id, ?2 connection seq, ?3 exchange seq -> host, path
	 * of that exchange (what a later one's label refers to) */
	OBS_SQL_LABEL_GET,
	/* ?1 id, then OBS_SQL_INFO_COLUMNS as ?2..?15 */
	OBS_SQL_INFO_UPD,
	/* ?1 process_id, ?2 segment -> next_offset, pending (ingest_mark) */
	OBS_SQL_MARK_GET,
	/* ?1 process_id, ?2 segment, ?3 next_offset, ?4 pending */
	OBS_SQL_MARK_PUT,
	/* an events spool's connection marked TLS by the core: ?1
	 * process_id, ?2 seq, ?3 tls_version, ?4 tls_start_ns, ?5 tls_end_ns */
	OBS_SQL_CONN_TLS,
	/* a connection's replay kept between passes (ingest_replay): ?1
	 * process_id, ?2 conn_seq; put: ?3 state; delete */
	OBS_SQL_REPLAY_PUT,
	OBS_SQL_REPLAY_DEL,
	/* ?1 process_id -> conn_seq, state of each */
	OBS_SQL_REPLAY_ALL,
	OBS_SQL_INGEST_COUNT
};

/* The connection and exchange columns of OBS_SQL_CONN_* and
 * OBS_SQL_EXCH_*, in the order of their parameters from ?3. */
#define OBS_SQL_CONN_COLUMNS                                                   \
	"fd, family, peer_addr, peer_port, local_addr, local_port, t1_ns, "    \
	"t2_ns, t2_how, connect_error, teof_ns, tshut_ns, t7_ns, "             \
	"end_class, end_error, nonblocking, complete, protocol, tunnel, "      \
	"websocket, ws_messages_sent, ws_messages_received"
/* those an info record sets (TLS, TCP_INFO, DNS) */
#define OBS_SQL_INFO_COLUMNS                                                   \
	"tls, tls_version, tls_start_ns, tls_end_ns, rtt_us, rttvar_us, "      \
	"min_rtt_us, retrans, snd_cwnd, pmtu, delivery_rate, dns_name, "       \
	"dns_start_ns, dns_end_ns"
#define OBS_SQL_EXCH_COLUMNS                                                     \
	"t3_ns, t4_ns, t5_ns, tfb_ns, t6_ns, ds, dr, send_calls, recv_calls, "   \
	"server_first, peeked, complete, method, status, stream, stream_error, " \
	"interim_status, interim_ns"

const char *obs_schema_ingest_sql(enum obs_ingest_sql which);

/* OBS_SQL_EXCH_INS for `rows` exchanges in one statement: those of row i
 * (from 0) are parameters OBS_SQL_EXCH_PARAMS * i + 1 on, in the order of
 * OBS_SQL_EXCH_INS's. sqlite3_free it; NULL when out of memory. */
#define OBS_SQL_EXCH_PARAMS 22
char *obs_schema_exch_insert_sql(int rows);

/* The INSERT of `rows` connections in one statement: those of row i (from
 * 0) are parameters OBS_SQL_CONN_PARAMS * i + 1 on: process_id, seq,
 * OBS_SQL_CONN_COLUMNS, OBS_SQL_INFO_COLUMNS; a known connection (process_id,
 * seq) changes nothing. sqlite3_free it; NULL when out of memory. */
#define OBS_SQL_CONN_PARAMS 38
char *obs_schema_conn_insert_sql(int rows);

/* The ingest's own bookkeeping, outside the versioned schema (nothing but
 * the ingest reads it; created when missing): per spool file (process and
 * segment) how far it is stored and final, so that slicing it again reads
 * only what may have changed (docs/schema.md). */
extern const char obs_schema_mark_sql[];

/* The statements that delete what a filter leaves out of a file's ingest:
 * ?1 the largest id of the table before the file, ?2 its process. The
 * exchanges for which expr does not hold over exchange_metrics, then the
 * connections left with no exchange, then the process left with none. */
enum obs_filter_sql {
	OBS_SQL_FILTER_EXCH,
	OBS_SQL_FILTER_CONN,
	OBS_SQL_FILTER_PROC,
	OBS_SQL_FILTER_COUNT
};
/* sqlite3_malloc'd (sqlite3_free); NULL when out of memory. */
char *obs_schema_filter_sql(enum obs_filter_sql which, const char *expr);

/* Merge the database attached as `src` into main: new rows are inserted,
 * rows still in flight in main are brought up to date, nothing else
 * changes. Run in one transaction; it makes temporary tables that
 * obs_schema_merge_cleanup_sql drops after a failure. */
extern const char obs_schema_merge_sql[];
extern const char obs_schema_merge_cleanup_sql[];
/* A source's high-water mark in the central database (table pull_mark):
 * the DDL; temp.pull_from made from it for the source attached as src and
 * named ?1 (the merge reads only the source's rows from there on); the
 * new mark put (?1 the name, ?2 the file's signature), in the merge's
 * transaction; whether the signature is the one of the last merge. */
extern const char obs_schema_pull_mark_sql[];
extern const char obs_schema_pull_from_sql[];
extern const char obs_schema_pull_mark_put_sql[];
extern const char obs_schema_pull_same_sql[];

/* The OTLP push's marks (otel/cursor.h), one per URL it pushes to: every
 * exchange with an id below next_id was sent, but those in pending
 * (little-endian 64-bit ids: in flight then). Outside the versioned
 * schema, created when missing. */
extern const char obs_schema_otlp_mark_sql[];

/* For a connection that only reads (the manager): a TEMP view
 * exchange_metrics, which the queries then read instead of the stored one,
 * with the same columns computed the same way but the next exchange (of
 * tgap_ms) looked up only where tgap_ms is read. A pass that reads every
 * gap is faster through the stored view: main.exchange_metrics. */
extern const char obs_schema_reader_view_sql[];

/* Before many merges into a central database: the indexes merging cannot
 * afford (rows of many clients interleave in time), dropped. */
extern const char obs_schema_central_sql[];

/* Retention (manager prune): ?1 a UTC midnight in epoch ns; the
 * connections that started before it with their exchanges, then the
 * processes left with no connection. Run in this order, in one
 * transaction. */
enum obs_prune_sql {
	OBS_SQL_PRUNE_EXCH,
	OBS_SQL_PRUNE_CONN,
	OBS_SQL_PRUNE_PROC,
	OBS_SQL_PRUNE_COUNT
};
extern const char *const obs_schema_prune_sql[OBS_SQL_PRUNE_COUNT];

#endif
