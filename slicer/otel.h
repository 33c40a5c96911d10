/* otel.h - slicer --follow's OpenTelemetry: the exchanges pushed as OTLP
 * traces as they become final (--otlp URL, or OTEL_EXPORTER_OTLP_ENDPOINT),
 * the metrics served to Prometheus (--metrics ADDRESS:PORT) and pushed as
 * OTLP metrics every OTEL_METRIC_EXPORT_INTERVAL milliseconds (60000 by
 * default) where there is an OTLP URL. docs/otel.md. */
#ifndef OBSERVE_SLICER_OTEL_H
#define OBSERVE_SLICER_OTEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

struct slicer_otel;

/* Start on db (the store the follower writes): push to otlp (NULL: the
 * environment's endpoint, if any), serve the metrics on listen (NULL:
 * not); messages on msgs. NULL with err; *none set (and NULL returned,
 * err empty) when there is nothing to do. */
struct slicer_otel *slicer_otel_start(sqlite3 *db, const char *otlp,
				      const char *listen, FILE *msgs, int *none,
				      char *err, size_t errlen);

/* The work due at now_ms (a monotonic clock) once a batch is stored, or
 * when the last call's answer came: the metrics fed, the traces pushed
 * (a few batches at most), the metrics pushed when their interval is
 * over. Returns in how many ms it wants to run again, -1 not before new
 * data. */
int64_t slicer_otel_run(struct slicer_otel *o, int64_t now_ms);

/* The last push (no wait for a retry: what is left goes at the next
 * start), the server stopped. 0 when everything was delivered, 1 when the
 * receiver refused or rejected spans or some are left. */
int slicer_otel_stop(struct slicer_otel *o, int64_t now_ms);

#endif
