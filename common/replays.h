/* replays.h - the connections of a spool file whose events are being
 * replayed (core/replay.c) while the slicer reads it: by connection
 * number, each one's replay, a copy of its connection record, and the
 * offsets of its event records (read again on the next pass when the
 * connection has not ended by the end of this one).
 *
 * A connection is taken from its connect event on: the events of one
 * whose connect was not read in this pass (replayed in an earlier pass, or
 * begun in an earlier segment) are left alone.
 */
#ifndef OBSERVE_REPLAYS_H
#define OBSERVE_REPLAYS_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"
#include "spool_format.h"

struct obs_replays;

struct obs_replayed {
	uint64_t conn_seq;
	struct obs_record conn; /* its connection record (kind 0: none seen) */
	struct obs_replay replay;
	size_t *offsets; /* its event records' */
	size_t n_offsets, cap_offsets;
};

/* NULL without memory. Exchanges the replays give out go to
 * out(ctx, replayed, exchange). */
struct obs_replays *
obs_replays_new(void (*out)(void *ctx, const struct obs_replayed *r,
			    const struct obs_core_exchange *x),
		void *ctx);
void obs_replays_free(struct obs_replays *m);

/* Connection conn_seq's record (kept for when it is replayed). */
void obs_replays_conn(struct obs_replays *m, const struct obs_record *rec);

/* An event of connection conn_seq, from records at offset (one or two).
 * The connection's, when taken (a connect begins it): *taken is it, or
 * NULL when the event is left alone. 0, or -1 without memory. */
int obs_replays_event(struct obs_replays *m, uint64_t conn_seq,
		      const struct obs_event *ev, size_t offset, size_t records,
		      struct obs_replayed **taken);

/* Forget r (its events ended, the caller finished its replay). */
void obs_replays_forget(struct obs_replays *m, struct obs_replayed *r);

/* Each connection still open: f(ctx, r) (which may finish its replay:
 * what it gives out goes to out); then all forgotten. */
void obs_replays_drain(struct obs_replays *m,
		       void (*f)(void *ctx, struct obs_replayed *r), void *ctx);

#endif
