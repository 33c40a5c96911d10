/* test_report_data.c - manager report's reading (manager/report_data.c)
 * against a database of known rows: the figures per client; a query that
 * fails while its rows are read, in each of the four queries (the report
 * freed the query's text and the scatter and series buffers twice on that
 * path); and every allocation failing in turn: an error said, never a
 * crash, a leak or a wrong figure (run under valgrind too). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db.h"
#include "failalloc.h"
#include "report_data.h"
#include "testdb.h"

static char db_path[] = "/tmp/observe-test-report-data.XXXXXX";

static int setup(void **state)
{
	int fd = mkstemp(db_path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	testdb_make(db_path);
	return 0;
}

static int teardown(void **state)
{
	char wal[64];

	(void)state;
	unlink(db_path);
	snprintf(wal, sizeof(wal), "%s-wal", db_path);
	unlink(wal);
	snprintf(wal, sizeof(wal), "%s-shm", db_path);
	unlink(wal);
	return 0;
}

/* fail_in(PATTERN): an error while a prepared statement whose SQL contains
 * PATTERN runs, else 1. (Written with || in a filter, the pattern is not
 * in the filter's own text.) */
static void fail_in(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *pattern = (const char *)sqlite3_value_text(argv[0]);
	sqlite3 *db = sqlite3_context_db_handle(ctx);

	(void)argc;
	for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st;
	     st = sqlite3_next_stmt(db, st))
		if (sqlite3_stmt_busy(st) && strstr(sqlite3_sql(st), pattern)) {
			sqlite3_result_error(ctx, "injected failure", -1);
			return;
		}
	sqlite3_result_int(ctx, 1);
}

static void open_data(struct report_data *d, const char *where)
{
	memset(d, 0, sizeof(*d));
	d->db_path = db_path;
	d->where = where;
	d->db = db_open(db_path);
	assert_non_null(d->db);
	assert_int_equal(sqlite3_create_function(d->db, "fail_in", 1,
						 SQLITE_UTF8, NULL, fail_in,
						 NULL, NULL),
			 SQLITE_OK);
}

static void close_data(struct report_data *d)
{
	report_data_free(d);
	sqlite3_close(d->db);
}

/* The figures a reading gives, one line each, to compare two readings. */
static char *summary(const struct report_data *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fprintf(f, "%zu %lld %lld %zu %g\n", d->nc, (long long)d->t_first,
		(long long)d->t_last, d->sample_every, d->bucket_s);
	for (size_t i = 0; i < d->nc; i++) {
		const struct report_client *c = &d->c[i];

		fprintf(f, "%s %zu %zu %zu %zu %zu", c->name, c->connections,
			c->exchanges, c->scatter.n, c->series.n, c->rate.n);
		for (int m = 0; m < M_COUNT; m++)
			fprintf(f, " %zu:%.9g:%.9g", c->m[m].n,
				c->m[m].n ? c->m[m].v[0] : 0,
				c->m[m].n ? c->m[m].v[c->m[m].n - 1] : 0);
		fprintf(f, "\n");
	}
	fclose(f);
	return text;
}

static void test_read(void **state)
{
	struct report_data d;

	(void)state;
	open_data(&d, "1");
	assert_int_equal(report_data_read(&d), 0);
	assert_int_equal(d.nc, 3);
	assert_string_equal(d.c[0].name, "alpha");
	assert_string_equal(d.c[2].name, "gamma");
	assert_int_equal(d.sample_every, 1);
	assert_int_equal(d.t_first, 1700000000002000000LL);
	for (size_t i = 0; i < d.nc; i++) {
		const struct report_client *c = &d.c[i];
		char sql[256];

		assert_int_equal(c->connections, 20);
		assert_int_equal(c->exchanges, 60);
		/* sorted, and as many as the rows that have the figure */
		for (int m = 0; m < M_COUNT; m++)
			for (size_t k = 1; k < c->m[m].n; k++)
				assert_true(c->m[m].v[k - 1] <= c->m[m].v[k]);
		snprintf(sql, sizeof(sql),
			 "SELECT count(tr_ms) FROM exchange_metrics WHERE "
			 "client = '%s'",
			 c->name);
		assert_int_equal(c->m[M_TR].n, testdb_count(db_path, sql));
		assert_int_equal(c->series.n, c->m[M_TR].n);
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM exchange_metrics WHERE client = "
			 "'%s' AND dr > 0 AND t6_ns > t3_ns",
			 c->name);
		assert_int_equal(c->scatter.n, testdb_count(db_path, sql));
		assert_int_equal(c->m[M_TT].n, 20);
		assert_true(c->rate.n > 0);
	}
	close_data(&d);
}

/* A filter keeps one client; its connections are those with a kept
 * exchange. */
static void test_read_filtered(void **state)
{
	struct report_data d;

	(void)state;
	open_data(&d, "client = 'beta' AND seq = 2");
	assert_int_equal(report_data_read(&d), 0);
	assert_int_equal(d.nc, 1);
	assert_string_equal(d.c[0].name, "beta");
	assert_int_equal(d.c[0].exchanges, 20);
	assert_int_equal(d.c[0].connections, 20);
	close_data(&d);
}

/* Each of the three queries failing while its rows are read: -1 and
 * SQLite's message with the file's name, nothing freed twice. (The
 * throughput is summed in the pass over the exchanges.) */
static void test_query_fails(void **state)
{
	static const char *const where[] = {
		"fail_in('min(t3' || '_ns)')",		 /* the span */
		"fail_in('connection_' || 'metrics m')", /* connections */
		"fail_in('tw_ms, ' || 'tr_ms, rr')",	 /* exchanges */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		struct report_data d;
		FILE *saved = stderr, *err = tmpfile();
		char text[512] = "";

		assert_non_null(err);
		open_data(&d, where[i]);
		stderr = err;
		assert_int_equal(report_data_read(&d), -1);
		stderr = saved;
		rewind(err);
		assert_non_null(fgets(text, sizeof(text), err));
		fclose(err);
		assert_non_null(strstr(text, db_path));
		assert_non_null(strstr(text, "injected failure"));
		close_data(&d);
	}
}

/* Every allocation of the reading failing in turn: "out of memory" and
 * -1, or (the failure fell after the last allocation) the same figures as
 * without failures. */
static void test_out_of_memory(void **state)
{
	struct report_data d;
	char *want, *got;
	long k, failed = 0;

	(void)state;
	open_data(&d, "1");
	assert_int_equal(report_data_read(&d), 0);
	want = summary(&d);
	close_data(&d);
	for (k = 0;; k++) {
		FILE *saved = stderr, *err = tmpfile();
		char text[512] = "";
		bool fired;
		int rc;

		assert_non_null(err);
		open_data(&d, "1");
		stderr = err;
		failalloc_after(k);
		rc = report_data_read(&d);
		fired = failalloc_fired();
		failalloc_after(-1);
		stderr = saved;
		rewind(err);
		if (!fgets(text, sizeof(text), err))
			text[0] = '\0';
		fclose(err);
		if (rc == 0) {
			got = summary(&d);
			assert_string_equal(got, want);
			free(got);
		} else {
			assert_true(fired);
			assert_int_equal(rc, -1);
			assert_string_equal(text, "manager: out of memory\n");
			failed++;
		}
		close_data(&d);
		if (!fired)
			break;
	}
	/* the reading allocates: names, figures, points */
	assert_true(failed > 10);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_filtered),
		cmocka_unit_test(test_query_fails),
		cmocka_unit_test(test_out_of_memory),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
