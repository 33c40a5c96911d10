/* real.h - the next definitions of the hooked functions (libc's), bound
 * with dlsym(RTLD_NEXT) on first use.
 *
 * Hazards written down:
 * - Another library's constructor may call a hook before ours ran: every
 *   real function pointer is resolved on first use (obs_resolve).
 * - dlsym() may call malloc(), and a malloc may call read(): while resolving,
 *   recursion falls back to the raw system call.
 */
#ifndef OBSERVE_REAL_H
#define OBSERVE_REAL_H

#include <netdb.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include <gnutls/gnutls.h> /* the TLS hooks' types: gnutls_session_t... */
#include <openssl/ssl.h>   /* ... SSL */
#include <prio.h>	   /* ... NSPR's PRFileDesc (NSS's hook) */
#include <ssl.h>	   /* ... NSS's SSL_ImportFD */

#include "layer.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The next definition of every hooked function (hooks.def), under the
 * hook's own name; NULL until resolved, or when there is none. */
struct obs_real {
#define HOOK(name, ret, params) ret(*name) params;
#include "hooks.def"
#undef HOOK
};

OBS_HIDDEN extern struct obs_real obs_real;

/* Resolve every real function (idempotent). */
OBS_HIDDEN void obs_resolve(void);

/* The real function `field`, resolving on first use. NULL only while dlsym
 * itself is running (then the caller falls back to a raw system call).
 * One load when it is resolved. */
#define REAL(field)                                                            \
	__extension__({                                                        \
		__typeof__(obs_real.field) real_ =                             \
			__atomic_load_n(&obs_real.field, __ATOMIC_ACQUIRE);    \
		if (UNLIKELY(real_ == NULL)) {                                 \
			obs_resolve();                                         \
			real_ = obs_real.field;                                \
		}                                                              \
		real_;                                                         \
	})

#endif
