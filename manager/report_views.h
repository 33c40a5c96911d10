/* report_views.h - the report's waterfalls (one per program run, the
 * first few) and its before/after section (--baseline): read, drawn into
 * the report's script, and kept for the page (report_page.h). */
#ifndef OBSERVE_MANAGER_REPORT_VIEWS_H
#define OBSERVE_MANAGER_REPORT_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <sqlite3.h>

#include "compare.h"
#include "report_plots.h"

#define REPORT_WATERFALLS 6	 /* runs drawn at most */
#define REPORT_WATERFALL_ROWS 60 /* rows of each at most */

struct report_waterfall {
	char name[32]; /* waterfall_N: the plot's files */
	char *title;
	int height; /* pixels */
	size_t rows, total_rows;
};

struct report_views {
	struct report_waterfall wf[REPORT_WATERFALLS];
	size_t nwf;
	/* before and after: A the baseline, B the report's database */
	const char *baseline; /* its path; NULL when there is none */
	const char *by;	      /* the comparison's groups */
	struct compare cmp;
	char *table;	  /* the comparison as text */
	int cdf_height;	  /* of the plot compare_cdf, 0 when not drawn */
	char *cdf_groups; /* the groups drawn there */
};

/* The waterfalls of the runs waterfall_runs() chooses among the rows of
 * p->data (its db and where). 0, or -1 (said). */
int report_views_waterfalls(struct report_views *v, struct report_plots *p);

/* The comparison of baseline (its db open; the filter p->data->where on
 * both sides) with the report's database, grouped by v->by: its table,
 * and the CDFs of both sides overlaid per group and metric. 0, or -1
 * (said). */
int report_views_baseline(struct report_views *v, struct report_plots *p,
			  sqlite3 *baseline);

void report_views_free(struct report_views *v);

#endif
