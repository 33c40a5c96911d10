/* report_views.c - the report's waterfalls and before/after section (see
 * report_views.h): the runs chosen and drawn with waterfall.h, the
 * comparison read with compare.h and its CDFs drawn with the helpers of
 * report_plots.h. */
#define _GNU_SOURCE
#include "report_views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waterfall.h"

#define CDF_GROUPS 6 /* groups overlaid in compare_cdf at most */

/* Out of memory: said once (report_plots.h); -1. */
static int nomem(struct report_plots *p)
{
	report_plots_nomem(p);
	return -1;
}

/* Run r's waterfall as plot v->wf[v->nwf]. 0, or -1 (said). */
static int run_waterfall(struct report_views *v, struct report_plots *p,
			 const struct wf_run *r)
{
	struct report_waterfall *rw = &v->wf[v->nwf];
	struct waterfall w;
	char cut[64] = "";
	int rc;

	if (waterfall_read(p->data->db, p->data->db_path, p->data->where,
			   r->process, REPORT_WATERFALL_ROWS, &w) != 0) {
		waterfall_free(&w);
		return -1;
	}
	if (w.nrows == 0) {
		waterfall_free(&w);
		return 0;
	}
	if (w.nrows < w.total_rows)
		snprintf(cut, sizeof(cut), " (the first %zu of %zu rows)",
			 w.nrows, w.total_rows);
	snprintf(rw->name, sizeof(rw->name), "waterfall_%zu", v->nwf + 1);
	if (asprintf(&rw->title,
		     "%s %d on %s: %zu connections, %zu "
		     "exchanges%s",
		     r->program, r->pid, r->client, w.connections, w.exchanges,
		     cut) < 0) {
		rw->title = NULL;
		waterfall_free(&w);
		return nomem(p);
	}
	rw->height = waterfall_height(&w);
	rw->rows = w.nrows;
	rw->total_rows = w.total_rows;
	rc = waterfall_plot(p, &w, v->nwf + 1, rw->name, rw->title, true, true);
	waterfall_free(&w);
	if (rc == 0)
		v->nwf++;
	else {
		free(rw->title);
		rw->title = NULL;
	}
	return rc;
}

int report_views_waterfalls(struct report_views *v, struct report_plots *p)
{
	struct wf_run *runs;
	size_t n;
	int rc = 0;

	if (waterfall_runs(p->data->db, p->data->db_path, p->data->where,
			   REPORT_WATERFALLS, &runs, &n) != 0)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = run_waterfall(v, p, &runs[i]);
	waterfall_runs_free(runs, n);
	return rc;
}

/* The comparison as text into v->table. 0, or -1 (said). */
static int table_text(struct report_views *v, struct report_plots *p)
{
	size_t len = 0;
	FILE *f = open_memstream(&v->table, &len);
	int rc;

	if (!f)
		return nomem(p);
	rc = compare_table(&v->cmp, v->by, false, f);
	if (fclose(f) != 0 && rc == 0)
		return nomem(p);
	if (rc != 0)
		p->failed = true; /* said by compare_table */
	return rc;
}

/* Whether group g has values on both sides. */
static bool on_both_sides(const struct compare_group *g)
{
	bool a = false, b = false;

	for (int m = 0; m < CMP_METRICS; m++) {
		a |= g->v[0][m].n > 0;
		b |= g->v[1][m].n > 0;
	}
	return a && b;
}

/* The CDFs of both sides per metric, a panel each, of the first
 * CDF_GROUPS groups found on both sides: the baseline dashed, the
 * report's database solid, a colour per group. 0, or -1 (said). */
static int plot_cdfs(struct report_views *v, struct report_plots *p)
{
	size_t shown[CDF_GROUPS], ns = 0, len = 0;
	bool drawn[CMP_METRICS][CDF_GROUPS][2] = { { { false } } };
	FILE *names = open_memstream(&v->cdf_groups, &len);

	if (!names)
		return nomem(p);
	for (size_t i = 0; i < v->cmp.ng && ns < CDF_GROUPS; i++)
		if (on_both_sides(&v->cmp.g[i])) {
			fprintf(names, "%s%s", ns ? ", " : "",
				v->cmp.g[i].name);
			shown[ns++] = i;
		}
	if (fclose(names) != 0)
		return nomem(p);
	if (ns == 0)
		return 0;
	for (int m = 0; m < CMP_METRICS; m++)
		for (size_t k = 0; k < ns; k++)
			for (int s = 0; s < 2; s++) {
				char what[32];
				int w;

				snprintf(what, sizeof(what), "cmpcdf-%d-%d", m,
					 s);
				w = report_cdf_file(
					p, what, k,
					&v->cmp.g[shown[k]].v[s][m]);
				if (w < 0)
					return -1;
				drawn[m][k][s] = w > 0;
			}
	v->cdf_height = 900;
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin_sized(p, "compare_cdf", pass, 1000,
				      v->cdf_height);
		fprintf(p->gp, "set multiplot layout 3,2 title ");
		report_gp_text(p,
			       "CDFs per %s: the baseline dashed, this "
			       "database solid",
			       v->by);
		fprintf(p->gp, "\n");
		for (int m = 0; m < CMP_METRICS; m++) {
			bool any = false;

			fprintf(p->gp,
				"set title '%s'\nset logscale x\nset yrange "
				"[0:1]\nset key bottom right inside\nplot ",
				compare_metrics[m].name);
			for (size_t k = 0; k < ns; k++)
				for (int s = 0; s < 2; s++) {
					char what[32];

					if (!drawn[m][k][s])
						continue;
					snprintf(what, sizeof(what),
						 "cmpcdf-%d-%d", m, s);
					fprintf(p->gp, "%s", any ? ", " : "");
					any = true;
					report_gp_file(p, what, k);
					fprintf(p->gp,
						" using 1:2 with lines lw 2 "
						"lc %zu dt %d title ",
						k + 1, s ? 1 : 2);
					report_gp_text(p, "%s%s",
						       v->cmp.g[shown[k]].name,
						       s ? "" : " (baseline)");
				}
			/* a panel with nothing: an empty frame */
			fprintf(p->gp, "%s\n", any ? "" : "-1 notitle");
		}
		fprintf(p->gp, "unset multiplot\n");
		report_gp_end(p);
	}
	p->plots++;
	return p->failed ? -1 : 0;
}

int report_views_baseline(struct report_views *v, struct report_plots *p,
			  sqlite3 *baseline)
{
	const struct compare_side side[2] = {
		{ baseline, v->baseline, p->data->where },
		{ p->data->db, p->data->db_path, p->data->where },
	};

	if (compare_read(&v->cmp, side, v->by) != 0 || table_text(v, p) != 0) {
		p->failed = true;
		return -1;
	}
	return plot_cdfs(v, p);
}

void report_views_free(struct report_views *v)
{
	for (size_t i = 0; i < v->nwf; i++)
		free(v->wf[i].title);
	v->nwf = 0;
	compare_free(&v->cmp);
	free(v->table);
	free(v->cdf_groups);
	v->table = v->cdf_groups = NULL;
}
