/* report_data.h - what manager report reads from the database before it
 * draws anything: per client the figures of its connections and exchanges
 * (sorted), samples for the scatter and the time series, the bytes
 * received per time bucket, the span of the requests; and the statistics
 * and analyses as text. */
#ifndef OBSERVE_MANAGER_REPORT_DATA_H
#define OBSERVE_MANAGER_REPORT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "stats.h"

#define REPORT_MAX_POINTS 200000 /* scatter and time series: sampled beyond */

/* The per-client figures: Tt, Te, Ra per connection; Tw, Tr, Rr per
 * exchange. */
enum { M_TT, M_TE, M_RA, M_TW, M_TR, M_RR, M_COUNT };

struct report_metric {
	const char *key;   /* in file names: cdf_KEY */
	const char *label; /* in titles */
	const char *unit;  /* "ms" or "bytes/s" */
};
extern const struct report_metric report_metrics[M_COUNT];

struct report_point {
	double x, y;
};
struct report_points {
	struct report_point *v;
	size_t n, cap;
};

/* What the page shows of a client's metric (nearest-rank percentiles). */
struct report_figures {
	size_t n;
	double p50, p90, p99, max;
};

struct report_client {
	char *name;
	struct vec m[M_COUNT]; /* sorted; freed by report_data_shrink */
	struct report_figures f[M_COUNT]; /* of m */
	/* its exchanges: how many, how many before its own among all in
	 * the clients' order, how many read so far (the sampling's ranks) */
	size_t span_rows, offset, ranked;
	size_t exchanges, connections;
	/* every sample_every-th exchange of all: Dr (bytes) against T6 - T3
	 * (ms), both positive; the request's start (s since t_first) against
	 * Tr (ms) */
	struct report_points scatter, series;
	/* bytes received per bucket (by the time each response ended): the
	 * bucket's number from t_first, the bytes; buckets in order */
	struct report_points rate;
};

struct report_data {
	sqlite3 *db;
	const char *db_path; /* in messages */
	const char *where;   /* the filter, "1" for none */
	struct report_client *c;
	size_t nc;
	int64_t t_first, t_last; /* epoch ns: first request, last response */
	size_t sample_every;	 /* of the scatter and series */
	double bucket_s;	 /* of the throughput */
	char *stats;		 /* the statistics table per client */
	bool span_seen;		 /* t_first and t_last found */
};

/* Read everything the plots and the page need from d->db, d->where. 0, or
 * -1 with the reason said on stderr (what was read stays for
 * report_data_free). */
int report_data_read(struct report_data *d);
void report_data_free(struct report_data *d);
/* Once the plots' data files are written: the clients' values (m) freed,
 * their figures (f) kept, so that what runs next has the memory. */
void report_data_shrink(struct report_data *d);

/* The statistics table per client (view NULL: the one report_data_read
 * made) or an analysis (endings,
 * keepalive, size, family) as text: malloc'd, NULL on error (said). */
char *report_data_text(const struct report_data *d, const char *view);

#endif
