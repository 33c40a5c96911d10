/* store.h - the client database (SQLite): open it with its schema checked,
 * ingest spool files into it, filter what is ingested.
 *
 * Shared by slicer, observe and manager. The schema (schema.h) is documented
 * in docs/schema.md and versioned in PRAGMA user_version (OBS_SCHEMA_VERSION).
 * Ingest is idempotent: the identity of a process is (client, pid, start_ns),
 * of a connection (process, seq), of an exchange (connection, seq); slicing a
 * spool again adds nothing, and a spool that grew adds only what is new (a
 * record that was still in flight last time is updated).
 */
#ifndef OBSERVE_STORE_H
#define OBSERVE_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "schema.h"

typedef struct obs_store obs_store;

struct obs_ingest_stats {
	uint64_t files;		     /* spool files read */
	uint64_t files_bad;	     /* files refused or read only in part */
	uint64_t records;	     /* published records seen */
	uint64_t records_bad;	     /* records skipped as damaged */
	uint64_t connections_new;    /* connection rows inserted */
	uint64_t exchanges_new;	     /* exchange rows inserted */
	uint64_t rows_updated;	     /* in-flight rows brought up to date */
	uint64_t exchanges_filtered; /* new exchanges the filter left out */
	/* records the layer could not write (spool full: the header's
	 * records_dropped) in the files read, and the files that lost any */
	uint64_t records_dropped, processes_dropped;
	uint64_t files_deleted; /* spool files deleted once stored */
	/* files of an events spool whose writer is gone but whose events
	 * are not all consumed yet: its segments want another pass, in
	 * order (a segment read while the writer still ran holds events
	 * that are final now) */
	uint64_t files_again;
};

/* Open (creating if needed) the database at path, set WAL and a busy
 * timeout, create or check the schema. On error returns NULL and writes a
 * message naming the file and the reason into err. */
obs_store *obs_store_open(const char *path, char *err, size_t errlen);
void obs_store_close(obs_store *store);
sqlite3 *obs_store_db(obs_store *store);
/* The path it was opened with. */
const char *obs_store_path(const obs_store *store);

/* SQL functions the filters may use, registered on every connection the
 * tools open (obs_store_open does it): cidr_match(addr, 'net/len') is 1
 * when the text address addr lies in the IPv4 or IPv6 network, else 0. */
int obs_store_register_functions(sqlite3 *db);

/* Show progress on `tty` (a terminal: the caller checks isatty) for files
 * that take longer than about a second; NULL (the default) shows none. */
void obs_store_set_progress(obs_store *store, FILE *tty);

/* Delete each spool file once every record of it is stored and final:
 * its process is gone, or it is a sealed segment (the layer went on in
 * the next one) whose records are all complete. Off by default. */
void obs_store_set_delete(obs_store *store, bool on);

/* Keep only the exchanges (and their connections) for which the SQL
 * boolean expression expr holds, evaluated by SQLite over the columns of
 * the view exchange_metrics. Checked here, before anything is written: on
 * error returns -1 with SQLite's message and the expression in err. */
int obs_store_set_filter(obs_store *store, const char *expr, char *err,
			 size_t errlen);

/* Check that expr is one valid boolean expression over exchange_metrics
 * (no second statement); the same message as above. */
int obs_store_check_expr(sqlite3 *db, const char *expr, char *err,
			 size_t errlen);

/* Ingest one spool file, or every *.spool file in a directory (not
 * recursive). Problems are reported on msgs, one line each, naming the file
 * (and the offset) and the reason; every good record is still stored.
 * If process_ids is not NULL, the database ids of the processes read are
 * appended to it (up to *n_process_ids < max_process_ids).
 * Returns 0 when everything was read, 1 when something was skipped, -1 on a
 * database error (nothing of that file is committed). Without a filter,
 * foreign keys are off on the store's connection from then on. */
int obs_store_ingest_path(obs_store *store, const char *path,
			  struct obs_ingest_stats *stats, FILE *msgs,
			  int64_t *process_ids, size_t *n_process_ids,
			  size_t max_process_ids);

/* qsort's comparison of two paths (char * each) of spool files: a
 * process's segments in order (<base>.spool before <base>.000001.spool),
 * which its events need (an event spool's connections go on from one
 * segment into the next). */
int obs_store_spool_order(const void *a, const void *b);

/* The *.spool files of a directory (not recursive), full paths, sorted
 * (obs_store_spool_order):
 * *list malloc'd, each name too. 0, or -1 with errno (cannot read it). */
int obs_store_list_spools(const char *path, char ***list, size_t *count);

#endif
