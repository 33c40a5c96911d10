/* main.c - slicer: read spool files into the client database, filtered.
 *
 *   slicer [-o DB] [-q] [FILTER...] SPOOL|DIR...
 *   slicer export [-d DB] --format csv|jsonl|har [FILTER...] [-o FILE]
 *
 * Exit status: 0 everything read, 1 something was skipped (named on stderr;
 * every good record is still stored), 2 usage or database error.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "filter.h"
#include "store.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: slicer [-o DB] [-q] [FILTER...] SPOOL|DIR...\n"
		"       slicer export [-d DB] --format csv|jsonl|har [FILTER...] "
		"[-o FILE]\n"
		"\n"
		"Reads the spool files that libobserve.so wrote (a file, or every\n"
		"*.spool file in a directory) into the SQLite database DB.\n"
		"Slicing the same spool again adds nothing; a spool that grew adds\n"
		"only what is new, and exchanges that were in flight are updated.\n"
		"\n"
		"  -o, --output DB   database (default ./observe.db; created)\n"
		"  -q, --quiet       no summary line\n"
		"Filters (all must hold; exchanges left out are not stored):\n"
		"  -w, --where EXPR  SQL boolean expression over the columns of\n"
		"                    exchange_metrics, evaluated by SQLite, e.g.\n"
		"                    'peer_port = 443 and dr > 10000 and tr_ms > 50'\n"
		"  --peer HOST[:PORT]  a name (every address it resolves to) or\n"
		"                    an address, [v6]:port for IPv6 with a port\n"
		"  --program NAME    program name or full path\n"
		"  --since TIME, --until TIME  exchange start, seconds since the\n"
		"                    epoch or 'YYYY-MM-DD[ HH:MM:SS]' (UTC)\n"
		"  --min-bytes N     Ds + Dr at least N\n"
		"  -h, --help        this text\n"
		"\n"
		"Exit status: 0 all read, 1 something skipped (see messages),\n"
		"2 usage or database error.\n"
		"Example:\n"
		"  slicer -o run.db ~/.local/state/observe/spool\n"
		"  slicer -o slow.db --where 'tr_ms > 50' --peer 127.0.0.1:8080 spool/\n"
		"  slicer export -d run.db --format har -o run.har\n"
		"  sqlite3 run.db 'SELECT peer_addr, tw_ms, tr_ms FROM exchange_metrics'\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		FILTER_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db_path = "observe.db";
	bool db_given = false;
	struct obs_ingest_stats stats = { 0 };
	bool quiet = false;
	char err[512];
	obs_store *store;
	struct filter f;
	int opt, worst = 0, bad;

	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return slicer_export(argc - 1, argv + 1);
	filter_init(&f);
	while ((opt = getopt_long(argc, argv, "o:qw:h", longopts, NULL)) != -1) {
		bad = filter_option(&f, opt, optarg, err, sizeof(err));
		if (bad < 0) {
			fprintf(stderr, "slicer: %s\n", err);
			return 2;
		}
		if (bad == 0)
			continue;
		switch (opt) {
		case 'o':
			db_path = optarg;
			db_given = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc && db_given) {
		/* slicer -o DB alone: create the database, or bring an older
		 * one up to this version's schema */
		store = obs_store_open(db_path, err, sizeof(err));
		if (!store) {
			fprintf(stderr, "slicer: %s\n", err);
			return 2;
		}
		obs_store_close(store);
		if (!quiet)
			fprintf(stderr, "slicer: %s: schema version %d\n",
				db_path, OBS_SCHEMA_VERSION);
		return 0;
	}
	if (optind >= argc) {
		fprintf(stderr, "slicer: no spool file or directory given\n");
		usage(stderr);
		return 2;
	}
	/* An invalid expression is refused before anything is written: check
	 * it on a scratch in-memory database that has the schema. */
	if (f.expr) {
		obs_store *scratch = obs_store_open(":memory:", err, sizeof(err));
		if (!scratch ||
		    obs_store_check_expr(obs_store_db(scratch), f.expr, err,
					 sizeof(err)) != 0) {
			fprintf(stderr, "slicer: %s\n", err);
			obs_store_close(scratch);
			return 2;
		}
		obs_store_close(scratch);
	}
	store = obs_store_open(db_path, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "slicer: %s\n", err);
		return 2;
	}
	if (!quiet && isatty(STDERR_FILENO))
		obs_store_set_progress(store, stderr);
	if (f.expr && obs_store_set_filter(store, f.expr, err, sizeof(err))) {
		fprintf(stderr, "slicer: %s\n", err);
		obs_store_close(store);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		int rc = obs_store_ingest_path(store, argv[i], &stats, stderr,
					       NULL, NULL, 0);
		if (rc < 0)
			worst = 2;
		else if (rc > 0 && worst == 0)
			worst = 1;
	}
	obs_store_close(store);
	filter_free(&f);
	if (!quiet)
		fprintf(stderr,
			"slicer: %" PRIu64 " files, %" PRIu64
			" connections and %" PRIu64 " exchanges new, %" PRIu64
			" updated, %" PRIu64 " left out by the filter%s -> %s\n",
			stats.files, stats.connections_new,
			stats.exchanges_new, stats.rows_updated,
			stats.exchanges_filtered,
			stats.files_bad ? " (some input skipped)" : "",
			db_path);
	return worst;
}
