/* first_connect.c - what the layer costs a short process, bare and with
 * each given libobserve.so, interleaved round by round
 * (scripts/bench-spool.sh): the time from spawning a process that makes one
 * HTTP request on one connection to its exit, and the time its connect()
 * took (the layer makes the spool there).
 *
 * usage: first_connect run PORT
 *          one GET /100b from 127.0.0.1:PORT, the answer read, exit 0; the
 *          connect() call's duration (ns) written to fd 3 if it is open
 *        first_connect bench ROUNDS PORT DIR [LIB...]
 *          ROUNDS rounds; in each, one run bare and one per LIB (preloaded,
 *          spools into DIR/<n>, emptied after each run, untimed), in an
 *          order rotated round by round. Prints per variant the minimum,
 *          median and maximum of both times, in microseconds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_VARIANTS 8

extern char **environ;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One GET on a fresh connection, the whole answer read (nginx closes it:
 * "Connection: close"); how long connect() took goes to fd 3. */
static int run(int port)
{
	static const char req[] = "GET /100b HTTP/1.1\r\nHost: 127.0.0.1\r\n"
				  "Connection: close\r\n\r\n";
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char buf[4096];
	double t0, t1;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0), rc;

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return 1;
	t0 = now_us();
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	t1 = now_us();
	n = snprintf(buf, sizeof(buf), "%.3f\n", t1 - t0);
	if (rc != 0 || write(3, buf, (size_t)n) != n ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
		return 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n == 0 ? 0 : 1;
}

/* Remove the files in dir (the spools of the last run). */
static void empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* "min M  median M  max M" of n times (sorted here). */
static void print_spread(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	printf("  %-8s min %7.1f  median %7.1f  max %9.1f us", what, t[0],
	       t[n / 2], t[n - 1]);
}

int main(int argc, char **argv)
{
	char self[4096], port_s[16], dirs[MAX_VARIANTS][4096];
	char env_lib[MAX_VARIANTS][4200], env_dir[MAX_VARIANTS][4200];
	double *times[MAX_VARIANTS], *conn_times[MAX_VARIANTS];
	posix_spawn_file_actions_t actions;
	int rounds, variants, pipefd[2];
	ssize_t n;

	if (argc == 3 && strcmp(argv[1], "run") == 0)
		return run(atoi(argv[2]));
	if (argc < 5 || strcmp(argv[1], "bench") != 0 ||
	    argc - 5 + 1 > MAX_VARIANTS) {
		fprintf(stderr, "usage: first_connect run PORT | bench ROUNDS "
				"PORT DIR [LIB...]\n");
		return 2;
	}
	rounds = atoi(argv[2]);
	variants = argc - 5 + 1;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0 || rounds < 1)
		return 2;
	self[n] = '\0';
	snprintf(port_s, sizeof(port_s), "%s", argv[3]);
	for (int v = 0; v < variants; v++) {
		snprintf(dirs[v], sizeof(dirs[v]), "%s/%d", argv[4], v);
		mkdir(dirs[v], 0700);
		snprintf(env_lib[v], sizeof(env_lib[v]), "LD_PRELOAD=%s",
			 v ? argv[5 + v - 1] : "");
		snprintf(env_dir[v], sizeof(env_dir[v]), "OBSERVE_DIR=%s",
			 dirs[v]);
		times[v] = calloc((size_t)rounds, sizeof(double));
		conn_times[v] = calloc((size_t)rounds, sizeof(double));
		if (!times[v] || !conn_times[v])
			return 1;
	}
	if (pipe(pipefd) != 0 || posix_spawn_file_actions_init(&actions) ||
	    posix_spawn_file_actions_adddup2(&actions, pipefd[1], 3))
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < variants; i++) {
			int v = (r + i) % variants, status;
			char *args[] = { self, "run", port_s, NULL };
			char *env[] = { env_lib[v], env_dir[v], NULL };
			char out[64] = "";
			double t0 = now_us();
			pid_t pid;

			if (posix_spawn(&pid, self, &actions, NULL, args,
					env) ||
			    waitpid(pid, &status, 0) != pid ||
			    !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
			    read(pipefd[0], out, sizeof(out) - 1) <= 0) {
				fprintf(stderr,
					"first_connect: a run failed "
					"(variant %d)\n",
					v);
				return 1;
			}
			times[v][r] = now_us() - t0;
			conn_times[v][r] = atof(out);
			empty_dir(dirs[v]);
		}
	}
	for (int v = 0; v < variants; v++) {
		printf("%s\n", v ? argv[5 + v - 1] : "bare");
		print_spread("process", times[v], rounds);
		printf("\n");
		print_spread("connect", conn_times[v], rounds);
		printf("\n");
	}
	return 0;
}
