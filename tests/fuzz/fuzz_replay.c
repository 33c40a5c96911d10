/* fuzz_replay.c - libFuzzer target for the replay alone (core/replay.c):
 * any sequence of events, whatever a damaged or hostile spool could
 * decode to (offsets that go back, facts without calls, ends before
 * beginnings), gives exchanges numbered in order and never a crash,
 * undefined behaviour or a hang. Run by run-fuzz-core.sh.
 *
 * Each 64 bytes of the input make one event, field by field.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void decode(const uint8_t *b, struct obs_event *ev)
{
	static const int errs[] = { 0,		 EAGAIN,      ECONNRESET,
				    EPIPE,	 ETIMEDOUT,   ECONNREFUSED,
				    EINPROGRESS, EHOSTUNREACH };

	memset(ev, 0, sizeof(*ev));
	ev->kind = b[0] % 11;
	ev->dir = b[1] & 1;
	ev->aux = b[2] % 8;
	ev->flags = b[3];
	ev->err = errs[b[4] % 8];
	ev->calls = b[5];
	ev->first_bytes = u32(b + 6) % 65536;
	/* small offsets and times so that they meet */
	ev->t_in = (int64_t)(u32(b + 10) % 100000);
	ev->t_data = ev->t_in + b[14];
	ev->t_out = ev->t_data + b[15];
	ev->offset = u32(b + 16) % 4096;
	ev->bytes = u32(b + 20) % 4096;
	switch (ev->kind) {
	case OBS_EV_H1:
		ev->u.h1.kind = (uint8_t)(1 + b[24] % 4);
		ev->u.h1.reason = b[25] % 5;
		ev->u.h1.ended = b[26] & 1;
		ev->u.h1.begin = u32(b + 28) % 4096;
		ev->u.h1.end = ev->u.h1.begin + u32(b + 32) % 4096;
		ev->u.h1.head.status = (uint16_t)(u32(b + 36) % 700);
		ev->u.h1.head.body = b[40] % 4;
		ev->u.h1.head.sw = b[41] % 5;
		ev->u.h1.head.flags = u32(b + 42);
		ev->u.h1.head.length = u64(b + 46);
		memcpy(ev->u.h1.head.method, b + 54, 10);
		break;
	case OBS_EV_WS:
		ev->u.ws.opcode = b[24];
		ev->u.ws.size = u64(b + 25);
		break;
	case OBS_EV_PROTO:
		ev->u.proto.level = b[24];
		break;
	case OBS_EV_H2: /* a few streams, so that facts meet */
		ev->u.h2.stream = b[24] % 8;
		ev->u.h2.what = (uint16_t)(b[25] | (b[26] & 1) << 8);
		ev->u.h2.status = (uint16_t)(u32(b + 27) % 1000);
		ev->u.h2.code = u32(b + 31);
		ev->u.h2.label_flags = b[35] & 3;
		ev->u.h2.begin = u32(b + 36) % 4096;
		ev->u.h2.bytes[0] = u32(b + 40) % 4096;
		ev->u.h2.bytes[1] = u32(b + 44) % 4096;
		ev->u.h2.calls[0] = b[48];
		ev->u.h2.calls[1] = b[49];
		memcpy(ev->u.h2.method, b + 50, 12);
		break;
	default:
		break;
	}
}

struct tally {
	uint32_t given;
	uint8_t seen[4096]; /* the numbers given, each once */
};

/* numbered once each: HTTP/2's streams as they opened, the others in the
 * order given out */
static void exchange(void *ctx, const struct obs_core_exchange *x)
{
	struct tally *t = ctx;

	t->given++;
	if (x->seq == 0 || x->seq >= sizeof(t->seen) || t->seen[x->seq]++ ||
	    (!(x->flags & OBS_CXF_H2) && x->seq < t->given))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct obs_replay replay;
	static struct tally t;
	struct obs_core_sink out = { exchange, &t };
	struct obs_event ev;

	memset(&t, 0, sizeof(t));
	obs_replay_init(&replay, &out);
	for (size_t i = 0; i + 64 <= size; i += 64) {
		decode(data + i, &ev);
		obs_replay_event(&replay, &ev);
	}
	obs_replay_finish(&replay);
	if (replay.conn.exchanges != t.given)
		abort();
	return 0;
}
