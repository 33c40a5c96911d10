/* table.c - the statistics table of manager stats (and of the report's
 * summary): count, mean, p50, p90, p99 and max of Tt, Te (per connection),
 * Ts, Tw, Tr (per exchange) and the rates Rs, Rr, Ra, per client, server,
 * program or path. Percentiles are exact, by nearest rank (stats.h). */
#include "table.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "stats.h"
#include "text.h"

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

static void emit(FILE *out, bool csv, const char *group, const char *metric,
		 double *v, size_t n)
{
	double mean;
	char safe[96];

	if (n == 0)
		return;
	stats_sort(v, n);
	mean = stats_mean(v, n);
	/* the group (a client, program or path) is anyone's text: a formula
	 * defused in CSV, control characters escaped on a terminal (text.h) */
	if (csv) {
		text_csv_cell(out, group,
			      TEXT_CSV_QUOTE |
				      (isatty(fileno(out)) ? TEXT_CSV_TTY : 0));
		fprintf(out, ",%s,%zu,%.6f,%.6f,%.6f,%.6f,%.6f\n", metric, n,
			mean, stats_percentile(v, n, 50),
			stats_percentile(v, n, 90), stats_percentile(v, n, 99),
			v[n - 1]);
	} else
		fprintf(out,
			"%-24.24s %-8s %8zu %12.3f %12.3f %12.3f %12.3f %12.3f\n",
			text_tty(group, safe, sizeof(safe)), metric, n, mean,
			stats_percentile(v, n, 50), stats_percentile(v, n, 90),
			stats_percentile(v, n, 99), v[n - 1]);
}

char *table_metric_sql(const char *by, const char *column, bool per_connection,
		       const char *where)
{
	const char *group =
		strcmp(by, "server") == 0    ? "peer_addr || ':' || peer_port"
		: strcmp(by, "program") == 0 ? "program"
		: strcmp(by, "path") == 0
			? (per_connection ? "'(connections)'"
					  : "coalesce(path, '(unknown)')")
			: "client";
	char *conns = per_connection ? filter_connections(where) : NULL;
	char *sql =
		per_connection && !conns ? NULL
		: per_connection
			? sqlite3_mprintf(
				  "SELECT %s, %s FROM connection_metrics m WHERE %s IS "
				  "NOT NULL AND %s ORDER BY 1",
				  group, column, column, conns)
			: sqlite3_mprintf(
				  "SELECT %s, %s FROM exchange_metrics WHERE "
				  "%s IS NOT NULL AND (%s) ORDER BY 1",
				  group, column, column, where);

	sqlite3_free(conns);
	return sql;
}

static int stats_metric(sqlite3 *db, const struct metric *m, const char *by,
			const char *where, bool csv, FILE *out)
{
	char *sql = table_metric_sql(by, m->column, m->per_connection, where);
	sqlite3_stmt *st = NULL;
	struct vec v = { 0 };
	char current[256] = "";
	int rc;

	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s\n",
			sql ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_free(sql);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *g = (const char *)sqlite3_column_text(st, 0);

		if (!g)
			g = "(unknown)";
		if (strcmp(g, current) != 0) {
			emit(out, csv, current, m->name, v.v, v.n);
			v.n = 0;
			snprintf(current, sizeof(current), "%s", g);
		}
		if (vec_push(&v, sqlite3_column_double(st, 1) * m->scale) !=
		    0) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	if (rc == SQLITE_DONE)
		emit(out, csv, current, m->name, v.v, v.n);
	else
		fprintf(stderr, "manager: %s\n",
			rc == SQLITE_NOMEM ? "out of memory"
					   : sqlite3_errmsg(db));
	vec_free(&v);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc == SQLITE_DONE ? 0 : -1;
}

int table_stats(sqlite3 *db, const char *by, const char *where, bool csv,
		FILE *out)
{
	if (csv)
		fprintf(out, "group,metric,count,mean,p50,p90,p99,max\n");
	else
		fprintf(out, "%-24s %-8s %8s %12s %12s %12s %12s %12s\n", by,
			"metric", "count", "mean", "p50", "p90", "p99", "max");
	/* an error in one is an error in all (the same filter): said once */
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (stats_metric(db, &metrics[i], by, where, csv, out) != 0)
			return 2;
	return 0;
}
