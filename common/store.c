/* store.c - the client database: schema, and idempotent ingest of spools
 * (see store.h and docs/schema.md). */
#define _GNU_SOURCE
#include "store.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "spool_reader.h"

/* Added in schema version 2 (a version 1 database gets them by ALTER). */
#define CONN_V2_COLUMNS                                                  \
	"  tls INTEGER NOT NULL DEFAULT 0,\n"                              \
	"  tls_version TEXT,\n"                                            \
	"  tls_start_ns INTEGER,\n"                                        \
	"  tls_end_ns INTEGER,\n"                                          \
	"  rtt_us INTEGER,\n"                                              \
	"  rttvar_us INTEGER,\n"                                           \
	"  min_rtt_us INTEGER,\n"                                          \
	"  retrans INTEGER,\n"                                             \
	"  snd_cwnd INTEGER,\n"                                            \
	"  pmtu INTEGER,\n"                                                \
	"  delivery_rate INTEGER,\n"                                        \
	"  dns_name TEXT,\n"                                               \
	"  dns_start_ns INTEGER,\n"                                        \
	"  dns_end_ns INTEGER,\n"

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
	"  complete INTEGER NOT NULL DEFAULT 0,\n"
	CONN_V2_COLUMNS
	"  UNIQUE(process_id, seq));\n"
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
	"  host TEXT,\n"
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
	"  c.tls, c.tls_version,\n"
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
	"    WHERE e.connection_id = c.id) AS bytes_received\n"
	"FROM connection c JOIN process p ON p.id = c.process_id\n"
	"  JOIN client cl ON cl.id = p.client_id;\n"
	"CREATE VIEW IF NOT EXISTS exchange_metrics AS\n"
	"SELECT e.connection_id, e.seq, cl.name AS client, p.program, p.pid,\n"
	"  c.peer_addr, c.peer_port, c.local_port,\n"
	"  c.t1_ns, c.t2_ns, e.t3_ns, e.t4_ns, e.t5_ns, e.tfb_ns, e.t6_ns,\n"
	"  c.teof_ns, c.t7_ns, e.ds, e.dr,\n"
	"  CASE WHEN c.connect_error IS NULL THEN (c.t2_ns - c.t1_ns) / 1e6 END\n"
	"    AS te_ms,\n"
	"  (e.t4_ns - e.t3_ns) / 1e6 AS ts_ms,\n"
	"  (e.tfb_ns - e.t4_ns) / 1e6 AS tw_ms,\n"
	"  (e.t6_ns - e.t5_ns) / 1e6 AS tr_ms,\n"
	"  (e.t6_ns - e.tfb_ns) / 1e6 AS trecv_ms,\n"
	"  (n.t3_ns - e.t6_ns) / 1e6 AS tgap_ms,\n"
	"  (c.t7_ns - c.t1_ns) / 1e6 AS tt_ms,\n"
	"  CASE WHEN e.t4_ns > e.t3_ns THEN e.ds * 1e9 / (e.t4_ns - e.t3_ns) END\n"
	"    AS rs,\n"
	"  CASE WHEN e.t6_ns > e.t5_ns THEN e.dr * 1e9 / (e.t6_ns - e.t5_ns) END\n"
	"    AS rr,\n"
	"  e.method, e.path, e.status, e.host, c.end_class, e.complete,\n"
	"  c.tls,\n"
	"  CASE WHEN c.tls_end_ns >= c.tls_start_ns THEN\n"
	"    (c.tls_end_ns - c.tls_start_ns) / 1e6 END AS tls_ms,\n"
	"  c.dns_name, (c.dns_end_ns - c.dns_start_ns) / 1e6 AS dns_ms\n"
	"FROM exchange e JOIN connection c ON c.id = e.connection_id\n"
	"  JOIN process p ON p.id = c.process_id\n"
	"  JOIN client cl ON cl.id = p.client_id\n"
	"  LEFT JOIN exchange n ON n.connection_id = e.connection_id\n"
	"    AND n.seq = e.seq + 1;\n";

enum {
	ST_CLIENT_INS,
	ST_CLIENT_GET,
	ST_PROCESS_UPSERT,
	ST_CONN_INS,
	ST_CONN_GET,
	ST_CONN_UPD,
	ST_EXCH_INS,
	ST_EXCH_UPD,
	ST_EXCH_DEL,
	ST_HTTP_UPD,
	ST_INFO_UPD,
	ST_COUNT
};

#define CONN_COLS                                                        \
	"fd, family, peer_addr, peer_port, local_addr, local_port, t1_ns, " \
	"t2_ns, t2_how, connect_error, teof_ns, tshut_ns, t7_ns, "          \
	"end_class, end_error, nonblocking, complete"
#define EXCH_COLS                                                          \
	"t3_ns, t4_ns, t5_ns, tfb_ns, t6_ns, ds, dr, send_calls, recv_calls, " \
	"server_first, peeked, complete, method, status"

static const char *const statements[ST_COUNT] = {
	[ST_CLIENT_INS] = "INSERT INTO client(name, host) VALUES(?1, ?2) "
			  "ON CONFLICT(name) DO NOTHING",
	[ST_CLIENT_GET] = "SELECT id FROM client WHERE name = ?1",
	[ST_PROCESS_UPSERT] =
		"INSERT INTO process(client_id, pid, ppid, start_ns, end_ns, "
		"ended, host, program, argv, spool, dropped) "
		"VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
		"ON CONFLICT(client_id, pid, start_ns) DO UPDATE SET "
		"end_ns = excluded.end_ns, ended = excluded.ended, "
		"dropped = excluded.dropped RETURNING id",
	[ST_CONN_INS] = "INSERT INTO connection(process_id, seq, " CONN_COLS
			") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
			"?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) "
			"ON CONFLICT(process_id, seq) DO NOTHING",
	[ST_CONN_GET] = "SELECT id FROM connection WHERE process_id = ?1 AND "
			"seq = ?2",
	[ST_CONN_UPD] = "UPDATE connection SET (" CONN_COLS
			") = (?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
			"?14, ?15, ?16, ?17, ?18, ?19) "
			"WHERE process_id = ?1 AND seq = ?2 AND complete = 0",
	[ST_EXCH_INS] = "INSERT INTO exchange(connection_id, seq, " EXCH_COLS
			") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
			"?12, ?13, ?14, ?15, ?16) ON CONFLICT(connection_id, seq) "
			"DO NOTHING",
	[ST_EXCH_UPD] = "UPDATE exchange SET (" EXCH_COLS
			") = (?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
			"?14, ?15, ?16) WHERE connection_id = ?1 AND seq = ?2 AND "
			"complete = 0",
	[ST_EXCH_DEL] = "DELETE FROM exchange WHERE connection_id = ?1 AND "
			"seq = ?2",
	[ST_HTTP_UPD] = "UPDATE exchange SET host = ?3, path = ?4 WHERE "
			"connection_id = ?1 AND seq = ?2",
	[ST_INFO_UPD] = "UPDATE connection SET tls = ?2, tls_version = ?3, "
			"tls_start_ns = ?4, tls_end_ns = ?5, rtt_us = ?6, "
			"rttvar_us = ?7, min_rtt_us = ?8, retrans = ?9, "
			"snd_cwnd = ?10, pmtu = ?11, delivery_rate = ?12, "
			"dns_name = ?13, dns_start_ns = ?14, dns_end_ns = ?15 "
			"WHERE id = ?1",
};

struct obs_store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *st[ST_COUNT];
	char host[65];
	sqlite3_stmt *filter_exch; /* deletes the new rows the filter drops */
	sqlite3_stmt *filter_conn;
	sqlite3_stmt *filter_proc;
	FILE *progress;            /* a terminal, or NULL */
};

static const char *const t2_how_names[] = { NULL, "connect", "so_error",
					    "reconnect", "first_io" };
static const char *const end_class_names[] = {
	NULL,	   "server_close",  "client_close", "reset",
	"timeout", "refused", "connect_error", "unterminated",
};

/* cidr_match(addr, 'net/len'): whether addr is in the network. */
static void cidr_match(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *addr = (const char *)sqlite3_value_text(argv[0]);
	const char *cidr = (const char *)sqlite3_value_text(argv[1]);
	unsigned char a[16], n[16];
	char net[INET6_ADDRSTRLEN + 1];
	const char *slash;
	int family, bits, max;
	char *end;

	(void)argc;
	if (!addr || !cidr || !(slash = strchr(cidr, '/')) ||
	    (size_t)(slash - cidr) >= sizeof(net)) {
		sqlite3_result_int(ctx, 0);
		return;
	}
	memcpy(net, cidr, (size_t)(slash - cidr));
	net[slash - cidr] = '\0';
	family = strchr(net, ':') ? AF_INET6 : AF_INET;
	max = family == AF_INET6 ? 128 : 32;
	bits = (int)strtol(slash + 1, &end, 10);
	if (*end || bits < 0 || bits > max || inet_pton(family, net, n) != 1 ||
	    inet_pton(family, addr, a) != 1) {
		sqlite3_result_int(ctx, 0);
		return;
	}
	for (int i = 0; i < bits; i++) {
		int mask = 0x80 >> (i % 8);
		if ((a[i / 8] & mask) != (n[i / 8] & mask)) {
			sqlite3_result_int(ctx, 0);
			return;
		}
	}
	sqlite3_result_int(ctx, 1);
}

int obs_store_register_functions(sqlite3 *db)
{
	return sqlite3_create_function(db, "cidr_match", 2,
				       SQLITE_UTF8 | SQLITE_DETERMINISTIC,
				       NULL, cidr_match, NULL, NULL) == SQLITE_OK
		       ? 0
		       : -1;
}

void obs_store_set_progress(obs_store *store, FILE *tty)
{
	store->progress = tty;
}

sqlite3 *obs_store_db(obs_store *store)
{
	return store->db;
}

void obs_store_close(obs_store *store)
{
	if (!store)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(store->st[i]);
	sqlite3_finalize(store->filter_exch);
	sqlite3_finalize(store->filter_conn);
	sqlite3_finalize(store->filter_proc);
	sqlite3_close(store->db);
	free(store->path);
	free(store);
}

/* Version 1 to 2: the connection's TLS and TCP_INFO columns, and views
 * that show them. One transaction: all or nothing. */
static int store_upgrade_v1(obs_store *s, char *err, size_t errlen)
{
	static const char *const columns[] = {
		"tls INTEGER NOT NULL DEFAULT 0", "tls_version TEXT",
		"tls_start_ns INTEGER", "tls_end_ns INTEGER", "rtt_us INTEGER",
		"rttvar_us INTEGER", "min_rtt_us INTEGER", "retrans INTEGER",
		"snd_cwnd INTEGER", "pmtu INTEGER", "delivery_rate INTEGER",
		"dns_name TEXT", "dns_start_ns INTEGER", "dns_end_ns INTEGER",
	};
	char sql[128], *msg = NULL;
	int rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, &msg);

	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(columns) / sizeof(*columns);
	     i++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE connection ADD COLUMN %s",
			 columns[i]);
		rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db,
				  "DROP VIEW IF EXISTS connection_metrics;"
				  "DROP VIEW IF EXISTS exchange_metrics;",
				  NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
			 OBS_SCHEMA_VERSION);
		rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen,
			 "%s: cannot upgrade from schema version 1: %s",
			 s->path, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

/* Check (or create) the schema. 0 ok, -1 with err set. */
static int store_schema(obs_store *s, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int version = -1, rc;
	char *msg = NULL;

	rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version < 0) {
		snprintf(err, errlen, "%s: not an observe database (%s)",
			 s->path, sqlite3_errmsg(s->db));
		return -1;
	}
	if (version > OBS_SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s: schema version %d is newer than this program's "
			 "(%d)",
			 s->path, version, OBS_SCHEMA_VERSION);
		return -1;
	}
	if (version == OBS_SCHEMA_VERSION)
		return 0;
	if (version == 1)
		return store_upgrade_v1(s, err, errlen);
	if (version == 0) {
		/* A database with tables of its own is not ours to change. */
		int tables = 0;
		rc = sqlite3_prepare_v2(s->db,
					"SELECT count(*) FROM sqlite_master",
					-1, &st, NULL);
		if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			tables = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		if (rc != SQLITE_OK) {
			snprintf(err, errlen, "%s: not an observe database (%s)",
				 s->path, sqlite3_errmsg(s->db));
			return -1;
		}
		if (tables > 0) {
			snprintf(err, errlen,
				 "%s: not an observe database (it has other "
				 "tables and no schema version)",
				 s->path);
			return -1;
		}
	}
	rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK) {
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 OBS_SCHEMA_VERSION);
		rc = sqlite3_exec(s->db, pragma, NULL, NULL, &msg);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot create the schema: %s",
			 s->path, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

obs_store *obs_store_open(const char *path, char *err, size_t errlen)
{
	obs_store *s = calloc(1, sizeof(*s));
	struct utsname uts;
	char *msg = NULL;
	int rc;

	if (!s || !(s->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(s);
		return NULL;
	}
	if (uname(&uts) == 0)
		snprintf(s->host, sizeof(s->host), "%s", uts.nodename);
	/* URI file names on: the manager attaches sources read-only */
	rc = sqlite3_open_v2(path, &s->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_URI,
			     NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open database: %s", path,
			 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 10000);
	obs_store_register_functions(s->db);
	rc = sqlite3_exec(s->db,
			  "PRAGMA journal_mode = WAL; PRAGMA synchronous = "
			  "NORMAL; PRAGMA foreign_keys = ON",
			  NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: not an observe database (%s)", path,
			 msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		goto fail;
	}
	if (store_schema(s, err, errlen) != 0)
		goto fail;
	for (int i = 0; i < ST_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, statements[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &s->st[i],
				       NULL) != SQLITE_OK) {
			snprintf(err, errlen, "%s: %s", path,
				 sqlite3_errmsg(s->db));
			goto fail;
		}
	}
	return s;
fail:
	obs_store_close(s);
	return NULL;
}

/* ---- filters ------------------------------------------------------------ */

static bool only_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ';')
		p++;
	return *p == '\0';
}

int obs_store_check_expr(sqlite3 *db, const char *expr, char *err,
			 size_t errlen)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	char *sql = sqlite3_mprintf(
		"SELECT 1 FROM exchange_metrics WHERE (%s) LIMIT 0", expr);
	int rc;

	if (!sql) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "invalid filter expression: %s: %s",
			 sqlite3_errmsg(db), expr);
	} else if (!tail || !only_space(tail)) {
		snprintf(err, errlen,
			 "invalid filter expression: more than one expression: "
			 "%s",
			 expr);
		rc = SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? 0 : -1;
}

int obs_store_set_filter(obs_store *s, const char *expr, char *err,
			 size_t errlen)
{
	char *sql;
	int rc;

	if (obs_store_check_expr(s->db, expr, err, errlen) != 0)
		return -1;
	/* ?1: the largest exchange id before this file, ?2: the process */
	sql = sqlite3_mprintf(
		"DELETE FROM exchange AS x WHERE x.id > ?1 AND x.connection_id "
		"IN (SELECT id FROM connection WHERE process_id = ?2) AND NOT "
		"EXISTS (SELECT 1 FROM exchange_metrics WHERE connection_id = "
		"x.connection_id AND seq = x.seq AND (%s))",
		expr);
	rc = sql ? sqlite3_prepare_v2(s->db, sql, -1, &s->filter_exch, NULL)
		 : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
			s->db,
			"DELETE FROM connection WHERE id > ?1 AND process_id = ?2 "
			"AND NOT EXISTS (SELECT 1 FROM exchange e "
			"WHERE e.connection_id = connection.id)",
			-1, &s->filter_conn, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
			s->db,
			"DELETE FROM process WHERE id = ?2 AND id > ?1 AND NOT "
			"EXISTS (SELECT 1 FROM connection c "
			"WHERE c.process_id = process.id)",
			-1, &s->filter_proc, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "invalid filter expression: %s: %s",
			 sqlite3_errmsg(s->db), expr);
		return -1;
	}
	return 0;
}

static int64_t max_id(obs_store *s, const char *table)
{
	char sql[64];
	sqlite3_stmt *st;
	int64_t id = 0;

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) FROM %s",
		 table);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

static int run_filter(obs_store *s, sqlite3_stmt *st, int64_t before,
		      int64_t process_id, uint64_t *deleted)
{
	int rc;

	sqlite3_bind_int64(st, 1, before);
	sqlite3_bind_int64(st, 2, process_id);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (deleted)
		*deleted += (uint64_t)sqlite3_changes(s->db);
	return 0;
}

/* ---- ingest ------------------------------------------------------------ */

struct ingest {
	obs_store *store;
	struct obs_spool sp;
	struct obs_ingest_stats *stats;
	FILE *msgs;
	bool over;         /* the process is gone: open records are final */
	int64_t process_id;
	int64_t *conn_ids; /* connection row id by conn_seq */
	size_t n_conn_ids;
	bool skipped;
};

static void say(FILE *msgs, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(FILE *msgs, const char *path, const char *fmt, ...)
{
	va_list ap;

	if (!msgs)
		return;
	fprintf(msgs, "%s: %s: ", program_invocation_short_name, path);
	va_start(ap, fmt);
	vfprintf(msgs, fmt, ap);
	va_end(ap);
	fputc('\n', msgs);
}

static void report_record(void *ctx, size_t offset, const char *why)
{
	struct ingest *in = ctx;

	in->stats->records_bad++;
	in->skipped = true;
	say(in->msgs, in->sp.path, "offset %zu: %s: record skipped", offset,
	    why);
}

/* Whether the process that wrote the spool is still running here. */
static bool writer_alive(const struct obs_store *s,
			 const struct obs_spool_header *h)
{
	char path[64], buf[1024];
	unsigned long long start_ticks;
	FILE *f;
	char *p;
	long hz = sysconf(_SC_CLK_TCK);
	long long btime = -1;

	if (strncmp(h->host, s->host, sizeof(h->host)) != 0)
		return false; /* written on another machine: cannot tell */
	if (h->pid <= 0 || (kill(h->pid, 0) != 0 && errno == ESRCH))
		return false;
	/* The pid may have been reused: a process that started after the
	 * spool's start is not its writer. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)h->pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
			 "%*d %*d %*d %*d %*d %*d %llu",
			 &start_ticks) != 1)
		return true;
	f = fopen("/proc/stat", "re");
	if (f) {
		while (fgets(buf, sizeof(buf), f))
			if (sscanf(buf, "btime %lld", &btime) == 1)
				break;
		fclose(f);
	}
	if (btime < 0 || hz <= 0)
		return true;
	return (btime + (long long)(start_ticks / (unsigned long long)hz)) *
		       1000000000LL <=
	       h->start_ns + 2000000000LL;
}

static void bind_time(sqlite3_stmt *st, int col, const struct obs_spool *sp,
		      int64_t mono)
{
	if (mono)
		sqlite3_bind_int64(st, col, obs_spool_epoch(sp->hdr, mono));
	else
		sqlite3_bind_null(st, col);
}

static void bind_text_or_null(sqlite3_stmt *st, int col, const char *text)
{
	if (text)
		sqlite3_bind_text(st, col, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, col);
}

static int step_done(obs_store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
	(void)s;
}

static int upsert_process(struct ingest *in)
{
	obs_store *s = in->store;
	const struct obs_spool_header *h = in->sp.hdr;
	sqlite3_stmt *st;
	int64_t client_id = -1;
	char client[sizeof(h->client) + 1], host[sizeof(h->host) + 1];
	char program[sizeof(h->program) + 1];
	char argv[sizeof(h->argv) + 1];
	int rc;

	memcpy(client, h->client, sizeof(h->client));
	client[sizeof(h->client)] = '\0';
	memcpy(host, h->host, sizeof(h->host));
	host[sizeof(h->host)] = '\0';
	memcpy(program, h->program, sizeof(h->program));
	program[sizeof(h->program)] = '\0';
	memcpy(argv, h->argv, h->argv_len);
	argv[h->argv_len] = '\0';
	for (uint32_t i = 0; i + 1 < h->argv_len; i++)
		if (argv[i] == '\0')
			argv[i] = ' ';
	if (!client[0])
		snprintf(client, sizeof(client), "%s", host[0] ? host : "?");

	st = s->st[ST_CLIENT_INS];
	sqlite3_bind_text(st, 1, client, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
	if (step_done(s, st) != 0)
		return -1;
	st = s->st[ST_CLIENT_GET];
	sqlite3_bind_text(st, 1, client, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		client_id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (client_id < 0)
		return -1;

	st = s->st[ST_PROCESS_UPSERT];
	sqlite3_bind_int64(st, 1, client_id);
	sqlite3_bind_int(st, 2, h->pid);
	sqlite3_bind_int(st, 3, h->ppid);
	sqlite3_bind_int64(st, 4, h->start_ns);
	bind_time(st, 5, &in->sp, h->end_mono_ns);
	sqlite3_bind_int(st, 6, in->over);
	sqlite3_bind_text(st, 7, host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, program, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, argv, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, in->sp.path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 11, (int64_t)h->records_dropped);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		in->process_id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static void addr_text(char *out, size_t size, int family, const uint8_t *a)
{
	if (!inet_ntop(family == 10 ? AF_INET6 : AF_INET, a, out,
		       (socklen_t)size))
		snprintf(out, size, "?");
}

static int remember_conn(struct ingest *in, uint64_t seq, int64_t id)
{
	if (seq >= in->n_conn_ids) {
		size_t n = in->n_conn_ids ? in->n_conn_ids : 64;
		int64_t *ids;

		while (n <= seq)
			n *= 2;
		ids = realloc(in->conn_ids, n * sizeof(*ids));
		if (!ids)
			return -1;
		for (size_t i = in->n_conn_ids; i < n; i++)
			ids[i] = 0;
		in->conn_ids = ids;
		in->n_conn_ids = n;
	}
	in->conn_ids[seq] = id;
	return 0;
}

static void bind_conn(sqlite3_stmt *st, struct ingest *in,
		      const struct obs_record *r, char *peer, char *local,
		      size_t addrlen)
{
	const struct obs_conn_body *c = &r->u.conn;
	uint8_t end = c->end_class;
	bool complete = (r->state & OBS_RS_COMPLETE) || in->over;

	if (end == OBS_END_NONE && in->over)
		end = OBS_END_UNTERMINATED;
	addr_text(peer, addrlen, c->family, c->peer_addr);
	addr_text(local, addrlen, c->family, c->local_addr);
	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, (int64_t)r->conn_seq);
	sqlite3_bind_int(st, 3, c->fd);
	sqlite3_bind_int(st, 4, c->family == 10 ? 6 : 4);
	sqlite3_bind_text(st, 5, peer, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, c->peer_port);
	if (c->local_port)
		sqlite3_bind_text(st, 7, local, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 7);
	sqlite3_bind_int(st, 8, c->local_port);
	bind_time(st, 9, &in->sp, c->t1);
	bind_time(st, 10, &in->sp, c->t2);
	bind_text_or_null(st, 11, t2_how_names[c->t2_how]);
	bind_text_or_null(st, 12, c->connect_errno
					  ? strerrorname_np(c->connect_errno)
					  : NULL);
	bind_time(st, 13, &in->sp, c->teof);
	bind_time(st, 14, &in->sp, c->tshut);
	bind_time(st, 15, &in->sp, c->t7);
	bind_text_or_null(st, 16, end_class_names[end]);
	bind_text_or_null(st, 17,
			  c->end_errno ? strerrorname_np(c->end_errno) : NULL);
	sqlite3_bind_int(st, 18, !!(c->flags & OBS_CF_NONBLOCKING));
	sqlite3_bind_int(st, 19, complete);
}

static int ingest_conn(struct ingest *in, const struct obs_record *r)
{
	obs_store *s = in->store;
	sqlite3_stmt *st = s->st[ST_CONN_INS];
	char peer[INET6_ADDRSTRLEN], local[INET6_ADDRSTRLEN];
	int64_t id = -1;

	bind_conn(st, in, r, peer, local, sizeof(peer));
	if (step_done(s, st) != 0)
		return -1;
	if (sqlite3_changes(s->db) == 1) {
		in->stats->connections_new++;
		return remember_conn(in, r->conn_seq,
				     sqlite3_last_insert_rowid(s->db));
	}
	st = s->st[ST_CONN_GET];
	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, (int64_t)r->conn_seq);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (id < 0)
		return -1;
	st = s->st[ST_CONN_UPD];
	bind_conn(st, in, r, peer, local, sizeof(peer));
	if (step_done(s, st) != 0)
		return -1;
	if (sqlite3_changes(s->db) == 1)
		in->stats->rows_updated++;
	return remember_conn(in, r->conn_seq, id);
}

static void bind_exch(sqlite3_stmt *st, struct ingest *in, int64_t conn_id,
		      const struct obs_record *r)
{
	const struct obs_exch_body *x = &r->u.exch;

	sqlite3_bind_int64(st, 1, conn_id);
	sqlite3_bind_int64(st, 2, x->seq);
	bind_time(st, 3, &in->sp, x->t3);
	bind_time(st, 4, &in->sp, x->t4);
	bind_time(st, 5, &in->sp, x->t5);
	bind_time(st, 6, &in->sp, x->tfb);
	bind_time(st, 7, &in->sp, x->t6);
	sqlite3_bind_int64(st, 8, (int64_t)x->ds);
	sqlite3_bind_int64(st, 9, (int64_t)x->dr);
	sqlite3_bind_int64(st, 10, x->send_calls);
	sqlite3_bind_int64(st, 11, x->recv_calls);
	sqlite3_bind_int(st, 12, !!(x->flags & OBS_XF_SERVER_FIRST));
	sqlite3_bind_int(st, 13, !!(x->flags & OBS_XF_PEEKED));
	sqlite3_bind_int(st, 14,
			 (r->state & OBS_RS_COMPLETE) || in->over ? 1 : 0);
	if (x->method[0])
		sqlite3_bind_text(st, 15, x->method,
				  (int)strnlen(x->method, sizeof(x->method)),
				  SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 15);
	if (x->status)
		sqlite3_bind_int(st, 16, x->status);
	else
		sqlite3_bind_null(st, 16);
}

static int ingest_exch(struct ingest *in, const struct obs_record *r,
		       size_t offset)
{
	obs_store *s = in->store;
	sqlite3_stmt *st = s->st[ST_EXCH_INS];
	int64_t conn_id = r->conn_seq < in->n_conn_ids
				  ? in->conn_ids[r->conn_seq]
				  : 0;

	if (conn_id <= 0) {
		report_record(in, offset,
			      "exchange of a connection with no record");
		return 0;
	}
	if (r->u.exch.flags & OBS_XF_TLS_ALERT) {
		/* TLS's closing alert, not a request: seen in flight last time,
		 * it may be in the table; it goes */
		st = s->st[ST_EXCH_DEL];
		sqlite3_bind_int64(st, 1, conn_id);
		sqlite3_bind_int64(st, 2, r->u.exch.seq);
		return step_done(s, st);
	}
	bind_exch(st, in, conn_id, r);
	if (step_done(s, st) != 0)
		return -1;
	if (sqlite3_changes(s->db) == 1) {
		in->stats->exchanges_new++;
		return 0;
	}
	st = s->st[ST_EXCH_UPD];
	bind_exch(st, in, conn_id, r);
	if (step_done(s, st) != 0)
		return -1;
	if (sqlite3_changes(s->db) == 1)
		in->stats->rows_updated++;
	return 0;
}

static int64_t conn_id_of(struct ingest *in, const struct obs_record *r,
			  size_t offset)
{
	int64_t id = r->conn_seq < in->n_conn_ids ? in->conn_ids[r->conn_seq]
						  : 0;

	if (id <= 0)
		report_record(in, offset, "a record of a connection with none");
	return id;
}

/* A NUL-padded field that may fill its array. */
static void bind_field(sqlite3_stmt *st, int col, const char *f, size_t size)
{
	size_t n = strnlen(f, size);

	if (n)
		sqlite3_bind_text(st, col, f, (int)n, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, col);
}

static int ingest_http(struct ingest *in, const struct obs_record *r,
		       size_t offset)
{
	sqlite3_stmt *st = in->store->st[ST_HTTP_UPD];
	int64_t conn_id = conn_id_of(in, r, offset);

	if (conn_id <= 0)
		return 0;
	sqlite3_bind_int64(st, 1, conn_id);
	sqlite3_bind_int64(st, 2, r->u.http.seq);
	bind_field(st, 3, r->u.http.host, sizeof(r->u.http.host));
	bind_field(st, 4, r->u.http.path, sizeof(r->u.http.path));
	return step_done(in->store, st);
}

static void bind_u32_or_null(sqlite3_stmt *st, int col, bool known,
			     uint64_t v)
{
	if (known)
		sqlite3_bind_int64(st, col, (int64_t)v);
	else
		sqlite3_bind_null(st, col);
}

static int ingest_info(struct ingest *in, const struct obs_record *r,
		       size_t offset)
{
	sqlite3_stmt *st = in->store->st[ST_INFO_UPD];
	const struct obs_info_body *f = &r->u.info;
	int64_t conn_id = conn_id_of(in, r, offset);
	bool tls = f->flags & OBS_IF_TLS, tcp = f->flags & OBS_IF_TCPINFO;
	char version[16];

	if (conn_id <= 0)
		return 0;
	sqlite3_bind_int64(st, 1, conn_id);
	sqlite3_bind_int(st, 2, tls);
	switch (f->tls_version) {
	case 0x0301: snprintf(version, sizeof(version), "1.0"); break;
	case 0x0302: snprintf(version, sizeof(version), "1.1"); break;
	case 0x0303: snprintf(version, sizeof(version), "1.2"); break;
	case 0x0304: snprintf(version, sizeof(version), "1.3"); break;
	default:
		snprintf(version, sizeof(version), "0x%04x", f->tls_version);
	}
	if (tls && f->tls_version)
		sqlite3_bind_text(st, 3, version, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 3);
	bind_time(st, 4, &in->sp, tls ? f->tls_start : 0);
	bind_time(st, 5, &in->sp, tls ? f->tls_end : 0);
	bind_u32_or_null(st, 6, tcp, f->rtt_us);
	bind_u32_or_null(st, 7, tcp, f->rttvar_us);
	bind_u32_or_null(st, 8, tcp, f->min_rtt_us);
	bind_u32_or_null(st, 9, tcp, f->retrans);
	bind_u32_or_null(st, 10, tcp, f->snd_cwnd);
	bind_u32_or_null(st, 11, tcp, f->pmtu);
	bind_u32_or_null(st, 12, tcp && f->delivery_rate <= INT64_MAX,
			 f->delivery_rate);
	bind_field(st, 13, f->dns_name, sizeof(f->dns_name));
	bind_time(st, 14, &in->sp,
		  f->flags & OBS_IF_DNS ? f->dns_start : 0);
	bind_time(st, 15, &in->sp, f->flags & OBS_IF_DNS ? f->dns_end : 0);
	return step_done(in->store, st);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* A progress bar on the terminal, once a file has taken a second. */
static void progress_show(obs_store *s, const struct ingest *in, bool *shown,
			  double t_start)
{
	double frac = in->sp.end > OBS_SPOOL_HEADER_SIZE
			      ? (double)(in->sp.next - OBS_SPOOL_HEADER_SIZE) /
					(double)(in->sp.end -
						 OBS_SPOOL_HEADER_SIZE)
			      : 1.0;
	const char *name = strrchr(in->sp.path, '/');
	char bar[31];
	int filled = (int)(frac * 30);

	if (!*shown && now_s() - t_start < 1.0)
		return;
	for (int i = 0; i < 30; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[30] = '\0';
	fprintf(s->progress, "\r%s: %.40s [%s] %3.0f%%",
		program_invocation_short_name, name ? name + 1 : in->sp.path,
		bar, frac * 100);
	fflush(s->progress);
	*shown = true;
}

/* Ingest one spool file in one transaction. 0 ok, 1 skipped something,
 * -1 database error (the file's transaction is rolled back). */
static int ingest_file(obs_store *s, const char *path,
		       struct obs_ingest_stats *stats, FILE *msgs,
		       int64_t *process_ids, size_t *n_process_ids,
		       size_t max_process_ids)
{
	struct ingest in = { .store = s, .stats = stats, .msgs = msgs };
	const struct obs_record *r;
	char err[256];
	size_t offset;
	int rc = 0;
	int64_t max_exch = 0, max_conn = 0, max_proc = 0;
	bool shown = false;
	double t_start = s->progress ? now_s() : 0;

	stats->files++;
	if (obs_spool_open(&in.sp, path, err, sizeof(err)) != 0) {
		say(msgs, path, "%s", err);
		stats->files_bad++;
		return 1;
	}
	in.over = (in.sp.hdr->flags & OBS_SPOOL_ENDED) ||
		  !writer_alive(s, in.sp.hdr);
	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK)
		goto dberr;
	if (s->filter_exch) {
		max_exch = max_id(s, "exchange");
		max_conn = max_id(s, "connection");
		max_proc = max_id(s, "process");
		if (max_exch < 0 || max_conn < 0 || max_proc < 0)
			goto dberr_rollback;
	}
	if (upsert_process(&in) != 0)
		goto dberr_rollback;
	while ((r = obs_spool_next(&in.sp, &offset, report_record, &in))) {
		stats->records++;
		if (s->progress && (stats->records & 0x3fff) == 0)
			progress_show(s, &in, &shown, t_start);
		if (r->kind == OBS_REC_CONNECTION) {
			if (ingest_conn(&in, r) != 0)
				goto dberr_rollback;
		} else if (r->kind == OBS_REC_EXCHANGE) {
			if (ingest_exch(&in, r, offset) != 0)
				goto dberr_rollback;
		} else if (r->kind == OBS_REC_HTTP) {
			if (ingest_http(&in, r, offset) != 0)
				goto dberr_rollback;
		} else if (ingest_info(&in, r, offset) != 0) {
			goto dberr_rollback;
		}
	}
	if (s->filter_exch) {
		uint64_t dropped = 0, dropped_conn = 0;

		if (run_filter(s, s->filter_exch, max_exch, in.process_id,
			       &dropped) != 0 ||
		    run_filter(s, s->filter_conn, max_conn, in.process_id,
			       &dropped_conn) != 0 ||
		    run_filter(s, s->filter_proc, max_proc, in.process_id,
			       NULL) != 0)
			goto dberr_rollback;
		stats->exchanges_filtered += dropped;
		stats->exchanges_new -= dropped;
		stats->connections_new -= dropped_conn;
	}
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto dberr_rollback;
	if (shown)
		fprintf(s->progress, "\r\033[K");
	if (in.sp.truncated) {
		say(msgs, path, "truncated at offset %zu (partial record)",
		    in.sp.end);
		in.skipped = true;
	}
	if (in.sp.hdr->records_dropped)
		say(msgs, path,
		    "the writer lost %" PRIu64 " records (spool full)",
		    in.sp.hdr->records_dropped);
	if (process_ids && n_process_ids && *n_process_ids < max_process_ids)
		process_ids[(*n_process_ids)++] = in.process_id;
	rc = in.skipped ? 1 : 0;
	if (in.skipped)
		stats->files_bad++;
	goto out;
dberr_rollback:
	say(msgs, path, "database %s: %s", s->path, sqlite3_errmsg(s->db));
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	rc = -1;
	goto out;
dberr:
	say(msgs, path, "database %s: %s", s->path, sqlite3_errmsg(s->db));
	rc = -1;
out:
	free(in.conn_ids);
	obs_spool_close(&in.sp);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n > m && strcmp(name + n - m, suffix) == 0;
}

int obs_store_ingest_path(obs_store *store, const char *path,
			  struct obs_ingest_stats *stats, FILE *msgs,
			  int64_t *process_ids, size_t *n_process_ids,
			  size_t max_process_ids)
{
	struct stat st;
	DIR *dir;
	struct dirent *ent;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int worst = 0;

	if (stat(path, &st) != 0) {
		say(msgs, path, "%s", strerror(errno));
		stats->files_bad++;
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return ingest_file(store, path, stats, msgs, process_ids,
				   n_process_ids, max_process_ids);
	dir = opendir(path);
	if (!dir) {
		say(msgs, path, "cannot read directory: %s", strerror(errno));
		stats->files_bad++;
		return 1;
	}
	while ((ent = readdir(dir))) {
		char *full;

		if (!has_suffix(ent->d_name, OBS_SPOOL_SUFFIX))
			continue;
		if (n == cap) {
			char **more;
			cap = cap ? cap * 2 : 64;
			more = realloc(names, cap * sizeof(*names));
			if (!more)
				break;
			names = more;
		}
		if (asprintf(&full, "%s/%s", path, ent->d_name) < 0)
			break;
		names[n++] = full;
	}
	closedir(dir);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		int rc = ingest_file(store, names[i], stats, msgs, process_ids,
				     n_process_ids, max_process_ids);
		if (rc < 0)
			worst = -1;
		else if (rc > 0 && worst == 0)
			worst = 1;
		free(names[i]);
	}
	free(names);
	return worst;
}
