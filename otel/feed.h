/* feed.h - the metrics (metrics.h) fed from a database: every exchange and
 * connection once it is final (cursor.h), each observed once. */
#ifndef OBSERVE_OTEL_FEED_H
#define OBSERVE_OTEL_FEED_H

#include <stddef.h>

#include <sqlite3.h>

#include "metrics.h"

struct otel_feed;

/* A feed into m, from the first row of the database it reads. NULL when
 * out of memory. */
struct otel_feed *otel_feed_new(struct otel_metrics *m);
void otel_feed_free(struct otel_feed *f);

/* Observe what became final in db since the last call. 0, or -1 with
 * SQLite's message in err (what was observed stays). */
int otel_feed_run(struct otel_feed *f, sqlite3 *db, char *err, size_t errlen);

#endif
