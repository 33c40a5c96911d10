/* report_page.c - manager report's page and summary: index.html with
 * every plot drawn and its table (escaped for HTML, no script, opens from
 * disk), summary.txt with the same figures as text (see report_page.h). */
#define _GNU_SOURCE
#include "report_page.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "db.h"

static void html(FILE *f, const char *s)
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

static void when(char *buf, size_t size, int64_t ns)
{
	time_t secs = (time_t)(ns / 1000000000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void table_metric(FILE *h, const struct report_data *d, int m)
{
	fprintf(h, "<table><tr><th>client</th><th>n</th><th>p50</th>"
		   "<th>p90</th><th>p99</th><th>max</th><th>unit</th></tr>\n");
	/* rates in MB/s (10^6 bytes per second), as in manager stats */
	bool rate = strcmp(report_metrics[m].unit, "bytes/s") == 0;
	double k = rate ? 1e-6 : 1;

	for (size_t i = 0; i < d->nc; i++) {
		const struct report_figures *f = &d->c[i].f[m];
		fprintf(h, "<tr><td>");
		html(h, d->c[i].name);
		if (f->n)
			fprintf(h,
				"</td><td>%zu</td><td>%.3f</td><td>%.3f</td>"
				"<td>%.3f</td><td>%.3f</td><td>%s</td></tr>\n",
				f->n, k * f->p50, k * f->p90, k * f->p99,
				k * f->max,
				rate ? "MB/s" : report_metrics[m].unit);
		else
			fprintf(h,
				"</td><td>0</td><td colspan=5>-</td></tr>\n");
	}
	fprintf(h, "</table>\n");
}

/* Whether gnuplot drew plot NAME (its PNG is there). */
static bool drawn(const struct report_plots *p, const char *name)
{
	char png[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(png, sizeof(png), "%s/%s.png", p->dir, name) <
		       sizeof(png) &&
	       stat(png, &st) == 0;
}

static bool figure_sized(FILE *h, const struct report_plots *p,
			 const char *name, const char *title, const char *text,
			 int height)
{
	if (!drawn(p, name))
		return false;
	fprintf(h, "<section id='%s'><h2>", name);
	html(h, title);
	fprintf(h, "</h2><p>");
	html(h, text);
	fprintf(h,
		"</p>\n<a href='%s.svg'><img src='%s.svg' width='1000' "
		"height='%d' alt='",
		name, name, height);
	html(h, title);
	fprintf(h,
		"'></a><p class='alt'><a href='%s.png'>PNG</a> · "
		"<a href='%s.svg'>SVG</a></p>\n",
		name, name);
	return true;
}

static bool figure(FILE *h, const struct report_plots *p, const char *name,
		   const char *title, const char *text)
{
	return figure_sized(h, p, name, title, text, 600);
}

static bool figure_analysis(FILE *h, const struct report_plots *p,
			    const char *view)
{
	if (strcmp(view, "endings") == 0 && p->endings_height) {
		char text[256];
		snprintf(
			text, sizeof(text),
			"The share of connections by how they ended, per %g s "
			"window of their connect (T1), stacked; the black line "
			"is the share the client gave up on unanswered. The "
			"table below gives the whole span.",
			p->endings_window_s);
		return figure_sized(h, p, "endings", "Server state over time",
				    text, p->endings_height);
	}
	if (strcmp(view, "keepalive") == 0)
		return figure(h, p, "keepalive", "Keep-alive: idle gaps",
			      "Left: the idle gaps Tgap on 10 ms bins; right: "
			      "the gaps and the server's idle closes (TEOF - "
			      "T6 of the last response) on log bins. A "
			      "vertical dashed line per server marks the "
			      "recommended timeout (mu + 7 sigma of the gaps, "
			      "in [100 ms, 15 s]).");
	if (strcmp(view, "size") == 0)
		return figure(h, p, "size_fit", "Response time against size",
			      "Each exchange with a response: Dr against T6 - "
			      "T4, with the fitted T = a Dr + b per server "
			      "(least squares solid, Theil-Sen dashed); b is "
			      "the fixed cost of a request, 1/a the service "
			      "bandwidth.");
	return false;
}

/* The before/after section and the waterfalls, when there are. */
static void views_html(FILE *h, const struct report_plots *p,
		       const struct report_views *v)
{
	if (v->baseline) {
		fprintf(h, "<section id='compare'><h2>Before and after</h2>\n"
			   "<p>A, before: <code>");
		html(h, v->baseline);
		fprintf(h, "</code> (the baseline); B, after: this database. "
			   "Per ");
		html(h, v->by);
		fprintf(h,
			" and metric: n, p50, p90, p99 of each side (nearest "
			"rank; Te and Tt per connection, the rest per "
			"exchange; Rr in MB/s), change = p50(B) / p50(A), and "
			"the p-value of the two-sided Mann-Whitney U test "
			"(docs/analyses.md): below 0.01, the two sides "
			"differ.</p>\n<pre>");
		html(h, v->table ? v->table : "");
		fprintf(h, "</pre>\n");
		if (v->cdf_height) {
			fprintf(h, "<p>The CDFs of both sides, for ");
			html(h, v->cdf_groups ? v->cdf_groups : "");
			fprintf(h, " (at most six found on both sides).</p>\n");
			figure_sized(h, p, "compare_cdf",
				     "Before and after: CDFs", "",
				     v->cdf_height);
			fprintf(h, "</section>\n");
		}
		fprintf(h, "</section>\n");
	}
	if (!v->nwf)
		return;
	fprintf(h,
		"<div id='waterfalls'><h2>Waterfalls</h2>\n<p>One per "
		"program run: the first run of each program, in the order "
		"of their first connection, at most %d, of at most %d rows "
		"each (manager waterfall draws any selection). A row per "
		"connection (grey: open, from connect to close) and one per "
		"exchange on it: DNS, connect, TLS, send (Ts), wait (Tw), "
		"receive (Trecv), the thin line the idle time before the "
		"request.</p></div>\n",
		REPORT_WATERFALLS, REPORT_WATERFALL_ROWS);
	for (size_t i = 0; i < v->nwf; i++)
		if (figure_sized(h, p, v->wf[i].name, v->wf[i].title, "",
				 v->wf[i].height))
			fprintf(h, "</section>\n");
}

/* The findings, first on the page: where the time went, what to change
 * (findings.h). */
static void findings_html(FILE *h, const struct findings *f)
{
	fprintf(h, "<section id='findings'><h2>Findings</h2>\n");
	if (!f->n)
		fprintf(h, "<p>No finding: nothing stands out "
			   "(docs/findings.md says what each one "
			   "needs).</p>\n");
	else
		fprintf(h, "<p>The most time at stake first: the users' "
			   "waiting each one explains, summed over the "
			   "exchanges concerned.</p>\n<ol>\n");
	for (size_t i = 0; i < f->n; i++) {
		const struct finding *x = &f->v[i];

		fprintf(h, "<li><strong>%s</strong>, ", x->id);
		html(h, x->subject);
		fprintf(h, ": <strong>%.1f ms</strong> at stake<br>",
			x->at_stake_ms);
		html(h, x->evidence);
		fprintf(h, "<br>&rarr; ");
		html(h, x->advice);
		fprintf(h, "</li>\n");
	}
	fprintf(h, "%s</section>\n", f->n ? "</ol>\n" : "");
}

int report_page_html(const struct report_data *d, const struct report_plots *p,
		     const struct report_texts *t, bool quiet)
{
	const char *summary = t->stats;
	const char *const *views = t->views;
	char *const *texts = t->texts;
	int nviews = t->nviews;
	char *path = NULL, from[40] = "-", to[40] = "-", lost[128];
	size_t exchanges = 0, connections = 0;
	FILE *h;

	for (size_t i = 0; i < d->nc; i++) {
		exchanges += d->c[i].exchanges;
		connections += d->c[i].connections;
	}
	if (d->t_first)
		when(from, sizeof(from), d->t_first);
	if (d->t_last)
		when(to, sizeof(to), d->t_last);
	if (asprintf(&path, "%s/index.html", p->dir) < 0) {
		fprintf(stderr, "manager: out of memory\n");
		return -1;
	}
	h = fopen(path, "w");
	if (!h) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	fprintf(h, "<!DOCTYPE html>\n<html lang='en'><head><meta "
		   "charset='utf-8'>\n<title>observe report: ");
	html(h, d->db_path);
	fprintf(h,
		"</title>\n<style>\nbody{font-family:sans-serif;max-width:"
		"1060px;margin:1em auto;padding:0 1em;color:#222}\n"
		"table{border-collapse:collapse;margin:.5em 0}td,th{border:1px "
		"solid #ccc;padding:2px 8px;text-align:right}td:first-child,"
		"th:first-child{text-align:left}\npre{background:#f6f6f6;"
		"padding:.5em;overflow-x:auto;font-size:85%%}img{max-width:"
		"100%%;height:auto;border:1px solid #ddd}\n.alt{font-size:85%%;"
		"margin-top:0}section{margin-bottom:2em}\n</style></head><body>\n"
		"<h1>observe report</h1>\n");
	if (t->findings)
		findings_html(h, t->findings);
	fprintf(h, "<table>\n<tr><td>database</td><td>");
	html(h, d->db_path);
	fprintf(h, "</td></tr>\n<tr><td>filter</td><td>");
	html(h, strcmp(d->where, "1") ? d->where : "none");
	fprintf(h,
		"</td></tr>\n<tr><td>first request</td><td>%s</td></tr>\n"
		"<tr><td>last response</td><td>%s</td></tr>\n<tr><td>clients"
		"</td><td>%zu</td></tr>\n<tr><td>connections</td><td>%zu</td>"
		"</tr>\n<tr><td>exchanges</td><td>%zu</td></tr>\n</table>\n",
		from, to, d->nc, connections, exchanges);
	if (db_dropped(d->db, lost, sizeof(lost)))
		fprintf(h,
			"<p><strong>Warning: %s: the figures miss "
			"them.</strong></p>\n",
			lost);
	if (exchanges == 0) {
		fprintf(h, "<p><strong>No exchange matches the filter: nothing "
			   "to plot.</strong></p>\n");
	}
	if (d->sample_every > 1)
		fprintf(h,
			"<p>The scatter and the time series of Tr show every "
			"%zu-th exchange (at most %d points); all other plots "
			"and tables use every row.</p>\n",
			d->sample_every, REPORT_MAX_POINTS);
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

		fprintf(h, "<p class='toc'>");
		if (t->more && t->more->baseline)
			fprintf(h, "<a href='#compare'>before/after</a> · ");
		if (t->more && t->more->nwf)
			fprintf(h, "<a href='#waterfalls'>waterfalls</a> · ");
		fprintf(h, "<a href='#stats'>statistics</a>");
		for (size_t i = 0; i < sizeof(toc) / sizeof(toc[0]); i++)
			if (drawn(p, toc[i][0]))
				fprintf(h, " · <a href='#%s'>%s</a>", toc[i][0],
					toc[i][1]);
		fprintf(h, " · <a href='#analyses'>analyses</a></p>\n");
	}
	if (t->more)
		views_html(h, p, t->more);
	fprintf(h,
		"<h2 id='stats'>Statistics per client</h2>\n<p>Percentiles are "
		"exact (nearest rank). Tt and Te per connection, the rest "
		"per exchange; rates in MB/s (10<sup>6</sup> bytes per "
		"second).</p>\n<pre>");
	html(h, summary ? summary : "");
	fprintf(h, "</pre>\n");

	figure(h, p, "tt_histogram", "Histogram of Tt",
	       "Connections by their total time Tt = T7 - T1, on bins a "
	       "tenth of a decade wide (as in the paper's Fig. 9): what the "
	       "user waited for, from connect() to close().");
	table_metric(h, d, M_TT);
	fprintf(h, "</section>\n");
	for (int m = 0; m < M_COUNT; m++) {
		char name[32], title[128];
		snprintf(name, sizeof(name), "cdf_%s", report_metrics[m].key);
		snprintf(title, sizeof(title), "CDF of %s",
			 report_metrics[m].label);
		figure(h, p, name, title,
		       "The fraction of values at or below each x, one line per "
		       "client; zero values are left out of the log axis.");
		table_metric(h, d, m);
		fprintf(h, "</section>\n");
	}
	figure(h, p, "size_time", "Response size against exchange time",
	       "Each exchange: bytes received (Dr) against T6 - T3, from the "
	       "first byte of the request sent to the last byte of the "
	       "response received, log-log (as the paper's Figs. 10-11).");
	fprintf(h, "<table><tr><th>client</th><th>points</th></tr>\n");
	for (size_t i = 0; i < d->nc; i++) {
		fprintf(h, "<tr><td>");
		html(h, d->c[i].name);
		fprintf(h, "</td><td>%zu</td></tr>\n", d->c[i].scatter.n);
	}
	fprintf(h, "</table></section>\n");
	figure(h, p, "tr_series", "Tr over time",
	       "Tr = T6 - T5 of each exchange against the time its request "
	       "began, seconds since the first request.");
	table_metric(h, d, M_TR);
	fprintf(h, "</section>\n");
	figure(h, p, "throughput", "Throughput over time",
	       "Bytes received per time bucket (by the time each response "
	       "ended), per client, in bytes per second.");
	table_metric(h, d, M_RR);
	fprintf(h, "</section>\n");
	figure(h, p, "compare_p50", "Medians per client",
	       "The p50 of Tt, Te, Tw and Tr side by side, one bar per client.");
	fprintf(h, "</section>\n");
	figure(h, p, "compare_p99", "p99 per client",
	       "The p99 of Tt, Te, Tw and Tr side by side, one bar per client.");
	fprintf(h, "</section>\n");
	fprintf(h, "<div id='analyses'></div>\n");
	for (int i = 0; i < nviews; i++) {
		if (figure_analysis(h, p, views[i]))
			fprintf(h, "<h3>Analysis: %s</h3>\n<pre>", views[i]);
		else
			fprintf(h, "<section><h2>Analysis: %s</h2>\n<pre>",
				views[i]);
		html(h, texts[i] ? texts[i] : "");
		fprintf(h, "</pre></section>\n");
	}
	if (p->skipped)
		fprintf(h, "<h2>Plots left out</h2><ul>\n%s</ul>\n",
			p->skipped);
	fprintf(h,
		"<p class='alt'>Definitions: docs/schema.md, "
		"docs/analyses.md. Made by manager report.</p>\n</body></html>\n");
	if (fclose(h) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	if (!quiet)
		printf("%s\n", path);
	free(path);
	return 0;
}

int report_page_summary(const struct report_data *d,
			const struct report_plots *p,
			const struct report_texts *t)
{
	const char *stats = t->stats;
	const char *const *views = t->views;
	char *const *texts = t->texts;
	int nviews = t->nviews;
	char *path = NULL, from[40] = "-", to[40] = "-", lost[128];
	FILE *f;

	if (asprintf(&path, "%s/summary.txt", p->dir) < 0) {
		fprintf(stderr, "manager: out of memory\n");
		return -1;
	}
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	if (d->t_first)
		when(from, sizeof(from), d->t_first);
	if (d->t_last)
		when(to, sizeof(to), d->t_last);
	fprintf(f,
		"observe report\ndatabase: %s\nfilter: %s\nfrom: %s\nto: "
		"%s\nclients: %zu\n",
		d->db_path, strcmp(d->where, "1") ? d->where : "none", from, to,
		d->nc);
	if (db_dropped(d->db, lost, sizeof(lost)))
		fprintf(f, "warning: %s: the figures miss them\n", lost);
	if (t->findings) {
		fputc('\n', f);
		findings_print(t->findings, false, true, f);
	}
	fprintf(f, "\n%s", stats ? stats : "");
	for (int i = 0; i < nviews; i++)
		fprintf(f, "\n%s\n%s", views[i], texts[i] ? texts[i] : "");
	if (t->more && t->more->baseline)
		fprintf(f, "\nbefore and after (A: %s, B: %s)\n%s",
			t->more->baseline, d->db_path,
			t->more->table ? t->more->table : "");
	for (size_t i = 0; t->more && i < t->more->nwf; i++)
		fprintf(f, "%swaterfall %s.svg: %s\n", i ? "" : "\n",
			t->more->wf[i].name, t->more->wf[i].title);
	if (fclose(f) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	free(path);
	return 0;
}
