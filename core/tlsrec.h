/* tlsrec.h - the TLS records a client sends, followed over the bytes of
 * its sending direction until its handshake is over: the 5-byte record
 * headers across calls of any size, each record's payload skipped by its
 * length. Nothing of a payload is read.
 *
 * What the client's records say after its ClientHello (RFC 8446, 5246):
 *
 *   record type                  TLS 1.2                 TLS 1.3
 *   handshake (22)               its key exchange,       (a second hello:
 *                                its Finished            not told apart)
 *   change cipher spec (20)      before its Finished     for middleboxes
 *   application data (23), 1st   its first data          its Finished
 *   application data (23), 2nd   -                       its first data
 *
 * So a client that sends a handshake record after its hello speaks 1.2,
 * one that does not speaks 1.3, and its first data is the first
 * application-data record that is not the 1.3 Finished. The follower says
 * where the client's Finished begins (1.2: its first handshake record
 * after its change cipher spec; 1.3: its first application-data record)
 * and where its first data begins, each with the version, and stops
 * there. A record that cannot be TLS (an unknown type, a length beyond
 * what RFC 8446 allows) stops it too, saying nothing more.
 *
 * Pure: no allocation, no system call, fixed state.
 */
#ifndef OBSERVE_TLSREC_H
#define OBSERVE_TLSREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TLS record types (RFC 8446 5.1) and the longest payload (5.2: 2^14 +
 * 256), shared with the decryptor (tlsdec.c). */
enum obs_tls_type {
	OBS_TLS_CHANGE_CIPHER_SPEC = 20,
	OBS_TLS_ALERT = 21,
	OBS_TLS_HANDSHAKE = 22,
	OBS_TLS_APPLICATION_DATA = 23,
};
#define OBS_TLS_RECORD_MAX ((1u << 14) + 256u)

/* TLS versions as on the wire. */
#define OBS_TLS_1_2 0x0303u
#define OBS_TLS_1_3 0x0304u

/* A client's records. Private to tlsrec.c; here for its size. */
struct obs_tlsrec {
	uint8_t state;	/* tlsrec.c's enum tlsrec_state */
	uint8_t have;	/* bytes of the record header so far */
	uint8_t hdr[5]; /* the record header being read */
	bool handshake; /* a handshake record after the hello */
	bool ccs;	/* ... a change cipher spec */
	bool finished;	/* the client's Finished went */
	uint64_t left;	/* payload bytes of the record still to come */
	uint64_t pos;	/* offset of the next byte */
	uint64_t begin; /* where the record being read begins */
};

/* What the follower says (obs_tlsrec_data's what). */
enum obs_tlsrec_what {
	OBS_TLSREC_FINISHED = 1, /* the client's Finished begins at `at` */
	OBS_TLSREC_DATA = 2,	 /* its first data begins at `at` */
};

/* The client's Finished or first data (what) begins at offset `at` of the
 * bytes fed, under version (OBS_TLS_1_2, OBS_TLS_1_3). */
typedef void obs_tlsrec_data(void *ctx, uint8_t what, uint64_t at,
			     uint16_t version);

void obs_tlsrec_init(struct obs_tlsrec *t);

/* The next n bytes the client sent; data is called at most once for each
 * of its whats, FINISHED first. */
void obs_tlsrec_feed(struct obs_tlsrec *t, const uint8_t *p, size_t n,
		     obs_tlsrec_data *data, void *ctx);

/* Whether the follower still reads (the handshake is not over, nothing
 * was found that is not TLS). */
bool obs_tlsrec_following(const struct obs_tlsrec *t);

#endif
