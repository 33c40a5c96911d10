/* test_tlsrec.c - the client's TLS records (core/tlsrec.c): where its
 * first data begins and which version it speaks, from its flights, fed
 * whole and a byte at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tlsrec.h"

struct found {
	int calls;	  /* first data said */
	uint64_t at;	  /* ... where */
	uint16_t version; /* ... with */
	int finished;	  /* the Finished said, before the data */
	uint64_t fin_at;
	uint16_t fin_version;
};

static void data(void *ctx, uint8_t what, uint64_t at, uint16_t version)
{
	struct found *f = ctx;

	if (what == OBS_TLSREC_FINISHED) {
		assert_int_equal(f->calls, 0);
		f->finished++;
		f->fin_at = at;
		f->fin_version = version;
		return;
	}
	assert_int_equal(what, OBS_TLSREC_DATA);
	f->calls++;
	f->at = at;
	f->version = version;
}

/* A record of the type with n payload bytes at b[*len], *len moved on. */
static void add(uint8_t *b, size_t *len, uint8_t type, uint16_t n)
{
	b[*len] = type;
	b[*len + 1] = 3;
	b[*len + 2] = 3;
	b[*len + 3] = (uint8_t)(n >> 8);
	b[*len + 4] = (uint8_t)n;
	memset(b + *len + 5, 0xab, n);
	*len += 5u + n;
}

/* b[0..len) fed whole, then a byte at a time: the same finding both ways. */
static struct found follow(const uint8_t *b, size_t len)
{
	struct obs_tlsrec t;
	struct found whole = { 0 }, bytes = { 0 };

	obs_tlsrec_init(&t);
	obs_tlsrec_feed(&t, b, len, data, &whole);
	obs_tlsrec_init(&t);
	for (size_t i = 0; i < len; i++)
		obs_tlsrec_feed(&t, b + i, 1, data, &bytes);
	assert_int_equal(whole.calls, bytes.calls);
	assert_int_equal(whole.at, bytes.at);
	assert_int_equal(whole.version, bytes.version);
	assert_int_equal(whole.finished, bytes.finished);
	assert_int_equal(whole.fin_at, bytes.fin_at);
	assert_true(whole.calls <= whole.finished);
	assert_false(obs_tlsrec_following(&t) && whole.calls);
	return whole;
}

static void test_tls13(void **state)
{
	uint8_t b[2048];
	size_t len = 0, request, finished;
	struct found f;

	(void)state;
	add(b, &len, 22, 512); /* ClientHello */
	add(b, &len, 20, 1);   /* change cipher spec */
	finished = len;
	add(b, &len, 23, 53); /* Finished */
	request = len;
	add(b, &len, 23, 90); /* the request */
	add(b, &len, 21, 19); /* its close_notify: after, not read */
	f = follow(b, len);
	assert_int_equal(f.calls, 1);
	assert_int_equal(f.at, request);
	assert_int_equal(f.version, OBS_TLS_1_3);
	assert_int_equal(f.finished, 1);
	assert_int_equal(f.fin_at, finished);
	assert_int_equal(f.fin_version, OBS_TLS_1_3);
}

static void test_tls12(void **state)
{
	uint8_t b[2048];
	size_t len = 0, request, finished;
	struct found f;

	(void)state;
	add(b, &len, 22, 300); /* ClientHello */
	add(b, &len, 22, 70);  /* ClientKeyExchange */
	add(b, &len, 20, 1);
	finished = len;
	add(b, &len, 22, 40); /* Finished, encrypted */
	request = len;
	add(b, &len, 23, 120);
	f = follow(b, len);
	assert_int_equal(f.calls, 1);
	assert_int_equal(f.at, request);
	assert_int_equal(f.version, OBS_TLS_1_2);
	assert_int_equal(f.finished, 1);
	assert_int_equal(f.fin_at, finished);
	assert_int_equal(f.fin_version, OBS_TLS_1_2);
}

/* The 1.3 Finished alone (a connection made ahead, used for nothing): its
 * version, no data yet; the follower still reads. */
static void test_no_data_yet(void **state)
{
	uint8_t b[1024];
	size_t len = 0;
	struct obs_tlsrec t;
	struct found f = { 0 };

	(void)state;
	add(b, &len, 22, 200);
	add(b, &len, 23, 53);
	obs_tlsrec_init(&t);
	obs_tlsrec_feed(&t, b, len, data, &f);
	assert_int_equal(f.calls, 0);
	assert_int_equal(f.finished, 1); /* the version is known already */
	assert_int_equal(f.fin_version, OBS_TLS_1_3);
	assert_true(obs_tlsrec_following(&t));
}

/* Bytes that are not a client's TLS: nothing said, nothing more read. */
static void test_not_tls(void **state)
{
	static const uint8_t http[] = "GET / HTTP/1.1\r\n\r\n";
	uint8_t b[64] = { 22, 3, 1, 0xff, 0xff }; /* a record too long */
	uint8_t c[1024];
	size_t len = 0;
	struct obs_tlsrec t;
	struct found f = { 0 };

	(void)state;
	obs_tlsrec_init(&t);
	obs_tlsrec_feed(&t, http, sizeof(http) - 1, data, &f);
	assert_false(obs_tlsrec_following(&t));
	obs_tlsrec_init(&t);
	obs_tlsrec_feed(&t, b, sizeof(b), data, &f);
	assert_false(obs_tlsrec_following(&t));
	add(c, &len, 22, 100);
	add(c, &len, 99, 10); /* an unknown type after the hello */
	add(c, &len, 23, 10);
	add(c, &len, 23, 10);
	obs_tlsrec_init(&t);
	obs_tlsrec_feed(&t, c, len, data, &f);
	assert_false(obs_tlsrec_following(&t));
	assert_int_equal(f.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls13),
		cmocka_unit_test(test_tls12),
		cmocka_unit_test(test_no_data_yet),
		cmocka_unit_test(test_not_tls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
