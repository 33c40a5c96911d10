/* report.c - manager report: plots with gnuplot, summary.txt, index.html.
 *
 *   manager report CENTRAL.db -o DIR [--where EXPR] [FILTER...] [-q]
 *
 * Reads the exchanges and connections the filter keeps, per client, and
 * writes into DIR one PNG and one SVG per plot (drawn by gnuplot from a
 * script and data files in a temporary directory), summary.txt (the
 * statistics and the analyses as text) and index.html (every plot with its
 * table, self-contained, no script: it works opened from disk).
 *
 * Plots: the histogram of Tt on log-spaced bins (the paper's Fig. 9); CDFs
 * of Tt, Te, Tw, Tr, Rr and Ra per client; response size against exchange
 * time, log-log (Figs. 10-11); Tr and throughput over time; the medians and
 * p99s of Tt, Te, Tw, Tr per client side by side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "filter.h"
#include "manager.h"
#include "report.h"
#include "store.h"

extern char **environ;

#define MAX_POINTS 200000 /* scatter and time series: sampled beyond */
#define CDF_POINTS 1000	  /* points per CDF curve */

static int vec_push(struct vec *x, double v)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 256;
		double *more = realloc(x->v, cap * sizeof(*more));
		if (!more)
			return -1;
		x->v = more;
		x->cap = cap;
	}
	x->v[x->n++] = v;
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static const struct {
	const char *key, *label, *unit;
} mdef[M_COUNT] = {
	[M_TT] = { "tt", "Tt, connection time (T7 - T1)", "ms" },
	[M_TE] = { "te", "Te, connection set-up (T2 - T1)", "ms" },
	[M_RA] = { "ra", "Ra, connection transfer rate", "bytes/s" },
	[M_TW] = { "tw", "Tw, wait for the first byte (TFB - T4)", "ms" },
	[M_TR] = { "tr", "Tr, response (T6 - T5)", "ms" },
	[M_RR] = { "rr", "Rr, response transfer rate", "bytes/s" },
};

/* ---- quoting ----------------------------------------------------------------
 */

/* A gnuplot single-quoted string: ' doubled. */
void report_gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('\'', f);
}

void report_html(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* ---- reading
 * ------------------------------------------------------------------ */

static struct client *client_of(struct report *r, const char *name)
{
	struct client *more;

	for (size_t i = 0; i < r->nc; i++)
		if (strcmp(r->c[i].name, name) == 0)
			return &r->c[i];
	more = realloc(r->c, (r->nc + 1) * sizeof(*more));
	if (!more)
		return NULL;
	r->c = more;
	memset(&r->c[r->nc], 0, sizeof(r->c[r->nc]));
	r->c[r->nc].name = strdup(name);
	if (!r->c[r->nc].name)
		return NULL;
	return &r->c[r->nc++];
}

char *report_data_path(struct report *r, const char *what, size_t client)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s-%zu.dat", r->tmp, what, client) < 0)
		return NULL;
	return p;
}

static int read_rows(struct report *r)
{
	char *sql;
	sqlite3_stmt *st;
	FILE **scatter = NULL, **series = NULL;
	int64_t rows = 0, k = 0;
	int rc;

	/* the span and the row count decide the sampling */
	sql = sqlite3_mprintf(
		"SELECT count(*), min(t3_ns), max(coalesce(t6_ns, "
		"t3_ns)) FROM exchange_metrics WHERE (%s)",
		r->where);
	if (!sql || sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		goto dberr;
	sqlite3_free(sql);
	if (sqlite3_step(st) == SQLITE_ROW) {
		rows = sqlite3_column_int64(st, 0);
		r->t_first = sqlite3_column_int64(st, 1);
		r->t_last = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	r->sample_every =
		rows > MAX_POINTS ? (size_t)(rows / MAX_POINTS + 1) : 1;

	{
		char *conns = manager_conn_filter(r->where);
		sql = conns ? sqlite3_mprintf("SELECT client, tt_ms, te_ms, ra "
					      "FROM connection_metrics m WHERE "
					      "%s ORDER BY client",
					      conns)
			    : NULL;
		sqlite3_free(conns);
	}
	if (!sql || sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		goto dberr;
	sqlite3_free(sql);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct client *c =
			client_of(r, (const char *)sqlite3_column_text(st, 0));
		if (!c)
			break;
		c->connections++;
		for (int i = 0; i < 3; i++)
			if (sqlite3_column_type(st, 1 + i) != SQLITE_NULL)
				vec_push(&c->m[M_TT + i],
					 sqlite3_column_double(st, 1 + i));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto dberr;

	scatter = calloc(r->nc + 1, sizeof(*scatter));
	series = calloc(r->nc + 1, sizeof(*series));
	if (!scatter || !series)
		goto fail;
	sql = sqlite3_mprintf(
		"SELECT client, tw_ms, tr_ms, rr, dr, (t6_ns - t3_ns) / 1e6, "
		"t3_ns FROM exchange_metrics WHERE (%s) ORDER BY client",
		r->where);
	if (!sql || sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		goto dberr;
	sqlite3_free(sql);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct client *c =
			client_of(r, (const char *)sqlite3_column_text(st, 0));
		size_t ci;

		if (!c)
			break;
		ci = (size_t)(c - r->c);
		c->exchanges++;
		for (int i = 0; i < 3; i++)
			if (sqlite3_column_type(st, 1 + i) != SQLITE_NULL)
				vec_push(&c->m[M_TW + i],
					 sqlite3_column_double(st, 1 + i));
		if (k++ % (int64_t)r->sample_every)
			continue;
		if (!scatter[ci]) {
			char *p = report_data_path(r, "scatter", ci);
			char *q = report_data_path(r, "series", ci);
			scatter[ci] = p ? fopen(p, "w") : NULL;
			series[ci] = q ? fopen(q, "w") : NULL;
			free(p);
			free(q);
			if (!scatter[ci] || !series[ci])
				goto fail;
		}
		/* log-log: positive values only */
		if (sqlite3_column_int64(st, 4) > 0 &&
		    sqlite3_column_double(st, 5) > 0) {
			fprintf(scatter[ci], "%lld %.6f\n",
				(long long)sqlite3_column_int64(st, 4),
				sqlite3_column_double(st, 5));
			c->scatter_points++;
		}
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			fprintf(series[ci], "%.6f %.6f\n",
				(double)(sqlite3_column_int64(st, 6) -
					 r->t_first) /
					1e9,
				sqlite3_column_double(st, 2));
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i <= r->nc; i++) {
		if (scatter[i])
			fclose(scatter[i]);
		if (series[i])
			fclose(series[i]);
	}
	free(scatter);
	free(series);
	if (rc != SQLITE_DONE)
		goto dberr;
	for (size_t i = 0; i < r->nc; i++)
		for (int m = 0; m < M_COUNT; m++)
			qsort(r->c[i].m[m].v, r->c[i].m[m].n, sizeof(double),
			      dbl_cmp);
	return 0;
dberr:
	fprintf(stderr, "manager: %s: %s\n", r->db_path, sqlite3_errmsg(r->db));
	sqlite3_free(sql);
	free(scatter);
	free(series);
	return -1;
fail:
	fprintf(stderr, "manager: %s: %s\n", r->tmp, strerror(errno));
	free(scatter);
	free(series);
	return -1;
}

/* ---- plots
 * ----------------------------------------------------------------------- */

void report_note_skip(struct report *r, const char *plot, const char *why)
{
	char *more = NULL;

	if (asprintf(&more, "%s<li>%s: %s</li>\n", r->skipped ? r->skipped : "",
		     plot, why) >= 0) {
		free(r->skipped);
		r->skipped = more;
	}
}

/* The script lines that write one plot in both formats: the body (set and
 * plot commands) is emitted twice, once per terminal. */
void report_gp_begin_sized(struct report *r, const char *name, int pass,
			   int width, int height)
{
	if (pass == 0)
		fprintf(r->gp,
			"set terminal pngcairo size %d,%d font 'Sans,11' "
			"noenhanced\n",
			width, height);
	else
		fprintf(r->gp,
			"set terminal svg size %d,%d font 'Sans,11' "
			"noenhanced background '#ffffff'\n",
			width, height);
	fprintf(r->gp, "set output ");
	{
		char *out = NULL;
		if (asprintf(&out, "%s/%s.%s", r->dir, name,
			     pass == 0 ? "png" : "svg") >= 0)
			report_gp_string(r->gp, out);
		free(out);
	}
	fprintf(r->gp, "\nreset\nset grid\nset key outside right top "
		       "noenhanced\nset termoption noenhanced\n");
}

void report_gp_begin(struct report *r, const char *name, int pass)
{
	report_gp_begin_sized(r, name, pass, 1000, 600);
}

void report_gp_end(struct report *r)
{
	fprintf(r->gp, "set output\n");
}

/* 10 bins per decade between the smallest and largest positive value. */
static void plot_hist(struct report *r)
{
	double lo = INFINITY, hi = 0;
	int first, last, nb;

	for (size_t i = 0; i < r->nc; i++) {
		struct vec *v = &r->c[i].m[M_TT];
		for (size_t k = 0; k < v->n; k++)
			if (v->v[k] > 0) {
				lo = fmin(lo, v->v[k]);
				hi = fmax(hi, v->v[k]);
			}
	}
	if (!(hi > 0)) {
		report_note_skip(r, "Histogram of Tt",
				 "no connection with a Tt");
		return;
	}
	first = (int)floor(log10(lo) * 10);
	last = (int)floor(log10(hi) * 10);
	nb = last - first + 1;
	for (size_t i = 0; i < r->nc; i++) {
		struct vec *v = &r->c[i].m[M_TT];
		char *p = report_data_path(r, "hist", i);
		FILE *f = p ? fopen(p, "w") : NULL;
		size_t *count = calloc((size_t)nb, sizeof(*count));

		free(p);
		if (!f || !count) {
			if (f)
				fclose(f);
			free(count);
			return;
		}
		for (size_t k = 0; k < v->n; k++)
			if (v->v[k] > 0) {
				int b = (int)floor(log10(v->v[k]) * 10) - first;
				count[b < 0 ? 0 : b >= nb ? nb - 1 : b]++;
			}
		/* steps: each bin from its lower edge; close at the top */
		for (int b = 0; b < nb; b++)
			fprintf(f, "%.9g %zu\n", pow(10, (first + b) / 10.0),
				count[b]);
		fprintf(f, "%.9g 0\n", pow(10, (first + nb) / 10.0));
		fclose(f);
		free(count);
	}
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, "tt_histogram", pass);
		fprintf(r->gp,
			"set title 'Histogram of Tt (10 bins per decade)'\n"
			"set logscale x\nset xlabel 'Tt, connection time "
			"(T7 - T1), ms (log scale)'\nset ylabel 'connections "
			"per bin'\nset yrange [0:*]\nplot ");
		for (size_t i = 0; i < r->nc; i++) {
			fprintf(r->gp,
				"%s'%s/hist-%zu.dat' using 1:2 with steps "
				"lw 2 title ",
				i ? ", " : "", r->tmp, i);
			report_gp_string(r->gp, r->c[i].name);
		}
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
}

static void plot_cdf(struct report *r, int m)
{
	char name[32];
	bool any = false, logx = true;

	snprintf(name, sizeof(name), "cdf_%s", mdef[m].key);
	for (size_t i = 0; i < r->nc; i++) {
		struct vec *v = &r->c[i].m[m];
		char *p;
		FILE *f;
		size_t step, start = 0;

		while (start < v->n && v->v[start] <= 0)
			start++; /* a log axis: zero durations left out */
		if (start == v->n)
			continue;
		p = report_data_path(r, name, i);
		f = p ? fopen(p, "w") : NULL;
		free(p);
		if (!f)
			return;
		step = (v->n - start) / CDF_POINTS + 1;
		for (size_t k = start; k < v->n; k += step)
			fprintf(f, "%.9g %.6f\n", v->v[k],
				(double)(k + 1) / (double)v->n);
		fprintf(f, "%.9g 1\n", v->v[v->n - 1]);
		fclose(f);
		any = true;
	}
	if (!any) {
		report_note_skip(r, mdef[m].label, "no positive values");
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, name, pass);
		fprintf(r->gp, "set title ");
		{
			char *t = NULL;
			if (asprintf(&t, "CDF of %s per client",
				     mdef[m].label) >= 0)
				report_gp_string(r->gp, t);
			free(t);
		}
		fprintf(r->gp, "\n%sset xlabel ",
			logx ? "set logscale x\n" : "");
		{
			char *t = NULL;
			if (asprintf(&t, "%s, %s (log scale)", mdef[m].label,
				     mdef[m].unit) >= 0)
				report_gp_string(r->gp, t);
			free(t);
		}
		if (strcmp(mdef[m].unit, "bytes/s") == 0)
			fprintf(r->gp, "\nset format x '%%.0s%%c'");
		fprintf(r->gp,
			"\nset ylabel 'fraction <= x'\nset yrange [0:1]\n"
			"set key bottom right inside\nplot ");
		for (size_t i = 0, n = 0; i < r->nc; i++) {
			char *p = report_data_path(r, name, i);
			if (p && access(p, R_OK) == 0) {
				fprintf(r->gp, "%s", n++ ? ", " : "");
				report_gp_string(r->gp, p);
				fprintf(r->gp,
					" using 1:2 with lines lw 2 title ");
				report_gp_string(r->gp, r->c[i].name);
			}
			free(p);
		}
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
}

/* The plot over the per-client files `what`-N.dat, if any has points. */
static bool plot_files(struct report *r, const char *file, const char *name,
		       const char *setup, const char *style)
{
	bool any = false;

	for (size_t i = 0; i < r->nc; i++) {
		char *p = report_data_path(r, file, i);
		struct stat st;
		if (p && stat(p, &st) == 0 && st.st_size > 0)
			any = true;
		free(p);
	}
	if (!any)
		return false;
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, name, pass);
		fprintf(r->gp, "%s\nplot ", setup);
		for (size_t i = 0, n = 0; i < r->nc; i++) {
			char *p = report_data_path(r, file, i);
			struct stat st;
			if (p && stat(p, &st) == 0 && st.st_size > 0) {
				fprintf(r->gp, "%s", n++ ? ", " : "");
				report_gp_string(r->gp, p);
				fprintf(r->gp, " %s title ", style);
				report_gp_string(r->gp, r->c[i].name);
			}
			free(p);
		}
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
	return true;
}

static int plot_throughput(struct report *r)
{
	double span = (double)(r->t_last - r->t_first) / 1e9, bucket = 0.001;

	/* about 100 buckets over the span, each 1, 2 or 5 times a power of
	 * ten seconds, a millisecond at least */
	for (int k = -3; k <= 6 && span / bucket > 100; k++)
		for (int j = 0; j < 3 && span / bucket > 100; j++)
			bucket = (j == 0 ? 1 : j == 1 ? 2 : 5) * pow(10, k);
	char *sql = sqlite3_mprintf(
		"SELECT client, CAST((t6_ns - %lld) / %lld AS INTEGER), "
		"total(dr) FROM exchange_metrics WHERE (%s) AND t6_ns IS NOT "
		"NULL GROUP BY 1, 2 ORDER BY 1, 2",
		(long long)r->t_first, (long long)(bucket * 1e9), r->where);
	sqlite3_stmt *st = NULL;
	FILE *f = NULL;
	size_t cur = SIZE_MAX;
	int64_t cur_bucket = INT64_MIN;
	char setup[512];
	int rc;

	if (!sql ||
	    sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", r->db_path,
			sqlite3_errmsg(r->db));
		sqlite3_free(sql);
		return -1;
	}
	sqlite3_free(sql);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct client *c =
			client_of(r, (const char *)sqlite3_column_text(st, 0));
		size_t ci = c ? (size_t)(c - r->c) : 0;
		if (ci != cur) {
			char *p = report_data_path(r, "rate", ci);
			cur_bucket = INT64_MIN;
			if (f)
				fclose(f);
			f = p ? fopen(p, "w") : NULL;
			free(p);
			cur = ci;
		}
		if (f && cur_bucket != INT64_MIN &&
		    sqlite3_column_int64(st, 1) != cur_bucket + 1)
			fprintf(f, "\n"); /* nothing in between: a break */
		cur_bucket = sqlite3_column_int64(st, 1);
		if (f) /* a step from the bucket's start to its end */
			fprintf(f, "%.6f %.3f\n%.6f %.3f\n",
				(double)sqlite3_column_int64(st, 1) * bucket,
				sqlite3_column_double(st, 2) / bucket,
				(double)(sqlite3_column_int64(st, 1) + 1) *
					bucket,
				sqlite3_column_double(st, 2) / bucket);
	}
	if (f)
		fclose(f);
	sqlite3_finalize(st);
	snprintf(setup, sizeof(setup),
		 "set title 'Throughput: bytes received per %g s, per client'\n"
		 "set xlabel 'time since the first request, s'\n"
		 "set ylabel 'throughput, bytes/s'\nset yrange [0:*]\n"
		 "set format y '%%.1s%%c'",
		 bucket);
	if (!plot_files(r, "rate", "throughput", setup,
			"using 1:2 with lines lw 2"))
		report_note_skip(r, "Throughput",
				 "no exchange with a response");
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Per client p50 and p99 of Tt, Te, Tw, Tr: clustered bars per metric. */
static void plot_compare(struct report *r)
{
	static const int ms[] = { M_TT, M_TE, M_TW, M_TR };
	static const double ps[] = { 50, 99 };

	for (int k = 0; k < 2; k++) {
		char name[32], *p;
		FILE *f;

		snprintf(name, sizeof(name), "compare_p%.0f", ps[k]);
		p = report_data_path(r, name, 0);
		f = p ? fopen(p, "w") : NULL;
		free(p);
		if (!f)
			return;
		for (int j = 0; j < 4; j++) {
			fprintf(f, "%s", mdef[ms[j]].key);
			for (size_t i = 0; i < r->nc; i++) {
				struct vec *v = &r->c[i].m[ms[j]];
				/* a log axis: a missing or zero value shows as
				 * no bar */
				double x = v->n ? manager_percentile(v->v, v->n,
								     ps[k])
						: NAN;
				fprintf(f, " %.9g", x > 0 ? x : NAN);
			}
			fprintf(f, "\n");
		}
		fclose(f);
		for (int pass = 0; pass < 2; pass++) {
			report_gp_begin(r, name, pass);
			fprintf(r->gp,
				"set title 'p%.0f of Tt, Te, Tw, Tr per client'\n"
				"set style data histogram\nset style histogram "
				"clustered gap 1\nset style fill solid 0.8 border "
				"-1\nset logscale y\nset ylabel 'p%.0f, ms (log "
				"scale)'\nset xlabel 'time: Tt connection, Te "
				"set-up, Tw wait for the first byte, Tr response'\n"
				"set xtics ('Tt' 0, 'Te' 1, 'Tw' 2, 'Tr' 3)\nplot ",
				ps[k], ps[k]);
			for (size_t i = 0; i < r->nc; i++) {
				fprintf(r->gp,
					"%s'%s/%s-0.dat' using %zu title ",
					i ? ", " : "", r->tmp, name, i + 2);
				report_gp_string(r->gp, r->c[i].name);
			}
			fprintf(r->gp, "\n");
			report_gp_end(r);
		}
		r->plots++;
	}
}

/* ---- gnuplot
 * ------------------------------------------------------------------- */

static bool have_pngcairo(void)
{
	return system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") ==
	       0;
}

static int run_gnuplot(struct report *r, const char *script)
{
	char *errf = NULL, *argv[] = { "gnuplot", (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, fd;

	if (asprintf(&errf, "%s/gnuplot.err", r->tmp) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, errf,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	status = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (status != 0) {
		fprintf(stderr,
			"manager: gnuplot not found: install gnuplot-nox "
			"(%s)\n",
			strerror(status));
		free(errf);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char buf[2048];
		ssize_t n;
		fprintf(stderr, "manager: gnuplot failed on %s:\n", script);
		fd = open(errf, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			if (n > 0) {
				buf[n] = '\0';
				fputs(buf, stderr);
			}
			close(fd);
		}
		free(errf);
		return -1;
	}
	free(errf);
	return 0;
}

/* ---- text and page
 * ------------------------------------------------------------------- */

static void when(char *buf, size_t size, int64_t ns)
{
	time_t secs = (time_t)(ns / 1000000000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* A section's text (stats table, a view) into a malloc'd string. */
static char *capture(struct report *r, int what, const char *view)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (what == 0)
		manager_stats_table(r->db, "client", r->where, false, f);
	else
		manager_view(r->db, view, r->where, 0, false, f);
	fclose(f);
	return text;
}

static void table_metric(FILE *h, struct report *r, int m)
{
	fprintf(h, "<table><tr><th>client</th><th>n</th><th>p50</th>"
		   "<th>p90</th><th>p99</th><th>max</th><th>unit</th></tr>\n");
	/* rates in MB/s (10^6 bytes per second), as in manager stats */
	bool rate = strcmp(mdef[m].unit, "bytes/s") == 0;
	double k = rate ? 1e-6 : 1;

	for (size_t i = 0; i < r->nc; i++) {
		struct vec *v = &r->c[i].m[m];
		fprintf(h, "<tr><td>");
		report_html(h, r->c[i].name);
		if (v->n)
			fprintf(h,
				"</td><td>%zu</td><td>%.3f</td><td>%.3f</td>"
				"<td>%.3f</td><td>%.3f</td><td>%s</td></tr>\n",
				v->n, k * manager_percentile(v->v, v->n, 50),
				k * manager_percentile(v->v, v->n, 90),
				k * manager_percentile(v->v, v->n, 99),
				k * v->v[v->n - 1],
				rate ? "MB/s" : mdef[m].unit);
		else
			fprintf(h,
				"</td><td>0</td><td colspan=5>-</td></tr>\n");
	}
	fprintf(h, "</table>\n");
}

bool report_figure(FILE *h, struct report *r, const char *name,
		   const char *title, const char *text)
{
	return report_figure_sized(h, r, name, title, text, 600);
}

bool report_figure_sized(FILE *h, struct report *r, const char *name,
			 const char *title, const char *text, int height)
{
	char *png = NULL;
	struct stat st;

	if (asprintf(&png, "%s/%s.png", r->dir, name) < 0)
		return false;
	if (stat(png, &st) != 0) {
		free(png);
		return false;
	}
	free(png);
	fprintf(h, "<section id='%s'><h2>", name);
	report_html(h, title);
	fprintf(h, "</h2><p>");
	report_html(h, text);
	fprintf(h,
		"</p>\n<a href='%s.svg'><img src='%s.svg' width='1000' "
		"height='%d' alt='",
		name, name, height);
	report_html(h, title);
	fprintf(h,
		"'></a><p class='alt'><a href='%s.png'>PNG</a> · "
		"<a href='%s.svg'>SVG</a></p>\n",
		name, name);
	return true;
}

static int write_page(struct report *r, const char *summary,
		      const char *const views[], char *const texts[],
		      int nviews)
{
	char *path = NULL, from[40] = "-", to[40] = "-";
	size_t exchanges = 0, connections = 0;
	FILE *h;

	for (size_t i = 0; i < r->nc; i++) {
		exchanges += r->c[i].exchanges;
		connections += r->c[i].connections;
	}
	if (r->t_first)
		when(from, sizeof(from), r->t_first);
	if (r->t_last)
		when(to, sizeof(to), r->t_last);
	if (asprintf(&path, "%s/index.html", r->dir) < 0)
		return -1;
	h = fopen(path, "w");
	if (!h) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	fprintf(h, "<!DOCTYPE html>\n<html lang='en'><head><meta "
		   "charset='utf-8'>\n<title>observe report: ");
	report_html(h, r->db_path);
	fprintf(h,
		"</title>\n<style>\nbody{font-family:sans-serif;max-width:"
		"1060px;margin:1em auto;padding:0 1em;color:#222}\n"
		"table{border-collapse:collapse;margin:.5em 0}td,th{border:1px "
		"solid #ccc;padding:2px 8px;text-align:right}td:first-child,"
		"th:first-child{text-align:left}\npre{background:#f6f6f6;"
		"padding:.5em;overflow-x:auto;font-size:85%%}img{max-width:"
		"100%%;height:auto;border:1px solid #ddd}\n.alt{font-size:85%%;"
		"margin-top:0}section{margin-bottom:2em}\n</style></head><body>\n"
		"<h1>observe report</h1>\n<table>\n<tr><td>database</td><td>");
	report_html(h, r->db_path);
	fprintf(h, "</td></tr>\n<tr><td>filter</td><td>");
	report_html(h, strcmp(r->where, "1") ? r->where : "none");
	fprintf(h,
		"</td></tr>\n<tr><td>first request</td><td>%s</td></tr>\n"
		"<tr><td>last response</td><td>%s</td></tr>\n<tr><td>clients"
		"</td><td>%zu</td></tr>\n<tr><td>connections</td><td>%zu</td>"
		"</tr>\n<tr><td>exchanges</td><td>%zu</td></tr>\n</table>\n",
		from, to, r->nc, connections, exchanges);
	if (exchanges == 0) {
		fprintf(h, "<p><strong>No exchange matches the filter: nothing "
			   "to plot.</strong></p>\n");
	}
	if (r->sample_every > 1)
		fprintf(h,
			"<p>The scatter and the time series of Tr show every "
			"%zu-th exchange (at most %d points); all other plots "
			"and tables use every row.</p>\n",
			r->sample_every, MAX_POINTS);
	/* contents: every plot that was drawn */
	{
		static const char *const toc[][2] = {
			{ "tt_histogram", "Tt histogram" },
			{ "cdf_tt", "CDF Tt" },
			{ "cdf_te", "CDF Te" },
			{ "cdf_ra", "CDF Ra" },
			{ "cdf_tw", "CDF Tw" },
			{ "cdf_tr", "CDF Tr" },
			{ "cdf_rr", "CDF Rr" },
			{ "size_time", "size against time" },
			{ "tr_series", "Tr over time" },
			{ "throughput", "throughput" },
			{ "compare_p50", "medians" },
			{ "compare_p99", "p99s" },
			{ "endings", "server state" },
			{ "keepalive", "keep-alive" },
			{ "size_fit", "size fit" },
			{ "family", "IPv4/IPv6, TLS" },
		};

		fprintf(h, "<p class='toc'><a href='#stats'>statistics</a>");
		for (size_t i = 0; i < sizeof(toc) / sizeof(toc[0]); i++) {
			char *png = NULL;
			struct stat st;
			if (asprintf(&png, "%s/%s.png", r->dir, toc[i][0]) < 0)
				continue;
			if (stat(png, &st) == 0)
				fprintf(h, " · <a href='#%s'>%s</a>", toc[i][0],
					toc[i][1]);
			free(png);
		}
		fprintf(h, " · <a href='#analyses'>analyses</a></p>\n");
	}
	fprintf(h,
		"<h2 id='stats'>Statistics per client</h2>\n<p>Percentiles are "
		"exact (nearest rank). Tt and Te per connection, the rest "
		"per exchange; rates in MB/s (10<sup>6</sup> bytes per "
		"second).</p>\n<pre>");
	report_html(h, summary ? summary : "");
	fprintf(h, "</pre>\n");

	report_figure(
		h, r, "tt_histogram", "Histogram of Tt",
		"Connections by their total time Tt = T7 - T1, on bins a "
		"tenth of a decade wide (as in the paper's Fig. 9): what the "
		"user waited for, from connect() to close().");
	table_metric(h, r, M_TT);
	fprintf(h, "</section>\n");
	for (int m = 0; m < M_COUNT; m++) {
		char name[32], title[128];
		snprintf(name, sizeof(name), "cdf_%s", mdef[m].key);
		snprintf(title, sizeof(title), "CDF of %s", mdef[m].label);
		report_figure(
			h, r, name, title,
			"The fraction of values at or below each x, one line per "
			"client; zero values are left out of the log axis.");
		table_metric(h, r, m);
		fprintf(h, "</section>\n");
	}
	report_figure(
		h, r, "size_time", "Response size against exchange time",
		"Each exchange: bytes received (Dr) against T6 - T3, from the "
		"first byte of the request sent to the last byte of the "
		"response received, log-log (as the paper's Figs. 10-11).");
	fprintf(h, "<table><tr><th>client</th><th>points</th></tr>\n");
	for (size_t i = 0; i < r->nc; i++) {
		fprintf(h, "<tr><td>");
		report_html(h, r->c[i].name);
		fprintf(h, "</td><td>%zu</td></tr>\n", r->c[i].scatter_points);
	}
	fprintf(h, "</table></section>\n");
	report_figure(
		h, r, "tr_series", "Tr over time",
		"Tr = T6 - T5 of each exchange against the time its request "
		"began, seconds since the first request.");
	table_metric(h, r, M_TR);
	fprintf(h, "</section>\n");
	report_figure(
		h, r, "throughput", "Throughput over time",
		"Bytes received per time bucket (by the time each response "
		"ended), per client, in bytes per second.");
	table_metric(h, r, M_RR);
	fprintf(h, "</section>\n");
	report_figure(
		h, r, "compare_p50", "Medians per client",
		"The p50 of Tt, Te, Tw and Tr side by side, one bar per client.");
	fprintf(h, "</section>\n");
	report_figure(
		h, r, "compare_p99", "p99 per client",
		"The p99 of Tt, Te, Tw and Tr side by side, one bar per client.");
	fprintf(h, "</section>\n");
	fprintf(h, "<div id='analyses'></div>\n");
	for (int i = 0; i < nviews; i++) {
		if (report_figure_analysis(h, r, views[i]))
			fprintf(h, "<h3>Analysis: %s</h3>\n<pre>", views[i]);
		else
			fprintf(h, "<section><h2>Analysis: %s</h2>\n<pre>",
				views[i]);
		report_html(h, texts[i] ? texts[i] : "");
		fprintf(h, "</pre></section>\n");
	}
	if (r->skipped)
		fprintf(h, "<h2>Plots left out</h2><ul>\n%s</ul>\n",
			r->skipped);
	fprintf(h,
		"<p class='alt'>Definitions: docs/schema.md, "
		"docs/analyses.md. Made by manager report.</p>\n</body></html>\n");
	if (fclose(h) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	if (!r->quiet)
		printf("%s\n", path);
	free(path);
	return 0;
}

static int write_summary(struct report *r, const char *stats,
			 const char *const views[], char *const texts[],
			 int nviews)
{
	char *path = NULL, from[40] = "-", to[40] = "-";
	FILE *f;

	if (asprintf(&path, "%s/summary.txt", r->dir) < 0)
		return -1;
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	if (r->t_first)
		when(from, sizeof(from), r->t_first);
	if (r->t_last)
		when(to, sizeof(to), r->t_last);
	fprintf(f,
		"observe report\ndatabase: %s\nfilter: %s\nfrom: %s\nto: "
		"%s\nclients: %zu\n\n%s",
		r->db_path, strcmp(r->where, "1") ? r->where : "none", from, to,
		r->nc, stats ? stats : "");
	for (int i = 0; i < nviews; i++)
		fprintf(f, "\n%s\n%s", views[i], texts[i] ? texts[i] : "");
	fclose(f);
	free(path);
	return 0;
}

/* ---- the command
 * ---------------------------------------------------------------- */

static void cleanup_tmp(const char *dir)
{
	char *cmd = NULL;

	/* only our own mkdtemp directory, quoted */
	if (dir && strncmp(dir, "/", 1) == 0 && !strchr(dir, '\'') &&
	    asprintf(&cmd, "rm -rf '%s'", dir) >= 0) {
		if (system(cmd) != 0)
			fprintf(stderr, "manager: could not remove %s\n", dir);
	}
	free(cmd);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	static const char *const views[] = { "endings", "keepalive", "size",
					     "family" };
	struct report r = { 0 };
	struct filter f;
	char err[512], *script = NULL, *stats = NULL, *texts[4] = { 0 };
	const char *tmpbase = getenv("TMPDIR");
	int opt, rc = 2;

	filter_init(&f);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:w:qh", longopts, NULL)) !=
	       -1) {
		int bad = filter_option(&f, opt, optarg, err, sizeof(err));

		if (bad < 0) {
			fprintf(stderr, "manager: %s\n", err);
			goto out;
		}
		if (bad == 0)
			continue;
		switch (opt) {
		case 'o':
			r.dir = optarg;
			break;
		case 'q':
			r.quiet = true;
			break;
		case 'h':
			manager_usage(stdout);
			rc = 0;
			goto out;
		default:
			manager_usage(stderr);
			goto out;
		}
	}
	if (!r.dir || optind != argc - 1) {
		manager_usage(stderr);
		goto out;
	}
	r.db_path = argv[optind];
	r.where = f.expr ? f.expr : "1";
	if (!(r.db = manager_open(r.db_path)))
		goto out;
	if (obs_store_check_expr(r.db, r.where, err, sizeof(err))) {
		fprintf(stderr, "manager: %s: %s\n", r.db_path, err);
		goto out;
	}
	if (mkdir(r.dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "manager: %s: %s\n", r.dir, strerror(errno));
		goto out;
	}
	if (asprintf(&r.tmp, "%s/observe-report.XXXXXX",
		     tmpbase && *tmpbase ? tmpbase : "/tmp") < 0 ||
	    !mkdtemp(r.tmp)) {
		fprintf(stderr,
			"manager: cannot make a temporary directory: %s\n",
			strerror(errno));
		free(r.tmp);
		r.tmp = NULL;
		goto out;
	}
	if (read_rows(&r) != 0)
		goto out;
	if (asprintf(&script, "%s/report.gp", r.tmp) < 0 ||
	    !(r.gp = fopen(script, "w"))) {
		fprintf(stderr, "manager: %s: %s\n", r.tmp, strerror(errno));
		goto out;
	}
	/* more than 8 clients: the 9th to 16th lines dashed, the next dotted
	 * (gnuplot's 8 colours come round again) */
	fprintf(r.gp, "do for [i=1:8] { set linetype i+8 dt 2; "
		      "set linetype i+16 dt 3 }\n");
	if (!have_pngcairo()) {
		fprintf(stderr,
			"manager: gnuplot with the pngcairo terminal is "
			"needed: install gnuplot-nox\n");
		goto out;
	}
	plot_hist(&r);
	for (int m = 0; m < M_COUNT; m++)
		plot_cdf(&r, m);
	if (!plot_files(&r, "scatter", "size_time",
			"set title 'Response size against exchange time (T6 - "
			"T3)'\nset logscale xy\nset xlabel 'Dr, bytes received "
			"(log scale)'\nset ylabel 'T6 - T3, ms (log scale)'",
			"using 1:2 with points pt 7 ps 0.4"))
		report_note_skip(
			&r, "Size against time",
			"no exchange with a response and a positive time");
	if (!plot_files(&r, "series", "tr_series",
			"set title 'Tr over time'\nset xlabel 'time since the "
			"first request, s'\nset ylabel 'Tr, ms'\nset yrange "
			"[0:*]",
			"using 1:2 with points pt 7 ps 0.4"))
		report_note_skip(&r, "Tr over time", "no exchange with a Tr");
	if (plot_throughput(&r) != 0)
		goto out;
	if (r.nc)
		plot_compare(&r);
	if (report_plot_analyses(&r) != 0)
		goto out;
	fclose(r.gp);
	r.gp = NULL;
	if (r.plots && run_gnuplot(&r, script) != 0)
		goto out;
	stats = capture(&r, 0, NULL);
	for (int i = 0; i < 4; i++)
		texts[i] = capture(&r, 1, views[i]);
	if (write_summary(&r, stats, views, texts, 4) != 0 ||
	    write_page(&r, stats, views, texts, 4) != 0)
		goto out;
	rc = 0;
out:
	if (r.gp)
		fclose(r.gp);
	if (r.tmp && !getenv("OBSERVE_KEEP_REPORT_DATA"))
		cleanup_tmp(r.tmp);
	free(r.tmp);
	free(script);
	free(stats);
	for (int i = 0; i < 4; i++)
		free(texts[i]);
	for (size_t i = 0; i < r.nc; i++) {
		free(r.c[i].name);
		for (int m = 0; m < M_COUNT; m++)
			free(r.c[i].m[m].v);
	}
	free(r.c);
	free(r.skipped);
	sqlite3_close(r.db);
	filter_free(&f);
	return rc;
}
