/* test_tlsdec.c - TLS 1.3 records decrypted with key-log secrets
 * (core/tlsdec.c) through the layer's libcrypto operations
 * (libobserve/tlscrypto.c), on RFC 8448's "Simple 1-RTT Handshake" trace:
 * its key schedule (the server's handshake key and IV from its secret),
 * its records of application data each way (50 bytes 00..31), its
 * NewSessionTicket and alerts (not data), with the secrets before the
 * records, after them (held), fed whole and a byte at a time; a tampered
 * record, TLS 1.2 (a conversation of our own, and its PRF), suites not
 * known, a HelloRetryRequest, early data, the hold full; and the key log's
 * line parser (core/keylog.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "keylog.h"
#include "tlscrypto.h"
#include "tlsdec.h"

/* RFC 8448 section 3 */
static const char client_random[] =
	"cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7";
static const char server_random[] =
	"a6af06a4121860dc5e6e60249cd34c95930c8ac5cb1434dac155772ed3e26928";
static const char server_hs_secret[] =
	"b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38";
static const char client_ap_secret[] =
	"9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5";
static const char server_ap_secret[] =
	"a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643";
static const char client_data_record[] =
	"1703030043a23f7054b62c94d0affafe8228ba55cbefacea42f914aa66bcab3f"
	"2b9819a8a5b46b395bd54a9a20441e2b62974e1f5a6292a2977014bd1e3deae6"
	"3aeebb21694915e4";
static const char client_alert_record[] =
	"1703030013c9872760655666b74d7ff1153efd6db6d0b0e3";
static const char ticket_record[] =
	"17030300de3a6b8f90414a97d6959c3487680de5134a2b240e6cffac116e95d4"
	"1d6af8f6b580dcf3d11d63c758db289a015940252f55713e061dc13e078891a3"
	"8efbcf5753ad8ef170ad3c7353d16d9da773b9ca7f2b9fa1b6c0d4a3d03f75e0"
	"9c30ba1e62972ac46f75f7b981be63439b2999ce13064615139891d5e4c5b406"
	"f16e3fc181a77ca475840025db2f0a77f81b5ab05b94c01346755f69232c8651"
	"9d86cbeeac87aac347d143f9605d64f650db4d023e70e952ca49fe5137121c74"
	"bc2697687e248746d6df353005f3bce18696129c8153556b3b6c6779b37bf159"
	"85684f";
static const char server_data_record[] =
	"17030300432e937e11ef4ac740e538ad36005fc4a46932fc3225d05f82aa1b36"
	"e30efaf97d90e6dffc602dcb501a59a8fcc49c4bf2e5f0a21c0047c2abf33254"
	"0dd032e167c2955d";
static const char server_alert_record[] =
	"1703030013b58fd67166ebf599d24720cfbe7efa7a8864a9";

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(s + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* ---- a conversation: the calls of each direction ---- */

struct call {
	int dir;
	uint8_t b[2048];
	size_t n;
};

struct conv {
	struct call calls[16];
	int n;
};

static void add(struct conv *c, int dir, const uint8_t *b, size_t n)
{
	struct call *k = &c->calls[c->n++];

	k->dir = dir;
	memcpy(k->b, b, n);
	k->n = n;
}

static void add_hex(struct conv *c, int dir, const char *hex)
{
	uint8_t b[2048];

	add(c, dir, b, unhex(hex, b));
}

/* A record of type with payload p[0..n). */
static void add_record(struct conv *c, int dir, uint8_t type, const uint8_t *p,
		       size_t n)
{
	uint8_t b[2048] = { type, 3, 3, (uint8_t)(n >> 8), (uint8_t)n };

	memcpy(b + 5, p, n);
	add(c, dir, b, n + 5);
}

static void client_hello(struct conv *c)
{
	uint8_t h[80] = { 1, 0, 0, 76, 3, 3 };

	unhex(client_random, h + 6);
	memset(h + 38, 0x5a, sizeof(h) - 38);
	add_record(c, OBS_TLSDEC_TX, 22, h, sizeof(h));
}

/* A ServerHello of version (supported_versions: 0 for none), suite, and
 * random (NULL: RFC 8448's). */
static void server_hello(struct conv *c, uint16_t version, uint16_t suite,
			 const uint8_t *random)
{
	uint8_t h[200];
	size_t n = 0, ext;

	h[n++] = 2;
	n += 3; /* its length, below */
	h[n++] = 3;
	h[n++] = 3;
	if (random)
		memcpy(h + n, random, 32);
	else
		unhex(server_random, h + n);
	n += 32;
	h[n++] = 4; /* a session id of 4 bytes */
	memset(h + n, 0xee, 4);
	n += 4;
	h[n++] = (uint8_t)(suite >> 8);
	h[n++] = (uint8_t)suite;
	h[n++] = 0;
	ext = n;
	n += 2;
	/* key_share first (x25519, 32 bytes), then supported_versions */
	memcpy(h + n, "\x00\x33\x00\x24\x00\x1d\x00\x20", 8);
	n += 8;
	memset(h + n, 0x77, 32);
	n += 32;
	if (version) {
		memcpy(h + n, "\x00\x2b\x00\x02", 4);
		n += 4;
		h[n++] = (uint8_t)(version >> 8);
		h[n++] = (uint8_t)version;
	}
	h[ext] = (uint8_t)((n - ext - 2) >> 8);
	h[ext + 1] = (uint8_t)(n - ext - 2);
	h[3] = (uint8_t)(n - 4);
	add_record(c, OBS_TLSDEC_RX, 22, h, n);
}

/* The handshake of RFC 8448's trace around its records: the client's
 * hello, the server's hello, change cipher spec and encrypted flight, the
 * client's change cipher spec and Finished (their bytes stand in: they are
 * skipped, not decrypted). */
static void handshake(struct conv *c)
{
	uint8_t junk[300];

	memset(junk, 0xa5, sizeof(junk));
	client_hello(c);
	server_hello(c, 0x0304, OBS_TLS_AES_128_GCM_SHA256, NULL);
	add_record(c, OBS_TLSDEC_RX, 20, (const uint8_t *)"\x01", 1);
	add_record(c, OBS_TLSDEC_RX, 23, junk, 300);
	add_record(c, OBS_TLSDEC_TX, 20, (const uint8_t *)"\x01", 1);
	add_record(c, OBS_TLSDEC_TX, 23, junk, 53);
}

static void data_records(struct conv *c)
{
	add_hex(c, OBS_TLSDEC_TX, client_data_record);
	add_hex(c, OBS_TLSDEC_RX, ticket_record);
	add_hex(c, OBS_TLSDEC_RX, server_data_record);
	add_hex(c, OBS_TLSDEC_TX, client_alert_record);
	add_hex(c, OBS_TLSDEC_RX, server_alert_record);
}

/* ---- what the decryptor says ---- */

struct said {
	int n;
	int dir[8];
	uint8_t p[8][64];
	size_t len[8];
	bool unread[8]; /* said without its bytes (p NULL) */
	int64_t t_in[8], t_out[8];
	size_t pos[2]; /* bytes said so far, by direction */
	/* the reader does not read the server's bytes [skip_from, skip_to) */
	size_t skip_from, skip_to;
};

static void out(void *ctx, int dir, const uint8_t *p, size_t n, int64_t t_in,
		int64_t t_out)
{
	struct said *s = ctx;

	assert_true(s->n < 8 && n <= 64);
	s->dir[s->n] = dir;
	if (p)
		memcpy(s->p[s->n], p, n);
	s->unread[s->n] = p == NULL;
	s->len[s->n] = n;
	s->t_in[s->n] = t_in;
	s->t_out[s->n] = t_out;
	s->n++;
	s->pos[dir] += n;
}

static size_t unread(void *ctx, int dir)
{
	struct said *s = ctx;
	size_t at = s->pos[dir];

	return dir == OBS_TLSDEC_RX && at >= s->skip_from && at < s->skip_to
		       ? s->skip_to - at
		       : 0;
}

static struct obs_tlscrypto crypto;
static struct obs_tlsdec_mem *mem;

static int setup(void **state)
{
	(void)state;
	mem = calloc(1, sizeof(*mem));
	return mem && obs_tlscrypto_init(&crypto) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(mem);
	return 0;
}

/* Feed calls [from, to) of c to t, call i at times 10 i, 10 i + 5; a byte
 * at a time when bytewise. */
static void feed(struct obs_tlsdec *t, const struct conv *c, int from, int to,
		 bool bytewise, struct said *s)
{
	for (int i = from; i < to; i++) {
		const struct call *k = &c->calls[i];
		size_t step = bytewise ? 1 : k->n;

		for (size_t at = 0; at < k->n; at += step) {
			struct iovec v = { (void *)(k->b + at), step };
			struct obs_tlsdec_sink sink = { out, unread, s };

			obs_tlsdec_feed(t, k->dir, &v, 1, step, 10 * i,
					10 * i + 5, &sink);
		}
	}
}

static void secrets(struct obs_tlsdec *t, struct said *s, bool want_ok)
{
	uint8_t cs[32], ss[32], random[32], want_random[32];
	size_t len;

	assert_true(obs_tlsdec_wants_keys(t, random, &len));
	assert_int_equal(len, 32);
	unhex(client_random, want_random);
	assert_memory_equal(random, want_random, 32);
	unhex(client_ap_secret, cs);
	unhex(server_ap_secret, ss);
	struct obs_tlsdec_sink sink = { out, unread, s };

	assert_int_equal(obs_tlsdec_keys(t, cs, ss, 32, &sink), want_ok);
}

static void start(struct obs_tlsdec *t)
{
	obs_tlsdec_init(t);
	assert_false(obs_tlsdec_wants_mem(t));
}

static void give_mem(struct obs_tlsdec *t)
{
	assert_true(obs_tlsdec_wants_mem(t));
	assert_true(obs_tlsdec_offer(t, mem, obs_tlscrypto_ops(), &crypto));
	assert_false(obs_tlsdec_wants_mem(t));
}

/* 00..31 said once each way, the client's from call `tx`, the server's
 * from call `rx` (the ticket before it said nothing). */
static void check_data(const struct said *s, int tx, int rx)
{
	uint8_t want[50];

	for (int i = 0; i < 50; i++)
		want[i] = (uint8_t)i;
	assert_int_equal(s->n, 2);
	assert_int_equal(s->dir[0], OBS_TLSDEC_TX);
	assert_int_equal(s->len[0], 50);
	assert_memory_equal(s->p[0], want, 50);
	assert_int_equal(s->t_in[0], 10 * tx);
	assert_int_equal(s->t_out[0], 10 * tx + 5);
	assert_int_equal(s->dir[1], OBS_TLSDEC_RX);
	assert_int_equal(s->len[1], 50);
	assert_memory_equal(s->p[1], want, 50);
	assert_int_equal(s->t_in[1], 10 * rx);
}

static void key_schedule(void **state)
{
	uint8_t secret[32], key[16], iv[12], want_key[16], want_iv[12];

	(void)state;
	unhex(server_hs_secret, secret);
	unhex("3fce516009c21727d0f2e4e86ee403bc", want_key);
	unhex("5d313eb2671276ee13000b30", want_iv);
	assert_true(obs_tlsdec_expand_label(obs_tlscrypto_ops(), &crypto,
					    OBS_TLS_AES_128_GCM_SHA256, secret,
					    32, "key", key, 16));
	assert_memory_equal(key, want_key, 16);
	assert_true(obs_tlsdec_expand_label(obs_tlscrypto_ops(), &crypto,
					    OBS_TLS_AES_128_GCM_SHA256, secret,
					    32, "iv", iv, 12));
	assert_memory_equal(iv, want_iv, 12);
	/* the client's application key and IV (RFC 8448: 17422dda...) */
	unhex(client_ap_secret, secret);
	unhex("17422dda596ed5d9acd890e3c63f5051", want_key);
	unhex("5b78923dee08579033e523d9", want_iv);
	assert_true(obs_tlsdec_expand_label(obs_tlscrypto_ops(), &crypto,
					    OBS_TLS_AES_128_GCM_SHA256, secret,
					    32, "key", key, 16));
	assert_memory_equal(key, want_key, 16);
	assert_true(obs_tlsdec_expand_label(obs_tlscrypto_ops(), &crypto,
					    OBS_TLS_AES_128_GCM_SHA256, secret,
					    32, "iv", iv, 12));
	assert_memory_equal(iv, want_iv, 12);
}

/* RFC 8448's conversation through t, the memory offered after the
 * hellos and the secrets given before the first record of data (calls
 * 0..5 the handshake, 6 the client's data, 8 the server's). */
static void secrets_given_first(struct obs_tlsdec *t, struct said *s,
				bool bytewise)
{
	struct conv c = { 0 };

	handshake(&c);
	data_records(&c);
	start(t);
	feed(t, &c, 0, 2, bytewise, s);
	give_mem(t);
	secrets(t, s, true);
	feed(t, &c, 2, c.n, bytewise, s);
}

static void secrets_first(void **state)
{
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		struct obs_tlsdec t;
		struct said s = { 0 };

		(void)state;
		secrets_given_first(&t, &s, bytewise);
		assert_true(obs_tlsdec_on(&t));
		check_data(&s, 6, 8);
		assert_int_equal(t.decrypted[OBS_TLSDEC_TX], 51 + 3);
		assert_ptr_equal(obs_tlsdec_wipe(&t), mem);
		assert_false(obs_tlsdec_on(&t));
	}
}

/* The secrets after all the records: held, then read in their order,
 * with their calls' times. */
static void secrets_late(void **state)
{
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		struct obs_tlsdec t;
		struct conv c = { 0 };
		struct said s = { 0 };

		(void)state;
		handshake(&c);
		data_records(&c);
		start(&t);
		feed(&t, &c, 0, 2, bytewise, &s);
		give_mem(&t);
		feed(&t, &c, 2, c.n, bytewise, &s);
		assert_int_equal(s.n, 0);
		assert_true(mem->hold_len > 0);
		secrets(&t, &s, true);
		check_data(&s, 6, 8);
		assert_int_equal(mem->hold_len, 0);
		obs_tlsdec_wipe(&t);
	}
}

/* A byte of the server's first record under its key (the ticket)
 * changed: its tag fails, nothing of the server's is said, and the
 * connection is given up. */
static void tampered(void **state)
{
	struct obs_tlsdec t;
	struct conv c = { 0 };
	struct said s = { 0 };

	(void)state;
	handshake(&c);
	data_records(&c);
	c.calls[7].b[20] ^= 1;
	start(&t);
	feed(&t, &c, 0, 2, false, &s);
	give_mem(&t);
	secrets(&t, &s, true);
	feed(&t, &c, 2, c.n, false, &s);
	assert_int_equal(s.n, 1); /* the client's only */
	assert_false(obs_tlsdec_on(&t));
	obs_tlsdec_wipe(&t);
}

/* A record after the first under its key (the server's data, after the
 * ticket) is decrypted where it is read: the reader does not read its
 * first 30 bytes, which are said unread, not decrypted; its type and the
 * rest are decrypted. */
static void read_where_read(void **state)
{
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		struct obs_tlsdec t;
		struct said s = { .skip_from = 0, .skip_to = 30 };
		uint8_t want[50];

		(void)state;
		for (int i = 0; i < 50; i++)
			want[i] = (uint8_t)i;
		secrets_given_first(&t, &s, bytewise);
		assert_true(obs_tlsdec_on(&t));
		assert_int_equal(s.n, 3);
		assert_int_equal(s.dir[1], OBS_TLSDEC_RX);
		assert_true(s.unread[1]);
		assert_int_equal(s.len[1], 30);
		assert_int_equal(s.t_in[1], 10 * 8);
		assert_false(s.unread[2]);
		assert_int_equal(s.len[2], 20);
		assert_memory_equal(s.p[2], want + 30, 20);
		assert_int_equal(s.t_out[2], 10 * 8 + 5);
		/* the ticket whole (206 bytes of data), then of the data
		 * record its last 16 bytes and the 20 read, then the alert
		 * (3) */
		assert_int_equal(t.decrypted[OBS_TLSDEC_RX], 206 + 16 + 20 + 3);
		obs_tlsdec_wipe(&t);
	}
}

/* The counter mode of a range gives each suite's AEAD's own keystream,
 * wherever the range begins and however long it is. */
static void ranges(void **state)
{
	static const uint16_t suites[] = { OBS_TLS_AES_128_GCM_SHA256,
					   OBS_TLS_AES_256_GCM_SHA384,
					   OBS_TLS_CHACHA20_POLY1305_SHA256 };
	const struct obs_tlsdec_ops *ops = obs_tlscrypto_ops();
	static const uint8_t aad[5] = { 23, 3, 3, 1, 0 };
	uint8_t key[32], nonce[12], zero[600] = { 0 }, stream[600], got[600];

	(void)state;
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(7 * i + 1);
	for (int i = 0; i < 12; i++)
		nonce[i] = (uint8_t)(0xf0 ^ i);
	for (size_t k = 0; k < sizeof(suites) / sizeof(suites[0]); k++) {
		assert_true(ops->key(&crypto, 1, suites[k], key,
				     obs_tlsdec_key_len(suites[k])));
		assert_true(ops->begin(&crypto, 1, nonce, aad, sizeof(aad)));
		assert_true(
			ops->update(&crypto, 1, zero, sizeof(zero), stream));
		for (size_t at = 0; at < 300; at += 37)
			for (size_t n = 1; at + n <= sizeof(zero); n += 131) {
				memset(got, 0, sizeof(got));
				assert_true(ops->range(&crypto, 1, nonce, at,
						       zero + at, n, got));
				assert_memory_equal(got, stream + at, n);
			}
	}
	obs_tlscrypto_reset(&crypto);
}

/* ---- TLS 1.2 ---- */

/* A master secret, and the records of a TLS 1.2 conversation under
 * TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 with RFC 8448's randoms: their
 * key block (client key 0b10f4bf..., server key 2f8cd471..., salts
 * ac77369f, ffcdbf54) from an implementation of RFC 5246's PRF of our own
 * (Python's hmac), the records sealed by pyca/cryptography's AESGCM. Each
 * Finished says 14 00 00 0c a0..ab; the data 00..31; the client's alert
 * is a close_notify; the server's last record a HelloRequest. */
static const char master_12[] =
	"01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da"
	"e1e8eff6fd040b121920272e353c434a";
static const char client_fin_12[] =
	"16030300280000000000000000d823d274dfba2b38207cd5dfc388a3bc52aa95"
	"3b34c7ad06be8369f5ef6e0857";
static const char client_data_12[] =
	"170303004a00000000000000012be8f7f981283e4d2fb857e491d2adb2cb5132"
	"79116f6c7d2b3cf912aa02e0494ab9a60cf22d59e29c4114fb869fccd30d16a2"
	"3ed63ed02f40be494f60270061eca6";
static const char client_alert_12[] =
	"150303001a0000000000000002d8f586324a89f1524781220fc834a34388d3";
static const char server_fin_12[] =
	"16030300285a5a5a5a00000000c7a07d842dd873c449b6f410055ce076419dbe"
	"2bf96fd5c8eaa62c0e6be0744d";
static const char server_data_12[] =
	"170303004a5a5a5a5a0000000143b592179e2877e2a0c90ba0db556d2575fde6"
	"55a00368fb0d33b9852c19fbcb26c1f00be347475f84b9048cb039359ba4d197"
	"abb395a7effb9d0c203ec196445380";
static const char hello_request_12[] =
	"160303001c5a5a5a5a000000023ef63db5f3814729af96e53fc7dd7c1a2a1115"
	"48";

/* The TLS 1.2 conversation: calls 0, 1 the hellos, 2..5 the
 * ChangeCipherSpecs and Finished messages, 6 the client's data, 7 the
 * server's, 8 the client's alert. */
static void conversation_12(struct conv *c)
{
	client_hello(c);
	server_hello(c, 0, 0xc02f, NULL);
	add_record(c, OBS_TLSDEC_TX, 20, (const uint8_t *)"\x01", 1);
	add_hex(c, OBS_TLSDEC_TX, client_fin_12);
	add_record(c, OBS_TLSDEC_RX, 20, (const uint8_t *)"\x01", 1);
	add_hex(c, OBS_TLSDEC_RX, server_fin_12);
	add_hex(c, OBS_TLSDEC_TX, client_data_12);
	add_hex(c, OBS_TLSDEC_RX, server_data_12);
	add_hex(c, OBS_TLSDEC_TX, client_alert_12);
}

/* Calls [from, c->n) of c made one call (records that came together). */
static void merge(struct conv *c, int from)
{
	struct call *k = &c->calls[from];

	for (int i = from + 1; i < c->n; i++) {
		memcpy(k->b + k->n, c->calls[i].b, c->calls[i].n);
		k->n += c->calls[i].n;
	}
	c->n = from + 1;
}

/* The same conversation as a session resumed (RFC 5246 7.3): the server's
 * hello, ChangeCipherSpec and Finished in one call (1), then the client's
 * (2), its data (3), the server's (4), the client's alert (5). */
static void resumed_12(struct conv *c)
{
	client_hello(c);
	server_hello(c, 0, 0xc02f, NULL);
	add_record(c, OBS_TLSDEC_RX, 20, (const uint8_t *)"\x01", 1);
	add_hex(c, OBS_TLSDEC_RX, server_fin_12);
	merge(c, 1);
	add_record(c, OBS_TLSDEC_TX, 20, (const uint8_t *)"\x01", 1);
	add_hex(c, OBS_TLSDEC_TX, client_fin_12);
	merge(c, 2);
	add_hex(c, OBS_TLSDEC_TX, client_data_12);
	add_hex(c, OBS_TLSDEC_RX, server_data_12);
	add_hex(c, OBS_TLSDEC_TX, client_alert_12);
}

/* The master secret, asked for by the client_random, 48 bytes. */
static void master_secret(struct obs_tlsdec *t, struct said *s)
{
	uint8_t master[48], random[32], want_random[32];
	size_t len;
	struct obs_tlsdec_sink sink = { out, unread, s };

	assert_true(obs_tlsdec_wants_keys(t, random, &len));
	assert_int_equal(len, 48);
	unhex(client_random, want_random);
	assert_memory_equal(random, want_random, 32);
	unhex(master_12, master);
	assert_true(obs_tlsdec_keys(t, master, master, 48, &sink));
}

/* Conversation c (its hellos calls 0 and 1) through t, the memory offered
 * after the hellos, the master secret before the rest (late: after it). */
static void decrypt_12(struct obs_tlsdec *t, const struct conv *c, bool late,
		       bool bytewise, struct said *s)
{
	start(t);
	feed(t, c, 0, 2, bytewise, s);
	give_mem(t);
	if (!late)
		master_secret(t, s);
	feed(t, c, 2, c->n, bytewise, s);
	if (late)
		master_secret(t, s);
	assert_true(obs_tlsdec_on(t));
}

/* TLS 1.2 decrypted, the master secret given before the records and after
 * them, fed whole and a byte at a time: the data each way said once, the
 * Finished messages and the alert nothing; a HelloRequest after the
 * server's Finished (renegotiation) gives up. */
static void tls12(void **state)
{
	(void)state;
	for (int late = 0; late < 2; late++)
		for (int bytewise = 0; bytewise < 2; bytewise++) {
			struct obs_tlsdec t;
			struct conv c = { 0 };
			struct said s = { 0 };

			conversation_12(&c);
			decrypt_12(&t, &c, late, bytewise, &s);
			check_data(&s, 6, 7);
			add_hex(&c, OBS_TLSDEC_RX, hello_request_12);
			feed(&t, &c, c.n - 1, c.n, bytewise, &s);
			assert_false(obs_tlsdec_on(&t));
			obs_tlsdec_wipe(&t);
		}
}

/* A TLS 1.2 session resumed: the server's Finished comes in the call of
 * its hello, before the memory is offered (it is not decrypted), the
 * master secret before the data and after it: the data said once each
 * way. */
static void tls12_resumed(void **state)
{
	(void)state;
	for (int late = 0; late < 2; late++) {
		struct obs_tlsdec t;
		struct conv c = { 0 };
		struct said s = { 0 };

		resumed_12(&c);
		decrypt_12(&t, &c, late, false, &s);
		check_data(&s, 3, 4);
		obs_tlsdec_wipe(&t);
	}
}

/* TLS 1.2's PRF through the layer's op: the test vector of P_SHA256 that
 * implementations check against (secret 9bbe436b..., seed a0ba9f93...,
 * label "test label", 100 bytes). */
static void prf_12(void **state)
{
	uint8_t secret[16], seed[10 + 16], out[100], want[100];

	(void)state;
	unhex("9bbe436ba940f017b17652849a71db35", secret);
	memcpy(seed, "test label", 10);
	unhex("a0ba9f936cda311827a6f796ffd5198c", seed + 10);
	unhex("e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a"
	      "6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab"
	      "4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701"
	      "87347b66",
	      want);
	assert_true(obs_tlscrypto_ops()->prf(
		&crypto, OBS_TLS_AES_128_GCM_SHA256, secret, sizeof(secret),
		seed, sizeof(seed), out, sizeof(out)));
	assert_memory_equal(out, want, sizeof(out));
}

/* TLS 1.2 with a suite not an AEAD (AES-CBC) or not known, 1.3 with a
 * suite not known: given up at the ServerHello. */
static void not_decrypted(void **state)
{
	uint16_t cases[3][2] = { { 0, 0x002f },
				 { 0, OBS_TLS_AES_128_GCM_SHA256 },
				 { 0x0304, 0x1304 } };

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct obs_tlsdec t;
		struct conv c = { 0 };
		struct said s = { 0 };

		client_hello(&c);
		server_hello(&c, cases[i][0], cases[i][1], NULL);
		start(&t);
		feed(&t, &c, 0, c.n, false, &s);
		assert_false(obs_tlsdec_on(&t));
		assert_false(obs_tlsdec_wants_mem(&t));
	}
}

/* A HelloRetryRequest, then the ServerHello: decrypted as without. */
static void hello_retry(void **state)
{
	static const uint8_t hrr[32] = {
		0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
		0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
		0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
		0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
	};
	struct obs_tlsdec t;
	struct conv c = { 0 };
	struct said s = { 0 };

	(void)state;
	server_hello(&c, 0x0304, OBS_TLS_AES_128_GCM_SHA256, hrr);
	client_hello(&c); /* its second hello: the same random */
	handshake(&c);
	/* (handshake's first call is a third ClientHello: skipped alike) */
	data_records(&c);
	start(&t);
	{
		struct conv first = { 0 };

		client_hello(&first);
		feed(&t, &first, 0, 1, false, &s);
	}
	feed(&t, &c, 0, 4, false, &s);
	give_mem(&t);
	secrets(&t, &s, true);
	feed(&t, &c, 4, c.n, false, &s);
	check_data(&s, 8, 10);
	obs_tlsdec_wipe(&t);
}

/* Application data before the ServerHello (early data): given up. */
static void early_data(void **state)
{
	struct obs_tlsdec t;
	struct conv c = { 0 };
	struct said s = { 0 };

	(void)state;
	client_hello(&c);
	add_hex(&c, OBS_TLSDEC_TX, client_data_record);
	start(&t);
	feed(&t, &c, 0, c.n, false, &s);
	assert_false(obs_tlsdec_on(&t));
}

/* More than the hold takes before the secrets: given up, nothing said. */
static void hold_full(void **state)
{
	struct obs_tlsdec t;
	struct conv c = { 0 };
	struct said s = { 0 };
	uint8_t r[1024];

	(void)state;
	handshake(&c);
	data_records(&c);
	start(&t);
	feed(&t, &c, 0, 2, false, &s);
	give_mem(&t);
	feed(&t, &c, 2, 7, false, &s);
	assert_true(obs_tlsdec_on(&t));
	assert_true(mem->hold_len > 0);
	memset(r, 0, sizeof(r));
	for (size_t i = 0;
	     i <= OBS_TLSDEC_HOLD / sizeof(r) && obs_tlsdec_on(&t); i++) {
		struct iovec v = { r, sizeof(r) };
		struct obs_tlsdec_sink sink = { out, unread, &s };

		obs_tlsdec_feed(&t, OBS_TLSDEC_RX, &v, 1, sizeof(r), 0, 0,
				&sink);
	}
	assert_false(obs_tlsdec_on(&t));
	assert_int_equal(mem->hold_len, 0);
	assert_int_equal(s.n, 0);
}

/* Without memory when the first record of data comes: given up. */
static void no_memory(void **state)
{
	struct obs_tlsdec t;
	struct conv c = { 0 };
	struct said s = { 0 };

	(void)state;
	handshake(&c);
	data_records(&c);
	start(&t);
	feed(&t, &c, 0, c.n, false, &s);
	assert_false(obs_tlsdec_on(&t));
	assert_int_equal(s.n, 0);
}

static void keylog_lines(void **state)
{
	struct obs_keylog_line l;
	char line[300];
	uint8_t want[32];

	(void)state;
	snprintf(line, sizeof(line), "CLIENT_TRAFFIC_SECRET_0 %s %s",
		 client_random, client_ap_secret);
	assert_true(obs_keylog_parse(line, strlen(line), &l));
	assert_int_equal(l.label, OBS_KL_CLIENT_TRAFFIC);
	assert_int_equal(l.secret_len, 32);
	unhex(client_random, want);
	assert_memory_equal(l.random, want, 32);
	unhex(client_ap_secret, want);
	assert_memory_equal(l.secret, want, 32);
	snprintf(line, sizeof(line), "SERVER_TRAFFIC_SECRET_0 %s %s\r",
		 client_random, server_ap_secret);
	assert_true(obs_keylog_parse(line, strlen(line), &l));
	assert_int_equal(l.label, OBS_KL_SERVER_TRAFFIC);
	snprintf(line, sizeof(line), "EXPORTER_SECRET %s %s", client_random,
		 server_ap_secret);
	assert_true(obs_keylog_parse(line, strlen(line), &l));
	assert_int_equal(l.label, OBS_KL_OTHER);
	/* not lines of the format */
	static const char *bad[] = {
		"",
		"# a comment",
		"CLIENT_TRAFFIC_SECRET_0",
		"CLIENT_TRAFFIC_SECRET_0 abc def",
		"client_traffic_secret_0 "
		"cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 "
		"00",
		"CLIENT_TRAFFIC_SECRET_0 "
		"cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 "
		"0",
		"CLIENT_TRAFFIC_SECRET_0 "
		"cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 "
		"zz",
		"CLIENT_TRAFFIC_SECRET_0 "
		"cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(obs_keylog_parse(bad[i], strlen(bad[i]), &l));
		assert_int_equal(l.secret_len, 0);
	}
	/* a secret longer than 48 bytes */
	snprintf(line, sizeof(line), "CLIENT_TRAFFIC_SECRET_0 %s %s%s%s",
		 client_random, client_ap_secret, client_ap_secret,
		 client_ap_secret);
	assert_false(obs_keylog_parse(line, strlen(line), &l));
}

struct lines {
	int n;
	uint8_t label[4];
	uint64_t at[4];
	size_t len[4];
};

static void found(void *ctx, const struct obs_keylog_line *l, uint64_t at,
		  size_t len)
{
	struct lines *f = ctx;

	assert_true(f->n < 4);
	f->label[f->n] = l->label;
	f->at[f->n] = at;
	f->len[f->n++] = len;
}

/* The reader: lines split across pieces of every size, each said once
 * with its offset and length; a comment and a line too long skipped. */
static void keylog_reader(void **state)
{
	char file[2048];
	int n;

	(void)state;
	n = snprintf(file, sizeof(file),
		     "# comment\nCLIENT_TRAFFIC_SECRET_0 %s %s\n%0600d\n"
		     "SERVER_TRAFFIC_SECRET_0 %s %s\nEXPORTER_SECRET %s %s",
		     client_random, client_ap_secret, 7, client_random,
		     server_ap_secret, client_random, server_ap_secret);
	for (size_t piece = 1; piece <= (size_t)n; piece++) {
		struct obs_keylog_reader r;
		struct lines f = { 0 };

		obs_keylog_reader_init(&r, 100);
		for (size_t at = 0; at < (size_t)n; at += piece)
			obs_keylog_feed(&r, file + at,
					(size_t)n - at < piece ? (size_t)n - at
							       : piece,
					found, &f);
		/* the last line has no newline yet: not said */
		assert_int_equal(f.n, 2);
		assert_int_equal(f.label[0], OBS_KL_CLIENT_TRAFFIC);
		assert_int_equal(f.at[0], 100 + 10);
		assert_int_equal(f.len[0], 23 + 1 + 64 + 1 + 64 + 1);
		assert_int_equal(f.label[1], OBS_KL_SERVER_TRAFFIC);
		assert_int_equal(f.at[1], 100 + 10 + 154 + 601);
		assert_int_equal(r.off, 100 + (uint64_t)n);
		obs_keylog_feed(&r, "\n", 1, found, &f);
		assert_int_equal(f.n, 3);
		assert_int_equal(f.label[2], OBS_KL_OTHER);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_schedule),
		cmocka_unit_test(secrets_first),
		cmocka_unit_test(secrets_late),
		cmocka_unit_test(tampered),
		cmocka_unit_test(read_where_read),
		cmocka_unit_test(ranges),
		cmocka_unit_test(tls12),
		cmocka_unit_test(tls12_resumed),
		cmocka_unit_test(prf_12),
		cmocka_unit_test(not_decrypted),
		cmocka_unit_test(hello_retry),
		cmocka_unit_test(early_data),
		cmocka_unit_test(hold_full),
		cmocka_unit_test(no_memory),
		cmocka_unit_test(keylog_lines),
		cmocka_unit_test(keylog_reader),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
