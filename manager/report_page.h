/* report_page.h - what manager report writes for people: DIR/index.html
 * (every plot drawn, with its table; no script, opens from disk) and
 * DIR/summary.txt (the same figures as text). */
#ifndef OBSERVE_MANAGER_REPORT_PAGE_H
#define OBSERVE_MANAGER_REPORT_PAGE_H

#include <stdbool.h>

#include "findings.h"
#include "report_data.h"
#include "report_plots.h"
#include "report_views.h"

/* The texts of the page and the summary: the statistics table, and one
 * text per analysis (views[i], NULL where there is none). */
struct report_texts {
	const char *stats;
	const char *const *views;
	char *const *texts;
	int nviews;
	const struct report_views *more; /* NULL: no waterfall, no baseline */
	const struct findings *findings; /* NULL: none computed */
};

/* Write DIR/summary.txt. 0, or -1 (said). */
int report_page_summary(const struct report_data *d,
			const struct report_plots *p,
			const struct report_texts *t);
/* Write DIR/index.html, its path on stdout unless quiet. 0, or -1
 * (said). */
int report_page_html(const struct report_data *d, const struct report_plots *p,
		     const struct report_texts *t, bool quiet);

#endif
