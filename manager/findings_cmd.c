/* findings_cmd.c - manager findings: where the users' time went and what
 * to change (findings.c, docs/findings.md).
 *
 *   manager findings DB [FILTER...] [--csv]
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "commands.h"
#include "db.h"
#include "findings.h"
#include "options.h"
#include "usage.h"

struct findings_options {
	bool csv;
};

static const struct cmd_option options[] = {
	{ "csv", 'c', CMD_FLAG, offsetof(struct findings_options, csv) },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

int cmd_findings(int argc, char **argv)
{
	struct findings_options o = { 0 };
	struct findings found = { 0 };
	struct filter f;
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
	if (!(db = db_open_where(argv[optind], f.expr)))
		goto out;
	if (findings_collect(db, f.expr, &found) != 0)
		goto out;
	findings_print(&found, o.csv, true, stdout);
	rc = 0;
out:
	findings_free(&found);
	sqlite3_close(db);
	filter_free(&f);
	return rc;
}
