/* hooks_fd.c - connect, close and the calls that make, copy or end fds. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/tcp.h> /* struct tcp_info as the kernel has it */
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events.h"
#include "hooks.h"
#include "raw_syscall.h"

/* Whether fd is a stream socket (one getsockopt). */
static bool is_stream_socket(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return REAL(getsockopt)(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_STREAM;
}

/* What a connect that returned (ret, err) on an AF_INET or AF_INET6
 * socket says of its type, asked at most once (*tfo, -1 on entry: what
 * TCP_FASTOPEN_CONNECT said, 1 on, 0 off; left -1 when not asked):
 * - a connect in progress (EINPROGRESS) is a connection-oriented one: a
 *   datagram socket connects at once (TCP, or SCTP, whose one-to-many
 *   sockets are then taken as streams too); no call;
 * - a connect that succeeded: TCP_FASTOPEN_CONNECT, which only a TCP
 *   socket answers, and whose answer syn_deferred wants anyway; SO_TYPE
 *   where it is not answered (UDP, an older kernel);
 * - any other end: SO_TYPE. */
static bool stream_after_connect(int fd, int ret, int err, int *tfo)
{
	int on = 0;
	socklen_t len = sizeof(on);

	if (ret < 0 && err == EINPROGRESS)
		return true;
	if (ret == 0 && REAL(getsockopt)(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT,
					 &on, &len) == 0) {
		*tfo = on != 0;
		return true;
	}
	return is_stream_socket(fd);
}

void peer_of(const struct sockaddr *sa, uint8_t addr[16], uint16_t *port)
{
	memset(addr, 0, 16);
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		memcpy(addr, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const void *)sa;
		memcpy(addr, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
	}
}

static inline __attribute__((always_inline)) void
note_local_addr(struct obs_conn *c, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint8_t addr[16];
	uint16_t port = 0;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return;
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return;
	peer_of((struct sockaddr *)&ss, addr, &port);
	obs_xm_local_addr(c, addr, port);
}

/* Whether the address of a call that may open a connection (addr, len)
 * may be one to track, before the call: long enough for AF_INET and no
 * longer than the kernel takes. Nothing of addr is read: a program's
 * address the kernel cannot read fails the call with EFAULT, and the
 * layer must not fault first. */
static inline bool addr_may_track(const struct sockaddr *addr, socklen_t len)
{
	return addr && len >= sizeof(struct sockaddr_in) &&
	       len <= sizeof(struct sockaddr_storage);
}

/* Whether fd is one the table can hold. */
static inline bool fd_may_track(int fd)
{
	return (unsigned int)fd < obs_fd_table_size;
}

/* ... and, once the kernel read the address, whether it is an AF_INET or
 * AF_INET6 one of the right length. */
static inline bool addr_trackable(const struct sockaddr *addr, socklen_t len)
{
	return addr_may_track(addr, len) &&
	       (addr->sa_family == AF_INET ||
		(addr->sa_family == AF_INET6 &&
		 len >= sizeof(struct sockaddr_in6)));
}

/* connect() on an fd the table holds: a completion check of a connect in
 * progress, or a new attempt after a failed one (a new connection: the
 * old one goes). Returns true with *ret set when the call was made here. */
static bool connect_again(int fd, struct obs_conn *c,
			  const struct sockaddr *addr, socklen_t len, int *ret)
{
	int err;

	if (!obs_enter()) { /* a signal handler inside the layer */
		*ret = REAL(connect)(fd, addr, len);
		return true;
	}
	if (c->phase == OBS_PH_CONNECTING || c->phase == OBS_PH_UP) {
		/* one clock read, at the return: only T2 can come of it */
		obs_leave();
		*ret = REAL(connect)(fd, addr, len);
		err = errno;
		obs_enter_again();
		obs_xm_connect_again(c, obs_now(), *ret, err);
		if (obs_proc.events &&
		    (*ret == 0 || err == EISCONN ||
		     (err != EALREADY && err != EINPROGRESS && err != EINTR)))
			obs_ev_up(c, obs_now(), OBS_UP_RECONNECT,
				  *ret == 0 || err == EISCONN ? 0 : err);
		obs_leave();
		errno = err;
		return true;
	}
	c = conn_detach(fd);
	if (c)
		conn_unref(c, 0);
	obs_leave();
	return false;
}

/* Whether connect's address was read by the kernel, the call having
 * returned (ret, err): unless the fd was bad (EBADF comes first) or the
 * address could not be read (EFAULT); addr_may_track turned away the
 * lengths the kernel refuses before reading. Only then does the layer
 * read it (a pointer the program cannot read fails the call, as without
 * the layer). */
static inline bool connect_read(int ret, int err)
{
	return ret == 0 || (err != EFAULT && err != EBADF);
}

/* A call on fd that may open a connection to addr (connect, or a TCP Fast
 * Open send; fd_may_track(fd)), once it returned and the kernel read addr:
 * its state, zeroed, and its peer; NULL when the layer does not track it.
 * A connect passes what it returned (ret, err) and tfo, for
 * stream_after_connect to tell the socket's type from (and what it asked,
 * into *tfo); a Fast Open send passes NULL: SO_TYPE. Keeps errno. */
static inline __attribute__((always_inline)) struct obs_conn *
connect_prepare(int fd, const struct sockaddr *addr, socklen_t len,
		uint8_t peer[16], uint16_t *port, int ret, int err, int *tfo)
{
	int saved = errno;
	struct obs_conn *c = NULL;

	if (tfo)
		*tfo = -1;
	if (!addr_trackable(addr, len) || !obs_enter())
		return NULL;
	if (!obs_in_vfork_child() &&
	    (tfo ? stream_after_connect(fd, ret, err, tfo)
		 : is_stream_socket(fd)) &&
	    obs_spool_ensure() == 0)
		c = conn_new();
	obs_leave();
	if (c)
		peer_of(addr, peer, port);
	errno = saved;
	return c;
}

/* Whether connect() returned 0 on fd with its SYN deferred to the first
 * send: TCP_FASTOPEN_CONNECT with a Fast Open cookie (curl --tcp-fastopen)
 * leaves the socket in SYN_SENT. tfo: what the option said when
 * stream_after_connect asked (1, 0), or -1: asked here. A second
 * getsockopt only where the option is set. */
static bool syn_deferred(int fd, int tfo)
{
	int on = 0;
	socklen_t len = sizeof(on);
	struct tcp_info ti;

	if (tfo == 0 ||
	    (tfo < 0 && (REAL(getsockopt)(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT,
					  &on, &len) != 0 ||
			 !on)))
		return false;
	len = sizeof(ti);
	return REAL(getsockopt)(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	       ti.tcpi_state == 2; /* TCP_SYN_SENT (include/net/tcp_states.h) */
}

/* ... and its record, once the call returned (ret, err) at t_out: then
 * data, a Fast Open send's bytes (NULL for connect), and the connection
 * goes into the table. (Both inline: eleven arguments passed and a frame
 * on every connect otherwise.) */
static inline __attribute__((always_inline)) void
connect_record(struct obs_conn *c, int fd, int family, const uint8_t peer[16],
	       uint16_t port, int64_t t_in, int64_t t_out, int ret, int err,
	       const struct obs_data *data, ssize_t sent, int tfo)
{
	/* a connect whose SYN waits for the first send */
	bool deferred = !data && ret == 0 && syn_deferred(fd, tfo);

	obs_enter_again();
	obs_xm_connect_first(c, conn_next_seq(), fd, family, peer, port, t_in,
			     t_out, ret, err);
	if (obs_proc.events) /* a Fast Open send's SYN carries its bytes */
		obs_ev_begin(c, t_in, t_out, ret == 0 ? 0 : err,
			     data ? ret != 0 : deferred);
	if (data && obs_proc.events) {
		struct obs_call call = { .dir = OBS_TX,
					 .t_in = t_in,
					 .t_out = t_out,
					 .result = sent,
					 .err = sent < 0 ? err : 0,
					 .iov = data->iov,
					 .iovcnt = data->iovcnt };

		obs_cap_call(&c->cap, &call);
	} else if (data)
		obs_xm_fastopen(c, t_in, t_out, sent, data);
	else if (deferred)
		obs_xm_fastopen_deferred(c);
	note_local_addr(c, fd);
	dns_match(c, family, peer, t_in);
	conn_attach(fd, c);
	obs_leave();
	OBS_LOG(OBS_LOG_DEBUG, "%s fd %d port %u: %d (%s)",
		data ? "fast open" : "connect", fd, port, ret,
		ret == 0 ? "ok" : strerror(err));
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int saved = errno, ret, err, tfo;
	struct obs_conn *c = conn_of(fd);
	int64_t t_in, t_out;
	uint8_t peer[16];
	uint16_t port = 0;

	if (UNLIKELY(!obs_real.connect)) {
		obs_resolve();
		if (!obs_real.connect) /* inside dlsym: the system call */
			return (int)syscall(SYS_connect, fd, addr, len);
	}
	if (c && connect_again(fd, c, addr, len, &ret))
		return ret;
	if (!fd_may_track(fd) || !addr_may_track(addr, len))
		return obs_real.connect(fd, addr, len);
	t_in = obs_now();
	ret = obs_real.connect(fd, addr, len);
	err = errno;
	/* in progress: T2 comes later, the return time is not used */
	t_out = obs_xm_connect_pending(ret, err) ? 0 : obs_now();
	/* the address is looked at once the kernel read it */
	c = connect_read(ret, err) ? connect_prepare(fd, addr, len, peer, &port,
						     ret, err, &tfo)
				   : NULL;
	if (c)
		connect_record(c, fd, addr->sa_family, peer, port, t_in, t_out,
			       ret, err, NULL, 0, tfo);
	errno = ret == 0 ? saved : err;
	return ret;
}

/* Whether a Fast Open send that failed with err still began a connect:
 * in progress, interrupted (it goes on), or failed as a connect fails. */
static bool connect_errno(int err)
{
	switch (err) {
	case EINPROGRESS:
	case EINTR:
	case ECONNREFUSED:
	case ETIMEDOUT:
	case ENETUNREACH:
	case EHOSTUNREACH:
	case ECONNRESET:
		return true;
	default:
		return false;
	}
}

/* TCP Fast Open: sendto() or sendmsg() with MSG_FASTOPEN and an address,
 * on a socket that was never connected (wget2), connects and sends in one
 * call. It is the connect (T1 its entry) and, when it moved bytes (a
 * Fast Open cookie let them go with the SYN, or a blocking call waited
 * for the connection), the first exchange's first send (T3 the same
 * entry). Without a cookie a non-blocking call sends the SYN alone and
 * says EINPROGRESS: only the connect, the program sends the data later.
 * The connection is up at the return when the call was blocking and
 * succeeded, else in progress (T2 comes as after a non-blocking connect).
 * fastopen_begin: true when the layer tracks the call, then
 * fastopen_end with the real call's result. */
bool fastopen_begin(int fd, struct obs_fastopen *f)
{
	if (!fd_may_track(fd))
		return false;
	f->t_in = obs_now();
	return true;
}

ssize_t fastopen_end(int fd, struct obs_fastopen *f, ssize_t ret, int flags,
		     const struct msghdr *msg)
{
	int err = errno;
	int64_t t_out = obs_now();
	struct obs_conn *c;
	const struct sockaddr *addr;
	struct obs_data d;
	uint8_t peer[16];
	uint16_t port = 0;
	bool waits;

	/* no connect at all (Fast Open off: EOPNOTSUPP; a bad call, EFAULT
	 * among them: then nothing of msg is read): the program will
	 * connect() the usual way */
	if (ret < 0 && !connect_errno(err)) {
		errno = err;
		return ret;
	}
	addr = msg->msg_name;
	c = connect_prepare(fd, addr, msg->msg_namelen, peer, &port, 0, 0,
			    NULL);
	if (c) {
		d = (struct obs_data){ msg->msg_iov, (int)msg->msg_iovlen,
				       ret > 0 ? (size_t)ret : 0, 0 };
		waits = ret >= 0 && !(flags & MSG_DONTWAIT) &&
			!(REAL(fcntl)(fd, F_GETFL) & O_NONBLOCK);
		connect_record(c, fd, addr->sa_family, peer, port, f->t_in,
			       t_out, waits ? 0 : -1,
			       ret >= 0 ? EINPROGRESS : err,
			       ret > 0 ? &d : NULL, ret, -1);
	}
	errno = err;
	return ret;
}

/* TCP_INFO of a connection about to be closed for good into *out: one
 * getsockopt, at close only (errno kept by the caller); false when it
 * could not be read. */
static inline __attribute__((always_inline)) bool
read_tcp_info(int fd, struct obs_tcp_info *out)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	/* (not zeroed first: only the len bytes the kernel wrote are read) */
	if (REAL(getsockopt)(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_total_retrans) +
			    sizeof(ti.tcpi_total_retrans))
		return false;
	out->rtt_us = ti.tcpi_rtt;
	out->rttvar_us = ti.tcpi_rttvar;
	out->retrans = ti.tcpi_total_retrans;
	out->snd_cwnd = ti.tcpi_snd_cwnd;
	out->pmtu = ti.tcpi_pmtu;
	/* newer fields: zero when the kernel's struct is shorter */
	out->min_rtt_us = len >= offsetof(struct tcp_info, tcpi_min_rtt) +
						  sizeof(ti.tcpi_min_rtt)
				  ? ti.tcpi_min_rtt
				  : 0;
	out->delivery_rate =
		len >= offsetof(struct tcp_info, tcpi_delivery_rate) +
					sizeof(ti.tcpi_delivery_rate)
			? ti.tcpi_delivery_rate
			: 0;
	return true;
}

/* The real syscall(), with six arguments (the kernel reads as many as the
 * call has; the rest are ignored). */
static long real_syscall(long n, long a1, long a2, long a3, long a4, long a5,
			 long a6)
{
	long (*fn)(long, ...) =
		__atomic_load_n(&obs_real.syscall, __ATOMIC_RELAXED);

	if (UNLIKELY(!fn) && !(fn = REAL(syscall)))
		return obs_raw_syscall(n, a1, a2, a3, a4, a5, a6);
	return fn(n, a1, a2, a3, a4, a5, a6);
}

/* How a tracked fd is being closed. */
enum closer { BY_CLOSE, BY_SYSCALL, BY_FCLOSE };

static inline __attribute__((always_inline)) long
close_real(int fd, enum closer how, FILE *file)
{
	switch (how) {
	case BY_SYSCALL:
		return real_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
	case BY_FCLOSE:
		return REAL(fclose)(file);
	default:
		return REAL(close)(fd);
	}
}

/* Close the tracked fd with the real call (close, syscall(SYS_close) or
 * fclose of a stream on it): the fd's reference leaves the table before
 * the number can be reused, TCP_INFO is read when it is the last one, and
 * the connection ends at the call's return (lost, when the call says the
 * fd was not open: EBADF). In a vfork() child (the table is the parent's)
 * or a signal handler inside the layer, only the real call. Returns its
 * result, errno as it left it. */
static inline __attribute__((always_inline)) long
close_tracked(int fd, enum closer how, FILE *file)
{
	struct obs_conn *c;
	struct obs_tcp_info ti;
	bool have_ti = false;
	long ret;
	int err;

	if (!obs_enter())
		return close_real(fd, how, file);
	if (obs_in_vfork_child()) {
		obs_leave();
		return close_real(fd, how, file);
	}
	c = conn_detach(fd);
	if (c && __atomic_load_n(&c->refs, __ATOMIC_RELAXED) == 1 &&
	    c->phase == OBS_PH_UP)
		have_ti = read_tcp_info(fd, &ti);
	obs_leave();
	ret = close_real(fd, how, file);
	err = errno;
	if (c) {
		obs_enter_again();
		/* EBADF: the fd was no longer open, closed unseen before */
		if (ret < 0 && err == EBADF)
			conn_unref_as(c, 0, OBS_END_LOST);
		else
			conn_unref_info(c, obs_now(), OBS_END_NONE,
					have_ti ? &ti : NULL);
		obs_leave();
	}
	errno = err;
	return ret;
}

static __attribute__((noinline)) int close_slow(int fd)
{
	if (LIKELY(!conn_of(fd))) {
		if (UNLIKELY(!REAL(close)))
			return obs_sys_close(fd);
		return obs_real.close(fd);
	}
	return (int)close_tracked(fd, BY_CLOSE, NULL);
}

EXPORT int close(int fd)
{
	int (*fn)(int) = __atomic_load_n(&obs_real.close, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd);
	return close_slow(fd);
}

EXPORT int shutdown(int fd, int how)
{
	struct obs_conn *c = conn_of(fd);
	int ret, err;

	ret = REAL(shutdown)(fd, how);
	if (c && ret == 0 && obs_enter()) {
		err = errno;
		obs_xm_shutdown(c, obs_now(), how);
		if (obs_proc.events)
			obs_ev_shutdown(c, obs_now(), how);
		obs_leave();
		errno = err;
	}
	return ret;
}

EXPORT int socket(int domain, int type, int protocol)
{
	return fd_from_kernel(REAL(socket)(domain, type, protocol));
}

/* After a successful dup of oldfd to newfd. replaced: newfd was open
 * before (dup2/dup3), so the kernel closed it just now; otherwise whatever
 * the table holds for newfd is stale. Not in a vfork() child, nor from a
 * signal handler inside the layer. Keeps errno. */
static void dup_done(int oldfd, int newfd, bool replaced)
{
	int err = errno;
	struct obs_conn *c;

	if (LIKELY(!conn_of(newfd) && !conn_of(oldfd)))
		return;
	if (!obs_enter())
		return;
	if (obs_in_vfork_child())
		goto out;
	c = conn_of(newfd);
	if (c) {
		if (replaced) {
			c = conn_detach(newfd);
			if (c)
				conn_unref(c, obs_now());
		} else {
			fd_lost(newfd, c);
		}
	}
	c = conn_of(oldfd);
	if (c) {
		conn_ref(c);
		conn_attach(newfd, c);
	}
out:
	obs_leave();
	errno = err;
}

EXPORT int dup(int oldfd)
{
	int fd = REAL(dup)(oldfd);

	if (fd >= 0 && obs_fd_table_size)
		dup_done(oldfd, fd, false);
	return fd;
}

/* dup2/dup3 onto a tracked newfd closes its connection (for this fd). */
static int dup_onto(int oldfd, int newfd, int ret)
{
	if (ret >= 0 && obs_fd_table_size && oldfd != newfd)
		dup_done(oldfd, newfd, true);
	return ret;
}

EXPORT int dup2(int oldfd, int newfd)
{
	return dup_onto(oldfd, newfd, REAL(dup2)(oldfd, newfd));
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return dup_onto(oldfd, newfd, REAL(dup3)(oldfd, newfd, flags));
}

int obs_fcntl_dup(int (*fn)(int, int, ...), int fd, int cmd, void *arg)
{
	int ret = fn(fd, cmd, arg);

	if (ret >= 0 && obs_fd_table_size)
		dup_done(fd, ret, false);
	return ret;
}

/* close_range, closefrom and their system calls: the tracked fds in
 * [first, last] leave the table before the real call (the numbers can be
 * reused as soon as it returns), their connections end at its return. Not
 * in a vfork() child, nor from a signal handler inside the layer. */
static struct obs_conn *range_begin(unsigned int first, unsigned int last,
				    bool *entered)
{
	struct obs_conn *closing = NULL;

	*entered = false;
	if (!obs_fd_table_size || !obs_enter())
		return NULL;
	if (!obs_in_vfork_child()) {
		closing = detach_range(first, last);
		*entered = true;
	}
	obs_leave();
	return closing;
}

static void range_end(struct obs_conn *closing, bool entered)
{
	int err = errno;

	if (!entered || !closing)
		return;
	obs_enter_again();
	close_detached(closing);
	obs_leave();
	errno = err;
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	struct obs_conn *closing = NULL;
	bool entered = false;
	int ret;

	if (!REAL(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		closing = range_begin(first, last, &entered);
	ret = obs_real.close_range(first, last, flags);
	range_end(closing, entered);
	return ret;
}

EXPORT void closefrom(int lowfd)
{
	struct obs_conn *closing = NULL;
	bool entered = false;
	int err = errno;

	if (lowfd >= 0)
		closing = range_begin((unsigned int)lowfd, UINT_MAX, &entered);
	if (REAL(closefrom))
		obs_real.closefrom(lowfd);
	range_end(closing, entered);
	errno = err;
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct obs_conn *c = conn_of(fd);
	int ret = REAL(getsockopt)(fd, level, name, val, len);

	if (UNLIKELY(c != NULL) && ret == 0 && level == SOL_SOCKET &&
	    name == SO_ERROR && val && len && *len >= sizeof(int) &&
	    obs_enter()) {
		int err = errno, so = *(int *)val;
		obs_xm_so_error(c, obs_now(), so);
		if (obs_proc.events && so != EINPROGRESS && so != EALREADY)
			obs_ev_up(c, obs_now(), OBS_UP_SO_ERROR, so);
		obs_leave();
		errno = err;
	}
	return ret;
}

/* fclose() of a stream on a tracked socket (fdopen): glibc closes the fd
 * inside, where close() is not seen; the connection ends here, at
 * fclose's return. */
EXPORT int fclose(FILE *f)
{
	int fd, err;

	if (UNLIKELY(!REAL(fclose)))
		return EOF;
	if (!f || !obs_fd_table_size)
		return obs_real.fclose(f);
	err = errno;
	fd = fileno(f); /* -1 (and EBADF) for a stream without an fd */
	errno = err;
	if (LIKELY(!conn_of(fd)))
		return obs_real.fclose(f);
	return (int)close_tracked(fd, BY_FCLOSE, f);
}

/* The system calls syscall() may make that end fds or replace them. */
static bool ends_fds(long n)
{
	return n == SYS_close || n == SYS_close_range || n == SYS_dup3
#ifdef SYS_dup2
	       || n == SYS_dup2
#endif
		;
}

static __attribute__((noinline)) long
syscall_fds(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	struct obs_conn *closing = NULL;
	bool entered = false;
	long ret;

	if (n == SYS_close) {
		if (!conn_of((int)a1))
			return real_syscall(n, a1, a2, a3, a4, a5, a6);
		return close_tracked((int)a1, BY_SYSCALL, NULL);
	}
	if (n == SYS_close_range) {
		if (!((unsigned int)a3 & CLOSE_RANGE_CLOEXEC))
			closing = range_begin((unsigned int)a1,
					      (unsigned int)a2, &entered);
		ret = real_syscall(n, a1, a2, a3, a4, a5, a6);
		range_end(closing, entered);
		return ret;
	}
	/* dup2, dup3 */
	ret = real_syscall(n, a1, a2, a3, a4, a5, a6);
	return dup_onto((int)a1, (int)a2, (int)ret);
}

/* syscall(): Node.js (libuv) closes its sockets with syscall(SYS_close),
 * which close() never sees. Only the calls that end or replace fds
 * (close, close_range, dup2, dup3) are looked at; every other one (futex,
 * gettid, ...) goes straight on with its six arguments, its result and its
 * errno untouched. */
EXPORT long syscall(long n, ...)
{
	va_list ap;
	long a1, a2, a3, a4, a5, a6;

	va_start(ap, n);
	a1 = va_arg(ap, long);
	a2 = va_arg(ap, long);
	a3 = va_arg(ap, long);
	a4 = va_arg(ap, long);
	a5 = va_arg(ap, long);
	a6 = va_arg(ap, long);
	va_end(ap);
	if (LIKELY(!ends_fds(n)) || !obs_fd_table_size)
		return real_syscall(n, a1, a2, a3, a4, a5, a6);
	return syscall_fds(n, a1, a2, a3, a4, a5, a6);
}

/* hooks_fcntl.c tells the commands without <fcntl.h>. */
_Static_assert(F_DUPFD == 0 && F_DUPFD_CLOEXEC == 1030,
	       "hooks_fcntl.c's F_DUPFD and F_DUPFD_CLOEXEC");
