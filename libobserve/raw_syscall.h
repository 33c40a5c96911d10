/* raw_syscall.h - a system call made without the C library: no hook (not
 * even syscall()'s) sees it. For the layer's syscall() hook while dlsym
 * runs, and for the test programs that must get past the layer. */
#ifndef OBSERVE_RAW_SYSCALL_H
#define OBSERVE_RAW_SYSCALL_H

#include <errno.h>

/* System call n with six arguments (the kernel reads as many as the call
 * has). Returns its result, or -1 with errno set, as syscall() does; where
 * no instruction is known here (neither x86-64 nor AArch64), -1 ENOSYS. */
static inline long obs_raw_syscall(long n, long a1, long a2, long a3, long a4,
				   long a5, long a6)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	ret = x0;
#else
	(void)n, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6;
	ret = -ENOSYS;
#endif
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#endif
