/* main.c - slicer: read spool files into the client database, filtered.
 *
 *   slicer [-o DB] [-q] [--delete] [FILTER...] SPOOL|DIR...
 *   slicer --follow [-o DB] [-q] [--delete] [--otlp URL]
 *          [--metrics ADDRESS:PORT] [FILTER...] DIR         (follow.c, otel.c)
 *   slicer export [-d DB] --format csv|jsonl|har|otlp [FILTER...] [-o FILE]
 *
 * Exit status: 0 everything read, 1 something was skipped (named on stderr;
 * every good record is still stored) or the layer lost records (its spool
 * was full), 2 usage or database error.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "follow.h"
#include "otel.h"
#include "push.h"
#include "store_pg.h"
#include "options.h"
#include "store.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: slicer [-o DB] [-q] [--delete] [FILTER...] SPOOL|DIR...\n"
		"       slicer --follow [-o DB] [-q] [--delete] [--otlp URL]\n"
		"              [--metrics ADDRESS:PORT] [FILTER...] DIR\n"
		"       slicer export [-d DB] --format csv|jsonl|har|otlp "
		"[FILTER...] [-o FILE]\n"
		"\n"
		"Reads the spool files that libobserve.so wrote (a file, or every\n"
		"*.spool file in a directory) into the SQLite database DB.\n"
		"Slicing the same spool again adds nothing; a spool that grew adds\n"
		"only what is new, and exchanges that were in flight are updated.\n"
		"\n"
		"  -o, --output DB   database (default ./observe.db; created), or\n"
		"                    a PostgreSQL central store postgresql://...\n"
		"                    (as manager pull -o takes it) to push to\n"
		"  -q, --quiet       no summary line\n"
		"  --delete          delete each spool file once it is stored\n"
		"                    and final: its process is gone, or it is\n"
		"                    a full segment (the spool rolled over)\n"
		"                    with no record in flight\n"
		"  -f, --follow      stay running: ingest DIR's spools as they are\n"
		"                    written (inotify, in batches; nothing done\n"
		"                    while no writer runs) until SIGTERM or SIGINT,\n"
		"                    then store what is there and exit\n"
		"  --otlp URL        with --follow: push each exchange, once it\n"
		"                    is final, as an OpenTelemetry span to the\n"
		"                    OTLP/HTTP receiver at URL (URL/v1/traces;\n"
		"                    default OTEL_EXPORTER_OTLP_ENDPOINT), and\n"
		"                    the metrics (URL/v1/metrics); what was sent\n"
		"                    is kept in DB: a restart goes on from there\n"
		"  --metrics ADDRESS:PORT  with --follow: serve the metrics to\n"
		"                    Prometheus at http://ADDRESS:PORT/metrics\n"
		"                    (PORT alone: on 127.0.0.1)\n"
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
		"  --pid PID         the process id\n"
		"  -h, --help        this text\n"
		"\n"
		"Exit status: 0 all read, 1 something skipped or records lost\n"
		"by the layer (spool full; see messages), 2 usage or database\n"
		"error.\n"
		"Example:\n"
		"  slicer -o run.db ~/.local/state/observe/spool\n"
		"  slicer -o slow.db --where 'tr_ms > 50' --peer 127.0.0.1:8080 spool/\n"
		"  slicer --follow -o run.db --otlp http://127.0.0.1:4318 \\\n"
		"         --metrics 127.0.0.1:9464 ~/.local/state/observe/spool\n"
		"  slicer export -d run.db --format har -o run.har\n"
		"  slicer export -d run.db --format otlp -o run.otlp.json   "
		"(OpenTelemetry)\n"
		"  sqlite3 run.db 'SELECT peer_addr, tw_ms, tr_ms FROM exchange_metrics'\n");
}

struct slicer_options {
	const char *db_path;	    /* NULL: not given */
	const char *otlp, *metrics; /* --otlp URL, --metrics ADDRESS:PORT */
	bool quiet, follow;
	bool delete_stored;
};

static const struct cmd_option options[] = {
	{ "output", 'o', CMD_TEXT, offsetof(struct slicer_options, db_path) },
	{ "quiet", 'q', CMD_FLAG, offsetof(struct slicer_options, quiet) },
	{ "delete", 0, CMD_FLAG,
	  offsetof(struct slicer_options, delete_stored) },
	{ "follow", 'f', CMD_FLAG, offsetof(struct slicer_options, follow) },
	{ "otlp", 0, CMD_TEXT, offsetof(struct slicer_options, otlp) },
	{ "metrics", 0, CMD_TEXT, offsetof(struct slicer_options, metrics) },
	{ NULL },
};
static const struct cmdline cmdline = { "slicer", options, usage };

static int64_t run_otel(void *ctx, int64_t now_ms)
{
	return slicer_otel_run(ctx, now_ms);
}

/* slicer --follow, with OpenTelemetry's push and metrics when asked. */
static int follow(const struct slicer_options *o, obs_store *store,
		  const char *dir, struct obs_ingest_stats *stats)
{
	struct slicer_otel *otel;
	struct follow_hook hook = { run_otel, NULL };
	char err[512];
	int none, worst, pushed;

	otel = slicer_otel_start(obs_store_db(store), o->otlp, o->metrics,
				 stderr, &none, err, sizeof(err));
	if (!otel && !none) {
		fprintf(stderr, "slicer: %s\n", err);
		return 2;
	}
	hook.ctx = otel;
	worst = slicer_follow(store, dir, stats, stderr, otel ? &hook : NULL);
	pushed = slicer_otel_stop(otel, slicer_follow_now_ms());
	return worst > pushed ? worst : pushed;
}

/* slicer after its options: ingest, follow or push. */
static int slice(const struct slicer_options *o, struct filter *f, int argc,
		 char **argv)
{
	const char *db_path;
	bool quiet, pushing = false;
	struct obs_ingest_stats stats = { 0 };
	char err[512];
	obs_store *store;
	struct push *push = NULL;
	int64_t pushed = 0;
	const char *name;
	char shown[600];
	int worst = 0;

	db_path = o->db_path ? o->db_path : "observe.db";
	quiet = o->quiet;
	if (optind >= argc && o->db_path) {
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
	if ((o->otlp || o->metrics) && !o->follow) {
		fprintf(stderr, "slicer: --otlp and --metrics go with --follow "
				"(a database is pushed by manager export "
				"--otlp)\n");
		return 2;
	}
	if (o->follow && optind != argc - 1) {
		fprintf(stderr, "slicer: --follow takes one directory\n");
		usage(stderr);
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "slicer: no spool file or directory given\n");
		usage(stderr);
		return 2;
	}
	/* An invalid expression is refused before anything is written: check
	 * it on a scratch in-memory database that has the schema. */
	if (f->expr) {
		obs_store *scratch =
			obs_store_open(":memory:", err, sizeof(err));
		if (!scratch ||
		    obs_store_check_expr(obs_store_db(scratch), f->expr, err,
					 sizeof(err)) != 0) {
			fprintf(stderr, "slicer: %s\n", err);
			obs_store_close(scratch);
			return 2;
		}
		obs_store_close(scratch);
	}
	if (obs_pg_is_uri(db_path)) {
		if (o->follow) {
			fprintf(stderr,
				"slicer: --follow writes an SQLite database: "
				"push that with manager pull -o URI "
				"(docs/fleet.md)\n");
			return 2;
		}
		if (!(push = push_open(db_path, err, sizeof(err)))) {
			fprintf(stderr, "slicer: %s\n", err);
			return 2;
		}
		db_path = push_db(push);
		pushing = true;
	}
	if (o->follow)
		slicer_follow_block_signals();
	store = obs_store_open(db_path, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "slicer: %s\n", err);
		if (push)
			push_close(push, false, &pushed, err, sizeof(err));
		return 2;
	}
	if (!quiet && isatty(STDERR_FILENO))
		obs_store_set_progress(store, stderr);
	obs_store_set_delete(store, o->delete_stored);
	if (f->expr && obs_store_set_filter(store, f->expr, err, sizeof(err))) {
		fprintf(stderr, "slicer: %s\n", err);
		obs_store_close(store);
		return 2;
	}
	if (o->follow)
		worst = follow(o, store, argv[optind], &stats);
	else /* a process's segments in order, however they were given */
		qsort(argv + optind, (size_t)(argc - optind), sizeof(*argv),
		      obs_store_spool_order);
	for (int i = optind; i < argc && !o->follow; i++) {
		int rc = obs_store_ingest_path(store, argv[i], &stats, stderr,
					       NULL, NULL, 0);
		if (rc < 0)
			worst = 2;
		else if (rc > 0 && worst == 0)
			worst = 1;
	}
	obs_store_close(store);
	if (pushing) {
		name = push_name(push);
		snprintf(shown, sizeof(shown), "%s", name);
		if (push_close(push, worst < 2, &pushed, err, sizeof(err))) {
			fprintf(stderr, "slicer: %s\n", err);
			worst = 2;
		}
		db_path = shown;
	}
	/* what the layer could not write is missing from the database: the
	 * user must know, and a script too */
	if (stats.records_dropped && worst == 0)
		worst = 1;
	if (!quiet) {
		fprintf(stderr,
			"slicer: %" PRIu64 " files, %" PRIu64
			" connections and %" PRIu64 " exchanges new, %" PRIu64
			" updated, %" PRIu64 " left out by the filter%s",
			stats.files, stats.connections_new, stats.exchanges_new,
			stats.rows_updated, stats.exchanges_filtered,
			stats.files_bad ? " (some input skipped)" : "");
		if (stats.records_dropped)
			fprintf(stderr,
				", %" PRIu64 " records lost by the layer "
				"(spool full) in %" PRIu64 " processes",
				stats.records_dropped, stats.processes_dropped);
		if (stats.files_deleted)
			fprintf(stderr, ", %" PRIu64 " files deleted",
				stats.files_deleted);
		fprintf(stderr, " -> %s", db_path);
		if (pushing)
			fprintf(stderr, " (%" PRId64 " exchanges new there)",
				pushed);
		fprintf(stderr, "\n");
	}
	return worst;
}

int main(int argc, char **argv)
{
	struct slicer_options o = { 0 };
	struct filter f;
	int status;

	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return slicer_export(argc - 1, argv + 1);
	filter_init(&f);
	if (cmdline_parse(&cmdline, &f, &o, argc, argv, &status) == 0)
		status = slice(&o, &f, argc, argv);
	filter_free(&f);
	return status;
}
