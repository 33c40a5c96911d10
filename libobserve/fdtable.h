/* fdtable.h - the per-fd table of tracked connections and their pool.
 *
 * One array indexed by fd, mapped at start: every hook looks its fd up here
 * first (conn_of, inlined into the hooks' fast paths). An fd that refers to
 * a tracked connection holds one reference to it (dup makes two); the last
 * reference dropped closes the connection's records.
 */
#ifndef OBSERVE_FDTABLE_H
#define OBSERVE_FDTABLE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "exchange.h"
#include "layer.h"

/* The table (NULL until the layer is initialised) and its size (0 while the
 * layer is disabled: a size of 0 means "track nothing"). */
OBS_HIDDEN extern struct obs_conn **obs_fd_table;
OBS_HIDDEN extern unsigned int obs_fd_table_size;

/* The connection fd refers to, or NULL when the layer does not track fd. */
static inline struct obs_conn *conn_of(int fd)
{
	if ((unsigned int)fd >=
	    __atomic_load_n(&obs_fd_table_size, __ATOMIC_RELAXED))
		return NULL;
	return __atomic_load_n(&obs_fd_table[fd], __ATOMIC_ACQUIRE);
}

/* Take fd's entry out of the table (the fd is being closed or replaced). */
static inline struct obs_conn *conn_detach(int fd)
{
	if ((unsigned int)fd >= obs_fd_table_size)
		return NULL;
	return __atomic_exchange_n(&obs_fd_table[fd], NULL, __ATOMIC_ACQ_REL);
}

/* Map the table, sized by RLIMIT_NOFILE (at start). 0 when it is usable. */
OBS_HIDDEN int fd_table_init(void);
/* In a forked child: forget every connection (they are the parent's). */
OBS_HIDDEN void fd_table_forget(void);

/* fd now refers to c (c's reference for fd is already counted). */
OBS_HIDDEN void conn_attach(int fd, struct obs_conn *c);
/* A zeroed connection from the pool, or NULL when memory runs out. */
OBS_HIDDEN struct obs_conn *conn_new(void);
/* The number of the next connection opened in this process (from 1). */
OBS_HIDDEN uint64_t conn_next_seq(void);
/* One more fd refers to c. */
OBS_HIDDEN void conn_ref(struct obs_conn *c);
/* Drop one fd's reference; the last one closes the connection at t7. */
OBS_HIDDEN void conn_unref(struct obs_conn *c, int64_t t7);
/* The same, the last reference ending it with end_class (OBS_END_NONE:
 * closed as seen; OBS_END_LOST: closed where the layer could not see). */
OBS_HIDDEN void conn_unref_as(struct obs_conn *c, int64_t t7,
			      uint8_t end_class);
/* The same, and the last reference writes ti (TCP_INFO read before the
 * close; NULL: none) with the end. */
OBS_HIDDEN void conn_unref_info(struct obs_conn *c, int64_t t7,
				uint8_t end_class,
				const struct obs_tcp_info *ti);
/* fd is no longer the socket of c (closed behind our back): if the table
 * still maps fd to c, that reference goes, and the last one ends c as
 * lost (no T7). The caller is inside the layer (obs_enter). */
OBS_HIDDEN void fd_lost(int fd, struct obs_conn *c);
/* An fd number came back from the kernel: drop what the table still holds
 * for it (stale, closed behind our back), as fd_lost. Enters the layer
 * itself; does nothing in a vfork() child or when re-entered. Keeps
 * errno; returns fd (a tail call for fd_from_kernel). */
OBS_HIDDEN int fd_fresh(int fd);
/* The process leaves at t (exit, _exit, exec): every connection still open
 * ends with class exit, T7 = t; undo takes that back (exec failed). The
 * caller is inside the layer. */
OBS_HIDDEN void conns_exit(int64_t t, bool undo);

/* The hooks of calls that return a new fd (socket, open, accept, pipe...)
 * pass it through here: an fd number the table still holds is stale
 * (fd_fresh). Keeps errno; returns fd. */
static inline int fd_from_kernel(int fd)
{
	if (fd >= 0 && __builtin_expect(conn_of(fd) != NULL, 0))
		return fd_fresh(fd);
	return fd;
}

/* Detach every tracked fd in [first, last]; the connections whose last
 * reference this was are chained on next_free for close_detached. */
OBS_HIDDEN struct obs_conn *detach_range(unsigned int first, unsigned int last);
/* Close the chained connections (after the real call closed their fds). */
OBS_HIDDEN void close_detached(struct obs_conn *c);

#endif
