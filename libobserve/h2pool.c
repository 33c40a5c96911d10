/* h2pool.c - the memory of HTTP/2 connections (struct obs_xh2, 130 KiB
 * each: the exchange state machine's streams and the frame follower, whose
 * part alone the event capture uses): mapped from anonymous memory the
 * first time, kept on a free list once its connection ended, never the
 * host's malloc and never the spool. Only a process that speaks HTTP/2
 * maps any, and loads libnghttp2 (hpack.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "events.h"
#include "exchange_h2.h"
#include "hooks.h"
#include "hpack.h"

static struct obs_xh2 *pool; /* under the layer's mutex */
static bool said;

/* Memory for one HTTP/2 connection, or NULL (said once). Loads libnghttp2
 * on the first use in the process (hpack.c: once), here, outside every lock
 * but the loader's. The caller is inside the layer (obs_inside). */
struct obs_xh2 *obs_xh2_alloc(void)
{
	struct obs_xh2 *h;
	int err = errno;
	const struct obs_hpack *hpack = obs_hpack_load();

	if (!hpack && !said) {
		said = true;
		OBS_LOG(OBS_LOG_WARN,
			"HTTP/2 without labels: %s (install libnghttp2-14)",
			obs_hpack_error());
	}
	obs_mutex_lock();
	h = pool;
	if (h)
		pool = h->next_free;
	obs_mutex_unlock();
	if (!h) {
		void *m = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);
		if (m == MAP_FAILED) {
			OBS_LOG(OBS_LOG_WARN,
				"no memory for an HTTP/2 connection: its "
				"exchanges are cut by the direction of data");
			errno = err;
			return NULL;
		}
		h = m; /* zeroed; the follower's arenas start empty */
	}
	memset(h->streams, 0, sizeof(h->streams));
	h->call = 0;
	h->warned = false;
	h->hpack = hpack;
	h->next_free = NULL;
	errno = err;
	return h;
}

/* The connection ended: its memory (the arenas wiped by obs_h2_end, or
 * never used) goes back to the list. */
void obs_xh2_release(struct obs_xh2 *h)
{
	obs_mutex_lock();
	h->next_free = pool;
	pool = h;
	obs_mutex_unlock();
}

struct obs_h2 *obs_h2mem_alloc(const struct obs_hpack **hpack)
{
	struct obs_xh2 *h = obs_xh2_alloc();

	if (h == NULL)
		return NULL;
	*hpack = h->hpack;
	return &h->f;
}

void obs_h2mem_release(struct obs_h2 *mem)
{
	obs_xh2_release(
		(struct obs_xh2 *)(void *)((char *)mem -
					   offsetof(struct obs_xh2, f)));
}

void obs_xm_warn(const char *what)
{
	OBS_LOG(OBS_LOG_WARN, "%s", what);
}

void obs_h2_attach_new(struct obs_conn *c)
{
	struct obs_xh2 *h = obs_xh2_alloc();

	if (h && !obs_xh2_attach(c, h))
		obs_xh2_release(h);
}
