/* merge.c - a client database merged into the central one: attached
 * read-only as `src`, checked, merged by schema.c's statements in one
 * transaction, detached (see merge.h). */
#define _GNU_SOURCE
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_pg.h"

struct obs_central {
	obs_store *store; /* SQLite */
	obs_pg *pg;	  /* or PostgreSQL */
};

obs_central *obs_central_open(const char *target, char *err, size_t errlen)
{
	obs_central *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "%s: out of memory", target);
		return NULL;
	}
	if (obs_pg_is_uri(target))
		c->pg = obs_pg_open(target, err, errlen);
	else
		c->store = obs_store_open(target, err, errlen);
	if (!c->pg && !c->store) {
		free(c);
		return NULL;
	}
	return c;
}

void obs_central_close(obs_central *central)
{
	if (!central)
		return;
	obs_pg_close(central->pg);
	obs_store_close(central->store);
	free(central);
}

const char *obs_central_name(const obs_central *central)
{
	return central->pg ? obs_pg_name(central->pg)
			   : obs_store_path(central->store);
}

sqlite3 *obs_central_sqlite(obs_central *central)
{
	return central->store ? obs_store_db(central->store) : NULL;
}

int obs_merge_prepare(obs_central *central, char *err, size_t errlen)
{
	sqlite3 *db = obs_central_sqlite(central);

	if (!db)
		return 0; /* PostgreSQL: made so by store_pg.c */

	/* A central database outgrows SQLite's default 2 MB page cache fast;
	 * with too small a cache each merge re-reads index pages from disk. */
	sqlite3_exec(db, "PRAGMA cache_size = -524288", NULL, NULL, NULL);
	if (sqlite3_exec(db, obs_schema_central_sql, NULL, NULL, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* file:PATH?mode=ro, the path %-escaped where a URI needs it;
 * sqlite3_malloc'd. */
static char *file_uri(const char *path)
{
	size_t n = strlen(path);
	char *uri = sqlite3_malloc64(n * 3 + 32), *p = uri;

	if (!uri)
		return NULL;
	p += sprintf(p, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 ||
		    *c > 0x7e)
			p += sprintf(p, "%%%02X", *c);
		else
			*p++ = (char)*c;
	}
	strcpy(p, "?mode=ro");
	return uri;
}

/* Attach the client database at path to db as "src", read-only: the
 * source is a client's, never ours to change. 0, or -1 with why. */
static int attach_source(sqlite3 *db, const char *path, char *why,
			 size_t whylen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ?1 AS src", -1, &st,
				    NULL);

	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, file_uri(path), -1, sqlite3_free);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		snprintf(why, whylen, "cannot open: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* Whether the attached source can be merged: NULL, or the reason in why. */
static const char *check_source(sqlite3 *db, char *why, size_t size)
{
	sqlite3_stmt *st = NULL;
	char err[256];
	int version;

	if (sqlite3_prepare_v2(db, "PRAGMA src.quick_check", -1, &st, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		snprintf(why, size, "not an SQLite database (%s)",
			 sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return why;
	}
	if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
		snprintf(why, size, "damaged database (%s)",
			 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		return why;
	}
	sqlite3_finalize(st);
	version = obs_schema_version(db, "src", err, sizeof(err));
	if (version >= 1 && version < OBS_SCHEMA_VERSION) {
		obs_schema_too_old(version, why, size);
		return why;
	}
	if (version != OBS_SCHEMA_VERSION) {
		snprintf(why, size,
			 "not an observe database of schema version %d "
			 "(version %d)",
			 OBS_SCHEMA_VERSION, version);
		return why;
	}
	return NULL;
}

/* Into PostgreSQL: the source attached to an SQLite connection of its own,
 * checked the same way, its rows copied by store_pg.c. */
static int merge_pg(obs_pg *pg, const char *path, obs_merge_step_fn step,
		    void *ctx, int64_t *exchanges_new, char *why, size_t whylen)
{
	sqlite3 *db = NULL;
	int rc = -1;

	if (sqlite3_open_v2(":memory:", &db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
			    NULL) != SQLITE_OK) {
		snprintf(why, whylen, "cannot open: %s", sqlite3_errmsg(db));
	} else if (attach_source(db, path, why, whylen) == 0) {
		if (step)
			step(ctx, "checking");
		if (!check_source(db, why, whylen)) {
			if (step)
				step(ctx, "merging");
			rc = obs_pg_merge(pg, db, exchanges_new, why, whylen);
		}
		sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
	}
	sqlite3_close(db);
	return rc;
}

int obs_merge_file(obs_central *central, const char *path,
		   obs_merge_step_fn step, void *ctx, int64_t *exchanges_new,
		   char *why, size_t whylen)
{
	sqlite3 *db = obs_central_sqlite(central);
	char *msg = NULL;
	int64_t before;
	int rc;

	*exchanges_new = 0;
	if (central->pg)
		return merge_pg(central->pg, path, step, ctx, exchanges_new,
				why, whylen);
	if (attach_source(db, path, why, whylen) != 0)
		return -1;
	if (step)
		step(ctx, "checking");
	if (check_source(db, why, whylen)) {
		sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
		return -1;
	}
	if (step)
		step(ctx, "merging");
	before = obs_schema_max_id(db, "main.exchange");
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, obs_schema_merge_sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(why, whylen, "cannot merge: %s",
			 msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(db, obs_schema_merge_cleanup_sql, NULL, NULL,
			     NULL);
		sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
		return -1;
	}
	sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
	*exchanges_new = obs_schema_max_id(db, "main.exchange") - before;
	return 0;
}

int obs_central_prune(obs_central *central, int64_t before_ns,
		      int64_t *connections, int64_t *exchanges, char *err,
		      size_t errlen)
{
	sqlite3 *db = obs_central_sqlite(central);
	int64_t *counts[OBS_SQL_PRUNE_COUNT] = { exchanges, connections, NULL };
	int rc;

	if (central->pg)
		return obs_pg_prune(central->pg, before_ns, connections,
				    exchanges, err, errlen);
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	for (int i = 0; rc == SQLITE_OK && i < OBS_SQL_PRUNE_COUNT; i++) {
		sqlite3_stmt *st = NULL;
		rc = sqlite3_prepare_v2(db, obs_schema_prune_sql[i], -1, &st,
					NULL);
		if (rc == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, before_ns);
			rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK
							     : SQLITE_ERROR;
		}
		sqlite3_finalize(st);
		if (counts[i])
			*counts[i] = sqlite3_changes64(db);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot prune: %s",
			 obs_central_name(central), sqlite3_errmsg(db));
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}
