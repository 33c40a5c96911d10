/* export.c - `slicer export`: the exchanges of a database as CSV (RFC 4180),
 * JSON Lines, HAR 1.2 or OpenTelemetry traces (OTLP/JSON, otlp.c),
 * optionally filtered.
 *
 * CSV and JSON Lines carry every column of the view exchange_metrics, one
 * row per exchange. HAR maps the times as the measurement model says:
 * connect = Te (first exchange of a connection; plus the TLS handshake
 * on a TLS connection), ssl = the handshake (tls_end - tls_start), send =
 * Ts, wait = Tw, receive = T6 - TFB, dns = the getaddrinfo() the
 * connection was the first to use (else -1), blocked = -1, time = the sum of
 * the non-negative phases, startedDateTime = T3 (T1 for a connection's first
 * exchange). An HTTP/2 stream is an entry of its own, timed as its
 * exchange (docs/measurement-model.md): its streams overlap, and only the
 * connection's first carries dns, connect and ssl. The URL's scheme is
 * https on a TLS connection, its host the request's (:authority or Host),
 * else the name looked up, else the peer's address; httpVersion HTTP/2.0
 * on h2 and h2c connections. The first interim (1xx) response, for which
 * HAR has no field, is "_interim": its status and its wait from T4. */
#define _GNU_SOURCE
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "json.h"
#include "options.h"
#include "otlp.h"
#include "store.h"
#include "text.h"

enum format { FMT_NONE, FMT_CSV, FMT_JSONL, FMT_HAR, FMT_OTLP };

static void export_usage(FILE *out)
{
	fprintf(out,
		"usage: slicer export [-d DB] --format csv|jsonl|har|otlp "
		"[FILTER...] [-o FILE]\n"
		"\n"
		"Writes the exchanges of DB, one per row (CSV with a header row,\n"
		"JSON Lines), one HAR 1.2 entry each, or one OpenTelemetry span\n"
		"each (otlp: an OTLP/JSON traces request, docs/otel.md).\n"
		"\n"
		"  -d, --db DB          database (default ./observe.db)\n"
		"  -f, --format FMT     csv, jsonl, har or otlp\n"
		"  -o, --output FILE    write to FILE (default: standard output)\n"
		"  -w, --where EXPR     SQL boolean expression over the columns of\n"
		"                       exchange_metrics, e.g. 'dr > 10000 and tr_ms > 50'\n"
		"      --peer HOST[:PORT], --program NAME, --since TIME,\n"
		"      --until TIME, --min-bytes N, --pid PID   the common\n"
		"                       filters\n"
		"\n"
		"Examples:\n"
		"  slicer export -d run.db --format csv -o run.csv\n"
		"  slicer export -d run.db --format har --peer 127.0.0.1:8080 -o run.har\n"
		"  slicer export -d run.db --format otlp -o run.otlp.json\n"
		"  (open a .har in Chromium or Firefox: developer tools, Network tab,\n"
		"   drop the file on it or use its import button; post an .otlp.json\n"
		"   to a collector: curl -H 'Content-Type: application/json'\n"
		"   --data @run.otlp.json http://COLLECTOR:4318/v1/traces)\n");
}

/* One column's value as JSON. */
static void json_value(FILE *out, sqlite3_stmt *st, int col)
{
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_NULL:
		fputs("null", out);
		break;
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(st, col));
		break;
	case SQLITE_FLOAT:
		fprintf(out, "%.6f", sqlite3_column_double(st, col));
		break;
	default:
		json_string(out, (const char *)sqlite3_column_text(st, col));
	}
}

static void write_csv_row(FILE *out, sqlite3_stmt *st, bool header,
			  unsigned flags)
{
	int n = sqlite3_column_count(st);

	for (int i = 0; i < n; i++) {
		char num[64];

		if (i)
			fputc(',', out);
		if (header) {
			text_csv_cell(out, sqlite3_column_name(st, i), flags);
			continue;
		}
		switch (sqlite3_column_type(st, i)) {
		case SQLITE_NULL:
			break;
		case SQLITE_INTEGER:
			fprintf(out, "%lld",
				(long long)sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			snprintf(num, sizeof(num), "%.6f",
				 sqlite3_column_double(st, i));
			fputs(num, out);
			break;
		default:
			text_csv_cell(out,
				      (const char *)sqlite3_column_text(st, i),
				      flags);
		}
	}
	fputs("\r\n", out);
}

static void write_jsonl_row(FILE *out, sqlite3_stmt *st)
{
	int n = sqlite3_column_count(st);

	fputc('{', out);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		json_string(out, sqlite3_column_name(st, i));
		fputc(':', out);
		json_value(out, st, i);
	}
	fputs("}\n", out);
}

/* Column index by name in the result (-1 if absent). */
static int col(sqlite3_stmt *st, const char *name)
{
	for (int i = 0; i < sqlite3_column_count(st); i++)
		if (strcmp(sqlite3_column_name(st, i), name) == 0)
			return i;
	return -1;
}

static double ms_or(sqlite3_stmt *st, int c, double dflt)
{
	return c < 0 || sqlite3_column_type(st, c) == SQLITE_NULL
		       ? dflt
		       : sqlite3_column_double(st, c);
}

static const char *text_or(sqlite3_stmt *st, int c, const char *dflt)
{
	const unsigned char *t = c < 0 ? NULL : sqlite3_column_text(st, c);

	return t ? (const char *)t : dflt;
}

static void iso8601(char *buf, size_t size, int64_t ns)
{
	time_t secs = (time_t)(ns / 1000000000);
	struct tm tm;

	char date[32];

	gmtime_r(&secs, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%.20s.%03dZ", date,
		 (int)(ns % 1000000000 / 1000000));
}

/* The entry's first interim (1xx) response, which HAR has no field for:
 * "_interim": {"status": 103, "wait": ms from T4, when known}. */
static void write_har_interim(FILE *out, sqlite3_stmt *st)
{
	int c_status = col(st, "interim_status"),
	    c_wait = col(st, "interim_wait_ms");

	if (c_status < 0 || sqlite3_column_type(st, c_status) == SQLITE_NULL)
		return;
	fprintf(out, ", \"_interim\": {\"status\": %d",
		sqlite3_column_int(st, c_status));
	if (c_wait >= 0 && sqlite3_column_type(st, c_wait) != SQLITE_NULL)
		fprintf(out, ", \"wait\": %.3f",
			sqlite3_column_double(st, c_wait));
	fputc('}', out);
}

static void write_har_entry(FILE *out, sqlite3_stmt *st, bool first)
{
	int seq = sqlite3_column_int(st, col(st, "seq"));
	int c_t1 = col(st, "t1_ns"), c_t3 = col(st, "t3_ns"),
	    c_t5 = col(st, "t5_ns");
	double connect = seq == 1 ? ms_or(st, col(st, "te_ms"), -1) : -1;
	/* HAR: ssl is the TLS handshake, and connect includes it */
	double ssl = seq == 1 && connect >= 0 ? ms_or(st, col(st, "tls_ms"), -1)
					      : -1;
	bool tls = sqlite3_column_int(st, col(st, "tls")) != 0;
	/* HAR: dns is the lookup this connection was the first to use */
	double dns = seq == 1 ? ms_or(st, col(st, "dns_ms"), -1) : -1;
	const char *dns_name = text_or(st, col(st, "dns_name"), NULL);
	double send = ms_or(st, col(st, "ts_ms"), 0);
	double wait = ms_or(st, col(st, "tw_ms"), 0);
	double receive = ms_or(st, col(st, "trecv_ms"), 0);
	double total;

	if (ssl >= 0)
		connect += ssl;
	total = send + wait + receive + (connect > 0 ? connect : 0) +
		(dns > 0 ? dns : 0);
	int64_t start = sqlite3_column_int64(
		st,
		seq == 1 || sqlite3_column_type(st, c_t3) == SQLITE_NULL
			? (sqlite3_column_type(st, c_t1) != SQLITE_NULL ? c_t1
									: c_t5)
			: c_t3);
	const char *peer = text_or(st, col(st, "peer_addr"), "");
	const char *host = text_or(st, col(st, "host"), NULL);
	const char *path = text_or(st, col(st, "path"), "/");
	const char *method = text_or(st, col(st, "method"), "");
	const char *protocol = text_or(st, col(st, "protocol"), "");
	const char *version = strncmp(protocol, "h2", 2) == 0 ? "HTTP/2.0"
			      : *method || *protocol	      ? "HTTP/1.1"
							      : "";
	int c_stream = col(st, "stream");
	int port = sqlite3_column_int(st, col(st, "peer_port"));
	int status = sqlite3_column_int(st, col(st, "status"));
	int64_t ds = sqlite3_column_int64(st, col(st, "ds"));
	int64_t dr = sqlite3_column_int64(st, col(st, "dr"));
	char when[40], *url = NULL;

	iso8601(when, sizeof(when), start);
	if (host)
		url = sqlite3_mprintf("%s://%s%s", tls ? "https" : "http", host,
				      path);
	else if (dns_name)
		url = sqlite3_mprintf("%s://%s:%d%s", tls ? "https" : "http",
				      dns_name, port, path);
	else if (strchr(peer, ':'))
		url = sqlite3_mprintf("%s://[%s]:%d%s", tls ? "https" : "http",
				      peer, port, path);
	else
		url = sqlite3_mprintf("%s://%s:%d%s", tls ? "https" : "http",
				      peer, port, path);
	fprintf(out, "%s\n    {\"startedDateTime\": \"%s\", \"time\": %.3f,\n",
		first ? "" : ",", when, total);
	fputs("     \"request\": {\"method\": ", out);
	json_string(out, method);
	fputs(", \"url\": ", out);
	json_string(out, url ? url : "");
	fprintf(out,
		", \"httpVersion\": \"%s\", \"cookies\": [], \"headers\": [], "
		"\"queryString\": [], \"headersSize\": -1, \"bodySize\": %" PRId64
		"},\n",
		version, ds);
	fprintf(out,
		"     \"response\": {\"status\": %d, \"statusText\": \"\", "
		"\"httpVersion\": \"%s\", \"cookies\": [], \"headers\": [], "
		"\"content\": {\"size\": %" PRId64 ", \"mimeType\": \"\"}, "
		"\"redirectURL\": \"\", \"headersSize\": -1, \"bodySize\": %" PRId64
		"},\n",
		status, status ? version : "", dr, dr);
	fprintf(out,
		"     \"cache\": {}, \"timings\": {\"blocked\": -1, "
		"\"dns\": %.3f, \"connect\": %.3f, \"ssl\": %.3f, "
		"\"send\": %.3f, \"wait\": %.3f, \"receive\": %.3f},\n",
		dns, connect, ssl, send, wait, receive);
	fputs("     \"serverIPAddress\": ", out);
	json_string(out, peer);
	fprintf(out, ", \"connection\": \"%lld\", \"_program\": ",
		(long long)sqlite3_column_int64(st, col(st, "connection_id")));
	json_string(out, text_or(st, col(st, "program"), ""));
	fprintf(out, ", \"_pid\": %d", sqlite3_column_int(st, col(st, "pid")));
	if (c_stream >= 0 && sqlite3_column_type(st, c_stream) != SQLITE_NULL)
		fprintf(out, ", \"_stream\": %d",
			sqlite3_column_int(st, c_stream));
	write_har_interim(out, st);
	fputc('}', out);
	sqlite3_free(url);
}

struct export_options {
	const char *db_path, *out_path;
	enum format fmt;
};

static int take_format(void *opts, const char *arg)
{
	struct export_options *o = opts;

	o->fmt = strcmp(arg, "csv") == 0     ? FMT_CSV
		 : strcmp(arg, "jsonl") == 0 ? FMT_JSONL
		 : strcmp(arg, "har") == 0   ? FMT_HAR
		 : strcmp(arg, "otlp") == 0  ? FMT_OTLP
					     : FMT_NONE;
	if (o->fmt != FMT_NONE)
		return 0;
	fprintf(stderr,
		"slicer export: unknown format '%s' (csv, jsonl, har or otlp)\n",
		arg);
	return 2;
}

static const struct cmd_option options[] = {
	{ "db", 'd', CMD_TEXT, offsetof(struct export_options, db_path) },
	{ "format", 'f', CMD_OWN, 0, take_format },
	{ "output", 'o', CMD_TEXT, offsetof(struct export_options, out_path) },
	{ NULL },
};
static const struct cmdline cmdline = { "slicer export", options,
					export_usage };

int slicer_export(int argc, char **argv)
{
	struct export_options o = { .db_path = "observe.db" };
	struct filter f;
	const char *db_path = NULL, *out_path = NULL;
	enum format fmt;
	char err[512], *sql = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	FILE *out = stdout;
	int opt, rc = 2, version;
	unsigned csv_flags = 0;
	uint64_t rows = 0;

	filter_init(&f);
	if (cmdline_parse(&cmdline, &f, &o, argc, argv, &rc) != 0)
		goto out;
	rc = 2;
	db_path = o.db_path;
	out_path = o.out_path;
	fmt = o.fmt;
	if (fmt == FMT_NONE || optind != argc) {
		export_usage(stderr);
		goto out;
	}
	if (files_check_regular(db_path, 0, err, sizeof(err)) != 0) {
		fprintf(stderr, "slicer export: %s: %s\n", db_path, err);
		goto out;
	}
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		fprintf(stderr, "slicer export: %s: cannot open: %s\n", db_path,
			sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_busy_timeout(db, 10000);
	obs_store_register_functions(db);
	version = obs_schema_version(db, "main", err, sizeof(err));
	if (version != OBS_SCHEMA_VERSION) {
		fprintf(stderr,
			"slicer export: %s: not an observe database (schema "
			"version %d, expected %d)\n",
			db_path, version, OBS_SCHEMA_VERSION);
		goto out;
	}
	if (f.expr && obs_store_check_expr(db, f.expr, err, sizeof(err))) {
		fprintf(stderr, "slicer export: %s\n", err);
		goto out;
	}
	if (fmt == FMT_OTLP)
		sql = otlp_sql(f.expr);
	else
		sql = sqlite3_mprintf("SELECT * FROM exchange_metrics WHERE "
				      "(%s) ORDER BY coalesce(t3_ns, t5_ns, "
				      "t1_ns), connection_id, seq",
				      f.expr ? f.expr : "1");
	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "slicer export: %s: %s\n", db_path,
			sqlite3_errmsg(db));
		goto out;
	}
	if (out_path && !(out = files_create_private(out_path))) {
		fprintf(stderr, "slicer export: %s: %s\n", out_path,
			strerror(errno));
		out = stdout;
		goto out;
	}
	/* CSV is data, kept byte for byte, except on a terminal */
	if (isatty(fileno(out)))
		csv_flags = TEXT_CSV_TTY;
	if (fmt == FMT_CSV)
		write_csv_row(out, st, true, csv_flags);
	if (fmt == FMT_HAR)
		fputs("{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": "
		      "\"observe\", \"version\": \"0.1\"}, \"pages\": [], "
		      "\"entries\": [",
		      out);
	if (fmt == FMT_OTLP)
		opt = otlp_write(st, out, NULL);
	else
		opt = sqlite3_step(st);
	for (; opt == SQLITE_ROW; opt = sqlite3_step(st)) {
		if (fmt == FMT_CSV)
			write_csv_row(out, st, false, csv_flags);
		else if (fmt == FMT_JSONL)
			write_jsonl_row(out, st);
		else
			write_har_entry(out, st, rows == 0);
		rows++;
	}
	if (opt != SQLITE_DONE) {
		fprintf(stderr, "slicer export: %s: %s\n", db_path,
			sqlite3_errmsg(db));
		goto out;
	}
	if (fmt == FMT_HAR)
		fputs("\n]}}\n", out);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "slicer export: %s: write error\n",
			out_path ? out_path : "standard output");
		goto out;
	}
	rc = 0;
out:
	if (out != stdout && fclose(out) != 0 && rc == 0) {
		fprintf(stderr, "slicer export: %s: %s\n", out_path,
			strerror(errno));
		rc = 2;
	}
	sqlite3_finalize(st);
	sqlite3_free(sql);
	sqlite3_close(db);
	filter_free(&f);
	return rc;
}
