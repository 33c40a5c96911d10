/* exporter.c - the OTLP traces push (see exporter.h): a batch of final
 * exchanges from the endpoint's cursor, written as OTLP/JSON (otlp.c),
 * posted (http.c), and the mark moved once the receiver answered for it. */
#define _GNU_SOURCE
#include "exporter.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cursor.h"
#include "otlp.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000

struct otel_exporter {
	struct otel_source *src;
	struct otlp_http *http;
	struct otel_cursor cursor;
	const char *prog;
	FILE *msgs;
	int failures;	/* in a row */
	int64_t due_ms; /* no request before */
	struct otel_export_counts counts;
};

struct otel_exporter *otel_exporter_open(struct otel_source *s,
					 const char *endpoint, const char *prog,
					 FILE *msgs, char *err, size_t errlen)
{
	struct otel_exporter *x = calloc(1, sizeof(*x));

	if (!x) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	x->src = s;
	x->prog = prog;
	x->msgs = msgs;
	if (!(x->http = otlp_http_open(endpoint, err, errlen)) ||
	    otel_mark_load(s, otlp_http_url(x->http, OTLP_TRACES), &x->cursor,
			   err, errlen) != 0) {
		otel_exporter_close(x);
		return NULL;
	}
	return x;
}

void otel_exporter_close(struct otel_exporter *x)
{
	if (!x)
		return;
	otlp_http_close(x->http);
	otel_cursor_free(&x->cursor);
	free(x);
}

const char *otel_exporter_url(const struct otel_exporter *x)
{
	return otlp_http_url(x->http, OTLP_TRACES);
}

void otel_exporter_counts(const struct otel_exporter *x,
			  struct otel_export_counts *c)
{
	*c = x->counts;
}

/* The batch's exchanges as one OTLP/JSON request in *body (malloc'd),
 * *spans the spans in it. 0, or -1 with err. */
static int write_batch(struct otel_exporter *x, const struct otel_batch *b,
		       char **body, size_t *n, uint64_t *spans, char *err,
		       size_t errlen)
{
	sqlite3_stmt *rows = NULL;
	char *sql = otlp_sql_ids(OTEL_IDS);
	FILE *out = NULL;
	int rc = -1;

	*body = NULL;
	*spans = 0;
	if (!sql || !(out = open_memstream(body, n))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (otel_source_query(x->src, sql, NULL, 0, b->ids, b->n, 0, &rows, err,
			      errlen) != 0)
		goto out;
	if (otlp_write(rows, out, spans) != SQLITE_DONE) {
		otel_source_error(x->src, err, errlen);
		goto out;
	}
	if (fclose(out) != 0) {
		out = NULL;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	out = NULL;
	rc = 0;
out:
	if (out)
		fclose(out);
	if (rc != 0) {
		free(*body);
		*body = NULL;
	}
	sqlite3_finalize(rows);
	sqlite3_free(sql);
	return rc;
}

/* The cursor past the batch, kept in the database. */
static int advance(struct otel_exporter *x, const struct otel_batch *b)
{
	char err[512];

	if (otel_cursor_advance(&x->cursor, b) != 0 ||
	    otel_mark_save(x->src, otel_exporter_url(x), &x->cursor, err,
			   sizeof(err)) != 0) {
		fprintf(x->msgs, "%s: %s: cannot keep the mark: %s\n", x->prog,
			otel_exporter_url(x), err);
		return -1;
	}
	return 0;
}

static void said_partial(struct otel_exporter *x, const struct otlp_answer *a,
			 uint64_t spans)
{
	if (a->rejected == 0 && !*a->error_message)
		return;
	fprintf(x->msgs,
		"%s: %s: the receiver rejected %lld of %llu spans%s%s\n",
		x->prog, otel_exporter_url(x), (long long)a->rejected,
		(unsigned long long)spans, *a->error_message ? ": " : "",
		a->error_message);
}

int64_t otel_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int otel_exporter_step(struct otel_exporter *x, int64_t now_ms,
		       int64_t *wait_ms, enum otel_step *what)
{
	struct otel_batch b;
	struct otlp_result r;
	char err[512], *body = NULL;
	size_t n = 0;
	uint64_t spans = 0;
	int rc = -1;

	*what = OTEL_IDLE;
	*wait_ms = 0;
	if (now_ms < x->due_ms) {
		*what = OTEL_WAIT;
		*wait_ms = x->due_ms - now_ms;
		return 0;
	}
	if (otel_cursor_batch(x->src, &x->cursor, OTEL_BATCH_EXCHANGES, &b, err,
			      sizeof(err)) != 0) {
		fprintf(x->msgs, "%s: %s\n", x->prog, err);
		return -1;
	}
	if (b.n == 0) {
		/* nothing final: the rows in flight are held, if new */
		rc = b.next != x->cursor.next || b.n_held != x->cursor.n_pending
			     ? advance(x, &b)
			     : 0;
		goto out;
	}
	if (write_batch(x, &b, &body, &n, &spans, err, sizeof(err)) != 0) {
		fprintf(x->msgs, "%s: %s\n", x->prog, err);
		goto out;
	}
	if (otlp_http_post(x->http, OTLP_TRACES, body, n, &r) != 0) {
		fprintf(x->msgs, "%s: %s\n", x->prog, r.why);
		goto out;
	}
	if (r.outcome == OTLP_RETRY) {
		int64_t backoff = BACKOFF_FIRST_MS;

		for (int i = 0; i < x->failures && backoff < BACKOFF_MAX_MS;
		     i++)
			backoff *= 2;
		if (backoff > BACKOFF_MAX_MS)
			backoff = BACKOFF_MAX_MS;
		if (r.retry_after >= 0)
			backoff = r.retry_after * 1000;
		x->failures++;
		x->counts.retries++;
		/* from the answer on, not from the step's start: building and
		 * sending the batch took some of it */
		x->due_ms = otel_now_ms() + backoff;
		*what = OTEL_WAIT;
		*wait_ms = backoff;
		fprintf(x->msgs, "%s: %s; %llu spans to retry in %.1f s%s\n",
			x->prog, r.why, (unsigned long long)spans,
			(double)backoff / 1000,
			r.retry_after >= 0 ? " (Retry-After)" : "");
		rc = 0;
		goto out;
	}
	x->failures = 0;
	if (r.outcome == OTLP_REFUSED) {
		fprintf(x->msgs,
			"%s: %s; not retried: %llu spans (%zu exchanges) "
			"dropped\n",
			x->prog, r.why, (unsigned long long)spans, b.n);
		x->counts.spans_lost += spans;
	} else {
		said_partial(x, &r.answer, spans);
		x->counts.spans_lost += (uint64_t)r.answer.rejected;
		x->counts.spans_sent +=
			spans - ((uint64_t)r.answer.rejected < spans
					 ? (uint64_t)r.answer.rejected
					 : spans);
	}
	*what = OTEL_MORE;
	rc = advance(x, &b);
out:
	free(body);
	otel_batch_free(&b);
	return rc;
}

int otel_exporter_metrics(struct otel_exporter *x, const char *json, size_t n)
{
	struct otlp_result r;

	if (otlp_http_post(x->http, OTLP_METRICS, json, n, &r) != 0 ||
	    r.outcome != OTLP_SENT) {
		fprintf(x->msgs, "%s: %s; the metrics go with the next push\n",
			x->prog, r.why);
		return -1;
	}
	if (r.answer.rejected || *r.answer.error_message)
		fprintf(x->msgs,
			"%s: %s: the receiver rejected %lld data points%s%s\n",
			x->prog, otlp_http_url(x->http, OTLP_METRICS),
			(long long)r.answer.rejected,
			*r.answer.error_message ? ": " : "",
			r.answer.error_message);
	return 0;
}
