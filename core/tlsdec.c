/* tlsdec.c - a TLS 1.3 or 1.2 connection's records decrypted (tlsdec.h).
 *
 *   state    on                              then
 *   hello    the ServerHello read: 1.3 (or   suited
 *            1.2) with a suite known
 *            ... anything else               off
 *   suited   the secrets                     keyed
 *            a record of application         held: the calls from there
 *            traffic (memory offered)        on are kept
 *   held     the secrets                     keyed, the calls kept read
 *   keyed    records decrypted (the first     keyed
 *            under each key whole, its tag
 *            checked; later ones where they
 *            are read)
 *   any      a record that cannot be TLS,    off
 *            a tag that fails, no memory,
 *            the hold full
 *
 * Each direction's records, by their outer type once its header is read:
 *
 *   type               client's (TX)                server's (RX)
 *   handshake (22)     the ClientHello: its random  the ServerHello: its
 *                      read; later ones skipped     version and suite read
 *                                                   (again after a
 *                                                   HelloRetryRequest)
 *   ccs (20), alert    skipped                      skipped
 *   app data (23)      the first: its Finished,     before the client's
 *                      skipped (before the          Finished: skipped; after:
 *                      ServerHello: early data,     application traffic
 *                      off); then application
 *                      traffic
 *
 * TLS 1.2: a direction's records after its ChangeCipherSpec (20) are
 * encrypted, numbered from 0: the first its Finished (22), counted and
 * skipped (it may come in the ServerHello's call, before the memory: a
 * session resumed), then application data (23) and alerts (21), each
 * opened as 1.3's application data is; a handshake record after the
 * Finished (renegotiation) gives up.
 */
#include "tlsdec.h"

#include <string.h>

#include "tlsrec.h"

enum { ST_HELLO, ST_SUITED, ST_HELD, ST_KEYED, ST_OFF };

/* What a record is (obs_tlsdec_dir's kind). */
enum { K_SKIP, K_HELLO, K_APP };

/* The hello parsers' fields (obs_tlsdec_dir's hello): each read whole
 * (need bytes into val, at counting), then acted on. */
enum {
	H_TYPE,	   /* the handshake type: 1 (client), 2 (server) */
	H_LENGTH,  /* its length (3) */
	H_VERSION, /* legacy_version (2) */
	H_RANDOM,  /* random (32) */
	H_SID_LEN, /* server: legacy_session_id's length (1) */
	H_SID,	   /* ... its bytes */
	H_SUITE,   /* cipher_suite (2) */
	H_COMP,	   /* legacy_compression_method (1) */
	H_EXT_LEN, /* the extensions' length (2) */
	H_EXT_TYPE,
	H_EXT_SIZE,
	H_EXT_DATA,
	H_DONE,
};

#define TAG_LEN 16u
#define HEADER_LEN 5u
#define EXT_SUPPORTED_VERSIONS 0x002bu
#define HS_KEY_UPDATE 24u
#define MASTER_LEN 48u
#define EXPLICIT_LEN 8u /* 1.2's AES-GCM: the nonce's part in the record */

/* A HelloRetryRequest's random (RFC 8446 4.1.3: SHA-256 of
 * "HelloRetryRequest"). */
static const uint8_t hrr_random[32] = {
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c,
	0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb,
	0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
};

/* One held call's head in mem->hold, its bytes after it. */
struct held {
	int64_t t_in, t_out;
	uint32_t n;
	uint8_t dir;
};

size_t obs_tlsdec_key_len(uint16_t suite)
{
	switch (suite) {
	case OBS_TLS_AES_128_GCM_SHA256:
		return 16;
	case OBS_TLS_AES_256_GCM_SHA384:
	case OBS_TLS_CHACHA20_POLY1305_SHA256:
		return 32;
	default:
		return 0;
	}
}

size_t obs_tlsdec_hash_len(uint16_t suite)
{
	return suite == OBS_TLS_AES_256_GCM_SHA384 ? 48 : 32;
}

/* The TLS 1.3 suite of a TLS 1.2 AEAD suite's AEAD and hash (RFC 5288,
 * 5289, 7905), 0 for any other. */
static uint16_t suite_of_12(uint16_t suite)
{
	switch (suite) {
	case 0x009c: /* TLS_RSA_WITH_AES_128_GCM_SHA256 */
	case 0x009e: /* TLS_DHE_RSA_WITH_AES_128_GCM_SHA256 */
	case 0xc02b: /* TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 */
	case 0xc02f: /* TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 */
		return OBS_TLS_AES_128_GCM_SHA256;
	case 0x009d: /* TLS_RSA_WITH_AES_256_GCM_SHA384 */
	case 0x009f: /* TLS_DHE_RSA_WITH_AES_256_GCM_SHA384 */
	case 0xc02c: /* TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 */
	case 0xc030: /* TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 */
		return OBS_TLS_AES_256_GCM_SHA384;
	case 0xcca8: /* TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 */
	case 0xcca9: /* TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 */
	case 0xccaa: /* TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256 */
		return OBS_TLS_CHACHA20_POLY1305_SHA256;
	default:
		return 0;
	}
}

/* The bytes before a 1.2 record's ciphertext (its explicit nonce). */
static size_t explicit_len(const struct obs_tlsdec *t)
{
	return t->v12 && t->suite != OBS_TLS_CHACHA20_POLY1305_SHA256
		       ? EXPLICIT_LEN
		       : 0;
}

static void field(struct obs_tlsdec_dir *d, uint8_t hello, uint32_t need)
{
	d->hello = (uint8_t)hello;
	d->need = (uint16_t)need;
	d->at = 0;
	d->val = 0;
}

void obs_tlsdec_init(struct obs_tlsdec *t)
{
	memset(t, 0, sizeof(*t));
	t->state = ST_HELLO;
	field(&t->d[OBS_TLSDEC_TX], H_TYPE, 1);
	field(&t->d[OBS_TLSDEC_RX], H_TYPE, 1);
}

bool obs_tlsdec_on(const struct obs_tlsdec *t)
{
	return t->state != ST_OFF;
}

bool obs_tlsdec_wants_mem(const struct obs_tlsdec *t)
{
	return t->state == ST_SUITED && t->mem == NULL;
}

bool obs_tlsdec_wants_keys(const struct obs_tlsdec *t, uint8_t random[32],
			   size_t *secret_len)
{
	if (t->state != ST_SUITED && t->state != ST_HELD)
		return false;
	memcpy(random, t->random, sizeof(t->random));
	*secret_len = t->v12 ? MASTER_LEN : obs_tlsdec_hash_len(t->suite);
	return true;
}

bool obs_tlsdec_offer(struct obs_tlsdec *t, struct obs_tlsdec_mem *mem,
		      const struct obs_tlsdec_ops *ops, void *ops_ctx)
{
	if (t->mem)
		return false;
	t->mem = mem;
	t->ops = ops;
	t->ops_ctx = ops_ctx;
	mem->hold_len = 0;
	return true;
}

/* Given up (why: enum obs_tlsdec_why): what is held is dropped. */
static void off(struct obs_tlsdec *t, uint8_t why)
{
	if (t->state != ST_OFF)
		t->why = why;
	t->state = ST_OFF;
	if (t->mem && t->mem->hold_len) {
		memset(t->mem->hold, 0, t->mem->hold_len);
		t->mem->hold_len = 0;
	}
}

const char *obs_tlsdec_why(const struct obs_tlsdec *t)
{
	static const char *const whys[] = {
		[OBS_TLSDEC_ENDED] = "ended",
		[OBS_TLSDEC_VERSION] = "not TLS 1.3 or 1.2",
		[OBS_TLSDEC_SUITE] = "a cipher suite not known",
		[OBS_TLSDEC_EARLY] = "early data",
		[OBS_TLSDEC_NOT_TLS] = "a record that is not TLS",
		[OBS_TLSDEC_TAG] = "a record whose tag failed",
		[OBS_TLSDEC_NO_MEMORY] = "no memory",
		[OBS_TLSDEC_HOLD_FULL] = "the secrets came too late",
		[OBS_TLSDEC_CRYPTO] = "the cryptography failed",
	};

	return t->state != ST_OFF ? "on"
	       : t->why < sizeof(whys) / sizeof(whys[0]) && whys[t->why]
		       ? whys[t->why]
		       : "?";
}

void obs_tlsdec_refuse(struct obs_tlsdec *t)
{
	if (t->mem == NULL)
		off(t, OBS_TLSDEC_NO_MEMORY);
}

bool obs_tlsdec_expand_label(const struct obs_tlsdec_ops *ops, void *ctx,
			     uint16_t suite, const uint8_t *secret,
			     size_t secret_len, const char *label, uint8_t *out,
			     size_t out_len)
{
	/* struct { uint16 length; opaque label<7..255> = "tls13 " + Label;
	 * opaque context<0..255> = ""; } HkdfLabel; */
	static const char prefix[] = "tls13 ";
	uint8_t info[2 + 1 + 255 + 1];
	size_t n = strlen(label), k = 0;

	if (n > 255 - (sizeof(prefix) - 1) || out_len > 0xffff)
		return false;
	info[k++] = (uint8_t)(out_len >> 8);
	info[k++] = (uint8_t)out_len;
	info[k++] = (uint8_t)(sizeof(prefix) - 1 + n);
	memcpy(info + k, prefix, sizeof(prefix) - 1);
	k += sizeof(prefix) - 1;
	memcpy(info + k, label, n);
	k += n;
	info[k++] = 0; /* the context: empty */
	return ops->expand(ctx, suite, secret, secret_len, info, k, out,
			   out_len);
}

/* Direction dir's key and IV from its secret (d->secret); its records
 * counted from 0. */
static bool rekey(struct obs_tlsdec *t, int dir)
{
	struct obs_tlsdec_dir *d = &t->d[dir];
	size_t klen = obs_tlsdec_key_len(t->suite);
	size_t hlen = obs_tlsdec_hash_len(t->suite);
	uint8_t key[32];
	bool ok =
		obs_tlsdec_expand_label(t->ops, t->ops_ctx, t->suite, d->secret,
					hlen, "key", key, klen) &&
		obs_tlsdec_expand_label(t->ops, t->ops_ctx, t->suite, d->secret,
					hlen, "iv", d->iv, sizeof(d->iv)) &&
		t->ops->key(t->ops_ctx, dir, t->suite, key, klen);

	memset(key, 0, sizeof(key));
	d->seq = 0;
	d->keyed = ok;
	d->proven = false;
	return ok;
}

/* TLS 1.2's keys and IVs, both directions, from the master secret: the
 * key block (RFC 5246 6.3; no MAC keys for an AEAD). Each direction's
 * records are counted from its ChangeCipherSpec, whenever this comes. */
static bool rekey_12(struct obs_tlsdec *t, const uint8_t master[MASTER_LEN])
{
	static const char label[] = "key expansion";
	size_t klen = obs_tlsdec_key_len(t->suite);
	size_t ivlen = explicit_len(t) ? 4 : 12;
	uint8_t seed[sizeof(label) - 1 + 64], block[2 * 32 + 2 * 12];
	bool ok;

	memcpy(seed, label, sizeof(label) - 1);
	memcpy(seed + sizeof(label) - 1, t->server_random, 32);
	memcpy(seed + sizeof(label) - 1 + 32, t->random, 32);
	ok = t->ops->prf(t->ops_ctx, t->suite, master, MASTER_LEN, seed,
			 sizeof(seed), block, 2 * klen + 2 * ivlen) &&
	     t->ops->key(t->ops_ctx, OBS_TLSDEC_TX, t->suite, block, klen) &&
	     t->ops->key(t->ops_ctx, OBS_TLSDEC_RX, t->suite, block + klen,
			 klen);
	for (int dir = 0; dir < 2; dir++) {
		struct obs_tlsdec_dir *d = &t->d[dir];

		memcpy(d->iv, block + 2 * klen + (size_t)dir * ivlen, ivlen);
		d->keyed = ok;
		d->proven = false;
	}
	memset(block, 0, sizeof(block));
	__asm__ __volatile__("" : : "r"(block) : "memory");
	return ok;
}

/* ---- the hellos ---- */

/* The ServerHello is read: 1.3, or 1.2 without supported_versions, with a
 * suite known goes on; a HelloRetryRequest waits for the next one. */
static void server_hello(struct obs_tlsdec *t, struct obs_tlsdec_dir *d)
{
	if (t->hrr) {
		t->hrr = false;
		t->version = 0;
		field(d, H_TYPE, 1);
		return;
	}
	field(d, H_DONE, 0);
	if (t->version == 0 && t->legacy == 0x0303) {
		t->v12 = true;
		t->suite = suite_of_12(t->suite);
	} else if (t->version != 0x0304) {
		off(t, OBS_TLSDEC_VERSION);
		return;
	}
	if (!obs_tlsdec_key_len(t->suite))
		off(t, OBS_TLSDEC_SUITE);
	else
		t->state = ST_SUITED;
}

/* The next of the extensions (left: their bytes still to come). */
static void next_ext(struct obs_tlsdec *t, struct obs_tlsdec_dir *d)
{
	if (d->left == 0)
		server_hello(t, d);
	else
		field(d, H_EXT_TYPE, 2);
}

/* Field d->hello of direction dir's hello is read (d->val). The client's
 * is read to its random, the server's to its extensions. */
static void hello_field(struct obs_tlsdec *t, int dir, struct obs_tlsdec_dir *d)
{
	switch (d->hello) {
	case H_TYPE: /* client_hello (1), server_hello (2) */
		if (d->val != (dir == OBS_TLSDEC_TX ? 1u : 2u))
			off(t, OBS_TLSDEC_NOT_TLS);
		else
			field(d, H_LENGTH, 3);
		return;
	case H_LENGTH:
		field(d, H_VERSION, 2);
		return;
	case H_VERSION:
		if (dir == OBS_TLSDEC_RX) {
			t->legacy = (uint16_t)d->val;
			t->hrr = true; /* until a byte says no */
		}
		field(d, H_RANDOM, 32);
		return;
	case H_RANDOM:
		field(d, dir == OBS_TLSDEC_TX ? H_DONE : H_SID_LEN,
		      dir == OBS_TLSDEC_TX ? 0 : 1);
		return;
	case H_SID_LEN:
		if (d->val)
			field(d, H_SID, d->val);
		else
			field(d, H_SUITE, 2);
		return;
	case H_SID:
		field(d, H_SUITE, 2);
		return;
	case H_SUITE:
		t->suite = (uint16_t)d->val;
		field(d, H_COMP, 1);
		return;
	case H_COMP:
		field(d, H_EXT_LEN, 2);
		return;
	case H_EXT_LEN:
		d->left = d->val;
		next_ext(t, d);
		return;
	case H_EXT_TYPE:
		d->ext = (uint16_t)d->val;
		field(d, H_EXT_SIZE, 2);
		return;
	case H_EXT_SIZE:
		if (d->val == 0)
			next_ext(t, d);
		else
			field(d, H_EXT_DATA, d->val);
		return;
	case H_EXT_DATA:
		if (d->ext == EXT_SUPPORTED_VERSIONS && d->at == 2)
			t->version = (uint16_t)d->val;
		next_ext(t, d);
		return;
	default:
		return;
	}
}

/* One byte b of direction dir's hello. */
static void hello_byte(struct obs_tlsdec *t, int dir, uint8_t b)
{
	struct obs_tlsdec_dir *d = &t->d[dir];

	if (d->hello == H_DONE)
		return;
	if (d->hello >= H_EXT_TYPE)
		d->left--; /* (the extensions' length covers their bytes) */
	if (d->hello == H_RANDOM) {
		if (dir == OBS_TLSDEC_TX) {
			t->random[d->at] = b;
		} else {
			t->server_random[d->at] = b;
			if (b != hrr_random[d->at])
				t->hrr = false;
		}
	}
	d->val = d->val << 8 | b;
	if (++d->at < d->need)
		return;
	if (d->hello >= H_EXT_TYPE && d->left > 0xffff) { /* past the end */
		off(t, OBS_TLSDEC_NOT_TLS);
		return;
	}
	hello_field(t, dir, d);
}

/* ---- records ---- */

/* Direction dir's record header is read: what its payload is. */
static void record_begins(struct obs_tlsdec *t, int dir)
{
	struct obs_tlsdec_dir *d = &t->d[dir];
	uint8_t type = d->hdr[0];

	d->len = (uint16_t)(d->hdr[3] << 8 | d->hdr[4]);
	d->got = 0;
	d->kind = K_SKIP;
	if (d->hdr[1] != 3 || d->len > OBS_TLSDEC_RECORD_MAX) {
		off(t, OBS_TLSDEC_NOT_TLS);
		return;
	}
	if (t->v12 && d->ccs) { /* encrypted, numbered from the CCS */
		if (type == OBS_TLS_HANDSHAKE && d->seq == 0)
			d->seq++; /* its Finished: counted, skipped */
		else if ((type != OBS_TLS_ALERT &&
			  type != OBS_TLS_APPLICATION_DATA) ||
			 d->len < explicit_len(t) + TAG_LEN)
			off(t, OBS_TLSDEC_NOT_TLS); /* (renegotiation too) */
		else
			d->kind = K_APP;
		return;
	}
	switch (type) {
	case OBS_TLS_HANDSHAKE:
		if (d->hello != H_DONE)
			d->kind = K_HELLO;
		return;
	case OBS_TLS_CHANGE_CIPHER_SPEC:
		d->ccs = t->v12;
		d->seq = 0;
		return;
	case OBS_TLS_ALERT:
		return;
	case OBS_TLS_APPLICATION_DATA:
		if (t->v12) { /* before its ChangeCipherSpec */
			off(t, OBS_TLSDEC_NOT_TLS);
			return;
		}
		if (t->state == ST_HELLO) { /* early data, or not TLS */
			off(t, OBS_TLSDEC_EARLY);
			return;
		}
		if (!t->finished) {
			if (dir == OBS_TLSDEC_TX)
				t->finished = true; /* this is the Finished */
			return;
		}
		if (d->len < TAG_LEN + 1) {
			off(t, OBS_TLSDEC_NOT_TLS);
			return;
		}
		d->kind = K_APP;
		return;
	default:
		off(t, OBS_TLSDEC_NOT_TLS);
		return;
	}
}

/* The nonce of d's record numbered seq: its IV xor the number (RFC 8446
 * 5.3). */
static void nonce_of(const struct obs_tlsdec_dir *d, uint64_t seq,
		     uint8_t nonce[12])
{
	memcpy(nonce, d->iv, sizeof(d->iv));
	for (int i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(seq >> (8 * i));
}

/* A record of direction dir being opened (in mem->record[dir]): its
 * nonce and additional data, where its data begin (after 1.2's explicit
 * nonce) and their bytes, and whether its plaintext is all there (opened
 * whole) or is decrypted where it is read. */
struct opening {
	int dir;
	uint8_t nonce[12];
	uint8_t aad[13];
	size_t aad_len;
	size_t at;
	size_t n;
	bool whole;
	int64_t t_out;
};

/* Record seq of direction dir, its header read and its payload in
 * mem->record[dir]: its opening (RFC 8446 5.2-5.3; 1.2: RFC 5246 6.2.3.3,
 * RFC 5288 3, RFC 7905 2). */
static void opening_of(const struct obs_tlsdec *t, int dir, uint64_t seq,
		       struct opening *o)
{
	const struct obs_tlsdec_dir *d = &t->d[dir];

	o->dir = dir;
	o->at = explicit_len(t);
	o->n = d->len - o->at - TAG_LEN;
	if (o->at) { /* 1.2's AES-GCM: its salt, then the record's 8 bytes */
		memcpy(o->nonce, d->iv, 4);
		memcpy(o->nonce + 4, t->mem->record[dir], EXPLICIT_LEN);
	} else {
		nonce_of(d, seq, o->nonce);
	}
	if (!t->v12) {
		memcpy(o->aad, d->hdr, HEADER_LEN);
		o->aad_len = HEADER_LEN;
		return;
	}
	for (int i = 0; i < 8; i++)
		o->aad[7 - i] = (uint8_t)(seq >> (8 * i));
	memcpy(o->aad + 8, d->hdr, 3); /* its type and version */
	o->aad[11] = (uint8_t)(o->n >> 8);
	o->aad[12] = (uint8_t)o->n;
	o->aad_len = 13;
}

/* Its plaintext [from, to) into mem->plain[dir]: false when the
 * cryptography failed (given up). */
static bool reveal(struct obs_tlsdec *t, const struct opening *o, size_t from,
		   size_t to)
{
	if (o->whole || from >= to)
		return true;
	if (!t->ops->range(t->ops_ctx, o->dir, o->nonce, from,
			   t->mem->record[o->dir] + o->at + from, to - from,
			   t->mem->plain[o->dir] + from)) {
		off(t, OBS_TLSDEC_CRYPTO);
		return false;
	}
	t->decrypted[o->dir] += to - from;
	return true;
}

/* The record opened whole and its tag checked: false when it fails. */
static bool open_whole(struct obs_tlsdec *t, struct opening *o)
{
	struct obs_tlsdec_dir *d = &t->d[o->dir];
	const uint8_t *r = t->mem->record[o->dir] + o->at;

	if (!t->ops->begin(t->ops_ctx, o->dir, o->nonce, o->aad, o->aad_len) ||
	    !t->ops->update(t->ops_ctx, o->dir, r, o->n,
			    t->mem->plain[o->dir])) {
		off(t, OBS_TLSDEC_CRYPTO);
		return false;
	}
	t->decrypted[o->dir] += o->n;
	if (!t->ops->verify(t->ops_ctx, o->dir, r + o->n)) {
		off(t, OBS_TLSDEC_TAG);
		return false;
	}
	d->proven = true;
	o->whole = true;
	return true;
}

/* The inner content's length (its type the byte after it, padding of
 * zeros after that), decrypting from the end; SIZE_MAX when the record is
 * not TLS or the cryptography failed (given up). */
static size_t content_length(struct obs_tlsdec *t, const struct opening *o)
{
	const uint8_t *p = t->mem->plain[o->dir];
	size_t n = o->n;

	while (n) {
		size_t from = n > 16 ? n - 16 : 0;

		if (!reveal(t, o, from, n))
			return SIZE_MAX;
		while (n > from && p[n - 1] == 0) /* the padding */
			n--;
		if (n > from)
			return n - 1;
	}
	off(t, OBS_TLSDEC_NOT_TLS);
	return SIZE_MAX;
}

/* Application data p[0..m) of the record said to the sink: where the
 * reader does not read, not decrypted (nor said, when it was). */
static void say(struct obs_tlsdec *t, const struct opening *o, size_t m,
		const struct obs_tlsdec_sink *sink)
{
	const uint8_t *p = t->mem->plain[o->dir];
	int64_t t_in = t->d[o->dir].t_in;
	size_t i = 0;

	while (i < m && t->state == ST_KEYED) {
		size_t k = sink->unread(sink->ctx, o->dir);

		if (k) {
			k = k < m - i ? k : m - i;
			sink->out(sink->ctx, o->dir, NULL, k, t_in, o->t_out);
		} else {
			k = m - i < OBS_TLSDEC_PIECE ? m - i : OBS_TLSDEC_PIECE;
			if (!reveal(t, o, i, i + k))
				return;
			sink->out(sink->ctx, o->dir, p + i, k, t_in, o->t_out);
		}
		i += k;
	}
}

/* Post-handshake messages p[0..m): a KeyUpdate moves this direction to
 * its next secret (RFC 8446 7.2). */
static void post_handshake(struct obs_tlsdec *t, int dir, const uint8_t *p,
			   size_t m)
{
	struct obs_tlsdec_dir *d = &t->d[dir];
	size_t hlen = obs_tlsdec_hash_len(t->suite);
	uint8_t next[OBS_TLSDEC_SECRET_MAX];
	bool update = false;

	for (size_t at = 0; at + 4 <= m;
	     at +=
	     4 + ((size_t)p[at + 1] << 16 | (size_t)p[at + 2] << 8 | p[at + 3]))
		update |= p[at] == HS_KEY_UPDATE;
	if (!update)
		return;
	if (!obs_tlsdec_expand_label(t->ops, t->ops_ctx, t->suite, d->secret,
				     hlen, "traffic upd", next, hlen)) {
		off(t, OBS_TLSDEC_CRYPTO);
		return;
	}
	memcpy(d->secret, next, hlen);
	memset(next, 0, sizeof(next));
	if (!rekey(t, dir))
		off(t, OBS_TLSDEC_CRYPTO);
}

/* Direction dir's record of application traffic is whole (in
 * mem->record[dir]): opened, its content said or read. */
static void record_ends(struct obs_tlsdec *t, int dir, int64_t t_out,
			const struct obs_tlsdec_sink *sink)
{
	struct obs_tlsdec_dir *d = &t->d[dir];
	struct opening o = { .t_out = t_out };
	uint64_t seq = d->seq++;
	size_t m;
	uint8_t type;

	d->kind = K_SKIP;
	opening_of(t, dir, seq, &o);
	if (!d->proven && !open_whole(t, &o))
		return;
	m = t->v12 ? o.n : content_length(t, &o); /* 1.2: no inner type */
	if (m == SIZE_MAX)
		return;
	type = t->v12 ? d->hdr[0] : t->mem->plain[dir][m];
	if (type == OBS_TLS_APPLICATION_DATA && m) {
		say(t, &o, m, sink);
	} else if (type ==
		   OBS_TLS_HANDSHAKE) { /* (1.3's: 1.2's are not kept) */
		if (reveal(t, &o, 0, m))
			post_handshake(t, dir, t->mem->plain[dir], m);
	} else if (type != OBS_TLS_ALERT) {
		off(t, OBS_TLSDEC_NOT_TLS);
	}
}

/* The calls from p on are held until the secrets come. */
static void hold(struct obs_tlsdec *t, int dir, const uint8_t *p, size_t n,
		 int64_t t_in, int64_t t_out)
{
	struct obs_tlsdec_mem *m = t->mem;
	struct held h = { t_in, t_out, (uint32_t)n, (uint8_t)dir };

	if (n > OBS_TLSDEC_HOLD ||
	    OBS_TLSDEC_HOLD - m->hold_len < sizeof(h) + n) {
		off(t, OBS_TLSDEC_HOLD_FULL);
		return;
	}
	memcpy(m->hold + m->hold_len, &h, sizeof(h));
	memcpy(m->hold + m->hold_len + sizeof(h), p, n);
	m->hold_len += (uint32_t)(sizeof(h) + n);
}

/* Direction dir's bytes p[0..n) of one call. */
static void step(struct obs_tlsdec *t, int dir, const uint8_t *p, size_t n,
		 int64_t t_in, int64_t t_out,
		 const struct obs_tlsdec_sink *sink)
{
	struct obs_tlsdec_dir *d = &t->d[dir];

	while (n && t->state != ST_OFF) {
		size_t k;

		if (t->state == ST_HELD) {
			hold(t, dir, p, n, t_in, t_out);
			return;
		}
		if (d->got == d->len) { /* a header */
			if (d->have == 0)
				d->t_in = t_in;
			k = HEADER_LEN - d->have < n ? HEADER_LEN - d->have : n;
			memcpy(d->hdr + d->have, p, k);
			d->have = (uint8_t)(d->have + k);
			p += k;
			n -= k;
			if (d->have == HEADER_LEN) {
				d->have = 0;
				record_begins(t, dir);
			}
			continue;
		}
		k = (size_t)(d->len - d->got) < n ? (size_t)(d->len - d->got)
						  : n;
		switch (d->kind) {
		case K_HELLO:
			for (size_t i = 0; i < k && t->state != ST_OFF; i++)
				hello_byte(t, dir, p[i]);
			d->got = (uint16_t)(d->got + k);
			break;
		case K_APP: /* kept until it is whole */
			if (!d->keyed) {
				if (t->mem == NULL)
					off(t, OBS_TLSDEC_NO_MEMORY);
				else
					t->state = ST_HELD;
				continue;
			}
			memcpy(t->mem->record[dir] + d->got, p, k);
			d->got = (uint16_t)(d->got + k);
			if (d->got == d->len)
				record_ends(t, dir, t_out, sink);
			break;
		default:
			d->got = (uint16_t)(d->got + k);
			break;
		}
		p += k;
		n -= k;
	}
}

void obs_tlsdec_feed(struct obs_tlsdec *t, int dir, const struct iovec *iov,
		     int iovcnt, size_t n, int64_t t_in, int64_t t_out,
		     const struct obs_tlsdec_sink *sink)
{
	for (int i = 0; i < iovcnt && n && t->state != ST_OFF; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		if (k)
			step(t, dir, iov[i].iov_base, k, t_in, t_out, sink);
		n -= k;
	}
}

bool obs_tlsdec_keys(struct obs_tlsdec *t, const uint8_t *client,
		     const uint8_t *server, size_t len,
		     const struct obs_tlsdec_sink *sink)
{
	struct obs_tlsdec_mem *m = t->mem;
	uint32_t held, at = 0;

	if (t->state != ST_SUITED && t->state != ST_HELD)
		return false;
	if (m == NULL ||
	    len != (t->v12 ? MASTER_LEN : obs_tlsdec_hash_len(t->suite))) {
		off(t, OBS_TLSDEC_CRYPTO);
		return false;
	}
	if (!t->v12) {
		memcpy(t->d[OBS_TLSDEC_TX].secret, client, len);
		memcpy(t->d[OBS_TLSDEC_RX].secret, server, len);
	}
	if (t->v12 ? !rekey_12(t, client)
		   : !rekey(t, OBS_TLSDEC_TX) || !rekey(t, OBS_TLSDEC_RX)) {
		off(t, OBS_TLSDEC_CRYPTO);
		return false;
	}
	held = t->state == ST_HELD ? m->hold_len : 0;
	t->state = ST_KEYED;
	while (at < held && t->state == ST_KEYED) { /* in their order */
		struct held h;

		memcpy(&h, m->hold + at, sizeof(h));
		step(t, h.dir, m->hold + at + sizeof(h), h.n, h.t_in, h.t_out,
		     sink);
		at += (uint32_t)sizeof(h) + h.n;
	}
	if (m->hold_len) {
		memset(m->hold, 0, m->hold_len);
		m->hold_len = 0;
	}
	return t->state == ST_KEYED;
}

struct obs_tlsdec_mem *obs_tlsdec_wipe(struct obs_tlsdec *t)
{
	struct obs_tlsdec_mem *m = t->mem;

	if (m) {
		for (int dir = 0; dir < 2; dir++) {
			memset(m->record[dir], 0, sizeof(m->record[dir]));
			memset(m->plain[dir], 0, sizeof(m->plain[dir]));
		}
		memset(m->hold, 0, m->hold_len);
		m->hold_len = 0;
	}
	/* (memset may be elided for an object about to die: t is not, it
	 * stays in its connection; the compiler barrier keeps the stores) */
	uint8_t why = t->state == ST_OFF ? t->why : OBS_TLSDEC_ENDED;

	memset(t, 0, sizeof(*t));
	__asm__ __volatile__("" : : "r"(t), "r"(m) : "memory");
	t->state = ST_OFF;
	t->why = why;
	return m;
}
