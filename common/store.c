/* store.c - the client database on SQLite: open (schema.c checks the
 * schema), idempotent ingest of spools, the filter applied while ingesting
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

#include "evrec.h"
#include "files.h"
#include "replays.h"
#include "spool_reader.h"
#include "text.h"

/* Exchanges are stored this many at a time, in one INSERT: a statement per
 * row pays its start and end, and a descent of each index from its root,
 * for every row (docs/performance.md). */
#define EXCH_BATCH 64
/* Connections likewise, up to CONN_BATCH (a power of two) at once: a
 * flush is one INSERT per bit set in their count, of that many rows (a
 * spool of a connection per exchange stores about as many connections as
 * exchanges, in flushes of any size). Twice EXCH_BATCH: there the batch
 * of exchanges, not that of connections, fills first, and a full one's
 * connections are one INSERT of EXCH_BATCH rows (batch_room). */
#define CONN_SIZES 8
#define CONN_BATCH (1 << (CONN_SIZES - 1))

struct obs_store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *st[OBS_SQL_INGEST_COUNT];
	/* EXCH_BATCH exchanges at once, prepared once needed (batch_stmt) */
	sqlite3_stmt *exch_batch;
	/* the INSERT of 1 << k connections, prepared once needed */
	sqlite3_stmt *conn_batch[CONN_SIZES];
	char host[65];
	/* delete the new rows the filter drops (enum obs_filter_sql) */
	sqlite3_stmt *filter[OBS_SQL_FILTER_COUNT];
	FILE *progress;	    /* a terminal, or NULL */
	bool delete_stored; /* unlink a spool file once wholly stored */
	bool fk_off;	    /* foreign keys off (store_fk) */
	/* the process whose records_dropped was counted last, and how many */
	int64_t dropped_process;
	uint64_t dropped_seen;
};

static const char *const t2_how_names[] = { NULL, "connect", "so_error",
					    "reconnect", "first_io" };
static const char *const app_proto_names[] = { NULL, "http/1.1", "h2", "h2c",
					       "other" };
static const char *const end_class_names[] = {
	NULL,	   "server_close",  "client_close", "reset", "timeout",
	"refused", "connect_error", "unterminated", "lost",  "exit",
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
				       SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				       cidr_match, NULL, NULL) == SQLITE_OK
		       ? 0
		       : -1;
}

void obs_store_set_progress(obs_store *store, FILE *tty)
{
	store->progress = tty;
}

void obs_store_set_delete(obs_store *store, bool on)
{
	store->delete_stored = on;
}

const char *obs_store_path(const obs_store *store)
{
	return store->path;
}

sqlite3 *obs_store_db(obs_store *store)
{
	return store->db;
}

void obs_store_close(obs_store *store)
{
	if (!store)
		return;
	for (int i = 0; i < OBS_SQL_INGEST_COUNT; i++)
		sqlite3_finalize(store->st[i]);
	sqlite3_finalize(store->exch_batch);
	for (int i = 0; i < CONN_SIZES; i++)
		sqlite3_finalize(store->conn_batch[i]);
	for (int i = 0; i < OBS_SQL_FILTER_COUNT; i++)
		sqlite3_finalize(store->filter[i]);
	sqlite3_close(store->db);
	free(store->path);
	free(store);
}

obs_store *obs_store_open(const char *path, char *err, size_t errlen)
{
	obs_store *s = calloc(1, sizeof(*s));
	struct utsname uts;
	char *msg = NULL, msg_buf[128];
	int rc;

	if (!s || !(s->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(s);
		return NULL;
	}
	/* No count of SQLite's memory (a mutex around every allocation: 8% of
	 * a slice); refused, harmlessly, once SQLite is initialized. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (uname(&uts) == 0)
		snprintf(s->host, sizeof(s->host), "%s", uts.nodename);
	/* a new database is made 0600; a FIFO would block the open */
	if (files_prepare_db(path, msg_buf, sizeof(msg_buf)) != 0) {
		snprintf(err, errlen, "%s: %s", path, msg_buf);
		goto fail;
	}
	/* URI file names on: the manager attaches sources read-only */
	rc = sqlite3_open_v2(path, &s->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
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
	if (obs_schema_ensure(s->db, path, err, errlen) != 0)
		goto fail;
	if (sqlite3_exec(s->db, obs_schema_mark_sql, NULL, NULL, &msg) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path,
			 msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		goto fail;
	}
	for (int i = 0; i < OBS_SQL_INGEST_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, obs_schema_ingest_sql(i), -1,
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
	int rc = SQLITE_OK;

	if (obs_store_check_expr(s->db, expr, err, errlen) != 0)
		return -1;
	for (int i = 0; rc == SQLITE_OK && i < OBS_SQL_FILTER_COUNT; i++) {
		char *sql = obs_schema_filter_sql(i, expr);

		rc = sql ? sqlite3_prepare_v2(s->db, sql, -1, &s->filter[i],
					      NULL)
			 : SQLITE_NOMEM;
		sqlite3_free(sql);
	}
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "invalid filter expression: %s: %s",
			 sqlite3_errmsg(s->db), expr);
		return -1;
	}
	return 0;
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

#define FAR_CONNS 256

struct ingest {
	obs_store *store;
	struct obs_spool sp;
	struct obs_ingest_stats *stats;
	FILE *msgs;
	bool over; /* the process is gone: open records are final */
	int64_t process_id;
	int64_t *conn_ids; /* connection row id by conn_seq - conn_base */
	size_t n_conn_ids;
	struct far_conn {
		uint64_t seq; /* 0: none */
		int64_t id;
	} far[FAR_CONNS]; /* those of earlier segments, cached */
	bool skipped;
	/* Where the file is stored and final (table ingest_mark): every slot
	 * before mark_next holds a record stored in its final state but those
	 * at the offsets in pending; `expect` is the slot after the last one
	 * noted. A slot not final past the pending's room, an empty slot or a
	 * damaged record stops mark_next (frozen). */
	bool resumed; /* reading began at a mark */
	bool frozen;
	bool replays_read; /* the replays earlier passes kept are in memory */
	size_t expect, mark_next;
	uint64_t *pending;
	size_t n_pending, cap_pending;
	/* an exchange record waiting for its HTTP record (ingest_record) */
	struct obs_record held;
	size_t held_offset;
	bool holding;
	/* exchanges waiting to be stored EXCH_BATCH at once (batch_flush):
	 * the row id of the connection, the exchange's record and its HTTP
	 * record's (host, path) when has_http; its first interim response
	 * (status 0: none, or a record's exchange, which has no such field) */
	struct batch_row {
		int64_t conn_id;
		struct obs_record exch, http;
		bool has_http;
		uint16_t interim_status;
		int64_t t_interim;
		/* its label refers to an exchange not in `labels`: looked
		 * up once the batch is stored (label_resolve) */
		bool label_lookup;
		size_t offset;
	} batch[EXCH_BATCH];
	size_t n_batch;
	/* The host and path of the last exchanges with an HTTP record (by
	 * connection and exchange number, direct-mapped; NULL until the
	 * first): a later exchange that is the same request refers to one
	 * (obs_exch_body.label_seq, version 5). */
	struct label {
		uint64_t conn_seq;
		uint32_t seq; /* 0: empty */
		char host[sizeof(((struct obs_http_body *)0)->host)];
		char path[sizeof(((struct obs_http_body *)0)->path)];
	} * labels;
	/* connections waiting to be stored at once (conn_flush), in the order
	 * of their records, each with its info record when that came before
	 * the flush; until then their numbers map to pending_id(i) */
	struct batch_conn {
		struct obs_record conn, info;
		bool has_info;
		/* the connection as the core rebuilt it (has_core: an events
		 * spool's, once its replay ended): its tunnel and WebSocket */
		bool has_core;
		struct obs_core_conn core;
		/* an events spool's connection record: never complete by
		 * itself, its replay completes the row (event_conn) */
		bool provisional;
		char peer[INET6_ADDRSTRLEN], local[INET6_ADDRSTRLEN];
	} conns[CONN_BATCH];
	size_t n_conns;
	/* Events (version 6): the connections being replayed (NULL until
	 * the first event); a request's fact waiting for its labels, the
	 * record after it; a database error met while a replay gave out */
	struct obs_replays *replays;
	struct obs_record ev_held;
	size_t ev_held_offset;
	bool ev_holding;
	bool ev_failed;
	bool again; /* its process is gone and events still wait */
};

static void say(FILE *msgs, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line: the file and the message, control characters escaped (a
 * file's name is anyone's: text.h). */
static void say(FILE *msgs, const char *path, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	int n;

	if (!msgs)
		return;
	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	fprintf(msgs, "%s: ", program_invocation_short_name);
	text_tty_put(msgs, path);
	fputs(": ", msgs);
	text_tty_put(msgs, n >= 0 ? text : "out of memory");
	fputc('\n', msgs);
	free(n >= 0 ? text : NULL);
}

static void report_record(void *ctx, size_t offset, const char *why)
{
	struct ingest *in = ctx;

	in->stats->records_bad++;
	in->skipped = true;
	if (!in->frozen) { /* read again next time */
		in->frozen = true;
		in->mark_next = offset < in->expect ? offset : in->expect;
	}
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

	st = s->st[OBS_SQL_CLIENT_INS];
	sqlite3_bind_text(st, 1, client, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
	if (step_done(s, st) != 0)
		return -1;
	st = s->st[OBS_SQL_CLIENT_GET];
	sqlite3_bind_text(st, 1, client, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		client_id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (client_id < 0)
		return -1;

	st = s->st[OBS_SQL_PROCESS_UPSERT];
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

/* An address as text. IPv4 by hand: glibc's inet_ntop formats it with
 * sprintf, ~1,700 instructions an address (6% of slicing a spool of a
 * connection per exchange). */
static void addr_text(char *out, size_t size, int family, const uint8_t *a)
{
	if (family != 10 && size >= INET_ADDRSTRLEN) {
		for (int i = 0; i < 4; i++) {
			if (a[i] >= 100)
				*out++ = (char)('0' + a[i] / 100);
			if (a[i] >= 10)
				*out++ = (char)('0' + a[i] / 10 % 10);
			*out++ = (char)('0' + a[i] % 10);
			*out++ = i < 3 ? '.' : '\0';
		}
		return;
	}
	if (!inet_ntop(family == 10 ? AF_INET6 : AF_INET, a, out,
		       (socklen_t)size))
		snprintf(out, size, "?");
}

/* Connection numbers of this file are those from its first record's
 * (a segment's first_record) on: an array from there, its size bounded by
 * the file's slots (the reader checks it). Those of earlier segments go
 * to a small cache by number. */
static uint64_t conn_base(const struct ingest *in)
{
	return in->sp.hdr->version >= 4 ? in->sp.hdr->first_record : 0;
}

static int64_t *far_slot(struct ingest *in, uint64_t seq)
{
	struct far_conn *f = &in->far[seq % FAR_CONNS];

	return f->seq == seq ? &f->id : NULL;
}

static int64_t known_conn(struct ingest *in, uint64_t seq)
{
	uint64_t base = conn_base(in);
	int64_t *far;

	if (seq >= base)
		return seq - base < in->n_conn_ids ? in->conn_ids[seq - base]
						   : 0;
	far = far_slot(in, seq);
	return far ? *far : 0;
}

static int remember_conn(struct ingest *in, uint64_t seq, int64_t id)
{
	uint64_t base = conn_base(in);

	if (seq < base) {
		in->far[seq % FAR_CONNS].seq = seq;
		in->far[seq % FAR_CONNS].id = id;
		return 0;
	}
	seq -= base;
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

/* The row id of connection seq of this process: from the ids this file
 * gave, else from the database (its record is in an earlier segment of the
 * spool, stored before); pending_id(i) while its record waits in the batch
 * (conn_flush). 0 or -1 when there is none, -2 on a database error. */
static int64_t conn_row(struct ingest *in, uint64_t seq)
{
	sqlite3_stmt *st = in->store->st[OBS_SQL_CONN_GET];
	int64_t id = known_conn(in, seq);
	int rc;

	if (id != 0 || (!in->resumed &&
			(in->sp.hdr->version < 4 || in->sp.hdr->segment == 0)))
		return id;
	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, (int64_t)seq);
	rc = sqlite3_step(st);
	id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -2;
	return remember_conn(in, seq, id) == 0 ? id : -2;
}

/* A connection of the batch, not yet stored: its number maps to
 * pending_id(i), i its place in the batch (conn_flush). */
static int64_t pending_id(size_t i)
{
	return -3 - (int64_t)i;
}

static bool is_pending(int64_t id)
{
	return id <= -3;
}

static size_t pending_index(int64_t id)
{
	return (size_t)(-3 - id);
}

/* A NUL-padded field that may fill its array; it lives until the
 * statement is stepped. */
static void bind_field(sqlite3_stmt *st, int col, const char *f, size_t size)
{
	size_t n = strnlen(f, size);

	if (n)
		sqlite3_bind_text(st, col, f, (int)n, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, col);
}

static void bind_u32_or_null(sqlite3_stmt *st, int col, bool known, uint64_t v)
{
	if (known)
		sqlite3_bind_int64(st, col, (int64_t)v);
	else
		sqlite3_bind_null(st, col);
}

/* What the core knows of connection c beyond its record (tunnel,
 * websocket, ws_messages_sent, ws_messages_received) as parameters from
 * base + 1: NULL without the core; the tunnel's target only on a tunnel,
 * the message counts only on a WebSocket. */
static void bind_core(sqlite3_stmt *st, int base, const struct batch_conn *c)
{
	const struct obs_core_conn *k = &c->core;
	bool ws = c->has_core && (k->flags & OBS_CCF_WEBSOCKET);

	if (c->has_core && (k->flags & OBS_CCF_TUNNEL))
		bind_field(st, base + 1, k->tunnel, sizeof(k->tunnel));
	else
		sqlite3_bind_null(st, base + 1);
	bind_u32_or_null(st, base + 2, c->has_core, ws);
	for (int d = 0; d < 2; d++)
		bind_u32_or_null(st, base + 3 + d,
				 ws && k->ws_messages[d] <= INT64_MAX,
				 k->ws_messages[d]);
}

/* The connection's columns (process_id, seq, OBS_SQL_CONN_COLUMNS) as
 * parameters from base + 1; its addresses as text in c. */
static void bind_conn(sqlite3_stmt *st, int base, struct ingest *in,
		      struct batch_conn *c)
{
	const struct obs_record *r = &c->conn;
	const struct obs_conn_body *b = &r->u.conn;
	uint8_t end = b->end_class;
	bool complete =
		!c->provisional && ((r->state & OBS_RS_COMPLETE) || in->over);

	if (end == OBS_END_NONE && in->over && !c->provisional)
		end = OBS_END_UNTERMINATED;
	addr_text(c->peer, sizeof(c->peer), b->family, b->peer_addr);
	addr_text(c->local, sizeof(c->local), b->family, b->local_addr);
	sqlite3_bind_int64(st, base + 1, in->process_id);
	sqlite3_bind_int64(st, base + 2, (int64_t)r->conn_seq);
	sqlite3_bind_int(st, base + 3, b->fd);
	sqlite3_bind_int(st, base + 4, b->family == 10 ? 6 : 4);
	sqlite3_bind_text(st, base + 5, c->peer, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, base + 6, b->peer_port);
	if (b->local_port)
		sqlite3_bind_text(st, base + 7, c->local, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, base + 7);
	sqlite3_bind_int(st, base + 8, b->local_port);
	bind_time(st, base + 9, &in->sp, b->t1);
	bind_time(st, base + 10, &in->sp, b->t2);
	bind_text_or_null(st, base + 11, t2_how_names[b->t2_how]);
	bind_text_or_null(st, base + 12,
			  b->connect_errno ? strerrorname_np(b->connect_errno)
					   : NULL);
	bind_time(st, base + 13, &in->sp, b->teof);
	bind_time(st, base + 14, &in->sp, b->tshut);
	bind_time(st, base + 15, &in->sp, b->t7);
	bind_text_or_null(st, base + 16, end_class_names[end]);
	bind_text_or_null(st, base + 17,
			  b->end_errno ? strerrorname_np(b->end_errno) : NULL);
	sqlite3_bind_int(st, base + 18, !!(b->flags & OBS_CF_NONBLOCKING));
	sqlite3_bind_int(st, base + 19, complete);
	bind_text_or_null(
		st, base + 20,
		in->sp.hdr->version >= 3 &&
				b->app_proto < sizeof(app_proto_names) /
						       sizeof(*app_proto_names)
			? app_proto_names[b->app_proto]
			: NULL);
	bind_core(st, base + 20, c);
}

/* A TLS version (0x0303 ...; 0: not known) as the text of tls_version. */
static void bind_tls_version(sqlite3_stmt *st, int i, uint16_t version)
{
	static const char *const names[] = { "1.0", "1.1", "1.2", "1.3" };
	char other[16];

	if (!version) {
		sqlite3_bind_null(st, i);
	} else if (version >= 0x0301 && version <= 0x0304) {
		sqlite3_bind_text(st, i, names[version - 0x0301], -1,
				  SQLITE_STATIC);
	} else {
		snprintf(other, sizeof(other), "0x%04x", version);
		sqlite3_bind_text(st, i, other, -1, SQLITE_TRANSIENT);
	}
}

/* The TLS columns of OBS_SQL_INFO_COLUMNS (parameters base + 1 ..
 * base + 4) as the core knows them (an events spool's connection). */
static void bind_core_tls(sqlite3_stmt *st, int base, struct ingest *in,
			  const struct obs_core_conn *k)
{
	sqlite3_bind_int(st, base + 1, 1);
	bind_tls_version(st, base + 2, k->tls_version);
	bind_time(st, base + 3, &in->sp, k->tls_start);
	bind_time(st, base + 4, &in->sp, k->tls_end);
}

/* The info record's columns (OBS_SQL_INFO_COLUMNS) as parameters from
 * base + 1; those of an all-zero record are the columns' defaults. */
static void bind_info(sqlite3_stmt *st, int base, struct ingest *in,
		      const struct obs_record *r)
{
	const struct obs_info_body *f = &r->u.info;
	bool tls = f->flags & OBS_IF_TLS, tcp = f->flags & OBS_IF_TCPINFO;

	sqlite3_bind_int(st, base + 1, tls);
	bind_tls_version(st, base + 2, tls ? f->tls_version : 0);
	bind_time(st, base + 3, &in->sp, tls ? f->tls_start : 0);
	bind_time(st, base + 4, &in->sp, tls ? f->tls_end : 0);
	bind_u32_or_null(st, base + 5, tcp, f->rtt_us);
	bind_u32_or_null(st, base + 6, tcp, f->rttvar_us);
	bind_u32_or_null(st, base + 7, tcp, f->min_rtt_us);
	bind_u32_or_null(st, base + 8, tcp, f->retrans);
	bind_u32_or_null(st, base + 9, tcp, f->snd_cwnd);
	bind_u32_or_null(st, base + 10, tcp, f->pmtu);
	bind_u32_or_null(st, base + 11, tcp && f->delivery_rate <= INT64_MAX,
			 f->delivery_rate);
	bind_field(st, base + 12, f->dns_name, sizeof(f->dns_name));
	bind_time(st, base + 13, &in->sp,
		  f->flags & OBS_IF_DNS ? f->dns_start : 0);
	bind_time(st, base + 14, &in->sp,
		  f->flags & OBS_IF_DNS ? f->dns_end : 0);
}

/* The info record r on the stored connection row id. */
static int update_info(struct ingest *in, int64_t id,
		       const struct obs_record *r)
{
	sqlite3_stmt *st = in->store->st[OBS_SQL_INFO_UPD];

	sqlite3_bind_int64(st, 1, id);
	bind_info(st, 1, in, r);
	return step_done(in->store, st);
}

/* The INSERT of 1 << k connections, prepared the first time; NULL on
 * error. */
static sqlite3_stmt *conn_stmt(obs_store *s, int k)
{
	char *sql;

	if (!s->conn_batch[k] && (sql = obs_schema_conn_insert_sql(1 << k))) {
		sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
				   &s->conn_batch[k], NULL);
		sqlite3_free(sql);
	}
	return s->conn_batch[k];
}

/* Connection c on its row id, stored before: brought up to date while it
 * is in flight, its info set. */
static int conn_update(struct ingest *in, struct batch_conn *c, int64_t id)
{
	obs_store *s = in->store;
	sqlite3_stmt *st = s->st[OBS_SQL_CONN_UPD];

	bind_conn(st, 0, in, c);
	if (step_done(s, st) != 0)
		return -1;
	if (sqlite3_changes(s->db) == 1)
		in->stats->rows_updated++;
	return c->has_info ? update_info(in, id, &c->info) : 0;
}

/* A connection of the batch the INSERT left as it was (stored before, or
 * twice in the batch): its id, and its row brought up to date when it was
 * stored before (its id below `below`). */
static int conn_stored(struct ingest *in, struct batch_conn *c, int64_t below,
		       int64_t *id)
{
	obs_store *s = in->store;
	sqlite3_stmt *st = s->st[OBS_SQL_CONN_GET];

	*id = -1;
	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, (int64_t)c->conn.conn_seq);
	if (sqlite3_step(st) == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (*id < 0)
		return -1;
	if (*id >= below)
		return 0; /* added by this INSERT, its info with it */
	return conn_update(in, c, *id);
}

/* Store connections [from, from + (1 << k)) of the batch in one INSERT,
 * their row ids into ids. When it added them all, their ids are the
 * newest ones, in order (an id is the largest + 1); when fewer, those it
 * added are the last ids, and each is looked up. */
static int conn_insert(struct ingest *in, size_t from, int k, int64_t *ids)
{
	obs_store *s = in->store;
	sqlite3_stmt *st = conn_stmt(s, k);
	size_t per = (size_t)1 << k;
	int64_t added, last, below;

	if (!st)
		return -1;
	for (size_t j = 0; j < per; j++) {
		struct batch_conn *c = &in->conns[from + j];
		int base = (int)j * OBS_SQL_CONN_PARAMS;
		static const struct obs_record no_info;

		bind_conn(st, base, in, c);
		bind_info(st, base + 24, in, c->has_info ? &c->info : &no_info);
		if (c->has_core && (c->core.flags & OBS_CCF_TLS))
			bind_core_tls(st, base + 24, in, &c->core);
	}
	if (step_done(s, st) != 0)
		return -1;
	added = sqlite3_changes(s->db);
	last = sqlite3_last_insert_rowid(s->db);
	in->stats->connections_new += (uint64_t)added;
	below = added ? last - added + 1 : INT64_MAX;
	for (size_t j = 0; j < per; j++) {
		if ((size_t)added == per)
			ids[from + j] = below + (int64_t)j;
		else if (conn_stored(in, &in->conns[from + j], below,
				     &ids[from + j]) != 0)
			return -1;
	}
	return 0;
}

/* Store the first n connections of the batch, in the order of their
 * records (the ids they get are those a statement per row would give),
 * and give their ids to the exchanges waiting in theirs; those after them
 * stay, at the front of the batch. */
static int conn_store(struct ingest *in, size_t n)
{
	size_t from = 0, left = in->n_conns - n;
	int64_t ids[CONN_BATCH];

	if (!n)
		return 0;
	for (int k = CONN_SIZES - 1; k >= 0; k--) {
		if (!(n & ((size_t)1 << k)))
			continue;
		if (conn_insert(in, from, k, ids) != 0)
			return -1;
		from += (size_t)1 << k;
	}
	for (size_t i = 0; i < n; i++)
		if (remember_conn(in, in->conns[i].conn.conn_seq, ids[i]) != 0)
			return -1;
	memmove(in->conns, in->conns + n, left * sizeof(*in->conns));
	in->n_conns = left;
	for (size_t i = 0; i < left; i++)
		if (remember_conn(in, in->conns[i].conn.conn_seq,
				  pending_id(i)) != 0)
			return -1;
	for (size_t i = 0; i < in->n_batch; i++) {
		int64_t *id = &in->batch[i].conn_id;

		if (is_pending(*id))
			*id = pending_index(*id) < n
				      ? ids[pending_index(*id)]
				      : pending_id(pending_index(*id) - n);
	}
	return 0;
}

static int conn_flush(struct ingest *in)
{
	return conn_store(in, in->n_conns);
}

/* Room in the full batch of connections: the most of those up to the
 * last one final that one INSERT stores (a power of two), all when none
 * is final (connections open longer than the batch); an events spool's
 * open ones are left for their replays to end (a row stored in flight is
 * written again when they do). */
static int conn_room(struct ingest *in)
{
	size_t n = in->n_conns, k = CONN_BATCH;

	while (n && in->conns[n - 1].provisional)
		n--;
	while (n && k > n)
		k /= 2;
	return conn_store(in, n ? k : in->n_conns);
}

/* A connection record into the batch, with what the core made of it
 * (core; NULL: a record alone). Its number known already as one waiting
 * there (a record twice), or one of an earlier segment's (the small cache
 * might lose it): the batch is stored first, or at once. Known as stored
 * (an events spool's connection stored in flight when a batch of
 * exchanges needed its id, then ended): its row brought up to date, no
 * INSERT that would leave it and look up every row of its batch. */
static int ingest_conn(struct ingest *in, const struct obs_record *r,
		       bool provisional, const struct obs_core_conn *core)
{
	int64_t known = known_conn(in, r->conn_seq);
	struct batch_conn *c;

	if (is_pending(known) && core) { /* its row, not stored yet, final */
		c = &in->conns[pending_index(known)];
		c->conn = *r;
		c->has_core = true;
		c->core = *core;
		c->provisional = provisional;
		return 0;
	}
	if (is_pending(known) && conn_flush(in) != 0)
		return -1;
	known = known_conn(in, r->conn_seq);
	if (in->n_conns == CONN_BATCH && conn_room(in) != 0)
		return -1;
	c = &in->conns[in->n_conns];
	c->conn = *r;
	c->has_info = false;
	c->has_core = core != NULL;
	if (core)
		c->core = *core;
	c->provisional = provisional;
	if (known > 0)
		return conn_update(in, c, known);
	if (remember_conn(in, r->conn_seq, pending_id(in->n_conns++)) != 0)
		return -1;
	return r->conn_seq < conn_base(in) ? conn_flush(in) : 0;
}

/* The exchange's columns (OBS_SQL_EXCH_INS's ?1..?20) as parameters from
 * base + 1. */
static void bind_exch(sqlite3_stmt *st, int base, struct ingest *in,
		      const struct batch_row *row)
{
	const struct obs_record *r = &row->exch;
	const struct obs_exch_body *x = &r->u.exch;

	sqlite3_bind_int64(st, base + 1, row->conn_id);
	sqlite3_bind_int64(st, base + 2, x->seq);
	bind_time(st, base + 3, &in->sp, x->t3);
	bind_time(st, base + 4, &in->sp, x->t4);
	bind_time(st, base + 5, &in->sp, x->t5);
	bind_time(st, base + 6, &in->sp, x->tfb);
	bind_time(st, base + 7, &in->sp, x->t6);
	sqlite3_bind_int64(st, base + 8, (int64_t)x->ds);
	sqlite3_bind_int64(st, base + 9, (int64_t)x->dr);
	sqlite3_bind_int64(st, base + 10, x->send_calls);
	sqlite3_bind_int64(st, base + 11, x->recv_calls);
	sqlite3_bind_int(st, base + 12, !!(x->flags & OBS_XF_SERVER_FIRST));
	sqlite3_bind_int(st, base + 13, !!(x->flags & OBS_XF_PEEKED));
	sqlite3_bind_int(st, base + 14,
			 (r->state & OBS_RS_COMPLETE) || in->over ? 1 : 0);
	if (x->method[0])
		sqlite3_bind_text(st, base + 15, x->method,
				  (int)strnlen(x->method, sizeof(x->method)),
				  SQLITE_STATIC);
	else
		sqlite3_bind_null(st, base + 15);
	if (x->status)
		sqlite3_bind_int(st, base + 16, x->status);
	else
		sqlite3_bind_null(st, base + 16);
	if (in->sp.hdr->version >= 3 && (x->flags & OBS_XF_H2))
		sqlite3_bind_int64(st, base + 17, x->stream);
	else
		sqlite3_bind_null(st, base + 17);
	if (in->sp.hdr->version >= 3 && (x->flags & OBS_XF_RESET))
		sqlite3_bind_int64(st, base + 18, x->stream_error);
	else
		sqlite3_bind_null(st, base + 18);
	bind_u32_or_null(st, base + 19, row->interim_status != 0,
			 row->interim_status);
	bind_time(st, base + 20, &in->sp,
		  row->interim_status ? row->t_interim : 0);
}

/* Host and path of exchange h->u.http.seq of the connection, on its row if
 * the row's id is below `below`. */
static int update_http(struct ingest *in, int64_t conn_id,
		       const struct obs_record *h, int64_t below)
{
	sqlite3_stmt *st = in->store->st[OBS_SQL_HTTP_UPD];

	sqlite3_bind_int64(st, 1, conn_id);
	sqlite3_bind_int64(st, 2, h->u.http.seq);
	bind_field(st, 3, h->u.http.host, sizeof(h->u.http.host));
	bind_field(st, 4, h->u.http.path, sizeof(h->u.http.path));
	sqlite3_bind_int64(st, 5, below);
	return step_done(in->store, st);
}

static bool unseen_yet(const struct ingest *in);

/* The label cache's slots (a power of two). */
#define LABELS 1024

static struct label *label_slot(struct ingest *in, uint64_t conn_seq,
				uint32_t seq)
{
	uint64_t k = conn_seq * 0x9e3779b97f4a7c15ull + seq;

	return &in->labels[(k >> 32) & (LABELS - 1)];
}

/* HTTP record h (host and path of exchange h->u.http.seq of connection
 * h->conn_seq) into the label cache. Best effort: without memory the
 * exchanges that refer to it look it up in the database. */
static void label_put(struct ingest *in, const struct obs_record *h)
{
	struct label *l;

	if (!in->labels && !(in->labels = calloc(LABELS, sizeof(*l))))
		return;
	l = label_slot(in, h->conn_seq, h->u.http.seq);
	l->conn_seq = h->conn_seq;
	l->seq = h->u.http.seq;
	memcpy(l->host, h->u.http.host, sizeof(l->host));
	memcpy(l->path, h->u.http.path, sizeof(l->path));
}

/* Exchange record r refers to another's HTTP record: in row->http when
 * the cache holds it, else looked up later (label_resolve). */
static void label_take(struct ingest *in, struct batch_row *row,
		       const struct obs_record *r)
{
	const struct obs_exch_body *x = &r->u.exch;
	struct label *l =
		in->labels ? label_slot(in, x->label_conn, x->label_seq) : NULL;

	if (l && l->seq == x->label_seq && l->conn_seq == x->label_conn) {
		memset(&row->http, 0, sizeof(row->http));
		row->http.kind = OBS_REC_HTTP;
		row->http.conn_seq = r->conn_seq;
		row->http.u.http.seq = x->seq;
		memcpy(row->http.u.http.host, l->host, sizeof(l->host));
		memcpy(row->http.u.http.path, l->path, sizeof(l->path));
		row->has_http = true;
	} else {
		row->label_lookup = true;
	}
}

/* Row `row`, stored, takes the host and path of the exchange its label
 * refers to from that one's row (stored before: by an earlier batch, or
 * an earlier pass over the file). A reference to no stored exchange is
 * reported; the row keeps no host and path. */
static int label_resolve(struct ingest *in, const struct batch_row *row)
{
	obs_store *s = in->store;
	sqlite3_stmt *st = s->st[OBS_SQL_LABEL_GET],
		     *up = s->st[OBS_SQL_HTTP_UPD];
	const struct obs_exch_body *x = &row->exch.u.exch;
	int rc;

	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, (int64_t)x->label_conn);
	sqlite3_bind_int64(st, 3, x->label_seq);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		sqlite3_bind_int64(up, 1, row->conn_id);
		sqlite3_bind_int64(up, 2, x->seq);
		sqlite3_bind_value(up, 3, sqlite3_column_value(st, 0));
		sqlite3_bind_value(up, 4, sqlite3_column_value(st, 1));
		sqlite3_bind_int64(up, 5, INT64_MAX);
		rc = step_done(s, up);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (!unseen_yet(in)) { /* (else read again next time) */
		in->stats->records_bad++;
		in->skipped = true;
		say(in->msgs, in->sp.path,
		    "offset %zu: the exchange whose host and path it has (the "
		    "same request) is not stored: stored without them",
		    row->offset);
	}
	return 0;
}

/* Row `row` of the batch as OBS_SQL_EXCH_INS's parameters from base + 1. */
static void bind_row(sqlite3_stmt *st, int base, struct ingest *in,
		     const struct batch_row *row)
{
	const struct obs_http_body *h = &row->http.u.http;

	bind_exch(st, base, in, row);
	if (row->has_http) {
		bind_field(st, base + 21, h->host, sizeof(h->host));
		bind_field(st, base + 22, h->path, sizeof(h->path));
	} else {
		sqlite3_bind_null(st, base + 21);
		sqlite3_bind_null(st, base + 22);
	}
}

/* An exchange of the batch on a row stored before (whose id is below
 * `below`), if it has one: brought up to date while it is in flight, its
 * host and path set. */
static int update_exch(struct ingest *in, const struct batch_row *row,
		       int64_t below)
{
	sqlite3_stmt *st = in->store->st[OBS_SQL_EXCH_UPD];

	bind_exch(st, 0, in, row);
	sqlite3_bind_int64(st, 21, below);
	if (step_done(in->store, st) != 0)
		return -1;
	if (sqlite3_changes(in->store->db) == 1)
		in->stats->rows_updated++;
	return row->has_http ? update_http(in, row->conn_id, &row->http, below)
			     : 0;
}

/* The INSERT of EXCH_BATCH exchanges, prepared the first time (a spool of
 * fewer exchanges does not pay for it); NULL on error. */
static sqlite3_stmt *batch_stmt(obs_store *s)
{
	char *sql;

	if (!s->exch_batch && (sql = obs_schema_exch_insert_sql(EXCH_BATCH))) {
		sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
				   &s->exch_batch, NULL);
		sqlite3_free(sql);
	}
	return s->exch_batch;
}

/* Store the batch, the first `conns` connections waiting first (those it
 * refers to among them): EXCH_BATCH exchanges in one INSERT, fewer one by
 * one. The INSERT leaves a row stored before as it is (an earlier pass
 * stored it in flight, or after an empty slot); when it added fewer rows
 * than it had, those it added are the last ids (an id is the largest + 1),
 * the others are brought up to date one by one. */
static int batch_store(struct ingest *in, size_t conns)
{
	obs_store *s = in->store;
	size_t n = in->n_batch, per = n == EXCH_BATCH ? n : 1;
	sqlite3_stmt *st = per > 1 ? batch_stmt(s) : s->st[OBS_SQL_EXCH_INS];

	if (conn_store(in, conns) != 0) /* the connections they refer to */
		return -1;
	in->n_batch = 0;
	if (!st)
		return -1;
	for (size_t i = 0; i < n; i += per) {
		int64_t added, below;

		for (size_t j = 0; j < per; j++)
			bind_row(st, (int)j * OBS_SQL_EXCH_PARAMS, in,
				 &in->batch[i + j]);
		if (step_done(s, st) != 0)
			return -1;
		added = sqlite3_changes(s->db);
		in->stats->exchanges_new += (uint64_t)added;
		if ((size_t)added == per)
			continue;
		below = added ? sqlite3_last_insert_rowid(s->db) - added + 1
			      : INT64_MAX;
		for (size_t j = 0; j < per; j++)
			if (update_exch(in, &in->batch[i + j], below) != 0)
				return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (in->batch[i].label_lookup &&
		    label_resolve(in, &in->batch[i]) != 0)
			return -1;
	return 0;
}

/* The batch stored, and every connection waiting. */
static int batch_flush(struct ingest *in)
{
	return batch_store(in, in->n_conns);
}

/* Room in the full batch of exchanges: stored with the connections they
 * refer to, those after them left waiting (an events spool's connections
 * whose first exchange is still to come: stored once their replays ended,
 * not in flight and again). */
static int batch_room(struct ingest *in)
{
	size_t conns = 0;

	for (size_t i = 0; i < in->n_batch; i++)
		if (is_pending(in->batch[i].conn_id) &&
		    pending_index(in->batch[i].conn_id) >= conns)
			conns = pending_index(in->batch[i].conn_id) + 1;
	return batch_store(in, conns);
}

/* Whether a record whose connection this file has not shown may only be
 * early: the writer still runs and a slot before it read empty (the
 * connection's record was not published yet when that part of the file
 * was read, while later ones were). The mark stays at that slot, so the
 * next pass reads both again; nothing is reported or lost. */
static bool unseen_yet(const struct ingest *in)
{
	return !in->over && in->frozen;
}

/* The exchange record r, with its HTTP record h (host, path) when it came
 * next (NULL: none, or apart), into the batch; core: the exchange the core
 * gave out that r was made of (its interim response), or NULL. */
static int ingest_exch(struct ingest *in, const struct obs_record *r,
		       size_t offset, const struct obs_record *h,
		       const struct obs_core_exchange *core)
{
	obs_store *s = in->store;
	struct batch_row *row;
	int64_t conn_id = conn_row(in, r->conn_seq);

	if (conn_id == -2)
		return -1;
	if (conn_id == 0 || conn_id == -1) {
		if (!unseen_yet(in))
			report_record(
				in, offset,
				"exchange of a connection with no record");
		return 0;
	}
	if (r->u.exch.flags & OBS_XF_TLS_ALERT) {
		/* TLS's closing alert, not a request: seen in flight last time,
		 * it may be in the table; it goes */
		sqlite3_stmt *st = s->st[OBS_SQL_EXCH_DEL];

		if (batch_flush(in) != 0)
			return -1;
		if (is_pending(conn_id)) /* stored now */
			conn_id = known_conn(in, r->conn_seq);
		sqlite3_bind_int64(st, 1, conn_id);
		sqlite3_bind_int64(st, 2, r->u.exch.seq);
		return step_done(s, st);
	}
	if (in->n_batch == EXCH_BATCH) {
		if (batch_room(in) != 0)
			return -1;
		if (is_pending(conn_id)) /* stored now, or moved */
			conn_id = known_conn(in, r->conn_seq);
	}
	row = &in->batch[in->n_batch++];
	row->conn_id = conn_id;
	row->exch = *r;
	row->has_http = h != NULL;
	row->label_lookup = false;
	row->offset = offset;
	row->interim_status = core ? core->interim_status : 0;
	row->t_interim = core ? core->t_interim : 0;
	if (h) {
		row->http = *h;
		label_put(in, h);
	} else if (in->sp.hdr->version >= 5 && r->u.exch.label_seq) {
		label_take(in, row, r);
	}
	return 0;
}

static int64_t conn_id_of(struct ingest *in, const struct obs_record *r,
			  size_t offset)
{
	int64_t id = conn_row(in, r->conn_seq);

	if ((id == 0 || id == -1) && !unseen_yet(in))
		report_record(in, offset, "a record of a connection with none");
	return id;
}

static int ingest_http(struct ingest *in, const struct obs_record *r,
		       size_t offset)
{
	int64_t conn_id;

	/* its exchange, or its connection, may be in a batch */
	if (batch_flush(in) != 0)
		return -1;
	conn_id = conn_id_of(in, r, offset);
	if (conn_id <= 0)
		return conn_id == -2 ? -1 : 0;
	label_put(in, r);
	return update_http(in, conn_id, r, INT64_MAX);
}

/* An info record: with its connection's row when that waits in the batch,
 * else on the row. */
static int ingest_info(struct ingest *in, const struct obs_record *r,
		       size_t offset)
{
	int64_t conn_id = conn_id_of(in, r, offset);

	if (is_pending(conn_id)) {
		struct batch_conn *c = &in->conns[pending_index(conn_id)];

		c->info = *r;
		c->has_info = true;
		return 0;
	}
	if (conn_id <= 0)
		return conn_id == -2 ? -1 : 0;
	return update_info(in, conn_id, r);
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
	double frac =
		in->sp.end > OBS_SPOOL_HEADER_SIZE
			? (double)(in->sp.next - OBS_SPOOL_HEADER_SIZE) /
				  (double)(in->sp.end - OBS_SPOOL_HEADER_SIZE)
			: 1.0;
	const char *name = strrchr(in->sp.path, '/');
	char bar[31], safe[64];
	int filled = (int)(frac * 30);

	if (!*shown && now_s() - t_start < 1.0)
		return;
	for (int i = 0; i < 30; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[30] = '\0';
	fprintf(s->progress, "\r%s: %.40s [%s] %3.0f%%",
		program_invocation_short_name,
		text_tty(name ? name + 1 : in->sp.path, safe, sizeof(safe)),
		bar, frac * 100);
	fflush(s->progress);
	*shown = true;
}

/* The exchange record held back, stored now without an HTTP record. */
static int ingest_flush(struct ingest *in)
{
	if (!in->holding)
		return 0;
	in->holding = false;
	return ingest_exch(in, &in->held, in->held_offset, NULL, NULL);
}

/* The exchange a send the process never came back from began (the
 * connection record's tsend_open, version 5): stored once the process is
 * gone, as exchange exchanges + 1 of the connection, T3 its entry and
 * nothing after it (no T4: the send never returned; Ds unknown, 0). Not
 * on an HTTP/2 connection: a frame's send begins no exchange there. */
static int ingest_send_cut(struct ingest *in, const struct obs_record *r,
			   size_t offset)
{
	struct obs_record x;

	if (!in->over || in->sp.hdr->version < 5 || r->u.conn.tsend_open <= 0 ||
	    r->u.conn.app_proto == OBS_AP_H2 ||
	    r->u.conn.app_proto == OBS_AP_H2C)
		return 0;
	memset(&x, 0, sizeof(x));
	x.kind = OBS_REC_EXCHANGE;
	x.state = OBS_RS_COMPLETE;
	x.conn_seq = r->conn_seq;
	x.u.exch.seq = r->u.conn.exchanges + 1;
	x.u.exch.t3 = r->u.conn.tsend_open;
	return ingest_exch(in, &x, offset, NULL, NULL);
}

static int ingest_event(struct ingest *in, const struct obs_record *r,
			size_t offset);
static void event_exchange(void *ctx, const struct obs_replayed *r,
			   const struct obs_core_exchange *x);

/* One record stored. An exchange's record is held back until the next
 * one: when that is its HTTP record (the layer writes it right after, in
 * the usual case) host and path go into the same INSERT, not an UPDATE
 * of the row just written. */
static int ingest_record(struct ingest *in, const struct obs_record *r,
			 size_t offset)
{
	if (in->holding && r->kind == OBS_REC_HTTP &&
	    r->conn_seq == in->held.conn_seq &&
	    r->u.http.seq == in->held.u.exch.seq) {
		in->holding = false;
		return ingest_exch(in, &in->held, in->held_offset, r, NULL);
	}
	if (ingest_flush(in) != 0)
		return -1;
	if (r->kind == OBS_REC_EVENT)
		return ingest_event(in, r, offset);
	if (r->kind == OBS_REC_CONNECTION &&
	    (in->sp.hdr->flags & OBS_SPOOL_EVENTS)) {
		/* its times and end come with its replay (event_conn): till
		 * then its row is open to them */
		if (!in->replays &&
		    !(in->replays = obs_replays_new(event_exchange, in)))
			return -1;
		obs_replays_conn(in->replays, r);
		return ingest_conn(in, r, true, NULL);
	}
	if (r->kind == OBS_REC_CONNECTION)
		return ingest_conn(in, r, false, NULL) != 0
			       ? -1
			       : ingest_send_cut(in, r, offset);
	if (r->kind == OBS_REC_EXCHANGE) {
		in->held = *r;
		in->held_offset = offset;
		in->holding = true;
		return 0;
	}
	if (r->kind == OBS_REC_HTTP)
		return ingest_http(in, r, offset);
	return ingest_info(in, r, offset);
}

/* In-flight records a mark keeps to read again, at most; past them the
 * mark stops where the next one is. */
#define MARK_PENDING_MAX 65536

/* An event record counts as final here: the connections still open at
 * the end of the pass keep their events' offsets then (event_open). */
static bool record_final(const struct ingest *in, const struct obs_record *r)
{
	return (r->state & OBS_RS_COMPLETE) || in->over ||
	       r->kind == OBS_REC_EVENT;
}

static int pending_add(struct ingest *in, size_t offset)
{
	if (in->n_pending == in->cap_pending) {
		size_t n = in->cap_pending ? in->cap_pending * 2 : 64;
		uint64_t *p = realloc(in->pending, n * sizeof(*p));

		if (!p)
			return -1;
		in->pending = p;
		in->cap_pending = n;
	}
	in->pending[in->n_pending++] = offset;
	return 0;
}

/* The record just stored at offset, for the mark. -1 out of memory. */
static int mark_note(struct ingest *in, const struct obs_record *r,
		     size_t offset)
{
	if (in->frozen)
		return 0;
	if (offset != in->expect) { /* an empty slot before it */
		in->frozen = true;
		in->mark_next = in->expect;
		return 0;
	}
	in->expect = offset + OBS_RECORD_SIZE;
	if (record_final(in, r))
		return 0;
	if (in->n_pending == MARK_PENDING_MAX) {
		in->frozen = true;
		in->mark_next = offset;
		return 0;
	}
	return pending_add(in, offset);
}

/* Resume at the file's mark, if it has one: its pending records read again
 * first (those still in flight stay pending), then reading goes on at its
 * next_offset. 0, or -1 on a database error. */
static int mark_resume(struct ingest *in)
{
	sqlite3_stmt *st = in->store->st[OBS_SQL_MARK_GET];
	const struct obs_spool_header *h = in->sp.hdr;
	uint64_t *old = NULL;
	size_t n = 0, next = 0;
	int rc;

	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, h->version >= 4 ? h->segment : 0);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int64_t v = sqlite3_column_int64(st, 0);
		const void *blob = sqlite3_column_blob(st, 1);

		n = (size_t)sqlite3_column_bytes(st, 1) / sizeof(uint64_t);
		next = v > 0 ? (size_t)v : 0;
		if (n && blob && (old = malloc(n * sizeof(*old))))
			memcpy(old, blob, n * sizeof(*old));
		else
			n = 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW) {
		free(old);
		return rc == SQLITE_DONE ? 0 : -1;
	}
	if (next > in->sp.end || next < OBS_SPOOL_HEADER_SIZE)
		next = OBS_SPOOL_HEADER_SIZE; /* the file shrank: all again */
	next -= (next - OBS_SPOOL_HEADER_SIZE) % OBS_RECORD_SIZE;
	in->resumed = true;
	in->expect = in->mark_next = next;
	for (size_t i = 0; i < n; i++) {
		const struct obs_record *r;

		if (old[i] >= next)
			continue;
		r = obs_spool_at(&in->sp, (size_t)old[i], report_record, in);
		if (!r)
			continue;
		in->stats->records++;
		if (ingest_record(in, r, (size_t)old[i]) != 0 ||
		    (!record_final(in, r) && pending_add(in, old[i]) != 0)) {
			free(old);
			return -1;
		}
	}
	free(old);
	obs_spool_seek(&in->sp, next);
	return ingest_flush(in);
}

/* Keep the file's mark for the next time. 0, or -1 on a database error. */
static int mark_store(struct ingest *in)
{
	sqlite3_stmt *st = in->store->st[OBS_SQL_MARK_PUT];
	const struct obs_spool_header *h = in->sp.hdr;
	size_t n = 0;

	for (size_t i = 0; i < in->n_pending; i++) /* those before the mark */
		if (in->pending[i] < in->mark_next)
			in->pending[n++] = in->pending[i];
	in->n_pending = n;
	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, h->version >= 4 ? h->segment : 0);
	sqlite3_bind_int64(st, 3, (int64_t)in->mark_next);
	if (n)
		sqlite3_bind_blob(st, 4, in->pending,
				  (int)(n * sizeof(uint64_t)), SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 4);
	return step_done(in->store, st);
}

/* ---- events (version 6): connections rebuilt by the core ---- */

/* An exchange a replay gave out, as the records the layer would have
 * written for it: an exchange record and, with a host or path, an HTTP
 * record. */
static void event_exchange(void *ctx, const struct obs_replayed *r,
			   const struct obs_core_exchange *x)
{
	struct ingest *in = ctx;
	struct obs_record e = { .kind = OBS_REC_EXCHANGE,
				.state = OBS_RS_COMPLETE,
				.conn_seq = r->conn_seq };
	struct obs_record h = { .kind = OBS_REC_HTTP,
				.state = OBS_RS_COMPLETE,
				.conn_seq = r->conn_seq };
	struct obs_exch_body *b = &e.u.exch;
	bool labelled = x->host[0] || x->path[0];

	if (in->ev_failed)
		return;
	b->seq = x->seq;
	b->flags = (x->flags & OBS_CXF_SERVER_FIRST ? OBS_XF_SERVER_FIRST : 0) |
		   (x->flags & OBS_CXF_H2 ? OBS_XF_H2 : 0) |
		   (x->flags & OBS_CXF_RESET ? OBS_XF_RESET : 0) |
		   (x->flags & OBS_CXF_PEEKED ? OBS_XF_PEEKED : 0);
	b->stream = x->stream;
	b->stream_error = x->stream_error;
	b->t3 = x->t3;
	b->t4 = x->t4;
	b->t5 = x->t5;
	b->tfb = x->tfb;
	b->t6 = x->t6;
	b->ds = x->ds;
	b->dr = x->dr;
	b->send_calls = x->send_calls;
	b->recv_calls = x->recv_calls;
	memcpy(b->method, x->method, sizeof(b->method));
	b->status = x->status;
	if (labelled) {
		h.u.http.seq = x->seq;
		h.u.http.flags =
			(x->label_flags & OBS_H1F_HOST_CUT ? OBS_HF_HOST_CUT
							   : 0) |
			(x->label_flags & OBS_H1F_PATH_CUT ? OBS_HF_PATH_CUT
							   : 0);
		memcpy(h.u.http.host, x->host, sizeof(h.u.http.host));
		memcpy(h.u.http.path, x->path, sizeof(h.u.http.path));
	}
	if (ingest_exch(in, &e, 0, labelled ? &h : NULL, x) != 0)
		in->ev_failed = true;
}

/* The connection's row as the core rebuilt it: its record (addresses,
 * fd) with the times and the end the events give. */
static int event_conn(struct ingest *in, const struct obs_replayed *r)
{
	const struct obs_core_conn *k = &r->saved.replay.conn;
	struct obs_record c = r->saved.conn;
	struct obs_conn_body *b = &c.u.conn;

	if (c.kind != OBS_REC_CONNECTION)
		return 0; /* no record of its own: nothing to hang it on */
	b->t1 = k->t1;
	b->t2 = k->t2;
	b->t2_how = k->t2_how;
	b->teof = k->teof;
	b->tshut = k->tshut;
	b->t7 = k->t7;
	b->end_class = k->end_class;
	b->connect_errno = k->connect_errno;
	b->end_errno = k->end_errno;
	b->exchanges = k->exchanges;
	b->flags = (k->flags & OBS_CCF_NONBLOCKING ? OBS_CF_NONBLOCKING : 0) |
		   (k->flags & OBS_CCF_SHUTDOWN_WR ? OBS_CF_SHUTDOWN_WR : 0) |
		   (k->flags & OBS_CCF_TLS ? OBS_CF_TLS : 0);
	b->app_proto = k->app_proto;
	b->tsend_open = 0;
	c.state = OBS_RS_COMPLETE;
	bool stored = !is_pending(known_conn(in, c.conn_seq));

	if (ingest_conn(in, &c, false, k) != 0)
		return -1;
	/* a row stored before: its TLS after its info's (a row of the batch
	 * takes the core's with its INSERT: bind_core_tls) */
	if (stored && (k->flags & OBS_CCF_TLS)) {
		sqlite3_stmt *st = in->store->st[OBS_SQL_CONN_TLS];

		if (is_pending(known_conn(in, c.conn_seq)) &&
		    conn_flush(in) != 0)
			return -1;
		sqlite3_bind_int64(st, 1, in->process_id);
		sqlite3_bind_int64(st, 2, (int64_t)c.conn_seq);
		bind_tls_version(st, 3, k->tls_version);
		bind_time(st, 4, &in->sp, k->tls_start);
		bind_time(st, 5, &in->sp, k->tls_end);
		return step_done(in->store, st);
	}
	return 0;
}

/* The connection's kept state (ingest_replay): put, or deleted. */
static int replay_keep(struct ingest *in, struct obs_replayed *r, bool keep)
{
	sqlite3_stmt *st =
		in->store->st[keep ? OBS_SQL_REPLAY_PUT : OBS_SQL_REPLAY_DEL];

	sqlite3_bind_int64(st, 1, in->process_id);
	sqlite3_bind_int64(st, 2, (int64_t)r->conn_seq);
	if (keep) {
		size_t n;
		const void *state = obs_replays_state(r, &n);

		sqlite3_bind_blob(st, 3, state, (int)n, SQLITE_STATIC);
	}
	return step_done(in->store, st);
}

static int replays_all(struct ingest *in);

/* Connection conn_seq's replay: in memory, or as an earlier pass kept it;
 * NULL when it has none (its connect was never read, or it ended). */
static struct obs_replayed *replay_of(struct ingest *in, uint64_t conn_seq)
{
	/* what earlier passes kept, read once a pass (replays_all) */
	if (!in->replays_read && replays_all(in) != 0)
		return NULL;
	return obs_replays_get(in->replays, conn_seq);
}

/* The connection's events ended (its close, or its process is gone): what
 * its replay still holds, its row, and no state kept. */
static int event_end(struct ingest *in, struct obs_replayed *r)
{
	obs_replays_finish(in->replays, r);
	return in->ev_failed || event_conn(in, r) != 0 ||
			       (r->stored && replay_keep(in, r, false) != 0)
		       ? -1
		       : 0;
}

/* A connection in memory when the pass ends: ended with its process when
 * that is gone and this is its last segment, else kept for the next pass. */
static void event_pass_over(void *ctx, struct obs_replayed *r)
{
	struct ingest *in = ctx;
	bool last = !(in->sp.hdr->flags & OBS_SPOOL_SEALED);

	bool end = in->over && last && r->saved.seen < r->saved.next;

	if (in->ev_failed)
		return;
	if (in->over && last && !end) /* events of it wait in a segment */
		in->again = true;
	if (end ? event_end(in, r) != 0
		: r->changed && replay_keep(in, r, true) != 0)
		in->ev_failed = true;
}

/* Records read again the next time: an event that waits (its own, or one
 * of its connection's before it). */
static int event_wait(struct ingest *in, size_t offset, unsigned int records)
{
	for (unsigned int i = 0; i < records; i++) {
		size_t at = offset + i * OBS_RECORD_SIZE;

		if (in->frozen)
			return 0;
		if (in->n_pending == MARK_PENDING_MAX) {
			/* everything from here read again: the events a
			 * replay consumed are known by their numbers */
			in->frozen = true;
			in->mark_next = at;
			return 0;
		}
		if (pending_add(in, at) != 0)
			return -1;
	}
	return 0;
}

/* The events of a record (rec, and labels, the record after it, or NULL)
 * at offset: each consumed by its connection's replay when its turn has
 * come and it is final, else the record waits. Once its process is gone
 * every event is final, and a number never seen (a record the spool lost)
 * is passed over. */
static int event_take(struct ingest *in, const struct obs_record *rec,
		      const struct obs_record *labels, size_t offset)
{
	unsigned int records = labels ? 2 : 1, n;
	bool final = (rec->state & OBS_RS_COMPLETE) || in->over;
	struct obs_replayed *r;
	struct obs_event ev[2];
	const char *why = obs_evrec_decode(rec, labels, ev, &n);

	if (why) {
		report_record(in, offset, why);
		return 0;
	}
	if (!in->replays &&
	    !(in->replays = obs_replays_new(event_exchange, in)))
		return -1;
	r = replay_of(in, rec->conn_seq);
	if (!r && ev[0].kind == OBS_EV_CONNECT && ev[0].seq == 1 &&
	    !(r = obs_replays_add(in->replays, rec->conn_seq, NULL, 0)))
		return -1;
	if (!r)
		return 0; /* its connect never read */
	switch (obs_replays_take(in->replays, r, ev, n, final,
				 in->over && in->sp.hdr->records_dropped)) {
	case OBS_WAITS:
		return event_wait(in, offset, records);
	case OBS_CLOSED: {
		int rc = event_end(in, r);

		obs_replays_forget(in->replays, r);
		return rc;
	}
	default:
		return in->ev_failed ? -1 : 0;
	}
}

/* The request's fact held for its labels, taken without them. */
static int event_flush(struct ingest *in)
{
	if (!in->ev_holding)
		return 0;
	in->ev_holding = false;
	return event_take(in, &in->ev_held, NULL, in->ev_held_offset);
}

static int ingest_event(struct ingest *in, const struct obs_record *r,
			size_t offset)
{
	if (in->ev_holding && r->u.event.ev_kind == OBS_EV_LABELS &&
	    r->conn_seq == in->ev_held.conn_seq) {
		in->ev_holding = false;
		return event_take(in, &in->ev_held, r, in->ev_held_offset);
	}
	if (event_flush(in) != 0)
		return -1;
	if (r->u.event.ev_kind == OBS_EV_LABELS)
		return 0; /* its fact is not in this pass */
	if (obs_evrec_has_labels(r)) {
		in->ev_held = *r;
		in->ev_held_offset = offset;
		in->ev_holding = true;
		return 0;
	}
	return event_take(in, r, NULL, offset);
}

/* Every connection of the process an earlier pass kept, into memory
 * (those this pass did not meet yet), once a pass. */
static int replays_all(struct ingest *in)
{
	sqlite3_stmt *st = in->store->st[OBS_SQL_REPLAY_ALL];
	int rc;

	if (!in->replays &&
	    !(in->replays = obs_replays_new(event_exchange, in)))
		return -1;
	in->replays_read = true;
	sqlite3_bind_int64(st, 1, in->process_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t seq = (uint64_t)sqlite3_column_int64(st, 0);

		if (!obs_replays_get(in->replays, seq))
			obs_replays_add(in->replays, seq,
					sqlite3_column_blob(st, 1),
					(size_t)sqlite3_column_bytes(st, 1));
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The end of a pass over the file: the connections ended (their process
 * gone, this its last segment) or kept. */
static int events_done(struct ingest *in)
{
	if (event_flush(in) != 0)
		return -1;
	if ((in->sp.hdr->flags & OBS_SPOOL_EVENTS) && in->over &&
	    !(in->sp.hdr->flags & OBS_SPOOL_SEALED) && replays_all(in) != 0)
		return -1;
	if (in->replays)
		obs_replays_drain(in->replays, event_pass_over, in);
	return in->ev_failed ? -1 : 0;
}

/* Whether the file just stored will never change: its process is gone
 * (or ended), or it is a sealed segment whose every slot is published and
 * complete. */
static bool finished(const struct ingest *in)
{
	const struct obs_spool_header *h = in->sp.hdr;

	/* an events spool's events that wait for one of an earlier
	 * segment keep the file even then */
	if (in->over)
		return !(h->flags & OBS_SPOOL_EVENTS) ||
		       (in->n_pending == 0 && !in->frozen);
	return h->version >= 4 && (h->flags & OBS_SPOOL_SEALED) &&
	       !in->frozen && in->n_pending == 0 && h->segment_records &&
	       in->mark_next == OBS_SPOOL_HEADER_SIZE +
					h->segment_records * OBS_RECORD_SIZE;
}

/* Unlink the spool file just stored (slicer --delete), when the name still
 * leads to the file that was read. */
static void delete_file(struct ingest *in, struct obs_ingest_stats *stats)
{
	struct stat open_st, name_st;

	if (fstat(in->sp.fd, &open_st) != 0 ||
	    lstat(in->sp.path, &name_st) != 0 ||
	    open_st.st_dev != name_st.st_dev ||
	    open_st.st_ino != name_st.st_ino) {
		say(in->msgs, in->sp.path,
		    "not deleted: it is no longer the file read");
		return;
	}
	if (unlink(in->sp.path) != 0) {
		say(in->msgs, in->sp.path, "cannot delete: %s",
		    strerror(errno));
		return;
	}
	stats->files_deleted++;
}

/* No foreign key checks while files are stored without a filter (the rows
 * refer to the ids just found or made): with them each INSERT of a batch
 * keeps a statement journal. Once off they stay off on this connection:
 * turning them on or off expires every prepared statement, which each
 * file would then prepare again. On with a filter, whose DELETEs they
 * follow. Outside a transaction only. */
static int store_fk(obs_store *s, bool on)
{
	if (s->fk_off != on)
		return 0;
	if (sqlite3_exec(s->db,
			 on ? "PRAGMA foreign_keys = ON"
			    : "PRAGMA foreign_keys = OFF",
			 NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	s->fk_off = !on;
	return 0;
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
	/* an events spool is over when its writer is gone, not when it
	 * began to leave: other threads may go on writing in between, and
	 * its connections' replays end for good (event_pass_over) */
	in.over = (!(in.sp.hdr->flags & OBS_SPOOL_EVENTS) &&
		   (in.sp.hdr->flags & OBS_SPOOL_ENDED)) ||
		  !writer_alive(s, in.sp.hdr);
	if (store_fk(s, s->filter[OBS_SQL_FILTER_EXCH] != NULL) != 0 ||
	    sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
		    SQLITE_OK)
		goto dberr;
	if (s->filter[OBS_SQL_FILTER_EXCH]) {
		max_exch = obs_schema_max_id(s->db, "exchange");
		max_conn = obs_schema_max_id(s->db, "connection");
		max_proc = obs_schema_max_id(s->db, "process");
		if (max_exch < 0 || max_conn < 0 || max_proc < 0)
			goto dberr_rollback;
	}
	if (upsert_process(&in) != 0)
		goto dberr_rollback;
	in.expect = in.mark_next = OBS_SPOOL_HEADER_SIZE;
	if (!s->filter[OBS_SQL_FILTER_EXCH] && mark_resume(&in) != 0)
		goto dberr_rollback;
	while ((r = obs_spool_next(&in.sp, &offset, report_record, &in))) {
		stats->records++;
		if (s->progress && (stats->records & 0x3fff) == 0)
			progress_show(s, &in, &shown, t_start);
		/* the mark first: a record after an empty slot is known as
		 * such while it is stored (unseen_yet) */
		if (mark_note(&in, r, offset) != 0 ||
		    ingest_record(&in, r, offset) != 0)
			goto dberr_rollback;
	}
	if (ingest_flush(&in) != 0 || events_done(&in) != 0 ||
	    ingest_flush(&in) != 0 || batch_flush(&in) != 0)
		goto dberr_rollback;
	if (!in.frozen)
		in.mark_next = in.expect;
	if (!s->filter[OBS_SQL_FILTER_EXCH] && mark_store(&in) != 0)
		goto dberr_rollback;
	if (s->filter[OBS_SQL_FILTER_EXCH]) {
		uint64_t dropped = 0, dropped_conn = 0;

		if (run_filter(s, s->filter[OBS_SQL_FILTER_EXCH], max_exch,
			       in.process_id, &dropped) != 0 ||
		    run_filter(s, s->filter[OBS_SQL_FILTER_CONN], max_conn,
			       in.process_id, &dropped_conn) != 0 ||
		    run_filter(s, s->filter[OBS_SQL_FILTER_PROC], max_proc,
			       in.process_id, NULL) != 0)
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
	if (in.sp.shrank) {
		say(msgs, path,
		    "the file shrank to %zu bytes while it was read: the "
		    "records before offset %zu are kept",
		    in.sp.shrank_to, in.sp.end);
		in.skipped = true;
	}
	if (in.sp.read_errno) {
		say(msgs, path, "cannot read at offset %zu: %s", in.sp.end,
		    strerror(in.sp.read_errno));
		in.skipped = true;
	}
	if (in.sp.hdr->records_dropped) {
		/* a segment's count goes on from the one before it: a
		 * process's loss is counted once, at its largest */
		uint64_t before = s->dropped_process == in.process_id
					  ? s->dropped_seen
					  : 0;

		say(msgs, path,
		    "the writer lost %" PRIu64 " records (spool full)",
		    in.sp.hdr->records_dropped);
		if (in.sp.hdr->records_dropped > before)
			stats->records_dropped +=
				in.sp.hdr->records_dropped - before;
		if (before == 0)
			stats->processes_dropped++;
		if (in.sp.hdr->records_dropped > before) {
			s->dropped_process = in.process_id;
			s->dropped_seen = in.sp.hdr->records_dropped;
		}
	}
	/* once a process: its segments come one after another */
	if (process_ids && n_process_ids && *n_process_ids < max_process_ids &&
	    (*n_process_ids == 0 ||
	     process_ids[*n_process_ids - 1] != in.process_id))
		process_ids[(*n_process_ids)++] = in.process_id;
	if (in.again)
		stats->files_again++;
	if (s->delete_stored && !in.skipped && finished(&in))
		delete_file(&in, stats);
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
	free(in.pending);
	free(in.labels);
	obs_replays_free(in.replays);
	obs_spool_close(&in.sp);
	return rc;
}

int obs_store_spool_order(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t suffix = sizeof(OBS_SPOOL_SUFFIX) - 1;
	size_t lx = strlen(x), ly = strlen(y);
	size_t nx = lx >= suffix ? lx - suffix : lx;
	size_t ny = ly >= suffix ? ly - suffix : ly;
	int c = memcmp(x, y, nx < ny ? nx : ny);

	return c ? c : (nx > ny) - (nx < ny);
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n > m && strcmp(name + n - m, suffix) == 0;
}

int obs_store_list_spools(const char *path, char ***list, size_t *count)
{
	DIR *dir = opendir(path);
	struct dirent *ent;
	char **names = NULL;
	size_t n = 0, cap = 0;

	*list = NULL;
	*count = 0;
	if (!dir)
		return -1;
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
		qsort(names, n, sizeof(*names), obs_store_spool_order);
	*list = names;
	*count = n;
	return 0;
}

int obs_store_ingest_path(obs_store *store, const char *path,
			  struct obs_ingest_stats *stats, FILE *msgs,
			  int64_t *process_ids, size_t *n_process_ids,
			  size_t max_process_ids)
{
	struct stat st;
	char **names = NULL;
	size_t n = 0;
	int worst = 0;

	if (stat(path, &st) != 0) {
		say(msgs, path, "%s", strerror(errno));
		stats->files_bad++;
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return ingest_file(store, path, stats, msgs, process_ids,
				   n_process_ids, max_process_ids);
	if (obs_store_list_spools(path, &names, &n) != 0) {
		say(msgs, path, "cannot read directory: %s", strerror(errno));
		stats->files_bad++;
		return 1;
	}
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
