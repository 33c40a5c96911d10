/* tlsdec.h - a TLS 1.3 or 1.2 connection's records decrypted with the
 * secrets of its key log (RFC 8446, RFC 5246 with its AEAD suites: RFC 5288,
 * RFC 7905): records in, the application data's plaintext out, record by
 * record.
 *
 * Both directions' socket bytes are fed in the order of their calls. The
 * follower reads each direction's record headers, the client_random of
 * the ClientHello, the version and cipher suite of the ServerHello (both
 * in plaintext); then it counts records:
 *
 *   direction  encrypted record                    is
 *   client     the first                           its Finished (skipped)
 *              the next ones                       application traffic,
 *                                                  sequence 0, 1, ...
 *   server     those received before the client's  its handshake flight
 *              Finished went                       (skipped)
 *              those after it                      application traffic,
 *                                                  sequence 0, 1, ...
 *
 * A record of application traffic is kept as its bytes come and opened
 * when it is whole, with the key and IV of HKDF-Expand-Label (RFC 8446 7.1,
 * 7.3) over the traffic secret, its nonce the IV xor its sequence number:
 *   - the first record under each key is opened whole and its tag checked
 *     (the secrets are the connection's: otherwise it is given up);
 *   - a later one is decrypted only where it is read: AES-GCM and
 *     ChaCha20-Poly1305 are counter modes, so a byte range decrypts
 *     alone. Its last bytes first (the inner content type, after any
 *     padding), then what its application data's reader reads (below).
 *     Its tag is not checked: the program's TLS library checks it, and
 *     ends the connection if it fails.
 * Of every record's application data the reader (struct obs_tlsdec_sink)
 * is asked before each piece how many of the next bytes it does not read
 * (a body of known length, an HTTP/2 DATA frame's payload): those are said
 * without their bytes (p NULL; not decrypted, in a later record), the
 * others said OBS_TLSDEC_PIECE bytes at a time.
 * Application data is said with the entry of the call that brought its
 * record's first byte and the return of the call that brought its last; a
 * KeyUpdate moves the direction to the next secret. The cryptography is
 * the caller's (struct obs_tlsdec_ops: the layer's is libcrypto's), none
 * is here.
 *
 * TLS 1.2 (a ServerHello of 1.2 with an AEAD suite: AES-GCM, ChaCha20-
 * Poly1305): each direction's records are encrypted from its
 * ChangeCipherSpec on, numbered from 0 (its Finished, counted and not
 * decrypted, then application data and alerts); the keys and IVs are the key block of the TLS PRF over
 * the master secret (the key log's CLIENT_RANDOM line; RFC 5246 6.3), the
 * nonce of AES-GCM its salt and the record's explicit 8 bytes (RFC 5288
 * 3), ChaCha20's the IV xor the number (RFC 7905 2), the additional data
 * the number, type, version and plaintext length. The content type is the
 * record's own. A handshake record after the Finished (renegotiation) is
 * given up.
 *
 * Keys late: when a record of application traffic comes before the secrets
 * (obs_tlsdec_keys), the calls from there on are held (their bytes and
 * times, in the offered memory) and read when the secrets come. Giving up
 * (obs_tlsdec_on turns false, for good): not TLS 1.3 or 1.2, a cipher suite not
 * known, early data, a record that cannot be TLS or whose tag fails, no
 * memory, the hold full. Nothing of a record is said before it is whole.
 *
 * Pure: no allocation (the buffers are offered, struct obs_tlsdec_mem), no
 * system call; never reads beyond the bytes given.
 */
#ifndef OBSERVE_TLSDEC_H
#define OBSERVE_TLSDEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "tlsrec.h"

/* The longest record payload RFC 8446 allows. */
#define OBS_TLSDEC_RECORD_MAX OBS_TLS_RECORD_MAX
/* The longest traffic secret (SHA-384's). */
#define OBS_TLSDEC_SECRET_MAX 48u
/* Bytes of calls held while the secrets are awaited (a program writes
 * its key log's lines a while after the handshake: node under load, after
 * 64 KiB to 256 KiB had come). */
#define OBS_TLSDEC_HOLD (1u << 20)

/* The cipher suites decrypted (RFC 8446 B.4); TLS 1.2's AEAD suites are
 * decrypted as the one of these with their AEAD and hash. */
enum {
	OBS_TLS_AES_128_GCM_SHA256 = 0x1301,
	OBS_TLS_AES_256_GCM_SHA384 = 0x1302,
	OBS_TLS_CHACHA20_POLY1305_SHA256 = 0x1303,
};

/* Directions, as the capture's (enum obs_dir): what the client sends, and
 * what it receives. */
enum { OBS_TLSDEC_TX = 0, OBS_TLSDEC_RX = 1 };

/* The cryptography, the caller's. ctx: the one given with the ops. Each
 * returns false when it failed (the connection is given up).
 *   expand  HKDF-Expand (RFC 5869) with the suite's hash: out_len bytes
 *           from secret and info
 *   key     direction dir's records are opened with the suite's AEAD under
 *           key (16 or 32 bytes) from here on
 *   prf     TLS 1.2's PRF (RFC 5246 5) with the suite's hash: out_len
 *           bytes from secret and seed (the label and the seeds, one after
 *           the other)
 *   begin   a record of direction dir opened whole: its nonce and
 *           additional data (1.3: its header; 1.2: 13 bytes)
 *   update  n bytes of its ciphertext into out (as they come, any number
 *           at a time)
 *   verify  its 16-byte tag: whether the record is authentic
 *   range   bytes [at, at + n) of the data of a record of direction dir
 *           (nonce), from their ciphertext in into out, with the AEAD's
 *           own counter mode (the keystream from byte `at` on; no tag) */
struct obs_tlsdec_ops {
	bool (*expand)(void *ctx, uint16_t suite, const uint8_t *secret,
		       size_t secret_len, const uint8_t *info, size_t info_len,
		       uint8_t *out, size_t out_len);
	bool (*prf)(void *ctx, uint16_t suite, const uint8_t *secret,
		    size_t secret_len, const uint8_t *seed, size_t seed_len,
		    uint8_t *out, size_t out_len);
	bool (*key)(void *ctx, int dir, uint16_t suite, const uint8_t *key,
		    size_t key_len);
	bool (*begin)(void *ctx, int dir, const uint8_t nonce[12],
		      const uint8_t *aad, size_t aad_len);
	bool (*update)(void *ctx, int dir, const uint8_t *in, size_t n,
		       uint8_t *out);
	bool (*verify)(void *ctx, int dir, const uint8_t tag[16]);
	bool (*range)(void *ctx, int dir, const uint8_t nonce[12], size_t at,
		      const uint8_t *in, size_t n, uint8_t *out);
};

/* The bytes of application data said at a time where the reader reads
 * them (and decrypted then, in a record not opened whole). */
#define OBS_TLSDEC_PIECE 64u

/* The memory a decrypting connection needs beyond struct obs_tlsdec: each
 * direction's record, as it came and as much of it as was decrypted, and
 * the calls held. Offered by the caller (obs_tlsdec_offer); wiped by
 * obs_tlsdec_wipe. */
struct obs_tlsdec_mem {
	uint8_t record[2][OBS_TLSDEC_RECORD_MAX];
	uint8_t plain[2][OBS_TLSDEC_RECORD_MAX];
	uint32_t hold_len;
	uint8_t hold[OBS_TLSDEC_HOLD];
};

/* One direction's records. Private to tlsdec.c; here for its size. */
struct obs_tlsdec_dir {
	uint8_t hdr[5];
	uint8_t have;  /* bytes of the record header so far */
	uint8_t kind;  /* what the record being read is (tlsdec.c) */
	uint8_t hello; /* the hello parser's step (tlsdec.c) */
	uint16_t len;  /* the record's payload length */
	uint16_t got;  /* payload bytes of it read */
	uint32_t val;  /* the hello parser's field being read */
	uint16_t need; /* ... its bytes still to come */
	uint16_t at;   /* bytes of the hello read */
	uint32_t left; /* bytes of the hello's extensions or field left */
	uint16_t ext;  /* the extension being read */
	uint64_t seq;  /* the next record's sequence number */
	bool ccs;    /* 1.2: its ChangeCipherSpec went (encrypted from here) */
	bool keyed;  /* the key is set (ops->key) */
	bool proven; /* a record opened whole under it: its tag checked */
	uint8_t secret[OBS_TLSDEC_SECRET_MAX];
	uint8_t iv[12]; /* (1.2's AES-GCM: its salt, 4 bytes) */
	int64_t t_in;	/* the entry of the call with the record's first byte */
};

/* Why a connection was given up (obs_tlsdec_why). */
enum obs_tlsdec_why {
	OBS_TLSDEC_ENDED = 1,
	OBS_TLSDEC_VERSION,
	OBS_TLSDEC_SUITE,
	OBS_TLSDEC_EARLY,
	OBS_TLSDEC_NOT_TLS,
	OBS_TLSDEC_TAG,
	OBS_TLSDEC_NO_MEMORY,
	OBS_TLSDEC_HOLD_FULL,
	OBS_TLSDEC_CRYPTO,
};

struct obs_tlsdec {
	uint8_t state;	/* enum in tlsdec.c */
	uint8_t why;	/* enum obs_tlsdec_why, once off */
	bool finished;	/* the client's Finished went */
	bool hrr;	/* the ServerHello being read is a HelloRetryRequest */
	bool v12;	/* TLS 1.2 */
	uint16_t suite; /* (1.2: the 1.3 suite of its AEAD and hash) */
	uint16_t version;	   /* the ServerHello's supported_versions */
	uint16_t legacy;	   /* ... and its legacy_version */
	uint8_t random[32];	   /* the ClientHello's client_random */
	uint8_t server_random[32]; /* the ServerHello's random */
	struct obs_tlsdec_mem *mem;
	const struct obs_tlsdec_ops *ops;
	void *ops_ctx;
	uint64_t decrypted[2]; /* bytes run through the cipher, by direction */
	struct obs_tlsdec_dir d[2];
};

/* Where the plaintext goes (ctx: the caller's):
 *   out     n bytes of application data of direction dir, p[0..n), or
 *           (p NULL) n bytes not decrypted because unread said they are not
 *           read; available from t_in (the entry of the call with its
 *           record's first byte) to t_out (the return of the call with its
 *           last)
 *   unread  how many of direction dir's next bytes of application data
 *           its reader does not read: 0 when it reads the next one, SIZE_MAX
 *           when it reads nothing more */
struct obs_tlsdec_sink {
	void (*out)(void *ctx, int dir, const uint8_t *p, size_t n,
		    int64_t t_in, int64_t t_out);
	size_t (*unread)(void *ctx, int dir);
	void *ctx;
};

/* A connection whose first bytes sent are a TLS record (the ClientHello
 * begins). */
void obs_tlsdec_init(struct obs_tlsdec *t);

/* The bytes of one call of direction dir, the first n of iov, moved
 * between t_in and t_out. */
void obs_tlsdec_feed(struct obs_tlsdec *t, int dir, const struct iovec *iov,
		     int iovcnt, size_t n, int64_t t_in, int64_t t_out,
		     const struct obs_tlsdec_sink *sink);

/* Whether the connection may still be decrypted (not given up). */
bool obs_tlsdec_on(const struct obs_tlsdec *t);
/* Why not ("on" while it is): for the layer's diagnostics. */
const char *obs_tlsdec_why(const struct obs_tlsdec *t);
/* Whether it is TLS 1.3 or 1.2 with a suite known, whose records will need
 * the memory (given none yet). */
bool obs_tlsdec_wants_mem(const struct obs_tlsdec *t);
/* Whether it awaits its traffic secrets; then *random is the client_random
 * to look them up by, *secret_len their length (1.2: the master secret's,
 * 48). */
bool obs_tlsdec_wants_keys(const struct obs_tlsdec *t, uint8_t random[32],
			   size_t *secret_len);

/* The memory (not moved while t has it) and the cryptography. False when t
 * has some already. */
bool obs_tlsdec_offer(struct obs_tlsdec *t, struct obs_tlsdec_mem *mem,
		      const struct obs_tlsdec_ops *ops, void *ops_ctx);
/* No memory could be had: given up. */
void obs_tlsdec_refuse(struct obs_tlsdec *t);

/* The traffic secrets (CLIENT_TRAFFIC_SECRET_0, SERVER_TRAFFIC_SECRET_0),
 * each len bytes (1.2: the master secret, CLIENT_RANDOM, as client; server
 * is not read): the keys are derived, and the calls held are read
 * (their plaintext said to sink). False when they do not fit (given
 * up). */
bool obs_tlsdec_keys(struct obs_tlsdec *t, const uint8_t *client,
		     const uint8_t *server, size_t len,
		     const struct obs_tlsdec_sink *sink);

/* The connection ends: what is held is dropped, its secrets, keys, IVs,
 * plaintext and held bytes wiped (in t and its memory); the memory, if
 * any, is returned for the caller to reuse. */
struct obs_tlsdec_mem *obs_tlsdec_wipe(struct obs_tlsdec *t);

/* HKDF-Expand-Label (RFC 8446 7.1) with an empty context, through ops:
 * out_len bytes of secret under label ("key", "iv", "traffic upd"). */
bool obs_tlsdec_expand_label(const struct obs_tlsdec_ops *ops, void *ctx,
			     uint16_t suite, const uint8_t *secret,
			     size_t secret_len, const char *label, uint8_t *out,
			     size_t out_len);

/* The suite's key length (0: not a suite decrypted) and hash length. */
size_t obs_tlsdec_key_len(uint16_t suite);
size_t obs_tlsdec_hash_len(uint16_t suite);

#endif
