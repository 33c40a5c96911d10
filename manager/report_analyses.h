/* report_analyses.h - the plots of the analyses in manager report (server
 * state over time, keep-alive gaps, size fit, address family and TLS),
 * drawn from the figures of analyses.h with the helpers of
 * report_plots.h. */
#ifndef OBSERVE_MANAGER_REPORT_ANALYSES_H
#define OBSERVE_MANAGER_REPORT_ANALYSES_H

#include "report_plots.h"

/* The analyses' plots: each one with nothing to show is noted; the endings
 * plot's window and height are left in p. 0, or -1 on an error (said). */
int report_plot_analyses(struct report_plots *p);

#endif
