/* sigsend.c - a signal handler that calls hooked functions (send, connect,
 * close) every 200 us while the main loop makes the same calls: the layer
 * must never wait for a lock its own thread holds, nor corrupt a record.
 *
 * The program is its own server: a listener whose accepted end a thread
 * drains (counting the main loop's 'M' bytes and the handler's 'h' bytes,
 * answering 10 bytes for every 200 'M'), and a second listener a thread
 * accepts and closes (the short connections of both).
 *
 * Main loop, for SECONDS: send 200 'M', receive the 10-byte answer; every
 * 64th round a short connection (socket, connect, close). The SIGALRM
 * handler (ITIMER_REAL, 200 us, SA_RESTART): send 1 'h' (MSG_DONTWAIT),
 * and every 8th time a short connection.
 *
 * With "alone", the servers run in a forked child and the program keeps
 * one thread: the layer then takes no locks (obs_alone), and the handler's
 * calls meet its bookkeeping without them.
 *
 * usage: sigsend SECONDS [alone]
 * Prints "rounds R main M handler H received_M RM received_h RH answers A
 * port P" (P: the data listener's port); exit status 0 when the server
 * got every byte that was sent.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUND_BYTES 200
#define ANSWER_BYTES 10

static struct sockaddr_in data_addr, side_addr;
static int data_fd = -1;
static volatile sig_atomic_t handler_sent, handler_calls;
static volatile int side_stop;
static long received_m, received_h, answers;

static void die(const char *what)
{
	fprintf(stderr, "sigsend: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->sin_port = 0;
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)a, &len) != 0)
		die("listener");
	return fd;
}

/* A short connection to the side listener: socket, connect, close (all
 * async-signal-safe). */
static void short_connection(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return;
	connect(fd, (struct sockaddr *)&side_addr, sizeof(side_addr));
	close(fd);
}

static void on_alarm(int sig)
{
	int err = errno;

	(void)sig;
	if (send(data_fd, "h", 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		handler_sent++;
	if (++handler_calls % 8 == 0)
		short_connection();
	errno = err;
}

/* The data server: counts the bytes by kind, answers every 200 'M'. */
static void *data_server(void *arg)
{
	int s = accept(*(int *)arg, NULL, NULL), one = 1;
	char buf[4096], answer[ANSWER_BYTES];
	long m_in_round = 0;
	ssize_t n;

	memset(answer, 'a', sizeof(answer));
	if (s < 0)
		die("accept");
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while ((n = read(s, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == 'h') {
				received_h++;
				continue;
			}
			received_m++;
			if (++m_in_round == ROUND_BYTES) {
				m_in_round = 0;
				if (write(s, answer, sizeof(answer)) !=
				    sizeof(answer))
					die("answer");
				answers++;
			}
		}
	}
	close(s);
	return NULL;
}

static void *side_server(void *arg)
{
	int l = *(int *)arg;

	while (!side_stop) {
		int s = accept(l, NULL, NULL);
		if (s >= 0)
			close(s);
	}
	return NULL;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die("send");
		p += k;
		n -= (size_t)k;
	}
}

static void recv_all(int fd, char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = recv(fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die("recv");
		p += k;
		n -= (size_t)k;
	}
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, end;
	int data_l = listener(&data_addr), side_l = listener(&side_addr);
	struct sigaction sa = { .sa_handler = on_alarm,
				.sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	char round[ROUND_BYTES], answer[ANSWER_BYTES];
	pthread_t data_th, side_th;
	sigset_t alrm;
	long rounds = 0;
	bool alone = argc > 2 && strcmp(argv[2], "alone") == 0;
	int counts[2] = { -1, -1 };
	pid_t server = 0;

	if (seconds <= 0 || seconds > 60) {
		fprintf(stderr, "usage: sigsend SECONDS (0-60]\n");
		return 2;
	}
	memset(round, 'M', sizeof(round));
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* the servers' threads */
	if (alone) {
		/* the servers in a child, which sends its counts back */
		if (pipe(counts) != 0 || (server = fork()) < 0)
			die("fork");
		if (server == 0) {
			long got[3];

			close(counts[0]);
			if (pthread_create(&side_th, NULL, side_server,
					   &side_l))
				die("pthread_create");
			data_server(&data_l);
			side_stop = 1;
			short_connection();
			pthread_join(side_th, NULL);
			got[0] = received_m;
			got[1] = received_h;
			got[2] = answers;
			_exit(write(counts[1], got, sizeof(got)) ==
					      (ssize_t)sizeof(got)
				      ? 0
				      : 2);
		}
		close(counts[1]);
	} else if (pthread_create(&data_th, NULL, data_server, &data_l) ||
		   pthread_create(&side_th, NULL, side_server, &side_l)) {
		die("pthread_create");
	}
	data_fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(data_fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	if (connect(data_fd, (struct sockaddr *)&data_addr,
		    sizeof(data_addr)) != 0)
		die("connect");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	end = now_s() + seconds;
	while (now_s() < end) {
		send_all(data_fd, round, sizeof(round));
		recv_all(data_fd, answer, sizeof(answer));
		if (++rounds % 64 == 0)
			short_connection();
	}
	setitimer(ITIMER_REAL, &off, NULL);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	shutdown(data_fd, SHUT_WR);
	if (alone) {
		long got[3];
		int status;

		if (read(counts[0], got, sizeof(got)) != (ssize_t)sizeof(got) ||
		    waitpid(server, &status, 0) != server || status != 0)
			die("the server child");
		received_m = got[0];
		received_h = got[1];
		answers = got[2];
		close(data_fd);
	} else {
		pthread_join(data_th, NULL);
		close(data_fd);
		side_stop = 1;
		short_connection(); /* wakes the side server's accept */
		pthread_join(side_th, NULL);
	}
	printf("rounds %ld main %ld handler %ld received_M %ld received_h %ld "
	       "answers %ld port %d\n",
	       rounds, rounds * ROUND_BYTES, (long)handler_sent, received_m,
	       received_h, answers, ntohs(data_addr.sin_port));
	return received_m == rounds * ROUND_BYTES &&
			       received_h == handler_sent && answers == rounds
		       ? 0
		       : 1;
}
