/* capture.c - calls into events, bytes into facts (see capture.h and
 * event.h for the rules). */
#include "capture.h"

#include <errno.h>
#include <string.h>

static void send_hint(struct obs_capture *c);
static void plain_call(struct obs_capture *c, const struct obs_call *call);
static void h1_fact(void *ctx, const struct obs_h1_fact *f);

/* Whether events of this kind are of a stream of bytes (and say which:
 * OBS_EVF_PLAIN). */
static bool of_a_stream(uint8_t kind)
{
	return kind == OBS_EV_CALL || kind == OBS_EV_H1 || kind == OBS_EV_WS ||
	       kind == OBS_EV_PROTO || kind == OBS_EV_H2;
}

/* A new event, numbered; one of the plaintext's is marked so. */
static void msg_flush(struct obs_capture *c);

static uint64_t put(struct obs_capture *c, struct obs_event *ev, bool final)
{
	if (c->msg_held[OBS_TX] || c->msg_held[OBS_RX])
		msg_flush(c); /* written first: it came first */
	ev->seq = ++c->events;
	if (c->s == &c->bytes[OBS_STREAM_PLAIN] && of_a_stream(ev->kind))
		ev->flags |= OBS_EVF_PLAIN;
	return c->sink->put(c->sink->ctx, ev, final);
}

/* The index of handle h among the events kept open, or -1. */
static int pend_find(const struct obs_capture *c, uint64_t h)
{
	for (int i = 0; i < c->n_pend; i++)
		if (c->dec_mem->pend[i].handle == h)
			return i;
	return -1;
}

/* Socket call event ev, handle h, kept open while the secrets are awaited
 * (final: it was to be final); false when there is no room. */
static bool pend_keep(struct obs_capture *c, uint64_t h,
		      const struct obs_event *ev, bool final)
{
	int i = pend_find(c, h);
	struct obs_cap_pend *p;

	if (i < 0) {
		if (c->n_pend == OBS_CAP_PEND_MAX || c->dec_mem == NULL)
			return false;
		i = c->n_pend++;
		c->dec_mem->pend[i].handle = h;
		c->dec_mem->pend[i].final = false;
	}
	p = &c->dec_mem->pend[i];
	memcpy(p->head, ev, sizeof(p->head));
	p->final |= final;
	return true;
}

/* The sink's update and seal, an event kept open staying open. */
static void sink_update(struct obs_capture *c, uint64_t h,
			const struct obs_event *ev, bool final)
{
	bool kept = pend_find(c, h) >= 0 && pend_keep(c, h, ev, final);

	c->sink->update(c->sink->ctx, h, ev, final && !kept);
}

static void sink_seal(struct obs_capture *c, uint64_t h)
{
	int i = pend_find(c, h);

	if (i >= 0)
		c->dec_mem->pend[i].final = true;
	else
		c->sink->seal(c->sink->ctx, h);
}

/* The secrets came (keyed: the events kept open are marked
 * OBS_EVF_IN_TLS), or will not: each written final if it was to be. */
static void pend_resolve(struct obs_capture *c, bool keyed)
{
	struct obs_cap_bytes *b = &c->bytes[OBS_STREAM_SOCKET];

	for (int i = 0; i < c->n_pend; i++) {
		struct obs_cap_pend *p = &c->dec_mem->pend[i];
		struct obs_event ev = { 0 };

		memcpy(&ev, p->head, sizeof(p->head));
		if (keyed) {
			ev.flags |= OBS_EVF_IN_TLS;
			c->sink->update(c->sink->ctx, p->handle, &ev, p->final);
		} else if (p->final) {
			c->sink->seal(c->sink->ctx, p->handle);
		}
		if (keyed && b->last_open && b->last_handle == p->handle)
			b->last.flags |= OBS_EVF_IN_TLS;
		if (keyed && b->entry_open && b->entry_handle == p->handle)
			b->entry.flags |= OBS_EVF_IN_TLS;
	}
	c->n_pend = 0;
}

/* No more calls merge into stream b's last call event. */
static void close_last(struct obs_capture *c, struct obs_cap_bytes *b)
{
	if (b->last_open)
		sink_seal(c, b->last_handle);
	b->last_open = false;
	send_hint(c);
}

/* ... nor into either stream's. */
static void close_both(struct obs_capture *c)
{
	close_last(c, &c->bytes[OBS_STREAM_SOCKET]);
	close_last(c, &c->bytes[OBS_STREAM_PLAIN]);
}

/* Direction dir's bytes are read as app from offset `at` on (and the
 * other direction's, from its base, when both: a level's first bytes
 * choose for both). The call being fed says so itself when its first byte
 * is that offset (its aux, OBS_CALL_CHOSE; the capture writes it again
 * at its end), else an event of its own says it. */
static void choose(struct obs_capture *c, enum obs_dir dir, uint8_t app,
		   uint64_t at, bool both)
{
	struct obs_cap_bytes *b = c->s;
	enum obs_dir other = dir == OBS_TX ? OBS_RX : OBS_TX;
	struct obs_event *call = c->feeding;
	struct obs_event ev = {
		.kind = OBS_EV_PROTO,
		.dir = (uint8_t)dir,
		.aux = app,
		.offset = at,
		.u.proto.level = b->level[dir],
	};

	b->app[dir] = app;
	b->base[dir] = at;
	if (call && call->dir == dir && call->offset == at && !call->aux) {
		call->aux = (uint8_t)(app | (both ? OBS_CALL_CHOSE_BOTH : 0));
		if (both) {
			b->app[other] = app; /* from its base */
		}
		return;
	}
	if (both) { /* the sends' first: a replay hands a send in flight to
		     * their layer before the answer that came back first */
		struct obs_event tx = ev, rx = ev;

		b->app[other] = app;
		tx.dir = OBS_TX;
		tx.offset = b->base[OBS_TX];
		tx.u.proto.level = b->level[OBS_TX];
		rx.dir = OBS_RX;
		rx.offset = b->base[OBS_RX];
		rx.u.proto.level = b->level[OBS_RX];
		put(c, &tx, true);
		put(c, &rx, true);
		return;
	}
	put(c, &ev, true);
}

/* HTTP/2 begins: the follower runs from here (upgrade: after the 101 of
 * an h2c Upgrade, its stream 1 the request that asked). False when there
 * is no memory for it, or it ran already on this connection. */
static bool h2_start(struct obs_capture *c, bool upgrade)
{
	if (c->h2 == NULL || c->h2_on)
		return false;
	obs_h2_init(c->h2, c->hpack);
	if (upgrade)
		obs_h2_upgrade(c->h2, false);
	c->h2_on = true;
	c->h2_stream = (uint8_t)(c->s - c->bytes);
	return true;
}

/* The protocol of the bytes a program sends first on a level, p[0..n):
 * a TLS record (its ClientHello; on the socket: plaintext is no TLS), the
 * HTTP/2 client preface, or HTTP/1 (which then says whether it is). */
static uint8_t app_of(struct obs_capture *c, const uint8_t *p, size_t n)
{
	if (p[0] == 22 && c->s == &c->bytes[OBS_STREAM_SOCKET]) {
		obs_tlsrec_init(&c->tls);
		if (c->dec_allowed && c->s->level[OBS_TX] == 0 &&
		    c->s->pos[OBS_TX] == 0) {
			obs_tlsdec_init(&c->dec);
			c->dec_on = true;
		}
		return OBS_APP_TLS;
	}
	if (obs_h2_preface(p, n))
		return h2_start(c, false) ? OBS_APP_H2 : OBS_APP_OTHER;
	return OBS_APP_H1;
}

/* The protocol of the bytes a server sends first on a level, p[0..n): of
 * its own, unless the program's send is in flight (its entry written,
 * its bytes not seen yet: another thread received the answer first), when
 * an HTTP/1 response or a TLS record says what the program spoke. */
static uint8_t app_of_answer(const struct obs_capture *c, const uint8_t *p,
			     size_t n)
{
	if (c->s != &c->bytes[OBS_STREAM_SOCKET] || !c->s->entry_open)
		return OBS_APP_OTHER;
	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0)
		return OBS_APP_H1;
	return p[0] == 22 ? OBS_APP_TLS : OBS_APP_OTHER;
}

/* The protocol the plaintext's ALPN chose, on the plaintext's first level
 * (HTTP/2 when there is memory for it), or OBS_APP_UNKNOWN. */
static uint8_t alpn_of(struct obs_capture *c)
{
	if (c->s != &c->bytes[OBS_STREAM_PLAIN] || c->s->level[OBS_TX] ||
	    c->s->app[OBS_TX] != OBS_APP_UNKNOWN ||
	    c->plain_alpn == OBS_APP_UNKNOWN)
		return OBS_APP_UNKNOWN;
	if (c->plain_alpn == OBS_APP_H2)
		return h2_start(c, false) ? OBS_APP_H2 : OBS_APP_OTHER;
	return c->plain_alpn;
}

/* The first bytes of a level, p[0..n), choose its protocol (app_of) when
 * the program sends them; a server that speaks first speaks another
 * protocol. The other direction, on the same level and not chosen yet,
 * follows. */
static void choose_first(struct obs_capture *c, enum obs_dir dir,
			 const uint8_t *p, size_t n, uint64_t at)
{
	enum obs_dir other = dir == OBS_TX ? OBS_RX : OBS_TX;
	bool paired = c->s->level[other] == c->s->level[dir];
	uint8_t alpn = paired ? alpn_of(c) : OBS_APP_UNKNOWN;
	uint8_t app;

	app = paired && c->s->app[other] != OBS_APP_UNKNOWN ? c->s->app[other]
	      : alpn != OBS_APP_UNKNOWN			    ? alpn
	      : dir == OBS_RX ? app_of_answer(c, p, n)
			      : app_of(c, p, n);

	/* one framer: while it still reads the other direction below (a
	 * CONNECT's bytes sent before its answer), the tunnel's HTTP/1 is
	 * not followed */
	if (app == OBS_APP_H1 && !paired && c->s->app[other] == OBS_APP_H1)
		app = OBS_APP_OTHER;
	if (app == OBS_APP_H1 && !(paired && c->s->app[other] == OBS_APP_H1))
		obs_h1_init(&c->h1, h1_fact, c);
	choose(c, dir, app, at, paired && c->s->app[other] == OBS_APP_UNKNOWN);
}

/* A request's fact m says its labels once: the same host and path as the
 * request written before it are not written again. */
static void labels_once(struct obs_capture *c, struct obs_event *m)
{
	struct obs_h1_head *head = &m->u.h1.head;

	if (m->dir != OBS_TX || !(head->host[0] || head->path[0]))
		return;
	if (memcmp(head->host, c->last_host, sizeof(c->last_host)) == 0 &&
	    memcmp(head->path, c->last_path, sizeof(c->last_path)) == 0) {
		head->flags |= OBS_EVH1F_LABELS_AGAIN;
		memset(head->host, 0, sizeof(head->host));
		memset(head->path, 0, sizeof(head->path));
		return;
	}
	memcpy(c->last_host, head->host, sizeof(c->last_host));
	memcpy(c->last_path, head->path, sizeof(c->last_path));
}

/* The messages whose facts were held back (msg_held): written, final
 * when their end came already. */
static void msg_flush(struct obs_capture *c)
{
	for (int dir = OBS_TX; dir <= OBS_RX; dir++) {
		struct obs_event *m = &c->msg[dir];

		if (!c->msg_held[dir])
			continue;
		c->msg_held[dir] = false;
		c->msg_handle[dir] = put(c, m, m->u.h1.ended);
		c->msg_open[dir] = !m->u.h1.ended;
	}
}

/* Direction dir's message m begins anew from fact f (its head so far). */
static void msg_begin(struct obs_event *m, const struct obs_h1_fact *f,
		      uint64_t base)
{
	*m = (struct obs_event){
		.kind = OBS_EV_H1,
		.dir = f->dir,
		.offset = base + f->offset,
		.u.h1 = { .kind = OBS_H1_HEAD,
			  .begin = base + f->begin,
			  .head = *f->head },
	};
}

static void h1_fact(void *ctx, const struct obs_h1_fact *f)
{
	struct obs_capture *c = ctx;
	enum obs_dir dir = f->dir;
	uint64_t base = c->s->base[dir];
	struct obs_event *m = &c->msg[dir];

	switch (f->kind) {
	case OBS_H1_HEAD:
		if (dir == OBS_TX && f->head->sw == OBS_H1_SW_H2C) {
			c->h2c_asked = true;
			c->h2c_stream = (uint8_t)(c->s - c->bytes);
		} else if (dir == OBS_RX && !(f->head->flags & OBS_H1F_INTERIM))
			c->h2c_asked = false; /* answered, the 101 too */
		msg_flush(c);
		if (c->msg_open[dir]) /* one that never ended: final as is */
			sink_seal(c, c->msg_handle[dir]);
		c->msg_open[dir] = false;
		msg_begin(m, f, base);
		labels_once(c, m);
		if (c->feeding) { /* written when the call's feed is over */
			c->msg_held[dir] = true;
			return;
		}
		c->msg_handle[dir] = put(c, m, false);
		c->msg_open[dir] = true;
		return;
	case OBS_H1_END:
		if (c->msg_held[dir] && m->u.h1.begin == base + f->begin) {
			m->u.h1.ended = true; /* written once, final */
			m->u.h1.end = base + f->offset;
			m->u.h1.head.flags |=
				f->head->flags & OBS_H1F_CUT_SHORT;
			c->edge = true;
			return;
		}
		msg_flush(c);
		if (!c->msg_open[dir] || m->u.h1.begin != base + f->begin) {
			/* cut short before its head was complete */
			msg_begin(m, f, base);
			m->u.h1.ended = true;
			m->u.h1.end = base + f->offset;
			labels_once(c, m);
			put(c, m, true);
		} else {
			m->u.h1.ended = true;
			m->u.h1.end = base + f->offset;
			m->u.h1.head.flags |=
				f->head->flags & OBS_H1F_CUT_SHORT;
			sink_update(c, c->msg_handle[dir], m, true);
		}
		c->msg_open[dir] = false;
		c->edge = true;
		return;
	case OBS_H1_SWITCH: {
		struct obs_event ev = {
			.kind = OBS_EV_H1,
			.dir = (uint8_t)dir,
			.offset = base + f->offset,
			.u.h1 = { .kind = OBS_H1_SWITCH, .head.sw = f->sw },
		};

		put(c, &ev, true);
		c->edge = true;
		c->s->base[dir] = ev.offset;
		if (f->sw == OBS_H1_SW_TUNNEL) {
			enum obs_dir other = dir == OBS_TX ? OBS_RX : OBS_TX;

			c->s->level[dir]++;
			c->s->app[dir] = OBS_APP_UNKNOWN;
			if (c->s->level[other] == c->s->level[dir] &&
			    c->s->app[other] != OBS_APP_UNKNOWN)
				choose(c, dir, c->s->app[other], ev.offset,
				       false);
		} else if (f->sw == OBS_H1_SW_WEBSOCKET) {
			c->s->app[dir] = OBS_APP_WS;
			obs_ws_init(&c->ws[dir]);
		} else if (f->sw == OBS_H1_SW_H2C &&
			   (dir == OBS_RX ? h2_start(c, true)
					  : c->s->app[OBS_RX] == OBS_APP_H2)) {
			choose(c, dir, OBS_APP_H2, ev.offset, false);
		} else {
			c->s->app[dir] = OBS_APP_OTHER;
		}
		if (dir == c->feeding_dir) {
			c->switched = true;
			c->switch_at = ev.offset;
		}
		return;
	}
	default: { /* OBS_H1_LOST: for both directions, an exchange needs
		    * both */
		struct obs_event ev = {
			.kind = OBS_EV_H1,
			.dir = (uint8_t)dir,
			.offset = base + f->offset,
			.u.h1 = { .kind = OBS_H1_LOST, .reason = f->reason },
		};

		put(c, &ev, true);
		c->edge = true;
		c->s->app[OBS_TX] = c->s->app[OBS_RX] = OBS_APP_OTHER;
		return;
	}
	}
}

static void ws_message(void *ctx, uint8_t opcode, uint64_t size, uint64_t end)
{
	struct obs_capture *c = ctx;
	struct obs_event ev = {
		.kind = OBS_EV_WS,
		.dir = c->feeding_dir,
		.offset = c->s->base[c->feeding_dir] + end,
		.u.ws = { .opcode = opcode, .size = size },
	};

	put(c, &ev, true);
	c->edge = true;
}

/* The client's Finished or first data begins at offset `at` of the TLS
 * records (tlsrec.h). */
static void tls_data(void *ctx, uint8_t what, uint64_t at, uint16_t version)
{
	struct obs_capture *c = ctx;
	struct obs_event ev = {
		.kind = OBS_EV_TLS,
		.dir = OBS_TX,
		.aux = what,
		.offset = c->s->base[OBS_TX] + at,
		.u.tls.version = version,
	};

	put(c, &ev, true);
	c->edge = true;
}

/* ---- HTTP/2 ---- */

/* The facts being gathered are written: one event. */
static void h2_flush(struct obs_capture *c)
{
	if (!c->h2_pending)
		return;
	c->h2_pending = false;
	put(c, &c->h2_fact, true);
	c->edge = true;
}

/* The fact bit of each follower event that is one (h2.h), in the
 * direction it is said for. */
static const uint8_t h2_bit[] = {
	[OBS_H2_EV_OPEN] = OBS_H2F_OPEN,
	[OBS_H2_EV_REQUEST] = OBS_H2F_REQUEST,
	[OBS_H2_EV_FIRST] = OBS_H2F_FIRST,
	[OBS_H2_EV_STATUS] = OBS_H2F_STATUS,
	[OBS_H2_EV_END] = OBS_H2F_END,
	[OBS_H2_EV_RESET] = OBS_H2F_RESET,
	[OBS_H2_EV_CLOSE] = OBS_H2F_CLOSE,
	[OBS_H2_EV_LOST] = OBS_H2F_LOST,
};

/* HTTP/2 ends on this connection at dir's offset `at` (code: why): both
 * directions of its level are another protocol from here. */
static void h2_lost(struct obs_capture *c, enum obs_dir dir, uint64_t at,
		    uint32_t code)
{
	struct obs_event ev = {
		.kind = OBS_EV_H2,
		.dir = (uint8_t)dir,
		.offset = at,
		.u.h2 = { .what = OBS_H2F_LOST, .code = code },
	};

	h2_flush(c);
	put(c, &ev, true);
	c->edge = true;
	for (int d = OBS_TX; d <= OBS_RX; d++)
		if (c->s->app[d] == OBS_APP_H2)
			c->s->app[d] = OBS_APP_OTHER;
}

/* A follower event: its fact joins the stream's being gathered, or
 * begins the next. Bytes are not facts: CLOSE says a stream's. */
static void h2_event(void *ctx, const struct obs_h2_ev *e)
{
	struct obs_capture *c = ctx;
	struct obs_event *f = &c->h2_fact;
	struct obs_ev_h2 *h;
	uint64_t at = c->s->base[e->dir] + e->at;
	uint8_t bit = e->kind < sizeof(h2_bit) ? h2_bit[e->kind] : 0;

	if (bit == 0 || (bit == OBS_H2F_REQUEST && e->req == NULL))
		return; /* BYTES, GOAWAY, UNTRACKED, NOLABELS; no labels */
	if (bit == OBS_H2F_LOST) {
		h2_lost(c, e->dir, at, e->code);
		return;
	}
	if (c->h2_pending && (f->u.h2.stream != e->stream || f->dir != e->dir ||
			      (f->u.h2.what & bit)))
		h2_flush(c);
	if (!c->h2_pending) {
		*f = (struct obs_event){ .kind = OBS_EV_H2, .dir = e->dir };
		f->u.h2.stream = e->stream;
		c->h2_pending = true;
	}
	h = &f->u.h2;
	f->offset = at;
	h->what |= bit;
	switch (e->kind) {
	case OBS_H2_EV_OPEN: /* one past the frame's header */
		h->begin = at - 9;
		break;
	case OBS_H2_EV_FIRST: /* the header's last byte */
		h->begin = at - 1;
		break;
	case OBS_H2_EV_REQUEST: /* its labels once (not decoded: none) */
		memcpy(h->method, e->req->method, sizeof(h->method));
		h->label_flags = e->req->flags;
		if (e->again) {
			h->label_flags |= OBS_H2L_AGAIN;
			break;
		}
		memcpy(h->host, e->req->host, sizeof(h->host));
		memcpy(h->path, e->req->path, sizeof(h->path));
		break;
	case OBS_H2_EV_STATUS:
		h->status = e->status;
		break;
	case OBS_H2_EV_RESET:
		h->code = e->code;
		break;
	case OBS_H2_EV_CLOSE:
		for (int d = 0; d < 2; d++) {
			h->bytes[d] = e->total[d];
			h->calls[d] = e->calls[d];
		}
		break;
	default:
		break;
	}
}

/* The follower stops (the connection ends, or bytes it cannot see):
 * its streams close, said. */
static void h2_end(struct obs_capture *c)
{
	if (!c->h2_on)
		return;
	c->s = &c->bytes[c->h2_stream];
	obs_h2_end(c->h2, h2_event, c);
	h2_flush(c);
}

/* Direction dir's bytes p[0..n), which begin at offset at, to the
 * follower of their protocol; on past a switch to the next one. */
static void follow(struct obs_capture *c, enum obs_dir dir, const uint8_t *p,
		   size_t n, uint64_t at)
{
	c->feeding_dir = (uint8_t)dir;
	while (n) {
		switch (c->s->app[dir]) {
		case OBS_APP_UNKNOWN:
			choose_first(c, dir, p, n, at);
			continue;
		case OBS_APP_H1: {
			size_t k;

			c->switched = false;
			obs_h1_feed(&c->h1, dir, p, n);
			if (!c->switched)
				return;
			k = (size_t)(c->switch_at - at);
			p += k;
			n -= k;
			at += k;
			continue;
		}
		case OBS_APP_WS:
			obs_ws_feed(&c->ws[dir], p, n, ws_message, c);
			return;
		case OBS_APP_H2:
			obs_h2_feed(c->h2, (enum obs_h2_dir)dir, p, n, h2_event,
				    c);
			return;
		case OBS_APP_TLS: /* the client's records, to its first data */
			if (dir == OBS_TX)
				obs_tlsrec_feed(&c->tls, p, n, tls_data, c);
			return;
		default: /* another protocol: nothing read */
			return;
		}
	}
}

/* The first bytes of a call (n 0: none to look at). */
static const uint8_t *call_bytes(const struct obs_call *call, size_t *n)
{
	*n = 0;
	for (int i = 0; call->iov && i < call->iovcnt; i++)
		if (call->iov[i].iov_len) {
			*n = call->iov[i].iov_len < (size_t)call->result
				     ? call->iov[i].iov_len
				     : (size_t)call->result;
			return call->iov[i].iov_base;
		}
	return NULL;
}

/* Whether the call's bytes (direction dir) would begin a message: for
 * HTTP/2, a HEADERS frame the program sends (a stream may open). */
static bool boundary_due(const struct obs_capture *c,
			 const struct obs_cap_bytes *b, enum obs_dir dir);

static bool at_boundary(const struct obs_capture *c, enum obs_dir dir,
			const struct obs_call *call)
{
	size_t n;
	const uint8_t *p;

	if (c->s->app[dir] == OBS_APP_H2) {
		p = call_bytes(call, &n);
		return dir == OBS_TX && p &&
		       obs_h2_begins_headers(c->h2, OBS_H2_TX, p, n);
	}
	return boundary_due(c, c->s, dir);
}

/* ... as far as the state says, without a call's bytes (HTTP/2's edges
 * are in them: not said here). */
static bool boundary_due(const struct obs_capture *c,
			 const struct obs_cap_bytes *b, enum obs_dir dir)
{
	switch (b->app[dir]) {
	case OBS_APP_UNKNOWN:
		return true;
	case OBS_APP_H1:
		return obs_h1_at_boundary(&c->h1, dir);
	case OBS_APP_WS:
		return obs_ws_at_boundary(&c->ws[dir]);
	case OBS_APP_TLS: /* each send of the handshake an event */
		return dir == OBS_TX && obs_tlsrec_following(&c->tls);
	default:
		return false;
	}
}

/* The hint for the caller (obs_cap_send_opens). */
static void send_hint(struct obs_capture *c)
{
	const struct obs_cap_bytes *b = &c->bytes[OBS_STREAM_SOCKET];
	bool sending = b->last_open && b->last.kind == OBS_EV_CALL &&
		       b->last.dir == OBS_TX;
	uint8_t opens =
		!b->entry_open && (!sending || boundary_due(c, b, OBS_TX));

	if (opens != __atomic_load_n(&c->send_opens, __ATOMIC_RELAXED))
		__atomic_store_n(&c->send_opens, opens, __ATOMIC_RELAXED);
}

/* The hint for the caller (obs_cap_h2_wanted): memory for HTTP/2 may be
 * used by the next send of a stream (its level's first bytes are due) or
 * receive (the answer to an h2c Upgrade), and there is none. */
static void h2_want(struct obs_capture *c)
{
	uint8_t want = 0;

	if (c->h2 == NULL && !c->h2_on) {
		for (int k = OBS_STREAM_SOCKET; k <= OBS_STREAM_PLAIN; k++)
			if (c->bytes[k].app[OBS_TX] == OBS_APP_UNKNOWN)
				want |= (uint8_t)(1u << (2 * k + OBS_TX));
		if (c->h2c_asked)
			want |= (uint8_t)(1u << (2 * c->h2c_stream + OBS_RX));
	}
	if (want != __atomic_load_n(&c->h2_want, __ATOMIC_RELAXED))
		__atomic_store_n(&c->h2_want, want, __ATOMIC_RELAXED);
}

void obs_cap_init(struct obs_capture *c, const struct obs_sink *sink)
{
	memset(c, 0, sizeof(*c)); /* (the framer is made ready when a level's
				   * first bytes choose HTTP/1) */
	c->sink = sink;
	c->s = &c->bytes[OBS_STREAM_SOCKET];
	h2_want(c);
	send_hint(c);
}

bool obs_cap_h2_offer(struct obs_capture *c, struct obs_h2 *mem,
		      const struct obs_hpack *hpack)
{
	if (c->h2)
		return false;
	c->h2 = mem;
	c->hpack = hpack;
	h2_want(c);
	return true;
}

struct obs_h2 *obs_cap_h2_reclaim(struct obs_capture *c)
{
	struct obs_h2 *mem = c->h2;

	c->h2 = NULL;
	c->hpack = NULL;
	return mem;
}

void obs_cap_connect(struct obs_capture *c, int64_t t_in, int64_t t_out,
		     int err, bool syn_data)
{
	struct obs_event ev = {
		.kind = OBS_EV_CONNECT,
		.aux = syn_data ? OBS_CONNECT_SYN_DATA : 0,
		.err = err,
		.calls = 1,
		.t_in = t_in,
		.t_out = t_out,
	};

	close_both(c);
	c->up_known = err != EINPROGRESS && !(err == 0 && syn_data);
	c->syn_data = syn_data;
	put(c, &ev, true);
}

void obs_cap_up(struct obs_capture *c, int64_t t, uint8_t how, int err)
{
	struct obs_event ev = {
		.kind = OBS_EV_UP,
		.aux = how,
		.err = err,
		.t_in = t,
		.t_out = t,
	};

	if (c->up_known)
		return;
	c->up_known = true;
	close_both(c);
	put(c, &ev, true);
}

/* Bytes of direction dir moved that cannot be read: its follower gives
 * up (HTTP/1 for both directions, as at any loss). */
static void unseen(struct obs_capture *c, enum obs_dir dir)
{
	struct obs_event ev = {
		.kind = OBS_EV_H1,
		.dir = (uint8_t)dir,
		.offset = c->s->pos[dir],
		.u.h1 = { .kind = OBS_H1_LOST, .reason = OBS_H1_UNSEEN },
	};

	if (c->s->app[dir] == OBS_APP_H1) {
		put(c, &ev, true);
		c->s->app[OBS_TX] = c->s->app[OBS_RX] = OBS_APP_OTHER;
		c->edge = true;
	} else if (c->s->app[dir] == OBS_APP_H2) {
		h2_end(c);
		h2_lost(c, dir, c->s->pos[dir], OBS_H2_LOST_UNSEEN);
	} else if (c->s->app[dir] != OBS_APP_OTHER) {
		c->s->app[dir] = OBS_APP_OTHER;
	}
}

static bool is_transient(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR ||
	       err == ENOBUFS;
}

/* How many of direction dir's next bytes on stream b its follower does
 * not read (SIZE_MAX: none of them). */
static size_t unread(const struct obs_capture *c,
		     const struct obs_cap_bytes *b, enum obs_dir dir)
{
	switch (b->app[dir]) {
	case OBS_APP_UNKNOWN: /* they choose */
	case OBS_APP_TLS:
		return 0;
	case OBS_APP_WS:
		return obs_ws_unread(&c->ws[dir]);
	case OBS_APP_H1:
		return obs_h1_unread(&c->h1, dir);
	case OBS_APP_H2:
		return obs_h2_unread(c->h2, (enum obs_h2_dir)dir);
	default: /* another protocol: nothing read */
		return SIZE_MAX;
	}
}

/* Direction dir's next n bytes, which its follower said it does not read
 * (unread), pass without being seen. */
static void pass(struct obs_capture *c, enum obs_dir dir, size_t n)
{
	c->feeding_dir = (uint8_t)dir;
	switch (c->s->app[dir]) {
	case OBS_APP_H1:
		obs_h1_pass(&c->h1, dir, n);
		break;
	case OBS_APP_H2:
		obs_h2_pass(c->h2, (enum obs_h2_dir)dir, n, h2_event, c);
		break;
	case OBS_APP_WS:
		obs_ws_pass(&c->ws[dir], n, ws_message, c);
		break;
	default:
		break;
	}
}

/* Feed the first n bytes of the call to the followers of direction dir
 * (or pass them, unread). */
static void feed(struct obs_capture *c, const struct obs_call *call,
		 size_t n)
{
	enum obs_dir dir = call->dir;
	const struct iovec *iov = call->iov;
	int iovcnt = call->iovcnt;
	uint64_t at = c->s->pos[dir];

	if (c->h2_on)
		obs_h2_call(c->h2);
	if (call->unread) {
		pass(c, dir, n);
		return;
	}
	for (int i = 0; i < iovcnt && n; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		if (k == 0)
			continue;
		follow(c, dir, iov[i].iov_base, k, at);
		at += k;
		n -= k;
	}
}

/* Whether the socket's calls carry records whose plaintext is fed: the
 * decryptor runs, with memory (offered after the ServerHello, so from
 * before the client's Finished, which may share a send with its first
 * data). */
static bool dec_marks(const struct obs_capture *c)
{
	return c->dec_on && c->dec.mem && obs_tlsdec_on(&c->dec);
}

/* ... and awaits its secrets: the socket's calls are written open and
 * unmarked until they come (obs_capture's pend). */
static bool dec_awaits(const struct obs_capture *c)
{
	uint8_t random[32];
	size_t len;

	return dec_marks(c) && obs_tlsdec_wants_keys(&c->dec, random, &len);
}

static void dec_stop(struct obs_capture *c);

/* A call on stream b (the socket's or the plaintext's): merged into the
 * stream's last event, or an event of its own, written now or, for a send
 * whose entry was written (obs_cap_send_entry), completed. */
static void call_on(struct obs_capture *c, struct obs_cap_bytes *b,
		    const struct obs_call *call)
{
	enum obs_dir dir = call->dir;
	bool failed = call->result < 0 && !is_transient(call->err);
	bool own = failed || call->eof;
	size_t n = call->result > 0 && !call->peek ? (size_t)call->result : 0;
	bool socket = b == &c->bytes[OBS_STREAM_SOCKET];
	bool pend = socket && dec_awaits(c);
	uint8_t in_tls;
	struct obs_event *ev = &b->last;
	struct obs_event fresh = {
		.kind = OBS_EV_CALL,
		.dir = (uint8_t)dir,
		.flags =
			(uint8_t)((call->eof ? OBS_EVF_EOF : 0) |
				  (call->peek && call->result > 0 ? OBS_EVF_PEEK
								  : 0)),
		.err = failed ? call->err : 0,
		.calls = 1,
		.first_bytes = (uint32_t)n,
		.t_in = call->t_in,
		.t_data = n ? call->t_out : 0,
		.t_out = call->t_out,
		.offset = b->pos[dir],
		.bytes = n,
	};
	bool entry, merge;
	/* an entry written before others' events: completed apart */
	bool apart;
	uint64_t handle;
	uint8_t chose_before;

	c->s = b;
	if (pend && c->n_pend == OBS_CAP_PEND_MAX) {
		dec_stop(c); /* too long without its secrets: runs of records */
		pend = false;
	}
	if (pend && b->last_open && pend_find(c, b->last_handle) < 0)
		close_last(c, b); /* written before: never marked */
	in_tls = call->in_tls || (socket && dec_marks(c) && !pend)
			 ? OBS_EVF_IN_TLS
			 : 0;
	fresh.flags |= in_tls;
	entry = call->entry && b->entry_open && dir == OBS_TX;
	merge = !entry && b->last_open && ev->kind == OBS_EV_CALL &&
		ev->dir == dir && (ev->flags & OBS_EVF_IN_TLS) == in_tls &&
		!own && !(n && ev->bytes && at_boundary(c, dir, call));
	apart = entry && c->events != b->entry.seq;
	if (merge) {
		ev->calls++;
		if (n && !ev->bytes) {
			ev->t_data = call->t_out;
			ev->first_bytes = (uint32_t)n;
		}
		if (n || !ev->bytes)
			ev->t_out = call->t_out;
		ev->bytes += n;
		ev->flags |= fresh.flags & OBS_EVF_PEEK;
		handle = b->last_handle;
	} else if (entry) { /* entered when its entry was written */
		fresh.seq = b->entry.seq;
		fresh.t_in = b->entry.t_in;
		handle = b->entry_handle;
		b->entry_open = false;
		if (apart) {
			b->entry = fresh;
			ev = &b->entry;
		} else { /* as if written now */
			*ev = fresh;
			b->last_handle = handle;
			b->last_open = !own;
		}
	} else {
		close_last(c, b);
		*ev = fresh;
		handle = b->last_handle = put(c, ev, own && !pend);
		b->last_open = !own;
	}
	if (pend) /* (room was made above) */
		(void)pend_keep(c, handle, ev, !merge && !entry && own);
	c->edge = false;
	chose_before = ev->aux;
	c->feeding = ev; /* its first byte may choose the protocol */
	if (n && (call->iov || call->unread))
		feed(c, call, n);
	else if (n)
		unseen(c, dir);
	c->feeding = NULL;
	msg_flush(c);
	h2_flush(c);
	b->pos[dir] += n;
	if (merge || entry || ev->aux != chose_before)
		sink_update(c, handle, ev, c->edge || own || apart);
	else if (c->edge)
		close_last(c, b);
	if (c->edge && !apart)
		b->last_open = false;
	if (call->eof && b->app[OBS_RX] == OBS_APP_H1) {
		c->feeding_dir = OBS_RX;
		obs_h1_eof(&c->h1, OBS_RX);
	}
	h2_want(c);
	send_hint(c);
}

bool obs_cap_send_entry(struct obs_capture *c, int64_t t_in)
{
	struct obs_cap_bytes *b = &c->bytes[OBS_STREAM_SOCKET];

	if (b->entry_open)
		return false;
	c->s = b;
	close_last(c, b);
	b->entry = (struct obs_event){
		.kind = OBS_EV_CALL,
		.dir = OBS_TX,
		.t_in = t_in,
		.offset = b->pos[OBS_TX],
	};
	b->entry_handle = put(c, &b->entry, false);
	b->entry_open = true;
	send_hint(c);
	return true;
}

/* ---- TLS decrypted ---- */

/* The hint for the layer (obs_cap_dec_wanted). */
static void dec_hint(struct obs_capture *c)
{
	uint8_t random[32], want = 0;
	size_t len;

	if (c->dec_on && obs_tlsdec_wants_mem(&c->dec))
		want |= OBS_CAP_DEC_MEM;
	if (c->dec_on && c->dec.mem &&
	    obs_tlsdec_wants_keys(&c->dec, random, &len))
		want |= OBS_CAP_DEC_KEYS;
	if (dec_marks(c))
		want |= OBS_CAP_DEC_RUNS;
	if (c->n_pend && !(want & OBS_CAP_DEC_KEYS))
		pend_resolve(c, dec_marks(c));
	if (want != __atomic_load_n(&c->dec_want, __ATOMIC_RELAXED))
		__atomic_store_n(&c->dec_want, want, __ATOMIC_RELAXED);
}

/* The decryptor stops for good (its memory kept for the caller to take
 * back, obs_cap_dec_reclaim). */
static void dec_stop(struct obs_capture *c)
{
	c->dec_bytes += c->dec.decrypted[OBS_RX];
	if (obs_tlsdec_wipe(&c->dec))
		c->dec_back = c->dec_mem;
	c->dec_on = false;
	dec_hint(c);
}

/* An HTTP/2 SETTINGS frame's header at p[0..n): a server that speaks
 * HTTP/2 first (its preface), as ALPN's h2 would have said. */
static bool h2_settings(const uint8_t *p, size_t n)
{
	return n >= 9 && p[3] == 4 && (p[4] & ~1u) == 0 && p[5] == 0 &&
	       p[6] == 0 && p[7] == 0 && p[8] == 0;
}

/* The decryptor's plaintext (p NULL: bytes unread, not decrypted): a
 * plaintext call of its direction. */
static void dec_out(void *ctx, int dir, const uint8_t *p, size_t n,
		    int64_t t_in, int64_t t_out)
{
	struct obs_capture *c = ctx;
	struct iovec v = { (void *)p, n };
	struct obs_call call = {
		.dir = (enum obs_dir)dir,
		.t_in = t_in,
		.t_out = t_out,
		.result = (long)n,
		.unread = p == NULL,
		.iov = p ? &v : NULL,
		.iovcnt = p ? 1 : 0,
	};

	if (p && dir == OBS_RX &&
	    c->bytes[OBS_STREAM_PLAIN].app[OBS_TX] == OBS_APP_UNKNOWN &&
	    h2_settings(p, n))
		call.alpn = OBS_APP_H2;
	plain_call(c, &call);
}

/* What the plaintext's followers do not read of direction dir's next
 * bytes: the decryptor leaves those encrypted. */
static size_t dec_unread(void *ctx, int dir)
{
	struct obs_capture *c = ctx;

	return unread(c, &c->bytes[OBS_STREAM_PLAIN], (enum obs_dir)dir);
}

void obs_cap_decrypt(struct obs_capture *c)
{
	c->dec_allowed = true;
}

bool obs_cap_dec_h2_wanted(const struct obs_capture *c)
{
	uint8_t want = __atomic_load_n(&c->h2_want, __ATOMIC_RELAXED);

	return (want >> (2 * OBS_STREAM_PLAIN + OBS_TX) & 1u) &&
	       (__atomic_load_n(&c->dec_want, __ATOMIC_RELAXED) &
		OBS_CAP_DEC_RUNS);
}

bool obs_cap_dec_offer(struct obs_capture *c, struct obs_cap_dec_mem *mem,
		       const struct obs_tlsdec_ops *ops, void *ops_ctx)
{
	bool taken = c->dec_on && obs_tlsdec_wants_mem(&c->dec) &&
		     obs_tlsdec_offer(&c->dec, &mem->dec, ops, ops_ctx);

	if (taken)
		c->dec_mem = mem;

	dec_hint(c);
	return taken;
}

void obs_cap_dec_refuse(struct obs_capture *c)
{
	if (c->dec_on)
		obs_tlsdec_refuse(&c->dec);
	dec_hint(c);
}

bool obs_cap_dec_random(const struct obs_capture *c, uint8_t random[32],
			size_t *len)
{
	return c->dec_on && c->dec.mem &&
	       obs_tlsdec_wants_keys(&c->dec, random, len);
}

void obs_cap_dec_keys(struct obs_capture *c, const uint8_t *client,
		      const uint8_t *server, size_t len)
{
	struct obs_tlsdec_sink sink = { dec_out, dec_unread, c };

	if (c->dec_on)
		obs_tlsdec_keys(&c->dec, client, server, len, &sink);
	dec_hint(c);
}

struct obs_cap_dec_mem *obs_cap_dec_reclaim(struct obs_capture *c)
{
	struct obs_cap_dec_mem *mem = c->dec_back;

	c->dec_back = NULL;
	if (mem)
		c->dec_mem = NULL;
	return mem;
}

const char *obs_cap_dec_why(const struct obs_capture *c)
{
	return obs_tlsdec_why(&c->dec);
}

uint64_t obs_cap_dec_bytes(const struct obs_capture *c, int dir)
{
	return dir == OBS_RX ? c->dec_bytes + c->dec.decrypted[OBS_RX]
			     : c->dec.decrypted[OBS_TX];
}

void obs_cap_call(struct obs_capture *c, const struct obs_call *call)
{
	struct obs_tlsdec_sink sink = { dec_out, dec_unread, c };

	if (c->syn_data && call->dir == OBS_TX && call->result > 0)
		c->syn_data = false; /* the SYN's: no sign of being up */
	else if (!c->up_known && call->result >= 0)
		obs_cap_up(c, call->t_in, OBS_UP_FIRST_IO, 0);
	if (c->dec_on && call->in_tls)
		dec_stop(c); /* a TLS library hooked: its plaintext is had */
	call_on(c, &c->bytes[OBS_STREAM_SOCKET], call);
	if (!c->dec_on || call->result <= 0 || call->peek)
		return;
	if (call->iov == NULL) { /* bytes it cannot see */
		dec_stop(c);
		return;
	}
	obs_tlsdec_feed(&c->dec, call->dir, call->iov, call->iovcnt,
			(size_t)call->result, call->t_in, call->t_out, &sink);
	dec_hint(c);
}

/* A plaintext call, a TLS library's or the decryptor's. */
static void plain_call(struct obs_capture *c, const struct obs_call *call)
{
	struct obs_call plain = *call;

	plain.eof = false; /* the socket's calls say when the peer closed */
	plain.in_tls = false;
	c->plain_alpn = call->alpn == OBS_APP_H1 || call->alpn == OBS_APP_H2
				? call->alpn
				: OBS_APP_UNKNOWN;
	call_on(c, &c->bytes[OBS_STREAM_PLAIN], &plain);
}

void obs_cap_plain(struct obs_capture *c, const struct obs_call *call)
{
	if (c->dec_on)
		dec_stop(c); /* the library's plaintext, not the records' */
	plain_call(c, call);
}

void obs_cap_shutdown(struct obs_capture *c, int64_t t_out, int how)
{
	struct obs_event ev = {
		.kind = OBS_EV_SHUTDOWN,
		.aux = (uint8_t)how,
		.t_in = t_out,
		.t_out = t_out,
	};

	close_both(c);
	put(c, &ev, true);
}

void obs_cap_close(struct obs_capture *c, int64_t t_out, uint8_t flags)
{
	struct obs_event ev = {
		.kind = OBS_EV_CLOSE,
		.flags = flags,
		.t_in = t_out,
		.t_out = t_out,
	};

	if (flags & OBS_EVF_EXIT) { /* its threads may go on a while */
		put(c, &ev, true);
		return;
	}
	close_both(c);
	if (c->bytes[OBS_STREAM_SOCKET].entry_open) { /* a send in flight:
						       * as it stands */
		sink_seal(c, c->bytes[OBS_STREAM_SOCKET].entry_handle);
		c->bytes[OBS_STREAM_SOCKET].entry_open = false;
	}
	if (c->dec_on) /* what is held will not be read now */
		dec_stop(c);
	h2_end(c); /* its streams close */
	/* a message under way will not end now */
	for (int dir = OBS_TX; dir <= OBS_RX; dir++)
		if (c->msg_open[dir]) {
			sink_seal(c, c->msg_handle[dir]);
			c->msg_open[dir] = false;
		}
	put(c, &ev, true);
}
