/* metrics.c - histograms by label set (see metrics.h): kept in an array in
 * the order the series appeared, found again through a hash table. */
#define _GNU_SOURCE
#include "metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "text.h"

#ifndef OBSERVE_VERSION
#error "OBSERVE_VERSION (the project's version) must be defined"
#endif

/* OpenTelemetry's default explicit buckets of http.client.request.duration
 * (semantic conventions, HTTP metrics), used for every duration here. */
static const double bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25,
				 0.5,	0.75, 1,     2.5,  5,	  7.5, 10 };
#define N_BOUNDS (sizeof(bounds) / sizeof(bounds[0]))

static const struct {
	const char *name, *prometheus, *help;
	bool per_exchange;
} metric_info[OTEL_M_COUNT] = {
	[OTEL_M_REQUEST] = { "http.client.request.duration",
			     "http_client_request_duration_seconds",
			     "Duration of HTTP client requests: from the "
			     "request's first byte sent to the response's "
			     "last byte received.",
			     true },
	[OTEL_M_CONNECTION] = { "http.client.connection.duration",
				"http_client_connection_duration_seconds",
				"Duration of the connections: from connect() "
				"to close().",
				false },
	[OTEL_M_CONNECT] = { "observe.connect.duration",
			     "observe_connect_duration_seconds",
			     "TCP connection establishment: connect() to "
			     "the connection known up.",
			     false },
	[OTEL_M_TLS] = { "observe.tls.handshake.duration",
			 "observe_tls_handshake_duration_seconds",
			 "TLS handshake: its first record sent to its last "
			 "received.",
			 false },
	[OTEL_M_WAIT] = { "observe.wait.duration",
			  "observe_wait_duration_seconds",
			  "Wait for the first byte: the request's last byte "
			  "sent to the response's first byte received.",
			  true },
	[OTEL_M_TRANSFER] = { "observe.transfer.duration",
			      "observe_transfer_duration_seconds",
			      "Transfer of the response: its first byte "
			      "received to its last.",
			      true },
};

/* The labels in the order shown, as OTLP attributes; Prometheus's name is
 * the same with '_' for '.'. */
enum { L_ADDRESS, L_PORT, L_PROGRAM, L_CLIENT, L_METHOD, L_STATUS, N_LABELS };
static const char *const label_keys[N_LABELS] = {
	"server.address", "server.port",	 "process.executable.name",
	"host.name",	  "http.request.method", "observe.status_class",
};

struct series {
	enum otel_metric metric;
	bool overflow;
	char *labels[N_LABELS]; /* NULL: none; server.port in decimal */
	uint64_t buckets[N_BOUNDS + 1];
	uint64_t count;
	double sum;
};

/* room for every series there may be: the labelled ones and one overflow
 * series per metric; the table at most half full */
#define SERIES_ROOM (OTEL_SERIES_MAX + OTEL_M_COUNT)
#define TABLE_SIZE 8192
_Static_assert(2 * SERIES_ROOM <= TABLE_SIZE, "the table too small");

struct otel_metrics {
	pthread_mutex_t lock;
	struct series *v; /* SERIES_ROOM of them */
	size_t n;
	size_t *table; /* index + 1 into v, 0 empty; open addressing */
};

struct otel_metrics *otel_metrics_new(void)
{
	struct otel_metrics *m = calloc(1, sizeof(*m));

	if (!m || !(m->v = calloc(SERIES_ROOM, sizeof(*m->v))) ||
	    !(m->table = calloc(TABLE_SIZE, sizeof(*m->table)))) {
		if (m)
			free(m->v);
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void otel_metrics_free(struct otel_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		for (int k = 0; k < N_LABELS; k++)
			free(m->v[i].labels[k]);
	free(m->v);
	free(m->table);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return (h ^ 0xff) * UINT64_C(0x100000001b3);
}

static uint64_t series_hash(enum otel_metric metric, bool overflow,
			    char *const *labels)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ (uint64_t)metric;

	h = (h ^ (overflow ? 1 : 0)) * UINT64_C(0x100000001b3);
	for (int k = 0; k < N_LABELS; k++)
		h = hash_str(h, labels[k]);
	return h;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool matches(const struct series *s, enum otel_metric metric,
		    bool overflow, char *const *labels)
{
	if (s->metric != metric || s->overflow != overflow)
		return false;
	for (int k = 0; k < N_LABELS; k++)
		if (!same(s->labels[k], labels[k]))
			return false;
	return true;
}

/* The series of metric with labels, or NULL when there is none yet (*at:
 * its slot in the table then). */
static struct series *lookup(struct otel_metrics *m, enum otel_metric metric,
			     bool overflow, char *const *labels, size_t *at)
{
	uint64_t h = series_hash(metric, overflow, labels);

	*at = h & (TABLE_SIZE - 1);
	for (; m->table[*at]; *at = (*at + 1) & (TABLE_SIZE - 1))
		if (matches(&m->v[m->table[*at] - 1], metric, overflow, labels))
			return &m->v[m->table[*at] - 1];
	return NULL;
}

/* The series of metric with labels, made (the labels copied) when new
 * and create; NULL when not there and not made (or out of memory). */
static struct series *find(struct otel_metrics *m, enum otel_metric metric,
			   bool overflow, char *const *labels, bool create)
{
	size_t at;
	struct series *s;

	if ((s = lookup(m, metric, overflow, labels, &at)) || !create ||
	    m->n == SERIES_ROOM)
		return s;
	s = &m->v[m->n];
	memset(s, 0, sizeof(*s));
	s->metric = metric;
	s->overflow = overflow;
	for (int k = 0; k < N_LABELS; k++)
		if (labels[k] && !(s->labels[k] = strdup(labels[k]))) {
			while (k--)
				free(s->labels[k]);
			return NULL;
		}
	m->table[at] = ++m->n;
	return s;
}

int otel_metrics_observe(struct otel_metrics *m, enum otel_metric which,
			 const struct otel_labels *l, double seconds)
{
	char port[16];
	char *labels[N_LABELS] = { 0 };
	struct series *s;
	size_t b = 0;
	int rc = -1;

	if (!(seconds >= 0))
		return 0;
	if (l->server_port > 0)
		snprintf(port, sizeof(port), "%d", l->server_port);
	labels[L_ADDRESS] = (char *)l->server_address;
	labels[L_PORT] = l->server_port > 0 ? port : NULL;
	labels[L_PROGRAM] = (char *)l->program;
	labels[L_CLIENT] = (char *)l->client;
	if (metric_info[which].per_exchange) {
		labels[L_METHOD] = (char *)l->method;
		labels[L_STATUS] = (char *)l->status_class;
	}
	for (int k = 0; k < N_LABELS; k++)
		if (labels[k] && !*labels[k])
			labels[k] = NULL;
	pthread_mutex_lock(&m->lock);
	s = find(m, which, false, labels, m->n < OTEL_SERIES_MAX);
	if (!s && m->n >= OTEL_SERIES_MAX) {
		/* one series too many: counted in the overflow series */
		char *none[N_LABELS] = { 0 };

		s = find(m, which, true, none, true);
	}
	if (s) {
		while (b < N_BOUNDS && seconds > bounds[b])
			b++;
		s->buckets[b]++;
		s->count++;
		s->sum += seconds;
		rc = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* --- Prometheus ----------------------------------------------------------- */

/* A label value's escapes: '\', '"' and newline, as the format says. */
static const char *prom_escape(const unsigned char *p, size_t len, char buf[16])
{
	(void)len;
	(void)buf;
	return *p == '\\'   ? "\\\\"
	       : *p == '"'  ? "\\\""
	       : *p == '\n' ? "\\n"
			    : NULL;
}

/* A label value: UTF-8 (U+FFFD for what is not), escaped. */
static void prom_value(FILE *out, const char *s)
{
	text_escaped(out, s, "\xef\xbf\xbd", prom_escape);
}

/* The series' labels, le (NULL: none) last: {a="x",le="0.1"}. */
static void prom_labels(FILE *out, const struct series *s, const char *le)
{
	bool any = false;

	for (int k = 0; k < N_LABELS; k++) {
		const char *key = label_keys[k];

		if (!s->labels[k])
			continue;
		fputc(any ? ',' : '{', out);
		for (; *key; key++)
			fputc(*key == '.' ? '_' : *key, out);
		fputs("=\"", out);
		prom_value(out, s->labels[k]);
		fputc('"', out);
		any = true;
	}
	if (s->overflow) {
		fputs(any ? "," : "{", out);
		fputs("otel_metric_overflow=\"true\"", out);
		any = true;
	}
	if (le)
		fprintf(out, "%sle=\"%s\"", any ? "," : "{", le);
	if (any || le)
		fputc('}', out);
}

void otel_metrics_prometheus(struct otel_metrics *m, FILE *out)
{
	pthread_mutex_lock(&m->lock);
	for (int metric = 0; metric < OTEL_M_COUNT; metric++) {
		const char *name = metric_info[metric].prometheus;

		fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", name,
			metric_info[metric].help, name);
		for (size_t i = 0; i < m->n; i++) {
			const struct series *s = &m->v[i];
			uint64_t cumulative = 0;

			if ((int)s->metric != metric)
				continue;
			for (size_t b = 0; b <= N_BOUNDS; b++) {
				char le[32];

				cumulative += s->buckets[b];
				if (b < N_BOUNDS)
					snprintf(le, sizeof(le), "%g",
						 bounds[b]);
				else
					snprintf(le, sizeof(le), "+Inf");
				fprintf(out, "%s_bucket", name);
				prom_labels(out, s, le);
				fprintf(out, " %" PRIu64 "\n", cumulative);
			}
			fprintf(out, "%s_sum", name);
			prom_labels(out, s, NULL);
			fprintf(out, " %.17g\n%s_count", s->sum, name);
			prom_labels(out, s, NULL);
			fprintf(out, " %" PRIu64 "\n", s->count);
		}
	}
	pthread_mutex_unlock(&m->lock);
}

/* --- OTLP ----------------------------------------------------------------- */

static void otlp_attributes(FILE *out, const struct series *s)
{
	bool any = false;

	fputs("\"attributes\":[", out);
	for (int k = 0; k < N_LABELS; k++) {
		if (!s->labels[k])
			continue;
		fprintf(out, "%s{\"key\":\"%s\",\"value\":", any ? "," : "",
			label_keys[k]);
		if (k == L_PORT)
			fprintf(out, "{\"intValue\":\"%s\"}}", s->labels[k]);
		else {
			fputs("{\"stringValue\":", out);
			json_string(out, s->labels[k]);
			fputs("}}", out);
		}
		any = true;
	}
	if (s->overflow)
		fprintf(out,
			"%s{\"key\":\"otel.metric.overflow\",\"value\":"
			"{\"boolValue\":true}}",
			any ? "," : "");
	fputc(']', out);
}

void otel_metrics_otlp(struct otel_metrics *m, FILE *out, const char *service,
		       int64_t start_ns, int64_t now_ns)
{
	bool first_metric = true;

	fputs("{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":"
	      "\"service.name\",\"value\":{\"stringValue\":",
	      out);
	json_string(out, service);
	fputs("}}]},\"scopeMetrics\":[{\"scope\":{\"name\":\"observe\","
	      "\"version\":\"" OBSERVE_VERSION "\"},\"metrics\":[",
	      out);
	pthread_mutex_lock(&m->lock);
	for (int metric = 0; metric < OTEL_M_COUNT; metric++) {
		bool first_point = true;

		for (size_t i = 0; i < m->n; i++) {
			const struct series *s = &m->v[i];

			if ((int)s->metric != metric)
				continue;
			if (first_point)
				fprintf(out,
					"%s\n{\"name\":\"%s\",\"description\":"
					"\"%s\",\"unit\":\"s\",\"histogram\":"
					"{\"aggregationTemporality\":2,"
					"\"dataPoints\":[",
					first_metric ? "" : ",",
					metric_info[metric].name,
					metric_info[metric].help);
			fputs(first_point ? "\n{" : ",\n{", out);
			first_point = first_metric = false;
			otlp_attributes(out, s);
			fprintf(out,
				",\"startTimeUnixNano\":\"%" PRId64
				"\",\"timeUnixNano\":\"%" PRId64
				"\",\"count\":\"%" PRIu64 "\",\"sum\":%.17g,"
				"\"bucketCounts\":[",
				start_ns, now_ns, s->count, s->sum);
			for (size_t b = 0; b <= N_BOUNDS; b++)
				fprintf(out, "%s\"%" PRIu64 "\"", b ? "," : "",
					s->buckets[b]);
			fputs("],\"explicitBounds\":[", out);
			for (size_t b = 0; b < N_BOUNDS; b++)
				fprintf(out, "%s%g", b ? "," : "", bounds[b]);
			fputs("]}", out);
		}
		if (!first_point)
			fputs("]}}", out);
	}
	pthread_mutex_unlock(&m->lock);
	fputs("\n]}]}]}\n", out);
}
