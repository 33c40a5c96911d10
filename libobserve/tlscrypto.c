/* tlscrypto.c - the cryptography of the TLS decryption (core/tlsdec.h's
 * struct obs_tlsdec_ops) from the system's libcrypto (OpenSSL 3), loaded
 * with dlopen by the first connection that needs it, never linked (ldd
 * libobserve.so). None of the cryptography is ours: HKDF-Expand is
 * libcrypto's HKDF (EVP_KDF "HKDF", mode expand only), TLS 1.2's PRF its
 * EVP_KDF "TLS1-PRF", the AEADs its EVP
 * ciphers (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305), fetched once,
 * and for the ranges of a record decrypted alone the counter modes inside
 * them (AES-CTR from the GCM's counter block 2, ChaCha20 from block 1:
 * NIST SP 800-38D 7.1, RFC 8439 2.8), so that a range's plaintext is the
 * AEAD's own.
 *
 * A program that carries an OpenSSL of its own and exports its symbols
 * (node) would have libcrypto's calls to its own functions bound to the
 * program's copies: there it is loaded with RTLD_DEEPBIND. A process that
 * has libcrypto.so.3 loaded already shares it.
 *
 * At exit the layer still decrypts (the connections that await their
 * secrets look a last time, in its destructor), after every atexit
 * handler: libcrypto, loaded by the layer, is initialised without its
 * own (OPENSSL_INIT_NO_ATEXIT), which would clean it up before. A
 * libcrypto the program loaded is the program's to clean up: from the
 * program's exit on (an atexit handler of the layer's, run before that
 * cleanup) the operations fail, and the connections left are runs of
 * records.
 *
 * Each decrypting connection has a struct obs_tlscrypto: its two EVP
 * cipher contexts and its KDF context, allocated by libcrypto once for the
 * pool's slot (tlspool.c) and reset (key schedules and secrets wiped) when
 * it ends.
 */
#define _GNU_SOURCE
#include "tlscrypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenSSL's own values and the layout of its OSSL_PARAM (evp.h, core.h,
 * params.h, kdf.h: public), so that no header is needed. */
#define CTRL_AEAD_SET_TAG 0x11
#define PARAM_INTEGER 1
#define PARAM_UTF8_STRING 4
#define PARAM_OCTET_STRING 5
#define PARAM_UNMODIFIED ((size_t)-1)
#define HKDF_MODE_EXPAND_ONLY 2
#define INIT_NO_ATEXIT 0x00080000L

struct param {
	const char *key;
	unsigned int data_type;
	void *data;
	size_t data_size;
	size_t return_size;
};

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
	void *(*kdf_fetch)(void *libctx, const char *name, const char *props);
	void *(*kdf_ctx_new)(void *kdf);
	void (*kdf_ctx_reset)(void *ctx);
	int (*kdf_derive)(void *ctx, unsigned char *out, size_t n,
			  const struct param *params);
	void *cipher[3]; /* by suite - 0x1301 */
	void *ctr[3];	 /* ... their counter modes */
	void *hkdf;
	void *tls1_prf;
};

static struct crypto lib;
static const char *why = "not loaded yet";
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static bool gone; /* the program's libcrypto, cleaned up as it exits */

static void program_exits(void)
{
	__atomic_store_n(&gone, true, __ATOMIC_RELAXED);
}

/* Whether libcrypto may be called. */
static inline bool alive(void)
{
	return !__atomic_load_n(&gone, __ATOMIC_RELAXED);
}

const char *obs_tlscrypto_error(void)
{
	return why;
}

/* AddressSanitizer refuses a dlopen with RTLD_DEEPBIND (it would abort
 * the host): a layer built with it does not decrypt in a program that
 * carries its own OpenSSL. */
#if defined(__SANITIZE_ADDRESS__)
#define DEEPBIND_REFUSED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEEPBIND_REFUSED 1
#endif
#endif
#ifndef DEEPBIND_REFUSED
#define DEEPBIND_REFUSED 0
#endif

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

/* The functions looked up, and where each goes. */
static const struct {
	const char *name;
	void **to;
} wanted[] = {
	{ "EVP_CIPHER_CTX_new", (void **)&lib.ctx_new },
	{ "EVP_CIPHER_CTX_free", (void **)&lib.ctx_free },
	{ "EVP_CIPHER_CTX_reset", (void **)&lib.ctx_reset },
	{ "EVP_CIPHER_CTX_ctrl", (void **)&lib.ctx_ctrl },
	{ "EVP_CIPHER_fetch", (void **)&lib.cipher_fetch },
	{ "EVP_DecryptInit_ex", (void **)&lib.init },
	{ "EVP_DecryptUpdate", (void **)&lib.update },
	{ "EVP_DecryptFinal_ex", (void **)&lib.final },
	{ "EVP_KDF_fetch", (void **)&lib.kdf_fetch },
	{ "EVP_KDF_CTX_new", (void **)&lib.kdf_ctx_new },
	{ "EVP_KDF_CTX_reset", (void **)&lib.kdf_ctx_reset },
	{ "EVP_KDF_derive", (void **)&lib.kdf_derive },
};

static void load(void)
{
	static const char *const names[3] = { "AES-128-GCM", "AES-256-GCM",
					      "ChaCha20-Poly1305" };
	static const char *const ctr_names[3] = { "AES-128-CTR", "AES-256-CTR",
						  "ChaCha20" };
	static char lacks[64];
	bool inside = openssl_inside();
	bool shared;
	void *h;
	int (*init)(uint64_t opts, const void *settings);

	if (inside && DEEPBIND_REFUSED) {
		why = "the program has an OpenSSL of its own, and a layer built "
		      "with AddressSanitizer cannot load libcrypto.so.3 apart "
		      "from it (RTLD_DEEPBIND)";
		return;
	}
	h = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_NOLOAD);
	shared = h != NULL;
	if (shared)
		dlclose(h); /* (the reference NOLOAD took) */
	h = dlopen("libcrypto.so.3",
		   RTLD_NOW | RTLD_LOCAL | (inside ? RTLD_DEEPBIND : 0));
	if (h == NULL) {
		why = "libcrypto.so.3 cannot be loaded (install libssl3)";
		return;
	}
	init = (int (*)(uint64_t, const void *))dlsym(h, "OPENSSL_init_crypto");
	if (init == NULL) {
		why = "libcrypto.so.3 lacks OPENSSL_init_crypto";
		return;
	}
	if (shared)
		atexit(program_exits);
	else if (init(INIT_NO_ATEXIT, NULL) != 1) {
		why = "libcrypto.so.3 could not be initialised";
		return;
	}
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		*wanted[i].to = dlsym(h, wanted[i].name);
		if (*wanted[i].to == NULL) {
			snprintf(lacks, sizeof(lacks),
				 "libcrypto.so.3 lacks %s", wanted[i].name);
			why = lacks;
			return;
		}
	}
	for (int i = 0; i < 3; i++) {
		lib.cipher[i] = lib.cipher_fetch(NULL, names[i], NULL);
		lib.ctr[i] = lib.cipher_fetch(NULL, ctr_names[i], NULL);
		if (lib.cipher[i] == NULL || lib.ctr[i] == NULL) {
			why = "libcrypto.so.3 has no AES-GCM or "
			      "ChaCha20-Poly1305";
			return;
		}
	}
	lib.hkdf = lib.kdf_fetch(NULL, "HKDF", NULL);
	lib.tls1_prf = lib.kdf_fetch(NULL, "TLS1-PRF", NULL);
	if (lib.hkdf == NULL || lib.tls1_prf == NULL) {
		why = "libcrypto.so.3 has no HKDF or TLS1-PRF";
		return;
	}
	why = NULL;
	loaded = true;
}

/* ---- the operations (ctx: struct obs_tlscrypto) ---- */

static bool expand(void *ctx, uint16_t suite, const uint8_t *secret,
		   size_t secret_len, const uint8_t *info, size_t info_len,
		   uint8_t *out, size_t out_len)
{
	struct obs_tlscrypto *x = ctx;
	int mode = HKDF_MODE_EXPAND_ONLY;
	const char *md =
		suite == OBS_TLS_AES_256_GCM_SHA384 ? "SHA384" : "SHA256";
	const struct param params[] = {
		{ "mode", PARAM_INTEGER, &mode, sizeof(mode),
		  PARAM_UNMODIFIED },
		{ "digest", PARAM_UTF8_STRING, (void *)md, strlen(md),
		  PARAM_UNMODIFIED },
		{ "key", PARAM_OCTET_STRING, (void *)secret, secret_len,
		  PARAM_UNMODIFIED },
		{ "info", PARAM_OCTET_STRING, (void *)info, info_len,
		  PARAM_UNMODIFIED },
		{ NULL, 0, NULL, 0, 0 },
	};

	return alive() && lib.kdf_derive(x->kdf, out, out_len, params) == 1;
}

static bool prf(void *ctx, uint16_t suite, const uint8_t *secret,
		size_t secret_len, const uint8_t *seed, size_t seed_len,
		uint8_t *out, size_t out_len)
{
	struct obs_tlscrypto *x = ctx;
	const char *md =
		suite == OBS_TLS_AES_256_GCM_SHA384 ? "SHA384" : "SHA256";
	const struct param params[] = {
		{ "digest", PARAM_UTF8_STRING, (void *)md, strlen(md),
		  PARAM_UNMODIFIED },
		{ "secret", PARAM_OCTET_STRING, (void *)secret, secret_len,
		  PARAM_UNMODIFIED },
		{ "seed", PARAM_OCTET_STRING, (void *)seed, seed_len,
		  PARAM_UNMODIFIED },
		{ NULL, 0, NULL, 0, 0 },
	};

	bool ok = alive() && lib.kdf_derive(x->prf, out, out_len, params) == 1;

	/* its seeds add up across derivations: each stands alone (and the
	 * secret goes at once) */
	if (alive())
		lib.kdf_ctx_reset(x->prf);
	return ok;
}

static bool key(void *ctx, int dir, uint16_t suite, const uint8_t *k,
		size_t key_len)
{
	struct obs_tlscrypto *x = ctx;

	(void)key_len;
	if (suite < 0x1301 || suite > 0x1303 || !alive())
		return false;
	x->suite[dir] = suite;
	return lib.init(x->cipher[dir], lib.cipher[suite - 0x1301], NULL, k,
			NULL) == 1 &&
	       lib.init(x->ctr[dir], lib.ctr[suite - 0x1301], NULL, k, NULL) ==
		       1;
}

static bool begin(void *ctx, int dir, const uint8_t nonce[12],
		  const uint8_t *aad, size_t aad_len)
{
	struct obs_tlscrypto *x = ctx;
	int n;

	return alive() && aad_len <= 64 &&
	       lib.init(x->cipher[dir], NULL, NULL, NULL, nonce) == 1 &&
	       lib.update(x->cipher[dir], NULL, &n, aad, (int)aad_len) == 1;
}

static bool update(void *ctx, int dir, const uint8_t *in, size_t n,
		   uint8_t *out)
{
	struct obs_tlscrypto *x = ctx;
	int got;

	return n <= (1u << 20) && alive() &&
	       lib.update(x->cipher[dir], out, &got, in, (int)n) == 1 &&
	       (size_t)got == n;
}

static bool verify(void *ctx, int dir, const uint8_t tag[16])
{
	struct obs_tlscrypto *x = ctx;
	uint8_t rest[16];
	int n;

	return alive() &&
	       lib.ctx_ctrl(x->cipher[dir], CTRL_AEAD_SET_TAG, 16,
			    (void *)tag) == 1 &&
	       lib.final(x->cipher[dir], rest, &n) == 1;
}

/* Bytes [at, at + n) of a record's data: the counter mode's block that
 * holds byte `at` (AES: the GCM's counter block inc32(nonce || 1) + the
 * block's index, 16-byte blocks; ChaCha20: counter 1 + the index, the
 * nonce after it, 64-byte blocks), the bytes before `at` in that block run
 * through it and dropped. */
static bool range(void *ctx, int dir, const uint8_t nonce[12], size_t at,
		  const uint8_t *in, size_t n, uint8_t *out)
{
	struct obs_tlscrypto *x = ctx;
	bool chacha = x->suite[dir] == OBS_TLS_CHACHA20_POLY1305_SHA256;
	size_t block = chacha ? 64 : 16;
	uint32_t counter = (uint32_t)(at / block) + (chacha ? 1 : 2);
	uint8_t iv[16], skip[64] = { 0 };
	int got;

	if (at > (1u << 20) || n > (1u << 20) || !alive())
		return false;
	if (chacha) {
		for (int i = 0; i < 4; i++)
			iv[i] = (uint8_t)(counter >> (8 * i));
		memcpy(iv + 4, nonce, 12);
	} else {
		memcpy(iv, nonce, 12);
		for (int i = 0; i < 4; i++)
			iv[15 - i] = (uint8_t)(counter >> (8 * i));
	}
	return lib.init(x->ctr[dir], NULL, NULL, NULL, iv) == 1 &&
	       (at % block == 0 || lib.update(x->ctr[dir], skip, &got, skip,
					      (int)(at % block)) == 1) &&
	       lib.update(x->ctr[dir], out, &got, in, (int)n) == 1 &&
	       (size_t)got == n;
}

static const struct obs_tlsdec_ops ops = { expand, prf,	   key,	 begin,
					   update, verify, range };

const struct obs_tlsdec_ops *obs_tlscrypto_ops(void)
{
	pthread_once(&once, load);
	return loaded ? &ops : NULL;
}

bool obs_tlscrypto_init(struct obs_tlscrypto *x)
{
	if (!obs_tlscrypto_ops() || !alive())
		return false;
	for (int dir = 0; dir < 2; dir++)
		if ((x->cipher[dir] == NULL &&
		     (x->cipher[dir] = lib.ctx_new()) == NULL) ||
		    (x->ctr[dir] == NULL &&
		     (x->ctr[dir] = lib.ctx_new()) == NULL))
			return false;
	if (x->kdf == NULL)
		x->kdf = lib.kdf_ctx_new(lib.hkdf);
	if (x->prf == NULL)
		x->prf = lib.kdf_ctx_new(lib.tls1_prf);
	return x->kdf != NULL && x->prf != NULL;
}

void obs_tlscrypto_reset(struct obs_tlscrypto *x)
{
	if (!alive())
		return; /* (the process exits) */
	for (int dir = 0; dir < 2; dir++) {
		if (x->cipher[dir])
			lib.ctx_reset(x->cipher[dir]);
		if (x->ctr[dir])
			lib.ctx_reset(x->ctr[dir]);
	}
	if (x->kdf)
		lib.kdf_ctx_reset(x->kdf); /* its key (a secret) freed, wiped */
	if (x->prf)
		lib.kdf_ctx_reset(x->prf); /* (the master secret, as the key) */
}
