/* failalloc.c - the wrapped allocators of failalloc.h: each counts down
 * and fails (NULL, or -1 for asprintf) when the count reaches zero. */
#define _GNU_SOURCE
#include "failalloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
FILE *__real_open_memstream(char **buf, size_t *size);
int __real_vasprintf(char **out, const char *fmt, va_list ap);
int __wrap_vasprintf(char **out, const char *fmt, va_list ap);
int failalloc_run(long k, int (*fn)(void *arg), void *arg, bool *fired)
{
	FILE *saved = stderr, *err = tmpfile();
	char line[512] = "";
	int rc;

	assert_non_null(err);
	stderr = err;
	failalloc_after(k);
	rc = fn(arg);
	*fired = failalloc_fired();
	failalloc_after(-1);
	stderr = saved;
	rewind(err);
	if (!fgets(line, sizeof(line), err))
		line[0] = '\0';
	fclose(err);
	if (*fired && (rc != -1 || !strstr(line, "out of memory")))
		fail_msg("allocation %ld: returned %d, said: %s", k, rc, line);
	return rc;
}

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
int __wrap_asprintf(char **out, const char *fmt, ...);
FILE *__wrap_open_memstream(char **buf, size_t *size);

static long countdown = -1;
static bool fired;

void failalloc_after(long n)
{
	countdown = n;
	fired = false;
}

bool failalloc_fired(void)
{
	return fired;
}

/* Whether this allocation fails. */
static bool fail_now(void)
{
	if (countdown < 0)
		return false;
	if (countdown-- > 0)
		return false;
	fired = true;
	return true;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (fail_now())
		return -1;
	va_start(ap, fmt);
	n = __real_vasprintf(out, fmt, ap);
	va_end(ap);
	return n;
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	return fail_now() ? -1 : __real_vasprintf(out, fmt, ap);
}

FILE *__wrap_open_memstream(char **buf, size_t *size)
{
	return fail_now() ? NULL : __real_open_memstream(buf, size);
}
