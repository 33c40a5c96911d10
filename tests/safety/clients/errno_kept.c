/* errno_kept.c - does the layer keep errno while its spool is made, refused,
 * grown or stopped? N request/answer exchanges on one loopback TCP
 * connection to a listener of its own; errno is set to EDOM before each
 * call that succeeds (connect, send, recv of the tracked end) and looked at
 * after. Prints, per call, how many calls succeeded and how many changed
 * errno; the output must be the same with and without the layer
 * (tests/safety/errno.sh).
 *
 * usage: errno_kept N      (exit status 0 unless a call failed)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct tally {
	const char *what;
	long ok, changed;
};

/* Count one call of t that returned ret (a failure ends the program) and
 * whether errno is still EDOM. */
static void count(struct tally *t, long ret)
{
	int err = errno;

	if (ret < 0) {
		fprintf(stderr, "errno_kept: %s: %s\n", t->what, strerror(err));
		exit(1);
	}
	t->ok++;
	if (err != EDOM)
		t->changed++;
}

/* Read exactly len bytes from fd (the listener's end: not tracked). */
static void read_all(int fd, char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = read(fd, buf, len);
		if (n <= 0) {
			fprintf(stderr, "errno_kept: server read failed\n");
			exit(1);
		}
		buf += n;
		len -= (size_t)n;
	}
}

int main(int argc, char **argv)
{
	static const char req[] = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
	static const char ans[] =
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	struct tally calls[] = { { "connect", 0, 0 },
				 { "send", 0, 0 },
				 { "recv", 0, 0 } };
	struct tally *conn = &calls[0], *snd = &calls[1], *rcv = &calls[2];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	long n = argc > 1 ? atol(argv[1]) : 0;
	char buf[64];
	int l, c, s;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &len) != 0) {
		perror("errno_kept: listener");
		return 1;
	}
	c = socket(AF_INET, SOCK_STREAM, 0);
	errno = EDOM;
	count(conn, connect(c, (struct sockaddr *)&sa, sizeof(sa)));
	s = accept(l, NULL, NULL);
	if (s < 0) {
		perror("errno_kept: accept");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		size_t got = 0;

		errno = EDOM;
		count(snd, send(c, req, sizeof(req) - 1, 0));
		read_all(s, buf, sizeof(req) - 1);
		if (write(s, ans, sizeof(ans) - 1) != (ssize_t)sizeof(ans) - 1)
			return 1;
		while (got < sizeof(ans) - 1) {
			ssize_t r;

			errno = EDOM;
			r = recv(c, buf, sizeof(ans) - 1 - got, 0);
			count(rcv, r == 0 ? -1 : r);
			got += (size_t)r;
		}
	}
	close(c);
	close(s);
	close(l);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		printf("%-8s %ld calls, errno changed by %ld\n", calls[i].what,
		       calls[i].ok, calls[i].changed);
	return 0;
}
