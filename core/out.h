/* out.h - what the core makes of a connection's events: the connection
 * and its exchanges, in the terms of the spool format's records (end
 * classes, how T2 was learned, protocols), and the sink exchanges go to.
 */
#ifndef OBSERVE_OUT_H
#define OBSERVE_OUT_H

#include <stdint.h>

#include "h1.h"

/* Exchange flags (obs_core_exchange.flags). */
#define OBS_CXF_CUT                                                            \
	0x1u			  /* its response did not end: the connection  \
				   * (or the events) ended first */
#define OBS_CXF_SERVER_FIRST 0x2u /* a response that answered no request */
#define OBS_CXF_SWITCH                                                         \
	0x4u		    /* its response switched the protocol              \
			     * (101, or 2xx to CONNECT) */
#define OBS_CXF_TUNNEL 0x8u /* inside a CONNECT tunnel */
#define OBS_CXF_HTTP 0x10u  /* an HTTP request and its response */
#define OBS_CXF_H2 0x20u    /* an HTTP/2 stream (stream) */
#define OBS_CXF_RESET 0x40u /* ... that was reset (stream_error) */
#define OBS_CXF_PEEKED                                                         \
	0x80u /* the program peeked at its response (MSG_PEEK) before          \
	       * reading it */

struct obs_core_exchange {
	uint32_t seq;	/* from 1 within the connection, in the order the
			 * exchanges are given out (the replay numbers them),
			 * or for HTTP/2 streams the order they opened in */
	uint32_t flags; /* OBS_CXF_* */
	int64_t t3, t4, t5, tfb, t6;
	uint64_t ds, dr;
	uint32_t send_calls, recv_calls;
	uint16_t status;	 /* the final response's */
	uint16_t interim_status; /* the first interim (1xx) response's */
	int64_t t_interim;	 /* ... when its first byte came */
	uint32_t label_flags;	 /* OBS_H1F_HOST_CUT, OBS_H1F_PATH_CUT */
	char method[OBS_H1_METHOD_MAX];
	char host[OBS_H1_HOST_MAX];
	char path[OBS_H1_PATH_MAX];
	uint32_t stream;       /* OBS_CXF_H2: its id */
	uint32_t stream_error; /* OBS_CXF_RESET: the HTTP/2 error code */
};

/* Connection flags (obs_core_conn.flags). */
#define OBS_CCF_NONBLOCKING 0x1u /* connect() said EINPROGRESS */
#define OBS_CCF_SHUTDOWN_WR 0x2u /* the program shut its sending side */
#define OBS_CCF_TLS 0x4u	 /* TLS records (on it, or in its tunnel) */
#define OBS_CCF_TUNNEL 0x8u	 /* a CONNECT tunnel was opened on it */
#define OBS_CCF_WEBSOCKET 0x10u	 /* upgraded to WebSocket */

struct obs_core_conn {
	int64_t t1, t2, teof, t7, tshut;
	uint8_t t2_how;	   /* enum obs_t2_how of spool_format.h */
	uint8_t end_class; /* enum obs_end_class of spool_format.h */
	uint8_t app_proto; /* enum obs_app_proto of spool_format.h */
	int32_t connect_errno;
	int32_t end_errno;
	uint32_t flags;		      /* OBS_CCF_* */
	uint32_t exchanges;	      /* exchanges numbered so far */
	uint64_t ws_messages[2];      /* WebSocket messages sent, received */
	char tunnel[OBS_H1_HOST_MAX]; /* the CONNECT's target */
	int64_t tls_start;	      /* the ClientHello's send's entry */
	int64_t tls_end;	      /* the server's last flight received */
	uint16_t tls_version;	      /* 0x0303, 0x0304 (tlsrec.h) */
};

struct obs_core_sink {
	void (*exchange)(void *ctx, const struct obs_core_exchange *x);
	void *ctx;
};

#endif
