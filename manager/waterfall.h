/* waterfall.h - the waterfall of manager waterfall and manager report: the
 * selected connections on one time axis, a row per connection (its life,
 * T1 to T7) followed by a row per exchange on it, each with its phases as
 * segments (DNS, connect, TLS, send, wait, receive) and the idle time
 * before its request; read from the database, drawn by gnuplot with the
 * helpers of report_plots.h. Definitions in docs/analyses.md. */
#ifndef OBSERVE_MANAGER_WATERFALL_H
#define OBSERVE_MANAGER_WATERFALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "report_plots.h"

#define WATERFALL_ROWS 200	/* rows drawn unless told (--rows) */
#define WATERFALL_MAX_ROWS 2000 /* --rows at most */

enum wf_kind {
	WF_CONN,    /* the connection's life: T1 to T7 (its header row) */
	WF_IDLE,    /* the connection idle before a request: since it was up
		     * (T2, or the TLS handshake's end) or the previous
		     * exchange's T6, to T3 */
	WF_DNS,	    /* the lookup that gave the address: dns_start, dns_end */
	WF_CONNECT, /* T1 to T2: Te */
	WF_TLS,	    /* the handshake: tls_start, tls_end */
	WF_SEND,    /* T3 to T4: Ts */
	WF_WAIT,    /* T4 to TFB: Tw */
	WF_RECV,    /* TFB to T6: Trecv */
	WF_KINDS
};

/* The legend's name of each kind, in the order above. */
extern const char *const waterfall_kind_names[WF_KINDS];

struct wf_segment {
	int64_t from, to; /* epoch ns */
	size_t row;
	enum wf_kind kind;
};

struct wf_row {
	char *label;
	bool header; /* a connection's row */
	/* a connection's: its program's base name and pid, its process */
	char *who;
	int64_t process;
};

struct waterfall {
	struct wf_row *rows;
	size_t nrows, cap_rows;
	struct wf_segment *seg;
	size_t nseg, cap_seg;
	size_t total_rows; /* of the selection: more than nrows if cut */
	size_t connections, exchanges; /* drawn */
	int processes;	       /* 2 when more than one process is drawn */
	int64_t first_process; /* process.id of the first drawn */
	int64_t t0;	       /* the first event drawn, epoch ns */
};

/* Read the waterfall of the connections that the filter where (an SQL
 * expression over exchange_metrics, "1" for none) keeps, of the process
 * whose process.id is process (0: every process), ordered by T1 and their
 * exchanges by number; at most max_rows rows (total_rows says how many
 * there were). 0, or -1 with the reason (naming db_path) on stderr. */
int waterfall_read(sqlite3 *db, const char *db_path, const char *where,
		   int64_t process, size_t max_rows, struct waterfall *w);
void waterfall_free(struct waterfall *w);

/* The height in pixels of the waterfall's plot. */
int waterfall_height(const struct waterfall *w);

/* The data files (TMP/wf-KIND-N.dat, N = index) and the script lines of
 * plot NAME (NAME.png when png, NAME.svg when svg) with this title, 1000
 * pixels wide. Nothing when w has no row. 0, or -1 (said). */
int waterfall_plot(struct report_plots *p, const struct waterfall *w,
		   size_t index, const char *name, const char *title, bool png,
		   bool svg);

/* A program run (process) for the report's waterfalls. */
struct wf_run {
	int64_t process; /* process.id */
	char *program;	 /* its base name */
	char *client;
	int pid;
};

/* The runs that get a waterfall in the report: the first run (by its
 * first connect) of each program among the connections where keeps, in
 * the order of those first runs, at most max. 0, or -1 (said). */
int waterfall_runs(sqlite3 *db, const char *db_path, const char *where,
		   size_t max, struct wf_run **runs, size_t *n);
void waterfall_runs_free(struct wf_run *runs, size_t n);

#endif
