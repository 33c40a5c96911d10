/* otel.c - slicer --follow's OpenTelemetry (see otel.h): the glue of the
 * follower to otel/: a feed into the metrics, their server, the traces
 * exporter, and the metrics' push interval. */
#define _GNU_SOURCE
#include "otel.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exporter.h"
#include "feed.h"
#include "metrics.h"
#include "serve.h"
#include "source.h"

/* batches pushed in one run at most: the follower goes back to the
 * spools in between */
#define BATCHES_PER_RUN 8
/* the last push at stop: no longer than this */
#define STOP_MS 10000
#define METRICS_INTERVAL_MS 60000

struct slicer_otel {
	struct otel_source *src; /* the store the follower writes */
	FILE *msgs;
	struct otel_metrics *metrics;
	struct otel_feed *feed;
	struct otel_serve *serve;
	struct otel_exporter *exporter;
	int64_t start_ns;
	int64_t interval_ms, metrics_due_ms;
	int64_t traces_due_ms; /* -1: none */
	bool broken;	       /* a database error: said once */
};

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t interval_ms(void)
{
	const char *v = getenv("OTEL_METRIC_EXPORT_INTERVAL");
	char *end;
	long long ms;

	if (!v || !*v)
		return METRICS_INTERVAL_MS;
	ms = strtoll(v, &end, 10);
	return *end || ms <= 0 ? METRICS_INTERVAL_MS : ms;
}

struct slicer_otel *slicer_otel_start(sqlite3 *db, const char *otlp,
				      const char *listen, FILE *msgs, int *none,
				      char *err, size_t errlen)
{
	const char *env = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	bool push = (otlp && *otlp) || (env && *env);
	struct slicer_otel *o;

	*err = '\0';
	*none = !push && !listen;
	if (*none)
		return NULL;
	if (!(o = calloc(1, sizeof(*o))) ||
	    !(o->metrics = otel_metrics_new()) ||
	    !(o->feed = otel_feed_new(o->metrics))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!(o->src = otel_source_sqlite(db, err, errlen)))
		goto fail;
	o->msgs = msgs;
	o->start_ns = realtime_ns();
	o->interval_ms = interval_ms();
	o->traces_due_ms = 0;
	if (push && !(o->exporter = otel_exporter_open(o->src, otlp, "slicer",
						       msgs, err, errlen)))
		goto fail;
	if (listen &&
	    !(o->serve = otel_serve_start(listen, o->metrics, err, errlen)))
		goto fail;
	if (o->serve)
		fprintf(msgs, "slicer: metrics at %s\n",
			otel_serve_url(o->serve));
	if (o->exporter)
		fprintf(msgs, "slicer: pushing OTLP traces to %s\n",
			otel_exporter_url(o->exporter));
	return o;
fail:
	if (o) {
		otel_exporter_close(o->exporter);
		otel_source_close(o->src);
		otel_feed_free(o->feed);
		otel_metrics_free(o->metrics);
		free(o);
	}
	return NULL;
}

/* The metrics as an OTLP request, posted. */
static void push_metrics(struct slicer_otel *o)
{
	char *body = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&body, &n);

	if (!out)
		return;
	otel_metrics_otlp(o->metrics, out, "slicer", o->start_ns,
			  realtime_ns());
	if (fclose(out) == 0)
		otel_exporter_metrics(o->exporter, body, n);
	free(body);
}

/* Up to max batches of traces: the time of the next try, -1 none. */
static int64_t push_traces(struct slicer_otel *o, int64_t now_ms, int max)
{
	for (int i = 0; i < max; i++) {
		enum otel_step what;
		int64_t wait;

		if (otel_exporter_step(o->exporter, now_ms, &wait, &what) != 0)
			return -1; /* said; tried again with new data */
		if (what == OTEL_IDLE)
			return -1;
		if (what == OTEL_WAIT)
			return now_ms + wait;
	}
	return now_ms; /* more to send */
}

int64_t slicer_otel_run(struct slicer_otel *o, int64_t now_ms)
{
	char err[512];
	int64_t next = -1;

	if (otel_feed_run(o->feed, o->src, err, sizeof(err)) != 0 &&
	    !o->broken) {
		fprintf(o->msgs, "slicer: metrics: %s\n", err);
		o->broken = true;
	}
	if (!o->exporter)
		return -1;
	if (o->traces_due_ms <= now_ms)
		o->traces_due_ms = push_traces(o, now_ms, BATCHES_PER_RUN);
	if (now_ms >= o->metrics_due_ms) {
		if (o->metrics_due_ms)
			push_metrics(o);
		o->metrics_due_ms = now_ms + o->interval_ms;
	}
	next = o->metrics_due_ms - now_ms;
	if (o->traces_due_ms >= 0 && o->traces_due_ms - now_ms < next)
		next = o->traces_due_ms > now_ms ? o->traces_due_ms - now_ms
						 : 0;
	return next;
}

int slicer_otel_stop(struct slicer_otel *o, int64_t now_ms)
{
	struct otel_export_counts c = { 0 };
	int rc = 0;
	char err[512];

	if (!o)
		return 0;
	otel_serve_stop(o->serve);
	if (otel_feed_run(o->feed, o->src, err, sizeof(err)) != 0)
		fprintf(o->msgs, "slicer: metrics: %s\n", err);
	if (o->exporter) {
		int64_t end = now_ms + STOP_MS, t = now_ms;

		/* what is due now, with no wait for a retry */
		while (t < end && push_traces(o, t, 1) == t)
			t = otel_now_ms();
		push_metrics(o);
		otel_exporter_counts(o->exporter, &c);
		if (c.spans_lost)
			rc = 1;
		fprintf(o->msgs,
			"slicer: %s: %llu spans sent, %llu refused or "
			"rejected, %llu retries\n",
			otel_exporter_url(o->exporter),
			(unsigned long long)c.spans_sent,
			(unsigned long long)c.spans_lost,
			(unsigned long long)c.retries);
		otel_exporter_close(o->exporter);
	}
	otel_source_close(o->src);
	otel_feed_free(o->feed);
	otel_metrics_free(o->metrics);
	free(o);
	return rc;
}
