/* hooks_newfd.c - the calls that hand back a new fd number.
 *
 * An fd number the kernel hands out is free: if the fd table still holds a
 * connection for it, that socket was closed where the layer could not see
 * (inside the C library, by a raw system call, by a library of the program's
 * own), and the connection ends there as lost (fd_from_kernel), so that
 * nothing done on the new file, pipe or socket is ever counted on it. Each
 * hook costs one table lookup per fd it returns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "hooks.h"

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return fd_from_kernel(REAL(accept)(fd, addr, len));
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	return fd_from_kernel(REAL(accept4)(fd, addr, len, flags));
}

/* The mode argument of open and openat: there only when the flags create
 * a file. */
#define OPEN_MODE(flags, last, mode)                                           \
	do {                                                                   \
		if ((flags)&O_CREAT || ((flags)&O_TMPFILE) == O_TMPFILE) {     \
			va_list ap_;                                           \
			va_start(ap_, last);                                   \
			mode = va_arg(ap_, mode_t);                            \
			va_end(ap_);                                           \
		}                                                              \
	} while (0)

EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return fd_from_kernel(REAL(open)(path, flags, mode));
}

EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return fd_from_kernel(REAL(open64)(path, flags, mode));
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return fd_from_kernel(REAL(openat)(dirfd, path, flags, mode));
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, flags, mode);
	return fd_from_kernel(REAL(openat64)(dirfd, path, flags, mode));
}

/* FORTIFY's open without a mode (flags not known at compile time). */
EXPORT int __open_2(const char *path, int flags)
{
	return fd_from_kernel(REAL(__open_2)(path, flags));
}

EXPORT int __open64_2(const char *path, int flags)
{
	return fd_from_kernel(REAL(__open64_2)(path, flags));
}

EXPORT int creat(const char *path, mode_t mode)
{
	return fd_from_kernel(REAL(creat)(path, mode));
}

/* fopen opens its fd inside the C library, where open() is not seen. */
static FILE *stream_from_kernel(FILE *f)
{
	if (f && obs_fd_table_size) {
		int err = errno;
		fd_from_kernel(fileno(f));
		errno = err;
	}
	return f;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
	return stream_from_kernel(REAL(fopen)(path, mode));
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return stream_from_kernel(REAL(fopen64)(path, mode));
}

/* Both ends of a pipe or socket pair are new. */
static int pair_from_kernel(int ret, const int fds[2])
{
	if (ret == 0) {
		fd_from_kernel(fds[0]);
		fd_from_kernel(fds[1]);
	}
	return ret;
}

EXPORT int pipe(int fds[2])
{
	return pair_from_kernel(REAL(pipe)(fds), fds);
}

EXPORT int pipe2(int fds[2], int flags)
{
	return pair_from_kernel(REAL(pipe2)(fds, flags), fds);
}

EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	return pair_from_kernel(REAL(socketpair)(domain, type, protocol, fds),
				fds);
}

EXPORT int epoll_create(int size)
{
	return fd_from_kernel(REAL(epoll_create)(size));
}

EXPORT int epoll_create1(int flags)
{
	return fd_from_kernel(REAL(epoll_create1)(flags));
}

EXPORT int eventfd(unsigned int count, int flags)
{
	return fd_from_kernel(REAL(eventfd)(count, flags));
}

EXPORT int memfd_create(const char *name, unsigned int flags)
{
	return fd_from_kernel(REAL(memfd_create)(name, flags));
}
