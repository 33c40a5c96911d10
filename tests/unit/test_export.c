/* test_export.c - `slicer export` on a database with known rows: CSV quoting
 * (RFC 4180) and line ends, JSON escaping, HAR timings and dates; the OTLP
 * export's ids, URLs, spans and errors. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "export.h"
#include "otlp.h"
#include "store.h"

static char dir[64], db_path[128], out_path[128];

/* Rows into the database (sql: its statements), which it creates. */
static void add_rows(const char *sql)
{
	char err[256], *msg = NULL;
	obs_store *s = obs_store_open(db_path, err, sizeof(err));

	if (!s)
		fail_msg("%s", err);
	if (sqlite3_exec(obs_store_db(s), sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s", msg);
	obs_store_close(s);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/observe-export.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	/* one connection: T1 = 2023-11-14T22:13:20Z, Te 0.5 ms; exchange 1
	 * Ts 0.1, Tw 9.9, Trecv 10 ms; exchange 2 sent, never answered */
	add_rows("INSERT INTO client VALUES(1, 'a,\"b\"\nc\\d\x01', 'h');"
		 "INSERT INTO process(id, client_id, pid, start_ns, program)"
		 " VALUES(1, 1, 10, 1, '/usr/bin/curl');"
		 "INSERT INTO connection(id, process_id, seq, peer_addr,"
		 " peer_port, t1_ns, t2_ns, t7_ns) VALUES(1, 1, 1,"
		 " '127.0.0.1', 8080, 1700000000000000000,"
		 " 1700000000000500000, 1700000000040000000);"
		 "INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns,"
		 " tfb_ns, t6_ns, ds, dr) VALUES"
		 " (1, 1, 1700000000001000000, 1700000000001100000,"
		 "  1700000000001200000, 1700000000011000000,"
		 "  1700000000021000000, 80, 1000),"
		 " (1, 2, 1700000000030000000, 1700000000030100000, NULL,"
		 "  NULL, NULL, 70, 0);");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Run `slicer export --format fmt [-w where]` and return the output. */
static char *run_export(const char *fmt, const char *where)
{
	char *argv[] = { "export",	"-d", db_path,	"--format",
			 (char *)fmt,	"-o", out_path, where ? "-w" : NULL,
			 (char *)where, NULL };
	int argc = where ? 9 : 7;
	static char buf[16384];
	FILE *f;
	size_t n;

	assert_int_equal(slicer_export(argc, argv), 0);
	f = fopen(out_path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_csv(void **state)
{
	char *out;

	(void)state;
	out = run_export("csv", NULL);
	/* header row, CRLF line ends, every column of exchange_metrics */
	assert_true(strncmp(out, "connection_id,seq,client,program,pid,", 37) ==
		    0);
	assert_non_null(strstr(
		out, ",end_class,complete,tls,tls_ms,dns_name,dns_ms,protocol,"
		     "stream,stream_error,interim_status,interim_ns,"
		     "interim_wait_ms,tunnel,websocket\r\n"));
	/* a field with a comma, quotes and a line break is quoted, quotes
	 * doubled; the line break stays inside the field */
	assert_non_null(strstr(
		out, "\r\n1,1,\"a,\"\"b\"\"\nc\\d\x01\",/usr/bin/curl,"));
	/* NULL is an empty field: exchange 2 has no tw_ms */
	assert_non_null(strstr(out, ",80,1000,0.500000,0.100000,9.900000,"));
	assert_non_null(strstr(out, ",70,0,0.500000,0.100000,,,,,40.000000,"));
}

static void test_jsonl(void **state)
{
	char *out, *second;

	(void)state;
	out = run_export("jsonl", NULL);
	second = strchr(out, '\n');
	assert_non_null(second);
	assert_non_null(strchr(second + 1, '\n')); /* two lines */
	assert_non_null(
		strstr(out, "\"client\":\"a,\\\"b\\\"\\nc\\\\d\\u0001\""));
	assert_non_null(strstr(out, "\"tw_ms\":9.900000"));
	assert_non_null(strstr(second, "\"tw_ms\":null"));
	assert_non_null(strstr(out, "\"method\":null"));
}

static void test_har(void **state)
{
	char *out;

	(void)state;
	out = run_export("har", NULL);
	assert_non_null(strstr(out, "{\"log\": {\"version\": \"1.2\""));
	/* exchange 1 starts at T1 and carries the connect time */
	assert_non_null(strstr(
		out,
		"\"startedDateTime\": \"2023-11-14T22:13:20.000Z\", \"time\": 20.500"));
	assert_non_null(strstr(
		out,
		"\"dns\": -1.000, \"connect\": 0.500, \"ssl\": -1.000, \"send\": 0.100, \"wait\": 9.900, \"receive\": 10.000"));
	/* exchange 2 starts at its T3, no connect, no answer */
	assert_non_null(strstr(
		out,
		"\"startedDateTime\": \"2023-11-14T22:13:20.030Z\", \"time\": 0.100"));
	assert_non_null(strstr(
		out,
		"\"connect\": -1.000, \"ssl\": -1.000, \"send\": 0.100, \"wait\": 0.000"));
	assert_non_null(strstr(out, "\"url\": \"http://127.0.0.1:8080/\""));
	assert_non_null(strstr(
		out,
		"\"serverIPAddress\": \"127.0.0.1\", \"connection\": \"1\""));
}

static void test_filtered(void **state)
{
	char *out;

	(void)state;
	out = run_export("jsonl", "dr > 0");
	assert_null(strchr(strchr(out, '\n') + 1, '\n')); /* one line */
	assert_non_null(strstr(out, "\"seq\":1,"));
}

/* HTTPS and HTTP/2: a TLS connection whose two streams overlap. Its
 * entries have https URLs with the request's host, httpVersion HTTP/2.0,
 * their stream ids; only the first carries connect and ssl. */
static void test_har_h2(void **state)
{
	char *out, *second;

	(void)state;
	add_rows("INSERT INTO connection(id, process_id, seq, peer_addr,"
		 " peer_port, t1_ns, t2_ns, t7_ns, tls, tls_start_ns,"
		 " tls_end_ns, protocol) VALUES(2, 1, 2, '127.0.0.1', 8443,"
		 " 1700000001000000000, 1700000001000500000,"
		 " 1700000001090000000, 1, 1700000001000600000,"
		 " 1700000001002600000, 'h2');"
		 "INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns,"
		 " tfb_ns, t6_ns, ds, dr, method, path, status, host, stream)"
		 " VALUES (2, 1, 1700000001003000000, 1700000001003000000,"
		 "  1700000001004000000, 1700000001005000000,"
		 "  1700000001006000000, 50, 300, 'GET', '/a', 200,"
		 "  'example.org:8443', 1),"
		 " (2, 2, 1700000001003500000, 1700000001003500000,"
		 "  1700000001004000000, 1700000001005000000,"
		 "  1700000001050000000, 30, 100000, 'GET', '/b', 404,"
		 "  'example.org:8443', 3);");
	out = run_export("har", "connection_id = 2");
	assert_non_null(strstr(out, "\"url\": \"https://example.org:8443/a\", "
				    "\"httpVersion\": \"HTTP/2.0\""));
	assert_non_null(strstr(out, "\"status\": 404, \"statusText\": \"\", "
				    "\"httpVersion\": \"HTTP/2.0\""));
	/* stream 1: connect = Te 0.5 + ssl 2 ms; stream 3: neither */
	assert_non_null(strstr(out, "\"connect\": 2.500, \"ssl\": 2.000, "
				    "\"send\": 0.000, \"wait\": 2.000"));
	second = strstr(out, "\"url\": \"https://example.org:8443/b\"");
	assert_non_null(second);
	assert_non_null(strstr(second, "\"connect\": -1.000, \"ssl\": -1.000, "
				       "\"send\": 0.000, \"wait\": 1.500, "
				       "\"receive\": 45.000"));
	assert_non_null(strstr(out, "\"_stream\": 1}"));
	assert_non_null(strstr(second, "\"_stream\": 3}"));
}

static void hex(char *buf, const uint8_t *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
}

/* The ids are the documented hash of the identity (docs/otel.md; these
 * values were computed from that rule by a separate Python script), the
 * same every time, one trace per connection, one span id per span. */
static void test_otlp_ids(void **state)
{
	struct otlp_identity id = { "lab-a", 4242, 1700000000000000000, 3, 2 };
	struct otlp_identity other = id;
	uint8_t trace[16], trace2[16], span[8], span2[8];
	char text[40];

	(void)state;
	otlp_trace_id(&id, trace);
	hex(text, trace, 16);
	assert_string_equal(text, "288aec75a1efcc37376de2010d05ed51");
	otlp_span_id(&id, OTLP_SPAN_EXCHANGE, span);
	hex(text, span, 8);
	assert_string_equal(text, "e111bf9b45f4f991");
	otlp_span_id(&id, OTLP_SPAN_DNS, span);
	hex(text, span, 8);
	assert_string_equal(text, "c9889946bc2d9d18");
	otlp_span_id(&id, OTLP_SPAN_CONNECT, span);
	hex(text, span, 8);
	assert_string_equal(text, "fb4b322d34d38495");
	otlp_span_id(&id, OTLP_SPAN_TLS, span);
	hex(text, span, 8);
	assert_string_equal(text, "798429f22ee3486b");

	/* the connection's other exchanges: same trace, other spans */
	other.exchange_seq = 3;
	otlp_trace_id(&other, trace2);
	assert_memory_equal(trace, trace2, 16);
	otlp_span_id(&id, OTLP_SPAN_EXCHANGE, span);
	otlp_span_id(&other, OTLP_SPAN_EXCHANGE, span2);
	assert_memory_not_equal(span, span2, 8);
	/* every part of the connection's identity makes another trace */
	for (int part = 0; part < 4; part++) {
		other = id;
		if (part == 0)
			other.client = "lab-b";
		else if (part == 1)
			other.pid++;
		else if (part == 2)
			other.process_start_ns++;
		else
			other.connection_seq++;
		otlp_trace_id(&other, trace2);
		assert_memory_not_equal(trace, trace2, 16);
		otlp_span_id(&other, OTLP_SPAN_EXCHANGE, span2);
		assert_memory_not_equal(span, span2, 8);
	}
	/* the client name ends where its NUL is: "a" + pid is not "a1" */
	other = id;
	other.client = "";
	otlp_trace_id(&other, trace2);
	assert_memory_not_equal(trace, trace2, 16);
	assert_true(memcmp(trace2, (uint8_t[16]){ 0 }, 16) != 0);
}

/* url.full, server.address and server.port of a request */
static void test_otlp_target(void **state)
{
	static const struct {
		bool tls;
		const char *host, *dns_name, *peer, *path;
		int peer_port;
		const char *url, *address;
		int port;
	} cases[] = {
		/* the Host header's origin; its port, else the scheme's */
		{ false, "example.org:8080", NULL, "10.0.0.1", "/a/b", 8080,
		  "http://example.org:8080/a/b", "example.org", 8080 },
		{ true, "example.org", NULL, "10.0.0.1", "/", 443,
		  "https://example.org/", "example.org", 443 },
		{ true, "example.org:443", NULL, "10.0.0.1", "/x", 443,
		  "https://example.org/x", "example.org", 443 },
		/* no userinfo, no query, no fragment, ever */
		{ false, "user:secret@example.org:81", NULL, "10.0.0.1",
		  "/p?token=secret#frag", 81, "http://example.org:81/p",
		  "example.org", 81 },
		{ false, "example.org?token=secret", NULL, "10.0.0.1", "/p#x?y",
		  80, "http://example.org/p", "example.org", 80 },
		{ false, "example.org", NULL, "10.0.0.1", "?only=query", 80, "",
		  "example.org", 80 },
		/* IPv6: brackets in the URL only */
		{ false, "[::1]:8443", NULL, "::1", "/v6", 8443,
		  "http://[::1]:8443/v6", "::1", 8443 },
		{ false, NULL, NULL, "::1", "/v6", 8080, "http://[::1]:8080/v6",
		  "::1", 8080 },
		/* no Host: the name looked up, else the peer; its port */
		{ true, NULL, "example.net", "10.0.0.2", "/n", 8443,
		  "https://example.net:8443/n", "example.net", 8443 },
		{ false, NULL, NULL, "10.0.0.2", "/n", 80, "http://10.0.0.2/n",
		  "10.0.0.2", 80 },
		/* absolute form (to a proxy): the URL's own origin */
		{ false, "proxy.lab:3128", NULL, "10.0.0.3",
		  "http://u:p@origin.example/doc?q=1", 3128,
		  "http://origin.example/doc", "origin.example", 80 },
		{ false, NULL, NULL, "10.0.0.3", "HTTPS://origin.example:8443",
		  3128, "https://origin.example:8443/", "origin.example",
		  8443 },
		/* no path known, or not a path: no url.full */
		{ true, NULL, NULL, "10.0.0.4", NULL, 443, "", "10.0.0.4",
		  443 },
		{ false, "example.org", NULL, "10.0.0.4", "*", 80, "",
		  "example.org", 80 },
		{ false, NULL, NULL, NULL, "/", 0, "", "", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct otlp_target t;

		otlp_target(&t, cases[i].tls, cases[i].host, cases[i].dns_name,
			    cases[i].peer, cases[i].peer_port, cases[i].path);
		assert_string_equal(t.url, cases[i].url);
		assert_string_equal(t.address, cases[i].address);
		assert_int_equal(t.port, cases[i].port);
	}
}

/* The spans of a TLS connection: its first exchange starts at the DNS
 * lookup and holds its three phases; the second, cut by a reset, has
 * error.type "reset"; nothing of a query or of userinfo in the file. */
static void test_otlp(void **state)
{
	char *out, *second;

	(void)state;
	add_rows("INSERT INTO connection(id, process_id, seq, peer_addr,"
		 " peer_port, t1_ns, t2_ns, t7_ns, tls, tls_version,"
		 " tls_start_ns, tls_end_ns, protocol, dns_name,"
		 " dns_start_ns, dns_end_ns, end_class) VALUES(3, 1, 3,"
		 " '10.0.0.9', 8443, 1700000002000000000,"
		 " 1700000002001000000, 1700000002090000000, 1, '1.3',"
		 " 1700000002001100000, 1700000002003000000, 'http/1.1',"
		 " 'api.example', 1700000001999000000,"
		 " 1700000001999500000, 'reset');"
		 "INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns,"
		 " tfb_ns, t6_ns, ds, dr, method, path, status, host) VALUES"
		 " (3, 1, 1700000002004000000, 1700000002004100000,"
		 "  1700000002004200000, 1700000002010000000,"
		 "  1700000002020000000, 90, 2000, 'GET', '/v1/x?key=SECRET',"
		 "  200, 'user:PASSWORD@api.example:8443'),"
		 " (3, 2, 1700000002030000000, 1700000002030100000,"
		 "  1700000002030200000, NULL, NULL, 95, 0, 'BREW',"
		 "  '/pot#frag', NULL, 'api.example:8443');");
	out = run_export("otlp", "connection_id = 3");
	assert_null(strstr(out, "SECRET"));
	assert_null(strstr(out, "PASSWORD"));
	assert_null(strstr(out, "frag"));
	assert_non_null(strstr(
		out,
		"{\"resourceSpans\":[\n{\"resource\":{\"attributes\":["
		"{\"key\":\"service.name\",\"value\":{\"stringValue\":"
		"\"curl\"}},{\"key\":\"host.name\",\"value\":"
		"{\"stringValue\":\"a,\\\"b\\\"\\nc\\\\d\\u0001\"}},"
		"{\"key\":\"process.pid\",\"value\":{\"intValue\":\"10\"}}"));
	assert_non_null(strstr(out, "\"scope\":{\"name\":\"observe\","
				    "\"version\":\"" OBSERVE_VERSION "\"}"));
	/* exchange 1: from the lookup's start to T6, its phases inside */
	assert_non_null(strstr(out,
			       "\"name\":\"GET\",\"kind\":3,"
			       "\"startTimeUnixNano\":\"1700000001999000000\","
			       "\"endTimeUnixNano\":\"1700000002020000000\""));
	assert_non_null(strstr(out, "{\"key\":\"url.full\",\"value\":"
				    "{\"stringValue\":"
				    "\"https://api.example:8443/v1/x\"}}"));
	assert_non_null(strstr(out, "{\"key\":\"network.protocol.version\","
				    "\"value\":{\"stringValue\":\"1.1\"}}"));
	assert_non_null(strstr(out, "\"events\":[{\"timeUnixNano\":"
				    "\"1700000002004100000\",\"name\":"
				    "\"request sent\"},{\"timeUnixNano\":"
				    "\"1700000002010000000\",\"name\":"
				    "\"first byte received\"}]}"));
	assert_non_null(strstr(out,
			       "\"name\":\"DNS lookup\",\"kind\":1,"
			       "\"startTimeUnixNano\":\"1700000001999000000\","
			       "\"endTimeUnixNano\":\"1700000001999500000\""));
	assert_non_null(strstr(out,
			       "\"name\":\"socket connect\",\"kind\":1,"
			       "\"startTimeUnixNano\":\"1700000002000000000\","
			       "\"endTimeUnixNano\":\"1700000002001000000\""));
	assert_non_null(strstr(out,
			       "\"name\":\"TLS client handshake\","
			       "\"kind\":1,\"startTimeUnixNano\":"
			       "\"1700000002001100000\",\"endTimeUnixNano\":"
			       "\"1700000002003000000\""));
	/* exchange 2: an unknown method, no answer, the connection reset */
	second = strstr(out, "\"name\":\"HTTP\"");
	assert_non_null(second);
	assert_non_null(strstr(second,
			       "\"startTimeUnixNano\":"
			       "\"1700000002030000000\",\"endTimeUnixNano\":"
			       "\"1700000002030200000\""));
	assert_non_null(strstr(second,
			       "{\"key\":\"http.request.method\","
			       "\"value\":{\"stringValue\":\"_OTHER\"}},"
			       "{\"key\":\"http.request.method_original\","
			       "\"value\":{\"stringValue\":\"BREW\"}}"));
	assert_non_null(strstr(second, "{\"key\":\"error.type\",\"value\":"
				       "{\"stringValue\":\"reset\"}}]"));
	assert_non_null(strstr(second, "\"status\":{\"code\":2}}"));
	assert_null(strstr(second, "DNS lookup"));
	/* exchange 1 was answered and is not the last: no error (a span a
	 * line) */
	*second = '\0';
	assert_null(strstr(out, "\"status\""));
}

/* An HTTP/2 stream reset by the server, a 5xx, an exchange still in
 * flight; an export with nothing in it is still a request. */
static void test_otlp_errors(void **state)
{
	char *out;

	(void)state;
	/* test_har_h2's connection: streams 1 (200) and 3 (404) */
	out = run_export("otlp", "connection_id = 2");
	assert_non_null(strstr(out, "{\"key\":\"network.protocol.version\","
				    "\"value\":{\"stringValue\":\"2\"}}"));
	assert_non_null(strstr(out, "{\"key\":\"error.type\",\"value\":"
				    "{\"stringValue\":\"404\"}}]"));
	assert_non_null(strstr(out, "{\"key\":\"url.full\",\"value\":"
				    "{\"stringValue\":"
				    "\"https://example.org:8443/b\"}}"));
	/* setup's connection, still open: exchange 2 unanswered, no error */
	out = run_export("otlp", "connection_id = 1");
	assert_null(strstr(out, "error.type"));
	assert_null(strstr(out, "url.full")); /* no path known */
	assert_non_null(strstr(out,
			       "\"startTimeUnixNano\":"
			       "\"1700000000030000000\",\"endTimeUnixNano\":"
			       "\"1700000000030100000\""));
	out = run_export("otlp", "dr < 0");
	assert_string_equal(out, "{\"resourceSpans\":[\n]}\n");
}

/* Interim responses and a tunnel (schema version 4): JSON Lines carries
 * the columns; HAR, which has no field for them, "_interim" with the
 * status and the wait from T4 (negative for a 100 Continue, before the
 * body); OTLP an "interim response" event with its status. */
static void test_interim(void **state)
{
	char *out, *put, *get;

	(void)state;
	add_rows("INSERT INTO connection(id, process_id, seq, peer_addr,"
		 " peer_port, t1_ns, t2_ns, t7_ns, tunnel, websocket)"
		 " VALUES(4, 1, 4, '127.0.0.1', 3128, 1700000003000000000,"
		 " 1700000003000500000, 1700000003090000000,"
		 " 'in.example:443', 0);"
		 "INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns,"
		 " tfb_ns, t6_ns, ds, dr, method, path, status, host,"
		 " interim_status, interim_ns) VALUES"
		 " (4, 1, 1700000003001000000, 1700000003001100000,"
		 "  1700000003001200000, 1700000003002000000,"
		 "  1700000003002000000, 40, 39, 'CONNECT', NULL, 200,"
		 "  'in.example:443', NULL, NULL),"
		 " (4, 2, 1700000003010000000, 1700000003013000000,"
		 "  1700000003013100000, 1700000003014000000,"
		 "  1700000003014000000, 900, 60, 'PUT', '/up', 201,"
		 "  'in.example', 100, 1700000003011000000),"
		 " (4, 3, 1700000003020000000, 1700000003020100000,"
		 "  1700000003020200000, 1700000003025000000,"
		 "  1700000003026000000, 50, 500, 'GET', '/', 200,"
		 "  'in.example', 103, 1700000003021100000);");

	out = run_export("jsonl", "connection_id = 4 AND seq = 3");
	assert_non_null(strstr(out, "\"interim_status\":103,"
				    "\"interim_ns\":1700000003021100000,"
				    "\"interim_wait_ms\":1.000000,"
				    "\"tunnel\":\"in.example:443\","
				    "\"websocket\":0}"));

	out = run_export("har", "connection_id = 4");
	put = strstr(out, "\"url\": \"http://in.example/up\"");
	get = strstr(out, "\"url\": \"http://in.example/\"");
	assert_non_null(put);
	assert_non_null(get);
	assert_non_null(strstr(
		put, "\"_interim\": {\"status\": 100, \"wait\": -2.000}}"));
	assert_non_null(strstr(
		get, "\"_interim\": {\"status\": 103, \"wait\": 1.000}}"));
	/* the CONNECT, the entry before the PUT's, had none */
	assert_true(strstr(out, "\"CONNECT\"") < put);
	assert_true(strstr(out, "\"_interim\"") > put);

	out = run_export("otlp", "connection_id = 4 AND seq = 3");
	assert_non_null(strstr(out, "\"events\":[{\"timeUnixNano\":"
				    "\"1700000003020100000\",\"name\":"
				    "\"request sent\"},{\"timeUnixNano\":"
				    "\"1700000003021100000\",\"name\":"
				    "\"interim response\",\"attributes\":["
				    "{\"key\":\"http.response.status_code\","
				    "\"value\":{\"intValue\":\"103\"}}]},"
				    "{\"timeUnixNano\":\"1700000003025000000\","
				    "\"name\":\"first byte received\"}]}"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_har),
		cmocka_unit_test(test_filtered),
		cmocka_unit_test(test_har_h2),
		cmocka_unit_test(test_otlp_ids),
		cmocka_unit_test(test_otlp_target),
		cmocka_unit_test(test_otlp),
		cmocka_unit_test(test_otlp_errors),
		cmocka_unit_test(test_interim),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
