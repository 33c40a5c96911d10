/* replay.c - a connection's events through its stack (replay.h).
 *
 *   event            goes to
 *   connect, up,     tcp
 *   shutdown, close
 *   call             tcp, the call window of its direction, then the
 *                    layer of its direction's protocol: HTTP/1 or raw
 *                    (WebSocket's and HTTP/2's calls carry nothing their
 *                    layers need beyond the window)
 *   proto            the direction's protocol from here; a call that came
 *                    before it is handed to the chosen layer; HTTP/2
 *                    begins (after an h2c Upgrade: with HTTP/1's exchange
 *                    of the request that asked, as its stream 1)
 *   HTTP/1 message   http1
 *   HTTP/1 switch    the direction's protocol: WebSocket, the tunnel's
 *                    (chosen by a proto event), or raw
 *   HTTP/1 lost      raw from here, both directions; http1 gives out
 *                    what it has
 *   WebSocket        a message counted on the connection
 *   HTTP/2 stream    http2
 *   HTTP/2 lost      raw from here, the directions HTTP/2 had; http2
 *                    gives out what it has
 */
#include "replay.h"

#include <stddef.h>
#include <string.h>

#include "spool_format.h"
#include "tcp.h"

/* The stream of bytes an event is of (enum obs_stream). */
static struct obs_replay_bytes *bytes_of(struct obs_replay *r,
					 const struct obs_event *ev)
{
	return &r->bytes[ev->flags & OBS_EVF_PLAIN ? OBS_STREAM_PLAIN
						   : OBS_STREAM_SOCKET];
}

/* The windows of recent calls of stream b, [2] by direction. */
static struct obs_calls *calls_of(struct obs_replay *r,
				  const struct obs_replay_bytes *b)
{
	return r->calls[b - r->bytes];
}

static struct obs_http1_ctx http1_ctx(struct obs_replay *r)
{
	return (struct obs_http1_ctx){ .conn = &r->conn,
				       .calls = r->calls[r->http1_stream],
				       .out = &r->layers };
}

/* The connection's next exchange number (conn.exchanges is written here
 * only). */
static uint32_t next_number(void *ctx)
{
	struct obs_replay *r = ctx;

	return ++r->conn.exchanges;
}

static struct obs_http2_ctx http2_ctx(struct obs_replay *r)
{
	return (struct obs_http2_ctx){ .conn = &r->conn,
				       .calls = r->calls[r->http2_stream],
				       .out = &r->layers,
				       .number = next_number,
				       .ctx = r };
}

static void http2_stop(struct obs_replay *r)
{
	struct obs_http2_ctx cx = http2_ctx(r);

	if (r->http2_on)
		obs_http2_finish(&r->http2, &cx);
	r->http2_on = false;
}

static void http1_stop(struct obs_replay *r)
{
	struct obs_http1_ctx cx = http1_ctx(r);

	if (r->http1_on)
		obs_http1_finish(&r->http1, &cx);
	r->http1_on = false;
}

/* A call event to the layer of its direction's protocol (on its stream):
 * HTTP/1, TLS's data calls as raw runs, another protocol's as raw runs. */
static void deliver(struct obs_replay *r, const struct obs_event *ev)
{
	struct obs_replay_bytes *b = bytes_of(r, ev);
	struct obs_http1_ctx cx = http1_ctx(r);

	switch (b->app[ev->dir]) {
	case OBS_APP_H1:
		if (r->http1_on && b == &r->bytes[r->http1_stream])
			obs_http1_call(&r->http1, &cx, ev);
		return;
	case OBS_APP_TLS:
		if (obs_tls_carries(&r->tls, ev))
			obs_raw_call(&b->raw, &r->conn, &r->layers, ev);
		return;
	case OBS_APP_OTHER:
		if (!(ev->flags & OBS_EVF_IN_TLS))
			obs_raw_call(&b->raw, &r->conn, &r->layers, ev);
		return;
	default: /* not chosen yet, WebSocket, HTTP/2 (its facts) */
		return;
	}
}

static void on_tcp(struct obs_replay *r, const struct obs_event *ev)
{
	obs_tcp_event(&r->conn, ev);
}

/* HTTP/2 begins: h2 on TLS, else h2c; after an h2c Upgrade HTTP/1's
 * exchange of the request that asked is its stream 1, and HTTP/1 ends. */
static void http2_start(struct obs_replay *r, struct obs_replay_bytes *b)
{
	struct obs_http2_ctx cx = http2_ctx(r);
	struct obs_core_exchange up;
	bool upgraded = r->http1_on && obs_http1_take_h2c(&r->http1, &up);

	r->conn.app_proto =
		r->conn.flags & OBS_CCF_TLS ? OBS_AP_H2 : OBS_AP_H2C;
	http1_stop(r);
	obs_http2_init(&r->http2);
	r->http2_on = true;
	r->http2_stream = (uint8_t)(b - r->bytes);
	if (upgraded)
		obs_http2_upgraded(&r->http2, &cx, &up);
}

/* Direction dir of stream b is read as app from offset `at` on: TLS
 * starts, HTTP/2 or HTTP/1 begins; the call that moved the bytes that
 * chose it, if it came before, is handed to the chosen layer. */
static void chosen(struct obs_replay *r, struct obs_replay_bytes *b,
		   enum obs_dir dir, uint8_t app, uint64_t at)
{
	if (app == OBS_APP_TLS && dir == OBS_TX)
		obs_tls_start(&r->tls, &r->conn, &calls_of(r, b)[OBS_TX], at);
	if (app == OBS_APP_H2 && !r->http2_on)
		http2_start(r, b);
	if (app == OBS_APP_H1 && !r->http1_on) {
		obs_http1_init(&r->http1);
		r->http1_on = true;
		r->http1_set = true;
		r->http1_stream = (uint8_t)(b - r->bytes);
	}
	b->app[dir] = app;
	if (b->undelivered[dir]) {
		b->undelivered[dir] = false;
		deliver(r, obs_calls_last(&calls_of(r, b)[dir]));
	}
}

static void on_proto(struct obs_replay *r, const struct obs_event *ev)
{
	chosen(r, bytes_of(r, ev), ev->dir, ev->aux, ev->offset);
}

static void on_call(struct obs_replay *r, const struct obs_event *ev)
{
	struct obs_replay_bytes *b = bytes_of(r, ev);
	enum obs_dir dir = ev->dir;

	if (b == &r->bytes[OBS_STREAM_SOCKET]) {
		obs_tcp_event(&r->conn, ev);
		obs_tls_call(&r->tls, ev);
	}
	obs_calls_add(&calls_of(r, b)[dir], ev);
	if (ev->aux & OBS_CALL_CHOSE) { /* as a PROTO event after it would */
		uint8_t app = ev->aux & OBS_CALL_CHOSE;

		b->undelivered[dir] = false; /* this call is handed below */
		if (ev->aux & OBS_CALL_CHOSE_BOTH) { /* the sends' first */
			chosen(r, b, OBS_TX, app,
			       dir == OBS_TX ? ev->offset : 0);
			chosen(r, b, OBS_RX, app,
			       dir == OBS_RX ? ev->offset : 0);
		} else {
			chosen(r, b, dir, app, ev->offset);
		}
	}
	b->undelivered[dir] = b->app[dir] == OBS_APP_UNKNOWN;
	deliver(r, ev);
}

/* HTTP/1 is lost on stream b: the calls it was given that no exchange
 * took (up to the window kept) go to the raw runs, in their order. */
static void unclaimed_to_raw(struct obs_replay *r, struct obs_replay_bytes *b)
{
	uint32_t left[2];

	if (!r->http1_on || b != &r->bytes[r->http1_stream])
		return;
	for (int d = OBS_TX; d <= OBS_RX; d++) {
		uint32_t n = obs_http1_unclaimed(&r->http1, (enum obs_dir)d);

		left[d] = n < calls_of(r, b)[d].n ? n : calls_of(r, b)[d].n;
		if (left[d] > OBS_CALLS_KEPT)
			left[d] = OBS_CALLS_KEPT;
	}
	while (left[OBS_TX] || left[OBS_RX]) {
		const struct obs_event *tx =
			left[OBS_TX] ? obs_calls_back(&calls_of(r, b)[OBS_TX],
						      left[OBS_TX] - 1)
				     : NULL;
		const struct obs_event *rx =
			left[OBS_RX] ? obs_calls_back(&calls_of(r, b)[OBS_RX],
						      left[OBS_RX] - 1)
				     : NULL;
		const struct obs_event *next =
			!rx || (tx && tx->seq < rx->seq) ? tx : rx;

		left[next->dir]--;
		deliver(r, next);
	}
}

static void on_h1(struct obs_replay *r, const struct obs_event *ev)
{
	struct obs_http1_ctx cx = http1_ctx(r);
	struct obs_replay_bytes *b = bytes_of(r, ev);

	switch (ev->u.h1.kind) {
	case OBS_H1_HEAD:
		if (r->http1_on)
			obs_http1_message(&r->http1, &cx, ev);
		return;
	case OBS_H1_SWITCH:
		b->app[ev->dir] =
			ev->u.h1.head.sw == OBS_H1_SW_WEBSOCKET ? OBS_APP_WS
			: ev->u.h1.head.sw == OBS_H1_SW_TUNNEL ? OBS_APP_UNKNOWN
							       : OBS_APP_OTHER;
		if (b->app[OBS_TX] != OBS_APP_H1 &&
		    b->app[OBS_RX] != OBS_APP_H1)
			http1_stop(r);
		return;
	default: /* OBS_H1_LOST: both directions go on as raw runs, from
		  * the calls no exchange took */
		b->app[OBS_TX] = b->app[OBS_RX] = OBS_APP_OTHER;
		unclaimed_to_raw(r, b);
		http1_stop(r);
		return;
	}
}

static void on_ws(struct obs_replay *r, const struct obs_event *ev)
{
	r->conn.ws_messages[ev->dir]++;
}

static void on_h2(struct obs_replay *r, const struct obs_event *ev)
{
	struct obs_http2_ctx cx = http2_ctx(r);

	if (!(ev->u.h2.what & OBS_H2F_LOST)) {
		if (r->http2_on)
			obs_http2_fact(&r->http2, &cx, ev);
		return;
	}
	/* not HTTP/2 from here: what it had goes on as raw runs */
	for (int d = OBS_TX; d <= OBS_RX; d++)
		if (r->bytes[r->http2_stream].app[d] == OBS_APP_H2)
			r->bytes[r->http2_stream].app[d] = OBS_APP_OTHER;
	http2_stop(r);
}

/* The client's first data: the handshake is over, and the send that
 * carries the data (before this fact) carries an exchange too. */
static void on_tls(struct obs_replay *r, const struct obs_event *ev)
{
	const struct obs_event *send = obs_calls_holder(
		&r->calls[OBS_STREAM_SOCKET][OBS_TX], ev->offset);

	obs_tls_data(&r->tls, &r->conn, ev);
	if (send && ev->aux == OBS_TLSREC_DATA &&
	    r->bytes[OBS_STREAM_SOCKET].app[OBS_TX] == OBS_APP_TLS)
		deliver(r, send);
}

/* What each kind of event does (enum obs_ev_kind). */
static void (*const on_event[])(struct obs_replay *,
				const struct obs_event *) = {
	[OBS_EV_CONNECT] = on_tcp, [OBS_EV_UP] = on_tcp,
	[OBS_EV_CALL] = on_call,   [OBS_EV_SHUTDOWN] = on_tcp,
	[OBS_EV_CLOSE] = on_tcp,   [OBS_EV_H1] = on_h1,
	[OBS_EV_WS] = on_ws,	   [OBS_EV_PROTO] = on_proto,
	[OBS_EV_H2] = on_h2,	   [OBS_EV_TLS] = on_tls,
};

/* T5 is never before T4: a receive another thread entered before the
 * send returned says nothing of the answer; the request had left by that
 * receive's entry (by the answer's first byte, when the receive waited
 * since before T3), so T4 is no later than that. */
static void in_order(struct obs_core_exchange *x)
{
	int64_t bound;

	if (!x->t4 || !x->t5 || x->t5 >= x->t4)
		return;
	bound = x->t5 >= x->t3 ? x->t5 : x->tfb;
	if (bound && bound < x->t4 && bound >= x->t3)
		x->t4 = bound;
	if (x->t5 < x->t4)
		x->t5 = x->t4;
}

/* An exchange a layer gives out: numbered (unless its layer did), its
 * times in order, then the caller's. */
static void number(void *ctx, const struct obs_core_exchange *x)
{
	struct obs_replay *r = ctx;
	struct obs_core_exchange numbered = *x;

	in_order(&numbered);
	if (numbered.seq == 0) /* not numbered by its layer (HTTP/2's are) */
		numbered.seq = next_number(r);
	r->out.exchange(r->out.ctx, &numbered);
}

void obs_replay_init(struct obs_replay *r, const struct obs_core_sink *out)
{
	/* the big parts are set as used (replay.h) */
	memset(r, 0, offsetof(struct obs_replay, calls));
	for (int k = 0; k < 2; k++)
		for (int d = 0; d < 2; d++)
			obs_calls_init(&r->calls[k][d]);
	r->out = *out;
	r->layers = (struct obs_core_sink){ number, r };
	obs_raw_init(&r->bytes[OBS_STREAM_SOCKET].raw);
	obs_raw_init(&r->bytes[OBS_STREAM_PLAIN].raw);
	obs_tls_init(&r->tls);
}

void obs_replay_tidy(struct obs_replay *r)
{
	for (int k = 0; k < 2; k++)
		for (int d = 0; d < 2; d++)
			obs_calls_tidy(&r->calls[k][d]);
	if (r->http1_set)
		obs_http1_tidy(&r->http1);
	else
		memset(&r->http1, 0, sizeof(r->http1));
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
	struct obs_raw *records = &r->bytes[OBS_STREAM_SOCKET].raw;

	http1_stop(r);
	http2_stop(r);
	if (obs_tls_closing_alert(&r->tls, obs_raw_pending(records),
				  r->conn.exchanges))
		obs_raw_drop(records);
	obs_raw_finish(records, &r->layers);
	obs_raw_finish(&r->bytes[OBS_STREAM_PLAIN].raw, &r->layers);
	obs_tcp_finish(&r->conn);
}
