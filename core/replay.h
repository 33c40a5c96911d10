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
 * obs_cap_stream of capture.h), by direction. */
struct obs_replay_bytes {
	struct obs_calls calls[2];
	uint8_t app[2];	     /* enum obs_app (event.h) of each direction */
	bool undelivered[2]; /* its last call came before its protocol */
};

struct obs_replay {
	struct obs_core_conn conn;
	struct obs_core_sink out;    /* the caller's */
	struct obs_core_sink layers; /* the layers': numbers, then out */
	struct obs_replay_bytes bytes[2];
	bool http1_on;	      /* HTTP/1 exchanges under way */
	bool http2_on;	      /* HTTP/2 streams under way */
	uint8_t http1_stream; /* the stream each runs on */
	uint8_t http2_stream;
	struct obs_tls tls;
	struct obs_http1 http1;
	struct obs_raw raw;
	/* last, 28 KiB: written only once HTTP/2 begins (http2_on) */
	struct obs_http2 http2;
};

void obs_replay_init(struct obs_replay *r, const struct obs_core_sink *out);
void obs_replay_event(struct obs_replay *r, const struct obs_event *ev);
/* r's state, copied from elsewhere (a pass of the slicer kept it), to
 * give out to out from now on. */
void obs_replay_rebind(struct obs_replay *r, const struct obs_core_sink *out);
/* The connection's events end here: what is under way is given out. */
void obs_replay_finish(struct obs_replay *r);

#endif
