/* follow.h - slicer --follow DIR: the spool directory followed with
 * inotify, its files ingested as they are written, in batches, until
 * SIGTERM, SIGINT or SIGHUP (then what is there is ingested once more).
 * Slicing is idempotent, so a restart of the writers or of slicer itself
 * loses nothing: at start every file of DIR is ingested. */
#ifndef OBSERVE_SLICER_FOLLOW_H
#define OBSERVE_SLICER_FOLLOW_H

#include <stdint.h>
#include <stdio.h>

#include "store.h"

/* Block the stop signals (SIGTERM, SIGINT, SIGHUP) so that one that comes
 * while the slicer starts (the database opened, the first scan) is taken
 * by slicer_follow, which reads them from a signalfd, rather than ending
 * the process at once. Called before the store is opened. */
void slicer_follow_block_signals(void);

/* Work the follower does besides ingesting (NULL: none): run is called
 * after each batch stored, and again when the time it asked for comes;
 * it returns in how many ms (0: at once, -1: after the next batch). */
struct follow_hook {
	int64_t (*run)(void *ctx, int64_t now_ms);
	void *ctx;
};

/* Follow dir into store, messages on msgs, counts added to stats, hook
 * run as it says (NULL: none). Returns when a stop signal came: 0
 * everything read, 1 something skipped, 2 a database error or dir could
 * not be followed. */
int slicer_follow(obs_store *store, const char *dir,
		  struct obs_ingest_stats *stats, FILE *msgs,
		  const struct follow_hook *hook);

/* The monotonic clock in ms, as the follower and its hook read it. */
int64_t slicer_follow_now_ms(void);

#endif
