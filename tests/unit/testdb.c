/* testdb.c - the manager tests' database (see testdb.h). */
#define _GNU_SOURCE
#include "testdb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db.h"
#include "store.h"

/* Times: connection i begins at T0 + i * 100 ms; its exchanges k = 0..2
 * at +2 ms + k * 20 ms, answered within about 5 ms. */
static const char rows_sql[] =
	"INSERT INTO client(id, name, host) VALUES(1, 'alpha', 'h'),"
	" (2, 'beta', 'h'), (3, 'gamma', 'h');"
	"INSERT INTO process(id, client_id, pid, start_ns, program) VALUES"
	" (1, 1, 100, 1, '/usr/bin/curl'), (2, 2, 200, 1, '/usr/bin/wget'),"
	" (3, 3, 300, 1, '/usr/bin/python3');"
	"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n"
	"  WHERE i < 59)"
	"INSERT INTO connection(id, process_id, seq, family, peer_addr,"
	"  peer_port, t1_ns, t2_ns, teof_ns, t7_ns, end_class, tls, complete)"
	" SELECT i + 1, i % 3 + 1, i / 3 + 1, CASE i % 4 WHEN 3 THEN 6"
	"  ELSE 4 END, CASE i % 4 WHEN 0 THEN '10.0.0.1' WHEN 1 THEN"
	"  '10.0.0.2' WHEN 2 THEN '10.0.0.3' ELSE '::1' END,"
	"  CASE i % 4 WHEN 1 THEN 443 ELSE 80 END,"
	"  1700000000000000000 + i * 100000000,"
	"  1700000000000000000 + i * 100000000 + 1000000 + i * 10000,"
	"  CASE i % 10 WHEN 0 THEN 1700000000000000000 + i * 100000000 +"
	"   47500000 WHEN 5 THEN 1700000000000000000 + i * 100000000 +"
	"   80000000 END,"
	"  1700000000000000000 + i * 100000000 + 90000000,"
	"  CASE i % 5 WHEN 0 THEN 'server_close' WHEN 2 THEN 'reset'"
	"   WHEN 4 THEN 'timeout' ELSE 'client_close' END,"
	"  i % 4 = 1, 1 FROM n;"
	"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n"
	"  WHERE i < 179),"
	" x(i, c, t3, dr) AS (SELECT i, i / 3 + 1, 1700000000000000000 +"
	"  (i / 3) * 100000000 + 2000000 + (i % 3) * 20000000,"
	"  1000 * (i % 7 + 1) * (i % 11 + 1) FROM n)"
	"INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns, tfb_ns,"
	"  t6_ns, ds, dr, complete)"
	" SELECT c, i % 3 + 1, t3, t3 + 100000, t3 + 200000,"
	"  CASE WHEN i % 13 = 12 THEN NULL ELSE t3 + 1000000 + c * 10000 END,"
	"  CASE WHEN i % 13 = 12 THEN NULL ELSE t3 + 5000000 + dr END,"
	"  100, CASE WHEN i % 13 = 12 THEN 0 ELSE dr END, 1 FROM x;";

void testdb_make(const char *path)
{
	char err[512], *msg = NULL;
	obs_store *s;

	unlink(path);
	s = obs_store_open(path, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	if (sqlite3_exec(obs_store_db(s), rows_sql, NULL, NULL, &msg) !=
	    SQLITE_OK)
		fail_msg("%s: %s", path, msg);
	obs_store_close(s);
}

sqlite3 *testdb_open(char *dir, char *path, size_t size)
{
	sqlite3 *db;

	if (!mkdtemp(dir))
		fail_msg("%s: cannot make it", dir);
	snprintf(path, size, "%s/central.db", dir);
	testdb_make(path);
	if (!(db = db_open(path)))
		fail_msg("%s: cannot open it", path);
	return db;
}

void testdb_close(sqlite3 *db, const char *dir)
{
	sqlite3_close(db);
	testdb_remove_dir(dir);
}

void testdb_remove_dir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (strchr(dir, '\'') || system(cmd) != 0)
		fail_msg("could not remove %s", dir);
}

long long testdb_count(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long n = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
		    SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (n < 0)
		fail_msg("%s: %s", path, sql);
	return n;
}
