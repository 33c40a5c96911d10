/* fortify_client.c - an HTTP client built with -O2 -D_FORTIFY_SOURCE=2, so
 * that its read() and recv() go to glibc's __read_chk and __recv_chk.
 *
 * usage: fortify_client PORT PATH N   (N requests on one connection, read
 * alternately with read() and recv(); prints the body bytes received, then
 * on a second line the bytes each request read from the socket, headers
 * included: what the layer must record as that exchange's Dr) */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[4096];

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	volatile size_t want = sizeof(buf); /* not a constant: forces _chk */
	int n = argc > 3 ? atoi(argv[3]) : 1, fd;
	long total = 0;
	long raw[64] = { 0 };

	if (argc < 3 || n < 1 || n > 64)
		return 2;
	addr.sin_port = htons((unsigned short)atoi(argv[1]));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		char req[256];
		int len =
			snprintf(req, sizeof(req),
				 "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", argv[2]);
		long body = -1, got = 0;
		char *end = NULL;

		if (write(fd, req, (size_t)len) != len)
			return 1;
		/* read until the headers are in, then the announced body */
		for (;;) {
			ssize_t r = (i % 2) ? recv(fd, buf + got,
						   want - (size_t)got - 1, 0)
					    : read(fd, buf + got,
						   want - (size_t)got - 1);
			if (r <= 0)
				return 1;
			got += r;
			raw[i] += r;
			buf[got] = '\0';
			end = strstr(buf, "\r\n\r\n");
			if (end) {
				char *cl = strstr(buf, "Content-Length: ");
				body = cl ? atol(cl + 16) : 0;
				break;
			}
		}
		got -= (end + 4 - buf);
		while (got < body) {
			ssize_t r = (i % 2) ? recv(fd, buf, want, 0)
					    : read(fd, buf, want);
			if (r <= 0)
				return 1;
			got += r;
			raw[i] += r;
		}
		total += got;
	}
	close(fd);
	printf("%ld\n", total);
	for (int i = 0; i < n; i++)
		printf("%s%ld", i ? " " : "", raw[i]);
	printf("\n");
	return 0;
}
