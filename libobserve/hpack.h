/* hpack.h - libnghttp2's HPACK inflater for the layer's HTTP/2 follower
 * (core/h2.h: struct obs_hpack), loaded with dlopen("libnghttp2.so.14",
 * RTLD_NOW | RTLD_LOCAL) the first time a process speaks HTTP/2, its four
 * functions found with dlsym; a process that never speaks HTTP/2 never loads
 * it. The library is never linked (ldd libobserve.so).
 *
 * Threads: the load takes the loader's lock and mallocs once per process;
 * call it outside the connection's lock.
 */
#ifndef OBSERVE_HPACK_H
#define OBSERVE_HPACK_H

#include "h2.h"

/* The inflater's functions (loaded once per process; later calls cost one
 * atomic load), or NULL when libnghttp2 cannot be had. Thread-safe; a
 * thread that re-enters while it loads (a signal handler) gets NULL rather
 * than waiting. */
const struct obs_hpack *obs_hpack_load(void);

/* Why the load failed (dlerror's text, cut), or "". */
const char *obs_hpack_error(void);

/* Tests only, single-threaded: forget the load, and load soname next time
 * (NULL: libnghttp2.so.14). */
void obs_hpack_reset(const char *soname);

#endif
