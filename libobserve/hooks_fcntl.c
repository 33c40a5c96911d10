/* hooks_fcntl.c - fcntl and fcntl64.
 *
 * Programs call fcntl on every kind of fd, most often with F_GETFL and
 * F_SETFL, and the layer has something to do only for F_DUPFD and
 * F_DUPFD_CLOEXEC (the new fd refers to what the old one did). A variadic
 * definition pays for va_start on every call: it stores the six argument
 * registers and, the ABI says, the vector ones a caller may have used
 * (~20 instructions). Where the third argument travels in the same
 * register whether the caller saw a variadic prototype or not (x86-64,
 * AArch64: integers and pointers, all that fcntl takes), the hooks are
 * defined with three named arguments instead, under the exported names,
 * in this file of their own, where no header declares them variadic
 * (neither <fcntl.h> nor hooks.h is included); the argument is passed on
 * as it came. Elsewhere
 * they are variadic as usual.
 */
#define _GNU_SOURCE
#include "real.h"

#define EXPORT __attribute__((visibility("default")))

/* hooks_fd.c: F_DUPFD and F_DUPFD_CLOEXEC. */
OBS_HIDDEN int obs_fcntl_dup(int (*fn)(int, int, ...), int fd, int cmd,
			     void *arg);

/* The commands whose new fd the layer must know of (<fcntl.h> is not
 * included here: its prototype of fcntl is variadic). */
enum { OBS_F_DUPFD = 0, OBS_F_DUPFD_CLOEXEC = 1030 };

#if defined(__x86_64__) || defined(__aarch64__)
#define OBS_FCNTL_ARGS int fd, int cmd, void *arg
#define OBS_FCNTL_TAKE() ((void)0)
#else
#include <stdarg.h>
#define OBS_FCNTL_ARGS int fd, int cmd, ...
#define OBS_FCNTL_TAKE()                                                       \
	void *arg;                                                             \
	do {                                                                   \
		va_list ap;                                                    \
		va_start(ap, cmd);                                             \
		arg = va_arg(ap, void *);                                      \
		va_end(ap);                                                    \
	} while (0)
#endif

int fcntl(OBS_FCNTL_ARGS);
int fcntl64(OBS_FCNTL_ARGS);

/* The rest, out of line: a dup, or the real function not resolved yet
 * (the hook itself then needs no frame: a load, two compares and a tail
 * call). */
static __attribute__((noinline)) int fcntl_slow(int fd, int cmd, void *arg)
{
	if (LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return REAL(fcntl)(fd, cmd, arg);
	return obs_fcntl_dup(REAL(fcntl), fd, cmd, arg);
}

static __attribute__((noinline)) int fcntl64_slow(int fd, int cmd, void *arg)
{
	if (LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return REAL(fcntl64)(fd, cmd, arg);
	return obs_fcntl_dup(REAL(fcntl64), fd, cmd, arg);
}

EXPORT int fcntl(OBS_FCNTL_ARGS)
{
	int (*fn)(int, int, ...) =
		__atomic_load_n(&obs_real.fcntl, __ATOMIC_ACQUIRE);

	OBS_FCNTL_TAKE();
	if (LIKELY(fn != NULL) &&
	    LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return fn(fd, cmd, arg); /* a tail call */
	return fcntl_slow(fd, cmd, arg);
}

EXPORT int fcntl64(OBS_FCNTL_ARGS)
{
	int (*fn)(int, int, ...) =
		__atomic_load_n(&obs_real.fcntl64, __ATOMIC_ACQUIRE);

	OBS_FCNTL_TAKE();
	if (LIKELY(fn != NULL) &&
	    LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return fn(fd, cmd, arg);
	return fcntl64_slow(fd, cmd, arg);
}
