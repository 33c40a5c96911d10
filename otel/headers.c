/* headers.c - OTEL_EXPORTER_OTLP_HEADERS parsed into header lines (see
 * headers.h). */
#define _GNU_SOURCE
#include "headers.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* RFC 9110's tchar */
static bool is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (unsigned char)tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* s[0..n) without the blanks around it */
static void trim(const char **s, size_t *n)
{
	while (*n && isblank((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isblank((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* The percent-decoded s[0..n) into out (at least n + 1 bytes). 0, or -1
 * when a '%' is not followed by two hex digits or a byte decoded is a
 * control character other than tab. */
static int decode(const char *s, size_t n, char *out)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%') {
			int hi, lo;

			if (n - i < 3)
				return -1;
			hi = hex_digit((unsigned char)s[i + 1]);
			lo = hex_digit((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
		out[j++] = (char)c;
	}
	out[j] = '\0';
	return 0;
}

static bool reserved(const char *key, size_t n)
{
	static const char *const names[] = { "content-type", "content-encoding",
					     "content-length",
					     "transfer-encoding", "host" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && strncasecmp(key, names[i], n) == 0)
			return true;
	return false;
}

void otlp_headers_free(struct otlp_headers *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->lines[i]);
	h->n = 0;
}

/* One entry s[0..n), the number-th, appended to h. */
static int take_entry(struct otlp_headers *h, const char *s, size_t n,
		      size_t number, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', n), *key = s, *value;
	size_t key_len, value_len;
	char *line;

	if (!eq) {
		snprintf(err, errlen,
			 "OTEL_EXPORTER_OTLP_HEADERS: entry %zu has no '=' "
			 "(key=value expected)",
			 number);
		return -1;
	}
	key_len = (size_t)(eq - s);
	value = eq + 1;
	value_len = n - key_len - 1;
	trim(&key, &key_len);
	trim(&value, &value_len);
	if (key_len == 0) {
		snprintf(err, errlen,
			 "OTEL_EXPORTER_OTLP_HEADERS: entry %zu has no key",
			 number);
		return -1;
	}
	for (size_t i = 0; i < key_len; i++)
		if (!is_tchar((unsigned char)key[i])) {
			snprintf(err, errlen,
				 "OTEL_EXPORTER_OTLP_HEADERS: entry %zu: the "
				 "key is not an HTTP header name",
				 number);
			return -1;
		}
	if (reserved(key, key_len)) {
		snprintf(err, errlen,
			 "OTEL_EXPORTER_OTLP_HEADERS: entry %zu: %.*s is set "
			 "by the exporter itself",
			 number, (int)key_len, key);
		return -1;
	}
	if (h->n == OTLP_HEADERS_MAX) {
		snprintf(err, errlen,
			 "OTEL_EXPORTER_OTLP_HEADERS: more than %d entries",
			 OTLP_HEADERS_MAX);
		return -1;
	}
	line = malloc(key_len + 2 + value_len + 1);
	if (!line) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(line, key, key_len);
	memcpy(line + key_len, ": ", 2);
	if (decode(value, value_len, line + key_len + 2) != 0) {
		free(line);
		snprintf(err, errlen,
			 "OTEL_EXPORTER_OTLP_HEADERS: entry %zu (%.*s): the "
			 "value is not percent-encoded text (a '%%' without "
			 "two hex digits, or a control character)",
			 number, (int)key_len, key);
		return -1;
	}
	h->lines[h->n++] = line;
	return 0;
}

int otlp_headers_parse(const char *spec, struct otlp_headers *h, char *err,
		       size_t errlen)
{
	size_t number = 0;

	h->n = 0;
	if (!spec)
		return 0;
	if (strlen(spec) > OTLP_HEADERS_MAX_LEN) {
		snprintf(err, errlen,
			 "OTEL_EXPORTER_OTLP_HEADERS: longer than %d bytes",
			 OTLP_HEADERS_MAX_LEN);
		return -1;
	}
	for (const char *s = spec;; s++) {
		size_t n = strcspn(s, ",");
		const char *t = s;
		size_t m = n;

		number++;
		trim(&t, &m);
		if (m && take_entry(h, t, m, number, err, errlen) != 0) {
			otlp_headers_free(h);
			return -1;
		}
		s += n;
		if (!*s)
			break;
	}
	return 0;
}
