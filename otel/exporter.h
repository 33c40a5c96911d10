/* exporter.h - the push of a database's exchanges (SQLite, or a
 * PostgreSQL store: source.h) as OTLP traces to one endpoint, in batches, from
 * where the last push stopped (the endpoint's mark, cursor.h) and without
 * blocking: each step sends at most one request, and after a failure says how
 * long to wait before the next.
 *
 * What is retried: 429, 502, 503 and 504, and no answer at all
 * (connection refused, timeout), after Retry-After when the receiver gave
 * one, else after 1, 2, 4 ... 30 s. Anything else (400, 413 among them) is
 * the receiver's refusal of those spans: said on msgs, naming the
 * endpoint and the status, and the batch is not sent again. A
 * partialSuccess (spans the receiver rejected) is said on msgs too. */
#ifndef OBSERVE_OTEL_EXPORTER_H
#define OBSERVE_OTEL_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "http.h"
#include "source.h"

/* A batch holds at most this many exchanges: with the phases of a
 * connection's first exchange as child spans, at most 4 spans each, 512
 * spans a request, as OpenTelemetry's batch processors send. */
#define OTEL_BATCH_EXCHANGES 128

struct otel_exporter;

/* What a step did. */
enum otel_step {
	OTEL_IDLE, /* nothing (more) to send now */
	OTEL_MORE, /* a batch went (sent or refused): step again */
	OTEL_WAIT, /* a failure to retry: not before *wait_ms */
};

/* The exporter of the exchanges of s (kept open by the caller) to endpoint
 * (NULL: OTEL_EXPORTER_OTLP_ENDPOINT; http.h), messages on msgs as
 * "prog: ...". NULL with err. */
struct otel_exporter *otel_exporter_open(struct otel_source *s,
					 const char *endpoint, const char *prog,
					 FILE *msgs, char *err, size_t errlen);
void otel_exporter_close(struct otel_exporter *x);

/* The URL the traces go to, as shown. */
const char *otel_exporter_url(const struct otel_exporter *x);

/* The clock of the steps: CLOCK_MONOTONIC, in ms. */
int64_t otel_now_ms(void);

/* One step at now_ms (otel_now_ms): at most one request. On OTEL_WAIT,
 * *wait_ms is how long to wait from the step's return (a retry's wait is
 * counted from the receiver's answer, and the exporter holds back a step
 * that comes sooner). -1 on a database error (said on msgs). */
int otel_exporter_step(struct otel_exporter *x, int64_t now_ms,
		       int64_t *wait_ms, enum otel_step *what);

/* The counts so far: spans the receiver took, spans it refused or
 * rejected (partialSuccess), requests that failed and were retried. */
struct otel_export_counts {
	uint64_t spans_sent, spans_lost, retries;
};
void otel_exporter_counts(const struct otel_exporter *x,
			  struct otel_export_counts *c);

/* Posts the metrics request json[0..n) once (no retry: the next one
 * carries the same counts, cumulated); a failure said on msgs. 0 sent,
 * -1 not. */
int otel_exporter_metrics(struct otel_exporter *x, const char *json, size_t n);

#endif
