/* schema.c - the tables' shape: DDL, views, version and upgrade, and the SQL
 * of the statements that write rows (see schema.h, docs/schema.md). */
#define _GNU_SOURCE
#include "schema.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Added in schema version 2 (a version 1 database gets them by ALTER). */
#define CONN_V2_COLUMNS                                                        \
	"  tls INTEGER NOT NULL DEFAULT 0,\n"                                  \
	"  tls_version TEXT,\n"                                                \
	"  tls_start_ns INTEGER,\n"                                            \
	"  tls_end_ns INTEGER,\n"                                              \
	"  rtt_us INTEGER,\n"                                                  \
	"  rttvar_us INTEGER,\n"                                               \
	"  min_rtt_us INTEGER,\n"                                              \
	"  retrans INTEGER,\n"                                                 \
	"  snd_cwnd INTEGER,\n"                                                \
	"  pmtu INTEGER,\n"                                                    \
	"  delivery_rate INTEGER,\n"                                           \
	"  dns_name TEXT,\n"                                                   \
	"  dns_start_ns INTEGER,\n"                                            \
	"  dns_end_ns INTEGER,\n"
/* Added in schema version 3. */
#define CONN_V3_COLUMNS "  protocol TEXT,\n"
#define EXCH_V3_COLUMNS                                                        \
	"  stream INTEGER,\n"                                                  \
	"  stream_error INTEGER,\n"
/* Added in schema version 4: what the core (core/out.h) knows of a
 * connection on the event path, and of an exchange's interim response. */
#define CONN_V4_COLUMNS                                                        \
	"  tunnel TEXT,\n"                                                     \
	"  websocket INTEGER,\n"                                               \
	"  ws_messages_sent INTEGER,\n"                                        \
	"  ws_messages_received INTEGER,\n"
#define EXCH_V4_COLUMNS                                                        \
	"  interim_status INTEGER,\n"                                          \
	"  interim_ns INTEGER,\n"

/* exchange_metrics, after "CREATE [TEMP] VIEW ...": its tgap_ms is the next
 * exchange's T3 (next_t3, found by next_join) less this one's T6. */
#define EXCH_METRICS_VIEW(next_t3, next_join)                                       \
	"SELECT e.connection_id, e.seq, cl.name AS client, p.program, p.pid,\n"     \
	"  c.peer_addr, c.peer_port, c.local_port,\n"                               \
	"  c.t1_ns, c.t2_ns, e.t3_ns, e.t4_ns, e.t5_ns, e.tfb_ns, e.t6_ns,\n"       \
	"  c.teof_ns, c.t7_ns, e.ds, e.dr,\n"                                       \
	"  CASE WHEN c.connect_error IS NULL THEN (c.t2_ns - c.t1_ns) / 1e6 END\n"  \
	"    AS te_ms,\n"                                                           \
	"  (e.t4_ns - e.t3_ns) / 1e6 AS ts_ms,\n"                                   \
	"  (e.tfb_ns - e.t4_ns) / 1e6 AS tw_ms,\n"                                  \
	"  (e.t6_ns - e.t5_ns) / 1e6 AS tr_ms,\n"                                   \
	"  (e.t6_ns - e.tfb_ns) / 1e6 AS trecv_ms,\n"                               \
	"  CASE WHEN e.stream IS NULL THEN (" next_t3                               \
	" - e.t6_ns) / 1e6 END\n"                                                   \
	"    AS tgap_ms,\n"                                                         \
	"  (c.t7_ns - c.t1_ns) / 1e6 AS tt_ms,\n"                                   \
	"  CASE WHEN e.t4_ns > e.t3_ns THEN e.ds * 1e9 / (e.t4_ns - e.t3_ns) END\n" \
	"    AS rs,\n"                                                              \
	"  CASE WHEN e.t6_ns > e.t5_ns THEN e.dr * 1e9 / (e.t6_ns - e.t5_ns) END\n" \
	"    AS rr,\n"                                                              \
	"  e.method, e.path, e.status, e.host, c.end_class, e.complete,\n"          \
	"  c.tls,\n"                                                                \
	"  CASE WHEN c.tls_end_ns >= c.tls_start_ns THEN\n"                         \
	"    (c.tls_end_ns - c.tls_start_ns) / 1e6 END AS tls_ms,\n"                \
	"  c.dns_name, (c.dns_end_ns - c.dns_start_ns) / 1e6 AS dns_ms,\n"          \
	"  c.protocol, e.stream, e.stream_error,\n"                                 \
	"  e.interim_status, e.interim_ns,\n"                                       \
	"  (e.interim_ns - e.t4_ns) / 1e6 AS interim_wait_ms,\n"                    \
	"  c.tunnel, c.websocket\n"                                                 \
	"FROM exchange e JOIN connection c ON c.id = e.connection_id\n"             \
	"  JOIN process p ON p.id = c.process_id\n"                                 \
	"  JOIN client cl ON cl.id = p.client_id" next_join ";\n"

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS client(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  name TEXT NOT NULL UNIQUE,\n"
	"  host TEXT);\n"
	"CREATE TABLE IF NOT EXISTS process(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  client_id INTEGER NOT NULL REFERENCES client(id),\n"
	"  pid INTEGER NOT NULL,\n"
	"  ppid INTEGER,\n"
	"  start_ns INTEGER NOT NULL,\n"
	"  end_ns INTEGER,\n"
	"  ended INTEGER NOT NULL DEFAULT 0,\n"
	"  host TEXT,\n"
	"  program TEXT,\n"
	"  argv TEXT,\n"
	"  spool TEXT,\n"
	"  dropped INTEGER NOT NULL DEFAULT 0,\n"
	"  UNIQUE(client_id, pid, start_ns));\n"
	"CREATE TABLE IF NOT EXISTS connection(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  process_id INTEGER NOT NULL REFERENCES process(id),\n"
	"  seq INTEGER NOT NULL,\n"
	"  fd INTEGER,\n"
	"  family INTEGER,\n"
	"  peer_addr TEXT,\n"
	"  peer_port INTEGER,\n"
	"  local_addr TEXT,\n"
	"  local_port INTEGER,\n"
	"  t1_ns INTEGER,\n"
	"  t2_ns INTEGER,\n"
	"  t2_how TEXT,\n"
	"  connect_error TEXT,\n"
	"  teof_ns INTEGER,\n"
	"  tshut_ns INTEGER,\n"
	"  t7_ns INTEGER,\n"
	"  end_class TEXT,\n"
	"  end_error TEXT,\n"
	"  nonblocking INTEGER,\n"
	"  complete INTEGER NOT NULL DEFAULT 0,\n" CONN_V2_COLUMNS
		CONN_V3_COLUMNS CONN_V4_COLUMNS "  UNIQUE(process_id, seq));\n"
	"CREATE TABLE IF NOT EXISTS exchange(\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  connection_id INTEGER NOT NULL REFERENCES connection(id),\n"
	"  seq INTEGER NOT NULL,\n"
	"  t3_ns INTEGER,\n"
	"  t4_ns INTEGER,\n"
	"  t5_ns INTEGER,\n"
	"  tfb_ns INTEGER,\n"
	"  t6_ns INTEGER,\n"
	"  ds INTEGER NOT NULL DEFAULT 0,\n"
	"  dr INTEGER NOT NULL DEFAULT 0,\n"
	"  send_calls INTEGER,\n"
	"  recv_calls INTEGER,\n"
	"  server_first INTEGER NOT NULL DEFAULT 0,\n"
	"  peeked INTEGER NOT NULL DEFAULT 0,\n"
	"  complete INTEGER NOT NULL DEFAULT 0,\n"
	"  method TEXT,\n"
	"  path TEXT,\n"
	"  status INTEGER,\n"
	"  host TEXT,\n" EXCH_V3_COLUMNS EXCH_V4_COLUMNS
	"  UNIQUE(connection_id, seq));\n"
	"CREATE INDEX IF NOT EXISTS connection_t1 ON connection(t1_ns);\n"
	"CREATE INDEX IF NOT EXISTS connection_peer ON connection(peer_addr, "
	"peer_port);\n"
	"CREATE INDEX IF NOT EXISTS exchange_t3 ON exchange(t3_ns);\n"
	"CREATE VIEW IF NOT EXISTS connection_metrics AS\n"
	"SELECT c.id AS connection_id, cl.name AS client, p.program, p.pid,\n"
	"  c.peer_addr, c.peer_port, c.local_addr, c.local_port,\n"
	"  c.t1_ns, c.t2_ns, c.teof_ns, c.t7_ns,\n"
	"  CASE WHEN c.connect_error IS NULL THEN (c.t2_ns - c.t1_ns) / 1e6 END\n"
	"    AS te_ms,\n"
	"  (c.t7_ns - c.t1_ns) / 1e6 AS tt_ms,\n"
	"  CASE WHEN c.t7_ns > c.t1_ns THEN\n"
	"    ((SELECT total(ds) + total(dr) FROM exchange e\n"
	"      WHERE e.connection_id = c.id)) * 1e9 / (c.t7_ns - c.t1_ns) END\n"
	"    AS ra,\n"
	"  c.end_class, c.connect_error,\n"
	"  c.tls, c.tls_version, c.protocol,\n"
	"  CASE WHEN c.tls_end_ns >= c.tls_start_ns THEN\n"
	"    (c.tls_end_ns - c.tls_start_ns) / 1e6 END AS tls_ms,\n"
	"  c.rtt_us / 1e3 AS rtt_ms, c.min_rtt_us / 1e3 AS min_rtt_ms,\n"
	"  c.retrans, c.delivery_rate,\n"
	"  c.dns_name, (c.dns_end_ns - c.dns_start_ns) / 1e6 AS dns_ms,\n"
	"  (SELECT count(*) FROM exchange e WHERE e.connection_id = c.id)\n"
	"    AS exchanges,\n"
	"  (SELECT coalesce(sum(ds), 0) FROM exchange e\n"
	"    WHERE e.connection_id = c.id) AS bytes_sent,\n"
	"  (SELECT coalesce(sum(dr), 0) FROM exchange e\n"
	"    WHERE e.connection_id = c.id) AS bytes_received,\n"
	"  c.tunnel, c.websocket, c.ws_messages_sent, c.ws_messages_received\n"
	"FROM connection c JOIN process p ON p.id = c.process_id\n"
	"  JOIN client cl ON cl.id = p.client_id;\n"
	"CREATE VIEW IF NOT EXISTS exchange_metrics AS\n" EXCH_METRICS_VIEW(
		"n.t3_ns", "\n  LEFT JOIN exchange n ON n.connection_id = "
			   "e.connection_id\n    AND n.seq = e.seq + 1");

/* The same columns, computed the same way, with the next exchange's T3
 * looked up only where tgap_ms is read: SQLite 3.40 keeps the stored view's
 * LEFT JOIN in every query, a third of a pass that reads no gap. */
const char obs_schema_reader_view_sql[] =
	"CREATE TEMP VIEW IF NOT EXISTS exchange_metrics AS\n" EXCH_METRICS_VIEW(
		"(SELECT n.t3_ns FROM exchange n WHERE n.connection_id = "
		"e.connection_id AND n.seq = e.seq + 1)",
		"");

/* OBS_SQL_EXCH_INS, whose VALUES obs_schema_exch_insert_sql repeats */
#define EXCH_INSERT                                                                \
	"INSERT OR IGNORE INTO exchange(connection_id, seq, " OBS_SQL_EXCH_COLUMNS \
	", host, path) VALUES"
#define EXCH_VALUES                                                            \
	"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define EXCH_CONFLICT ""
_Static_assert(sizeof(EXCH_VALUES) == 1 + 3 * OBS_SQL_EXCH_PARAMS,
	       "a ? per exchange parameter");

/* obs_schema_conn_insert_sql's parts: OR IGNORE, not ON CONFLICT DO
 * NOTHING, whose NOT NULL checks may abort a statement (every column NOT
 * NULL is bound a value), so a multi-row one keeps a statement journal */
#define CONN_INSERT                                                               \
	"INSERT OR IGNORE INTO connection(process_id, seq, " OBS_SQL_CONN_COLUMNS \
	", " OBS_SQL_INFO_COLUMNS ") VALUES"
#define CONN_VALUES                                                              \
	"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " \
	"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define CONN_CONFLICT ""
_Static_assert(sizeof(CONN_VALUES) == 1 + 3 * OBS_SQL_CONN_PARAMS,
	       "a ? per connection parameter");

static const char *const ingest_sql[OBS_SQL_INGEST_COUNT] = {
	[OBS_SQL_CLIENT_INS] = "INSERT INTO client(name, host) VALUES(?1, ?2) "
			       "ON CONFLICT(name) DO NOTHING",
	[OBS_SQL_CLIENT_GET] = "SELECT id FROM client WHERE name = ?1",
	[OBS_SQL_PROCESS_UPSERT] =
		"INSERT INTO process(client_id, pid, ppid, start_ns, end_ns, "
		"ended, host, program, argv, spool, dropped) "
		"VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
		"ON CONFLICT(client_id, pid, start_ns) DO UPDATE SET "
		"end_ns = coalesce(excluded.end_ns, end_ns), "
		"ended = max(ended, excluded.ended), "
		"dropped = max(dropped, excluded.dropped) RETURNING id",
	[OBS_SQL_CONN_GET] =
		"SELECT id FROM connection WHERE process_id = ?1 AND "
		"seq = ?2",
	[OBS_SQL_CONN_UPD] =
		"UPDATE connection SET (" OBS_SQL_CONN_COLUMNS
		") = (?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
		"?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24) "
		"WHERE process_id = ?1 AND seq = ?2 AND complete = 0",
	[OBS_SQL_EXCH_INS] = EXCH_INSERT EXCH_VALUES EXCH_CONFLICT,
	[OBS_SQL_EXCH_UPD] =
		"UPDATE exchange SET (" OBS_SQL_EXCH_COLUMNS
		") = (?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
		"?14, ?15, ?16, ?17, ?18, ?19, ?20) WHERE connection_id = ?1 "
		"AND seq = ?2 AND complete = 0 AND id < ?21",
	[OBS_SQL_EXCH_DEL] =
		"DELETE FROM exchange WHERE connection_id = ?1 AND "
		"seq = ?2",
	[OBS_SQL_CONN_TLS] = "UPDATE connection SET tls = 1, "
			     "tls_version = ?3, tls_start_ns = ?4, "
			     "tls_end_ns = ?5 WHERE process_id = ?1 AND "
			     "seq = ?2",
	[OBS_SQL_REPLAY_PUT] = "INSERT OR REPLACE INTO ingest_replay("
			       "process_id, conn_seq, state) "
			       "VALUES(?1, ?2, ?3)",
	[OBS_SQL_REPLAY_DEL] = "DELETE FROM ingest_replay WHERE "
			       "process_id = ?1 AND conn_seq = ?2",
	[OBS_SQL_REPLAY_ALL] = "SELECT conn_seq, state FROM ingest_replay "
			       "WHERE process_id = ?1",
	[OBS_SQL_HTTP_UPD] = "UPDATE exchange SET host = ?3, path = ?4 WHERE "
			     "connection_id = ?1 AND seq = ?2 AND id < ?5",
	[OBS_SQL_LABEL_GET] =
		"SELECT e.host, e.path FROM exchange e JOIN connection c ON "
		"c.id = e.connection_id WHERE c.process_id = ?1 AND "
		"c.seq = ?2 AND e.seq = ?3",
	/* what an info record does not know of TLS (a process recording
	 * events: the core's), it does not take back */
	[OBS_SQL_INFO_UPD] = "UPDATE connection SET tls = max(tls, ?2), "
			     "tls_version = coalesce(?3, tls_version), "
			     "tls_start_ns = coalesce(?4, tls_start_ns), "
			     "tls_end_ns = coalesce(?5, tls_end_ns), "
			     "(rtt_us, rttvar_us, min_rtt_us, retrans, "
			     "snd_cwnd, pmtu, delivery_rate, dns_name, "
			     "dns_start_ns, dns_end_ns) = (?6, ?7, ?8, ?9, "
			     "?10, ?11, ?12, ?13, ?14, ?15) WHERE id = ?1",
	[OBS_SQL_MARK_GET] = "SELECT next_offset, pending FROM ingest_mark "
			     "WHERE process_id = ?1 AND segment = ?2",
	[OBS_SQL_MARK_PUT] = "INSERT OR REPLACE INTO ingest_mark(process_id, "
			     "segment, next_offset, pending) "
			     "VALUES(?1, ?2, ?3, ?4)",
};

/* next_offset: every slot before it holds a record stored in its final
 * state, but those at the offsets in pending (little-endian 64-bit
 * integers): records still in flight, read again first. */
const char obs_schema_mark_sql[] =
	"CREATE TABLE IF NOT EXISTS ingest_mark(\n"
	"  process_id INTEGER NOT NULL REFERENCES process(id) "
	"ON DELETE CASCADE,\n"
	"  segment INTEGER NOT NULL,\n"
	"  next_offset INTEGER NOT NULL,\n"
	"  pending BLOB,\n"
	"  PRIMARY KEY(process_id, segment)) WITHOUT ROWID;\n"
	/* an events spool's open connection: its replay as a pass left it
	 * (common/replays.h) */
	"CREATE TABLE IF NOT EXISTS ingest_replay(\n"
	"  process_id INTEGER NOT NULL REFERENCES process(id) "
	"ON DELETE CASCADE,\n"
	"  conn_seq INTEGER NOT NULL,\n"
	"  state BLOB NOT NULL,\n"
	"  PRIMARY KEY(process_id, conn_seq)) WITHOUT ROWID;\n";

const char *obs_schema_ingest_sql(enum obs_ingest_sql which)
{
	return ingest_sql[which];
}

/* head, then values `rows` times, then tail */
static char *insert_sql(const char *head, const char *values, int rows,
			const char *tail)
{
	sqlite3_str *sql = sqlite3_str_new(NULL);

	sqlite3_str_appendall(sql, head);
	for (int i = 0; i < rows; i++) {
		if (i)
			sqlite3_str_appendall(sql, ", ");
		sqlite3_str_appendall(sql, values);
	}
	sqlite3_str_appendall(sql, tail);
	return sqlite3_str_finish(sql);
}

char *obs_schema_exch_insert_sql(int rows)
{
	return insert_sql(EXCH_INSERT, EXCH_VALUES, rows, EXCH_CONFLICT);
}

char *obs_schema_conn_insert_sql(int rows)
{
	return insert_sql(CONN_INSERT, CONN_VALUES, rows, CONN_CONFLICT);
}

/* The columns added since version 1, by table: version 2 the connection's
 * TLS, TCP_INFO and DNS; version 3 its protocol and the exchange's HTTP/2
 * stream; version 4 the connection's tunnel and WebSocket, the exchange's
 * interim response. */
static const char *const added_columns[][2] = {
	{ "connection", "tls INTEGER NOT NULL DEFAULT 0" },
	{ "connection", "tls_version TEXT" },
	{ "connection", "tls_start_ns INTEGER" },
	{ "connection", "tls_end_ns INTEGER" },
	{ "connection", "rtt_us INTEGER" },
	{ "connection", "rttvar_us INTEGER" },
	{ "connection", "min_rtt_us INTEGER" },
	{ "connection", "retrans INTEGER" },
	{ "connection", "snd_cwnd INTEGER" },
	{ "connection", "pmtu INTEGER" },
	{ "connection", "delivery_rate INTEGER" },
	{ "connection", "dns_name TEXT" },
	{ "connection", "dns_start_ns INTEGER" },
	{ "connection", "dns_end_ns INTEGER" },
	{ "connection", "protocol TEXT" },
	{ "exchange", "stream INTEGER" },
	{ "exchange", "stream_error INTEGER" },
	{ "connection", "tunnel TEXT" },
	{ "connection", "websocket INTEGER" },
	{ "connection", "ws_messages_sent INTEGER" },
	{ "connection", "ws_messages_received INTEGER" },
	{ "exchange", "interim_status INTEGER" },
	{ "exchange", "interim_ns INTEGER" },
};

/* Whether table has a column named like the start of def. */
static bool has_column(sqlite3 *db, const char *table, const char *def)
{
	sqlite3_stmt *st = NULL;
	bool found = false;

	if (sqlite3_prepare_v2(db,
			       "SELECT 1 FROM pragma_table_info(?1) WHERE "
			       "name = substr(?2, 1, instr(?2, ' ') - 1)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, def, -1, SQLITE_STATIC);
		found = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return found;
}

/* An older version to this one: the columns it lacks, and views that show
 * them. One transaction: all or nothing. */
static int upgrade(sqlite3 *db, int version, const char *path, char *err,
		   size_t errlen)
{
	char sql[128], *msg = NULL;
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);

	for (size_t i = 0; rc == SQLITE_OK &&
			   i < sizeof(added_columns) / sizeof(*added_columns);
	     i++) {
		if (has_column(db, added_columns[i][0], added_columns[i][1]))
			continue;
		snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s",
			 added_columns[i][0], added_columns[i][1]);
		rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db,
				  "DROP VIEW IF EXISTS connection_metrics;"
				  "DROP VIEW IF EXISTS exchange_metrics;",
				  NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, schema_sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
			 OBS_SCHEMA_VERSION);
		rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen,
			 "%s: cannot upgrade from schema version %d: %s", path,
			 version, msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

/* Check (or create) the schema. 0 ok, -1 with err set. */
int obs_schema_ensure(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int version = -1, rc;
	char *msg = NULL;

	rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version < 0) {
		snprintf(err, errlen, "%s: not an observe database (%s)", path,
			 sqlite3_errmsg(db));
		return -1;
	}
	if (version > OBS_SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s: schema version %d is newer than this program's "
			 "(%d)",
			 path, version, OBS_SCHEMA_VERSION);
		return -1;
	}
	if (version == OBS_SCHEMA_VERSION)
		return 0;
	if (version >= 1)
		return upgrade(db, version, path, err, errlen);
	if (version == 0) {
		/* A database with tables of its own is not ours to change. */
		int tables = 0;
		rc = sqlite3_prepare_v2(db,
					"SELECT count(*) FROM sqlite_master",
					-1, &st, NULL);
		if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			tables = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		if (rc != SQLITE_OK) {
			snprintf(err, errlen,
				 "%s: not an observe database (%s)", path,
				 sqlite3_errmsg(db));
			return -1;
		}
		if (tables > 0) {
			snprintf(err, errlen,
				 "%s: not an observe database (it has other "
				 "tables and no schema version)",
				 path);
			return -1;
		}
	}
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, schema_sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK) {
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 OBS_SCHEMA_VERSION);
		rc = sqlite3_exec(db, pragma, NULL, NULL, &msg);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot create the schema: %s", path,
			 msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

int obs_schema_version(sqlite3 *db, const char *schema, char *err,
		       size_t errlen)
{
	char *sql = sqlite3_mprintf("PRAGMA \"%w\".user_version", schema);
	sqlite3_stmt *st = NULL;
	int version = -1;

	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	else
		snprintf(err, errlen, "%s",
			 sql ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return version;
}

void obs_schema_too_old(int version, char *why, size_t whylen)
{
	snprintf(why, whylen,
		 "made by an older observe (schema version %d; this "
		 "manager reads %d): `slicer -o FILE` upgrades it",
		 version, OBS_SCHEMA_VERSION);
}

int64_t obs_schema_max_id(sqlite3 *db, const char *table)
{
	char sql[96];
	sqlite3_stmt *st;
	int64_t id = -1;

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) FROM %s",
		 table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

char *obs_schema_filter_sql(enum obs_filter_sql which, const char *expr)
{
	switch (which) {
	case OBS_SQL_FILTER_EXCH:
		return sqlite3_mprintf(
			"DELETE FROM exchange AS x WHERE x.id > ?1 AND "
			"x.connection_id IN (SELECT id FROM connection WHERE "
			"process_id = ?2) AND NOT EXISTS (SELECT 1 FROM "
			"exchange_metrics WHERE connection_id = x.connection_id "
			"AND seq = x.seq AND (%s))",
			expr);
	case OBS_SQL_FILTER_CONN:
		return sqlite3_mprintf(
			"DELETE FROM connection WHERE id > ?1 AND process_id = ?2 "
			"AND NOT EXISTS (SELECT 1 FROM exchange e "
			"WHERE e.connection_id = connection.id)");
	case OBS_SQL_FILTER_PROC:
	default:
		return sqlite3_mprintf(
			"DELETE FROM process WHERE id = ?2 AND id > ?1 AND NOT "
			"EXISTS (SELECT 1 FROM connection c "
			"WHERE c.process_id = process.id)");
	}
}

/* Rows are matched on their identity: client name; pid and process start;
 * connection number; exchange number. */
const char obs_schema_merge_sql[] =
	"INSERT INTO client(name, host) SELECT name, host FROM src.client "
	"WHERE true ON CONFLICT(name) DO NOTHING;"
	"INSERT INTO process(client_id, pid, ppid, start_ns, end_ns, ended, "
	"host, program, argv, spool, dropped) "
	"SELECT c.id, p.pid, p.ppid, p.start_ns, p.end_ns, p.ended, p.host, "
	"p.program, p.argv, p.spool, p.dropped FROM src.process p "
	"JOIN src.client sc ON sc.id = p.client_id "
	"JOIN main.client c ON c.name = sc.name WHERE true "
	"ON CONFLICT(client_id, pid, start_ns) DO UPDATE SET "
	"end_ns = excluded.end_ns, ended = excluded.ended, "
	"dropped = excluded.dropped WHERE process.ended = 0;"
	"CREATE TEMP TABLE process_map AS "
	"SELECT p.id AS src_id, mp.id AS dst_id FROM src.process p "
	"JOIN src.client sc ON sc.id = p.client_id "
	"JOIN main.client c ON c.name = sc.name "
	"JOIN main.process mp ON mp.client_id = c.id AND mp.pid = p.pid "
	"AND mp.start_ns = p.start_ns;"
	"INSERT INTO connection(process_id, seq, fd, family, peer_addr, "
	"peer_port, local_addr, local_port, t1_ns, t2_ns, t2_how, "
	"connect_error, teof_ns, tshut_ns, t7_ns, end_class, end_error, "
	"nonblocking, complete, tls, tls_version, tls_start_ns, tls_end_ns, "
	"rtt_us, rttvar_us, min_rtt_us, retrans, snd_cwnd, pmtu, "
	"delivery_rate, dns_name, dns_start_ns, dns_end_ns, protocol, tunnel, "
	"websocket, ws_messages_sent, ws_messages_received) "
	"SELECT m.dst_id, k.seq, k.fd, k.family, k.peer_addr, k.peer_port, "
	"k.local_addr, k.local_port, k.t1_ns, k.t2_ns, k.t2_how, "
	"k.connect_error, k.teof_ns, k.tshut_ns, k.t7_ns, k.end_class, "
	"k.end_error, k.nonblocking, k.complete, k.tls, k.tls_version, "
	"k.tls_start_ns, k.tls_end_ns, k.rtt_us, k.rttvar_us, k.min_rtt_us, "
	"k.retrans, k.snd_cwnd, k.pmtu, k.delivery_rate, k.dns_name, "
	"k.dns_start_ns, k.dns_end_ns, k.protocol, k.tunnel, k.websocket, "
	"k.ws_messages_sent, k.ws_messages_received "
	"FROM src.connection k "
	"JOIN temp.process_map m ON m.src_id = k.process_id "
	"WHERE k.id >= (SELECT conn_from FROM temp.pull_from) "
	"ON CONFLICT(process_id, seq) DO UPDATE SET "
	"t2_ns = excluded.t2_ns, t2_how = excluded.t2_how, "
	"connect_error = excluded.connect_error, teof_ns = excluded.teof_ns, "
	"tshut_ns = excluded.tshut_ns, t7_ns = excluded.t7_ns, "
	"end_class = excluded.end_class, end_error = excluded.end_error, "
	"complete = excluded.complete, tls = excluded.tls, "
	"tls_version = excluded.tls_version, "
	"tls_start_ns = excluded.tls_start_ns, tls_end_ns = excluded.tls_end_ns, "
	"rtt_us = excluded.rtt_us, rttvar_us = excluded.rttvar_us, "
	"min_rtt_us = excluded.min_rtt_us, retrans = excluded.retrans, "
	"snd_cwnd = excluded.snd_cwnd, pmtu = excluded.pmtu, "
	"delivery_rate = excluded.delivery_rate, dns_name = excluded.dns_name, "
	"dns_start_ns = excluded.dns_start_ns, dns_end_ns = excluded.dns_end_ns, "
	"protocol = excluded.protocol, tunnel = excluded.tunnel, "
	"websocket = excluded.websocket, "
	"ws_messages_sent = excluded.ws_messages_sent, "
	"ws_messages_received = excluded.ws_messages_received "
	"WHERE connection.complete = 0;"
	"CREATE TEMP TABLE connection_map AS "
	"SELECT k.id AS src_id, mk.id AS dst_id FROM src.connection k "
	"JOIN temp.process_map m ON m.src_id = k.process_id "
	"JOIN main.connection mk ON mk.process_id = m.dst_id AND mk.seq = k.seq "
	"WHERE k.id >= (SELECT conn_from FROM temp.pull_from) OR k.id IN "
	"(SELECT connection_id FROM src.exchange "
	"WHERE id >= (SELECT exch_from FROM temp.pull_from));"
	"INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns, tfb_ns, "
	"t6_ns, ds, dr, send_calls, recv_calls, server_first, peeked, complete, "
	"method, path, status, host, stream, stream_error, interim_status, "
	"interim_ns) "
	"SELECT m.dst_id, x.seq, x.t3_ns, x.t4_ns, x.t5_ns, x.tfb_ns, x.t6_ns, "
	"x.ds, x.dr, x.send_calls, x.recv_calls, x.server_first, x.peeked, "
	"x.complete, x.method, x.path, x.status, x.host, x.stream, "
	"x.stream_error, x.interim_status, x.interim_ns FROM src.exchange x "
	"JOIN temp.connection_map m ON m.src_id = x.connection_id "
	"WHERE x.id >= (SELECT exch_from FROM temp.pull_from) "
	"ON CONFLICT(connection_id, seq) DO UPDATE SET "
	"t3_ns = excluded.t3_ns, t4_ns = excluded.t4_ns, t5_ns = excluded.t5_ns, "
	"tfb_ns = excluded.tfb_ns, t6_ns = excluded.t6_ns, ds = excluded.ds, "
	"dr = excluded.dr, send_calls = excluded.send_calls, "
	"recv_calls = excluded.recv_calls, complete = excluded.complete, "
	"method = excluded.method, path = excluded.path, "
	"status = excluded.status, host = excluded.host, "
	"stream = excluded.stream, stream_error = excluded.stream_error, "
	"interim_status = excluded.interim_status, "
	"interim_ns = excluded.interim_ns "
	"WHERE exchange.complete = 0;"
	"DROP TABLE temp.process_map;"
	"DROP TABLE temp.connection_map;";

const char obs_schema_merge_cleanup_sql[] =
	"DROP TABLE IF EXISTS temp.process_map;"
	"DROP TABLE IF EXISTS temp.connection_map;"
	"DROP TABLE IF EXISTS temp.pull_from";

/* The central database's marks, one per source (its name as pulled): the
 * file's identity, size and times when last merged (signature: the same
 * again means nothing to read), the source's first process (fingerprint:
 * another database under the same name starts over), and the lowest connection
 * and exchange ids that may still change or are new there (the lowest in flight
 * when last pulled, else one past the largest). Outside the versioned schema.
 */
const char obs_schema_pull_mark_sql[] =
	"CREATE TABLE IF NOT EXISTS pull_mark(\n"
	"  source TEXT PRIMARY KEY,\n"
	"  signature TEXT,\n"
	"  fingerprint TEXT,\n"
	"  conn_from INTEGER NOT NULL,\n"
	"  exch_from INTEGER NOT NULL);\n";

/* temp.pull_from for the source attached as src and named ?1: its mark
 * when the fingerprint matches, else from the first row. */
const char obs_schema_pull_from_sql[] =
	"CREATE TEMP TABLE pull_from AS SELECT "
	"coalesce(m.conn_from, 0) AS conn_from, "
	"coalesce(m.exch_from, 0) AS exch_from FROM (SELECT 1) "
	"LEFT JOIN main.pull_mark m ON m.source = ?1 AND m.fingerprint IS "
	"(SELECT c.name || '/' || p.pid || '/' || p.start_ns "
	"FROM src.process p JOIN src.client c ON c.id = p.client_id "
	"ORDER BY p.id LIMIT 1)";

/* The source's new mark, in the merge's transaction (?1 its name, ?2 its
 * signature). */
const char obs_schema_pull_mark_put_sql[] =
	"INSERT OR REPLACE INTO main.pull_mark(source, signature, fingerprint, "
	"conn_from, exch_from) SELECT ?1, ?2, "
	"(SELECT c.name || '/' || p.pid || '/' || p.start_ns "
	"FROM src.process p JOIN src.client c ON c.id = p.client_id "
	"ORDER BY p.id LIMIT 1), "
	"coalesce((SELECT min(id) FROM src.connection WHERE complete = 0 AND "
	"id >= f.conn_from), (SELECT max(id) + 1 FROM src.connection), 0), "
	"coalesce((SELECT min(id) FROM src.exchange WHERE complete = 0 AND "
	"id >= f.exch_from), (SELECT max(id) + 1 FROM src.exchange), 0) "
	"FROM temp.pull_from f";

const char obs_schema_otlp_mark_sql[] =
	"CREATE TABLE IF NOT EXISTS otlp_mark(\n"
	"  endpoint TEXT PRIMARY KEY,\n"
	"  next_id INTEGER NOT NULL,\n"
	"  pending BLOB);\n";

/* 1 when the source named ?1 was merged last with signature ?2. */
const char obs_schema_pull_same_sql[] =
	"SELECT 1 FROM main.pull_mark WHERE source = ?1 AND signature = ?2";

/* No index on exchange(t3_ns) in a central database: the times of many
 * clients interleave, so every merged row would land at a random place in
 * it; keeping it made merging 100 x 100,000 exchanges take 100 s instead of
 * 16 s (scripts/bench-merge.sh). Time filters scan instead. */
const char obs_schema_central_sql[] = "DROP INDEX IF EXISTS exchange_t3";

const char *const obs_schema_prune_sql[OBS_SQL_PRUNE_COUNT] = {
	[OBS_SQL_PRUNE_EXCH] = "DELETE FROM exchange WHERE connection_id IN "
			       "(SELECT id FROM connection WHERE t1_ns < ?1)",
	[OBS_SQL_PRUNE_CONN] = "DELETE FROM connection WHERE t1_ns < ?1",
	[OBS_SQL_PRUNE_PROC] = "DELETE FROM process WHERE start_ns < ?1 AND "
			       "NOT EXISTS (SELECT 1 FROM connection c WHERE "
			       "c.process_id = process.id)",
};
