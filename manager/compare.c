/* compare.c - before and after (see compare.h): both sides' values per
 * group and metric read with the statistics table's queries (table.h),
 * percentiles by nearest rank and the Mann-Whitney U test (stats.h). */
#define _GNU_SOURCE
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "table.h"
#include "text.h"

const struct compare_metric compare_metrics[CMP_METRICS] = {
	/* as manager stats: rates in MB/s (10^6 bytes per second) */
	[CMP_TE] = { "Te ms", "te_ms", true, 1 },
	[CMP_TS] = { "Ts ms", "ts_ms", false, 1 },
	[CMP_TW] = { "Tw ms", "tw_ms", false, 1 },
	[CMP_TR] = { "Tr ms", "tr_ms", false, 1 },
	[CMP_TT] = { "Tt ms", "tt_ms", true, 1 },
	[CMP_RR] = { "Rr MB/s", "rr", false, 1e-6 },
};

/* The group named name, added if new; NULL when out of memory. */
static struct compare_group *group_of(struct compare *c, const char *name)
{
	struct compare_group *more;
	char *copy;

	/* the rows come ordered by group: the last one is the likeliest */
	for (size_t i = c->ng; i-- > 0;)
		if (strcmp(c->g[i].name, name) == 0)
			return &c->g[i];
	copy = strdup(name);
	more = copy ? realloc(c->g, (c->ng + 1) * sizeof(*more)) : NULL;
	if (!more) {
		free(copy);
		return NULL;
	}
	c->g = more;
	memset(&c->g[c->ng], 0, sizeof(c->g[c->ng]));
	c->g[c->ng].name = copy;
	return &c->g[c->ng++];
}

/* One side's values of metric m. 0, or -1 (said). */
static int read_metric(struct compare *c, const struct compare_side *s,
		       int side, int m, const char *by)
{
	const struct compare_metric *cm = &compare_metrics[m];
	char *sql =
		table_metric_sql(by, cm->column, cm->per_connection, s->where);
	sqlite3_stmt *st = NULL;
	struct compare_group *g = NULL;
	int rc = SQLITE_NOMEM;

	if (sql && sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		rc = SQLITE_ERROR;
	else if (sql)
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *name =
				(const char *)sqlite3_column_text(st, 0);

			name = name ? name : "(unknown)";
			if (!g || strcmp(g->name, name) != 0)
				g = group_of(c, name);
			if (!g || vec_push(&g->v[side][m],
					   sqlite3_column_double(st, 1) *
						   cm->scale) != 0) {
				rc = SQLITE_NOMEM;
				break;
			}
		}
	if (rc == SQLITE_NOMEM)
		fprintf(stderr, "manager: out of memory\n");
	else if (rc != SQLITE_DONE)
		fprintf(stderr, "manager: %s: %s\n", s->db_path,
			sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct compare_group *)a)->name,
		      ((const struct compare_group *)b)->name);
}

int compare_read(struct compare *c, const struct compare_side side[2],
		 const char *by)
{
	memset(c, 0, sizeof(*c));
	for (int s = 0; s < 2; s++)
		for (int m = 0; m < CMP_METRICS; m++)
			if (read_metric(c, &side[s], s, m, by) != 0)
				return -1;
	if (c->ng > 1)
		qsort(c->g, c->ng, sizeof(*c->g), by_name);
	for (size_t i = 0; i < c->ng; i++)
		for (int s = 0; s < 2; s++)
			for (int m = 0; m < CMP_METRICS; m++)
				stats_sort(c->g[i].v[s][m].v,
					   c->g[i].v[s][m].n);
	return 0;
}

void compare_free(struct compare *c)
{
	for (size_t i = 0; i < c->ng; i++) {
		free(c->g[i].name);
		for (int s = 0; s < 2; s++)
			for (int m = 0; m < CMP_METRICS; m++)
				vec_free(&c->g[i].v[s][m]);
	}
	free(c->g);
	memset(c, 0, sizeof(*c));
}

/* A figure into buf with prec decimals (significant digits if sig):
 * empty in CSV, "-" in text when NaN. */
static void figure(char *buf, size_t size, double v, int prec, bool sig,
		   bool csv)
{
	if (isnan(v))
		snprintf(buf, size, "%s", csv ? "" : "-");
	else if (sig)
		snprintf(buf, size, "%.*g", prec, v);
	else
		snprintf(buf, size, "%.*f", prec, v);
}

/* One row of the table. -1 when out of memory (the test's). */
static int row(FILE *out, bool csv, const char *group, int m,
	       const struct vec *a, const struct vec *b)
{
	static const double ps[] = { 50, 90, 99 };
	double q[2][3], change;
	char f[8][32], safe[96];
	struct stats_mwu t;
	int prec = csv ? 6 : 3;

	for (int k = 0; k < 3; k++) {
		q[0][k] = a->n ? stats_percentile(a->v, a->n, ps[k]) : NAN;
		q[1][k] = b->n ? stats_percentile(b->v, b->n, ps[k]) : NAN;
	}
	/* nothing over nothing is no change */
	change = q[0][0] == 0 && q[1][0] == 0 ? 1
		 : q[0][0] != 0		      ? q[1][0] / q[0][0]
					      : NAN;
	if (isinf(change))
		change = NAN;
	if (stats_mann_whitney(a->v, a->n, b->v, b->n, &t) != 0) {
		fprintf(stderr, "manager: out of memory\n");
		return -1;
	}
	for (int k = 0; k < 3; k++) {
		figure(f[2 * k], sizeof(f[0]), q[0][k], prec, false, csv);
		figure(f[2 * k + 1], sizeof(f[0]), q[1][k], prec, false, csv);
	}
	figure(f[6], sizeof(f[0]), change, prec, false, csv);
	figure(f[7], sizeof(f[0]), t.p, prec, true, csv);
	/* the group (a path, a client) is anyone's text: as in table.c */
	if (csv) {
		text_csv_cell(out, group,
			      TEXT_CSV_QUOTE |
				      (isatty(fileno(out)) ? TEXT_CSV_TTY : 0));
		fprintf(out, ",%s,%zu,%zu,%s,%s,%s,%s,%s,%s,%s,%s\n",
			compare_metrics[m].name, a->n, b->n, f[0], f[1], f[2],
			f[3], f[4], f[5], f[6], f[7]);
	} else
		fprintf(out,
			"%-24.24s %-7s %7zu %7zu %9s %9s %9s %9s %9s %9s "
			"%7s %9s\n",
			text_tty(group, safe, sizeof(safe)),
			compare_metrics[m].name, a->n, b->n, f[0], f[1], f[2],
			f[3], f[4], f[5], f[6], f[7]);
	return 0;
}

int compare_table(const struct compare *c, const char *by, bool csv, FILE *out)
{
	if (csv)
		fprintf(out, "group,metric,n_a,n_b,p50_a,p50_b,p90_a,p90_b,"
			     "p99_a,p99_b,change,p_value\n");
	else
		fprintf(out,
			"%-24s %-7s %7s %7s %9s %9s %9s %9s %9s %9s %7s %9s\n",
			by, "metric", "n_a", "n_b", "p50_a", "p50_b", "p90_a",
			"p90_b", "p99_a", "p99_b", "change", "p_value");
	for (size_t i = 0; i < c->ng; i++)
		for (int m = 0; m < CMP_METRICS; m++) {
			const struct vec *a = &c->g[i].v[0][m],
					 *b = &c->g[i].v[1][m];

			if ((a->n || b->n) &&
			    row(out, csv, c->g[i].name, m, a, b) != 0)
				return -1;
		}
	return 0;
}
