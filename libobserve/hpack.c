/* hpack.c - libnghttp2's inflater, loaded on first use (hpack.h). */
#include "hpack.h"

#include <dlfcn.h>
#include <sched.h>
#include <string.h>

/* The functions' types, as dlsym's results are cast to them. */
typedef int (*inflate_new2_fn)(nghttp2_hd_inflater **, nghttp2_mem *);
typedef int (*change_table_size_fn)(nghttp2_hd_inflater *, size_t);
typedef ssize_t (*inflate_fn)(nghttp2_hd_inflater *, nghttp2_nv *, int *,
			      const uint8_t *, size_t, int);
typedef int (*end_headers_fn)(nghttp2_hd_inflater *);

static struct obs_hpack lib;

enum { LIB_UNTRIED, LIB_READY, LIB_ABSENT };
static int lib_state;
static const void *lib_loader; /* the thread that loads (its lib_me) */
static const char *lib_soname = "libnghttp2.so.14";
static char lib_error[160];
static __thread char lib_me __attribute__((tls_model("initial-exec")));

static void lib_note_error(const char *what)
{
	const char *e = dlerror();

	strncpy(lib_error, e ? e : what, sizeof(lib_error) - 1);
}

/* dlopen and dlsym: true when every function was found. */
static bool lib_open(void)
{
	void *so = dlopen(lib_soname, RTLD_NOW | RTLD_LOCAL);

	if (!so) {
		lib_note_error(lib_soname);
		return false;
	}
	lib.inflate_new2 =
		(inflate_new2_fn)dlsym(so, "nghttp2_hd_inflate_new2");
	lib.change_table_size = (change_table_size_fn)dlsym(
		so, "nghttp2_hd_inflate_change_table_size");
	lib.inflate = (inflate_fn)dlsym(so, "nghttp2_hd_inflate_hd3");
	if (!lib.inflate)
		lib.inflate = (inflate_fn)dlsym(so, "nghttp2_hd_inflate_hd2");
	lib.end_headers =
		(end_headers_fn)dlsym(so, "nghttp2_hd_inflate_end_headers");
	if (lib.inflate_new2 && lib.change_table_size && lib.inflate &&
	    lib.end_headers)
		return true;
	lib_note_error("a function is missing");
	return false; /* the library stays loaded: dlclose could run code */
}

/* The state after an attempt: LIB_READY or LIB_ABSENT. The first caller
 * takes lib_loader and loads; the others wait for it, except the loader
 * itself re-entered from a signal handler, which goes without. */
static int lib_get(void)
{
	int s = __atomic_load_n(&lib_state, __ATOMIC_ACQUIRE);
	const void *loader = NULL;

	if (s != LIB_UNTRIED)
		return s;
	if (__atomic_compare_exchange_n(&lib_loader, &loader, &lib_me, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		s = lib_open() ? LIB_READY : LIB_ABSENT;
		__atomic_store_n(&lib_state, s, __ATOMIC_RELEASE);
		return s;
	}
	if (loader == &lib_me)
		return LIB_ABSENT; /* re-entered while this thread loads */
	while ((s = __atomic_load_n(&lib_state, __ATOMIC_ACQUIRE)) ==
	       LIB_UNTRIED)
		sched_yield();
	return s;
}

const struct obs_hpack *obs_hpack_load(void)
{
	return lib_get() == LIB_READY ? &lib : NULL;
}

const char *obs_hpack_error(void)
{
	return lib_error;
}

void obs_hpack_reset(const char *soname)
{
	lib_soname = soname ? soname : "libnghttp2.so.14";
	lib_error[0] = '\0';
	lib_loader = NULL;
	memset(&lib, 0, sizeof(lib));
	__atomic_store_n(&lib_state, LIB_UNTRIED, __ATOMIC_RELEASE);
}
