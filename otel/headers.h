/* headers.h - OTEL_EXPORTER_OTLP_HEADERS: the extra HTTP headers of an
 * OTLP/HTTP export, as the OpenTelemetry specification writes them
 * ("Specifying headers via environment variables"): comma-separated
 * key=value entries, blanks around keys and values ignored, values
 * percent-encoded. */
#ifndef OBSERVE_OTEL_HEADERS_H
#define OBSERVE_OTEL_HEADERS_H

#include <stddef.h>

/* At most this many entries, and this many bytes of text. */
#define OTLP_HEADERS_MAX 64
#define OTLP_HEADERS_MAX_LEN 8192

/* The headers as lines for an HTTP request: "Key: value". */
struct otlp_headers {
	char *lines[OTLP_HEADERS_MAX];
	size_t n;
};

/* Parses spec (NULL or "" gives none) into h. Empty entries (a trailing
 * comma) are skipped. A key must be an HTTP token and not one the exporter
 * sets itself (Content-Type, Content-Encoding, Content-Length,
 * Transfer-Encoding, Host); a decoded value must hold no control character
 * but tab. 0, or -1 with h empty and the reason in err, which names the
 * entry by its number and never shows a value (values are secrets: API
 * keys). */
int otlp_headers_parse(const char *spec, struct otlp_headers *h, char *err,
		       size_t errlen);

void otlp_headers_free(struct otlp_headers *h);

#endif
