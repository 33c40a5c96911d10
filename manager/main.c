/* main.c - manager: collect the databases of many client machines into
 * one, compare them, report.
 *
 *   manager pull -o CENTRAL.db SOURCE...            (pull.c)
 *   manager stats CENTRAL.db [--by ...] [filters]    (here)
 *   manager report CENTRAL.db -o DIR [filters]       (report.c)
 *
 * stats: count, mean, p50, p90, p99 and max of Tt, Te, Ts, Tw, Tr and the
 * rates Rs, Rr, Ra. Percentiles are exact, by nearest rank: the p-th
 * percentile of n sorted values is the value at rank ceil(p/100 * n).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "filter.h"
#include "manager.h"

void manager_usage(FILE *out)
{
	fprintf(out,
		"usage: manager pull -o CENTRAL.db [-e SSH-COMMAND] SOURCE...\n"
		"       manager stats CENTRAL.db [--by client|server|program|path]\n"
		"                     [--where EXPR] [FILTER...] [--csv]\n"
		"       manager stats CENTRAL.db --view endings|keepalive|size|family\n"
		"                     [--window SECONDS] [--where EXPR] [--csv]\n"
		"       manager report CENTRAL.db -o DIR [--where EXPR] [FILTER...] [-q]\n"
		"\n"
		"Merges client databases (made by slicer or observe) into\n"
		"CENTRAL.db. SOURCE is a database, a directory of *.db files, or\n"
		"ssh://[user@]host[:port]/path/observe.db: there, sqlite3 (or\n"
		"python3) takes a consistent snapshot of the live database, which\n"
		"comes back over the same ssh connection (BatchMode: keys or an\n"
		"agent, never a password prompt).\n"
		"Each source is checked and merged in a transaction of its own;\n"
		"pulling it again adds only what is new. A source that fails is\n"
		"named with the reason and skipped.\n"
		"\n"
		"  -o, --output DB   the central database (created)\n"
		"  -e, --rsh CMD     the ssh command and its options (default ssh),\n"
		"                    e.g. -e 'ssh -i key -o UserKnownHostsFile=kh'\n"
		"  -q, --quiet       no summary line, no progress bar\n"
		"\n"
		"Exit status: 0 all merged, 1 some source skipped, 2 usage or\n"
		"central database error.\n"
		"\n"
		"stats prints count, mean, p50, p90, p99 and max of Tt, Te (per\n"
		"connection), Ts, Tw, Tr (per exchange) and the rates Rs, Rr, Ra\n"
		"per group. Percentiles are exact (nearest rank). Filters as in\n"
		"slicer: --where EXPR over exchange_metrics, --peer, --program,\n"
		"--since, --until, --min-bytes.\n"
		"--view shows an analysis instead (docs/analyses.md): endings (how\n"
		"connections ended per server and --window, and the server state:\n"
		"normal, saturated, stopped), keepalive (idle gaps, the server's\n"
		"idle close, a recommended timeout), size (T = a*Dr + b per\n"
		"server, with Tw + Trecv for T), family (IPv4/IPv6, TLS/plain).\n"
		"report writes DIR/index.html (open it in a browser, from disk),\n"
		"DIR/summary.txt and every plot as PNG and SVG (gnuplot).\n"
		"Examples:\n"
		"  manager pull -o central.db client-a.db clients/ \\\n"
		"      ssh://lab@host-b/var/lib/observe/observe.db\n"
		"  manager stats central.db --by server --where 'dr > 10000'\n"
		"  manager report central.db -o report/\n");
}

sqlite3 *manager_open(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int version = -1;
	char why[300] = "";

	if (access(path, R_OK) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 10000);
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		snprintf(why, sizeof(why), "not an SQLite database (%s)",
			 sqlite3_errmsg(db));
	else
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (*why)
		;
	else if (version == 0)
		snprintf(why, sizeof(why),
			 "not an observe database (an SQLite database with "
			 "no observe schema)");
	else if (version < OBS_SCHEMA_VERSION)
		snprintf(why, sizeof(why),
			 "made by an older observe (schema version %d; this "
			 "manager reads %d): `slicer -o FILE` upgrades it",
			 version, OBS_SCHEMA_VERSION);
	else if (version > OBS_SCHEMA_VERSION)
		snprintf(why, sizeof(why),
			 "schema version %d is newer than this manager's (%d)",
			 version, OBS_SCHEMA_VERSION);
	if (*why) {
		fprintf(stderr, "manager: %s: %s\n", path, why);
		sqlite3_close(db);
		return NULL;
	}
	obs_store_register_functions(db);
	return db;
}

/* ---- stats ----------------------------------------------------------------
 */

struct metric {
	const char *name; /* as printed */
	const char *column;
	bool per_connection; /* from connection_metrics */
	double scale;	     /* printed = stored * scale */
};

static const struct metric metrics[] = {
	/* rates are stored in bytes per second, shown in MB/s (10^6 B/s) */
	{ "Tt ms", "tt_ms", true, 1 },	  { "Te ms", "te_ms", true, 1 },
	{ "Ts ms", "ts_ms", false, 1 },	  { "Tw ms", "tw_ms", false, 1 },
	{ "Tr ms", "tr_ms", false, 1 },	  { "Rs MB/s", "rs", false, 1e-6 },
	{ "Rr MB/s", "rr", false, 1e-6 }, { "Ra MB/s", "ra", true, 1e-6 },
};

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the value at rank ceil(p/100 * n), 1-based. */
double manager_percentile(const double *sorted, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)n);

	if ((double)rank < p / 100.0 * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void emit(FILE *out, bool csv, const char *group, const char *metric,
		 double *v, size_t n)
{
	double sum = 0;

	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), dbl_cmp);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	if (csv) {
		fputc('"', out);
		for (const char *c = group; *c; c++) {
			if (*c == '"')
				fputc('"', out);
			fputc(*c, out);
		}
		fprintf(out, "\",%s,%zu,%.6f,%.6f,%.6f,%.6f,%.6f\n", metric, n,
			sum / (double)n, manager_percentile(v, n, 50),
			manager_percentile(v, n, 90),
			manager_percentile(v, n, 99), v[n - 1]);
	} else
		fprintf(out,
			"%-24.24s %-8s %8zu %12.3f %12.3f %12.3f %12.3f %12.3f\n",
			group, metric, n, sum / (double)n,
			manager_percentile(v, n, 50),
			manager_percentile(v, n, 90),
			manager_percentile(v, n, 99), v[n - 1]);
}

static int stats_metric(sqlite3 *db, const struct metric *m, const char *by,
			const char *where, bool csv, FILE *out)
{
	const char *group =
		strcmp(by, "server") == 0    ? "peer_addr || ':' || peer_port"
		: strcmp(by, "program") == 0 ? "program"
		: strcmp(by, "path") == 0
			? (m->per_connection ? "'(connections)'"
					     : "coalesce(path, '(unknown)')")
			: "client";
	char *conns = m->per_connection ? manager_conn_filter(where) : NULL;
	char *sql =
		m->per_connection
			? sqlite3_mprintf(
				  "SELECT %s, %s FROM connection_metrics m WHERE %s IS "
				  "NOT NULL AND %s ORDER BY 1",
				  group, m->column, m->column, conns)
			: sqlite3_mprintf(
				  "SELECT %s, %s FROM exchange_metrics WHERE "
				  "%s IS NOT NULL AND (%s) ORDER BY 1",
				  group, m->column, m->column, where);
	sqlite3_stmt *st = NULL;
	double *v = NULL;
	size_t n = 0, cap = 0;
	char current[256] = "";
	int rc;

	sqlite3_free(conns);
	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
		sqlite3_free(sql);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *g = (const char *)sqlite3_column_text(st, 0);

		if (!g)
			g = "(unknown)";
		if (strcmp(g, current) != 0) {
			emit(out, csv, current, m->name, v, n);
			n = 0;
			snprintf(current, sizeof(current), "%s", g);
		}
		if (n == cap) {
			double *more;
			cap = cap ? cap * 2 : 1024;
			more = realloc(v, cap * sizeof(*v));
			if (!more) {
				rc = SQLITE_NOMEM;
				break;
			}
			v = more;
		}
		v[n++] = sqlite3_column_double(st, 1) * m->scale;
	}
	if (rc == SQLITE_DONE)
		emit(out, csv, current, m->name, v, n);
	free(v);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc == SQLITE_DONE ? 0 : -1;
}

int manager_stats_table(sqlite3 *db, const char *by, const char *where,
			bool csv, FILE *out)
{
	int rc = 0;

	if (csv)
		fprintf(out, "group,metric,count,mean,p50,p90,p99,max\n");
	else
		fprintf(out, "%-24s %-8s %8s %12s %12s %12s %12s %12s\n", by,
			"metric", "count", "mean", "p50", "p90", "p99", "max");
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (stats_metric(db, &metrics[i], by, where, csv, out) != 0)
			rc = 2;
	return rc;
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "view", required_argument, NULL, 'V' },
		{ "window", required_argument, NULL, 'W' },
		{ "csv", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *by = "client", *view = NULL;
	double window_s = 0;
	bool csv = false;
	struct filter f;
	char err[512];
	sqlite3 *db = NULL;
	int opt, rc = 2;

	filter_init(&f);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "b:w:ch", longopts, NULL)) !=
	       -1) {
		int bad = filter_option(&f, opt, optarg, err, sizeof(err));

		if (bad < 0) {
			fprintf(stderr, "manager: %s\n", err);
			goto out;
		}
		if (bad == 0)
			continue;
		switch (opt) {
		case 'b':
			by = optarg;
			if (strcmp(by, "client") && strcmp(by, "server") &&
			    strcmp(by, "program") && strcmp(by, "path")) {
				fprintf(stderr,
					"manager: --by %s: client, server, "
					"program or path\n",
					by);
				goto out;
			}
			break;
		case 'V':
			view = optarg;
			break;
		case 'W': {
			char *end;
			window_s = strtod(optarg, &end);
			if (*end || !(window_s > 0)) {
				fprintf(stderr,
					"manager: --window %s: seconds "
					"> 0\n",
					optarg);
				goto out;
			}
			break;
		}
		case 'c':
			csv = true;
			break;
		case 'h':
			manager_usage(stdout);
			rc = 0;
			goto out;
		default:
			manager_usage(stderr);
			goto out;
		}
	}
	if (optind != argc - 1) {
		manager_usage(stderr);
		goto out;
	}
	if (!(db = manager_open(argv[optind])))
		goto out;
	if (obs_store_check_expr(db, f.expr ? f.expr : "1", err, sizeof(err))) {
		fprintf(stderr, "manager: %s: %s\n", argv[optind], err);
		goto out;
	}
	if (view) {
		rc = manager_view(db, view, f.expr ? f.expr : "1", window_s,
				  csv, stdout);
		goto out;
	}
	rc = manager_stats_table(db, by, f.expr ? f.expr : "1", csv, stdout);
out:
	sqlite3_close(db);
	filter_free(&f);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "pull") == 0)
		return cmd_pull(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "stats") == 0)
		return cmd_stats(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (argc > 1 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		manager_usage(stdout);
		return 0;
	}
	fprintf(stderr, "manager: a command is needed (pull, stats, report)\n");
	manager_usage(stderr);
	return 2;
}
