/* replays.h - the connections of a process whose events the slicer is
 * replaying (core/replay.c), by connection number: each one's replay, its
 * connection record, and where its events stand.
 *
 * A replay consumes a connection's events in the order of their numbers
 * (core/event.h), and only final ones (an event that may still change
 * is not final until the capture seals it, or its process is gone): an
 * event whose turn has not come, or that is not final yet, waits (its
 * records are read again the next time), one whose turn is past was
 * consumed already. So a replay never takes back what it gave out,
 * whatever order a pass reads records in (a page read a moment after the
 * one before it, a segment before the one before it), and its state
 * between two passes over the spool is exact: the slicer keeps it in the
 * database (obs_replayed.saved, the table ingest_replay), and a
 * connection goes on across passes and across a spool's segments.
 */
#ifndef OBSERVE_REPLAYS_H
#define OBSERVE_REPLAYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay.h"
#include "spool_format.h"

/* What is kept of a connection between passes (a blob of the database:
 * no pointer in it is used after it is read back). */
struct obs_replay_saved {
	uint32_t magic;		/* OBS_REPLAY_MAGIC */
	uint32_t size;		/* sizeof(struct obs_replay_saved) */
	struct obs_record conn; /* its connection record (kind 0: not seen) */
	uint64_t next;		/* the number of the event it takes next */
	uint64_t seen;		/* the highest number read, consumed or not */
	struct obs_replay replay;
};
#define OBS_REPLAY_MAGIC 0x4f425352u /* "OBSR" */

struct obs_replayed {
	uint64_t conn_seq;
	bool stored;  /* an earlier pass kept it (read back from there) */
	bool changed; /* since it was made or read back */
	struct obs_replay_saved saved;
};

struct obs_replays;

/* NULL without memory. Exchanges the replays give out go to
 * out(ctx, replayed, exchange). */
struct obs_replays *
obs_replays_new(void (*out)(void *ctx, const struct obs_replayed *r,
			    const struct obs_core_exchange *x),
		void *ctx);
void obs_replays_free(struct obs_replays *m);

/* Connection conn_seq, in memory, or NULL. */
struct obs_replayed *obs_replays_get(struct obs_replays *m, uint64_t conn_seq);
/* Connection conn_seq from its beginning (its connect), or from what a
 * pass kept (saved, n bytes: NULL for none); NULL without memory or when
 * saved is not a state this slicer wrote. */
struct obs_replayed *obs_replays_add(struct obs_replays *m, uint64_t conn_seq,
				     const void *saved, size_t n);
/* r's state to keep, tidied (replay.h: obs_replay_tidy), and in *n its
 * bytes worth keeping (HTTP/2's part only when HTTP/2 began): what
 * obs_replays_add takes back. */
const void *obs_replays_state(struct obs_replayed *r, size_t *n);
/* Connection conn_seq's record (kept for when it is replayed). */
void obs_replays_conn(struct obs_replays *m, const struct obs_record *rec);

/* The event (its turn come) into r's replay. */
void obs_replays_feed(struct obs_replays *m, struct obs_replayed *r,
		      const struct obs_event *ev);

/* What became of a record's events offered to a replay. */
enum obs_taken {
	OBS_TAKEN,  /* consumed (or consumed before) */
	OBS_WAITS,  /* one of them waits: offer the record again later */
	OBS_CLOSED, /* the connection's close was consumed: end it */
};

/* The events of one record (ev[0..n), in order: core/evrec.h) into r's
 * replay, each in its turn: one consumed before is passed by; one whose
 * turn has not come, or that is not final, waits, and so do those after
 * it. final: the record will not change again; gaps: a number never seen
 * may be passed over (the spool lost records and its writer is gone).
 * The first number seen beyond what r consumed is noted (saved.seen). */
enum obs_taken obs_replays_take(struct obs_replays *m, struct obs_replayed *r,
				const struct obs_event *ev, unsigned int n,
				bool final, bool gaps);
/* r's events end here: what its replay holds is given out. */
void obs_replays_finish(struct obs_replays *m, struct obs_replayed *r);
/* Forget r. */
void obs_replays_forget(struct obs_replays *m, struct obs_replayed *r);
/* f(ctx, r) for each connection in memory; then all forgotten. */
void obs_replays_drain(struct obs_replays *m,
		       void (*f)(void *ctx, struct obs_replayed *r), void *ctx);

#endif
