/* table.c - the statistics table of manager stats (and of the report's
 * summary): count, mean, p50, p90, p99 and max of Tt, Te (per connection),
 * Ts, Tw, Tr (per exchange) and the rates Rs, Rr, Ra, per client, server,
 * program or path. Percentiles are exact, by nearest rank (stats.h). */
#include "table.h"

#include <stdio.h>
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

static void emit(FILE *out, bool csv, bool tty, const char *group,
		 const char *metric, double *v, size_t n)
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
			      TEXT_CSV_QUOTE | (tty ? TEXT_CSV_TTY : 0));
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

/* SELECT the group, then `columns`, ordered by group; with `column` the
 * rows where it is NULL are left out. */
static char *group_sql(const char *by, const char *columns, const char *column,
		       bool per_connection, const char *where)
{
	const char *group =
		strcmp(by, "server") == 0    ? "peer_addr || ':' || peer_port"
		: strcmp(by, "program") == 0 ? "program"
		: strcmp(by, "path") == 0
			? (per_connection ? "'(connections)'"
					  : "coalesce(path, '(unknown)')")
			: "client";
	char *conns = per_connection ? filter_connections(where) : NULL;
	char *not_null = column ? sqlite3_mprintf("%s IS NOT NULL", column)
				: sqlite3_mprintf("true");
	char *sql =
		(per_connection && !conns) || !not_null ? NULL
		: per_connection
			? sqlite3_mprintf(
				  "SELECT %s, %s FROM connection_metrics m "
				  "WHERE %s AND %s ORDER BY 1",
				  group, columns, not_null, conns)
			: sqlite3_mprintf("SELECT %s, %s FROM exchange_metrics "
					  "WHERE %s AND (%s) ORDER BY 1",
					  group, columns, not_null, where);

	sqlite3_free(conns);
	sqlite3_free(not_null);
	return sql;
}

char *table_metric_sql(const char *by, const char *column, bool per_connection,
		       const char *where)
{
	return group_sql(by, column, column, per_connection, where);
}

#define N_METRICS (sizeof(metrics) / sizeof(metrics[0]))
_Static_assert(N_METRICS == TABLE_METRICS,
	       "metrics[] in enum table_metric's order");

/* One pass over the rows of the metrics per connection, or of those per
 * exchange: each group's values of every one of them, the lines of each
 * metric to its own stream (printed in the table's order later). */
static int stats_pass(sqlite3 *db, bool per_connection, const char *by,
		      const char *where, bool csv, bool tty, FILE **lines)
{
	size_t idx[N_METRICS], n = 0;
	struct vec v[N_METRICS] = { 0 };
	char *columns = NULL, *sql = NULL, current[256] = "";
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_NOMEM;

	for (size_t i = 0; i < N_METRICS; i++) {
		char *more;

		if (metrics[i].per_connection != per_connection)
			continue;
		idx[n++] = i;
		more = columns ? sqlite3_mprintf("%s, %s", columns,
						 metrics[i].column)
			       : sqlite3_mprintf("%s", metrics[i].column);
		sqlite3_free(columns);
		if (!(columns = more))
			goto out;
	}
	sql = group_sql(by, columns, NULL, per_connection, where);
	if (!sql)
		goto out;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = SQLITE_ERROR;
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *g = (const char *)sqlite3_column_text(st, 0);

		if (!g)
			g = "(unknown)";
		if (strcmp(g, current) != 0) {
			for (size_t k = 0; k < n; k++) {
				emit(lines[idx[k]], csv, tty, current,
				     metrics[idx[k]].name, v[k].v, v[k].n);
				v[k].n = 0;
			}
			snprintf(current, sizeof(current), "%s", g);
		}
		for (size_t k = 0; k < n; k++) {
			int col = 1 + (int)k;

			if (sqlite3_column_type(st, col) != SQLITE_NULL &&
			    vec_push(&v[k], sqlite3_column_double(st, col) *
						    metrics[idx[k]].scale) !=
				    0) {
				rc = SQLITE_NOMEM;
				goto out;
			}
		}
	}
	if (rc == SQLITE_DONE)
		for (size_t k = 0; k < n; k++)
			emit(lines[idx[k]], csv, tty, current,
			     metrics[idx[k]].name, v[k].v, v[k].n);
out:
	if (rc != SQLITE_DONE)
		fprintf(stderr, "manager: %s\n",
			rc == SQLITE_NOMEM ? "out of memory"
					   : sqlite3_errmsg(db));
	for (size_t k = 0; k < n; k++)
		vec_free(&v[k]);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	sqlite3_free(columns);
	return rc == SQLITE_DONE ? 0 : -1;
}

int table_build_begin(struct table_build *b, bool csv, bool tty)
{
	memset(b, 0, sizeof(*b));
	b->csv = csv;
	b->tty = tty;
	for (size_t i = 0; i < TABLE_METRICS; i++)
		if (!(b->lines[i] = open_memstream(&b->text[i], &b->len[i]))) {
			fprintf(stderr, "manager: out of memory\n");
			b->failed = true;
			return 2;
		}
	return 0;
}

void table_build_group(struct table_build *b, enum table_metric m,
		       const char *group, double *v, size_t n)
{
	double scale = metrics[m].scale;

	if (b->failed || n == 0)
		return;
	if (scale != 1) {
		if (n > b->cap) {
			double *more = realloc(b->scaled, n * sizeof(*more));

			if (!more) {
				fprintf(stderr, "manager: out of memory\n");
				b->failed = true;
				return;
			}
			b->scaled = more;
			b->cap = n;
		}
		for (size_t i = 0; i < n; i++)
			b->scaled[i] = v[i] * scale;
		v = b->scaled;
	}
	emit(b->lines[m], b->csv, b->tty, group, metrics[m].name, v, n);
}

int table_build_end(struct table_build *b, const char *by, FILE *out)
{
	int rc = b->failed ? 2 : 0;

	if (b->csv)
		fprintf(out, "group,metric,count,mean,p50,p90,p99,max\n");
	else
		fprintf(out, "%-24s %-8s %8s %12s %12s %12s %12s %12s\n", by,
			"metric", "count", "mean", "p50", "p90", "p99", "max");
	for (size_t i = 0; i < TABLE_METRICS; i++) {
		if (b->lines[i] && fclose(b->lines[i]) != 0 && rc == 0) {
			fprintf(stderr, "manager: out of memory\n");
			rc = 2;
		}
		b->lines[i] = NULL;
		if (rc == 0 && b->text[i])
			fwrite(b->text[i], 1, b->len[i], out);
	}
	return rc;
}

void table_build_free(struct table_build *b)
{
	for (size_t i = 0; i < TABLE_METRICS; i++) {
		if (b->lines[i])
			fclose(b->lines[i]);
		free(b->text[i]);
	}
	free(b->scaled);
	memset(b, 0, sizeof(*b));
}

int table_stats(sqlite3 *db, const char *by, const char *where, bool csv,
		FILE *out)
{
	struct table_build b;
	int rc = table_build_begin(&b, csv, isatty(fileno(out)));

	/* two passes, each row read once: the metrics per connection, then
	 * those per exchange (an error in one is an error in all: the same
	 * filter; said once) */
	if (rc == 0 &&
	    (stats_pass(db, true, by, where, csv, b.tty, b.lines) != 0 ||
	     stats_pass(db, false, by, where, csv, b.tty, b.lines) != 0))
		b.failed = true;
	rc = table_build_end(&b, by, out);
	table_build_free(&b);
	return rc;
}
