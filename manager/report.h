/* report.h - what the files of manager report share: the report being
 * written and the helpers that write its gnuplot script and its page. */
#ifndef OBSERVE_REPORT_H
#define OBSERVE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

struct vec {
	double *v;
	size_t n, cap;
};

/* The per-client figures (report.c). */
enum { M_TT, M_TE, M_RA, M_TW, M_TR, M_RR, M_COUNT };

struct client {
	char *name;
	struct vec m[M_COUNT];
	size_t exchanges, connections, scatter_points;
};

struct report {
	sqlite3 *db;
	const char *db_path, *dir, *where;
	char *tmp; /* data files and the gnuplot script */
	FILE *gp;  /* the script */
	struct client *c;
	size_t nc;
	int64_t t_first, t_last; /* epoch ns */
	size_t sample_every;
	int plots;
	bool quiet;
	char *skipped;		 /* HTML notes on plots left out */
	double endings_window_s; /* the window of the endings plot */
	int endings_height;	 /* its height in pixels, 0 if none */
};

/* A gnuplot single-quoted string (' doubled, control characters dropped). */
void report_gp_string(FILE *f, const char *s);
/* Text escaped for HTML. */
void report_html(FILE *f, const char *s);
/* TMP/WHAT-N.dat, malloc'd (NULL when out of memory). */
char *report_data_path(struct report *r, const char *what, size_t n);
/* A plot left out, and why, for the page. */
void report_note_skip(struct report *r, const char *plot, const char *why);
/* The script lines that start plot NAME in pass 0 (PNG) or 1 (SVG). */
void report_gp_begin(struct report *r, const char *name, int pass);
void report_gp_begin_sized(struct report *r, const char *name, int pass,
			   int width, int height);
void report_gp_end(struct report *r);
/* A plot's section on the page, if its PNG was written (true); the caller
 * closes the section after what follows it. */
bool report_figure(FILE *h, struct report *r, const char *name,
		   const char *title, const char *text);
bool report_figure_sized(FILE *h, struct report *r, const char *name,
			 const char *title, const char *text, int height);

/* The analyses' plots (report_analyses.c): server state over time from how
 * connections ended, the keep-alive gaps, the size fit. Each one left out
 * is noted. Heights are what the figures take on the page. 0, or -1 on a
 * database error (said). */
int report_plot_analyses(struct report *r);
/* The plot of an analysis (endings, keepalive, size) on the page, if any
 * (true: a section is open). */
bool report_figure_analysis(FILE *h, struct report *r, const char *view);

#endif
