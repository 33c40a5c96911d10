/* report_analyses.h - the plots of the analyses in manager report (server
 * state over time, keep-alive gaps, size fit, address family and TLS),
 * drawn from the figures of analyses.h with the helpers of
 * report_plots.h. */
#ifndef OBSERVE_MANAGER_REPORT_ANALYSES_H
#define OBSERVE_MANAGER_REPORT_ANALYSES_H

#include "findings.h"
#include "report_plots.h"

/* The tables of manager stats --view keepalive, size and family (text),
 * malloc'd: made with the plots, from the same pass over the rows; and
 * what the findings take of the size fits and of the gaps
 * (findings_collect_given). */
struct report_view_texts {
	char *keepalive, *size, *family;
	struct findings_sizes sizes;
	struct findings_rows *rows;
};

/* The analyses' plots: each one with nothing to show is noted; the endings
 * plot's window and height are left in p; t gets the tables of the views
 * drawn. 0, or -1 on an error (said; t is then empty). */
int report_plot_analyses(struct report_plots *p, struct report_view_texts *t);
/* Free the tables, leave t empty. */
void report_view_texts_free(struct report_view_texts *t);

#endif
