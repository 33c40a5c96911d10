/* metrics.h - the tools' metrics: histograms of durations in seconds, with
 * OpenTelemetry's default buckets for http.client.request.duration, one
 * series per set of labels, shown in Prometheus's text format and as an
 * OTLP/JSON metrics request (docs/otel.md, "Metrics"). Safe to use from
 * several threads: one lock around every call. */
#ifndef OBSERVE_OTEL_METRICS_H
#define OBSERVE_OTEL_METRICS_H

#include <stdint.h>
#include <stdio.h>

enum otel_metric {
	OTEL_M_REQUEST,	   /* http.client.request.duration */
	OTEL_M_CONNECTION, /* http.client.connection.duration */
	OTEL_M_CONNECT,	   /* observe.connect.duration */
	OTEL_M_TLS,	   /* observe.tls.handshake.duration */
	OTEL_M_WAIT,	   /* observe.wait.duration */
	OTEL_M_TRANSFER,   /* observe.transfer.duration */
	OTEL_M_COUNT
};

/* A series' labels. method and status_class are the exchanges' (NULL for
 * the connections' metrics, and when not known); any may be NULL. */
struct otel_labels {
	const char *server_address;
	int server_port; /* 0: not known */
	const char *program, *client, *method, *status_class;
};

/* At most this many series; observations beyond go to one series per
 * metric labelled otel_metric_overflow="true", as OpenTelemetry's SDKs
 * do. */
#define OTEL_SERIES_MAX 2000

struct otel_metrics;

/* NULL when out of memory. */
struct otel_metrics *otel_metrics_new(void);
void otel_metrics_free(struct otel_metrics *m);

/* One observation of seconds (negative ones are dropped). 0, or -1 when
 * out of memory (nothing counted). */
int otel_metrics_observe(struct otel_metrics *m, enum otel_metric which,
			 const struct otel_labels *l, double seconds);

/* Prometheus's text exposition format (version 0.0.4). */
void otel_metrics_prometheus(struct otel_metrics *m, FILE *out);

/* An OTLP/JSON ExportMetricsServiceRequest: cumulative histograms since
 * start_ns, as of now_ns; the resource's service.name is service. */
void otel_metrics_otlp(struct otel_metrics *m, FILE *out, const char *service,
		       int64_t start_ns, int64_t now_ns);

#endif
