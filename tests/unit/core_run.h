/* core_run.h - the capture and the core together, as the unit tests run
 * them (test_core.c): each call's bytes go through the capture
 * (core/capture.c) into events, as in the layer, and the events through
 * the replay (core/replay.c) into exchanges, as in the slicer. The capture
 * is offered memory for HTTP/2 and libnghttp2's inflater, linked.
 *
 * Times: the k-th call of a run enters at k * 1000 and returns at
 * k * 1000 + 500, so each time an exchange gets names the call it came
 * from.
 *
 * With CORE_SEEDS=DIR set, each conversation is also written to DIR as a
 * seed of tests/fuzz/fuzz_core.c (its input format).
 */
#ifndef OBSERVE_CORE_RUN_H
#define OBSERVE_CORE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "h2frames.h"
#include "replay.h"

#define MAX_EVENTS 16384
#define MAX_X 256

struct run {
	struct obs_event events[MAX_EVENTS];
	bool final[MAX_EVENTS];
	uint64_t n_events;
	struct obs_core_exchange x[MAX_X]; /* as the replay gave them out */
	int n_x;
	struct obs_replay replay;
	struct obs_capture cap;
	struct obs_sink sink;
	int step;
	uint8_t seed[65536]; /* the conversation, as fuzz_core reads it */
	size_t seed_len;
};

/* A connection just connected (at 0, up at 100): the one run there is. */
struct run *run_new(void);
/* ... whose connect (at 0, returned at 100) said err (0, EINPROGRESS),
 * its SYN carrying the first send's bytes or not (obs_cap_connect). */
struct run *run_connect(int err, bool syn_data);
/* When call `step` entered, and returned. */
int64_t t_in(int step);
int64_t t_out(int step);
/* A call of direction dir that moved the n bytes of p (n 0: EAGAIN);
 * returns its step. */
int call(struct run *s, enum obs_dir dir, const void *p, size_t n);
/* A call that moved n bytes the layer could not read (MSG_TRUNC). */
int call_unseen(struct run *s, enum obs_dir dir, size_t n);
/* The same, a socket call a TLS library made inside one of its functions
 * whose plaintext is recorded (in_tls). */
int call_in_tls(struct run *s, enum obs_dir dir, const void *p, size_t n);
/* A TLS library's function that moved n bytes of plaintext. */
int plain(struct run *s, enum obs_dir dir, const void *p, size_t n);
int send_str(struct run *s, const char *text);
int recv_str(struct run *s, const char *text);
/* A receive that returned 0: the server closed. */
int recv_eof(struct run *s);
/* The calls of an HTTP/2 script (h2frames.h), each chunk a call, or
 * calls of at most piece bytes (0: whole). */
void run_h2(struct run *s, const struct script *h2, size_t piece);
/* Close, then replay every event written (each must be final, numbered
 * in order). */
void finish(struct run *s);

#endif
