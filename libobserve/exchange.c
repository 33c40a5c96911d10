/* exchange.c - the exchange state machine (see exchange.h and
 * docs/measurement-model.md for the meaning of every time).
 *
 * A connection is split into exchanges by the direction of the data: a run of
 * successful sends followed by a run of successful receives. The records are
 * written in place as calls happen, so a record in the spool is always as
 * complete as the program's progress.
 */
#include "exchange.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Where the writes go when no record slot could be had: kept per thread of
 * control so that the hot path never tests for NULL. Its contents are junk. */
static struct obs_record obs_discard_conn, obs_discard_exch, obs_discard_http;

static bool is_transient(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR ||
	       err == ENOBUFS;
}

static uint8_t end_class_of_errno(int err)
{
	switch (err) {
	case ECONNRESET:
	case EPIPE:
	case ECONNABORTED:
		return OBS_END_RESET;
	case ETIMEDOUT:
		return OBS_END_TIMEOUT;
	default:
		return OBS_END_NONE;
	}
}

/* An error that ends the connection: the first one wins. */
static void note_fatal_errno(struct obs_conn *c, int err)
{
	struct obs_conn_body *cb = &c->crec->u.conn;
	uint8_t cls = end_class_of_errno(err);

	if (cls == OBS_END_NONE || cb->end_class != OBS_END_NONE)
		return;
	/* EPIPE on a send after the program's own shutdown(SHUT_WR) is its own
	 * doing, not the peer's reset. */
	if (err == EPIPE && (cb->flags & OBS_CF_SHUTDOWN_WR))
		return;
	cb->end_class = cls;
	cb->end_errno = err;
}

static void connect_failed(struct obs_conn *c, int64_t t, int err)
{
	struct obs_conn_body *cb = &c->crec->u.conn;

	cb->t2 = t;
	cb->connect_errno = err;
	cb->end_errno = err;
	cb->end_class = err == ECONNREFUSED ? OBS_END_REFUSED
			: err == ETIMEDOUT  ? OBS_END_TIMEOUT
					    : OBS_END_CONNECT_ERROR;
	c->phase = OBS_PH_FAILED;
}

static void connect_up(struct obs_conn *c, int64_t t, uint8_t how)
{
	c->crec->u.conn.t2 = t;
	c->crec->u.conn.t2_how = how;
	c->phase = OBS_PH_UP;
}

/* T5 is the entry of the first receive after T4; a receive that another
 * thread entered before the send returned counts from T4. */
static int64_t after_t4(const struct obs_exch_body *x, int64_t t_in)
{
	return t_in > x->t4 ? t_in : x->t4;
}

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Whether obs_xh2_send/obs_xh2_recv may take a call: HTTP/2 memory or
 * mode, or a hooked TLS library's closing alert. (Checked here: most
 * connections have none of them.) */
static inline bool h2_or_alert(const struct obs_conn *c,
			       const struct obs_data *d)
{
	return c->h2 || c->h2mode != OBS_H2M_NONE ||
	       (d && d->tls_in == OBS_TLSIN_SHUTDOWN);
}

void obs_record_publish(struct obs_record *rec, uint32_t kind)
{
	__atomic_store_n(&rec->kind, kind, __ATOMIC_RELEASE);
}

/* The first bytes of what a call moved, gathered from its buffers. */
static size_t data_copy(const struct obs_data *d, uint8_t *buf, size_t max)
{
	size_t got = 0, want;

	if (!d || !d->iov)
		return 0;
	want = d->len < max ? d->len : max;
	for (int i = 0; i < d->iovcnt && got < want; i++) {
		size_t n = d->iov[i].iov_len;
		if (n > want - got)
			n = want - got;
		if (n)
			memcpy(buf + got, d->iov[i].iov_base, n);
		got += n;
	}
	return got;
}

/* The first n bytes (at most max) of what a call moved: in place when the
 * first buffer holds them all, else gathered into buf. */
static inline __attribute__((always_inline)) const uint8_t *
data_head(const struct obs_data *d, uint8_t *buf, size_t max, size_t *n)
{
	size_t want = d->len < max ? d->len : max;

	if (d->iov && d->iovcnt > 0 && d->iov[0].iov_len >= want) {
		*n = want;
		return d->iov[0].iov_base;
	}
	*n = data_copy(d, buf, max);
	return buf;
}

/* The status line of the answer of exchange x (the current one), from its
 * first bytes gathered across receives into c->plain_head: axel reads its
 * headers a byte at a time, PHP's streams peek at one byte first. The n
 * bytes of d are the receive's; a peek's are looked at, not kept (they are
 * read again). Done for this exchange (plain_rx_seq) once the status is
 * found, or the head is full, or the bytes could not be looked at. */
void obs_xm_status(struct obs_conn *c, struct obs_exch_body *x,
		   const struct obs_data *d, size_t n, bool peek)
{
	uint8_t head[sizeof(c->plain_head)];
	size_t have, got;
	struct obs_data now = { d ? d->iov : NULL, d ? d->iovcnt : 0, n, 0 };

	if (c->plain_rx_seq == c->exch_seq)
		return;
	if (c->plain_head_seq != c->exch_seq) {
		c->plain_head_seq = c->exch_seq;
		c->plain_head_n = 0;
		/* the usual case: the status line's first twelve bytes (all
		 * obs_http_status reads) in the first buffer, looked at in
		 * place; found or not, that is the answer's */
		if (n >= 12 && now.iov && now.iovcnt > 0 &&
		    now.iov[0].iov_len >= 12) {
			x->status = obs_http_status(now.iov[0].iov_base, 12);
			c->plain_rx_seq = c->exch_seq;
			return;
		}
	}
	have = c->plain_head_n;
	memcpy(head, c->plain_head, have);
	got = data_copy(&now, head + have, sizeof(head) - have);
	x->status = obs_http_status(head, have + got);
	if (!peek) {
		memcpy(c->plain_head + have, head + have, got);
		c->plain_head_n = (uint8_t)(have + got);
	}
	if (x->status || c->plain_head_n == sizeof(c->plain_head) ||
	    (n > 0 && !now.iov))
		c->plain_rx_seq = c->exch_seq; /* done with this answer */
}

/* Walk the TLS record headers in what a send moved (or will move). */
static unsigned int walk_tls(struct obs_tls_walk *w, const struct obs_data *d,
			     unsigned int *records, unsigned int *appdata)
{
	unsigned int types = 0;
	size_t left;

	if (!d || !d->iov)
		return 0;
	left = d->len;
	for (int i = 0; i < d->iovcnt && left > 0; i++) {
		size_t n = d->iov[i].iov_len < left ? d->iov[i].iov_len : left;
		types |= obs_tls_feed(w, d->iov[i].iov_base, n, records,
				      appdata);
		left -= n;
	}
	return types;
}

/* The connection's info record, made on first use (NULL: spool full). */
static struct obs_info_body *info_of(struct obs_conn *c)
{
	if (!c->irec) {
		struct obs_record *rec = obs_record_alloc();
		if (!rec)
			return NULL;
		rec->conn_seq = c->crec->conn_seq;
		obs_record_publish(rec, OBS_REC_INFO);
		c->irec = rec;
	}
	return &c->irec->u.info;
}

static void record_complete(struct obs_record *rec)
{
	__atomic_store_n(&rec->state, rec->state | OBS_RS_COMPLETE,
			 __ATOMIC_RELEASE);
}

/* Close the current exchange (if any) and open exchange k+1. With http
 * (not NULL) the slot of its HTTP record is reserved with it, in *http
 * (NULL when none could be had). */
static inline __attribute__((always_inline)) struct obs_exch_body *
exchange_begin_with(struct obs_conn *c, struct obs_record **http)
{
	struct obs_record *rec;

	if (c->xrec)
		record_complete(c->xrec);
	if (c->rx_first == OBS_RX_PROVISIONAL)
		c->rx_first = OBS_RX_DONE; /* only the first answer */
	c->x_after_handshake = false;
	c->x_label_late = false;
	c->exch_seq++;
	c->crec->u.conn.exchanges = c->exch_seq;
	rec = http ? obs_record_alloc2(http) : obs_record_alloc();
	if (!rec) {
		rec = &obs_discard_exch;
		memset(rec, 0, sizeof(*rec));
	}
	rec->conn_seq = c->crec->conn_seq;
	rec->u.exch.seq = c->exch_seq;
	if (rec != &obs_discard_exch)
		obs_record_publish(rec, OBS_REC_EXCHANGE);
	c->xrec = rec;
	return &rec->u.exch;
}

static __attribute__((noinline)) struct obs_exch_body *
exchange_begin(struct obs_conn *c)
{
	return exchange_begin_with(c, NULL);
}

/* The first bytes a connection sends (d) tell its protocol: a TLS
 * ClientHello makes it a TLS connection (its records are walked when it is
 * sent, tls_hello); with http (the send's own bookkeeping) anything else
 * makes it HTTP, which http_exchange_begin() tells from the rest. Nothing
 * to look at: decide on a later send. */
static void tls_found(struct obs_conn *c)
{
	struct obs_info_body *info;

	c->proto = OBS_PROTO_TLS;
	c->tls_hello = true;
	c->crec->u.conn.flags |= OBS_CF_TLS;
	info = info_of(c);
	if (info)
		info->flags |= OBS_IF_TLS;
}

static void first_bytes(struct obs_conn *c, const struct obs_data *d, bool http)
{
	uint8_t head[8];
	const uint8_t *p = NULL;
	size_t n = 0;

	if (d)
		p = data_head(d, head, sizeof(head), &n);
	if (n == 0)
		return;
	if (obs_tls_hello(p, n))
		tls_found(c);
	else if (http)
		c->proto = OBS_PROTO_HTTP;
}

/* An exchange whose sends so far carry only TLS handshake, change cipher
 * spec or alert records: no request, kept in the connection's scratch
 * record; its times make the handshake's. */
static struct obs_exch_body *handshake_begin(struct obs_conn *c, int64_t t3)
{
	struct obs_info_body *info = info_of(c);

	if (c->xrec && c->xrec != &c->scratch)
		record_complete(c->xrec);
	memset(&c->scratch, 0, sizeof(c->scratch));
	c->xrec = &c->scratch;
	__atomic_store_n(&c->x_handshake, true, __ATOMIC_RELAXED);
	c->x_http = false;
	if (info && !info->tls_start)
		info->tls_start = t3;
	return &c->scratch.u.exch;
}

/* What a send on a TLS connection carries: the record types it begins
 * (OBS_TLS_*), with OBS_TLS_APPDATA only for application data that is
 * not the handshake's. Until the first application-data record the
 * client's flights after its hello tell 1.2 from 1.3: in 1.2 its Finished
 * is a handshake record; in 1.3 it is the first application-data record
 * (after a change cipher spec), sent before the first request or with it.
 * (A 1.3 HelloRetryRequest, or a client certificate, is not told apart.) */
#define OBS_TLS_FINISHED (1u << 4) /* 1.3's Finished: handshake, no request */

struct tls_tx {
	struct obs_tls_walk *w;
	uint8_t *seen;	 /* tls_seen */
	bool *versioned; /* tls_versioned */
	bool *hello;	 /* tls_hello: the ClientHello is not walked yet */
};

/* The rule above on the state s (the connection's, or a copy of it for a
 * prediction); *version is set when this send tells it. */
static unsigned int tls_types(struct tls_tx s, const struct obs_data *d,
			      unsigned int *records, uint16_t *version)
{
	unsigned int appdata = 0, types = walk_tls(s.w, d, records, &appdata);

	if (*s.hello) {
		*s.hello = false; /* the hello's flight: not "after" it */
	} else if (!*s.versioned) {
		*s.seen |= (uint8_t)types;
		if (appdata > 0) {
			*s.versioned = true;
			if (!(*s.seen & OBS_TLS_HANDSHAKE)) {
				appdata--; /* 1.3: that one is the Finished */
				types |= OBS_TLS_FINISHED;
			}
			*version =
				*s.seen & OBS_TLS_HANDSHAKE ? 0x0303 : 0x0304;
		}
	}
	if (appdata == 0)
		types &= ~OBS_TLS_APPDATA;
	return types;
}

static unsigned int tls_send(struct obs_conn *c, const struct obs_data *d,
			     unsigned int *records)
{
	struct tls_tx s = { &c->tls, &c->tls_seen, &c->tls_versioned,
			    &c->tls_hello };
	uint16_t version = 0;
	unsigned int types = tls_types(s, d, records, &version);
	struct obs_info_body *info;

	if (version && (info = info_of(c)))
		info->tls_version = version;
	return types;
}

static void add_records(struct obs_exch_body *x, unsigned int records)
{
	if (records)
		x->tls_records = (uint8_t)(x->tls_records + records > 255
						   ? 255
						   : x->tls_records + records);
}

/* A handshake exchange still sending (its last flight: 1.3's Finished, or
 * 1.2 False Start's) goes on with a send of application data: the request
 * begins at that send's entry t_in, in an exchange of its own; the
 * Finished stays the handshake's, and what the client did in between is
 * in neither. A request record whose header began in the handshake's last
 * send (split: a header cut across sends) began there: the handshake's
 * sends go with it. */
static struct obs_exch_body *request_after_handshake(struct obs_conn *c,
						     int64_t t_in, bool split)
{
	struct obs_exch_body hs = c->scratch.u.exch, *x;

	x = exchange_begin(c);
	__atomic_store_n(&c->x_handshake, false, __ATOMIC_RELAXED);
	c->x_after_handshake = true;
	x->t3 = t_in;
	c->tx_pred = OBS_TXP_NONE;
	if (split) {
		x->t3 = hs.t3;
		x->ds = hs.ds;
		x->send_calls = hs.send_calls;
		x->tls_records = hs.tls_records;
	}
	return x;
}

/* The last request this thread labelled, when it held nothing a record
 * does not (obs_http_fill's bare). Only its own thread reads or writes it,
 * inside the layer's bookkeeping (a signal handler that interrupts that
 * bookkeeping does none: obs_inside). */
static __thread struct obs_http_seen thread_seen
	__attribute__((tls_model("initial-exec")));

const struct obs_http_seen *obs_xm_thread_seen(void)
{
	return &thread_seen;
}

/* obs_http_fill writes the spool's fields in place: their sizes agree. */
_Static_assert(sizeof(((struct obs_exch_body *)0)->method) ==
		       OBS_HTTP_METHOD_MAX,
	       "method field");
_Static_assert(sizeof(((struct obs_http_body *)0)->host) == OBS_HTTP_HOST_MAX,
	       "host field");
_Static_assert(sizeof(((struct obs_http_body *)0)->path) == OBS_HTTP_PATH_MAX,
	       "path field");

/* The request at p[0..n) as the connection's or this thread's last one
 * (NULL: neither): its fields from memory. */
static inline struct obs_http_seen *http_recall(struct obs_conn *c,
						const uint8_t *p, size_t n)
{
	/* the connection's (kept from its second request on: most
	 * connections that make one make only one), or this thread's (a
	 * connection per request) */
	if (obs_http_recall(&c->http_seen, p, n))
		return &c->http_seen;
	if (obs_http_recall(&thread_seen, p, n))
		return &thread_seen;
	return NULL;
}

/* c speaks HTTP/1.x, unless something said otherwise before. */
static inline void http_app(struct obs_conn *c)
{
	if (!c->crec->u.conn.app_proto)
		c->crec->u.conn.app_proto = OBS_AP_HTTP1;
}

/* Memory m says what the HTTP record of exchange x on c says, reserved
 * under epoch: later requests the same refer to it. */
static inline void http_note_ref(struct obs_http_seen *m,
				 const struct obs_conn *c,
				 const struct obs_exch_body *x, uint32_t epoch)
{
	m->ref_conn = c->crec->conn_seq;
	m->ref_seq = x->seq;
	m->ref_epoch = epoch;
}

/* Exchange x on c is the HTTP/1.x request at p[0..n): recalled, or its
 * line (obs_http_line). Its method goes into x, its host and path into
 * rec, a zeroed slot (NULL: none could be had), published whole; rec
 * reserved under epoch (obs_record_epoch before the reservation). The
 * memory that now says this request refers later ones to rec. */
static inline __attribute__((always_inline)) void
http_label(struct obs_conn *c, struct obs_exch_body *x, struct obs_record *rec,
	   const uint8_t *p, size_t n, const struct obs_http_line *line,
	   struct obs_http_seen *recalled, uint32_t epoch)
{
	bool kept = rec != NULL;

	http_app(c);
	if (!rec) {
		rec = &obs_discard_http;
		memset(rec, 0, sizeof(*rec));
	}
	rec->conn_seq = c->crec->conn_seq;
	rec->u.http.seq = x->seq;
	if (recalled) {
		memcpy(x->method, recalled->method, OBS_HTTP_METHOD_MAX);
		memcpy(rec->u.http.host, recalled->host, OBS_HTTP_HOST_MAX);
		memcpy(rec->u.http.path, recalled->path, OBS_HTTP_PATH_MAX);
		rec->u.http.flags = recalled->flags;
	} else {
		rec->u.http.flags = obs_http_fill(
			p, n, line, x->method, rec->u.http.host,
			rec->u.http.path, x->seq > 1 ? &c->http_seen : NULL,
			&thread_seen);
	}
	if (kept) {
		rec->state = OBS_RS_COMPLETE; /* written once, whole */
		obs_record_publish(rec, OBS_REC_HTTP);
		/* (a roll-over since the reservation: it may be in the
		 * segment before; no reference to it) */
		kept = obs_record_epoch() == epoch;
	}
	if (recalled) {
		if (kept)
			http_note_ref(recalled, c, x, epoch);
		return;
	}
	if (c->http_seen.fresh && kept)
		http_note_ref(&c->http_seen, c, x, epoch);
	if (thread_seen.fresh && kept)
		http_note_ref(&thread_seen, c, x, epoch);
	c->http_seen.fresh = false;
	thread_seen.fresh = false;
}

/* Exchange x on c is again the request memory m says: the method into x,
 * the host and path by reference to m's HTTP record (no record). */
static inline __attribute__((always_inline)) void
http_label_ref(struct obs_conn *c, struct obs_exch_body *x,
	       const struct obs_http_seen *m)
{
	http_app(c);
	memcpy(x->method, m->method, OBS_HTTP_METHOD_MAX);
	x->label_conn = m->ref_conn;
	x->label_seq = m->ref_seq;
}

/* The first send of an exchange on an HTTP (or not yet known) connection
 * opens the exchange: with method, host and path when it is an HTTP/1.x
 * request, whose record is reserved with the exchange's and filled in
 * place (its fields are zero: no copy through a buffer). d: the send's
 * bytes; NULL when a receive begins it while the send is under way (the
 * send labels it when it returns: label_late). */
static inline __attribute__((always_inline)) struct obs_exch_body *
http_exchange_begin(struct obs_conn *c, const struct obs_data *d,
		    const uint8_t *one)
{
	uint8_t head[OBS_HTTP_LOOK];
	const uint8_t *p = NULL;
	size_t n = 0;
	struct obs_http_line line;
	struct obs_record *rec = NULL;
	struct obs_exch_body *x;
	struct obs_http_seen *recalled = NULL;
	uint32_t epoch;
	bool by_ref;

	if (!d && c->tx_pred == OBS_TXP_BYTES) {
		/* until then it counts as HTTP: the answer's status is read */
		x = exchange_begin_with(c, NULL);
		__atomic_store_n(&c->x_handshake, false, __ATOMIC_RELAXED);
		c->x_http = true;
		c->x_label_late = true;
		return x;
	}
	if (one) { /* d is that one buffer, d->len bytes in it */
		p = one;
		n = d->len < sizeof(head) ? d->len : sizeof(head);
	} else if (d) { /* all we look at in the first buffer: no copy */
		p = data_head(d, head, sizeof(head), &n);
	}
	recalled = http_recall(c, p, n);
	c->x_http = recalled || (n > 0 && obs_http_line(p, n, &line));
	/* the same request as one whose HTTP record is in this segment:
	 * no record of its own (the two reserved under one epoch) */
	epoch = obs_record_epoch();
	by_ref = recalled && recalled->ref_seq && recalled->ref_epoch == epoch;
	x = exchange_begin_with(c, c->x_http && !by_ref ? &rec : NULL);
	__atomic_store_n(&c->x_handshake, false, __ATOMIC_RELAXED);
	if (!c->x_http) {
		if (n > 0 && c->exch_seq == 1)
			c->proto = OBS_PROTO_OTHER; /* not HTTP: stop looking */
		return x;
	}
	if (by_ref && LIKELY(obs_record_epoch() == epoch)) {
		http_label_ref(c, x, recalled);
		return x;
	}
	if (by_ref) { /* a roll-over meanwhile: a record after all */
		epoch = obs_record_epoch();
		rec = obs_record_alloc();
	}
	http_label(c, x, rec, p, n, &line, recalled, epoch);
	return x;
}

/* The send whose exchange x a receive began while it was under way
 * (x_label_late) returned with its bytes d, still the caller's: x is
 * labelled from them now, its HTTP record reserved on its own. Bytes
 * that are no HTTP/1.x request take back the status read meanwhile. */
static __attribute__((noinline)) void label_late(struct obs_conn *c,
						 struct obs_exch_body *x,
						 const struct obs_data *d)
{
	uint8_t head[OBS_HTTP_LOOK];
	const uint8_t *p;
	size_t n = 0;
	struct obs_http_line line;
	struct obs_http_seen *recalled;
	uint32_t epoch;

	c->x_label_late = false;
	p = data_head(d, head, sizeof(head), &n);
	recalled = http_recall(c, p, n);
	if (!recalled && !(n > 0 && obs_http_line(p, n, &line))) {
		c->x_http = false;
		x->status = 0;
		if (n > 0 && c->exch_seq == 1)
			c->proto = OBS_PROTO_OTHER;
		return;
	}
	epoch = obs_record_epoch();
	http_label(c, x, obs_record_alloc(), p, n, &line, recalled, epoch);
}

/* Exchange k+1 begins with a send entered at t3 whose TLS records are of
 * types (OBS_TLS_*; lost: the walk gave up): the handshake's, or a
 * request, labelled when it is HTTP/1.x. d: the bytes it moved, or NULL
 * (a receive begins it: the prediction has them); one: where they are
 * when d is one buffer that holds all d->len of them (the plain way's),
 * else NULL. */
static inline __attribute__((always_inline)) struct obs_exch_body *
begin_for_send(struct obs_conn *c, int64_t t3, unsigned int types, bool lost,
	       const struct obs_data *d, const uint8_t *one)
{
	struct obs_exch_body *x;

	/* a first send whose answer, come first, is no TLS record
	 * (answer_tells) */
	if (c->proto == OBS_PROTO_UNKNOWN && c->tx_pred == OBS_TXP_BYTES)
		c->proto = OBS_PROTO_HTTP;
	if (c->proto == OBS_PROTO_TLS && !lost && types &&
	    !(types & OBS_TLS_APPDATA)) {
		x = handshake_begin(c, t3);
	} else {
		if (c->proto == OBS_PROTO_HTTP) {
			x = http_exchange_begin(c, d, one);
		} else {
			x = exchange_begin(c);
			__atomic_store_n(&c->x_handshake, false,
					 __ATOMIC_RELAXED);
		}
		/* the handshake's last flight goes with the request */
		c->x_after_handshake =
			(types & (OBS_TLS_CCS | OBS_TLS_HANDSHAKE |
				  OBS_TLS_FINISHED)) != 0;
	}
	x->t3 = t3;
	c->pending_send = 0;
	c->pending_recv = 0;
	c->tx_pred = OBS_TXP_NONE;
	return x;
}

/* What the send of a TLS connection entered at t_in carries, read from its
 * buffers (d: the bytes it asks to send, a TLS library's) before the real
 * call: its record types. A receive in another thread that brings the
 * answer before this send's bookkeeping ran begins the exchange with them
 * (obs_xm_recv): a request's, or the handshake's. */
void obs_xm_predict_tls(struct obs_conn *c, int64_t t_in,
			const struct obs_data *d)
{
	c->tx_t3 = t_in;
	c->tx_pred = OBS_TXP_OTHER;
	if (c->tls_versioned) {
		/* the handshake is over: application data (a closing alert
		 * too, in 1.3), no walk needed */
		c->tx_types = OBS_TLS_APPDATA;
		c->tx_lost = c->tls.lost;
	} else {
		struct obs_tls_walk w = c->tls;
		uint8_t seen = c->tls_seen;
		bool versioned = c->tls_versioned, hello = c->tls_hello;
		struct tls_tx s = { &w, &seen, &versioned, &hello };
		unsigned int records = 0;
		uint16_t version;

		c->tx_types = (uint8_t)tls_types(s, d, &records, &version);
		c->tx_lost = w.lost;
	}
}

/* Inlined into connect (LTO), as the close's chain below: the frames of a
 * chain of calls were ~60 instructions of a connection's ~1,370; the
 * extern declaration of exchange.h keeps the external definition. */
__attribute__((always_inline)) inline void
obs_xm_connect_first(struct obs_conn *c, uint64_t conn_seq, int fd, int family,
		     const void *peer_addr, uint16_t peer_port, int64_t t_in,
		     int64_t t_out, int ret, int err)
{
	/* the info record with it, in one reservation: every TCP
	 * connection has one by its close (TCP_INFO) */
	struct obs_record *info, *rec = obs_record_alloc2(&info);
	struct obs_conn_body *cb;

	if (!rec) {
		rec = &obs_discard_conn;
		memset(rec, 0, sizeof(*rec));
	}
	c->crec = rec;
	c->refs = 1;
	rec->conn_seq = conn_seq;
	cb = &rec->u.conn;
	cb->fd = fd;
	cb->family = (uint16_t)family;
	memcpy(cb->peer_addr, peer_addr, sizeof(cb->peer_addr));
	cb->peer_port = peer_port;
	cb->t1 = t_in;
	if (ret == 0) {
		connect_up(c, t_out, OBS_T2_CONNECT);
	} else if (obs_xm_connect_pending(ret, err)) {
		/* EINTR: a blocking connect goes on in the background. */
		c->phase = OBS_PH_CONNECTING;
		cb->flags |= OBS_CF_NONBLOCKING;
	} else if (err == EISCONN) {
		connect_up(c, t_out, OBS_T2_RECONNECT);
	} else {
		connect_failed(c, t_out, err);
	}
	if (rec != &obs_discard_conn)
		obs_record_publish(rec, OBS_REC_CONNECTION);
	if (info) {
		info->conn_seq = conn_seq;
		obs_record_publish(info, OBS_REC_INFO);
		c->irec = info;
	}
}

void obs_xm_fastopen(struct obs_conn *c, int64_t t_in, int64_t t_out,
		     ssize_t ret, const struct obs_data *d)
{
	if (ret > 0) {
		c->syn_data = true;
		obs_xm_send(c, t_in, t_out, ret, 0, d);
	}
}

void obs_xm_fastopen_deferred(struct obs_conn *c)
{
	if (c->phase == OBS_PH_UP) {
		c->phase = OBS_PH_CONNECTING;
		c->crec->u.conn.t2 = 0;
		c->crec->u.conn.t2_how = 0;
	}
	c->syn_data = true;
}

void obs_xm_connect_again(struct obs_conn *c, int64_t t_out, int ret, int err)
{
	obs_conn_lock(c);
	if (c->phase == OBS_PH_CONNECTING) {
		if (ret == 0 || err == EISCONN)
			connect_up(c, t_out, OBS_T2_RECONNECT);
		else if (err != EALREADY && err != EINPROGRESS && err != EINTR)
			connect_failed(c, t_out, err);
	}
	obs_conn_unlock(c);
}

__attribute__((always_inline)) inline void
obs_xm_local_addr(struct obs_conn *c, const void *addr, uint16_t port)
{
	struct obs_conn_body *cb = &c->crec->u.conn;

	memcpy(cb->local_addr, addr, sizeof(cb->local_addr));
	cb->local_port = port;
}

void obs_xm_so_error(struct obs_conn *c, int64_t t_out, int so_error)
{
	obs_conn_lock(c);
	if (c->phase == OBS_PH_CONNECTING) {
		if (so_error == 0)
			connect_up(c, t_out, OBS_T2_SO_ERROR);
		else if (so_error != EINPROGRESS && so_error != EALREADY)
			connect_failed(c, t_out, so_error);
	} else if (so_error != 0) {
		note_fatal_errno(c, so_error);
	}
	obs_conn_unlock(c);
}

/* A send whose answer came first (another thread began its exchange x,
 * begun_for_send) returned at t_out: the request had left by the entry of
 * the receive that brought the answer, or, when that receive was waiting
 * already before T3, by its first byte. T4 is the send's return but no
 * later than that, and T5 no earlier than T4: T3 <= T4 <= T5 <= TFB. */
static void answered_send(struct obs_exch_body *x, int64_t t_out)
{
	int64_t bound = x->t5 > x->t3 ? x->t5 : x->tfb;
	int64_t t4 = bound && bound < t_out ? bound : t_out;

	if (t4 > x->t4)
		x->t4 = t4;
	if (x->t5 < x->t4)
		x->t5 = x->t4;
}

void obs_xm_send_done(struct obs_conn *c, bool counted, int64_t t_in,
		      int64_t t_out, ssize_t ret, int err,
		      const struct obs_data *d)
{
	struct obs_exch_body *x;
	unsigned int types = 0, records = 0;
	bool split = false;

	obs_conn_lock(c);
	if (counted && c->sends_inflight > 0)
		c->sends_inflight--;
	/* its buffers are the caller's again once it returns (and its own
	 * bookkeeping reads them from d) */
	if ((c->tx_pred == OBS_TXP_BYTES || c->tx_pred == OBS_TXP_UNREAD) &&
	    d && c->tx_id == d->iov)
		c->tx_pred = OBS_TXP_NONE;
	if (ret <= 0) {
		if (ret < 0 && is_transient(err)) {
			/* An attempt that moved nothing still starts the wait
			 * for the next exchange (T3 is the first attempt). */
			if (c->xphase != OBS_X_SENDING && !c->pending_send)
				c->pending_send = t_in ? t_in : t_out;
		} else if (ret < 0 && c->phase == OBS_PH_CONNECTING) {
			connect_failed(c, t_out, err); /* learned by I/O */
		} else if (ret < 0) {
			note_fatal_errno(c, err);
		}
		if (c->x_label_late && d && c->tx_id == d->iov)
			c->x_label_late = false; /* it sent nothing */
		if (c->sends_inflight == 0)
			c->begun_for_send = false;
		obs_conn_unlock(c);
		return;
	}
	if (!t_in)
		t_in = t_out; /* the lock-free hint was stale */
	if (c->syn_data)
		c->syn_data = false; /* its bytes went with the SYN: no T2 */
	else if (c->phase == OBS_PH_CONNECTING)
		connect_up(c, t_in, OBS_T2_FIRST_IO);
	if (c->proto == OBS_PROTO_TLS) {
		/* an application-data record's header begun in the last send */
		split = c->tls.have > 0 && c->tls.hdr[0] == 23;
		types = tls_send(c, d, &records);
	}
	if (UNLIKELY(h2_or_alert(c, d)) &&
	    obs_xh2_send(c, t_in, t_out, ret, d)) {
		obs_conn_unlock(c); /* HTTP/2, or TLS alerts (exchange_h2.c) */
		return;
	}
	if (c->begun_for_send) {
		/* Its answer came first (another thread): the exchange exists
		 * and stays in its receiving phase. */
		x = &c->xrec->u.exch;
		if (UNLIKELY(c->proto == OBS_PROTO_UNKNOWN)) {
			/* the answer told nothing (answer_tells): the
			 * protocol from the bytes, for the exchanges after */
			first_bytes(c, d, true);
			if (c->proto == OBS_PROTO_TLS)
				types = tls_send(c, d, &records);
		}
		if (c->x_label_late && d && c->tx_id == d->iov)
			label_late(c, x, d);
		if (c->sends_inflight == 0)
			c->begun_for_send = false;
		answered_send(x, t_out);
		add_records(x, records);
		x->ds += (uint64_t)ret;
		x->send_calls++;
		obs_conn_unlock(c);
		return;
	}
	if (c->xphase != OBS_X_SENDING) {
		if (!counted)
			c->tx_pred = OBS_TXP_NONE; /* not read at its entry */
		if (c->proto == OBS_PROTO_UNKNOWN) {
			first_bytes(c, d, true);
			if (c->proto == OBS_PROTO_TLS)
				types = tls_send(c, d, &records);
		}
		x = begin_for_send(c, c->pending_send ? c->pending_send : t_in,
				   types, c->tls.lost, d, NULL);
		__atomic_store_n(&c->xphase, OBS_X_SENDING, __ATOMIC_RELAXED);
	} else {
		x = &c->xrec->u.exch;
		if (c->x_handshake && (types & OBS_TLS_APPDATA))
			x = request_after_handshake(c, t_in, split);
	}
	add_records(x, records);
	x->t4 = t_out;
	x->t5 = 0; /* T5 is the first receive after the *last* send */
	x->ds += (uint64_t)ret;
	x->send_calls++;
	obs_conn_unlock(c);
}

void obs_xm_send(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		 int err, const struct obs_data *d)
{
	bool counted = obs_xm_send_begin(c, t_in ? t_in : t_out, d);

	obs_xm_send_done(c, counted, t_in, t_out, ret, err, d);
}

/* The largest application-data record taken for a TLS 1.3 session
 * ticket (OpenSSL's are 250 bytes, BoringSSL's and Go's a little more). */
#define OBS_TLS_TICKET_MAX 640

/* What the server's TLS records that begin in a receive (ret bytes) say
 * of the first answer (see enum obs_rx_first). */
enum obs_rx_records {
	OBS_RX_NONE,  /* no record begins here: the body of an earlier one */
	OBS_RX_MAYBE, /* records that may be no answer: 1.3 tickets (small
		       * application data), handshake, change cipher spec */
	OBS_RX_ANSWER /* a record that is the answer (or not TLS any more) */
};

static enum obs_rx_records tls_rx_records(struct obs_conn *c,
					  const struct obs_data *d, size_t ret)
{
	struct obs_tls_walk *w = &c->tls_rx;
	unsigned int records = 0, appdata = 0, types = 0;
	size_t left = ret;
	bool tls13 = c->tls_versioned && !(c->tls_seen & OBS_TLS_HANDSHAKE);

	if (!d || !d->iov)
		return OBS_RX_ANSWER;
	w->longest_appdata = 0;
	for (int i = 0; i < d->iovcnt && left > 0; i++) {
		size_t n = d->iov[i].iov_len < left ? d->iov[i].iov_len : left;
		types |= obs_tls_feed(w, d->iov[i].iov_base, n, &records,
				      &appdata);
		left -= n;
	}
	if (w->lost || (types & OBS_TLS_ALERT))
		return OBS_RX_ANSWER;
	if (records == 0)
		return OBS_RX_NONE;
	if ((types & OBS_TLS_APPDATA) &&
	    (!tls13 || w->longest_appdata > OBS_TLS_TICKET_MAX))
		return OBS_RX_ANSWER;
	return OBS_RX_MAYBE;
}

/* A receive brought the first answer (d, its bytes, written by the
 * kernel) on connection c while its first send is under way, not read
 * (OBS_TXP_UNREAD): the answer tells what that send was. A TLS server
 * answers a ClientHello with a handshake record (22) or an alert (21),
 * each of version 3.x: the send was a TLS hello, its exchange the
 * handshake's. Anything else: bytes that may be an HTTP/1.x request
 * (the status of the answer is read, and the send labels its exchange
 * when it returns, or takes the status back: label_late). Under the
 * lock. */
static void answer_tells(struct obs_conn *c, const struct obs_data *d)
{
	uint8_t head[2];
	size_t n = 0;
	const uint8_t *p = data_head(d, head, sizeof(head), &n);

	if (n >= 2 && (p[0] == 22 || p[0] == 21) && p[1] == 3) {
		tls_found(c);
		c->tx_types = OBS_TLS_HANDSHAKE;
		c->tx_lost = false;
		c->tx_pred = OBS_TXP_OTHER;
	} else {
		c->tx_pred = OBS_TXP_BYTES;
	}
}

/* A receive of the HTTP exchange x brought n > 0 bytes (d), and its status
 * is not read yet. The usual case first: the status line's first twelve
 * bytes (all obs_http_status reads) in the first buffer of the answer's
 * first receive; found or not, that is its status. */
static inline __attribute__((always_inline)) void
recv_status(struct obs_conn *c, struct obs_exch_body *x,
	    const struct obs_data *d, size_t n, bool peek)
{
	if (c->plain_head_seq != c->exch_seq && n >= 12 && d && d->iov &&
	    d->iovcnt > 0 && d->iov[0].iov_len >= 12) {
		x->status = obs_http_status(d->iov[0].iov_base, 12);
		c->plain_rx_seq = c->exch_seq;
	} else {
		obs_xm_status(c, x, d, n, peek);
	}
}

void obs_xm_recv(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		 int err, bool peek, const struct obs_data *d)
{
	enum obs_rx_records rx = OBS_RX_ANSWER;

	struct obs_exch_body *x;

	obs_conn_lock(c);
	if (!t_in)
		t_in = t_out;
	if (ret < 0) {
		if (is_transient(err)) {
			if (c->xphase == OBS_X_SENDING) {
				if (!c->xrec->u.exch.t5)
					c->xrec->u.exch.t5 = after_t4(
						&c->xrec->u.exch, t_in);
			} else if (c->xphase == OBS_X_NONE &&
				   !c->pending_recv && c->phase == OBS_PH_UP) {
				c->pending_recv = t_in;
			}
		} else if (c->phase == OBS_PH_CONNECTING) {
			connect_failed(c, t_out, err); /* learned by I/O */
		} else {
			note_fatal_errno(c, err);
		}
		obs_conn_unlock(c);
		return;
	}
	if (ret == 0) { /* end of stream: the peer closed */
		if (c->xphase == OBS_X_SENDING && !c->xrec->u.exch.t5)
			c->xrec->u.exch.t5 = after_t4(&c->xrec->u.exch, t_in);
		if (!c->eof) {
			c->eof = true;
			c->crec->u.conn.teof = t_out;
		}
		obs_conn_unlock(c);
		return;
	}
	if (c->phase == OBS_PH_CONNECTING)
		connect_up(c, t_in, OBS_T2_FIRST_IO);
	if (UNLIKELY(h2_or_alert(c, d)) &&
	    obs_xh2_recv(c, t_in, t_out, ret, peek, d)) {
		obs_conn_unlock(c); /* HTTP/2, or TLS alerts (exchange_h2.c) */
		return;
	}
	if (UNLIKELY(c->tx_pred == OBS_TXP_UNREAD) && c->sends_inflight > 0 &&
	    !c->begun_for_send && c->proto == OBS_PROTO_UNKNOWN && d && d->iov)
		answer_tells(c, d);
	if (c->proto == OBS_PROTO_TLS && c->rx_first != OBS_RX_DONE && !peek)
		rx = tls_rx_records(c, d, (size_t)ret);
	if (c->sends_inflight > 0 && !c->begun_for_send &&
	    (c->xphase != OBS_X_SENDING ||
	     (c->x_handshake && c->tx_pred != OBS_TXP_NONE &&
	      (c->tx_types & OBS_TLS_APPDATA)))) {
		/* Another thread's send that begins an exchange is under way
		 * and bytes come back: they answer it. Its exchange begins
		 * here, with what the send carries (noted at its entry, or
		 * told by this answer: answer_tells); the
		 * send adds T4 and Ds when it returns. A receive already
		 * waiting when the send began starts the response at T3. */
		bool pred = c->tx_pred != OBS_TXP_NONE;
		int64_t t3 = c->xphase == OBS_X_SENDING ? c->tx_t3
			     : c->pending_send		? c->pending_send
							: t_in;

		bool after_hs = c->xphase == OBS_X_SENDING; /* x_handshake */

		x = begin_for_send(c, t3, pred ? c->tx_types : 0,
				   pred && c->tx_lost, NULL, NULL);
		if (after_hs)
			c->x_after_handshake = true;
		x->t5 = t_in > x->t3 ? t_in : x->t3;
		c->begun_for_send = true;
		/* the send still under way has its exchange now: nothing for
		 * the slicer to make of its entry if it never returns */
		obs_xm_send_returned(c);
	} else if (c->xphase == OBS_X_NONE) {
		/* The server speaks first (a banner): an exchange with no send.
		 */
		x = exchange_begin(c);
		x->flags |= OBS_XF_SERVER_FIRST;
		x->t5 = c->pending_recv ? c->pending_recv : t_in;
		c->pending_recv = 0;
	} else {
		x = &c->xrec->u.exch;
		if (!x->t5)
			x->t5 = after_t4(x, t_in);
	}
	__atomic_store_n(&c->xphase, OBS_X_RECEIVING, __ATOMIC_RELAXED);
	if (c->rx_first == OBS_RX_PROVISIONAL && x->tfb && rx != OBS_RX_NONE) {
		/* a record begins: the ones before were no answer; this one
		 * is, or may be (the last that may be counts) */
		x->tfb = t_out;
		if (rx == OBS_RX_ANSWER)
			c->rx_first = OBS_RX_DONE;
	}
	if (!x->tfb) {
		x->tfb = t_out;
		/* only where the client's last handshake flight went out
		 * with the request: the server answers that flight first */
		if (c->proto == OBS_PROTO_TLS && !c->x_handshake &&
		    c->rx_first == OBS_RX_WALK)
			c->rx_first = rx == OBS_RX_MAYBE && c->x_after_handshake
					      ? OBS_RX_PROVISIONAL
					      : OBS_RX_DONE;
	}
	if (c->x_http && c->plain_rx_seq != c->exch_seq)
		recv_status(c, x, d, (size_t)ret, peek);
	if (c->x_handshake && c->irec)
		c->irec->u.info.tls_end = t_out;
	x->t6 = t_out;
	if (peek)
		x->flags |= OBS_XF_PEEKED;
	else
		x->dr += (uint64_t)ret;
	x->recv_calls++;
	if (c->sends_inflight == 0)
		c->pending_send = 0;
	obs_conn_unlock(c);
}

/* ---- the plain connection ---- */

/* A plain HTTP/1.x connection: up, no TLS, no HTTP/2, no Fast Open data
 * on its way, no exchange begun by a receive for a send under way, the
 * last exchange no handshake's. Under the lock. */
static inline bool plain_but_proto(const struct obs_conn *c)
{
	return obs_xm_kind_is(c, OBS_PROTO_UNKNOWN, 0);
}

/* A plain connection: HTTP/1.x, or another protocol that is no TLS
 * (OBS_PROTO_OTHER), with none of the cases the general way is for. */
static inline bool plain(const struct obs_conn *c)
{
	return obs_xm_kind_is(c, OBS_PROTO_HTTP, OBS_PROTO_HTTP);
}

/* ... and HTTP/1.x. */
static inline bool plain_http(const struct obs_conn *c)
{
	return obs_xm_kind_is(c, OBS_PROTO_HTTP, 0xff);
}

/* ---- the announced send (obs_xm_send_announce) ---- */

void obs_xm_claim(struct obs_conn *c)
{
	uint64_t a = __atomic_load_n(&c->ann, __ATOMIC_RELAXED);
	int64_t t3 = (int64_t)(a & ~OBS_ANN_CLAIMED);

	if (!a || (a & OBS_ANN_CLAIMED))
		return; /* settled, or claimed and its sender not back yet */
	/* obs_xm_send_begin's registration, for bytes on a connection that
	 * speaks HTTP/1.x, or a connection's first send (OBS_TXP_UNREAD):
	 * nothing read, their address is the sender's to put in (OBS_ANN_ID
	 * until then) */
	c->ann_counted = false;
	if (c->xphase != OBS_X_SENDING || c->x_handshake) {
		if (c->sends_inflight == 0 && !c->begun_for_send) {
			c->tx_pred = OBS_TXP_NONE;
			if ((c->proto == OBS_PROTO_HTTP ||
			     c->proto == OBS_PROTO_UNKNOWN) &&
			    c->h2mode == OBS_H2M_NONE) {
				c->tx_t3 = t3;
				c->tx_types = 0;
				c->tx_lost = false;
				c->tx_id = OBS_ANN_ID;
				c->tx_pred = c->proto == OBS_PROTO_UNKNOWN
						     ? OBS_TXP_UNREAD
						     : OBS_TXP_BYTES;
			}
		}
		c->sends_inflight++;
		if (c->xphase != OBS_X_SENDING && !c->pending_send)
			c->pending_send = t3;
		c->ann_counted = true;
	}
	__atomic_store_n(&c->ann, a | OBS_ANN_CLAIMED, __ATOMIC_RELAXED);
}

/* The sender of the announcement in c->ann (d: its buffers), back under
 * the lock: the announcement cleared, and what obs_xm_send_begin would
 * have returned. Not claimed: registered now (no locked section ran since
 * it was made, or it would have claimed it). */
static inline __attribute__((always_inline)) bool
settle(struct obs_conn *c, const struct obs_data *d)
{
	uint64_t a = __atomic_load_n(&c->ann, __ATOMIC_RELAXED);
	bool counted;

	if (!(a & OBS_ANN_CLAIMED))
		obs_xm_claim(c);
	if (c->tx_id == OBS_ANN_ID)
		c->tx_id = d->iov;
	counted = c->ann_counted;
	__atomic_store_n(&c->ann, 0, __ATOMIC_RELAXED);
	return counted;
}

bool obs_xm_send_settle(struct obs_conn *c, const struct obs_data *d)
{
	bool counted;

	obs_spin_lock(&c->lock);
	counted = settle(c, d);
	obs_conn_unlock(c);
	return counted;
}

/* A request on a plain HTTP/1.x connection that is the same as one
 * remembered (the connection's last, or this thread's: to its Host line),
 * whose HTTP record is in this segment: what begin_for_send does for it,
 * without the questions whose answers that case fixes (the protocol, no
 * TLS record types, the bytes in one buffer, a label by reference). NULL,
 * with nothing changed, when it is not that case. p[0..n): the bytes
 * sent. */
static inline __attribute__((always_inline)) struct obs_exch_body *
steady_begin(struct obs_conn *c, int64_t t_in, const uint8_t *p, size_t n)
{
	uint32_t epoch = obs_record_epoch();
	struct obs_http_seen *m;
	struct obs_exch_body *x;

	if (n > OBS_HTTP_LOOK)
		n = OBS_HTTP_LOOK;
	m = http_recall(c, p, n);
	if (!m || !m->ref_seq || m->ref_epoch != epoch)
		return NULL;
	x = exchange_begin_with(c, NULL);
	__atomic_store_n(&c->x_handshake, false, __ATOMIC_RELAXED);
	c->x_http = true;
	if (LIKELY(obs_record_epoch() == epoch)) {
		http_label_ref(c, x, m);
	} else { /* a roll-over meanwhile: a record after all */
		epoch = obs_record_epoch();
		http_label(c, x, obs_record_alloc(), p, n, NULL, m, epoch);
	}
	x->t3 = c->pending_send ? c->pending_send : t_in;
	c->pending_send = 0;
	c->pending_recv = 0;
	c->tx_pred = OBS_TXP_NONE;
	return x;
}

/* The send that begins the next exchange of a plain connection of another
 * protocol (OBS_PROTO_OTHER: no label), announced and not claimed, alone:
 * its exchange, begun (xphase SENDING); NULL, with nothing changed, when
 * it is not that case. Under the lock; out of line, for the HTTP/1.x
 * way's registers. */
static __attribute__((noinline)) struct obs_exch_body *
other_begin(struct obs_conn *c, int64_t t_in, const struct obs_data *d)
{
	struct obs_exch_body *x;

	if (__atomic_load_n(&c->ann, __ATOMIC_RELAXED) != (uint64_t)t_in ||
	    !plain(c) || c->xphase == OBS_X_SENDING || c->sends_inflight != 0)
		return NULL;
	__atomic_store_n(&c->ann, 0, __ATOMIC_RELAXED);
	x = begin_for_send(c, c->pending_send ? c->pending_send : t_in, 0,
			   c->tls.lost, d, d->iov[0].iov_base);
	__atomic_store_n(&c->xphase, OBS_X_SENDING, __ATOMIC_RELAXED);
	return x;
}

/* The plain functions are inlined into the hooks that call them (the
 * layer is built with LTO), saving the call, its frame and the passing of
 * six arguments on every call; "inline" with the extern declaration of
 * exchange.h still makes this the external definition the unit tests
 * call. */
__attribute__((always_inline)) inline bool
obs_xm_send_plain(struct obs_conn *c, bool *counted_io, bool announced,
		  int64_t t_in, int64_t t_out, size_t ret,
		  const struct obs_data *d)
{
	struct obs_exch_body *x;
	bool counted = *counted_io;

	obs_spin_lock(&c->lock);
	if (announced) {
		if (LIKELY(__atomic_load_n(&c->ann, __ATOMIC_RELAXED) ==
			   (uint64_t)t_in) &&
		    (LIKELY(plain_http(c)) ||
		     (plain_but_proto(c) && c->proto == OBS_PROTO_UNKNOWN &&
		      obs_data_no_tls_hello(d) &&
		      !obs_data_begins(d, "PRI * HTTP/2.0", 14))) &&
		    c->xphase != OBS_X_SENDING && c->sends_inflight == 0) {
			/* not claimed, and the send that begins the next
			 * exchange, alone: as registered and at once taken
			 * back (the "alone" case below); a connection's
			 * first that is no TLS hello (read now: the kernel
			 * read it) is HTTP/1.x from now on, as below */
			c->proto = OBS_PROTO_HTTP;
			__atomic_store_n(&c->ann, 0, __ATOMIC_RELAXED);
			*counted_io = true;
			x = steady_begin(c, t_in, d->iov[0].iov_base, ret);
			if (!x)
				x = begin_for_send(
					c,
					c->pending_send ? c->pending_send
							: t_in,
					0, c->tls.lost, d, d->iov[0].iov_base);
			__atomic_store_n(&c->xphase, OBS_X_SENDING,
					 __ATOMIC_RELAXED);
			goto sent;
		}
		if (c->proto == OBS_PROTO_OTHER &&
		    (x = other_begin(c, t_in, d)) != NULL) {
			*counted_io = true;
			goto sent;
		}
		*counted_io = counted = settle(c, d);
	} else if (UNLIKELY(__atomic_load_n(&c->ann, __ATOMIC_RELAXED))) {
		obs_xm_claim(c); /* another send's */
	}
	if (UNLIKELY(!plain_but_proto(c) || c->proto == OBS_PROTO_TLS)) {
		obs_conn_unlock(c);
		return false;
	}
	if (UNLIKELY(c->proto == OBS_PROTO_UNKNOWN)) {
		/* a connection's first request: bytes that are no TLS hello
		 * and no HTTP/2 preface (obs_xh2_wanted's, in the hook) */
		if (!counted || c->xphase == OBS_X_SENDING ||
		    c->sends_inflight != 1 || c->tx_pred != OBS_TXP_UNREAD ||
		    c->tx_id != d->iov || !obs_data_no_tls_hello(d) ||
		    obs_data_begins(d, "PRI * HTTP/2.0", 14)) {
			obs_conn_unlock(c);
			return false;
		}
		c->proto = OBS_PROTO_HTTP;
	}
	if (c->xphase == OBS_X_SENDING && !counted && c->sends_inflight == 0) {
		/* a send in the middle of the request */
		x = &c->xrec->u.exch;
	} else if (c->xphase != OBS_X_SENDING && counted &&
		   c->sends_inflight == 1) {
		/* the send that begins the next exchange, alone */
		c->sends_inflight = 0;
		if (!t_in)
			t_in = t_out; /* the lock-free hint was stale */
		x = begin_for_send(c, c->pending_send ? c->pending_send : t_in,
				   0, c->tls.lost, d, d->iov[0].iov_base);
		__atomic_store_n(&c->xphase, OBS_X_SENDING, __ATOMIC_RELAXED);
	} else {
		obs_conn_unlock(c);
		return false;
	}
	if ((c->tx_pred == OBS_TXP_BYTES || c->tx_pred == OBS_TXP_UNREAD) &&
	    c->tx_id == d->iov)
		c->tx_pred = OBS_TXP_NONE;
sent:
	x->t4 = t_out;
	x->t5 = 0; /* T5 is the first receive after the *last* send */
	x->ds += (uint64_t)ret;
	x->send_calls++;
	obs_conn_unlock(c);
	return true;
}

/* The status of an answer that begins at p (12 bytes there): the last
 * one's, when it began with the same bytes. */
static inline __attribute__((always_inline)) uint16_t
status_of(struct obs_conn *c, const uint8_t *p)
{
	uint64_t a;
	uint32_t b;

	memcpy(&a, p, sizeof(a));
	memcpy(&b, p + 8, sizeof(b));
	if (LIKELY(a == c->status_a && b == c->status_b))
		return c->status_last;
	c->status_a = a;
	c->status_b = b;
	c->status_last = obs_http_status(p, 12);
	return c->status_last;
}

__attribute__((always_inline)) inline bool
obs_xm_recv_plain(struct obs_conn *c, int64_t t_in, int64_t t_out, size_t ret,
		  const void *buf)
{
	struct obs_exch_body *x;
	uint16_t status = 0;
	bool status_now = false;

	obs_conn_lock(c);
	if (UNLIKELY(!plain(c) || c->sends_inflight ||
		     c->xphase == OBS_X_NONE ||
		     c->rx_first == OBS_RX_PROVISIONAL))
		goto decline;
	if (c->xphase == OBS_X_SENDING) {
		/* an answer's first bytes: its status, the usual case as
		 * recv_status's, read once for both questions; a 101 goes
		 * the general way (HTTP/2 may follow) */
		if (c->x_http && c->plain_rx_seq != c->exch_seq &&
		    c->plain_head_seq != c->exch_seq && ret >= 12) {
			status = status_of(c, buf);
			status_now = true;
			if (UNLIKELY(status == 101))
				goto decline;
		} else if (ret >= 12 && !memcmp(buf, "HTTP/1.1 101", 12)) {
			goto decline;
		}
	}
	x = &c->xrec->u.exch;
	if (UNLIKELY(ret == 0)) { /* end of stream: the peer closed */
		if (c->xphase == OBS_X_SENDING && !x->t5)
			x->t5 = after_t4(x, t_in ? t_in : t_out);
		if (!c->eof) {
			c->eof = true;
			c->crec->u.conn.teof = t_out;
		}
		obs_conn_unlock(c);
		return true;
	}
	if (c->xphase == OBS_X_SENDING) {
		if (!x->t5)
			x->t5 = after_t4(x, t_in ? t_in : t_out);
		__atomic_store_n(&c->xphase, OBS_X_RECEIVING, __ATOMIC_RELAXED);
	}
	if (!x->tfb)
		x->tfb = t_out;
	if (status_now) {
		x->status = status;
		c->plain_rx_seq = c->exch_seq;
	} else if (c->x_http && c->plain_rx_seq != c->exch_seq) {
		struct iovec v = { (void *)buf, ret };
		const struct obs_data d = { &v, 1, ret, OBS_TLSIN_NONE };

		recv_status(c, x, &d, ret, false);
	}
	x->t6 = t_out;
	x->dr += (uint64_t)ret;
	x->recv_calls++;
	c->pending_send = 0;
	obs_conn_unlock(c);
	return true;
decline:
	obs_conn_unlock(c);
	return false;
}

void obs_xm_shutdown(struct obs_conn *c, int64_t t_out, int how)
{
	obs_conn_lock(c);
	if (!c->crec->u.conn.tshut)
		c->crec->u.conn.tshut = t_out;
	if (how == SHUT_WR || how == SHUT_RDWR)
		c->crec->u.conn.flags |= OBS_CF_SHUTDOWN_WR;
	obs_conn_unlock(c);
}

void obs_xm_close(struct obs_conn *c, int64_t t_out)
{
	obs_xm_end(c, t_out, OBS_END_NONE);
}

static inline __attribute__((always_inline)) void
end_locked(struct obs_conn *c, int64_t t_out, uint8_t end_class)
{
	struct obs_conn_body *cb = &c->crec->u.conn;

	if (c->h2)
		obs_xh2_end(c); /* HTTP/2 streams still open */
	if (c->xrec && c->xrec != &c->scratch) {
		struct obs_exch_body *x = &c->xrec->u.exch;
		/* TLS 1.3's close_notify: one short encrypted record, sent last
		 * and unanswered (1.2's is an alert record: never a request) */
		if (c->proto == OBS_PROTO_TLS && x->seq > 1 && x->tfb == 0 &&
		    x->tls_records == 1 && x->ds <= 32)
			x->flags |= OBS_XF_TLS_ALERT;
		record_complete(c->xrec);
	}
	/* an error that ended it wins; the process's exit does not when the
	 * program still closes afterwards (a later destructor) */
	if (cb->end_class == OBS_END_NONE || cb->end_class == OBS_END_EXIT)
		cb->end_class = end_class != OBS_END_NONE ? end_class
				: c->eof		  ? OBS_END_SERVER_CLOSE
					 : OBS_END_CLIENT_CLOSE;
	cb->t7 = t_out;
	c->phase = OBS_PH_CLOSED;
	if (c->sink.put) /* OBSERVE_CAPTURE=events (events.c) */
		obs_cap_close(&c->cap, t_out,
			      end_class == OBS_END_LOST ? OBS_EVF_LOST : 0);
	/* the program's headers: not kept beyond the connection (te: a
	 * request was remembered, maybe since forgotten, its len 0) */
	if (c->http_seen.len || c->http_seen.te)
		memset(&c->http_seen, 0, sizeof(c->http_seen));
	if (c->irec)
		record_complete(c->irec);
	record_complete(c->crec);
}

void obs_xm_end(struct obs_conn *c, int64_t t_out, uint8_t end_class)
{
	obs_conn_lock(c);
	end_locked(c, t_out, end_class);
	obs_conn_unlock(c);
}

static void tcp_info_locked(struct obs_conn *c, const struct obs_tcp_info *ti)
{
	struct obs_info_body *info = info_of(c);

	if (info) {
		info->rtt_us = ti->rtt_us;
		info->rttvar_us = ti->rttvar_us;
		info->min_rtt_us = ti->min_rtt_us;
		info->retrans = ti->retrans;
		info->snd_cwnd = ti->snd_cwnd;
		info->pmtu = ti->pmtu;
		info->delivery_rate = ti->delivery_rate;
		info->flags |= OBS_IF_TCPINFO;
	}
}

/* Inlined, with end_locked, into conn_unref_info and so into close: one
 * frame for the close instead of four (~60 instructions a connection). */
__attribute__((always_inline)) inline bool
obs_xm_unref(struct obs_conn *c, int64_t t_out, uint8_t end_class,
	     const struct obs_tcp_info *ti)
{
	bool last;

	obs_conn_lock(c);
	last = --c->refs <= 0;
	if (last) {
		if (ti)
			tcp_info_locked(c, ti);
		end_locked(c, t_out, end_class);
	}
	obs_conn_unlock(c);
	return last;
}

/* The records a connection's end completes: its own, the current
 * exchange's (not the handshake's scratch) and the info record. */
static void conn_records_state(struct obs_conn *c, bool complete)
{
	struct obs_record *recs[3] = { c->crec,
				       c->xrec != &c->scratch ? c->xrec : NULL,
				       c->irec };

	obs_xh2_records_state(c, complete);
	for (int i = 0; i < 3; i++) {
		if (!recs[i])
			continue;
		if (complete)
			record_complete(recs[i]);
		else
			__atomic_store_n(&recs[i]->state,
					 recs[i]->state & ~OBS_RS_COMPLETE,
					 __ATOMIC_RELEASE);
	}
}

void obs_xm_exit(struct obs_conn *c, int64_t t)
{
	struct obs_conn_body *cb;

	obs_conn_lock(c);
	cb = &c->crec->u.conn;
	if (c->phase != OBS_PH_CLOSED && cb->end_class == OBS_END_NONE) {
		cb->end_class = OBS_END_EXIT;
		cb->t7 = t;
		if (c->sink.put) /* OBSERVE_CAPTURE=events (events.c) */
			obs_cap_close(&c->cap, t, OBS_EVF_EXIT);
		conn_records_state(c, true);
	}
	obs_conn_unlock(c);
}

void obs_xm_exit_undo(struct obs_conn *c)
{
	struct obs_conn_body *cb;

	obs_conn_lock(c);
	cb = &c->crec->u.conn;
	if (c->phase != OBS_PH_CLOSED && cb->end_class == OBS_END_EXIT) {
		cb->end_class = OBS_END_NONE;
		cb->t7 = 0;
		conn_records_state(c, false);
	}
	obs_conn_unlock(c);
}

void obs_xm_dns(struct obs_conn *c, const char *name, int64_t t_start,
		int64_t t_end)
{
	struct obs_info_body *info;

	obs_conn_lock(c);
	info = info_of(c);
	if (info) {
		memcpy(info->dns_name, name, sizeof(info->dns_name));
		if (t_start) {
			info->dns_start = t_start;
			info->dns_end = t_end;
			info->flags |= OBS_IF_DNS;
		}
	}
	obs_conn_unlock(c);
}
