/* replay.c - a connection's events through its stack (replay.h).
 *
 *   event            goes to
 *   connect, up,     tcp
 *   shutdown, close
 *   call             tcp, the call window of its direction, then the
 *                    layer of its direction's protocol: HTTP/1 or raw
 *                    (WebSocket's calls carry nothing it needs)
 *   proto            the direction's protocol from here; a call that came
 *                    before it is handed to the chosen layer
 *   HTTP/1 message   http1
 *   HTTP/1 switch    the direction's protocol: WebSocket, the tunnel's
 *                    (chosen by a proto event), or raw
 *   HTTP/1 lost      raw from here, both directions; http1 gives out
 *                    what it has
 *   WebSocket        a message counted on the connection
 */
#include "replay.h"

#include <string.h>

#include "tcp.h"

static struct obs_http1_ctx http1_ctx(struct obs_replay *r)
{
	return (struct obs_http1_ctx){ .conn = &r->conn,
				       .calls = r->calls,
				       .out = &r->layers };
}

static void http1_stop(struct obs_replay *r)
{
	struct obs_http1_ctx cx = http1_ctx(r);

	if (r->http1_on)
		obs_http1_finish(&r->http1, &cx);
	r->http1_on = false;
}

/* A call event to the layer of its direction's protocol. */
static void deliver(struct obs_replay *r, const struct obs_event *ev)
{
	struct obs_http1_ctx cx = http1_ctx(r);

	switch (r->app[ev->dir]) {
	case OBS_APP_H1:
		if (r->http1_on)
			obs_http1_call(&r->http1, &cx, ev);
		return;
	case OBS_APP_TLS:
	case OBS_APP_OTHER:
		obs_raw_call(&r->raw, &r->conn, &r->layers, ev);
		return;
	default: /* not chosen yet, or WebSocket */
		return;
	}
}

static void on_tcp(struct obs_replay *r, const struct obs_event *ev)
{
	obs_tcp_event(&r->conn, ev);
}

static void on_call(struct obs_replay *r, const struct obs_event *ev)
{
	obs_tcp_event(&r->conn, ev);
	obs_calls_add(&r->calls[ev->dir], ev);
	r->undelivered[ev->dir] = r->app[ev->dir] == OBS_APP_UNKNOWN;
	deliver(r, ev);
}

static void on_proto(struct obs_replay *r, const struct obs_event *ev)
{
	uint8_t app = ev->aux;

	if (app == OBS_APP_TLS)
		r->conn.flags |= OBS_CCF_TLS;
	if (app == OBS_APP_H1 && !r->http1_on) {
		obs_http1_init(&r->http1);
		r->http1_on = true;
	}
	r->app[ev->dir] = app;
	/* the call that moved the bytes that chose it came just before */
	if (r->undelivered[ev->dir]) {
		r->undelivered[ev->dir] = false;
		deliver(r, obs_calls_last(&r->calls[ev->dir]));
	}
}

static void on_h1(struct obs_replay *r, const struct obs_event *ev)
{
	struct obs_http1_ctx cx = http1_ctx(r);

	switch (ev->u.h1.kind) {
	case OBS_H1_HEAD:
		if (r->http1_on)
			obs_http1_message(&r->http1, &cx, ev);
		return;
	case OBS_H1_SWITCH:
		r->app[ev->dir] =
			ev->u.h1.head.sw == OBS_H1_SW_WEBSOCKET ? OBS_APP_WS
			: ev->u.h1.head.sw == OBS_H1_SW_TUNNEL ? OBS_APP_UNKNOWN
							       : OBS_APP_OTHER;
		if (r->app[OBS_TX] != OBS_APP_H1 &&
		    r->app[OBS_RX] != OBS_APP_H1)
			http1_stop(r);
		return;
	default: /* OBS_H1_LOST: both directions go on as raw runs */
		r->app[OBS_TX] = r->app[OBS_RX] = OBS_APP_OTHER;
		http1_stop(r);
		return;
	}
}

static void on_ws(struct obs_replay *r, const struct obs_event *ev)
{
	r->conn.ws_messages[ev->dir]++;
}

/* What each kind of event does (enum obs_ev_kind). */
static void (*const on_event[])(struct obs_replay *,
				const struct obs_event *) = {
	[OBS_EV_CONNECT] = on_tcp, [OBS_EV_UP] = on_tcp,
	[OBS_EV_CALL] = on_call,   [OBS_EV_SHUTDOWN] = on_tcp,
	[OBS_EV_CLOSE] = on_tcp,   [OBS_EV_H1] = on_h1,
	[OBS_EV_WS] = on_ws,	   [OBS_EV_PROTO] = on_proto,
};

/* An exchange a layer gives out: numbered, then the caller's. */
static void number(void *ctx, const struct obs_core_exchange *x)
{
	struct obs_replay *r = ctx;
	struct obs_core_exchange numbered = *x;

	numbered.seq = ++r->conn.exchanges;
	r->out.exchange(r->out.ctx, &numbered);
}

void obs_replay_init(struct obs_replay *r, const struct obs_core_sink *out)
{
	memset(r, 0, sizeof(*r));
	r->out = *out;
	r->layers = (struct obs_core_sink){ number, r };
	obs_raw_init(&r->raw);
}

void obs_replay_rebind(struct obs_replay *r, const struct obs_core_sink *out)
{
	r->out = *out;
	r->layers = (struct obs_core_sink){ number, r };
}

void obs_replay_event(struct obs_replay *r, const struct obs_event *ev)
{
	if (ev->kind < sizeof(on_event) / sizeof(on_event[0]) &&
	    on_event[ev->kind] && ev->dir <= OBS_RX)
		on_event[ev->kind](r, ev);
}

void obs_replay_finish(struct obs_replay *r)
{
	http1_stop(r);
	obs_raw_finish(&r->raw, &r->layers);
	obs_tcp_finish(&r->conn);
}
