/* replay.h - the core: a connection's events (event.h), in the order the
 * capture wrote them, replayed through its protocol stack into the
 * connection and its exchanges (out.h).
 *
 * The stack: TCP at the bottom (tcp.h: phases, times, how it ended); on
 * it, per direction and level, the protocol the capture chose: HTTP/1.1
 * (http1.h), HTTP/2 (http2.h: one exchange per stream, from the client
 * preface or after an h2c Upgrade's 101), another protocol read as runs of
 * calls (raw.h), WebSocket after a 101 (its messages counted on the
 * connection). A CONNECT's 2xx opens a tunnel: the level above it chooses
 * again (TLS, HTTP/1, HTTP/2 ...).
 *
 * Pure: no I/O, no allocation, one thread, fixed-size state. The slicer,
 * observe --live, the tests and the fuzzers link it.
 */
#ifndef OBSERVE_REPLAY_H
#define OBSERVE_REPLAY_H

#include <stdbool.h>

#include "calls.h"
#include "event.h"
#include "http1.h"
#include "http2.h"
#include "out.h"
#include "raw.h"
#include "tls.h"

/* One stream of bytes (the socket's, a TLS library's plaintext: enum
 * obs_stream of event.h), by direction. */
struct obs_replay_bytes {
	uint8_t app[2];	     /* enum obs_app (event.h) of each direction */
	bool undelivered[2]; /* its last call came before its protocol */
	struct obs_raw raw;  /* its runs, where no protocol is followed */
};

/* A connection's replay. Its big parts are set as they are used, not at
 * the start (most connections are short): the windows of recent calls as
 * calls come, HTTP/1's queue as requests do, HTTP/2's state when HTTP/2
 * begins; obs_replay_tidy sets what is still unset before the state is
 * copied out whole. */
struct obs_replay {
	struct obs_core_conn conn;
	struct obs_core_sink out;    /* the caller's */
	struct obs_core_sink layers; /* the layers': numbers, then out */
	struct obs_replay_bytes bytes[2];
	bool http1_on;	      /* HTTP/1 exchanges under way */
	bool http2_on;	      /* HTTP/2 streams under way */
	bool http1_set;	      /* http1 was ever set (obs_http1_init) */
	uint8_t http1_stream; /* the stream each runs on */
	uint8_t http2_stream;
	struct obs_tls tls;
	/* set as used (above) */
	struct obs_calls calls[2][2]; /* by stream, direction */
	struct obs_http1 http1;
	/* last, 28 KiB: written only once HTTP/2 begins (http2_on) */
	struct obs_http2 http2;
};

void obs_replay_init(struct obs_replay *r, const struct obs_core_sink *out);
/* What of r is unset (see struct obs_replay), zeroed, but HTTP/2's part
 * when it never began: r up to http2 (or whole) may then be copied. */
void obs_replay_tidy(struct obs_replay *r);
void obs_replay_event(struct obs_replay *r, const struct obs_event *ev);
/* r's state, copied from elsewhere (a pass of the slicer kept it), to
 * give out to out from now on. */
void obs_replay_rebind(struct obs_replay *r, const struct obs_core_sink *out);
/* The connection's events end here: what is under way is given out. */
void obs_replay_finish(struct obs_replay *r);

#endif
