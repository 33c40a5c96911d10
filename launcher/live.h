/* live.h - observe --live: while the command runs, a table on the terminal
 * (stderr), redrawn about once a second like top: per server the exchanges
 * so far, their rate, the p50 and p99 of Tw and Tr over the last seconds,
 * the errors and how connections ended. Read from the spool files as they
 * grow (spool_reader.h); the layer does nothing more for it. */
#ifndef OBSERVE_LIVE_H
#define OBSERVE_LIVE_H

#define LIVE_WINDOW                                                            \
	5 /* seconds of Tw and Tr in the percentiles, and of                   \
	   * the rate */

struct live;

/* The view of the spool files in spool_dir for command (its first words
 * head the table). NULL when out of memory (the run goes on without). */
struct live *live_start(const char *spool_dir, char *const *command);

/* Read what the spools gained since the last call, redraw the table. */
void live_refresh(struct live *l);

/* Erase the table from the terminal, free l (NULL: nothing). */
void live_end(struct live *l);

#endif
