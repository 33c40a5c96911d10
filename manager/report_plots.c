/* report_plots.c - manager report's plots: the data files and gnuplot
 * script of the histogram of Tt, the CDFs, the size-time scatter, Tr over
 * time, the throughput and the clients compared, drawn by gnuplot as PNG
 * and SVG (see report_plots.h), and what every plot's writer uses: the
 * script, the data files, the notes on plots left out, gnuplot run. The
 * analyses' plots are in report_analyses.c. Everything comes from
 * report_data; nothing is read from the database here.
 *
 * Plots: the histogram of Tt on log-spaced bins (the paper's Fig. 9); CDFs
 * of Tt, Te, Tw, Tr, Rr and Ra per client; response size against exchange
 * time, log-log (Figs. 10-11); Tr and throughput over time; the medians and
 * p99s of Tt, Te, Tw, Tr per client side by side.
 */
#define _GNU_SOURCE
#include "report_plots.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "text.h"

extern char **environ;

#define CDF_POINTS 1000 /* points per CDF curve */

/* A gnuplot single-quoted string: ' doubled, control characters left
 * out, bytes that are not UTF-8 as U+FFFD (the SVG is XML: one stray byte
 * and a browser shows nothing of it). */
void report_gp_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);

	fputc('\'', f);
	while (left) {
		bool valid;
		size_t len = text_utf8_len(p, left, &valid);

		if (!valid)
			fputs("\xef\xbf\xbd", f);
		else if (!text_is_control(p, len)) {
			if (*p == '\'')
				fputc('\'', f);
			fwrite(p, 1, len, f);
		}
		p += len;
		left -= len;
	}
	fputc('\'', f);
}

/* TMP/WHAT-N.dat, malloc'd (NULL when out of memory). */
static char *plot_file(const struct report_plots *r, const char *what,
		       size_t client)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s-%zu.dat", r->tmp, what, client) < 0)
		return NULL;
	return p;
}

/* The first failure is said; the plots fail. */
static void plots_fail(struct report_plots *r, const char *path,
		       const char *why)
{
	if (!r->failed)
		fprintf(stderr, "manager: %s%s%s\n", path ? path : "",
			path ? ": " : "", why);
	r->failed = true;
}

void report_plots_nomem(struct report_plots *r)
{
	plots_fail(r, NULL, "out of memory");
}

FILE *report_plot_open(struct report_plots *r, const char *what, size_t n)
{
	char *path = plot_file(r, what, n);
	FILE *f = path ? fopen(path, "w") : NULL;

	if (!path)
		report_plots_nomem(r);
	else if (!f)
		plots_fail(r, path, strerror(errno));
	free(path);
	return f;
}

bool report_plot_written(struct report_plots *r, const char *what, size_t n)
{
	char *path = plot_file(r, what, n);
	struct stat st;
	bool yes = path && stat(path, &st) == 0 && st.st_size > 0;

	if (!path)
		report_plots_nomem(r);
	free(path);
	return yes;
}

void report_gp_file(struct report_plots *r, const char *what, size_t n)
{
	char *path = plot_file(r, what, n);

	if (!path)
		report_plots_nomem(r);
	report_gp_string(r->gp, path ? path : "");
	free(path);
}

void report_gp_text(struct report_plots *r, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		report_plots_nomem(r);
		text = NULL;
	}
	report_gp_string(r->gp, text ? text : "");
	free(text);
}

void report_note_skip(struct report_plots *r, const char *plot, const char *why)
{
	char *more = NULL;

	if (asprintf(&more, "%s<li>%s: %s</li>\n", r->skipped ? r->skipped : "",
		     plot, why) < 0) {
		report_plots_nomem(r);
		return;
	}
	free(r->skipped);
	r->skipped = more;
}

/* The script lines that write one plot in both formats: the body (set and
 * plot commands) is emitted twice, once per terminal. */
void report_gp_begin_sized(struct report_plots *r, const char *name, int pass,
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
	report_gp_text(r, "%s/%s.%s", r->dir, name, pass == 0 ? "png" : "svg");
	fprintf(r->gp, "\nreset\nset grid\nset key outside right top "
		       "noenhanced\nset termoption noenhanced\n");
}

void report_gp_begin(struct report_plots *r, const char *name, int pass)
{
	report_gp_begin_sized(r, name, pass, 1000, 600);
}

void report_gp_end(struct report_plots *r)
{
	fprintf(r->gp, "set output\n");
}

/* 10 bins per decade between the smallest and largest positive value. */
static void plot_hist(struct report_plots *r)
{
	const struct report_data *d = r->data;
	double lo = INFINITY, hi = 0;
	int first, last, nb;

	for (size_t i = 0; i < d->nc; i++) {
		struct vec *v = &d->c[i].m[M_TT];
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
	for (size_t i = 0; i < d->nc; i++) {
		struct vec *v = &d->c[i].m[M_TT];
		FILE *f = report_plot_open(r, "hist", i);
		size_t *count = calloc((size_t)nb, sizeof(*count));

		if (!f || !count) {
			if (f)
				fclose(f);
			if (!count)
				report_plots_nomem(r);
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
		for (size_t i = 0; i < d->nc; i++) {
			fprintf(r->gp,
				"%s'%s/hist-%zu.dat' using 1:2 with steps "
				"lw 2 title ",
				i ? ", " : "", r->tmp, i);
			report_gp_string(r->gp, d->c[i].name);
		}
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
}

int report_cdf_file(struct report_plots *r, const char *what, size_t n,
		    const struct vec *v)
{
	size_t step, start = 0;
	FILE *f;

	while (start < v->n && v->v[start] <= 0)
		start++; /* a log axis: zero durations left out */
	if (start == v->n)
		return 0;
	if (!(f = report_plot_open(r, what, n)))
		return -1;
	step = (v->n - start) / CDF_POINTS + 1;
	for (size_t k = start; k < v->n; k += step)
		fprintf(f, "%.9g %.6f\n", v->v[k],
			(double)(k + 1) / (double)v->n);
	fprintf(f, "%.9g 1\n", v->v[v->n - 1]);
	fclose(f);
	return 1;
}

static void plot_cdf(struct report_plots *r, int m)
{
	const struct report_data *d = r->data;
	char name[32];
	bool any = false, logx = true;

	snprintf(name, sizeof(name), "cdf_%s", report_metrics[m].key);
	for (size_t i = 0; i < d->nc; i++) {
		int written = report_cdf_file(r, name, i, &d->c[i].m[m]);

		if (written < 0)
			return;
		any |= written > 0;
	}
	if (!any) {
		report_note_skip(r, report_metrics[m].label,
				 "no positive values");
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, name, pass);
		fprintf(r->gp, "set title ");
		report_gp_text(r, "CDF of %s per client",
			       report_metrics[m].label);
		fprintf(r->gp, "\n%sset xlabel ",
			logx ? "set logscale x\n" : "");
		report_gp_text(r, "%s, %s (log scale)", report_metrics[m].label,
			       report_metrics[m].unit);
		if (strcmp(report_metrics[m].unit, "bytes/s") == 0)
			fprintf(r->gp, "\nset format x '%%.0s%%c'");
		fprintf(r->gp,
			"\nset ylabel 'fraction <= x'\nset yrange [0:1]\n"
			"set key bottom right inside\nplot ");
		for (size_t i = 0, n = 0; i < d->nc; i++) {
			if (!report_plot_written(r, name, i))
				continue;
			fprintf(r->gp, "%s", n++ ? ", " : "");
			report_gp_file(r, name, i);
			fprintf(r->gp, " using 1:2 with lines lw 2 title ");
			report_gp_string(r->gp, d->c[i].name);
		}
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
}

/* The plot over the per-client files `what`-N.dat, if any has points. */
static bool plot_files(struct report_plots *r, const char *file,
		       const char *name, const char *setup, const char *style)
{
	const struct report_data *d = r->data;
	bool any = false;

	for (size_t i = 0; i < d->nc; i++)
		if (report_plot_written(r, file, i))
			any = true;
	if (!any)
		return false;
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, name, pass);
		fprintf(r->gp, "%s\nplot ", setup);
		for (size_t i = 0, n = 0; i < d->nc; i++) {
			if (!report_plot_written(r, file, i))
				continue;
			fprintf(r->gp, "%s", n++ ? ", " : "");
			report_gp_file(r, file, i);
			fprintf(r->gp, " %s title ", style);
			report_gp_string(r->gp, d->c[i].name);
		}
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
	return true;
}

enum points_kind { SCATTER, SERIES, RATE };

static const struct report_points *points_of(const struct report_client *c,
					     enum points_kind kind)
{
	return kind == SCATTER	? &c->scatter
	       : kind == SERIES ? &c->series
				: &c->rate;
}

/* Each client's points of a kind into TMP/WHAT-N.dat, one "x y" line each
 * (x an integer for the scatter's bytes); a client with none gets no file.
 * The rate's x are bucket numbers: steps of bucket_s seconds, a gap
 * breaks the line. 0, or -1 when a file cannot be written (said). */
static int write_points(struct report_plots *r, const char *what,
			enum points_kind kind)
{
	const struct report_data *d = r->data;
	double step = d->bucket_s;

	for (size_t i = 0; i < d->nc; i++) {
		const struct report_points *pts = points_of(&d->c[i], kind);
		FILE *f;

		if (pts->n == 0)
			continue;
		if (!(f = report_plot_open(r, what, i)))
			return -1;
		for (size_t k = 0; k < pts->n; k++) {
			const struct report_point *pt = &pts->v[k];

			if (kind == RATE) {
				if (k && pt->x != pts->v[k - 1].x + 1)
					fprintf(f, "\n"); /* nothing between */
				/* from the bucket's start to its end */
				fprintf(f, "%.6f %.3f\n%.6f %.3f\n",
					pt->x * step, pt->y / step,
					(pt->x + 1) * step, pt->y / step);
			} else if (kind == SCATTER)
				fprintf(f, "%lld %.6f\n", (long long)pt->x,
					pt->y);
			else
				fprintf(f, "%.6f %.6f\n", pt->x, pt->y);
		}
		fclose(f);
	}
	return 0;
}

static int plot_scatter_series(struct report_plots *r)
{
	if (write_points(r, "scatter", SCATTER) ||
	    write_points(r, "series", SERIES))
		return -1;
	if (!plot_files(r, "scatter", "size_time",
			"set title 'Response size against exchange time (T6 - "
			"T3)'\nset logscale xy\nset xlabel 'Dr, bytes received "
			"(log scale)'\nset ylabel 'T6 - T3, ms (log scale)'",
			"using 1:2 with points pt 7 ps 0.4"))
		report_note_skip(
			r, "Size against time",
			"no exchange with a response and a positive time");
	if (!plot_files(r, "series", "tr_series",
			"set title 'Tr over time'\nset xlabel 'time since the "
			"first request, s'\nset ylabel 'Tr, ms'\nset yrange "
			"[0:*]",
			"using 1:2 with points pt 7 ps 0.4"))
		report_note_skip(r, "Tr over time", "no exchange with a Tr");
	return 0;
}

static int plot_throughput(struct report_plots *r)
{
	double bucket = r->data->bucket_s;
	char setup[512];

	if (write_points(r, "rate", RATE))
		return -1;
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
	return 0;
}

/* Per client p50 and p99 of Tt, Te, Tw, Tr: clustered bars per metric. */
static void plot_compare(struct report_plots *r)
{
	const struct report_data *d = r->data;
	static const int ms[] = { M_TT, M_TE, M_TW, M_TR };
	static const double ps[] = { 50, 99 };

	for (int k = 0; k < 2; k++) {
		char name[32];
		FILE *f;

		snprintf(name, sizeof(name), "compare_p%.0f", ps[k]);
		if (!(f = report_plot_open(r, name, 0)))
			return;
		for (int j = 0; j < 4; j++) {
			fprintf(f, "%s", report_metrics[ms[j]].key);
			for (size_t i = 0; i < d->nc; i++) {
				struct vec *v = &d->c[i].m[ms[j]];
				/* a log axis: a missing or zero value shows as
				 * no bar */
				double x = v->n ? stats_percentile(v->v, v->n,
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
			for (size_t i = 0; i < d->nc; i++) {
				fprintf(r->gp,
					"%s'%s/%s-0.dat' using %zu title ",
					i ? ", " : "", r->tmp, name, i + 2);
				report_gp_string(r->gp, d->c[i].name);
			}
			fprintf(r->gp, "\n");
			report_gp_end(r);
		}
		r->plots++;
	}
}

char *report_tmp_dir(void)
{
	const char *base = getenv("TMPDIR");
	char *tmp = NULL;

	/* (mkdtemp's 0700 less the umask: made 0700 again) */
	if (asprintf(&tmp, "%s/observe-report.XXXXXX",
		     base && *base ? base : "/tmp") < 0 ||
	    !mkdtemp(tmp) || chmod(tmp, 0700) != 0) {
		fprintf(stderr,
			"manager: cannot make a temporary directory: %s\n",
			strerror(errno));
		free(tmp);
		return NULL;
	}
	return tmp;
}

void report_tmp_remove(const char *dir)
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

bool report_plots_can_draw(void)
{
	return system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") ==
	       0;
}

/* Run gnuplot on script; its messages on stderr if it fails. */
static int run_gnuplot(struct report_plots *r, const char *script)
{
	char *errf = NULL, *argv[] = { "gnuplot", (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, fd;

	if (asprintf(&errf, "%s/gnuplot.err", r->tmp) < 0) {
		report_plots_nomem(r);
		return -1;
	}
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

/* The script's path, malloc'd. */
static char *script_path(const struct report_plots *r)
{
	char *path = NULL;

	return asprintf(&path, "%s/report.gp", r->tmp) < 0 ? NULL : path;
}

int report_plots_begin(struct report_plots *r)
{
	char *script = script_path(r);

	if (!script) {
		report_plots_nomem(r);
		return -1;
	}
	if (!(r->gp = fopen(script, "w"))) {
		plots_fail(r, script, strerror(errno));
		free(script);
		return -1;
	}
	free(script);
	/* more than 8 clients: the 9th to 16th lines dashed, the next dotted
	 * (gnuplot's 8 colours come round again) */
	fprintf(r->gp, "do for [i=1:8] { set linetype i+8 dt 2; "
		       "set linetype i+16 dt 3 }\n");
	return 0;
}

int report_plots_write(struct report_plots *r)
{
	plot_hist(r);
	for (int m = 0; m < M_COUNT; m++)
		plot_cdf(r, m);
	if (plot_scatter_series(r) != 0 || plot_throughput(r) != 0)
		return -1;
	if (r->data->nc)
		plot_compare(r);
	return r->failed ? -1 : 0;
}

int report_plots_draw(struct report_plots *r)
{
	char *script;
	int rc = 0;

	fclose(r->gp);
	r->gp = NULL;
	if (!r->plots)
		return 0;
	if (!(script = script_path(r))) {
		report_plots_nomem(r);
		return -1;
	}
	rc = run_gnuplot(r, script);
	free(script);
	return rc;
}

void report_plots_free(struct report_plots *r)
{
	if (r->gp)
		fclose(r->gp);
	r->gp = NULL;
	free(r->skipped);
	r->skipped = NULL;
}
