/* http2.c - HTTP/2 exchanges from a stream's facts (http2.h).
 *
 * A fact event may say several things of one stream; each is taken in the
 * order of this table (a stream opens before it is labelled, ends before
 * it closes):
 *
 *   fact      of       the stream's exchange
 *   OPEN      sends    begins: numbered, T3
 *   REQUEST   sends    method, path, host (or the last request's again)
 *   FIRST     answers  TFB, T5
 *   STATUS    answers  the status
 *   END       sends    T4
 *             answers  T6; the response is complete
 *   RESET     either   OBS_CXF_RESET, its error code
 *   CLOSE     either   Ds, Dr and the calls; given out (cut when neither
 *                      the response ended nor the stream was reset)
 *
 * A fact of a stream that is not under way (never opened, or closed) is
 * passed over, except OPEN.
 */
#include "http2.h"

#include <string.h>

struct transition {
	uint16_t bit; /* OBS_H2F_* */
	void (*on)(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		   struct obs_http2_s *s, const struct obs_event *ev);
};

static void opened(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		   struct obs_http2_s *s, const struct obs_event *ev);
static void labelled(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		     struct obs_http2_s *s, const struct obs_event *ev);
static void answered(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		     struct obs_http2_s *s, const struct obs_event *ev);
static void status(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		   struct obs_http2_s *s, const struct obs_event *ev);
static void ended(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		  struct obs_http2_s *s, const struct obs_event *ev);
static void reset(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		  struct obs_http2_s *s, const struct obs_event *ev);
static void closed(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		   struct obs_http2_s *s, const struct obs_event *ev);

static const struct transition transitions[] = {
	{ OBS_H2F_OPEN, opened },    { OBS_H2F_REQUEST, labelled },
	{ OBS_H2F_FIRST, answered }, { OBS_H2F_STATUS, status },
	{ OBS_H2F_END, ended },	     { OBS_H2F_RESET, reset },
	{ OBS_H2F_CLOSE, closed },
};

void obs_http2_init(struct obs_http2 *h)
{
	memset(h, 0, sizeof(*h));
}

static uint32_t home(uint32_t id)
{
	return (id >> 1) % OBS_HTTP2_STREAMS;
}

/* Stream id's slot, or NULL. */
static struct obs_http2_s *find(struct obs_http2 *h, uint32_t id)
{
	for (uint32_t i = 0; id && h->n && i < OBS_HTTP2_STREAMS; i++) {
		struct obs_http2_s *s =
			&h->s[(home(id) + i) % OBS_HTTP2_STREAMS];

		if (s->id == id)
			return s;
	}
	return NULL;
}

/* A slot for a new stream id, numbered, or NULL (all taken). */
static struct obs_http2_s *add(struct obs_http2 *h,
			       const struct obs_http2_ctx *cx, uint32_t id)
{
	for (uint32_t i = 0; i < OBS_HTTP2_STREAMS; i++) {
		struct obs_http2_s *s =
			&h->s[(home(id) + i) % OBS_HTTP2_STREAMS];

		if (s->id)
			continue;
		memset(s, 0, sizeof(*s));
		s->id = id;
		s->x.seq = cx->number(cx->ctx);
		s->x.flags = OBS_CXF_HTTP | OBS_CXF_H2;
		if (cx->conn->flags & OBS_CCF_TUNNEL)
			s->x.flags |= OBS_CXF_TUNNEL;
		s->x.stream = id;
		h->n++;
		return s;
	}
	return NULL;
}

/* Give the stream's exchange out and forget it. */
static void give_out(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		     struct obs_http2_s *s)
{
	if (!s->rx_ended && !(s->x.flags & OBS_CXF_RESET))
		s->x.flags |= OBS_CXF_CUT;
	cx->out->exchange(cx->out->ctx, &s->x);
	s->id = 0;
	h->n--;
}

static void opened(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		   struct obs_http2_s *s, const struct obs_event *ev)
{
	const struct obs_event *first;

	(void)h;
	first = obs_calls_find(&cx->calls[OBS_TX], ev->u.h2.begin);
	if (first)
		s->x.t3 = obs_event_entry(first, ev->u.h2.begin);
}

/* (a request whose labels are the last one's says so: the capture writes
 * them once) */
static void labelled(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		     struct obs_http2_s *s, const struct obs_event *ev)
{
	const struct obs_ev_h2 *f = &ev->u.h2;

	(void)cx;
	if (!(f->label_flags & OBS_H2L_AGAIN)) {
		memcpy(h->last_host, f->host, sizeof(h->last_host));
		memcpy(h->last_path, f->path, sizeof(h->last_path));
	}
	memcpy(s->x.method, f->method, sizeof(s->x.method));
	memcpy(s->x.host, h->last_host, sizeof(s->x.host));
	memcpy(s->x.path, h->last_path, sizeof(s->x.path));
	s->x.label_flags =
		f->label_flags & (OBS_H1F_HOST_CUT | OBS_H1F_PATH_CUT);
}

static void answered(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		     struct obs_http2_s *s, const struct obs_event *ev)
{
	uint64_t at = ev->u.h2.begin;
	const struct obs_event *first = obs_calls_find(&cx->calls[OBS_RX], at);
	int64_t entry;

	(void)h;
	if (first == NULL)
		return;
	s->x.tfb = obs_event_time(first, at);
	entry = obs_event_entry(first, at);
	s->x.t5 = entry > s->x.t4 ? entry : s->x.t4;
}

static void status(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		   struct obs_http2_s *s, const struct obs_event *ev)
{
	(void)h;
	(void)cx;
	s->x.status = ev->u.h2.status;
}

static void ended(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		  struct obs_http2_s *s, const struct obs_event *ev)
{
	const struct obs_event *last;
	uint64_t at = ev->offset ? ev->offset - 1 : 0;

	(void)h;
	last = obs_calls_find(&cx->calls[ev->dir], at);
	if (ev->dir == OBS_RX)
		s->rx_ended = true;
	if (last == NULL)
		return;
	if (ev->dir == OBS_TX)
		s->x.t4 = obs_event_time(last, at);
	else
		s->x.t6 = obs_event_time(last, at);
}

static void reset(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		  struct obs_http2_s *s, const struct obs_event *ev)
{
	(void)h;
	(void)cx;
	s->x.flags |= OBS_CXF_RESET;
	s->x.stream_error = ev->u.h2.code;
}

static void closed(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		   struct obs_http2_s *s, const struct obs_event *ev)
{
	const struct obs_ev_h2 *f = &ev->u.h2;

	s->x.ds += f->bytes[OBS_TX];
	s->x.dr += f->bytes[OBS_RX];
	s->x.send_calls += f->calls[OBS_TX];
	s->x.recv_calls += f->calls[OBS_RX];
	give_out(h, cx, s);
}

void obs_http2_fact(struct obs_http2 *h, const struct obs_http2_ctx *cx,
		    const struct obs_event *ev)
{
	const struct obs_ev_h2 *f = &ev->u.h2;
	struct obs_http2_s *s = find(h, f->stream);

	if (s == NULL && (f->what & OBS_H2F_OPEN) && f->stream)
		s = add(h, cx, f->stream);
	for (size_t i = 0; s && i < sizeof(transitions) / sizeof(*transitions);
	     i++)
		if ((f->what & transitions[i].bit) && s->id)
			transitions[i].on(h, cx, s, ev);
}

void obs_http2_upgraded(struct obs_http2 *h, const struct obs_http2_ctx *cx,
			const struct obs_core_exchange *x)
{
	struct obs_http2_s *s = find(h, 1) ? NULL : add(h, cx, 1);
	uint32_t seq;

	if (s == NULL)
		return;
	seq = s->x.seq;
	s->x = *x;
	s->x.seq = seq;
	s->x.flags |= OBS_CXF_H2;
	s->x.stream = 1;
	/* the 101 is interim now: the status comes from stream 1 */
	s->x.interim_status = x->status;
	s->x.t_interim = x->tfb;
	s->x.status = 0;
	s->x.tfb = s->x.t6 = 0;
}

void obs_http2_finish(struct obs_http2 *h, const struct obs_http2_ctx *cx)
{
	while (h->n) { /* in the order they opened */
		struct obs_http2_s *oldest = NULL;

		for (uint32_t i = 0; i < OBS_HTTP2_STREAMS; i++)
			if (h->s[i].id &&
			    (!oldest || h->s[i].x.seq < oldest->x.seq))
				oldest = &h->s[i];
		give_out(h, cx, oldest);
	}
}
