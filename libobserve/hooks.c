/* hooks.c - the exported hooks of libobserve.so and the per-fd table.
 *
 * Each hook looks its fd up in one array; an fd the layer does not track
 * (anything but a connected AF_INET/AF_INET6 stream socket) goes straight to
 * the real function. For a tracked fd the hook reads the monotonic clock
 * around the real call and hands the outcome to the exchange state machine.
 * errno is kept exactly as the real call left it.
 *
 * Hazards written down:
 * - Another library's constructor may call a hook before ours ran: every
 *   real function pointer is resolved on first use (obs_resolve).
 * - dlsym() may call malloc(), and a malloc may call read(): while resolving,
 *   recursion falls back to the raw system call.
 * - A child of fork() must not write into its parent's spool (the mapping is
 *   shared): it forgets the parent's spool and connections and gets its own.
 * - vfork() children share our memory; glibc's posix_spawn uses internal
 *   calls that do not reach these hooks.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* struct tcp_info as the kernel has it */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "exchange.h"
#include "layer.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#define OBS_MAX_FDS (1u << 20)
#define OBS_POOL_CHUNK 256

/* ---- real functions ------------------------------------------------- */

static struct {
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*close)(int);
	int (*shutdown)(int, int);
	int (*socket)(int, int, int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*close_range)(unsigned int, unsigned int, int);
	void (*closefrom)(int);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *,
			    socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned int, int,
			struct timespec *);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int,
				struct sockaddr *, socklen_t *);
	void (*exit_)(int);
	void (*Exit_)(int);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*getaddrinfo)(const char *, const char *, const struct addrinfo *,
			   struct addrinfo **);
	struct hostent *(*gethostbyname)(const char *);
	struct hostent *(*gethostbyname2)(const char *, int);
	int (*gethostbyname_r)(const char *, struct hostent *, char *, size_t,
			       struct hostent **, int *);
	int (*gethostbyname2_r)(const char *, int, struct hostent *, char *,
				size_t, struct hostent **, int *);
} real;

/* Recursion guard while this thread runs dlsym. Per thread: two threads may
 * resolve at once (dlsym gives both the same answers). */
static __thread int resolving __attribute__((tls_model("initial-exec")));

static void *obs_dlsym(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn)
		OBS_LOG(OBS_LOG_DEBUG, "no next definition of %s", name);
	return fn;
}

#define RESOLVE(field, name)                                                   \
	__atomic_store_n((void **)&real.field, obs_dlsym(name),                \
			 __ATOMIC_RELEASE)

/* Resolve every real function (idempotent). */
static void obs_resolve(void)
{
	if (resolving)
		return;
	resolving = 1;
	RESOLVE(connect, "connect");
	RESOLVE(close, "close");
	RESOLVE(shutdown, "shutdown");
	RESOLVE(socket, "socket");
	RESOLVE(dup, "dup");
	RESOLVE(dup2, "dup2");
	RESOLVE(dup3, "dup3");
	RESOLVE(fcntl, "fcntl");
	RESOLVE(fcntl64, "fcntl64");
	RESOLVE(close_range, "close_range");
	RESOLVE(closefrom, "closefrom");
	RESOLVE(getaddrinfo, "getaddrinfo");
	RESOLVE(gethostbyname, "gethostbyname");
	RESOLVE(gethostbyname2, "gethostbyname2");
	RESOLVE(gethostbyname_r, "gethostbyname_r");
	RESOLVE(gethostbyname2_r, "gethostbyname2_r");
	RESOLVE(getsockopt, "getsockopt");
	RESOLVE(write, "write");
	RESOLVE(writev, "writev");
	RESOLVE(send, "send");
	RESOLVE(sendto, "sendto");
	RESOLVE(sendmsg, "sendmsg");
	RESOLVE(sendmmsg, "sendmmsg");
	RESOLVE(read, "read");
	RESOLVE(readv, "readv");
	RESOLVE(recv, "recv");
	RESOLVE(recvfrom, "recvfrom");
	RESOLVE(recvmsg, "recvmsg");
	RESOLVE(recvmmsg, "recvmmsg");
	RESOLVE(read_chk, "__read_chk");
	RESOLVE(recv_chk, "__recv_chk");
	RESOLVE(recvfrom_chk, "__recvfrom_chk");
	RESOLVE(exit_, "_exit");
	RESOLVE(Exit_, "_Exit");
	RESOLVE(execve, "execve");
	RESOLVE(execv, "execv");
	RESOLVE(execvp, "execvp");
	RESOLVE(execvpe, "execvpe");
	if (!real.fcntl64)
		real.fcntl64 = real.fcntl;
	resolving = 0;
}

/* The real function `field`, resolving on first use. NULL only while dlsym
 * itself is running (then the caller falls back to a raw system call). */
#define REAL(field)                                                            \
	(LIKELY(__atomic_load_n(&real.field, __ATOMIC_ACQUIRE) != NULL)        \
		 ? real.field                                                  \
		 : (obs_resolve(), real.field))

/* ---- the fd table and the connection pool ---------------------------- */

static struct obs_conn **fd_table; /* NULL until the layer is initialised */
static unsigned int fd_table_size; /* 0 while disabled */
static int fd_high;		   /* highest fd ever tracked */
static uint64_t conn_seq;	   /* connections opened in this process */
static struct obs_conn *pool_free;

static inline struct obs_conn *conn_of(int fd)
{
	if ((unsigned int)fd >=
	    __atomic_load_n(&fd_table_size, __ATOMIC_RELAXED))
		return NULL;
	return __atomic_load_n(&fd_table[fd], __ATOMIC_ACQUIRE);
}

/* Take fd's entry out of the table (the fd is being closed or replaced). */
static inline struct obs_conn *conn_detach(int fd)
{
	if ((unsigned int)fd >= fd_table_size)
		return NULL;
	return __atomic_exchange_n(&fd_table[fd], NULL, __ATOMIC_ACQ_REL);
}

static void conn_attach(int fd, struct obs_conn *c)
{
	int high = __atomic_load_n(&fd_high, __ATOMIC_RELAXED);

	__atomic_store_n(&fd_table[fd], c, __ATOMIC_RELEASE);
	while (fd > high &&
	       !__atomic_compare_exchange_n(&fd_high, &high, fd, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A zeroed connection from the pool (memory from mmap, never freed: a
 * racing thread that still holds a pointer reads stale but valid memory). */
static struct obs_conn *conn_new(void)
{
	struct obs_conn *c;

	obs_mutex_lock();
	if (!pool_free) {
		void *chunk = mmap(NULL, OBS_POOL_CHUNK * sizeof(*c),
				   PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (chunk != MAP_FAILED) {
			struct obs_conn *arr = chunk;
			for (int i = 0; i < OBS_POOL_CHUNK; i++) {
				arr[i].next_free = pool_free;
				pool_free = &arr[i];
			}
		}
	}
	c = pool_free;
	if (c) {
		pool_free = c->next_free;
		memset(c, 0, sizeof(*c));
	}
	obs_mutex_unlock();
	return c;
}

static void conn_free(struct obs_conn *c)
{
	obs_mutex_lock();
	c->next_free = pool_free;
	pool_free = c;
	obs_mutex_unlock();
}

static void conn_ref(struct obs_conn *c)
{
	obs_conn_lock(c);
	c->refs++;
	obs_conn_unlock(c);
}

/* Drop one fd's reference; the last one closes the connection at t7. */
static void conn_unref(struct obs_conn *c, int64_t t7)
{
	int left;

	obs_conn_lock(c);
	left = --c->refs;
	obs_conn_unlock(c);
	if (left > 0)
		return;
	obs_xm_close(c, t7);
	conn_free(c);
}

/* An fd number came back from the kernel (socket, dup): whatever the table
 * still holds for it is stale (closed behind our back, e.g. by fclose). */
static void fd_fresh(int fd)
{
	struct obs_conn *stale = conn_detach(fd);

	if (stale) {
		OBS_LOG(OBS_LOG_DEBUG, "fd %d reused: dropping stale state",
			fd);
		conn_unref(stale, 0);
	}
}

/* ---- initialisation, fork, exit -------------------------------------- */

static void obs_after_fork_child(void);
static void obs_before_fork(void);
static void obs_after_fork_parent(void);

static void obs_set_start(void)
{
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	obs_proc.start_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	obs_proc.pid = (int32_t)getpid();
}

static void obs_pick_dir(void)
{
	const char *dir = getenv("OBSERVE_DIR");
	const char *base;
	int n = -1;

	if (dir && *dir)
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir), "%s", dir);
	else if ((base = getenv("XDG_STATE_HOME")) && *base == '/')
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir),
			     "%s/observe/spool", base);
	else if ((base = getenv("HOME")) && *base == '/')
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir),
			     "%s/.local/state/observe/spool", base);
	else
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir),
			     "/tmp/observe-%u/spool", (unsigned)getuid());
	if (n < 0 || (size_t)n >= sizeof(obs_proc.dir))
		obs_proc.disabled = true;
}

/* The command line, kept for the spool header (glibc passes argc, argv and
 * envp to constructors). */
static void obs_keep_argv(int argc, char **argv)
{
	size_t used = 0;

	for (int i = 0; argv && i < argc && argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;
		if (used + n > sizeof(obs_proc.argv))
			n = sizeof(obs_proc.argv) - used;
		memcpy(obs_proc.argv + used, argv[i], n);
		used += n;
		if (used == sizeof(obs_proc.argv)) {
			obs_proc.argv[used - 1] = '\0';
			break;
		}
	}
	obs_proc.argv_len = (uint32_t)used;
}

__attribute__((constructor)) static void obs_init(int argc, char **argv,
						  char **envp)
{
	static int done;
	const char *v;
	struct utsname uts;
	struct rlimit rl;
	size_t size;
	void *table;

	(void)envp;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	obs_resolve();
	obs_keep_argv(argc, argv);
	v = getenv("OBSERVE_LOG");
	if (v && *v)
		obs_proc.log_level =
			(*v >= '0' && *v <= '9') ? atoi(v) : OBS_LOG_INFO;
	obs_set_start();
	v = getenv("OBSERVE_DISABLE");
	if (v && *v && strcmp(v, "0") != 0) {
		obs_proc.disabled = true;
		return;
	}
	if (uname(&uts) == 0) {
		size_t n = strnlen(uts.nodename, sizeof(obs_proc.host) - 1);
		memcpy(obs_proc.host, uts.nodename, n);
		obs_proc.host[n] = '\0';
	}
	v = getenv("OBSERVE_CLIENT");
	snprintf(obs_proc.client, sizeof(obs_proc.client), "%s",
		 v && *v ? v : obs_proc.host);
	obs_pick_dir();
	if (obs_proc.disabled)
		return;

	size = OBS_MAX_FDS;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_max != RLIM_INFINITY && rl.rlim_max < size)
		size = rl.rlim_max < 1024 ? 1024 : rl.rlim_max;
	table = mmap(NULL, size * sizeof(*fd_table), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (table == MAP_FAILED) {
		OBS_LOG(OBS_LOG_WARN, "no memory for the fd table: disabled");
		obs_proc.disabled = true;
		return;
	}
	fd_table = table;
	__atomic_store_n(&fd_table_size, (unsigned int)size, __ATOMIC_RELEASE);
	pthread_atfork(obs_before_fork, obs_after_fork_parent,
		       obs_after_fork_child);
	OBS_LOG(OBS_LOG_INFO, "observing; spool directory %s", obs_proc.dir);
}

__attribute__((destructor)) static void obs_fini(void)
{
	obs_spool_mark_ended(true);
}

/* Fork: hold the mutex across fork so the child never inherits it held. */
static void obs_before_fork(void)
{
	obs_mutex_lock();
}

static void obs_after_fork_parent(void)
{
	obs_mutex_unlock();
}

/* The child forgets the parent's spool and connections: the spool mapping
 * is shared with the parent, and the parent goes on recording its own
 * connections. The child's own connections go to its own spool. */
static void obs_after_fork_child(void)
{
	obs_mutex_reinit();
	if (fd_table) {
		int high = fd_high;
		for (int fd = 0; fd <= high; fd++)
			fd_table[fd] = NULL;
	}
	fd_high = 0;
	conn_seq = 0;
	pool_free = NULL; /* the parent's pool pages stay, unused */
	obs_spool_forget();
	obs_set_start();
}

/* ---- connect, close and friends --------------------------------------- */

/* Whether fd is a stream socket (one getsockopt, only at connect). */
static bool is_stream_socket(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return REAL(getsockopt)(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_STREAM;
}

static void peer_of(const struct sockaddr *sa, uint8_t addr[16], uint16_t *port)
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

static void note_local_addr(struct obs_conn *c, int fd)
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

/* ---- name lookups ---------------------------------------------------- */

/* The addresses the latest lookups gave, newest first found: a connect to
 * one of them takes the lookup's name, and its times if it is the first
 * connect to use that lookup (HAR's dns). Under the layer's mutex; never
 * held across a real call. */
#define OBS_DNS_SLOTS 64
static struct obs_dns_slot {
	uint8_t addr[16];
	uint16_t family;
	bool used;	 /* a connect took the times already */
	uint32_t lookup; /* number of the lookup, to mark its addresses used */
	int64_t t_start, t_end;
	char name[40];
} dns_slots[OBS_DNS_SLOTS];
static unsigned int dns_next;
static uint32_t dns_lookups;

/* The addresses of one lookup, gathered before the lock is taken. */
#define OBS_DNS_PER_LOOKUP 8
struct obs_dns_answer {
	int n;
	uint16_t family[OBS_DNS_PER_LOOKUP];
	uint8_t addr[OBS_DNS_PER_LOOKUP][16];
};

static void dns_answer_add(struct obs_dns_answer *ans, int family,
			   const void *addr)
{
	if (ans->n >= OBS_DNS_PER_LOOKUP ||
	    (family != AF_INET && family != AF_INET6))
		return;
	memset(ans->addr[ans->n], 0, 16);
	memcpy(ans->addr[ans->n], addr, family == AF_INET6 ? 16 : 4);
	ans->family[ans->n++] = (uint16_t)family;
}

static void dns_remember(const char *node, const struct obs_dns_answer *ans,
			 int64_t t_start, int64_t t_end)
{
	size_t n = strnlen(node, sizeof(dns_slots[0].name));
	uint32_t lookup;

	if (!ans->n)
		return;
	obs_mutex_lock();
	lookup = ++dns_lookups;
	for (int i = 0; i < ans->n; i++) {
		struct obs_dns_slot *s = &dns_slots[dns_next++ % OBS_DNS_SLOTS];

		memset(s, 0, sizeof(*s));
		memcpy(s->addr, ans->addr[i], 16);
		s->family = ans->family[i];
		s->lookup = lookup;
		s->t_start = t_start;
		s->t_end = t_end;
		memcpy(s->name, node, n);
	}
	obs_mutex_unlock();
}

static void dns_remember_addrinfo(const char *node, const struct addrinfo *res,
				  int64_t t_start, int64_t t_end)
{
	struct obs_dns_answer ans = { 0 };

	for (const struct addrinfo *a = res; a; a = a->ai_next) {
		uint8_t addr[16];
		uint16_t port;

		if (!a->ai_addr ||
		    (a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
		    (a->ai_socktype != 0 && a->ai_socktype != SOCK_STREAM))
			continue;
		peer_of(a->ai_addr, addr, &port);
		dns_answer_add(&ans, a->ai_family, addr);
	}
	dns_remember(node, &ans, t_start, t_end);
}

static void dns_remember_hostent(const char *node, const struct hostent *h,
				 int64_t t_start, int64_t t_end)
{
	struct obs_dns_answer ans = { 0 };

	if (!h || !h->h_addr_list ||
	    h->h_length != (h->h_addrtype == AF_INET6 ? 16 : 4))
		return;
	for (char **a = h->h_addr_list; *a; a++)
		dns_answer_add(&ans, h->h_addrtype, *a);
	dns_remember(node, &ans, t_start, t_end);
}

/* At a tracked connect: the newest lookup that gave this address. */
static void dns_match(struct obs_conn *c, int family, const uint8_t *peer,
		      int64_t t1)
{
	size_t alen = family == AF_INET6 ? 16 : 4;
	struct obs_dns_slot found;
	bool hit = false;

	if (!__atomic_load_n(&dns_lookups, __ATOMIC_RELAXED))
		return;
	obs_mutex_lock();
	for (unsigned int k = 1; k <= OBS_DNS_SLOTS && !hit; k++) {
		struct obs_dns_slot *s =
			&dns_slots[(dns_next - k) % OBS_DNS_SLOTS];
		if (s->lookup && s->family == family && s->t_end <= t1 &&
		    memcmp(s->addr, peer, alen) == 0) {
			found = *s;
			hit = true;
			if (!s->used) /* the lookup's times go to one connect */
				for (int i = 0; i < OBS_DNS_SLOTS; i++)
					if (dns_slots[i].lookup == s->lookup)
						dns_slots[i].used = true;
		}
	}
	obs_mutex_unlock();
	if (hit)
		obs_xm_dns(c, found.name, found.used ? 0 : found.t_start,
			   found.t_end);
}

/* Is node a name worth timing (not a number, the layer running)? */
static bool dns_is_lookup(const char *node)
{
	unsigned char probe[16];

	return fd_table_size && node && inet_pton(AF_INET, node, probe) != 1 &&
	       inet_pton(AF_INET6, node, probe) != 1;
}

EXPORT int getaddrinfo(const char *node, const char *service,
		       const struct addrinfo *hints, struct addrinfo **res)
{
	int64_t t_start;
	int ret, saved;

	if (UNLIKELY(!real.getaddrinfo)) {
		obs_resolve();
		if (!real.getaddrinfo)
			return EAI_SYSTEM;
	}
	if (!dns_is_lookup(node))
		return real.getaddrinfo(node, service, hints, res);
	t_start = obs_now();
	ret = real.getaddrinfo(node, service, hints, res);
	saved = errno;
	if (ret == 0 && res && *res)
		dns_remember_addrinfo(node, *res, t_start, obs_now());
	errno = saved;
	return ret;
}

/* The older resolver calls, for programs that still use them (python's
 * gethostbyname_ex, perl, old C clients). The non-reentrant ones return
 * glibc's static hostent, read here before the caller can see it. */
EXPORT struct hostent *gethostbyname(const char *name)
{
	struct hostent *h;
	int64_t t_start;
	int saved;

	if (UNLIKELY(!real.gethostbyname)) {
		obs_resolve();
		if (!real.gethostbyname)
			return NULL;
	}
	if (!dns_is_lookup(name))
		return real.gethostbyname(name);
	t_start = obs_now();
	h = real.gethostbyname(name);
	saved = errno;
	if (h)
		dns_remember_hostent(name, h, t_start, obs_now());
	errno = saved;
	return h;
}

EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	struct hostent *h;
	int64_t t_start;
	int saved;

	if (UNLIKELY(!real.gethostbyname2)) {
		obs_resolve();
		if (!real.gethostbyname2)
			return NULL;
	}
	if (!dns_is_lookup(name))
		return real.gethostbyname2(name, af);
	t_start = obs_now();
	h = real.gethostbyname2(name, af);
	saved = errno;
	if (h)
		dns_remember_hostent(name, h, t_start, obs_now());
	errno = saved;
	return h;
}

EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf,
			   size_t buflen, struct hostent **result,
			   int *h_errnop)
{
	int64_t t_start;
	int rc, saved;

	if (UNLIKELY(!real.gethostbyname_r)) {
		obs_resolve();
		if (!real.gethostbyname_r)
			return ENOSYS;
	}
	if (!dns_is_lookup(name))
		return real.gethostbyname_r(name, ret, buf, buflen, result,
					    h_errnop);
	t_start = obs_now();
	rc = real.gethostbyname_r(name, ret, buf, buflen, result, h_errnop);
	saved = errno;
	if (rc == 0 && result && *result)
		dns_remember_hostent(name, *result, t_start, obs_now());
	errno = saved;
	return rc;
}

EXPORT int gethostbyname2_r(const char *name, int af, struct hostent *ret,
			    char *buf, size_t buflen, struct hostent **result,
			    int *h_errnop)
{
	int64_t t_start;
	int rc, saved;

	if (UNLIKELY(!real.gethostbyname2_r)) {
		obs_resolve();
		if (!real.gethostbyname2_r)
			return ENOSYS;
	}
	if (!dns_is_lookup(name))
		return real.gethostbyname2_r(name, af, ret, buf, buflen, result,
					     h_errnop);
	t_start = obs_now();
	rc = real.gethostbyname2_r(name, af, ret, buf, buflen, result,
				   h_errnop);
	saved = errno;
	if (rc == 0 && result && *result)
		dns_remember_hostent(name, *result, t_start, obs_now());
	errno = saved;
	return rc;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int saved = errno, ret, err;
	struct obs_conn *c = conn_of(fd);
	int64_t t_in, t_out;
	uint8_t peer[16];
	uint16_t port = 0;

	if (c) {
		if (c->phase == OBS_PH_CONNECTING || c->phase == OBS_PH_UP) {
			t_in = obs_now();
			ret = REAL(connect)(fd, addr, len);
			err = errno;
			obs_xm_connect_again(c, t_in, obs_now(), ret, err);
			errno = err;
			return ret;
		}
		/* Connecting again after a failure: a new connection. */
		c = conn_detach(fd);
		if (c)
			conn_unref(c, 0);
	}
	if (UNLIKELY(!real.connect)) {
		obs_resolve();
		if (!real.connect) /* inside dlsym: the system call itself */
			return (int)syscall(SYS_connect, fd, addr, len);
	}
	if (!fd_table_size || !addr || len < sizeof(sa_family_t) ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) ||
	    (addr->sa_family == AF_INET && len < sizeof(struct sockaddr_in)) ||
	    (addr->sa_family == AF_INET6 &&
	     len < sizeof(struct sockaddr_in6)) ||
	    (unsigned int)fd >= fd_table_size || !is_stream_socket(fd) ||
	    obs_spool_ensure() != 0 || !(c = conn_new())) {
		errno = saved;
		return real.connect(fd, addr, len);
	}
	peer_of(addr, peer, &port);
	errno = saved;
	t_in = obs_now();
	ret = real.connect(fd, addr, len);
	err = errno;
	t_out = obs_now();
	obs_xm_connect_first(
		c, __atomic_add_fetch(&conn_seq, 1, __ATOMIC_RELAXED), fd,
		addr->sa_family, peer, port, t_in, t_out, ret, err);
	note_local_addr(c, fd);
	dns_match(c, addr->sa_family, peer, t_in);
	conn_attach(fd, c);
	OBS_LOG(OBS_LOG_DEBUG, "connect fd %d port %u: %d (%s)", fd, port, ret,
		ret == 0 ? "ok" : strerror(err));
	errno = ret == 0 ? saved : err;
	return ret;
}

/* TCP_INFO of a connection about to be closed for good: one getsockopt,
 * at close only (errno kept by the caller). */
static void note_tcp_info(struct obs_conn *c, int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	struct obs_tcp_info out;

	memset(&ti, 0, sizeof(ti));
	if (REAL(getsockopt)(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_total_retrans) +
			    sizeof(ti.tcpi_total_retrans))
		return;
	out.rtt_us = ti.tcpi_rtt;
	out.rttvar_us = ti.tcpi_rttvar;
	out.retrans = ti.tcpi_total_retrans;
	out.snd_cwnd = ti.tcpi_snd_cwnd;
	out.pmtu = ti.tcpi_pmtu;
	/* newer fields: zero when the kernel's struct is shorter */
	out.min_rtt_us = len >= offsetof(struct tcp_info, tcpi_min_rtt) +
						 sizeof(ti.tcpi_min_rtt)
				 ? ti.tcpi_min_rtt
				 : 0;
	out.delivery_rate =
		len >= offsetof(struct tcp_info, tcpi_delivery_rate) +
					sizeof(ti.tcpi_delivery_rate)
			? ti.tcpi_delivery_rate
			: 0;
	obs_xm_tcp_info(c, &out);
}

static __attribute__((noinline)) int close_slow(int fd)
{
	struct obs_conn *c = conn_of(fd);
	int ret, err;

	if (LIKELY(!c)) {
		if (UNLIKELY(!REAL(close)))
			return obs_sys_close(fd);
		return real.close(fd);
	}
	c = conn_detach(fd); /* before the fd number can be reused */
	if (c && __atomic_load_n(&c->refs, __ATOMIC_RELAXED) == 1 &&
	    c->phase == OBS_PH_UP)
		note_tcp_info(c, fd);
	ret = REAL(close)(fd);
	err = errno;
	if (c)
		conn_unref(c, obs_now());
	errno = err;
	return ret;
}

EXPORT int close(int fd)
{
	int (*fn)(int) = __atomic_load_n(&real.close, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd);
	return close_slow(fd);
}

EXPORT int shutdown(int fd, int how)
{
	struct obs_conn *c = conn_of(fd);
	int ret, err;

	ret = REAL(shutdown)(fd, how);
	if (c && ret == 0) {
		err = errno;
		obs_xm_shutdown(c, obs_now(), how);
		errno = err;
	}
	return ret;
}

EXPORT int socket(int domain, int type, int protocol)
{
	int fd = REAL(socket)(domain, type, protocol);

	if (fd >= 0 && UNLIKELY(conn_of(fd) != NULL)) {
		int err = errno;
		fd_fresh(fd);
		errno = err;
	}
	return fd;
}

/* After a successful dup of oldfd to newfd. replaced: newfd was open
 * before (dup2/dup3), so the kernel closed it just now; otherwise whatever
 * the table holds for newfd is stale. */
static void dup_done(int oldfd, int newfd, bool replaced)
{
	int err = errno;
	struct obs_conn *c;

	if (conn_of(newfd)) {
		if (replaced) {
			c = conn_detach(newfd);
			if (c)
				conn_unref(c, obs_now());
		} else {
			fd_fresh(newfd);
		}
	}
	c = conn_of(oldfd);
	if (c) {
		conn_ref(c);
		conn_attach(newfd, c);
	}
	errno = err;
}

EXPORT int dup(int oldfd)
{
	int fd = REAL(dup)(oldfd);

	if (fd >= 0 && fd_table_size)
		dup_done(oldfd, fd, false);
	return fd;
}

/* dup2/dup3 onto a tracked newfd closes its connection (for this fd). */
static int dup_onto(int oldfd, int newfd, int ret)
{
	if (ret >= 0 && fd_table_size && oldfd != newfd)
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

static int fcntl_common(int (*fn)(int, int, ...), int fd, int cmd, void *arg)
{
	int ret = fn(fd, cmd, arg);

	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && ret >= 0 &&
	    fd_table_size)
		dup_done(fd, ret, false);
	return ret;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(REAL(fcntl), fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(REAL(fcntl64), fd, cmd, arg);
}

/* Detach every tracked fd in [first, last]; the connections whose last
 * reference this was are chained on next_free for closing afterwards. */
static struct obs_conn *detach_range(unsigned int first, unsigned int last)
{
	struct obs_conn *to_close = NULL;
	unsigned int high =
		(unsigned int)__atomic_load_n(&fd_high, __ATOMIC_RELAXED);

	if (!fd_table_size)
		return NULL;
	if (last > high)
		last = high;
	for (unsigned int fd = first; fd <= last && fd < fd_table_size; fd++) {
		struct obs_conn *c = conn_detach((int)fd);
		int left;

		if (!c)
			continue;
		obs_conn_lock(c);
		left = --c->refs;
		obs_conn_unlock(c);
		if (left == 0) {
			c->next_free = to_close;
			to_close = c;
		}
	}
	return to_close;
}

static void close_detached(struct obs_conn *c)
{
	int64_t t = c ? obs_now() : 0;

	while (c) {
		struct obs_conn *next = c->next_free;
		obs_xm_close(c, t);
		conn_free(c);
		c = next;
	}
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	struct obs_conn *closing = NULL;
	int ret, err;

	if (!REAL(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		closing = detach_range(first, last);
	ret = real.close_range(first, last, flags);
	err = errno;
	close_detached(closing);
	errno = err;
	return ret;
}

EXPORT void closefrom(int lowfd)
{
	struct obs_conn *closing;
	int err = errno;

	closing =
		lowfd >= 0 ? detach_range((unsigned int)lowfd, UINT_MAX) : NULL;
	if (REAL(closefrom))
		real.closefrom(lowfd);
	close_detached(closing);
	errno = err;
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct obs_conn *c = conn_of(fd);
	int ret = REAL(getsockopt)(fd, level, name, val, len);

	if (UNLIKELY(c != NULL) && ret == 0 && level == SOL_SOCKET &&
	    name == SO_ERROR && val && len && *len >= sizeof(int)) {
		int err = errno;
		obs_xm_so_error(c, obs_now(), *(int *)val);
		errno = err;
	}
	return ret;
}

/* ---- the send family --------------------------------------------------- */

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
};

static inline struct send_ctx send_begin(struct obs_conn *c)
{
	struct send_ctx sx = { 0, false };

	if (obs_xm_send_needs_entry(c)) {
		sx.t_in = obs_now();
		sx.counted = obs_xm_send_begin(c, sx.t_in);
	}
	return sx;
}

/* iov/iovcnt: the buffers of the call, for the state machine's look at
 * the bytes that were moved (protocol fields, TLS records). */
static inline ssize_t send_end(struct obs_conn *c, struct send_ctx sx,
			       ssize_t ret, const struct iovec *iov, int iovcnt)
{
	int err = errno;
	struct obs_data d = { iov, iovcnt, ret > 0 ? (size_t)ret : 0 };

	if (ret < 0 && !sx.counted && sx.t_in == 0 && is_again(err))
		return ret; /* mid-exchange EAGAIN: nothing to record */
	obs_xm_send_done(c, sx.counted, sx.t_in, obs_now(), ret, err, &d);
	errno = err;
	return ret;
}

static __attribute__((noinline)) ssize_t write_slow(int fd, const void *buf,
						    size_t n)
{
	struct obs_conn *c = conn_of(fd);
	struct send_ctx sx;

	if (LIKELY(!c)) {
		if (UNLIKELY(!REAL(write)))
			return obs_sys_write(fd, buf, n);
		return real.write(fd, buf, n);
	}
	struct iovec v = { (void *)buf, n };

	sx = send_begin(c);
	return send_end(c, sx, real.write(fd, buf, n), &v, 1);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t (*fn)(int, const void *, size_t) =
		__atomic_load_n(&real.write, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, buf, n);
	return write_slow(fd, buf, n);
}

static __attribute__((noinline)) ssize_t
writev_slow(int fd, const struct iovec *iov, int iovcnt)
{
	struct obs_conn *c = conn_of(fd);
	struct send_ctx sx;

	if (LIKELY(!c))
		return REAL(writev)(fd, iov, iovcnt);
	sx = send_begin(c);
	return send_end(c, sx, real.writev(fd, iov, iovcnt), iov, iovcnt);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	ssize_t (*fn)(int, const struct iovec *, int) =
		__atomic_load_n(&real.writev, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, iov, iovcnt);
	return writev_slow(fd, iov, iovcnt);
}

static __attribute__((noinline)) ssize_t send_slow(int fd, const void *buf,
						   size_t n, int flags)
{
	struct obs_conn *c = conn_of(fd);
	struct send_ctx sx;

	if (LIKELY(!c))
		return REAL(send)(fd, buf, n, flags);
	struct iovec v = { (void *)buf, n };

	sx = send_begin(c);
	return send_end(c, sx, real.send(fd, buf, n, flags), &v, 1);
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	ssize_t (*fn)(int, const void *, size_t, int) =
		__atomic_load_n(&real.send, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, buf, n, flags);
	return send_slow(fd, buf, n, flags);
}

static __attribute__((noinline)) ssize_t
sendto_slow(int fd, const void *buf, size_t n, int flags,
	    const struct sockaddr *addr, socklen_t alen)
{
	struct obs_conn *c = conn_of(fd);
	struct send_ctx sx;

	if (LIKELY(!c))
		return REAL(sendto)(fd, buf, n, flags, addr, alen);
	struct iovec v = { (void *)buf, n };

	sx = send_begin(c);
	return send_end(c, sx, real.sendto(fd, buf, n, flags, addr, alen), &v,
			1);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
		      const struct sockaddr *addr, socklen_t alen)
{
	ssize_t (*fn)(int, const void *, size_t, int, const struct sockaddr *,
		      socklen_t) =
		__atomic_load_n(&real.sendto, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, buf, n, flags, addr, alen);
	return sendto_slow(fd, buf, n, flags, addr, alen);
}

static __attribute__((noinline)) ssize_t
sendmsg_slow(int fd, const struct msghdr *msg, int flags)
{
	struct obs_conn *c = conn_of(fd);
	struct send_ctx sx;

	if (LIKELY(!c))
		return REAL(sendmsg)(fd, msg, flags);
	sx = send_begin(c);
	return send_end(c, sx, real.sendmsg(fd, msg, flags),
			msg ? msg->msg_iov : NULL,
			msg ? (int)msg->msg_iovlen : 0);
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t (*fn)(int, const struct msghdr *, int) =
		__atomic_load_n(&real.sendmsg, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, msg, flags);
	return sendmsg_slow(fd, msg, flags);
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
	sx = send_begin(c);
	ret = real.sendmmsg(fd, vec, vlen, flags);
	err = errno;
	/* the bytes are looked at in the first message only */
	send_end(c, sx, ret < 0 ? -1 : mmsg_bytes(vec, ret),
		 ret > 0 ? vec[0].msg_hdr.msg_iov : NULL,
		 ret > 0 ? (int)vec[0].msg_hdr.msg_iovlen : 0);
	errno = err;
	return ret;
}

/* ---- the receive family -------------------------------------------------- */

static inline int64_t recv_begin(struct obs_conn *c)
{
	return obs_xm_recv_needs_entry(c) ? obs_now() : 0;
}

/* wanted: bytes asked for (a 0-byte read returning 0 is not end of stream). */
static inline ssize_t recv_end(struct obs_conn *c, int64_t t_in, ssize_t ret,
			       size_t wanted, bool peek,
			       const struct iovec *iov, int iovcnt)
{
	int err = errno;
	struct obs_data d = { iov, iovcnt, ret > 0 ? (size_t)ret : 0 };

	if (ret < 0 && t_in == 0 && is_again(err))
		return ret; /* mid-response EAGAIN: nothing to record */
	if (ret == 0 && wanted == 0)
		return ret;
	obs_xm_recv(c, t_in, obs_now(), ret, err, peek, &d);
	errno = err;
	return ret;
}

static size_t iov_bytes(const struct iovec *iov, int count)
{
	size_t total = 0;

	for (int i = 0; iov && i < count; i++)
		total += iov[i].iov_len;
	return total;
}

static __attribute__((noinline)) ssize_t read_slow(int fd, void *buf, size_t n)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c)) {
		if (UNLIKELY(!REAL(read)))
			return syscall(SYS_read, fd, buf, n);
		return real.read(fd, buf, n);
	}
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(c, t_in, real.read(fd, buf, n), n, false, &v, 1);
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	ssize_t (*fn)(int, void *, size_t) =
		__atomic_load_n(&real.read, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, buf, n);
	return read_slow(fd, buf, n);
}

static __attribute__((noinline)) ssize_t
readv_slow(int fd, const struct iovec *iov, int iovcnt)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;
	ssize_t ret;

	if (LIKELY(!c))
		return REAL(readv)(fd, iov, iovcnt);
	t_in = recv_begin(c);
	ret = real.readv(fd, iov, iovcnt);
	return recv_end(c, t_in, ret, ret == 0 ? iov_bytes(iov, iovcnt) : 1,
			false, iov, iovcnt);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	ssize_t (*fn)(int, const struct iovec *, int) =
		__atomic_load_n(&real.readv, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, iov, iovcnt);
	return readv_slow(fd, iov, iovcnt);
}

static __attribute__((noinline)) ssize_t recv_slow(int fd, void *buf, size_t n,
						   int flags)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(recv)(fd, buf, n, flags);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(c, t_in, real.recv(fd, buf, n, flags), n,
			flags & MSG_PEEK, &v, 1);
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	ssize_t (*fn)(int, void *, size_t, int) =
		__atomic_load_n(&real.recv, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, buf, n, flags);
	return recv_slow(fd, buf, n, flags);
}

static __attribute__((noinline)) ssize_t recvfrom_slow(int fd, void *buf,
						       size_t n, int flags,
						       struct sockaddr *addr,
						       socklen_t *alen)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(recvfrom)(fd, buf, n, flags, addr, alen);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(c, t_in, real.recvfrom(fd, buf, n, flags, addr, alen),
			n, flags & MSG_PEEK, &v, 1);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
			struct sockaddr *addr, socklen_t *alen)
{
	ssize_t (*fn)(int, void *, size_t, int, struct sockaddr *,
		      socklen_t *) =
		__atomic_load_n(&real.recvfrom, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, buf, n, flags, addr, alen);
	return recvfrom_slow(fd, buf, n, flags, addr, alen);
}

static __attribute__((noinline)) ssize_t
recvmsg_slow(int fd, struct msghdr *msg, int flags)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;
	ssize_t ret;

	if (LIKELY(!c))
		return REAL(recvmsg)(fd, msg, flags);
	t_in = recv_begin(c);
	ret = real.recvmsg(fd, msg, flags);
	return recv_end(c, t_in, ret,
			ret == 0 && msg
				? iov_bytes(msg->msg_iov, (int)msg->msg_iovlen)
				: 1,
			flags & MSG_PEEK, msg ? msg->msg_iov : NULL,
			msg ? (int)msg->msg_iovlen : 0);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t (*fn)(int, struct msghdr *, int) =
		__atomic_load_n(&real.recvmsg, __ATOMIC_RELAXED);

	if (LIKELY(fn != NULL) && LIKELY(conn_of(fd) == NULL))
		return fn(fd, msg, flags);
	return recvmsg_slow(fd, msg, flags);
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
	ret = real.recvmmsg(fd, vec, vlen, flags, timeout);
	err = errno;
	recv_end(c, t_in, ret < 0 ? -1 : mmsg_bytes(vec, ret), vlen,
		 flags & MSG_PEEK, ret > 0 ? vec[0].msg_hdr.msg_iov : NULL,
		 ret > 0 ? (int)vec[0].msg_hdr.msg_iovlen : 0);
	errno = err;
	return ret;
}

/* glibc declares these only inside its own headers' fortify wrappers. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *addr, socklen_t *alen);

/* FORTIFY entry points: glibc routes them to internal calls that the hooks
 * above never see. The real __*_chk does the buffer check. */
EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(read_chk)(fd, buf, n, buflen);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(c, t_in, real.read_chk(fd, buf, n, buflen), n, false,
			&v, 1);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(recv_chk)(fd, buf, n, buflen, flags);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(c, t_in, real.recv_chk(fd, buf, n, buflen, flags), n,
			flags & MSG_PEEK, &v, 1);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
			      int flags, struct sockaddr *addr, socklen_t *alen)
{
	struct obs_conn *c = conn_of(fd);
	int64_t t_in;

	if (LIKELY(!c))
		return REAL(recvfrom_chk)(fd, buf, n, buflen, flags, addr,
					  alen);
	struct iovec v = { buf, n };

	t_in = recv_begin(c);
	return recv_end(
		c, t_in,
		real.recvfrom_chk(fd, buf, n, buflen, flags, addr, alen), n,
		flags & MSG_PEEK, &v, 1);
}

/* ---- leaving the process image ------------------------------------------- */

EXPORT void _exit(int status)
{
	obs_spool_mark_ended(true);
	if (REAL(exit_))
		real.exit_(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	obs_spool_mark_ended(true);
	if (REAL(Exit_))
		real.Exit_(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* exec ends this image's recording; the new image loads the layer anew
 * (same pid, new spool). If exec fails, recording goes on. */
#define EXEC_WRAP(call)                                                        \
	do {                                                                   \
		int ret_, err_;                                                \
		obs_spool_mark_ended(true);                                    \
		ret_ = (call);                                                 \
		err_ = errno;                                                  \
		obs_spool_mark_ended(false);                                   \
		errno = err_;                                                  \
		return ret_;                                                   \
	} while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_WRAP(REAL(execve)(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	EXEC_WRAP(REAL(execv)(path, argv));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	EXEC_WRAP(REAL(execvp)(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_WRAP(REAL(execvpe)(file, argv, envp));
}
