/* otlp.c - `slicer export --format otlp`: each exchange a span of kind
 * CLIENT named after OpenTelemetry's HTTP conventions, in one trace per
 * connection; a connection's first exchange carries the phases that set it
 * up (DNS lookup, socket connect, TLS client handshake) as child spans. One
 * resourceSpans per process. The ids are hashes of the records' identities:
 * exporting the same rows again gives the same ids. docs/otel.md has the
 * mapping and the rules. */
#define _GNU_SOURCE
#include "otlp.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "json.h"

#ifndef OBSERVE_VERSION
#error "OBSERVE_VERSION (the project's version) must be defined"
#endif

/* --- ids ----------------------------------------------------------------
 * 64-bit FNV-1a over the identity (a tag byte, the client name and its
 * terminating NUL, then pid, process start, connection seq and exchange
 * seq as 8 bytes little-endian each), then murmur3's 64-bit finaliser so
 * that identities one apart differ in every byte. Not a secret: anyone
 * with the identity can compute the id. */

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	while (n--) {
		h ^= *p++;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

static uint64_t fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

static uint64_t identity_hash(const struct otlp_identity *id, char tag,
			      int64_t exchange_seq)
{
	int64_t numbers[] = { id->pid, id->process_start_ns, id->connection_seq,
			      exchange_seq };
	const char *client = id->client ? id->client : "";
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	h = fnv1a(h, &tag, 1);
	h = fnv1a(h, client, strlen(client) + 1);
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		unsigned char le[8];
		uint64_t v = (uint64_t)numbers[i];

		for (int b = 0; b < 8; b++)
			le[b] = (unsigned char)(v >> (8 * b));
		h = fnv1a(h, le, sizeof(le));
	}
	return fmix64(h);
}

/* v into 8 bytes, most significant first */
static void put_be64(uint8_t *p, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		p[b] = (uint8_t)(v >> (56 - 8 * b));
}

/* OTLP takes an all-zero id for none: one is made 1 in its last byte */
static void never_zero(uint8_t *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (id[i])
			return;
	id[n - 1] = 1;
}

void otlp_trace_id(const struct otlp_identity *id, uint8_t trace_id[16])
{
	put_be64(trace_id, identity_hash(id, 'T', 0));
	put_be64(trace_id + 8, identity_hash(id, 't', 0));
	never_zero(trace_id, 16);
}

void otlp_span_id(const struct otlp_identity *id, enum otlp_span_role role,
		  uint8_t span_id[8])
{
	static const char tags[] = { [OTLP_SPAN_EXCHANGE] = 'E',
				     [OTLP_SPAN_DNS] = 'D',
				     [OTLP_SPAN_CONNECT] = 'C',
				     [OTLP_SPAN_TLS] = 'S' };

	put_be64(span_id, identity_hash(id, tags[role], id->exchange_seq));
	never_zero(span_id, 8);
}

/* --- where the request went --------------------------------------------- */

/* A port of 1 to 65535 in decimal, s[0..n); 0 for anything else. */
static int parse_port(const char *s, size_t n)
{
	int port = 0;

	if (n == 0 || n > 5)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		port = port * 10 + (s[i] - '0');
	}
	return port <= 65535 ? port : 0;
}

/* The authority s[0..n) (a Host header, or a URL's) into its host name
 * (no brackets around an IPv6 address; no userinfo: what ends at its last
 * '@' is dropped) and port (0 when it has none). It ends at the first '/',
 * '?', '#', '\' or blank. */
static void split_authority(const char *s, size_t n, char *name,
			    size_t name_size, int *port)
{
	const char *end, *at, *colon = NULL;
	size_t len;

	len = strcspn(s, "/?#\\ \t");
	end = s + (len < n ? len : n);
	while ((at = memchr(s, '@', (size_t)(end - s))))
		s = at + 1;
	*port = 0;
	if (*s == '[' && (colon = memchr(s, ']', (size_t)(end - s)))) {
		snprintf(name, name_size, "%.*s", (int)(colon - s - 1), s + 1);
		if (colon + 1 < end && colon[1] == ':')
			*port = parse_port(colon + 2,
					   (size_t)(end - colon - 2));
		return;
	}
	colon = memchr(s, ':', (size_t)(end - s));
	/* one colon: name:port; more: an IPv6 address without brackets */
	if (colon && !memchr(colon + 1, ':', (size_t)(end - colon - 1))) {
		*port = parse_port(colon + 1, (size_t)(end - colon - 1));
		end = colon;
	}
	snprintf(name, name_size, "%.*s", (int)(end - s), s);
}

void otlp_target(struct otlp_target *t, bool tls, const char *host,
		 const char *dns_name, const char *peer_addr, int peer_port,
		 const char *path)
{
	const char *scheme = tls ? "https" : "http", *rest = NULL;
	int default_port;
	size_t path_len;
	bool from_peer = false;

	t->url[0] = '\0';
	if (path && (strncasecmp(path, "http://", 7) == 0 ||
		     strncasecmp(path, "https://", 8) == 0)) {
		/* absolute form, to a proxy: the URL's scheme and authority */
		size_t skip = path[4] == ':' ? 7 : 8;
		size_t authority = strcspn(path + skip, "/?#");

		scheme = skip == 7 ? "http" : "https";
		split_authority(path + skip, authority, t->address,
				sizeof(t->address), &t->port);
		rest = path + skip + authority;
	} else {
		if (host && *host)
			split_authority(host, strlen(host), t->address,
					sizeof(t->address), &t->port);
		else {
			snprintf(t->address, sizeof(t->address), "%s",
				 dns_name && *dns_name ? dns_name
				 : peer_addr	       ? peer_addr
						       : "");
			t->port = peer_port > 0 ? peer_port : 0;
			from_peer = true;
		}
		if (path && *path == '/')
			rest = path;
	}
	default_port = strcmp(scheme, "https") == 0 ? 443 : 80;
	/* a Host header or a URL without a port means the scheme's */
	if (t->port == 0 && !from_peer)
		t->port = default_port;
	if (!rest || !*t->address)
		return;
	snprintf(t->url, sizeof(t->url), "%s://%s%s%s", scheme,
		 strchr(t->address, ':') ? "[" : "", t->address,
		 strchr(t->address, ':') ? "]" : "");
	if (t->port && t->port != default_port)
		snprintf(t->url + strlen(t->url),
			 sizeof(t->url) - strlen(t->url), ":%d", t->port);
	path_len = strcspn(rest, "?#");
	snprintf(t->url + strlen(t->url), sizeof(t->url) - strlen(t->url),
		 "%.*s", path_len ? (int)path_len : 1, path_len ? rest : "/");
}

/* --- the rows ------------------------------------------------------------ */

/* The columns of the query below, in order. */
enum {
	C_PROCESS,
	C_CLIENT,
	C_PID,
	C_PROCESS_START,
	C_PROGRAM,
	C_CONNECTION_SEQ,
	C_SEQ,
	C_PEER_ADDR,
	C_PEER_PORT,
	C_TLS,
	C_TLS_VERSION,
	C_PROTOCOL,
	C_DNS_NAME,
	C_DNS_START,
	C_DNS_END,
	C_T1,
	C_T2,
	C_CONNECT_ERROR,
	C_TLS_START,
	C_TLS_END,
	C_END_CLASS,
	C_T3,
	C_T4,
	C_T5,
	C_TFB,
	C_T6,
	C_DS,
	C_DR,
	C_METHOD,
	C_PATH,
	C_STATUS,
	C_HOST,
	C_STREAM_ERROR,
	C_INTERIM_STATUS,
	C_INTERIM,
	C_LAST_SEQ,
};

/* The exchanges the filter keeps (the same rows as the other formats),
 * with what of their connection and process the spans need, a process's
 * together. */
static const char rows_sql[] =
	"SELECT p.id, cl.name, p.pid, p.start_ns, p.program, c.seq, e.seq,"
	" c.peer_addr, c.peer_port, c.tls, c.tls_version, c.protocol,"
	" c.dns_name, c.dns_start_ns, c.dns_end_ns, c.t1_ns, c.t2_ns,"
	" c.connect_error, c.tls_start_ns, c.tls_end_ns, c.end_class,"
	" e.t3_ns, e.t4_ns, e.t5_ns, e.tfb_ns, e.t6_ns, e.ds, e.dr, e.method,"
	" e.path, e.status, e.host, e.stream_error, e.interim_status,"
	" e.interim_ns,"
	" (SELECT max(x.seq) FROM exchange x WHERE x.connection_id = c.id)"
	" FROM %s"
	" JOIN connection c ON c.id = e.connection_id"
	" JOIN process p ON p.id = c.process_id"
	" JOIN client cl ON cl.id = p.client_id"
	" ORDER BY p.id, c.seq, e.seq";

#define NO_TIME INT64_MIN

static int64_t time_of(sqlite3_stmt *st, int c)
{
	return sqlite3_column_type(st, c) == SQLITE_NULL
		       ? NO_TIME
		       : sqlite3_column_int64(st, c);
}

static const char *text_of(sqlite3_stmt *st, int c)
{
	return (const char *)sqlite3_column_text(st, c);
}

/* The earliest and latest of the times known among cols. */
static void span_bounds(sqlite3_stmt *st, const int *cols, size_t n,
			int64_t *start, int64_t *end)
{
	for (size_t i = 0; i < n; i++) {
		int64_t t = time_of(st, cols[i]);

		if (t == NO_TIME)
			continue;
		if (*start == NO_TIME || t < *start)
			*start = t;
		if (*end == NO_TIME || t > *end)
			*end = t;
	}
}

/* --- OTLP/JSON ------------------------------------------------------------ */

static void write_hex(FILE *out, const uint8_t *id, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", id[i]);
	fputc('"', out);
}

/* fixed64 nanoseconds: a decimal string */
static void write_nanos(FILE *out, int64_t ns)
{
	fprintf(out, "\"%" PRIu64 "\"", ns > 0 ? (uint64_t)ns : 0);
}

/* An attribute list being written: "attributes":[...] */
struct attrs {
	FILE *out;
	bool any;
};

static void attrs_open(struct attrs *a, FILE *out)
{
	a->out = out;
	a->any = false;
	fputs("\"attributes\":[", out);
}

static void attr_key(struct attrs *a, const char *key)
{
	fprintf(a->out, "%s{\"key\":\"%s\",\"value\":", a->any ? "," : "", key);
	a->any = true;
}

/* a string attribute; none when value is NULL */
static void attr_str(struct attrs *a, const char *key, const char *value)
{
	if (!value)
		return;
	attr_key(a, key);
	fputs("{\"stringValue\":", a->out);
	json_string(a->out, value);
	fputs("}}", a->out);
}

/* int64: a decimal string */
static void attr_int(struct attrs *a, const char *key, int64_t value)
{
	attr_key(a, key);
	fprintf(a->out, "{\"intValue\":\"%" PRId64 "\"}}", value);
}

static void attrs_close(struct attrs *a)
{
	fputc(']', a->out);
}

/* SpanKind */
enum { KIND_INTERNAL = 1, KIND_CLIENT = 3 };
/* Status.code */
enum { STATUS_ERROR = 2 };

/* The spans array being written: a scope's; count: the spans written in
 * the whole request. */
struct spans {
	FILE *out;
	bool any;
	uint64_t count;
};

/* A span's fields up to its attributes, which are opened in a. */
static void span_open(struct spans *w, struct attrs *a,
		      const uint8_t trace_id[16], const uint8_t span_id[8],
		      const uint8_t *parent, const char *name, int kind,
		      int64_t start, int64_t end)
{
	FILE *out = w->out;

	fputs(w->any ? ",\n{\"traceId\":" : "\n{\"traceId\":", out);
	w->any = true;
	w->count++;
	write_hex(out, trace_id, 16);
	fputs(",\"spanId\":", out);
	write_hex(out, span_id, 8);
	if (parent) {
		fputs(",\"parentSpanId\":", out);
		write_hex(out, parent, 8);
	}
	fputs(",\"name\":", out);
	json_string(out, name);
	fprintf(out, ",\"kind\":%d,\"startTimeUnixNano\":", kind);
	write_nanos(out, start);
	fputs(",\"endTimeUnixNano\":", out);
	write_nanos(out, end);
	fputc(',', out);
	attrs_open(a, out);
}

/* The span's status when error (ERROR; unset otherwise), and its end. */
static void span_close(FILE *out, bool error)
{
	if (error)
		fprintf(out, ",\"status\":{\"code\":%d}", STATUS_ERROR);
	fputc('}', out);
}

/* One child span of a connection's first exchange, from the time in column
 * from to the one in to, when both are known. */
static void write_phase(struct spans *w, sqlite3_stmt *st,
			const struct otlp_identity *id,
			const uint8_t trace_id[16], const uint8_t parent[8],
			enum otlp_span_role role, int from, int to)
{
	static const char *const names[] = {
		[OTLP_SPAN_DNS] = "DNS lookup",
		[OTLP_SPAN_CONNECT] = "socket connect",
		[OTLP_SPAN_TLS] = "TLS client handshake",
	};
	int64_t start = time_of(st, from), end = time_of(st, to);
	const char *connect_error = text_of(st, C_CONNECT_ERROR);
	uint8_t span_id[8];
	struct attrs a;

	if (start == NO_TIME || end == NO_TIME || end < start)
		return;
	otlp_span_id(id, role, span_id);
	span_open(w, &a, trace_id, span_id, parent, names[role], KIND_INTERNAL,
		  start, end);
	if (role == OTLP_SPAN_DNS)
		attr_str(&a, "dns.question.name", text_of(st, C_DNS_NAME));
	if (role == OTLP_SPAN_CONNECT) {
		attr_str(&a, "network.peer.address", text_of(st, C_PEER_ADDR));
		if (sqlite3_column_type(st, C_PEER_PORT) != SQLITE_NULL)
			attr_int(&a, "network.peer.port",
				 sqlite3_column_int64(st, C_PEER_PORT));
		attr_str(&a, "network.transport", "tcp");
		attr_str(&a, "error.type", connect_error);
	}
	if (role == OTLP_SPAN_TLS) {
		attr_str(&a, "tls.protocol.name", "tls");
		attr_str(&a, "tls.protocol.version",
			 text_of(st, C_TLS_VERSION));
	}
	attrs_close(&a);
	span_close(w->out, role == OTLP_SPAN_CONNECT && connect_error);
}

/* The methods HTTP's conventions know; any other is _OTHER. */
static bool known_method(const char *method)
{
	static const char *const known[] = { "CONNECT", "DELETE",  "GET",
					     "HEAD",	"OPTIONS", "PATCH",
					     "POST",	"PUT",	   "QUERY",
					     "TRACE" };

	for (size_t i = 0; method && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(method, known[i]) == 0)
			return true;
	return false;
}

const char *otlp_method(const char *method)
{
	return !method ? NULL : known_method(method) ? method : "_OTHER";
}

/* HTTP/2's error codes (RFC 9113, section 7), by value */
static const char *const h2_errors[] = {
	"NO_ERROR",
	"PROTOCOL_ERROR",
	"INTERNAL_ERROR",
	"FLOW_CONTROL_ERROR",
	"SETTINGS_TIMEOUT",
	"STREAM_CLOSED",
	"FRAME_SIZE_ERROR",
	"REFUSED_STREAM",
	"CANCEL",
	"COMPRESSION_ERROR",
	"CONNECT_ERROR",
	"ENHANCE_YOUR_CALM",
	"INADEQUATE_SECURITY",
	"HTTP_1_1_REQUIRED",
};

/* error.type of the exchange in the row, or NULL when it did not fail
 * (docs/otel.md, "Errors"): an HTTP status of 400 or more (the code, as
 * the conventions say); an HTTP/2 stream reset with an error (the code's
 * name); on a connection that has ended, a request no byte of response
 * came back for, or the connection's last exchange when a reset or a
 * timeout ended it (the connection's end_class). */
static const char *error_type(sqlite3_stmt *st, char *buf, size_t size)
{
	int status = sqlite3_column_int(st, C_STATUS);
	const char *end_class = text_of(st, C_END_CLASS);
	bool answered = time_of(st, C_TFB) != NO_TIME;
	bool last = sqlite3_column_int64(st, C_SEQ) ==
		    sqlite3_column_int64(st, C_LAST_SEQ);

	if (status >= 400) {
		snprintf(buf, size, "%d", status);
		return buf;
	}
	if (sqlite3_column_type(st, C_STREAM_ERROR) != SQLITE_NULL) {
		int64_t code = sqlite3_column_int64(st, C_STREAM_ERROR);

		if (code > 0 &&
		    code < (int64_t)(sizeof(h2_errors) / sizeof(h2_errors[0])))
			return h2_errors[code];
		if (code != 0) {
			snprintf(buf, size, "h2_error_%" PRId64, code);
			return buf;
		}
	}
	if (!end_class)
		return NULL; /* still open: in flight, not failed */
	if (!answered && time_of(st, C_T3) != NO_TIME)
		return end_class;
	if (last && (strcmp(end_class, "reset") == 0 ||
		     strcmp(end_class, "timeout") == 0))
		return end_class;
	return NULL;
}

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The resource of the row's process (after a comma unless first), and the
 * start of its scope's spans, w. */
static void write_resource(struct spans *w, sqlite3_stmt *st, bool first)
{
	FILE *out = w->out;
	const char *program = text_of(st, C_PROGRAM);
	const char *name = basename_of(program);
	struct attrs a;

	fputs(first ? "\n{\"resource\":{" : ",\n{\"resource\":{", out);
	attrs_open(&a, out);
	attr_str(&a, "service.name", name && *name ? name : "unknown_service");
	attr_str(&a, "host.name", text_of(st, C_CLIENT));
	attr_int(&a, "process.pid", sqlite3_column_int64(st, C_PID));
	attr_str(&a, "process.executable.path", program);
	attrs_close(&a);
	fputs("},\"scopeSpans\":[{\"scope\":{\"name\":\"observe\","
	      "\"version\":\"" OBSERVE_VERSION "\"},\"spans\":[",
	      out);
	w->any = false;
}

/* The HTTP attributes of the exchange's span. */
static void write_http_attributes(struct attrs *a, sqlite3_stmt *st)
{
	const char *method = text_of(st, C_METHOD);
	const char *protocol = text_of(st, C_PROTOCOL);
	struct otlp_target target;
	bool h2 = protocol && strncmp(protocol, "h2", 2) == 0;
	bool http1 = protocol && strcmp(protocol, "http/1.1") == 0;

	otlp_target(&target, sqlite3_column_int(st, C_TLS) != 0,
		    text_of(st, C_HOST), text_of(st, C_DNS_NAME),
		    text_of(st, C_PEER_ADDR),
		    sqlite3_column_int(st, C_PEER_PORT), text_of(st, C_PATH));
	if (method && known_method(method))
		attr_str(a, "http.request.method", method);
	else if (method) {
		attr_str(a, "http.request.method", "_OTHER");
		attr_str(a, "http.request.method_original", method);
	}
	if (*target.url)
		attr_str(a, "url.full", target.url);
	if (*target.address)
		attr_str(a, "server.address", target.address);
	if (target.port)
		attr_int(a, "server.port", target.port);
	if (sqlite3_column_int(st, C_STATUS) > 0)
		attr_int(a, "http.response.status_code",
			 sqlite3_column_int(st, C_STATUS));
	attr_str(a, "network.peer.address", text_of(st, C_PEER_ADDR));
	if (sqlite3_column_type(st, C_PEER_PORT) != SQLITE_NULL)
		attr_int(a, "network.peer.port",
			 sqlite3_column_int64(st, C_PEER_PORT));
	if (h2 || http1 || method)
		attr_str(a, "network.protocol.name", "http");
	if (h2 || http1)
		attr_str(a, "network.protocol.version", h2 ? "2" : "1.1");
	attr_int(a, "http.request.size", sqlite3_column_int64(st, C_DS));
	attr_int(a, "http.response.size", sqlite3_column_int64(st, C_DR));
}

/* The span events: "request sent" at T4, "interim response" (the first
 * 1xx, its status as http.response.status_code) when it came, "first byte
 * received" at TFB. */
static void write_events(FILE *out, sqlite3_stmt *st)
{
	static const struct {
		int col;
		const char *name;
		int status; /* the column of its status, or -1 */
	} events[] = { { C_T4, "request sent", -1 },
		       { C_INTERIM, "interim response", C_INTERIM_STATUS },
		       { C_TFB, "first byte received", -1 } };
	bool any = false;

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		int64_t t = time_of(st, events[i].col);

		if (t == NO_TIME)
			continue;
		fputs(any ? ",{\"timeUnixNano\":"
			  : ",\"events\":[{"
			    "\"timeUnixNano\":",
		      out);
		write_nanos(out, t);
		fprintf(out, ",\"name\":\"%s\"", events[i].name);
		if (events[i].status >= 0) {
			struct attrs a;

			fputc(',', out);
			attrs_open(&a, out);
			attr_int(&a, "http.response.status_code",
				 sqlite3_column_int64(st, events[i].status));
			attrs_close(&a);
		}
		fputc('}', out);
		any = true;
	}
	if (any)
		fputc(']', out);
}

/* The spans of the exchange in the row, into w. */
static void write_exchange(struct spans *w, sqlite3_stmt *st)
{
	static const int exchange_times[] = { C_T3, C_T4, C_T5, C_TFB, C_T6 };
	static const int phase_times[] = {
		C_DNS_START, C_DNS_END, C_T1, C_T2, C_TLS_START, C_TLS_END
	};
	struct otlp_identity id = {
		.client = text_of(st, C_CLIENT),
		.pid = sqlite3_column_int64(st, C_PID),
		.process_start_ns = sqlite3_column_int64(st, C_PROCESS_START),
		.connection_seq = sqlite3_column_int64(st, C_CONNECTION_SEQ),
		.exchange_seq = sqlite3_column_int64(st, C_SEQ),
	};
	bool first = id.exchange_seq == 1;
	const char *method = text_of(st, C_METHOD), *error;
	uint8_t trace_id[16], span_id[8];
	int64_t start = NO_TIME, end = NO_TIME;
	char buf[32];
	struct attrs a;

	otlp_trace_id(&id, trace_id);
	otlp_span_id(&id, OTLP_SPAN_EXCHANGE, span_id);
	span_bounds(st, exchange_times, 5, &start, &end);
	/* the phases it carries lie inside it */
	if (first)
		span_bounds(st, phase_times, 6, &start, &end);
	error = error_type(st, buf, sizeof(buf));
	span_open(w, &a, trace_id, span_id, NULL,
		  method && known_method(method) ? method : "HTTP", KIND_CLIENT,
		  start, end);
	write_http_attributes(&a, st);
	attr_str(&a, "error.type", error);
	attrs_close(&a);
	write_events(w->out, st);
	span_close(w->out, error != NULL);
	if (!first)
		return;
	write_phase(w, st, &id, trace_id, span_id, OTLP_SPAN_DNS, C_DNS_START,
		    C_DNS_END);
	write_phase(w, st, &id, trace_id, span_id, OTLP_SPAN_CONNECT, C_T1,
		    C_T2);
	write_phase(w, st, &id, trace_id, span_id, OTLP_SPAN_TLS, C_TLS_START,
		    C_TLS_END);
}

/* rows_sql's source: the exchanges a filter keeps */
static const char filtered_sql[] =
	"(SELECT connection_id, seq FROM exchange_metrics WHERE (%s)) m"
	" JOIN exchange e ON e.connection_id = m.connection_id AND"
	" e.seq = m.seq";

/* rows_sql over the source made of from_format and arg */
static char *rows_of(const char *from_format, const char *arg)
{
	char *from = sqlite3_mprintf(from_format, arg);
	char *sql = from ? sqlite3_mprintf(rows_sql, from) : NULL;

	sqlite3_free(from);
	return sql;
}

char *otlp_sql(const char *where)
{
	return rows_of(filtered_sql, where ? where : "1");
}

char *otlp_sql_ids(const char *ids)
{
	return rows_of("%s m JOIN exchange e ON e.id = m.id", ids);
}

int otlp_write(sqlite3_stmt *st, FILE *out, uint64_t *spans)
{
	struct spans w = { out, false, 0 };
	int64_t process = 0;
	bool any = false;
	int rc;

	fputs("{\"resourceSpans\":[", out);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!any || sqlite3_column_int64(st, C_PROCESS) != process) {
			if (any)
				fputs("\n]}]}", out);
			write_resource(&w, st, !any);
			process = sqlite3_column_int64(st, C_PROCESS);
			any = true;
		}
		write_exchange(&w, st);
	}
	if (any)
		fputs("\n]}]}", out);
	fputs("\n]}\n", out);
	if (spans)
		*spans = w.count;
	return rc;
}
