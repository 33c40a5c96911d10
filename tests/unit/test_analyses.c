/* test_analyses.c - the analyses (manager/analyses.c) and the report's
 * writing (report_plots.c, report_analyses.c, report_page.c) with every
 * allocation failing in turn: the output is either complete and the same as
 * without failures, or an error is said and returned; never a wrong figure
 * (vectors that dropped a value, a server's name that was not copied), a
 * crash or a leak (run under valgrind too). Against a database of known
 * rows, after a check that the views show what the rows say. */
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

#include "analyses.h"
#include "db.h"
#include "failalloc.h"
#include "report_data.h"
#include "report_analyses.h"
#include "report_page.h"
#include "report_plots.h"
#include "table.h"
#include "testdb.h"

TESTDB_FIXTURES("analyses")

/* What f wrote, and its first line on stderr (in *err, 512 bytes). */
struct run {
	char *out;
	char err[512];
	int rc;
	bool fired;
};

/* The view (NULL: the statistics table by server), the n-th allocation
 * failing (n < 0: none). */
static void run_view(const char *view, bool csv, long n, struct run *r)
{
	size_t len = 0;
	FILE *out, *err = tmpfile(), *saved = stderr;

	out = open_memstream(&r->out, &len);
	assert_non_null(out);
	assert_non_null(err);
	stderr = err;
	failalloc_after(n);
	r->rc = view ? analyses_view(db, view, "1", 0, csv, out)
		     : table_stats(db, "server", "1", csv, out);
	r->fired = failalloc_fired();
	failalloc_after(-1);
	stderr = saved;
	fclose(out);
	rewind(err);
	if (!fgets(r->err, sizeof(r->err), err))
		r->err[0] = '\0';
	fclose(err);
}

/* The views say what the rows are (testdb.h): the connections closed by
 * the server 33 ms after their last response, 5 and 45 to 10.0.0.2:443
 * (25's last request went unanswered) and 15, 35, 55 to [::1]:80, each
 * but the last followed by a connection of the same process 1.2 s later;
 * 0, 20, 40 to 10.0.0.1:80 closed at the response. The groups IPv4,
 * IPv4 with TLS and IPv6, 30, 15 and 15 connections. Every response took
 * 4.9 ms + 1 ns a byte. */
static void test_views(void **state)
{
	struct run r;

	(void)state;
	run_view("keepalive", true, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n10.0.0.2:443,28,"));
	assert_non_null(strstr(r.out, ",2,32.970,32.970,0,2,100.000,"));
	assert_non_null(strstr(r.out, "\n::1:80,28,"));
	assert_non_null(strstr(r.out, ",3,32.976,32.973,0,2,100.000,"));
	assert_non_null(strstr(r.out, ",0,nan,nan,3,0,100.000,"));
	free(r.out);
	run_view("family", true, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n4,0,te_ms,30,"));
	assert_non_null(strstr(r.out, "\n4,1,te_ms,15,"));
	assert_non_null(strstr(r.out, "\n6,0,te_ms,15,"));
	free(r.out);
	run_view("size", true, -1, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out,
			       "\n::1:80,42,0.001000,4.9000,1000.000,204.08,"
			       "1.0000,0.001000,4.9000\n"));
	free(r.out);
}

/* Each view and the table, text and CSV, with each allocation failing in
 * turn. */
static void test_views_out_of_memory(void **state)
{
	static const char *const views[] = { "endings", "keepalive", "size",
					     "family", NULL };

	(void)state;
	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
		for (int csv = 0; csv < 2; csv++) {
			struct run want, got;
			long failed = 0;

			run_view(views[v], csv, -1, &want);
			assert_int_equal(want.rc, 0);
			for (long k = 0;; k++) {
				run_view(views[v], csv, k, &got);
				if (got.rc == 0) {
					assert_string_equal(got.out, want.out);
				} else {
					assert_true(got.fired);
					assert_int_equal(got.rc, 2);
					assert_string_equal(
						got.err,
						"manager: out of memory\n");
					failed++;
				}
				free(got.out);
				if (!got.fired)
					break;
			}
			assert_true(failed > 0);
			free(want.out);
		}
}

/* A file's text, malloc'd. */
static char *read_file(const char *dir_path, const char *name)
{
	char path[256];
	FILE *f;
	char *text = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/%s", dir_path, name);
	assert_non_null(f = fopen(path, "r"));
	assert_true(getdelim(&text, &len, '\0', f) > 0);
	fclose(f);
	return text;
}

/* The report's writing after the reading: the plots (data files and the
 * script; gnuplot is not run here), the summary and the page, with the
 * texts t. 0, or -1. */
static int write_report(struct report_data *d, const char *tmp,
			const struct report_texts *t)
{
	struct report_plots p = { .data = d, .dir = dir, .tmp = tmp };
	struct report_view_texts vt = { 0 };
	int rc = report_plots_begin(&p);

	if (rc == 0)
		rc = report_plots_write(&p);
	if (rc == 0)
		rc = report_plot_analyses(&p, &vt);
	if (rc == 0)
		rc = report_page_summary(d, &p, t);
	if (rc == 0)
		rc = report_page_html(d, &p, t, true);
	report_plots_free(&p);
	report_view_texts_free(&vt);
	return rc;
}

struct writing {
	struct report_data *d;
	const char *tmp;
	const struct report_texts *t;
};

static int write_it(void *arg)
{
	struct writing *w = arg;

	return write_report(w->d, w->tmp, w->t);
}

/* The report written with each allocation failing in turn: -1 and "out of
 * memory", or (the failure fell after the last allocation) the same
 * script, summary and page as without failures. */
static void test_report_out_of_memory(void **state)
{
	static const char *const files[] = { "plots/report.gp", "summary.txt",
					     "index.html" };
	static const char *const views[] = { "endings", "keepalive", "size",
					     "family" };
	struct report_data d = { .db = db, .db_path = db_path, .where = "1" };
	char tmp[160], *want[3] = { 0 }, *texts[4];
	struct report_texts t = { NULL, views, texts, 4 };
	long failed = 0;

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/plots", dir);
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_int_equal(report_data_read(&d), 0);
	assert_non_null(t.stats = report_data_text(&d, NULL));
	for (int i = 0; i < 4; i++)
		assert_non_null(texts[i] = report_data_text(&d, views[i]));
	for (long k = -1;; k++) {
		struct writing w = { &d, tmp, &t };
		bool fired;
		int rc = failalloc_run(k, write_it, &w, &fired);

		if (fired) {
			failed++;
			continue;
		}
		assert_int_equal(rc, 0);
		for (int i = 0; i < 3; i++) {
			char *got = read_file(dir, files[i]);

			if (k < 0)
				want[i] = got;
			else {
				assert_string_equal(got, want[i]);
				free(got);
			}
		}
		if (k >= 0)
			break;
	}
	assert_non_null(strstr(want[0], "size_fit.png"));
	assert_non_null(strstr(want[0], "keepalive.png"));
	assert_non_null(strstr(want[1], "falling from a 0-100 ms mode"));
	assert_non_null(strstr(want[2], "<h2>Analysis: size</h2>"));
	assert_true(failed > 50);
	for (int i = 0; i < 3; i++)
		free(want[i]);
	free((char *)t.stats);
	for (int i = 0; i < 4; i++)
		free(texts[i]);
	report_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_views_out_of_memory),
		cmocka_unit_test(test_report_out_of_memory),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
