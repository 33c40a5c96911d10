/* hooks_io.c - the send and receive families. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "events.h"
#include "hooks.h"

/* ---- the send family ---------------------------------------------------- */

/* The hottest hooks (the read/write families and close, which every file
 * and pipe of every program goes through) are split in two: an exported
 * fast path that only looks the fd up and tail-calls libc, and a *_slow
 * function, out of line, for tracked fds and first use. */

static inline bool is_again(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK;
}

/* A send on a tracked connection: its entry time when it matters (T3, T2),
 * and whether the state machine counts it as possibly starting an
 * exchange (see obs_xm_send_begin). */
struct send_ctx {
	int64_t t_in;
	bool counted;
	bool observed; /* false: re-entered from a signal handler inside the
			* layer; the call is not recorded */
};

/* iov/iovcnt/n: what the call asks to send (n: at most that many bytes;
 * SIZE_MAX: as far as the buffers go), noted before the real call when the
 * send may begin an exchange (obs_xm_send_begin: read only on a TLS
 * connection during its handshake): out of line, so that a send in the
 * middle of an exchange pays only for the hint. */
static __attribute__((noinline)) struct send_ctx
send_begin_entry(struct obs_conn *c, const struct iovec *iov, int iovcnt,
		 size_t n)
{
	struct send_ctx sx = { 0, false, true };
	struct obs_data d = { iov, iovcnt, n, 0 };

	sx.t_in = obs_now();
	obs_enter_again();
	d.tls_in = tls_in_of(c);
	sx.counted = obs_xm_send_begin(c, sx.t_in, &d);
	if (obs_xm_plain_hint(c))
		obs_xm_send_opens(c, sx.t_in);
	obs_leave();
	return sx;
}

static inline __attribute__((always_inline)) struct send_ctx
send_begin(struct obs_conn *c, const struct iovec *iov, int iovcnt, size_t n)
{
	struct send_ctx sx = { 0, false, true };

	if (UNLIKELY(obs_reentered())) {
		sx.observed = false;
		return sx;
	}
	if (obs_proc.events) {
		sx.t_in = obs_now();
		return sx;
	}
	if (obs_xm_send_needs_entry(c))
		return send_begin_entry(c, iov, iovcnt, n);
	return sx;
}

/* A call on fd failed with err: EBADF or ENOTSOCK says fd is no longer the
 * socket of c (closed where the layer could not see, the number maybe
 * reused): c loses fd, and the call is not counted on it. */
static inline bool gone(int fd, struct obs_conn *c, int err)
{
	if (LIKELY(err != EBADF && err != ENOTSOCK))
		return false;
	fd_lost(fd, c);
	return true;
}

/* OBSERVE_CAPTURE=events: a call of direction dir entered at t_in that
 * returned ret (err) to the capture (events.c); wanted: bytes asked for
 * (a receive of 0 for a buffer with room is the end of the stream); iov:
 * the buffers the kernel read or wrote (NULL: none to look at). Keeps
 * errno. */
static __attribute__((noinline)) void
capture_call(int fd, struct obs_conn *c, enum obs_dir dir, int64_t t_in,
	     ssize_t ret, int err, size_t wanted, bool peek,
	     const struct iovec *iov, int iovcnt)
{
	struct obs_call call = {
		.dir = dir,
		.t_in = t_in,
		.t_out = obs_now(),
		.result = ret,
		.err = err,
		.eof = dir == OBS_RX && ret == 0 && wanted > 0,
		.peek = peek,
		.iov = iov,
		.iovcnt = iovcnt,
	};

	obs_enter_again();
	call.in_tls = tls_in_of(c) != OBS_TLSIN_NONE; /* (binds a session) */
	if (ret >= 0 || !gone(fd, c, err))
		obs_ev_call(c, &call);
	obs_leave();
	errno = err;
}

/* iov/iovcnt: the buffers of the call, for the state machine's look at
 * the bytes that were moved (protocol fields, TLS records). */
static inline __attribute__((always_inline)) ssize_t
send_end(int fd, struct obs_conn *c, struct send_ctx sx, ssize_t ret,
	 const struct iovec *iov, int iovcnt)
{
	int err = errno;
	struct obs_data d = { iov, iovcnt, ret > 0 ? (size_t)ret : 0, 0 };

	if (!sx.observed)
		return ret;
	if (obs_proc.events) {
		capture_call(fd, c, OBS_TX, sx.t_in, ret, err, 1, false, iov,
			     iovcnt);
		return ret;
	}
	/* send_begin_entry's obs_xm_send_opens, taken back */
	obs_xm_send_returned(c);
	if (ret < 0 && !sx.counted && sx.t_in == 0 && is_again(err))
		return ret; /* mid-exchange EAGAIN: nothing to record */
	obs_enter_again();
	d.tls_in = tls_in_of(c);
	if (UNLIKELY(ret > 0 && obs_xh2_wanted(c, true, &d)))
		obs_h2_attach_new(c); /* the client preface: HTTP/2 */
	if (ret >= 0 || !gone(fd, c, err))
		obs_xm_send_done(c, sx.counted, sx.t_in, obs_now(), ret, err,
				 &d);
	obs_leave();
	errno = err;
	return ret;
}

/* The plain connection's way (obs_xm_send_plain, obs_xm_recv_plain): a
 * call on a connection the state machine saw as plain HTTP/1.x, by a
 * thread in no TLS library's call and not inside the layer (a hint, read
 * without the lock; the plain functions check under it, and decline). */
static inline bool plain_hint(const struct obs_conn *c)
{
	/* the protocol first: the connections of others fail it at once */
	return obs_xm_plain_hint(c) && !obs_proc.events &&
	       LIKELY(obs_inside == 0) && LIKELY(obs_tls_cur == NULL);
}

/* A send of one buffer, the plain way: the entry announced without the
 * lock (obs_xm_send_announce) when it may begin an exchange, else as ever
 * (obs_xm_send_begin; another send is announced), the bookkeeping of a
 * call that moved bytes by obs_xm_send_plain; anything else (an error,
 * nothing moved, a connection that is not plain) by send_end. real: the
 * real call, made between. No errno to keep around obs_xm_send_plain: it
 * makes no call that sets it (a record's reservation keeps it, even where
 * it maps or rolls the spool over: spool_grow). */
#define SEND_PLAIN(fd, c, buf, n, real)                                        \
	do {                                                                   \
		struct iovec v_ = { (void *)(buf), (n) };                      \
		struct obs_data d_ = { &v_, 1, (n), OBS_TLSIN_NONE };          \
		struct send_ctx sx_ = { 0, false, true };                      \
		bool ann_ = false;                                             \
		ssize_t ret_;                                                  \
                                                                               \
		if (obs_xm_send_needs_entry(c)) {                              \
			sx_.t_in = obs_now();                                  \
			ann_ = obs_xm_send_announce((c), sx_.t_in, (n));       \
			if (ann_)                                              \
				obs_xm_send_opens((c), sx_.t_in);              \
			else {                                                 \
				obs_enter_again();                             \
				sx_.counted =                                  \
					obs_xm_send_begin((c), sx_.t_in, &d_); \
				obs_leave();                                   \
			}                                                      \
		}                                                              \
		ret_ = (real);                                                 \
		obs_xm_send_returned(c);                                       \
		if (LIKELY(ret_ > 0)) {                                        \
			bool done_;                                            \
                                                                               \
			d_.len = (size_t)ret_;                                 \
			obs_enter_again();                                     \
			done_ = obs_xm_send_plain((c), &sx_.counted, ann_,     \
						  sx_.t_in, obs_now(),         \
						  (size_t)ret_, &d_);          \
			obs_leave();                                           \
			if (LIKELY(done_))                                     \
				return ret_;                                   \
		} else if (ann_) {                                             \
			int err_ = errno;                                      \
                                                                               \
			d_.len = 0;                                            \
			obs_enter_again();                                     \
			sx_.counted = obs_xm_send_settle((c), &d_);            \
			obs_leave();                                           \
			errno = err_;                                          \
		}                                                              \
		return send_end((fd), (c), sx_, ret_, &v_, 1);                 \
	} while (0)

static __attribute__((noinline)) ssize_t
write_slow(int fd, const void *buf, size_t n, struct obs_conn *c)
{
	struct send_ctx sx;

	if (LIKELY(!c)) {
		if (UNLIKELY(!REAL(write)))
			return obs_sys_write(fd, buf, n);
		return obs_real.write(fd, buf, n);
	}
	if (LIKELY(plain_hint(c)))
		SEND_PLAIN(fd, c, buf, n, obs_real.write(fd, buf, n));
	struct iovec v = { (void *)buf, n };

	sx = send_begin(c, &v, 1, n);
	return send_end(fd, c, sx, obs_real.write(fd, buf, n), &v, 1);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t (*fn)(int, const void *, size_t) =
		__atomic_load_n(&obs_real.write, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, buf, n);
	return write_slow(fd, buf, n, c);
}

static __attribute__((noinline)) ssize_t
writev_slow(int fd, const struct iovec *iov, int iovcnt, struct obs_conn *c)
{
	struct send_ctx sx;

	if (LIKELY(!c))
		return REAL(writev)(fd, iov, iovcnt);
	sx = send_begin(c, iov, iovcnt, SIZE_MAX);
	return send_end(fd, c, sx, obs_real.writev(fd, iov, iovcnt), iov,
			iovcnt);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	ssize_t (*fn)(int, const struct iovec *, int) =
		__atomic_load_n(&obs_real.writev, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, iov, iovcnt);
	return writev_slow(fd, iov, iovcnt, c);
}

static __attribute__((noinline)) ssize_t
send_slow(int fd, const void *buf, size_t n, int flags, struct obs_conn *c)
{
	struct send_ctx sx;

	if (LIKELY(!c))
		return REAL(send)(fd, buf, n, flags);
	if (LIKELY(plain_hint(c)))
		SEND_PLAIN(fd, c, buf, n, obs_real.send(fd, buf, n, flags));
	struct iovec v = { (void *)buf, n };

	sx = send_begin(c, &v, 1, n);
	return send_end(fd, c, sx, obs_real.send(fd, buf, n, flags), &v, 1);
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	ssize_t (*fn)(int, const void *, size_t, int) =
		__atomic_load_n(&obs_real.send, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, buf, n, flags);
	return send_slow(fd, buf, n, flags, c);
}

static __attribute__((noinline)) ssize_t
sendto_slow(int fd, const void *buf, size_t n, int flags,
	    const struct sockaddr *addr, socklen_t alen, struct obs_conn *c)
{
	struct send_ctx sx;
	struct iovec v = { (void *)buf, n };

	if (LIKELY(!c)) {
		struct obs_fastopen f;

		if ((flags & MSG_FASTOPEN) && fastopen_begin(fd, &f)) {
			struct msghdr m = { .msg_name = (void *)addr,
					    .msg_namelen = alen,
					    .msg_iov = &v,
					    .msg_iovlen = 1 };
			ssize_t ret =
				obs_real.sendto(fd, buf, n, flags, addr, alen);

			return fastopen_end(fd, &f, ret, flags, &m);
		}
		return REAL(sendto)(fd, buf, n, flags, addr, alen);
	}
	sx = send_begin(c, &v, 1, n);
	return send_end(fd, c, sx,
			obs_real.sendto(fd, buf, n, flags, addr, alen), &v, 1);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
		      const struct sockaddr *addr, socklen_t alen)
{
	ssize_t (*fn)(int, const void *, size_t, int, const struct sockaddr *,
		      socklen_t) =
		__atomic_load_n(&obs_real.sendto, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL) &&
	    LIKELY(!(flags & MSG_FASTOPEN)))
		return fn(fd, buf, n, flags, addr, alen);
	return sendto_slow(fd, buf, n, flags, addr, alen, c);
}

static __attribute__((noinline)) ssize_t
sendmsg_slow(int fd, const struct msghdr *msg, int flags, struct obs_conn *c)
{
	const struct msghdr *pre, *post;
	struct send_ctx sx;
	ssize_t ret;

	if (LIKELY(!c)) {
		struct obs_fastopen f;

		if ((flags & MSG_FASTOPEN) && msg && fastopen_begin(fd, &f)) {
			ret = obs_real.sendmsg(fd, msg, flags);
			return fastopen_end(fd, &f, ret, flags, msg);
		}
		return REAL(sendmsg)(fd, msg, flags);
	}
	/* the program's msghdr is read once the call succeeded (the kernel
	 * read it); before the call only during a TLS handshake
	 * (obs_xm_send_reads) */
	pre = msg && obs_xm_send_reads(c) ? msg : NULL;
	sx = send_begin(c, pre ? pre->msg_iov : NULL,
			pre ? (int)pre->msg_iovlen : 0, SIZE_MAX);
	ret = obs_real.sendmsg(fd, msg, flags);
	post = ret >= 0 ? msg : NULL; /* the kernel read it */
	return send_end(fd, c, sx, ret, post ? post->msg_iov : NULL,
			post ? (int)post->msg_iovlen : 0);
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t (*fn)(int, const struct msghdr *, int) =
		__atomic_load_n(&obs_real.sendmsg, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL) &&
	    LIKELY(!(flags & MSG_FASTOPEN)))
		return fn(fd, msg, flags);
	return sendmsg_slow(fd, msg, flags, c);
}

static ssize_t mmsg_bytes(const struct mmsghdr *v, int count)
{
	ssize_t total = 0;

	for (int i = 0; i < count; i++)
		total += v[i].msg_len;
	return total;
}

EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	struct obs_conn *c = conn_of(fd);
	struct send_ctx sx;
	int ret, err;

	if (LIKELY(!c))
		return REAL(sendmmsg)(fd, vec, vlen, flags);
	sx = send_begin(c, NULL, 0, 0);
	ret = obs_real.sendmmsg(fd, vec, vlen, flags);
	err = errno;
	/* the bytes are looked at when one message holds them all */
	send_end(fd, c, sx, ret < 0 ? -1 : mmsg_bytes(vec, ret),
		 ret == 1 ? vec[0].msg_hdr.msg_iov : NULL,
		 ret == 1 ? (int)vec[0].msg_hdr.msg_iovlen : 0);
	errno = err;
	return ret;
}

/* ---- the receive family -------------------------------------------------- */

/* The entry time of a receive when it matters (T5), else 0; -1 when the
 * hook was re-entered from a signal handler inside the layer (the call is
 * not recorded). */
static inline int64_t recv_begin(struct obs_conn *c)
{
	if (UNLIKELY(obs_reentered()))
		return -1;
	return obs_proc.events || obs_xm_recv_needs_entry(c) ? obs_now() : 0;
}

/* What a receive wrote into the caller's buffers, for the state machine
 * to look at: nothing when the kernel wrote nothing there (MSG_TRUNC on a
 * stream socket discards the bytes, and the buffer may be NULL). */
static inline const struct iovec *written(const struct iovec *iov, int flags)
{
	return UNLIKELY(flags & MSG_TRUNC) ? NULL : iov;
}

/* wanted: bytes asked for (a 0-byte read returning 0 is not end of stream).
 * iov: the buffers the kernel filled (NULL: none to look at); the state
 * machine reads at most ret bytes of them, and never past an iov_len. */
static inline __attribute__((always_inline)) ssize_t
recv_end(int fd, struct obs_conn *c, int64_t t_in, ssize_t ret, size_t wanted,
	 bool peek, const struct iovec *iov, int iovcnt)
{
	int err = errno;
	struct obs_data d = { iov, iovcnt, ret > 0 ? (size_t)ret : 0, 0 };

	if (t_in < 0)
		return ret;
	if (obs_proc.events) {
		capture_call(fd, c, OBS_RX, t_in, ret, err, wanted, peek, iov,
			     iovcnt);
		return ret;
	}
	if (ret < 0 && t_in == 0 && is_again(err))
		return ret; /* mid-response EAGAIN: nothing to record */
	if (ret == 0 && wanted == 0)
		return ret;
	obs_enter_again();
	d.tls_in = tls_in_of(c);
	if (UNLIKELY(ret > 0 && !peek && obs_xh2_wanted(c, false, &d)))
		obs_h2_attach_new(c); /* a 101: HTTP/2 after an Upgrade */
	if (ret >= 0 || !gone(fd, c, err))
		obs_xm_recv(c, t_in, obs_now(), ret, err, peek, &d);
	obs_leave();
	errno = err;
	return ret;
}

/* recv_end for a receive into one buffer, out of line: the plain way's
 * frame stays small. */
static __attribute__((noinline)) ssize_t
recv_slow_end(int fd, struct obs_conn *c, int64_t t_in, ssize_t ret, void *buf,
	      size_t n)
{
	struct iovec v = { buf, n };

	return recv_end(fd, c, t_in, ret, n, false, &v, 1);
}

/* A receive into one buffer (no peek, no MSG_TRUNC), the plain way: its
 * entry time when it matters (T5), the bookkeeping of a call that brought
 * bytes or the end of the stream by obs_xm_recv_plain; anything else (an
 * error, a read of 0 bytes asked, a declined call) by recv_end. No errno
 * to keep: such a call leaves it as it was, and the plain bookkeeping
 * makes no call that sets it (no record is reserved). */
#define RECV_PLAIN(fd, c, buf, n, real)                                        \
	do {                                                                   \
		int64_t t_in_ = obs_xm_recv_needs_entry(c) ? obs_now() : 0;    \
		ssize_t ret_ = (real);                                         \
                                                                               \
		if (LIKELY(ret_ > 0) || (ret_ == 0 && (n) > 0)) {              \
			bool done_;                                            \
                                                                               \
			obs_enter_again();                                     \
			done_ = obs_xm_recv_plain((c), t_in_, obs_now(),       \
						  (size_t)ret_, (buf));        \
			obs_leave();                                           \
			if (LIKELY(done_))                                     \
				return ret_;                                   \
		}                                                              \
		return recv_slow_end((fd), (c), t_in_, ret_, (buf), (n));      \
	} while (0)

static size_t iov_bytes(const struct iovec *iov, int count)
{
	size_t total = 0;

	for (int i = 0; iov && i < count; i++)
		total += iov[i].iov_len;
	return total;
}

static __attribute__((noinline)) ssize_t read_slow(int fd, void *buf, size_t n,
						   struct obs_conn *c)
{
	int64_t t_in;

	if (LIKELY(!c)) {
		if (UNLIKELY(!REAL(read)))
			return syscall(SYS_read, fd, buf, n);
		return obs_real.read(fd, buf, n);
	}
	if (LIKELY(plain_hint(c)))
		RECV_PLAIN(fd, c, buf, n, obs_real.read(fd, buf, n));
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(fd, c, t_in, obs_real.read(fd, buf, n), n, false, &v,
			1);
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	ssize_t (*fn)(int, void *, size_t) =
		__atomic_load_n(&obs_real.read, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, buf, n);
	return read_slow(fd, buf, n, c);
}

static __attribute__((noinline)) ssize_t
readv_slow(int fd, const struct iovec *iov, int iovcnt, struct obs_conn *c)
{
	int64_t t_in;
	ssize_t ret;

	if (LIKELY(!c))
		return REAL(readv)(fd, iov, iovcnt);
	t_in = recv_begin(c);
	ret = obs_real.readv(fd, iov, iovcnt);
	return recv_end(fd, c, t_in, ret, ret == 0 ? iov_bytes(iov, iovcnt) : 1,
			false, iov, iovcnt);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	ssize_t (*fn)(int, const struct iovec *, int) =
		__atomic_load_n(&obs_real.readv, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, iov, iovcnt);
	return readv_slow(fd, iov, iovcnt, c);
}

static __attribute__((noinline)) ssize_t
recv_slow(int fd, void *buf, size_t n, int flags, struct obs_conn *c)
{
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(recv)(fd, buf, n, flags);
	if (LIKELY(plain_hint(c)) && !(flags & (MSG_PEEK | MSG_TRUNC)))
		RECV_PLAIN(fd, c, buf, n, obs_real.recv(fd, buf, n, flags));
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(fd, c, t_in, obs_real.recv(fd, buf, n, flags), n,
			flags & MSG_PEEK, written(&v, flags), 1);
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	ssize_t (*fn)(int, void *, size_t, int) =
		__atomic_load_n(&obs_real.recv, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, buf, n, flags);
	return recv_slow(fd, buf, n, flags, c);
}

static __attribute__((noinline)) ssize_t
recvfrom_slow(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
	      socklen_t *alen, struct obs_conn *c)
{
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(recvfrom)(fd, buf, n, flags, addr, alen);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(fd, c, t_in,
			obs_real.recvfrom(fd, buf, n, flags, addr, alen), n,
			flags & MSG_PEEK, written(&v, flags), 1);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
			struct sockaddr *addr, socklen_t *alen)
{
	ssize_t (*fn)(int, void *, size_t, int, struct sockaddr *,
		      socklen_t *) =
		__atomic_load_n(&obs_real.recvfrom, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, buf, n, flags, addr, alen);
	return recvfrom_slow(fd, buf, n, flags, addr, alen, c);
}

static __attribute__((noinline)) ssize_t
recvmsg_slow(int fd, struct msghdr *msg, int flags, struct obs_conn *c)
{
	const struct msghdr *m;
	int64_t t_in;
	ssize_t ret;

	if (LIKELY(!c))
		return REAL(recvmsg)(fd, msg, flags);
	t_in = recv_begin(c);
	ret = obs_real.recvmsg(fd, msg, flags);
	/* the program's msghdr is read only when the call succeeded (the
	 * kernel read it) */
	m = ret >= 0 ? msg : NULL;
	return recv_end(
		fd, c, t_in, ret,
		ret == 0 && m ? iov_bytes(m->msg_iov, (int)m->msg_iovlen) : 1,
		flags & MSG_PEEK, m ? written(m->msg_iov, flags) : NULL,
		m ? (int)m->msg_iovlen : 0);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t (*fn)(int, struct msghdr *, int) =
		__atomic_load_n(&obs_real.recvmsg, __ATOMIC_RELAXED);
	struct obs_conn *c = conn_of(fd);

	if (LIKELY(fn != NULL) && LIKELY(c == NULL))
		return fn(fd, msg, flags);
	return recvmsg_slow(fd, msg, flags, c);
}

EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;
	int ret, err;

	if (LIKELY(!c))
		return REAL(recvmmsg)(fd, vec, vlen, flags, timeout);
	t_in = recv_begin(c);
	ret = obs_real.recvmmsg(fd, vec, vlen, flags, timeout);
	err = errno;
	/* the bytes are looked at when one message holds them all */
	recv_end(fd, c, t_in, ret < 0 ? -1 : mmsg_bytes(vec, ret), vlen,
		 flags & MSG_PEEK,
		 ret == 1 ? written(vec[0].msg_hdr.msg_iov, flags) : NULL,
		 ret == 1 ? (int)vec[0].msg_hdr.msg_iovlen : 0);
	errno = err;
	return ret;
}

/* FORTIFY entry points: glibc routes them to internal calls that the hooks
 * above never see. The real __*_chk does the buffer check. (glibc declares
 * them only inside its own headers' fortify wrappers: hooks.h does.) */
EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(__read_chk)(fd, buf, n, buflen);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(fd, c, t_in, obs_real.__read_chk(fd, buf, n, buflen), n,
			false, &v, 1);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(__recv_chk)(fd, buf, n, buflen, flags);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(fd, c, t_in,
			obs_real.__recv_chk(fd, buf, n, buflen, flags), n,
			flags & MSG_PEEK, written(&v, flags), 1);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
			      int flags, struct sockaddr *addr, socklen_t *alen)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(__recvfrom_chk)(fd, buf, n, buflen, flags, addr,
					    alen);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(
		fd, c, t_in,
		obs_real.__recvfrom_chk(fd, buf, n, buflen, flags, addr, alen),
		n, flags & MSG_PEEK, written(&v, flags), 1);
}
