/* merge.h - merging client databases into a central one (manager pull):
 * each source checked (integrity, schema version), then merged in one
 * transaction of its own with the statements of schema.h (or, into
 * PostgreSQL, those of store_pg.c); rows are matched on their identity, so
 * merging a source again adds only what is new. */
#ifndef OBSERVE_MERGE_H
#define OBSERVE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* The central store: an SQLite file, or a PostgreSQL database given by its
 * URI (store_pg.h). */
typedef struct obs_central obs_central;

/* Open (creating if needed) the central store named by target: a
 * postgresql:// or postgres:// URI, else an SQLite file. NULL, with a
 * message naming it and the reason in err. */
obs_central *obs_central_open(const char *target, char *err, size_t errlen);
void obs_central_close(obs_central *central);
/* The store as it may be shown (a URI without its password). */
const char *obs_central_name(const obs_central *central);
/* The SQLite connection of an SQLite store, NULL for PostgreSQL. */
sqlite3 *obs_central_sqlite(obs_central *central);

/* Ready the central database for many merges (a bigger page cache, no
 * index that merging cannot afford). 0, or -1 with SQLite's reason in
 * err. */
int obs_merge_prepare(obs_central *central, char *err, size_t errlen);

/* Told the step a merge has reached: "checking", then "merging". */
typedef void (*obs_merge_step_fn)(void *ctx, const char *step);

/* Merge the client database at path (opened read-only: never changed) into
 * central. 0 merged, *exchanges_new the exchanges it added; -1 nothing
 * merged, the reason in why ("cannot open: ...", "damaged database (...)",
 * "made by an older observe ...", "cannot merge: ..."). step may be NULL. */
int obs_merge_file(obs_central *central, const char *path,
		   obs_merge_step_fn step, void *ctx, int64_t *exchanges_new,
		   char *why, size_t whylen);

/* Drop the days before before_ns (a UTC midnight, epoch ns): the
 * connections that started before it, their exchanges, the processes left
 * with none (on PostgreSQL whole day partitions). *connections and
 * *exchanges: the rows removed. 0, or -1 with the reason in err. */
int obs_central_prune(obs_central *central, int64_t before_ns,
		      int64_t *connections, int64_t *exchanges, char *err,
		      size_t errlen);

#endif
