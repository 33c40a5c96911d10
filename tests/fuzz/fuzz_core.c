/* fuzz_core.c - libFuzzer target for the capture and the core together:
 * any bytes a program sends or a server answers, in any pieces, go through
 * the HTTP/1 framer, the WebSocket frame follower and the HTTP/2 frame
 * follower with libnghttp2's HPACK inflater (core/capture.c, which is
 * offered memory for HTTP/2 as the layer offers it) and their events
 * through the replay (core/replay.c, HTTP/2's streams by core/http2.c).
 * Never a crash, undefined behaviour, a leak or a hang, and the exchanges
 * keep the core's promises (checked below). Run by run-fuzz-core.sh.
 *
 * An input is a flag byte (bits 1..7: the largest piece a call moves, 0
 * for whole records; bit 0: the connect's SYN carries the first send) and then
 * records as tests/servers/relay.py writes them: '<' for server to client (any
 * other byte: client to server), the length (4 bytes, big-endian), the bytes
 * (cut at the end of the input). A record of server bytes of length 0 is the
 * server closing. Beside relay.py's: ']' and '[' for a TLS library's plaintext
 * read and written (obs_cap_plain), '}' and '{' for the socket calls it made
 * inside (in_tls), '(' for a send's entry written (obs_cap_send_entry; its
 * bytes, if any, are ignored) and ')' for a send that completes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "fuzz_events.h"
#include "hpack_linked.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct tally {
	uint64_t bytes[2];
	uint32_t given;		  /* exchanges given out */
	uint8_t seen[MAX_EVENTS]; /* their numbers, each once */
};

static void exchange(void *ctx, const struct obs_core_exchange *x)
{
	struct tally *t = ctx;

	/* numbered once each (HTTP/2's as their streams opened, the others
	 * in order), bytes no more than moved, times in order, never a query
	 * string or path parameter kept */
	t->given++;
	if (x->seq == 0 || x->seq >= MAX_EVENTS || t->seen[x->seq]++ ||
	    (!(x->flags & OBS_CXF_H2) && x->seq < t->given) ||
	    x->ds > t->bytes[OBS_TX] || x->dr > t->bytes[OBS_RX])
		abort();
	if ((x->t3 && x->t4 && x->t3 > x->t4) ||
	    (x->tfb && x->t6 && x->tfb > x->t6))
		abort();
	if (memchr(x->path, '?', sizeof(x->path)) ||
	    memchr(x->path, ';', sizeof(x->path)) ||
	    memchr(x->path, '#', sizeof(x->path)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct obs_sink sink = { put, update, seal, NULL };
	static struct obs_capture cap;
	static struct obs_replay replay;
	static struct obs_h2 h2mem;
	static struct tally t;
	struct obs_core_sink out = { exchange, &t };
	size_t piece, i = 1;
	int64_t now = 1000;

	if (size < 1)
		return 0;
	piece = data[0] >> 1;
	n_events = 0;
	memset(&t, 0, sizeof(t));
	obs_cap_init(&cap, &sink);
	if (!obs_cap_h2_offer(&cap, &h2mem, &obs_hpack_linked))
		abort();
	obs_cap_connect(&cap, now, now + 10, 0, data[0] & 1);
	while (i + 5 <= size) {
		uint8_t kind = data[i];
		enum obs_dir dir = kind == '<' || kind == ']' || kind == '}'
					   ? OBS_RX
					   : OBS_TX;
		bool plain = kind == '[' || kind == ']';
		bool in_tls = kind == '{' || kind == '}';
		bool entered = kind == ')';
		size_t len = (size_t)data[i + 1] << 24 |
			     (size_t)data[i + 2] << 16 |
			     (size_t)data[i + 3] << 8 | data[i + 4];
		const uint8_t *p = data + i + 5;

		i += 5;
		if (len > size - i)
			len = size - i;
		i += len;
		if (kind == '(') {
			obs_cap_send_entry(&cap, now);
			now += 10;
			continue;
		}
		if (len == 0 && dir == OBS_RX && !plain) {
			struct obs_call c = { .dir = OBS_RX,
					      .t_in = now,
					      .t_out = now + 5,
					      .eof = true };

			obs_cap_call(&cap, &c);
			now += 10;
			continue;
		}
		while (len) {
			size_t k = piece && piece < len ? piece : len;
			struct iovec iov = { (void *)p, k };
			struct obs_call c = { .dir = dir,
					      .t_in = now,
					      .t_out = now + 5,
					      .result = (long)k,
					      .in_tls = in_tls,
					      .entry = entered,
					      .iov = &iov,
					      .iovcnt = 1 };

			if (plain)
				obs_cap_plain(&cap, &c);
			else
				obs_cap_call(&cap, &c);
			t.bytes[dir] += k;
			now += 10;
			p += k;
			len -= k;
		}
	}
	obs_cap_close(&cap, now, 0);
	if (obs_cap_h2_reclaim(&cap) != &h2mem)
		abort();
	obs_replay_init(&replay, &out);
	for (uint64_t e = 0; e < n_events; e++) {
		if (!finals[e]) /* everything is final once closed */
			abort();
		obs_replay_event(&replay, &events[e]);
	}
	obs_replay_finish(&replay);
	if (replay.conn.exchanges != t.given)
		abort();
	return 0;
}
