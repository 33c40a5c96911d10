/* otlp.h - `slicer export --format otlp`: the exchanges as OpenTelemetry
 * traces in OTLP/JSON, the JSON encoding of ExportTraceServiceRequest that
 * OTLP/HTTP takes (docs/otel.md has the mapping). */
#ifndef OBSERVE_SLICER_OTLP_H
#define OBSERVE_SLICER_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* A record's identity as the database keeps it (docs/schema.md): its
 * process (client name, pid, start), the connection's seq in the process,
 * the exchange's seq on the connection. */
struct otlp_identity {
	const char *client;
	int64_t pid, process_start_ns;
	int64_t connection_seq, exchange_seq;
};

/* The spans made of an exchange: its own, and under a connection's first
 * exchange the phases that set the connection up. */
enum otlp_span_role {
	OTLP_SPAN_EXCHANGE,
	OTLP_SPAN_DNS,
	OTLP_SPAN_CONNECT,
	OTLP_SPAN_TLS,
};

/* The trace id of the identity's connection (its exchange_seq is not
 * read): one trace per connection. A hash of the identity, so the same
 * data exported twice has the same ids; never all zero. */
void otlp_trace_id(const struct otlp_identity *id, uint8_t trace_id[16]);

/* The span id of the role's span of the identity's exchange: a hash of the
 * identity and the role, never all zero. */
void otlp_span_id(const struct otlp_identity *id, enum otlp_span_role role,
		  uint8_t span_id[8]);

/* Where an HTTP request went, as OpenTelemetry's HTTP conventions name it. */
struct otlp_target {
	char address[256]; /* server.address: a name or an address, no port */
	int port;	   /* server.port, 0 when not known */
	char url[512];	   /* url.full, "" when the request's path is not
			    * known or is not a path ("*", host:port) */
};

/* The target of a request: the origin is the Host header's (host, userinfo
 * dropped), else the name the connection looked up (dns_name), else the peer's
 * address and port; a request target in absolute form (to a proxy) brings
 * its own. url.full is scheme://origin/path with the scheme https when tls,
 * the port only when it is not the scheme's default, and nothing of the path
 * from its first '?' or '#' on. Any of host, dns_name, peer_addr and path may
 * be NULL. */
void otlp_target(struct otlp_target *t, bool tls, const char *host,
		 const char *dns_name, const char *peer_addr, int peer_port,
		 const char *path);

/* The method as OpenTelemetry's HTTP conventions name it: method itself
 * when they know it (GET, POST, ...), else "_OTHER"; NULL for NULL. */
const char *otlp_method(const char *method);

/* The query of the exchanges for which the SQL expression where (over
 * exchange_metrics, checked by the caller; NULL for all) holds, the same
 * rows as the other formats', with what otlp_write needs of their
 * connections and processes; to be freed with sqlite3_free. NULL when out
 * of memory. */
char *otlp_sql(const char *where);

/* The table of the exchange ids (its column id) that otlp_sql_batch
 * reads: a TEMP table the caller fills. */
#define OTLP_BATCH_TABLE "otlp_batch"

/* The same query for the exchanges whose ids are in temp.otlp_batch. */
char *otlp_sql_batch(void);

/* Steps st, prepared from otlp_sql or otlp_sql_batch, writing its rows as one
 * ExportTraceServiceRequest in OTLP/JSON, the number of spans in *spans
 * (unless NULL); returns sqlite3_step's last result, SQLITE_DONE when
 * every row was read. */
int otlp_write(sqlite3_stmt *st, FILE *out, uint64_t *spans);

#endif
