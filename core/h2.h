/* h2.h - an HTTP/2 frame follower: one connection's frames, in both
 * directions, turned into per-stream events (one exchange per stream). Both
 * capture paths use it: the layer's exchange state machine
 * (libobserve/exchange_h2.c) and the event capture (core/capture.c).
 *
 * Pure: no clocks, no system call, no allocation, no I/O. The caller feeds
 * the bytes of every send (OBS_H2_TX, client to server) and every receive
 * (OBS_H2_RX) exactly as the kernel moved them, in the order of its
 * bookkeeping, split anywhere, and says where each call begins
 * (obs_h2_call); the follower calls back with events, and the caller, which
 * knows the call's entry and return times, turns them into exchanges:
 *
 *   OPEN    (TX) the client's HEADERS opened the stream      T3 = its entry
 *   REQUEST (TX) its header block is complete: :method, :path (no query,
 *                fragment or ;parameters), :authority (no userinfo) (req;
 *                NULL when the block could not be decoded; again: the same
 *                host and path as the last request's)         labels
 *   FIRST   (RX) the first answer frame (HEADERS, DATA or RST_STREAM) of
 *                the stream is in this receive                TFB = its return
 *   STATUS  (RX) the final :status (1xx informational responses are not)
 *   END     the frame that carries END_STREAM is complete:    T4 (TX), T6 (RX)
 *   RESET   RST_STREAM (code = its error), or streams above a server's
 *           GOAWAY's last stream id (RX, code 7 REFUSED_STREAM)
 *   CLOSE   the stream is over (both sides ended, reset, the connection
 *           ended or the follower gave up) and forgotten; total and calls
 *           say what it moved in each direction
 *   BYTES   bytes of the stream's frames (the 9-byte header and the payload;
 *           stream 0: the connection's) moved in this call: Ds (TX), Dr (RX)
 *
 * Every event carries `at`: where in its direction's bytes it stands, from
 * the first byte the follower was fed in that direction (one past the last
 * byte consumed when it happened: for OPEN and FIRST, one past the frame's
 * 9-byte header, so the frame begins at at - 9).
 *
 * A frame's header counts in the call that completes it (a header split over
 * two calls counts in the second; one cut by the end, in obs_h2_end()), its
 * payload as it comes, so the BYTES of a connection add up to everything
 * fed (until LOST), and a stream's CLOSE totals are the BYTES said for it.
 * FIRST lies in the call that completes the answer
 * frame's header. The connection preface, the 101
 * of an Upgrade, SETTINGS, PING, PRIORITY, GOAWAY, WINDOW_UPDATE on stream 0,
 * PUSH_PROMISE and everything on a pushed (even) stream, frames of unknown
 * type, and frames of streams not (or no longer) followed are the
 * connection's (stream 0). A WINDOW_UPDATE or RST_STREAM on a followed
 * stream is that stream's. Streams overlap, which is the point: events of
 * several streams interleave in one call.
 *
 * How it starts: obs_h2_init() for prior knowledge (the client's first bytes
 * are the preface "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", see obs_h2_preface());
 * obs_h2_upgrade() after it for an HTTP/1.1 request that the server answers
 * with "101 Switching Protocols" (Upgrade: h2c): stream 1 is that request,
 * already sent; the receives are fed from the 101's first byte (the
 * follower skips the 101) or from the byte after it (the caller read it).
 * The server's first frame must be SETTINGS, and so must the client's after
 * the preface. Anything else, or a frame that breaks the framing rules
 * (length above the receiver's SETTINGS_MAX_FRAME_SIZE, a frame inside a
 * header block, a wrong length or stream for its type, padding longer than
 * the frame), is not HTTP/2: the follower closes its streams, says LOST once
 * and ignores everything after; the caller goes back to exchanges by
 * direction.
 *
 * Labels: header blocks are decoded with libnghttp2's HPACK inflater (one per
 * direction: the dynamic tables differ), fed each fragment as it arrives
 * (HEADERS with PADDED and PRIORITY, CONTINUATION, and PUSH_PROMISE, whose
 * blocks change the table too); a side's SETTINGS_HEADER_TABLE_SIZE raises
 * the limit of the inflater of what that side receives (an Upgrade request's
 * HTTP2-Settings is not read). Only :method, :path, :authority (host when
 * there is no :authority: the same label) and :status are copied out, into
 * the same NUL-padded fields as HTTP/1 (struct obs_h2_req, OBS_H1F_HOST_CUT
 * and OBS_H1F_PATH_CUT when cut); no other header value is copied anywhere.
 * The inflater's functions come from the caller (struct obs_hpack): the
 * layer finds them with dlopen and dlsym (libobserve/hpack.c), the tests and
 * the fuzzers link libnghttp2. Without them (NULL): streams are still split
 * and timed, labels are missing, and NOLABELS says so (OBS_H2_NL_NOLIB).
 *
 * Bounds. At most OBS_H2_STREAMS streams are followed at once; a stream the
 * client opens beyond them is counted (untracked) and said (UNTRACKED), and
 * its frames are the connection's. The inflaters allocate from a fixed arena
 * of OBS_H2_ARENA bytes per direction inside struct obs_h2, never from the
 * host's malloc; nothing of a header block is kept by the follower itself,
 * so blocks of any size and any number of CONTINUATIONs decode. A dynamic
 * table or a single header field too large for the arena (Huffman-coded
 * above about 31 KiB, as decoding reserves twice that; plain above about
 * 63 KiB, libnghttp2's own limit being 64 KiB), or a block the inflater
 * rejects, ends the labels of that direction (NOLABELS with OBS_H2_NL_NOMEM
 * or OBS_H2_NL_HPACK): the dynamic table cannot be kept without decoding,
 * but streams are still split and timed.
 *
 * Memory: struct obs_h2 is 2 * OBS_H2_ARENA + 6.5 KiB, fixed; take it from
 * anonymous memory (never the MAP_SHARED spool) and do not move it (the
 * inflaters point into it). obs_h2_init() writes its first 6.5 KiB and the
 * head of each arena; the arenas are touched as the tables grow (h2load and
 * nginx, 4 KiB tables: 1.7 KiB for the requests, 14 KiB for the answers).
 * obs_h2_end() wipes what the arenas held (header values of the dynamic tables)
 * before the memory is reused.
 *
 * Threads: one connection's follower is used under the caller's lock.
 */
#ifndef OBSERVE_H2_H
#define OBSERVE_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <nghttp2/nghttp2.h>

#include "h1.h"

#define OBS_H2_STREAMS 128	 /* streams followed at once (power of 2) */
#define OBS_H2_ARENA (64 * 1024) /* HPACK memory per direction */

enum obs_h2_dir {
	OBS_H2_TX = 0, /* client to server: the sends */
	OBS_H2_RX = 1, /* server to client: the receives */
};

enum obs_h2_kind {
	OBS_H2_EV_BYTES = 1, /* stream (0: the connection) moved bytes */
	OBS_H2_EV_OPEN,	     /* TX: a stream begins (T3) */
	OBS_H2_EV_REQUEST,   /* TX: its labels (req) */
	OBS_H2_EV_FIRST,     /* RX: its first answer frame (TFB) */
	OBS_H2_EV_STATUS,    /* RX: its final status */
	OBS_H2_EV_END,	     /* dir: END_STREAM complete (T4 / T6) */
	OBS_H2_EV_RESET,     /* dir: reset, code = HTTP/2 error code */
	OBS_H2_EV_CLOSE,     /* the stream is over and forgotten */
	OBS_H2_EV_GOAWAY,    /* dir: stream = last stream id, code */
	OBS_H2_EV_UNTRACKED, /* TX: a stream beyond OBS_H2_STREAMS */
	OBS_H2_EV_NOLABELS,  /* dir: no more labels, code = OBS_H2_NL_* */
	OBS_H2_EV_LOST,	     /* not HTTP/2 (any more), code = OBS_H2_LOST_* */
};

/* Why the labels of a direction end (NOLABELS). */
#define OBS_H2_NL_NOLIB 2 /* no inflater's functions were given */
#define OBS_H2_NL_NOMEM 3 /* the arena is full */
#define OBS_H2_NL_HPACK 4 /* the inflater rejected a header block */

/* Why the follower gave up (LOST). */
#define OBS_H2_LOST_PREFACE 1  /* the client's first bytes are no preface */
#define OBS_H2_LOST_UPGRADE 2  /* no "HTTP/1.1 101" header before frames */
#define OBS_H2_LOST_SETTINGS 3 /* a side's first frame is no SETTINGS */
#define OBS_H2_LOST_FRAME 4    /* a frame that breaks the framing rules */
#define OBS_H2_LOST_UNSEEN 5   /* bytes moved the caller could not see */

/* HTTP/2 error code of the RESET of a stream refused by GOAWAY. */
#define OBS_H2_REFUSED_STREAM 7

/* A request's labels, as HTTP/1's (h1.h): NUL-padded, full when cut. */
struct obs_h2_req {
	char method[OBS_H1_METHOD_MAX];
	char host[OBS_H1_HOST_MAX]; /* :authority, else Host; no userinfo */
	char path[OBS_H1_PATH_MAX]; /* no query, fragment or ;parameters */
	uint32_t flags;		    /* OBS_H1F_HOST_CUT, OBS_H1F_PATH_CUT */
};

/* libnghttp2's HPACK inflater: the four functions the follower calls. */
struct obs_hpack {
	int (*inflate_new2)(nghttp2_hd_inflater **inflater, nghttp2_mem *mem);
	int (*change_table_size)(nghttp2_hd_inflater *inflater, size_t size);
	/* nghttp2_hd_inflate_hd3 (1.60+) or _hd2: the same but for the name
	 * of their signed size type */
	ssize_t (*inflate)(nghttp2_hd_inflater *inflater, nghttp2_nv *nv,
			   int *flags, const uint8_t *in, size_t inlen,
			   int final);
	int (*end_headers)(nghttp2_hd_inflater *inflater);
};

struct obs_h2_ev {
	uint8_t kind;		      /* enum obs_h2_kind */
	uint8_t dir;		      /* enum obs_h2_dir */
	uint16_t status;	      /* STATUS */
	uint32_t stream;	      /* GOAWAY: its last stream id */
	uint32_t code;		      /* RESET, GOAWAY, NOLABELS, LOST */
	uint64_t bytes;		      /* BYTES */
	uint64_t at;		      /* where it stands in dir's bytes */
	uint64_t total[2];	      /* CLOSE: the stream's bytes, by dir */
	uint32_t calls[2];	      /* CLOSE: calls that moved some */
	const struct obs_h2_req *req; /* REQUEST, valid during the call */
	bool again; /* REQUEST: the same host and path as the one before */
};

/* Called for each event, in order, during obs_h2_feed() and obs_h2_end(). */
typedef void obs_h2_fn(void *ctx, const struct obs_h2_ev *ev);

/* One followed stream. */
struct obs_h2_stream {
	uint32_t id;	       /* 0: a free slot */
	uint32_t flags;	       /* S_* of h2.c */
	uint64_t total[2];     /* bytes counted for it, by direction */
	uint32_t calls[2];     /* calls in which some were */
	uint32_t last_call[2]; /* the last of them (obs_h2.call) */
};

/* One direction's walk. */
struct obs_h2_way {
	uint8_t phase;	  /* preface, 101, frames (h2.c) */
	uint8_t hdr_have; /* bytes of the frame header seen; 9: payload */
	uint8_t hdr[9];	  /* the frame header, when split */
	uint8_t type;	  /* the current frame's */
	uint8_t flags;
	bool seen_frame;    /* a frame has begun (the first is SETTINGS) */
	bool need_padlen;   /* header-block frame: the pad length is next */
	uint8_t part_have;  /* bytes of part[] collected */
	uint8_t part[8];    /* SETTINGS entry, RST_STREAM, GOAWAY's start */
	uint8_t crlf;	    /* 101: the header's end matched so far */
	uint32_t pos;	    /* preface / 101 bytes seen */
	uint64_t at;	    /* bytes of this direction consumed */
	uint32_t sid;	    /* the current frame's stream */
	uint32_t owner;	    /* the stream its bytes count for, 0: none */
	uint32_t left;	    /* payload bytes still to come */
	uint32_t pre;	    /* header-block frame: bytes before the fragment */
	uint32_t frag;	    /* header-block fragment bytes still to come */
	uint32_t max_frame; /* the receiver's SETTINGS_MAX_FRAME_SIZE */
	/* the header block in progress */
	bool in_block;	     /* expecting CONTINUATION of blk_sid */
	bool blk_end_stream; /* its HEADERS carried END_STREAM */
	bool blk_authority;  /* :authority seen (host is then ignored) */
	uint8_t blk_kind;    /* request, response, other (h2.c) */
	uint32_t blk_sid;
	uint16_t status;	/* RX: :status of the block */
	struct obs_h2_req req;	/* TX: the block's labels */
	struct obs_h2_req last; /* TX: the last request's that were decoded */
	/* HPACK */
	uint8_t hpack;	     /* none yet, ready, lost (h2.c) */
	void *inflater;	     /* nghttp2_hd_inflater in arena[dir] */
	uint32_t table_want; /* SETTINGS_HEADER_TABLE_SIZE announced */
	uint32_t table_set;  /* ... given to the inflater */
};

struct obs_h2_blk;

/* The memory of one inflater: first fit, address-ordered free list. */
struct obs_h2_arena {
	struct obs_h2_blk *free; /* free blocks by address */
	size_t touched;		 /* bytes from the start ever handed out */
	void *allocator[5];	 /* nghttp2_mem: the inflater keeps a pointer */
	_Alignas(16) unsigned char mem[OBS_H2_ARENA];
};

struct obs_h2 {
	struct obs_h2_way way[2];		      /* by enum obs_h2_dir */
	struct obs_h2_stream streams[OBS_H2_STREAMS]; /* by (id / 2) % N */
	uint32_t nstreams;			      /* slots in use */
	uint32_t displaced; /* ... not at their id's own slot */
	uint32_t last_sid;  /* the highest stream the client opened */
	uint32_t untracked; /* streams beyond OBS_H2_STREAMS */
	bool lost;	    /* given up (or ended): ignore everything */
	uint32_t call;	    /* calls begun (obs_h2_call) */
	const struct obs_hpack *hpack; /* NULL: no labels */
	/* during a call: where events go, bytes not yet said */
	obs_h2_fn *fn;
	void *ctx;
	uint8_t pend_dir;
	uint32_t pend_sid;
	uint64_t pend_bytes;
	struct obs_h2_arena arena[2]; /* last: init touches little */
};

/* Begin following a connection whose client speaks HTTP/2 with prior
 * knowledge: its first bytes sent are the preface. hpack: the inflater's
 * functions (NULL: no labels); it must outlive the follower. */
void obs_h2_init(struct obs_h2 *h, const struct obs_hpack *hpack);

/* After obs_h2_init(): the connection is an h2c Upgrade instead. Stream 1
 * is the HTTP/1.1 request already sent (the caller's current exchange: no
 * OPEN, no REQUEST, its TX END is behind it). with_101: the next receive
 * fed begins with the server's "HTTP/1.1 101" response, which the follower
 * skips up to its blank line; else the caller read the 101 and feeds what
 * follows it. Then frames follow in both directions (the client's after
 * its preface). */
void obs_h2_upgrade(struct obs_h2 *h, bool with_101);

/* The bytes fed from here on are a new call's: each stream counts the
 * calls its bytes came in (CLOSE's calls). */
void obs_h2_call(struct obs_h2 *h);

/* How many of direction dir's next bytes the follower does not read (the
 * rest of a DATA frame's payload, or of a frame it only counts); SIZE_MAX
 * once it reads nothing more; 0 where it reads the next byte. */
size_t obs_h2_unread(const struct obs_h2 *h, enum obs_h2_dir dir);
/* n bytes moved in direction dir that were not read (n at most
 * obs_h2_unread's: beyond, the follower is lost), counted as obs_h2_feed
 * counts them; events as there. */
void obs_h2_pass(struct obs_h2 *h, enum obs_h2_dir dir, size_t n,
		 obs_h2_fn *fn, void *ctx);

/* n more bytes moved in direction dir (p[0..n): only what the kernel took
 * or wrote); events go to fn(ctx, ...) before it returns. Nothing happens
 * after LOST or obs_h2_end(). */
void obs_h2_feed(struct obs_h2 *h, enum obs_h2_dir dir, const uint8_t *p,
		 size_t n, obs_h2_fn *fn, void *ctx);

/* Whether the next bytes of direction dir, p[0..n) (n > 0), begin a HEADERS
 * frame (or a frame, when they are too few to tell which): when they are
 * fed, a stream may open (the client's) or its answer begin. Nothing is
 * fed. */
bool obs_h2_begins_headers(const struct obs_h2 *h, enum obs_h2_dir dir,
			   const uint8_t *p, size_t n);

/* The connection ends: BYTES for the start of a frame header still
 * waiting for its end, CLOSE for each stream still followed, then the
 * arenas are wiped. Idempotent; the memory may be reused after it. */
void obs_h2_end(struct obs_h2 *h, obs_h2_fn *fn, void *ctx);

/* Whether p[0..n) begins like the client preface (all of it or, when n is
 * shorter, as much as there is; at least "PRI * HTTP/2.0"). */
static inline bool obs_h2_preface(const uint8_t *p, size_t n)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

	if (n < 14)
		return false;
	return memcmp(p, preface, n < 24 ? n : 24) == 0;
}

#endif
