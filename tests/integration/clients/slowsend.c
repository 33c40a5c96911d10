/* slowsend.c - preloaded after libobserve.so by lifecycle.sh threads: each
 * send() returns SLOWSEND_US microseconds after the kernel took its bytes,
 * as when the sending thread loses the CPU right after its system call
 * (Java's HttpClient on a loaded machine). Another thread's receive then
 * brings the answer before the send has returned, every time. The layer
 * binds send() to this one (dlsym RTLD_NEXT), so its hook's return comes
 * after the wait. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	static ssize_t (*real)(int, const void *, size_t, int);
	const char *us = getenv("SLOWSEND_US");
	ssize_t ret;
	int err;

	if (!real)
		real = (ssize_t(*)(int, const void *, size_t, int))dlsym(
			RTLD_NEXT, "send");
	ret = real(fd, buf, n, flags);
	err = errno;
	if (us) {
		long v = atol(us);
		struct timespec ts = { v / 1000000, (v % 1000000) * 1000 };

		nanosleep(&ts, NULL);
	}
	errno = err;
	return ret;
}
