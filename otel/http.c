/* http.c - one OTLP/HTTP request with libcurl (see http.h): the body
 * gzipped with zlib, the answer's body kept up to ANSWER_MAX bytes, its
 * Retry-After read (response.c). No redirect is followed and no protocol
 * but HTTP and HTTPS is spoken. */
#define _GNU_SOURCE
#include "http.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <zlib.h>

#include "headers.h"

#define ANSWER_MAX 65536
#define TIMEOUT_MS_DEFAULT 10000L

struct otlp_http {
	CURL *curl;
	struct curl_slist *headers;
	char *url[2];	/* the signals' URLs, as sent */
	char *shown[2]; /* the same without userinfo */
	long timeout_ms;
};

/* --- the URLs --- */

/* The URL of base with path appended to its path (one '/' between), the
 * userinfo left out when shown; NULL with err. */
static char *signal_url(const char *base, const char *path, bool shown,
			char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *old = NULL, *joined = NULL, *out = NULL;
	size_t n;

	if (!u || curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK) {
		snprintf(err, errlen, "OTLP endpoint: not a URL");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_PATH, &old, 0) != CURLUE_OK)
		goto out;
	n = strlen(old);
	if (asprintf(&joined, "%s%s%s", old, n && old[n - 1] == '/' ? "" : "/",
		     path) < 0) {
		joined = NULL;
		goto out;
	}
	if (curl_url_set(u, CURLUPART_PATH, joined, 0) != CURLUE_OK)
		goto out;
	if (shown) {
		curl_url_set(u, CURLUPART_USER, NULL, 0);
		curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	}
	curl_url_get(u, CURLUPART_URL, &out, 0);
out:
	if (!out && !*err)
		snprintf(err, errlen, "out of memory");
	curl_free(old);
	free(joined);
	curl_url_cleanup(u);
	return out;
}

/* base is an http:// or https:// URL with a host, no query, no
 * fragment. */
static int check_base(const char *base, char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *query = NULL, *fragment = NULL;
	int rc = -1;

	if (!u) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		snprintf(
			err, errlen,
			"OTLP endpoint: not a URL (http://HOST:PORT expected)");
	else if (strcasecmp(scheme, "http") && strcasecmp(scheme, "https"))
		snprintf(err, errlen,
			 "OTLP endpoint: scheme %s: http or https expected",
			 scheme);
	else if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK ||
		 curl_url_get(u, CURLUPART_FRAGMENT, &fragment, 0) == CURLUE_OK)
		snprintf(err, errlen,
			 "OTLP endpoint: a query or fragment: the base URL "
			 "is expected (v1/traces is appended)");
	else
		rc = 0;
	curl_free(scheme);
	curl_free(host);
	curl_free(query);
	curl_free(fragment);
	curl_url_cleanup(u);
	return rc;
}

static long env_timeout_ms(void)
{
	const char *v = getenv("OTEL_EXPORTER_OTLP_TIMEOUT");
	char *end;
	long ms;

	if (!v || !*v)
		return TIMEOUT_MS_DEFAULT;
	ms = strtol(v, &end, 10);
	return *end || ms <= 0 || ms > 600000 ? TIMEOUT_MS_DEFAULT : ms;
}

struct otlp_http *otlp_http_open(const char *endpoint, char *err, size_t errlen)
{
	static const char *const paths[] = { "v1/traces", "v1/metrics" };
	struct otlp_http *h = NULL;
	struct otlp_headers extra = { 0 };
	static bool curl_ready;

	*err = '\0';
	if (!endpoint || !*endpoint)
		endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!endpoint || !*endpoint) {
		snprintf(err, errlen,
			 "no OTLP endpoint: give --otlp URL or set "
			 "OTEL_EXPORTER_OTLP_ENDPOINT");
		return NULL;
	}
	if (check_base(endpoint, err, errlen) != 0 ||
	    otlp_headers_parse(getenv("OTEL_EXPORTER_OTLP_HEADERS"), &extra,
			       err, errlen) != 0)
		return NULL;
	if (!curl_ready && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "libcurl cannot start");
		goto fail;
	}
	curl_ready = true;
	if (!(h = calloc(1, sizeof(*h))) || !(h->curl = curl_easy_init())) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int s = 0; s < 2; s++)
		if (!(h->url[s] = signal_url(endpoint, paths[s], false, err,
					     errlen)) ||
		    !(h->shown[s] = signal_url(endpoint, paths[s], true, err,
					       errlen)))
			goto fail;
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	h->headers = h->headers ? curl_slist_append(h->headers,
						    "Content-Encoding: gzip")
				: NULL;
	/* no "Expect: 100-continue" round trip before a large body */
	h->headers =
		h->headers ? curl_slist_append(h->headers, "Expect:") : NULL;
	for (size_t i = 0; i < extra.n && h->headers; i++)
		h->headers = curl_slist_append(h->headers, extra.lines[i]);
	if (!h->headers) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	otlp_headers_free(&extra);
	h->timeout_ms = env_timeout_ms();
	return h;
fail:
	otlp_headers_free(&extra);
	otlp_http_close(h);
	return NULL;
}

void otlp_http_close(struct otlp_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	for (int s = 0; s < 2; s++) {
		curl_free(h->url[s]);
		curl_free(h->shown[s]);
	}
	free(h);
}

const char *otlp_http_url(const struct otlp_http *h, enum otlp_signal s)
{
	return h->shown[s];
}

/* --- the body --- */

/* in[0..n) gzipped into *out (malloc'd), *out_n bytes. 0, or -1. */
static int gzip(const char *in, size_t n, unsigned char **out, size_t *out_n)
{
	z_stream z;
	uLong bound;
	int rc;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper, not zlib's */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	bound = deflateBound(&z, (uLong)n) + 32;
	if (!(*out = malloc(bound))) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	*out_n = bound - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* --- the answer --- */

struct answer {
	char body[ANSWER_MAX];
	size_t n;
	long retry_after;
};

static size_t take_body(char *data, size_t size, size_t count, void *ctx)
{
	struct answer *a = ctx;
	size_t n = size * count, room = sizeof(a->body) - a->n;

	memcpy(a->body + a->n, data, n < room ? n : room);
	a->n += n < room ? n : room;
	return n; /* the rest read and dropped */
}

static size_t take_header(char *data, size_t size, size_t count, void *ctx)
{
	static const char name[] = "retry-after:";
	struct answer *a = ctx;
	size_t n = size * count;
	long seconds;

	if (n > sizeof(name) - 1 &&
	    strncasecmp(data, name, sizeof(name) - 1) == 0 &&
	    otlp_retry_after(data + sizeof(name) - 1, n - (sizeof(name) - 1),
			     time(NULL), &seconds) == 0)
		a->retry_after = seconds;
	return n;
}

static bool retryable(long status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

/* The answer's own words, for a message: its partialSuccess's or
 * google.rpc.Status's message, else its first bytes if they are text. */
static void said(const struct answer *a, const struct otlp_answer *parsed,
		 char *buf, size_t size)
{
	const char *m =
		*parsed->message ? parsed->message : parsed->error_message;
	size_t j = 0;

	if (*m) {
		snprintf(buf, size, ": %s", m);
		return;
	}
	if (a->n == 0 || size < 8) {
		*buf = '\0';
		return;
	}
	buf[j++] = ':';
	buf[j++] = ' ';
	for (size_t i = 0; i < a->n && i < 200 && j + 4 < size; i++) {
		unsigned char c = (unsigned char)a->body[i];

		buf[j++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	buf[j] = '\0';
}

int otlp_http_post(struct otlp_http *h, enum otlp_signal s, const char *body,
		   size_t n, struct otlp_result *r)
{
	struct answer *a = NULL;
	unsigned char *gz = NULL;
	size_t gz_n = 0;
	char curl_err[CURL_ERROR_SIZE] = "", words[300];
	CURL *c = h->curl;
	CURLcode rc;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	r->retry_after = -1;
	if (!(a = calloc(1, sizeof(*a))) || gzip(body, n, &gz, &gz_n) != 0) {
		snprintf(r->why, sizeof(r->why), "%s: out of memory",
			 h->shown[s]);
		goto out;
	}
	a->retry_after = -1;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, h->url[s]);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 h->timeout_ms < 5000 ? h->timeout_ms : 5000L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, gz);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)gz_n);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, take_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "observe/" OBSERVE_VERSION);
	rc = curl_easy_perform(c);
	ret = 0;
	if (rc != CURLE_OK) {
		r->outcome = OTLP_RETRY;
		snprintf(r->why, sizeof(r->why), "%s: %s", h->shown[s],
			 *curl_err ? curl_err : curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	otlp_answer_parse(a->body, a->n, &r->answer);
	r->retry_after = a->retry_after;
	if (r->status >= 200 && r->status < 300) {
		r->outcome = OTLP_SENT;
		goto out;
	}
	said(a, &r->answer, words, sizeof(words));
	r->outcome = retryable(r->status) ? OTLP_RETRY : OTLP_REFUSED;
	snprintf(r->why, sizeof(r->why), "%s: HTTP %ld%s", h->shown[s],
		 r->status, words);
out:
	free(gz);
	free(a);
	return ret;
}
