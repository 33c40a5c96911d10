/* fuzz_tlsdec.c - libFuzzer target for the decrypting record follower
 * (core/tlsdec.c) through the capture (core/capture.c, which feeds its
 * plaintext to the HTTP/1 framer and the HTTP/2 frame follower) and the
 * replay of what it wrote (TLS 1.3 and 1.2): any records each way, in any
 * pieces, the
 * secrets given at any point, the memory offered when asked. The
 * cryptography is a stand-in (a keystream of xor, a tag that fails when
 * its first two bytes xor to 0x5a): the follower's bookkeeping is what is
 * fuzzed, not libcrypto. Never a crash, undefined behaviour, a read
 * beyond the bytes given or a hang; the memory comes back at close, and
 * no exchange counts more bytes than were moved. Run by
 * run-fuzz-tlsdec.sh.
 *
 * An input is a flag byte (bits 1..7: the largest piece a call moves, 0
 * for whole records), then records: a kind ('<' server to client, 'K' the
 * secrets now if they are asked for, 'R' the memory refused when asked,
 * any other byte client to server), a length (2 bytes, big-endian), the
 * bytes (cut at the end of the input).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "fuzz_events.h"
#include "hpack_linked.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t moved[2]; /* bytes moved each way */
static uint32_t given;	  /* exchanges given out */

static void exchange(void *ctx, const struct obs_core_exchange *x)
{
	(void)ctx;
	given++;
	if (x->ds > moved[OBS_TX] || x->dr > moved[OBS_RX])
		abort();
}

/* ---- the stand-in cryptography ---- */

static uint8_t keyed[2];  /* the key's first byte, by direction */
static uint8_t stream[2]; /* ... xor the record's nonce's last byte */

static bool expand(void *ctx, uint16_t suite, const uint8_t *secret,
		   size_t secret_len, const uint8_t *info, size_t info_len,
		   uint8_t *out, size_t out_len)
{
	(void)ctx;
	(void)suite;
	if (secret_len == 0 || secret_len > 48 || info_len < 3)
		abort();
	for (size_t i = 0; i < out_len; i++)
		out[i] = (uint8_t)(secret[i % secret_len] ^ info[i % info_len]);
	return true;
}

static bool key(void *ctx, int dir, uint16_t suite, const uint8_t *k,
		size_t key_len)
{
	(void)ctx;
	(void)suite;
	if ((dir != 0 && dir != 1) || (key_len != 16 && key_len != 32))
		abort();
	keyed[dir] = k[0];
	return true;
}

/* TLS 1.2's PRF: a master secret, a key block of two keys and IVs */
static bool prf(void *ctx, uint16_t suite, const uint8_t *secret,
		size_t secret_len, const uint8_t *seed, size_t seed_len,
		uint8_t *out, size_t out_len)
{
	(void)ctx;
	(void)suite;
	if (secret_len != 48 || seed_len != 77 || out_len > 2 * 32 + 2 * 12)
		abort();
	for (size_t i = 0; i < out_len; i++)
		out[i] = (uint8_t)(secret[i % secret_len] ^ seed[i % seed_len]);
	return true;
}

/* The additional data: 1.3's record header (application data), or 1.2's
 * 13 bytes (a number, a type of handshake, alert or data, a version) */
static bool begin(void *ctx, int dir, const uint8_t nonce[12],
		  const uint8_t *aad, size_t aad_len)
{
	(void)ctx;
	if (aad_len == 5 ? aad[0] != 23
			 : aad_len != 13 || aad[8] < 21 || aad[8] > 23)
		abort();
	stream[dir] = keyed[dir] ^ nonce[11];
	return true;
}

static bool update_bytes(void *ctx, int dir, const uint8_t *in, size_t n,
			 uint8_t *out)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++)
		out[i] = in[i] ^ stream[dir];
	return true;
}

static bool verify(void *ctx, int dir, const uint8_t tag[16])
{
	(void)ctx;
	(void)dir;
	return (tag[0] ^ tag[1]) != 0x5a;
}

static bool range(void *ctx, int dir, const uint8_t nonce[12], size_t at,
		  const uint8_t *in, size_t n, uint8_t *out)
{
	(void)ctx;
	if (at + n > OBS_TLSDEC_RECORD_MAX - 16)
		abort(); /* beyond a record's data */
	for (size_t i = 0; i < n; i++)
		out[i] = in[i] ^ keyed[dir] ^ nonce[11];
	return true;
}

static const struct obs_tlsdec_ops ops = { expand,	 prf,	 key,  begin,
					   update_bytes, verify, range };

/* What the capture asks for, given (refuse: the memory refused). */
static void serve(struct obs_capture *cap, struct obs_cap_dec_mem *mem,
		  bool keys, bool refuse)
{
	uint8_t want = obs_cap_dec_wanted(cap), random[32], secret[48];
	size_t len;

	if (want & OBS_CAP_DEC_MEM) {
		if (refuse)
			obs_cap_dec_refuse(cap);
		else if (!obs_cap_dec_offer(cap, mem, &ops, NULL))
			abort();
	}
	if (keys && (want & OBS_CAP_DEC_KEYS) &&
	    obs_cap_dec_random(cap, random, &len)) {
		if (len != 32 && len != 48)
			abort();
		memcpy(secret, random, 32);
		memcpy(secret + 16, random, 32);
		if (random[0] & 1) /* a length that does not fit, first */
			obs_cap_dec_keys(cap, secret, random,
					 len == 48 ? 32 : 48);
		obs_cap_dec_keys(cap, secret, secret, len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct obs_sink sink = { put, update, seal, NULL };
	static struct obs_capture cap;
	static struct obs_replay replay;
	static struct obs_h2 h2mem;
	static struct obs_cap_dec_mem mem;
	struct obs_core_sink out = { exchange, NULL };
	size_t piece, i = 1;
	int64_t now = 1000;
	bool refuse = false;
	struct obs_cap_dec_mem *back;

	if (size < 1)
		return 0;
	piece = data[0] >> 1;
	n_events = 0;
	given = 0;
	moved[0] = moved[1] = 0;
	obs_cap_init(&cap, &sink);
	obs_cap_decrypt(&cap);
	if (!obs_cap_h2_offer(&cap, &h2mem, &obs_hpack_linked))
		abort();
	obs_cap_connect(&cap, now, now + 10, 0, false);
	while (i + 3 <= size) {
		uint8_t kind = data[i];
		enum obs_dir dir = kind == '<' ? OBS_RX : OBS_TX;
		size_t len = (size_t)data[i + 1] << 8 | data[i + 2];
		const uint8_t *p = data + i + 3;

		i += 3;
		if (len > size - i)
			len = size - i;
		i += len;
		if (kind == 'K' || kind == 'R') {
			refuse |= kind == 'R';
			serve(&cap, &mem, kind == 'K', refuse);
			continue;
		}
		while (len) {
			size_t k = piece && piece < len ? piece : len;
			struct iovec iov = { (void *)p, k };
			struct obs_call c = { .dir = dir,
					      .t_in = now,
					      .t_out = now + 5,
					      .result = (long)k,
					      .iov = &iov,
					      .iovcnt = 1 };

			serve(&cap, &mem, false, refuse);
			obs_cap_call(&cap, &c);
			moved[dir] += k;
			now += 10;
			p += k;
			len -= k;
		}
	}
	obs_cap_close(&cap, now, 0);
	back = obs_cap_dec_reclaim(&cap);
	if (back && back != &mem)
		abort();
	if (back && mem.dec.hold_len)
		abort(); /* wiped */
	obs_cap_h2_reclaim(&cap);
	obs_replay_init(&replay, &out);
	for (uint64_t e = 0; e < n_events; e++) {
		if (!finals[e])
			abort();
		obs_replay_event(&replay, &events[e]);
	}
	obs_replay_finish(&replay);
	if (replay.conn.exchanges != given)
		abort();
	return 0;
}
