/* netsim.c - a TCP relay that delays and rate-limits what it forwards.
 *
 * netsim listens on a loopback port (127.0.0.0/8 or ::1) and relays every
 * connection it accepts to a target host:port. Each direction, "up" (client
 * to server) and "down" (server to client), holds the data it reads for a
 * delay before writing it on: a byte read from one side at time t is written
 * to the other at t + delay. The delay is fixed, or taken from a file of
 * delays (one per line, in ms) in turn, per chunk or per connection; each
 * direction can also be limited to a rate by a token bucket. Seed 004 (an
 * HTTP network simulator that delays packets by a time series read from a
 * file) is the model; its lesson was that the timer's granularity limits the
 * accuracy, so this relay measures its own.
 *
 * What is delayed: data, the end of data (a FIN is passed on by
 * shutdown(SHUT_WR) once the data before it is delivered, itself delayed)
 * and resets (a reset read on one side aborts the other once the data before
 * it is delivered). What is NOT delayed: the TCP handshake. The client's
 * connect() completes against the relay's own listening socket, so a Te
 * measured through the relay is a loopback Te, without the delay; the relay
 * connects to the target when it accepts the client.
 *
 * The time t of a read is when the bytes reached the relay's socket: the
 * kernel's receive time stamp of the last segment read (SO_TIMESTAMPNS), so
 * the time the relay takes to wake up and read does not add to the delay
 * (unless it is longer than the delay); without a stamp, the time the loop
 * woke up; never earlier than the end of a pause in reading (back-pressure).
 * A chunk is what one read returns (at most --chunk bytes); a series gives
 * each chunk, or each connection, the next delay.
 *
 * Scheduling: one thread, one epoll set, a binary heap of the directions
 * whose next chunk is waiting for its time. The loop sleeps in
 * epoll_pwait2() with a nanosecond timeout (timer slack set to 1 ns) until
 * --spin-us before the earliest due time, then polls (epoll_pwait2 with a
 * zero timeout, so reads are still served) until the due time itself. Times
 * come from CLOCK_MONOTONIC. For every chunk written when it fell due, the
 * lateness (time of the write call - due time) goes into a histogram with
 * 1 us resolution below 10 ms; a write that had to wait for the receiver
 * (EAGAIN: the peer does not read) or for the target's connect is counted as
 * "blocked" instead, as that wait is the peer's, not the relay's. With
 * --rt-prio the relay runs as SCHED_FIFO, so that on a busy machine it does
 * not wait behind other processes for a CPU when a chunk falls due. On
 * SIGTERM, SIGINT, at the end of --lifetime, and on SIGUSR1 (without
 * exiting) one line goes to stderr, and to --stats FILE:
 *
 *   netsim: connections=N ... late_n=N late_p50_us=N late_p99_us=N
 *           late_max_us=N blocked=N ... lag_p50_us=N ...
 *
 * (lag: read time - arrival time, how long data waited for the relay to
 * read it; not part of the delay error while it is shorter than the delay).
 *
 * Percentiles are by nearest rank. Bounds: --max-conns connections (accepting
 * pauses above it), --queue-max bytes queued per direction and --mem-max in
 * all (reading from a side pauses above them: back-pressure), --chunk bytes
 * per read, delays of at most 10 minutes, series of at most 1,000,000 lines.
 *
 * usage: netsim --target HOST:PORT [options]; netsim --help
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define MAX_DELAY_MS 600000.0 /* 10 minutes */
#define MAX_SERIES 1000000
#define MAX_EVENTS 256
#define ACCEPTS_PER_EVENT 64
#define CHUNKS_PER_PUMP 256
#define PUMPS_PER_ROUND 4096
/* what a queued chunk costs beyond its bytes, counted against the bounds */
#define CHUNK_OVERHEAD 64
/* lateness histogram: 1 us bins below 10 ms, 1 ms bins below 10 s */
#define LATE_FINE 10000
#define LATE_COARSE 10000
#define LATE_LOG_MAX 10000000 /* lines in --late-log */

enum chunk_kind { CHUNK_DATA, CHUNK_FIN, CHUNK_RST };

/* A run of bytes read in one recv(), or the end of the stream (FIN) or a
 * reset (RST) read at due_ns - delay. off bytes of it are written already. */
struct chunk {
	struct chunk *next;
	int64_t due_ns;
	size_t len, off;
	enum chunk_kind kind;
	unsigned char data[];
};

/* What one direction does to the data: its delay (fixed or a series) and its
 * rate; shared by that direction of every connection. */
struct shaper {
	const char *name;
	int64_t delay_ns;
	int64_t *series; /* NULL: delay_ns for everything */
	size_t series_len, cursor;
	double rate;	/* bytes per second, 0 = unlimited */
	double burst;	/* bucket size, bytes */
	double quantum; /* smallest write the bucket waits for, bytes */
	uint64_t bytes, chunks;
};

struct conn;

/* One socket of a relayed connection (client or server side). */
struct endpoint {
	int fd;
	uint32_t registered; /* events in the epoll set, 0 = not in it */
	bool connecting;     /* server side: connect() in progress */
	struct conn *conn;   /* NULL for the listening socket and signalfd */
};

/* One direction of a connection: reads src, writes dst. */
struct direction {
	struct conn *conn;
	struct shaper *shaper;
	struct endpoint *src, *dst;
	struct chunk *head, *tail;
	size_t queued;		/* bytes plus CHUNK_OVERHEAD per chunk */
	int64_t delay_ns;	/* the delay last applied */
	int64_t last_due_ns;	/* due times never decrease: byte order */
	int64_t unblocked_ns;	/* end of the last wait for the receiver */
	int64_t resumed_ns;	/* end of the last pause in reading */
	int64_t token_ready_ns; /* when the bucket will hold a quantum */
	int64_t tokens_ns;
	double tokens;
	size_t heap_index; /* SIZE_MAX: not in the heap */
	int64_t key_ns;	   /* heap key: when to pump next */
	bool blocked;	   /* waiting for dst to be writable (or connected) */
	bool paused;	   /* not reading src: too much queued */
	bool eof_read;	   /* src gave EOF or a reset: no more reading */
	bool rst_queued;
	bool done; /* FIN passed on, or nothing more can be written */
};

struct conn {
	struct endpoint client, server;
	struct direction up, down;
	struct conn *prev, *next;
	bool closing;
};

struct options {
	const char *bind_addr;
	int listen_port;
	const char *target;
	const char *stats_file;
	const char *late_log;
	bool series_per_conn;
	size_t chunk_max, queue_max, mem_max, max_conns;
	int target_rcvbuf; /* SO_RCVBUF of the sockets to the target, 0:
			      kernel's */
	int64_t spin_ns;
	double lifetime_s;
	int rt_prio;
	bool use_timerfd; /* wait on a timerfd, not epoll_pwait2's timeout */
};

struct histogram {
	uint64_t fine[LATE_FINE];     /* us */
	uint64_t coarse[LATE_COARSE]; /* ms */
	uint64_t over, n;
	int64_t max_us;
};

struct relay {
	struct options opt;
	struct shaper up, down;
	struct sockaddr_storage target_addr;
	socklen_t target_len;
	int epfd;
	struct endpoint listener, signals, timer;
	int64_t timer_armed_ns; /* the timerfd's expiry, 0 = disarmed */
	bool accept_paused;
	int64_t accept_resumed_ns; /* end of the last pause in accepting */
	struct conn *live, *dead;
	size_t nconns;
	struct direction **heap;
	size_t heap_len, heap_cap;
	size_t queued_total;
	bool mem_full;
	unsigned char *buf;
	bool stop;
	uint64_t conns_total, connect_failed, resets, writes, blocked;
	uint64_t reads, stamped;
	struct histogram late; /* write time - due time */
	FILE *late_log;
	uint64_t late_logged;
	struct histogram lag; /* read time - arrival time (kernel stamp) */
};

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * NS_PER_S + t.tv_nsec;
}

static void usage(FILE *f)
{
	fputs("usage: netsim --target HOST:PORT [options]\n"
	      "A TCP relay from a loopback port to HOST:PORT that delays and rate-limits\n"
	      "what it forwards, per direction (up = client to server, down = server to\n"
	      "client). Prints the port it listens on, one line on stdout, once ready.\n"
	      "\n"
	      "  -t, --target HOST:PORT   where to relay to ([V6ADDR]:PORT for IPv6)\n"
	      "  -l, --listen PORT        port to listen on (default 0: a free one)\n"
	      "  -b, --bind ADDR          127.0.0.0/8 or ::1 (default 127.0.0.1)\n"
	      "  -d, --delay MS           delay both directions by MS (fractions allowed)\n"
	      "      --up MS, --down MS   delay one direction\n"
	      "      --up-series FILE, --down-series FILE\n"
	      "                           delays in ms, one per line ('#' starts a comment),\n"
	      "                           taken in turn and from the top again at the end\n"
	      "      --series-per chunk|connection\n"
	      "                           a new delay for every chunk read (default) or for\n"
	      "                           every connection\n"
	      "  -r, --rate BPS           limit both directions to BPS bytes per second\n"
	      "      --rate-up BPS, --rate-down BPS\n"
	      "                           limit one direction (suffixes k M G = 10^3.., Ki Mi Gi\n"
	      "                           = 2^10..)\n"
	      "      --burst BYTES        token bucket size (default: 10 ms at the rate);\n"
	      "                           the bucket starts full\n"
	      "      --spin-us US         poll for the last US microseconds before a due time\n"
	      "                           instead of sleeping (default 200, 0 = never)\n"
	      "      --chunk BYTES        largest read (default 64Ki)\n"
	      "      --queue-max BYTES    stop reading a side when its direction holds this\n"
	      "                           much (default 1Mi)\n"
	      "      --target-rcvbuf BYTES\n"
	      "                           SO_RCVBUF of the sockets to the target (the\n"
	      "                           kernel doubles it): with a small --queue-max,\n"
	      "                           the target feels a slow path as a full send\n"
	      "                           buffer, as it would on a real one\n"
	      "      --mem-max BYTES      ... or when all directions hold this much (64Mi)\n"
	      "      --max-conns N        connections at once (default 1024)\n"
	      "      --lifetime S         exit after S seconds (default: run until a signal)\n"
	      "      --timerfd            sleep on a timerfd rather than epoll_pwait2's\n"
	      "                           timeout (the fallback where that is missing)\n"
	      "      --rt-prio N          run as SCHED_FIFO at priority N (1-99; needs\n"
	      "                           CAP_SYS_NICE): keeps time on a busy machine\n"
	      "  -s, --stats FILE         write the summary line to FILE too\n"
	      "      --late-log FILE      the lateness of every timed write, ns, one a line\n"
	      "  -h, --help               this text\n"
	      "\n"
	      "A byte read at time t is written at t + delay, and no faster than the rate;\n"
	      "delays never reorder bytes (a smaller delay after a larger one waits for it).\n"
	      "The TCP handshake is not delayed: the client connects to the relay itself.\n"
	      "On SIGTERM, SIGINT, the end of --lifetime and SIGUSR1 (which does not stop\n"
	      "it) netsim writes one summary line to stderr: connections, bytes, and the\n"
	      "lateness of its writes (write time - due time; count, p50, p99, max in us).\n",
	      f);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)))
__attribute__((noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("netsim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* parse_ms - a delay in milliseconds, 0 to MAX_DELAY_MS, as nanoseconds.
 * Returns false on anything else. */
static bool parse_ms(const char *text, int64_t *ns)
{
	char *end;
	double ms;

	errno = 0;
	ms = strtod(text, &end);
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
		end++;
	if (errno || end == text || *end || !(ms >= 0.0) || ms > MAX_DELAY_MS)
		return false;
	*ns = (int64_t)(ms * NS_PER_MS + 0.5);
	return true;
}

/* parse_bytes - a positive count with an optional k/M/G (powers of 1000) or
 * Ki/Mi/Gi (powers of 1024) suffix; at most 2^40. */
static double parse_bytes(const char *option, const char *text)
{
	char *end;
	double v, unit = 1;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || !(v > 0))
		die("%s: not a positive number: '%s'", option, text);
	if (*end == 'k' || *end == 'K')
		unit = 1e3;
	else if (*end == 'M')
		unit = 1e6;
	else if (*end == 'G')
		unit = 1e9;
	if (unit > 1 && end[1] == 'i') {
		unit = unit == 1e3   ? 1024.0
		       : unit == 1e6 ? 1048576.0
				     : 1073741824.0;
		end++;
	}
	if (unit > 1)
		end++;
	if (*end)
		die("%s: bad suffix in '%s' (k M G Ki Mi Gi)", option, text);
	v *= unit;
	if (v > 1099511627776.0)
		die("%s: too large: '%s'", option, text);
	return v;
}

static void parse_delay(const char *option, const char *text, int64_t *ns)
{
	if (!parse_ms(text, ns))
		die("%s: a delay in ms from 0 to %.0f, not '%s'", option,
		    MAX_DELAY_MS, text);
}

/* load_series - read FILE's delays (ms, one per line, '#' comments, blank
 * lines skipped) into the shaper. Dies naming the file and line on error. */
static void load_series(struct shaper *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t cap = 0, lineno = 0;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *hash = strchr(line, '#');
		int64_t ns;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			die("%s:%zu: line too long", path, lineno);
		if (hash)
			*hash = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '\n' || *p == '\r')
			continue;
		if (!parse_ms(p, &ns))
			die("%s:%zu: not a delay in ms (0 to %.0f): %s", path,
			    lineno, MAX_DELAY_MS, p);
		if (s->series_len == MAX_SERIES)
			die("%s: more than %d delays", path, MAX_SERIES);
		if (s->series_len == cap) {
			int64_t *grown;

			cap = cap ? cap * 2 : 256;
			grown = realloc(s->series, cap * sizeof(*grown));
			if (!grown)
				die("out of memory reading %s", path);
			s->series = grown;
		}
		s->series[s->series_len++] = ns;
	}
	if (ferror(f))
		die("%s: read error", path);
	fclose(f);
	if (s->series_len == 0)
		die("%s: no delays in it", path);
}

/* resolve_target - HOST:PORT or [V6]:PORT to the relay's target address. */
static void resolve_target(struct relay *r, const char *target)
{
	char host[256];
	const char *colon = strrchr(target, ':');
	struct addrinfo hints = { 0 }, *res;
	size_t hlen;
	int rc;

	if (!colon || colon == target || !colon[1])
		die("--target: HOST:PORT, not '%s'", target);
	hlen = (size_t)(colon - target);
	if (target[0] == '[') {
		if (hlen < 3 || target[hlen - 1] != ']')
			die("--target: [ADDR]:PORT, not '%s'", target);
		target++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		die("--target: host name too long");
	memcpy(host, target, hlen);
	host[hlen] = '\0';
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	rc = getaddrinfo(host, colon + 1, &hints, &res);
	if (rc)
		die("--target %s: %s", host, gai_strerror(rc));
	memcpy(&r->target_addr, res->ai_addr, res->ai_addrlen);
	r->target_len = res->ai_addrlen;
	freeaddrinfo(res);
}

/* ---- the lateness histogram ---- */

static void late_record(struct histogram *h, int64_t late_ns)
{
	int64_t us = late_ns > 0 ? (late_ns + 500) / 1000 : 0;

	h->n++;
	if (us > h->max_us)
		h->max_us = us;
	if (us < LATE_FINE)
		h->fine[us]++;
	else if (us / 1000 < LATE_COARSE)
		h->coarse[us / 1000]++;
	else
		h->over++;
}

/* late_log - a write's lateness into the histogram, and into --late-log
 * (one line per write, nanoseconds; at most LATE_LOG_MAX lines). */
static void late_log(struct relay *r, int64_t late_ns)
{
	late_record(&r->late, late_ns);
	if (r->late_log && r->late_logged < LATE_LOG_MAX) {
		fprintf(r->late_log, "%" PRId64 "\n", late_ns);
		r->late_logged++;
	}
}

/* late_percentile - the p-th percentile in us by nearest rank (the value at
 * rank ceil(p*n/100)); -1 when there are no samples. */
static int64_t late_percentile(const struct histogram *h, unsigned p)
{
	uint64_t rank, seen = 0;

	if (h->n == 0)
		return -1;
	rank = (h->n * p + 99) / 100;
	if (rank == 0)
		rank = 1;
	for (size_t i = 0; i < LATE_FINE; i++) {
		seen += h->fine[i];
		if (seen >= rank)
			return (int64_t)i;
	}
	for (size_t i = LATE_FINE / 1000; i < LATE_COARSE; i++) {
		seen += h->coarse[i];
		if (seen >= rank)
			return (int64_t)i * 1000;
	}
	return h->max_us;
}

/* late_above - how many samples exceed us (< LATE_FINE) microseconds. */
static uint64_t late_above(const struct histogram *h, size_t us)
{
	uint64_t at_most = 0;

	for (size_t i = 0; i <= us && i < LATE_FINE; i++)
		at_most += h->fine[i];
	return h->n - at_most;
}

static void stats_print(const struct relay *r, FILE *f)
{
	fprintf(f,
		"netsim: connections=%" PRIu64 " connect_failed=%" PRIu64
		" resets=%" PRIu64 " chunks_up=%" PRIu64 " bytes_up=%" PRIu64
		" chunks_down=%" PRIu64 " bytes_down=%" PRIu64
		" writes=%" PRIu64 " late_n=%" PRIu64 " late_p50_us=%" PRId64
		" late_p99_us=%" PRId64 " late_max_us=%" PRId64
		" late_over_1ms=%" PRIu64 " blocked=%" PRIu64 " reads=%" PRIu64
		" stamped=%" PRIu64 " lag_p50_us=%" PRId64
		" lag_p99_us=%" PRId64 " lag_max_us=%" PRId64
		" spin_us=%" PRId64 " rt_prio=%d\n",
		r->conns_total, r->connect_failed, r->resets, r->up.chunks,
		r->up.bytes, r->down.chunks, r->down.bytes, r->writes,
		r->late.n, late_percentile(&r->late, 50),
		late_percentile(&r->late, 99), r->late.n ? r->late.max_us : -1,
		late_above(&r->late, 1000), r->blocked, r->reads, r->stamped,
		late_percentile(&r->lag, 50), late_percentile(&r->lag, 99),
		r->lag.n ? r->lag.max_us : -1, r->opt.spin_ns / 1000,
		r->opt.rt_prio);
}

/* stats_report - the summary line on stderr, and into --stats FILE (written
 * beside it, then renamed: a reader never sees half a line). */
static void stats_report(const struct relay *r)
{
	char tmp[4096];
	FILE *f;

	stats_print(r, stderr);
	if (r->late_log)
		fflush(r->late_log);
	if (!r->opt.stats_file)
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", r->opt.stats_file) >=
	    (int)sizeof(tmp)) {
		fprintf(stderr, "netsim: --stats: path too long\n");
		return;
	}
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "netsim: %s: %s\n", tmp, strerror(errno));
		return;
	}
	stats_print(r, f);
	if (fclose(f) != 0 || rename(tmp, r->opt.stats_file) != 0)
		fprintf(stderr, "netsim: %s: %s\n", r->opt.stats_file,
			strerror(errno));
}

/* ---- the heap of directions waiting for their time ---- */

static void heap_place(struct relay *r, size_t i, struct direction *d)
{
	r->heap[i] = d;
	d->heap_index = i;
}

static void heap_up(struct relay *r, size_t i)
{
	struct direction *d = r->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (r->heap[parent]->key_ns <= d->key_ns)
			break;
		heap_place(r, i, r->heap[parent]);
		i = parent;
	}
	heap_place(r, i, d);
}

static void heap_down(struct relay *r, size_t i)
{
	struct direction *d = r->heap[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= r->heap_len)
			break;
		if (child + 1 < r->heap_len &&
		    r->heap[child + 1]->key_ns < r->heap[child]->key_ns)
			child++;
		if (d->key_ns <= r->heap[child]->key_ns)
			break;
		heap_place(r, i, r->heap[child]);
		i = child;
	}
	heap_place(r, i, d);
}

/* heap_set - pump d at key_ns (inserting or moving it). */
static void heap_set(struct relay *r, struct direction *d, int64_t key_ns)
{
	if (d->heap_index == SIZE_MAX) {
		d->key_ns = key_ns;
		heap_place(r, r->heap_len++, d);
		heap_up(r, d->heap_index);
		return;
	}
	d->key_ns = key_ns;
	heap_up(r, d->heap_index);
	heap_down(r, d->heap_index);
}

static void heap_remove(struct relay *r, struct direction *d)
{
	size_t i = d->heap_index;
	struct direction *moved;

	if (i == SIZE_MAX)
		return;
	d->heap_index = SIZE_MAX;
	if (--r->heap_len == i)
		return;
	moved = r->heap[r->heap_len];
	heap_place(r, i, moved);
	heap_up(r, i);
	heap_down(r, moved->heap_index);
}

/* ---- epoll interest ---- */

static void epoll_set(struct relay *r, struct endpoint *ep, uint32_t want)
{
	struct epoll_event ev = { .events = want, .data.ptr = ep };
	int op = ep->registered == 0 ? EPOLL_CTL_ADD
		 : want == 0	     ? EPOLL_CTL_DEL
				     : EPOLL_CTL_MOD;

	if (want == ep->registered)
		return;
	if (epoll_ctl(r->epfd, op, ep->fd, &ev) != 0)
		die("epoll_ctl: %s", strerror(errno));
	ep->registered = want;
}

/* The direction that reads from ep, and the one that writes to it. */
static struct direction *reader_of(struct endpoint *ep)
{
	return ep == &ep->conn->client ? &ep->conn->up : &ep->conn->down;
}

static struct direction *writer_to(struct endpoint *ep)
{
	return ep == &ep->conn->client ? &ep->conn->down : &ep->conn->up;
}

static bool can_read(const struct relay *r, const struct direction *d)
{
	return !d->eof_read && d->queued < r->opt.queue_max &&
	       r->queued_total < r->opt.mem_max;
}

/* endpoint_update - register for what ep's state needs: readable while its
 * direction has room, writable while a write to it waits or it connects. */
static void endpoint_update(struct relay *r, struct endpoint *ep)
{
	uint32_t want = 0;

	if (ep->conn->closing)
		return;
	if (ep->connecting) {
		want = EPOLLOUT;
	} else {
		struct direction *reader = reader_of(ep);

		if (can_read(r, reader)) {
			want |= EPOLLIN;
			if (reader->paused) {
				reader->paused = false;
				reader->resumed_ns = now_ns();
			}
		} else if (!reader->eof_read) {
			reader->paused = true;
		}
		if (writer_to(ep)->blocked)
			want |= EPOLLOUT;
	}
	epoll_set(r, ep, want);
}

/* ---- connections ---- */

static void chunk_free_all(struct relay *r, struct direction *d)
{
	struct chunk *c = d->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	d->head = d->tail = NULL;
	r->queued_total -= d->queued;
	d->queued = 0;
}

static void listener_update(struct relay *r)
{
	bool pause = r->nconns >= r->opt.max_conns;

	if (pause != r->accept_paused) {
		epoll_set(r, &r->listener, pause ? 0 : EPOLLIN);
		r->accept_paused = pause;
		if (!pause)
			r->accept_resumed_ns = now_ns();
	}
}

/* conn_close - close both sockets (the one given, if any, with a reset) and
 * put the connection on the list freed after this round of events. */
static void conn_close(struct relay *r, struct conn *c, struct endpoint *reset)
{
	struct endpoint *eps[2] = { &c->client, &c->server };

	if (c->closing)
		return;
	if (reset) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(reset->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	for (int i = 0; i < 2; i++) {
		if (eps[i]->fd < 0)
			continue;
		epoll_set(r, eps[i], 0);
		close(eps[i]->fd);
		eps[i]->fd = -1;
	}
	c->closing = true;
	heap_remove(r, &c->up);
	heap_remove(r, &c->down);
	chunk_free_all(r, &c->up);
	chunk_free_all(r, &c->down);
	if (c->prev)
		c->prev->next = c->next;
	else
		r->live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = r->dead;
	r->dead = c;
	r->nconns--;
	listener_update(r);
}

static void direction_init(struct relay *r, struct conn *c, struct direction *d,
			   struct shaper *s, struct endpoint *src,
			   struct endpoint *dst, int64_t now)
{
	d->conn = c;
	d->shaper = s;
	d->src = src;
	d->dst = dst;
	d->heap_index = SIZE_MAX;
	/* what waited in the backlog while accepting was paused was held
	 * back by the relay, not by the network */
	d->resumed_ns = r->accept_resumed_ns;
	d->delay_ns = s->delay_ns;
	if (s->series) {
		/* per connection: this connection's value for good; per
		 * chunk: the first chunk takes the next one */
		d->delay_ns = s->series[s->cursor % s->series_len];
		if (r->opt.series_per_conn)
			s->cursor++;
	}
	d->tokens = s->burst;
	d->tokens_ns = now;
}

static void conn_open(struct relay *r, int client_fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	int one = 1, fd;
	int64_t now = now_ns();

	if (!c) {
		close(client_fd);
		return;
	}
	setsockopt(client_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(client_fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	c->client.fd = client_fd;
	c->client.conn = c;
	c->server.conn = c;
	direction_init(r, c, &c->up, &r->up, &c->client, &c->server, now);
	direction_init(r, c, &c->down, &r->down, &c->server, &c->client, now);
	c->next = r->live;
	if (r->live)
		r->live->prev = c;
	r->live = c;
	r->nconns++;
	r->conns_total++;
	listener_update(r);

	fd = socket(r->target_addr.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	c->server.fd = fd;
	if (fd < 0) {
		r->connect_failed++;
		conn_close(r, c, &c->client);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (r->opt.target_rcvbuf) /* before connect: it sets the window scale */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &r->opt.target_rcvbuf,
			   sizeof(r->opt.target_rcvbuf));
	if (connect(fd, (struct sockaddr *)&r->target_addr, r->target_len) !=
	    0) {
		if (errno != EINPROGRESS) {
			r->connect_failed++;
			conn_close(r, c, &c->client);
			return;
		}
		c->server.connecting = true;
	}
	endpoint_update(r, &c->client);
	endpoint_update(r, &c->server);
}

/* ---- moving data ---- */

static void dir_pump(struct relay *r, struct direction *d);

/* dir_discard - nothing more can be written by d (its receiver reset). */
static void dir_discard(struct relay *r, struct direction *d)
{
	heap_remove(r, d);
	chunk_free_all(r, d);
	d->blocked = false;
	d->done = true;
}

/* queue_reset - a reset travels in d's direction, after its data. */
static void queue_reset(struct relay *r, struct direction *d, int64_t at)
{
	struct chunk *ch;

	if (d->rst_queued)
		return;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		conn_close(r, d->conn, d->dst);
		return;
	}
	d->rst_queued = true;
	d->eof_read = true;
	d->done = false; /* a reset goes on even after a FIN */
	ch->kind = CHUNK_RST;
	ch->due_ns = at + d->delay_ns;
	if (ch->due_ns < d->last_due_ns)
		ch->due_ns = d->last_due_ns;
	d->last_due_ns = ch->due_ns;
	if (d->tail)
		d->tail->next = ch;
	else
		d->head = ch;
	d->tail = ch;
	d->queued += CHUNK_OVERHEAD;
	r->queued_total += CHUNK_OVERHEAD;
	if (d->head == ch && !d->blocked)
		heap_set(r, d, ch->due_ns);
}

/* arrival - when the bytes just read reached the socket: the kernel's
 * receive time stamp of the last segment read (SO_TIMESTAMPNS, realtime
 * clock, turned into monotonic time), or wake (when the loop learned they
 * were there) without one. Never before the end of the last pause in reading
 * (the relay's own back-pressure) nor after the read. */
static int64_t arrival(struct relay *r, struct direction *d, struct msghdr *msg,
		       int64_t wake)
{
	struct cmsghdr *cm;
	int64_t t = wake;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		struct timespec stamp, real;
		int64_t read_at;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_TIMESTAMPNS ||
		    cm->cmsg_len < CMSG_LEN(sizeof(stamp)))
			continue;
		memcpy(&stamp, CMSG_DATA(cm), sizeof(stamp));
		read_at = now_ns();
		clock_gettime(CLOCK_REALTIME, &real);
		t = read_at -
		    ((int64_t)(real.tv_sec - stamp.tv_sec) * NS_PER_S +
		     (real.tv_nsec - stamp.tv_nsec));
		if (t > read_at)
			t = read_at;
		if (t < d->resumed_ns)
			t = d->resumed_ns;
		r->stamped++;
		late_record(&r->lag, read_at - t);
	}
	if (t < d->resumed_ns)
		t = d->resumed_ns;
	return t;
}

/* dir_read - one recvmsg() from d's source, queued with its due time; wake is
 * when the loop learned the data was there. */
static void dir_read(struct relay *r, struct direction *d, int64_t wake)
{
	struct shaper *s = d->shaper;
	struct chunk *ch;
	ssize_t n;
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec)) * 2];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = r->buf, .iov_len = r->opt.chunk_max };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	do {
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		n = recvmsg(d->src->fd, &msg, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	r->reads++;
	wake = arrival(r, d, &msg, wake);
	if (n < 0) {
		/* the source reset: what was to go to it is lost, and the
		 * reset follows the data already read */
		r->resets++;
		dir_discard(r, writer_to(d->src));
		queue_reset(r, d, wake);
		endpoint_update(r, d->src);
		endpoint_update(r, d->dst);
		return;
	}
	ch = malloc(sizeof(*ch) + (size_t)n);
	if (!ch) {
		conn_close(r, d->conn, d->dst);
		return;
	}
	ch->next = NULL;
	ch->len = (size_t)n;
	ch->off = 0;
	ch->kind = n > 0 ? CHUNK_DATA : CHUNK_FIN;
	if (n > 0) {
		memcpy(ch->data, r->buf, (size_t)n);
		if (s->series && !r->opt.series_per_conn)
			d->delay_ns = s->series[s->cursor++ % s->series_len];
		s->bytes += (uint64_t)n;
		s->chunks++;
	} else {
		d->eof_read = true;
	}
	ch->due_ns = wake + d->delay_ns;
	if (ch->due_ns < d->last_due_ns)
		ch->due_ns = d->last_due_ns;
	d->last_due_ns = ch->due_ns;
	if (d->tail)
		d->tail->next = ch;
	else
		d->head = ch;
	d->tail = ch;
	d->queued += (size_t)n + CHUNK_OVERHEAD;
	r->queued_total += (size_t)n + CHUNK_OVERHEAD;
	if (r->queued_total >= r->opt.mem_max)
		r->mem_full = true;
	if (d->head == ch && !d->blocked && !d->done)
		heap_set(r, d, ch->due_ns);
	endpoint_update(r, d->src);
}

static void tokens_refill(struct direction *d, int64_t now)
{
	const struct shaper *s = d->shaper;

	if (now <= d->tokens_ns)
		return;
	d->tokens += (double)(now - d->tokens_ns) * s->rate / NS_PER_S;
	if (d->tokens > s->burst)
		d->tokens = s->burst;
	d->tokens_ns = now;
}

static void dir_block(struct relay *r, struct direction *d)
{
	d->blocked = true;
	heap_remove(r, d);
	endpoint_update(r, d->dst);
}

/* dir_pop - the head chunk is delivered. */
static void dir_pop(struct relay *r, struct direction *d)
{
	struct chunk *ch = d->head;
	size_t cost = ch->len + CHUNK_OVERHEAD;

	d->head = ch->next;
	if (!d->head)
		d->tail = NULL;
	free(ch);
	d->queued -= cost;
	r->queued_total -= cost;
	endpoint_update(r, d->src);
}

/* dir_pump - write what is due of d's queue; reschedule d for the rest.
 * Records the lateness of each write made when it fell due. */
static void dir_pump(struct relay *r, struct direction *d)
{
	struct shaper *s = d->shaper;

	for (int i = 0; i < CHUNKS_PER_PUMP; i++) {
		struct chunk *ch = d->head;
		int64_t now = now_ns(), ready;
		size_t want;
		ssize_t n;

		if (!ch || d->done || d->conn->closing)
			return;
		if (ch->due_ns > now) {
			heap_set(r, d, ch->due_ns);
			return;
		}
		if (d->dst->connecting) {
			dir_block(r, d);
			return;
		}
		if (ch->kind == CHUNK_RST) {
			conn_close(r, d->conn, d->dst);
			return;
		}
		if (ch->kind == CHUNK_FIN) {
			shutdown(d->dst->fd, SHUT_WR);
			d->done = true;
			dir_pop(r, d);
			heap_remove(r, d);
			if (d->conn->up.done && d->conn->down.done)
				conn_close(r, d->conn, NULL);
			return;
		}
		want = ch->len - ch->off;
		ready = ch->due_ns;
		if (s->rate > 0) {
			double need = (double)want < s->quantum ? (double)want
								: s->quantum;

			tokens_refill(d, now);
			if (d->tokens < need) {
				d->token_ready_ns =
					now +
					(int64_t)((need - d->tokens) *
						  NS_PER_S / s->rate) +
					1;
				heap_set(r, d, d->token_ready_ns);
				return;
			}
			if (d->token_ready_ns > ready)
				ready = d->token_ready_ns;
			if ((double)want > d->tokens)
				want = (size_t)d->tokens;
		}
		now = now_ns();
		do {
			n = send(d->dst->fd, ch->data + ch->off, want,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		} while (n < 0 && errno == EINTR);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			dir_block(r, d);
			return;
		}
		if (n < 0) {
			/* the receiver is gone: a reset goes back to the
			 * sender, after what the receiver sent before */
			struct direction *back = reader_of(d->dst);

			r->resets++;
			dir_discard(r, d);
			queue_reset(r, back, now);
			endpoint_update(r, d->src);
			endpoint_update(r, d->dst);
			return;
		}
		r->writes++;
		if (ready < d->unblocked_ns)
			r->blocked++;
		else
			late_log(r, now - ready);
		d->token_ready_ns = 0;
		if (s->rate > 0)
			d->tokens -= (double)n;
		ch->off += (size_t)n;
		if (ch->off < ch->len) {
			if ((size_t)n < want) {
				dir_block(r, d);
				return;
			}
			continue; /* the rate allowed part of it */
		}
		dir_pop(r, d);
	}
	if (d->head && !d->blocked && !d->done)
		heap_set(r, d, now_ns()); /* more is due: next round */
}

/* connect_done - the target's connect() finished, one way or the other. */
static void connect_done(struct relay *r, struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->server.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return;
	if (err) {
		r->connect_failed++;
		conn_close(r, c, &c->client);
		return;
	}
	c->server.connecting = false;
	endpoint_update(r, &c->server);
	if (c->up.blocked) {
		c->up.blocked = false;
		c->up.unblocked_ns = now_ns();
		dir_pump(r, &c->up);
	}
}

static void on_endpoint(struct relay *r, struct endpoint *ep, uint32_t events,
			int64_t wake)
{
	struct conn *c = ep->conn;
	struct direction *in;

	if (c->closing)
		return;
	if (ep->connecting) {
		connect_done(r, c);
		return;
	}
	in = writer_to(ep);
	if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) && in->blocked) {
		in->blocked = false;
		in->unblocked_ns = now_ns();
		endpoint_update(r, ep);
		dir_pump(r, in);
		if (c->closing)
			return;
	}
	if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) &&
	    (ep->registered & EPOLLIN))
		dir_read(r, reader_of(ep), wake);
}

static void on_accept(struct relay *r)
{
	for (int i = 0; i < ACCEPTS_PER_EVENT && !r->accept_paused; i++) {
		int fd = accept4(r->listener.fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			conn_open(r, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE) {
			fprintf(stderr, "netsim: accept: %s\n",
				strerror(errno));
			if (r->nconns > 0) {
				epoll_set(r, &r->listener, 0);
				r->accept_paused = true;
			}
		}
		return;
	}
}

static void on_signal(struct relay *r)
{
	struct signalfd_siginfo si;

	while (read(r->signals.fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			stats_report(r);
		else
			r->stop = true;
	}
}

/* run_due - pump every direction whose time has come (bounded per round so
 * that reads are served too). */
static void run_due(struct relay *r)
{
	for (int i = 0; i < PUMPS_PER_ROUND && r->heap_len > 0; i++) {
		struct direction *d = r->heap[0];

		if (d->key_ns > now_ns())
			return;
		heap_remove(r, d);
		dir_pump(r, d);
	}
}

static void free_dead(struct relay *r)
{
	while (r->dead) {
		struct conn *c = r->dead;

		r->dead = c->next;
		free(c);
	}
}

/* ---- set-up and the loop ---- */

static void listen_on(struct relay *r)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1;

	if (inet_pton(AF_INET, r->opt.bind_addr, &sin->sin_addr) == 1) {
		if ((ntohl(sin->sin_addr.s_addr) >> 24) != 127)
			die("--bind: not a loopback address: %s",
			    r->opt.bind_addr);
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)r->opt.listen_port);
		len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, r->opt.bind_addr, &sin6->sin6_addr) ==
		   1) {
		if (!IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			die("--bind: not a loopback address: %s",
			    r->opt.bind_addr);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)r->opt.listen_port);
		len = sizeof(*sin6);
	} else {
		die("--bind: 127.0.0.0/8 or ::1, not '%s'", r->opt.bind_addr);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0)
		die("bind %s port %d: %s", r->opt.bind_addr, r->opt.listen_port,
		    strerror(errno));
	if (listen(fd, 128) != 0)
		die("listen: %s", strerror(errno));
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		die("getsockname: %s", strerror(errno));
	r->listener.fd = fd;
	r->opt.listen_port = ntohs(ss.ss_family == AF_INET ? sin->sin_port
							   : sin6->sin6_port);
}

static void shaper_finish(struct shaper *s, double burst)
{
	if (s->rate <= 0)
		return;
	s->burst = burst > 0 ? burst : s->rate / 100; /* 10 ms */
	if (s->burst < 1)
		s->burst = 1;
	s->quantum = s->rate / 1000; /* 1 ms */
	if (s->quantum < 1)
		s->quantum = 1;
	if (s->quantum > s->burst)
		s->quantum = s->burst;
}

enum {
	OPT_UP = 256,
	OPT_DOWN,
	OPT_UP_SERIES,
	OPT_DOWN_SERIES,
	OPT_SERIES_PER,
	OPT_RATE_UP,
	OPT_RATE_DOWN,
	OPT_BURST,
	OPT_SPIN,
	OPT_CHUNK,
	OPT_QUEUE_MAX,
	OPT_TARGET_RCVBUF,
	OPT_MEM_MAX,
	OPT_MAX_CONNS,
	OPT_LIFETIME,
	OPT_RT_PRIO,
	OPT_TIMERFD,
	OPT_LATE_LOG,
};

static size_t parse_count(const char *option, const char *text, double min,
			  double max)
{
	double v = parse_bytes(option, text);

	if (v < min || v > max)
		die("%s: %s is out of range (%.0f to %.0f)", option, text, min,
		    max);
	return (size_t)v;
}

static void parse_args(struct relay *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "listen", required_argument, NULL, 'l' },
		{ "bind", required_argument, NULL, 'b' },
		{ "delay", required_argument, NULL, 'd' },
		{ "up", required_argument, NULL, OPT_UP },
		{ "down", required_argument, NULL, OPT_DOWN },
		{ "up-series", required_argument, NULL, OPT_UP_SERIES },
		{ "down-series", required_argument, NULL, OPT_DOWN_SERIES },
		{ "series-per", required_argument, NULL, OPT_SERIES_PER },
		{ "rate", required_argument, NULL, 'r' },
		{ "rate-up", required_argument, NULL, OPT_RATE_UP },
		{ "rate-down", required_argument, NULL, OPT_RATE_DOWN },
		{ "burst", required_argument, NULL, OPT_BURST },
		{ "spin-us", required_argument, NULL, OPT_SPIN },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "queue-max", required_argument, NULL, OPT_QUEUE_MAX },
		{ "target-rcvbuf", required_argument, NULL, OPT_TARGET_RCVBUF },
		{ "mem-max", required_argument, NULL, OPT_MEM_MAX },
		{ "max-conns", required_argument, NULL, OPT_MAX_CONNS },
		{ "lifetime", required_argument, NULL, OPT_LIFETIME },
		{ "rt-prio", required_argument, NULL, OPT_RT_PRIO },
		{ "timerfd", no_argument, NULL, OPT_TIMERFD },
		{ "late-log", required_argument, NULL, OPT_LATE_LOG },
		{ "stats", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options *o = &r->opt;
	const char *up_series = NULL, *down_series = NULL;
	bool up_fixed = false, down_fixed = false;
	double burst = 0;
	int ch;
	char *end;

	while ((ch = getopt_long(argc, argv, "t:l:b:d:r:s:h", longopts,
				 NULL)) != -1) {
		switch (ch) {
		case 't':
			o->target = optarg;
			break;
		case 'l':
			errno = 0;
			o->listen_port = (int)strtol(optarg, &end, 10);
			if (errno || *end || end == optarg ||
			    o->listen_port < 0 || o->listen_port > 65535)
				die("--listen: a port 0..65535, not '%s'",
				    optarg);
			break;
		case 'b':
			o->bind_addr = optarg;
			break;
		case 'd':
			parse_delay("--delay", optarg, &r->up.delay_ns);
			r->down.delay_ns = r->up.delay_ns;
			up_fixed = down_fixed = true;
			break;
		case OPT_UP:
			parse_delay("--up", optarg, &r->up.delay_ns);
			up_fixed = true;
			break;
		case OPT_DOWN:
			parse_delay("--down", optarg, &r->down.delay_ns);
			down_fixed = true;
			break;
		case OPT_UP_SERIES:
			up_series = optarg;
			break;
		case OPT_DOWN_SERIES:
			down_series = optarg;
			break;
		case OPT_SERIES_PER:
			if (strcmp(optarg, "chunk") == 0)
				o->series_per_conn = false;
			else if (strcmp(optarg, "connection") == 0)
				o->series_per_conn = true;
			else
				die("--series-per: chunk or connection, not '%s'",
				    optarg);
			break;
		case 'r':
			r->up.rate = r->down.rate =
				parse_bytes("--rate", optarg);
			break;
		case OPT_RATE_UP:
			r->up.rate = parse_bytes("--rate-up", optarg);
			break;
		case OPT_RATE_DOWN:
			r->down.rate = parse_bytes("--rate-down", optarg);
			break;
		case OPT_BURST:
			burst = parse_bytes("--burst", optarg);
			break;
		case OPT_SPIN:
			errno = 0;
			o->spin_ns = strtoll(optarg, &end, 10) * 1000;
			if (errno || *end || end == optarg || o->spin_ns < 0 ||
			    o->spin_ns > 10 * NS_PER_MS)
				die("--spin-us: 0 to 10000, not '%s'", optarg);
			break;
		case OPT_CHUNK:
			o->chunk_max = parse_count("--chunk", optarg, 1,
						   16 * 1048576.0);
			break;
		case OPT_QUEUE_MAX:
			o->queue_max = parse_count("--queue-max", optarg, 1,
						   1073741824.0);
			break;
		case OPT_TARGET_RCVBUF:
			o->target_rcvbuf = (int)parse_count(
				"--target-rcvbuf", optarg, 1, 1073741824.0);
			break;
		case OPT_MEM_MAX:
			o->mem_max = parse_count("--mem-max", optarg, 1,
						 17179869184.0);
			break;
		case OPT_MAX_CONNS:
			o->max_conns =
				parse_count("--max-conns", optarg, 1, 100000);
			break;
		case OPT_LIFETIME:
			errno = 0;
			o->lifetime_s = strtod(optarg, &end);
			if (errno || *end || end == optarg ||
			    !(o->lifetime_s > 0) || o->lifetime_s > 1e7)
				die("--lifetime: seconds, not '%s'", optarg);
			break;
		case OPT_LATE_LOG:
			o->late_log = optarg;
			break;
		case OPT_TIMERFD:
			o->use_timerfd = true;
			break;
		case OPT_RT_PRIO:
			errno = 0;
			o->rt_prio = (int)strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->rt_prio < 0 ||
			    o->rt_prio > 99)
				die("--rt-prio: 0 to 99, not '%s'", optarg);
			break;
		case 's':
			o->stats_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (!o->target)
		die("--target HOST:PORT is required (see --help)");
	if (up_series && up_fixed)
		die("--up-series and a fixed up delay exclude each other");
	if (down_series && down_fixed)
		die("--down-series and a fixed down delay exclude each other");
	if (up_series)
		load_series(&r->up, up_series);
	if (down_series)
		load_series(&r->down, down_series);
	shaper_finish(&r->up, burst);
	shaper_finish(&r->down, burst);
}

/* timer_open - wait with a timerfd (absolute CLOCK_MONOTONIC expiry) in the
 * epoll set instead of epoll_pwait2's timeout. */
static void timer_open(struct relay *r)
{
	r->timer.fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (r->timer.fd < 0)
		die("timerfd_create: %s", strerror(errno));
	epoll_set(r, &r->timer, EPOLLIN);
	r->opt.use_timerfd = true;
}

static void timer_fired(struct relay *r)
{
	uint64_t expirations;

	if (read(r->timer.fd, &expirations, sizeof(expirations)) > 0)
		r->timer_armed_ns = 0;
}

/* timer_wait - epoll_wait until an event or now + wait ns (wait < 0: no
 * limit; 0: poll), the timerfd re-armed only when the expiry changes. */
static int timer_wait(struct relay *r, struct epoll_event *events, int64_t now,
		      int64_t wait)
{
	if (wait > 0 && r->timer_armed_ns != now + wait) {
		struct itimerspec its = { 0 };

		its.it_value.tv_sec = (now + wait) / NS_PER_S;
		its.it_value.tv_nsec = (now + wait) % NS_PER_S;
		if (timerfd_settime(r->timer.fd, TFD_TIMER_ABSTIME, &its,
				    NULL) != 0)
			die("timerfd_settime: %s", strerror(errno));
		r->timer_armed_ns = now + wait;
	}
	return epoll_wait(r->epfd, events, MAX_EVENTS, wait == 0 ? 0 : -1);
}

static void setup(struct relay *r)
{
	struct rlimit rl;
	sigset_t mask;
	size_t fd_room;

	/* sleeps end when asked, not up to 50 us later */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (r->opt.rt_prio > 0) {
		struct sched_param sp = { .sched_priority = r->opt.rt_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
			fprintf(stderr,
				"netsim: --rt-prio: %s; running without\n",
				strerror(errno));
			r->opt.rt_prio = 0;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY) {
		fd_room = rl.rlim_cur > 32 ? (size_t)(rl.rlim_cur - 16) / 2 : 1;
		if (r->opt.max_conns > fd_room)
			r->opt.max_conns = fd_room;
	}
	resolve_target(r, r->opt.target);
	listen_on(r);
	r->buf = malloc(r->opt.chunk_max);
	r->heap_cap = 2 * r->opt.max_conns;
	r->heap = calloc(r->heap_cap, sizeof(*r->heap));
	if (!r->buf || !r->heap)
		die("out of memory");
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0)
		die("epoll_create1: %s", strerror(errno));
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		die("sigprocmask: %s", strerror(errno));
	r->signals.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (r->signals.fd < 0)
		die("signalfd: %s", strerror(errno));
	epoll_set(r, &r->signals, EPOLLIN);
	epoll_set(r, &r->listener, EPOLLIN);
	r->timer.fd = -1;
	if (r->opt.use_timerfd)
		timer_open(r);
	if (r->opt.late_log) {
		/* a large buffer: a write(2) now and then, not per line */
		static char late_buf[1 << 20];

		r->late_log = fopen(r->opt.late_log, "w");
		if (!r->late_log)
			die("%s: %s", r->opt.late_log, strerror(errno));
		setvbuf(r->late_log, late_buf, _IOFBF, sizeof(late_buf));
	}
}

static void run(struct relay *r)
{
	struct epoll_event events[MAX_EVENTS];
	int64_t stop_at =
		r->opt.lifetime_s > 0
			? now_ns() + (int64_t)(r->opt.lifetime_s * NS_PER_S)
			: INT64_MAX;

	while (!r->stop) {
		int64_t now = now_ns(), wait = -1, wake;
		struct timespec timeout;
		int n;

		if (r->heap_len > 0) {
			wait = r->heap[0]->key_ns - r->opt.spin_ns - now;
			if (wait < 0)
				wait = 0;
		}
		if (stop_at != INT64_MAX && (wait < 0 || stop_at - now < wait))
			wait = stop_at > now ? stop_at - now : 0;
		if (!r->opt.use_timerfd) {
			timeout.tv_sec = wait / NS_PER_S;
			timeout.tv_nsec = wait % NS_PER_S;
			n = epoll_pwait2(r->epfd, events, MAX_EVENTS,
					 wait < 0 ? NULL : &timeout, NULL);
			if (n < 0 && errno == ENOSYS) {
				/* before Linux 5.11, or under valgrind */
				timer_open(r);
				continue;
			}
		} else {
			n = timer_wait(r, events, now, wait);
		}
		if (n < 0 && errno != EINTR)
			die("epoll_pwait2: %s", strerror(errno));
		wake = now_ns();
		for (int i = 0; i < n; i++) {
			struct endpoint *ep = events[i].data.ptr;

			if (ep == &r->listener)
				on_accept(r);
			else if (ep == &r->signals)
				on_signal(r);
			else if (ep == &r->timer)
				timer_fired(r);
			else
				on_endpoint(r, ep, events[i].events, wake);
		}
		run_due(r);
		if (r->mem_full && r->queued_total < r->opt.mem_max) {
			r->mem_full = false;
			for (struct conn *c = r->live; c; c = c->next) {
				endpoint_update(r, &c->client);
				endpoint_update(r, &c->server);
			}
		}
		free_dead(r);
		if (now_ns() >= stop_at)
			r->stop = true;
	}
}

static void teardown(struct relay *r)
{
	while (r->live)
		conn_close(r, r->live, NULL);
	free_dead(r);
	close(r->listener.fd);
	close(r->signals.fd);
	if (r->late_log && fclose(r->late_log) != 0)
		fprintf(stderr, "netsim: %s: %s\n", r->opt.late_log,
			strerror(errno));
	if (r->timer.fd >= 0)
		close(r->timer.fd);
	close(r->epfd);
	free(r->heap);
	free(r->buf);
	free(r->up.series);
	free(r->down.series);
}

int main(int argc, char **argv)
{
	static struct relay relay;
	struct relay *r = &relay;

	r->opt.bind_addr = "127.0.0.1";
	r->opt.chunk_max = 65536;
	r->opt.queue_max = 1048576;
	r->opt.mem_max = 64 * 1048576;
	r->opt.max_conns = 1024;
	r->opt.spin_ns = 200 * 1000;
	r->up.name = "up";
	r->down.name = "down";
	parse_args(r, argc, argv);
	setup(r);
	printf("%d\n", r->opt.listen_port);
	if (fflush(stdout) != 0)
		die("stdout: %s", strerror(errno));
	run(r);
	stats_report(r);
	teardown(r);
	return 0;
}
