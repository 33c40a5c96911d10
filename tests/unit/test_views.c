/* test_views.c - the waterfall (manager/waterfall.c), the comparison
 * (manager/compare.c) and the report's views of them
 * (manager/report_views.c) on the database of known rows (testdb.h): the
 * rows and segments of connection 1 computed by hand, the cut, a process's
 * rows, the runs chosen; the comparison's n against the rows and a side
 * against itself; and every allocation failing in turn: an error said,
 * never a crash, a leak (valgrind) or a different result. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "compare.h"
#include "db.h"
#include "failalloc.h"
#include "report_plots.h"
#include "report_views.h"
#include "testdb.h"
#include "waterfall.h"

#define T0 1700000000000000000LL /* connection 1's T1 */
#define MS 1000000LL

TESTDB_FIXTURES("views")

/* The segment of row and kind, which must be there. */
static const struct wf_segment *segment(const struct waterfall *w, size_t row,
					enum wf_kind kind)
{
	for (size_t i = 0; i < w->nseg; i++)
		if (w->seg[i].row == row && w->seg[i].kind == kind)
			return &w->seg[i];
	fail_msg("no %s segment on row %zu", waterfall_kind_names[kind], row);
	return NULL;
}

static void assert_segment(const struct waterfall *w, size_t row,
			   enum wf_kind kind, int64_t from, int64_t to)
{
	const struct wf_segment *s = segment(w, row, kind);

	assert_int_equal(s->from, from);
	assert_int_equal(s->to, to);
}

/* Connection 1 (curl, pid 100, to 10.0.0.1:80, closed by the server)
 * connects at T0 in 1 ms; its exchange 1 sends at T0 + 2 ms for 0.1 ms,
 * its first byte comes at T3 + 1 ms + 10 us (c * 10 us), its last at
 * T3 + 5 ms + 1000 ns (Dr = 1000). Three processes: the connection rows
 * name theirs. Connection 2 (wget) begins 100 ms later. */
static void test_waterfall_rows(void **state)
{
	struct waterfall w;
	int64_t t3 = T0 + 2 * MS;

	(void)state;
	assert_int_equal(waterfall_read(db, db_path, "1", 0, 1000, &w), 0);
	assert_int_equal(w.total_rows, 60 + 180);
	assert_int_equal(w.nrows, 240);
	assert_int_equal(w.connections, 60);
	assert_int_equal(w.exchanges, 180);
	assert_int_equal(w.processes, 2);
	assert_int_equal(w.t0, T0);
	assert_string_equal(w.rows[0].label,
			    "curl 100 conn 1 10.0.0.1:80, server_close");
	assert_true(w.rows[0].header);
	assert_string_equal(w.rows[1].label, "10.0.0.1:80 #1");
	assert_false(w.rows[1].header);
	assert_string_equal(w.rows[4].label,
			    "wget 200 conn 1 10.0.0.2:443 TLS, client_close");
	assert_segment(&w, 0, WF_CONN, T0, T0 + 90 * MS);
	assert_segment(&w, 1, WF_CONNECT, T0, T0 + MS);
	assert_segment(&w, 1, WF_IDLE, T0 + MS, t3);
	assert_segment(&w, 1, WF_SEND, t3, t3 + MS / 10);
	assert_segment(&w, 1, WF_WAIT, t3 + MS / 10, t3 + MS + 10000);
	assert_segment(&w, 1, WF_RECV, t3 + MS + 10000, t3 + 5 * MS + 1000);
	/* exchange 2: idle from exchange 1's T6 to its T3, 20 ms later */
	assert_segment(&w, 2, WF_IDLE, t3 + 5 * MS + 1000, t3 + 20 * MS);
	/* the rows in start order: each connection row after the last */
	for (size_t r = 1, last = 0; r < w.nrows; r++)
		if (w.rows[r].header) {
			assert_true(segment(&w, r, WF_CONN)->from >
				    segment(&w, last, WF_CONN)->from);
			last = r;
		}
	assert_int_equal(waterfall_height(&w), 160 + 20 * 240);
	waterfall_free(&w);
}

/* At most 5 rows: connection 1 and its 3 exchanges, connection 2; the
 * total still counted. One process: no names on the rows. */
static void test_waterfall_cut_and_process(void **state)
{
	struct waterfall w;

	(void)state;
	assert_int_equal(waterfall_read(db, db_path, "1", 0, 5, &w), 0);
	assert_int_equal(w.nrows, 5);
	assert_int_equal(w.total_rows, 240);
	assert_int_equal(w.connections, 2);
	assert_int_equal(w.exchanges, 3);
	for (size_t i = 0; i < w.nseg; i++)
		assert_true(w.seg[i].row < 5);
	waterfall_free(&w);

	/* wget is process 2: connections 2, 5, ... (20 of them) */
	assert_int_equal(waterfall_read(db, db_path, "1", 2, 1000, &w), 0);
	assert_int_equal(w.connections, 20);
	assert_int_equal(w.exchanges, 60);
	assert_int_equal(w.processes, 0);
	assert_string_equal(w.rows[0].label,
			    "conn 1 10.0.0.2:443 TLS, client_close");
	waterfall_free(&w);

	/* a filter on the exchanges: their connections, nothing else */
	assert_int_equal(waterfall_read(db, db_path, "seq = 2 AND pid = 300", 0,
					1000, &w),
			 0);
	assert_int_equal(w.connections, 20);
	assert_int_equal(w.exchanges, 20);
	for (size_t r = 1; r < w.nrows; r += 2)
		assert_string_equal(strchr(w.rows[r].label, '#'), "#2");
	waterfall_free(&w);
}

/* The first run of each program, in the order of their first connect. */
static void test_waterfall_runs(void **state)
{
	struct wf_run *runs;
	size_t n;

	(void)state;
	assert_int_equal(waterfall_runs(db, db_path, "1", 6, &runs, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(runs[0].program, "curl");
	assert_string_equal(runs[1].program, "wget");
	assert_string_equal(runs[2].program, "python3");
	assert_string_equal(runs[2].client, "gamma");
	assert_int_equal(runs[2].pid, 300);
	assert_int_equal(runs[2].process, 3);
	waterfall_runs_free(runs, n);
	assert_int_equal(waterfall_runs(db, db_path, "1", 2, &runs, &n), 0);
	assert_int_equal(n, 2);
	waterfall_runs_free(runs, n);
}

/* alpha against beta by server, and alpha against itself. */
static void test_compare(void **state)
{
	struct compare_side side[2] = {
		{ db, db_path, "client = 'alpha'" },
		{ db, db_path, "client = 'beta'" },
	};
	struct compare c;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(compare_read(&c, side, "server"), 0);
	assert_int_equal(c.ng, 4);
	assert_string_equal(c.g[0].name, "10.0.0.1:80");
	for (size_t i = 0; i < c.ng; i++)
		for (int s = 0; s < 2; s++) {
			char sql[256];

			snprintf(sql, sizeof(sql),
				 "SELECT count(tw_ms) FROM exchange_metrics "
				 "WHERE %s AND peer_addr || ':' || peer_port = "
				 "'%s'",
				 side[s].where, c.g[i].name);
			assert_int_equal(c.g[i].v[s][CMP_TW].n,
					 testdb_count(db_path, sql));
		}
	compare_free(&c);

	side[1].where = "client = 'alpha'";
	assert_int_equal(compare_read(&c, side, "path"), 0);
	assert_non_null(f = open_memstream(&text, &len));
	assert_int_equal(compare_table(&c, "path", true, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "group,metric,n_a,n_b,p50_a,p50_b,p90_a,"
				     "p90_b,p99_a,p99_b,change,p_value\n"));
	/* every row: the same on both sides, change 1, p 1 */
	for (char *line = strchr(text, '\n') + 1; *line;
	     line = strchr(line, '\n') + 1) {
		char *end = strchr(line, '\n');

		*end = '\0';
		if (!strstr(line, ",1.000000,1"))
			fail_msg("not unchanged: %s", line);
		*end = '\n';
	}
	free(text);
	compare_free(&c);
}

/* One part of the work, its output (one text) into *out: 0 the waterfall
 * read and drawn (its script), 1 the runs and the comparison's table, 2
 * the report's views (their script; gnuplot is not run). 0, or -1. */
static int part(int which, char **out)
{
	/* exchange 1 of each connection: fewer allocations to fail */
	struct report_data d = { .db = db,
				 .db_path = db_path,
				 .where = "seq = 1" };
	char tmp[160];
	struct report_plots p = { .data = &d, .dir = dir, .tmp = tmp };
	struct report_views v = { .baseline = db_path, .by = "client" };
	struct compare_side side[2] = { { db, db_path, "pid = 100" },
					{ db, db_path, "pid = 200" } };
	struct compare c = { 0 };
	struct waterfall w = { 0 };
	struct wf_run *runs = NULL;
	size_t len = 0, n = 0;
	FILE *f = NULL;
	int rc = -1;

	snprintf(tmp, sizeof(tmp), "%s/plots", dir);
	if (which == 0 &&
	    (waterfall_read(db, db_path, "1", 0, 20, &w) != 0 ||
	     report_plots_begin(&p) != 0 ||
	     waterfall_plot(&p, &w, 0, "wf", "a waterfall", true, true) != 0))
		goto out;
	if (which == 1 &&
	    (waterfall_runs(db, db_path, "1", 6, &runs, &n) != 0 ||
	     compare_read(&c, side, "server") != 0))
		goto out;
	if (which == 2 && (report_plots_begin(&p) != 0 ||
			   report_views_waterfalls(&v, &p) != 0 ||
			   report_views_baseline(&v, &p, db) != 0))
		goto out;
	if (!(f = open_memstream(out, &len))) { /* the test's own */
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	rc = 0;
	if (which == 0)
		fprintf(f, "%zu %zu\n", w.nrows, w.nseg);
	else if (which == 1) {
		fprintf(f, "%zu %s\n", n, runs[n - 1].program);
		rc = compare_table(&c, "server", true, f);
	} else
		fprintf(f, "%zu %s %zu %s %s\n", v.nwf, v.wf[0].title,
			v.wf[v.nwf - 1].rows, v.table, v.cdf_groups);
out:
	if (f && fclose(f) != 0)
		rc = -1;
	report_plots_free(&p);
	report_views_free(&v);
	compare_free(&c);
	waterfall_runs_free(runs, n);
	waterfall_free(&w);
	return rc;
}

struct a_part {
	int which;
	char *out;
};

static int run_part(void *arg)
{
	struct a_part *a = arg;

	return part(a->which, &a->out);
}

/* A file's text, malloc'd. */
static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(getdelim(&text, &len, '\0', f) > 0);
	fclose(f);
	return text;
}

/* With each allocation of each part failing in turn: -1 and "out of
 * memory" first on stderr, or (the failure fell after the last
 * allocation) the same output and script as without failures. */
static void test_out_of_memory(void **state)
{
	static const char *const expect[] = {
		"20 ", "3 python3\ngroup,metric,n_a,n_b",
		"3 curl 100 on alpha: 20 connections, 20 exchanges"
	};
	char tmp[160], script[200];
	long failed = 0;

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/plots", dir);
	snprintf(script, sizeof(script), "%s/report.gp", tmp);
	assert_int_equal(mkdir(tmp, 0700), 0);
	for (int which = 0; which < 3; which++) {
		char *want = NULL, *want_gp = NULL;

		for (long k = -1;; k++) {
			struct a_part a = { which, NULL };
			bool fired;
			int rc = failalloc_run(k, run_part, &a, &fired);
			char *got = a.out;

			if (fired) {
				free(got);
				failed++;
				continue;
			}
			assert_int_equal(rc, 0);
			if (k < 0) {
				want = got;
				want_gp = which != 1 ? slurp(script) : NULL;
				continue;
			}
			assert_string_equal(got, want);
			if (which != 1) {
				char *gp = slurp(script);

				assert_string_equal(gp, want_gp);
				free(gp);
			}
			free(got);
			break;
		}
		if (strncmp(want, expect[which], strlen(expect[which])) != 0)
			fail_msg("part %d: %s", which, want);
		if (which == 2) {
			assert_non_null(strstr(want_gp, "waterfall_3.svg"));
			assert_non_null(strstr(want_gp, "compare_cdf.svg"));
		}
		free(want);
		free(want_gp);
	}
	assert_true(failed > 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waterfall_rows),
		cmocka_unit_test(test_waterfall_cut_and_process),
		cmocka_unit_test(test_waterfall_runs),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_out_of_memory),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
