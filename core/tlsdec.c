/* tlsdec.c - a TLS 1.3 connection's records decrypted (tlsdec.h).
 *
 *   state    on                              then
 *   hello    the ServerHello read: 1.3 with  suited
 *            a suite known
 *            ... anything else               off
 *   suited   the secrets                     keyed
 *            a record of application         held: the calls from there
 *            traffic (memory offered)        on are kept
 *   held     the secrets                     keyed, the calls kept read
 *   keyed    records decrypted               keyed
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
 */
#include "tlsdec.h"

#include <string.h>

#include "tlsrec.h"

enum { ST_HELLO, ST_SUITED, ST_HELD, ST_KEYED, ST_OFF };

/* What a record is (obs_tlsdec_dir's kind). */
enum { K_SKIP, K_HELLO, K_APP, K_APP_BEGUN };

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
	*secret_len = obs_tlsdec_hash_len(t->suite);
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
		[OBS_TLSDEC_NOT_13] = "not TLS 1.3",
		[OBS_TLSDEC_SUITE] = "a cipher suite not known",
		[OBS_TLSDEC_EARLY] = "early data",
		[OBS_TLSDEC_NOT_TLS] = "a record that is not TLS",
		[OBS_TLSDEC_TAG] = "a record whose tag failed",
		[OBS_TLSDEC_NO_MEMORY] = "no memory",
		[OBS_TLSDEC_HOLD_FULL] = "the secrets came too late",
		[OBS_TLSDEC_CRYPTO] = "the cryptography failed",
	};

	return t->state != ST_OFF	    ? "on"
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
			     size_t secret_len, const char *label,
			     uint8_t *out, size_t out_len)
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
	bool ok = obs_tlsdec_expand_label(t->ops, t->ops_ctx, t->suite,
					  d->secret, hlen, "key", key, klen) &&
		  obs_tlsdec_expand_label(t->ops, t->ops_ctx, t->suite,
					  d->secret, hlen, "iv", d->iv,
					  sizeof(d->iv)) &&
		  t->ops->key(t->ops_ctx, dir, t->suite, key, klen);

	memset(key, 0, sizeof(key));
	d->seq = 0;
	d->keyed = ok;
	return ok;
}

/* ---- the hellos ---- */

/* The ServerHello is read: 1.3 with a suite known goes on; a
 * HelloRetryRequest waits for the next one. */
static void server_hello(struct obs_tlsdec *t, struct obs_tlsdec_dir *d)
{
	if (t->hrr) {
		t->hrr = false;
		t->version = 0;
		field(d, H_TYPE, 1);
		return;
	}
	field(d, H_DONE, 0);
	if (t->version != 0x0304)
		off(t, OBS_TLSDEC_NOT_13);
	else if (!obs_tlsdec_key_len(t->suite))
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
static void hello_field(struct obs_tlsdec *t, int dir,
			struct obs_tlsdec_dir *d)
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
		if (dir == OBS_TLSDEC_RX)
			t->hrr = true; /* until a byte says no */
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
		if (dir == OBS_TLSDEC_TX)
			t->random[d->at] = b;
		else if (b != hrr_random[d->at])
			t->hrr = false;
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
	switch (type) {
	case OBS_TLS_HANDSHAKE:
		if (d->hello != H_DONE)
			d->kind = K_HELLO;
		return;
	case OBS_TLS_CHANGE_CIPHER_SPEC:
	case OBS_TLS_ALERT:
		return;
	case OBS_TLS_APPLICATION_DATA:
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

/* Direction dir's record of application traffic is read whole (its
 * plaintext in mem->plain[dir], its tag in d->tag). */
static void record_ends(struct obs_tlsdec *t, int dir, int64_t t_out,
			obs_tlsdec_out *out, void *ctx)
{
	struct obs_tlsdec_dir *d = &t->d[dir];
	uint8_t *p = t->mem->plain[dir];
	size_t n = d->len - TAG_LEN;
	uint8_t type;

	d->kind = K_SKIP;
	d->seq++;
	if (!t->ops->verify(t->ops_ctx, dir, d->tag)) {
		off(t, OBS_TLSDEC_TAG);
		return;
	}
	while (n && p[n - 1] == 0) /* the padding */
		n--;
	if (n == 0) {
		off(t, OBS_TLSDEC_NOT_TLS);
		return;
	}
	type = p[--n];
	if (type == OBS_TLS_APPLICATION_DATA && n) {
		out(ctx, dir, p, n, d->t_in, t_out);
	} else if (type == OBS_TLS_HANDSHAKE) {
		/* post-handshake messages: a KeyUpdate moves this direction
		 * to its next secret (RFC 8446 7.2) */
		bool update = false;

		for (size_t at = 0; at + 4 <= n;
		     at += 4 + ((size_t)p[at + 1] << 16 |
				(size_t)p[at + 2] << 8 | p[at + 3]))
			update |= p[at] == HS_KEY_UPDATE;
		if (update) {
			size_t hlen = obs_tlsdec_hash_len(t->suite);
			uint8_t next[OBS_TLSDEC_SECRET_MAX];

			if (!obs_tlsdec_expand_label(t->ops, t->ops_ctx,
						     t->suite, d->secret, hlen,
						     "traffic upd", next,
						     hlen)) {
				off(t, OBS_TLSDEC_CRYPTO);
				return;
			}
			memcpy(d->secret, next, hlen);
			memset(next, 0, sizeof(next));
			if (!rekey(t, dir))
				off(t, OBS_TLSDEC_CRYPTO);
		}
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

/* Bytes of a record of application traffic, p[0..k), into its plaintext
 * and tag. */
static void open_bytes(struct obs_tlsdec *t, int dir, const uint8_t *p,
		       size_t k)
{
	struct obs_tlsdec_dir *d = &t->d[dir];
	size_t data = d->len - TAG_LEN;

	if (d->got < data) {
		size_t c = data - d->got < k ? data - d->got : k;

		if (!t->ops->update(t->ops_ctx, dir, p, c,
				    t->mem->plain[dir] + d->got)) {
			off(t, OBS_TLSDEC_CRYPTO);
			return;
		}
		t->decrypted[dir] += c;
		d->got = (uint16_t)(d->got + c);
		p += c;
		k -= c;
	}
	if (k == 0)
		return; /* (still in the data) */
	memcpy(d->tag + (d->got - data), p, k);
	d->got = (uint16_t)(d->got + k);
}

/* The nonce of d's next record: its IV xor its sequence number (RFC 8446
 * 5.3). */
static void nonce_of(const struct obs_tlsdec_dir *d, uint8_t nonce[12])
{
	memcpy(nonce, d->iv, sizeof(d->iv));
	for (int i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(d->seq >> (8 * i));
}

/* Direction dir's bytes p[0..n) of one call. */
static void step(struct obs_tlsdec *t, int dir, const uint8_t *p, size_t n,
		 int64_t t_in, int64_t t_out, obs_tlsdec_out *out, void *ctx)
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
		case K_APP: { /* its first payload byte */
			uint8_t nonce[12];

			if (!d->keyed) {
				if (t->mem == NULL)
					off(t, OBS_TLSDEC_NO_MEMORY);
				else
					t->state = ST_HELD;
				continue;
			}
			nonce_of(d, nonce);
			if (!t->ops->begin(t->ops_ctx, dir, nonce, d->hdr)) {
				off(t, OBS_TLSDEC_CRYPTO);
				continue;
			}
			d->kind = K_APP_BEGUN;
			continue;
		}
		case K_APP_BEGUN:
			open_bytes(t, dir, p, k);
			if (t->state != ST_OFF && d->got == d->len)
				record_ends(t, dir, t_out, out, ctx);
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
		     obs_tlsdec_out *out, void *ctx)
{
	for (int i = 0; i < iovcnt && n && t->state != ST_OFF; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		if (k)
			step(t, dir, iov[i].iov_base, k, t_in, t_out, out, ctx);
		n -= k;
	}
}

bool obs_tlsdec_keys(struct obs_tlsdec *t, const uint8_t *client,
		     const uint8_t *server, size_t len, obs_tlsdec_out *out,
		     void *ctx)
{
	struct obs_tlsdec_mem *m = t->mem;
	uint32_t held, at = 0;

	if (t->state != ST_SUITED && t->state != ST_HELD)
		return false;
	if (m == NULL || len != obs_tlsdec_hash_len(t->suite)) {
		off(t, OBS_TLSDEC_CRYPTO);
		return false;
	}
	memcpy(t->d[OBS_TLSDEC_TX].secret, client, len);
	memcpy(t->d[OBS_TLSDEC_RX].secret, server, len);
	if (!rekey(t, OBS_TLSDEC_TX) || !rekey(t, OBS_TLSDEC_RX)) {
		off(t, OBS_TLSDEC_CRYPTO);
		return false;
	}
	held = t->state == ST_HELD ? m->hold_len : 0;
	t->state = ST_KEYED;
	while (at < held && t->state == ST_KEYED) { /* in their order */
		struct held h;

		memcpy(&h, m->hold + at, sizeof(h));
		step(t, h.dir, m->hold + at + sizeof(h), h.n, h.t_in, h.t_out,
		     out, ctx);
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
		for (int dir = 0; dir < 2; dir++)
			memset(m->plain[dir], 0, sizeof(m->plain[dir]));
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
