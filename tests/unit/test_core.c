/* test_core.c - the capture and the core together, on scripted
 * conversations: each call's bytes go through the capture (core/capture.c)
 * into events, as in the layer, and the events through the replay
 * (core/replay.c) into exchanges, as in the slicer. The conversations are
 * HTTP/1.1 as servers speak it: keep-alive, 100-continue, 103 Early Hints,
 * pipelining, HEAD, 204 and 304, chunked bodies, bodies delimited by
 * close, an empty reply, WebSocket, a CONNECT tunnel. HTTP/2's are in
 * test_core_h2.c; how a conversation is run (its times, the seeds it
 * writes for fuzz_core): core_run.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture.h"
#include "core_run.h"
#include "evrec.h"
#include "replay.h"
#include "spool_format.h"
#include "test_core_h2.h"

static const char resp_100b[] = "HTTP/1.1 200 OK\r\nServer: nginx\r\n"
				"Content-Length: 10\r\n\r\n0123456789";

static void test_keepalive(void **state)
{
	struct run *s = run_new();
	int a, b, c, d;

	(void)state;
	a = send_str(s, "GET /a?secret=1 HTTP/1.1\r\nHost: example.org\r\n"
			"User-Agent: t\r\n\r\n");
	b = recv_str(s, resp_100b);
	c = send_str(
		s,
		"GET /b;jsessionid=XYZ HTTP/1.1\r\nhost: u:pw@Example.org:8080\r\n\r\n");
	call(s, OBS_RX, NULL, 0); /* EAGAIN */
	d = recv_str(s, resp_100b);
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_string_equal(s->x[0].method, "GET");
	assert_string_equal(s->x[0].path, "/a");
	assert_string_equal(s->x[0].host, "example.org");
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[0].t3, t_in(a));
	assert_int_equal(s->x[0].t4, t_out(a));
	assert_int_equal(s->x[0].t5, t_in(b));
	assert_int_equal(s->x[0].tfb, t_out(b));
	assert_int_equal(s->x[0].t6, t_out(b));
	assert_int_equal(s->x[0].dr, strlen(resp_100b));
	assert_int_equal(s->x[0].seq, 1);
	assert_string_equal(s->x[1].path, "/b");
	assert_string_equal(s->x[1].host, "Example.org:8080");
	assert_int_equal(s->x[1].seq, 2);
	assert_int_equal(s->x[1].t3, t_in(c));
	/* the EAGAIN receive is the first receive after T4 */
	assert_int_equal(s->x[1].t5, t_in(d - 1));
	assert_int_equal(s->x[1].tfb, t_out(d));
	assert_int_equal(s->x[1].flags & OBS_CXF_CUT, 0);
	assert_int_equal(s->replay.conn.app_proto, OBS_AP_HTTP1);
	assert_int_equal(s->replay.conn.end_class, OBS_END_CLIENT_CLOSE);
	assert_int_equal(s->replay.conn.t1, 0);
	assert_int_equal(s->replay.conn.t2, 100);
}

/* A request with the host and path of the one before it says so instead
 * of writing them again; the replay gives it them all the same. */
static void test_labels_once(void **state)
{
	struct run *s = run_new();
	int with_labels = 0, again = 0;

	(void)state;
	for (int i = 0; i < 3; i++) {
		send_str(s,
			 "GET /same?q=1 HTTP/1.1\r\nHost: h.example\r\n\r\n");
		recv_str(s, resp_100b);
	}
	send_str(s, "GET /other HTTP/1.1\r\nHost: h.example\r\n\r\n");
	recv_str(s, resp_100b);
	finish(s);

	for (uint64_t i = 0; i < s->n_events; i++) {
		const struct obs_event *ev = &s->events[i];

		if (ev->kind != OBS_EV_H1 || ev->dir != OBS_TX)
			continue;
		if (ev->u.h1.head.flags & OBS_EVH1F_LABELS_AGAIN) {
			assert_string_equal(ev->u.h1.head.path, "");
			again++;
		} else {
			assert_string_not_equal(ev->u.h1.head.path, "");
			with_labels++;
		}
	}
	assert_int_equal(with_labels, 2);
	assert_int_equal(again, 2);
	assert_int_equal(s->n_x, 4);
	for (int i = 0; i < 3; i++) {
		assert_string_equal(s->x[i].path, "/same");
		assert_string_equal(s->x[i].host, "h.example");
	}
	assert_string_equal(s->x[3].path, "/other");
}

/* curl -T: Expect: 100-continue, the 100, the body, then the 200. */
static void test_expect_continue(void **state)
{
	struct run *s = run_new();
	int head, body, ok;

	(void)state;
	head = send_str(s,
			"PUT /up HTTP/1.1\r\nHost: h\r\nContent-Length: 8\r\n"
			"Expect: 100-continue\r\n\r\n");
	recv_str(s, "HTTP/1.1 100 Continue\r\n\r\n");
	body = send_str(s, "12345678");
	ok = recv_str(s, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_string_equal(s->x[0].method, "PUT");
	assert_int_equal(s->x[0].status, 201);
	assert_int_equal(s->x[0].interim_status, 100);
	assert_int_equal(s->x[0].t_interim, t_out(head + 1));
	assert_int_equal(s->x[0].t3, t_in(head));
	assert_int_equal(s->x[0].t4, t_out(body));
	assert_int_equal(s->x[0].t5, t_in(ok));
	assert_int_equal(s->x[0].tfb, t_out(ok));
	assert_true(s->x[0].tfb >= s->x[0].t4);
	assert_int_equal(s->x[0].ds, strlen("PUT /up HTTP/1.1\r\nHost: h\r\n"
					    "Content-Length: 8\r\nExpect: "
					    "100-continue\r\n\r\n12345678"));
}

/* 103 Early Hints and the 200 in one receive, then a second request. */
static void test_early_hints(void **state)
{
	struct run *s = run_new();

	(void)state;
	send_str(s, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(
		s,
		"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n");
	recv_str(s, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
	send_str(s, "GET /s.css HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s, "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 404 Not Found\r\n"
		    "Content-Length: 0\r\n\r\n");
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[0].interim_status, 103);
	assert_int_equal(s->x[0].t_interim, t_out(2));
	assert_int_equal(s->x[0].tfb, t_out(3));
	assert_int_equal(s->x[1].status, 404);
	assert_int_equal(s->x[1].interim_status, 103);
	assert_string_equal(s->x[1].path, "/s.css");
}

/* Three requests in one send; the responses in pieces that cut across
 * them. */
static void test_pipelining(void **state)
{
	struct run *s = run_new();
	int sent, r1, r2;

	(void)state;
	sent = send_str(s, "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
			   "HEAD /2 HTTP/1.1\r\nHost: h\r\n\r\n"
			   "GET /3 HTTP/1.1\r\nHost: h\r\n\r\n");
	r1 = recv_str(s, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab");
	r2 = recv_str(
		s, "cdHTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nHTTP/1.1 "
		   "404 Not Found\r\nContent-Length: 2\r\n\r\n");
	recv_str(s, "zz");
	finish(s);

	assert_int_equal(s->n_x, 3);
	assert_string_equal(s->x[0].path, "/1");
	assert_string_equal(s->x[1].path, "/2");
	assert_string_equal(s->x[1].method, "HEAD");
	assert_string_equal(s->x[2].path, "/3");
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[1].status, 200);
	assert_int_equal(s->x[2].status, 404);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s->x[i].t3, t_in(sent));
		assert_int_equal(s->x[i].t4, t_out(sent));
		assert_int_equal(s->x[i].t5, t_in(r1));
		assert_int_equal(s->x[i].flags & OBS_CXF_CUT, 0);
	}
	assert_int_equal(s->x[0].tfb, t_out(r1));
	assert_int_equal(s->x[0].t6, t_out(r2));
	assert_int_equal(s->x[1].tfb, t_out(r2));
	assert_int_equal(s->x[1].t6, t_out(r2));
	assert_int_equal(s->x[2].tfb, t_out(r2));
	assert_int_equal(s->x[2].t6, t_out(r2 + 1));
	assert_int_equal(s->x[2].dr, strlen("HTTP/1.1 404 Not Found\r\n"
					    "Content-Length: 2\r\n\r\nzz"));
}

/* HEAD, 204 and 304 have no body whatever their Content-Length says. */
static void test_no_body(void **state)
{
	struct run *s = run_new();

	(void)state;
	send_str(s, "HEAD /big HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s, "HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n");
	send_str(s, "DELETE /x HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s, "HTTP/1.1 204 No Content\r\n\r\n");
	send_str(s,
		 "GET /c HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"1\"\r\n\r\n");
	recv_str(s, "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n");
	send_str(s, "GET /d HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s, resp_100b);
	finish(s);

	assert_int_equal(s->n_x, 4);
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[1].status, 204);
	assert_int_equal(s->x[2].status, 304);
	assert_int_equal(s->x[3].status, 200);
	assert_string_equal(s->x[3].path, "/d");
	for (int i = 0; i < 4; i++)
		assert_int_equal(s->x[i].flags & OBS_CXF_CUT, 0);
}

/* A chunked body cut at awkward places, with an extension and trailers;
 * T6 is the receive that brought its last byte. */
static void test_chunked(void **state)
{
	struct run *s = run_new();
	int last;

	(void)state;
	send_str(s, "GET /c HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s,
		 "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
		 "5\r\nhel");
	recv_str(s, "lo\r\n1");
	recv_str(s, "A;ext=1\r\n0123456789abcdefghijklmn");
	recv_str(s, "op\r\n0\r\nX-Trailer: 1\r");
	last = recv_str(s, "\n\r\n");
	send_str(s, "GET /next HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s, resp_100b);
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_int_equal(s->x[0].t6, t_out(last));
	assert_int_equal(s->x[0].flags & OBS_CXF_CUT, 0);
	assert_string_equal(s->x[1].path, "/next");
	assert_int_equal(s->x[1].status, 200);
}

/* HTTP/1.0 without Content-Length: the body ends when the server closes;
 * T6 is the last receive of bytes, TEOF the receive that returned 0. */
static void test_close_delimited(void **state)
{
	struct run *s = run_new();
	int last, eof;

	(void)state;
	send_str(s, "GET / HTTP/1.0\r\n\r\n");
	recv_str(s, "HTTP/1.0 200 OK\r\n\r\nsome");
	last = recv_str(s, " more");
	eof = recv_eof(s);
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[0].t6, t_out(last));
	assert_int_equal(s->x[0].flags & OBS_CXF_CUT, 0);
	assert_int_equal(s->x[0].dr,
			 strlen("HTTP/1.0 200 OK\r\n\r\nsome more"));
	assert_int_equal(s->replay.conn.teof, t_out(eof));
	assert_int_equal(s->replay.conn.end_class, OBS_END_SERVER_CLOSE);
}

/* The server closes without a word: one exchange, no status, cut. */
static void test_empty_reply(void **state)
{
	struct run *s = run_new();

	(void)state;
	send_str(s, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_eof(s);
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_string_equal(s->x[0].path, "/x");
	assert_int_equal(s->x[0].status, 0);
	assert_true(s->x[0].flags & OBS_CXF_CUT);
	assert_int_equal(s->x[0].tfb, 0);
}

/* A WebSocket upgrade: one exchange (101), then frames that are counted
 * as messages and never read as requests. */
static void test_websocket(void **state)
{
	struct run *s = run_new();
	/* a masked text frame "GET / HTTP/1.1" (14 bytes): FIN, opcode 1 */
	uint8_t text[2 + 4 + 14] = { 0x81, 0x80 | 14, 1, 2, 3, 4 };
	/* from the server: a fragmented binary message (2 frames), a ping
	 * between them, then a close */
	uint8_t from[] = { 0x02, 3,   'a', 'b',	 'c', 0x89, 0,	 0x80,
			   2,	 'd', 'e', 0x88, 2,   0x03, 0xe8 };

	(void)state;
	memcpy(text + 6, "GET / HTTP/1.1", 14);
	send_str(s, "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
		    "Connection: Upgrade\r\nSec-WebSocket-Key: x\r\n\r\n");
	recv_str(s, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		    "Connection: Upgrade\r\n\r\n\x81\x02hi");
	call(s, OBS_TX, text, sizeof(text));
	call(s, OBS_RX, from, 7);
	call(s, OBS_RX, from + 7, sizeof(from) - 7);
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_int_equal(s->x[0].status, 101);
	assert_true(s->x[0].flags & OBS_CXF_SWITCH);
	assert_true(s->replay.conn.flags & OBS_CCF_WEBSOCKET);
	assert_int_equal(s->replay.conn.app_proto, OBS_AP_HTTP1);
	assert_int_equal(s->replay.conn.ws_messages[OBS_TX], 1);
	/* "hi", the binary message, the ping, the close */
	assert_int_equal(s->replay.conn.ws_messages[OBS_RX], 4);
}

/* Bytes HTTP/1 could not follow are still counted: an answer the program
 * received without the layer seeing it (MSG_TRUNC) is its request's Dr;
 * what a program sent that is no HTTP/1 is a run of its own. */
static void test_unfollowed_bytes(void **state)
{
	struct run *s = run_new();
	int r;

	(void)state;
	send_str(s, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s, resp_100b);
	send_str(s, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
	r = call_unseen(s, OBS_RX, 338);
	finish(s);
	assert_int_equal(s->n_x, 2);
	assert_string_equal(s->x[1].path, "/b");
	assert_int_equal(s->x[1].dr, 338);
	assert_int_equal(s->x[1].tfb, t_out(r));

	s = run_new();
	send_str(s, "\x01\x02 a protocol of its own\n");
	recv_str(s, "\x03 its answer\n");
	send_str(s, "\x01 again\n");
	recv_str(s, "\x03 again\n");
	finish(s);
	assert_int_equal(s->n_x, 2);
	assert_int_equal(s->x[0].ds,
			 strlen("\x01\x02 a protocol of its own\n"));
	assert_int_equal(s->x[0].dr, strlen("\x03 its answer\n"));
	assert_int_equal(s->x[0].flags & OBS_CXF_HTTP, 0);
}

/* One thread sends while another receives: the answer comes back before
 * the send returns. The send's entry was written before it, so the
 * request is the answer's, labelled, and the times are in order (T4 no
 * later than the answer's first byte, T5 not before T4). A send the
 * process never came back from still begins its exchange. */
static void test_send_entry(void **state)
{
	struct run *s = run_new();
	const char *get = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
	int q, r;

	(void)state;
	for (int i = 0; i < 2; i++) {
		q = send_enter(s);
		r = recv_str(s, resp_100b);
		send_return(s, q, get);
	}
	q = send_enter(s); /* killed in it */
	finish(s);

	assert_int_equal(s->n_x, 3);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(s->x[i].path, "/a");
		assert_int_equal(s->x[i].status, 200);
		assert_int_equal(s->x[i].flags & OBS_CXF_SERVER_FIRST, 0);
		assert_true(s->x[i].t3 <= s->x[i].t4);
		assert_true(s->x[i].t4 <= s->x[i].t5);
		assert_true(s->x[i].t5 <= s->x[i].tfb);
		assert_true(s->x[i].tfb <= s->x[i].t6);
	}
	assert_int_equal(s->x[1].tfb, t_out(r));
	assert_int_equal(s->x[2].t3, t_in(q));
	assert_int_equal(s->x[2].t4, 0);
	assert_int_equal(s->x[2].ds, 0);
}

/* A send entered, another thread's send on the socket meanwhile, then the
 * first returns (its bytes after the other's): it began when its entry
 * was written, whatever time its completion carries, so no exchange ends
 * before it begins. */
static void test_send_entry_apart(void **state)
{
	struct run *s = run_new();
	const char *a = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
	int q, later;
	struct iovec iov = { (void *)a, strlen(a) };
	struct obs_call done = {
		.dir = OBS_TX,
		.result = (long)strlen(a),
		.entry = true,
		.iov = &iov,
		.iovcnt = 1,
	};

	(void)state;
	q = send_enter(s);
	send_str(s, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
	later = call(s, OBS_RX, NULL, 0); /* EAGAIN: time passes */
	done.t_in = t_in(later) + 1;
	done.t_out = t_out(later) + 1;
	obs_cap_call(&s->cap, &done);
	recv_str(s, resp_100b);
	recv_str(s, resp_100b);
	finish(s);

	assert_int_equal(s->n_x, 2);
	for (int i = 0; i < 2; i++)
		assert_true(s->x[i].t3 <= s->x[i].t4);
	assert_int_equal(s->x[1].t3, t_in(q));
}

/* TCP Fast Open: the first send's bytes go with the SYN, so that send
 * says nothing of the connection being up; the next call that succeeds
 * does (first_io, at its entry). A connect that returned 0 with its SYN
 * waiting for the first send is not up at its return either. */
static void test_fastopen(void **state)
{
	for (int deferred = 0; deferred < 2; deferred++) {
		struct run *s = run_connect(deferred ? 0 : EINPROGRESS, true);
		int q, r;

		(void)state;
		q = send_str(s, "GET /tfo HTTP/1.1\r\nHost: h\r\n\r\n");
		r = recv_str(s, resp_100b);
		finish(s);

		assert_int_equal(s->n_x, 1);
		assert_int_equal(s->x[0].t3, t_in(q));
		assert_int_equal(s->replay.conn.t2, t_in(r));
		assert_int_equal(s->replay.conn.t2_how, OBS_T2_FIRST_IO);
		assert_int_equal(s->replay.conn.flags & OBS_CCF_NONBLOCKING,
				 deferred ? 0 : OBS_CCF_NONBLOCKING);
	}
}

/* HTTPS through a proxy: the CONNECT exchange, then TLS 1.3 in the
 * tunnel on a connection marked TLS; its records are no HTTP/1 request,
 * its handshake no exchange: from the ClientHello's send to the server's
 * flight, then the client's Finished, and its first data is the
 * exchange. */
static void test_connect_tls(void **state)
{
	struct run *s = run_new();
	static const uint8_t hello[] = { 22, 3, 1, 0, 4, 1, 0, 0, 0 };
	static const uint8_t sflight[] = { 22, 3, 3, 0, 2, 2, 0,
					   23, 3, 3, 0, 1, 9 };
	static const uint8_t finished[] = { 20, 3, 3, 0, 1,   1,  23,
					    3,	3, 0, 2, 'F', 'N' };
	static const uint8_t app[] = { 23, 3, 3, 0, 3, 'G', 'E', 'T' };
	int h, f, q;

	(void)state;
	send_str(s,
		 "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n"
		 "Proxy-Authorization: Basic c2VjcmV0\r\n\r\n");
	recv_str(s, "HTTP/1.1 200 Connection established\r\n\r\n");
	h = call(s, OBS_TX, hello, sizeof(hello));
	f = call(s, OBS_RX, sflight, sizeof(sflight));
	call(s, OBS_TX, finished, sizeof(finished));
	q = call(s, OBS_TX, app, sizeof(app));
	call(s, OBS_RX, app, sizeof(app));
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_int_equal(s->replay.conn.tls_version, OBS_TLS_1_3);
	assert_int_equal(s->replay.conn.tls_start, t_in(h));
	assert_int_equal(s->replay.conn.tls_end, t_out(f));
	assert_int_equal(s->x[1].t3, t_in(q));
	assert_int_equal(s->x[1].ds, sizeof(app));
	assert_int_equal(s->x[1].dr, sizeof(app));
	assert_string_equal(s->x[0].method, "CONNECT");
	assert_string_equal(s->x[0].host, "example.org:443");
	assert_string_equal(s->x[0].path, "");
	assert_int_equal(s->x[0].status, 200);
	assert_true(s->x[0].flags & OBS_CXF_SWITCH);
	assert_true(s->replay.conn.flags & OBS_CCF_TLS);
	assert_true(s->replay.conn.flags & OBS_CCF_TUNNEL);
	assert_string_equal(s->replay.conn.tunnel, "example.org:443");
	for (int i = 1; i < s->n_x; i++) {
		assert_true(s->x[i].flags & OBS_CXF_TUNNEL);
		assert_int_equal(s->x[i].flags & OBS_CXF_HTTP, 0);
	}
}

/* HTTPS where the TLS library is not hooked (linked into the program):
 * TLS 1.2's flights, then runs of records; the closing alert, one short
 * record sent last and unanswered, is no request. */
static void test_tls_records(void **state)
{
	struct run *s = run_new();
	static const uint8_t hello[] = { 22, 3, 1, 0, 4, 1, 0, 0, 0 };
	static const uint8_t sflight[] = { 22, 3, 3, 0, 2, 2, 0 };
	static const uint8_t kx[] = { 22, 3, 3,	 0, 2, 16, 0, 20,  3,	3,  0,
				      1,  1, 22, 3, 3, 0,  3, 'F', 'I', 'N' };
	static const uint8_t sfin[] = { 20, 3, 3, 0, 1,	  1,  22,
					3,  3, 0, 2, 'F', 'N' };
	static const uint8_t rec[] = { 23, 3, 3, 0, 40, [45] = 0 };
	static const uint8_t alert[31] = { 23, 3, 3, 0, 26 };
	int fin, q;

	(void)state;
	call(s, OBS_TX, hello, sizeof(hello));
	call(s, OBS_RX, sflight, sizeof(sflight));
	call(s, OBS_TX, kx, sizeof(kx));
	fin = call(s, OBS_RX, sfin, sizeof(sfin));
	q = call(s, OBS_TX, rec, sizeof(rec));
	call(s, OBS_RX, rec, sizeof(rec));
	call(s, OBS_TX, rec, sizeof(rec));
	call(s, OBS_RX, rec, sizeof(rec));
	call(s, OBS_TX, alert, sizeof(alert));
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_int_equal(s->x[0].t3, t_in(q));
	assert_int_equal(s->x[0].ds, sizeof(rec));
	assert_int_equal(s->replay.conn.tls_version, OBS_TLS_1_2);
	assert_int_equal(s->replay.conn.tls_end, t_out(fin));
}

/* HTTPS where the TLS library's functions are hooked: the handshake (the
 * library's own calls, before any of its read or write functions), then
 * each SSL_write and SSL_read with the socket calls made inside them.
 * The plaintext makes the exchanges (HTTP/1 read in it, with its labels),
 * the socket calls none; the handshake is the connection's. */
static void test_https_plain(void **state)
{
	struct run *s = run_new();
	static const uint8_t hello[] = { 22, 3, 1, 0, 4, 1, 0, 0, 0 };
	static const uint8_t sflight[] = { 22, 3, 3, 0, 2, 2, 0,
					   23, 3, 3, 0, 1, 9 };
	static const uint8_t finished[] = { 20, 3, 3, 0, 1,   1,  23,
					    3,	3, 0, 2, 'F', 'N' };
	static const uint8_t rec[] = { 23, 3, 3, 0, 4, 1, 2, 3, 4 };
	static const char get[] = "GET /x?key=secret HTTP/1.1\r\n"
				  "Host: example.org\r\n\r\n";
	int h, f, w, r1, r2;

	(void)state;
	h = call(s, OBS_TX, hello, sizeof(hello));
	f = call(s, OBS_RX, sflight, sizeof(sflight));
	call(s, OBS_TX, finished, sizeof(finished));
	for (int i = 0; i < 2; i++) {
		call_in_tls(s, OBS_TX, rec, sizeof(rec));
		w = plain(s, OBS_TX, get, strlen(get));
		call_in_tls(s, OBS_RX, rec, sizeof(rec));
		r1 = plain(s, OBS_RX, resp_100b, 40);
		call_in_tls(s, OBS_RX, rec, sizeof(rec));
		r2 = plain(s, OBS_RX, resp_100b + 40, strlen(resp_100b) - 40);
	}
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_true(s->replay.conn.flags & OBS_CCF_TLS);
	assert_int_equal(s->replay.conn.tls_version, OBS_TLS_1_3);
	assert_int_equal(s->replay.conn.tls_start, t_in(h));
	assert_int_equal(s->replay.conn.tls_end, t_out(f));
	assert_int_equal(s->replay.conn.app_proto, OBS_AP_HTTP1);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(s->x[i].method, "GET");
		assert_string_equal(s->x[i].path, "/x");
		assert_string_equal(s->x[i].host, "example.org");
		assert_int_equal(s->x[i].status, 200);
		assert_int_equal(s->x[i].ds, strlen(get));
		assert_int_equal(s->x[i].dr, strlen(resp_100b));
		assert_int_equal(s->x[i].flags & OBS_CXF_HTTP, OBS_CXF_HTTP);
	}
	/* the second request's times: the plaintext calls' */
	assert_int_equal(s->x[1].t3, t_in(w));
	assert_int_equal(s->x[1].t4, t_out(w));
	assert_int_equal(s->x[1].tfb, t_out(r1));
	assert_int_equal(s->x[1].t6, t_out(r2));
}

/* Plain HTTP through a CONNECT tunnel: the tunnel's own exchanges are
 * labelled. A refused CONNECT leaves HTTP/1 going on. */
static void test_connect_http(void **state)
{
	struct run *s = run_new();

	(void)state;
	send_str(s, "CONNECT in:80 HTTP/1.1\r\nHost: in:80\r\n\r\n");
	recv_str(s, "HTTP/1.1 407 Proxy Authentication Required\r\n"
		    "Content-Length: 0\r\n\r\n");
	send_str(s, "CONNECT in:80 HTTP/1.1\r\nHost: in:80\r\n\r\n");
	recv_str(s, "HTTP/1.1 200 OK\r\n\r\n");
	send_str(s, "GET /inside HTTP/1.1\r\nHost: in\r\n\r\n");
	recv_str(s, resp_100b);
	finish(s);

	assert_int_equal(s->n_x, 3);
	assert_int_equal(s->x[0].status, 407);
	assert_int_equal(s->x[0].flags & OBS_CXF_SWITCH, 0);
	assert_int_equal(s->x[1].status, 200);
	assert_true(s->x[1].flags & OBS_CXF_SWITCH);
	assert_string_equal(s->x[2].path, "/inside");
	assert_int_equal(s->x[2].status, 200);
	assert_true(s->x[2].flags & OBS_CXF_TUNNEL);
	assert_int_equal(s->x[2].flags & OBS_CXF_CUT, 0);
}

/* A 407 whose body runs to the close, a second CONNECT, then bytes that
 * are no request (a CONNECT's, sent before its answer): the framer that
 * still reads the responses is not started again for the tunnel, and
 * every event is final once the connection closes (found by fuzz.core). */
static void test_connect_optimistic(void **state)
{
	struct run *s = run_new();

	(void)state;
	send_str(s, "CONNECT in:80 HTTP/1.1\r\nHost: in:80\r\n\r\n");
	recv_str(s,
		 "HTTP/1.1 407 Proxy Authentication Required\r\nX: y\r\n\r\n");
	send_str(s, "CONNECT in:80 HTTP/1.1\r\nHost: in:80\r\n\r\n");
	recv_str(s, "HTTP/1.1 200 OK\r\n\r\n");
	send_str(s, "jET /inside HTTP/1.1\r\nHost: in\r\n\r\n");
	recv_str(s, resp_100b);
	finish(s);

	assert_true(s->n_x >= 1);
	assert_string_equal(s->x[0].method, "CONNECT");
	assert_int_equal(s->x[0].status, 407);
}

/* The same conversation a byte a call gives the same labels and
 * statuses; an absolute-form target's userinfo is never kept. */
static void test_byte_by_byte(void **state)
{
	struct run *s = run_new();
	const char *req =
		"POST http://user:pw@example.org:81/p/q?x=1 HTTP/1.1\r\n"
		"Host: ignored\r\nTransfer-Encoding: chunked\r\n\r\n"
		"3\r\nabc\r\n0\r\n\r\n";
	const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz";

	(void)state;
	for (size_t i = 0; i < strlen(req); i++)
		call(s, OBS_TX, req + i, 1);
	for (size_t i = 0; i < strlen(resp); i++)
		call(s, OBS_RX, resp + i, 1);
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_string_equal(s->x[0].method, "POST");
	assert_string_equal(s->x[0].host, "example.org:81");
	assert_string_equal(s->x[0].path, "/p/q");
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[0].ds, strlen(req));
	assert_int_equal(s->x[0].dr, strlen(resp));
	assert_int_equal(s->x[0].t3, t_in(1));
	assert_int_equal(s->x[0].t4, t_out((int)strlen(req)));
	assert_int_equal(s->x[0].tfb, t_out((int)strlen(req) + 1));
	assert_int_equal(s->x[0].t6, t_out((int)(strlen(req) + strlen(resp))));
}

/* A request line longer than the framer keeps of a line (a long query
 * string) and a long header it does not read, cut by the ends of their
 * calls: the method, path and host are read all the same, the Host line
 * cut too, and a status line cut short; one exchange. */
static void test_long_lines(void **state)
{
	struct run *s = run_new();
	const char *resp[] = { "HTTP/1.1 20", "0 OK\r\nContent-Le",
			       "ngth: 3\r\n\r\nxyz" };
	char req[1400];
	size_t n = 0, rn = 0;

	(void)state;
	n += (size_t)snprintf(req + n, sizeof(req) - n, "GET /search?q=");
	memset(req + n, 'a', 800);
	n += 800;
	n += (size_t)snprintf(req + n, sizeof(req) - n,
			      " HTTP/1.1\r\nCookie: %0400d\r\nHost: exam", 0);
	for (size_t i = 0; i < n; i += 100)
		call(s, OBS_TX, req + i, n - i < 100 ? n - i : 100);
	call(s, OBS_TX, "ple.org\r\n\r\n", 11);
	for (size_t i = 0; i < 3; i++) {
		call(s, OBS_RX, resp[i], strlen(resp[i]));
		rn += strlen(resp[i]);
	}
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_string_equal(s->x[0].method, "GET");
	assert_string_equal(s->x[0].path, "/search");
	assert_string_equal(s->x[0].host, "example.org");
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[0].ds, n + 11);
	assert_int_equal(s->x[0].dr, rn);
}

/* ---- what the followers do not read (obs_h1_unread, obs_ws_unread) ---- */

struct facts {
	int n;
	uint8_t kind[16];
	uint64_t begin[16], offset[16];
	uint16_t status[16];
};

static void fact(void *ctx, const struct obs_h1_fact *f)
{
	struct facts *x = ctx;

	assert_true(x->n < 16);
	x->kind[x->n] = f->kind;
	x->begin[x->n] = f->begin;
	x->offset[x->n] = f->offset;
	x->status[x->n++] = f->head->status;
}

static void ws_msg(void *ctx, uint8_t opcode, uint64_t size, uint64_t end)
{
	struct facts *x = ctx;

	assert_true(x->n < 16);
	x->kind[x->n] = opcode;
	x->begin[x->n] = size;
	x->offset[x->n++] = end;
}

/* The same facts in a as in b, in the same order. */
static void assert_same_facts(const struct facts *a, const struct facts *b)
{
	assert_int_equal(b->n, a->n);
	assert_memory_equal(b->kind, a->kind, sizeof(a->kind));
	assert_memory_equal(b->begin, a->begin, sizeof(a->begin));
	assert_memory_equal(b->offset, a->offset, sizeof(a->offset));
	assert_memory_equal(b->status, a->status, sizeof(a->status));
}

/* Responses (a body of known length, a chunked one, a 304) fed whole, and
 * fed a few bytes at a time with what the framer does not read passed:
 * the same facts; the bytes passed are the bodies' and the chunks'. */
static void test_unread_passes(void **state)
{
	static char r[4096];
	size_t n = 0, passed = 0;
	struct obs_h1 whole, parts;
	struct facts a = { 0 }, b = { 0 };

	(void)state;
	n += (size_t)snprintf(r + n, sizeof(r) - n,
			      "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
	memset(r + n, 'x', 1000);
	n += 1000;
	n += (size_t)snprintf(r + n, sizeof(r) - n,
			      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			      "\r\n300\r\n");
	memset(r + n, 'y', 0x300);
	n += 0x300;
	n += (size_t)snprintf(r + n, sizeof(r) - n,
			      "\r\n0\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n");
	obs_h1_init(&whole, fact, &a);
	obs_h1_init(&parts, fact, &b);
	for (int i = 0; i < 3; i++) { /* three requests asked */
		const char *get = "GET / HTTP/1.1\r\n\r\n";

		obs_h1_feed(&whole, OBS_TX, (const uint8_t *)get, strlen(get));
		obs_h1_feed(&parts, OBS_TX, (const uint8_t *)get, strlen(get));
	}
	a.n = b.n = 0;
	obs_h1_feed(&whole, OBS_RX, (const uint8_t *)r, n);
	for (size_t at = 0; at < n;) {
		size_t k = obs_h1_unread(&parts, OBS_RX);

		if (k) {
			k = k < n - at ? k : n - at;
			obs_h1_pass(&parts, OBS_RX, k);
			passed += k;
		} else {
			k = n - at < 7 ? n - at : 7;
			obs_h1_feed(&parts, OBS_RX, (const uint8_t *)r + at, k);
		}
		at += k;
	}
	assert_true(passed >= 1000 + 0x300 - 2 * 7);
	assert_int_equal(a.n, 6); /* head and end, three times */
	assert_same_facts(&a, &b);
	assert_int_equal(obs_h1_unread(&parts, OBS_RX), 0);
	obs_h1_eof(&parts, OBS_RX);
	assert_int_equal(obs_h1_unread(&parts, OBS_RX), SIZE_MAX);
}

static void test_ws_unread_passes(void **state)
{
	/* a text message of 300 bytes in two frames, a ping between them,
	 * a binary one of 70000 */
	static uint8_t f[80000];
	size_t n = 0, passed = 0;
	struct obs_wsframe whole, parts;
	struct facts a = { 0 }, b = { 0 };

	(void)state;
	f[n++] = 0x01, f[n++] = 100, n += 100;
	f[n++] = 0x89, f[n++] = 4, n += 4;
	f[n++] = 0x80, f[n++] = 126, f[n++] = 0, f[n++] = 200, n += 200;
	f[n++] = 0x82, f[n++] = 127;
	for (int i = 0; i < 8; i++)
		f[n++] = (uint8_t)((uint64_t)70000 >> (8 * (7 - i)));
	n += 70000;
	obs_ws_init(&whole);
	obs_ws_init(&parts);
	obs_ws_feed(&whole, f, n, ws_msg, &a);
	for (size_t at = 0; at < n;) {
		size_t k = obs_ws_unread(&parts);

		if (k) {
			k = k < n - at ? k : n - at;
			obs_ws_pass(&parts, k, ws_msg, &b);
			passed += k;
		} else {
			k = 1;
			obs_ws_feed(&parts, f + at, k, ws_msg, &b);
		}
		at += k;
	}
	assert_int_equal(passed, 100 + 4 + 200 + 70000);
	assert_int_equal(a.n, 3);
	assert_same_facts(&a, &b);
}

/* A large body is one event however many receives bring it; the
 * receive that tries again after its end begins the next event. */
static void test_merged_calls(void **state)
{
	struct run *s = run_new();
	static char chunk[4096];
	const char *head = "HTTP/1.1 200 OK\r\nContent-Length: 409600\r\n\r\n";
	uint64_t before, body;
	int last = 0;

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	send_str(s, "GET /big HTTP/1.1\r\nHost: h\r\n\r\n");
	recv_str(s, head);
	body = s->n_events - 2; /* the head's call event, then its fact */
	before = s->n_events;
	for (int i = 0; i < 100; i++) {
		last = call(s, OBS_RX, chunk, sizeof(chunk));
		call(s, OBS_RX, NULL, 0);
	}
	assert_int_equal(s->n_events - before, 1);
	assert_int_equal(s->events[body].kind, OBS_EV_CALL);
	assert_int_equal(s->events[body].calls, 200);
	assert_int_equal(s->events[body].bytes, strlen(head) + 409600);
	assert_int_equal(s->events[body].t_out, t_out(last));
	finish(s);
	assert_int_equal(s->n_x, 1);
	assert_int_equal(s->x[0].t6, t_out(last));
	assert_int_equal(s->x[0].recv_calls, 200);
	assert_int_equal(s->x[0].dr, strlen(head) + 409600);
}

/* Not HTTP at all: a server that speaks first, exchanges as runs. */
static void test_server_first(void **state)
{
	struct run *s = run_new();

	(void)state;
	recv_str(s, "220 smtp ready\r\n");
	send_str(s, "EHLO x\r\n");
	recv_str(s, "250 ok\r\n");
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_true(s->x[0].flags & OBS_CXF_SERVER_FIRST);
	assert_int_equal(s->x[1].ds, 8);
	assert_int_equal(s->x[1].dr, 8);
	assert_int_equal(s->x[1].flags & OBS_CXF_HTTP, 0);
}

/* A spool's event is checked as it is decoded: the values the tools look
 * up by (how T2 was learned, the protocol) must be ones they know. */
static void test_evrec_checks(void **state)
{
	struct obs_event up = { .seq = 1, .kind = OBS_EV_UP, .aux = 4 };
	struct obs_event out[2];
	struct obs_record rec = { .kind = OBS_REC_EVENT };
	unsigned int n;

	(void)state;
	obs_evrec_encode(&up, &rec, NULL);
	assert_null(obs_evrec_decode(&rec, NULL, out, &n));
	assert_int_equal(n, 1);
	assert_int_equal(out[0].aux, OBS_UP_FIRST_IO);
	up.aux = 6;
	obs_evrec_encode(&up, &rec, NULL);
	assert_non_null(obs_evrec_decode(&rec, NULL, out, &n));
	up.err = ECONNREFUSED; /* a failed outcome says no how */
	obs_evrec_encode(&up, &rec, NULL);
	assert_null(obs_evrec_decode(&rec, NULL, out, &n));

	struct obs_event proto = { .seq = 2,
				   .kind = OBS_EV_PROTO,
				   .aux = OBS_APP_H2 + 1 };
	obs_evrec_encode(&proto, &rec, NULL);
	assert_non_null(obs_evrec_decode(&rec, NULL, out, &n));
}

/* A response's fact rides in the record of the call event just before
 * it, and comes out of it as the second event; updated, the call keeps
 * its fact and the fact its call. A fact that is not the call's next
 * event, or that has labels, does not ride. */
static void test_evrec_attach(void **state)
{
	struct obs_event call = { .seq = 7,
				  .kind = OBS_EV_CALL,
				  .dir = OBS_RX,
				  .calls = 1,
				  .t_in = 100,
				  .t_data = 150,
				  .t_out = 150,
				  .offset = 40,
				  .bytes = 338,
				  .first_bytes = 338 };
	struct obs_event fact = { .seq = 8,
				  .kind = OBS_EV_H1,
				  .dir = OBS_RX,
				  .offset = 278,
				  .u.h1 = {
					  .kind = OBS_H1_HEAD,
					  .begin = 40,
					  .head = { .status = 200,
						    .body = OBS_H1_BODY_LENGTH,
						    .length = 100 } } };
	struct obs_event out[2];
	struct obs_record rec = { .kind = OBS_REC_EVENT };
	unsigned int n;

	(void)state;
	obs_evrec_encode(&call, &rec, NULL);
	assert_true(obs_evrec_attach(&rec, &fact));
	fact.u.h1.ended = true;
	fact.u.h1.end = 378;
	assert_true(obs_evrec_attach(&rec, &fact));
	call.calls = 2;
	call.t_out = 300;
	obs_evrec_update_call(&call, &rec);
	assert_null(obs_evrec_decode(&rec, NULL, out, &n));
	assert_int_equal(n, 2);
	assert_int_equal(out[0].kind, OBS_EV_CALL);
	assert_int_equal(out[0].seq, 7);
	assert_int_equal(out[0].calls, 2);
	assert_int_equal(out[0].t_out, 300);
	assert_int_equal(out[0].bytes, 338);
	assert_int_equal(out[1].kind, OBS_EV_H1);
	assert_int_equal(out[1].seq, 8);
	assert_int_equal(out[1].dir, OBS_RX);
	assert_int_equal(out[1].offset, 278);
	assert_int_equal(out[1].u.h1.begin, 40);
	assert_int_equal(out[1].u.h1.end, 378);
	assert_true(out[1].u.h1.ended);
	assert_int_equal(out[1].u.h1.head.status, 200);

	struct obs_event late = fact, labelled = fact;
	struct obs_record plain = { .kind = OBS_REC_EVENT };

	obs_evrec_encode(&call, &plain, NULL);
	late.seq = 9;
	assert_false(obs_evrec_attach(&plain, &late));
	labelled.dir = call.dir = OBS_TX;
	obs_evrec_encode(&call, &plain, NULL);
	strcpy(labelled.u.h1.head.path, "/a");
	assert_false(obs_evrec_attach(&plain, &labelled));
	assert_null(obs_evrec_decode(&plain, NULL, out, &n));
	assert_int_equal(n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keepalive),
		cmocka_unit_test(test_labels_once),
		cmocka_unit_test(test_expect_continue),
		cmocka_unit_test(test_early_hints),
		cmocka_unit_test(test_pipelining),
		cmocka_unit_test(test_no_body),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_close_delimited),
		cmocka_unit_test(test_empty_reply),
		cmocka_unit_test(test_websocket),
		cmocka_unit_test(test_connect_tls),
		cmocka_unit_test(test_tls_records),
		cmocka_unit_test(test_fastopen),
		cmocka_unit_test(test_send_entry),
		cmocka_unit_test(test_send_entry_apart),
		cmocka_unit_test(test_unfollowed_bytes),
		cmocka_unit_test(test_https_plain),
		cmocka_unit_test(test_connect_http),
		cmocka_unit_test(test_connect_optimistic),
		cmocka_unit_test(test_byte_by_byte),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_unread_passes),
		cmocka_unit_test(test_ws_unread_passes),
		cmocka_unit_test(test_merged_calls),
		cmocka_unit_test(test_server_first),
		cmocka_unit_test(test_evrec_checks),
		cmocka_unit_test(test_evrec_attach),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) | test_core_h2();
}
