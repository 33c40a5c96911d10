/* serve.c - GET /metrics in Prometheus's text format with libmicrohttpd
 * (see serve.h). At most MAX_CONNECTIONS at once, each given
 * TIMEOUT_S; anything but GET (or HEAD) of /metrics is refused. */
#define _GNU_SOURCE
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#define MAX_CONNECTIONS 16
#define TIMEOUT_S 10

struct otel_serve {
	struct MHD_Daemon *daemon;
	struct otel_metrics *m;
	char url[96];
};

/* Queues text (malloc'd, n bytes; freed here) with status. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     char *text, size_t n, const char *type)
{
	struct MHD_Response *r =
		text ? MHD_create_response_from_buffer_with_free_callback(
			       n, text, free)
		     : NULL;
	enum MHD_Result rc;

	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* A refusal with a line of text saying why. */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status,
			      const char *why)
{
	return reply(conn, status, strdup(why), strlen(why), "text/plain");
}

static enum MHD_Result answer(void *ctx, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	struct otel_serve *s = ctx;
	char *text = NULL;
	size_t n = 0;
	FILE *out;

	(void)version;
	(void)upload;
	(void)state;
	if (*upload_size)
		return MHD_NO; /* no body is taken */
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			      "only GET /metrics\n");
	if (strcmp(url, "/metrics") != 0)
		return refuse(conn, MHD_HTTP_NOT_FOUND,
			      "not found: the metrics are at /metrics\n");
	if (!(out = open_memstream(&text, &n)))
		return MHD_NO;
	otel_metrics_prometheus(s->m, out);
	if (fclose(out) != 0)
		return MHD_NO;
	return reply(conn, MHD_HTTP_OK, text, n,
		     "text/plain; version=0.0.4; charset=utf-8");
}

/* listen parsed into addr; 0, or -1 with err. */
static int parse_listen(const char *listen, struct sockaddr_storage *addr,
			char *err, size_t errlen)
{
	char host[64] = "127.0.0.1";
	const char *port_text = listen, *colon = strrchr(listen, ':');
	struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
	char *end;
	long port;

	memset(addr, 0, sizeof(*addr));
	if (colon) {
		size_t n = (size_t)(colon - listen);

		if (n >= 2 && listen[0] == '[' && listen[n - 1] == ']') {
			listen++;
			n -= 2;
		}
		if (n == 0 || n >= sizeof(host))
			goto bad;
		memcpy(host, listen, n);
		host[n] = '\0';
		port_text = colon + 1;
	}
	port = strtol(port_text, &end, 10);
	if (!*port_text || *end || port < 0 || port > 65535)
		goto bad;
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		return 0;
	}
bad:
	snprintf(err, errlen,
		 "--metrics %s: PORT, ADDRESS:PORT or [IPv6]:PORT expected, "
		 "the address numeric",
		 listen);
	return -1;
}

struct otel_serve *otel_serve_start(const char *listen, struct otel_metrics *m,
				    char *err, size_t errlen)
{
	struct otel_serve *s = calloc(1, sizeof(*s));
	struct sockaddr_storage addr;
	const union MHD_DaemonInfo *info;
	char shown[INET6_ADDRSTRLEN] = "";
	bool v6;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (parse_listen(listen, &addr, err, errlen) != 0) {
		free(s);
		return NULL;
	}
	v6 = addr.ss_family == AF_INET6;
	s->m = m;
	errno = 0;
	s->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
			(v6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, answer, s, MHD_OPTION_SOCK_ADDR, &addr,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TIMEOUT_S,
		MHD_OPTION_END);
	if (!s->daemon) {
		snprintf(err, errlen, "--metrics %s: cannot listen there%s%s",
			 listen, errno ? ": " : "",
			 errno ? strerror(errno) : "");
		free(s);
		return NULL;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	inet_ntop(addr.ss_family,
		  v6 ? (void *)&((struct sockaddr_in6 *)&addr)->sin6_addr
		     : (void *)&((struct sockaddr_in *)&addr)->sin_addr,
		  shown, sizeof(shown));
	snprintf(s->url, sizeof(s->url), "http://%s%s%s:%u/metrics",
		 v6 ? "[" : "", shown, v6 ? "]" : "",
		 info ? (unsigned)info->port : 0u);
	return s;
}

const char *otel_serve_url(const struct otel_serve *s)
{
	return s->url;
}

void otel_serve_stop(struct otel_serve *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->daemon);
	free(s);
}
