/* cursor.h - how far a reader of the database has gone through the
 * exchanges (or the connections) that are final, for the OTLP push (kept
 * in the database per endpoint: a restart neither loses nor repeats a
 * span) and for the metrics (in memory).
 *
 * A row is final when nothing of it will change: the exchange (or
 * connection) is complete, its connection is, or its process is gone. Rows
 * are taken in the order of their ids; one that is not final yet is held
 * (pending) and taken once it is, without holding back those after it. */
#ifndef OBSERVE_OTEL_CURSOR_H
#define OBSERVE_OTEL_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* The rows a cursor walks. */
enum otel_rows { OTEL_EXCHANGES, OTEL_CONNECTIONS };

/* At most this many rows held pending: a cursor that would hold more
 * stops there (and goes on once some are final). */
#define OTEL_PENDING_MAX 65536

/* Every row with an id below next was taken, but those in pending. */
struct otel_cursor {
	enum otel_rows rows;
	int64_t next;
	int64_t *pending;
	size_t n_pending, cap;
};

/* A batch: the final rows to take (ids, in order), and what the cursor
 * becomes once they are taken (otel_cursor_advance). */
struct otel_batch {
	int64_t *ids;
	size_t n;
	int64_t next;  /* the cursor's next after it */
	int64_t *held; /* the rows it leaves pending: still in flight */
	size_t n_held;
};

/* The next batch of c's rows in db: the pending rows that are final now,
 * then the final rows from c->next on, max at most. 0 (b->n may be 0:
 * nothing new), or -1 with SQLite's message in err. */
int otel_cursor_batch(sqlite3 *db, const struct otel_cursor *c, size_t max,
		      struct otel_batch *b, char *err, size_t errlen);

/* c past b: its rows taken. 0, or -1 when out of memory (c unchanged). */
int otel_cursor_advance(struct otel_cursor *c, const struct otel_batch *b);

void otel_batch_free(struct otel_batch *b);
void otel_cursor_free(struct otel_cursor *c);

/* The cursor of the OTLP push to url, from the table otlp_mark (created
 * when missing; docs/schema.md): from the first exchange when there is
 * none yet. 0, or -1 with err. */
int otel_mark_load(sqlite3 *db, const char *url, struct otel_cursor *c,
		   char *err, size_t errlen);

/* Keeps c as url's mark. 0, or -1 with err. */
int otel_mark_save(sqlite3 *db, const char *url, const struct otel_cursor *c,
		   char *err, size_t errlen);

#endif
