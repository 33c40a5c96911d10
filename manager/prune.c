/* prune.c - manager prune: retention, the days before a date dropped from
 * a central store (SQLite or PostgreSQL: common/merge.c).
 *
 *   manager prune --before YYYY-MM-DD [-q] STORE
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "merge.h"
#include "options.h"
#include "store_pg.h"
#include "usage.h"

struct prune_options {
	const char *before;
	bool quiet;
};

static const struct cmd_option options[] = {
	{ "before", 'b', CMD_TEXT, offsetof(struct prune_options, before) },
	{ "quiet", 'q', CMD_FLAG, offsetof(struct prune_options, quiet) },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

/* YYYY-MM-DD as its UTC midnight in epoch ns; -1 when it is no date. */
static int64_t parse_day(const char *text)
{
	struct tm tm = { 0 };
	const char *end = strptime(text, "%Y-%m-%d", &tm);
	time_t t;

	if (!end || *end || tm.tm_year < 70)
		return -1;
	t = timegm(&tm);
	return t < 0 ? -1 : (int64_t)t * 1000000000;
}

int cmd_prune(int argc, char **argv)
{
	struct prune_options o = { 0 };
	obs_central *central;
	int64_t before, connections = 0, exchanges = 0;
	char err[800];
	int status;

	if (cmdline_parse(&cmdline, NULL, &o, argc, argv, &status) != 0)
		return status;
	if (!o.before || optind != argc - 1) {
		manager_usage(stderr);
		return 2;
	}
	if ((before = parse_day(o.before)) < 0) {
		fprintf(stderr,
			"manager: --before %s: not a date (YYYY-MM-DD)\n",
			o.before);
		return 2;
	}
	/* a store to prune exists: a typo must not create one */
	if (!obs_pg_is_uri(argv[optind]) && access(argv[optind], W_OK) != 0) {
		fprintf(stderr, "manager: %s: %m\n", argv[optind]);
		return 2;
	}
	if (!(central = obs_central_open(argv[optind], err, sizeof(err)))) {
		fprintf(stderr, "manager: %s\n", err);
		return 2;
	}
	status = obs_central_prune(central, before, &connections, &exchanges,
				   err, sizeof(err));
	if (status != 0)
		fprintf(stderr, "manager: %s\n", err);
	else if (!o.quiet)
		fprintf(stderr,
			"manager: %" PRId64 " connections, %" PRId64
			" exchanges before %s removed from %s\n",
			connections, exchanges, o.before,
			obs_central_name(central));
	obs_central_close(central);
	return status ? 2 : 0;
}
