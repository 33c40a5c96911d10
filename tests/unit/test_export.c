/* test_export.c - `slicer export` on a database with known rows: CSV quoting
 * (RFC 4180) and line ends, JSON escaping, HAR timings and dates. */
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
#include "store.h"

static char dir[64], db_path[128], out_path[128];

static int setup(void **state)
{
	char err[256], *msg = NULL;
	obs_store *s;

	(void)state;
	strcpy(dir, "/tmp/observe-export.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	s = obs_store_open(db_path, err, sizeof(err));
	assert_non_null(s);
	/* one connection: T1 = 2023-11-14T22:13:20Z, Te 0.5 ms; exchange 1
	 * Ts 0.1, Tw 9.9, Trecv 10 ms; exchange 2 sent, never answered */
	if (sqlite3_exec(
		    obs_store_db(s),
		    "INSERT INTO client VALUES(1, 'a,\"b\"\nc\\d\x01', 'h');"
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
		    "  NULL, NULL, 70, 0);",
		    NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s", msg);
	obs_store_close(s);
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
		     "stream,stream_error\r\n"));
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
	char err[256], *msg = NULL, *out, *second;
	obs_store *s;

	(void)state;
	s = obs_store_open(db_path, err, sizeof(err));
	assert_non_null(s);
	if (sqlite3_exec(
		    obs_store_db(s),
		    "INSERT INTO connection(id, process_id, seq, peer_addr,"
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
		    "  'example.org:8443', 3);",
		    NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s", msg);
	obs_store_close(s);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv),    cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_har),    cmocka_unit_test(test_filtered),
		cmocka_unit_test(test_har_h2),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
