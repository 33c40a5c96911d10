/* fdtable.c - the per-fd table of tracked connections and their pool. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "events.h"
#include "fdtable.h"

#define OBS_MAX_FDS (1u << 20)
#define OBS_POOL_CHUNK 256

struct obs_conn **obs_fd_table;
unsigned int obs_fd_table_size;
static int fd_high;		   /* highest fd ever tracked */
static uint64_t conn_seq;	   /* connections opened in this process */
static struct obs_conn *pool_free; /* under pool_lock */
static int pool_lock;		   /* a spin lock (obs_spin_lock) */

/* Connections closed while their TLS secrets were still awaited: a program
 * that writes its key log after the close (node, whose lines go out from
 * its thread pool) would leave them runs of records. Such a connection is
 * parked: off the table, the park holding its last reference, its end
 * deferred until its secrets come (looked for when another connection
 * begins or ends), for at most PARK_NS, or until the process leaves. Its
 * calls are in the spool already, open as while it awaited; only its end
 * waits, with the time it had. At most PARK_MAX: past that a connection
 * ends as it closes. */
#define PARK_MAX 16
#define PARK_NS 2000000000LL

struct parked {
	struct obs_conn *c; /* NULL: the slot is free */
	int64_t t7;	    /* its close (closed as seen: OBS_END_NONE) */
	bool have_ti;
	struct obs_tcp_info ti;
};
static struct parked parked[PARK_MAX]; /* under park_lock */
static int parked_n;  /* slots in use (read without the lock: a hint) */
static int park_lock; /* a spin lock */

/* Map the table, sized by RLIMIT_NOFILE (at start). 0 when it is usable. */
int fd_table_init(void)
{
	struct rlimit rl;
	size_t size = OBS_MAX_FDS;
	void *table;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_max != RLIM_INFINITY && rl.rlim_max < size)
		size = rl.rlim_max < 1024 ? 1024 : rl.rlim_max;
	table = mmap(NULL, size * sizeof(*obs_fd_table), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (table == MAP_FAILED)
		return -1;
	obs_fd_table = table;
	__atomic_store_n(&obs_fd_table_size, (unsigned int)size,
			 __ATOMIC_RELEASE);
	return 0;
}

/* In a forked child: forget every connection (they are the parent's). */
void fd_table_forget(void)
{
	if (obs_fd_table) {
		int high = fd_high;
		for (int fd = 0; fd <= high; fd++)
			obs_fd_table[fd] = NULL;
	}
	fd_high = 0;
	conn_seq = 0;
	pool_free = NULL; /* the parent's pool pages stay, unused */
	pool_lock = 0;	  /* (a thread of the parent may have held it) */
	memset(parked, 0, sizeof(parked));
	parked_n = 0;
	park_lock = 0;
}

static void conns_unpark(int64_t now, bool all);

/* Whether connections are parked (their secrets are looked for then). */
static inline bool conns_parked(void)
{
	return __builtin_expect(__atomic_load_n(&parked_n, __ATOMIC_RELAXED),
				0);
}

__attribute__((always_inline)) inline void conn_attach(int fd,
						       struct obs_conn *c)
{
	int high = __atomic_load_n(&fd_high, __ATOMIC_RELAXED);

	__atomic_store_n(&obs_fd_table[fd], c, __ATOMIC_RELEASE);
	while (fd > high &&
	       !__atomic_compare_exchange_n(&fd_high, &high, fd, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A zeroed connection from the pool (memory from mmap, never freed: a
 * racing thread that still holds a pointer reads stale but valid memory). */
/* A new chunk of connections, mapped outside any lock: the first is the
 * caller's, the others go to the pool. NULL when memory runs out. */
static struct obs_conn *pool_grow(void)
{
	struct obs_conn *arr = mmap(NULL, OBS_POOL_CHUNK * sizeof(*arr),
				    PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (arr == MAP_FAILED)
		return NULL;
	obs_spin_lock(&pool_lock);
	for (int i = 1; i < OBS_POOL_CHUNK; i++) {
		arr[i].next_free = pool_free;
		pool_free = &arr[i];
	}
	obs_spin_unlock(&pool_lock);
	return &arr[0];
}

/* (inlined into connect, as conn_attach: one frame for the connect) */
__attribute__((always_inline)) inline struct obs_conn *conn_new(void)
{
	struct obs_conn *c;

	if (conns_parked())
		conns_unpark(obs_now(), false);
	obs_spin_lock(&pool_lock);
	c = pool_free;
	if (c)
		pool_free = c->next_free;
	obs_spin_unlock(&pool_lock);
	if (!c)
		c = pool_grow();
	if (c)
		obs_conn_clear(c);
	return c;
}

uint64_t conn_next_seq(void)
{
	return __atomic_add_fetch(&conn_seq, 1, __ATOMIC_RELAXED);
}

static inline void conn_free(struct obs_conn *c)
{
	obs_spin_lock(&pool_lock);
	c->next_free = pool_free;
	pool_free = c;
	obs_spin_unlock(&pool_lock);
}

void conn_ref(struct obs_conn *c)
{
	obs_conn_lock(c);
	c->refs++;
	obs_conn_unlock(c);
}

/* c's last reference goes: it ends at t7 with end_class and ti (NULL:
 * none), in one locked section (obs_xm_unref). */
static inline __attribute__((always_inline)) void
conn_end(struct obs_conn *c, int64_t t7, uint8_t end_class,
	 const struct obs_tcp_info *ti)
{
	if (obs_xm_unref(c, t7, end_class, ti)) {
		if (__builtin_expect(c->cap.dec_back != NULL, 0))
			obs_ev_ended(c);
		conn_free(c);
	}
}

/* c, closed as seen at t7 and still awaiting its TLS secrets, parked if
 * this is its last reference and a slot is free. */
static __attribute__((noinline)) bool conn_park(struct obs_conn *c, int64_t t7,
						uint8_t end_class,
						const struct obs_tcp_info *ti)
{
	bool last;
	int i;

	if (end_class != OBS_END_NONE || !t7 ||
	    !(obs_cap_dec_wanted(&c->cap) & OBS_CAP_DEC_KEYS))
		return false;
	obs_conn_lock(c);
	last = c->refs == 1;
	obs_conn_unlock(c);
	if (!last)
		return false;
	obs_spin_lock(&park_lock);
	for (i = 0; i < PARK_MAX && parked[i].c; i++)
		;
	if (i < PARK_MAX) {
		parked[i] = (struct parked){ .c = c,
					     .t7 = t7,
					     .have_ti = ti != NULL };
		if (ti)
			parked[i].ti = *ti;
		__atomic_store_n(&parked_n, parked_n + 1, __ATOMIC_RELAXED);
	}
	obs_spin_unlock(&park_lock);
	return i < PARK_MAX;
}

/* The parked connections look for their secrets at now: those that have
 * them, have waited PARK_NS, or all (the process leaves) end. Each is
 * taken out of its slot while it looks, so only one thread ends it. */
static void conns_unpark(int64_t now, bool all)
{
	for (int i = 0; i < PARK_MAX; i++) {
		struct parked p;
		bool back = false;

		obs_spin_lock(&park_lock);
		p = parked[i];
		if (p.c) {
			parked[i].c = NULL;
			__atomic_store_n(&parked_n, parked_n - 1,
					 __ATOMIC_RELAXED);
		}
		obs_spin_unlock(&park_lock);
		if (!p.c)
			continue;
		obs_ev_last_look(p.c);
		if (!all && now - p.t7 < PARK_NS &&
		    (obs_cap_dec_wanted(&p.c->cap) & OBS_CAP_DEC_KEYS)) {
			obs_spin_lock(&park_lock);
			back = parked[i].c == NULL;
			if (back) {
				parked[i] = p;
				__atomic_store_n(&parked_n, parked_n + 1,
						 __ATOMIC_RELAXED);
			}
			obs_spin_unlock(&park_lock);
		}
		if (!back)
			conn_end(p.c, p.t7, OBS_END_NONE,
				 p.have_ti ? &p.ti : NULL);
	}
}

/* Drop one fd's reference; the last one ends the connection at t7 with
 * end_class (OBS_END_NONE: closed by the program or the peer, as seen)
 * and ti (NULL: none), or parks it while it awaits its TLS secrets.
 * Inlined into the close, as obs_xm_unref. */
__attribute__((always_inline)) inline void
conn_unref_info(struct obs_conn *c, int64_t t7, uint8_t end_class,
		const struct obs_tcp_info *ti)
{
	if (conns_parked())
		conns_unpark(t7 ? t7 : obs_now(), false);
	if (__builtin_expect(obs_cap_dec_wanted(&c->cap) != 0, 0)) {
		obs_ev_last_look(c); /* late TLS secrets */
		if (conn_park(c, t7, end_class, ti))
			return;
	}
	conn_end(c, t7, end_class, ti);
}

void conn_unref_as(struct obs_conn *c, int64_t t7, uint8_t end_class)
{
	conn_unref_info(c, t7, end_class, NULL);
}

void conn_unref(struct obs_conn *c, int64_t t7)
{
	conn_unref_info(c, t7, OBS_END_NONE, NULL);
}

/* fd no longer refers to c (closed where the layer could not see): if the
 * table still says it does, drop that reference; the last one ends c as
 * lost, without T7. Inside the layer (obs_enter). */
void fd_lost(int fd, struct obs_conn *c)
{
	if ((unsigned int)fd < obs_fd_table_size &&
	    __atomic_compare_exchange_n(&obs_fd_table[fd], &c, NULL, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		OBS_LOG(OBS_LOG_DEBUG,
			"fd %d is no longer the socket it was: connection lost",
			fd);
		conn_unref_as(c, 0, OBS_END_LOST);
	}
}

/* An fd number came back from the kernel (socket, open, accept, dup...):
 * whatever the table still holds for it is stale (closed behind our back).
 * Not in a vfork() child (the table is its parent's), nor from a signal
 * handler inside the layer. */
int fd_fresh(int fd)
{
	struct obs_conn *stale;
	int err = errno;

	if (obs_in_vfork_child() || !obs_enter())
		goto out;
	stale = conn_of(fd);
	if (stale)
		fd_lost(fd, stale);
	obs_leave();
out:
	errno = err;
	return fd;
}

/* The process leaves at t: every connection still open ends with it
 * (undo: an exec that failed takes that back). Inside the layer. */
void conns_exit(int64_t t, bool undo)
{
	int high = __atomic_load_n(&fd_high, __ATOMIC_RELAXED);

	if (!undo && conns_parked())
		conns_unpark(t, true); /* they closed before: their own end */
	for (int fd = 0; fd <= high && obs_fd_table_size; fd++) {
		struct obs_conn *c = conn_of(fd);

		if (!c)
			continue;
		if (undo) {
			obs_xm_exit_undo(c);
			continue;
		}
		if (obs_proc.events)
			obs_ev_last_look(c); /* late TLS secrets */
		obs_xm_exit(c, t);
	}
}

/* Detach every tracked fd in [first, last]; the connections whose last
 * reference this was are chained on next_free for closing afterwards. */
struct obs_conn *detach_range(unsigned int first, unsigned int last)
{
	struct obs_conn *to_close = NULL;
	unsigned int high =
		(unsigned int)__atomic_load_n(&fd_high, __ATOMIC_RELAXED);

	if (!obs_fd_table_size)
		return NULL;
	if (last > high)
		last = high;
	for (unsigned int fd = first; fd <= last && fd < obs_fd_table_size;
	     fd++) {
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

void close_detached(struct obs_conn *c)
{
	int64_t t = c ? obs_now() : 0;

	while (c) {
		struct obs_conn *next = c->next_free;
		obs_xm_close(c, t);
		conn_free(c);
		c = next;
	}
}
