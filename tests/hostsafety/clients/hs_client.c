/* hs_client.c - small HTTP/1.1 clients that do to their sockets what
 * real programs do and the layer must survive without harm or
 * misattribution (the scripts of tests/hostsafety).
 *
 * usage: hs_client MODE PORT [FILE]
 *   get PORT                one GET /100b, read with read()
 *   trunc PORT              GET /100b five times on one connection: the
 *                           first answer read, the others discarded with a
 *                           NULL buffer and MSG_TRUNC through recv,
 *                           recvfrom, recvmsg and recvmmsg
 *   fclose PORT FILE        GET /100b on a socket wrapped by fdopen, closed
 *                           with fclose; then FILE opened (the fd number
 *                           comes back) and read to its end with read()
 *   syscall-close PORT FILE the same, closed with syscall(SYS_close)
 *   unseen-close PORT FILE  the same, closed by a system call no hook can
 *                           see (inline assembly)
 * Prints what it did; exit status 0 when every answer came whole.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "raw_syscall.h"

static const char request[] = "GET /100b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

static void die(const char *what)
{
	fprintf(stderr, "hs_client: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect");
	return fd;
}

static void send_request(int fd)
{
	if (write(fd, request, sizeof(request) - 1) !=
	    (ssize_t)(sizeof(request) - 1))
		die("write");
}

/* One whole answer read with read(): the headers, then Content-Length
 * bytes. Returns its length. */
static size_t read_answer(int fd)
{
	char buf[4096], *end, *cl;
	size_t got = 0, total;
	ssize_t n;

	for (;;) {
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			die("read");
		got += (size_t)n;
		buf[got] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end)
			break;
		if (got == sizeof(buf) - 1)
			die("headers too long");
	}
	cl = strcasestr(buf, "\r\nContent-Length:");
	if (!cl)
		die("no Content-Length");
	total = (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10);
	while (got < total) {
		n = read(fd, buf,
			 total - got < sizeof(buf) ? total - got : sizeof(buf));
		if (n <= 0)
			die("read body");
		got += (size_t)n;
	}
	return total;
}

/* Discard len bytes of answer with a NULL buffer and MSG_TRUNC: the kernel
 * writes nothing, the call returns how many bytes it dropped. */
static ssize_t discard(int fd, int how, size_t len)
{
	struct iovec iov = { NULL, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm = { .msg_hdr = msg };
	int n;

	switch (how) {
	case 0:
		return recv(fd, NULL, len, MSG_TRUNC);
	case 1:
		return recvfrom(fd, NULL, len, MSG_TRUNC, NULL, NULL);
	case 2:
		return recvmsg(fd, &msg, MSG_TRUNC);
	default:
		n = recvmmsg(fd, &mm, 1, MSG_TRUNC, NULL);
		return n == 1 ? (ssize_t)mm.msg_len : -1;
	}
}

static int trunc_mode(int port)
{
	static const char *const names[] = { "recv", "recvfrom", "recvmsg",
					     "recvmmsg" };
	int fd = connect_to(port);
	size_t len;

	send_request(fd);
	len = read_answer(fd);
	printf("read %zu\n", len);
	for (int how = 0; how < 4; how++) {
		size_t left = len;

		send_request(fd);
		while (left > 0) {
			ssize_t n = discard(fd, how, left);
			if (n <= 0)
				die(names[how]);
			left -= (size_t)n;
		}
		printf("%s MSG_TRUNC NULL discarded %zu\n", names[how], len);
	}
	close(fd);
	return 0;
}

/* The socket's fd closed where close() is not called. */
static void close_unseen(int fd)
{
	obs_raw_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
}

static int reuse_mode(const char *mode, int port, const char *file)
{
	char buf[65536];
	int fd = connect_to(port), again;
	size_t len, total = 0;
	ssize_t n;

	if (strcmp(mode, "fclose") == 0) {
		FILE *f = fdopen(fd, "r+");

		if (!f)
			die("fdopen");
		send_request(fd);
		len = read_answer(fd);
		if (fclose(f) != 0)
			die("fclose");
	} else {
		send_request(fd);
		len = read_answer(fd);
		if (strcmp(mode, "syscall-close") == 0) {
			if (syscall(SYS_close, fd) != 0)
				die("syscall(SYS_close)");
		} else {
			close_unseen(fd);
		}
	}
	again = open(file, O_RDONLY);
	if (again < 0)
		die(file);
	while ((n = read(again, buf, sizeof(buf))) > 0)
		total += (size_t)n;
	close(again);
	printf("answer %zu; %s; then %s %s on the same fd: %zu bytes read\n",
	       len, mode, file, again == fd ? "opened" : "NOT opened", total);
	return again == fd ? 0 : 3;
}

int main(int argc, char **argv)
{
	int port = argc > 2 ? atoi(argv[2]) : 0;

	if (argc < 3 || port <= 0)
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "get") == 0) {
		int fd = connect_to(port);

		send_request(fd);
		printf("read %zu\n", read_answer(fd));
		close(fd);
		return 0;
	}
	if (strcmp(argv[1], "trunc") == 0)
		return trunc_mode(port);
	if (argc == 4 && (strcmp(argv[1], "fclose") == 0 ||
			  strcmp(argv[1], "syscall-close") == 0 ||
			  strcmp(argv[1], "unseen-close") == 0))
		return reuse_mode(argv[1], port, argv[3]);
usage:
	fprintf(stderr, "usage: hs_client get|trunc PORT\n"
			"       hs_client fclose|syscall-close|unseen-close "
			"PORT FILE\n");
	return 2;
}
