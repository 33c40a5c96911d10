/* db.c - an observe database opened read-only for the manager, its schema
 * version checked (see db.h). */
#define _GNU_SOURCE
#include "db.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "store.h"

sqlite3 *db_open(const char *path)
{
	sqlite3 *db = NULL;
	int version;
	char err[256], why[300] = "";

	if (access(path, R_OK) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	/* a FIFO (or a device) would block the open or never end */
	if (files_check_regular(path, 0, why, sizeof(why)) != 0) {
		fprintf(stderr, "manager: %s: %s\n", path, why);
		return NULL;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
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
