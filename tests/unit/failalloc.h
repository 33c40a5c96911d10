/* failalloc.h - allocation failures on demand for the unit tests. A test
 * linked with failalloc.c and -Wl,--wrap for malloc, calloc, realloc,
 * strdup, asprintf, vasprintf and open_memstream (FAILALLOC_WRAP in CMake) has
 * every allocation its own objects make counted; failalloc_after(n) makes the
 * n-th one from now (0: the next) fail, once. */
#ifndef OBSERVE_TEST_FAILALLOC_H
#define OBSERVE_TEST_FAILALLOC_H

#include <stdbool.h>

/* Arm: the n-th allocation from now fails; n < 0 disarms. */
void failalloc_after(long n);
/* Whether the armed failure happened since failalloc_after. */
bool failalloc_fired(void);

/* Run fn(arg) with the k-th allocation from now failing (k < 0: none)
 * and stderr caught; *fired whether that failure happened. Returns fn's
 * result. When the failure happened, fn must have returned -1 and said
 * "out of memory" first on stderr: the test fails otherwise, naming k and
 * what was said. */
int failalloc_run(long k, int (*fn)(void *arg), void *arg, bool *fired);

#endif
