/* export_cmd.c - manager export: a store's exchanges pushed as OpenTelemetry
 * traces to an OTLP/HTTP receiver, from where the last export to that
 * receiver stopped (its mark in the store: otel/cursor.h), and the store's
 * metrics pushed once as OTLP metrics (docs/otel.md). The store is an
 * SQLite file or a PostgreSQL URI: the same export reads either
 * (otel/source.h).
 *
 *   manager export [--otlp URL] [-q] STORE
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "exporter.h"
#include "feed.h"
#include "files.h"
#include "metrics.h"
#include "options.h"
#include "source.h"
#include "store.h"
#include "store_pg.h"
#include "usage.h"

/* failed requests in a row before the export gives up (after waits of 1,
 * 2, 4, 8 and 16 s, or what Retry-After asked) */
#define ATTEMPTS 6
/* a Retry-After longer than this ends the run instead */
#define WAIT_MAX_MS 60000

struct export_options {
	const char *otlp;
	bool quiet;
};

static const struct cmd_option options[] = {
	{ "otlp", 0, CMD_TEXT, offsetof(struct export_options, otlp) },
	{ "quiet", 'q', CMD_FLAG, offsetof(struct export_options, quiet) },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000),
			       (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Every batch there is; 0 all sent, 1 given up with spans left. */
static int push_traces(struct otel_exporter *x)
{
	int waits = 0;

	for (;;) {
		enum otel_step what;
		int64_t wait;

		if (otel_exporter_step(x, otel_now_ms(), &wait, &what) != 0)
			return 2;
		if (what == OTEL_IDLE)
			return 0;
		if (what == OTEL_MORE) {
			waits = 0;
			continue;
		}
		if (++waits >= ATTEMPTS || wait > WAIT_MAX_MS) {
			fprintf(stderr,
				"manager: %s: no answer after %d tries; what "
				"is left goes at the next export\n",
				otel_exporter_url(x), waits);
			return 1;
		}
		sleep_ms(wait);
	}
}

/* The store's metrics, once, as an OTLP request: cumulated since its
 * first connection. 0, or -1 (said). */
static int push_metrics(struct otel_exporter *x, struct otel_source *src)
{
	struct otel_metrics *m = otel_metrics_new();
	struct otel_feed *feed = m ? otel_feed_new(m) : NULL;
	sqlite3_stmt *st = NULL;
	int64_t start_ns = 0;
	struct timespec now;
	char err[512], *body = NULL;
	size_t n = 0;
	FILE *out = NULL;
	int rc = -1;

	if (!feed) {
		fprintf(stderr, "manager: out of memory\n");
		goto out;
	}
	if (otel_feed_run(feed, src, err, sizeof(err)) != 0 ||
	    otel_source_query(src, "SELECT min(t1_ns) FROM connection", NULL, 0,
			      NULL, 0, 0, &st, err, sizeof(err)) != 0) {
		fprintf(stderr, "manager: %s\n", err);
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		start_ns = sqlite3_column_int64(st, 0);
	clock_gettime(CLOCK_REALTIME, &now);
	if (!(out = open_memstream(&body, &n)))
		goto out;
	otel_metrics_otlp(m, out, "manager", start_ns,
			  (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	if (fclose(out) == 0)
		rc = otel_exporter_metrics(x, body, n);
out:
	sqlite3_finalize(st);
	free(body);
	otel_feed_free(feed);
	otel_metrics_free(m);
	return rc;
}

/* What an export reads: an SQLite store, or a PostgreSQL one. */
struct store {
	obs_store *sqlite;
	obs_pg *pg;
	struct otel_source *src;
};

/* The store at path (a file, or a postgresql:// URI) opened. 0, or -1
 * with the reason in err. */
static int store_open(struct store *s, const char *path, char *err,
		      size_t errlen)
{
	char why[600];

	memset(s, 0, sizeof(*s));
	if (obs_pg_is_uri(path)) {
		if (!(s->pg = obs_pg_open(path, err, errlen)) ||
		    !(s->src = otel_source_pg(s->pg, err, errlen)))
			return -1;
		return 0;
	}
	if (files_check_regular(path, 0, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	if (!(s->sqlite = obs_store_open(path, err, errlen)) ||
	    !(s->src =
		      otel_source_sqlite(obs_store_db(s->sqlite), err, errlen)))
		return -1;
	return 0;
}

static void store_close(struct store *s)
{
	otel_source_close(s->src);
	obs_store_close(s->sqlite);
	obs_pg_close(s->pg);
}

int cmd_export(int argc, char **argv)
{
	struct export_options o = { 0 };
	struct otel_export_counts c;
	struct otel_exporter *x = NULL;
	struct store store;
	char err[800];
	int status, rc = 2;

	if (cmdline_parse(&cmdline, NULL, &o, argc, argv, &status) != 0)
		return status;
	if (optind != argc - 1) {
		manager_usage(stderr);
		return 2;
	}
	if (store_open(&store, argv[optind], err, sizeof(err)) != 0 ||
	    !(x = otel_exporter_open(store.src, o.otlp, "manager", stderr, err,
				     sizeof(err)))) {
		fprintf(stderr, "manager: %s\n", err);
		goto out;
	}
	rc = push_traces(x);
	if (rc < 2 && push_metrics(x, store.src) != 0 && rc == 0)
		rc = 1;
	otel_exporter_counts(x, &c);
	if (c.spans_lost && rc == 0)
		rc = 1;
	if (!o.quiet)
		fprintf(stderr,
			"manager: %s: %llu spans sent, %llu refused or "
			"rejected, %llu retries\n",
			otel_exporter_url(x), (unsigned long long)c.spans_sent,
			(unsigned long long)c.spans_lost,
			(unsigned long long)c.retries);
out:
	otel_exporter_close(x);
	store_close(&store);
	return rc;
}
