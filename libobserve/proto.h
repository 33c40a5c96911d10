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
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* How many bytes of an exchange's first send are looked at for HTTP. */
#define OBS_HTTP_LOOK 1024

#define OBS_HTTP_METHOD_MAX 12
#define OBS_HTTP_HOST_MAX 40
#define OBS_HTTP_PATH_MAX 64

struct obs_http_req {
	char method[OBS_HTTP_METHOD_MAX]; /* NUL-padded */
	char host[OBS_HTTP_HOST_MAX];	  /* NUL-padded; full when cut */
	char path[OBS_HTTP_PATH_MAX];	  /* NUL-padded; full when cut; no
					   * query, no fragment */
	uint32_t flags;			  /* OBS_HF_* of spool_format.h */
};

/* An HTTP/1.x request line at the start of p[0..n)? Then fill *out and
 * return true. The Host header counts only if it lies within p[0..n). */
bool obs_http_request(const uint8_t *p, size_t n, struct obs_http_req *out);

/* The same in two steps, for fields that are zero already (a fresh spool
 * record): obs_http_line checks the request line and says where its parts
 * are (nothing written anywhere); obs_http_fill then copies the method
 * (method_len bytes), the path and the Host header's value into method,
 * path and host (OBS_HTTP_*_MAX bytes each, zero on entry) and returns the
 * OBS_HF_* flags. */
struct obs_http_line {
	uint32_t method_len; /* p[0..method_len) */
	uint32_t path;	     /* the target from p[path] */
	uint32_t path_end;   /* its first '?', '#', or target_end */
	uint32_t target_end; /* the space before "HTTP/1." */
};
bool obs_http_line(const uint8_t *p, size_t n, struct obs_http_line *out);

/* Whether a[0..n) and b[0..n) hold the same bytes, n >= 16: sixteen a
 * step, the last step overlapping the one before (SSE2 on x86-64). The
 * differences are gathered and tested once at the end: no branch but the
 * loop's (the bytes are nearly always the same). */
static inline bool obs_same16(const uint8_t *a, const uint8_t *b, size_t n)
{
#if defined(__SSE2__)
#define OBS_LOAD16(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
	__m128i diff =
		_mm_xor_si128(OBS_LOAD16(a + n - 16), OBS_LOAD16(b + n - 16));

	for (size_t i = 0; i + 16 < n; i += 16)
		diff = _mm_or_si128(diff, _mm_xor_si128(OBS_LOAD16(a + i),
							OBS_LOAD16(b + i)));
#undef OBS_LOAD16
	return _mm_movemask_epi8(_mm_cmpeq_epi8(diff, _mm_setzero_si128())) ==
	       0xffff;
#else
	return memcmp(a, b, n) == 0;
#endif
}

/* What a connection's last request said: its bytes from the first to the
 * end of its (first) Host line, and what was taken from them. Clients send
 * the same request line and headers in the same order again and again on a
 * connection (a load generator, a poller: every request the same): a
 * request whose bytes there are the same says the same, compared sixteen
 * bytes a step, not parsed (obs_http_recall). One with another request line
 * but the same bytes from its end to the end of the Host line (a browser,
 * another path each time) takes its host from here, not from a scan.
 * Kept in the process's memory only, for the connection's life. */
#define OBS_HTTP_SEEN_MAX 192
struct obs_http_seen {
	uint8_t len;	    /* of bytes; 0: nothing remembered */
	uint8_t te;	    /* where its request line's target ends (the space
			     * before "HTTP/1.") */
	uint8_t host_flags; /* OBS_HF_HOST_CUT or 0 */
	bool fresh;	    /* obs_http_fill wrote it for the request it
			     * labels now: ref_* are not known yet */
	uint32_t flags;	    /* OBS_HF_* of the whole request */
	/* The HTTP record that holds what this says (written by the user of
	 * this module, exchange.c): exchange ref_seq of connection ref_conn,
	 * in the spool segment ref_epoch; 0: none yet. obs_http_fill sets
	 * ref_seq 0 whenever it writes. */
	uint32_t ref_seq;
	uint32_t ref_epoch;
	uint64_t ref_conn;
	char method[OBS_HTTP_METHOD_MAX];
	char host[OBS_HTTP_HOST_MAX];
	char path[OBS_HTTP_PATH_MAX];
	uint8_t bytes[OBS_HTTP_SEEN_MAX];
};

/* seen: the connection's memory of its last request (NULL: none kept),
 * consulted and brought up to date. bare (NULL: none): a thread's memory
 * of the last request it labelled, given this one only when its first bytes
 * are its request line with no query string and no fragment, then a Host
 * line: what the records hold of it anyway, never a header or a query. A
 * program that opens a connection per request (ab without keep-alive, a
 * script run in a loop) sends that same request on each, and a new
 * connection has no memory of its own yet. */
uint32_t obs_http_fill(const uint8_t *p, size_t n,
		       const struct obs_http_line *line, char *method,
		       char *host, char *path, struct obs_http_seen *seen,
		       struct obs_http_seen *bare);
/* Whether p[0..n) begins with the bytes seen remembers (the last request,
 * to the end of its Host line): then it is the same request line with the
 * same Host, and seen's fields are its own (copied by the caller). Inline:
 * it runs at the beginning of every exchange. */
static inline bool obs_http_recall(const struct obs_http_seen *seen,
				   const uint8_t *p, size_t n)
{
	return seen->len && n >= seen->len &&
	       obs_same16(p, seen->bytes, seen->len);
}

/* The status code of an HTTP/1.x status line at the start of p[0..n), or
 * 0. (Inline: it runs on the first receive of every answer.) */
static inline uint16_t obs_http_status(const uint8_t *p, size_t n)
{
	uint64_t a;
	uint32_t b;
	unsigned int d0, d1, d2;

	if (n < 12)
		return 0;
	memcpy(&a, p, 8);     /* "HTTP/1.x" */
	memcpy(&b, p + 8, 4); /* " 200" */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if ((a & 0x00ffffffffffffffull) != 0x002e312f50545448ull ||
	    (b & 0xff) != ' ')
		return 0;
	d0 = (b >> 8 & 0xff) - '0';
	d1 = (b >> 16 & 0xff) - '0';
	d2 = (b >> 24) - '0';
#else
	if (memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
		return 0;
	d0 = (unsigned int)p[9] - '0';
	d1 = (unsigned int)p[10] - '0';
	d2 = (unsigned int)p[11] - '0';
#endif
	if (d0 - 1 > 8 || d1 > 9 || d2 > 9)
		return 0;
	return (uint16_t)(d0 * 100 + d1 * 10 + d2);
}

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
