/* serve.h - the metrics (metrics.h) served over HTTP in Prometheus's text
 * format, GET /metrics, by libmicrohttpd on a thread of its own. */
#ifndef OBSERVE_OTEL_SERVE_H
#define OBSERVE_OTEL_SERVE_H

#include <stddef.h>

#include "metrics.h"

struct otel_serve;

/* Serve m on listen: "PORT" (on 127.0.0.1), "ADDRESS:PORT" or
 * "[IPv6]:PORT", the address numeric ("localhost" is 127.0.0.1); port 0
 * takes a free one. NULL with the reason in err (naming listen). */
struct otel_serve *otel_serve_start(const char *listen, struct otel_metrics *m,
				    char *err, size_t errlen);

/* The URL of the endpoint, e.g. http://127.0.0.1:9464/metrics. */
const char *otel_serve_url(const struct otel_serve *s);

void otel_serve_stop(struct otel_serve *s);

#endif
