/* test_otel.c - otel/: OTEL_EXPORTER_OTLP_HEADERS as the specification
 * writes it, Retry-After in each of its forms, a receiver's answer, and
 * the metrics' buckets, names and escapes in Prometheus's format and in
 * OTLP's. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "headers.h"
#include "metrics.h"
#include "response.h"

static void test_headers(void **state)
{
	struct otlp_headers h;
	char err[256];

	(void)state;
	assert_int_equal(otlp_headers_parse(" api-key = a%20b%2Cc , x=1,,", &h,
					    err, sizeof(err)),
			 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.lines[0], "api-key: a b,c");
	assert_string_equal(h.lines[1], "x: 1");
	otlp_headers_free(&h);
	/* refusals name the entry, never show the value */
	assert_int_equal(otlp_headers_parse("a=1,b=SECRET%0d%0aX: y", &h, err,
					    sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "entry 2"));
	assert_null(strstr(err, "SECRET"));
	assert_int_equal(h.n, 0);
	assert_int_equal(otlp_headers_parse("novalue", &h, err, sizeof(err)),
			 -1);
	assert_int_equal(otlp_headers_parse("bad key=1", &h, err, sizeof(err)),
			 -1);
	assert_int_equal(
		otlp_headers_parse("Content-Type=x", &h, err, sizeof(err)), -1);
	assert_int_equal(otlp_headers_parse("k=%4", &h, err, sizeof(err)), -1);
}

static void test_retry_after(void **state)
{
	/* Sun, 06 Nov 1994 08:49:37 GMT */
	const time_t then = 784111777;
	long s = -1;

	(void)state;
	assert_int_equal(otlp_retry_after(" 7 ", 3, then, &s), 0);
	assert_int_equal(s, 7);
	assert_int_equal(
		otlp_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", 29, then, &s),
		0);
	assert_int_equal(s, 30);
	assert_int_equal(otlp_retry_after("Sunday, 06-Nov-94 08:49:47 GMT", 30,
					  then, &s),
			 0);
	assert_int_equal(s, 10);
	assert_int_equal(
		otlp_retry_after("Sun Nov  6 08:49:40 1994", 24, then, &s), 0);
	assert_int_equal(s, 3);
	/* a date past is now; a huge delay is capped */
	assert_int_equal(
		otlp_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", 29, then, &s),
		0);
	assert_int_equal(s, 0);
	assert_int_equal(otlp_retry_after("99999999999999999999", 20, then, &s),
			 0);
	assert_int_equal(s, OTLP_RETRY_AFTER_MAX);
	assert_int_equal(otlp_retry_after("-1", 2, then, &s), -1);
	assert_int_equal(otlp_retry_after("soon", 4, then, &s), -1);
}

static void test_answer(void **state)
{
	static const char partial[] =
		"{\"partialSuccess\":{\"rejectedSpans\":\"3\","
		"\"errorMessage\":\"bad\\nspan \\u00e9\"},\"x\":[1,{}]}";
	static const char status[] =
		"{\"code\":3,\"message\":\"no \\\"x\\\"\"}";
	struct otlp_answer a;

	(void)state;
	assert_int_equal(otlp_answer_parse(partial, strlen(partial), &a), 0);
	assert_true(a.partial);
	assert_int_equal(a.rejected, 3);
	assert_string_equal(a.error_message, "bad?span \xc3\xa9");
	assert_int_equal(otlp_answer_parse(status, strlen(status), &a), 0);
	assert_false(a.partial);
	assert_string_equal(a.message, "no \"x\"");
	assert_int_equal(otlp_answer_parse("{\"a\":", 5, &a), -1);
	assert_int_equal(otlp_answer_parse("", 0, &a), -1);
}

static char *render(struct otel_metrics *m, bool prometheus)
{
	char *text = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&text, &n);

	if (prometheus)
		otel_metrics_prometheus(m, out);
	else
		otel_metrics_otlp(m, out, "test", 1, 2);
	fclose(out);
	return text;
}

static void test_metrics(void **state)
{
	struct otel_metrics *m = otel_metrics_new();
	struct otel_labels l = {
		"h\"o\\st\n", 8080, "curl", "vm", "GET", "2xx"
	};
	char *text;

	(void)state;
	assert_non_null(m);
	assert_int_equal(otel_metrics_observe(m, OTEL_M_REQUEST, &l, 0.005), 0);
	assert_int_equal(otel_metrics_observe(m, OTEL_M_REQUEST, &l, 0.3), 0);
	assert_int_equal(otel_metrics_observe(m, OTEL_M_REQUEST, &l, 11), 0);
	assert_int_equal(otel_metrics_observe(m, OTEL_M_REQUEST, &l, -1), 0);
	text = render(m, true);
	/* le is inclusive; cumulative; the label escaped */
	assert_non_null(strstr(
		text,
		"http_client_request_duration_seconds_bucket{server_address="
		"\"h\\\"o\\\\st\\n\",server_port=\"8080\",process_executable_"
		"name=\"curl\",host_name=\"vm\",http_request_method=\"GET\","
		"observe_status_class=\"2xx\",le=\"0.005\"} 1\n"));
	assert_non_null(strstr(text, ",le=\"0.25\"} 1\n"));
	assert_non_null(strstr(text, ",le=\"0.5\"} 2\n"));
	assert_non_null(strstr(text, ",le=\"10\"} 2\n"));
	assert_non_null(strstr(text, ",le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(text, "observe_status_class=\"2xx\"} 3\n"));
	assert_non_null(strstr(
		text, "# TYPE observe_wait_duration_seconds histogram\n"));
	free(text);
	text = render(m, false);
	assert_non_null(strstr(text, "\"bucketCounts\":[\"1\",\"0\",\"0\","
				     "\"0\",\"0\",\"0\",\"0\",\"1\""));
	assert_non_null(strstr(text, "\"count\":\"3\""));
	assert_non_null(strstr(text, "{\"key\":\"server.port\",\"value\":{"
				     "\"intValue\":\"8080\"}}"));
	free(text);
	/* past OTEL_SERIES_MAX series, the overflow series */
	for (int i = 0; i < OTEL_SERIES_MAX + 10; i++) {
		char name[32];

		snprintf(name, sizeof(name), "host%d", i);
		l.server_address = name;
		assert_int_equal(otel_metrics_observe(m, OTEL_M_WAIT, &l, 0.01),
				 0);
	}
	text = render(m, true);
	assert_non_null(strstr(text, "observe_wait_duration_seconds_count{"
				     "otel_metric_overflow=\"true\"}"));
	free(text);
	otel_metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
