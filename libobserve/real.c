/* real.c - binds the next definitions of the hooked functions (libc's), and
 * the per-thread guards of the layer (obs_inside, see layer.h). */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "real.h"

struct obs_real obs_real;

__thread int obs_inside;
uint64_t obs_unobserved;

/* Recursion guard while this thread runs dlsym. Per thread: two threads may
 * resolve at once (dlsym gives both the same answers). */
static __thread int resolving __attribute__((tls_model("initial-exec")));

static void *obs_dlsym(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn)
		OBS_LOG(OBS_LOG_DEBUG, "no next definition of %s", name);
	return fn;
}

/* One store per hook of the list: its next definition, or NULL. */
#define HOOK(name, ret, params)                                                \
	__atomic_store_n((void **)&obs_real.name, obs_dlsym(#name),            \
			 __ATOMIC_RELEASE);

/* Resolve every real function (idempotent; a no-op inside dlsym). The
 * lazy hooks' libraries may be absent: hooks_tls.c binds them. */
void obs_resolve(void)
{
	if (resolving)
		return;
	resolving = 1;
#define HOOK_LAZY(name, ret, params)
#include "hooks.def"
#undef HOOK_LAZY
	if (!obs_real.fcntl64)
		obs_real.fcntl64 = obs_real.fcntl;
	resolving = 0;
}
#undef HOOK
