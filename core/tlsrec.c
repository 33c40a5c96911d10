/* tlsrec.c - a client's TLS records until its first data (tlsrec.h).
 *
 *   state     a record of type            then
 *   hello     handshake                   flights
 *             anything else               done (not a TLS client)
 *   flights   handshake                   flights, a handshake seen; the
 *                                         1.2 Finished after a change
 *                                         cipher spec
 *             change cipher spec, alert   flights
 *             application data            the 1.3 Finished when no
 *                                         handshake and no Finished
 *                                         came before it: flights;
 *                                         else its first data: done
 *             anything else               done (not TLS)
 */
#include "tlsrec.h"

#include <string.h>

enum tlsrec_state { ST_HELLO, ST_FLIGHTS, ST_DONE };

void obs_tlsrec_init(struct obs_tlsrec *t)
{
	memset(t, 0, sizeof(*t));
}

bool obs_tlsrec_following(const struct obs_tlsrec *t)
{
	return t->state != ST_DONE;
}

/* A record's header is complete (its type in hdr[0]). */
static void record(struct obs_tlsrec *t, obs_tlsrec_data *data, void *ctx)
{
	uint8_t type = t->hdr[0];
	uint64_t length = (uint64_t)t->hdr[3] << 8 | t->hdr[4];

	t->left = length;
	if (t->hdr[1] != 3 || length > OBS_TLS_RECORD_MAX) {
		t->state = ST_DONE;
		return;
	}
	switch (t->state) {
	case ST_HELLO:
		t->state = type == OBS_TLS_HANDSHAKE ? ST_FLIGHTS : ST_DONE;
		return;
	default: /* ST_FLIGHTS */
		switch (type) {
		case OBS_TLS_HANDSHAKE:
			t->handshake = true;
			if (t->ccs && !t->finished) {
				t->finished = true;
				data(ctx, OBS_TLSREC_FINISHED, t->begin,
				     OBS_TLS_1_2);
			}
			return;
		case OBS_TLS_CHANGE_CIPHER_SPEC:
			t->ccs = true;
			return;
		case OBS_TLS_ALERT:
			return;
		case OBS_TLS_APPLICATION_DATA:
			if (!t->handshake && !t->finished) {
				t->finished = true;
				data(ctx, OBS_TLSREC_FINISHED, t->begin,
				     OBS_TLS_1_3);
				return;
			}
			t->state = ST_DONE;
			data(ctx, OBS_TLSREC_DATA, t->begin,
			     t->handshake ? OBS_TLS_1_2 : OBS_TLS_1_3);
			return;
		default:
			t->state = ST_DONE;
			return;
		}
	}
}

void obs_tlsrec_feed(struct obs_tlsrec *t, const uint8_t *p, size_t n,
		     obs_tlsrec_data *data, void *ctx)
{
	while (n && t->state != ST_DONE) {
		size_t k;

		if (t->left) { /* the payload: skipped */
			k = t->left < n ? (size_t)t->left : n;
			t->left -= k;
		} else {
			if (t->have == 0)
				t->begin = t->pos;
			k = sizeof(t->hdr) - t->have < n
				    ? sizeof(t->hdr) - t->have
				    : n;
			memcpy(t->hdr + t->have, p, k);
			t->have = (uint8_t)(t->have + k);
			if (t->have == sizeof(t->hdr)) {
				t->have = 0;
				record(t, data, ctx);
			}
		}
		p += k;
		n -= k;
		t->pos += k;
	}
	t->pos += n; /* done: the rest is not read */
}
