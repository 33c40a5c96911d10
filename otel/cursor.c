/* cursor.c - a reader's way through the final rows of the database (see
 * cursor.h), and its mark kept in the table otlp_mark; the same queries
 * on SQLite and PostgreSQL (source.h). */
#define _GNU_SOURCE
#include "cursor.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* Whether a row is final (1 or 0), in the SQL of both engines. */
#define EXCHANGE_FINAL                                                         \
	"CASE WHEN e.complete <> 0 OR c.complete <> 0 OR p.ended <> 0 THEN 1 " \
	"ELSE 0 END"
#define CONNECTION_FINAL                                                       \
	"CASE WHEN c.complete <> 0 OR p.ended <> 0 THEN 1 ELSE 0 END"
#define EXCHANGE_JOINS                                                         \
	" JOIN connection c ON c.id = e.connection_id"                         \
	" JOIN process p ON p.id = c.process_id"

/* The rows' ids and whether each is final: from $1 on, $2 at most, in
 * order (scan); those in otel_ids that are still there (state). */
static const char *const scan_sql[] = {
	[OTEL_EXCHANGES] =
		"SELECT e.id, " EXCHANGE_FINAL " FROM exchange e" EXCHANGE_JOINS
		" WHERE e.id >= $1 ORDER BY e.id LIMIT $2",
	[OTEL_CONNECTIONS] = "SELECT c.id, " CONNECTION_FINAL
			     " FROM connection c JOIN process p ON p.id = "
			     "c.process_id WHERE c.id >= $1 ORDER BY c.id "
			     "LIMIT $2",
};
static const char *const state_sql[] = {
	[OTEL_EXCHANGES] = "SELECT e.id, " EXCHANGE_FINAL " FROM " OTEL_IDS
			   " m JOIN exchange e ON e.id = m.id" EXCHANGE_JOINS
			   " ORDER BY e.id",
	[OTEL_CONNECTIONS] = "SELECT c.id, " CONNECTION_FINAL " FROM " OTEL_IDS
			     " m JOIN connection c ON c.id = m.id JOIN "
			     "process p ON p.id = c.process_id ORDER BY c.id",
};

/* Appends v to *a (n used, *cap allocated). 0, or -1. */
static int push_id(int64_t **a, size_t *n, size_t *cap, int64_t v)
{
	if (*n == *cap) {
		size_t more = *cap ? 2 * *cap : 64;
		int64_t *p = realloc(*a, more * sizeof(**a));

		if (!p)
			return -1;
		*a = p;
		*cap = more;
	}
	(*a)[(*n)++] = v;
	return 0;
}

void otel_batch_free(struct otel_batch *b)
{
	free(b->ids);
	free(b->held);
	memset(b, 0, sizeof(*b));
}

void otel_cursor_free(struct otel_cursor *c)
{
	free(c->pending);
	c->pending = NULL;
	c->n_pending = c->cap = 0;
}

/* The ids of rows in order, and whether each is final. */
struct states {
	int64_t *ids, *final;
	size_t n, cap, cap_final;
};

static int by_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* A row (id, final) appended to the states ctx. 0, or -1. */
static int push_state(void *ctx, sqlite3_stmt *st)
{
	struct states *r = ctx;
	size_t n = r->n;

	if (push_id(&r->ids, &r->n, &r->cap, sqlite3_column_int64(st, 0)) ||
	    push_id(&r->final, &n, &r->cap_final,
		    sqlite3_column_int(st, 1) != 0))
		return -1;
	return 0;
}

static void states_free(struct states *r)
{
	free(r->ids);
	free(r->final);
	memset(r, 0, sizeof(*r));
}

/* A batch being filled: at most max rows taken. */
struct filling {
	struct otel_batch *b;
	size_t max, cap_ids, cap_held;
};

/* The row id into the batch: taken when final and there is room, else
 * held. 0, or -1 with err. */
static int take(struct filling *f, int64_t id, bool final, char *err,
		size_t errlen)
{
	struct otel_batch *b = f->b;

	if (final && b->n < f->max
		    ? push_id(&b->ids, &b->n, &f->cap_ids, id) == 0
		    : push_id(&b->held, &b->n_held, &f->cap_held, id) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The pending rows of c into the batch: those final now taken, those in
 * flight held, those gone (pruned) dropped. 0, or -1 with err. */
static int take_pending(struct otel_source *s, const struct otel_cursor *c,
			struct filling *f, char *err, size_t errlen)
{
	struct states there = { 0 };
	int rc = -1;

	if (otel_source_each(s, state_sql[c->rows], NULL, 0, c->pending,
			     c->n_pending, 0, push_state, &there, err,
			     errlen) != 0)
		goto out;
	for (size_t i = 0; i < c->n_pending; i++) {
		const int64_t *at =
			there.n ? bsearch(&c->pending[i], there.ids, there.n,
					  sizeof(*there.ids), by_id)
				: NULL;

		if (at && take(f, *at, there.final[at - there.ids] != 0, err,
			       errlen) != 0)
			goto out;
	}
	rc = 0;
out:
	states_free(&there);
	return rc;
}

int otel_cursor_batch(struct otel_source *s, const struct otel_cursor *c,
		      size_t max, struct otel_batch *b, char *err,
		      size_t errlen)
{
	struct filling f = { b, max, 0, 0 };
	struct states rows = { 0 };
	int rc = -1;

	memset(b, 0, sizeof(*b));
	b->next = c->next;
	if (c->n_pending && take_pending(s, c, &f, err, errlen) != 0)
		goto out;
	/* then the rows from next on, in order, till the batch is full: as
	 * many as it may take, then again for those held */
	while (b->n < max && b->n_held < OTEL_PENDING_MAX) {
		size_t room = OTEL_PENDING_MAX - b->n_held;
		struct otel_value at[2] = {
			{ .type = OTEL_INT, .i = b->next },
			{ .type = OTEL_INT,
			  .i = (int64_t)(max - b->n < room ? max - b->n
							   : room) },
		};

		rows.n = 0;
		if (otel_source_each(s, scan_sql[c->rows], at, 2, NULL, 0,
				     OTEL_SETTLED, push_state, &rows, err,
				     errlen) != 0)
			goto out;
		for (size_t i = 0; i < rows.n; i++) {
			if (take(&f, rows.ids[i], rows.final[i] != 0, err,
				 errlen) != 0)
				goto out;
			b->next = rows.ids[i] + 1;
		}
		if (rows.n < (size_t)at[1].i)
			break;
	}
	rc = 0;
out:
	states_free(&rows);
	if (rc != 0)
		otel_batch_free(b);
	return rc;
}

int otel_cursor_advance(struct otel_cursor *c, const struct otel_batch *b)
{
	int64_t *held = NULL;

	if (b->n_held) {
		if (!(held = malloc(b->n_held * sizeof(*held))))
			return -1;
		memcpy(held, b->held, b->n_held * sizeof(*held));
	}
	free(c->pending);
	c->pending = held;
	c->n_pending = c->cap = b->n_held;
	c->next = b->next;
	return 0;
}

int otel_mark_load(struct otel_source *s, const char *url,
		   struct otel_cursor *c, char *err, size_t errlen)
{
	struct otel_value key = { .type = OTEL_TEXT, .p = url };
	sqlite3_stmt *st = NULL;
	int rc = -1, step;

	memset(c, 0, sizeof(*c));
	c->rows = OTEL_EXCHANGES;
	if (otel_source_table(s, obs_schema_otlp_mark_sql, "otlp_mark", err,
			      errlen) != 0 ||
	    otel_source_query(s,
			      "SELECT next_id, pending FROM otlp_mark "
			      "WHERE endpoint = $1",
			      &key, 1, NULL, 0, 0, &st, err, errlen) != 0)
		goto out;
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(st, 1);
		size_t n = (size_t)sqlite3_column_bytes(st, 1) / 8;

		c->next = sqlite3_column_int64(st, 0);
		for (size_t i = 0; i < n && i < OTEL_PENDING_MAX; i++) {
			uint64_t v = 0;

			for (int k = 7; k >= 0; k--)
				v = v << 8 | p[8 * i + (size_t)k];
			if (push_id(&c->pending, &c->n_pending, &c->cap,
				    (int64_t)v)) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
		}
	} else if (step != SQLITE_DONE) {
		otel_source_error(s, err, errlen);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	if (rc != 0)
		otel_cursor_free(c);
	return rc;
}

int otel_mark_save(struct otel_source *s, const char *url,
		   const struct otel_cursor *c, char *err, size_t errlen)
{
	unsigned char *blob = NULL;
	int rc;

	if (c->n_pending && !(blob = malloc(8 * c->n_pending))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < c->n_pending; i++)
		for (int k = 0; k < 8; k++)
			blob[8 * i + (size_t)k] =
				(unsigned char)((uint64_t)c->pending[i] >>
						(8 * k));
	rc = otel_source_exec(
		s,
		"INSERT INTO otlp_mark(endpoint, next_id, pending) "
		"VALUES($1, $2, $3) ON CONFLICT(endpoint) DO UPDATE SET "
		"next_id = excluded.next_id, pending = excluded.pending",
		(struct otel_value[]){
			{ .type = OTEL_TEXT, .p = url },
			{ .type = OTEL_INT, .i = c->next },
			{ .type = OTEL_BLOB, .p = blob, .n = 8 * c->n_pending },
		},
		3, err, errlen);
	free(blob);
	return rc;
}
