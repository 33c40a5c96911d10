/* response.c - an OTLP/HTTP receiver's answer read (see response.h): a
 * small JSON reader of its own, bounded in depth and length, that keeps the
 * few members looked for and skips the rest. */
#define _GNU_SOURCE
#include "response.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- Retry-After ---------------------------------------------------------- */

int otlp_retry_after(const char *value, size_t n, time_t now, long *seconds)
{
	static const char *const dates[] = {
		"%a, %d %b %Y %H:%M:%S GMT", /* IMF-fixdate */
		"%A, %d-%b-%y %H:%M:%S GMT", /* RFC 850 */
		"%a %b %e %H:%M:%S %Y",	     /* asctime */
	};
	char text[64];
	size_t i = 0;
	long v = 0;

	while (n && isblank((unsigned char)*value)) {
		value++;
		n--;
	}
	while (n && isspace((unsigned char)value[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(text))
		return -1;
	memcpy(text, value, n);
	text[n] = '\0';
	for (i = 0; i < n && isdigit((unsigned char)text[i]); i++)
		if (v < OTLP_RETRY_AFTER_MAX)
			v = v * 10 + (text[i] - '0');
	if (i == n) {
		*seconds = v < OTLP_RETRY_AFTER_MAX ? v : OTLP_RETRY_AFTER_MAX;
		return 0;
	}
	for (size_t d = 0; d < sizeof(dates) / sizeof(dates[0]); d++) {
		struct tm tm;
		const char *end;
		time_t when;

		memset(&tm, 0, sizeof(tm));
		end = strptime(text, dates[d], &tm);
		if (!end || *end)
			continue;
		when = timegm(&tm);
		if (when == (time_t)-1)
			continue;
		*seconds = when <= now ? 0
			   : when - now > OTLP_RETRY_AFTER_MAX
				   ? OTLP_RETRY_AFTER_MAX
				   : (long)(when - now);
		return 0;
	}
	return -1;
}

/* --- JSON ----------------------------------------------------------------- */

struct js {
	const char *p, *end;
	int depth;
};

static void ws(struct js *js)
{
	while (js->p < js->end && strchr(" \t\r\n", *js->p))
		js->p++;
}

static bool eat(struct js *js, char c)
{
	ws(js);
	if (js->p < js->end && *js->p == c) {
		js->p++;
		return true;
	}
	return false;
}

/* Appends the code point cp as UTF-8 to out[*j..size-1) when it fits;
 * control characters as '?'. */
static void put_cp(char *out, size_t size, size_t *j, unsigned cp)
{
	char buf[4];
	size_t n;

	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
		cp = '?';
	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xfffd; /* a lone surrogate */
	if (cp < 0x80) {
		buf[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		buf[0] = (char)(0xc0 | cp >> 6);
		buf[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		buf[0] = (char)(0xe0 | cp >> 12);
		buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		buf[0] = (char)(0xf0 | cp >> 18);
		buf[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		buf[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (out && *j + n < size) {
		memcpy(out + *j, buf, n);
		*j += n;
	}
}

static int hex4(const char *p, const char *end, unsigned *v)
{
	*v = 0;
	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int c = tolower((unsigned char)p[i]);

		if (!isxdigit(c))
			return -1;
		*v = *v * 16 + (unsigned)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	return 0;
}

/* Length of the UTF-8 sequence at p (at most end - p bytes), 0 when it is
 * not a valid one. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end,
		       unsigned *cp)
{
	size_t n = *p < 0x80		 ? 1
		   : (*p & 0xe0) == 0xc0 ? 2
		   : (*p & 0xf0) == 0xe0 ? 3
		   : (*p & 0xf8) == 0xf0 ? 4
					 : 0;
	unsigned v;

	if (n == 0 || (size_t)(end - p) < n)
		return 0;
	v = n == 1 ? *p : (unsigned)(*p & (0x7f >> n));
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) ||
	    (n == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	*cp = v;
	return n;
}

/* A string, into out (NULL: skipped), NUL-terminated. 0, or -1. */
static int string(struct js *js, char *out, size_t size)
{
	size_t j = 0;

	if (!eat(js, '"'))
		return -1;
	while (js->p < js->end && *js->p != '"') {
		unsigned cp;

		if (*js->p == '\\') {
			if (js->end - js->p < 2)
				return -1;
			char e = js->p[1];
			js->p += 2;
			if (e == 'u') {
				if (hex4(js->p, js->end, &cp) != 0)
					return -1;
				js->p += 4;
			} else {
				const char *from = "\"\\/bfnrt",
					   *to = "\"\\/\b\f\n\r\t";
				const char *at = strchr(from, e);

				if (!e || !at)
					return -1;
				cp = (unsigned char)to[at - from];
			}
		} else {
			size_t n =
				utf8_seq((const unsigned char *)js->p,
					 (const unsigned char *)js->end, &cp);

			if (n == 0) {
				cp = 0xfffd;
				n = 1;
			}
			js->p += n;
		}
		put_cp(out, size, &j, cp);
	}
	if (js->p >= js->end)
		return -1;
	js->p++;
	if (out && size)
		out[j < size ? j : size - 1] = '\0';
	return 0;
}

static int value(struct js *js);

/* Calls member(key) for each member of an object; member reads the
 * value. 0, or -1. */
static int object(struct js *js,
		  int (*member)(struct js *, const char *, void *), void *ctx)
{
	char key[64];

	if (!eat(js, '{') || ++js->depth > OTLP_JSON_DEPTH)
		return -1;
	if (eat(js, '}')) {
		js->depth--;
		return 0;
	}
	do {
		if (string(js, key, sizeof(key)) != 0 || !eat(js, ':') ||
		    member(js, key, ctx) != 0)
			return -1;
	} while (eat(js, ','));
	if (!eat(js, '}'))
		return -1;
	js->depth--;
	return 0;
}

static int skip_member(struct js *js, const char *key, void *ctx)
{
	(void)key;
	(void)ctx;
	return value(js);
}

static int array(struct js *js)
{
	if (!eat(js, '[') || ++js->depth > OTLP_JSON_DEPTH)
		return -1;
	if (!eat(js, ']')) {
		do
			if (value(js) != 0)
				return -1;
		while (eat(js, ','));
		if (!eat(js, ']'))
			return -1;
	}
	js->depth--;
	return 0;
}

/* A number's text (or a literal's), skipped: what JSON allows of it. */
static int scalar(struct js *js)
{
	const char *start = js->p;

	while (js->p < js->end &&
	       (isalnum((unsigned char)*js->p) || strchr("+-.", *js->p)))
		js->p++;
	return js->p > start ? 0 : -1;
}

/* Any value, skipped. */
static int value(struct js *js)
{
	ws(js);
	if (js->p >= js->end)
		return -1;
	switch (*js->p) {
	case '{':
		return object(js, skip_member, NULL);
	case '[':
		return array(js);
	case '"':
		return string(js, NULL, 0);
	default:
		return scalar(js);
	}
}

/* An int64 written as a number or as a decimal string (proto3 JSON takes
 * both); *v 0 when it is neither. */
static int integer(struct js *js, int64_t *v)
{
	char text[32];
	char *end;
	long long n;

	ws(js);
	*v = 0;
	if (js->p < js->end && *js->p == '"') {
		if (string(js, text, sizeof(text)) != 0)
			return -1;
	} else {
		const char *start = js->p;

		if (scalar(js) != 0)
			return -1;
		snprintf(text, sizeof(text), "%.*s",
			 (int)(js->p - start < 31 ? js->p - start : 31), start);
	}
	n = strtoll(text, &end, 10);
	if (*text && !*end && n >= 0)
		*v = n;
	return 0;
}

static int partial_member(struct js *js, const char *key, void *ctx)
{
	struct otlp_answer *a = ctx;

	if (strcmp(key, "rejectedSpans") == 0 ||
	    strcmp(key, "rejectedDataPoints") == 0 ||
	    strcmp(key, "rejectedLogRecords") == 0)
		return integer(js, &a->rejected);
	ws(js);
	if (strcmp(key, "errorMessage") == 0 && js->p < js->end &&
	    *js->p == '"')
		return string(js, a->error_message, sizeof(a->error_message));
	return value(js);
}

static int answer_member(struct js *js, const char *key, void *ctx)
{
	struct otlp_answer *a = ctx;

	ws(js);
	if (strcmp(key, "partialSuccess") == 0 && js->p < js->end &&
	    *js->p == '{') {
		a->partial = true;
		return object(js, partial_member, a);
	}
	if (strcmp(key, "message") == 0 && js->p < js->end && *js->p == '"')
		return string(js, a->message, sizeof(a->message));
	return value(js);
}

int otlp_answer_parse(const char *body, size_t n, struct otlp_answer *a)
{
	struct js js = { body, body + n, 0 };

	memset(a, 0, sizeof(*a));
	if (!body || object(&js, answer_member, a) != 0) {
		memset(a, 0, sizeof(*a));
		return -1;
	}
	return 0;
}
