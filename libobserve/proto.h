/* proto.h - a bounded look at the first bytes of an exchange: HTTP/1.x
 * request and status lines, TLS record headers. Pure functions, no
 * allocation; the state machine calls them off the hot path (once per
 * exchange, or per send on a TLS connection). Nothing of the payload is
 * kept beyond the fields returned here, and never a query string.
 */
#ifndef OBSERVE_PROTO_H
#define OBSERVE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How many bytes of an exchange's first send are looked at for HTTP. */
#define OBS_HTTP_LOOK 1024

struct obs_http_req {
	char method[12]; /* NUL-padded */
	char host[40];	 /* NUL-padded; full when cut */
	char path[64];	 /* NUL-padded; full when cut; no query, no fragment */
	uint32_t flags;	 /* OBS_HF_* of spool_format.h */
};

/* An HTTP/1.x request line at the start of p[0..n)? Then fill *out and
 * return true. The Host header counts only if it lies within p[0..n). */
bool obs_http_request(const uint8_t *p, size_t n, struct obs_http_req *out);

/* The status code of an HTTP/1.x status line at the start of p[0..n), or
 * 0. */
uint16_t obs_http_status(const uint8_t *p, size_t n);

/* TLS record headers followed across the sends (or receives) of a
 * connection. */
struct obs_tls_walk {
	uint32_t left; /* body bytes of the current record still to come */
	uint8_t have;  /* bytes of the next header seen so far (< 5) */
	uint8_t hdr[5];
	bool lost;		  /* not a TLS record stream (any more): stop */
	uint16_t longest_appdata; /* the longest application-data record
				   * whose header was fed (the caller resets) */
};

#define OBS_TLS_CCS (1u << 0)	    /* 20 change_cipher_spec */
#define OBS_TLS_ALERT (1u << 1)	    /* 21 alert */
#define OBS_TLS_HANDSHAKE (1u << 2) /* 22 handshake */
#define OBS_TLS_APPDATA (1u << 3)   /* 23 application_data */

/* Feed n more bytes sent; returns the OBS_TLS_* types of the records whose
 * header was completed in them, and adds their number to *records and the
 * number of application-data records among them to *appdata. */
unsigned int obs_tls_feed(struct obs_tls_walk *w, const uint8_t *p, size_t n,
			  unsigned int *records, unsigned int *appdata);

/* Whether p[0..n) starts like a TLS handshake record (ClientHello). */
static inline bool obs_tls_hello(const uint8_t *p, size_t n)
{
	return n >= 3 && p[0] == 22 && p[1] == 3 && p[2] <= 4;
}

#endif
