/* exchange.h - the exchange state machine: turns the calls a program makes on
 * one connection into a connection record and a run of exchange records.
 *
 * Pure logic: no system calls, no clocks, no allocation. The hooks read the
 * clock around the real call and hand the result here; the unit tests feed
 * scripted call sequences. Records come from obs_record_alloc(), which the
 * layer implements on the spool mapping and the tests on an array.
 *
 * Locking: the obs_xm_* functions called on a connection that is in the fd
 * table take its lock (obs_conn_lock) for their bookkeeping and release it
 * before they return; the caller must not hold it (it is not recursive).
 * obs_xm_connect_first and obs_xm_local_addr take none: they run before the
 * connection is in the table, when no other thread can reach it. The
 * obs_xm_*_needs_entry hints read without it. The order of the layer's
 * locks is written down in layer.h.
 */
#ifndef OBSERVE_EXCHANGE_H
#define OBSERVE_EXCHANGE_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "capture.h"
#include "proto.h"
#include "spool_format.h"

/* What a send or receive moved: the first len bytes of the buffers (the
 * hooks pass it; NULL when the call has no buffer to look at). */
struct obs_data {
	const struct iovec *iov;
	int iovcnt;
	size_t len;
	uint8_t tls_in; /* enum obs_tls_in: the call is made by a hooked TLS
			 * library's function on this connection */
};

/* Which hooked TLS library function the thread is in (hooks_tls.c): the
 * socket calls it makes on the session's connection carry its records. */
enum obs_tls_in {
	OBS_TLSIN_NONE = 0,
	OBS_TLSIN_WRITE = 1,	/* SSL_write, gnutls_record_send */
	OBS_TLSIN_READ = 2,	/* SSL_read, SSL_peek, gnutls_record_recv */
	OBS_TLSIN_SHUTDOWN = 3, /* SSL_shutdown, gnutls_bye: alerts only */
};

struct obs_xh2;

enum obs_proto {
	OBS_PROTO_UNKNOWN = 0, /* nothing sent yet */
	OBS_PROTO_TLS = 1,     /* the first bytes sent were a TLS record */
	OBS_PROTO_HTTP = 2,    /* an HTTP/1.x request line */
	OBS_PROTO_OTHER = 3,
};

enum obs_phase {
	OBS_PH_CONNECTING = 1, /* connect() said EINPROGRESS */
	OBS_PH_UP = 2,	       /* established */
	OBS_PH_FAILED = 3,     /* connect failed */
	OBS_PH_CLOSED = 4,
};

/* What a send that begins an exchange carries, noted at its entry (a TLS
 * handshake's records read there; other bytes only marked). */
enum obs_tx_pred {
	OBS_TXP_NONE = 0,  /* not read (no buffer, or no such send) */
	OBS_TXP_EMPTY = 1, /* no bytes to look at */
	OBS_TXP_OTHER = 2, /* bytes, not an HTTP/1.x request (TLS records) */
	OBS_TXP_BYTES = 3, /* bytes that may be an HTTP/1.x request: not
			    * looked at before the send returns (a receive
			    * that begins its exchange first leaves the
			    * label to the send: x_label_late) */
	OBS_TXP_UNREAD = 4 /* a connection's first send: nothing of it read
			    * before the call. A receive that answers it
			    * before its bookkeeping tells its protocol from
			    * the answer (a TLS server's is a handshake
			    * record), and the send, when it returns, from
			    * its own bytes (obs_xm_recv, first_bytes) */
};

enum obs_xphase {
	OBS_X_NONE = 0,	     /* no exchange yet */
	OBS_X_SENDING = 1,   /* exchange k has sent, nothing received yet */
	OBS_X_RECEIVING = 2, /* exchange k has received at least one byte */
};

/* A TLS connection's first request: is the first byte received the
 * answer's? Session tickets after a 1.3 handshake (small application-data
 * records the server sends when it reads the client's Finished, before it
 * has read the request) and the end of a 1.2 False Start handshake are
 * not: TFB moves to the next receive that brings bytes. */
enum obs_rx_first {
	OBS_RX_WALK,	    /* following the server's records */
	OBS_RX_PROVISIONAL, /* TFB so far: records that may be no answer */
	OBS_RX_DONE	    /* TFB is the answer's; stop looking */
};

struct obs_conn {
	int lock; /* spin lock, see obs_conn_lock() */
	int refs; /* fds that refer to this connection */
	/* What says whether the connection is a plain HTTP/1.x one
	 * (exchange.c, plain()), read as one word under the lock. */
	union {
		struct {
			uint8_t phase;	     /* enum obs_phase */
			uint8_t proto;	     /* enum obs_proto */
			uint8_t h2mode;	     /* enum obs_h2mode */
			bool syn_data;	     /* TCP Fast Open: the next
					      * send that moves bytes sends
					      * them with the SYN */
			bool begun_for_send; /* a receive began the
					      * exchange of a send under way
					      */
			bool x_handshake;    /* TLS: the current exchange
					      * is no request (yet): it
					      * lives in scratch */
		};
		uint64_t kind_word;
	};
	uint8_t xphase;	      /* enum obs_xphase */
	bool eof;	      /* a receive returned 0 */
	uint32_t exch_seq;    /* number of the current exchange, 0 if none */
	int64_t pending_send; /* entry of a failed send attempt before exchange
			       */
	int64_t pending_recv; /* entry of a receive attempt not yet in T5 */
	uint32_t sends_inflight; /* sends between obs_xm_send_begin and _done
				  * that will start an exchange */
	/* What the first of those sends carries, read from its buffers at
	 * its entry (obs_xm_send_begin), for the receive that may begin its
	 * exchange before the send's own bookkeeping (and for that). */
	uint8_t tx_pred;	 /* enum obs_tx_pred */
	uint8_t tx_types;	 /* its TLS record types (OBS_TLS_*) */
	bool tx_lost;		 /* ... after which the TLS walk gave up */
	int64_t tx_t3;		 /* its entry */
	const void *tx_id;	 /* that send's iovec array: which send it was
				  * (compared, never read through) */
	bool x_label_late;	 /* the current exchange was begun by a
				  * receive while its send (tx_id, an
				  * OBS_TXP_BYTES one) was under way: that
				  * send labels it when it returns */
	struct obs_record *crec; /* connection record (never NULL once open) */
	struct obs_record *xrec; /* current exchange record, or NULL */
	struct obs_record *irec; /* info record (TLS, TCP_INFO), or NULL */
	bool x_http;		 /* the current exchange is an HTTP request */
	bool tls_versioned;	 /* the TLS version was told */
	bool tls_hello;		 /* TLS: the ClientHello's records are not
				  * walked yet (its send is under way) */
	uint8_t tls_seen;	 /* OBS_TLS_* sent after the hello, before
				  * the first request */
	struct obs_tls_walk tls;
	struct obs_tls_walk tls_rx; /* the server's records, until the first
				     * answer's first byte is sure */
	uint8_t rx_first;	    /* enum obs_rx_first */
	bool x_after_handshake;	    /* the current exchange began as the
				     * handshake's last flight */
	struct obs_conn *next_free;
	/* HTTP/2 and the plaintext of TLS (exchange_h2.c) */
	struct obs_xh2 *h2;	 /* the streams' state, NULL unless HTTP/2 */
	bool tls_plain;		 /* a hooked TLS library shows the plaintext */
	bool tls_alpn_asked;	 /* ... and was asked its protocol after a
				  * call that moved plaintext (a hint) */
	uint32_t plain_tx_seq;	 /* exchange labelled from a plaintext write */
	uint32_t plain_rx_seq;	 /* ... whose status was read (or given up) */
	uint32_t plain_head_seq; /* the exchange whose answer's first */
	uint8_t plain_head[16];	 /* bytes are gathered here, across short */
	uint8_t plain_head_n;	 /* reads (obs_xm_status; plain or TLS) */
	int64_t tls_tx_in;	 /* h2 over TLS: entry of the first socket send
				  * since the last plaintext write */
	int64_t tls_tx_out;	 /* ... return of the last */
	int64_t tls_rx_in;	 /* the last socket receive that brought bytes:
				  * its entry */
	int64_t tls_rx_out;	 /* ... and return */
	/* A send announced without the lock (obs_xm_send_announce): its
	 * entry time, OBS_ANN_CLAIMED added once a locked section registered
	 * it (obs_xm_claim); 0: none. Only its sender clears it, under the
	 * lock (it holds it from the announcement to its bookkeeping). */
	uint64_t ann;
	bool ann_counted; /* what the claim's registration said (counted) */
	/* Not zeroed for a new connection (obs_conn_clear): made ready where
	 * they begin to be used. */
	struct obs_record scratch;	/* the TLS handshake's exchanges: zeroed
					 * by handshake_begin */
	struct obs_http_seen http_seen; /* the last request, to its Host line:
					 * nothing while len is 0 */
	/* The first 12 bytes of the last answer whose status the plain way
	 * read, and that status (obs_http_status, a function of those bytes
	 * alone): the next answer the same is not parsed again. Right from
	 * any earlier connection too: never cleared. */
	uint64_t status_a;
	uint32_t status_b;
	uint16_t status_last;
	/* OBSERVE_CAPTURE=events (events.c): the capture of the connection's
	 * calls, and where its events go. Made ready at connect. */
	struct obs_capture cap;
	struct obs_sink sink;
	/* the record of the last call event, while the HTTP/1 fact that
	 * comes right after it may still ride in it (events.c) */
	struct obs_record *ev_call;
};

/* A connection as new: every field zero but the three above, which need
 * none (three quarters of the struct, not written per connection). */
static inline void obs_conn_clear(struct obs_conn *c)
{
#if defined(__SSE2__)
	/* sixteen bytes a store, inline: memset is a call that asks the
	 * length a dozen questions, on every connect */
	_Static_assert(offsetof(struct obs_conn, scratch) % 16 == 0,
		       "obs_conn_clear's stores");
#pragma GCC unroll 32
	for (size_t i = 0; i < offsetof(struct obs_conn, scratch); i += 16)
		_mm_storeu_si128((__m128i *)(void *)((char *)c + i),
				 _mm_setzero_si128());
#else
	memset(c, 0, offsetof(struct obs_conn, scratch));
#endif
	c->http_seen.len = 0;
}

/* Whether and how a connection speaks HTTP/2 (obs_conn.h2mode). */
enum obs_h2mode {
	OBS_H2M_NONE = 0,    /* no: exchanges by the direction of data */
	OBS_H2M_PRIOR = 1,   /* h2c, prior knowledge: the sends are followed */
	OBS_H2M_UPGRADE = 2, /* h2c after an HTTP/1.1 Upgrade */
	OBS_H2M_TLS = 3,     /* h2 over TLS: the plaintext calls are followed */
	OBS_H2M_LOST = 4,    /* the follower gave up: by direction again */
};

/* Provided by the user of this module: a zeroed record slot, or NULL when
 * none can be had (the spool is full); then the data is counted as lost. */
struct obs_record *obs_record_alloc(void);

/* Two adjacent-in-time slots at once (one reservation): the first is
 * returned, the second put in *second; either may be NULL. */
struct obs_record *obs_record_alloc2(struct obs_record **second);

/* Provided by the user of this module: which spool segment records go to
 * now, as a number that changes whenever that changes (a roll-over, a new
 * spool after fork). An exchange refers to an earlier one's HTTP record
 * (obs_exch_body.label_seq) only where both were reserved under one
 * number. */
uint32_t obs_record_epoch(void);

/* Publish a filled record: stores kind last, with release ordering. */
void obs_record_publish(struct obs_record *rec, uint32_t kind);

/* A connect() on a tracked socket returned (ret, err). t_in/t_out are the
 * clock readings at entry and return. For the first connect the caller has
 * zeroed *c and set up nothing else; conn_seq numbers connections.
 * peer_addr: 16 bytes, an IPv4 address in the first 4 and zeros after. */
void obs_xm_connect_first(struct obs_conn *c, uint64_t conn_seq, int fd,
			  int family, const void *peer_addr, uint16_t peer_port,
			  int64_t t_in, int64_t t_out, int ret, int err);
/* A TCP Fast Open send (the connect: obs_xm_connect_first, entered at
 * t_in) moved ret > 0 bytes (d): the first exchange's first send, T3 =
 * t_in; it does not make the connection up. Before the connection is in
 * the table, as obs_xm_connect_first. */
void obs_xm_fastopen(struct obs_conn *c, int64_t t_in, int64_t t_out,
		     ssize_t ret, const struct obs_data *d);
/* connect() returned 0 on a socket with TCP_FASTOPEN_CONNECT and a Fast
 * Open cookie: the kernel deferred the SYN to the first send, so the
 * connection is not up yet (T2 comes later, as after a non-blocking
 * connect), and that send's bytes go with the SYN. Before the connection
 * is in the table. */
void obs_xm_fastopen_deferred(struct obs_conn *c);
/* Whether a connect() that returned (ret, err) goes on in the background
 * (non-blocking: EINPROGRESS; EALREADY; a blocking one interrupted: EINTR):
 * its return time is then no T2, and no clock is read for it. */
static inline bool obs_xm_connect_pending(int ret, int err)
{
	return ret != 0 &&
	       (err == EINPROGRESS || err == EINTR || err == EALREADY);
}
/* A later connect() on the same socket (non-blocking completion check)
 * returned (ret, err) at t_out (its entry time is never used: no clock read
 * before the call). */
void obs_xm_connect_again(struct obs_conn *c, int64_t t_out, int ret, int err);
/* Local address learned after connect (getsockname); addr: 16 bytes, as
 * obs_xm_connect_first's peer_addr. */
void obs_xm_local_addr(struct obs_conn *c, const void *addr, uint16_t port);
/* getsockopt(SO_ERROR) returned 0 and gave so_error. */
void obs_xm_so_error(struct obs_conn *c, int64_t t_out, int so_error);
/* A send-family call moved ret bytes (ret < 0: failed with err). */
void obs_xm_send(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		 int err, const struct obs_data *d);
/* The same in two steps, around the real call, for a send that may start
 * an exchange: a receive in another thread that returns bytes while such a
 * send is under way answers it (a connection shared by threads), and its
 * exchange begins with what the send carries: d, the bytes it asks to send
 * (len: at most that many), or NULL. Only the records of a TLS
 * connection's handshake are read before the real call (a TLS library's
 * own buffers: obs_xm_send_reads); of other sends only the buffers'
 * address is kept, never read. _begin returns whether it counted the send;
 * pass that to _done. */
static inline bool obs_xm_send_begin(struct obs_conn *c, int64_t t_in,
				     const struct obs_data *d);
/* (obs_xm_send_begin's walk of a TLS handshake's records in d, under the
 * lock, out of line.) */
void obs_xm_predict_tls(struct obs_conn *c, int64_t t_in,
			const struct obs_data *d);
void obs_xm_send_done(struct obs_conn *c, bool counted, int64_t t_in,
		      int64_t t_out, ssize_t ret, int err,
		      const struct obs_data *d);
/* A receive-family call returned ret (bytes, 0 = EOF, <0 = err); peek is
 * true for MSG_PEEK (counts for time, not for Dr). */
void obs_xm_recv(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		 int err, bool peek, const struct obs_data *d);
/* The same two for a plain HTTP/1.x connection (up, no TLS, no HTTP/2,
 * one send at a time), with fewer questions asked: the records come out
 * as from obs_xm_send_done and obs_xm_recv. For a call that moved ret > 0
 * bytes (d, no TLS library's call; a receive into one buffer, buf, that
 * is no peek: the kernel wrote buf[0..ret)). False when
 * c is not such a connection now, or the call is not the usual one:
 * nothing was done, the caller goes the general way. A receive may also
 * be an end of stream (ret 0, bytes asked for). A send's d is one buffer
 * that holds its d->len bytes (write, send). A send's entry: *counted,
 * what obs_xm_send_begin returned; or announced (obs_xm_send_announce),
 * and then *counted is set to what that entry would have returned, also
 * when the call declines (the announcement is settled then). */
bool obs_xm_send_plain(struct obs_conn *c, bool *counted, bool announced,
		       int64_t t_in, int64_t t_out, size_t ret,
		       const struct obs_data *d);
bool obs_xm_recv_plain(struct obs_conn *c, int64_t t_in, int64_t t_out,
		       size_t ret, const void *buf);
/* Whether c is up, with no HTTP/2, no Fast Open data on its way, no
 * exchange begun by a receive for a send under way and no handshake's
 * exchange, and (with_proto) its protocol is proto: what the plain
 * functions ask, under the lock; as a hint without it (obs_xm_plain_hint).
 * One masked load of kind_word. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* v in the byte of kind_word that is field */
#define OBS_KIND_BYTE(field, v)                                                \
	((uint64_t)(v) << (8 * (offsetof(struct obs_conn, field) -             \
				offsetof(struct obs_conn, kind_word))))
#define OBS_KIND_MASK                                                          \
	(OBS_KIND_BYTE(phase, 0xff) | OBS_KIND_BYTE(h2mode, 0xff) |            \
	 OBS_KIND_BYTE(syn_data, 0xff) | OBS_KIND_BYTE(begun_for_send, 0xff) | \
	 OBS_KIND_BYTE(x_handshake, 0xff))

/* proto_bits: which bits of proto must be as in proto (0: any protocol;
 * 0xff: proto; OBS_PROTO_HTTP, 2: HTTP or OTHER, 3, see
 * obs_xm_plain_hint's assertion) */
static inline bool obs_xm_kind_is(const struct obs_conn *c, uint8_t proto,
				  uint8_t proto_bits)
{
	uint64_t mask = OBS_KIND_MASK | OBS_KIND_BYTE(proto, proto_bits);
	uint64_t want = OBS_KIND_BYTE(phase, OBS_PH_UP) |
			OBS_KIND_BYTE(proto, proto & proto_bits);

	return (__atomic_load_n(&c->kind_word, __ATOMIC_RELAXED) & mask) ==
		       want &&
	       !__atomic_load_n(&c->h2, __ATOMIC_RELAXED);
}
#else
static inline bool obs_xm_kind_is(const struct obs_conn *c, uint8_t proto,
				  uint8_t proto_bits)
{
	return c->phase == OBS_PH_UP && !c->h2 && c->h2mode == OBS_H2M_NONE &&
	       !c->syn_data && !c->begun_for_send && !c->x_handshake &&
	       (c->proto & proto_bits) == (proto & proto_bits);
}
#endif

/* Whether a call on c may go the plain way: its protocol is HTTP/1.x, a
 * protocol that is neither it nor TLS (OBS_PROTO_OTHER: a database's, a
 * cache's), or not known yet (its first send): not TLS. Read without the
 * lock: a hint that keeps TLS connections from asking twice; the plain
 * functions ask the rest under the lock. */
static inline bool obs_xm_plain_hint(const struct obs_conn *c)
{
	return __atomic_load_n(&c->proto, __ATOMIC_RELAXED) != OBS_PROTO_TLS;
}
_Static_assert(OBS_PROTO_UNKNOWN == 0 && OBS_PROTO_HTTP == 2 &&
		       OBS_PROTO_TLS == 1 && OBS_PROTO_OTHER == 3,
	       "obs_xm_plain_hint's test");

/* TCP_INFO read just before the last close (struct tcp_info fields). */
struct obs_tcp_info {
	uint32_t rtt_us, rttvar_us, min_rtt_us, retrans, snd_cwnd, pmtu;
	uint64_t delivery_rate;
};
/* The name lookup that gave the peer's address: its name (NUL-padded,
 * 40 bytes), and its times when this connect is the first to use it. */
void obs_xm_dns(struct obs_conn *c, const char *name, int64_t t_start,
		int64_t t_end);
/* shutdown() returned. */
void obs_xm_shutdown(struct obs_conn *c, int64_t t_out, int how);
/* The last fd referring to the connection was closed; t_out is close()'s
 * return. Completes the records. */
void obs_xm_close(struct obs_conn *c, int64_t t_out);
/* The same with the end class given (OBS_END_NONE: as obs_xm_close): the
 * connection was found closed where the layer could not see (OBS_END_LOST,
 * t_out 0). An error that ended it already keeps its class. */
void obs_xm_end(struct obs_conn *c, int64_t t_out, uint8_t end_class);
/* One fd's reference to c goes (c->refs); the last one ends the
 * connection as obs_xm_end, with ti (NULL: none) in its info record, in
 * the same locked section. Returns whether it was the last. */
bool obs_xm_unref(struct obs_conn *c, int64_t t_out, uint8_t end_class,
		  const struct obs_tcp_info *ti);
/* The process leaves (exit, _exit, exec) at t with the connection open:
 * class OBS_END_EXIT, T7 = t, records complete. The state in memory stays:
 * a later close still ends it as usual, and obs_xm_exit_undo takes it back
 * (an exec that failed). */
void obs_xm_exit(struct obs_conn *c, int64_t t);
void obs_xm_exit_undo(struct obs_conn *c);

/* A receive of the current exchange x, an HTTP/1.x request's answer,
 * brought n bytes (d; peek: they will be read again): its status line,
 * gathered across receives until it is whole (16 bytes at most). Under
 * the lock. */
void obs_xm_status(struct obs_conn *c, struct obs_exch_body *x,
		   const struct obs_data *d, size_t n, bool peek);

/* ---- HTTP/2 and TLS plaintext (exchange_h2.c) ---- */

/* Called by obs_xm_send_done and obs_xm_recv, under the lock, for a call
 * that moved bytes: true when the call was handled there (a stream of
 * HTTP/2, the socket calls of h2 over TLS, TLS alerts of a hooked
 * shutdown), false for exchanges by direction. */
bool obs_xh2_send(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		  const struct obs_data *d);
bool obs_xh2_recv(struct obs_conn *c, int64_t t_in, int64_t t_out, ssize_t ret,
		  bool peek, const struct obs_data *d);
/* The connection ends (under the lock): its streams end, their records
 * complete, the HTTP/2 memory goes back (obs_xh2_release). */
void obs_xh2_end(struct obs_conn *c);
/* The process leaves with the connection open (complete) or stays after
 * all (!complete): the open streams' records, as conn_records_state. */
void obs_xh2_records_state(struct obs_conn *c, bool complete);

/* The first bytes of what d moved begin with s (len bytes). */
static inline bool obs_data_begins(const struct obs_data *d, const char *s,
				   size_t len)
{
	return d && d->iov && d->iovcnt > 0 && d->len >= len &&
	       d->iov[0].iov_len >= len &&
	       /* the last byte first: it tells a status line from a 101 */
	       ((const char *)d->iov[0].iov_base)[len - 1] == s[len - 1] &&
	       memcmp(d->iov[0].iov_base, s, len) == 0;
}

/* Whether a call with data d on c should have HTTP/2 memory attached first
 * (obs_xh2_attach, outside the lock): a first send that begins with the
 * client preface, or the first receive of an HTTP/1.1 exchange that begins
 * with a 101 (h2c Upgrade). A hint read without the lock; inline, as it
 * runs on every call that moves bytes. */
static inline bool obs_xh2_wanted(const struct obs_conn *c, bool send,
				  const struct obs_data *d)
{
	uint8_t proto = __atomic_load_n(&c->proto, __ATOMIC_RELAXED);

	if (send ? proto != OBS_PROTO_UNKNOWN
		 : proto != OBS_PROTO_HTTP ||
			    __atomic_load_n(&c->xphase, __ATOMIC_RELAXED) !=
				    OBS_X_SENDING)
		return false;
	if (__atomic_load_n(&c->h2, __ATOMIC_RELAXED) || !d || d->tls_in)
		return false;
	return send ? obs_data_begins(d, "PRI * HTTP/2.0", 14)
		    : obs_data_begins(d, "HTTP/1.1 101", 12);
}
/* Attach mem (from obs_xh2_alloc, not under the lock) to c unless it has
 * some already; false when mem was not taken (give it back). Takes the
 * lock. */
bool obs_xh2_attach(struct obs_conn *c, struct obs_xh2 *mem);

/* A hooked TLS library's session on c begins to show its plaintext: alpn
 * is its negotiated protocol (enum obs_app_proto, OBS_AP_NONE when none
 * yet), h2 the memory for HTTP/2 when its first plaintext write begins
 * with the client preface (else NULL). Returns false when h2 was not
 * taken. Takes the lock. */
bool obs_xm_tls_session(struct obs_conn *c, uint8_t alpn, struct obs_xh2 *h2);
/* A plaintext call of that session returned n bytes at p (tx: written;
 * else read; peek: read again later), entered at t_in, returning at t_out.
 * Labels the exchange (HTTP/1.x) or feeds the streams (h2); the times are
 * the socket calls' that carried the bytes. Takes the lock. */
void obs_xm_tls_plain(struct obs_conn *c, bool tx, bool peek, int64_t t_in,
		      int64_t t_out, const uint8_t *p, size_t n);

/* This thread's memory of the last request it labelled (see
 * obs_http_fill's bare), for the tests. */
const struct obs_http_seen *obs_xm_thread_seen(void);

/* The exchange x on c is the HTTP request req: its method, and a record
 * with its host and path (exchange.c, exchange_h2.c). Under the lock. */
void obs_xm_label(struct obs_conn *c, struct obs_exch_body *x,
		  const struct obs_http_req *req);

/* Provided by the user of this module: memory for one HTTP/2 connection
 * (NULL when none), and its return. obs_xh2_alloc runs outside any lock of
 * the layer; obs_xh2_release under a connection's. */
struct obs_xh2 *obs_xh2_alloc(void);
void obs_xh2_release(struct obs_xh2 *h);
/* Provided by the user: one diagnostic (OBSERVE_LOG=1), said once. */
void obs_xm_warn(const char *what);

/* Whether a receive or send on c needs its entry time (T3, T5, T2 cases);
 * a hint read without the lock to save a clock read on the hot path. */
static inline bool obs_xm_recv_needs_entry(const struct obs_conn *c)
{
	return __atomic_load_n(&c->xphase, __ATOMIC_RELAXED) != OBS_X_RECEIVING;
}
static inline bool obs_xm_send_needs_entry(const struct obs_conn *c)
{
	/* a TLS handshake's last flight may be followed by the request */
	return __atomic_load_n(&c->xphase, __ATOMIC_RELAXED) != OBS_X_SENDING ||
	       __atomic_load_n(&c->x_handshake, __ATOMIC_RELAXED);
}

/* A send that may begin the next exchange (obs_xm_send_needs_entry) is
 * about to be made at t_in on a connection that is not TLS: its entry
 * goes into the connection's record, for a process that never comes back
 * from it (killed, or ended, while the send blocked: an upload into a
 * full socket buffer); obs_xm_send_returned takes it back, after every
 * send (a store where a test would cost as much). The connection
 * record's own field, no lock: the sender writes it, and the slicer reads
 * it only of a process that is gone (and not of an HTTP/2 connection,
 * whose frames begin no exchange: its app_proto says so). */
static inline void obs_xm_send_opens(struct obs_conn *c, int64_t t_in)
{
	__atomic_store_n(&c->crec->u.conn.tsend_open, t_in, __ATOMIC_RELAXED);
}

static inline void obs_xm_send_returned(struct obs_conn *c)
{
	__atomic_store_n(&c->crec->u.conn.tsend_open, 0, __ATOMIC_RELAXED);
}

static inline void obs_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Whether this process has a single thread: glibc's own flag, which
 * pthread_create clears (before the new thread runs) and a fork child's
 * copy sets. While it is set no other thread exists to exclude, and none
 * can appear in the middle of the layer's bookkeeping (only the one thread
 * could create it); libstdc++ skips its atomic reference counts on the
 * same flag. Threads made by a raw clone() are not seen by it (nor by
 * libstdc++). A signal handler is no other thread: obs_inside keeps it
 * out of the bookkeeping (layer.h). */
#if defined(__GLIBC__) &&                                                      \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#include <sys/single_threaded.h>
static inline bool obs_alone(void)
{
	return __builtin_expect(__libc_single_threaded != 0, 1);
}
#else
static inline bool obs_alone(void)
{
	return false;
}
#endif

/* A spin lock (obs_spin_lock): a connection's, and the pool's of free
 * connections (fdtable.c).
 * A connection's spin lock: guards its state and its records. Held for a
 * few dozen instructions of bookkeeping, never across a real call; its
 * holder may take the layer's mutex (a new record may grow the spool), never
 * the other way round (layer.h). A holder preempted mid-way is waited out
 * with sched_yield after a short spin. In a process of one thread
 * (obs_alone) it is not taken: nothing to exclude, and no atomic
 * exchange's cost (its release stores 0 all the same: a lock word is 0
 * whenever its one thread is outside). */
static inline void obs_spin_lock(int *lock)
{
	if (obs_alone())
		return;
	while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
		unsigned int spins = 0;

		while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
			if (++spins < 1000)
				obs_cpu_relax();
			else
				sched_yield();
		}
	}
}
static inline void obs_spin_unlock(int *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}
/* A send announced and not yet claimed: registered, as
 * obs_xm_send_begin would have at its entry (exchange.c). Under the
 * lock. */
void obs_xm_claim(struct obs_conn *c);

/* Every locked section but an announcer's own first registers the send
 * announced without the lock, if any: whatever it does next (a receive
 * that brings that send's answer) sees the send under way. */
static inline void obs_conn_lock(struct obs_conn *c)
{
	obs_spin_lock(&c->lock);
	if (__builtin_expect(__atomic_load_n(&c->ann, __ATOMIC_RELAXED) != 0,
			     0))
		obs_xm_claim(c);
}
static inline void obs_conn_unlock(struct obs_conn *c)
{
	obs_spin_unlock(&c->lock);
}

/* Whether the first byte d sent is there, in its first buffer, and tells
 * that it is no TLS ClientHello (a handshake record begins with 22,
 * obs_tls_hello). Read after the call only: the kernel read it. */
static inline bool obs_data_no_tls_hello(const struct obs_data *d)
{
	return d->iovcnt > 0 && d->iov[0].iov_len > 0 &&
	       *(const uint8_t *)d->iov[0].iov_base != 22;
}

/* obs_xm_send_begin's note of an HTTP/1.x connection's send d: which
 * send it is, and that it carries bytes. They are not read here: the
 * exchange is labelled from them when the send returns, in its own
 * bookkeeping, while they are still the caller's (a receive in another
 * thread that begins the exchange first leaves the label to it). Nothing
 * that points into the caller's memory is read after the send left it.
 * Under the lock. */
static inline void obs_xm_tx_head(struct obs_conn *c, const struct obs_data *d)
{
	c->tx_id = d->iov;
	c->tx_pred = OBS_TXP_BYTES;
}

/* (obs_xm_send_begin: inline, as it runs before every send that may
 * begin an exchange; always, or the compiler keeps a copy of its own.) */
static inline __attribute__((always_inline)) bool
obs_xm_send_begin(struct obs_conn *c, int64_t t_in, const struct obs_data *d)
{
	bool counted = false;

	if (d && d->tls_in == OBS_TLSIN_SHUTDOWN)
		return false; /* alerts: never a request */
	obs_conn_lock(c);
	/* a send that may begin an exchange: after the answer, or the
	 * request after a handshake's last flight */
	if (c->xphase != OBS_X_SENDING || c->x_handshake) {
		if (c->sends_inflight == 0 && !c->begun_for_send) {
			c->tx_pred = OBS_TXP_NONE;
			if (c->proto != OBS_PROTO_OTHER && d && d->iov &&
			    d->len && c->h2mode == OBS_H2M_NONE) {
				if (__builtin_expect(c->proto == OBS_PROTO_HTTP,
						     1) ||
				    c->proto == OBS_PROTO_UNKNOWN) {
					/* nothing read: the bytes' address
					 * (a first send's, OBS_TXP_UNREAD) */
					c->tx_t3 = t_in;
					c->tx_types = 0;
					c->tx_lost = false;
					obs_xm_tx_head(c, d);
					if (c->proto == OBS_PROTO_UNKNOWN)
						c->tx_pred = OBS_TXP_UNREAD;
				} else {
					obs_xm_predict_tls(c, t_in, d);
				}
			}
		}
		c->sends_inflight++;
		if (c->xphase != OBS_X_SENDING && !c->pending_send)
			c->pending_send = t_in;
		counted = true;
	}
	obs_conn_unlock(c);
	return counted;
}

/* The lock-free entry of a send that may begin an exchange (the
 * obs_xm_send_needs_entry hint said so) on a connection speaking HTTP/1.x,
 * or a connection's first send, in place of obs_xm_send_begin: its entry
 * time t_in stored in c->ann, when no other send is announced. Nothing
 * else is done before the real call, and nothing of the send's bytes is
 * read (a buffer the program cannot read fails the call with EFAULT, as
 * without the layer); the first locked section after it registers the
 * send as obs_xm_send_begin would have (obs_xm_claim, from obs_conn_lock):
 * a receive in another thread that brings the answer first, or the
 * sender's own bookkeeping when it returns (obs_xm_send_plain,
 * obs_xm_send_settle), which learns from c->ann whether it was claimed.
 * n: how many bytes it asks to send (none: no announcement). False: not
 * announced, the caller takes the locked entry. */
#define OBS_ANN_CLAIMED (1ull << 63)
/* c->tx_id of a claimed announcement's send, until its sender puts in its
 * own buffers' address (no buffers are at this address). */
#define OBS_ANN_ID ((const void *)(uintptr_t)1)

static inline bool obs_xm_send_announce(struct obs_conn *c, int64_t t_in,
					size_t n)
{
	uint8_t proto = __atomic_load_n(&c->proto, __ATOMIC_RELAXED);
	uint64_t none = 0;

	if (n == 0 || t_in <= 0 || proto == OBS_PROTO_TLS)
		return false;
	if (obs_alone()) {
		/* no other thread: no race for the word (a signal handler
		 * runs between this thread's instructions, not inside one) */
		if (__atomic_load_n(&c->ann, __ATOMIC_RELAXED) != 0)
			return false;
		__atomic_store_n(&c->ann, (uint64_t)t_in, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return true;
	}
	return __atomic_compare_exchange_n(&c->ann, &none, (uint64_t)t_in,
					   false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

/* Whether obs_xm_send_begin may read the bytes of a send on c before the
 * real call: the records of a TLS connection's handshake, which a TLS
 * library sends from its own buffers (after it, obs_xm_predict_tls reads
 * nothing). A hint, without the lock: a hook that must read a program's
 * structure to find the bytes, sendmsg's msghdr, reads it before the call
 * only then. */
static inline bool obs_xm_send_reads(const struct obs_conn *c)
{
	return __atomic_load_n(&c->proto, __ATOMIC_RELAXED) == OBS_PROTO_TLS &&
	       !__atomic_load_n(&c->tls_versioned, __ATOMIC_RELAXED);
}

/* An announced send (d: its buffers) whose bookkeeping
 * goes the general way (it failed, moved nothing, or the plain way
 * declined before it settled): the announcement settled, under the lock.
 * Returns what obs_xm_send_begin would have (counted), for
 * obs_xm_send_done. */
bool obs_xm_send_settle(struct obs_conn *c, const struct obs_data *d);

#endif
