/* report_plots.h - the plots of manager report: data files and one gnuplot
 * script in a temporary directory, every plot drawn into the report's
 * directory as PNG and SVG; the per-client plots, and the helpers the
 * analyses' plots (report_analyses.h) share. */
#ifndef OBSERVE_MANAGER_REPORT_PLOTS_H
#define OBSERVE_MANAGER_REPORT_PLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report_data.h"

struct report_plots {
	struct report_data *data;
	const char *dir; /* the report: NAME.png, NAME.svg */
	const char *tmp; /* data files and the script */
	FILE *gp;	 /* the script */
	int plots;	 /* drawn */
	char *skipped;	 /* HTML list items: the plots left out, and why */
	double endings_window_s; /* the window of the endings plot */
	int endings_height;	 /* its height in pixels, 0 if none */
	bool failed; /* a file not written, or out of memory: said */
};

/* A temporary directory of our own for the data files and the script
 * ($TMPDIR or /tmp), malloc'd; NULL (said) on failure. */
char *report_tmp_dir(void);
/* Remove that directory and what is in it. */
void report_tmp_remove(const char *dir);
/* Open the script TMP/report.gp. 0, or -1 (said). */
int report_plots_begin(struct report_plots *p);
/* Whether gnuplot can draw PNG (pngcairo). */
bool report_plots_can_draw(void);
/* The per-client plots' data and script lines: the histogram of Tt, the
 * CDFs, the scatter, the series, the throughput, the comparison of
 * clients (the analyses' are report_analyses.h's). Plots with nothing to
 * show are noted. 0, or -1 (said). */
int report_plots_write(struct report_plots *p);
/* Close the script and run gnuplot on it if a plot was written. 0, or -1
 * (said, with gnuplot's messages). */
int report_plots_draw(struct report_plots *p);
/* Close the script if open, free what the plots hold. */
void report_plots_free(struct report_plots *p);

/* For the plots' writers. */

/* A gnuplot single-quoted string (' doubled, control characters
 * dropped, bytes that are not UTF-8 as U+FFFD). */
void report_gp_string(FILE *f, const char *s);
/* Into the script as gnuplot strings: the path TMP/WHAT-N.dat; a text
 * made as printf makes it. */
void report_gp_file(struct report_plots *p, const char *what, size_t n);
void report_gp_text(struct report_plots *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* TMP/WHAT-N.dat opened for writing; NULL when it cannot be. */
FILE *report_plot_open(struct report_plots *p, const char *what, size_t n);
/* Whether TMP/WHAT-N.dat was written with something in it. */
bool report_plot_written(struct report_plots *p, const char *what, size_t n);
/* The CDF of the sorted values v into TMP/WHAT-N.dat ("x fraction"
 * lines, at most 1000 points; values <= 0 left out, for a log axis): 1,
 * 0 when there is no positive value (no file), -1 (said). */
int report_cdf_file(struct report_plots *p, const char *what, size_t n,
		    const struct vec *v);
/* Out of memory while writing the plots. */
void report_plots_nomem(struct report_plots *p);
/* (After a failure of these, or of the ones below, the reason is said
 * once, p->failed is set and report_plots_write fails.) */
/* A plot left out, and why, for the page. */
void report_note_skip(struct report_plots *p, const char *plot,
		      const char *why);
/* The script lines that start plot NAME in pass 0 (PNG) or 1 (SVG), 1000
 * by 600 pixels or as given; and that end it. */
void report_gp_begin(struct report_plots *p, const char *name, int pass);
void report_gp_begin_sized(struct report_plots *p, const char *name, int pass,
			   int width, int height);
void report_gp_end(struct report_plots *p);

#endif
