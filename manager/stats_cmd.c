/* stats_cmd.c - manager stats: the statistics table (table.c) or one
 * analysis (--view, analyses.c) of a central database, filtered.
 *
 *   manager stats CENTRAL.db [--by client|server|program|path] [FILTER...]
 *                 [--csv]
 *   manager stats CENTRAL.db --view endings|keepalive|size|family
 *                 [--window SECONDS] [FILTER...] [--csv]
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses.h"
#include "commands.h"
#include "db.h"
#include "options.h"
#include "store.h"
#include "table.h"
#include "usage.h"

struct stats_options {
	const char *by, *view;
	double window_s;
	bool csv;
};

static int take_by(void *opts, const char *arg)
{
	struct stats_options *o = opts;

	if (strcmp(arg, "client") && strcmp(arg, "server") &&
	    strcmp(arg, "program") && strcmp(arg, "path")) {
		fprintf(stderr,
			"manager: --by %s: client, server, program or path\n",
			arg);
		return 2;
	}
	o->by = arg;
	return 0;
}

static int take_window(void *opts, const char *arg)
{
	struct stats_options *o = opts;
	char *end;

	o->window_s = strtod(arg, &end);
	if (*end || !(o->window_s > 0)) {
		fprintf(stderr, "manager: --window %s: seconds > 0\n", arg);
		return 2;
	}
	return 0;
}

static const struct cmd_option options[] = {
	{ "by", 'b', CMD_OWN, 0, take_by },
	{ "view", 0, CMD_TEXT, offsetof(struct stats_options, view) },
	{ "window", 0, CMD_OWN, 0, take_window },
	{ "csv", 'c', CMD_FLAG, offsetof(struct stats_options, csv) },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

int cmd_stats(int argc, char **argv)
{
	struct stats_options o = { .by = "client" };
	struct filter f;
	const char *where;
	char err[512];
	sqlite3 *db = NULL;
	int rc = 2;

	filter_init(&f);
	if (cmdline_parse(&cmdline, &f, &o, argc, argv, &rc) != 0)
		goto out;
	rc = 2;
	if (optind != argc - 1) {
		manager_usage(stderr);
		goto out;
	}
	where = f.expr ? f.expr : "1";
	if (!(db = db_open_where(argv[optind], where)))
		goto out;
	/* on stderr: the output stays a table, or CSV */
	if (db_dropped(db, err, sizeof(err)))
		fprintf(stderr, "manager: warning: %s: the figures miss them\n",
			err);
	if (o.view)
		rc = analyses_view(db, o.view, where, o.window_s, o.csv,
				   stdout);
	else
		rc = table_stats(db, o.by, where, o.csv, stdout);
out:
	sqlite3_close(db);
	filter_free(&f);
	return rc;
}
