/* keylog.h - a line of the TLS key log (the NSS key log format that
 * SSLKEYLOGFILE and node's --tls-keylog write): "LABEL <client_random>
 * <secret>", both in hex. The layer reads such lines (libobserve/keylog.c)
 * to decrypt TLS 1.3 and 1.2 connections (tlsdec.h); this is its parser.
 *
 * Pure: no allocation, no system call; reads only the n bytes given.
 */
#ifndef OBSERVE_KEYLOG_H
#define OBSERVE_KEYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The labels the decryption needs; any other is OBS_KL_OTHER. */
enum obs_keylog_label {
	OBS_KL_OTHER = 0,
	OBS_KL_CLIENT_TRAFFIC = 1, /* CLIENT_TRAFFIC_SECRET_0 */
	OBS_KL_SERVER_TRAFFIC = 2, /* SERVER_TRAFFIC_SECRET_0 */
	OBS_KL_MASTER = 3,	   /* CLIENT_RANDOM: TLS 1.2's master secret */
};

/* The longest secret a line may carry. */
#define OBS_KEYLOG_SECRET_MAX 48u

struct obs_keylog_line {
	uint8_t label; /* enum obs_keylog_label */
	uint8_t secret_len;
	uint8_t random[32];
	uint8_t secret[OBS_KEYLOG_SECRET_MAX];
};

/* Line p[0..n) (without its newline; a trailing CR is allowed) into *out.
 * False for a comment, an empty line, or one not of the format (a label of
 * capitals, digits and underscores; 64 hex digits; 2 to 96 hex digits,
 * even): then *out is left zeroed. */
bool obs_keylog_parse(const char *p, size_t n, struct obs_keylog_line *out);

/* The longest line the reader takes (longer ones are skipped whole). */
#define OBS_KEYLOG_LINE_MAX 512u

/* A key log read in pieces of any size (what a file gained since the last
 * look): its lines, each parsed, said with the offset of its first byte.
 * A line begun in one piece and ended in a later one is kept here (the
 * buffer is wiped once it is said). */
struct obs_keylog_reader {
	uint64_t off;	   /* the offset of the next piece's first byte */
	size_t carry_len;  /* bytes of a line begun */
	uint64_t carry_at; /* where it begins */
	int skipping;	   /* a line too long: skipped to its end */
	char carry[OBS_KEYLOG_LINE_MAX];
};

/* A line of the format, its offset and length (its newline included). */
typedef void obs_keylog_found(void *ctx, const struct obs_keylog_line *l,
			      uint64_t at, size_t len);

/* The reader starts at offset off of its file. */
void obs_keylog_reader_init(struct obs_keylog_reader *r, uint64_t off);
/* The next n bytes of the file: each line they end is parsed, and said
 * when it is of the format (the line given to found is wiped after). */
void obs_keylog_feed(struct obs_keylog_reader *r, const char *p, size_t n,
		     obs_keylog_found *found, void *ctx);

#endif
