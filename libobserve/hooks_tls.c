/* hooks_tls.c - the plaintext of dynamically linked TLS libraries: OpenSSL's
 * SSL_write, SSL_write_ex, SSL_read, SSL_read_ex, SSL_peek, SSL_peek_ex,
 * SSL_shutdown, SSL_free, and GnuTLS's gnutls_record_send,
 * gnutls_record_recv, gnutls_bye, gnutls_deinit.
 *
 * A session is mapped to its connection at each call by its fd (SSL_get_fd,
 * gnutls_transport_get_int) and the fd table, so a session whose fd was
 * closed maps to whatever the table says now. A session whose library
 * reads and writes through a BIO of the program's own (curl's connection
 * filters) has no fd: the first socket call its library makes inside one
 * of its calls, on this thread, shows its connection (obs_tls_bind), kept
 * in a small map until SSL_free or gnutls_deinit. A session whose records
 * go to the socket outside its calls (a memory BIO, as Node's TLS uses)
 * never binds: its connection stays record-level (docs/layer.md). A
 * program that never calls these functions pays nothing.
 *
 * Around the real call the thread notes which call it is in (obs_tls_cur):
 * the socket calls the library makes inside it on that connection carry
 * its records and keep their own times. After the call, the plaintext it
 * moved (never more than the call returned) goes to the state machine
 * (obs_xm_tls_plain): labels for HTTP/1.x, frames for h2; or, recording
 * events (OBSERVE_CAPTURE=events), to the capture as a call of its own,
 * with its entry and return (obs_ev_plain), the socket calls inside it
 * marked so (hooks_io.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "events.h"
#include "h2.h"
#include "hooks.h"

__thread struct obs_tls_call *obs_tls_cur;

/* ---- the real functions, and the library's helpers ---- */

/* dl_iterate_phdr's walk: the loaded objects named like the library. */
struct lib_scan {
	const char *like; /* "libssl", "libgnutls" */
	const char *names[8];
	int n;
};

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lib_scan *s = data;
	const char *base;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0] || s->n == 8)
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, s->like, strlen(s->like)) == 0)
		s->names[s->n++] = info->dlpi_name;
	return 0;
}

/* The next definition of hook `name` (self: the hook): RTLD_NEXT, else a
 * loaded object named like the library (loaded with RTLD_LOCAL, as
 * Python's _ssl module loads libssl, it is not in the search order that
 * RTLD_NEXT follows). Stored in *slot; NULL when there is none. */
void *obs_tls_resolve(void **slot, const char *name, const void *self,
		      const char *like)
{
	int err = errno;
	void *fn = dlsym(RTLD_NEXT, name);
	struct lib_scan s = { like, { NULL }, 0 };

	if (!fn) {
		dl_iterate_phdr(scan_one, &s); /* dlopen after: no lock held */
		for (int i = 0; i < s.n && !fn; i++) {
			void *h = dlopen(s.names[i], RTLD_LAZY | RTLD_NOLOAD);

			if (!h)
				continue;
			fn = dlsym(h, name);
			if (fn == self)
				fn = NULL;
			dlclose(h); /* NOLOAD took a reference: give it back */
		}
	}
	if (fn)
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	errno = err;
	return fn;
}

#define TLS_REAL(name, like)                                                   \
	((__typeof__(obs_real.name))(LIKELY(__atomic_load_n(&obs_real.name,    \
							    __ATOMIC_ACQUIRE)) \
					     ? (void *)obs_real.name           \
					     : obs_tls_resolve(                \
						       (void **)&obs_real      \
							       .name,          \
						       #name,                  \
						       (const void *)name,     \
						       like)))

/* A library's functions that are no hooks: the session's fd and ALPN,
 * looked up in the object that defines the real hook (dladdr). */
struct tls_lib {
	int state; /* 0 untried, 1 bound (the functions may still be NULL) */
	void *fd_of;
	void *alpn_of;
};

static struct tls_lib openssl, gnutls;

static void lib_bind_slow(struct tls_lib *l, const void *real,
			  const char *fd_name, const char *alpn_name)
{
	Dl_info info;
	int err = errno;
	void *h;

	if (real && dladdr(real, &info) && info.dli_fname &&
	    (h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
		__atomic_store_n(&l->fd_of, dlsym(h, fd_name),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&l->alpn_of, dlsym(h, alpn_name),
				 __ATOMIC_RELAXED);
		dlclose(h);
	}
	__atomic_store_n(&l->state, 1, __ATOMIC_RELEASE);
	errno = err;
}

static inline void lib_bind(struct tls_lib *l, const void *real,
			    const char *fd_name, const char *alpn_name)
{
	if (UNLIKELY(!__atomic_load_n(&l->state, __ATOMIC_ACQUIRE)))
		lib_bind_slow(l, real, fd_name, alpn_name);
}

/* enum obs_app_proto of an ALPN protocol name. */
uint8_t obs_tls_app_proto(const unsigned char *p, unsigned int n)
{
	if (!p || n == 0)
		return OBS_AP_NONE;
	if (n == 2 && memcmp(p, "h2", 2) == 0)
		return OBS_AP_H2;
	if (n == 8 &&
	    (memcmp(p, "http/1.1", 8) == 0 || memcmp(p, "http/1.0", 8) == 0))
		return OBS_AP_HTTP1;
	return OBS_AP_OTHER;
}

/* SSL_get_fd walks the session's BIO chain (about 120 instructions): each
 * thread remembers the fds of the last sessions it asked about (4, by the
 * session's address), until any session is freed (ssl_freed counts
 * SSL_free calls). A session given another fd (SSL_set_fd again) keeps the
 * old one until then. */
static uint64_t ssl_freed;
static __thread struct {
	const SSL *ssl;
	int fd;
	uint64_t freed;
} fd_seen[4] __attribute__((tls_model("initial-exec")));

/* The fd of a session (-1: none), from its library. */
static int openssl_fd(const SSL *ssl, const void *real)
{
	uint64_t freed = __atomic_load_n(&ssl_freed, __ATOMIC_ACQUIRE);
	unsigned int i = (unsigned int)((uintptr_t)ssl >> 6) & 3;
	int (*fd_of)(const SSL *);

	if (LIKELY(fd_seen[i].ssl == ssl && fd_seen[i].freed == freed && ssl))
		return fd_seen[i].fd;
	lib_bind(&openssl, real, "SSL_get_fd", "SSL_get0_alpn_selected");
	fd_of = __atomic_load_n(&openssl.fd_of, __ATOMIC_RELAXED);
	if (!fd_of || !ssl)
		return -1;
	fd_seen[i].fd = fd_of(ssl);
	fd_seen[i].ssl = ssl;
	fd_seen[i].freed = freed;
	return fd_seen[i].fd;
}

static uint8_t openssl_alpn(const void *session)
{
	void (*alpn_of)(const SSL *, const unsigned char **, unsigned int *) =
		__atomic_load_n(&openssl.alpn_of, __ATOMIC_RELAXED);
	const unsigned char *p = NULL;
	unsigned int n = 0;

	if (alpn_of)
		alpn_of(session, &p, &n);
	return obs_tls_app_proto(p, n);
}

static int gnutls_fd(gnutls_session_t s, const void *real)
{
	int (*fd_of)(gnutls_session_t);

	lib_bind(&gnutls, real, "gnutls_transport_get_int",
		 "gnutls_alpn_get_selected_protocol");
	fd_of = __atomic_load_n(&gnutls.fd_of, __ATOMIC_RELAXED);
	return fd_of && s ? fd_of(s) : -1;
}

static uint8_t gnutls_alpn(const void *session)
{
	int (*alpn_of)(gnutls_session_t, gnutls_datum_t *) =
		__atomic_load_n(&gnutls.alpn_of, __ATOMIC_RELAXED);
	gnutls_datum_t d = { NULL, 0 };

	if (!alpn_of || alpn_of((gnutls_session_t)session, &d) != 0)
		return OBS_AP_NONE;
	return obs_tls_app_proto(d.data, d.size);
}

/* ---- sessions with no fd: the map ---- */

/* A session bound to its connection by a socket call (seq tells a
 * connection from a later one in the same pooled memory). */
struct session_slot {
	const void *session; /* NULL: free */
	struct obs_conn *c;
	uint64_t seq;
};

#define SESSION_SLOTS 4096 /* power of 2; when full, sessions go unbound */

static struct session_slot *sessions; /* mapped on first use */
static int sessions_lock;	      /* taken inside the layer only */

static struct session_slot *session_slot(const void *session, bool add)
{
	uintptr_t k = (uintptr_t)session;
	unsigned int i =
		(unsigned int)((k >> 4) ^ (k >> 16)) & (SESSION_SLOTS - 1);

	for (unsigned int n = 0; n < SESSION_SLOTS; n++) {
		struct session_slot *s =
			&sessions[(i + n) & (SESSION_SLOTS - 1)];

		if (s->session == session || (add && !s->session))
			return s;
		if (!s->session)
			return NULL;
	}
	return NULL;
}

static void sessions_take(void)
{
	while (__atomic_exchange_n(&sessions_lock, 1, __ATOMIC_ACQUIRE))
		obs_cpu_relax();
}

static void sessions_give(void)
{
	__atomic_store_n(&sessions_lock, 0, __ATOMIC_RELEASE);
}

/* The connection a session without an fd was bound to, or NULL. Inside
 * the layer. */
static struct obs_conn *session_conn(const void *session)
{
	struct session_slot *s;
	struct obs_conn *c = NULL;

	if (!session || !__atomic_load_n(&sessions, __ATOMIC_ACQUIRE))
		return NULL;
	sessions_take();
	s = session_slot(session, false);
	if (s && s->c->crec && s->c->crec->conn_seq == s->seq &&
	    s->c->phase != OBS_PH_CLOSED)
		c = s->c;
	sessions_give();
	return c;
}

/* Bind session to c (put), or forget it (c NULL). Inside the layer. */
static void session_put(const void *session, struct obs_conn *c)
{
	struct session_slot *s;

	if (!session)
		return;
	if (!__atomic_load_n(&sessions, __ATOMIC_ACQUIRE)) {
		void *m;

		if (!c)
			return;
		m = mmap(NULL, SESSION_SLOTS * sizeof(*sessions),
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return;
		sessions_take();
		if (!sessions) {
			__atomic_store_n(&sessions, m, __ATOMIC_RELEASE);
			m = NULL;
		}
		sessions_give();
		if (m) /* another thread's came first */
			munmap(m, SESSION_SLOTS * sizeof(*sessions));
	}
	sessions_take();
	s = session_slot(session, c != NULL);
	if (s && c) {
		s->session = session;
		s->c = c;
		s->seq = c->crec ? c->crec->conn_seq : 0;
	} else if (s) {
		/* a free slot in the middle of a run ends lookups: move the
		 * run's tail up (backward shift deletion) */
		struct session_slot *hole = s;
		unsigned int i = (unsigned int)(s - sessions);

		for (unsigned int n = 1; n < SESSION_SLOTS; n++) {
			struct session_slot *t =
				&sessions[(i + n) & (SESSION_SLOTS - 1)];
			uintptr_t k = (uintptr_t)t->session;
			unsigned int home, dist_t, dist_h;

			if (!t->session)
				break;
			home = (unsigned int)((k >> 4) ^ (k >> 16)) &
			       (SESSION_SLOTS - 1);
			dist_t = ((unsigned int)(t - sessions) - home) &
				 (SESSION_SLOTS - 1);
			dist_h = ((unsigned int)(hole - sessions) - home) &
				 (SESSION_SLOTS - 1);
			if (dist_h <= dist_t) {
				*hole = *t;
				hole = t;
			}
		}
		hole->session = NULL;
	}
	sessions_give();
}

/* ---- around a call ---- */

/* The session's protocol, asked of its library at its connection's first
 * plaintext call and again after the first call that moved plaintext (the
 * handshake is then over): h2 (by ALPN, or a write that begins with the
 * client preface) makes the connection's streams its exchanges from here
 * on. after: called after the real call. Inside the layer, outside the
 * connection's lock. */
static void tls_protocol(struct obs_tls_call *tc, bool after)
{
	struct obs_conn *c = tc->c;
	struct obs_xh2 *h = NULL;
	uint8_t alpn;

	if (__atomic_load_n(&c->h2mode, __ATOMIC_RELAXED) != OBS_H2M_NONE)
		return;
	if (!tc->preface &&
	    (after ? __atomic_load_n(&c->tls_alpn_asked, __ATOMIC_RELAXED)
		   : __atomic_load_n(&c->tls_plain, __ATOMIC_RELAXED)))
		return;
	alpn = tc->alpn(tc->session);
	if (after)
		__atomic_store_n(&c->tls_alpn_asked, true, __ATOMIC_RELAXED);
	if (alpn == OBS_AP_H2 || tc->preface)
		h = obs_xh2_alloc();
	if (!obs_xm_tls_session(c, alpn, h) && h)
		obs_xh2_release(h);
}

uint8_t obs_tls_bind(struct obs_tls_call *tc, struct obs_conn *c)
{
	if (tc->c)
		return OBS_TLSIN_NONE; /* a socket call of another connection */
	tc->c = c;
	session_put(tc->session, c);
	if (tc->in == OBS_TLSIN_WRITE && !obs_proc.events)
		tls_protocol(tc, false); /* before this send is counted */
	return tc->in;
}

/* Before the real call on a session whose fd is fd (-1: none known): note
 * the call. False when it is not looked at: an fd the layer does not
 * track, or a signal handler that interrupted the layer. Keeps errno. */
bool obs_tls_enter(struct obs_tls_call *tc, int fd, uint8_t in)
{
	struct obs_conn *c = NULL;
	int err;

	if (fd >= 0 && !(c = conn_of(fd)))
		return false;
	if (obs_reentered())
		return false;
	if (fd < 0) { /* bound by an earlier call, or by a socket call */
		err = errno;
		obs_enter_again();
		c = session_conn(tc->session);
		obs_leave();
		errno = err;
	}
	tc->c = c;
	tc->in = in;
	tc->preface = false;
	/* (events keep the call's own times; of the records, only h2 over
	 * TLS may need them) */
	tc->t_in =
		obs_proc.events || !c ||
				__atomic_load_n(&c->h2mode, __ATOMIC_RELAXED) ==
					OBS_H2M_TLS
			? obs_now()
			: 0;
	tc->prev = obs_tls_cur;
	obs_tls_cur = tc;
	return true;
}

/* Before a plaintext write of n bytes at buf: the session's protocol, so
 * that a connection turns h2 before the socket sends inside the call are
 * counted. Keeps errno. */
void obs_tls_write_begin(struct obs_tls_call *tc, const void *buf, size_t n)
{
	int err = errno;

	if (obs_proc.events)
		return; /* the capture reads the plaintext itself */
	tc->preface = n >= 14 && buf && *(const char *)buf == 'P' &&
		      obs_h2_preface(buf, n);
	if (!tc->c)
		return; /* obs_tls_bind does it */
	obs_enter_again();
	tls_protocol(tc, false);
	obs_leave();
	errno = err;
}

/* After the real call, which moved n bytes of plaintext (0: none; tx:
 * written; peek: to be read again) in the first bytes of iov[0..iovcnt)
 * (never more than the call returned is read). Keeps errno. */
void obs_tls_done_iov(struct obs_tls_call *tc, bool tx, bool peek,
		      const struct iovec *iov, int iovcnt, size_t n)
{
	int err = errno;
	int64_t t_out;

	obs_tls_cur = tc->prev;
	if (n == 0 || !tc->c)
		return;
	obs_enter_again();
	if (obs_proc.events) {
		struct obs_call call = {
			.dir = tx ? OBS_TX : OBS_RX,
			.t_in = tc->t_in,
			.t_out = obs_now(),
			.result = (long)n,
			.peek = peek,
			.iov = iov,
			.iovcnt = iovcnt,
		};

		if (!obs_cap_plain_chosen(&tc->c->cap)) {
			uint8_t alpn = tc->alpn(tc->session);

			call.alpn = alpn == OBS_AP_H2	   ? OBS_APP_H2
				    : alpn == OBS_AP_HTTP1 ? OBS_APP_H1
							   : OBS_APP_UNKNOWN;
		}
		obs_ev_plain(tc->c, &call);
		obs_leave();
		errno = err;
		return;
	}
	tls_protocol(tc, true);
	t_out = tc->t_in || __atomic_load_n(&tc->c->h2mode, __ATOMIC_RELAXED) ==
					OBS_H2M_TLS
			? obs_now()
			: 0;
	if (iovcnt == 1) {
		obs_xm_tls_plain(tc->c, tx, peek, tc->t_in ? tc->t_in : t_out,
				 t_out, iov[0].iov_base, n);
	} else {
		/* the state machine reads a request's head from the first
		 * plaintext of its exchange: the head of a gathered write
		 * (PR_Writev) goes as one piece, the rest as it lies */
		uint8_t head[1024];
		size_t h = 0, off = 0;
		int i = 0;

		for (; i < iovcnt && h < n && h < sizeof(head); off = 0, i++) {
			size_t k = iov[i].iov_len;

			if (k > n - h)
				k = n - h;
			if (k > sizeof(head) - h)
				k = off = sizeof(head) - h;
			if (k)
				memcpy(head + h, iov[i].iov_base, k);
			h += k;
			if (off)
				break; /* the rest of buffer i after the head */
		}
		if (h)
			obs_xm_tls_plain(tc->c, tx, peek,
					 tc->t_in ? tc->t_in : t_out, t_out,
					 head, h);
		n -= h;
		for (; i < iovcnt && n > 0; off = 0, i++) {
			size_t k = iov[i].iov_len - off;

			if (k > n)
				k = n;
			if (k)
				obs_xm_tls_plain(
					tc->c, tx, peek,
					tc->t_in ? tc->t_in : t_out, t_out,
					(const uint8_t *)iov[i].iov_base + off,
					k);
			n -= k;
		}
	}
	obs_leave();
	errno = err;
}

void obs_tls_done(struct obs_tls_call *tc, bool tx, bool peek, const void *p,
		  size_t n)
{
	struct iovec iov = { (void *)p, n };

	obs_tls_done_iov(tc, tx, peek, &iov, 1, n);
}

/* After a call that moves no plaintext (shutdown). Keeps errno. */
void obs_tls_leave(struct obs_tls_call *tc)
{
	obs_tls_cur = tc->prev;
}

/* ---- OpenSSL ---- */

#define OPENSSL(ssl)                                                           \
	{                                                                      \
		.alpn = openssl_alpn, .session = ssl                           \
	}

/* SSL_write and SSL_write_ex: fn's result, *done bytes written. */
static int openssl_write(SSL *ssl, const void *buf, size_t num, void *fn,
			 bool ex, size_t *done)
{
	struct obs_tls_call tc = OPENSSL(ssl);
	bool look = obs_tls_enter(&tc, openssl_fd(ssl, fn), OBS_TLSIN_WRITE);
	int ret;

	if (look)
		obs_tls_write_begin(&tc, buf, num);
	if (ex) {
		ret = ((int (*)(SSL *, const void *, size_t, size_t *))fn)(
			ssl, buf, num, done);
	} else {
		ret = ((int (*)(SSL *, const void *, int))fn)(ssl, buf,
							      (int)num);
		*done = ret > 0 ? (size_t)ret : 0;
	}
	if (look)
		obs_tls_done(&tc, true, false, buf, ret > 0 ? *done : 0);
	return ret;
}

EXPORT int SSL_write(SSL *ssl, const void *buf, int num)
{
	void *fn = (void *)TLS_REAL(SSL_write, "libssl");
	size_t done;

	if (!fn)
		return -1;
	return openssl_write(ssl, buf, num > 0 ? (size_t)num : 0, fn, false,
			     &done);
}

EXPORT int SSL_write_ex(SSL *ssl, const void *buf, size_t num, size_t *written)
{
	void *fn = (void *)TLS_REAL(SSL_write_ex, "libssl");
	size_t done = 0;
	int ret;

	if (!fn)
		return 0;
	ret = openssl_write(ssl, buf, num, fn, true, written ? written : &done);
	return ret;
}

/* SSL_read, SSL_peek and their _ex forms: fn's result, *got bytes read. */
static int openssl_read(SSL *ssl, void *buf, size_t num, void *fn, bool ex,
			bool peek, size_t *got)
{
	struct obs_tls_call tc = OPENSSL(ssl);
	bool look = obs_tls_enter(&tc, openssl_fd(ssl, fn), OBS_TLSIN_READ);
	int ret;

	if (ex) {
		ret = ((int (*)(SSL *, void *, size_t, size_t *))fn)(ssl, buf,
								     num, got);
	} else {
		ret = ((int (*)(SSL *, void *, int))fn)(ssl, buf, (int)num);
		*got = ret > 0 ? (size_t)ret : 0;
	}
	if (look)
		obs_tls_done(&tc, false, peek, buf, ret > 0 ? *got : 0);
	return ret;
}

EXPORT int SSL_read(SSL *ssl, void *buf, int num)
{
	void *fn = (void *)TLS_REAL(SSL_read, "libssl");
	size_t got;

	if (!fn)
		return -1;
	return openssl_read(ssl, buf, num > 0 ? (size_t)num : 0, fn, false,
			    false, &got);
}

EXPORT int SSL_peek(SSL *ssl, void *buf, int num)
{
	void *fn = (void *)TLS_REAL(SSL_peek, "libssl");
	size_t got;

	if (!fn)
		return -1;
	return openssl_read(ssl, buf, num > 0 ? (size_t)num : 0, fn, false,
			    true, &got);
}

EXPORT int SSL_read_ex(SSL *ssl, void *buf, size_t num, size_t *readbytes)
{
	void *fn = (void *)TLS_REAL(SSL_read_ex, "libssl");
	size_t got = 0;

	if (!fn)
		return 0;
	return openssl_read(ssl, buf, num, fn, true, false,
			    readbytes ? readbytes : &got);
}

EXPORT int SSL_peek_ex(SSL *ssl, void *buf, size_t num, size_t *readbytes)
{
	void *fn = (void *)TLS_REAL(SSL_peek_ex, "libssl");
	size_t got = 0;

	if (!fn)
		return 0;
	return openssl_read(ssl, buf, num, fn, true, true,
			    readbytes ? readbytes : &got);
}

/* SSL_shutdown and gnutls_bye: the socket calls inside carry alerts, no
 * request and no answer. */
EXPORT int SSL_shutdown(SSL *ssl)
{
	int (*fn)(SSL *) = TLS_REAL(SSL_shutdown, "libssl");
	struct obs_tls_call tc = OPENSSL(ssl);
	bool look;
	int ret;

	if (!fn)
		return -1;
	look = obs_tls_enter(&tc, openssl_fd(ssl, (void *)fn),
			     OBS_TLSIN_SHUTDOWN);
	ret = fn(ssl);
	if (look)
		obs_tls_leave(&tc);
	return ret;
}

/* The session ends: a session bound by a socket call is forgotten, and the
 * next session on its connection (if any) is asked its protocol anew. */
static void session_over(const void *session, int fd)
{
	struct obs_conn *c = fd >= 0 ? conn_of(fd) : NULL;
	int err = errno;

	if ((fd >= 0 && !c) || !obs_enter())
		return;
	if (fd < 0) {
		c = session_conn(session);
		session_put(session, NULL);
	}
	if (c)
		__atomic_store_n(&c->tls_plain, false, __ATOMIC_RELAXED);
	obs_leave();
	errno = err;
}

EXPORT void SSL_free(SSL *ssl)
{
	void (*fn)(SSL *) = TLS_REAL(SSL_free, "libssl");

	if (!fn)
		return;
	session_over(ssl, openssl_fd(ssl, (void *)fn));
	__atomic_fetch_add(&ssl_freed, 1, __ATOMIC_RELEASE); /* forget fds */
	fn(ssl);
}

/* ---- GnuTLS ---- */

#define GNUTLS(s)                                                              \
	{                                                                      \
		.alpn = gnutls_alpn, .session = s                              \
	}

EXPORT ssize_t gnutls_record_send(gnutls_session_t session, const void *data,
				  size_t size)
{
	ssize_t (*fn)(gnutls_session_t, const void *, size_t) =
		TLS_REAL(gnutls_record_send, "libgnutls");
	struct obs_tls_call tc = GNUTLS(session);
	bool look;
	ssize_t ret;

	if (!fn)
		return GNUTLS_E_INTERNAL_ERROR;
	look = obs_tls_enter(&tc, gnutls_fd(session, (void *)fn),
			     OBS_TLSIN_WRITE);
	if (look)
		obs_tls_write_begin(&tc, data, size);
	ret = fn(session, data, size);
	if (look)
		obs_tls_done(&tc, true, false, data, ret > 0 ? (size_t)ret : 0);
	return ret;
}

EXPORT ssize_t gnutls_record_recv(gnutls_session_t session, void *data,
				  size_t size)
{
	ssize_t (*fn)(gnutls_session_t, void *, size_t) =
		TLS_REAL(gnutls_record_recv, "libgnutls");
	struct obs_tls_call tc = GNUTLS(session);
	bool look;
	ssize_t ret;

	if (!fn)
		return GNUTLS_E_INTERNAL_ERROR;
	look = obs_tls_enter(&tc, gnutls_fd(session, (void *)fn),
			     OBS_TLSIN_READ);
	ret = fn(session, data, size);
	if (look)
		obs_tls_done(&tc, false, false, data,
			     ret > 0 ? (size_t)ret : 0);
	return ret;
}

EXPORT int gnutls_bye(gnutls_session_t session, gnutls_close_request_t how)
{
	int (*fn)(gnutls_session_t, gnutls_close_request_t) =
		TLS_REAL(gnutls_bye, "libgnutls");
	struct obs_tls_call tc = GNUTLS(session);
	bool look;
	int ret;

	if (!fn)
		return GNUTLS_E_INTERNAL_ERROR;
	look = obs_tls_enter(&tc, gnutls_fd(session, (void *)fn),
			     OBS_TLSIN_SHUTDOWN);
	ret = fn(session, how);
	if (look)
		obs_tls_leave(&tc);
	return ret;
}

EXPORT void gnutls_deinit(gnutls_session_t session)
{
	void (*fn)(gnutls_session_t) = TLS_REAL(gnutls_deinit, "libgnutls");

	if (!fn)
		return;
	session_over(session, gnutls_fd(session, (void *)fn));
	fn(session);
}
