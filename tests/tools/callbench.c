/* callbench.c - what one intercepted call costs, for scripts/bench.sh.
 *
 * A connected loopback TCP pair in one thread: the connecting end is tracked
 * by the layer, the accepted end is not (one table lookup per call). (A
 * socketpair would not do: the layer leaves AF_UNIX alone.)
 *
 * Per iteration:
 *   send      send(64 B) on the tracked end, recv(64 B) on the other: one
 *             tracked call, all iterations in one exchange;
 *   pingpong  send(64 B) on the tracked end, recv and send back on the
 *             other, recv(64 B) on the tracked end: two tracked calls, and
 *             every iteration completes an exchange (writes a spool record).
 *   untracked send(64 B), recv(64 B) on an AF_UNIX socket pair, which the
 *             layer does not track: the fast path every other fd takes.
 *
 * Wall time on a shared machine is too noisy to see tens of nanoseconds
 * between two runs, so the comparison is made inside one run: blocks of
 * iterations whose calls go through libc (and so through the layer, when it
 * is preloaded) alternate with blocks doing the same system calls directly
 * (raw_syscall.h: not even syscall(2), which the layer hooks, sees them).
 * The median of the per-block differences
 * is the cost of the libc path over the raw one: about 0 bare, the layer's
 * cost when preloaded.
 *
 *   clock     clock_gettime(CLOCK_MONOTONIC), the layer's clock: what one
 *             time stamp costs here.
 *
 * Prints "LIBC RAW DIFF", medians in ns per iteration (clock: one number).
 *
 * usage: callbench [send|pingpong|untracked|clock] [BLOCKS]
 *                  [ITERATIONS_PER_BLOCK]
 *        (defaults: send 101 1000)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "raw_syscall.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void check(long got, const char *what)
{
	if (got != 64) {
		perror(what);
		exit(1);
	}
}

static long raw_send(int fd, const void *buf, size_t len)
{
	return obs_raw_syscall(SYS_sendto, fd, (long)buf, (long)len, 0, 0, 0);
}

static long raw_recv(int fd, void *buf, size_t len)
{
	return obs_raw_syscall(SYS_recvfrom, fd, (long)buf, (long)len,
			       MSG_WAITALL, 0, 0);
}

/* run_block - n iterations, through libc (raw == 0) or syscall(2); returns
 * ns per iteration. Only the tracked end's calls switch path: the other
 * end's calls are the same in both kinds of block. */
static double run_block(int c, int s, int n, int pingpong, int raw)
{
	char buf[64] = { 0 };
	double t0 = now_ns();

	for (int i = 0; i < n; i++) {
		check(raw ? raw_send(c, buf, sizeof(buf))
			  : send(c, buf, sizeof(buf), 0),
		      "send");
		check(recv(s, buf, sizeof(buf), MSG_WAITALL), "recv (other)");
		if (!pingpong)
			continue;
		check(send(s, buf, sizeof(buf), 0), "send (other)");
		check(raw ? raw_recv(c, buf, sizeof(buf))
			  : recv(c, buf, sizeof(buf), MSG_WAITALL),
		      "recv");
	}
	return (now_ns() - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "send";
	int blocks = argc > 2 ? atoi(argv[2]) : 101;
	int per_block = argc > 3 ? atoi(argv[3]) : 1000;
	int pingpong = strcmp(mode, "pingpong") == 0;
	int untracked = strcmp(mode, "untracked") == 0;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int one = 1, lst, c, s;
	double *libc_ns, *raw_ns, *diff_ns;

	if (blocks < 1 || per_block < 1 ||
	    (!pingpong && !untracked && strcmp(mode, "send") &&
	     strcmp(mode, "clock"))) {
		fprintf(stderr, "usage: callbench [send|pingpong|untracked|"
				"clock] [BLOCKS] [ITERATIONS_PER_BLOCK]\n");
		return 2;
	}
	libc_ns = calloc((size_t)blocks, sizeof(double));
	raw_ns = calloc((size_t)blocks, sizeof(double));
	diff_ns = calloc((size_t)blocks, sizeof(double));
	if (!libc_ns || !raw_ns || !diff_ns)
		return 1;

	if (strcmp(mode, "clock") == 0) {
		volatile double sink = 0;

		for (int b = 0; b < blocks; b++) {
			double t0 = now_ns();

			for (int i = 0; i < per_block; i++)
				sink += now_ns();
			libc_ns[b] = (now_ns() - t0) / per_block;
		}
		printf("%.1f\n", median(libc_ns, blocks));
		return sink < 0;
	}

	if (untracked) {
		int pair[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair))
			return 1;
		c = pair[0];
		s = pair[1];
		lst = -1;
		goto run;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lst = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(lst, (struct sockaddr *)&a, sizeof(a)) || listen(lst, 1) ||
	    getsockname(lst, (struct sockaddr *)&a, &alen))
		return 1;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, sizeof(a)))
		return 1;
	s = accept(lst, NULL, NULL);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

run:
	run_block(c, s, per_block, pingpong, 0); /* warm up both paths */
	run_block(c, s, per_block, pingpong, 1);
	for (int b = 0; b < blocks; b++) {
		/* alternate which kind goes first, so that neither is always
		 * the one after a pause */
		if (b % 2) {
			raw_ns[b] = run_block(c, s, per_block, pingpong, 1);
			libc_ns[b] = run_block(c, s, per_block, pingpong, 0);
		} else {
			libc_ns[b] = run_block(c, s, per_block, pingpong, 0);
			raw_ns[b] = run_block(c, s, per_block, pingpong, 1);
		}
		diff_ns[b] = libc_ns[b] - raw_ns[b];
	}
	printf("%.1f %.1f %.1f\n", median(libc_ns, blocks),
	       median(raw_ns, blocks), median(diff_ns, blocks));
	close(c);
	close(s);
	if (lst >= 0)
		close(lst);
	return 0;
}
