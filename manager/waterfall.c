/* waterfall.c - the waterfall (see waterfall.h): the rows and segments of
 * the selected connections read from the database, their data files and
 * gnuplot lines, and the program runs the report draws one for. */
#define _GNU_SOURCE
#include "waterfall.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

#define LABEL_MAX 48 /* characters of a row's label */

const char *const waterfall_kind_names[WF_KINDS] = {
	[WF_CONN] = "connection open",
	[WF_IDLE] = "idle",
	[WF_DNS] = "DNS",
	[WF_CONNECT] = "connect",
	[WF_TLS] = "TLS",
	[WF_SEND] = "send",
	[WF_WAIT] = "wait",
	[WF_RECV] = "receive",
};

static const struct {
	const char *color;
	double half; /* height of the bar, rows */
} kind_style[WF_KINDS] = {
	[WF_CONN] = { "#c8ccd2", 0.16 }, [WF_IDLE] = { "#8a9099", 0.05 },
	[WF_DNS] = { "#1a9e8f", 0.32 },	 [WF_CONNECT] = { "#f29b1d", 0.32 },
	[WF_TLS] = { "#9c3fc4", 0.32 },	 [WF_SEND] = { "#5f6b7a", 0.32 },
	[WF_WAIT] = { "#3cb371", 0.32 }, [WF_RECV] = { "#2f7ed8", 0.32 },
};

/* A copy of label cut to LABEL_MAX characters, malloc'd (NULL when out of
 * memory). */
static char *cut_label(const char *label)
{
	char *copy = NULL;

	if (strlen(label) <= LABEL_MAX)
		return strdup(label);
	return asprintf(&copy, "%.*s...", LABEL_MAX - 3, label) < 0 ? NULL
								    : copy;
}

/* Room in the array *p of elements of size bytes, *cap of them, for one
 * more after n. 0, or -1 when out of memory (*p unchanged). */
static int room(void *p, size_t size, size_t n, size_t *cap)
{
	size_t more = *cap ? *cap * 2 : 64;
	void *grown;

	if (n < *cap)
		return 0;
	if (!(grown = realloc(*(void **)p, more * size)))
		return -1;
	*(void **)p = grown;
	*cap = more;
	return 0;
}

/* The row with this label (a copy, cut). Its index, or -1 when out of
 * memory. */
static long add_row(struct waterfall *w, const char *label, bool header)
{
	char *copy;

	if (room(&w->rows, sizeof(*w->rows), w->nrows, &w->cap_rows) != 0 ||
	    !(copy = cut_label(label)))
		return -1;
	w->rows[w->nrows] = (struct wf_row){ .label = copy, .header = header };
	return (long)w->nrows++;
}

/* A segment from..to on row (nothing when a moment is unknown, 0, or the
 * end comes first). Its index, -2 when there is none, -1 when out of
 * memory. */
static long add_segment(struct waterfall *w, size_t row, enum wf_kind kind,
			int64_t from, int64_t to)
{
	if (!from || !to || to < from)
		return -2;
	if (room(&w->seg, sizeof(*w->seg), w->nseg, &w->cap_seg) != 0)
		return -1;
	w->seg[w->nseg] = (struct wf_segment){ from, to, row, kind };
	return (long)w->nseg++;
}

void waterfall_free(struct waterfall *w)
{
	for (size_t i = 0; i < w->nrows; i++) {
		free(w->rows[i].label);
		free(w->rows[i].who);
	}
	free(w->rows);
	free(w->seg);
	memset(w, 0, sizeof(*w));
}

/* The columns of the connections' query (waterfall_read). */
enum {
	C_ID,
	C_SEQ,
	C_T1,
	C_T2,
	C_T7,
	C_DNS_START,
	C_DNS_END,
	C_TLS_START,
	C_TLS_END,
	C_HOST, /* the name looked up, else the address */
	C_PORT,
	C_PROGRAM,
	C_PID,
	C_END,
	C_TLS,
	C_PROCESS,
	C_PROTO,
};

/* The columns of the query of one connection's exchanges. */
enum {
	X_SEQ,
	X_T3,
	X_T4,
	X_TFB,
	X_T6,
	X_METHOD,
	X_PATH,
	X_STATUS,
};

static const char *text(sqlite3_stmt *st, int col, const char *none)
{
	const char *t = (const char *)sqlite3_column_text(st, col);

	return t ? t : none;
}

/* A connection's header row (st: its row of the connections' query) and
 * its set-up segments (on its first exchange's row when that is exchange
 * 1, first_here, else on the header). -1 when out of memory; *life the
 * index of its WF_CONN segment (or -2). */
static int add_connection(struct waterfall *w, sqlite3_stmt *st,
			  bool first_here, size_t max_rows, long *life,
			  int64_t *ready)
{
	const char *program = text(st, C_PROGRAM, "?"), *slash;
	char *label = NULL;
	long row, setup;
	int64_t t1 = sqlite3_column_int64(st, C_T1);
	int64_t t7 = sqlite3_column_int64(st, C_T7);
	int64_t tls_end = sqlite3_column_int64(st, C_TLS_END);

	if ((slash = strrchr(program, '/')))
		program = slash + 1;
	if (asprintf(&label, "conn %d %s:%d%s%s%s, %s",
		     sqlite3_column_int(st, C_SEQ), text(st, C_HOST, "?"),
		     sqlite3_column_int(st, C_PORT),
		     sqlite3_column_int(st, C_TLS) ? " TLS" : "",
		     sqlite3_column_type(st, C_PROTO) == SQLITE_NULL ? "" : " ",
		     text(st, C_PROTO, ""), text(st, C_END, "open")) < 0)
		return -1;
	row = add_row(w, label, true);
	free(label);
	if (row < 0)
		return -1;
	w->rows[row].process = sqlite3_column_int64(st, C_PROCESS);
	if (asprintf(&w->rows[row].who, "%s %d", program,
		     sqlite3_column_int(st, C_PID)) < 0) {
		w->rows[row].who = NULL;
		return -1;
	}
	if (w->connections++ && w->rows[row].process != w->first_process)
		w->processes = 2;
	else
		w->first_process = w->rows[row].process;
	/* the life ends at T7, or where the last exchange drawn ends */
	*life = add_segment(w, (size_t)row, WF_CONN, t1, t7 ? t7 : t1);
	if (*life == -1)
		return -1;
	*ready = sqlite3_column_int64(st, C_T2);
	if (tls_end > *ready)
		*ready = tls_end;
	/* on the next row when that is exchange 1 and will be drawn */
	setup = first_here && w->nrows < max_rows ? row + 1 : row;
	if (add_segment(w, (size_t)setup, WF_DNS,
			sqlite3_column_int64(st, C_DNS_START),
			sqlite3_column_int64(st, C_DNS_END)) == -1 ||
	    add_segment(w, (size_t)setup, WF_CONNECT, t1,
			sqlite3_column_int64(st, C_T2)) == -1 ||
	    add_segment(w, (size_t)setup, WF_TLS,
			sqlite3_column_int64(st, C_TLS_START), tls_end) == -1)
		return -1;
	return 0;
}

/* An exchange's row and segments (st: its row of the exchanges' query, conn
 * its connection's row); *ready is when the connection could send next
 * (this exchange's T6 after it). -1 when out of memory. */
static int add_exchange(struct waterfall *w, sqlite3_stmt *conn,
			sqlite3_stmt *st, long life, int64_t *ready)
{
	const char *path = text(st, X_PATH, NULL);
	char *label = NULL;
	long row;
	int64_t t3 = sqlite3_column_int64(st, X_T3);
	int64_t t4 = sqlite3_column_int64(st, X_T4);
	int64_t tfb = sqlite3_column_int64(st, X_TFB);
	int64_t t6 = sqlite3_column_int64(st, X_T6);
	int status = sqlite3_column_int(st, X_STATUS);
	int n;

	if (path) /* METHOD PATH STATUS, as known */
		n = asprintf(&label, "%s%s%s%s%.0d", text(st, X_METHOD, ""),
			     sqlite3_column_type(st, X_METHOD) == SQLITE_NULL
				     ? ""
				     : " ",
			     path, status ? " " : "", status);
	else
		n = asprintf(&label, "%s:%d #%d", text(conn, C_HOST, "?"),
			     sqlite3_column_int(conn, C_PORT),
			     sqlite3_column_int(st, X_SEQ));
	if (n < 0)
		return -1;
	row = add_row(w, label, false);
	free(label);
	if (row < 0)
		return -1;
	w->exchanges++;
	if (add_segment(w, (size_t)row, WF_IDLE, *ready, t3) == -1 ||
	    add_segment(w, (size_t)row, WF_SEND, t3, t4) == -1 ||
	    add_segment(w, (size_t)row, WF_WAIT, t4, tfb) == -1 ||
	    add_segment(w, (size_t)row, WF_RECV, tfb, t6) == -1)
		return -1;
	if (t6)
		*ready = t6;
	/* a connection still open: its life reaches its last response */
	if (life >= 0 && !sqlite3_column_int64(conn, C_T7) &&
	    t6 > w->seg[life].to)
		w->seg[life].to = t6;
	return 0;
}

/* sql (NULL: out of memory) prepared into *st: SQLITE_OK, SQLITE_NOMEM or
 * SQLITE_ERROR (then query_end says why). */
static int query_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	if (!sql)
		return SQLITE_NOMEM;
	return sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK
		       ? SQLITE_OK
		       : SQLITE_ERROR;
}

/* The end of a query: rc the last step's result (SQLITE_NOMEM when we ran
 * out of memory). The reason said, st and sql freed; 0 when rc is
 * SQLITE_DONE, else -1. */
static int query_end(sqlite3 *db, const char *db_path, sqlite3_stmt *st,
		     char *sql, int rc)
{
	if (rc == SQLITE_NOMEM)
		fprintf(stderr, "manager: out of memory\n");
	else if (rc != SQLITE_DONE)
		fprintf(stderr, "manager: %s: %s\n", db_path,
			sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* More than one process drawn: each connection's row names its program
 * and pid first. -1 when out of memory. */
static int name_processes(struct waterfall *w)
{
	for (size_t r = 0; r < w->nrows; r++) {
		char *both = NULL, *cut;

		if (!w->rows[r].header)
			continue;
		if (asprintf(&both, "%s %s", w->rows[r].who, w->rows[r].label) <
		    0)
			return -1;
		cut = cut_label(both);
		free(both);
		if (!cut)
			return -1;
		free(w->rows[r].label);
		w->rows[r].label = cut;
	}
	return 0;
}

/* The exchanges of the connection bound as ?1 that the filter keeps: the
 * rest of them counted (count, bound the same) when the rows are full.
 * The last step's result: SQLITE_DONE, or the error. */
static int read_exchanges(struct waterfall *w, sqlite3_stmt *conn,
			  sqlite3_stmt *ex, sqlite3_stmt *count,
			  size_t max_rows)
{
	int64_t id = sqlite3_column_int64(conn, C_ID), seen = 0, ready = 0;
	long life = -2;
	int rc;

	sqlite3_bind_int64(ex, 1, id);
	rc = sqlite3_step(ex);
	if (w->nrows < max_rows &&
	    add_connection(w, conn,
			   rc == SQLITE_ROW &&
				   sqlite3_column_int(ex, X_SEQ) == 1,
			   max_rows, &life, &ready))
		rc = SQLITE_NOMEM;
	for (; rc == SQLITE_ROW && w->nrows < max_rows; rc = sqlite3_step(ex)) {
		seen++;
		w->total_rows++;
		if (add_exchange(w, conn, ex, life, &ready)) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	sqlite3_reset(ex);
	if (rc != SQLITE_ROW)
		return rc;
	/* the rows are full: the others only counted */
	sqlite3_bind_int64(count, 1, id);
	if ((rc = sqlite3_step(count)) == SQLITE_ROW) {
		w->total_rows +=
			(size_t)(sqlite3_column_int64(count, 0) - seen);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(count);
	return rc;
}

int waterfall_read(sqlite3 *db, const char *db_path, const char *where,
		   int64_t process, size_t max_rows, struct waterfall *w)
{
	char *conns = filter_connections(where), *sql = NULL, *xsql = NULL,
	     *nsql = NULL, *in_process = NULL;
	sqlite3_stmt *st = NULL, *ex = NULL, *count = NULL;
	int rc = SQLITE_NOMEM;

	memset(w, 0, sizeof(*w));
	/* the connections in order, then each one's exchanges through the
	 * index on (connection_id, seq): the rows drawn read, the others
	 * counted, never a pass over every exchange */
	in_process = process ? sqlite3_mprintf("c.process_id = %lld",
					       (long long)process)
			     : sqlite3_mprintf("1");
	if (conns && in_process)
		sql = sqlite3_mprintf(
			"SELECT c.id, c.seq, c.t1_ns, c.t2_ns, c.t7_ns, "
			"c.dns_start_ns, c.dns_end_ns, c.tls_start_ns, "
			"c.tls_end_ns, coalesce(c.dns_name, c.peer_addr), "
			"c.peer_port, m.program, m.pid, m.end_class, m.tls, "
			"c.process_id, m.protocol FROM connection_metrics m "
			"JOIN connection c ON c.id = m.connection_id WHERE %s "
			"AND %s ORDER BY c.t1_ns, c.id",
			conns, in_process);
	xsql = sqlite3_mprintf("SELECT seq, t3_ns, t4_ns, tfb_ns, t6_ns, "
			       "method, path, status FROM exchange_metrics "
			       "WHERE connection_id = ?1 AND (%s) ORDER BY seq",
			       where);
	nsql = sqlite3_mprintf("SELECT count(*) FROM exchange_metrics WHERE "
			       "connection_id = ?1 AND (%s)",
			       where);
	sqlite3_free(conns);
	sqlite3_free(in_process);
	if (!sql || !xsql || !nsql)
		goto out;
	if ((rc = query_prepare(db, sql, &st)) != SQLITE_OK ||
	    (rc = query_prepare(db, xsql, &ex)) != SQLITE_OK ||
	    (rc = query_prepare(db, nsql, &count)) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		w->total_rows++;
		rc = read_exchanges(w, st, ex, count, max_rows);
		if (rc != SQLITE_DONE)
			break;
	}
out:
	for (size_t i = 0; i < w->nseg; i++)
		if (!w->t0 || w->seg[i].from < w->t0)
			w->t0 = w->seg[i].from;
	if (rc == SQLITE_DONE && w->processes > 1 && name_processes(w) != 0)
		rc = SQLITE_NOMEM;
	sqlite3_finalize(ex);
	sqlite3_finalize(count);
	sqlite3_free(xsql);
	sqlite3_free(nsql);
	return query_end(db, db_path, st, sql, rc);
}

int waterfall_height(const struct waterfall *w)
{
	return 160 + 20 * (int)w->nrows; /* the title, axis and legend: 160 */
}

/* The data file's stem of a kind: wf-NAME (the name's first word). */
static void kind_file(char *what, size_t size, int kind)
{
	snprintf(what, size, "wf-%s", waterfall_kind_names[kind]);
	what[strcspn(what, " ")] = '\0';
}

int waterfall_plot(struct report_plots *p, const struct waterfall *w,
		   size_t index, const char *name, const char *title, bool png,
		   bool svg)
{
	char what[32];
	bool any[WF_KINDS] = { false };
	size_t width = 0;
	double x_max = 0;

	if (!w->nrows)
		return 0;
	for (int k = 0; k < WF_KINDS; k++) {
		FILE *f;

		kind_file(what, sizeof(what), k);
		for (size_t i = 0; i < w->nseg; i++)
			any[k] |= w->seg[i].kind == (enum wf_kind)k;
		if (!any[k])
			continue;
		if (!(f = report_plot_open(p, what, index)))
			return -1;
		for (size_t i = 0; i < w->nseg; i++)
			if (w->seg[i].kind == (enum wf_kind)k)
				fprintf(f, "%.6f %.6f %zu\n",
					(double)(w->seg[i].from - w->t0) / 1e6,
					(double)(w->seg[i].to - w->t0) / 1e6,
					w->seg[i].row);
		if (fclose(f) != 0) {
			report_plots_nomem(p);
			return -1;
		}
	}
	for (size_t r = 0; r < w->nrows; r++)
		if (strlen(w->rows[r].label) > width)
			width = strlen(w->rows[r].label);
	/* the axis ends with the last phase: a connection kept open after
	 * its last exchange runs off its right edge */
	for (int all = 0; all < 2 && !(x_max > 0); all++)
		for (size_t i = 0; i < w->nseg; i++)
			if (all || w->seg[i].kind != WF_CONN)
				x_max = fmax(x_max,
					     (double)(w->seg[i].to - w->t0) /
						     1e6);
	for (int pass = 0; pass < 2; pass++) {
		bool first = true;

		if ((pass == 0 && !png) || (pass == 1 && !svg))
			continue;
		report_gp_begin_sized(p, name, pass, 1000, waterfall_height(w));
		fprintf(p->gp, "set title ");
		report_gp_string(p->gp, title);
		fprintf(p->gp,
			"\nunset grid\nset grid xtics\nset key at screen 0.5, "
			"screen 0.01 center bottom horizontal\n"
			"set bmargin 7\nset style fill solid 1.0 noborder\n"
			"set xlabel 'ms since the first event drawn'\n"
			"set xrange [0:%.6f]\nset yrange [%zu.5:-0.5]\nset "
			"lmargin %zu\nset ytics scale 0 (",
			fmax(x_max * 1.02, 0.001), w->nrows - 1,
			width * 21 / 20 + 2);
		for (size_t r = 0; r < w->nrows; r++) {
			fprintf(p->gp, "%s", r ? ", " : "");
			report_gp_string(p->gp, w->rows[r].label);
			fprintf(p->gp, " %zu", r);
		}
		fprintf(p->gp, ")\n");
		for (size_t r = 0; r < w->nrows; r++)
			if (w->rows[r].header)
				fprintf(p->gp,
					"set object rect from graph 0, first "
					"%zu.5 to graph 1, first %.1f behind "
					"fillcolor rgb '#eef1f5' fillstyle "
					"solid 1.0 noborder\n",
					r, (double)r - 0.5);
		fprintf(p->gp, "plot ");
		for (int k = 0; k < WF_KINDS; k++) {
			if (!any[k])
				continue;
			kind_file(what, sizeof(what), k);
			fprintf(p->gp, "%s", first ? "" : ", ");
			first = false;
			report_gp_file(p, what, index);
			fprintf(p->gp,
				" using 1:3:1:2:($3-%.2f):($3+%.2f) with "
				"boxxyerror lc rgb '%s' title '%s'",
				kind_style[k].half, kind_style[k].half,
				kind_style[k].color, waterfall_kind_names[k]);
		}
		fprintf(p->gp, "\n");
		report_gp_end(p);
	}
	p->plots++;
	return p->failed ? -1 : 0;
}

void waterfall_runs_free(struct wf_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(runs[i].program);
		free(runs[i].client);
	}
	free(runs);
}

int waterfall_runs(sqlite3 *db, const char *db_path, const char *where,
		   size_t max, struct wf_run **runs, size_t *n)
{
	char *conns = filter_connections(where);
	/* the runs in the order of their first connect; the first of each
	 * program kept */
	char *sql = conns ? sqlite3_mprintf(
				    "SELECT c.process_id, p.program, cl.name, "
				    "p.pid, min(c.t1_ns) AS first FROM "
				    "connection_metrics m JOIN connection c ON "
				    "c.id = m.connection_id JOIN process p ON "
				    "p.id = c.process_id JOIN client cl ON "
				    "cl.id = p.client_id WHERE %s GROUP BY "
				    "c.process_id ORDER BY first, c.process_id",
				    conns)
			  : NULL;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_NOMEM;

	*runs = NULL;
	*n = 0;
	sqlite3_free(conns);
	if ((rc = query_prepare(db, sql, &st)) != SQLITE_OK)
		goto out;
	rc = SQLITE_NOMEM;
	if (!(*runs = calloc(max ? max : 1, sizeof(**runs))))
		goto out;
	rc = SQLITE_DONE;
	while (*n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *program = text(st, 1, "?"), *slash;
		struct wf_run *r = &(*runs)[*n];
		bool seen = false;

		if ((slash = strrchr(program, '/')))
			program = slash + 1;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = strcmp((*runs)[i].program, program) == 0;
		if (seen)
			continue;
		r->process = sqlite3_column_int64(st, 0);
		r->pid = sqlite3_column_int(st, 3);
		r->program = strdup(program);
		r->client = strdup(text(st, 2, "?"));
		++*n;
		if (!r->program || !r->client) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	if (*n == max && rc == SQLITE_ROW)
		rc = SQLITE_DONE; /* enough */
out:
	if (query_end(db, db_path, st, sql, rc) != 0) {
		waterfall_runs_free(*runs, *n);
		*runs = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}
