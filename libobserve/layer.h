/* layer.h - state shared by the parts of libobserve.so (hooks, spool.c).
 * Everything here is hidden: the library exports only the hooks. */
#ifndef OBSERVE_LAYER_H
#define OBSERVE_LAYER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "spool_format.h"

#define OBS_HIDDEN __attribute__((visibility("hidden")))

/* Diagnostics levels (OBSERVE_LOG). */
enum { OBS_LOG_OFF = 0, OBS_LOG_WARN = 1, OBS_LOG_INFO = 2, OBS_LOG_DEBUG = 3 };

struct obs_process {
	int log_level;
	bool disabled;
	int32_t pid;
	int64_t start_ns; /* epoch ns of the layer's start in this process */
	char client[64];
	char host[64];
	char dir[512];	 /* spool directory */
	char argv[3600]; /* the command line, NUL-separated, as at start */
	uint32_t argv_len;
	/* OBSERVE_SPOOL_SEGMENT_MB, OBSERVE_SPOOL_LIMIT_MB in MiB (0: the
	 * defaults, see spool.c) */
	uint32_t segment_mb, limit_mb;
	/* OBSERVE_CAPTURE=events: connections' calls are recorded as events
	 * (events.c) for the slicer to rebuild exchanges from, instead of
	 * exchange records built here (exchange.c) */
	bool events;
};

OBS_HIDDEN extern struct obs_process obs_proc;

/* Monotonic nanoseconds: for relative timings and the spool only. */
static inline int64_t obs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Write one diagnostic line ("observe[prog:pid]: ...") through the real
 * write(), when OBSERVE_LOG is at least level. Keeps errno. */
OBS_HIDDEN void obs_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same, evaluating the arguments only when the level is on. */
#define OBS_LOG(level, ...)                                                    \
	do {                                                                   \
		if (__builtin_expect(obs_proc.log_level >= (level), 0))        \
			obs_log((level), __VA_ARGS__);                         \
	} while (0)

/* The spool of this process: created on the first tracked connect. Returns
 * 0 when it is usable. Takes the layer's mutex. */
OBS_HIDDEN int obs_spool_ensure(void);
/* Mark the spool as ended (exit, _exit, exec); ended=false undoes it. */
OBS_HIDDEN void obs_spool_mark_ended(bool ended);
/* In a forked child: forget the parent's spool (it belongs to the parent). */
OBS_HIDDEN void obs_spool_forget(void);

/* The layer's locks: every one of them, what each guards, their order.
 *
 * - The process mutex (obs_mutex_*; a pthread mutex in spool.c) guards the
 *   spool's creation and growth (spool.c), the ring of name lookups
 *   (resolve.c) and NSS's method tables (hooks_nss.c). It is held across
 *   fork() (process.c: taken before, released in the parent, made anew in
 *   the child), and never across the real call of a hook.
 * - Each connection's spin lock (obs_conn_lock, exchange.h) guards that
 *   connection's state (struct obs_conn, its references) and its records,
 *   once the connection is in the fd table; it is held for a few dozen
 *   instructions of bookkeeping, never across a real call. Before that, only
 *   the connecting thread can reach the connection (obs_xm_connect_first
 *   and obs_xm_local_addr take no lock).
 * - The pool's spin lock (fdtable.c) guards the list of free connections,
 *   for a few loads and stores (a new chunk is mapped outside it); it is
 *   taken alone, holding no other lock and taking none. A forked child
 *   forgets the pool and makes the lock anew.
 *
 * Order: a thread that holds a connection's lock may take the mutex (a new
 * record may grow the spool: obs_record_alloc); a thread that holds the
 * mutex takes no connection's lock; no thread holds two connections' locks.
 *
 * Without a lock: the fd table (atomic loads and exchanges, fdtable.h), the
 * count of connections, the spool's record counter (atomic adds), the
 * real functions (real.h), the hints the hot path reads
 * (obs_xm_*_needs_entry, a connection's phase at connect and close), and
 * a send's announcement (obs_xm_send_announce: one compare-and-swap of
 * the connection's ann, which the first locked section after it turns
 * into the registration obs_xm_send_begin makes under the lock).
 *
 * Neither lock is recursive. A thread sets obs_inside (below) before it
 * takes either and clears it after it released them: a hook re-entered
 * from a signal handler on that thread sees it and takes no lock.
 */
OBS_HIDDEN void obs_mutex_lock(void);
OBS_HIDDEN void obs_mutex_unlock(void);
OBS_HIDDEN void obs_mutex_reinit(void);

/* Inside the layer: set on this thread while it does the layer's own
 * bookkeeping (holding, or about to take, a connection's lock or the
 * process mutex), never across the real call of a hook. A hook entered
 * while it is set was called from a signal handler that interrupted that
 * bookkeeping: it goes straight to the real function, unobserved (counted
 * in obs_unobserved), so that it never waits for a lock its own thread
 * holds. Initial-exec TLS: one load, no call. */
OBS_HIDDEN extern __thread int obs_inside
	__attribute__((tls_model("initial-exec")));
/* Hooked calls passed through unobserved because they came from a signal
 * handler inside the layer (reported at exit, OBSERVE_LOG=1). */
OBS_HIDDEN extern uint64_t obs_unobserved;

/* Whether this thread is inside the layer already, i.e. the caller runs in
 * a signal handler that interrupted the layer's bookkeeping: then the call
 * is counted as unobserved and must take no lock.
 * obs_enter: the same test, and when false enter the bookkeeping; pair a
 * true with obs_leave(). */
static inline bool obs_reentered(void)
{
	if (__builtin_expect(obs_inside == 0, 1))
		return false;
	__atomic_fetch_add(&obs_unobserved, 1, __ATOMIC_RELAXED);
	return true;
}

static inline bool obs_enter(void)
{
	if (obs_reentered())
		return false;
	obs_inside = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* before any lock */
	return true;
}

/* Back inside after obs_leave() around a real call: the flag was clear
 * then, and every signal handler that ran meanwhile left it clear. */
static inline void obs_enter_again(void)
{
	obs_inside = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void obs_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* after every unlock */
	obs_inside = 0;
}

/* Whether this is not the process the layer started in, but a vfork()
 * child sharing its memory (glibc does not cache the pid: one system call).
 * Such a child must leave the parent's fd table and spool alone. Only the
 * paths that end fds or the process pay for it. */
OBS_HIDDEN bool obs_in_vfork_child(void);

/* Our own file operations bypass the hooks (and the host's interposers). */
OBS_HIDDEN long obs_sys_write(int fd, const void *buf, unsigned long len);
OBS_HIDDEN int obs_sys_close(int fd);

#endif
