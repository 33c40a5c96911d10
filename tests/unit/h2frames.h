/* h2frames.h - the bytes of an HTTP/2 connection, built frame by frame
 * for the unit tests (test_h2.c: the frame follower; test_core.c: the
 * capture and the replay), as a script of calls: header blocks from
 * libnghttp2's own deflater, and for each stream the bytes the follower
 * must count for it (core/h2.h's rules). */
#ifndef OBSERVE_H2FRAMES_H
#define OBSERVE_H2FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "h2.h"

#define TX OBS_H2_TX
#define RX OBS_H2_RX
#define MAX_SID 8192 /* stream ids the tests use stay below */

/* One call's bytes. */
struct chunk {
	int dir;
	uint8_t *p;
	size_t n, cap;
};

struct script {
	struct chunk *c;
	int n, cap;
	bool cut;		   /* the next bytes begin a new call */
	bool upgrade;		   /* obs_h2_upgrade() before the first byte */
	uint64_t want[2][MAX_SID]; /* bytes per stream by h2.h's rules */
	uint64_t fed[2];
	nghttp2_hd_deflater *def[2]; /* the client's and the server's */
};

/* Header-block options. */
#define B_END_STREAM 0x1u
#define B_PRIORITY 0x2u /* HEADERS with the PRIORITY flag */
#define B_PADDED 0x4u	/* ... and 7 bytes of padding */

struct script *script_new(void);
void script_free(struct script *s);
void cut(struct script *s);
void put(struct script *s, int dir, const void *p, size_t n);
void frame_to(struct script *s, int dir, uint32_t owner, uint8_t type,
	      uint8_t flags, uint32_t sid, const void *payload, size_t len);
void frame(struct script *s, int dir, uint8_t type, uint8_t flags, uint32_t sid,
	   const void *payload, size_t len);
void preface(struct script *s);
void settings(struct script *s, int dir, int n, ...);
void settings_ack(struct script *s, int dir);
void handshake(struct script *s);
void block(struct script *s, int dir, uint8_t type, uint32_t sid,
	   unsigned int opts, size_t frag, uint32_t promised,
	   const char *const *nv);
void request(struct script *s, uint32_t sid, unsigned int opts,
	     const char *method, const char *path, const char *auth);
void response(struct script *s, uint32_t sid, unsigned int opts,
	      const char *status);
void data(struct script *s, int dir, uint32_t sid, size_t n, bool end,
	  uint8_t pad);
void rst(struct script *s, int dir, uint32_t sid, uint32_t code);
void goaway(struct script *s, int dir, uint32_t last, uint32_t code);
void ping(struct script *s, int dir, bool ack);

#endif
