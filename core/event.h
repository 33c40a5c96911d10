/* event.h - what the capture records of one connection, and what the core
 * replays: one small event per call on a tracked socket, with calls in
 * the same direction merged, and the protocol facts read in the process
 * at byte offsets of each direction's stream.
 *
 * A call event covers the bytes [offset, offset + bytes) of its direction.
 * Calls are merged into the connection's last event while they go the
 * same way, except across a protocol edge: a call made where a message is
 * due to begin opens an event, and a call in which a message (or the
 * protocol) ends closes its event. So in every event a message begins
 * only in its first call that moved bytes (first_bytes of them) or in its
 * last call, and ends only in its last call: the time of any edge is one
 * of t_in, t_data, t_out (obs_event_time).
 *
 * Facts follow the call event that holds their offset. Times are
 * CLOCK_MONOTONIC nanoseconds; 0 is "not seen".
 */
#ifndef OBSERVE_EVENT_H
#define OBSERVE_EVENT_H

#include <stdint.h>

#include "h1.h"

enum obs_ev_kind {
	OBS_EV_NONE = 0,
	/* connect(): t_in its entry (T1), t_out its return; err 0,
	 * EINPROGRESS or why it failed; aux OBS_CONNECT_SYN_DATA */
	OBS_EV_CONNECT = 1,
	/* the program learned the outcome of a connect in progress: t_out
	 * (T2), err 0 or why it failed; how: enum obs_up_how */
	OBS_EV_UP = 2,
	/* send-family calls (dir OBS_TX) or receive-family calls (OBS_RX);
	 * aux: the protocol its first byte chose (OBS_CALL_CHOSE) */
	OBS_EV_CALL = 3,
	/* shutdown(): how in aux (SHUT_RD, SHUT_WR, SHUT_RDWR) */
	OBS_EV_SHUTDOWN = 4,
	/* close() (t_out: T7), or the process left with it open
	 * (OBS_EVF_EXIT) or lost track of it (OBS_EVF_LOST) */
	OBS_EV_CLOSE = 5,
	/* an HTTP/1 fact (u.h1) */
	OBS_EV_H1 = 6,
	/* a WebSocket message ended at offset (u.ws) */
	OBS_EV_WS = 7,
	/* from offset on, direction dir's bytes are read as aux (enum
	 * obs_app); u.proto.level: tunnels entered */
	OBS_EV_PROTO = 8,
	/* not an event: the spool's second record of a request's fact, its
	 * host and path (core/evrec.c) */
	OBS_EV_LABELS = 9,
	/* HTTP/2 facts of one stream (u.h2), or the end of HTTP/2 */
	OBS_EV_H2 = 10,
	/* TLS: the client's Finished (aux OBS_TLSREC_FINISHED of tlsrec.h)
	 * or its first data (OBS_TLSREC_DATA) begins at offset of the
	 * sending direction (u.tls) */
	OBS_EV_TLS = 11,
};

/* The two streams of bytes a connection's calls move: the socket's, and
 * the plaintext of a TLS library's read and write functions (the calls
 * and facts flagged OBS_EVF_PLAIN). */
enum obs_stream { OBS_STREAM_SOCKET = 0, OBS_STREAM_PLAIN = 1 };

/* A call event's aux: its first byte chose the protocol (enum obs_app) of
 * its direction's bytes from there on, as an OBS_EV_PROTO event would
 * say, and, with OBS_CALL_CHOSE_BOTH, of the other direction's on the
 * same level too (from where they begin): a level's first bytes. 0: it
 * chose nothing. */
#define OBS_CALL_CHOSE 0x7fu
#define OBS_CALL_CHOSE_BOTH 0x80u

/* The protocol a direction's bytes are read as (OBS_EV_PROTO's aux). */
enum obs_app {
	OBS_APP_UNKNOWN = 0, /* nothing sent yet (on this level) */
	OBS_APP_H1 = 1,
	OBS_APP_TLS = 2,
	OBS_APP_WS = 3,
	OBS_APP_OTHER = 4,
	OBS_APP_H2 = 5, /* HTTP/2 frames (the client preface, or h2c's 101) */
};

/* OBS_EV_CONNECT's aux: its SYN carries the first send's bytes (TCP Fast
 * Open); with err 0 the SYN waits for that send, and T2 comes later. */
#define OBS_CONNECT_SYN_DATA 0x1u

/* How T2 was learned (OBS_EV_UP, aux). */
enum obs_up_how {
	OBS_UP_SO_ERROR = 2,  /* getsockopt(SO_ERROR) */
	OBS_UP_RECONNECT = 3, /* a repeated connect() */
	OBS_UP_FIRST_IO = 4,  /* the first call that moved bytes */
};

/* Event flags. */
#define OBS_EVF_EOF 0x1u  /* a receive returned 0: the peer closed */
#define OBS_EVF_EXIT 0x2u /* OBS_EV_CLOSE: the process left */
#define OBS_EVF_LOST 0x4u /* OBS_EV_CLOSE: closed where no hook saw */
#define OBS_EVF_PEEK                                                           \
	0x8u /* a MSG_PEEK receive that delivered bytes: they                  \
	      * come again */
/* Calls and facts of a TLS library's plaintext (its read and write
 * functions: the bytes the program gave and got), at offsets of the
 * plaintext, not of the socket's bytes. */
#define OBS_EVF_PLAIN 0x10u
/* Socket calls the TLS library made inside one of its read or write
 * functions whose plaintext is recorded: its records, not exchanges. */
#define OBS_EVF_IN_TLS 0x20u

/* In a request's OBS_EV_H1 fact (head.flags, beside the framer's
 * OBS_H1F_*): its host and path are those of the request before it on the
 * connection, and are not in the event (the capture writes them once). */
#define OBS_EVH1F_LABELS_AGAIN 0x10000u

/* OBS_EV_H1: one per message (kind OBS_H1_HEAD), written when its head
 * is complete (offset: one past the head) and written again when the
 * message ends (ended, end); or a switch or loss of HTTP/1 at offset
 * (OBS_H1_SWITCH with head.sw, OBS_H1_LOST with reason). A message cut
 * short before its head was complete has a fact written at its end. */
struct obs_ev_h1 {
	uint8_t kind;	/* enum obs_h1_fact_kind: HEAD, SWITCH or LOST */
	uint8_t reason; /* enum obs_h1_lost */
	bool ended;	/* the message is complete at end */
	uint64_t begin; /* the message's first byte */
	uint64_t end;	/* one past its last byte (ended) */
	struct obs_h1_head head;
};

/* OBS_EV_H2: what happened to one stream (stream 0: to HTTP/2 itself), as
 * the frame follower (h2.h) said it while its direction's bytes were fed;
 * the facts of one call about one stream that nothing of another stream
 * came between are one event. offset: one past the byte of the latest of
 * them (for END, one past the frame that carried END_STREAM). Per-stream
 * bytes are not events: the follower counts them, and CLOSE says the
 * totals, so a stream's DATA frames cost nothing here however many. */
/* TX: its HEADERS opened it; begin: that frame's first byte (T3) */
#define OBS_H2F_OPEN 0x1u
/* TX: its header block ended and was decoded: the labels */
#define OBS_H2F_REQUEST 0x2u
/* RX: its first answer frame; begin: the last byte of that frame's header
 * (TFB) */
#define OBS_H2F_FIRST 0x4u
/* RX: its final :status */
#define OBS_H2F_STATUS 0x8u
/* END_STREAM in the direction (T4, T6) */
#define OBS_H2F_END 0x10u
/* reset (RST_STREAM, or refused by a GOAWAY): code */
#define OBS_H2F_RESET 0x20u
/* over: bytes and calls are its totals */
#define OBS_H2F_CLOSE 0x40u
/* stream 0: the bytes are not HTTP/2 from offset on (code: OBS_H2_LOST_*
 * of h2.h) */
#define OBS_H2F_LOST 0x80u
#define OBS_H2F_ALL 0xffu

/* In label_flags, beside OBS_H1F_HOST_CUT and _PATH_CUT: the host and
 * path are those of the request decoded before it on the connection, and
 * are not in the event (the capture writes them once). */
#define OBS_H2L_AGAIN 0x4u

/* OBS_EV_TLS: the version the client's flights speak (tlsrec.h). */
struct obs_ev_tls {
	uint16_t version; /* OBS_TLS_1_2, OBS_TLS_1_3 */
};

struct obs_ev_h2 {
	uint32_t stream;
	uint16_t what;	      /* OBS_H2F_* */
	uint16_t status;      /* STATUS */
	uint32_t code;	      /* RESET: the HTTP/2 error code; LOST: why */
	uint32_t label_flags; /* REQUEST: OBS_H1F_HOST_CUT, _PATH_CUT,
			       * OBS_H2L_AGAIN */
	uint64_t begin;	      /* OPEN, FIRST: see there */
	uint64_t bytes[2];    /* CLOSE: its frames' bytes, by direction */
	uint32_t calls[2];    /* CLOSE: the calls that moved some */
	char method[OBS_H1_METHOD_MAX]; /* REQUEST: NUL-padded, as HTTP/1's */
	char host[OBS_H1_HOST_MAX];	/* :authority */
	char path[OBS_H1_PATH_MAX];	/* no query, fragment or ;parameters */
};

struct obs_ev_ws {
	uint8_t opcode; /* the message's first frame's opcode */
	uint64_t size;	/* its payload bytes */
};

struct obs_ev_proto {
	uint8_t level; /* 0: the connection itself; 1: inside a tunnel ... */
};

struct obs_event {
	/* the event's number in its connection, from 1 (the capture's): the
	 * order a replay consumes them in, whatever order it reads them */
	uint64_t seq;
	uint8_t kind;	      /* enum obs_ev_kind */
	uint8_t dir;	      /* enum obs_dir (calls and facts) */
	uint8_t aux;	      /* see the kinds */
	uint8_t flags;	      /* OBS_EVF_* */
	int32_t err;	      /* errno of the call that ended the event failing,
			       * or 0 (EAGAIN and EINTR are not kept) */
	uint32_t calls;	      /* calls merged here */
	uint32_t first_bytes; /* bytes of the first call that moved any */
	int64_t t_in;	      /* entry of the first call */
	int64_t t_data;	      /* return of the first call that moved bytes */
	int64_t t_out;	      /* return of the last call */
	uint64_t offset;      /* calls: the first byte's offset; facts:
			       * where the fact stands */
	uint64_t bytes;	      /* calls: bytes moved */
	union {
		struct obs_ev_h1 h1;
		struct obs_ev_ws ws;
		struct obs_ev_proto proto;
		struct obs_ev_h2 h2;
		struct obs_ev_tls tls;
	} u;
};

/* Whether a call event is a send the process never came back from: its
 * entry was written (the capture's obs_cap_send_entry), its return never
 * came (the process was killed in it). */
static inline bool obs_event_in_flight(const struct obs_event *ev)
{
	return ev->kind == OBS_EV_CALL && ev->calls == 0;
}

/* When byte `at` of a call event's range moved: the return of the call
 * that moved it (t_data for the first call that moved bytes, else the
 * last call's return, where any edge after the first call lies). */
static inline int64_t obs_event_time(const struct obs_event *ev, uint64_t at)
{
	return at < ev->offset + ev->first_bytes ? ev->t_data : ev->t_out;
}

/* The entry of the call that moved byte `at`, where known: the event's
 * first call's for the first bytes (t_in), else that call's return. */
static inline int64_t obs_event_entry(const struct obs_event *ev, uint64_t at)
{
	return at < ev->offset + ev->first_bytes ? ev->t_in : ev->t_out;
}

#endif
