/* http.h - one OTLP/HTTP request: a JSON body gzipped and POSTed to
 * <endpoint>/v1/traces or /v1/metrics with libcurl, the headers of
 * OTEL_EXPORTER_OTLP_HEADERS added, and the answer sorted into sent, to
 * retry (429, 502, 503, 504, or no answer at all) or refused (anything
 * else: 400 and 413 among them), as the OTLP specification says. */
#ifndef OBSERVE_OTEL_HTTP_H
#define OBSERVE_OTEL_HTTP_H

#include <stddef.h>

#include "response.h"

enum otlp_signal { OTLP_TRACES, OTLP_METRICS };

struct otlp_http;

/* The outcome of one request. */
enum otlp_outcome { OTLP_SENT, OTLP_RETRY, OTLP_REFUSED };

struct otlp_result {
	enum otlp_outcome outcome;
	long status;	  /* the HTTP status, 0 when none came */
	long retry_after; /* seconds asked for by Retry-After, -1 none */
	struct otlp_answer answer; /* what the body said */
	char why[512]; /* RETRY or REFUSED: the reason, endpoint named */
};

/* The exporter for endpoint, the base URL (OTLP's
 * OTEL_EXPORTER_OTLP_ENDPOINT: the signal's path v1/traces or v1/metrics is
 * appended); NULL takes OTEL_EXPORTER_OTLP_ENDPOINT. The headers come from
 * OTEL_EXPORTER_OTLP_HEADERS, the timeout of one request from
 * OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds, default 10000). NULL with the
 * reason in err: no endpoint, not an http:// or https:// URL, a query or
 * fragment in it, the headers malformed. */
struct otlp_http *otlp_http_open(const char *endpoint, char *err,
				 size_t errlen);
void otlp_http_close(struct otlp_http *h);

/* The URL a signal goes to, as it may be shown and kept: without userinfo
 * (whose password would show). */
const char *otlp_http_url(const struct otlp_http *h, enum otlp_signal s);

/* POSTs body[0..n) (JSON) gzipped to the signal's URL and fills r. 0 when
 * a result was made (r->outcome says which), -1 with r->why when the body
 * could not even be prepared (out of memory). */
int otlp_http_post(struct otlp_http *h, enum otlp_signal s, const char *body,
		   size_t n, struct otlp_result *r);

#endif
