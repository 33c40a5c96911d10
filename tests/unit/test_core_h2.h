/* test_core_h2.h - the HTTP/2 tests of the core (test_core_h2.c), run by
 * test_core.c's main. */
#ifndef OBSERVE_TEST_CORE_H2_H
#define OBSERVE_TEST_CORE_H2_H

/* Runs them: 0 when all passed. */
int test_core_h2(void);

#endif
