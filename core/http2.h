/* http2.h - HTTP/2 exchanges, one per stream, from the frame follower's
 * facts (event.h, OBS_EV_H2) and the calls that moved their bytes.
 *
 * A stream's exchange: T3 the entry of the send that moved the first byte
 * of its HEADERS, T4 the return of the send that moved the last byte of
 * the frame that carried its request's END_STREAM, TFB the return of the
 * receive that completed the header of its first answer frame (HEADERS,
 * DATA or RST_STREAM), T5 that receive's entry (T4 if later), T6 the
 * return of the receive that moved the last byte of the frame that carried
 * the response's END_STREAM. Ds and Dr are the bytes of its frames (their
 * 9-byte headers and payloads) each way, as the follower counted them; the
 * connection's own frames (SETTINGS, PING, WINDOW_UPDATE on stream 0, the
 * preface) are in no exchange. Method, path and host are :method, :path
 * and :authority; the status is the final :status (1xx are interim). A
 * reset stream (RST_STREAM, or above a GOAWAY's last stream: REFUSED_STREAM)
 * has OBS_CXF_RESET and its error code.
 *
 * Exchanges are numbered as their streams opened, and given out as they
 * close (or, when the connection's events end first, cut). After an h2c
 * Upgrade, stream 1 is the HTTP/1 request that asked for it
 * (obs_http2_upgraded): its times of sending are HTTP/1's, the 101 is its
 * interim status, and the rest comes from stream 1's frames.
 */
#ifndef OBSERVE_HTTP2_H
#define OBSERVE_HTTP2_H

#include <stdbool.h>
#include <stdint.h>

#include "calls.h"
#include "event.h"
#include "out.h"

/* Streams under way that the layer keeps (the follower's own bound,
 * OBS_H2_STREAMS of h2.h); a stream opened beyond them is not recorded. */
#define OBS_HTTP2_STREAMS 128

/* A stream under way (private to http2.c). */
struct obs_http2_s {
	struct obs_core_exchange x;
	uint32_t id;   /* 0: a free slot */
	bool rx_ended; /* the response's END_STREAM came */
};

struct obs_http2 {
	struct obs_http2_s s[OBS_HTTP2_STREAMS]; /* by (id / 2) % N, probed */
	uint32_t n;				 /* slots in use */
	/* the last request's labels, for one that has them again */
	char last_host[OBS_H1_HOST_MAX];
	char last_path[OBS_H1_PATH_MAX];
};

struct obs_http2_ctx {
	struct obs_core_conn *conn;
	const struct obs_calls *calls; /* [2]: both directions */
	const struct obs_core_sink *out;
	/* the number of the connection's next exchange (the replay's) */
	uint32_t (*number)(void *ctx);
	void *ctx;
};

void obs_http2_init(struct obs_http2 *h);
/* Stream 1 of an h2c Upgrade: x, the HTTP/1 exchange of the request that
 * asked for it, answered by the 101. */
void obs_http2_upgraded(struct obs_http2 *h, const struct obs_http2_ctx *cx,
			const struct obs_core_exchange *x);
/* A stream's facts (OBS_EV_H2, not LOST). */
void obs_http2_fact(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		    const struct obs_event *ev);
/* No more HTTP/2 on this connection: the streams under way are given out
 * as they stand. */
void obs_http2_finish(struct obs_http2 *h, const struct obs_http2_ctx *cx);

#endif
