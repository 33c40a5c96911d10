/* fuzz_h2.c - libFuzzer target for the HTTP/2 frame follower
 * (core/h2.c): any bytes, in any pieces, in either direction, must
 * give events that keep the follower's promises, never a crash, undefined
 * behaviour, a leak or a hang. Run by run-fuzz-h2.sh.
 *
 * An input is a flag byte (bit 0: an Upgrade, obs_h2_upgrade() first;
 * bits 1..7: the largest piece fed, 0 for whole records) and then records
 * as tests/servers/relay.py writes them: '<' for server to client (any
 * other byte: client to server), the length (4 bytes, big-endian), the
 * bytes (cut at the end of the input).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2.h"
#include "hpack_linked.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct tally {
	uint64_t said[2];
	uint64_t closed[2]; /* the CLOSE totals */
	unsigned int opens, closes, lost;
};

static void on_event(void *ctx, const struct obs_h2_ev *e)
{
	struct tally *t = ctx;

	if (e->kind < OBS_H2_EV_BYTES || e->kind > OBS_H2_EV_LOST || e->dir > 1)
		abort();
	switch (e->kind) {
	case OBS_H2_EV_BYTES:
		if (e->bytes == 0)
			abort();
		t->said[e->dir] += e->bytes;
		break;
	case OBS_H2_EV_OPEN:
		t->opens++;
		break;
	case OBS_H2_EV_CLOSE:
		t->closes++;
		t->closed[0] += e->total[0];
		t->closed[1] += e->total[1];
		break;
	case OBS_H2_EV_LOST:
		t->lost++;
		break;
	case OBS_H2_EV_REQUEST: /* labels, when decoded: never a query,
				 * fragment, path parameter or userinfo */
		if (e->req &&
		    ((e->req->flags & ~3u) ||
		     memchr(e->req->path, '?', sizeof(e->req->path)) ||
		     memchr(e->req->path, '#', sizeof(e->req->path)) ||
		     memchr(e->req->path, ';', sizeof(e->req->path)) ||
		     memchr(e->req->host, '@', sizeof(e->req->host))))
			abort();
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct obs_h2 h;
	struct tally t = { { 0, 0 }, { 0, 0 }, 0, 0, 0 };
	uint64_t fed[2] = { 0, 0 };
	size_t off = 1, piece;
	bool upgrade;

	if (size < 1)
		return 0;
	upgrade = data[0] & 1;
	piece = data[0] >> 1;
	obs_h2_init(&h, &obs_hpack_linked);
	if (upgrade)
		obs_h2_upgrade(&h, true);
	while (off + 5 <= size) {
		int dir = data[off] == '<' ? OBS_H2_RX : OBS_H2_TX;
		size_t len = (size_t)data[off + 1] << 24 |
			     (size_t)data[off + 2] << 16 |
			     (size_t)data[off + 3] << 8 | data[off + 4];
		const uint8_t *p = data + off + 5;

		if (len > size - off - 5)
			len = size - off - 5;
		off += 5 + len;
		fed[dir] += len;
		obs_h2_call(&h);
		while (len > 0) {
			size_t k = piece && piece < len ? piece : len;
			uint8_t *copy = malloc(k); /* ASan sees a read beyond */

			if (!copy)
				abort();
			memcpy(copy, p, k);
			obs_h2_feed(&h, (enum obs_h2_dir)dir, copy, k, on_event,
				    &t);
			free(copy);
			p += k;
			len -= k;
		}
	}
	obs_h2_end(&h, on_event, &t);
	/* every byte counted once unless the follower gave up; every stream
	 * closed once */
	if (t.lost > 1 ||
	    (!t.lost && (t.said[0] != fed[0] || t.said[1] != fed[1])))
		abort();
	if (t.closes != t.opens + (upgrade ? 1 : 0))
		abort();
	/* the streams' totals are part of what was said */
	if (t.closed[0] > t.said[0] || t.closed[1] > t.said[1])
		abort();
	return 0;
}
