/* main.c - slicer: read spool files into the client database.
 *
 *   slicer [-o DB] [-q] SPOOL|DIR...
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

#include "store.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: slicer [-o DB] [-q] SPOOL|DIR...\n"
		"\n"
		"Reads the spool files that libobserve.so wrote (a file, or every\n"
		"*.spool file in a directory) into the SQLite database DB.\n"
		"Slicing the same spool again adds nothing; a spool that grew adds\n"
		"only what is new, and exchanges that were in flight are updated.\n"
		"\n"
		"  -o, --output DB   database (default ./observe.db; created)\n"
		"  -q, --quiet       no summary line\n"
		"  -h, --help        this text\n"
		"\n"
		"Exit status: 0 all read, 1 something skipped (see messages),\n"
		"2 usage or database error.\n"
		"Example:\n"
		"  slicer -o run.db ~/.local/state/observe/spool\n"
		"  sqlite3 run.db 'SELECT peer_addr, tw_ms, tr_ms FROM exchange_metrics'\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db_path = "observe.db";
	struct obs_ingest_stats stats = { 0 };
	bool quiet = false;
	char err[512];
	obs_store *store;
	int opt, worst = 0;

	while ((opt = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			db_path = optarg;
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
	if (optind >= argc) {
		fprintf(stderr, "slicer: no spool file or directory given\n");
		usage(stderr);
		return 2;
	}
	store = obs_store_open(db_path, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "slicer: %s\n", err);
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
	if (!quiet)
		fprintf(stderr,
			"slicer: %" PRIu64 " files, %" PRIu64
			" connections and %" PRIu64 " exchanges new, %" PRIu64
			" updated%s -> %s\n",
			stats.files, stats.connections_new,
			stats.exchanges_new, stats.rows_updated,
			stats.files_bad ? " (some input skipped)" : "",
			db_path);
	return worst;
}
