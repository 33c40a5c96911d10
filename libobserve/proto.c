/* proto.c - see proto.h. */
#include "proto.h"

#include <string.h>

#include "spool_format.h"

static bool is_upper(uint8_t c)
{
	return c >= 'A' && c <= 'Z';
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* Copy src[0..n) into a NUL-padded field; true when it had to be cut. */
static bool copy_field(char *dst, size_t size, const uint8_t *src, size_t n)
{
	bool cut = n > size;

	memset(dst, 0, size);
	memcpy(dst, src, cut ? size : n);
	return cut;
}

/* The Host header's value in p[from..n), or NULL: line by line (memchr
 * finds the ends), the name compared without regard to case. */
static const uint8_t *find_host(const uint8_t *p, size_t n, size_t from,
				size_t *len)
{
	const uint8_t *nl;

	while (from < n && (nl = memchr(p + from, '\n', n - from))) {
		size_t i = (size_t)(nl - p) + 1, v, e;

		from = i;
		if (i + 5 > n || lower(p[i]) != 'h' || lower(p[i + 1]) != 'o' ||
		    lower(p[i + 2]) != 's' || lower(p[i + 3]) != 't' ||
		    p[i + 4] != ':')
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
	{
		/* the request target ends at a space (it holds none) */
		const uint8_t *sp = memchr(p + t, ' ', n - t);
		te = sp ? (size_t)(sp - p) : n;
	}
	if (te == t || te + 8 > n || memcmp(p + te, " HTTP/1.", 8) != 0 ||
	    memchr(p + t, '\n', te - t))
		return false;
	memset(out, 0, sizeof(*out));
	memcpy(out->method, p, m);
	/* absolute form (to a proxy): scheme://authority/path */
	if (te - t > 3 && p[t] != '/') {
		for (size_t i = t; i + 3 <= te; i++) {
			if (p[i] == ':' && p[i + 1] == '/' && p[i + 2] == '/') {
				size_t a = i + 3;
				while (a < te && p[a] != '/' && p[a] != '?')
					a++;
				t = a;
				break;
			}
		}
	}
	{
		const uint8_t *q = memchr(p + t, '?', te - t);
		const uint8_t *f =
			memchr(p + t, '#', (q ? (size_t)(q - p) : te) - t);
		pe = f ? (size_t)(f - p) : q ? (size_t)(q - p) : te;
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
