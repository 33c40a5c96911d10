/* wsframe.h - WebSocket frames (RFC 6455 section 5.2) followed over one
 * direction of a connection after its 101, to tell where each message
 * ends: a data message is its first frame and the continuations up to
 * the one with FIN; a control frame (close, ping, pong) is a message of
 * its own, and may come between the frames of a data message.
 *
 * Pure, fixed-size state, no allocation; the payload is never looked at
 * (a client's is masked anyway), only the frame headers.
 */
#ifndef OBSERVE_WSFRAME_H
#define OBSERVE_WSFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A message ended: its first frame's opcode, its payload's bytes and the
 * offset one past its last byte. */
typedef void obs_ws_emit(void *ctx, uint8_t opcode, uint64_t size,
			 uint64_t end);

struct obs_wsframe {
	uint64_t pos;	 /* offset of the next byte */
	uint64_t left;	 /* payload bytes of the current frame to come */
	uint64_t size;	 /* the data message's payload so far */
	uint64_t csize;	 /* the current control frame's payload */
	uint8_t hdr[14]; /* the frame header being read */
	uint8_t have;	 /* its bytes so far */
	uint8_t opcode;	 /* the data message's first opcode, 0: none */
	bool control;	 /* the current frame is a control frame */
	bool fin;	 /* ... and the current frame has FIN */
	bool lost;	 /* not WebSocket frames: nothing more read */
};

void obs_ws_init(struct obs_wsframe *w);
void obs_ws_feed(struct obs_wsframe *w, const uint8_t *p, size_t n,
		 obs_ws_emit *emit, void *ctx);
/* How many of the next bytes are not read: the rest of a frame's payload
 * (SIZE_MAX once it reads nothing more; 0 where a header is read). */
size_t obs_ws_unread(const struct obs_wsframe *w);
/* The next n bytes, unread (n at most obs_ws_unread's: beyond, it stops
 * reading); the messages they end said as obs_ws_feed says them. */
void obs_ws_pass(struct obs_wsframe *w, size_t n, obs_ws_emit *emit,
		 void *ctx);

/* Whether the next byte begins a message (no frame or message under way). */
bool obs_ws_at_boundary(const struct obs_wsframe *w);

#endif
