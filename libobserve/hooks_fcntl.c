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
 * in this file of their own, away from the variadic declarations of
 * <fcntl.h> and hooks.h; the argument is passed on as it came. Elsewhere
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

EXPORT int obs_hook_fcntl(int fd, int cmd, void *arg) __asm__("fcntl");
EXPORT int obs_hook_fcntl64(int fd, int cmd, void *arg) __asm__("fcntl64");

EXPORT int obs_hook_fcntl(int fd, int cmd, void *arg)
{
	if (LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return REAL(fcntl)(fd, cmd, arg); /* a tail call */
	return obs_fcntl_dup(REAL(fcntl), fd, cmd, arg);
}

EXPORT int obs_hook_fcntl64(int fd, int cmd, void *arg)
{
	if (LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return REAL(fcntl64)(fd, cmd, arg);
	return obs_fcntl_dup(REAL(fcntl64), fd, cmd, arg);
}

#else

#include <stdarg.h>

EXPORT int obs_hook_fcntl(int fd, int cmd, ...) __asm__("fcntl");
EXPORT int obs_hook_fcntl64(int fd, int cmd, ...) __asm__("fcntl64");

static void *third(va_list ap)
{
	return va_arg(ap, void *);
}

EXPORT int obs_hook_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = third(ap);
	va_end(ap);
	if (LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return REAL(fcntl)(fd, cmd, arg);
	return obs_fcntl_dup(REAL(fcntl), fd, cmd, arg);
}

EXPORT int obs_hook_fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = third(ap);
	va_end(ap);
	if (LIKELY(cmd != OBS_F_DUPFD && cmd != OBS_F_DUPFD_CLOEXEC))
		return REAL(fcntl64)(fd, cmd, arg);
	return obs_fcntl_dup(REAL(fcntl64), fd, cmd, arg);
}

#endif
