/* proto.c - see proto.h. */
#include "proto.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "spool_format.h"

static bool is_upper(uint8_t c)
{
	return c >= 'A' && c <= 'Z';
}

/* Copy src[0..n) into a NUL-padded field that is zero already; true when
 * it had to be cut. */
static bool copy_field(char *dst, size_t size, const uint8_t *src, size_t n)
{
	bool cut = n > size;

	memcpy(dst, src, cut ? size : n);
	return cut;
}

/* The first i in [from, n) where p[i] is one of a, b, c, d; n when none.
 * Sixteen bytes a step where they all lie below n (SSE2 on x86-64; the
 * caller's buffer is never read past n), then byte by byte. */
static size_t find_any(const uint8_t *p, size_t from, size_t n, uint8_t a,
		       uint8_t b, uint8_t c, uint8_t d)
{
	size_t i = from;

#if defined(__SSE2__)
	const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
	const __m128i vc = _mm_set1_epi8((char)c), vd = _mm_set1_epi8((char)d);

	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p +
									    i));
		__m128i hit = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(x, va),
				     _mm_cmpeq_epi8(x, vb)),
			_mm_or_si128(_mm_cmpeq_epi8(x, vc),
				     _mm_cmpeq_epi8(x, vd)));
		unsigned int m = (unsigned int)_mm_movemask_epi8(hit);

		if (m)
			return i + (size_t)__builtin_ctz(m);
	}
#endif
	for (; i < n; i++)
		if (p[i] == a || p[i] == b || p[i] == c || p[i] == d)
			return i;
	return n;
}

/* The Host header's value in p[from..n), or NULL: line by line (memchr
 * finds the ends), the name compared without regard to case; the first
 * Host line ends the look. */
static const uint8_t *find_host(const uint8_t *p, size_t n, size_t from,
				size_t *len)
{
	const uint8_t *nl;

	while (from < n && (nl = memchr(p + from, '\n', n - from))) {
		size_t i = (size_t)(nl - p) + 1, v, e;

		from = i;
		if (i + 5 > n || (p[i] | 0x20) != 'h' ||
		    (p[i + 1] | 0x20) != 'o' || (p[i + 2] | 0x20) != 's' ||
		    (p[i + 3] | 0x20) != 't' || p[i + 4] != ':')
			continue;
		v = i + 5;
		while (v < n && (p[v] == ' ' || p[v] == '\t'))
			v++;
		nl = memchr(p + v, '\n', n - v);
		if (!nl)
			return NULL; /* the value goes on beyond what we see */
		e = (size_t)(nl - p);
		if (e > v && p[e - 1] == '\r')
			e--;
		while (e > v && (p[e - 1] == ' ' || p[e - 1] == '\t'))
			e--;
		*len = e - v;
		return p + v;
	}
	return NULL;
}

/* Absolute form (to a proxy), scheme://authority/path: where the path
 * begins in p[t..te) (t itself when there is no "://"). */
static size_t absolute_path(const uint8_t *p, size_t t, size_t te)
{
	for (size_t i = t; i + 3 <= te; i++) {
		if (p[i] == ':' && p[i + 1] == '/' && p[i + 2] == '/') {
			size_t a = i + 3;
			while (a < te && p[a] != '/' && p[a] != '?')
				a++;
			return a;
		}
	}
	return t;
}

/* One pass over the request line: the target is scanned once up to the
 * first of ' ', '?', '#' or a line end; the rest of a query string (never
 * kept) only for the space that ends it. */
bool obs_http_request(const uint8_t *p, size_t n, struct obs_http_req *out)
{
	size_t m = 0, t, te, pe;
	const uint8_t *host;
	size_t host_len = 0;

	while (m < n && m < sizeof(out->method) && is_upper(p[m]))
		m++;
	if (m < 3 || m >= sizeof(out->method) || m >= n || p[m] != ' ')
		return false;
	t = m + 1;
	pe = find_any(p, t, n, ' ', '?', '#', '\n');
	te = pe;
	if (pe < n && p[pe] != ' ') {
		if (p[pe] == '\n')
			return false;
		te = find_any(p, pe, n, ' ', '\n', ' ', '\n');
		if (te < n && p[te] == '\n')
			return false;
	}
	if (te == t || te + 8 > n || memcmp(p + te, " HTTP/1.", 8) != 0)
		return false;
	memset(out, 0, sizeof(*out));
	memcpy(out->method, p, m);
	if (te - t > 3 && p[t] != '/') {
		size_t a = absolute_path(p, t, te);

		if (a != t) {
			t = a;
			pe = find_any(p, t, te, '?', '#', '?', '#');
		}
	}
	if (pe == t) {
		out->path[0] = '/';
	} else if (copy_field(out->path, sizeof(out->path), p + t, pe - t)) {
		out->flags |= OBS_HF_PATH_CUT;
	}
	host = find_host(p, n, te, &host_len);
	if (host && host_len &&
	    copy_field(out->host, sizeof(out->host), host, host_len))
		out->flags |= OBS_HF_HOST_CUT;
	return true;
}

uint16_t obs_http_status(const uint8_t *p, size_t n)
{
	unsigned int code = 0;

	if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
		return 0;
	for (int i = 9; i < 12; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		code = code * 10 + (unsigned int)(p[i] - '0');
	}
	return code >= 100 && code <= 999 ? (uint16_t)code : 0;
}

unsigned int obs_tls_feed(struct obs_tls_walk *w, const uint8_t *p, size_t n,
			  unsigned int *records, unsigned int *appdata)
{
	unsigned int types = 0;

	while (n > 0 && !w->lost) {
		if (w->left > 0) {
			size_t skip = n < w->left ? n : w->left;
			w->left -= (uint32_t)skip;
			p += skip;
			n -= skip;
			continue;
		}
		w->hdr[w->have++] = *p++;
		n--;
		if (w->have < 5)
			continue;
		w->have = 0;
		/* type 20..23, version 3.x, length at most 2^14 + 2048 */
		if (w->hdr[0] < 20 || w->hdr[0] > 23 || w->hdr[1] != 3 ||
		    ((unsigned int)w->hdr[3] << 8 | w->hdr[4]) > 18432) {
			w->lost = true;
			break;
		}
		types |= 1u << (w->hdr[0] - 20);
		(*records)++;
		w->left = (uint32_t)w->hdr[3] << 8 | w->hdr[4];
		if (w->hdr[0] == 23) {
			(*appdata)++;
			if (w->left > w->longest_appdata)
				w->longest_appdata = (uint16_t)w->left;
		}
	}
	return types;
}
