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
static inline __attribute__((always_inline)) size_t
find_any(const uint8_t *p, size_t from, size_t n, uint8_t a, uint8_t b,
	 uint8_t c, uint8_t d)
{
	size_t i = from;

#if defined(__SSE2__)
	const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
	const __m128i vc = _mm_set1_epi8((char)c), vd = _mm_set1_epi8((char)d);

	for (; i + 16 <= n; i += 16) {
		__m128i x =
			_mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, va),
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

/* Whether p[i..n) begins a Host header line ("host:", any case). */
static inline bool is_host(const uint8_t *p, size_t i, size_t n)
{
	return i + 5 <= n && (p[i] | 0x20) == 'h' && (p[i + 1] | 0x20) == 'o' &&
	       (p[i + 2] | 0x20) == 's' && (p[i + 3] | 0x20) == 't' &&
	       p[i + 4] == ':';
}

/* The first line in p[from..n) after a '\n' that is a Host header: the
 * index of its 'h', or n. Sixteen line ends a step looked at (SSE2), for a
 * following 'h' or 'H'. */
static size_t host_line(const uint8_t *p, size_t from, size_t n)
{
	size_t i = from;

	/* most clients send Host first: the line after " HTTP/1.x\r\n" */
	if (from + 10 < n && p[from + 9] == '\r' && p[from + 10] == '\n' &&
	    is_host(p, from + 11, n))
		return from + 11;

#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n'), h = _mm_set1_epi8('h');
	const __m128i lc = _mm_set1_epi8(0x20);

	for (; i + 17 <= n; i += 16) {
		__m128i a =
			_mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i b = _mm_loadu_si128(
			(const __m128i *)(const void *)(p + i + 1));
		unsigned int m = (unsigned int)_mm_movemask_epi8(
			_mm_and_si128(_mm_cmpeq_epi8(a, nl),
				      _mm_cmpeq_epi8(_mm_or_si128(b, lc), h)));

		for (; m; m &= m - 1) {
			size_t j = i + (size_t)__builtin_ctz(m) + 1;
			if (is_host(p, j, n))
				return j;
		}
	}
#endif
	for (; i + 1 < n; i++)
		if (p[i] == '\n' && is_host(p, i + 1, n))
			return i + 1;
	return n;
}

/* The Host header's value in p[from..n), or NULL; the first Host line ends
 * the look, at *end (one past its '\n'). */
static const uint8_t *find_host(const uint8_t *p, size_t n, size_t from,
				size_t *len, size_t *end)
{
	size_t v = host_line(p, from, n), e;

	if (v == n)
		return NULL;
	v += 5;
	while (v < n && (p[v] == ' ' || p[v] == '\t'))
		v++;
	e = find_any(p, v, n, '\n', '\n', '\n', '\n');
	if (e == n)
		return NULL; /* the value goes on beyond what we see */
	*end = e + 1;
	if (e > v && p[e - 1] == '\r')
		e--;
	while (e > v && (p[e - 1] == ' ' || p[e - 1] == '\t'))
		e--;
	*len = e - v;
	return p + v;
}

/* The method, m bytes (3..11), into a zero field of OBS_HTTP_METHOD_MAX:
 * twelve bytes at once with those past m masked off (the request line
 * that holds it is longer than twelve bytes: no read beyond it). */
static void copy_method(char *method, const uint8_t *p, uint32_t m)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t a;
	uint32_t b;

	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 4);
	if (m < 8) {
		a &= (1ull << (8 * m)) - 1;
		b = 0;
	} else {
		b &= (1u << (8 * (m - 8))) - 1;
	}
	memcpy(method, &a, 8);
	memcpy(method + 8, &b, 4);
#else
	memcpy(method, p, m);
#endif
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
bool obs_http_line(const uint8_t *p, size_t n, struct obs_http_line *out)
{
	size_t m = 0, t, te, pe;

	if (n > 4 && memcmp(p, "GET ", 4) == 0)
		m = 3; /* the usual method, in one comparison */
	while (m < n && m < OBS_HTTP_METHOD_MAX && is_upper(p[m]))
		m++;
	if (m < 3 || m >= OBS_HTTP_METHOD_MAX || m >= n || p[m] != ' ')
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
	out->method_len = (uint32_t)m;
	out->path = (uint32_t)t;
	out->path_end = (uint32_t)pe;
	out->target_end = (uint32_t)te;
	return true;
}

/* The Host header's value in p[te..n), te the end of the request line, into
 * host (zero, OBS_HTTP_HOST_MAX): from seen when the bytes from te to the
 * end of its Host line are those of the last request, else by a scan.
 * Returns OBS_HF_HOST_CUT or 0, and in *end one past the Host line's '\n'
 * when it was scanned and found (else 0); *recalled: it came from seen. */
static uint32_t fill_host(const uint8_t *p, size_t n, size_t te, char *host,
			  const struct obs_http_seen *seen, size_t *end,
			  bool *recalled)
{
	size_t host_len = 0, len = seen && seen->len ? seen->len - seen->te : 0;
	const uint8_t *h;
	uint32_t flags = 0;

	*end = 0;
	*recalled = len >= 16 && te + len <= n &&
		    obs_same16(p + te, seen->bytes + seen->te, len);
	if (*recalled) {
		memcpy(host, seen->host, OBS_HTTP_HOST_MAX);
		return seen->host_flags;
	}
	h = find_host(p, n, te, &host_len, end);
	if (!h)
		*end = 0;
	if (h && host_len && copy_field(host, OBS_HTTP_HOST_MAX, h, host_len))
		flags |= OBS_HF_HOST_CUT;
	return flags;
}

/* m remembers the request p[0..end) (end <= OBS_HTTP_SEEN_MAX), whose
 * target ends at te, and what was taken from it. */
static void remember(struct obs_http_seen *m, const uint8_t *p, size_t end,
		     size_t te, const char *method, const char *host,
		     const char *path, uint32_t flags, uint32_t host_flags)
{
	memcpy(m->bytes, p, end);
	memcpy(m->method, method, OBS_HTTP_METHOD_MAX);
	memcpy(m->host, host, OBS_HTTP_HOST_MAX);
	memcpy(m->path, path, OBS_HTTP_PATH_MAX);
	m->flags = flags;
	m->host_flags = (uint8_t)host_flags;
	m->te = (uint8_t)te;
	m->len = (uint8_t)end;
	m->ref_seq = 0;
	m->fresh = true;
}

uint32_t obs_http_fill(const uint8_t *p, size_t n,
		       const struct obs_http_line *line, char *method,
		       char *host, char *path, struct obs_http_seen *seen,
		       struct obs_http_seen *bare)
{
	size_t t = line->path, pe = line->path_end, te = line->target_end;
	size_t end;
	uint32_t flags = 0, host_flags;
	bool recalled;

	copy_method(method, p, line->method_len);
	if (te - t > 3 && p[t] != '/') {
		size_t a = absolute_path(p, t, te);

		if (a != t) {
			t = a;
			pe = find_any(p, t, te, '?', '#', '?', '#');
		}
	}
	if (pe == t)
		path[0] = '/';
	else if (copy_field(path, OBS_HTTP_PATH_MAX, p + t, pe - t))
		flags |= OBS_HF_PATH_CUT;
	host_flags = fill_host(p, n, te, host, seen, &end, &recalled);
	flags |= host_flags;
	if (bare && end && end <= OBS_HTTP_SEEN_MAX &&
	    line->path_end == line->target_end && p[te + 9] == '\r' &&
	    p[te + 10] == '\n' && is_host(p, te + 11, n)) {
		/* the request line, no query, then the first Host line
		 * (host_line looks there first: end is that line's) */
		remember(bare, p, end, te, method, host, path, flags,
			 host_flags);
	}
	if (seen && !recalled) {
		/* scanned: remembered when it is short enough, else the
		 * memory is forgotten (it says nothing of this request) */
		seen->len = 0;
		if (end && end - te >= 16 && end <= OBS_HTTP_SEEN_MAX)
			remember(seen, p, end, te, method, host, path, flags,
				 host_flags);
	} else if (seen) {
		/* the host from memory, another request line: what is
		 * remembered of the request line is this one's now */
		size_t hl = seen->len - seen->te;

		if (te + hl <= OBS_HTTP_SEEN_MAX) {
			memmove(seen->bytes + te, seen->bytes + seen->te, hl);
			memcpy(seen->bytes, p, te);
			memcpy(seen->method, method, OBS_HTTP_METHOD_MAX);
			memcpy(seen->path, path, OBS_HTTP_PATH_MAX);
			seen->flags = flags;
			seen->te = (uint8_t)te;
			seen->len = (uint8_t)(te + hl);
			seen->ref_seq = 0;
			seen->fresh = true;
		} else {
			seen->len = 0;
		}
	}
	return flags;
}

bool obs_http_request(const uint8_t *p, size_t n, struct obs_http_req *out)
{
	struct obs_http_line line;

	if (!obs_http_line(p, n, &line))
		return false;
	memset(out, 0, sizeof(*out));
	out->flags = obs_http_fill(p, n, &line, out->method, out->host,
				   out->path, NULL, NULL);
	return true;
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
