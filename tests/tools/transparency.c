/* transparency.c - a fixed sequence of socket operations that prints every
 * return value and errno. Its output must be the same with and without
 * libobserve.so preloaded (tests/tools/run-transparency.sh).
 *
 * The program is its own server: a loopback listener, whose accepted ends
 * (which the layer does not track) play the server's part in the same
 * thread, except for one late answer that a helper thread sends after the
 * main thread was interrupted by a timer signal.
 *
 * Only values that are identical run to run are printed: no ports, no
 * addresses, no times; a partial write prints "partial", not its count.
 * Payload sizes come from a fixed seed. Every step that depends on the
 * machine (IPv6 loopback) prints the same lines either way within one run.
 *
 * usage: transparency        (exit status 0; the output is the result)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The FORTIFY entry points that glibc exports; a program built with
 * -D_FORTIFY_SOURCE calls these instead of read, recv and recvfrom. */
extern ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
extern ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen,
			  int flags);
extern ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
			      int flags, struct sockaddr *from,
			      socklen_t *fromlen);

static int step;

/* show - print one call's outcome: its return value and, when it failed, the
 * name of errno. errno is read before anything else runs and put back. */
static void show(const char *what, long ret)
{
	int err = errno;

	printf("%03d %-44s -> %ld %s\n", ++step, what, ret,
	       ret < 0 ? strerrorname_np(err) : "");
	fflush(stdout);
	errno = err;
}

/* show_errno_kept - for a call that succeeded: did it leave errno alone? */
static void show_errno_kept(const char *what, long ret, int before)
{
	int err = errno;

	printf("%03d %-44s -> %ld errno %s\n", ++step, what, ret,
	       err == before ? "unchanged" : strerrorname_np(err));
	fflush(stdout);
}

static struct sockaddr_in listener_addr;
static int tcp_connects; /* connect() calls on new TCP sockets: each is one
			  * connection in the database */

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

	tcp_connects++;
	show("connect (blocking)",
	     connect(fd, (struct sockaddr *)&listener_addr,
		     sizeof(listener_addr)));
	return fd;
}

/* wait_readable - until fd has something to read (or 2 s passed), so that
 * a step never depends on how fast loopback delivers. Not printed. */
static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	poll(&p, 1, 2000);
}

/* The SIGALRM handler sends one byte on a tracked socket: a hook entered
 * from a signal handler while the interrupted thread is blocked inside
 * another hook on the same connection. */
static int alarm_fd = -1;
static volatile sig_atomic_t alarm_send_ret = -100;

static void on_alarm(int sig)
{
	int err = errno;

	(void)sig;
	alarm_send_ret = (sig_atomic_t)send(alarm_fd, "!", 1, MSG_NOSIGNAL);
	errno = err;
}

/* The late server: waits until the main thread says it was interrupted,
 * then answers after 20 ms. SIGALRM is blocked in this thread. */
struct late {
	int go;	    /* read end of a pipe: one byte means "answer now" */
	int server; /* accepted end */
};

static void *late_server(void *arg)
{
	struct late *l = arg;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	char b;

	if (read(l->go, &b, 1) != 1)
		return NULL;
	nanosleep(&pause, NULL);
	send(l->server, "late", 4, 0);
	return NULL;
}

static void section(const char *name)
{
	printf("-- %s\n", name);
}

int main(void)
{
	int lst = make_listener(), c, s, c2, s2, d, r;
	static char buf[65536], big[1 << 20];
	struct iovec iov[2];
	struct msghdr msg;
	struct mmsghdr mm[2];
	int so_error;
	socklen_t len;
	struct pollfd pfd;

	srand(20261122); /* the seeded part: payload sizes */
	memset(big, 'x', sizeof(big));
	signal(SIGPIPE, SIG_IGN);

	section("connect refused: a port that was free a moment ago");
	{
		int tmp = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t alen = sizeof(a);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		bind(tmp, (struct sockaddr *)&a, sizeof(a));
		getsockname(tmp, (struct sockaddr *)&a, &alen);
		close(tmp);
		c = socket(AF_INET, SOCK_STREAM, 0);
		tcp_connects++;
		show("connect (refused)",
		     connect(c, (struct sockaddr *)&a, sizeof(a)));
		show("send after refused", send(c, "x", 1, MSG_NOSIGNAL));
		show("close", close(c));
		c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		tcp_connects++;
		r = connect(c, (struct sockaddr *)&a, sizeof(a));
		show("connect non-blocking to it (EINPROGRESS: 0)",
		     r < 0 && errno == EINPROGRESS ? 0 : r);
		pfd.fd = c;
		pfd.events = POLLOUT;
		show("poll", poll(&pfd, 1, 2000));
		len = sizeof(so_error);
		show("getsockopt SO_ERROR",
		     getsockopt(c, SOL_SOCKET, SO_ERROR, &so_error, &len));
		printf("%03d %-44s -> %s\n", ++step, "SO_ERROR value",
		       so_error ? strerrorname_np(so_error) : "0");
		show("close", close(c));
	}

	section("blocking request/response, every call of both families");
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	for (int round = 0; round < 3; round++) {
		int n = 1 + rand() % 2000;

		show("write", write(c, big, (size_t)n));
		show("read (server)", recv(s, buf, (size_t)n, MSG_WAITALL));
		show("send (server)", send(s, big, (size_t)n, 0));
		wait_readable(c);
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
	wait_readable(c);
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
	show("send (server)", send(s, big, 6, 0));
	wait_readable(c);
	memset(mm, 0, sizeof(mm));
	iov[0].iov_base = buf;
	iov[0].iov_len = 6;
	mm[0].msg_hdr.msg_iov = &iov[0];
	mm[0].msg_hdr.msg_iovlen = 1;
	show("recvmmsg", recvmmsg(c, mm, 1, MSG_WAITALL, NULL));
	show("recvmmsg msg_len", mm[0].msg_len);
	show("sendto", sendto(c, big, 11, 0, NULL, 0));
	show("recv (server)", recv(s, buf, 11, MSG_WAITALL));
	show("send (server)", send(s, big, 12, 0));
	show("recvfrom", recvfrom(c, buf, 12, MSG_WAITALL, NULL, NULL));
	show("send", send(c, big, 13, 0));
	show("recv (server)", recv(s, buf, 13, MSG_WAITALL));
	show("send (server)", send(s, big, 14, 0));
	wait_readable(c);
	show("__read_chk", __read_chk(c, buf, 14, sizeof(buf)));
	show("send", send(c, big, 1, 0));
	show("recv (server)", recv(s, buf, 1, MSG_WAITALL));
	show("send (server)", send(s, big, 15, 0));
	show("__recv_chk", __recv_chk(c, buf, 15, sizeof(buf), MSG_WAITALL));
	show("send", send(c, big, 1, 0));
	show("recv (server)", recv(s, buf, 1, MSG_WAITALL));
	show("send (server)", send(s, big, 16, 0));
	show("__recvfrom_chk",
	     __recvfrom_chk(c, buf, 16, sizeof(buf), MSG_WAITALL, NULL, NULL));
	{
		char path[] = "/tmp/transparency.XXXXXX";
		int f = mkstemp(path);
		off_t off = 0;

		unlink(path);
		show("write file", write(f, big, 4000));
		show("sendfile file to socket", sendfile(c, f, &off, 4000));
		show("recv (server)", recv(s, buf, 4000, MSG_WAITALL));
		close(f);
	}

	section("errno is left alone by calls that succeed");
	errno = EDOM;
	show_errno_kept("send keeps errno", send(c, "y", 1, 0), EDOM);
	errno = EDOM;
	show_errno_kept("recv (server) keeps errno", recv(s, buf, 1, 0), EDOM);
	errno = EDOM;
	show_errno_kept("write keeps errno", write(c, "z", 1), EDOM);
	errno = EDOM;
	show_errno_kept("read (server) keeps errno", read(s, buf, 1), EDOM);
	errno = EDOM;
	show_errno_kept("getsockopt keeps errno",
			getsockopt(c, SOL_SOCKET, SO_TYPE, &so_error,
				   &(socklen_t){ sizeof(int) }),
			EDOM);
	show("send (server)", send(s, "ok", 2, 0));
	wait_readable(c);
	errno = EDOM;
	show_errno_kept("recv keeps errno", recv(c, buf, 2, 0), EDOM);

	section("what the program hands over and cannot read (a buffer, an "
		"iovec array, a msghdr, an address) fails the call as it "
		"would (EFAULT): nothing reads it before the kernel");
	{
		void *volatile bad = (void *)16; /* page 0 */
		struct iovec badv = { bad, 10 };
		struct msghdr badm = { .msg_iov = &badv, .msg_iovlen = 1 };
		static const char req[] = "GET /f HTTP/1.1\r\nHost: f\r\n\r\n";
		static const char ok[] =
			"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
		int f, fs;

		/* a connection's first send, each way, then a request */
		for (int way = 0; way < 4; way++) {
			f = connect_blocking();
			fs = accept(lst, NULL, NULL);
			switch (way) {
			case 0:
				show("write, first send, unreadable buffer",
				     write(f, bad, 10));
				break;
			case 1:
				show("send, first send, unreadable buffer",
				     send(f, bad, 10, 0));
				break;
			case 2:
				show("writev, first send, unreadable buffer",
				     writev(f, &badv, 1));
				break;
			default:
				show("sendmsg, first send, unreadable buffer",
				     sendmsg(f, &badm, 0));
			}
			show("write", write(f, req, sizeof(req) - 1));
			show("recv (server)",
			     recv(fs, buf, sizeof(req) - 1, MSG_WAITALL));
			show("send (server)", send(fs, ok, sizeof(ok) - 1, 0));
			show("recv", recv(f, buf, sizeof(ok) - 1, MSG_WAITALL));
			if (way < 3) {
				close(fs);
				close(f);
			}
		}
		/* the next request of that connection, each way */
		show("write, next request, unreadable buffer",
		     write(f, bad, 10));
		show("send, next request, unreadable buffer",
		     send(f, bad, 10, 0));
		show("writev, unreadable iovec array", writev(f, bad, 1));
		show("writev, unreadable buffer", writev(f, &badv, 1));
		show("sendmsg, unreadable msghdr", sendmsg(f, bad, 0));
		show("sendmsg, unreadable buffer", sendmsg(f, &badm, 0));
		show("send (server)", send(fs, ok, sizeof(ok) - 1, 0));
		wait_readable(f);
		show("readv, unreadable iovec array", readv(f, bad, 1));
		show("recvmsg, unreadable msghdr", recvmsg(f, bad, 0));
		show("recvmsg, unreadable buffer", recvmsg(f, &badm, 0));
		show("recv, unreadable buffer", recv(f, bad, 10, 0));
		show("recv", recv(f, buf, sizeof(ok) - 1, MSG_WAITALL));
		close(fs);
		close(f);
		/* a connect, a Fast Open send: the address */
		f = socket(AF_INET, SOCK_STREAM, 0);
		show("connect, unreadable address",
		     connect(f, bad, sizeof(listener_addr)));
		show("sendto MSG_FASTOPEN, unreadable address",
		     sendto(f, req, 4, MSG_FASTOPEN, bad,
			    sizeof(listener_addr)));
		show("sendmsg MSG_FASTOPEN, unreadable msghdr",
		     sendmsg(f, bad, MSG_FASTOPEN));
		show("connect, unreadable address of 200 bytes",
		     connect(f, bad, 200));
		close(f);
		show("connect on a closed fd, unreadable address",
		     connect(f, bad, sizeof(listener_addr)));
	}

	section("arguments the kernel refuses, on a tracked connection");
	{
		static const char req[] = "GET /g HTTP/1.1\r\nHost: g\r\n\r\n";
		struct iovec v[2] = { { buf, 10 }, { buf, 10 } };
		struct msghdr m = { .msg_iov = v, .msg_iovlen = 100000 };
		/* (volatile: the compiler would refuse them) */
		volatile int neg = -1, many = 100000;
		int f = connect_blocking(), fs = accept(lst, NULL, NULL);

		show("writev, iovcnt -1", writev(f, v, neg));
		show("writev, iovcnt 100000", writev(f, v, many));
		show("writev, no buffers", writev(f, NULL, 0));
		show("sendmsg, msg_iovlen 100000", sendmsg(f, &m, 0));
		show("sendmsg, NULL msghdr", sendmsg(f, NULL, 0));
		show("write of 0 bytes, NULL", write(f, NULL, 0));
		show("write", write(f, req, sizeof(req) - 1));
		show("recv (server)",
		     recv(fs, buf, sizeof(req) - 1, MSG_WAITALL));
		show("send (server)",
		     send(fs, "HTTP/1.1 204 No Content\r\n\r\n", 27, 0));
		wait_readable(f);
		show("readv, iovcnt -1", readv(f, v, neg));
		show("recvmsg, msg_iovlen 100000", recvmsg(f, &m, 0));
		show("recvmsg, NULL msghdr", recvmsg(f, NULL, 0));
		show("recv", recv(f, buf, 27, MSG_WAITALL));
		close(fs);
		close(f);
		f = socket(AF_INET, SOCK_STREAM, 0);
		show("connect, 3-byte address",
		     connect(f, (struct sockaddr *)&listener_addr, 3));
		show("connect, NULL address", connect(f, NULL, 0));
		close(f);
	}

	section("EAGAIN, SO_RCVTIMEO, EINTR from a timer signal");
	fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK);
	show("recv (nothing there)", recv(c, buf, sizeof(buf), 0));
	show("read (nothing there)", read(c, buf, sizeof(buf)));
	show("recv MSG_PEEK (nothing there)",
	     recv(c, buf, sizeof(buf), MSG_PEEK));
	fcntl(c, F_SETFL, fcntl(c, F_GETFL) & ~O_NONBLOCK);
	show("recv MSG_DONTWAIT (nothing there)",
	     recv(c, buf, sizeof(buf), MSG_DONTWAIT));
	{
		struct timeval tv = { 0, 30000 };
		struct timeval none = { 0, 0 };

		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		show("recv times out (SO_RCVTIMEO)",
		     recv(c, buf, sizeof(buf), 0));
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
	}
	{
		struct sigaction sa = { .sa_handler = on_alarm };
		struct itimerval it = { .it_value = { 0, 50000 } };
		struct late late = { .server = s };
		sigset_t alrm;
		pthread_t th;
		int go[2];

		show("pipe", pipe(go));
		late.go = go[0];
		sigemptyset(&alrm);
		sigaddset(&alrm, SIGALRM);
		pthread_sigmask(SIG_BLOCK, &alrm, NULL);
		show("pthread_create",
		     pthread_create(&th, NULL, late_server, &late));
		pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = 0; /* no SA_RESTART */
		sigaction(SIGALRM, &sa, NULL);
		alarm_fd = c;
		setitimer(ITIMER_REAL, &it, NULL);
		show("read interrupted by a signal", read(c, buf, sizeof(buf)));
		show("send from the signal handler", alarm_send_ret);
		show("tell the server to answer", write(go[1], "g", 1));
		show("read the late answer", recv(c, buf, 4, MSG_WAITALL));
		show("pthread_join", pthread_join(th, NULL));
		show("recv (server) the handler's byte",
		     recv(s, buf, 1, MSG_WAITALL));
		close(go[0]);
		close(go[1]);
		signal(SIGALRM, SIG_DFL);
	}

	section("dup, dup2, dup3, F_DUPFD: the copies work, closing one "
		"keeps the other");
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
	show("dup2 a file back onto it", dup2(STDERR_FILENO, d) == d);
	show("send on what is a file now", send(d, "x", 1, 0));
	show("close dup2 copy", close(d));
	r = fcntl(c, F_DUPFD, 150);
	show("F_DUPFD >= 150", r >= 150);
	show("dup3 with O_CLOEXEC", dup3(r, 160, O_CLOEXEC));
	show("dup3 onto itself", dup3(160, 160, 0));
	show("dup2 onto itself", dup2(160, 160));
	show("send on dup3 copy", send(160, "gh", 2, 0));
	show("recv (server)", recv(s, buf, 2, MSG_WAITALL));
	show("close dup3 copy", close(160));
	show("close F_DUPFD copy", close(r));
	show("send (server)", send(s, "ij", 2, 0));
	show("recv on the original", recv(c, buf, 2, MSG_WAITALL));

	section("shutdown, EOF, double close, use after close");
	show("shutdown SHUT_WR", shutdown(c, SHUT_WR));
	show("read EOF (server)", read(s, buf, sizeof(buf)));
	show("send after SHUT_WR", send(c, "x", 1, MSG_NOSIGNAL));
	show("send (server)", send(s, "bye", 3, 0));
	show("recv", recv(c, buf, 3, MSG_WAITALL));
	show("close (server)", close(s));
	show("read EOF", read(c, buf, sizeof(buf)));
	show("read EOF again", read(c, buf, sizeof(buf)));
	show("shutdown SHUT_RDWR", shutdown(c, SHUT_RDWR));
	show("shutdown bad how", shutdown(c, 42));
	show("close", close(c));
	show("close again", close(c));
	show("read on closed fd", read(c, buf, 1));
	show("send on closed fd", send(c, "x", 1, 0));
	show("shutdown on closed fd", shutdown(c, SHUT_RD));
	show("getsockopt on closed fd",
	     getsockopt(c, SOL_SOCKET, SO_ERROR, &so_error,
			&(socklen_t){ sizeof(int) }));

	section("an fd number reused by a pipe after a socket");
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	show("send", send(c, "one", 3, 0));
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

	section("non-blocking connect: EINPROGRESS, SO_ERROR, a second "
		"connect, EISCONN");
	c2 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	tcp_connects++;
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
	show("connect a third time",
	     connect(c2, (struct sockaddr *)&listener_addr,
		     sizeof(listener_addr)));
	s2 = accept(lst, NULL, NULL);

	section("partial write, then EAGAIN, into a peer that does not read");
	{
		int small = 4096;
		ssize_t k;

		setsockopt(c2, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
		setsockopt(s2, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		k = send(c2, big, sizeof(big), 0);
		show("big send is partial", k > 0 && k < (ssize_t)sizeof(big));
		k = send(c2, big, sizeof(big), 0);
		while (k > 0)
			k = send(c2, big, sizeof(big), 0);
		show("then EAGAIN", k);
		show("writev EAGAIN", writev(c2, iov, 1));
	}
	show("recv nothing (EAGAIN)", recv(c2, buf, sizeof(buf), 0));
	show("close", close(c2));
	close(s2);

	section("connection reset by the peer");
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	show("send", send(c, "request", 7, 0));
	show("recv (server)", recv(s, buf, 7, MSG_WAITALL));
	{
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		show("close (server) with RST", close(s));
	}
	wait_readable(c);
	show("recv ECONNRESET", recv(c, buf, sizeof(buf), 0));
	show("send after reset", send(c, "x", 1, MSG_NOSIGNAL));
	show("write after reset (SIGPIPE ignored)", write(c, "x", 1));
	show("close", close(c));

	section("close_range over tracked sockets");
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	show("dup2 to 200", dup2(c, 200));
	show("dup2 to 205", dup2(c, 205));
	show("close_range 200-210", close_range(200, 210, 0));
	show("send on 200 after close_range", send(200, "x", 1, 0));
	show("send on the original", send(c, "still", 5, 0));
	show("recv (server)", recv(s, buf, 5, MSG_WAITALL));
	close(c);
	close(s);

	section("MSG_TRUNC with a NULL buffer: the kernel writes nothing");
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	show("accept", s >= 0);
	show("send", send(c, "GET / HTTP/1.1\r\n\r\n", 18, 0));
	show("recv (server)", recv(s, buf, 18, MSG_WAITALL));
	show("send (server)", send(s, "HTTP/1.1 200 OK\r\n", 17, 0));
	wait_readable(c);
	show("recv NULL MSG_TRUNC", recv(c, NULL, 5, MSG_TRUNC));
	show("recvfrom NULL MSG_TRUNC",
	     recvfrom(c, NULL, 4, MSG_TRUNC, NULL, NULL));
	{
		struct iovec none = { NULL, 3 };
		struct msghdr m = { .msg_iov = &none, .msg_iovlen = 1 };

		show("recvmsg NULL MSG_TRUNC", recvmsg(c, &m, MSG_TRUNC));
	}
	show("recv the rest", recv(c, buf, 5, MSG_WAITALL));

	section("fclose of an fdopen'd socket, syscall(SYS_close) and kin");
	{
		FILE *f = fdopen(c, "r+");

		show("fdopen", f != NULL);
		show("fclose fdopen'd socket", fclose(f));
		show("send after fclose", send(c, "x", 1, MSG_NOSIGNAL));
	}
	close(s);
	c = connect_blocking();
	s = accept(lst, NULL, NULL);
	show("syscall SYS_dup2 to 200", syscall(SYS_dup2, c, 200));
	show("syscall SYS_dup3 to 201", syscall(SYS_dup3, c, 201, O_CLOEXEC));
	show("syscall SYS_close_range 200-201",
	     syscall(SYS_close_range, 200, 201, 0));
	show("send on 200 after it", send(200, "x", 1, 0));
	show("send on the original", send(c, "ok", 2, 0));
	show("recv (server)", recv(s, buf, 2, MSG_WAITALL));
	show("syscall SYS_close", syscall(SYS_close, c));
	show("syscall SYS_close again", syscall(SYS_close, c));
	show("send after syscall close", send(c, "x", 1, MSG_NOSIGNAL));
	show("syscall unknown number", syscall(99999, 1, 2, 3, 4, 5, 6));
	errno = EDOM;
	show_errno_kept("syscall SYS_getppid keeps errno",
			syscall(SYS_getppid) > 0, EDOM);
	close(s);

	section("calls that hand back a new fd number");
	{
		char path[] = "/tmp/transparency.XXXXXX";
		struct stat st;
		int p[2], f;
		FILE *fp;

		show("mkdtemp", mkdtemp(path) != NULL);
		umask(022);
		f = open(path, O_RDONLY | O_DIRECTORY);
		show("open a directory", f >= 0);
		r = openat(f, "created", O_WRONLY | O_CREAT | O_EXCL, 0640);
		show("openat O_CREAT 0640", r >= 0);
		fstat(r, &st);
		show("its mode", st.st_mode & 0777);
		close(r);
		show("openat it again O_EXCL",
		     openat(f, "created", O_WRONLY | O_CREAT | O_EXCL, 0600));
		show("unlinkat", unlinkat(f, "created", 0));
		close(f);
		show("rmdir", rmdir(path));
		show("open missing file", open("/nonexistent/x", O_RDONLY));
		fp = fopen("/dev/null", "r");
		show("fopen", fp != NULL);
		show("fclose file", fclose(fp));
		show("fopen missing file",
		     fopen("/nonexistent/x", "r") == NULL ? -1 : 0);
		show("pipe2", pipe2(p, O_CLOEXEC));
		close(p[0]);
		close(p[1]);
		show("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, p));
		show("socketpair write", write(p[0], "sp", 2));
		show("socketpair read", read(p[1], buf, 2));
		close(p[0]);
		close(p[1]);
		r = epoll_create1(EPOLL_CLOEXEC);
		show("epoll_create1", r >= 0);
		close(r);
		r = eventfd(0, 0);
		show("eventfd", r >= 0);
		close(r);
		r = memfd_create("transparency", 0);
		show("memfd_create", r >= 0);
		close(r);
		show("accept4 on a non-listener",
		     accept4(STDIN_FILENO, NULL, NULL, 0));
	}

	section("IPv6 loopback");
	{
		struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
					   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
		socklen_t alen = sizeof(a6);
		int l6 = socket(AF_INET6, SOCK_STREAM, 0);

		if (l6 >= 0 && bind(l6, (struct sockaddr *)&a6, alen) == 0 &&
		    listen(l6, 4) == 0 &&
		    getsockname(l6, (struct sockaddr *)&a6, &alen) == 0) {
			c = socket(AF_INET6, SOCK_STREAM, 0);
			tcp_connects++;
			show("connect ::1",
			     connect(c, (struct sockaddr *)&a6, sizeof(a6)));
			s = accept(l6, NULL, NULL);
			show("send", send(c, "v6", 2, 0));
			show("recv (server)", recv(s, buf, 2, MSG_WAITALL));
			show("send (server)", send(s, "six", 3, 0));
			show("recv", recv(c, buf, 3, MSG_WAITALL));
			show("close", close(c));
			close(s);
		} else {
			printf("(no IPv6 loopback on this machine)\n");
		}
		if (l6 >= 0)
			close(l6);
	}

	section("bad fds and non-sockets");
	show("read fd -1", read(-1, buf, 1));
	show("write fd 9999", write(9999, buf, 1));
	show("recv fd -1", recv(-1, buf, 1, 0));
	show("sendmsg fd 9999", sendmsg(9999, &msg, 0));
	show("close fd -1", close(-1));
	show("close fd 1000000000", close(1000000000));
	show("dup fd -1", dup(-1));
	show("dup2 onto -1", dup2(0, -1));
	d = open("/dev/null", O_WRONLY);
	show("send on a file", send(d, "x", 1, 0));
	show("connect on a file", connect(d, (struct sockaddr *)&listener_addr,
					  sizeof(listener_addr)));
	show("getsockopt on a file",
	     getsockopt(d, SOL_SOCKET, SO_ERROR, &so_error,
			&(socklen_t){ sizeof(int) }));
	show("write on a file", write(d, "x", 1));
	close(d);
	d = socket(AF_INET, SOCK_STREAM, 0);
	show("connect NULL address", connect(d, NULL, 0));
	show("connect short address",
	     connect(d, (struct sockaddr *)&listener_addr, 4));
	show("send on an unconnected socket", send(d, "x", 1, MSG_NOSIGNAL));
	show("recv on an unconnected socket", recv(d, buf, 1, 0));
	close(d);

	section("UDP, untouched by the layer");
	{
		int u1 = socket(AF_INET, SOCK_DGRAM, 0);
		int u2 = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t alen = sizeof(a);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		bind(u2, (struct sockaddr *)&a, sizeof(a));
		getsockname(u2, (struct sockaddr *)&a, &alen);
		show("sendto udp (unconnected)",
		     sendto(u1, "dgram", 5, 0, (struct sockaddr *)&a,
			    sizeof(a)));
		show("recvfrom udp",
		     recvfrom(u2, buf, sizeof(buf), 0, NULL, NULL));
		show("connect udp",
		     connect(u1, (struct sockaddr *)&a, sizeof(a)));
		show("send udp", send(u1, "datagram", 8, 0));
		show("recv udp", recv(u2, buf, sizeof(buf), 0));
		show("write udp", write(u1, "w", 1));
		show("read udp", read(u2, buf, sizeof(buf)));
		close(u1);
		close(u2);
	}
	close(lst);
	printf("tcp connections opened: %d\n", tcp_connects);
	printf("done after %d steps\n", step);
	return 0;
}
