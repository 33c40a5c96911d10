/* hooks_nss.c - the plaintext of NSS (libssl3: Firefox, Thunderbird, any
 * program of NSS), through the method table of the SSL layer in its NSPR
 * I/O stack.
 *
 * NSS reads and writes plaintext through the methods of the SSL layer that
 * SSL_ImportFD pushes on an NSPR socket (PRFileDesc). A program calls
 * PR_Write, PR_Read, PR_Send, PR_Recv on the top of its stack; layers
 * above the SSL layer (Firefox's PSM layer) call the next layer's methods
 * through its method table (fd->lower->methods->write), never through an
 * exported symbol, so hooks on NSPR's exported functions would miss them.
 * The one exported function every such stack goes through is SSL_ImportFD.
 * Its hook gives the SSL layer it made a method table of our own: NSS's,
 * with read, write, recv, send, writev, shutdown and close wrapped. Each
 * wrapper calls NSS's method on the same descriptor and hands the
 * plaintext to the TLS hooks' common path (hooks_tls.c: obs_tls_enter,
 * obs_tls_done), which binds it to the connection of the socket at the
 * bottom of the stack (PR_FileDesc2NativeHandle). Shutdown and close mark
 * the socket calls inside them (the close_notify alert) as a TLS
 * library's. The session's protocol is asked of NSS (SSL_GetNextProto).
 *
 * Why not a layer of our own pushed above the SSL layer (NSPR's documented
 * way): Firefox's PSM layer must sit right above the SSL layer. Its
 * handshake callbacks, given the SSL layer's descriptor, take their socket
 * object from fd->higher->secret; with a layer between, Firefox crashes
 * at its first handshake. The method table changes nothing of the stack's
 * shape: the SSL layer keeps its place, identity and private data, and
 * NSS finds its socket by identity, never by method table. The table
 * travels with the layer's contents when NSPR swaps descriptors at a push
 * or pop on the top. One table per NSS library loaded (its methods are
 * one static table), kept for the process's life: no memory per
 * connection, nothing from the host's malloc.
 *
 * NSS and NSPR are never linked: SSL_ImportFD is found as the other TLS
 * hooks find theirs (obs_tls_resolve), and NSPR's and NSS's other
 * functions in the object that defines it and its dependencies (dladdr).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>

#include "hooks.h"

/* ---- NSPR's and NSS's functions, bound once ---- */

static struct {
	PRFileDesc *(*layer_of)(PRFileDesc *, PRDescIdentity);
	const char *(*name_of)(PRDescIdentity);
	PRInt32 (*native)(PRFileDesc *); /* PROsfd: PRInt32 on Unix */
	SECStatus (*next_proto)(PRFileDesc *, SSLNextProtoState *,
				unsigned char *, unsigned int *, unsigned int);
	bool ok; /* all found: SSL layers are wrapped */
} nspr;

static pthread_once_t nspr_once = PTHREAD_ONCE_INIT;
static const void *nspr_real; /* the real SSL_ImportFD, for nspr_bind */

/* Bind NSPR's and NSS's functions in the object that defines the real
 * SSL_ImportFD and its dependencies (once, outside the layer: the loader
 * may call hooks). */
static void nspr_bind(void)
{
	Dl_info info;
	void *h;

	if (!dladdr(nspr_real, &info) || !info.dli_fname ||
	    !(h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
		return;
	*(void **)&nspr.layer_of = dlsym(h, "PR_GetIdentitiesLayer");
	*(void **)&nspr.name_of = dlsym(h, "PR_GetNameForIdentity");
	*(void **)&nspr.native = dlsym(h, "PR_FileDesc2NativeHandle");
	*(void **)&nspr.next_proto = dlsym(h, "SSL_GetNextProto");
	dlclose(h); /* NOLOAD took a reference: give it back */
	if (nspr.layer_of && nspr.name_of && nspr.native && nspr.next_proto)
		__atomic_store_n(&nspr.ok, true, __ATOMIC_RELEASE);
}

/* ---- the tables ---- */

/* NSS's method table with ours in its place (m first: a wrapper finds its
 * table from the descriptor's methods pointer). */
struct nss_table {
	PRIOMethods m;
	const PRIOMethods *orig; /* NSS's own */
};

#define NSS_TABLES 4 /* NSS libraries loaded at once; more go unwrapped */

static struct nss_table tables[NSS_TABLES]; /* under the layer's mutex */
static unsigned int ntables;

static const PRIOMethods *orig_of(const PRFileDesc *fd)
{
	return ((const struct nss_table *)(const void *)fd->methods)->orig;
}

/* The socket at the bottom of fd's stack, or -1 (sets no NSPR error:
 * PR_FileDesc2NativeHandle is asked only of a stack that has one). */
static int osfd_of(PRFileDesc *fd)
{
	return nspr.layer_of(fd, PR_NSPR_IO_LAYER) ? (int)nspr.native(fd) : -1;
}

/* The session's ALPN protocol (enum obs_app_proto); session: a descriptor
 * of its stack. */
static uint8_t nss_alpn(const void *session)
{
	SSLNextProtoState state;
	unsigned char buf[32];
	unsigned int n = 0;

	if (nspr.next_proto((PRFileDesc *)session, &state, buf, &n,
			    sizeof(buf)) != SECSuccess ||
	    n > sizeof(buf))
		return OBS_AP_NONE;
	return obs_tls_app_proto(buf, n);
}

#define NSS_CALL(fd)                                                           \
	{                                                                      \
		.alpn = nss_alpn, .session = (fd)                              \
	}

/* ---- the wrappers: NSS's method on the same descriptor ---- */

/* read (send false: recv with flags and timeout) through NSS's method. */
static PRInt32 nss_rx(PRFileDesc *fd, void *buf, PRInt32 amount, bool recv,
		      PRIntn flags, PRIntervalTime timeout)
{
	const PRIOMethods *orig = orig_of(fd);
	struct obs_tls_call tc = NSS_CALL(fd);
	bool look = obs_tls_enter(&tc, osfd_of(fd), OBS_TLSIN_READ);
	PRInt32 ret = recv ? orig->recv(fd, buf, amount, flags, timeout)
			   : orig->read(fd, buf, amount);

	if (look)
		obs_tls_done(&tc, false, recv && (flags & PR_MSG_PEEK) != 0,
			     buf, ret > 0 ? (size_t)ret : 0);
	return ret;
}

/* write (send false), or send with flags and timeout, through NSS's. */
static PRInt32 nss_tx(PRFileDesc *fd, const void *buf, PRInt32 amount,
		      bool send, PRIntn flags, PRIntervalTime timeout)
{
	const PRIOMethods *orig = orig_of(fd);
	struct obs_tls_call tc = NSS_CALL(fd);
	bool look = obs_tls_enter(&tc, osfd_of(fd), OBS_TLSIN_WRITE);
	PRInt32 ret;

	if (look)
		obs_tls_write_begin(&tc, buf, amount > 0 ? (size_t)amount : 0);
	ret = send ? orig->send(fd, buf, amount, flags, timeout)
		   : orig->write(fd, buf, amount);
	if (look)
		obs_tls_done(&tc, true, false, buf, ret > 0 ? (size_t)ret : 0);
	return ret;
}

static PRInt32 PR_CALLBACK nss_read(PRFileDesc *fd, void *buf, PRInt32 amount)
{
	return nss_rx(fd, buf, amount, false, 0, 0);
}

static PRInt32 PR_CALLBACK nss_recv(PRFileDesc *fd, void *buf, PRInt32 amount,
				    PRIntn flags, PRIntervalTime timeout)
{
	return nss_rx(fd, buf, amount, true, flags, timeout);
}

static PRInt32 PR_CALLBACK nss_write(PRFileDesc *fd, const void *buf,
				     PRInt32 amount)
{
	return nss_tx(fd, buf, amount, false, 0, 0);
}

static PRInt32 PR_CALLBACK nss_send(PRFileDesc *fd, const void *buf,
				    PRInt32 amount, PRIntn flags,
				    PRIntervalTime timeout)
{
	return nss_tx(fd, buf, amount, true, flags, timeout);
}

static PRInt32 PR_CALLBACK nss_writev(PRFileDesc *fd, const PRIOVec *iov,
				      PRInt32 iov_size, PRIntervalTime timeout)
{
	PRWritevFN fn = orig_of(fd)->writev;
	struct obs_tls_call tc = NSS_CALL(fd);
	struct iovec v[PR_MAX_IOVECTOR_SIZE];
	bool look = false;
	PRInt32 ret;

	/* (more buffers than NSPR allows: NSS refuses the call) */
	if (iov && iov_size > 0 && iov_size <= PR_MAX_IOVECTOR_SIZE)
		look = obs_tls_enter(&tc, osfd_of(fd), OBS_TLSIN_WRITE);
	if (look) {
		for (PRInt32 i = 0; i < iov_size; i++) {
			v[i].iov_base = iov[i].iov_base;
			v[i].iov_len =
				iov[i].iov_len > 0 ? (size_t)iov[i].iov_len : 0;
		}
		obs_tls_write_begin(&tc, v[0].iov_base, v[0].iov_len);
	}
	ret = fn(fd, iov, iov_size, timeout);
	if (look)
		obs_tls_done_iov(&tc, true, false, v, (int)iov_size,
				 ret > 0 ? (size_t)ret : 0);
	return ret;
}

/* A shutdown that sends may send NSS's close_notify: the socket calls
 * inside carry an alert, no request. */
static PRStatus PR_CALLBACK nss_shutdown(PRFileDesc *fd, PRIntn how)
{
	PRShutdownFN fn = orig_of(fd)->shutdown;
	struct obs_tls_call tc = NSS_CALL(fd);
	bool look = obs_tls_enter(&tc, osfd_of(fd), OBS_TLSIN_SHUTDOWN);
	PRStatus ret = fn(fd, how);

	if (look)
		obs_tls_leave(&tc);
	return ret;
}

/* Close: the same (NSS sends its close_notify, then the layers below close
 * and the SSL layer's descriptor is freed: not touched after). */
static PRStatus PR_CALLBACK nss_close(PRFileDesc *fd)
{
	PRCloseFN fn = orig_of(fd)->close;
	struct obs_tls_call tc = NSS_CALL(fd);
	bool look = obs_tls_enter(&tc, osfd_of(fd), OBS_TLSIN_SHUTDOWN);
	PRStatus ret = fn(fd);

	if (look)
		obs_tls_leave(&tc);
	return ret;
}

/* Our table for NSS's table orig, made on first sight; NULL when there are
 * too many. Inside the layer; takes the layer's mutex. */
static const PRIOMethods *table_for(const PRIOMethods *orig)
{
	const PRIOMethods *m = NULL;

	obs_mutex_lock();
	for (unsigned int i = 0; i < ntables && !m; i++)
		if (tables[i].orig == orig || &tables[i].m == orig)
			m = &tables[i].m;
	if (!m && ntables < NSS_TABLES) {
		struct nss_table *t = &tables[ntables++];

		t->orig = orig;
		t->m = *orig;
		t->m.read = nss_read;
		t->m.write = nss_write;
		t->m.recv = nss_recv;
		t->m.send = nss_send;
		t->m.writev = nss_writev;
		t->m.shutdown = nss_shutdown;
		t->m.close = nss_close;
		m = &t->m;
	}
	obs_mutex_unlock();
	return m;
}

/* ---- the hook ---- */

/* Give the SSL layer on top of stack (SSL_ImportFD's result), whose real
 * SSL_ImportFD is real, our table. Keeps errno; sets no NSPR error. A
 * stack whose top is not NSS's SSL layer, or has no socket at its bottom,
 * is left alone. */
static void nss_wrap(PRFileDesc *stack, const void *real)
{
	int err = errno;
	PRFileDesc *ssl;
	const char *name;
	const PRIOMethods *m;

	if (!obs_fd_table_size || obs_reentered())
		return;
	if (UNLIKELY(!__atomic_load_n(&nspr.ok, __ATOMIC_ACQUIRE))) {
		nspr_real = real;
		pthread_once(&nspr_once, nspr_bind);
		if (!__atomic_load_n(&nspr.ok, __ATOMIC_ACQUIRE)) {
			errno = err;
			return;
		}
	}
	ssl = nspr.layer_of(stack, PR_TOP_IO_LAYER);
	if (!ssl || !ssl->methods || !(name = nspr.name_of(ssl->identity)) ||
	    strcmp(name, "SSL") != 0 || osfd_of(ssl) < 0) {
		errno = err;
		return;
	}
	obs_enter_again();
	m = table_for(ssl->methods);
	obs_leave();
	if (m)
		ssl->methods = m;
	else
		OBS_LOG(OBS_LOG_INFO,
			"more than %d NSS libraries: this one's "
			"connections are record-level",
			NSS_TABLES);
	errno = err;
}

EXPORT PRFileDesc *SSL_ImportFD(PRFileDesc *model, PRFileDesc *fd)
{
	PRFileDesc *(*fn)(PRFileDesc *, PRFileDesc *) =
		__atomic_load_n(&obs_real.SSL_ImportFD, __ATOMIC_ACQUIRE);
	PRFileDesc *ret;

	if (UNLIKELY(!fn))
		fn = (PRFileDesc * (*)(PRFileDesc *, PRFileDesc *))
			obs_tls_resolve((void **)&obs_real.SSL_ImportFD,
					"SSL_ImportFD",
					(const void *)SSL_ImportFD, "libssl3");
	if (!fn)
		return NULL;
	ret = fn(model, fd);
	if (ret)
		nss_wrap(ret, (const void *)fn);
	return ret;
}
