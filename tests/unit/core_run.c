/* core_run.c - a connection's calls through the capture and its events
 * through the replay, for the core's unit tests (core_run.h). */
#include "core_run.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hpack_linked.h"

/* the memory offered for HTTP/2 (anonymous, as the layer's) */
static struct obs_h2 h2mem;

/* The call's bytes as a record of the fuzz target's input (kind: '>'
 * socket, '{' socket inside a TLS function, '[' plaintext, each for
 * TX; the RX markers follow from them). */
static void seed_add(struct run *s, char kind, enum obs_dir dir, const void *p,
		     size_t n)
{
	uint8_t *r = s->seed + s->seed_len;

	if (s->seed_len + 5 + n > sizeof(s->seed))
		return;
	r[0] = (uint8_t)(dir == OBS_TX ? kind
			 : kind == '>' ? '<'
				       : kind + 2); /* '}' or ']' */
	r[1] = (uint8_t)(n >> 24);
	r[2] = (uint8_t)(n >> 16);
	r[3] = (uint8_t)(n >> 8);
	r[4] = (uint8_t)n;
	if (n)
		memcpy(r + 5, p, n);
	s->seed_len += 5 + n;
}

static void seed_write(const struct run *s)
{
	static int written;
	const char *dir = getenv("CORE_SEEDS");
	char path[4096];
	FILE *f;

	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/seed%d", dir, ++written);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(s->seed, 1, s->seed_len, f), s->seed_len);
	assert_int_equal(fclose(f), 0);
}

/* The sink keeps the events in an array, and checks the capture's word
 * on them: nothing changes once final, and everything is final once the
 * connection is closed (finish). */
static uint64_t sink_put(void *ctx, const struct obs_event *ev, bool final)
{
	struct run *s = ctx;

	assert_true(s->n_events < MAX_EVENTS);
	s->events[s->n_events] = *ev;
	s->final[s->n_events] = final;
	return s->n_events++;
}

static void sink_update(void *ctx, uint64_t h, const struct obs_event *ev,
			bool final)
{
	struct run *s = ctx;

	assert_true(h < s->n_events);
	assert_false(s->final[h]);
	s->events[h] = *ev;
	s->final[h] = final;
}

static void sink_seal(void *ctx, uint64_t h)
{
	struct run *s = ctx;

	assert_true(h < s->n_events);
	assert_false(s->final[h]);
	s->final[h] = true;
}

static void out_exchange(void *ctx, const struct obs_core_exchange *x)
{
	struct run *s = ctx;

	assert_true(s->n_x < MAX_X);
	s->x[s->n_x++] = *x;
}

struct run *run_connect(int err, bool syn_data)
{
	static struct run s;

	memset(&s, 0, sizeof(s));
	s.sink = (struct obs_sink){ sink_put, sink_update, sink_seal, &s };
	obs_cap_init(&s.cap, &s.sink);
	assert_true(obs_cap_h2_offer(&s.cap, &h2mem, &obs_hpack_linked));
	s.step = 1;
	s.seed[s.seed_len++] = syn_data; /* whole records */
	obs_cap_connect(&s.cap, 0, 100, err, syn_data);
	return &s;
}

struct run *run_new(void)
{
	return run_connect(0, false);
}

int64_t t_in(int step)
{
	return step * 1000;
}

int64_t t_out(int step)
{
	return step * 1000 + 500;
}

/* A call (kind: '>' a socket call, '{' one made inside a TLS library's
 * function, '[' that function's plaintext) of direction dir that moved
 * the n bytes of p (n 0: EAGAIN); returns its step. */
static int call_of(struct run *s, char kind, enum obs_dir dir, const void *p,
		   size_t n)
{
	struct iovec iov = { (void *)p, n };
	struct obs_call c = {
		.dir = dir,
		.t_in = t_in(s->step),
		.t_out = t_out(s->step),
		.result = n ? (long)n : -1,
		.err = n ? 0 : EAGAIN,
		.in_tls = kind == '{',
		.iov = &iov,
		.iovcnt = 1,
	};

	if (kind == '[')
		obs_cap_plain(&s->cap, &c);
	else
		obs_cap_call(&s->cap, &c);
	if (n)
		seed_add(s, kind, dir, p, n);
	return s->step++;
}

int call(struct run *s, enum obs_dir dir, const void *p, size_t n)
{
	return call_of(s, '>', dir, p, n);
}

int call_unseen(struct run *s, enum obs_dir dir, size_t n)
{
	struct obs_call c = {
		.dir = dir,
		.t_in = t_in(s->step),
		.t_out = t_out(s->step),
		.result = (long)n,
	};

	obs_cap_call(&s->cap, &c);
	return s->step++;
}

int call_in_tls(struct run *s, enum obs_dir dir, const void *p, size_t n)
{
	return call_of(s, '{', dir, p, n);
}

int plain(struct run *s, enum obs_dir dir, const void *p, size_t n)
{
	return call_of(s, '[', dir, p, n);
}

int send_str(struct run *s, const char *text)
{
	return call(s, OBS_TX, text, strlen(text));
}

int recv_str(struct run *s, const char *text)
{
	return call(s, OBS_RX, text, strlen(text));
}

int recv_eof(struct run *s)
{
	struct obs_call c = {
		.dir = OBS_RX,
		.t_in = t_in(s->step),
		.t_out = t_out(s->step),
		.eof = true,
	};

	obs_cap_call(&s->cap, &c);
	seed_add(s, '>', OBS_RX, NULL, 0);
	return s->step++;
}

/* Close, then replay every event written. */
void finish(struct run *s)
{
	struct obs_core_sink out = { out_exchange, s };

	obs_cap_close(&s->cap, t_out(s->step++), 0);
	{
		struct obs_h2 *mem = obs_cap_h2_reclaim(&s->cap);

		assert_true(mem == NULL || mem == &h2mem);
	}
	seed_write(s);
	obs_replay_init(&s->replay, &out);
	for (uint64_t i = 0; i < s->n_events; i++) {
		assert_true(s->final[i]);
		assert_int_equal(s->events[i].seq,
				 i + 1); /* numbered in order */
		obs_replay_event(&s->replay, &s->events[i]);
	}
	obs_replay_finish(&s->replay);
}

void run_h2(struct run *s, const struct script *h2, size_t piece)
{
	for (int i = 0; i < h2->n; i++) {
		const struct chunk *c = &h2->c[i];

		for (size_t off = 0; off < c->n;) {
			size_t k = piece && piece < c->n - off ? piece
							       : c->n - off;

			call(s, c->dir == TX ? OBS_TX : OBS_RX, c->p + off, k);
			off += k;
		}
	}
}
