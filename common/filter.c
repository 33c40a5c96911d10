/* filter.c - the filter options, turned into one SQL boolean
 * expression over the columns of exchange_metrics (SQLite evaluates it; we
 * write no expression parser). Values from the command line are quoted with
 * sqlite3_mprintf's %Q, never pasted raw. */
#define _GNU_SOURCE
#include "filter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void filter_init(struct filter *f)
{
	f->expr = NULL;
}

void filter_free(struct filter *f)
{
	sqlite3_free(f->expr);
	f->expr = NULL;
}

/* expr = expr AND (term); takes ownership of term. */
static int filter_and(struct filter *f, char *term)
{
	char *joined;

	if (!term)
		return -1;
	if (!f->expr) {
		f->expr = term;
		return 0;
	}
	joined = sqlite3_mprintf("(%s) AND (%s)", f->expr, term);
	sqlite3_free(term);
	if (!joined)
		return -1;
	sqlite3_free(f->expr);
	f->expr = joined;
	return 0;
}

int filter_where(struct filter *f, const char *expr)
{
	return filter_and(f, sqlite3_mprintf("%s", expr));
}

/* HOST[:PORT], HOST a name, an address or a network in CIDR notation
 * ([v6]:port, [v6/len]:port for IPv6 with a port). A name stands for every
 * address it resolves to. */
int filter_peer(struct filter *f, const char *arg, char *err, size_t errlen)
{
	char host[256];
	const char *port = NULL;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	char *list = NULL, *term;
	int rc;

	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');
		if (!end || (size_t)(end - arg - 1) >= sizeof(host)) {
			snprintf(err, errlen, "--peer %s: bad address", arg);
			return -1;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(end - arg - 1),
			 arg + 1);
		if (end[1] == ':')
			port = end + 2;
	} else {
		const char *colon = strchr(arg, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* a bare IPv6 address */
		snprintf(host, sizeof(host), "%.*s",
			 colon ? (int)(colon - arg) : (int)strlen(arg), arg);
		if (colon)
			port = colon + 1;
	}
	if (port) {
		char *end;
		long p = strtol(port, &end, 10);
		if (*port == '\0' || *end || p <= 0 || p > 65535) {
			snprintf(err, errlen, "--peer %s: bad port", arg);
			return -1;
		}
	}
	if (strchr(host, '/')) { /* a network: CIDR */
		char net[sizeof(host)];
		unsigned char buf[16];
		const char *slash = strchr(host, '/');
		bool v6 = memchr(host, ':', (size_t)(slash - host)) != NULL;
		char *bits_end;
		long bits = strtol(slash + 1, &bits_end, 10);

		snprintf(net, sizeof(net), "%.*s", (int)(slash - host), host);
		if (slash[1] == '\0' || *bits_end || bits < 0 ||
		    bits > (v6 ? 128 : 32) ||
		    inet_pton(v6 ? AF_INET6 : AF_INET, net, buf) != 1) {
			snprintf(err, errlen,
				 "--peer %s: not a network (ADDRESS/BITS)",
				 arg);
			return -1;
		}
		term = port ? sqlite3_mprintf("cidr_match(peer_addr, %Q) AND "
					      "peer_port = %d",
					      host, atoi(port))
			    : sqlite3_mprintf("cidr_match(peer_addr, %Q)",
					      host);
		return filter_and(f, term);
	}
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "--peer %s: %s", host, gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		char text[INET6_ADDRSTRLEN];
		const void *a =
			ai->ai_family == AF_INET6
				? (const void *)&(
					  (struct sockaddr_in6 *)ai->ai_addr)
					  ->sin6_addr
				: (const void *)&(
					  (struct sockaddr_in *)ai->ai_addr)
					  ->sin_addr;
		char *more;

		if (!inet_ntop(ai->ai_family, a, text, sizeof(text)))
			continue;
		more = list ? sqlite3_mprintf("%s, %Q", list, text)
			    : sqlite3_mprintf("%Q", text);
		sqlite3_free(list);
		list = more;
	}
	freeaddrinfo(res);
	if (!list) {
		snprintf(err, errlen, "--peer %s: no address", host);
		return -1;
	}
	term = port ? sqlite3_mprintf("peer_addr IN (%s) AND peer_port = %d",
				      list, atoi(port))
		    : sqlite3_mprintf("peer_addr IN (%s)", list);
	sqlite3_free(list);
	return filter_and(f, term);
}

int filter_program(struct filter *f, const char *name)
{
	return filter_and(f, sqlite3_mprintf("program = %Q OR program LIKE "
					     "'%%/' || %Q",
					     name, name));
}

/* TIME: seconds since the epoch, or an ISO 8601 date and time that SQLite
 * understands ('2026-11-22', '2026-11-22 10:00:00', UTC). Compared with the
 * exchange's start (T3, else T5, else T1). */
int filter_time(struct filter *f, const char *when, bool since, char *err,
		size_t errlen)
{
	char *end;
	double secs = strtod(when, &end);
	const char *op = since ? ">=" : "<";

	if (*when && !*end)
		return filter_and(
			f, sqlite3_mprintf("coalesce(t3_ns, t5_ns, t1_ns) %s "
					   "%lld",
					   op, (long long)(secs * 1e9)));
	if (!strchr(when, '-')) {
		snprintf(err, errlen,
			 "--%s %s: not a time (seconds since the epoch, or "
			 "YYYY-MM-DD[ HH:MM:SS] in UTC)",
			 since ? "since" : "until", when);
		return -1;
	}
	return filter_and(
		f, sqlite3_mprintf("coalesce(t3_ns, t5_ns, t1_ns) %s "
				   "CAST(strftime('%%s', %Q) AS INTEGER) * "
				   "1000000000",
				   op, when));
}

int filter_min_bytes(struct filter *f, const char *n, char *err, size_t errlen)
{
	char *end;
	long long v = strtoll(n, &end, 10);

	if (!*n || *end || v < 0) {
		snprintf(err, errlen, "--min-bytes %s: not a number of bytes",
			 n);
		return -1;
	}
	return filter_and(f, sqlite3_mprintf("ds + dr >= %lld", v));
}

/* PID: the process id (any client's: with --where 'client = ...' for
 * one). */
int filter_pid(struct filter *f, const char *pid, char *err, size_t errlen)
{
	char *end;
	long long v = strtoll(pid, &end, 10);

	if (!*pid || *end || v <= 0 || v > INT32_MAX) {
		snprintf(err, errlen, "--pid %s: not a process id", pid);
		return -1;
	}
	return filter_and(f, sqlite3_mprintf("pid = %lld", v));
}

int filter_option(struct filter *f, int opt, const char *arg, char *err,
		  size_t errlen)
{
	int rc;

	switch (opt) {
	case 'w':
		rc = filter_where(f, arg);
		break;
	case 'P':
		return filter_peer(f, arg, err, errlen);
	case 'R':
		rc = filter_program(f, arg);
		break;
	case 'S':
	case 'U':
		return filter_time(f, arg, opt == 'S', err, errlen);
	case 'B':
		return filter_min_bytes(f, arg, err, errlen);
	case 'I':
		return filter_pid(f, arg, err, errlen);
	default:
		return 1;
	}
	if (rc != 0)
		snprintf(err, errlen, "out of memory");
	return rc;
}

char *filter_connections(const char *where)
{
	if (!where || strcmp(where, "1") == 0)
		return sqlite3_mprintf("1");
	return sqlite3_mprintf("m.connection_id IN (SELECT x.connection_id "
			       "FROM exchange_metrics x WHERE (%s))",
			       where);
}
