/* transparency.c - a fixed sequence of socket operations that prints every
 * return value and errno. Its output must be the same with and without
 * libobserve.so preloaded (tests/tools/run-transparency.sh).
 *
 * Only values that are identical run to run are printed: no ports, no
 * addresses, no times; a partial write prints "partial", not its count.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

static int step;

/* Print one call's outcome; errno is read before anything else runs. */
static void show(const char *what, long ret)
{
	int err = errno;

	printf("%03d %-40s -> %ld %s\n", ++step, what, ret,
	       ret < 0 ? strerrorname_np(err) : "");
	fflush(stdout);
	errno = err;
}

static void show_errno_kept(const char *what, long ret, int before)
{
	int err = errno;

	printf("%03d %-40s -> %ld errno %s\n", ++step, what, ret,
	       err == before ? "unchanged" : strerrorname_np(err));
	fflush(stdout);
}

static struct sockaddr_in listener_addr;

static int make_listener(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16))
		exit(2);
	getsockname(fd, (struct sockaddr *)&listener_addr, &len);
	return fd;
}

static int connect_blocking(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	show("connect (blocking)",
	     connect(fd, (struct sockaddr *)&listener_addr,
		     sizeof(listener_addr)));
	return fd;
}

static void on_alarm(int sig)
{
	(void)sig;
}

int main(void)
{
	int lst = make_listener(), c, s, c2, s2, d, r;
	char buf[65536], big[1 << 20];
	struct iovec iov[2];
	struct msghdr msg;
	struct mmsghdr mm[2];
	int so_error;
	socklen_t len;
	struct pollfd pfd;

	srand(20261122); /* the seeded part: payload sizes */
	memset(big, 'x', sizeof(big));

	/* refused: a port that was free a moment ago */
	{
		int tmp = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t alen = sizeof(a);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		bind(tmp, (struct sockaddr *)&a, sizeof(a));
		getsockname(tmp, (struct sockaddr *)&a, &alen);
		close(tmp);
		c = socket(AF_INET, SOCK_STREAM, 0);
		show("connect (refused)",
		     connect(c, (struct sockaddr *)&a, sizeof(a)));
		show("send after refused", send(c, "x", 1, MSG_NOSIGNAL));
		show("close", close(c));
	}

	/* blocking request/response with every call of both families */
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	for (int round = 0; round < 3; round++) {
		int n = 1 + rand() % 2000;
		show("write", write(c, big, (size_t)n));
		show("read (server)", read(s, buf, (size_t)n) == n ? n : -1);
		show("send (server)", send(s, big, (size_t)n, 0));
		show("recv peek", recv(c, buf, 1, MSG_PEEK));
		r = 0;
		while (r < n) {
			ssize_t k = read(c, buf, (size_t)(n - r));
			if (k <= 0)
				break;
			r += (int)k;
		}
		show("read all", r);
	}
	iov[0].iov_base = big;
	iov[0].iov_len = 10;
	iov[1].iov_base = big;
	iov[1].iov_len = 20;
	show("writev", writev(c, iov, 2));
	show("recv (server)", recv(s, buf, 30, MSG_WAITALL));
	show("sendto (server)", sendto(s, big, 30, 0, NULL, 0));
	iov[0].iov_base = buf;
	iov[0].iov_len = 5;
	iov[1].iov_base = buf + 5;
	iov[1].iov_len = 100;
	show("readv", readv(c, iov, 2));
	memset(&msg, 0, sizeof(msg));
	iov[0].iov_base = big;
	iov[0].iov_len = 7;
	msg.msg_iov = iov;
	msg.msg_iovlen = 1;
	show("sendmsg", sendmsg(c, &msg, 0));
	show("recvfrom (server)", recvfrom(s, buf, 7, MSG_WAITALL, NULL, NULL));
	show("send (server)", send(s, big, 9, 0));
	iov[0].iov_base = buf;
	iov[0].iov_len = 9;
	show("recvmsg", recvmsg(c, &msg, MSG_WAITALL));
	memset(mm, 0, sizeof(mm));
	iov[0].iov_base = big;
	iov[0].iov_len = 3;
	iov[1].iov_base = big;
	iov[1].iov_len = 4;
	mm[0].msg_hdr.msg_iov = &iov[0];
	mm[0].msg_hdr.msg_iovlen = 1;
	mm[1].msg_hdr.msg_iov = &iov[1];
	mm[1].msg_hdr.msg_iovlen = 1;
	show("sendmmsg", sendmmsg(c, mm, 2, 0));
	show("recv (server)", recv(s, buf, 7, MSG_WAITALL));

	/* errno is left alone by successful calls */
	errno = EDOM;
	show_errno_kept("send keeps errno", send(c, "y", 1, 0), EDOM);
	errno = EDOM;
	show_errno_kept("recv (server) keeps errno", recv(s, buf, 1, 0), EDOM);
	errno = EDOM;
	show_errno_kept("getsockopt keeps errno",
			getsockopt(c, SOL_SOCKET, SO_TYPE, &so_error,
				   &(socklen_t){ sizeof(int) }),
			EDOM);

	/* EAGAIN, and EINTR from a timer signal without SA_RESTART */
	fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK);
	show("recv (nothing there)", recv(c, buf, sizeof(buf), 0));
	fcntl(c, F_SETFL, fcntl(c, F_GETFL) & ~O_NONBLOCK);
	{
		struct sigaction sa = { .sa_handler = on_alarm };
		struct itimerval it = { .it_value = { 0, 50000 } };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		show("read interrupted by a signal", read(c, buf, sizeof(buf)));
	}

	/* dup, dup2, F_DUPFD: the copies work, closing one keeps the other */
	d = dup(c);
	show("send on dup", send(d, "abc", 3, 0));
	show("recv (server)", recv(s, buf, 3, MSG_WAITALL));
	r = fcntl(c, F_DUPFD_CLOEXEC, 100);
	show("F_DUPFD_CLOEXEC >= 100", r >= 100);
	show("close dup", close(d));
	show("write on F_DUPFD copy", write(r, "de", 2));
	show("close F_DUPFD copy", close(r));
	d = open("/dev/null", O_RDONLY);
	show("dup2 socket onto a file fd", dup2(c, d) == d);
	show("write on dup2 copy", write(d, "f", 1));
	show("recv (server)", recv(s, buf, 3, MSG_WAITALL)); /* de + f */
	show("close dup2 copy", close(d));

	/* shutdown, EOF, double close, use after close */
	show("shutdown SHUT_WR", shutdown(c, SHUT_WR));
	show("read EOF (server)", read(s, buf, sizeof(buf)));
	show("send (server)", send(s, "bye", 3, 0));
	show("recv", recv(c, buf, 3, MSG_WAITALL));
	show("close (server)", close(s));
	show("read EOF", read(c, buf, sizeof(buf)));
	show("close", close(c));
	show("close again", close(c));
	show("read on closed fd", read(c, buf, 1));
	show("send on closed fd", send(c, "x", 1, 0));

	/* an fd number reused by a pipe after a socket */
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	close(c);
	{
		int p[2];
		show("pipe", pipe(p));
		show("write pipe", write(p[1], "pipe", 4));
		show("read pipe", read(p[0], buf, sizeof(buf)));
		close(p[0]);
		close(p[1]);
	}
	close(s);

	/* non-blocking connect: EINPROGRESS, SO_ERROR, EISCONN */
	c2 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	r = connect(c2, (struct sockaddr *)&listener_addr,
		    sizeof(listener_addr));
	show("connect non-blocking (0 or EINPROGRESS)",
	     r == 0 || errno == EINPROGRESS ? 0 : -1);
	pfd.fd = c2;
	pfd.events = POLLOUT;
	show("poll", poll(&pfd, 1, 2000));
	len = sizeof(so_error);
	show("getsockopt SO_ERROR",
	     getsockopt(c2, SOL_SOCKET, SO_ERROR, &so_error, &len));
	show("SO_ERROR value", so_error);
	show("connect again", connect(c2, (struct sockaddr *)&listener_addr,
				      sizeof(listener_addr)));
	s2 = accept(lst, NULL, NULL);

	/* partial write then EAGAIN into a peer that does not read */
	{
		int small = 4096;
		setsockopt(c2, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
		setsockopt(s2, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		ssize_t k = send(c2, big, sizeof(big), 0);
		show("big send is partial", k > 0 && k < (ssize_t)sizeof(big));
		k = send(c2, big, sizeof(big), 0);
		while (k > 0)
			k = send(c2, big, sizeof(big), 0);
		show("then EAGAIN", k);
	}
	show("recv nothing (EAGAIN)", recv(c2, buf, sizeof(buf), 0));
	show("close", close(c2));
	close(s2);

	/* bad fds and non-sockets */
	show("read fd -1", read(-1, buf, 1));
	show("write fd 9999", write(9999, buf, 1));
	show("close fd -1", close(-1));
	d = open("/dev/null", O_WRONLY);
	show("send on a file", send(d, "x", 1, 0));
	show("connect on a file",
	     connect(d, (struct sockaddr *)&listener_addr,
		     sizeof(listener_addr)));
	show("write on a file", write(d, "x", 1));
	close(d);
	show("connect NULL address", connect(socket(AF_INET, SOCK_STREAM, 0),
					     NULL, 0));

	/* UDP: connected datagram socket, untouched by the layer */
	{
		int u1 = socket(AF_INET, SOCK_DGRAM, 0);
		int u2 = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t alen = sizeof(a);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		bind(u2, (struct sockaddr *)&a, sizeof(a));
		getsockname(u2, (struct sockaddr *)&a, &alen);
		show("connect udp", connect(u1, (struct sockaddr *)&a, sizeof(a)));
		show("send udp", send(u1, "datagram", 8, 0));
		show("recv udp", recv(u2, buf, sizeof(buf), 0));
		close(u1);
		close(u2);
	}
	close(lst);
	printf("done after %d steps\n", step);
	return 0;
}
