/* testdb.h - a small central database for the manager's unit tests, made
 * with the real schema (common/store.c) and rows written by hand. */
#ifndef OBSERVE_TEST_TESTDB_H
#define OBSERVE_TEST_TESTDB_H

#include <stddef.h>
#include <sqlite3.h>

/* Three clients (alpha, beta, gamma), 60 connections, 180 exchanges, to
 * four servers: 10.0.0.1:80, 10.0.0.2:443 (TLS), 10.0.0.3:80 and
 * [::1]:80; every fifth connection closed by the server (half of them
 * right after the response, half after 33 ms idle, each of those followed
 * by a reconnect), gaps of about 15 ms between exchanges, responses of
 * many sizes, some unanswered. Written at path (a file made anew); the
 * test fails if it cannot be. */
void testdb_make(const char *path);

/* A new directory from the mkdtemp template dir, the database made in it
 * as path (size bytes) central.db, opened by the manager's db_open. */
sqlite3 *testdb_open(char *dir, char *path, size_t size);

/* db closed, the directory dir removed. */
void testdb_close(sqlite3 *db, const char *dir);

/* Remove the directory dir and everything in it (the test fails if it
 * cannot). */
void testdb_remove_dir(const char *dir);

/* The number the SQL query (one integer) gives on the database at path. */
long long testdb_count(const char *path, const char *sql);

/* A test's database in a directory of its own: the statics dir, db_path
 * and db, and the cmocka group fixtures setup and teardown that make the
 * directory and the database, open it, and close and remove them. */
#define TESTDB_FIXTURES(name)                                                  \
	static char dir[] = "/tmp/observe-test-" name ".XXXXXX";               \
	static char db_path[128];                                              \
	static sqlite3 *db;                                                    \
	static int setup(void **state)                                         \
	{                                                                      \
		(void)state;                                                   \
		db = testdb_open(dir, db_path, sizeof(db_path));               \
		return 0;                                                      \
	}                                                                      \
	static int teardown(void **state)                                      \
	{                                                                      \
		(void)state;                                                   \
		testdb_close(db, dir);                                         \
		return 0;                                                      \
	}

#endif
