/* exchange_h2.h - the state of one HTTP/2 connection as the exchange state
 * machine keeps it (exchange_h2.c): the frame follower and, per stream it
 * follows, the exchange record being written.
 *
 * One struct obs_xh2 per HTTP/2 connection, taken from anonymous memory by
 * the layer (h2pool.c) only when a connection turns out to speak HTTP/2,
 * and reused after it ends; never the host's malloc, never the spool.
 */
#ifndef OBSERVE_EXCHANGE_H2_H
#define OBSERVE_EXCHANGE_H2_H

#include "exchange.h"
#include "h2.h"

/* A followed stream and its exchange record (NULL: the spool was full). */
struct obs_xh2_stream {
	uint32_t id;	  /* 0: a free slot */
	uint32_t tx_call; /* the last call that counted in send_calls */
	uint32_t rx_call; /* ... in recv_calls */
	struct obs_record *rec;
};

struct obs_xh2 {
	struct obs_xh2_stream streams[OBS_H2_STREAMS]; /* by (id / 2) % N */
	uint32_t call;		       /* the calls fed so far, numbered */
	bool warned;		       /* a stream beyond the bound was said */
	const struct obs_hpack *hpack; /* the inflater (NULL: no labels) */
	struct obs_xh2 *next_free;     /* the layer's pool */
	struct obs_h2 f; /* last: its arenas are touched as used */
};

#endif
