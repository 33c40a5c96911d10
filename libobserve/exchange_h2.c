/* exchange_h2.c - HTTP/2 streams as exchanges, and the plaintext of hooked
 * TLS libraries, wired into the exchange state machine (exchange.h;
 * docs/layer.md and docs/measurement-model.md say what each time means).
 *
 * Pure like exchange.c: no system calls, no clocks, no allocation; the
 * HTTP/2 memory comes from the user (obs_xh2_alloc). Every function that
 * takes a struct obs_conn runs under its lock, as exchange.c's.
 *
 * - h2c, prior knowledge: a connection whose first bytes sent are the
 *   client preface has its sends and receives fed to the frame follower
 *   (h2.c); each stream the client opens is an exchange record of its own,
 *   written as its frames come (T3 the entry of the send that carries its
 *   HEADERS, T4 the return of the send that completes its END_STREAM, TFB
 *   and T6 the returns of the receives that bring its first frame and its
 *   END_STREAM). Many records are open at once.
 * - h2c, Upgrade: an HTTP/1.1 exchange answered by "HTTP/1.1 101" becomes
 *   stream 1, and the connection goes on as above from that receive.
 * - TLS: the socket calls carry records; a hooked TLS library shows their
 *   plaintext (obs_xm_tls_session, obs_xm_tls_plain). For HTTP/1.x the
 *   plaintext labels the exchanges the records made (method, path, host,
 *   status); for h2 (the first plaintext write is the preface) the socket
 *   calls make no exchange, and the plaintext is fed to the follower with
 *   the times of the socket calls that carried it.
 */
#include "exchange_h2.h"

#include <string.h>
#include <sys/uio.h>

static void complete(struct obs_record *rec, bool done)
{
	uint32_t state = rec->state;

	__atomic_store_n(&rec->state,
			 done ? state | OBS_RS_COMPLETE
			      : state & ~OBS_RS_COMPLETE,
			 __ATOMIC_RELEASE);
}

void obs_xm_label(struct obs_conn *c, struct obs_exch_body *x,
		  const struct obs_http_req *req)
{
	struct obs_record *rec;

	memcpy(x->method, req->method, sizeof(x->method));
	if (!c->crec->u.conn.app_proto)
		c->crec->u.conn.app_proto = OBS_AP_HTTP1;
	rec = obs_record_alloc();
	if (!rec)
		return;
	rec->conn_seq = c->crec->conn_seq;
	rec->u.http.seq = x->seq;
	rec->u.http.flags = req->flags;
	memcpy(rec->u.http.host, req->host, sizeof(req->host));
	memcpy(rec->u.http.path, req->path, sizeof(req->path));
	obs_record_publish(rec, OBS_REC_HTTP);
	complete(rec, true);
}

/* ---- the streams ---- */

static struct obs_xh2_stream *stream_find(struct obs_xh2 *h, uint32_t id)
{
	struct obs_xh2_stream *s =
		&h->streams[(id >> 1) & (OBS_H2_STREAMS - 1)];

	if (id == 0)
		return NULL;
	if (s->id == id)
		return s;
	for (unsigned int i = 0; i < OBS_H2_STREAMS; i++)
		if (h->streams[i].id == id)
			return &h->streams[i];
	return NULL;
}

/* A slot for stream id (the follower follows at most OBS_H2_STREAMS at
 * once, so there is one). */
static struct obs_xh2_stream *stream_add(struct obs_xh2 *h, uint32_t id,
					 struct obs_record *rec)
{
	struct obs_xh2_stream *s =
		&h->streams[(id >> 1) & (OBS_H2_STREAMS - 1)];

	for (unsigned int i = 0; s->id && i < OBS_H2_STREAMS; i++)
		s = &h->streams[i];
	if (s->id)
		return NULL;
	s->id = id;
	s->tx_call = s->rx_call = 0;
	s->rec = rec;
	return s;
}

/* The client opened stream id at t3: exchange number k+1. */
static void stream_open(struct obs_conn *c, uint32_t id, int64_t t3)
{
	struct obs_record *rec;
	struct obs_exch_body *x;

	c->exch_seq++;
	c->crec->u.conn.exchanges = c->exch_seq;
	rec = obs_record_alloc();
	if (!rec)
		return; /* counted as dropped; the stream goes unrecorded */
	rec->conn_seq = c->crec->conn_seq;
	x = &rec->u.exch;
	x->seq = c->exch_seq;
	x->flags = OBS_XF_H2;
	x->stream = id;
	x->t3 = t3;
	obs_record_publish(rec, OBS_REC_EXCHANGE);
	if (!stream_add(c->h2, id, rec))
		complete(rec, true);
}

/* One feed: the call's times, and where its events go. */
struct feed {
	struct obs_conn *c;
	int64_t t_in, t_out;
};

static void lost(struct obs_conn *c)
{
	c->h2mode = OBS_H2M_LOST;
	obs_xm_warn("a connection that began as HTTP/2 broke its framing: "
		    "its exchanges are cut by the direction of data from "
		    "there on");
}

/* A stream's labels, as the HTTP/1.x ones are written. */
static void label_stream(struct obs_conn *c, struct obs_exch_body *x,
			 const struct obs_h2_req *r)
{
	struct obs_http_req req = {
		.flags = (r->flags & OBS_H1F_HOST_CUT ? OBS_HF_HOST_CUT : 0) |
			 (r->flags & OBS_H1F_PATH_CUT ? OBS_HF_PATH_CUT : 0),
	};

	memcpy(req.method, r->method, sizeof(req.method));
	memcpy(req.host, r->host, sizeof(req.host));
	memcpy(req.path, r->path, sizeof(req.path));
	obs_xm_label(c, x, &req);
}

static void on_stream_event(struct feed *f, struct obs_xh2_stream *s,
			    const struct obs_h2_ev *ev)
{
	struct obs_xh2 *h = f->c->h2;
	struct obs_exch_body *x = &s->rec->u.exch;

	switch (ev->kind) {
	case OBS_H2_EV_BYTES:
		if (ev->dir == OBS_H2_TX) {
			x->ds += ev->bytes;
			if (s->tx_call != h->call)
				x->send_calls++;
			s->tx_call = h->call;
		} else {
			x->dr += ev->bytes;
			if (s->rx_call != h->call)
				x->recv_calls++;
			s->rx_call = h->call;
		}
		break;
	case OBS_H2_EV_REQUEST:
		if (ev->req)
			label_stream(f->c, x, ev->req);
		break;
	case OBS_H2_EV_FIRST:
		x->tfb = f->t_out;
		x->t5 = f->t_in > x->t4 ? f->t_in : x->t4;
		break;
	case OBS_H2_EV_STATUS:
		x->status = ev->status;
		break;
	case OBS_H2_EV_END:
		if (ev->dir == OBS_H2_TX)
			x->t4 = f->t_out;
		else
			x->t6 = f->t_out;
		break;
	case OBS_H2_EV_RESET:
		x->flags |= OBS_XF_RESET;
		x->stream_error = ev->code;
		break;
	case OBS_H2_EV_CLOSE:
		complete(s->rec, true);
		s->id = 0;
		s->rec = NULL;
		break;
	default:
		break;
	}
}

/* The follower's events (h2.h) turned into the streams' records. */
static void on_event(void *ctx, const struct obs_h2_ev *ev)
{
	struct feed *f = ctx;
	struct obs_xh2 *h = f->c->h2;
	struct obs_xh2_stream *s;

	switch (ev->kind) {
	case OBS_H2_EV_OPEN:
		stream_open(f->c, ev->stream, f->t_in);
		return;
	case OBS_H2_EV_LOST:
		lost(f->c);
		return;
	case OBS_H2_EV_UNTRACKED:
		if (!h->warned)
			obs_xm_warn("more than 128 HTTP/2 streams open at "
				    "once: the streams beyond are not "
				    "recorded");
		h->warned = true;
		return;
	default:
		break;
	}
	s = stream_find(h, ev->stream);
	if (s && s->rec)
		on_stream_event(f, s, ev);
}

/* Feed what a call moved (d) to the follower, at the call's times. */
static void feed_data(struct obs_conn *c, enum obs_h2_dir dir, struct feed *f,
		      const struct obs_data *d)
{
	size_t left = d->len;

	c->h2->call++;
	obs_h2_call(&c->h2->f);
	for (int i = 0; i < d->iovcnt && left > 0; i++) {
		size_t n = d->iov[i].iov_len < left ? d->iov[i].iov_len : left;

		obs_h2_feed(&c->h2->f, dir, d->iov[i].iov_base, n, on_event, f);
		left -= n;
	}
}

/* The follower stops for good: its streams end (records complete). */
static void follower_end(struct obs_conn *c)
{
	struct feed f = { c, 0, 0 };

	obs_h2_end(&c->h2->f, on_event, &f);
}

static bool following(const struct obs_conn *c)
{
	return c->h2mode == OBS_H2M_PRIOR || c->h2mode == OBS_H2M_UPGRADE ||
	       c->h2mode == OBS_H2M_TLS;
}

/* A cleartext call on a followed connection: fed, unless its bytes cannot
 * be looked at (then the framing is lost from here on). */
static bool feed_cleartext(struct obs_conn *c, enum obs_h2_dir dir,
			   int64_t t_in, int64_t t_out,
			   const struct obs_data *d)
{
	struct feed f = { c, t_in ? t_in : t_out, t_out };

	if (!d || !d->iov) {
		follower_end(c);
		lost(c);
		return false;
	}
	feed_data(c, dir, &f, d); /* (LOST on the way: the rest unrecorded) */
	return true;
}

bool obs_xh2_attach(struct obs_conn *c, struct obs_xh2 *mem)
{
	bool taken = false;

	obs_conn_lock(c);
	if (!c->h2 && c->h2mode == OBS_H2M_NONE) {
		__atomic_store_n(&c->h2, mem, __ATOMIC_RELAXED);
		taken = true;
	}
	obs_conn_unlock(c);
	return taken;
}

bool obs_xh2_send(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		  const struct obs_data *d)
{
	(void)ret;
	if (d && d->tls_in == OBS_TLSIN_SHUTDOWN)
		return true; /* the closing alert: no request */
	switch (c->h2mode) {
	case OBS_H2M_NONE:
		/* (the follower checks the rest of the preface) */
		if (!c->h2 || c->proto != OBS_PROTO_UNKNOWN ||
		    !obs_data_begins(d, "PRI * HTTP/2.0", 14))
			return false;
		obs_h2_init(&c->h2->f, c->h2->hpack);
		c->h2mode = OBS_H2M_PRIOR;
		c->proto = OBS_PROTO_HTTP;
		c->crec->u.conn.app_proto = OBS_AP_H2C;
		/* fall through */
	case OBS_H2M_PRIOR:
	case OBS_H2M_UPGRADE:
		c->pending_send = 0;
		return feed_cleartext(c, OBS_H2_TX, t_in, t_out, d);
	case OBS_H2M_TLS:
		/* the records of plaintext writes: their times */
		if (!c->tls_tx_in)
			c->tls_tx_in = t_in ? t_in : t_out;
		c->tls_tx_out = t_out;
		c->pending_send = 0;
		return true;
	default:
		return false;
	}
}

/* An HTTP/1.1 exchange answered "101": it becomes stream 1 of h2c. */
static void upgrade(struct obs_conn *c, int64_t t_in)
{
	struct obs_h2 *f = &c->h2->f;

	obs_h2_init(f, c->h2->hpack);
	obs_h2_upgrade(f, true);
	c->h2mode = OBS_H2M_UPGRADE;
	c->crec->u.conn.app_proto = OBS_AP_H2C;
	if (c->xrec && c->xrec != &c->scratch) {
		struct obs_exch_body *x = &c->xrec->u.exch;

		x->flags |= OBS_XF_H2;
		x->stream = 1;
		if (!x->t5)
			x->t5 = t_in > x->t4 ? t_in : x->t4;
		if (!stream_add(c->h2, 1, c->xrec))
			complete(c->xrec, true);
	}
	c->xrec = NULL;
	__atomic_store_n(&c->xphase, OBS_X_NONE, __ATOMIC_RELAXED);
}

bool obs_xh2_recv(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		  bool peek, const struct obs_data *d)
{
	(void)ret;
	if (d && d->tls_in == OBS_TLSIN_SHUTDOWN)
		return true; /* the peer's closing alert */
	switch (c->h2mode) {
	case OBS_H2M_NONE:
		if (!c->h2 || peek || c->proto != OBS_PROTO_HTTP ||
		    c->xphase != OBS_X_SENDING || !c->x_http ||
		    !obs_data_begins(d, "HTTP/1.1 101", 12))
			return false;
		upgrade(c, t_in);
		/* fall through */
	case OBS_H2M_PRIOR:
	case OBS_H2M_UPGRADE:
		if (peek)
			return true; /* read again later: fed then */
		return feed_cleartext(c, OBS_H2_RX, t_in, t_out, d);
	case OBS_H2M_TLS:
		if (!peek) {
			c->tls_rx_in = t_in;
			c->tls_rx_out = t_out;
		}
		return true;
	default:
		return false;
	}
}

void obs_xh2_end(struct obs_conn *c)
{
	struct obs_xh2 *h = c->h2;

	if (!h)
		return;
	if (following(c))
		follower_end(c);
	__atomic_store_n(&c->h2, NULL, __ATOMIC_RELAXED);
	obs_xh2_release(h);
}

void obs_xh2_records_state(struct obs_conn *c, bool done)
{
	struct obs_xh2 *h = c->h2;

	if (!h || !following(c))
		return;
	for (unsigned int i = 0; i < OBS_H2_STREAMS; i++)
		if (h->streams[i].id && h->streams[i].rec)
			complete(h->streams[i].rec, done);
}

/* ---- TLS plaintext ---- */

bool obs_xm_tls_session(struct obs_conn *c, uint8_t alpn, struct obs_xh2 *h2)
{
	struct obs_conn_body *cb;
	bool taken = false;

	obs_conn_lock(c);
	cb = &c->crec->u.conn;
	c->tls_plain = true;
	cb->flags |= OBS_CF_TLS_PLAIN;
	if (alpn && (!cb->app_proto || cb->app_proto == OBS_AP_HTTP1))
		cb->app_proto = alpn;
	if (h2 && !c->h2 && c->h2mode == OBS_H2M_NONE) {
		/* its first plaintext write is the client preface: from here
		 * on the socket calls make no exchange, the streams do */
		c->h2 = h2;
		taken = true;
		obs_h2_init(&h2->f, h2->hpack);
		c->h2mode = OBS_H2M_TLS;
		cb->app_proto = OBS_AP_H2;
		if (c->xrec && c->xrec != &c->scratch)
			complete(c->xrec, true);
		if (c->xrec != &c->scratch)
			c->xrec = NULL;
		c->tls_tx_in = c->tls_tx_out = 0;
		__atomic_store_n(&c->xphase, OBS_X_NONE, __ATOMIC_RELAXED);
	}
	obs_conn_unlock(c);
	return taken;
}

/* HTTP/1.x over TLS: the exchange's first plaintext write is its request,
 * its first plaintext read the status line. */
static void label_plain(struct obs_conn *c, bool tx, bool peek,
			const uint8_t *p, size_t n)
{
	struct obs_exch_body *x;
	struct obs_http_req req;

	if (!c->xrec || c->xrec == &c->scratch || c->x_handshake)
		return;
	x = &c->xrec->u.exch;
	if (tx) {
		if (c->plain_tx_seq == c->exch_seq)
			return;
		c->plain_tx_seq = c->exch_seq;
		if (obs_http_request(p, n < OBS_HTTP_LOOK ? n : OBS_HTTP_LOOK,
				     &req))
			obs_xm_label(c, x, &req);
		return;
	}
	if (c->plain_rx_seq == c->exch_seq || !x->method[0])
		return;
	{
		struct iovec v = { (void *)p, n };
		struct obs_data d = { &v, 1, n, 0 };

		obs_xm_status(c, x, &d, n, peek);
	}
}

void obs_xm_tls_plain(struct obs_conn *c, bool tx, bool peek, int64_t t_in,
		      int64_t t_out, const uint8_t *p, size_t n)
{
	struct iovec v = { (void *)p, n };
	struct obs_data d = { &v, 1, n, 0 };
	struct feed f = { c, t_in, t_out };

	/* HTTP/1.x: labelled already (a hint read without the lock) */
	if (__atomic_load_n(&c->h2mode, __ATOMIC_RELAXED) == OBS_H2M_NONE &&
	    __atomic_load_n(tx ? &c->plain_tx_seq : &c->plain_rx_seq,
			    __ATOMIC_RELAXED) ==
		    __atomic_load_n(&c->exch_seq, __ATOMIC_RELAXED))
		return;
	obs_conn_lock(c);
	if (c->h2mode == OBS_H2M_TLS && !peek) {
		/* the times of the socket calls that carried the records; a
		 * read served from records decrypted earlier takes the last
		 * socket receive's (the one that completed them) */
		if (tx) {
			f.t_in = c->tls_tx_in ? c->tls_tx_in : t_in;
			f.t_out = c->tls_tx_out ? c->tls_tx_out : t_out;
			c->tls_tx_in = c->tls_tx_out = 0;
		} else if (c->tls_rx_out) {
			f.t_in = c->tls_rx_in;
			f.t_out = c->tls_rx_out;
		}
		feed_data(c, tx ? OBS_H2_TX : OBS_H2_RX, &f, &d);
	} else if (c->h2mode == OBS_H2M_NONE) {
		label_plain(c, tx, peek, p, n);
	}
	obs_conn_unlock(c);
}
