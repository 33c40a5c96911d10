/* test_exchange_h2.c - HTTP/2 streams and TLS plaintext in the exchange
 * state machine (libobserve/exchange_h2.c), fed scripted calls.
 *
 * Frames are made with libnghttp2's own deflater (linked here; the follower
 * dlopens the library itself). Each test plays the calls of one connection
 * with made-up clock readings and checks the records against the
 * measurement model: one exchange per stream, T3 the entry of the send that
 * carries its HEADERS, T4 the return of the send that ends it, TFB and T6
 * the returns of the receives that bring its first frame and its end.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>

#include "exchange_h2.h"
#include "hpack_linked.h"

/* ---- a record store on an array, standing in for the spool ---- */

#define MAX_RECORDS 256
static struct obs_record records[MAX_RECORDS];
static int n_records;
static int warnings;

struct obs_record *obs_record_alloc(void)
{
	if (n_records >= MAX_RECORDS)
		return NULL;
	return &records[n_records++];
}

struct obs_record *obs_record_alloc2(struct obs_record **second)
{
	struct obs_record *first = obs_record_alloc();

	*second = obs_record_alloc();
	return first;
}

/* The spool's segment: a new one for every test (the thread's memory of
 * its last request outlives a test; its records do not). */
static uint32_t epoch;

uint32_t obs_record_epoch(void)
{
	return epoch;
}

struct obs_xh2 *obs_xh2_alloc(void)
{
	struct obs_xh2 *h = calloc(1, sizeof(struct obs_xh2));

	if (h)
		h->hpack = &obs_hpack_linked;
	return h;
}

void obs_xh2_release(struct obs_xh2 *h)
{
	free(h);
}

void obs_xm_warn(const char *what)
{
	(void)what;
	warnings++;
}

static struct obs_conn conn;
static nghttp2_hd_deflater *def[2]; /* TX, RX */

static int setup(void **state)
{
	(void)state;
	memset(records, 0, sizeof(records));
	n_records = 0;
	warnings = 0;
	epoch++;
	memset(&conn, 0, sizeof(conn));
	assert_int_equal(nghttp2_hd_deflate_new(&def[0], 4096), 0);
	assert_int_equal(nghttp2_hd_deflate_new(&def[1], 4096), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nghttp2_hd_deflate_del(def[0]);
	nghttp2_hd_deflate_del(def[1]);
	return 0;
}

static const uint8_t loopback[16] = { 127, 0, 0, 1 };

static void open_conn(void)
{
	obs_xm_connect_first(&conn, 1, 7, AF_INET, loopback, 8080, 100, 200, 0,
			     0);
}

/* ---- bytes: a buffer that frames are appended to ---- */

struct buf {
	uint8_t b[65536];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	if (n)
		memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void frame(struct buf *b, uint8_t type, uint8_t flags, uint32_t sid,
		  const void *payload, size_t len)
{
	uint8_t h[9] = { (uint8_t)(len >> 16),
			 (uint8_t)(len >> 8),
			 (uint8_t)len,
			 type,
			 flags,
			 (uint8_t)(sid >> 24),
			 (uint8_t)(sid >> 16),
			 (uint8_t)(sid >> 8),
			 (uint8_t)sid };

	put(b, h, 9);
	put(b, payload, len);
}

static void preface(struct buf *b)
{
	put(b, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	frame(b, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
}

/* A header block of name/value pairs (NULL-ended), one HEADERS frame. */
static void headers(struct buf *b, int dir, uint32_t sid, bool end,
		    const char *const *nv)
{
	nghttp2_nv nva[16];
	uint8_t out[1024];
	size_t n = 0;
	ssize_t len;

	for (; nv[2 * n]; n++) {
		nva[n].name = (uint8_t *)(uintptr_t)nv[2 * n];
		nva[n].namelen = strlen(nv[2 * n]);
		nva[n].value = (uint8_t *)(uintptr_t)nv[2 * n + 1];
		nva[n].valuelen = strlen(nv[2 * n + 1]);
		nva[n].flags = NGHTTP2_NV_FLAG_NONE;
	}
	len = nghttp2_hd_deflate_hd(def[dir], out, sizeof(out), nva, n);
	assert_true(len > 0);
	frame(b, NGHTTP2_HEADERS,
	      NGHTTP2_FLAG_END_HEADERS | (end ? NGHTTP2_FLAG_END_STREAM : 0),
	      sid, out, (size_t)len);
}

static void request(struct buf *b, uint32_t sid, const char *path)
{
	const char *nv[] = { ":method",	   "GET",
			     ":scheme",	   "https",
			     ":path",	   path,
			     ":authority", "example.org",
			     "cookie",	   "session=TOPSECRET",
			     NULL };

	headers(b, 0, sid, true, nv);
}

static void response(struct buf *b, uint32_t sid, const char *status, bool end)
{
	const char *nv[] = { ":status", status, "set-cookie", "x=TOPSECRET",
			     NULL };

	headers(b, 1, sid, end, nv);
}

static void data(struct buf *b, uint32_t sid, size_t n, bool end)
{
	static uint8_t d[16384];

	frame(b, NGHTTP2_DATA, end ? NGHTTP2_FLAG_END_STREAM : 0, sid, d, n);
}

/* ---- calls ---- */

/* As the hooks do (hooks_io.c): memory for HTTP/2 when a call's bytes ask
 * for it, attached outside the lock before the bookkeeping. */
static void attach_if_wanted(bool send, const struct obs_data *d)
{
	struct obs_xh2 *h;

	if (!obs_xh2_wanted(&conn, send, d))
		return;
	h = obs_xh2_alloc();
	if (!obs_xh2_attach(&conn, h))
		obs_xh2_release(h);
}

static void send_buf(const struct buf *b, int64_t t_in, int64_t t_out,
		     uint8_t tls_in)
{
	struct iovec v = { (void *)b->b, b->n };
	struct obs_data d = { &v, 1, b->n, tls_in };
	bool counted = obs_xm_send_begin(&conn, t_in, &d);

	attach_if_wanted(true, &d);

	obs_xm_send_done(&conn, counted, t_in, t_out, (ssize_t)b->n, 0, &d);
}

static void recv_buf(const struct buf *b, int64_t t_in, int64_t t_out,
		     uint8_t tls_in)
{
	struct iovec v = { (void *)b->b, b->n };
	struct obs_data d = { &v, 1, b->n, tls_in };

	attach_if_wanted(false, &d);
	obs_xm_recv(&conn, t_in, t_out, (ssize_t)b->n, 0, false, &d);
}

static void send_bytes(const char *p, int64_t t_in, int64_t t_out)
{
	struct buf b = { .n = 0 };

	put(&b, p, strlen(p));
	send_buf(&b, t_in, t_out, 0);
}

/* ---- what was recorded ---- */

static struct obs_record *exchange(uint32_t seq)
{
	for (int i = 0; i < n_records; i++)
		if (records[i].kind == OBS_REC_EXCHANGE &&
		    records[i].u.exch.seq == seq)
			return &records[i];
	return NULL;
}

static int count_kind(uint32_t kind)
{
	int n = 0;

	for (int i = 0; i < n_records; i++)
		n += records[i].kind == kind;
	return n;
}

static const struct obs_http_body *http_of(uint32_t seq)
{
	for (int i = 0; i < n_records; i++)
		if (records[i].kind == OBS_REC_HTTP &&
		    records[i].u.http.seq == seq)
			return &records[i].u.http;
	return NULL;
}

/* No header value but the four labels is kept anywhere in the records. */
static void no_secret(void)
{
	assert_null(memmem(records, sizeof(records), "TOPSECRET", 9));
}

/* ---- h2c, prior knowledge ---- */

static void test_prior_knowledge(void **state)
{
	struct buf tx = { .n = 0 }, rx = { .n = 0 };
	struct obs_exch_body *a, *b;

	(void)state;
	open_conn();
	preface(&tx);
	request(&tx, 1, "/a?token=TOPSECRET");
	send_buf(&tx, 1000, 1010, 0); /* preface, SETTINGS, stream 1 */
	tx.n = 0;
	frame(&tx, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
	request(&tx, 3, "/b");
	send_buf(&tx, 1100, 1110, 0); /* SETTINGS ack, stream 3 */
	frame(&rx, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
	frame(&rx, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
	response(&rx, 1, "200", false);
	recv_buf(&rx, 1200, 1210, 0); /* stream 1's first frame */
	rx.n = 0;
	response(&rx, 3, "404", false);
	data(&rx, 1, 1000, true);
	recv_buf(&rx, 1300, 1310, 0); /* 3's first, 1's end */
	rx.n = 0;
	data(&rx, 3, 10, true);
	frame(&rx, NGHTTP2_GOAWAY, 0, 0, "\0\0\0\3\0\0\0\0", 8);
	recv_buf(&rx, 1400, 1410, 0); /* 3's end, GOAWAY */

	a = &exchange(1)->u.exch;
	b = &exchange(2)->u.exch;
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 2);
	assert_int_equal(a->stream, 1);
	assert_int_equal(b->stream, 3);
	assert_true((a->flags & OBS_XF_H2) && (b->flags & OBS_XF_H2));
	assert_int_equal(a->t3, 1000);
	assert_int_equal(a->t4, 1010);
	assert_int_equal(a->t5, 1200);
	assert_int_equal(a->tfb, 1210);
	assert_int_equal(a->t6, 1310);
	assert_int_equal(b->t3, 1100);
	assert_int_equal(b->t4, 1110);
	assert_int_equal(b->tfb, 1310);
	assert_int_equal(b->t6, 1410);
	assert_true(b->t3 < a->t6); /* the streams overlap */
	assert_int_equal(a->status, 200);
	assert_int_equal(b->status, 404);
	assert_string_equal(a->method, "GET");
	assert_string_equal(http_of(1)->path, "/a");
	assert_string_equal(http_of(2)->path, "/b");
	assert_string_equal(http_of(1)->host, "example.org");
	assert_true(a->dr >= 1000 + 9 && b->dr >= 10 + 9);
	assert_true(a->ds > 9 && b->ds > 9);
	assert_int_equal(a->recv_calls, 2);
	/* both ended: complete before the close */
	assert_true(exchange(1)->state & OBS_RS_COMPLETE);
	assert_true(exchange(2)->state & OBS_RS_COMPLETE);
	assert_int_equal(records[0].u.conn.app_proto, OBS_AP_H2C);
	assert_int_equal(records[0].u.conn.exchanges, 2);
	obs_xm_close(&conn, 1500);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 2);
	assert_null(conn.h2);
	no_secret();
}

/* A stream reset by the server ends with its error code; one still open
 * at close is completed. */
static void test_reset_and_close(void **state)
{
	struct buf tx = { .n = 0 }, rx = { .n = 0 };
	uint32_t cancel = 0x08000000; /* CANCEL (8), big-endian */

	(void)state;
	open_conn();
	preface(&tx);
	request(&tx, 1, "/gone");
	request(&tx, 3, "/open");
	send_buf(&tx, 1000, 1010, 0);
	frame(&rx, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
	frame(&rx, NGHTTP2_RST_STREAM, 0, 1, &cancel, 4);
	recv_buf(&rx, 1100, 1110, 0);
	assert_true(exchange(1)->u.exch.flags & OBS_XF_RESET);
	assert_int_equal(exchange(1)->u.exch.stream_error, 8);
	assert_true(exchange(1)->state & OBS_RS_COMPLETE);
	assert_false(exchange(2)->state & OBS_RS_COMPLETE);
	obs_xm_exit(&conn, 1150); /* the process leaves: complete */
	assert_true(exchange(2)->state & OBS_RS_COMPLETE);
	obs_xm_exit_undo(&conn); /* it did not */
	assert_false(exchange(2)->state & OBS_RS_COMPLETE);
	obs_xm_close(&conn, 1200);
	assert_true(exchange(2)->state & OBS_RS_COMPLETE);
	assert_int_equal(exchange(2)->u.exch.t6, 0);
}

/* A connection that begins like HTTP/2 and breaks its framing goes back
 * to exchanges by direction. */
static void test_lost(void **state)
{
	struct buf tx = { .n = 0 }, rx = { .n = 0 };

	(void)state;
	open_conn();
	preface(&tx);
	send_buf(&tx, 1000, 1010, 0);
	put(&rx, "HTTP/1.1 400 Bad Request\r\n\r\n", 28); /* no SETTINGS */
	recv_buf(&rx, 1100, 1110, 0);
	assert_int_equal(conn.h2mode, OBS_H2M_LOST);
	assert_int_equal(warnings, 1);
	send_bytes("more", 1200, 1210);
	recv_buf(&rx, 1300, 1310, 0);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(exchange(1)->u.exch.t3, 1200);
	obs_xm_close(&conn, 1400);
}

/* ---- h2c, Upgrade ---- */

static void test_upgrade(void **state)
{
	struct buf tx = { .n = 0 }, rx = { .n = 0 };
	struct obs_exch_body *a, *b;

	(void)state;
	open_conn();
	send_bytes("GET /first HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, "
		   "HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABk"
		   "\r\n\r\n",
		   1000, 1010);
	put(&rx,
	    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
	    "Upgrade: h2c\r\n\r\n",
	    71);
	frame(&rx, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
	response(&rx, 1, "200", false);
	data(&rx, 1, 500, true);
	{
		struct iovec v = { rx.b, rx.n };
		struct obs_data d = { &v, 1, rx.n, 0 };

		assert_true(obs_xh2_wanted(&conn, false, &d));
	}
	recv_buf(&rx, 1100, 1110, 0); /* attaches */
	assert_non_null(conn.h2);
	preface(&tx);
	request(&tx, 3, "/second");
	send_buf(&tx, 1200, 1210, 0);
	rx.n = 0;
	response(&rx, 3, "200", true);
	recv_buf(&rx, 1300, 1310, 0);

	a = &exchange(1)->u.exch;
	b = &exchange(2)->u.exch;
	assert_int_equal(a->stream, 1);
	assert_int_equal(a->t3, 1000);
	assert_int_equal(a->t4, 1010);
	assert_int_equal(a->t5, 1100);
	assert_int_equal(a->tfb, 1110);
	assert_int_equal(a->t6, 1110);
	assert_int_equal(a->status, 200);
	assert_true(a->dr >= 500);
	assert_int_equal(b->stream, 3);
	assert_int_equal(b->t3, 1200);
	assert_int_equal(b->status, 200);
	assert_string_equal(http_of(2)->path, "/second");
	assert_int_equal(records[0].u.conn.app_proto, OBS_AP_H2C);
	obs_xm_close(&conn, 1400);
}

/* ---- TLS ---- */

/* n bytes of one application-data record */
static void appdata(struct buf *b, size_t n)
{
	uint8_t h[5] = { 23, 3, 3, (uint8_t)(n >> 8), (uint8_t)n };
	static uint8_t body[16384];

	b->n = 0;
	put(b, h, 5);
	put(b, body, n);
}

/* TLS records: a ClientHello, the server's flight, the client's 1.3
 * Finished (change cipher spec and one application-data record). */
static void tls_handshake(void)
{
	struct buf b = { .n = 0 };
	static const uint8_t hello[] = { 22, 3, 1, 0, 4, 1, 0, 0, 0 };
	static const uint8_t server[] = { 22, 3, 3, 0, 2, 2, 0 };
	uint8_t fin[6 + 5 + 32] = { 20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 32 };

	put(&b, hello, sizeof(hello));
	send_buf(&b, 300, 310, 0);
	b.n = 0;
	put(&b, server, sizeof(server));
	recv_buf(&b, 320, 400, 0);
	b.n = 0;
	put(&b, fin, sizeof(fin));
	send_buf(&b, 410, 420, 0);
	appdata(&b, 250); /* a session ticket */
	recv_buf(&b, 430, 440, 0);
}

/* HTTP/1.1 over TLS: the records make the exchange and its times, the
 * plaintext its labels; the alerts of a hooked shutdown are no request. */
static void test_tls_http1(void **state)
{
	struct buf b = { .n = 0 };
	static const char req[] = "GET /x?token=TOPSECRET HTTP/1.1\r\n"
				  "Host: example.org\r\n\r\n";
	static const char resp[] = "HTTP/1.1 404 Not Found\r\n\r\n";
	struct obs_exch_body *x;

	(void)state;
	open_conn();
	tls_handshake();
	appdata(&b, 60);
	send_buf(&b, 1000, 1010, OBS_TLSIN_WRITE);
	assert_false(obs_xm_tls_session(&conn, OBS_AP_HTTP1, NULL));
	obs_xm_tls_plain(&conn, true, false, 990, 1020, (const uint8_t *)req,
			 sizeof(req) - 1);
	appdata(&b, 900);
	recv_buf(&b, 1100, 1110, OBS_TLSIN_READ);
	/* a peek at one byte (PHP's liveness check), then a byte a read */
	obs_xm_tls_plain(&conn, false, true, 1090, 1120, (const uint8_t *)resp,
			 1);
	for (size_t i = 0; i < sizeof(resp) - 1; i++)
		obs_xm_tls_plain(&conn, false, false, 1090, 1120,
				 (const uint8_t *)resp + i, 1);
	/* SSL_shutdown: its close_notify out, the server's in */
	appdata(&b, 19);
	send_buf(&b, 1200, 1210, OBS_TLSIN_SHUTDOWN);
	recv_buf(&b, 1300, 1310, OBS_TLSIN_SHUTDOWN);
	obs_xm_close(&conn, 1400);

	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	x = &exchange(1)->u.exch;
	assert_int_equal(x->t3, 1000);
	assert_int_equal(x->tfb, 1110);
	assert_int_equal(x->t6, 1110); /* not the alert's */
	assert_string_equal(x->method, "GET");
	assert_int_equal(x->status, 404);
	assert_string_equal(http_of(1)->path, "/x");
	assert_string_equal(http_of(1)->host, "example.org");
	assert_true(records[0].u.conn.flags & OBS_CF_TLS_PLAIN);
	assert_int_equal(records[0].u.conn.app_proto, OBS_AP_HTTP1);
	no_secret();
}

/* h2 over TLS: the socket calls make no exchange; the plaintext is fed to
 * the follower with the times of the socket calls that carried it, a read
 * served from records decrypted earlier with the last socket receive's. */
static void test_tls_h2(void **state)
{
	struct buf b = { .n = 0 }, plain = { .n = 0 };
	struct obs_exch_body *a, *s3;

	(void)state;
	open_conn();
	tls_handshake();
	assert_true(obs_xm_tls_session(&conn, OBS_AP_H2, obs_xh2_alloc()));
	/* SSL_write(preface, SETTINGS, stream 1): two socket sends inside */
	preface(&plain);
	request(&plain, 1, "/one");
	appdata(&b, 100);
	send_buf(&b, 1000, 1010, OBS_TLSIN_WRITE);
	send_buf(&b, 1020, 1030, OBS_TLSIN_WRITE);
	obs_xm_tls_plain(&conn, true, false, 990, 1040, plain.b, plain.n);
	/* SSL_write(stream 3), no socket send inside it (buffered): its own
	 * times */
	plain.n = 0;
	request(&plain, 3, "/three");
	obs_xm_tls_plain(&conn, true, false, 1050, 1060, plain.b, plain.n);
	/* one socket receive brings records of both answers; two SSL_reads
	 * return them, the second with no socket call of its own */
	appdata(&b, 800);
	recv_buf(&b, 1100, 1110, OBS_TLSIN_READ);
	plain.n = 0;
	frame(&plain, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
	response(&plain, 1, "200", true);
	obs_xm_tls_plain(&conn, false, false, 1090, 1120, plain.b, plain.n);
	plain.n = 0;
	response(&plain, 3, "503", true);
	obs_xm_tls_plain(&conn, false, false, 1130, 1140, plain.b, plain.n);
	obs_xm_close(&conn, 1400);

	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 2);
	a = &exchange(1)->u.exch;
	s3 = &exchange(2)->u.exch;
	assert_int_equal(a->stream, 1);
	assert_int_equal(a->t3, 1000); /* the first socket send's entry */
	assert_int_equal(a->t4, 1030); /* the last one's return */
	assert_int_equal(a->tfb, 1110);
	assert_int_equal(a->t6, 1110);
	assert_int_equal(s3->t3, 1050);
	assert_int_equal(s3->t4, 1060);
	assert_int_equal(s3->tfb, 1110); /* the socket receive's return */
	assert_int_equal(s3->status, 503);
	assert_int_equal(records[0].u.conn.app_proto, OBS_AP_H2);
	assert_string_equal(http_of(2)->path, "/three");
	no_secret();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prior_knowledge, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reset_and_close, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_http1, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tls_h2, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
