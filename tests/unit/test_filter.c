/* test_filter.c - the slicer's filter plumbing: options become one SQL
 * expression that SQLite evaluates over exchange_metrics; values are quoted,
 * never pasted; bad arguments are refused with a message. Checked against
 * an in-memory database with the real schema and hand-made rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "filter.h"
#include "store.h"

static obs_store *store;

/* Two processes, three exchanges: curl to 127.0.0.1:8080 (100 B and
 * 60000 B), and a program named O'Brien to 10.1.2.3:443 (5000 B). */
static int setup(void **state)
{
	char err[256];
	char *msg = NULL;

	(void)state;
	store = obs_store_open(":memory:", err, sizeof(err));
	assert_non_null(store);
	assert_int_equal(
		sqlite3_exec(
			obs_store_db(store),
			"INSERT INTO client VALUES(1, 'c', 'h');"
			"INSERT INTO process(id, client_id, pid, start_ns, program)"
			" VALUES(1, 1, 10, 1, '/usr/bin/curl'),"
			" (2, 1, 11, 1, '/opt/O''Brien');"
			"INSERT INTO connection(id, process_id, seq, peer_addr,"
			" peer_port, t1_ns) VALUES(1, 1, 1, '127.0.0.1', 8080,"
			" 1700000000000000000), (2, 2, 1, '10.1.2.3', 443,"
			" 1800000000000000000);"
			"INSERT INTO exchange(connection_id, seq, t3_ns, ds, dr)"
			" VALUES(1, 1, 1700000000000000000, 80, 100),"
			" (1, 2, 1700000001000000000, 80, 60000),"
			" (2, 1, 1800000000000000000, 90, 5000);",
			NULL, NULL, &msg),
		SQLITE_OK);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	obs_store_close(store);
	return 0;
}

/* How many exchanges the filter keeps. */
static int count(const struct filter *f)
{
	sqlite3_stmt *st;
	char *sql = sqlite3_mprintf(
		"SELECT count(*) FROM exchange_metrics WHERE (%s)",
		f->expr ? f->expr : "1");
	int n = -1;

	assert_int_equal(
		sqlite3_prepare_v2(obs_store_db(store), sql, -1, &st, NULL),
		SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return n;
}

static void test_each_option(void **state)
{
	struct filter f;
	char err[256];

	(void)state;
	filter_init(&f);
	assert_int_equal(count(&f), 3);
	assert_int_equal(filter_option(&f, 'w', "dr > 1000", err, sizeof(err)),
			 0);
	assert_int_equal(count(&f), 2);
	assert_int_equal(
		filter_option(&f, 'P', "127.0.0.1:8080", err, sizeof(err)), 0);
	assert_int_equal(count(&f), 1); /* the AND of both */
	filter_free(&f);

	filter_init(&f);
	assert_int_equal(filter_option(&f, 'R', "curl", err, sizeof(err)), 0);
	assert_int_equal(count(&f), 2);
	filter_free(&f);

	filter_init(&f); /* a quote in a value is data, not SQL */
	assert_int_equal(filter_option(&f, 'R', "O'Brien", err, sizeof(err)),
			 0);
	assert_int_equal(count(&f), 1);
	filter_free(&f);

	filter_init(&f);
	assert_int_equal(
		filter_option(&f, 'P', "10.0.0.0/8:443", err, sizeof(err)), 0);
	assert_int_equal(count(&f), 1);
	filter_free(&f);

	filter_init(&f); /* curl is pid 10, O'Brien 11 */
	assert_int_equal(filter_option(&f, 'I', "10", err, sizeof(err)), 0);
	assert_int_equal(count(&f), 2);
	filter_free(&f);

	filter_init(&f);
	assert_int_equal(filter_option(&f, 'B', "5090", err, sizeof(err)), 0);
	assert_int_equal(count(&f), 2); /* 80+60000 and 90+5000 */
	filter_free(&f);

	filter_init(&f); /* 1700000000.5 s: only the second curl exchange */
	assert_int_equal(
		filter_option(&f, 'S', "1700000000.5", err, sizeof(err)), 0);
	assert_int_equal(filter_option(&f, 'U', "2023-12-31", err, sizeof(err)),
			 0);
	assert_int_equal(count(&f), 1);
	filter_free(&f);
}

static void test_bad_arguments(void **state)
{
	struct filter f;
	char err[256];

	(void)state;
	filter_init(&f);
	assert_int_equal(filter_option(&f, 'B', "12k", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--min-bytes 12k"));
	assert_int_equal(filter_option(&f, 'S', "yesterday", err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "--since yesterday"));
	assert_int_equal(filter_option(&f, 'I', "0", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--pid 0: not a process id"));
	assert_int_equal(filter_option(&f, 'I', "12x", err, sizeof(err)), -1);
	assert_int_equal(
		filter_option(&f, 'P', "127.0.0.1:99999", err, sizeof(err)),
		-1);
	assert_non_null(strstr(err, "bad port"));
	assert_int_equal(
		filter_option(&f, 'P', "10.0.0.0/40", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a network"));
	assert_int_equal(filter_option(&f, 'o', "x", err, sizeof(err)), 1);
	assert_null(f.expr); /* nothing was added */
	filter_free(&f);
}

static void test_expression_checked(void **state)
{
	char err[256];
	sqlite3 *db;

	(void)state;
	db = obs_store_db(store);
	assert_int_equal(
		obs_store_check_expr(db, "tr_ms > 50", err, sizeof(err)), 0);
	assert_int_equal(obs_store_check_expr(db, "no_such_column > 1", err,
					      sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "no such column: no_such_column"));
	assert_int_equal(obs_store_check_expr(db,
					      "1); DELETE FROM exchange; (1",
					      err, sizeof(err)),
			 -1);
	assert_int_equal(count(&(struct filter){ NULL }), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_option),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_expression_checked),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
