/* tlspool.c - the memory of decrypting TLS connections (core/capture.h's
 * struct obs_cap_dec_mem: each direction's record plaintext, the calls
 * held and the events kept open while the secrets are awaited, with the
 * connection's libcrypto contexts): mapped from anonymous memory the first time, out of core
 * dumps, kept on a free list once its connection ended (wiped), never the
 * host's malloc (libcrypto's contexts come from its own, once a slot) and
 * never the spool. Only a process with a TLS 1.3 connection to decrypt
 * maps any, and loads libcrypto (tlscrypto.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include "hooks.h"
#include "tlscrypto.h"
#include "tlskeys.h"

struct slot {
	struct obs_cap_dec_mem mem;
	struct obs_tlscrypto crypto;
	struct slot *next;
};

static struct slot *pool; /* under the layer's mutex */
static bool said;

struct obs_cap_dec_mem *obs_tlsmem_alloc(const struct obs_tlsdec_ops **ops,
					 void **ops_ctx)
{
	const struct obs_tlsdec_ops *o = obs_tlscrypto_ops();
	struct slot *s;
	int err = errno;

	if (o == NULL) {
		if (!said) {
			said = true;
			OBS_LOG(OBS_LOG_WARN, "TLS not decrypted: %s",
				obs_tlscrypto_error());
		}
		errno = err;
		return NULL;
	}
	obs_mutex_lock();
	s = pool;
	if (s)
		pool = s->next;
	obs_mutex_unlock();
	if (!s) {
		void *m = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);

		if (m == MAP_FAILED) {
			OBS_LOG(OBS_LOG_WARN, "no memory to decrypt a TLS "
					      "connection: its records stay "
					      "runs of calls");
			errno = err;
			return NULL;
		}
		madvise(m, sizeof(*s), MADV_DONTDUMP);
		s = m;
	}
	if (!obs_tlscrypto_init(&s->crypto)) {
		obs_tlsmem_release(&s->mem);
		errno = err;
		return NULL;
	}
	s->next = NULL;
	*ops = o;
	*ops_ctx = &s->crypto;
	errno = err;
	return &s->mem;
}

void obs_tlsmem_release(struct obs_cap_dec_mem *mem)
{
	struct slot *s = (struct slot *)(void *)((char *)mem -
						  offsetof(struct slot, mem));

	obs_tlscrypto_reset(&s->crypto);
	obs_mutex_lock();
	s->next = pool;
	pool = s;
	obs_mutex_unlock();
}
