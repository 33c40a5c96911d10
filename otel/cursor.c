/* cursor.c - a reader's way through the final rows of the database (see
 * cursor.h), and its mark kept in the table otlp_mark. */
#define _GNU_SOURCE
#include "cursor.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* One row's id and whether it is final, from ?1 on (scan) or for the id ?1
 * (one). */
static const char *const scan_sql[] = {
	[OTEL_EXCHANGES] =
		"SELECT e.id, (e.complete OR c.complete OR p.ended) "
		"FROM exchange e JOIN connection c ON c.id = e.connection_id "
		"JOIN process p ON p.id = c.process_id WHERE e.id >= ?1 "
		"ORDER BY e.id",
	[OTEL_CONNECTIONS] =
		"SELECT c.id, (c.complete OR p.ended) FROM connection c "
		"JOIN process p ON p.id = c.process_id WHERE c.id >= ?1 "
		"ORDER BY c.id",
};
static const char *const one_sql[] = {
	[OTEL_EXCHANGES] =
		"SELECT (e.complete OR c.complete OR p.ended) "
		"FROM exchange e JOIN connection c ON c.id = e.connection_id "
		"JOIN process p ON p.id = c.process_id WHERE e.id = ?1",
	[OTEL_CONNECTIONS] = "SELECT (c.complete OR p.ended) FROM connection c "
			     "JOIN process p ON p.id = c.process_id "
			     "WHERE c.id = ?1",
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

static int sql_error(sqlite3 *db, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", sqlite3_db_filename(db, "main"),
		 sqlite3_errmsg(db));
	return -1;
}

int otel_cursor_batch(sqlite3 *db, const struct otel_cursor *c, size_t max,
		      struct otel_batch *b, char *err, size_t errlen)
{
	sqlite3_stmt *one = NULL, *scan = NULL;
	size_t cap_ids = 0, cap_held = 0;
	int rc = -1, step = SQLITE_DONE;

	memset(b, 0, sizeof(*b));
	b->next = c->next;
	if (sqlite3_prepare_v2(db, one_sql[c->rows], -1, &one, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(db, scan_sql[c->rows], -1, &scan, NULL) !=
		    SQLITE_OK) {
		sql_error(db, err, errlen);
		goto out;
	}
	/* the pending rows first: final now, taken; gone (pruned), dropped */
	for (size_t i = 0; i < c->n_pending; i++) {
		bool final = false, there;

		sqlite3_bind_int64(one, 1, c->pending[i]);
		step = sqlite3_step(one);
		there = step == SQLITE_ROW;
		if (there)
			final = sqlite3_column_int(one, 0) != 0;
		sqlite3_reset(one);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			sql_error(db, err, errlen);
			goto out;
		}
		if (there && final && b->n < max) {
			if (push_id(&b->ids, &b->n, &cap_ids, c->pending[i]))
				goto oom;
		} else if (there && push_id(&b->held, &b->n_held, &cap_held,
					    c->pending[i]))
			goto oom;
	}
	/* then the rows from next on, in order, till the batch is full */
	sqlite3_bind_int64(scan, 1, c->next);
	while (b->n < max && b->n_held < OTEL_PENDING_MAX &&
	       (step = sqlite3_step(scan)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(scan, 0);

		if (sqlite3_column_int(scan, 1) != 0) {
			if (push_id(&b->ids, &b->n, &cap_ids, id))
				goto oom;
		} else if (push_id(&b->held, &b->n_held, &cap_held, id))
			goto oom;
		b->next = id + 1;
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		sql_error(db, err, errlen);
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	sqlite3_finalize(one);
	sqlite3_finalize(scan);
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

int otel_mark_load(sqlite3 *db, const char *url, struct otel_cursor *c,
		   char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = -1, step;

	memset(c, 0, sizeof(*c));
	c->rows = OTEL_EXCHANGES;
	if (sqlite3_exec(db, obs_schema_otlp_mark_sql, NULL, NULL, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "SELECT next_id, pending FROM otlp_mark "
			       "WHERE endpoint = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_error(db, err, errlen);
	sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
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
		sql_error(db, err, errlen);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	if (rc != 0)
		otel_cursor_free(c);
	return rc;
}

int otel_mark_save(sqlite3 *db, const char *url, const struct otel_cursor *c,
		   char *err, size_t errlen)
{
	unsigned char *blob = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (c->n_pending && !(blob = malloc(8 * c->n_pending))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < c->n_pending; i++)
		for (int k = 0; k < 8; k++)
			blob[8 * i + (size_t)k] =
				(unsigned char)((uint64_t)c->pending[i] >>
						(8 * k));
	if (sqlite3_prepare_v2(db,
			       "INSERT OR REPLACE INTO otlp_mark(endpoint, "
			       "next_id, pending) VALUES(?1, ?2, ?3)",
			       -1, &st, NULL) != SQLITE_OK) {
		sql_error(db, err, errlen);
		goto out;
	}
	sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, c->next);
	if (blob)
		sqlite3_bind_blob(st, 3, blob, (int)(8 * c->n_pending),
				  SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sql_error(db, err, errlen);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	free(blob);
	return rc;
}
