/* test_core_h2.c - HTTP/2 through the capture and the core (core_run.h):
 * scripted connections built frame by frame (h2frames.h) give one
 * exchange per stream, with its times from the calls that moved its
 * frames, its bytes as the follower counts them, its labels and status:
 * streams interleaved, a stream reset, a GOAWAY, 1xx then the final
 * status, CONTINUATION, every frame split byte by byte, a large download
 * that stays a few events, an h2c Upgrade, and a connection that stops
 * being HTTP/2 (frames that break the rules, bytes that cannot be seen). The
 * tests are run by test_core.c's main.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_run.h"
#include "evrec.h"
#include "h2frames.h"
#include "spool_format.h"
#include "test_core_h2.h"

/* The step of the call that plays chunk i, the run's calls before it
 * being `before` (whole chunks). */
static int step_of(int before, int i)
{
	return before + 1 + i;
}

/* The client preface, then the rest of the script byte by byte, one a
 * call (the preface chooses HTTP/2 only whole: its first call). */
static void play_bytes(struct run *s, const struct script *h)
{
	for (int i = 0; i < h->n; i++)
		for (size_t off = 0; off < h->c[i].n;) {
			size_t k = i == 0 && off == 0 ? 24 : 1;

			call(s, h->c[i].dir == TX ? OBS_TX : OBS_RX,
			     h->c[i].p + off, k);
			off += k;
		}
}

/* The step of the call that moved byte `at` of direction dir, played by
 * play_bytes from step before + 1. */
static int byte_step(const struct script *h, int before, int dir, size_t at)
{
	int step = before + 1 - 23; /* as if the preface were 24 calls */

	for (int i = 0; i < h->n; i++) {
		if (h->c[i].dir == dir && at < h->c[i].n)
			return step + (int)at;
		if (h->c[i].dir == dir)
			at -= h->c[i].n;
		step += (int)h->c[i].n;
	}
	fail_msg("no byte %zu in direction %d", at, dir);
	return 0;
}

/* The exchange of stream id. */
static const struct obs_core_exchange *stream(const struct run *s, uint32_t id)
{
	for (int i = 0; i < s->n_x; i++)
		if (s->x[i].stream == id)
			return &s->x[i];
	fail_msg("no exchange of stream %u", id);
	return NULL;
}

/* A connection past its handshake, the next bytes a call of their own. */
static struct script *begun(void)
{
	struct script *h = script_new();

	handshake(h);
	cut(h);
	return h;
}

/* Two streams at once: a GET (one HEADERS with END_STREAM) and a POST
 * with a body sent in the next call; the answers interleave. */
static struct script *two_streams(void)
{
	struct script *h = begun();

	request(h, 1, B_END_STREAM, "GET", "/a?token=SECRET", "example.org");
	request(h, 3, 0, "POST", "/up;jsessionid=SECRET",
		"u:pw@example.org:8080");
	cut(h);
	data(h, TX, 3, 1000, true, 0);
	cut(h);
	response(h, 3, 0, "201");
	response(h, 1, 0, "200");
	data(h, RX, 1, 500, true, 0);
	cut(h);
	data(h, RX, 3, 10, true, 0);
	return h;
}

static void assert_two_streams_labelled(const struct run *s,
					const struct script *h)
{
	const struct obs_core_exchange *a = stream(s, 1), *b = stream(s, 3);

	assert_int_equal(s->n_x, 2);
	assert_int_equal(a->seq, 1); /* numbered as they opened */
	assert_int_equal(b->seq, 2);
	assert_string_equal(a->method, "GET");
	assert_string_equal(a->path, "/a");
	assert_string_equal(a->host, "example.org");
	assert_string_equal(b->method, "POST");
	assert_string_equal(b->path, "/up");
	assert_string_equal(b->host, "example.org:8080");
	assert_int_equal(a->status, 200);
	assert_int_equal(b->status, 201);
	for (int i = 0; i < 2; i++) {
		const struct obs_core_exchange *x = i ? b : a;
		uint32_t id = i ? 3 : 1;

		assert_true(x->flags & OBS_CXF_H2);
		assert_true(x->flags & OBS_CXF_HTTP);
		assert_int_equal(x->flags & (OBS_CXF_CUT | OBS_CXF_RESET), 0);
		assert_int_equal(x->ds, h->want[TX][id]);
		assert_int_equal(x->dr, h->want[RX][id]);
		assert_true(x->t3 <= x->t4 && x->t4 <= x->t5 &&
			    x->t5 <= x->tfb && x->tfb <= x->t6);
	}
	assert_int_equal(s->replay.conn.app_proto, OBS_AP_H2C);
	assert_int_equal(s->replay.conn.exchanges, 2);
}

static void test_h2_interleaved(void **state)
{
	struct script *h = two_streams();
	struct run *s = run_new();
	const struct obs_core_exchange *a, *b;

	(void)state;
	run_h2(s, h, 0);
	finish(s);
	assert_two_streams_labelled(s, h);
	a = stream(s, 1);
	b = stream(s, 3);
	/* chunks: 0-2 the handshake, 3 both requests, 4 the POST's body, 5
	 * both answers and the GET's body, 6 the POST's answer's body */
	assert_int_equal(a->t3, t_in(step_of(0, 3)));
	assert_int_equal(a->t4, t_out(step_of(0, 3)));
	assert_int_equal(a->t5, t_in(step_of(0, 5)));
	assert_int_equal(a->tfb, t_out(step_of(0, 5)));
	assert_int_equal(a->t6, t_out(step_of(0, 5)));
	assert_int_equal(b->t3, t_in(step_of(0, 3)));
	assert_int_equal(b->t4, t_out(step_of(0, 4)));
	assert_int_equal(b->tfb, t_out(step_of(0, 5)));
	assert_int_equal(b->t6, t_out(step_of(0, 6)));
	assert_int_equal(a->send_calls, 1);
	assert_int_equal(a->recv_calls, 1);
	assert_int_equal(b->send_calls, 2);
	assert_int_equal(b->recv_calls, 2);
	/* given out as they closed: the GET first */
	assert_int_equal(s->x[0].stream, 1);
	script_free(h);
}

/* The same connection a byte a call: the same labels and bytes; each
 * time is the call that moved the byte that gives it. */
static void test_h2_byte_by_byte(void **state)
{
	struct script *h = two_streams();
	struct run *s = run_new();
	const struct obs_core_exchange *a, *b;
	size_t tx3, rx5, hdr3, end1;

	(void)state;
	play_bytes(s, h);
	finish(s);
	assert_two_streams_labelled(s, h);
	a = stream(s, 1);
	b = stream(s, 3);
	/* where the chunks begin in their direction's bytes */
	tx3 = h->c[0].n + h->c[2].n;
	rx5 = h->c[1].n;
	hdr3 = h->want[RX][3] - (9 + 10); /* the 201's HEADERS frame */
	end1 = rx5 + hdr3 + h->want[RX][1] - 1;
	assert_int_equal(a->t3, t_in(byte_step(h, 0, TX, tx3)));
	assert_int_equal(a->t4,
			 t_out(byte_step(h, 0, TX, tx3 + h->want[TX][1] - 1)));
	assert_int_equal(b->tfb, t_out(byte_step(h, 0, RX, rx5 + 8)));
	assert_int_equal(a->t6, t_out(byte_step(h, 0, RX, end1)));
	assert_int_equal(b->t6, t_out(byte_step(h, 0, RX, h->fed[RX] - 1)));
	script_free(h);
}

/* Streams that ask for the same host and path as the one before say so
 * instead of writing them again; the replay gives them them all the same. */
static void test_h2_labels_once(void **state)
{
	static const char *const paths[] = { "/same?a=1", "/same", "/same",
					     "/other", "/same" };
	struct script *h = begun();
	struct run *s = run_new();
	int again = 0, labelled = 0;

	(void)state;
	for (uint32_t i = 0; i < 5; i++)
		request(h, 1 + 2 * i, B_END_STREAM, "GET", paths[i], "h");
	cut(h);
	for (uint32_t i = 0; i < 5; i++)
		response(h, 1 + 2 * i, B_END_STREAM, "200");
	run_h2(s, h, 0);
	finish(s);

	for (uint64_t i = 0; i < s->n_events; i++) {
		const struct obs_event *ev = &s->events[i];

		if (ev->kind != OBS_EV_H2 || !(ev->u.h2.what & OBS_H2F_REQUEST))
			continue;
		if (ev->u.h2.label_flags & OBS_H2L_AGAIN) {
			assert_string_equal(ev->u.h2.path, "");
			again++;
		} else {
			assert_string_not_equal(ev->u.h2.path, "");
			labelled++;
		}
	}
	assert_int_equal(again, 2);
	assert_int_equal(labelled, 3);
	assert_int_equal(s->n_x, 5);
	for (uint32_t i = 0; i < 5; i++) {
		assert_string_equal(stream(s, 1 + 2 * i)->path,
				    i == 3 ? "/other" : "/same");
		assert_string_equal(stream(s, 1 + 2 * i)->host, "h");
	}
	script_free(h);
}

/* RST_STREAM from the server on stream 1, then a GOAWAY that refuses
 * stream 5; stream 3 is answered. */
static void test_h2_reset_goaway(void **state)
{
	struct script *h = begun();
	struct run *s = run_new();

	(void)state;
	request(h, 1, B_END_STREAM, "GET", "/1", "h");
	request(h, 3, B_END_STREAM, "GET", "/3", "h");
	request(h, 5, B_END_STREAM, "GET", "/5", "h");
	cut(h);
	rst(h, RX, 1, NGHTTP2_CANCEL);
	goaway(h, RX, 3, NGHTTP2_NO_ERROR);
	response(h, 3, B_END_STREAM, "204");
	run_h2(s, h, 0);
	finish(s);

	assert_int_equal(s->n_x, 3);
	assert_true(stream(s, 1)->flags & OBS_CXF_RESET);
	assert_int_equal(stream(s, 1)->stream_error, NGHTTP2_CANCEL);
	assert_int_equal(stream(s, 1)->status, 0);
	assert_int_equal(stream(s, 1)->flags & OBS_CXF_CUT, 0);
	assert_true(stream(s, 5)->flags & OBS_CXF_RESET);
	assert_int_equal(stream(s, 5)->stream_error, NGHTTP2_REFUSED_STREAM);
	assert_string_equal(stream(s, 5)->path, "/5");
	assert_int_equal(stream(s, 3)->status, 204);
	assert_int_equal(stream(s, 3)->flags & (OBS_CXF_RESET | OBS_CXF_CUT),
			 0);
	script_free(h);
}

/* A 103 then the 200 in another call: the status is the 200, TFB the
 * 103's frame (the first answer frame). */
static void test_h2_interim(void **state)
{
	struct script *h = begun();
	struct run *s = run_new();

	(void)state;
	request(h, 1, B_END_STREAM, "GET", "/", "h");
	cut(h);
	response(h, 1, 0, "103");
	cut(h);
	response(h, 1, 0, "200");
	data(h, RX, 1, 5, true, 0);
	run_h2(s, h, 0);
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_int_equal(s->x[0].status, 200);
	assert_int_equal(s->x[0].tfb, t_out(step_of(0, 4)));
	assert_int_equal(s->x[0].t6, t_out(step_of(0, 5)));
	script_free(h);
}

/* A request's header block in HEADERS and CONTINUATION frames of 10
 * bytes, a path too long for its field: cut, and said so. */
static void test_h2_continuation(void **state)
{
	struct script *h = script_new();
	struct run *s = run_new();
	char path[200];
	const char *nv[] = { ":method", "GET",	     ":scheme",	   "http",
			     ":path",	path,	     ":authority", "h",
			     "accept",	"text/html", NULL };

	(void)state;
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	handshake(h);
	cut(h);
	block(h, TX, NGHTTP2_HEADERS, 1, B_END_STREAM, 10, 0, nv);
	cut(h);
	response(h, 1, B_END_STREAM, "404");
	run_h2(s, h, 0);
	finish(s);

	assert_int_equal(s->n_x, 1);
	assert_memory_equal(s->x[0].path, path, sizeof(s->x[0].path));
	assert_true(s->x[0].label_flags & OBS_H1F_PATH_CUT);
	assert_int_equal(s->x[0].status, 404);
	assert_int_equal(s->x[0].ds, h->want[TX][1]);
	script_free(h);
}

/* 4 MiB of DATA in 256 receives, nothing sent between: a few events,
 * and the exchange's Dr every byte. */
static void test_h2_download(void **state)
{
	struct script *h = begun();
	struct run *s = run_new();
	uint64_t before;
	int last;

	(void)state;
	request(h, 1, B_END_STREAM, "GET", "/big", "h");
	cut(h);
	response(h, 1, 0, "200");
	for (int i = 0; i < 256; i++) {
		cut(h);
		data(h, RX, 1, 16384, i == 255, 0);
	}
	run_h2(s, h, 0);
	last = s->step - 1;
	before = s->n_events;
	finish(s);
	assert_int_equal(s->n_x, 1);
	assert_int_equal(s->x[0].dr, h->want[RX][1]);
	assert_true(s->x[0].dr > 4u << 20);
	assert_int_equal(s->x[0].recv_calls, 257);
	assert_int_equal(s->x[0].t6, t_out(last));
	/* the handshake, the request and its fact, the answer's call event
	 * and fact, the body's call event, its fact; the close */
	assert_true(before < 16);
	script_free(h);
}

/* An h2c Upgrade: the HTTP/1.1 request is stream 1, the 101 its interim
 * status, its answer in frames; then a stream of its own. */
static void test_h2_upgrade(void **state)
{
	static const char ask[] =
		"GET /first?x=1 HTTP/1.1\r\nHost: h\r\n"
		"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
		"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n";
	static const char switching[] =
		"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
		"Upgrade: h2c\r\n\r\n";
	struct script *h = script_new();
	struct run *s = run_new();
	uint8_t *first;
	size_t n;
	int sent, got;
	const struct obs_core_exchange *a, *b;

	(void)state;
	settings(h, RX, 1, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100u);
	response(h, 1, 0, "200");
	data(h, RX, 1, 100, true, 0);
	cut(h);
	preface(h);
	settings(h, TX, 0);
	settings_ack(h, TX);
	request(h, 3, B_END_STREAM, "GET", "/second", "h");
	cut(h);
	response(h, 3, B_END_STREAM, "200");
	/* the 101 and the server's first frames in one receive */
	n = strlen(switching) + h->c[0].n;
	first = malloc(n);
	assert_non_null(first);
	memcpy(first, switching, strlen(switching));
	memcpy(first + strlen(switching), h->c[0].p, h->c[0].n);
	sent = send_str(s, ask);
	got = call(s, OBS_RX, first, n);
	call(s, OBS_TX, h->c[1].p, h->c[1].n);
	call(s, OBS_RX, h->c[2].p, h->c[2].n);
	finish(s);

	assert_int_equal(s->n_x, 2);
	a = stream(s, 1);
	b = stream(s, 3);
	assert_int_equal(a->seq, 1);
	assert_int_equal(b->seq, 2);
	assert_string_equal(a->path, "/first");
	assert_int_equal(a->status, 200);
	assert_int_equal(a->interim_status, 101);
	assert_true(a->flags & OBS_CXF_H2);
	assert_int_equal(a->flags & OBS_CXF_CUT, 0);
	assert_int_equal(a->t3, t_in(sent));
	assert_int_equal(a->t4, t_out(sent));
	assert_int_equal(a->tfb, t_out(got));
	assert_int_equal(a->t6, t_out(got));
	assert_int_equal(a->ds, strlen(ask));
	assert_int_equal(a->dr, strlen(switching) + h->want[RX][1]);
	assert_string_equal(b->path, "/second");
	assert_int_equal(b->status, 200);
	assert_int_equal(b->ds, h->want[TX][3]);
	assert_int_equal(s->replay.conn.app_proto, OBS_AP_H2C);
	free(first);
	script_free(h);
}

/* Frames that break the rules: the streams under way are given out cut,
 * and the rest of the connection is runs of calls. */
static void test_h2_lost(void **state)
{
	static const uint8_t bad[] = { 0, 0, 3, NGHTTP2_PING, 0, 0, 0, 0, 0,
				       1, 2, 3 }; /* PING must be 8 */
	struct script *h = begun();
	struct run *s = run_new();

	(void)state;
	request(h, 1, B_END_STREAM, "GET", "/", "h");
	run_h2(s, h, 0);
	call(s, OBS_RX, bad, sizeof(bad));
	send_str(s, "more");
	recv_str(s, "bytes");
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_int_equal(s->x[0].stream, 1);
	assert_true(s->x[0].flags & OBS_CXF_CUT);
	assert_string_equal(s->x[0].path, "/");
	assert_int_equal(s->x[1].flags & (OBS_CXF_HTTP | OBS_CXF_H2), 0);
	assert_int_equal(s->x[1].ds, 4);
	script_free(h);
}

/* A receive whose bytes cannot be seen (MSG_TRUNC): the follower stops,
 * its stream is given out cut with what it had, the rest is runs. */
static void test_h2_unseen(void **state)
{
	struct script *h = begun();
	struct run *s = run_new();
	struct obs_call unseen = { .dir = OBS_RX, .result = 100 };

	(void)state;
	request(h, 1, B_END_STREAM, "GET", "/seen", "h");
	run_h2(s, h, 0);
	unseen.t_in = t_in(s->step);
	unseen.t_out = t_out(s->step++);
	obs_cap_call(&s->cap, &unseen);
	send_str(s, "after");
	recv_str(s, "more");
	finish(s);

	assert_int_equal(s->n_x, 2);
	assert_string_equal(s->x[0].path, "/seen");
	assert_true(s->x[0].flags & OBS_CXF_CUT);
	assert_int_equal(s->x[0].ds, h->want[TX][1]);
	assert_int_equal(s->x[1].flags & OBS_CXF_H2, 0);
	assert_int_equal(s->x[1].ds, 5);
	script_free(h);
}

/* Without memory for HTTP/2, the preface's connection is runs of calls. */
static void test_h2_no_memory(void **state)
{
	struct script *h = two_streams();
	struct run *s = run_new();

	(void)state;
	assert_non_null(obs_cap_h2_reclaim(&s->cap));
	run_h2(s, h, 0);
	finish(s);
	assert_true(s->n_x >= 1);
	for (int i = 0; i < s->n_x; i++)
		assert_int_equal(s->x[i].flags & OBS_CXF_H2, 0);
	script_free(h);
}

/* A stream's fact through the spool's records and back; the values the
 * tools look up by are checked as they are decoded. */
static void test_h2_evrec(void **state)
{
	struct obs_event ev = {
		.seq = 7,
		.kind = OBS_EV_H2,
		.dir = OBS_RX,
		.offset = 12345,
		.u.h2 = { .stream = 0x7ffffffd,
			  .what = OBS_H2F_REQUEST | OBS_H2F_RESET |
				  OBS_H2F_CLOSE,
			  .code = 0xdeadbeef,
			  .label_flags = OBS_H1F_HOST_CUT,
			  .begin = 99,
			  .bytes = { 1ull << 40, 3 },
			  .calls = { 4, 5 },
			  .method = "PATCH",
			  .host = "example.org",
			  .path = "/p" },
	};
	struct obs_record rec = { .kind = OBS_REC_EVENT };
	struct obs_record lab = { .kind = OBS_REC_EVENT };
	struct obs_event out[2];
	unsigned int n;

	(void)state;
	assert_int_equal(obs_evrec_records(&ev), 2);
	obs_evrec_encode(&ev, &rec, &lab);
	assert_true(obs_evrec_has_labels(&rec));
	/* a fact has no times: the reader checks them as times */
	assert_int_equal(rec.u.event.t_in, 0);
	assert_int_equal(rec.u.event.t_data, 0);
	assert_int_equal(rec.u.event.t_out, 0);
	assert_null(obs_evrec_decode(&rec, &lab, out, &n));
	assert_int_equal(n, 1);
	assert_memory_equal(&out[0].u.h2, &ev.u.h2, sizeof(ev.u.h2));
	assert_int_equal(out[0].offset, ev.offset);
	assert_int_equal(out[0].seq, ev.seq);

	ev.u.h2.what = 0x100; /* no such fact */
	obs_evrec_encode(&ev, &rec, NULL);
	assert_non_null(obs_evrec_decode(&rec, NULL, out, &n));
	ev.u.h2.what = OBS_H2F_END;
	ev.u.h2.label_flags = 0x10;
	obs_evrec_encode(&ev, &rec, NULL);
	assert_non_null(obs_evrec_decode(&rec, NULL, out, &n));
	ev.u.h2.label_flags = 0;
	ev.u.h2.status = 1000;
	obs_evrec_encode(&ev, &rec, NULL);
	assert_non_null(obs_evrec_decode(&rec, NULL, out, &n));
}

int test_core_h2(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h2_interleaved),
		cmocka_unit_test(test_h2_byte_by_byte),
		cmocka_unit_test(test_h2_labels_once),
		cmocka_unit_test(test_h2_reset_goaway),
		cmocka_unit_test(test_h2_interim),
		cmocka_unit_test(test_h2_continuation),
		cmocka_unit_test(test_h2_download),
		cmocka_unit_test(test_h2_upgrade),
		cmocka_unit_test(test_h2_lost),
		cmocka_unit_test(test_h2_unseen),
		cmocka_unit_test(test_h2_no_memory),
		cmocka_unit_test(test_h2_evrec),
	};

	return cmocka_run_group_tests_name("core_h2", tests, NULL, NULL);
}
