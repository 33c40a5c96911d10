/* report.c - manager report: the command, in order: read the data
 * (report_data.c), draw the plots with gnuplot (report_plots.c,
 * report_analyses.c), write the page and the summary (report_page.c).
 *
 *   manager report CENTRAL.db -o DIR [--baseline OTHER.db [--by GROUP]]
 *                  [--where EXPR] [FILTER...] [-q]
 *
 * Reads the exchanges and connections the filter keeps, per client, and
 * writes into DIR one PNG and one SVG per plot (drawn by gnuplot from a
 * script and data files in a temporary directory, removed at the end
 * unless OBSERVE_KEEP_REPORT_DATA is set), summary.txt (the findings, the
 * statistics and the analyses as text) and index.html (every plot with its
 * table, self-contained, no script: it works opened from disk). The page also
 * has a waterfall per program run, the first few (report_views.c), and
 * with --baseline the comparison of OTHER.db (A, before) with this one
 * (B, after) per client (or --by server or path).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "db.h"
#include "files.h"
#include "findings.h"
#include "options.h"
#include "report_analyses.h"
#include "report_data.h"
#include "report_page.h"
#include "report_plots.h"
#include "report_views.h"
#include "store.h"
#include "usage.h"

struct report_options {
	const char *dir, *baseline, *by;
	bool quiet;
};

static int take_by(void *opts, const char *arg)
{
	struct report_options *o = opts;

	if (strcmp(arg, "client") && strcmp(arg, "server") &&
	    strcmp(arg, "path")) {
		fprintf(stderr, "manager: --by %s: client, server or path\n",
			arg);
		return 2;
	}
	o->by = arg;
	return 0;
}

static const struct cmd_option options[] = {
	{ "output", 'o', CMD_TEXT, offsetof(struct report_options, dir) },
	{ "quiet", 'q', CMD_FLAG, offsetof(struct report_options, quiet) },
	{ "baseline", 0, CMD_TEXT, offsetof(struct report_options, baseline) },
	{ "by", 'b', CMD_OWN, 0, take_by },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

int cmd_report(int argc, char **argv)
{
	static const char *const views[] = { "endings", "keepalive", "size",
					     "family" };
	enum { NVIEWS = sizeof(views) / sizeof(views[0]) };
	struct report_options o = { .by = "client" };
	struct filter f;
	struct report_data d = { 0 };
	struct report_plots p = { .data = &d };
	char err[512], *tmp = NULL, *stats = NULL, *texts[NVIEWS] = { 0 };
	struct report_views rv = { 0 };
	struct report_view_texts vt = { 0 };
	struct findings found = { 0 };
	struct report_texts t = { .views = views,
				  .texts = texts,
				  .nviews = NVIEWS,
				  .more = &rv,
				  .findings = &found };
	sqlite3 *base = NULL;
	int rc = 2;

	filter_init(&f);
	if (cmdline_parse(&cmdline, &f, &o, argc, argv, &rc) != 0)
		goto out;
	rc = 2;
	if (!o.dir || optind != argc - 1) {
		manager_usage(stderr);
		goto out;
	}
	d.db_path = argv[optind];
	d.where = f.expr ? f.expr : "1";
	if (!(d.db = db_open(d.db_path)))
		goto out;
	if (obs_store_check_expr(d.db, d.where, err, sizeof(err))) {
		fprintf(stderr, "manager: %s: %s\n", d.db_path, err);
		goto out;
	}
	rv.baseline = o.baseline;
	rv.by = o.by;
	if (o.baseline && !(base = db_open(o.baseline)))
		goto out;
	if (base && obs_store_check_expr(base, d.where, err, sizeof(err))) {
		fprintf(stderr, "manager: %s: %s\n", o.baseline, err);
		goto out;
	}
	/* 0700 whatever the umask: the report shows what the clients did;
	 * a directory that exists keeps its mode */
	if (files_mkdir_private(o.dir) != 0) {
		fprintf(stderr, "manager: %s: %s\n", o.dir, strerror(errno));
		goto out;
	}
	if (!(tmp = report_tmp_dir()))
		goto out;
	p.dir = o.dir;
	p.tmp = tmp;
	if (report_data_read(&d) != 0 || report_plots_begin(&p) != 0)
		goto out;
	if (!report_plots_can_draw()) {
		fprintf(stderr,
			"manager: gnuplot with the pngcairo terminal is "
			"needed: install gnuplot-nox\n");
		goto out;
	}
	/* the clients' values in their data files, then freed: the
	 * findings and analyses that follow have the memory */
	if (report_plots_write(&p) != 0)
		goto out;
	report_data_shrink(&d);
	/* the findings take the size plot's fits and the keep-alive plot's
	 * gaps: no pass of their own for them */
	if (report_plot_analyses(&p, &vt) != 0 ||
	    findings_collect_given(
		    d.db, d.where,
		    &(struct findings_given){ &vt.sizes, vt.rows },
		    &found) != 0 ||
	    report_views_waterfalls(&rv, &p) != 0 ||
	    (base && report_views_baseline(&rv, &p, base) != 0) ||
	    report_plots_draw(&p) != 0)
		goto out;
	if (!(stats = report_data_text(&d, NULL)))
		goto out;
	t.stats = stats;
	/* keepalive, size and family were printed with their plots, from
	 * the same pass; endings' plot has windows, its table has none */
	texts[0] = report_data_text(&d, views[0]);
	texts[1] = vt.keepalive;
	texts[2] = vt.size;
	texts[3] = vt.family;
	vt.keepalive = vt.size = vt.family = NULL;
	for (int i = 0; i < NVIEWS; i++)
		if (!texts[i])
			goto out;
	if (report_page_summary(&d, &p, &t) != 0 ||
	    report_page_html(&d, &p, &t, o.quiet) != 0)
		goto out;
	rc = 0;
out:
	report_plots_free(&p);
	if (tmp && !getenv("OBSERVE_KEEP_REPORT_DATA"))
		report_tmp_remove(tmp);
	free(tmp);
	free(stats);
	for (int i = 0; i < NVIEWS; i++)
		free(texts[i]);
	report_views_free(&rv);
	report_view_texts_free(&vt);
	findings_free(&found);
	report_data_free(&d);
	sqlite3_close(base);
	sqlite3_close(d.db);
	filter_free(&f);
	return rc;
}
