/* db.c - an observe database opened read-only for the manager, its schema
 * version checked (see db.h). */
#define _GNU_SOURCE
#include "db.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "store.h"
#include "store_pg.h"

/* The view the reading commands use (schema.h). 0, or -1 (said). */
static int reader_view(sqlite3 *db, const char *path)
{
	char *msg = NULL;

	if (sqlite3_exec(db, obs_schema_reader_view_sql, NULL, NULL, &msg) ==
	    SQLITE_OK)
		return 0;
	fprintf(stderr, "manager: %s: %s\n", path,
		msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}

/* A PostgreSQL store read through a snapshot: its rows copied into an
 * SQLite file in a private temporary directory, opened read-only, then
 * unlinked (the open connection keeps it until it closes). */
static sqlite3 *open_pg(const char *uri)
{
	char err[800], dir[PATH_MAX], path[PATH_MAX + 16];
	const char *tmp = getenv("TMPDIR");
	sqlite3 *db = NULL;
	obs_pg *pg;

	if (!(pg = obs_pg_open(uri, err, sizeof(err)))) {
		fprintf(stderr, "manager: %s\n", err);
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%s/observe-pg-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "manager: %s: %s\n", dir, strerror(errno));
		obs_pg_close(pg);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/snapshot.db", dir);
	if (obs_pg_snapshot(pg, path, err, sizeof(err)) != 0)
		fprintf(stderr, "manager: %s\n", err);
	else if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
		 SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		db = NULL;
	}
	obs_pg_close(pg);
	/* the schema read now, before the file goes */
	if (db && sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL,
			       NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		db = NULL;
	}
	unlink(path);
	rmdir(dir);
	if (db && reader_view(db, path) != 0) {
		sqlite3_close(db);
		db = NULL;
	}
	if (db)
		obs_store_register_functions(db);
	return db;
}

sqlite3 *db_open(const char *path)
{
	sqlite3 *db = NULL;
	int version;
	char err[256], why[300] = "";

	if (obs_pg_is_uri(path))
		return open_pg(path);
	if (access(path, R_OK) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	/* a FIFO (or a device) would block the open or never end */
	if (files_check_regular(path, 0, why, sizeof(why)) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, why);
		return NULL;
	}
	/* one thread per connection: no mutex taken on each call */
	if (sqlite3_open_v2(path, &db,
			    SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 10000);
	version = obs_schema_version(db, "main", err, sizeof(err));
	if (version < 0)
		snprintf(why, sizeof(why), "not an SQLite database (%s)", err);
	else if (version == 0)
		snprintf(why, sizeof(why),
			 "not an observe database (an SQLite database with "
			 "no observe schema)");
	else if (version < OBS_SCHEMA_VERSION)
		obs_schema_too_old(version, why, sizeof(why));
	else if (version > OBS_SCHEMA_VERSION)
		snprintf(why, sizeof(why),
			 "schema version %d is newer than this manager's (%d)",
			 version, OBS_SCHEMA_VERSION);
	if (*why) {
		fprintf(stderr, "manager: %s: %s\n", path, why);
		sqlite3_close(db);
		return NULL;
	}
	if (reader_view(db, path) != 0) {
		sqlite3_close(db);
		return NULL;
	}
	obs_store_register_functions(db);
	return db;
}

sqlite3 *db_open_where(const char *path, const char *where)
{
	sqlite3 *db = db_open(path);
	char err[512];

	if (db &&
	    obs_store_check_expr(db, where ? where : "1", err, sizeof(err))) {
		fprintf(stderr, "manager: %s: %s\n", path, err);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

int db_dropped(sqlite3 *db, char *buf, size_t size)
{
	sqlite3_stmt *st = NULL;
	int64_t records = 0, processes = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT total(dropped), count(*) FROM process "
			       "WHERE dropped > 0",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		records = sqlite3_column_int64(st, 0);
		processes = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (records <= 0)
		return 0;
	snprintf(buf, size,
		 "%lld records lost by the layer (spool full) in %lld "
		 "process%s",
		 (long long)records, (long long)processes,
		 processes == 1 ? "" : "es");
	return 1;
}

sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
		return NULL;
	}
	return st;
}
