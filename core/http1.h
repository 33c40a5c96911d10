/* http1.h - HTTP/1.1 exchanges from the framer's facts (h1.h) and the
 * calls that moved their bytes: one exchange per request, answered by its
 * final response; interim responses are facts of the exchange they came
 * in, never its status; a response that switches the protocol ends the
 * layer's part on that level.
 *
 * An exchange's times: T3 the entry of the send that moved its request's
 * first byte, T4 the return of the send that moved its last, T5 the entry
 * of the first receive after T4 (or of the one that brought the response,
 * if earlier), TFB the return of the receive that brought the final
 * response's first byte, T6 of the one that brought its last. Ds and Dr
 * are the bytes of the request and of its responses (interim ones too).
 */
#ifndef OBSERVE_HTTP1_H
#define OBSERVE_HTTP1_H

#include <stdbool.h>
#include <stdint.h>

#include "calls.h"
#include "event.h"
#include "out.h"

/* Requests not yet answered that the layer keeps; an older one is given
 * out as it stands (cut) to make room. */
#define OBS_HTTP1_QUEUE 32

/* An exchange under way (private to http1.c). */
struct obs_http1_x {
	struct obs_core_exchange x;
	uint64_t req_end;	/* one past the request, 0: not ended */
	uint64_t resp_begin;	/* the final response's first byte */
	uint64_t resp_end;	/* one past its last, 0: not ended */
	uint64_t interim_bytes; /* of the interim responses */
	uint64_t unframed;	/* bytes received while it awaited an answer
				 * the framer never said (a receive that
				 * could not be read, HTTP/1 lost) */
	int64_t unframed_first; /* ... the return of their first receive */
	int64_t unframed_last;	/* ... of their last */
	bool need_t5;		/* T4 known, no receive since */
	bool unsaid;		/* answered before its request's fact came
				 * (another thread received the answer before
				 * the send returned): that fact fills it */
	bool answered;		/* the final response's head came */
	bool done;		/* ... and its last byte's time is known */
	bool h2c;		/* its 101 switched to HTTP/2: kept for it */
};

struct obs_http1 {
	uint32_t first, len;
	uint32_t pushed; /* exchanges pushed so far: the slots written */
	uint32_t carry_tx, carry_rx; /* calls not given to an exchange yet */
	uint32_t carry_events[2];    /* ... their events, by direction */
	uint64_t rx_seen;	     /* one past the last byte received */
	int64_t rx_last_data;	     /* return of the last receive of bytes */
	uint64_t tx_seen;	     /* one past the last byte sent */
	uint64_t req_next;	     /* where the next request begins ... */
	bool req_open;		     /* ... unless the last one has not ended */
	/* the last request's labels, for one that has them again */
	char last_host[OBS_H1_HOST_MAX];
	char last_path[OBS_H1_PATH_MAX];
	/* last: its slots are set as exchanges are pushed */
	struct obs_http1_x q[OBS_HTTP1_QUEUE];
};

struct obs_http1_ctx {
	struct obs_core_conn *conn;
	const struct obs_calls *calls; /* [2]: both directions */
	const struct obs_core_sink *out;
};

void obs_http1_init(struct obs_http1 *h);
/* The queue's slots never written, zeroed (before h is copied out whole). */
void obs_http1_tidy(struct obs_http1 *h);
/* An HTTP/1 fact (OBS_EV_H1 of kind OBS_H1_HEAD). */
void obs_http1_message(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		       const struct obs_event *ev);
/* A call event of either direction. */
void obs_http1_call(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		    const struct obs_event *ev);
/* The exchange whose 101 switched the connection to HTTP/2 (h2c), taken
 * out of the queue for HTTP/2 to go on with (its stream 1), into *x; false
 * when there is none (still kept, it is given out by obs_http1_finish as
 * HTTP/1 left it). */
bool obs_http1_take_h2c(struct obs_http1 *h, struct obs_core_exchange *x);
/* No more HTTP/1 on this connection: the exchanges under way are given
 * out as they stand (one whose answer the framer never said takes the
 * bytes received since its request). */
void obs_http1_finish(struct obs_http1 *h, const struct obs_http1_ctx *cx);
/* The call events of direction dir given to the layer, the latest, that
 * no exchange took (bytes of no message: before HTTP/1 was lost, say). */
uint32_t obs_http1_unclaimed(const struct obs_http1 *h, enum obs_dir dir);

#endif
