/* resolve_connect.c - look a name up with one of the older resolver calls,
 * then fetch a path over HTTP/1.0 from its first address: the test of the
 * layer's gethostbyname* hooks (tests/integration/protocols.sh dns).
 *
 *   resolve_connect gethostbyname|gethostbyname2|gethostbyname_r|
 *                   gethostbyname2_r NAME PORT PATH
 * Exit 0 when the response arrived whole (the peer closed), 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct hostent *lookup(const char *how, const char *name,
			      struct hostent *store, char *buf, size_t len)
{
	struct hostent *h = NULL;
	int herr = 0;

	if (strcmp(how, "gethostbyname") == 0)
		return gethostbyname(name);
	if (strcmp(how, "gethostbyname2") == 0)
		return gethostbyname2(name, AF_INET);
	if (strcmp(how, "gethostbyname_r") == 0)
		return gethostbyname_r(name, store, buf, len, &h, &herr) ? NULL
									 : h;
	if (strcmp(how, "gethostbyname2_r") == 0)
		return gethostbyname2_r(name, AF_INET, store, buf, len, &h,
					&herr)
			       ? NULL
			       : h;
	fprintf(stderr, "resolve_connect: unknown call %s\n", how);
	exit(2);
}

int main(int argc, char **argv)
{
	struct hostent store, *h;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char buf[8192], request[512];
	ssize_t n;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: resolve_connect CALL NAME PORT PATH\n");
		return 2;
	}
	h = lookup(argv[1], argv[2], &store, buf, sizeof(buf));
	if (!h || h->h_addrtype != AF_INET || !h->h_addr_list[0]) {
		fprintf(stderr,
			"resolve_connect: %s(%s) found no IPv4 address\n",
			argv[1], argv[2]);
		return 1;
	}
	memcpy(&sin.sin_addr, h->h_addr_list[0], 4);
	sin.sin_port = htons((uint16_t)atoi(argv[3]));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		perror("resolve_connect: connect");
		return 1;
	}
	snprintf(request, sizeof(request),
		 "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", argv[4], argv[2]);
	if (write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
		perror("resolve_connect: write");
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n == 0 ? 0 : 1;
}
