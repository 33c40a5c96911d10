/* ingestbench.c - slicer ingest speed against plain SQLite, side by side in
 * one run (issue: slicing must run at >= 0.4x the speed of plain SQLite
 * storing the same number of rows).
 *
 * Writes a spool of N exchanges (N/100 connections of 100 exchanges), then
 *  a. plain SQLite: N rows of 14 integer columns into a fresh database in one
 *     transaction through one prepared statement (WAL, synchronous=NORMAL,
 *     as the store uses), once without and once with a unique index on the
 *     row's identity (the store keeps one for idempotence);
 *  b. the store: obs_store_ingest_path on the spool into a fresh database.
 * Prints rows per second of each and their ratio, best of R runs.
 *
 * usage: ingestbench [N] [R] [DIR] */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "spool_format.h"
#include "store.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int write_spool(const char *path, long n)
{
	FILE *f = fopen(path, "w");
	struct obs_spool_header h;
	struct obs_record r;
	int64_t t = 1000000000;

	if (!f)
		return -1;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, OBS_SPOOL_MAGIC, OBS_SPOOL_MAGIC_LEN);
	h.version = OBS_SPOOL_VERSION;
	h.header_size = OBS_SPOOL_HEADER_SIZE;
	h.record_size = OBS_RECORD_SIZE;
	h.flags = OBS_SPOOL_ENDED;
	h.pid = 999999;
	h.realtime_ns = 1700000000000000000LL;
	h.monotonic_ns = t;
	h.start_ns = h.realtime_ns;
	strcpy(h.client, "bench");
	strcpy(h.host, "bench-host");
	strcpy(h.program, "/usr/bin/bench");
	fwrite(&h, sizeof(h), 1, f);
	for (long i = 0; i < n; i++) {
		uint64_t conn = (uint64_t)(i / 100) + 1;

		if (i % 100 == 0) {
			memset(&r, 0, sizeof(r));
			r.kind = OBS_REC_CONNECTION;
			r.state = OBS_RS_COMPLETE;
			r.conn_seq = conn;
			r.u.conn.family = AF_INET;
			r.u.conn.peer_addr[0] = 127;
			r.u.conn.peer_addr[3] = 1;
			r.u.conn.peer_port = 80;
			r.u.conn.local_port = (uint16_t)(40000 + conn % 20000);
			r.u.conn.t1 = t;
			r.u.conn.t2 = t + 100000;
			r.u.conn.t7 = t + 1000000000;
			r.u.conn.t2_how = OBS_T2_CONNECT;
			r.u.conn.end_class = OBS_END_CLIENT_CLOSE;
			fwrite(&r, sizeof(r), 1, f);
		}
		memset(&r, 0, sizeof(r));
		r.kind = OBS_REC_EXCHANGE;
		r.state = OBS_RS_COMPLETE;
		r.conn_seq = conn;
		r.u.exch.seq = (uint32_t)(i % 100) + 1;
		t += 1000;
		r.u.exch.t3 = t;
		r.u.exch.t4 = t + 10;
		r.u.exch.t5 = t + 20;
		r.u.exch.tfb = t + 500;
		r.u.exch.t6 = t + 600;
		r.u.exch.ds = 100;
		r.u.exch.dr = (uint64_t)(300 + i % 1000);
		r.u.exch.send_calls = 1;
		r.u.exch.recv_calls = 1;
		fwrite(&r, sizeof(r), 1, f);
	}
	return fclose(f);
}

static double plain_sqlite(const char *path, long n, bool unique)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	double t0;

	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	sqlite3_exec(
		db,
		unique ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER "
			 "NOT NULL, b INTEGER NOT NULL, c, d, e, f, g, h, i, "
			 "j, k, l, m, UNIQUE(a, b))"
		       : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER "
			 "NOT NULL, b INTEGER NOT NULL, c, d, e, f, g, h, i, "
			 "j, k, l, m)",
		NULL, NULL, NULL);
	sqlite3_prepare_v2(
		db,
		"INSERT INTO t(a, b, c, d, e, f, g, h, i, j, k, l, m)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
		-1, &st, NULL);
	t0 = now();
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (long r = 0; r < n; r++) {
		sqlite3_bind_int64(st, 1, r / 100 + 1);
		sqlite3_bind_int64(st, 2, r % 100 + 1);
		for (int c = 3; c <= 13; c++)
			sqlite3_bind_int64(st, c,
					   1700000000000000000LL + r * c);
		if (sqlite3_step(st) != SQLITE_DONE)
			return -1;
		sqlite3_reset(st);
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	t0 = now() - t0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return t0;
}

static double store_ingest(const char *db_path, const char *spool)
{
	char err[256];
	struct obs_ingest_stats stats = { 0 };
	obs_store *s;
	double t0;

	unlink(db_path);
	s = obs_store_open(db_path, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	t0 = now();
	if (obs_store_ingest_path(s, spool, &stats, stderr, NULL, NULL, 0) != 0)
		return -1;
	t0 = now() - t0;
	obs_store_close(s);
	return t0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	char spool[512], db1[512], db2[512];
	double best_plain = 1e9, best_unique = 1e9, best_store = 1e9;

	snprintf(spool, sizeof(spool), "%s/ingestbench.spool", dir);
	snprintf(db1, sizeof(db1), "%s/ingestbench-plain.db", dir);
	snprintf(db2, sizeof(db2), "%s/ingestbench-store.db", dir);
	if (write_spool(spool, n) != 0)
		return 1;
	for (int r = 0; r < runs; r++) {
		double a = plain_sqlite(db1, n, false);
		double u = plain_sqlite(db1, n, true);
		double b = store_ingest(db2, spool);

		if (a < 0 || u < 0 || b < 0)
			return 1;
		if (a < best_plain)
			best_plain = a;
		if (u < best_unique)
			best_unique = u;
		if (b < best_store)
			best_store = b;
	}
	printf("rows %ld (exchanges; +%ld connection rows for the store)\n", n,
	       n / 100);
	printf("plain SQLite                 %10.0f rows/s\n", n / best_plain);
	printf("plain SQLite, unique index   %10.0f rows/s\n", n / best_unique);
	printf("slicer ingest                %10.0f rows/s\n", n / best_store);
	printf("ratio slicer/plain %.3f (requirement >= 0.4); slicer/plain with "
	       "index %.3f\n",
	       best_plain / best_store, best_unique / best_store);
	unlink(spool);
	for (int i = 0; i < 2; i++) {
		const char *p = i ? db2 : db1;
		char extra[600];
		unlink(p);
		snprintf(extra, sizeof(extra), "%s-wal", p);
		unlink(extra);
		snprintf(extra, sizeof(extra), "%s-shm", p);
		unlink(extra);
	}
	return 0;
}
