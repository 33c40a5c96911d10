/* test_h2.c - the HTTP/2 frame follower (libobserve/h2.c) fed connections
 * made of real frames: header blocks from libnghttp2's own HPACK deflater
 * (this program links libnghttp2; the follower dlopens it), in every split:
 * each direction's bytes whole, byte by byte, in two, and in random pieces,
 * each piece in a buffer of its exact size (valgrind sees a read beyond).
 * Every split must give the same events and the same bytes per stream.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>

#include "h2.h"
#include "h2frames.h"
#include "hpack.h"
#include "hpack_linked.h"

/* ---- what the follower says ---- */

struct ev {
	uint8_t kind, dir;
	uint16_t status;
	uint32_t stream, code;
	struct obs_h2_req req;
	int call; /* the feed call it came in (1-based) */
};

struct log {
	struct ev *ev;
	int n, cap;
	int call;
	uint64_t bytes[2][MAX_SID];
	uint64_t total[2];
	uint64_t fed[2]; /* bytes fed so far, by direction */
	int unlabelled;	 /* REQUEST events without labels */
};

static void on_event(void *ctx, const struct obs_h2_ev *e)
{
	struct log *lg = ctx;
	struct ev *x;

	assert_true(e->kind >= OBS_H2_EV_BYTES && e->kind <= OBS_H2_EV_LOST);
	assert_true(e->dir == TX || e->dir == RX);
	assert_true(e->at <= lg->fed[e->dir]);
	if (e->kind == OBS_H2_EV_CLOSE) { /* its totals: the BYTES said */
		assert_true(e->stream < MAX_SID);
		assert_int_equal(e->total[TX], lg->bytes[TX][e->stream]);
		assert_int_equal(e->total[RX], lg->bytes[RX][e->stream]);
		assert_true(e->calls[TX] <= e->total[TX]);
		assert_true(e->calls[RX] <= e->total[RX]);
	}
	if (e->kind == OBS_H2_EV_REQUEST && e->req == NULL) {
		lg->unlabelled++;
		return;
	}
	if (e->kind == OBS_H2_EV_BYTES) {
		assert_true(e->bytes > 0);
		assert_true(e->stream < MAX_SID);
		lg->bytes[e->dir][e->stream] += e->bytes;
		lg->total[e->dir] += e->bytes;
		return;
	}
	if (lg->n == lg->cap) {
		lg->cap = lg->cap ? 2 * lg->cap : 256;
		lg->ev = realloc(lg->ev, (size_t)lg->cap * sizeof(*lg->ev));
		assert_non_null(lg->ev);
	}
	x = &lg->ev[lg->n++];
	memset(x, 0, sizeof(*x));
	x->kind = e->kind;
	x->dir = e->dir;
	x->status = e->status;
	x->stream = e->stream;
	x->code = e->code;
	x->call = lg->call;
	if (e->kind == OBS_H2_EV_REQUEST) {
		assert_non_null(e->req);
		x->req = *e->req;
	}
}

static void log_free(struct log *lg)
{
	free(lg->ev);
	free(lg);
}

enum { SPLIT_WHOLE, SPLIT_BYTES, SPLIT_HALVES, SPLIT_RANDOM };

static uint32_t rnd_state;
/* the inflater the follower is given (NULL: none) */
static const struct obs_hpack *play_hpack = &obs_hpack_linked;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Feed p[0..n) from a buffer of exactly n bytes. */
static void feed_exact(struct obs_h2 *h, struct log *lg, int dir,
		       const uint8_t *p, size_t n)
{
	uint8_t *copy = malloc(n);

	assert_non_null(copy);
	memcpy(copy, p, n);
	lg->call++;
	lg->fed[dir] += n;
	obs_h2_call(h);
	obs_h2_feed(h, (enum obs_h2_dir)dir, copy, n, on_event, lg);
	free(copy);
}

static struct obs_h2 *h2_new(void)
{
	struct obs_h2 *h = malloc(sizeof(*h));

	assert_non_null(h);
	memset(h, 0xa5, sizeof(*h)); /* init must not rely on zeroed memory */
	return h;
}

/* Play the script split one way; the follower is left in *hp when hp is
 * not NULL (else ended and freed). */
static struct log *play_h(const struct script *s, int split, uint32_t seed,
			  struct obs_h2 **hp)
{
	struct log *lg = calloc(1, sizeof(*lg));
	struct obs_h2 *h = h2_new();

	assert_non_null(lg);
	rnd_state = seed;
	obs_h2_init(h, play_hpack);
	if (s->upgrade)
		obs_h2_upgrade(h, true);
	for (int i = 0; i < s->n; i++) {
		const struct chunk *c = &s->c[i];
		size_t off = 0;

		while (off < c->n) {
			size_t k = c->n - off;

			if (split == SPLIT_BYTES)
				k = 1;
			else if (split == SPLIT_HALVES && off == 0 && k > 1)
				k = k / 2;
			else if (split == SPLIT_RANDOM)
				k = 1 + rnd() % (rnd() % 4 ? 40 : 3000);
			if (k > c->n - off)
				k = c->n - off;
			feed_exact(h, lg, c->dir, c->p + off, k);
			off += k;
		}
	}
	if (hp) {
		*hp = h;
	} else {
		lg->call++;
		obs_h2_end(h, on_event, lg);
		free(h);
	}
	return lg;
}

static struct log *play(const struct script *s, int split, uint32_t seed)
{
	return play_h(s, split, seed, NULL);
}

static int count_kind(const struct log *lg, int kind)
{
	int n = 0;

	for (int i = 0; i < lg->n; i++)
		n += lg->ev[i].kind == kind;
	return n;
}

/* The first event of that kind on that stream (any stream: ~0u). */
static const struct ev *find(const struct log *lg, int kind, uint32_t sid)
{
	for (int i = 0; i < lg->n; i++)
		if (lg->ev[i].kind == kind &&
		    (sid == ~0u || lg->ev[i].stream == sid))
			return &lg->ev[i];
	return NULL;
}

/* The same, which must be there. */
static const struct ev *must(const struct log *lg, int kind, uint32_t sid)
{
	const struct ev *e = find(lg, kind, sid);

	if (!e) {
		fail_msg("no event of kind %d on stream %u", kind, sid);
		abort();
	}
	return e;
}

/* Its index in the log, or -1. */
static int pos(const struct log *lg, int kind, uint32_t sid)
{
	const struct ev *e = find(lg, kind, sid);

	return e ? (int)(e - lg->ev) : -1;
}

static bool lost(const struct log *lg)
{
	return find(lg, OBS_H2_EV_LOST, ~0u) != NULL;
}

static void assert_same(const struct log *a, const struct log *b,
			const char *how)
{
	if (a->n != b->n)
		fail_msg("%s: %d events, whole: %d", how, b->n, a->n);
	for (int i = 0; i < a->n; i++) {
		const struct ev *x = &a->ev[i], *y = &b->ev[i];

		if (x->kind != y->kind || x->dir != y->dir ||
		    x->stream != y->stream || x->code != y->code ||
		    x->status != y->status ||
		    memcmp(&x->req, &y->req, sizeof(x->req)) != 0)
			fail_msg("%s: event %d is kind %d stream %u, whole: "
				 "kind %d stream %u",
				 how, i, y->kind, y->stream, x->kind,
				 x->stream);
	}
	assert_memory_equal(a->bytes, b->bytes, sizeof(a->bytes));
}

/* With H2_SEEDS=DIR in the environment, each script played whole is also
 * written to DIR as an input of tests/fuzz/fuzz_h2.c: its seeds. */
static void write_seed(const struct script *s)
{
	static int n;
	const char *dir = getenv("H2_SEEDS");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/unit-%d", dir, ++n);
	f = fopen(path, "wb");
	assert_non_null(f);
	fputc(s->upgrade ? 1 : 0, f);
	for (int i = 0; i < s->n; i++) {
		const struct chunk *c = &s->c[i];
		uint8_t h[5] = { c->dir == RX ? '<' : '>',
				 (uint8_t)(c->n >> 24), (uint8_t)(c->n >> 16),
				 (uint8_t)(c->n >> 8), (uint8_t)c->n };

		fwrite(h, 1, 5, f);
		fwrite(c->p, 1, c->n, f);
	}
	assert_int_equal(fclose(f), 0);
}

/* Play every split: the same events and bytes each time, and (unless the
 * follower gave up) every byte fed said once. Returns the whole-call log. */
static struct log *play_all(const struct script *s)
{
	struct log *whole = play(s, SPLIT_WHOLE, 0);
	static const char *names[] = { "whole", "bytes", "halves", "random" };

	write_seed(s);

	for (int split = SPLIT_BYTES; split <= SPLIT_RANDOM; split++) {
		int seeds = split == SPLIT_RANDOM ? 4 : 1;

		for (int k = 0; k < seeds; k++) {
			struct log *lg = play(s, split, 7u + (uint32_t)k);

			assert_same(whole, lg, names[split]);
			log_free(lg);
		}
	}
	if (!lost(whole)) {
		assert_int_equal(whole->total[TX], s->fed[TX]);
		assert_int_equal(whole->total[RX], s->fed[RX]);
	}
	return whole;
}

/* Every stream's bytes as h2.h's rules count them. */
static void assert_bytes_as_built(const struct script *s, const struct log *lg)
{
	for (int d = 0; d < 2; d++)
		for (uint32_t i = 0; i < MAX_SID; i++)
			if (s->want[d][i] != lg->bytes[d][i])
				fail_msg("dir %d stream %u: %llu bytes, built "
					 "%llu",
					 d, i,
					 (unsigned long long)lg->bytes[d][i],
					 (unsigned long long)s->want[d][i]);
}

static void assert_field(const char *field, size_t size, const char *want)
{
	char got[80] = { 0 };

	memcpy(got, field, size);
	assert_string_equal(got, want);
}

/* ---- the tests ---- */

/* Three streams that overlap: a GET, a POST with a padded body (HEADERS
 * with PRIORITY and padding), a request whose block spans CONTINUATIONs;
 * the answers in another order, pings in between. */
static void test_interleaved_streams(void **state)
{
	struct script *s = script_new();
	const char *big_nv[2 * 40 + 11] = {
		":method", "GET",	 ":scheme",	"http", ":path",
		"/c/d.js", ":authority", "example.org", NULL
	};
	char names[40][16], values[40][200];
	struct log *lg;
	const struct ev *e;

	(void)state;
	for (int i = 0; i < 40; i++) { /* 8 KiB of other fields */
		snprintf(names[i], sizeof(names[i]), "x-field-%d", i);
		memset(values[i], 'a' + i % 26, sizeof(values[i]) - 1);
		values[i][sizeof(values[i]) - 1] = '\0';
		big_nv[8 + 2 * i] = names[i];
		big_nv[9 + 2 * i] = values[i];
	}
	big_nv[88] = NULL;
	handshake(s);
	request(s, 1, B_END_STREAM, "GET", "/a/b.html?user=TOPSECRET-QUERY",
		"example.org:8080");
	request(s, 3, B_PRIORITY | B_PADDED, "POST", "/upload#frag",
		"example.org");
	data(s, TX, 3, 1000, false, 20);
	cut(s);
	block(s, TX, NGHTTP2_HEADERS, 5, B_END_STREAM, 3000, 0, big_nv);
	data(s, TX, 3, 500, true, 0);
	response(s, 3, 0, "201");
	ping(s, RX, false);
	response(s, 1, 0, "200");
	data(s, RX, 1, 4000, false, 0);
	ping(s, TX, true);
	data(s, RX, 3, 10, true, 0);
	cut(s);
	data(s, RX, 1, 16000, false, 100);
	data(s, RX, 1, 1, true, 0);
	response(s, 5, B_END_STREAM, "204");

	lg = play_all(s);
	assert_bytes_as_built(s, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_OPEN), 3);
	assert_int_equal(count_kind(lg, OBS_H2_EV_REQUEST), 3);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 3);
	assert_int_equal(count_kind(lg, OBS_H2_EV_END), 6);
	assert_int_equal(count_kind(lg, OBS_H2_EV_NOLABELS), 0);
	assert_int_equal(count_kind(lg, OBS_H2_EV_LOST), 0);

	e = must(lg, OBS_H2_EV_REQUEST, 1);
	assert_field(e->req.method, 12, "GET");
	assert_field(e->req.path, 64, "/a/b.html");
	assert_field(e->req.host, 40, "example.org:8080");
	assert_int_equal(e->req.flags, 0);
	e = must(lg, OBS_H2_EV_REQUEST, 3);
	assert_field(e->req.method, 12, "POST");
	assert_field(e->req.path, 64, "/upload");
	e = must(lg, OBS_H2_EV_REQUEST, 5);
	assert_field(e->req.path, 64, "/c/d.js");
	assert_field(e->req.host, 40, "example.org");

	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 1)->status, 200);
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 3)->status, 201);
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 5)->status, 204);
	/* per stream: OPEN < REQUEST < END(TX); FIRST < STATUS; CLOSE last */
	for (uint32_t sid = 1; sid <= 5; sid += 2) {
		assert_true(pos(lg, OBS_H2_EV_OPEN, sid) <
			    pos(lg, OBS_H2_EV_REQUEST, sid));
		assert_true(pos(lg, OBS_H2_EV_FIRST, sid) <
			    pos(lg, OBS_H2_EV_STATUS, sid));
		assert_true(pos(lg, OBS_H2_EV_STATUS, sid) <
			    pos(lg, OBS_H2_EV_CLOSE, sid));
	}
	/* the streams overlap: 3 opened before 1 ended on the server's side,
	 * 3's answer came first */
	assert_true(pos(lg, OBS_H2_EV_OPEN, 5) < pos(lg, OBS_H2_EV_FIRST, 3));
	assert_true(pos(lg, OBS_H2_EV_CLOSE, 3) < pos(lg, OBS_H2_EV_CLOSE, 1));
	/* the padded DATA and the CONTINUATIONs count for their streams */
	assert_int_equal(lg->bytes[RX][1], s->want[RX][1]);
	assert_true(lg->bytes[RX][1] > 4000 + 16000 + 100 + 1);
	log_free(lg);
	script_free(s);
}

/* Which call each event comes in: the one that carries the frame's header
 * (OPEN, FIRST) or its last byte (END, REQUEST), whatever the split. */
static void test_event_calls(void **state)
{
	struct script *s = script_new();
	struct obs_h2 *h;
	struct log *lg;

	(void)state;
	handshake(s);
	cut(s);
	request(s, 1, 0, "PUT", "/f", "h");
	data(s, TX, 1, 3000, true, 0);
	cut(s);
	response(s, 1, 0, "200");
	data(s, RX, 1, 3000, true, 0);
	/* the PUT's block and DATA in one chunk: split it inside the DATA
	 * payload; the answer: split inside the HEADERS frame's header */
	lg = calloc(1, sizeof(*lg));
	h = h2_new();
	obs_h2_init(h, &obs_hpack_linked);
	for (int i = 0; i < s->n; i++) {
		const struct chunk *c = &s->c[i];
		size_t at = c->dir == TX ? c->n - 100 : 4;

		if (i < s->n - 2) {
			feed_exact(h, lg, c->dir, c->p, c->n);
			continue;
		}
		feed_exact(h, lg, c->dir, c->p, at);
		feed_exact(h, lg, c->dir, c->p + at, c->n - at);
	}
	/* calls: prefaces etc. (5), PUT (2), answer (2) */
	assert_int_equal(lg->call, s->n + 2);
	assert_int_equal(must(lg, OBS_H2_EV_OPEN, 1)->call, s->n - 1);
	assert_int_equal(must(lg, OBS_H2_EV_REQUEST, 1)->call, s->n - 1);
	assert_int_equal(must(lg, OBS_H2_EV_END, 1)->call, s->n); /* T4 */
	assert_int_equal(must(lg, OBS_H2_EV_FIRST, 1)->call, s->n + 2);
	assert_int_equal(must(lg, OBS_H2_EV_CLOSE, 1)->call, s->n + 2);
	assert_int_equal(must(lg, OBS_H2_EV_CLOSE, 1)->dir, RX);
	obs_h2_end(h, on_event, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 1);
	free(h);
	log_free(lg);
	script_free(s);
}

/* 1xx answers (100 Continue, 103 Early Hints) are not the status; the
 * first of them is the first answer frame. */
static void test_informational_then_final(void **state)
{
	struct script *s = script_new();
	struct log *lg;

	(void)state;
	handshake(s);
	request(s, 1, 0, "POST", "/form", "h");
	cut(s);
	response(s, 1, 0, "100");
	cut(s);
	data(s, TX, 1, 100, true, 0);
	cut(s);
	response(s, 1, 0, "103");
	response(s, 1, 0, "200");
	data(s, RX, 1, 10, false, 0);
	{ /* trailers: a block without :status, and END_STREAM */
		const char *nv[] = { "grpc-status", "0", NULL };

		block(s, RX, NGHTTP2_HEADERS, 1, B_END_STREAM, 16384, 0, nv);
	}
	lg = play_all(s);
	assert_bytes_as_built(s, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_STATUS), 1);
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 1)->status, 200);
	assert_int_equal(count_kind(lg, OBS_H2_EV_FIRST), 1);
	assert_true(pos(lg, OBS_H2_EV_FIRST, 1) < pos(lg, OBS_H2_EV_END, 1));
	assert_int_equal(must(lg, OBS_H2_EV_END, 1)->dir, TX);
	assert_int_equal(count_kind(lg, OBS_H2_EV_END), 2);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 1);
	log_free(lg);
	script_free(s);
}

/* Nothing but the four fields leaves the inflater: the query string, the
 * cookie, the token and set-cookie are in no event, and after the end no
 * trace of them is left in the follower's memory. */
static void test_only_four_fields(void **state)
{
	static const char *secrets[] = { "TOPSECRET-QUERY", "TOPSECRET-COOKIE",
					 "TOPSECRET-TOKEN", "TOPSECRET-SET",
					 "TOPSECRET" };
	static const char path[] = "/search/a-path-that-is-longer-than-the-"
				   "sixty-four-bytes-of-the-field?q=TOPSECRET-"
				   "QUERY";
	static const char host[] = "a-host-name-longer-than-forty-bytes."
				   "example.org";
	struct script *s = script_new();
	struct obs_h2 *h;
	struct log *lg;

	(void)state;
	assert_true(strchr(path, '?') - path > 64 && strlen(host) > 40);
	handshake(s);
	request(s, 1, B_END_STREAM, "GET", path, host);
	response(s, 1, 0, "200");
	data(s, RX, 1, 10, false, 0);
	lg = play_all(s);
	log_free(lg);

	lg = play_h(s, SPLIT_WHOLE, 0, &h);
	{
		const struct ev *e = find(lg, OBS_H2_EV_REQUEST, 1);

		assert_memory_equal(e->req.path, path, 64);
		assert_memory_equal(e->req.host, host, 40);
		assert_int_equal(e->req.flags,
				 OBS_H1F_PATH_CUT | OBS_H1F_HOST_CUT);
		for (int i = 0; i < lg->n; i++)
			for (size_t k = 0;
			     k < sizeof(secrets) / sizeof(*secrets); k++)
				assert_null(memmem(
					&lg->ev[i].req, sizeof(lg->ev[i].req),
					secrets[k], strlen(secrets[k])));
	}
	/* the open stream is closed by the end; the arenas are wiped */
	obs_h2_end(h, on_event, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 1);
	assert_null(memmem(h, sizeof(*h), "TOPSECRET", 9));
	assert_null(memmem(h, sizeof(*h), "test_h2/1", 9));
	free(h);
	log_free(lg);
	script_free(s);
}

/* The second request's fields come from the dynamic table (indexed by the
 * first request's block): the inflaters follow each direction's table. */
static void test_dynamic_table_across_streams(void **state)
{
	struct script *s = script_new();
	size_t first, second;
	struct log *lg;

	(void)state;
	handshake(s);
	request(s, 1, B_END_STREAM, "GET", "/one", "indexed.example.org");
	first = s->c[s->n - 1].n;
	cut(s);
	request(s, 3, B_END_STREAM, "GET", "/two", "indexed.example.org");
	second = s->c[s->n - 1].n;
	assert_true(second < first / 2); /* the fields were indexed */
	response(s, 3, B_END_STREAM, "404");
	response(s, 1, B_END_STREAM, "200");
	for (uint32_t sid = 5; sid < 45; sid += 2) {
		char path[16];

		snprintf(path, sizeof(path), "/n/%u", sid);
		request(s, sid, B_END_STREAM, "GET", path,
			"indexed.example.org");
		response(s, sid, B_END_STREAM, sid % 3 ? "200" : "304");
	}
	lg = play_all(s);
	assert_bytes_as_built(s, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_REQUEST), 22);
	assert_field(must(lg, OBS_H2_EV_REQUEST, 3)->req.host, 40,
		     "indexed.example.org");
	assert_field(must(lg, OBS_H2_EV_REQUEST, 3)->req.path, 64, "/two");
	assert_field(must(lg, OBS_H2_EV_REQUEST, 43)->req.path, 64, "/n/43");
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 3)->status, 404);
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 33)->status, 304);
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 35)->status, 200);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 22);
	log_free(lg);
	script_free(s);
}

/* A client that announces a 64 KiB table: the server's encoder uses it
 * (after a table size update), and the responses still decode. */
static void test_announced_table_size(void **state)
{
	struct script *s = script_new();
	struct log *lg;

	(void)state;
	preface(s);
	settings(s, TX, 1, NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 65536u);
	settings(s, RX, 0);
	settings_ack(s, TX);
	settings_ack(s, RX);
	nghttp2_hd_deflate_del(s->def[RX]);
	assert_int_equal(nghttp2_hd_deflate_new(&s->def[RX], 65536), 0);
	assert_int_equal(
		nghttp2_hd_deflate_change_table_size(s->def[RX], 65536), 0);
	for (uint32_t sid = 1; sid < 40; sid += 2) {
		char v[600];
		const char *nv[] = { ":status", "200", "x-big", v, NULL };

		memset(v, 'A' + (int)(sid % 26), sizeof(v) - 1);
		v[sizeof(v) - 1] = '\0';
		request(s, sid, B_END_STREAM, "GET", "/t", "h");
		block(s, RX, NGHTTP2_HEADERS, sid, B_END_STREAM, 16384, 0, nv);
	}
	lg = play_all(s);
	assert_int_equal(count_kind(lg, OBS_H2_EV_NOLABELS), 0);
	assert_int_equal(count_kind(lg, OBS_H2_EV_STATUS), 20);
	log_free(lg);
	script_free(s);
}

/* Blocks of any size decode (nothing of them is kept): 38 KB of fields
 * over CONTINUATIONs. A single field too large for the arena ends the
 * labels of its direction only; streams are still split. */
static void test_large_header_blocks(void **state)
{
	struct script *s = script_new();
	char *huge = malloc(60001), names[100][16], values[100][400];
	const char *nv[2 * 100 + 9] = { ":method", "GET",  ":scheme",	 "http",
					":path",   "/big", ":authority", "h" };
	const char *huge_nv[] = { ":method", "GET", ":path", "/huge",
				  "cookie",  NULL,  NULL };
	struct log *lg;

	(void)state;
	assert_non_null(huge);
	memset(huge, 'a', 60000); /* Huffman-coded: 37.5 KB, 75 KB decoded
				   * room */
	huge[60000] = '\0';
	huge_nv[5] = huge;
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "x-%d", i);
		for (size_t k = 0; k + 1 < sizeof(values[i]); k++)
			values[i][k] = (char)('!' + (i * 7 + (int)k * 13) % 90);
		values[i][sizeof(values[i]) - 1] = '\0';
		nv[8 + 2 * i] = names[i];
		nv[9 + 2 * i] = values[i];
	}
	nv[208] = NULL;
	handshake(s);
	block(s, TX, NGHTTP2_HEADERS, 1, B_END_STREAM | B_PADDED, 16000, 0, nv);
	response(s, 1, B_END_STREAM, "200");
	block(s, TX, NGHTTP2_HEADERS, 3, B_END_STREAM, 16384, 0, huge_nv);
	request(s, 5, B_END_STREAM, "GET", "/after", "h");
	response(s, 3, B_END_STREAM, "431");
	response(s, 5, B_END_STREAM, "200");
	lg = play_all(s);
	assert_bytes_as_built(s, lg);
	assert_true(s->want[TX][1] > 32768); /* two full frames and more */
	assert_field(must(lg, OBS_H2_EV_REQUEST, 1)->req.path, 64, "/big");
	assert_int_equal(count_kind(lg, OBS_H2_EV_REQUEST), 1);
	assert_int_equal(count_kind(lg, OBS_H2_EV_NOLABELS), 1);
	assert_int_equal(must(lg, OBS_H2_EV_NOLABELS, ~0u)->dir, TX);
	assert_int_equal(must(lg, OBS_H2_EV_NOLABELS, ~0u)->code,
			 OBS_H2_NL_NOMEM);
	assert_int_equal(count_kind(lg, OBS_H2_EV_OPEN), 3);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 3);
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 3)->status, 431);
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 5)->status, 200);
	log_free(lg);
	script_free(s);
	free(huge);
}

/* Long connections churn the dynamic tables (fields indexed, evicted, ever
 * longer ones among them): the arena's free list keeps up (it merges freed
 * neighbours), and labels stay right to the end. */
static void test_table_churn(void **state)
{
	struct script *s = script_new();
	struct log *lg;
	int requests = 0;

	(void)state;
	handshake(s);
	for (uint32_t sid = 1; sid < 2 * 1500; sid += 2, requests++) {
		char path[32], auth[40], v[128], grow[1600];
		const char *nv[] = { ":method", "GET", ":scheme",    "http",
				     ":path",	path,  ":authority", auth,
				     "x-v",	v,     "x-grow",     grow,
				     NULL };
		const char *rnv[] = { ":status", "200", "etag", grow,
				      "x-r",	 path,	NULL };

		snprintf(path, sizeof(path), "/p/%u", sid * 7919 % 1000);
		snprintf(auth, sizeof(auth), "host-%u.example", sid % 37);
		memset(v, 'a' + (int)(sid % 26), (sid * 31) % 120 + 1);
		v[(sid * 31) % 120 + 1] = '\0';
		/* ever longer: freed blocks are reused only when merged */
		for (int k = 0; k <= requests; k++)
			grow[k] = (char)('!' + (k * 37 + requests) % 90);
		grow[requests + 1] = '\0';
		block(s, TX, NGHTTP2_HEADERS, sid, B_END_STREAM, 16384, 0, nv);
		block(s, RX, NGHTTP2_HEADERS, sid, B_END_STREAM, 16384, 0, rnv);
	}
	lg = play(s, SPLIT_WHOLE, 0);
	assert_int_equal(count_kind(lg, OBS_H2_EV_NOLABELS), 0);
	assert_int_equal(count_kind(lg, OBS_H2_EV_REQUEST), requests);
	assert_int_equal(count_kind(lg, OBS_H2_EV_STATUS), requests);
	assert_field(must(lg, OBS_H2_EV_REQUEST, 2999)->req.path, 64,
		     "/p/81"); /* 2999 * 7919 % 1000 */
	assert_field(must(lg, OBS_H2_EV_REQUEST, 2999)->req.host, 40,
		     "host-2.example");
	assert_bytes_as_built(s, lg);
	log_free(lg);
	script_free(s);
}

/* More streams at once than the follower keeps: the extra ones are counted
 * and said, their bytes are the connection's; slots come back as streams
 * end, also for ids that share a slot. */
static void test_more_streams_than_the_bound(void **state)
{
	struct script *s = script_new();
	struct obs_h2 *h;
	struct log *lg;
	uint32_t n = OBS_H2_STREAMS + 2;

	(void)state;
	handshake(s);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t sid = 1 + 2 * i;

		request(s, sid, B_END_STREAM, "GET", "/many", "h");
		if (i >= OBS_H2_STREAMS) { /* untracked: the connection's */
			s->want[TX][0] += s->want[TX][sid];
			s->want[TX][sid] = 0;
		}
	}
	/* the first stream ends, then one whose id shares its slot */
	response(s, 1, B_END_STREAM, "200");
	request(s, 1 + 2 * n, B_END_STREAM, "GET", "/late", "h");
	response(s, 1 + 2 * n, B_END_STREAM, "201");
	response(s, 3, B_END_STREAM, "202");
	/* an untracked stream's answer: the connection's */
	response(s, 1 + 2 * OBS_H2_STREAMS, B_END_STREAM, "203");
	s->want[RX][0] += s->want[RX][1 + 2 * OBS_H2_STREAMS];
	s->want[RX][1 + 2 * OBS_H2_STREAMS] = 0;

	lg = play_all(s);
	log_free(lg);
	lg = play_h(s, SPLIT_WHOLE, 0, &h);
	assert_bytes_as_built(s, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_OPEN), OBS_H2_STREAMS + 1);
	assert_int_equal(count_kind(lg, OBS_H2_EV_UNTRACKED), 2);
	assert_int_equal(h->untracked, 2);
	assert_non_null(find(lg, OBS_H2_EV_UNTRACKED, 1 + 2 * OBS_H2_STREAMS));
	assert_null(find(lg, OBS_H2_EV_STATUS, 1 + 2 * OBS_H2_STREAMS));
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 1 + 2 * n)->status, 201);
	assert_field(must(lg, OBS_H2_EV_REQUEST, 1 + 2 * n)->req.path, 64,
		     "/late");
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 3)->status, 202);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 3);
	assert_int_equal(h->nstreams, OBS_H2_STREAMS - 2);
	obs_h2_end(h, on_event, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), OBS_H2_STREAMS + 1);
	free(h);
	log_free(lg);
	script_free(s);
}

/* RST_STREAM from either side ends its stream with the code; GOAWAY refuses
 * the streams above its last id, the others go on. */
static void test_reset_and_goaway(void **state)
{
	struct script *s = script_new();
	struct log *lg;
	const struct ev *e;

	(void)state;
	handshake(s);
	for (uint32_t sid = 1; sid <= 9; sid += 2)
		request(s, sid, B_END_STREAM, "GET", "/r", "h");
	cut(s);
	rst(s, TX, 1, NGHTTP2_CANCEL);
	rst(s, RX, 3, NGHTTP2_INTERNAL_ERROR);
	response(s, 5, 0, "200");
	goaway(s, RX, 5, NGHTTP2_NO_ERROR);
	data(s, RX, 5, 100, true, 0);
	rst(s, RX, 7, NGHTTP2_CANCEL); /* refused already: the connection's */
	s->want[RX][0] += s->want[RX][7];
	s->want[RX][7] = 0;
	goaway(s, TX, 0, NGHTTP2_NO_ERROR);
	lg = play_all(s);
	assert_bytes_as_built(s, lg);

	e = must(lg, OBS_H2_EV_RESET, 1);
	assert_int_equal(e->dir, TX);
	assert_int_equal(e->code, NGHTTP2_CANCEL);
	e = must(lg, OBS_H2_EV_RESET, 3);
	assert_int_equal(e->dir, RX);
	assert_int_equal(e->code, NGHTTP2_INTERNAL_ERROR);
	assert_non_null(find(lg, OBS_H2_EV_FIRST, 3)); /* the answer */
	assert_int_equal(must(lg, OBS_H2_EV_RESET, 7)->code,
			 OBS_H2_REFUSED_STREAM);
	assert_int_equal(must(lg, OBS_H2_EV_RESET, 9)->code,
			 OBS_H2_REFUSED_STREAM);
	assert_null(find(lg, OBS_H2_EV_RESET, 5));
	assert_int_equal(count_kind(lg, OBS_H2_EV_RESET), 4);
	e = must(lg, OBS_H2_EV_GOAWAY, ~0u);
	assert_int_equal(e->dir, RX);
	assert_int_equal(e->stream, 5);
	assert_int_equal(count_kind(lg, OBS_H2_EV_GOAWAY), 2);
	assert_true(pos(lg, OBS_H2_EV_GOAWAY, 5) < pos(lg, OBS_H2_EV_RESET, 7));
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 5)->status, 200);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 5);
	log_free(lg);
	script_free(s);
}

/* PUSH_PROMISE and the pushed stream are the connection's, yet their header
 * blocks go through the inflater (its table changes). */
static void test_server_push(void **state)
{
	struct script *s = script_new();
	const char *promise[] = { ":method",
				  "GET",
				  ":scheme",
				  "http",
				  ":path",
				  "/pushed.css",
				  ":authority",
				  "push.example",
				  "x-push-field",
				  "goes-to-the-table",
				  NULL };
	const char *pushed[] = { ":status", "200", "x-push-field",
				 "goes-to-the-table", NULL };
	struct log *lg;

	(void)state;
	handshake(s);
	request(s, 1, B_END_STREAM, "GET", "/", "push.example");
	block(s, RX, NGHTTP2_PUSH_PROMISE, 1, B_PADDED, 10, 2, promise);
	response(s, 1, 0, "200");
	block(s, RX, NGHTTP2_HEADERS, 2, 0, 16384, 0, pushed);
	data(s, RX, 2, 300, true, 0);
	data(s, RX, 1, 30, true, 0);
	request(s, 3, B_END_STREAM, "GET", "/next", "push.example");
	response(s, 3, B_END_STREAM, "200");
	lg = play_all(s);
	assert_bytes_as_built(s, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_OPEN), 2);
	assert_int_equal(count_kind(lg, OBS_H2_EV_STATUS), 2);
	assert_int_equal(count_kind(lg, OBS_H2_EV_NOLABELS), 0);
	assert_null(find(lg, OBS_H2_EV_FIRST, 2));
	assert_true(lg->bytes[RX][0] > 300);
	log_free(lg);
	script_free(s);
}

/* Not HTTP/2: an HTTP/1.1 request, a server that answers a preface with
 * HTTP/1.1, a broken frame after good ones, a frame inside a header block,
 * and random bytes: LOST once (streams closed first), nothing after. */
static void test_not_http2(void **state)
{
	static const char http1[] = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char answer[] =
		"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
	struct script *s;
	struct log *lg;

	(void)state;
	s = script_new();
	put(s, TX, http1, sizeof(http1) - 1);
	put(s, RX, answer, sizeof(answer) - 1);
	lg = play_all(s);
	assert_int_equal(lg->n, 1);
	assert_int_equal(lg->ev[0].code, OBS_H2_LOST_PREFACE);
	log_free(lg);
	script_free(s);

	s = script_new();
	preface(s);
	settings(s, TX, 0);
	request(s, 1, B_END_STREAM, "GET", "/", "h");
	put(s, RX, answer, sizeof(answer) - 1);
	response(s, 1, B_END_STREAM, "200"); /* ignored after LOST */
	lg = play_all(s);
	assert_int_equal(lg->n, 5); /* OPEN, REQUEST, END, CLOSE, LOST */
	assert_int_equal(lg->ev[3].kind, OBS_H2_EV_CLOSE);
	assert_int_equal(lg->ev[4].kind, OBS_H2_EV_LOST);
	assert_int_equal(lg->ev[4].dir, RX);
	assert_int_equal(lg->ev[4].code, OBS_H2_LOST_SETTINGS);
	log_free(lg);
	script_free(s);

	s = script_new();
	handshake(s);
	request(s, 1, 0, "GET", "/", "h");
	frame(s, TX, NGHTTP2_DATA, 0, 1, NULL, 0);
	frame(s, TX, NGHTTP2_PING, 0, 0, "1234", 4); /* PING of 4 bytes */
	lg = play_all(s);
	assert_int_equal(lg->ev[lg->n - 1].kind, OBS_H2_EV_LOST);
	assert_int_equal(lg->ev[lg->n - 1].code, OBS_H2_LOST_FRAME);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 1);
	log_free(lg);
	script_free(s);

	/* a DATA frame inside a header block (no END_HEADERS yet) */
	s = script_new();
	handshake(s);
	frame(s, TX, NGHTTP2_HEADERS, 0, 1, "\x82", 1); /* :method GET */
	data(s, TX, 1, 10, true, 0);
	lg = play_all(s);
	assert_int_equal(lg->ev[lg->n - 1].code, OBS_H2_LOST_FRAME);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 1);
	log_free(lg);
	script_free(s);

	/* random bytes after a good start: never a crash, LOST or not */
	for (uint32_t seed = 1; seed <= 40; seed++) {
		uint8_t junk[700];

		s = script_new();
		handshake(s);
		request(s, 1, 0, "GET", "/", "h");
		rnd_state = seed;
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)rnd();
		put(s, (int)(seed & 1), junk, sizeof(junk));
		lg = play(s, SPLIT_RANDOM, seed);
		assert_true(count_kind(lg, OBS_H2_EV_LOST) <= 1);
		log_free(lg);
		script_free(s);
	}
}

/* A frame longer than the receiver's SETTINGS_MAX_FRAME_SIZE breaks the
 * framing, unless the receiver announced a larger one. */
static void test_max_frame_size(void **state)
{
	struct script *s;
	struct log *lg;

	(void)state;
	for (int announce = 0; announce < 2; announce++) {
		s = script_new();
		preface(s);
		if (announce)
			settings(s, TX, 1, NGHTTP2_SETTINGS_MAX_FRAME_SIZE,
				 65536u);
		else
			settings(s, TX, 0);
		settings(s, RX, 0);
		request(s, 1, B_END_STREAM, "GET", "/", "h");
		response(s, 1, 0, "200");
		data(s, RX, 1, 20000, true, 0);
		lg = play_all(s);
		if (announce) {
			assert_false(lost(lg));
			assert_bytes_as_built(s, lg);
			assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 1);
		} else {
			assert_int_equal(lg->ev[lg->n - 1].code,
					 OBS_H2_LOST_FRAME);
		}
		log_free(lg);
		script_free(s);
	}
}

/* h2c Upgrade: the 101 is the connection's, stream 1 is the HTTP/1.1
 * request (already ended on the client's side), answered in frames. */
static void test_upgrade(void **state)
{
	static const char switching[] =
		"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
		"Upgrade: h2c\r\n\r\n";
	struct script *s = script_new();
	struct log *lg;

	(void)state;
	s->upgrade = true;
	put(s, RX, switching, sizeof(switching) - 1);
	s->want[RX][0] += sizeof(switching) - 1;
	settings(s, RX, 1, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100u);
	response(s, 1, 0, "200");
	preface(s);
	settings(s, TX, 0);
	settings_ack(s, TX);
	data(s, RX, 1, 2000, true, 0);
	settings_ack(s, RX);
	request(s, 3, B_END_STREAM, "GET", "/second", "h");
	response(s, 3, B_END_STREAM, "200");
	lg = play_all(s);
	assert_bytes_as_built(s, lg);
	assert_null(find(lg, OBS_H2_EV_OPEN, 1));
	assert_non_null(find(lg, OBS_H2_EV_FIRST, 1));
	assert_int_equal(must(lg, OBS_H2_EV_STATUS, 1)->status, 200);
	assert_int_equal(must(lg, OBS_H2_EV_END, 1)->dir, RX);
	assert_int_equal(count_kind(lg, OBS_H2_EV_END), 3);
	assert_true(pos(lg, OBS_H2_EV_CLOSE, 1) < pos(lg, OBS_H2_EV_OPEN, 3));
	assert_field(must(lg, OBS_H2_EV_REQUEST, 3)->req.path, 64, "/second");
	log_free(lg);
	script_free(s);

	/* a 101 to something else (WebSocket): its frames are no SETTINGS */
	s = script_new();
	s->upgrade = true;
	put(s, RX, switching, sizeof(switching) - 1);
	put(s, RX, "\x81\x05hello\x81\x05world", 14);
	lg = play_all(s);
	assert_int_equal(lg->n, 2);
	assert_int_equal(lg->ev[0].kind, OBS_H2_EV_CLOSE);
	assert_int_equal(lg->ev[1].code, OBS_H2_LOST_SETTINGS);
	log_free(lg);
	script_free(s);

	/* no 101 at all */
	s = script_new();
	s->upgrade = true;
	put(s, RX, "HTTP/1.1 200 OK\r\n\r\n", 19);
	lg = play_all(s);
	assert_int_equal(lg->ev[lg->n - 1].code, OBS_H2_LOST_UPGRADE);
	log_free(lg);
	script_free(s);
}

/* Without the inflater streams are split and timed as before, without
 * labels (a REQUEST without them); NOLABELS says why. The layer's loader
 * (libobserve/hpack.c) gives none for a library that is not there, and
 * the functions for the real one. */
static void test_no_library(void **state)
{
	struct script *s = script_new();
	struct log *lg;
	const struct obs_hpack *loaded;

	(void)state;
	handshake(s);
	request(s, 1, 0, "GET", "/", "h");
	request(s, 3, B_END_STREAM, "GET", "/", "h");
	data(s, TX, 1, 10, true, 0);
	response(s, 3, B_END_STREAM, "200");
	response(s, 1, 0, "200");
	data(s, RX, 1, 10, true, 0);

	play_hpack = NULL;
	lg = play(s, SPLIT_WHOLE, 0);
	play_hpack = &obs_hpack_linked;
	assert_bytes_as_built(s, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_OPEN), 2);
	assert_int_equal(count_kind(lg, OBS_H2_EV_REQUEST), 0);
	assert_int_equal(lg->unlabelled, 2);
	assert_int_equal(count_kind(lg, OBS_H2_EV_STATUS), 0);
	assert_int_equal(count_kind(lg, OBS_H2_EV_END), 4);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 2);
	assert_int_equal(count_kind(lg, OBS_H2_EV_NOLABELS), 2);
	assert_int_equal(must(lg, OBS_H2_EV_NOLABELS, ~0u)->code,
			 OBS_H2_NL_NOLIB);
	assert_int_equal(lg->ev[pos(lg, OBS_H2_EV_NOLABELS, ~0u) + 0].dir, TX);
	log_free(lg);

	obs_hpack_reset("libnghttp2-absent-for-test.so.0");
	assert_null(obs_hpack_load());
	assert_true(strlen(obs_hpack_error()) > 0);
	obs_hpack_reset(NULL);
	loaded = obs_hpack_load();
	assert_non_null(loaded);
	play_hpack = loaded;
	lg = play(s, SPLIT_WHOLE, 0);
	play_hpack = &obs_hpack_linked;
	assert_int_equal(count_kind(lg, OBS_H2_EV_REQUEST), 2);
	assert_int_equal(lg->unlabelled, 0);
	log_free(lg);
	script_free(s);
}

/* A connection that ends inside a frame header: those bytes are the
 * connection's, said at the end; every byte fed is said once. */
static void test_end_inside_frame_header(void **state)
{
	struct script *s = script_new();
	struct log *lg;

	(void)state;
	handshake(s);
	request(s, 1, B_END_STREAM, "GET", "/", "h");
	put(s, TX, "\0\0\0\x04", 4); /* a SETTINGS frame header, cut */
	s->want[TX][0] += 4;
	response(s, 1, 0, "200");
	put(s, RX, "\0\0\x10\0\0\0\0", 7); /* a DATA frame header, cut */
	s->want[RX][0] += 7;
	lg = play_all(s);
	assert_bytes_as_built(s, lg);
	assert_int_equal(count_kind(lg, OBS_H2_EV_CLOSE), 1);
	assert_int_equal(lg->ev[lg->n - 1].kind, OBS_H2_EV_CLOSE);
	log_free(lg);
	script_free(s);
}

static void test_preface_sniff(void **state)
{
	static const uint8_t pri[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0";

	(void)state;
	assert_true(obs_h2_preface(pri, 26));
	assert_true(obs_h2_preface(pri, 24));
	assert_true(obs_h2_preface(pri, 14));
	assert_false(obs_h2_preface(pri, 13));
	assert_false(obs_h2_preface((const uint8_t *)"PRI * HTTP/1.1\r\n", 16));
	assert_false(obs_h2_preface((const uint8_t *)"GET / HTTP/1.1\r\n", 16));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_streams),
		cmocka_unit_test(test_event_calls),
		cmocka_unit_test(test_informational_then_final),
		cmocka_unit_test(test_only_four_fields),
		cmocka_unit_test(test_dynamic_table_across_streams),
		cmocka_unit_test(test_announced_table_size),
		cmocka_unit_test(test_large_header_blocks),
		cmocka_unit_test(test_table_churn),
		cmocka_unit_test(test_more_streams_than_the_bound),
		cmocka_unit_test(test_reset_and_goaway),
		cmocka_unit_test(test_server_push),
		cmocka_unit_test(test_not_http2),
		cmocka_unit_test(test_max_frame_size),
		cmocka_unit_test(test_upgrade),
		cmocka_unit_test(test_no_library),
		cmocka_unit_test(test_end_inside_frame_header),
		cmocka_unit_test(test_preface_sniff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
