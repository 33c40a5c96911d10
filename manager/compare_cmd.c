/* compare_cmd.c - manager compare: before and after (compare.c), two
 * databases or one database with a filter per side.
 *
 *   manager compare A.db [B.db] [--by server|path|client] [--a-where EXPR]
 *                   [--b-where EXPR] [FILTER...] [--csv]
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "compare.h"
#include "db.h"
#include "options.h"
#include "store.h"
#include "usage.h"

struct compare_options {
	const char *by, *a_where, *b_where;
	bool csv;
};

static int take_by(void *opts, const char *arg)
{
	struct compare_options *o = opts;

	if (strcmp(arg, "server") && strcmp(arg, "path") &&
	    strcmp(arg, "client")) {
		fprintf(stderr, "manager: --by %s: server, path or client\n",
			arg);
		return 2;
	}
	o->by = arg;
	return 0;
}

static const struct cmd_option options[] = {
	{ "by", 'b', CMD_OWN, 0, take_by },
	{ "a-where", 0, CMD_TEXT, offsetof(struct compare_options, a_where) },
	{ "b-where", 0, CMD_TEXT, offsetof(struct compare_options, b_where) },
	{ "csv", 'c', CMD_FLAG, offsetof(struct compare_options, csv) },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

/* The side's filter: the common one and its own; sqlite3_malloc'd, NULL
 * when out of memory. */
static char *side_where(const char *common, const char *own)
{
	return sqlite3_mprintf("(%s) AND (%s)", common ? common : "1",
			       own ? own : "1");
}

int cmd_compare(int argc, char **argv)
{
	struct compare_options o = { .by = "server" };
	struct compare c = { 0 };
	struct compare_side side[2] = { 0 };
	struct filter f;
	char err[512], *where[2] = { NULL, NULL };
	int rc = 2;

	filter_init(&f);
	if (cmdline_parse(&cmdline, &f, &o, argc, argv, &rc) != 0)
		goto out;
	rc = 2;
	if (optind != argc - 1 && optind != argc - 2) {
		manager_usage(stderr);
		goto out;
	}
	where[0] = side_where(f.expr, o.a_where);
	where[1] = side_where(f.expr, o.b_where);
	if (!where[0] || !where[1]) {
		fprintf(stderr, "manager: out of memory\n");
		goto out;
	}
	for (int s = 0; s < 2; s++) {
		side[s].db_path = argv[optind + (s && optind == argc - 2)];
		side[s].where = where[s];
		if (!(side[s].db = db_open(side[s].db_path)))
			goto out;
		if (obs_store_check_expr(side[s].db, where[s], err,
					 sizeof(err))) {
			fprintf(stderr, "manager: %s: %s\n", side[s].db_path,
				err);
			goto out;
		}
	}
	if (compare_read(&c, side, o.by) != 0)
		goto out;
	if (!o.csv)
		for (int s = 0; s < 2; s++)
			printf("%c: %s%s%s\n", s ? 'B' : 'A', side[s].db_path,
			       strcmp(where[s], "(1) AND (1)") ? ", where "
							       : "",
			       strcmp(where[s], "(1) AND (1)") ? where[s] : "");
	if (compare_table(&c, o.by, o.csv, stdout) == 0)
		rc = 0;
out:
	compare_free(&c);
	for (int s = 0; s < 2; s++) {
		sqlite3_close(side[s].db);
		sqlite3_free(where[s]);
	}
	filter_free(&f);
	return rc;
}
