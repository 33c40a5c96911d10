/* hooks.h - what the files of the layer share: the real functions, the fd
 * table, and the calls one file makes into another.
 *
 * Each hook looks its fd up in one array; an fd the layer does not track
 * (anything but a connected AF_INET/AF_INET6 stream socket) goes straight to
 * the real function. For a tracked fd the hook reads the monotonic clock
 * around the real call and hands the outcome to the exchange state machine.
 * errno is kept exactly as the real call left it.
 */
#ifndef OBSERVE_HOOKS_H
#define OBSERVE_HOOKS_H

#include <stdint.h>
#include <sys/socket.h>

#include "exchange.h"
#include "fdtable.h"
#include "layer.h"
#include "real.h"

/* A hook: the only kind of symbol the library exports. */
#define EXPORT __attribute__((visibility("default")))

/* Every hook (hooks.def), declared as exported. */
#define HOOK(name, ret, params) EXPORT ret name params;
#include "hooks.def"
#undef HOOK

/* init.c: note this process's pid and start time (at start, in a child). */
OBS_HIDDEN void obs_set_start(void);

/* process.c: register the fork handlers (once, at start). */
OBS_HIDDEN void obs_fork_install(void);

/* resolve.c: at a tracked connect, the newest lookup that gave the peer's
 * address (peer: 4 or 16 bytes by family) names the connection. No call
 * while the process made no lookup (a client given an address). */
OBS_HIDDEN extern uint32_t obs_dns_lookups;
/* resolve.c: in a forked child: the lookups it inherited keep their names
 * but give their times to none of its connections. */
OBS_HIDDEN void obs_dns_forked(void);
OBS_HIDDEN void dns_match_slow(struct obs_conn *c, int family,
			       const uint8_t *peer, int64_t t1);
static inline void dns_match(struct obs_conn *c, int family,
			     const uint8_t *peer, int64_t t1)
{
	if (__atomic_load_n(&obs_dns_lookups, __ATOMIC_RELAXED))
		dns_match_slow(c, family, peer, t1);
}

/* hooks_tls.c: the hooked TLS call this thread is in (NULL: none), for
 * the socket hooks: the calls they make on the session's connection carry
 * its records (obs_data.tls_in); the first such call binds a session whose
 * connection is not known by its fd (obs_tls_bind). */
struct obs_tls_call {
	struct obs_conn *c; /* the session's connection, NULL: not known yet */
	uint8_t in;	    /* enum obs_tls_in */
	bool preface;	    /* a write that begins with the HTTP/2 preface */
	struct obs_tls_call *prev;
	int64_t t_in;
	uint8_t (*alpn)(const void *session);
	const void *session;
};
OBS_HIDDEN extern __thread struct obs_tls_call *obs_tls_cur
	__attribute__((tls_model("initial-exec")));
OBS_HIDDEN uint8_t obs_tls_bind(struct obs_tls_call *tc, struct obs_conn *c);
/* hooks_tls.c, for each TLS library's hooks (hooks_nss.c too):
 * - obs_tls_resolve: the next definition of hook `name` (self: the hook),
 *   by RTLD_NEXT, else in a loaded object whose file name begins with
 *   `like`; stored in *slot; NULL when there is none. Keeps errno.
 * - obs_tls_app_proto: enum obs_app_proto of an ALPN protocol name.
 * - around a library's read or write function: obs_tls_enter before the
 *   real call, on a session whose socket is fd (-1: not known), with `in`
 *   (enum obs_tls_in) and tc's alpn and session set; false when the call
 *   is not looked at (an fd the layer does not track, or a signal handler
 *   inside the layer). When true, after the call: obs_tls_done with the
 *   plaintext it moved (p, n: n bytes, never more than the call returned;
 *   0 when it failed), or obs_tls_done_iov with the first n bytes of an
 *   iovec array, or obs_tls_leave after a call that moves no plaintext
 *   (a shutdown). A write calls obs_tls_write_begin(tc, buf, len) before
 *   the real call. All keep errno. */
OBS_HIDDEN void *obs_tls_resolve(void **slot, const char *name,
				 const void *self, const char *like);
OBS_HIDDEN uint8_t obs_tls_app_proto(const unsigned char *p, unsigned int n);
OBS_HIDDEN bool obs_tls_enter(struct obs_tls_call *tc, int fd, uint8_t in);
OBS_HIDDEN void obs_tls_write_begin(struct obs_tls_call *tc, const void *buf,
				    size_t n);
OBS_HIDDEN void obs_tls_done(struct obs_tls_call *tc, bool tx, bool peek,
			     const void *p, size_t n);
OBS_HIDDEN void obs_tls_done_iov(struct obs_tls_call *tc, bool tx, bool peek,
				 const struct iovec *iov, int iovcnt, size_t n);
OBS_HIDDEN void obs_tls_leave(struct obs_tls_call *tc);
/* What the TLS call this thread is in says of a socket call on c (enum
 * obs_tls_in); inside the layer (obs_enter). */
static inline uint8_t tls_in_of(struct obs_conn *c)
{
	struct obs_tls_call *tc = obs_tls_cur;

	if (LIKELY(!tc))
		return OBS_TLSIN_NONE;
	if (UNLIKELY(tc->c != c))
		return obs_tls_bind(tc, c);
	return tc->in;
}

/* h2pool.c: memory for HTTP/2 attached to c (obs_xh2_wanted said so);
 * outside c's lock, inside the layer. */
OBS_HIDDEN void obs_h2_attach_new(struct obs_conn *c);

/* hooks_fd.c: fcntl's F_DUPFD and F_DUPFD_CLOEXEC (hooks_fcntl.c): the
 * real call fn made, then the new fd refers to what fd did. */
OBS_HIDDEN int obs_fcntl_dup(int (*fn)(int, int, ...), int fd, int cmd,
			     void *arg);
/* hooks_fd.c: an AF_INET/AF_INET6 address's bytes (zero-padded to 16) and
 * port. */
OBS_HIDDEN void peer_of(const struct sockaddr *sa, uint8_t addr[16],
			uint16_t *port);

/* hooks_fd.c: a send with MSG_FASTOPEN and an address on an fd the layer
 * does not track (TCP Fast Open: the connect is in the send). Begin: true
 * when the layer may track it (T1 taken; nothing of the call's address or
 * buffers read); then end with the real call's result, its flags and what
 * it was given (msg: its address and buffers, read only when the kernel
 * read them): records the connect and the bytes sent, keeps errno,
 * returns ret. */
struct obs_fastopen {
	int64_t t_in;
};
struct msghdr;
OBS_HIDDEN bool fastopen_begin(int fd, struct obs_fastopen *f);
OBS_HIDDEN ssize_t fastopen_end(int fd, struct obs_fastopen *f, ssize_t ret,
				int flags, const struct msghdr *msg);

#endif
