/* h1.h - HTTP/1.1 message framing, as RFC 9112 section 6 frames it,
 * followed over the bytes of one connection in both directions.
 *
 * The framer is fed every byte the program sends (requests) and receives
 * (responses), in order, in pieces of any size, and says where each message
 * begins, where its head ends, where it ends and where the bytes stop being
 * HTTP/1 at all (a CONNECT tunnel, a 101 Switching Protocols). It keeps the
 * requests not yet answered in a queue, because a response's framing
 * depends on its request (HEAD, CONNECT) and because requests may be
 * pipelined. Interim responses (1xx other than 101) are messages of their
 * own that answer no request.
 *
 * Pure: no allocation, no system call, fixed-size state, each byte looked
 * at a bounded number of times (a header the framer does not need is
 * skipped with memchr; a line of a head that a call's end cuts is kept, to
 * OBS_H1_LINE_MAX bytes, until its LF). The layer runs it inside the observed program, on
 * the bytes the kernel returned and no further; the tests and the fuzzer
 * run it alone. Of the bytes it keeps only the method, the path without
 * its query, fragment or path parameters, the Host header's value and the
 * status: nothing else of a head, never a header but Host.
 */
#ifndef OBSERVE_H1_H
#define OBSERVE_H1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OBS_H1_METHOD_MAX 12
#define OBS_H1_HOST_MAX 40
#define OBS_H1_PATH_MAX 64
/* Requests sent and not yet answered that the framer remembers. A deeper
 * pipeline is framed as if the requests beyond were GETs. */
#define OBS_H1_QUEUE 16

/* The two directions of a connection. */
enum obs_dir {
	OBS_TX = 0, /* from the program to the server: requests */
	OBS_RX = 1, /* from the server to the program: responses */
};

/* How a message's body is delimited (RFC 9112 6.3). */
enum obs_h1_body {
	OBS_H1_BODY_NONE = 0,	 /* no body: the message ends with its head */
	OBS_H1_BODY_LENGTH = 1,	 /* Content-Length bytes */
	OBS_H1_BODY_CHUNKED = 2, /* chunked transfer coding */
	OBS_H1_BODY_CLOSE = 3,	 /* until the server closes */
};

/* What the bytes become after a message (a request asks, its response
 * decides). */
enum obs_h1_switch {
	OBS_H1_SW_NONE = 0,
	OBS_H1_SW_TUNNEL = 1,	 /* CONNECT, answered 2xx */
	OBS_H1_SW_WEBSOCKET = 2, /* Upgrade: websocket, answered 101 */
	OBS_H1_SW_H2C = 3,	 /* Upgrade: h2c, answered 101 */
	OBS_H1_SW_OTHER = 4,	 /* another Upgrade, answered 101 */
};

/* Head flags (obs_h1_head.flags). */
#define OBS_H1F_HOST_CUT 0x1u /* host longer than the field: cut */
#define OBS_H1F_PATH_CUT 0x2u /* path longer than the field: cut */
#define OBS_H1F_CLOSE                                                          \
	0x4u		      /* Connection: close (or HTTP/1.0 without        \
			       * keep-alive) */
#define OBS_H1F_EXPECT 0x8u   /* Expect: 100-continue */
#define OBS_H1F_HEAD 0x10u    /* the request's method is HEAD */
#define OBS_H1F_INTERIM 0x20u /* a 1xx response other than 101 */
#define OBS_H1F_HTTP10 0x40u  /* HTTP/1.0 */
#define OBS_H1F_CUT_SHORT                                                      \
	0x80u /* the message ended before its body did                         \
	       * (the connection closed) */

struct obs_h1_head {
	uint16_t status; /* a response's status code; 0 in a request */
	uint8_t body;	 /* enum obs_h1_body */
	uint8_t sw;	 /* enum obs_h1_switch: a request's ask, a
			  * response's outcome */
	uint32_t flags;	 /* OBS_H1F_* */
	uint64_t length; /* the body's bytes (OBS_H1_BODY_LENGTH) */
	char method[OBS_H1_METHOD_MAX]; /* a request's, NUL-padded (cut) */
	char host[OBS_H1_HOST_MAX];	/* NUL-padded; full when cut: the
					 * Host header, or CONNECT's target */
	char path[OBS_H1_PATH_MAX];	/* NUL-padded; full when cut; no
					 * query, fragment or ;parameters */
};

enum obs_h1_fact_kind {
	/* A message's head is complete: begin is its first byte, offset
	 * one past its head's last byte. */
	OBS_H1_HEAD = 1,
	/* A message is complete: offset is one past its last byte. */
	OBS_H1_END = 2,
	/* From offset on, this direction's bytes are another protocol
	 * (sw says which). */
	OBS_H1_SWITCH = 3,
	/* From offset on, the bytes are not HTTP/1 as the framer follows
	 * it: it stops (reason says why). */
	OBS_H1_LOST = 4,
};

/* Why the framer stopped (obs_h1_fact.reason with OBS_H1_LOST). */
enum obs_h1_lost {
	OBS_H1_NOT_HTTP = 1,   /* no start line where one must begin */
	OBS_H1_BAD_LENGTH = 2, /* Content-Length is not one number */
	OBS_H1_BAD_CHUNK = 3,  /* a chunk's size line is malformed */
	OBS_H1_BAD_CODING = 4, /* a request's last coding is not chunked */
	OBS_H1_UNSEEN = 5,     /* bytes moved that could not be read */
};

struct obs_h1_fact {
	uint8_t kind;	 /* enum obs_h1_fact_kind */
	uint8_t dir;	 /* enum obs_dir */
	uint8_t reason;	 /* enum obs_h1_lost (OBS_H1_LOST) */
	uint8_t sw;	 /* enum obs_h1_switch (OBS_H1_SWITCH) */
	uint64_t begin;	 /* the message's first byte (HEAD, END) */
	uint64_t offset; /* where the fact stands (see the kinds) */
	/* OBS_H1_HEAD: the head; OBS_H1_END: the message's head again
	 * (flags OBS_H1F_CUT_SHORT added when it was cut short). Valid
	 * during the call only. */
	const struct obs_h1_head *head;
};

typedef void obs_h1_emit(void *ctx, const struct obs_h1_fact *fact);

/* The longest part of a head's line the framer keeps when the line is cut
 * by the end of a call (its reading waits for the line's LF). What it
 * reads of a line lies in its first bytes: the method, a path it keeps to
 * 64 bytes, a host to 40, a status, a header's name and short value. */
#define OBS_H1_LINE_MAX 256

/* One direction's parser. Private to h1.c; here for its size. */
struct obs_h1_dir {
	uint8_t state;	   /* h1.c's enum h1_state */
	uint8_t tlen;	   /* a chunk size's digits so far (0 or 1) */
	bool te;	   /* Transfer-Encoding seen */
	bool chunked;	   /* ... and its last coding so far is chunked */
	bool cl_seen;	   /* Content-Length seen */
	bool cl_bad;	   /* ... and it is not one number */
	bool keep_alive;   /* Connection: keep-alive (HTTP/1.0) */
	bool conn_upgrade; /* Connection: upgrade */
	uint8_t upgrade;   /* enum obs_h1_switch the Upgrade header names */
	uint8_t hlen;	   /* bytes in head.host */
	uint8_t plen;	   /* bytes in head.path */
	bool line_cut;	   /* the line kept is longer than line[] */
	uint16_t line_n;   /* bytes of a line kept in line[], its LF to come */
	uint64_t line_at;  /* the offset of the line's first byte */
	uint64_t pos;	   /* offset of the next byte */
	uint64_t begin;	   /* the current message's first byte */
	uint64_t left;	   /* body or chunk bytes still to come */
	uint64_t cl;	   /* Content-Length so far */
	uint64_t num;	   /* a chunk's size */
	struct obs_h1_head head; /* the message being read */
	uint8_t line[OBS_H1_LINE_MAX];
};

/* A request remembered until its final response (private to h1.c). */
struct obs_h1_asked {
	uint8_t sw; /* enum obs_h1_switch it asks */
	bool head;  /* HEAD: its response has no body */
};

struct obs_h1 {
	struct obs_h1_dir dir[2];
	struct obs_h1_asked queue[OBS_H1_QUEUE];
	uint8_t q_first; /* the oldest request not answered */
	uint8_t q_len;
	obs_h1_emit *emit;
	void *ctx;
};

/* A framer at the beginning of both directions, that reports to emit. */
void obs_h1_init(struct obs_h1 *h, obs_h1_emit *emit, void *ctx);

/* The next n bytes of direction dir. */
void obs_h1_feed(struct obs_h1 *h, enum obs_dir dir, const uint8_t *p,
		 size_t n);

/* Direction dir ended (the server closed: dir OBS_RX; the program shut
 * its side: OBS_TX): a body delimited by the close ends here, any other
 * message in the middle ends cut short. */
void obs_h1_eof(struct obs_h1 *h, enum obs_dir dir);

/* How many of direction dir's next bytes the framer does not read: the
 * rest of a body of known length or of a chunk's data; SIZE_MAX where it
 * reads nothing more (a body that ends at the close, another protocol);
 * 0 where it reads the next byte. */
size_t obs_h1_unread(const struct obs_h1 *h, enum obs_dir dir);
/* Direction dir's next n bytes, unread (n at most obs_h1_unread's: bytes
 * beyond are taken as unseen, and the framer stops). */
void obs_h1_pass(struct obs_h1 *h, enum obs_dir dir, size_t n);

/* Whether the next byte of direction dir would begin a message (or is
 * awaited as the answer to a CONNECT or an Upgrade decides). */
bool obs_h1_at_boundary(const struct obs_h1 *h, enum obs_dir dir);

/* Whether direction dir is still followed as HTTP/1 (not switched to
 * another protocol, not lost). */
bool obs_h1_following(const struct obs_h1 *h, enum obs_dir dir);

#endif
