/* replays.c - the connections being replayed (replays.h): a hash table by
 * connection number, open addressing, grown by doubling. */
#include "replays.h"

#include <stdlib.h>
#include <string.h>

struct obs_replays {
	struct obs_replayed **slot;
	size_t cap, used;
	/* the records of connections whose connect was not read (their
	 * connection record, waiting for it) */
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
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct obs_replayed **old = m->slot,
			    **slot = calloc(cap, sizeof(*slot));
	size_t old_cap = m->cap;

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

static void forget(struct obs_replayed *r)
{
	free(r->offsets);
	free(r);
}

void obs_replays_free(struct obs_replays *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i])
			forget(m->slot[i]);
	free(m->slot);
	free(m->waiting);
	free(m);
}

void obs_replays_conn(struct obs_replays *m, const struct obs_record *rec)
{
	struct obs_replayed **p = find(m, rec->conn_seq);

	if (p && *p) {
		(*p)->conn = *rec;
		return;
	}
	/* its connect event comes after it */
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

/* The connection record waiting for conn_seq, taken into r. */
static void take_waiting(struct obs_replays *m, struct obs_replayed *r)
{
	for (size_t i = m->n_waiting; i-- > 0;)
		if (m->waiting[i].conn_seq == r->conn_seq) {
			r->conn = m->waiting[i];
			m->waiting[i] = m->waiting[--m->n_waiting];
			return;
		}
}

static int note_offsets(struct obs_replayed *r, size_t offset, size_t records)
{
	if (r->n_offsets + records > r->cap_offsets) {
		size_t n = r->cap_offsets ? r->cap_offsets * 2 : 16;
		size_t *o = realloc(r->offsets, n * sizeof(*o));

		if (!o)
			return -1;
		r->offsets = o;
		r->cap_offsets = n;
	}
	for (size_t i = 0; i < records; i++)
		r->offsets[r->n_offsets++] = offset + i * OBS_RECORD_SIZE;
	return 0;
}

int obs_replays_event(struct obs_replays *m, uint64_t conn_seq,
		      const struct obs_event *ev, size_t offset, size_t records,
		      struct obs_replayed **taken)
{
	struct obs_replayed **p = find(m, conn_seq), *r;

	*taken = NULL;
	if (ev->kind == OBS_EV_CONNECT) {
		struct obs_core_sink out = { give_out, m };

		if (p && *p) { /* the number again: a new pass over it */
			forget(*p);
			take_out(m, p);
		}
		if ((m->used + 1) * 2 > m->cap && grow(m) != 0)
			return -1;
		r = calloc(1, sizeof(*r));
		if (!r)
			return -1;
		r->conn_seq = conn_seq;
		obs_replay_init(&r->replay, &out);
		take_waiting(m, r);
		*find(m, conn_seq) = r;
		m->used++;
	} else if (p && *p) {
		r = *p;
	} else {
		return 0;
	}
	if (note_offsets(r, offset, records) != 0)
		return -1;
	m->current = r;
	obs_replay_event(&r->replay, ev);
	*taken = r;
	return 0;
}

void obs_replays_forget(struct obs_replays *m, struct obs_replayed *r)
{
	struct obs_replayed **p = find(m, r->conn_seq);

	if (p && *p == r)
		take_out(m, p);
	forget(r);
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
		forget(r);
		m->slot[i] = NULL;
	}
	m->used = 0;
	m->n_waiting = 0;
}
