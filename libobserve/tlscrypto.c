/* tlscrypto.c - the cryptography of the TLS decryption (core/tlsdec.h's
 * struct obs_tlsdec_ops) from the system's libcrypto (OpenSSL 3), loaded
 * with dlopen by the first connection that needs it, never linked (ldd
 * libobserve.so). None of the cryptography is ours: HKDF-Expand is
 * libcrypto's HMAC (RFC 5869 2.3 over HMAC()), the AEADs its EVP ciphers
 * (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305), fetched once.
 *
 * A program that carries an OpenSSL of its own and exports its symbols
 * (node) would have libcrypto's calls to its own functions bound to the
 * program's copies: there it is loaded with RTLD_DEEPBIND. A process that
 * has libcrypto.so.3 loaded already shares it.
 *
 * Each decrypting connection has a struct obs_tlscrypto: its two EVP
 * cipher contexts, allocated by libcrypto once for the pool's slot
 * (tlspool.c) and reset (their key schedules wiped) when it ends.
 */
#define _GNU_SOURCE
#include "tlscrypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

/* OpenSSL's own values (evp.h), so that no header is needed. */
#define CTRL_AEAD_SET_TAG 0x11

struct crypto {
	void *(*ctx_new)(void);
	void (*ctx_free)(void *ctx);
	int (*ctx_reset)(void *ctx);
	int (*ctx_ctrl)(void *ctx, int type, int arg, void *ptr);
	void *(*cipher_fetch)(void *libctx, const char *name,
			      const char *props);
	int (*init)(void *ctx, const void *cipher, void *engine,
		    const unsigned char *key, const unsigned char *iv);
	int (*update)(void *ctx, unsigned char *out, int *outl,
		      const unsigned char *in, int inl);
	int (*final)(void *ctx, unsigned char *out, int *outl);
	const void *(*sha256)(void);
	const void *(*sha384)(void);
	unsigned char *(*hmac)(const void *md, const void *key, int key_len,
			       const unsigned char *d, size_t n,
			       unsigned char *md_out, unsigned int *md_len);
	void (*cleanse)(void *p, size_t n);
	void *cipher[3]; /* by suite - 0x1301 */
};

static struct crypto lib;
static const char *why = "not loaded yet";
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;

const char *obs_tlscrypto_error(void)
{
	return why;
}

/* Whether the process has OpenSSL's functions from elsewhere than
 * libcrypto.so.3 (a program with its own, exported). */
static bool openssl_inside(void)
{
	void *sym = dlsym(RTLD_DEFAULT, "EVP_CIPHER_CTX_new");
	Dl_info info;

	if (sym == NULL || !dladdr(sym, &info) || info.dli_fname == NULL)
		return false;
	return strstr(info.dli_fname, "libcrypto.so") == NULL;
}

#define FIND(field, name)                                                      \
	do {                                                                   \
		*(void **)&lib.field = dlsym(h, name);                         \
		if (lib.field == NULL) {                                       \
			why = "libcrypto.so.3 lacks " name;                    \
			return;                                                \
		}                                                              \
	} while (0)

static void load(void)
{
	static const char *const names[3] = { "AES-128-GCM", "AES-256-GCM",
					      "ChaCha20-Poly1305" };
	void *h = dlopen("libcrypto.so.3",
			 RTLD_NOW | RTLD_LOCAL |
				 (openssl_inside() ? RTLD_DEEPBIND : 0));

	if (h == NULL) {
		why = "libcrypto.so.3 cannot be loaded (install libssl3)";
		return;
	}
	FIND(ctx_new, "EVP_CIPHER_CTX_new");
	FIND(ctx_free, "EVP_CIPHER_CTX_free");
	FIND(ctx_reset, "EVP_CIPHER_CTX_reset");
	FIND(ctx_ctrl, "EVP_CIPHER_CTX_ctrl");
	FIND(cipher_fetch, "EVP_CIPHER_fetch");
	FIND(init, "EVP_DecryptInit_ex");
	FIND(update, "EVP_DecryptUpdate");
	FIND(final, "EVP_DecryptFinal_ex");
	FIND(sha256, "EVP_sha256");
	FIND(sha384, "EVP_sha384");
	FIND(hmac, "HMAC");
	FIND(cleanse, "OPENSSL_cleanse");
	for (int i = 0; i < 3; i++) {
		lib.cipher[i] = lib.cipher_fetch(NULL, names[i], NULL);
		if (lib.cipher[i] == NULL) {
			why = "libcrypto.so.3 has no AES-GCM or "
			      "ChaCha20-Poly1305";
			return;
		}
	}
	why = NULL;
	loaded = true;
}

/* ---- the operations (ctx: struct obs_tlscrypto) ---- */

static bool expand(void *ctx, uint16_t suite, const uint8_t *secret,
		   size_t secret_len, const uint8_t *info, size_t info_len,
		   uint8_t *out, size_t out_len)
{
	/* RFC 5869 2.3: T(i) = HMAC(PRK, T(i-1) | info | i) */
	const void *md = suite == OBS_TLS_AES_256_GCM_SHA384 ? lib.sha384()
							    : lib.sha256();
	size_t hlen = obs_tlsdec_hash_len(suite);
	uint8_t block[64 + 300], t[64];
	unsigned int tlen = 0;
	size_t done = 0;

	(void)ctx;
	if (info_len > 300 || out_len > 255 * hlen)
		return false;
	for (uint8_t i = 1; done < out_len; i++) {
		size_t n = 0, k;

		if (i > 1) {
			memcpy(block, t, hlen);
			n = hlen;
		}
		memcpy(block + n, info, info_len);
		n += info_len;
		block[n++] = i;
		if (!lib.hmac(md, secret, (int)secret_len, block, n, t, &tlen) ||
		    tlen != hlen)
			return false;
		k = out_len - done < hlen ? out_len - done : hlen;
		memcpy(out + done, t, k);
		done += k;
	}
	lib.cleanse(t, sizeof(t));
	lib.cleanse(block, sizeof(block));
	return true;
}

static bool key(void *ctx, int dir, uint16_t suite, const uint8_t *k,
		size_t key_len)
{
	struct obs_tlscrypto *x = ctx;

	(void)key_len;
	if (suite < 0x1301 || suite > 0x1303)
		return false;
	return lib.init(x->cipher[dir], lib.cipher[suite - 0x1301], NULL, k,
			NULL) == 1;
}

static bool begin(void *ctx, int dir, const uint8_t nonce[12],
		  const uint8_t aad[5])
{
	struct obs_tlscrypto *x = ctx;
	int n;

	return lib.init(x->cipher[dir], NULL, NULL, NULL, nonce) == 1 &&
	       lib.update(x->cipher[dir], NULL, &n, aad, 5) == 1;
}

static bool update(void *ctx, int dir, const uint8_t *in, size_t n,
		   uint8_t *out)
{
	struct obs_tlscrypto *x = ctx;
	int got;

	return n <= (1u << 20) &&
	       lib.update(x->cipher[dir], out, &got, in, (int)n) == 1 &&
	       (size_t)got == n;
}

static bool verify(void *ctx, int dir, const uint8_t tag[16])
{
	struct obs_tlscrypto *x = ctx;
	uint8_t rest[16];
	int n;

	return lib.ctx_ctrl(x->cipher[dir], CTRL_AEAD_SET_TAG, 16,
			    (void *)tag) == 1 &&
	       lib.final(x->cipher[dir], rest, &n) == 1;
}

static const struct obs_tlsdec_ops ops = { expand, key, begin, update,
					   verify };

const struct obs_tlsdec_ops *obs_tlscrypto_ops(void)
{
	pthread_once(&once, load);
	return loaded ? &ops : NULL;
}

bool obs_tlscrypto_init(struct obs_tlscrypto *x)
{
	if (!obs_tlscrypto_ops())
		return false;
	for (int dir = 0; dir < 2; dir++)
		if (x->cipher[dir] == NULL &&
		    (x->cipher[dir] = lib.ctx_new()) == NULL)
			return false;
	return true;
}

void obs_tlscrypto_reset(struct obs_tlscrypto *x)
{
	for (int dir = 0; dir < 2; dir++)
		if (x->cipher[dir])
			lib.ctx_reset(x->cipher[dir]);
}
