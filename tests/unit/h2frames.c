/* h2frames.c - HTTP/2 connections built frame by frame (h2frames.h). */
#include "h2frames.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- the bytes of a connection, as a script of calls ---- */

struct script *script_new(void)
{
	struct script *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(nghttp2_hd_deflate_new(&s->def[TX], 4096), 0);
	assert_int_equal(nghttp2_hd_deflate_new(&s->def[RX], 4096), 0);
	return s;
}

void script_free(struct script *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->c[i].p);
	free(s->c);
	nghttp2_hd_deflate_del(s->def[TX]);
	nghttp2_hd_deflate_del(s->def[RX]);
	free(s);
}

/* The next bytes go out in a call of their own. */
void cut(struct script *s)
{
	s->cut = true;
}

void put(struct script *s, int dir, const void *p, size_t n)
{
	struct chunk *c = s->n ? &s->c[s->n - 1] : NULL;

	if (!c || c->dir != dir || s->cut) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 64;
			s->c = realloc(s->c, (size_t)s->cap * sizeof(*s->c));
			assert_non_null(s->c);
		}
		c = &s->c[s->n++];
		memset(c, 0, sizeof(*c));
		c->dir = dir;
		s->cut = false;
	}
	if (c->n + n > c->cap) {
		c->cap = (c->n + n) * 2;
		c->p = realloc(c->p, c->cap);
		assert_non_null(c->p);
	}
	memcpy(c->p + c->n, p, n);
	c->n += n;
	s->fed[dir] += n;
}

/* The 9 bytes of a frame's header. */
static void frame_header(uint8_t h[9], size_t len, uint8_t type, uint8_t flags,
			 uint32_t sid)
{
	h[0] = (uint8_t)(len >> 16);
	h[1] = (uint8_t)(len >> 8);
	h[2] = (uint8_t)len;
	h[3] = type;
	h[4] = flags;
	h[5] = (uint8_t)(sid >> 24);
	h[6] = (uint8_t)(sid >> 16);
	h[7] = (uint8_t)(sid >> 8);
	h[8] = (uint8_t)sid;
}

/* A frame whose bytes count for stream owner (0: the connection). */
void frame_to(struct script *s, int dir, uint32_t owner, uint8_t type,
	      uint8_t flags, uint32_t sid, const void *payload, size_t len)
{
	uint8_t h[9];

	frame_header(h, len, type, flags, sid);
	put(s, dir, h, 9);
	if (len)
		put(s, dir, payload, len);
	assert_true(owner < MAX_SID);
	s->want[dir][owner] += 9 + len;
}

/* A frame counted as h2.h says: on a client stream, the stream's. */
void frame(struct script *s, int dir, uint8_t type, uint8_t flags, uint32_t sid,
	   const void *payload, size_t len)
{
	bool streams = type == NGHTTP2_DATA || type == NGHTTP2_HEADERS ||
		       type == NGHTTP2_CONTINUATION ||
		       type == NGHTTP2_RST_STREAM ||
		       type == NGHTTP2_WINDOW_UPDATE;

	frame_to(s, dir, streams && (sid & 1) ? sid : 0, type, flags, sid,
		 payload, len);
}

void preface(struct script *s)
{
	put(s, TX, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	s->want[TX][0] += 24;
}

/* SETTINGS with n (id, value) pairs. */
void settings(struct script *s, int dir, int n, ...)
{
	uint8_t p[60];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		unsigned int id = va_arg(ap, unsigned int);
		uint32_t v = va_arg(ap, uint32_t);
		uint8_t *e = p + 6 * i;

		e[0] = (uint8_t)(id >> 8), e[1] = (uint8_t)id;
		e[2] = (uint8_t)(v >> 24), e[3] = (uint8_t)(v >> 16);
		e[4] = (uint8_t)(v >> 8), e[5] = (uint8_t)v;
	}
	va_end(ap);
	frame(s, dir, NGHTTP2_SETTINGS, 0, 0, p, (size_t)(6 * n));
}

void settings_ack(struct script *s, int dir)
{
	frame(s, dir, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
}

/* Both prefaces: the client's magic and SETTINGS, the server's SETTINGS,
 * the acknowledgements, a connection WINDOW_UPDATE. */
void handshake(struct script *s)
{
	static const uint8_t window[4] = { 0, 0x0f, 0, 1 };

	preface(s);
	settings(s, TX, 2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100u,
		 NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1u << 20);
	frame(s, TX, NGHTTP2_WINDOW_UPDATE, 0, 0, window, 4);
	settings(s, RX, 1, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 128u);
	settings_ack(s, RX);
	settings_ack(s, TX);
}

/* A header block (HEADERS, or PUSH_PROMISE of stream promised) of the
 * NULL-terminated name, value pairs nv, its fragments at most frag bytes:
 * the rest in CONTINUATION frames. */
void block(struct script *s, int dir, uint8_t type, uint32_t sid,
	   unsigned int opts, size_t frag, uint32_t promised,
	   const char *const *nv)
{
	nghttp2_nv nva[128];
	size_t n = 0, len, first, off;
	uint8_t *buf, *p;
	ssize_t got;
	uint32_t owner = type == NGHTTP2_PUSH_PROMISE ? 0 : (sid & 1 ? sid : 0);
	uint8_t flags = 0;

	for (; nv[2 * n]; n++) {
		assert_true(n < sizeof(nva) / sizeof(*nva));
		nva[n].name = (uint8_t *)(uintptr_t)nv[2 * n];
		nva[n].namelen = strlen(nv[2 * n]);
		nva[n].value = (uint8_t *)(uintptr_t)nv[2 * n + 1];
		nva[n].valuelen = strlen(nv[2 * n + 1]);
		nva[n].flags = NGHTTP2_NV_FLAG_NONE;
	}
	len = nghttp2_hd_deflate_bound(s->def[dir], nva, n);
	buf = malloc(len + 16);
	assert_non_null(buf);
	got = nghttp2_hd_deflate_hd(s->def[dir], buf + 16, len, nva, n);
	assert_true(got >= 0);
	len = (size_t)got;
	first = len < frag ? len : frag;
	/* room before the fragment: pad length, promised stream, priority */
	p = buf + 16;
	if (type == NGHTTP2_PUSH_PROMISE) {
		p -= 4;
		p[0] = (uint8_t)(promised >> 24),
		p[1] = (uint8_t)(promised >> 16);
		p[2] = (uint8_t)(promised >> 8), p[3] = (uint8_t)promised;
	}
	if (opts & B_PRIORITY) {
		p -= 5;
		memcpy(p, "\x80\0\0\0\x10", 5); /* exclusive on 0, weight 17 */
		flags |= NGHTTP2_FLAG_PRIORITY;
	}
	if (opts & B_PADDED) {
		*--p = 7;
		flags |= NGHTTP2_FLAG_PADDED;
	}
	if (opts & B_END_STREAM)
		flags |= NGHTTP2_FLAG_END_STREAM;
	if (first == len)
		flags |= NGHTTP2_FLAG_END_HEADERS;
	{
		size_t head = (size_t)(buf + 16 - p), total = head + first;
		uint8_t *f = malloc(total + 7);

		assert_non_null(f);
		memcpy(f, p, total);
		if (opts & B_PADDED) {
			memset(f + total, 0, 7);
			total += 7;
		}
		frame_to(s, dir, owner, type, flags, sid, f, total);
		free(f);
	}
	for (off = first; off < len; off += frag) {
		size_t k = len - off < frag ? len - off : frag;

		frame_to(s, dir, owner, NGHTTP2_CONTINUATION,
			 off + k == len ? NGHTTP2_FLAG_END_HEADERS : 0, sid,
			 buf + 16 + off, k);
	}
	free(buf);
}

/* A request with the usual fields, a cookie and a token among them. */
void request(struct script *s, uint32_t sid, unsigned int opts,
	     const char *method, const char *path, const char *auth)
{
	const char *nv[] = { ":method",
			     method,
			     ":scheme",
			     "http",
			     ":path",
			     path,
			     ":authority",
			     auth,
			     "user-agent",
			     "test_h2/1",
			     "cookie",
			     "session=TOPSECRET-COOKIE",
			     "authorization",
			     "Bearer TOPSECRET-TOKEN",
			     NULL };

	block(s, TX, NGHTTP2_HEADERS, sid, opts, 16384, 0, nv);
}

void response(struct script *s, uint32_t sid, unsigned int opts,
	      const char *status)
{
	const char *nv[] = { ":status",	   status,	 "content-type",
			     "text/plain", "set-cookie", "id=TOPSECRET-SET",
			     NULL };

	block(s, RX, NGHTTP2_HEADERS, sid, opts, 16384, 0, nv);
}

/* n bytes of DATA ('d'), padded with pad bytes when pad > 0. */
void data(struct script *s, int dir, uint32_t sid, size_t n, bool end,
	  uint8_t pad)
{
	uint8_t *p = malloc(n + pad + 1);
	size_t len = n;

	assert_non_null(p);
	if (pad) {
		p[0] = pad;
		memset(p + 1, 'd', n);
		memset(p + 1 + n, 0, pad);
		len = n + pad + 1;
	} else {
		memset(p, 'd', n);
	}
	frame(s, dir, NGHTTP2_DATA,
	      (end ? NGHTTP2_FLAG_END_STREAM : 0) |
		      (pad ? NGHTTP2_FLAG_PADDED : 0),
	      sid, p, len);
	free(p);
}

void rst(struct script *s, int dir, uint32_t sid, uint32_t code)
{
	uint8_t p[4] = { (uint8_t)(code >> 24), (uint8_t)(code >> 16),
			 (uint8_t)(code >> 8), (uint8_t)code };

	frame(s, dir, NGHTTP2_RST_STREAM, 0, sid, p, 4);
}

void goaway(struct script *s, int dir, uint32_t last, uint32_t code)
{
	uint8_t p[12] = { (uint8_t)(last >> 24),
			  (uint8_t)(last >> 16),
			  (uint8_t)(last >> 8),
			  (uint8_t)last,
			  (uint8_t)(code >> 24),
			  (uint8_t)(code >> 16),
			  (uint8_t)(code >> 8),
			  (uint8_t)code,
			  'b',
			  'y',
			  'e',
			  '!' };

	frame(s, dir, NGHTTP2_GOAWAY, 0, 0, p, sizeof(p));
}

void ping(struct script *s, int dir, bool ack)
{
	frame(s, dir, NGHTTP2_PING, ack ? NGHTTP2_FLAG_ACK : 0, 0, "12345678",
	      8);
}
