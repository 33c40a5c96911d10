/* bench/lean.c - a measured sketch, not part of the build: what a layer
 * that writes one event per call (and leaves the building of exchanges to
 * the slicer) would add per request, with the duties the real layer keeps
 * on the calls ab makes, and no HTTP framing (the events capture, which
 * frames every head in the process, costs far more: docs/performance.md):
 * how far below the layer such a layer would be, measured the same way,
 * beside bench/probe.c.
 *
 * What it does that the probe does not, because libobserve.so must:
 * - a re-entrancy flag (a hook called from a signal handler that
 *   interrupted the bookkeeping goes straight to the real call);
 * - errno exactly as the real call left it (the layer's own calls, getpid,
 *   getsockname, getsockopt, are bracketed);
 * - connect: the address's family and length checked before it is read,
 *   the socket's type (no call when in progress), a vfork() child left
 *   alone (getpid), the peer and the local address (getsockname), a
 *   completion check (a second connect) as its own event;
 * - send: the event of the send that begins an exchange carries the
 *   request's first bytes (the label: method and path, cut before the
 *   query), unless they are those of this thread's last request (one
 *   comparison, as the layer's recall); the first receive of an answer carries
 * its first 12 bytes (the status); the end of stream is an event;
 * - close: TCP_INFO (one getsockopt) and the end time, in two slots;
 *   socket: a stale entry for a reused fd number dropped;
 * - fcntl interposed (F_DUPFD), as the layer does;
 * - since 2026-11-27 evening, the checks the layer makes on these calls
 *   for what the sketch does not follow, so that its count is the whole
 *   count: the fd table sized by RLIMIT_NOFILE (loaded through a pointer
 *   and a size, as the layer's), a TLS library's call in progress tested
 *   in every send and receive, the HTTP/2 client preface looked for in a
 *   connection's first send, and the entry of a send that may begin an
 *   exchange stored in the spool while the send is under way (cleared when
 *   it returns: a process killed inside it keeps that exchange);
 * - the spool allocated before it is mapped (posix_fallocate: a full disk
 *   fails here, never as SIGBUS in the host), opened O_NOFOLLOW|O_EXCL
 *   (the directory's owner and mode are not checked, as the layer checks
 *   them: this is a benchmark's sketch, not something to preload
 *   elsewhere).
 * Every event is 64 bytes, its kind stored last (release): a reader skips
 * a slot whose kind is 0, as after a crash.
 *
 * What it leaves out: threads sharing one connection (each event carries
 * its own times; the slicer would order them), TLS and HTTP/2 themselves
 * (their connections would keep the in-process state machine), roll-over
 * into segments (a fixed, allocated segment per spool file here; each
 * reservation checks its end, as a segment's would), dup and fork.
 *
 * Build: gcc -O2 -shared -fPIC -o lean.so bench/lean.c -ldl
 * Measure: BEFORE=$PWD/lean.so scripts/bench-floor.sh (the "before"
 * column is then this sketch). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <emmintrin.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* struct tcp_info as the kernel has it */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

enum {
	EV_CONNECT = 1,
	EV_ADDR,
	EV_AGAIN,
	EV_SEND,
	EV_HEAD,
	EV_RECV,
	EV_CLOSE,
	EV_INFO
};
enum { DIR_NONE, DIR_SEND, DIR_RECV };
enum { EF_SAME = 1 };
#define HEAD_MAX 128 /* request bytes compared: request line and Host */
#define HEAD_SLOT 56 /* bytes of the request line an EV_HEAD slot holds */

struct ev {
	uint32_t kind; /* stored last */
	int32_t fd;
	uint64_t conn;
	int64_t t_in, t_out;
	int64_t ret;
	int32_t err;
	uint16_t flags, nhead;
	uint8_t tail[16];
};
_Static_assert(sizeof(struct ev) == 64, "event size");

struct fdst {
	uint8_t on, dir, h2;
	uint64_t conn;
	struct ev *open; /* the connection's EV_CONNECT: a send's entry */
};

/* sized by RLIMIT_NOFILE at start, as the layer's table: fds past 65536
 * are tracked too */
static struct fdst *fds;
static unsigned int fds_size;
static struct ev *spool;
static uint64_t spool_n, spool_cap = 1u << 20, spool_dropped, conn_seq;
static int32_t my_pid;
static __thread int inside __attribute__((tls_model("initial-exec")));
/* the TLS library call in progress (the layer's obs_tls_cur): its socket
 * calls are the library's, not the exchange's; always NULL here, tested
 * as the layer tests it */
static __thread void *tls_cur __attribute__((tls_model("initial-exec")));
static __thread struct {
	uint16_t len;
	uint8_t b[HEAD_MAX];
} last_head __attribute__((tls_model("initial-exec")));

static ssize_t (*r_read)(int, void *, size_t),
	(*r_write)(int, const void *, size_t),
	(*r_writev)(int, const struct iovec *, int),
	(*r_send)(int, const void *, size_t, int),
	(*r_recv)(int, void *, size_t, int);
static int (*r_connect)(int, const struct sockaddr *, socklen_t),
	(*r_close)(int), (*r_socket)(int, int, int),
	(*r_fcntl)(int, int, void *);

static inline int64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

__attribute__((constructor)) static void init(void)
{
	char p[256];
	const char *dir = secure_getenv("OBSERVE_DIR");
	int f;

	r_read = dlsym(RTLD_NEXT, "read");
	r_write = dlsym(RTLD_NEXT, "write");
	r_writev = dlsym(RTLD_NEXT, "writev");
	r_send = dlsym(RTLD_NEXT, "send");
	r_recv = dlsym(RTLD_NEXT, "recv");
	r_connect = dlsym(RTLD_NEXT, "connect");
	r_close = dlsym(RTLD_NEXT, "close");
	r_socket = dlsym(RTLD_NEXT, "socket");
	r_fcntl = dlsym(RTLD_NEXT, "fcntl");
	my_pid = getpid();
	{
		struct rlimit rl;
		size_t nfd = 65536;
		void *m;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_max != RLIM_INFINITY && rl.rlim_max > nfd)
			nfd = rl.rlim_max;
		m = mmap(NULL, nfd * sizeof(struct fdst),
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m != MAP_FAILED) {
			fds = m;
			__atomic_store_n(&fds_size, (unsigned int)nfd,
					 __ATOMIC_RELEASE);
		}
	}
	/* (the pid and the time: an exec keeps the pid) */
	snprintf(p, sizeof(p), "%s/lean.%d.%lld", dir ? dir : "/tmp", my_pid,
		 (long long)now());
	f = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (f < 0)
		return;
	if (posix_fallocate(f, 0, (off_t)(spool_cap * sizeof(struct ev))) ==
	    0) {
		void *m = mmap(NULL, spool_cap * sizeof(struct ev),
			       PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
		if (m != MAP_FAILED)
			spool = m;
	}
	r_close(f);
}

/* k consecutive slots, or NULL (full: counted). */
static inline struct ev *reserve(unsigned int k)
{
	uint64_t i = __atomic_fetch_add(&spool_n, k, __ATOMIC_RELAXED);

	if (UNLIKELY(!spool || i + k > spool_cap)) {
		__atomic_fetch_add(&spool_dropped, k, __ATOMIC_RELAXED);
		return NULL;
	}
	return &spool[i];
}

static inline void publish(struct ev *e, uint32_t kind)
{
	__atomic_store_n(&e->kind, kind, __ATOMIC_RELEASE);
}

static inline struct fdst *tracked(int fd)
{
	return (unsigned int)fd < __atomic_load_n(&fds_size,
						  __ATOMIC_RELAXED) &&
			       fds[fd].on
		       ? &fds[fd]
		       : NULL;
}

/* Whether a[0..n) and b[0..n) are the same, n <= HEAD_MAX: sixteen bytes
 * a step, inline (as the layer's recall). */
static inline bool same_head(const uint8_t *a, const uint8_t *b, size_t n)
{
	__m128i d;

	if (n < 16)
		return memcmp(a, b, n) == 0;
	d = _mm_xor_si128(_mm_loadu_si128((const void *)(a + n - 16)),
			  _mm_loadu_si128((const void *)(b + n - 16)));
	for (size_t i = 0; i + 16 < n; i += 16)
		d = _mm_or_si128(
			d,
			_mm_xor_si128(_mm_loadu_si128((const void *)(a + i)),
				      _mm_loadu_si128((const void *)(b + i))));
	return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) ==
	       0xffff;
}

/* The bytes of p[0..n) before the first '?', CR or LF. */
static size_t request_line_cut(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && p[i] != '?' && p[i] != '\r' && p[i] != '\n')
		i++;
	return i;
}

static inline __attribute__((always_inline)) void
call_event(struct fdst *s, int fd, uint32_t kind, int64_t t_in, int64_t t_out,
	   ssize_t ret, int err, const void *buf)
{
	struct ev *e;
	unsigned int extra = 0;
	uint16_t flags = 0, nhead = 0;
	size_t n = 0;

	if (kind == EV_SEND && ret > 0 && s->dir != DIR_SEND) {
		/* the client preface makes the connection HTTP/2 (whose frames
		 * the layer would parse in the process) */
		if (s->dir == DIR_NONE && ret >= 4 &&
		    memcmp(buf, "PRI ", 4) == 0)
			s->h2 = 1;
		n = (size_t)ret < HEAD_MAX ? (size_t)ret : HEAD_MAX;
		if (n == last_head.len && same_head(buf, last_head.b, n)) {
			flags = EF_SAME;
		} else {
			/* remembered whole (memory), written cut: no query
			 * string and no header reaches the file (the layer
			 * parses and redacts here, redact.c; the sketch keeps
			 * the request line up to '?') */
			memcpy(last_head.b, buf, n);
			last_head.len = (uint16_t)n;
			n = request_line_cut(buf, n);
			extra = (unsigned int)((n + HEAD_SLOT - 1) / HEAD_SLOT);
			nhead = (uint16_t)n;
		}
		s->dir = DIR_SEND;
	}
	e = reserve(1 + extra);
	if (!e)
		return;
	e->fd = fd;
	e->conn = s->conn;
	e->t_in = t_in;
	e->t_out = t_out;
	e->ret = ret;
	e->err = ret < 0 ? err : 0;
	e->flags = flags;
	e->nhead = nhead;
	if (kind == EV_RECV && s->dir == DIR_SEND && ret >= 12) {
		memcpy(e->tail, buf, 12);
		s->dir = DIR_RECV;
	}
	if (extra) {
		/* HEAD_SLOT bytes a slot, after its kind */
		for (unsigned int i = 1; i <= extra; i++) {
			size_t at = (i - 1) * HEAD_SLOT;

			memcpy((char *)(e + i) + 8, (const char *)buf + at,
			       n - at < HEAD_SLOT ? n - at : HEAD_SLOT);
			publish(e + i, EV_HEAD);
		}
	}
	publish(e, kind);
}

EXPORT int socket(int domain, int type, int protocol)
{
	int fd = r_socket(domain, type, protocol);

	if ((unsigned int)fd < fds_size && UNLIKELY(fds[fd].on))
		fds[fd].on = 0; /* closed where we could not see */
	return fd;
}

/* named arguments, as the layer's hook (hooks_fcntl.c): no va_start */
EXPORT int lean_fcntl(int fd, int cmd, void *arg) __asm__("fcntl");
EXPORT int lean_fcntl(int fd, int cmd, void *arg)
{
	if (LIKELY(cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC))
		return r_fcntl(fd, cmd, arg);
	return r_fcntl(fd, cmd, arg); /* (the sketch does not follow dups) */
}

static void conn_open(int fd, const struct sockaddr *a, socklen_t l,
		      int64_t t_in, int64_t t_out, int ret, int err)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int saved = errno, type = 0;
	socklen_t tl = sizeof(type);
	struct ev *e;

	if (getpid() != my_pid) /* a vfork() child */
		goto out;
	if (!(ret < 0 && err == EINPROGRESS) &&
	    (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
	     type != SOCK_STREAM))
		goto out;
	e = reserve(2);
	if (!e)
		goto out;
	fds[fd].on = 1;
	fds[fd].dir = DIR_NONE;
	fds[fd].conn = __atomic_add_fetch(&conn_seq, 1, __ATOMIC_RELAXED);
	fds[fd].open = e;
	e->fd = fd;
	e->conn = fds[fd].conn;
	e->t_in = t_in;
	e->t_out = t_out;
	e->ret = ret;
	e->err = ret < 0 ? err : 0;
	e[1].fd = fd;
	e[1].conn = e->conn;
	memcpy(&e[1].t_in, a, l < 28 ? l : 28);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		memcpy(e[1].tail, &ss, 16);
	publish(e + 1, EV_ADDR);
	publish(e, EV_CONNECT);
out:
	errno = saved;
}

EXPORT int connect(int fd, const struct sockaddr *a, socklen_t l)
{
	struct fdst *s = tracked(fd);
	int64_t t_in;
	int ret, err;

	if (UNLIKELY(inside) || (unsigned int)fd >= fds_size || !a ||
	    l < sizeof(struct sockaddr_in) ||
	    l > sizeof(struct sockaddr_storage))
		return r_connect(fd, a, l);
	t_in = now();
	ret = r_connect(fd, a, l);
	err = errno;
	inside = 1;
	if (s) { /* a completion check */
		call_event(s, fd, EV_AGAIN, 0, now(), ret, err, NULL);
	} else if ((ret == 0 || (err != EFAULT && err != EBADF)) &&
		   (a->sa_family == AF_INET || a->sa_family == AF_INET6)) {
		conn_open(fd, a, l, t_in,
			  ret < 0 && err == EINPROGRESS ? 0 : now(), ret, err);
	}
	inside = 0;
	errno = err;
	return ret;
}

#define SEND_HOOK(kind, call, buf)                                             \
	do {                                                                   \
		struct fdst *s_ = tracked(fd);                                 \
		int64_t t_;                                                    \
		ssize_t r_;                                                    \
		int e_;                                                        \
                                                                               \
		if (!s_ || UNLIKELY(inside) || UNLIKELY(tls_cur != NULL))      \
			return call;                                           \
		t_ = now();                                                    \
		/* the entry of a send that may begin an exchange, in the      \
		 * spool while the send is under way (a process killed in      \
		 * it keeps that exchange), cleared when it returns */         \
		if (kind == EV_SEND && s_->dir != DIR_SEND)                    \
			memcpy(s_->open->tail, &t_, sizeof(t_));               \
		r_ = call;                                                     \
		if (kind == EV_SEND)                                           \
			memset(s_->open->tail, 0, sizeof(t_));                 \
		e_ = errno;                                                    \
		inside = 1;                                                    \
		call_event(s_, fd, kind, t_, now(), r_, e_, buf);              \
		inside = 0;                                                    \
		errno = e_;                                                    \
		return r_;                                                     \
	} while (0)

EXPORT ssize_t write(int fd, const void *b, size_t n)
{
	SEND_HOOK(EV_SEND, r_write(fd, b, n), b);
}

EXPORT ssize_t send(int fd, const void *b, size_t n, int f)
{
	SEND_HOOK(EV_SEND, r_send(fd, b, n, f), b);
}

EXPORT ssize_t writev(int fd, const struct iovec *v, int c)
{
	/* (the sketch takes the head from the first buffer alone) */
	SEND_HOOK(EV_SEND, r_writev(fd, v, c), c > 0 ? v[0].iov_base : NULL);
}

EXPORT ssize_t read(int fd, void *b, size_t n)
{
	SEND_HOOK(EV_RECV, r_read(fd, b, n), b);
}

EXPORT ssize_t recv(int fd, void *b, size_t n, int f)
{
	SEND_HOOK(EV_RECV, r_recv(fd, b, n, f), b);
}

EXPORT int close(int fd)
{
	struct fdst *s = tracked(fd);
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	int ret, err, have;
	struct ev *e;

	if (!s || UNLIKELY(inside) || getpid() != my_pid)
		return r_close(fd);
	inside = 1;
	s->on = 0;
	have = getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 &&
	       tl >= offsetof(struct tcp_info, tcpi_total_retrans) + 4;
	inside = 0;
	ret = r_close(fd);
	err = errno;
	inside = 1;
	e = reserve(2);
	if (e) {
		e->fd = fd;
		e->conn = s->conn;
		e->t_out = now();
		e->ret = ret;
		e->err = ret < 0 ? err : 0;
		if (have) {
			uint32_t *u = (uint32_t *)(void *)&e[1].t_in;

			u[0] = ti.tcpi_rtt;
			u[1] = ti.tcpi_rttvar;
			u[2] = ti.tcpi_total_retrans;
			u[3] = ti.tcpi_snd_cwnd;
			u[4] = ti.tcpi_pmtu;
			u[5] = ti.tcpi_min_rtt;
			e[1].ret = (int64_t)ti.tcpi_delivery_rate;
			e[1].conn = e->conn;
			publish(e + 1, EV_INFO);
		}
		publish(e, EV_CLOSE);
	}
	inside = 0;
	errno = err;
	return ret;
}
