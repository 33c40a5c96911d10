/* callbench.c - cost of an intercepted call: N send() calls on a connected
 * loopback TCP socket (tracked by the layer), each drained by a recv() on
 * the accepted end (not tracked). Prints the best of R runs in ns per
 * iteration; run it bare and preloaded, the difference is the layer's cost.
 *
 * usage: callbench [N] [R] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int one = 1, lst, c, s;
	char buf[64] = { 0 };
	double best = 1e18;

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
	for (int r = 0; r < runs; r++) {
		double t0 = now_ns(), per;
		for (int i = 0; i < n; i++) {
			if (send(c, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
			    recv(s, buf, sizeof(buf), MSG_WAITALL) !=
				    (ssize_t)sizeof(buf))
				return 1;
		}
		per = (now_ns() - t0) / n;
		if (per < best)
			best = per;
	}
	printf("%.1f\n", best);
	return 0;
}
