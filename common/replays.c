/* replays.c - the connections being replayed (replays.h): a hash table by
 * connection number, open addressing, grown by doubling. */
#include "replays.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct obs_replays {
	struct obs_replayed **slot;
	size_t cap, used;
	/* connection records whose connect event was not read yet */
	struct obs_record *waiting;
	size_t n_waiting, cap_waiting;
	void (*out)(void *ctx, const struct obs_replayed *r,
		    const struct obs_core_exchange *x);
	void *ctx;
	struct obs_replayed *current; /* the one being fed */
};

static void give_out(void *ctx, const struct obs_core_exchange *x)
{
	struct obs_replays *m = ctx;

	m->out(m->ctx, m->current, x);
}

struct obs_replays *
obs_replays_new(void (*out)(void *ctx, const struct obs_replayed *r,
			    const struct obs_core_exchange *x),
		void *ctx)
{
	struct obs_replays *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->out = out;
	m->ctx = ctx;
	return m;
}

static size_t hash(uint64_t seq, size_t cap)
{
	return (size_t)((seq * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The slot of seq, or the empty one where it would go (NULL: no table). */
static struct obs_replayed **find(struct obs_replays *m, uint64_t seq)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = hash(seq, m->cap); m->slot[i]; i = (i + 1) & (m->cap - 1))
		if (m->slot[i]->conn_seq == seq)
			return &m->slot[i];
	return &m->slot[i];
}

static int grow(struct obs_replays *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, old_cap = m->cap;
	struct obs_replayed **old = m->slot,
			    **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	m->slot = slot;
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			*find(m, old[i]->conn_seq) = old[i];
	free(old);
	return 0;
}

/* Take slot p out, moving the entries after it that would no longer be
 * found (linear probing's deletion). */
static void take_out(struct obs_replays *m, struct obs_replayed **p)
{
	size_t i = (size_t)(p - m->slot), j = i;

	m->slot[i] = NULL;
	m->used--;
	for (;;) {
		size_t k;

		j = (j + 1) & (m->cap - 1);
		if (!m->slot[j])
			return;
		k = hash(m->slot[j]->conn_seq, m->cap);
		if ((j > i && (k <= i || k > j)) ||
		    (j < i && k <= i && k > j)) {
			m->slot[i] = m->slot[j];
			m->slot[j] = NULL;
			i = j;
		}
	}
}

void obs_replays_free(struct obs_replays *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i]);
	free(m->slot);
	free(m->waiting);
	free(m);
}

struct obs_replayed *obs_replays_get(struct obs_replays *m, uint64_t conn_seq)
{
	struct obs_replayed **p = find(m, conn_seq);

	return p ? *p : NULL;
}

/* The connection record waiting for r's number, taken into r. */
static void take_waiting(struct obs_replays *m, struct obs_replayed *r)
{
	for (size_t i = m->n_waiting; i-- > 0;)
		if (m->waiting[i].conn_seq == r->conn_seq) {
			r->saved.conn = m->waiting[i];
			m->waiting[i] = m->waiting[--m->n_waiting];
			return;
		}
}

/* A kept state without HTTP/2's part (HTTP/2 never began). */
#define SAVED_SHORT                                                            \
	(offsetof(struct obs_replay_saved, replay) +                           \
	 offsetof(struct obs_replay, http2))

const void *obs_replays_state(struct obs_replayed *r, size_t *n)
{
	obs_replay_tidy(&r->saved.replay);
	*n = r->saved.replay.http2_on ? sizeof(r->saved) : SAVED_SHORT;
	return &r->saved;
}

struct obs_replayed *obs_replays_add(struct obs_replays *m, uint64_t conn_seq,
				     const void *saved, size_t n)
{
	struct obs_core_sink out = { give_out, m };
	struct obs_replayed **p, *r;

	if (saved && ((n != sizeof(r->saved) && n != SAVED_SHORT) ||
		      ((const struct obs_replay_saved *)saved)->magic !=
			      OBS_REPLAY_MAGIC))
		return NULL;
	if ((m->used + 1) * 2 > m->cap && grow(m) != 0)
		return NULL;
	/* (HTTP/2's part is set when HTTP/2 begins, as obs_replay_init
	 * says: 28 KiB a connection not written) */
	r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, offsetof(struct obs_replayed, saved.replay));
	r->conn_seq = conn_seq;
	r->stored = saved != NULL;
	r->changed = saved == NULL;
	if (saved) {
		memcpy(&r->saved, saved, n);
		obs_replay_rebind(&r->saved.replay, &out);
	} else {
		r->saved.magic = OBS_REPLAY_MAGIC;
		r->saved.size = sizeof(r->saved);
		r->saved.next = 1;
		obs_replay_init(&r->saved.replay, &out);
		take_waiting(m, r);
	}
	p = find(m, conn_seq);
	if (*p) { /* the number again: its beginning again */
		free(*p);
		m->used--;
	}
	*p = r;
	m->used++;
	return r;
}

void obs_replays_conn(struct obs_replays *m, const struct obs_record *rec)
{
	struct obs_replayed *r = obs_replays_get(m, rec->conn_seq);

	if (r) {
		r->saved.conn = *rec;
		return;
	}
	if (m->n_waiting == m->cap_waiting) {
		size_t n = m->cap_waiting ? m->cap_waiting * 2 : 16;
		struct obs_record *w = realloc(m->waiting, n * sizeof(*w));

		if (!w)
			return;
		m->waiting = w;
		m->cap_waiting = n;
	}
	m->waiting[m->n_waiting++] = *rec;
}

void obs_replays_feed(struct obs_replays *m, struct obs_replayed *r,
		      const struct obs_event *ev)
{
	m->current = r;
	obs_replay_event(&r->saved.replay, ev);
	r->saved.next = ev->seq + 1;
	r->changed = true;
}

enum obs_taken obs_replays_take(struct obs_replays *m, struct obs_replayed *r,
				const struct obs_event *ev, unsigned int n,
				bool final, bool gaps)
{
	if (n && ev[n - 1].seq > r->saved.seen) {
		r->saved.seen = ev[n - 1].seq;
		r->changed = true;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (ev[i].seq < r->saved.next)
			continue; /* consumed already */
		if (!final || (ev[i].seq > r->saved.next && !gaps))
			return OBS_WAITS;
		obs_replays_feed(m, r, &ev[i]);
		if (ev[i].kind == OBS_EV_CLOSE && !(ev[i].flags & OBS_EVF_EXIT))
			return OBS_CLOSED;
	}
	return OBS_TAKEN;
}

void obs_replays_finish(struct obs_replays *m, struct obs_replayed *r)
{
	m->current = r;
	obs_replay_finish(&r->saved.replay);
}

void obs_replays_forget(struct obs_replays *m, struct obs_replayed *r)
{
	struct obs_replayed **p = find(m, r->conn_seq);

	if (p && *p == r)
		take_out(m, p);
	free(r);
}

void obs_replays_drain(struct obs_replays *m,
		       void (*f)(void *ctx, struct obs_replayed *r), void *ctx)
{
	for (size_t i = 0; i < m->cap; i++) {
		struct obs_replayed *r = m->slot[i];

		if (!r)
			continue;
		m->current = r;
		f(ctx, r);
		free(r);
		m->slot[i] = NULL;
	}
	m->used = 0;
	m->n_waiting = 0;
}
