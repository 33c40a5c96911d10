/* waterfall_cmd.c - manager waterfall: the selected connections and their
 * exchanges on one time axis (waterfall.c), drawn by gnuplot into one
 * SVG or PNG file.
 *
 *   manager waterfall DB -o FILE.svg|FILE.png [--rows N] [FILTER...] [-q]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "db.h"
#include "files.h"
#include "options.h"
#include "report_plots.h"
#include "store.h"
#include "usage.h"
#include "waterfall.h"

struct waterfall_options {
	const char *out;
	size_t rows;
	bool quiet;
};

static int take_rows(void *opts, const char *arg)
{
	struct waterfall_options *o = opts;
	char *end;
	long n = strtol(arg, &end, 10);

	if (*end || end == arg || n < 1 || n > WATERFALL_MAX_ROWS) {
		fprintf(stderr, "manager: --rows %s: a number from 1 to %d\n",
			arg, WATERFALL_MAX_ROWS);
		return 2;
	}
	o->rows = (size_t)n;
	return 0;
}

static const struct cmd_option options[] = {
	{ "output", 'o', CMD_TEXT, offsetof(struct waterfall_options, out) },
	{ "rows", 0, CMD_OWN, 0, take_rows },
	{ "quiet", 'q', CMD_FLAG, offsetof(struct waterfall_options, quiet) },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

/* FILE.svg or FILE.png split into its directory and name; png says which.
 * 0, or -1 (said). */
static int split_output(const char *out, char **dir, char **name, bool *png)
{
	const char *slash = strrchr(out, '/'), *base = slash ? slash + 1 : out;
	size_t len = strlen(base);

	*dir = *name = NULL;
	if (len < 5 || (strcmp(base + len - 4, ".svg") != 0 &&
			strcmp(base + len - 4, ".png") != 0)) {
		fprintf(stderr,
			"manager: -o %s: the file's name ends in .svg or "
			".png\n",
			out);
		return -1;
	}
	*png = strcmp(base + len - 4, ".png") == 0;
	*dir = slash ? strndup(out, (size_t)(slash - out) + (slash == out))
		     : strdup(".");
	*name = strndup(base, len - 4);
	if (!*dir || !*name) {
		fprintf(stderr, "manager: out of memory\n");
		return -1;
	}
	return 0;
}

int cmd_waterfall(int argc, char **argv)
{
	struct waterfall_options o = { .rows = WATERFALL_ROWS };
	struct filter f;
	struct waterfall w = { 0 };
	struct report_plots p = { 0 };
	FILE *made;
	char err[512], cut[64] = "", *dir = NULL, *name = NULL, *tmp = NULL,
		       *title = NULL;
	const char *where, *path;
	sqlite3 *db = NULL;
	bool png;
	int rc = 2;

	filter_init(&f);
	if (cmdline_parse(&cmdline, &f, &o, argc, argv, &rc) != 0)
		goto out;
	rc = 2;
	if (!o.out || optind != argc - 1) {
		manager_usage(stderr);
		goto out;
	}
	path = argv[optind];
	where = f.expr ? f.expr : "1";
	if (split_output(o.out, &dir, &name, &png) != 0 ||
	    !(db = db_open(path)))
		goto out;
	if (obs_store_check_expr(db, where, err, sizeof(err))) {
		fprintf(stderr, "manager: %s: %s\n", path, err);
		goto out;
	}
	if (!report_plots_can_draw()) {
		fprintf(stderr, "manager: gnuplot with the pngcairo terminal "
				"is needed: install gnuplot-nox\n");
		goto out;
	}
	if (waterfall_read(db, path, where, 0, o.rows, &w) != 0)
		goto out;
	if (w.nrows == 0) {
		fprintf(stderr,
			"manager: %s: no connection matches the filter: "
			"nothing drawn\n",
			path);
		rc = 1;
		goto out;
	}
	if (w.nrows < w.total_rows)
		snprintf(cut, sizeof(cut), " (the first %zu of %zu rows)",
			 w.nrows, w.total_rows);
	if (asprintf(&title, "%s%s%s: %zu connections, %zu exchanges%s%s", path,
		     w.processes < 2 ? ", " : "",
		     w.processes < 2 ? w.rows[0].who : "", w.connections,
		     w.exchanges, strcmp(where, "1") ? " (filtered)" : "",
		     cut) < 0) {
		fprintf(stderr, "manager: out of memory\n");
		goto out;
	}
	p.dir = dir;
	if (!(tmp = report_tmp_dir()))
		goto out;
	/* made 0600 whatever the umask, as an export: gnuplot writes into it
	 * (an existing file keeps its mode) */
	if (!(made = files_create_private(o.out))) {
		fprintf(stderr, "manager: %s: %s\n", o.out, strerror(errno));
		goto out;
	}
	fclose(made);
	p.tmp = tmp;
	if (report_plots_begin(&p) != 0 ||
	    waterfall_plot(&p, &w, 0, name, title, png, !png) != 0 ||
	    report_plots_draw(&p) != 0) {
		unlink(o.out); /* no half-drawn file */
		goto out;
	}
	if (w.nrows < w.total_rows)
		fprintf(stderr,
			"manager: %s: the first %zu of %zu rows drawn (--rows "
			"N draws up to %d)\n",
			o.out, w.nrows, w.total_rows, WATERFALL_MAX_ROWS);
	if (!o.quiet)
		printf("%s\n", o.out);
	rc = 0;
out:
	report_plots_free(&p);
	if (tmp && !getenv("OBSERVE_KEEP_REPORT_DATA"))
		report_tmp_remove(tmp);
	free(tmp);
	free(title);
	free(dir);
	free(name);
	waterfall_free(&w);
	sqlite3_close(db);
	filter_free(&f);
	return rc;
}
