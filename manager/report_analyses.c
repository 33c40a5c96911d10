/* report_analyses.c - the plots of manager report's analyses
 * (docs/analyses.md), drawn from the same figures as manager stats --view:
 *
 *   endings    per server (the four with most connections), the share of
 *              each end class per time window, stacked, with the aborted
 *              share as a line and the state in the panel's title (seed 000)
 *   keepalive  the idle gaps per server on 10 ms bins and on log bins, the
 *              server's idle closes, the recommended timeout (seed 003)
 *   size_fit   Dr against T6 - T4 per server, log-log, with the least
 *              squares and Theil-Sen lines T = a Dr + b over it (seed 002)
 *   family     the p50s of IPv4 and IPv6, TLS and plain side by side, when
 *              two of these groups occur (seed 000)
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses.h"
#include "report_analyses.h"
#include "stats.h"

#define MAX_SERVERS 4	     /* endings panels */
#define MAX_LINES 6	     /* servers drawn in the keepalive and size plots */
#define FIT_POINTS 20000     /* scatter points per server in size_fit */
#define GAP_BINS_LINEAR 1000 /* 10 ms bins: 10 s at most */

/* the end classes of analyses.h, in its order */
static const char *const end_names[ANALYSES_END_ABORTED] = {
	"server closed",
	"client closed",
	"reset",
	"timeout",
	"connect failed",
	"exit (open at exit)",
	"lost (closed unseen)",
	"unterminated"
};
static const char *const end_colors[ANALYSES_END_ABORTED] = {
	"#2a9d4b", "#3b7dd8", "#f28e2b", "#d62728",
	"#5a1e1e", "#9467bd", "#8c564b", "#aaaaaa"
};

/* Out of memory: said once (report_plots.h); -1. */
static int nomem(struct report_plots *r)
{
	report_plots_nomem(r);
	return -1;
}

/* Say in the report that MORE servers of a plot's table were not drawn. */
static void note_more_servers(struct report_plots *r, const char *plot,
			      size_t more)
{
	char why[96];

	if (!more)
		return;
	snprintf(why, sizeof(why),
		 "%zu more servers are in the table, not drawn", more);
	report_note_skip(r, plot, why);
}

/* ---- endings ------------------------------------------------------------ */

struct server_total {
	char server[64];
	double n;
	int windows[3]; /* normal, saturated, stopped */
};

static int by_connections(const void *a, const void *b)
{
	const struct server_total *x = a, *y = b;

	return (x->n < y->n) - (x->n > y->n);
}

static int plot_endings(struct report_plots *r)
{
	struct analyses_endings_row *rows;
	struct server_total *tot = NULL;
	size_t n, ns = 0, shown;
	int rc = 0;
	double span = (double)(r->data->t_last - r->data->t_first) / 1e9, w;

	w = r->endings_window_s = stats_round_step(span > 0 ? span : 0.001, 30);
	if (analyses_endings_collect(r->data->db, r->data->where, w, &rows,
				     &n) != 0)
		return -1;
	tot = calloc(n + 1, sizeof(*tot));
	if (!tot) {
		free(rows);
		return nomem(r);
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = 0;
		while (i < ns && strcmp(tot[i].server, rows[k].server) != 0)
			i++;
		if (i == ns)
			snprintf(tot[ns++].server, sizeof(tot[0].server), "%s",
				 rows[k].server);
		tot[i].n += rows[k].n;
		tot[i].windows[strcmp(rows[k].state, "normal") == 0	 ? 0
			       : strcmp(rows[k].state, "saturated") == 0 ? 1
									 : 2]++;
	}
	if (ns == 0) {
		report_note_skip(r, "Server state over time",
				 "no connection to a server");
		goto out;
	}
	qsort(tot, ns, sizeof(*tot), by_connections);
	shown = ns < MAX_SERVERS ? ns : MAX_SERVERS;
	for (size_t i = 0; i < shown; i++) {
		FILE *f = report_plot_open(r, "endings", i);

		if (!f) {
			rc = -1;
			goto out;
		}
		/* x: the window's middle, s since the first request; then
		 * the end classes as cumulative percentages; the aborted
		 * share */
		for (size_t k = 0; k < n; k++) {
			const struct analyses_endings_row *e = &rows[k];
			double cum = 0;

			if (strcmp(e->server, tot[i].server) != 0 || e->n <= 0)
				continue;
			fprintf(f, "%.6f",
				(double)(e->window_ns - r->data->t_first) /
						1e9 +
					w / 2);
			for (int c = 0; c < ANALYSES_END_ABORTED; c++) {
				cum += 100.0 * e->c[c] / e->n;
				fprintf(f, " %.4f", cum);
			}
			fprintf(f, " %.4f %.0f\n",
				100.0 * e->c[ANALYSES_END_ABORTED] / e->n,
				e->n);
		}
		fclose(f);
	}
	/* one time axis for every panel */
	double x_lo = INFINITY, x_hi = -INFINITY;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < shown; i++)
			if (strcmp(rows[k].server, tot[i].server) == 0) {
				double x = (double)(rows[k].window_ns -
						    r->data->t_first) /
					   1e9;
				x_lo = fmin(x_lo, x);
				x_hi = fmax(x_hi, x + w);
			}
	r->endings_height = 80 + 230 * (int)shown;
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin_sized(r, "endings", pass, 1000,
				      r->endings_height);
		fprintf(r->gp,
			"set multiplot layout %zu,1 title 'How connections "
			"ended per %g s window, per server (seed 000: a quarter "
			"aborted means a stalling server)'\n"
			"set style fill solid 0.9 border -1\nset boxwidth %g "
			"absolute\nset yrange [0:105]\nset ylabel '%% of "
			"connections'\nset key outside right top\n"
			"set xrange [%g:%g]\nset lmargin at screen 0.08\n"
			"set rmargin at screen 0.76\n",
			shown, w, w * 0.9, x_lo - w / 2, x_hi + w / 2);
		for (size_t i = 0; i < shown; i++) {
			fprintf(r->gp, "set title ");
			report_gp_text(r,
				       "%s: %.0f connections; windows normal "
				       "%d, saturated %d, stopped %d",
				       tot[i].server, tot[i].n,
				       tot[i].windows[0], tot[i].windows[1],
				       tot[i].windows[2]);
			fprintf(r->gp, "\nset xlabel %s\nplot ",
				i + 1 == shown
					? "'time since the first request, s "
					  "(the window it began in)'"
					: "''");
			/* the tallest (all classes) first, each next one
			 * over it */
			for (int c = ANALYSES_END_ABORTED - 1; c >= 0; c--) {
				fprintf(r->gp,
					"'%s/endings-%zu.dat' using 1:%d with "
					"boxes lc rgb '%s' ",
					r->tmp, i, c + 2, end_colors[c]);
				if (i == 0) {
					fprintf(r->gp, "title ");
					report_gp_string(r->gp, end_names[c]);
				} else
					fprintf(r->gp, "notitle");
				fprintf(r->gp, ", ");
			}
			fprintf(r->gp,
				"'%s/endings-%zu.dat' using 1:%d with "
				"linespoints lw 2 pt 7 lc rgb '#000000' %s\n",
				r->tmp, i, ANALYSES_END_ABORTED + 2,
				i == 0 ? "title 'aborted (unanswered)'"
				       : "notitle");
		}
		fprintf(r->gp, "unset multiplot\n");
		report_gp_end(r);
	}
	if (ns > shown) {
		char why[96];
		snprintf(why, sizeof(why),
			 "%zu more servers are in the table below, not drawn",
			 ns - shown);
		report_note_skip(r, "Server state over time", why);
	}
	r->plots++;
out:
	free(tot);
	free(rows);
	return rc;
}

/* ---- keep-alive ---------------------------------------------------------- */

struct keepalive_plot {
	struct report_plots *r;
	size_t servers; /* drawn */
	size_t more;	/* not drawn */
	char *names[MAX_LINES];
	double recommended[MAX_LINES], close_p50[MAX_LINES];
	bool closes[MAX_LINES];
	double max_ms;		    /* the linear panel's range */
	double log_lo, log_hi;	    /* the log panel's */
	struct analyses_table text; /* the view's table, every server */
};

/* counts of v on bins [lo_k, lo_k+1): steps, closed at the top */
static void write_steps(FILE *f, const double *edges, size_t nb,
			const double *v, size_t n)
{
	size_t k = 0;

	for (size_t b = 0; b < nb; b++) {
		size_t count = 0;
		while (k < n && v[k] < edges[b + 1]) {
			if (v[k] >= edges[b])
				count++;
			k++;
		}
		fprintf(f, "%.9g %zu\n", edges[b], count);
	}
	fprintf(f, "%.9g 0\n", edges[nb]);
}

/* Edges of 10 log bins per decade over the positive values of n sorted
 * ones (*nb 0 and *edges NULL when there are none). 0, or -1 when out of
 * memory. */
static int log_edges(const double *v, size_t n, double **edges, size_t *nb)
{
	int first = 0, last;

	*edges = NULL;
	*nb = 0;
	if (n == 0 || !(v[n - 1] > 0))
		return 0;
	for (size_t k = 0; k < n; k++)
		if (v[k] > 0) {
			first = (int)floor(log10(v[k]) * 10);
			break;
		}
	last = (int)floor(log10(v[n - 1]) * 10);
	*nb = (size_t)(last - first + 1);
	*edges = malloc((*nb + 1) * sizeof(**edges));
	if (!*edges) {
		*nb = 0;
		return -1;
	}
	for (size_t b = 0; b <= *nb; b++)
		(*edges)[b] = pow(10, (first + (int)b) / 10.0);
	return 0;
}

/* One server's gaps and idle closes on 10 ms bins and log bins. */
static int keepalive_data(void *ctx, const struct analyses_keepalive *k)
{
	struct keepalive_plot *kp = ctx;
	size_t i = kp->servers;
	double *edges = NULL;
	size_t nb;
	FILE *f;

	analyses_keepalive_print(&kp->text, k);
	if (k->ngaps == 0 && k->ncloses == 0)
		return 0;
	if (i == MAX_LINES) {
		kp->more++;
		return 0;
	}
	if (!(kp->names[i] = strdup(k->server)))
		return nomem(kp->r);
	kp->recommended[i] = k->ngaps ? k->recommended_ms : NAN;
	kp->close_p50[i] =
		k->ncloses ? stats_percentile(k->closes, k->ncloses, 50) : NAN;
	kp->closes[i] = k->ncloses > 0;
	kp->servers++;
	if (kp->recommended[i] > 0) { /* the line is inside both panels */
		kp->max_ms = fmax(kp->max_ms, fmin(kp->recommended[i] * 1.1,
						   10.0 * GAP_BINS_LINEAR));
		kp->log_lo = fmin(kp->log_lo, kp->recommended[i] / 2);
		kp->log_hi = fmax(kp->log_hi, kp->recommended[i] * 3);
	}
	/* 10 ms bins up to the longest gap (10 s at most) */
	if (!(f = report_plot_open(kp->r, "gaps_linear", i)))
		return -1;
	if (k->ngaps) {
		size_t bins = (size_t)(k->gaps[k->ngaps - 1] / 10) + 1;
		if (bins > GAP_BINS_LINEAR)
			bins = GAP_BINS_LINEAR;
		edges = malloc((bins + 1) * sizeof(*edges));
		if (!edges) {
			fclose(f);
			return nomem(kp->r);
		}
		for (size_t b = 0; b <= bins; b++)
			edges[b] = 10.0 * (double)b;
		write_steps(f, edges, bins, k->gaps, k->ngaps);
		free(edges);
		if (10.0 * (double)bins > kp->max_ms)
			kp->max_ms = 10.0 * (double)bins;
	}
	fclose(f);
	/* log bins, 10 per decade, of the gaps and of the idle closes */
	for (int what = 0; what < 2; what++) {
		const double *v = what ? k->closes : k->gaps;
		size_t n = what ? k->ncloses : k->ngaps;

		if (!(f = report_plot_open(
			      kp->r, what ? "closes_log" : "gaps_log", i)))
			return -1;
		if (log_edges(v, n, &edges, &nb) != 0) {
			fclose(f);
			return nomem(kp->r);
		}
		if (edges) {
			write_steps(f, edges, nb, v, n);
			kp->log_lo = fmin(kp->log_lo, edges[0]);
			kp->log_hi = fmax(kp->log_hi, edges[nb] * 1.5);
			free(edges);
		}
		fclose(f);
	}
	return 0;
}

static int plot_keepalive(struct report_plots *r, FILE *text,
			  struct findings_rows *rows)
{
	struct keepalive_plot kp = { .r = r,
				     .max_ms = 100,
				     .log_lo = INFINITY,
				     .log_hi = 0,
				     .text = { text, false } };
	int rc = 0;

	analyses_keepalive_header(false, text);
	/* the gaps' pass also gives the findings (client_stall, server_wait)
	 * their rows */
	if (analyses_keepalive_each(r->data->db, r->data->where, keepalive_data,
				    &kp, findings_rows_add, rows) != 0) {
		rc = -1;
		goto out;
	}
	if (kp.servers == 0) {
		report_note_skip(r, "Keep-alive",
				 "no idle gap and no idle close: no connection "
				 "carried two requests or idled until the "
				 "server closed it");
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, "keepalive", pass);
		fprintf(r->gp,
			"set multiplot layout 1,2 title 'Keep-alive: idle gaps "
			"(solid), the server''s idle closes (dotted), the "
			"recommended timeout (dashed)'\n");
		for (int panel = 0; panel < 2; panel++) {
			int n = 0;

			fprintf(r->gp,
				"unset arrow\nset key inside top right\nset ylabel "
				"'count per bin'\nset yrange [0:*]\n%s",
				panel == 0
					? "set title '10 ms bins'\nunset logscale x\n"
					: "set title '10 bins per decade'\nset "
					  "logscale x\n");
			if (panel == 0)
				fprintf(r->gp,
					"set xrange [0:%g]\nset xlabel 'Tgap, "
					"idle gap, ms'\n",
					kp.max_ms);
			else
				fprintf(r->gp,
					"set xrange [%g:%g]\nset xlabel 'Tgap "
					"and idle close (TEOF - T6), ms (log "
					"scale)'\n",
					kp.log_lo, kp.log_hi);
			for (size_t i = 0; i < kp.servers; i++)
				if (kp.recommended[i] > 0 &&
				    (panel == 1 ||
				     kp.recommended[i] <= kp.max_ms))
					fprintf(r->gp,
						"set arrow from %g, graph 0 to "
						"%g, graph 1 nohead lw 2 lc %zu "
						"dt 2\n",
						kp.recommended[i],
						kp.recommended[i], i + 1);
			fprintf(r->gp, "plot ");
			for (size_t i = 0; i < kp.servers; i++) {
				const char *files[2] = {
					panel ? "gaps_log" : "gaps_linear",
					panel ? "closes_log" : NULL
				};
				for (int j = 0; j < 2; j++) {
					if (!files[j] ||
					    !report_plot_written(r, files[j],
								 i))
						continue;
					fprintf(r->gp, "%s", n++ ? ", " : "");
					report_gp_file(r, files[j], i);
					fprintf(r->gp,
						" using 1:2 with steps lw 2 lc "
						"%zu %s title ",
						i + 1, j ? "dt 3" : "");
					report_gp_text(r, "%s %s", kp.names[i],
						       j ? "idle closes"
							 : "gaps");
				}
			}
			if (n == 0) /* nothing on this panel */
				fprintf(r->gp, "NaN notitle");
			fprintf(r->gp, "\n");
		}
		fprintf(r->gp, "unset multiplot\n");
		report_gp_end(r);
	}
	r->plots++;
	note_more_servers(r, "Keep-alive", kp.more);
out:
	for (size_t i = 0; i < kp.servers; i++)
		free(kp.names[i]);
	return rc;
}

/* ---- size ------------------------------------------------------------- */

struct size_plot {
	struct report_plots *r;
	struct findings_sizes *sizes; /* for the findings */
	size_t servers, more;
	char *names[MAX_LINES];
	double a[MAX_LINES], b[MAX_LINES], ts_a[MAX_LINES], ts_b[MAX_LINES];
	struct analyses_table text; /* the view's table, every server */
};

/* One server's points (FIT_POINTS at most) and its fits. */
static int size_data(void *ctx, const struct analyses_size_fit *fit)
{
	struct size_plot *sp = ctx;
	size_t i = sp->servers, step = fit->n / FIT_POINTS + 1;
	FILE *f;

	analyses_size_print(&sp->text, fit);
	if (findings_sizes_add(sp->sizes, fit) != 0) {
		sp->r->failed = true; /* said */
		return -1;
	}
	if (fit->n == 0)
		return 0;
	if (i == MAX_LINES) {
		sp->more++;
		return 0;
	}
	if (!(sp->names[i] = strdup(fit->server)))
		return nomem(sp->r);
	sp->servers++;
	if (!(f = report_plot_open(sp->r, "size_fit", i)))
		return -1;
	for (size_t k = 0; k < fit->n; k += step)
		if (fit->dr[k] > 0 && fit->t_ms[k] > 0)
			fprintf(f, "%.0f %.6f\n", fit->dr[k], fit->t_ms[k]);
	fclose(f);
	sp->a[i] = fit->a;
	sp->b[i] = fit->b;
	sp->ts_a[i] = fit->ts_a;
	sp->ts_b[i] = fit->ts_b;
	return 0;
}

static int plot_size_fit(struct report_plots *r, FILE *text,
			 struct findings_sizes *sizes)
{
	struct size_plot sp = { .r = r,
				.sizes = sizes,
				.text = { text, false } };
	int rc = 0;

	analyses_size_header(false, text);
	if (analyses_size_each(r->data->db, r->data->where, size_data, &sp) !=
	    0) {
		rc = -1;
		goto out;
	}
	if (sp.servers == 0) {
		report_note_skip(r, "Size fit", "no exchange with a response");
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, "size_fit", pass);
		fprintf(r->gp,
			"set title 'T6 - T4 = a Dr + b per server: least "
			"squares (solid), Theil-Sen (dashed)'\nset logscale "
			"xy\nset key inside top left\nset xlabel 'Dr, "
			"bytes received (log scale)'\nset ylabel 'T6 - T4, "
			"request sent to response complete, ms (log scale)'\n"
			"set format x '10^{%%T}'\nset samples 400\n");
		/* gnuplot's own format for 10^n needs enhanced text */
		fprintf(r->gp, "set termoption enhanced\n");
		/* a fit exists when the sizes differ (else a, b are NaN) */
		for (size_t i = 0; i < sp.servers; i++) {
			if (isfinite(sp.a[i]) && isfinite(sp.b[i]))
				fprintf(r->gp, "ls%zu(x) = %.12g * x + %.12g\n",
					i, sp.a[i], sp.b[i]);
			if (isfinite(sp.ts_a[i]) && isfinite(sp.ts_b[i]))
				fprintf(r->gp, "ts%zu(x) = %.12g * x + %.12g\n",
					i, sp.ts_a[i], sp.ts_b[i]);
		}
		fprintf(r->gp, "plot ");
		for (size_t i = 0; i < sp.servers; i++) {
			fprintf(r->gp, "%s", i ? ", " : "");
			report_gp_file(r, "size_fit", i);
			fprintf(r->gp,
				" using 1:2 with points pt 7 ps 0.5 lc %zu "
				"noenhanced title ",
				i + 1);
			report_gp_string(r->gp, sp.names[i]);
			if (!isfinite(sp.a[i]) || !isfinite(sp.b[i]))
				continue; /* one size only: nothing to fit */
			fprintf(r->gp,
				", ls%zu(x) with lines lw 2 lc %zu noenhanced "
				"title ",
				i, i + 1);
			report_gp_text(r, "a = %.3g us/byte, b = %.3g ms",
				       sp.a[i] * 1e3, sp.b[i]);
			if (isfinite(sp.ts_a[i]) && isfinite(sp.ts_b[i]))
				fprintf(r->gp,
					", ts%zu(x) with lines lw 2 dt 2 lc %zu "
					"notitle",
					i, i + 1);
		}
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
	note_more_servers(r, "Size fit", sp.more);
out:
	for (size_t i = 0; i < sp.servers; i++)
		free(sp.names[i]);
	return rc;
}

static int plot_family(struct report_plots *r, FILE *text);

int report_plot_analyses(struct report_plots *r, struct report_view_texts *t)
{
	size_t len[3];
	FILE *f[3] = { open_memstream(&t->keepalive, &len[0]),
		       open_memstream(&t->size, &len[1]),
		       open_memstream(&t->family, &len[2]) };
	int rc = 0;

	if (!f[0] || !f[1] || !f[2] || !(t->rows = findings_rows_new()))
		rc = nomem(r);
	if (rc == 0 &&
	    (plot_endings(r) != 0 || plot_keepalive(r, f[0], t->rows) != 0 ||
	     plot_size_fit(r, f[1], &t->sizes) != 0 ||
	     plot_family(r, f[2]) != 0))
		rc = -1;
	for (int i = 0; i < 3; i++)
		if (f[i] && fclose(f[i]) != 0 && rc == 0)
			rc = nomem(r);
	if (rc != 0 || r->failed) {
		report_view_texts_free(t);
		return -1;
	}
	return 0;
}

void report_view_texts_free(struct report_view_texts *t)
{
	free(t->keepalive);
	free(t->size);
	free(t->family);
	findings_sizes_free(&t->sizes);
	findings_rows_free(t->rows);
	*t = (struct report_view_texts){ NULL };
}

/* ---- family ----------------------------------------------------------------
 */

/* The p50s of the family view's groups (IPv4/IPv6 x plain/TLS) side by
 * side, when there are two groups or more; read from the view's own CSV so
 * that plot and table cannot disagree. */
static int plot_family(struct report_plots *r, FILE *table)
{
	static const char *const metrics[] = { "te_ms", "tls_ms", "tw_ms",
					       "tr_ms", "tt_ms" };
	enum { NM = 5, MAX_GROUPS = 4 };
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, ng = 0;
	FILE *f = open_memstream(&text, &len);
	int groups[MAX_GROUPS][2]; /* family, tls */
	double p50[NM][MAX_GROUPS];

	if (!f)
		return nomem(r);
	if (analyses_family(r->data->db, r->data->where, f, table) != 0) {
		fclose(f);
		free(text);
		return -1;
	}
	fclose(f);
	for (int m = 0; m < NM; m++)
		for (int g = 0; g < MAX_GROUPS; g++)
			p50[m][g] = NAN;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int family, tls;
		char metric[16];
		size_t n, g;
		double v50, v90, mean;

		if (sscanf(line, "%d,%d,%15[^,],%zu,%lf,%lf,%lf", &family, &tls,
			   metric, &n, &v50, &v90, &mean) != 7)
			continue; /* the header */
		for (g = 0; g < ng; g++)
			if (groups[g][0] == family && groups[g][1] == tls)
				break;
		if (g == ng) {
			if (ng == MAX_GROUPS)
				continue;
			groups[ng][0] = family;
			groups[ng][1] = tls;
			ng++;
		}
		for (int m = 0; m < NM; m++)
			if (strcmp(metric, metrics[m]) == 0)
				p50[m][g] = v50 > 0 ? v50 : NAN;
	}
	free(text);
	if (ng < 2) {
		report_note_skip(r, "IPv4/IPv6 and TLS/plain",
				 "one group only: nothing to compare");
		return 0;
	}
	if (!(f = report_plot_open(r, "family", 0)))
		return -1;
	for (int m = 0; m < NM; m++) {
		fprintf(f, "%d", m);
		for (size_t g = 0; g < ng; g++)
			fprintf(f, " %.9g", p50[m][g]);
		fprintf(f, "\n");
	}
	fclose(f);
	for (int pass = 0; pass < 2; pass++) {
		report_gp_begin(r, "family", pass);
		fprintf(r->gp,
			"set title 'p50 per address family and TLS (seed 000)'\n"
			"set style data histogram\nset style histogram "
			"clustered gap 1\nset style fill solid 0.8 border -1\n"
			"set logscale y\nset ylabel 'p50, ms (log scale)'\n"
			"set xlabel 'Te set-up, TLS handshake, Tw wait for the "
			"first byte, Tr response, Tt connection'\nset xtics "
			"('Te' 0, 'TLS' 1, 'Tw' 2, 'Tr' 3, 'Tt' 4)\nplot ");
		for (size_t g = 0; g < ng; g++)
			fprintf(r->gp,
				"%s'%s/family-0.dat' using %zu title "
				"'IPv%d %s'",
				g ? ", " : "", r->tmp, g + 2, groups[g][0],
				groups[g][1] ? "TLS" : "plain");
		fprintf(r->gp, "\n");
		report_gp_end(r);
	}
	r->plots++;
	return 0;
}
