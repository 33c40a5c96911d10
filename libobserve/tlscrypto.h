/* tlscrypto.h - the TLS decryption's cryptography from the system's
 * libcrypto (tlscrypto.c): core/tlsdec.h's operations, and each
 * connection's cipher contexts. */
#ifndef OBSERVE_TLSCRYPTO_H
#define OBSERVE_TLSCRYPTO_H

#include <stdbool.h>
#include <stdint.h>

#include "tlsdec.h"

/* A connection's contexts (libcrypto's EVP_CIPHER_CTX, by direction: the
 * AEAD's, and its counter mode's for ranges; its EVP_KDF_CTX for HKDF,
 * and for TLS 1.2's PRF), and each direction's suite: the ops' ctx. */
struct obs_tlscrypto {
	void *cipher[2];
	void *ctr[2];
	void *kdf;
	void *prf;
	uint16_t suite[2];
};

/* The operations, libcrypto loaded on the first call (once; thread-safe);
 * NULL when it cannot be had (obs_tlscrypto_error says why). */
const struct obs_tlsdec_ops *obs_tlscrypto_ops(void);
const char *obs_tlscrypto_error(void);

/* x's contexts, made by libcrypto the first time (they stay: x is reused);
 * false when they cannot be. */
bool obs_tlscrypto_init(struct obs_tlscrypto *x);
/* Its connection ended: the ciphers' keys wiped (EVP_CIPHER_CTX_reset),
 * the KDF's secret freed and wiped (EVP_KDF_CTX_reset). */
void obs_tlscrypto_reset(struct obs_tlscrypto *x);

#endif
