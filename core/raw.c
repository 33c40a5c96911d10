/* raw.c - exchanges as runs of sends and receives (raw.h).
 *
 *   phase      a send event           a receive event
 *   idle       begin one: sending     begin one (server first): receiving
 *   sending    go on sending          receiving
 *   receiving  give it out; begin     go on receiving
 *              the next: sending
 */
#include "raw.h"

#include <string.h>

enum raw_phase { IDLE, SENDING, RECEIVING };

void obs_raw_init(struct obs_raw *r)
{
	memset(r, 0, sizeof(*r));
}

static void begin(struct obs_raw *r, struct obs_core_conn *conn, uint32_t flags)
{
	memset(&r->x, 0, sizeof(r->x));
	r->x.flags = flags;
	if (conn->flags & OBS_CCF_TUNNEL)
		r->x.flags |= OBS_CXF_TUNNEL;
}

const struct obs_core_exchange *obs_raw_pending(const struct obs_raw *r)
{
	return r->phase != IDLE ? &r->x : NULL;
}

void obs_raw_drop(struct obs_raw *r)
{
	r->phase = IDLE;
}

void obs_raw_finish(struct obs_raw *r, const struct obs_core_sink *out)
{
	if (r->phase != IDLE)
		out->exchange(out->ctx, &r->x);
	r->phase = IDLE;
}

static void sent(struct obs_raw *r, struct obs_core_conn *conn,
		 const struct obs_core_sink *out, const struct obs_event *ev)
{
	if (r->phase == RECEIVING)
		obs_raw_finish(r, out);
	if (r->phase == IDLE) {
		if (ev->bytes == 0)
			return; /* no exchange begins without a byte */
		begin(r, conn, 0);
		r->x.t3 = ev->t_in;
		r->phase = SENDING;
	}
	r->x.t4 = ev->t_out;
	r->x.t5 = 0; /* a receive tried before this send came too early */
	r->x.ds += ev->bytes;
	r->x.send_calls += ev->calls;
}

static void received(struct obs_raw *r, struct obs_core_conn *conn,
		     const struct obs_event *ev)
{
	if (r->phase == IDLE) {
		if (ev->bytes == 0)
			return;
		begin(r, conn, OBS_CXF_SERVER_FIRST);
	}
	if (r->x.t5 == 0)
		r->x.t5 = ev->t_in;
	if (ev->bytes) {
		if (r->x.tfb == 0)
			r->x.tfb = ev->t_data;
		r->x.t6 = ev->t_out;
		r->x.dr += ev->bytes;
		r->phase = RECEIVING;
	}
	r->x.recv_calls += ev->calls;
}

void obs_raw_call(struct obs_raw *r, struct obs_core_conn *conn,
		  const struct obs_core_sink *out, const struct obs_event *ev)
{
	if (ev->dir == OBS_TX)
		sent(r, conn, out, ev);
	else
		received(r, conn, ev);
}
