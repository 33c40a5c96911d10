/* response.h - what an OTLP/HTTP receiver answers, read: the Retry-After
 * header of a 429 or 503, the partialSuccess of an accepted export, the
 * message of a refused one. The input is anyone's bytes: every function
 * reads at most the length given, nests at most OTLP_JSON_DEPTH deep and
 * never fails on garbage (it finds nothing). */
#ifndef OBSERVE_OTEL_RESPONSE_H
#define OBSERVE_OTEL_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define OTLP_JSON_DEPTH 32

/* The seconds to wait that a Retry-After value asks for (RFC 9110,
 * 10.2.3): delta-seconds, or an HTTP-date (IMF-fixdate, RFC 850 or
 * asctime's form) taken against now, 0 when it is past. At most
 * OTLP_RETRY_AFTER_MAX. 0 with *seconds, or -1 when value is neither. */
#define OTLP_RETRY_AFTER_MAX 86400L
int otlp_retry_after(const char *value, size_t n, time_t now, long *seconds);

/* What a receiver's JSON answer says: ExportTrace/MetricsServiceResponse's
 * partialSuccess (rejectedSpans or rejectedDataPoints, errorMessage), or
 * google.rpc.Status's message for a refusal. Text is UTF-8 with control
 * characters as '?', cut to fit. */
struct otlp_answer {
	bool partial;	  /* a partialSuccess object was there */
	int64_t rejected; /* its rejected count (0 when none given) */
	char error_message[256];
	char message[256]; /* a top-level "message" (google.rpc.Status) */
};

/* Reads body[0..n) (JSON, or anything) into a. 0 when it is a JSON object
 * (what is in it read), -1 when not (a is then empty). */
int otlp_answer_parse(const char *body, size_t n, struct otlp_answer *a);

#endif
