/* test_store.c - the spool reader and the database ingest, on spool files
 * built by hand: time conversion, the views' arithmetic, idempotence, a
 * spool that grew, and every kind of bad input; an events spool made by
 * the capture (core_run.h), and what the core knows of it in the columns
 * of schema version 4, carried by a merge; the upgrade of older
 * databases. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core_run.h"
#include "evrec.h"
#include "merge.h"
#include "spool_reader.h"
#include "store.h"

#define REALTIME 1700000000000000000LL /* the header's clock pair */
#define MONOTONIC 5000000000LL

static char dir[64];
static char db_path[128], spool_path[128];

struct spool_img {
	struct obs_spool_header h;
	struct obs_record r[320];
	int n;
};

static void header(struct spool_img *img, int32_t pid, bool ended)
{
	struct utsname uts;

	memset(img, 0, sizeof(*img));
	memcpy(img->h.magic, OBS_SPOOL_MAGIC, OBS_SPOOL_MAGIC_LEN);
	img->h.version = OBS_SPOOL_VERSION;
	img->h.header_size = OBS_SPOOL_HEADER_SIZE;
	img->h.record_size = OBS_RECORD_SIZE;
	img->h.flags = ended ? OBS_SPOOL_ENDED : 0;
	img->h.pid = pid;
	img->h.ppid = 1;
	img->h.realtime_ns = REALTIME;
	img->h.monotonic_ns = MONOTONIC;
	img->h.start_ns = REALTIME - 1000;
	strcpy(img->h.client, "unit");
	uname(&uts);
	snprintf(img->h.host, sizeof(img->h.host), "%.63s", uts.nodename);
	strcpy(img->h.program, "/usr/bin/unit");
	memcpy(img->h.argv, "unit\0-x", 8);
	img->h.argv_len = 8;
}

/* The header of a spool this process writes (a live writer). */
static void header_live(struct spool_img *img)
{
	struct timespec now;

	header(img, getpid(), false);
	clock_gettime(CLOCK_REALTIME, &now);
	img->h.start_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* A connection record; times are offsets (ns) from MONOTONIC, 0 = unset. */
static struct obs_record *conn(struct spool_img *img, uint64_t seq, int64_t t1,
			       int64_t t2, int64_t t7, uint8_t end, bool done)
{
	struct obs_record *r = &img->r[img->n++];

	r->kind = OBS_REC_CONNECTION;
	r->state = done ? OBS_RS_COMPLETE : 0;
	r->conn_seq = seq;
	r->u.conn.family = AF_INET;
	r->u.conn.peer_addr[0] = 127;
	r->u.conn.peer_addr[3] = 1;
	r->u.conn.peer_port = 8080;
	r->u.conn.local_port = 40000;
	r->u.conn.t1 = t1 ? MONOTONIC + t1 : 0;
	r->u.conn.t2 = t2 ? MONOTONIC + t2 : 0;
	r->u.conn.t7 = t7 ? MONOTONIC + t7 : 0;
	r->u.conn.t2_how = OBS_T2_CONNECT;
	r->u.conn.end_class = end;
	return r;
}

static struct obs_record *exch(struct spool_img *img, uint64_t cseq,
			       uint32_t seq, const int64_t t[5], uint64_t ds,
			       uint64_t dr, bool done)
{
	struct obs_record *r = &img->r[img->n++];
	int64_t *dst[5];

	r->kind = OBS_REC_EXCHANGE;
	r->state = done ? OBS_RS_COMPLETE : 0;
	r->conn_seq = cseq;
	r->u.exch.seq = seq;
	dst[0] = &r->u.exch.t3;
	dst[1] = &r->u.exch.t4;
	dst[2] = &r->u.exch.t5;
	dst[3] = &r->u.exch.tfb;
	dst[4] = &r->u.exch.t6;
	for (int i = 0; i < 5; i++)
		*dst[i] = t[i] ? MONOTONIC + t[i] : 0;
	r->u.exch.ds = ds;
	r->u.exch.dr = dr;
	return r;
}

static void http(struct spool_img *img, uint64_t cseq, uint32_t seq,
		 const char *path)
{
	struct obs_record *r = &img->r[img->n++];

	r->kind = OBS_REC_HTTP;
	r->state = OBS_RS_COMPLETE;
	r->conn_seq = cseq;
	r->u.http.seq = seq;
	strcpy(r->u.http.host, "unit.test");
	strcpy(r->u.http.path, path);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void write_spool(const struct spool_img *img, size_t cut)
{
	size_t len = OBS_SPOOL_HEADER_SIZE + (size_t)img->n * OBS_RECORD_SIZE;

	write_file(spool_path, img, cut ? cut : len);
}

static obs_store *open_store(void)
{
	char err[256];
	obs_store *s = obs_store_open(db_path, err, sizeof(err));

	if (!s)
		fail_msg("%s", err);
	return s;
}

/* Ingest spool_path; returns the rc; messages go to msgs_buf. */
static char msgs_buf[4096];
static int ingest(obs_store *s, struct obs_ingest_stats *st)
{
	FILE *msgs = fmemopen(msgs_buf, sizeof(msgs_buf), "w");
	int rc;

	memset(st, 0, sizeof(*st));
	rc = obs_store_ingest_path(s, spool_path, st, msgs, NULL, NULL, 0);
	fclose(msgs);
	return rc;
}

static double query_real(obs_store *s, const char *sql, bool *is_null)
{
	sqlite3_stmt *st;
	double v = 0;

	assert_int_equal(
		sqlite3_prepare_v2(obs_store_db(s), sql, -1, &st, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	*is_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
	v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int64_t query_int(obs_store *s, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	assert_int_equal(
		sqlite3_prepare_v2(obs_store_db(s), sql, -1, &st, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char text_buf[256];
static const char *query_text(obs_store *s, const char *sql)
{
	sqlite3_stmt *st;

	assert_int_equal(
		sqlite3_prepare_v2(obs_store_db(s), sql, -1, &st, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(text_buf, sizeof(text_buf), "%s",
		 sqlite3_column_type(st, 0) == SQLITE_NULL
			 ? "NULL"
			 : (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return text_buf;
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/observe-unit.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
	snprintf(spool_path, sizeof(spool_path), "%s/a.1.1.spool", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The database's exchanges and connections, all of them NULL in the columns
 * of what the core knows (version 4) and in the views'. */
static void expect_no_core(obs_store *s, int64_t exchanges, int64_t connections)
{
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange_metrics "
				      "WHERE interim_status IS NULL AND "
				      "interim_ns IS NULL AND interim_wait_ms "
				      "IS NULL AND tunnel IS NULL AND "
				      "websocket IS NULL"),
			 exchanges);
	assert_int_equal(query_int(s, "SELECT count(*) FROM "
				      "connection_metrics WHERE tunnel IS NULL "
				      "AND websocket IS NULL AND "
				      "ws_messages_sent IS NULL AND "
				      "ws_messages_received IS NULL"),
			 connections);
}

/* One connection, two exchanges: every figure of the views. */
static void test_views(void **state)
{
	struct spool_img img;
	struct obs_ingest_stats st;
	obs_store *s;
	bool is_null;
	const int64_t x1[5] = { 2000000, 2100000, 2200000, 12000000, 22000000 };
	const int64_t x2[5] = { 30000000, 30500000, 30600000, 0, 0 };

	(void)state;
	header(&img, 999999, true);
	conn(&img, 1, 1000000, 1500000, 40000000, OBS_END_SERVER_CLOSE, true);
	exch(&img, 1, 1, x1, 100, 10000, true);
	exch(&img, 1, 2, x2, 50, 0, true); /* sent, nothing came back */
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.connections_new, 1);
	assert_int_equal(st.exchanges_new, 2);

	/* monotonic -> epoch: realtime + (t - monotonic) */
	assert_int_equal(query_int(s, "SELECT t1_ns FROM connection"),
			 REALTIME + 1000000);
	assert_int_equal(query_int(s, "SELECT t6_ns FROM exchange WHERE seq=1"),
			 REALTIME + 22000000);
	assert_float_equal(
		query_real(s, "SELECT te_ms FROM connection_metrics", &is_null),
		0.5, 1e-9);
	assert_float_equal(
		query_real(s, "SELECT tt_ms FROM connection_metrics", &is_null),
		39.0, 1e-9);
	/* ra = (150 + 10000) bytes / 39 ms */
	assert_float_equal(
		query_real(s, "SELECT ra FROM connection_metrics", &is_null),
		10150 / 0.039, 1e-6);
	assert_int_equal(
		query_int(s, "SELECT exchanges FROM connection_metrics"), 2);
	assert_float_equal(query_real(s,
				      "SELECT ts_ms FROM exchange_metrics "
				      "WHERE seq=1",
				      &is_null),
			   0.1, 1e-9);
	assert_float_equal(query_real(s,
				      "SELECT tw_ms FROM exchange_metrics "
				      "WHERE seq=1",
				      &is_null),
			   9.9, 1e-9);
	assert_float_equal(query_real(s,
				      "SELECT tr_ms FROM exchange_metrics "
				      "WHERE seq=1",
				      &is_null),
			   19.8, 1e-9);
	assert_float_equal(query_real(s,
				      "SELECT trecv_ms FROM exchange_metrics "
				      "WHERE seq=1",
				      &is_null),
			   10.0, 1e-9);
	assert_float_equal(query_real(s,
				      "SELECT tgap_ms FROM exchange_metrics "
				      "WHERE seq=1",
				      &is_null),
			   8.0, 1e-9);
	assert_float_equal(query_real(s,
				      "SELECT rr FROM exchange_metrics "
				      "WHERE seq=1",
				      &is_null),
			   10000 / 0.0198, 1e-6);
	/* undefined durations and rates are NULL, never 0 */
	query_real(s, "SELECT tw_ms FROM exchange_metrics WHERE seq=2",
		   &is_null);
	assert_true(is_null);
	query_real(s, "SELECT tr_ms FROM exchange_metrics WHERE seq=2",
		   &is_null);
	assert_true(is_null);
	query_real(s, "SELECT rr FROM exchange_metrics WHERE seq=2", &is_null);
	assert_true(is_null);
	query_real(s, "SELECT tgap_ms FROM exchange_metrics WHERE seq=2",
		   &is_null);
	assert_true(is_null);
	assert_string_equal(query_text(s, "SELECT end_class FROM connection"),
			    "server_close");
	assert_string_equal(query_text(s, "SELECT argv FROM process"),
			    "unit -x");
	/* a record spool knows nothing of interim responses, tunnels or
	 * WebSocket */
	expect_no_core(s, 2, 1);
	obs_store_close(s);
}

/* Slicing twice adds nothing; a grown spool adds the new and completes the
 * in-flight records. */
static void test_idempotent_and_growth(void **state)
{
	struct spool_img img;
	struct obs_ingest_stats st;
	obs_store *s;
	const int64_t x[5] = { 2000000, 2100000, 2200000, 3000000, 4000000 };
	const int64_t xp[5] = { 5000000, 5100000, 5200000, 0, 0 };
	struct obs_record *c, *e2;

	(void)state;
	header_live(&img);
	c = conn(&img, 1, 1000000, 1500000, 0, OBS_END_NONE, false);
	exch(&img, 1, 1, x, 100, 1000, true);
	e2 = exch(&img, 1, 2, xp, 100, 0, false); /* in flight */
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.exchanges_new, 2);
	assert_string_equal(query_text(s, "SELECT end_class FROM connection"),
			    "NULL"); /* still open, writer alive */

	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.connections_new, 0);
	assert_int_equal(st.exchanges_new, 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange"), 2);

	/* the process went on: exchange 2 finished, a third, then close */
	e2->u.exch.tfb = MONOTONIC + 6000000;
	e2->u.exch.t6 = MONOTONIC + 7000000;
	e2->u.exch.dr = 500;
	e2->state = OBS_RS_COMPLETE;
	{
		const int64_t x3[5] = { 8000000, 8100000, 8200000, 9000000,
					9500000 };
		exch(&img, 1, 3, x3, 10, 20, true);
	}
	c->u.conn.t7 = MONOTONIC + 10000000;
	c->u.conn.end_class = OBS_END_CLIENT_CLOSE;
	c->state = OBS_RS_COMPLETE;
	write_spool(&img, 0);
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.exchanges_new, 1);
	assert_int_equal(st.rows_updated, 2); /* the connection, exchange 2 */
	assert_int_equal(query_int(s, "SELECT dr FROM exchange WHERE seq=2"),
			 500);
	assert_string_equal(query_text(s, "SELECT end_class FROM connection"),
			    "client_close");
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange "
				      "WHERE complete = 1"),
			 3);
	obs_store_close(s);
}

/* Exchange seq of connection cseq, the same request as exchange lseq of
 * connection lconn: a reference to that one's HTTP record (version 5). */
static void same_as(struct spool_img *img, uint64_t cseq, uint32_t seq,
		    uint64_t lconn, uint32_t lseq)
{
	const int64_t t[5] = { 2000000, 2100000, 2200000, 3000000, 4000000 };
	struct obs_record *r = exch(img, cseq, seq, t, 100, 1000, true);

	r->u.exch.label_conn = lconn;
	r->u.exch.label_seq = lseq;
}

/* An exchange that is the same request as an earlier one refers to that
 * one's HTTP record (label_conn, label_seq): its row takes that host and
 * path, from the records just read, or from the database when the file is
 * read again from its mark. A reference to an exchange that is not there
 * is said, naming the file; one to a later exchange is a damaged record. */
static void test_label_refs(void **state)
{
	struct spool_img img;
	struct obs_ingest_stats st;
	obs_store *s;
	const int64_t x[5] = { 2000000, 2100000, 2200000, 3000000, 4000000 };

	(void)state;
	header_live(&img);
	conn(&img, 1, 1000000, 1500000, 0, OBS_END_NONE, false);
	exch(&img, 1, 1, x, 100, 1000, true);
	http(&img, 1, 1, "/a");
	same_as(&img, 1, 2, 1, 1);
	conn(&img, 2, 1000000, 1500000, 0, OBS_END_NONE, false);
	same_as(&img, 2, 1, 1, 1); /* another connection's */
	conn(&img, 3, 1000000, 1500000, 0, OBS_END_NONE, false);
	exch(&img, 3, 1, x, 100, 1000, true);
	http(&img, 3, 1, "/c");
	same_as(&img, 1, 3, 3, 1); /* a later connection's */
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.exchanges_new, 5);
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange WHERE "
				      "host = 'unit.test' AND path = '/a'"),
			 3);
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange WHERE "
				      "path = '/c'"),
			 2);
	/* read again from the mark: the reference found in the database */
	same_as(&img, 1, 4, 1, 2);
	write_spool(&img, 0);
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.exchanges_new, 1);
	assert_int_equal(st.records_bad, 0);
	assert_string_equal(query_text(s, "SELECT path FROM exchange e JOIN "
					  "connection c ON c.id = "
					  "e.connection_id WHERE c.seq = 1 "
					  "AND e.seq = 4"),
			    "/a");
	/* exchange 9 of connection 2 refers to its exchange 5: never
	 * written */
	same_as(&img, 2, 9, 2, 5);
	write_spool(&img, 0);
	assert_int_equal(ingest(s, &st), 1);
	assert_int_equal(st.records_bad, 1);
	assert_non_null(strstr(msgs_buf, "a.1.1.spool"));
	assert_non_null(strstr(msgs_buf, "(the same request) is not stored"));
	assert_string_equal(query_text(s, "SELECT coalesce(path, 'NULL') FROM "
					  "exchange WHERE seq = 9"),
			    "NULL");
	/* exchange 10 to a later one: damaged */
	same_as(&img, 2, 10, 2, 11);
	write_spool(&img, 0);
	assert_int_equal(ingest(s, &st), 1);
	assert_non_null(strstr(msgs_buf, "label of no earlier exchange"));
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange "
				      "WHERE seq = 10"),
			 0);
	obs_store_close(s);
}

/* Exchanges are stored many to an INSERT: one that finds some of its rows
 * there (a filtered slice kept every third exchange, three of them in
 * flight) adds the others and brings those up to date (but not a new one
 * in flight), in full batches and in the rest stored one by one. */
static void test_batch_partly_stored(void **state)
{
	enum { N = 150 };
	struct spool_img img;
	struct obs_ingest_stats st;
	struct obs_record *in_flight[3], *c;
	char err[256];
	obs_store *s;
	int k = 0;

	(void)state;
	header_live(&img);
	c = conn(&img, 1, 1000000, 1500000, 0, OBS_END_NONE, false);
	memcpy(c->u.conn.peer_addr, (uint8_t[]){ 10, 0, 200, 9 }, 4);
	memcpy(c->u.conn.local_addr, (uint8_t[]){ 192, 168, 1, 255 }, 4);
	for (uint32_t i = 1; i <= N; i++) {
		const int64_t x[5] = { 2000000 + i * 10000, 2001000 + i * 10000,
				       2002000 + i * 10000, 2003000 + i * 10000,
				       2004000 + i * 10000 };
		bool done = i != 9 && i != 66 && i != 141;
		struct obs_record *e = exch(&img, 1, i, x, 100, 10, done);

		if (!done)
			in_flight[k++] = e;
		http(&img, 1, i, "/first");
	}
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(
		obs_store_set_filter(s, "seq % 3 = 0", err, sizeof(err)), 0);
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.exchanges_new, N / 3);
	assert_string_equal(query_text(s, "SELECT peer_addr || ' ' || "
					  "local_addr FROM connection"),
			    "10.0.200.9 192.168.1.255");
	obs_store_close(s);

	for (int i = 0; i < 3; i++) {
		in_flight[i]->u.exch.dr = 777;
		in_flight[i]->state = OBS_RS_COMPLETE;
	}
	for (int i = 0; i < img.n; i++)
		if (img.r[i].kind == OBS_REC_HTTP)
			strcpy(img.r[i].u.http.path, "/second");
	img.r[1 + 2 * (100 - 1)].state = 0; /* exchange 100: in flight */
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.exchanges_new, N - N / 3);
	/* the connection (still open) and the three exchanges */
	assert_int_equal(st.rows_updated, 4);
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange"), N);
	assert_int_equal(query_int(s, "SELECT count(DISTINCT seq) FROM "
				      "exchange WHERE path = '/second' AND "
				      "host IS NOT NULL"),
			 N);
	assert_int_equal(query_int(s, "SELECT group_concat(seq) FROM exchange "
				      "WHERE complete = 0"),
			 100);
	assert_string_equal(query_text(s, "SELECT group_concat(seq) FROM "
					  "exchange WHERE dr = 777"),
			    "9,66,141");
	/* ids in the spool's order but for those stored first */
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange a JOIN "
				      "exchange b ON b.seq = a.seq + 1 AND "
				      "b.seq % 3 != 0 AND a.seq % 3 != 0 "
				      "WHERE b.id < a.id"),
			 0);
	obs_store_close(s);
}

/* An info record (TCP_INFO) of connection cseq. */
static void info(struct spool_img *img, uint64_t cseq, uint32_t rtt_us)
{
	struct obs_record *r = &img->r[img->n++];

	r->kind = OBS_REC_INFO;
	r->state = OBS_RS_COMPLETE;
	r->conn_seq = cseq;
	r->u.info.flags = OBS_IF_TCPINFO;
	r->u.info.rtt_us = rtt_us;
}

/* Connections are stored many to an INSERT too, an info record that comes
 * before theirs in it: one that finds some of its rows there (a filtered
 * slice kept every third connection, three of them in flight) adds the
 * others, gives each exchange its own connection's id, and brings the old
 * rows up to date (but not a new one in flight), info records included,
 * whether they came before or after the connections were stored. */
static void test_conn_batch_partly_stored(void **state)
{
	enum { N = 100 };
	struct spool_img img;
	struct obs_ingest_stats st;
	struct obs_record *c[N + 1];
	char err[256];
	obs_store *s;

	(void)state;
	header_live(&img);
	for (int i = 1; i <= N; i++) {
		const int64_t x[5] = { 2000000 + i * 10000, 2001000 + i * 10000,
				       2002000 + i * 10000, 2003000 + i * 10000,
				       2004000 + i * 10000 };
		bool done = i != 9 && i != 66 && i != 99;

		c[i] = conn(&img, (uint64_t)i, 1000000 + i * 10000,
			    1500000 + i * 10000, done ? 3000000 + i * 10000 : 0,
			    done ? OBS_END_SERVER_CLOSE : OBS_END_NONE, done);
		if (i > 1) /* after the next one's, as with concurrent ones */
			info(&img, (uint64_t)i - 1, (uint32_t)(i - 1) * 10);
		exch(&img, (uint64_t)i, 1, x, 100, 10, true);
	}
	info(&img, N, N * 10);
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(obs_store_set_filter(s, "connection_id % 3 = 0", err,
					      sizeof(err)),
			 0);
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.connections_new, N / 3);
	assert_int_equal(query_int(s, "SELECT count(*) FROM connection WHERE "
				      "rtt_us = seq * 10 AND seq % 3 = 0"),
			 N / 3);
	obs_store_close(s);

	for (int i = 1; i <= N; i++) {
		c[i]->state = OBS_RS_COMPLETE;
		if (i == 9 || i == 66 || i == 99) {
			c[i]->u.conn.t7 = MONOTONIC + 3000000 + i * 10000;
			c[i]->u.conn.end_class = OBS_END_CLIENT_CLOSE;
		}
	}
	c[50]->state = 0; /* a new one in flight */
	for (int i = 0; i < img.n; i++)
		if (img.r[i].kind == OBS_REC_INFO)
			img.r[i].u.info.rtt_us++;
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(st.connections_new, N - N / 3);
	assert_int_equal(st.exchanges_new, N - N / 3);
	assert_int_equal(st.rows_updated, 3); /* connections 9, 66, 99 */
	assert_int_equal(query_int(s, "SELECT count(*) FROM connection"), N);
	/* each exchange on its own connection */
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange e JOIN "
				      "connection c ON c.id = e.connection_id "
				      "WHERE e.t3_ns = c.t1_ns + 1000000"),
			 N);
	assert_int_equal(query_int(s, "SELECT count(*) FROM connection WHERE "
				      "rtt_us = seq * 10 + 1"),
			 N);
	assert_string_equal(query_text(s, "SELECT group_concat(seq) FROM "
					  "connection WHERE end_class = "
					  "'client_close'"),
			    "9,66,99");
	assert_int_equal(query_int(s, "SELECT group_concat(seq) FROM "
				      "connection WHERE complete = 0"),
			 50);
	/* ids in the spool's order but for those stored first */
	assert_int_equal(query_int(s, "SELECT count(*) FROM connection a JOIN "
				      "connection b ON b.seq = a.seq + 1 AND "
				      "b.seq % 3 != 0 AND a.seq % 3 != 0 "
				      "WHERE b.id < a.id"),
			 0);
	obs_store_close(s);
}

/* A spool whose writer is gone: open connections become unterminated. */
static void test_dead_writer_unterminated(void **state)
{
	struct spool_img img;
	struct obs_ingest_stats st;
	obs_store *s;
	const int64_t x[5] = { 2000000, 2100000, 2200000, 3000000, 4000000 };

	(void)state;
	header(&img, 999999, false); /* not ended, pid not alive */
	conn(&img, 1, 1000000, 1500000, 0, OBS_END_NONE, false);
	exch(&img, 1, 1, x, 100, 1000, false);
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 0);
	assert_string_equal(query_text(s, "SELECT end_class FROM connection"),
			    "unterminated");
	assert_int_equal(query_int(s, "SELECT complete FROM exchange"), 1);
	query_int(s, "SELECT tt_ms FROM connection_metrics");
	obs_store_close(s);
}

/* Cut inside a record: the records before the cut are stored, the file and
 * offset are named. */
static void test_truncated(void **state)
{
	struct spool_img img;
	struct obs_ingest_stats st;
	obs_store *s;
	const int64_t x[5] = { 2000000, 2100000, 2200000, 3000000, 4000000 };
	char want[256];

	(void)state;
	header(&img, 999999, true);
	conn(&img, 1, 1000000, 1500000, 0, OBS_END_NONE, true);
	exch(&img, 1, 1, x, 100, 1000, true);
	exch(&img, 1, 2, x, 100, 1000, true);
	write_spool(&img, OBS_SPOOL_HEADER_SIZE + 2 * OBS_RECORD_SIZE + 50);
	s = open_store();
	assert_int_equal(ingest(s, &st), 1);
	assert_int_equal(st.exchanges_new, 1);
	snprintf(want, sizeof(want), "%s: truncated at offset %u", spool_path,
		 OBS_SPOOL_HEADER_SIZE + 2 * OBS_RECORD_SIZE);
	assert_non_null(strstr(msgs_buf, want));
	obs_store_close(s);
}

/* A damaged record in the middle is skipped with its offset; the rest is
 * read. */
static void test_damaged_record(void **state)
{
	struct spool_img img;
	struct obs_ingest_stats st;
	obs_store *s;
	const int64_t x[5] = { 2000000, 2100000, 2200000, 3000000, 4000000 };
	char want[256];

	(void)state;
	header(&img, 999999, true);
	conn(&img, 1, 1000000, 1500000, 0, OBS_END_NONE, true);
	exch(&img, 1, 1, x, 100, 1000, true);
	memset(&img.r[img.n++], 0xA5, OBS_RECORD_SIZE);
	exch(&img, 1, 2, x, 100, 1000, true);
	exch(&img, 3, 1, x, 100, 1000, true); /* no connection 3 */
	conn(&img, 1ull << 60, 1000000, 1500000, 0, OBS_END_NONE, true);
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 1);
	assert_int_equal(st.exchanges_new, 2);
	assert_int_equal(st.records_bad, 3);
	assert_non_null(strstr(msgs_buf, "connection number out of range"));
	snprintf(want, sizeof(want), "offset %u: unknown record kind",
		 OBS_SPOOL_HEADER_SIZE + 2 * OBS_RECORD_SIZE);
	assert_non_null(strstr(msgs_buf, want));
	assert_non_null(strstr(msgs_buf, "connection with no record"));
	obs_store_close(s);
}

/* A name lookup the process made before its first connection (which made
 * the spool) is older than the spool's clock pair: kept when it is after
 * the process's start (Firefox looks its host name up a second or more
 * before it connects), refused when it is more than a second before it
 * (a forked child's inherited lookup, which the layer no longer gives). */
static void test_time_floor(void **state)
{
	struct spool_img img;
	struct obs_ingest_stats st;
	struct obs_record *r;
	obs_store *s;
	char want[256];

	(void)state;
	header(&img, 999999, true);
	img.h.start_ns = REALTIME - 3000000000LL; /* 3 s before the spool */
	conn(&img, 1, 1000000, 1500000, 2000000, OBS_END_CLIENT_CLOSE, true);
	conn(&img, 2, 1000000, 1500000, 2000000, OBS_END_CLIENT_CLOSE, true);
	for (uint64_t c = 1; c <= 2; c++) {
		r = &img.r[img.n++];
		r->kind = OBS_REC_INFO;
		r->state = OBS_RS_COMPLETE;
		r->conn_seq = c;
		r->u.info.flags = OBS_IF_DNS;
		/* 2.5 s before the spool (after the start); 4.5 s before
		 * (1.5 s before the start) */
		r->u.info.dns_start =
			MONOTONIC - (c == 1 ? 2500000000LL : 4500000000LL);
		r->u.info.dns_end = r->u.info.dns_start + 1000000;
		memcpy(r->u.info.dns_name, "vm", 3);
	}
	write_spool(&img, 0);
	s = open_store();
	assert_int_equal(ingest(s, &st), 1);
	assert_int_equal(st.records_bad, 1);
	snprintf(want, sizeof(want), "offset %u: time out of range",
		 OBS_SPOOL_HEADER_SIZE + 3 * OBS_RECORD_SIZE);
	if (!strstr(msgs_buf, want))
		fail_msg("expected '%s' in '%s'", want, msgs_buf);
	assert_int_equal(query_int(s, "SELECT count(*) FROM connection WHERE "
				      "seq = 1 AND dns_name = 'vm' AND "
				      "dns_end_ns - dns_start_ns = 1000000"),
			 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM connection WHERE "
				      "seq = 2 AND dns_name IS NULL"),
			 1);
	obs_store_close(s);
}

static void expect_refused(const void *data, size_t len, const char *reason)
{
	struct obs_ingest_stats st;
	obs_store *s;
	char want[256];

	write_file(spool_path, data, len);
	s = open_store();
	assert_int_equal(ingest(s, &st), 1);
	assert_int_equal(st.files_bad, 1);
	snprintf(want, sizeof(want), "%s: %s", spool_path, reason);
	if (!strstr(msgs_buf, want))
		fail_msg("expected '%s' in '%s'", want, msgs_buf);
	assert_int_equal(query_int(s, "SELECT count(*) FROM process"), 0);
	obs_store_close(s);
}

static void test_bad_files(void **state)
{
	struct spool_img img;
	unsigned char noise[8192];

	(void)state;
	expect_refused("", 0, "empty file");
	srand(7);
	for (size_t i = 0; i < sizeof(noise); i++)
		noise[i] = (unsigned char)rand();
	expect_refused(noise, sizeof(noise), "not a spool file (bad magic)");
	header(&img, 1, true);
	img.h.version = OBS_SPOOL_VERSION + 1;
	{
		char why[128];
		snprintf(why, sizeof(why),
			 "written by a newer observe (spool format version %u)",
			 OBS_SPOOL_VERSION + 1);
		expect_refused(&img, OBS_SPOOL_HEADER_SIZE, why);
	}
	header(&img, 1, true);
	expect_refused(&img, 100, "truncated at offset 100");
}

static void test_not_a_database(void **state)
{
	char err[512];
	obs_store *s;

	(void)state;
	write_file(db_path, "this is a text file, not SQLite\n", 32);
	s = obs_store_open(db_path, err, sizeof(err));
	assert_null(s);
	assert_non_null(strstr(err, db_path));
	assert_non_null(strstr(err, "not an observe database"));
	unlink(db_path);
}

/* The events of run s (core_run.h, finished) as the layer writes them in
 * an events spool: connection seq's record, then each event's record (and
 * its labels' record after it), all final. */
static void events_of(struct spool_img *img, uint64_t seq, const struct run *s)
{
	conn(img, seq, 0, 0, 0, OBS_END_NONE, true);
	for (uint64_t i = 0; i < s->n_events; i++) {
		struct obs_record *r, *labels = NULL;

		assert_true(img->n + 2 <=
			    (int)(sizeof(img->r) / sizeof(*img->r)));
		r = &img->r[img->n++];
		if (obs_evrec_records(&s->events[i]) == 2)
			labels = &img->r[img->n++];
		obs_evrec_encode(&s->events[i], r, labels);
		for (struct obs_record *k = r; k; k = k == r ? labels : NULL) {
			k->kind = OBS_REC_EVENT;
			k->state = OBS_RS_COMPLETE;
			k->conn_seq = seq;
		}
	}
}

/* A run's times (core_run.h) begin at 0: its spool's clock pair is
 * (RUN_MONOTONIC, REALTIME). A run time as the database has it: */
#define RUN_MONOTONIC 1000
static int64_t epoch_of(int64_t t)
{
	return REALTIME + (t - RUN_MONOTONIC);
}

/* The times of core_spool's first exchange (run times, core_run.h). */
struct hints_times {
	int64_t t4, hints, tfb;
};

/* An events spool at spool_path, made by the capture, of three
 * connections: 103 Early Hints before a 200 (its times in *ht); a
 * WebSocket, the client's two messages, the server's one and its close; a
 * CONNECT to in.example:8443 and a request in the tunnel. */
static void core_spool(struct hints_times *ht)
{
	static const uint8_t masked[] = { 0x81, 0x82, 1,       2,
					  3,	4,    'h' ^ 1, 'i' ^ 2 };
	static const uint8_t replies[] = { 0x81, 2, 'h', 'i', 0x88, 0 };
	static struct spool_img img;
	struct run *s;

	header(&img, 999998, true);
	img.h.flags |= OBS_SPOOL_EVENTS;
	img.h.monotonic_ns = RUN_MONOTONIC;
	s = run_new();
	ht->t4 = t_out(send_str(s, "GET /early HTTP/1.1\r\nHost: h\r\n\r\n"));
	ht->hints = t_out(recv_str(s, "HTTP/1.1 103 Early Hints\r\n\r\n"));
	ht->tfb = t_out(
		recv_str(s, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
	finish(s);
	events_of(&img, 1, s);
	s = run_new();
	send_str(s, "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
		    "Connection: Upgrade\r\nSec-WebSocket-Key: x\r\n\r\n");
	recv_str(s, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		    "Connection: Upgrade\r\n\r\n");
	call(s, OBS_TX, masked, sizeof(masked));
	call(s, OBS_TX, masked, sizeof(masked));
	call(s, OBS_RX, replies, sizeof(replies));
	finish(s);
	events_of(&img, 2, s);
	s = run_new();
	send_str(s, "CONNECT in.example:8443 HTTP/1.1\r\nHost: in.example:8443"
		    "\r\n\r\n");
	recv_str(s, "HTTP/1.1 200 Connection established\r\n\r\n");
	send_str(s, "GET /inside HTTP/1.1\r\nHost: in\r\n\r\n");
	recv_str(s, "HTTP/1.1 204 No Content\r\n\r\n");
	finish(s);
	events_of(&img, 3, s);
	write_spool(&img, 0);
}

/* core_spool's spool: what the core knows beyond the records' fields is in
 * the columns of version 4 and their views. The hints' status and time,
 * the wait for them from T4; the WebSocket's messages each way; the
 * CONNECT's target. A merge into a central database carries them. */
static void test_core_columns(void **state)
{
	struct obs_ingest_stats st;
	struct hints_times ht;
	obs_store *store;
	obs_central *central;
	char central_path[160], why[512];
	int64_t added = 0;
	bool is_null;

	(void)state;
	core_spool(&ht);
	store = open_store();
	assert_int_equal(ingest(store, &st), 0);
	assert_int_equal(st.connections_new, 3);

	/* the hints: their status, their time, 1 µs after T4, 1 µs before
	 * TFB; the 200 is the exchange's status */
	assert_string_equal(
		query_text(store, "SELECT status || ' ' || interim_status FROM "
				  "exchange WHERE path = '/early'"),
		"200 103");
	assert_int_equal(query_int(store, "SELECT interim_ns FROM exchange "
					  "WHERE path = '/early'"),
			 epoch_of(ht.hints));
	assert_int_equal(query_int(store, "SELECT tfb_ns - interim_ns FROM "
					  "exchange WHERE path = '/early'"),
			 ht.tfb - ht.hints);
	assert_int_equal(query_int(store, "SELECT interim_ns - t4_ns FROM "
					  "exchange WHERE path = '/early'"),
			 ht.hints - ht.t4);
	assert_float_equal(query_real(store,
				      "SELECT interim_wait_ms FROM "
				      "exchange_metrics WHERE path = '/early'",
				      &is_null),
			   (double)(ht.hints - ht.t4) / 1e6, 1e-12);
	/* no interim response: NULL */
	assert_int_equal(query_int(store, "SELECT count(*) FROM exchange WHERE "
					  "interim_status IS NULL AND "
					  "interim_ns IS NULL"),
			 st.exchanges_new - 1);
	/* the WebSocket: the client's two messages; the server's one and its
	 * close */
	assert_string_equal(query_text(store, "SELECT websocket || ' ' || "
					      "ws_messages_sent || ' ' || "
					      "ws_messages_received || ' ' || "
					      "(tunnel IS NULL) FROM "
					      "connection_metrics WHERE "
					      "connection_id = 2"),
			    "1 2 2 1");
	/* the tunnel: its target; no WebSocket, so no message count */
	assert_string_equal(query_text(store, "SELECT tunnel || ' ' || "
					      "websocket || ' ' || "
					      "(ws_messages_sent IS NULL) || "
					      "(ws_messages_received IS NULL) "
					      "FROM connection_metrics WHERE "
					      "connection_id = 3"),
			    "in.example:8443 0 11");
	assert_int_equal(query_int(store, "SELECT count(*) FROM "
					  "exchange_metrics WHERE tunnel = "
					  "'in.example:8443'"),
			 2);
	assert_int_equal(query_int(store, "SELECT count(*) FROM connection "
					  "WHERE complete = 1"),
			 3);
	obs_store_close(store);

	/* merged into a central database: the same values */
	snprintf(central_path, sizeof(central_path), "%s/central.db", dir);
	central = obs_central_open(central_path, why, sizeof(why));
	if (!central || obs_merge_prepare(central, why, sizeof(why)) != 0)
		fail_msg("%s", why);
	if (obs_merge_file(central, db_path, NULL, NULL, NULL, &added, why,
			   sizeof(why)) != 0)
		fail_msg("%s", why);
	assert_int_equal(added, st.exchanges_new);
	{
		sqlite3_stmt *q;
		const char *sql =
			"SELECT (SELECT group_concat(interim_status || '@' || "
			"interim_ns) FROM exchange) || ' ' || (SELECT "
			"group_concat(coalesce(tunnel, '-') || ',' || websocket "
			"|| ',' || coalesce(ws_messages_sent, '-') || ',' || "
			"coalesce(ws_messages_received, '-'), ' ') FROM (SELECT "
			"* FROM connection ORDER BY seq))";
		char want[160];
		const char *got;

		assert_int_equal(sqlite3_prepare_v2(obs_central_sqlite(central),
						    sql, -1, &q, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		snprintf(want, sizeof(want),
			 "103@%lld -,0,-,- -,1,2,2 in.example:8443,0,-,-",
			 (long long)epoch_of(ht.hints));
		got = (const char *)sqlite3_column_text(q, 0);
		assert_string_equal(got ? got : "NULL", want);
		sqlite3_finalize(q);
	}
	obs_central_close(central);
}

/* A database as an older observe left it: a connection (Te 2 ms) and
 * two exchanges (2 ms apart) stored, then `older` run on it (SQL that
 * takes away what came since, the views first, and sets its version);
 * opened again, which upgrades it to this version. */
static obs_store *upgraded(const char *older)
{
	obs_store *s = open_store();

	assert_int_equal(
		sqlite3_exec(obs_store_db(s),
			     "INSERT INTO client(name) VALUES('old');"
			     "INSERT INTO process(client_id, pid, start_ns) "
			     "VALUES(1, 42, 7);"
			     "INSERT INTO connection(process_id, seq, t1_ns, "
			     "t2_ns, t7_ns) VALUES(1, 1, 1000000, 3000000, "
			     "9000000);"
			     "INSERT INTO exchange(connection_id, seq, t3_ns, "
			     "t4_ns, t6_ns, status) VALUES(1, 1, 4000000, "
			     "4500000, 5000000, 200), (1, 2, 7000000, 7500000, "
			     "8000000, 200);"
			     "DROP VIEW connection_metrics;"
			     "DROP VIEW exchange_metrics;",
			     NULL, NULL, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_exec(obs_store_db(s), older, NULL, NULL, NULL),
			 SQLITE_OK);
	obs_store_close(s);
	s = open_store(); /* upgrades */
	assert_int_equal(query_int(s, "PRAGMA user_version"),
			 OBS_SCHEMA_VERSION);
	return s;
}

/* A database of schema version 1 (no TLS, TCP_INFO or DNS columns) is
 * brought up to date when opened, rows kept, views working. */
static void test_upgrade_from_v1(void **state)
{
	static const char *const v2_columns[] = {
		"tls",		"tls_version", "tls_start_ns",	"tls_end_ns",
		"rtt_us",	"rttvar_us",   "min_rtt_us",	"retrans",
		"snd_cwnd",	"pmtu",	       "delivery_rate", "dns_name",
		"dns_start_ns", "dns_end_ns",
	};
	obs_store *s;
	char sql[1024];
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(v2_columns) / sizeof(*v2_columns); i++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n,
				      "ALTER TABLE connection DROP COLUMN %s;",
				      v2_columns[i]);
	snprintf(sql + n, sizeof(sql) - n, "PRAGMA user_version = 1;");
	s = upgraded(sql);
	assert_int_equal(query_int(s, "SELECT count(*) FROM pragma_table_info("
				      "'connection') WHERE name IN ('tls', "
				      "'rtt_us', 'dns_name', 'dns_end_ns')"),
			 4);
	assert_int_equal(query_int(s, "SELECT te_ms = 2.0 AND tls = 0 AND "
				      "tls_ms IS NULL AND dns_ms IS NULL "
				      "FROM connection_metrics"),
			 1);
	obs_store_close(s);
}

/* A database of schema version 2 (no protocol, no HTTP/2 stream) gets
 * them when opened; its rows stay, the views show them NULL. */
static void test_upgrade_from_v2(void **state)
{
	obs_store *s;

	(void)state;
	s = upgraded("ALTER TABLE connection DROP COLUMN protocol;"
		     "ALTER TABLE exchange DROP COLUMN stream;"
		     "ALTER TABLE exchange DROP COLUMN stream_error;"
		     "PRAGMA user_version = 2;");
	assert_int_equal(query_int(s, "SELECT count(*) FROM exchange_metrics "
				      "WHERE protocol IS NULL AND stream IS "
				      "NULL AND stream_error IS NULL"),
			 2);
	/* not a stream: the gap to the next exchange is known */
	assert_int_equal(query_int(s, "SELECT tgap_ms = 2.0 FROM "
				      "exchange_metrics WHERE seq = 1"),
			 1);
	obs_store_close(s);
}

/* A database of schema version 3 (none of the core's columns) gets them
 * when the slicer opens it: its rows stay, with NULL in them and in the
 * views' new columns; an events spool stored into it then fills them. */
static void test_upgrade_from_v3(void **state)
{
	struct obs_ingest_stats st;
	struct hints_times ht;
	obs_store *s;

	(void)state;
	s = upgraded("ALTER TABLE connection DROP COLUMN tunnel;"
		     "ALTER TABLE connection DROP COLUMN websocket;"
		     "ALTER TABLE connection DROP COLUMN ws_messages_sent;"
		     "ALTER TABLE connection DROP COLUMN ws_messages_received;"
		     "ALTER TABLE exchange DROP COLUMN interim_status;"
		     "ALTER TABLE exchange DROP COLUMN interim_ns;"
		     "PRAGMA user_version = 3;");
	expect_no_core(s, 2, 1);
	core_spool(&ht);
	assert_int_equal(ingest(s, &st), 0);
	assert_int_equal(query_int(s, "SELECT interim_ns FROM exchange WHERE "
				      "interim_status = 103"),
			 epoch_of(ht.hints));
	assert_string_equal(query_text(s,
				       "SELECT group_concat(coalesce("
				       "tunnel, '-') || ',' || websocket "
				       "|| ',' || coalesce(ws_messages_sent, "
				       "'-'), ' ') FROM connection WHERE "
				       "process_id = 2"),
			    "-,0,- -,1,2 in.example:8443,0,-");
	obs_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_views, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idempotent_and_growth,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_label_refs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_partly_stored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_conn_batch_partly_stored,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_writer_unterminated,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_time_floor, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_damaged_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v1, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v2, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v3, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_core_columns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_not_a_database, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
