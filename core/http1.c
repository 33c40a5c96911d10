/* http1.c - HTTP/1.1 exchanges from facts and calls (http1.h). */
#include "http1.h"

#include <stddef.h>
#include <string.h>

#include "spool_format.h"

void obs_http1_init(struct obs_http1 *h)
{
	memset(h, 0, offsetof(struct obs_http1, q));
}

void obs_http1_tidy(struct obs_http1 *h)
{
	if (h->pushed < OBS_HTTP1_QUEUE)
		memset(&h->q[h->pushed], 0,
		       (OBS_HTTP1_QUEUE - h->pushed) * sizeof(h->q[0]));
}

static struct obs_http1_x *at(struct obs_http1 *h, uint32_t i)
{
	return &h->q[(h->first + i) % OBS_HTTP1_QUEUE];
}

/* The kept call event of direction dir that holds byte `byte`, or NULL. */
static const struct obs_event *holder(const struct obs_http1_ctx *cx,
				      enum obs_dir dir, uint64_t byte)
{
	return obs_calls_holder(&cx->calls[dir], byte);
}

/* Give the oldest exchange out and forget it. */
static void pop(struct obs_http1 *h, const struct obs_http1_ctx *cx)
{
	struct obs_http1_x *p = at(h, 0);

	if (!p->done && !p->h2c)
		p->x.flags |= OBS_CXF_CUT;
	cx->out->exchange(cx->out->ctx, &p->x);
	h->first = (h->first + 1) % OBS_HTTP1_QUEUE;
	h->len--;
}

/* Give out the exchanges that are complete, in order. */
static void flush(struct obs_http1 *h, const struct obs_http1_ctx *cx)
{
	while (h->len && at(h, 0)->done && !at(h, 0)->unsaid)
		pop(h, cx);
}

static struct obs_http1_x *push(struct obs_http1 *h,
				const struct obs_http1_ctx *cx)
{
	struct obs_http1_x *p;

	if (h->len == OBS_HTTP1_QUEUE)
		pop(h, cx);
	p = at(h, h->len++);
	memset(p, 0, sizeof(*p));
	if (h->pushed < OBS_HTTP1_QUEUE)
		h->pushed++;
	p->x.flags = OBS_CXF_HTTP;
	if (cx->conn->flags & OBS_CCF_TUNNEL)
		p->x.flags |= OBS_CXF_TUNNEL;
	return p;
}

/* The oldest exchange whose final response has not come, or a new one
 * for a response that answers no request. */
static struct obs_http1_x *answering(struct obs_http1 *h,
				     const struct obs_http1_ctx *cx)
{
	struct obs_http1_x *p;

	for (uint32_t i = 0; i < h->len; i++)
		if (!at(h, i)->answered)
			return at(h, i);
	p = push(h, cx);
	if (!h->req_open && h->tx_seen > h->req_next) {
		p->unsaid = true; /* its request is in bytes sent, unsaid */
		return p;
	}
	p->x.flags |= OBS_CXF_SERVER_FIRST;
	p->x.ds = 0;
	return p;
}

/* The request's last byte was moved by ev (or before): T4. */
static void request_ended(struct obs_http1_x *p, const struct obs_event *ev)
{
	p->x.t4 = obs_event_time(ev, p->req_end - 1);
	p->need_t5 = true;
}

/* (an h2c 101's exchange is not done: HTTP/2 goes on with it) */
static void response_ended(struct obs_http1_x *p, const struct obs_event *ev)
{
	p->x.t6 = obs_event_time(ev, p->resp_end - 1);
	p->done = !p->h2c;
}

/* The exchange answered before its request's fact came, if any. */
static struct obs_http1_x *unsaid(struct obs_http1 *h)
{
	for (uint32_t i = 0; i < h->len; i++)
		if (at(h, i)->unsaid)
			return at(h, i);
	return NULL;
}

static void request(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		    const struct obs_event *ev)
{
	const struct obs_ev_h1 *m = &ev->u.h1;
	struct obs_http1_x *p = unsaid(h);
	const struct obs_event *first =
		obs_calls_find(&cx->calls[OBS_TX], m->begin);
	const char *host = m->head.host, *path = m->head.path;
	bool answered;

	if (p && first && p->x.tfb &&
	    obs_event_entry(first, m->begin) > p->x.tfb) {
		/* the answer came before this request began: it answered
		 * none of these */
		p->unsaid = false;
		p->x.flags |= OBS_CXF_SERVER_FIRST;
		p->x.ds = 0;
		p = NULL;
	}
	answered = p != NULL; /* its answer came first */
	if (p)
		p->unsaid = false;
	else
		p = push(h, cx);
	h->req_open = !m->ended;
	h->req_next = m->ended ? m->end : m->begin;
	memcpy(p->x.method, m->head.method, sizeof(p->x.method));
	if (m->head.flags & OBS_EVH1F_LABELS_AGAIN) {
		host = h->last_host;
		path = h->last_path;
	} else if (host[0] || path[0]) { /* as the capture remembers them */
		memcpy(h->last_host, host, sizeof(h->last_host));
		memcpy(h->last_path, path, sizeof(h->last_path));
	}
	memcpy(p->x.host, host, sizeof(p->x.host));
	memcpy(p->x.path, path, sizeof(p->x.path));
	p->x.label_flags =
		m->head.flags & (OBS_H1F_HOST_CUT | OBS_H1F_PATH_CUT);
	if (first)
		p->x.t3 = obs_event_entry(first, m->begin);
	p->x.send_calls = h->carry_tx;
	h->carry_tx = 0;
	h->carry_events[OBS_TX] = 0;
	if (cx->conn->app_proto == OBS_AP_NONE)
		cx->conn->app_proto = OBS_AP_HTTP1;
	if (m->ended) {
		const struct obs_event *last;

		p->req_end = m->end;
		p->x.ds = m->end - m->begin;
		last = holder(cx, OBS_TX, m->end - 1);
		if (last)
			request_ended(p, last);
	}
	if (answered) { /* no receive after T4 waits for its answer */
		p->need_t5 = false;
		flush(h, cx);
	}
}

static void response(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		     const struct obs_event *ev)
{
	const struct obs_ev_h1 *m = &ev->u.h1;
	struct obs_http1_x *p = answering(h, cx);
	const struct obs_event *first =
		obs_calls_find(&cx->calls[OBS_RX], m->begin);
	int64_t t_first = first ? obs_event_time(first, m->begin) : 0;
	uint64_t size = m->ended ? m->end - m->begin : 0;

	if (m->head.flags & OBS_H1F_INTERIM) {
		if (p->x.interim_status == 0) {
			p->x.interim_status = m->head.status;
			p->x.t_interim = t_first;
		}
		p->interim_bytes += size;
		return;
	}
	p->answered = true;
	p->x.status = m->head.status;
	p->x.tfb = t_first;
	if (p->x.t5 == 0 && first) {
		p->x.t5 = obs_event_entry(first, m->begin);
		p->need_t5 = false;
	}
	p->resp_begin = m->begin;
	p->x.recv_calls += h->carry_rx;
	h->carry_rx = 0;
	h->carry_events[OBS_RX] = 0;
	switch (m->head.sw) {
	case OBS_H1_SW_TUNNEL:
		p->x.flags |= OBS_CXF_SWITCH;
		cx->conn->flags |= OBS_CCF_TUNNEL;
		memcpy(cx->conn->tunnel, p->x.host, sizeof(cx->conn->tunnel));
		break;
	case OBS_H1_SW_WEBSOCKET:
		p->x.flags |= OBS_CXF_SWITCH;
		cx->conn->flags |= OBS_CCF_WEBSOCKET;
		break;
	case OBS_H1_SW_H2C:
		p->x.flags |= OBS_CXF_SWITCH;
		p->h2c = true;
		cx->conn->app_proto = OBS_AP_H2C;
		break;
	case OBS_H1_SW_OTHER:
		p->x.flags |= OBS_CXF_SWITCH;
		break;
	default:
		break;
	}
	if (m->ended) {
		const struct obs_event *last = holder(cx, OBS_RX, m->end - 1);

		p->resp_end = m->end;
		p->x.dr = size + p->interim_bytes;
		if (last)
			response_ended(p, last);
	}
	flush(h, cx);
}

void obs_http1_message(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		       const struct obs_event *ev)
{
	if (ev->dir == OBS_TX)
		request(h, cx, ev);
	else
		response(h, cx, ev);
}

static void sent(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		 const struct obs_event *ev)
{
	struct obs_http1_x *newest = h->len ? at(h, h->len - 1) : NULL;

	if (ev->offset + ev->bytes > h->tx_seen)
		h->tx_seen = ev->offset + ev->bytes;
	if (obs_event_in_flight(ev) && (!newest || newest->req_end)) {
		/* a request begun where one was due, its send never back */
		struct obs_http1_x *p = push(h, cx);

		p->x.t3 = ev->t_in;
		p->x.flags &= ~OBS_CXF_HTTP;
		return;
	}

	/* the newest request still being sent takes it (its end too) */
	bool takes = newest && !newest->x.t4 && !newest->answered;

	for (uint32_t i = 0; i < h->len; i++) {
		struct obs_http1_x *p = at(h, i);

		if (p->req_end && !p->x.t4 && p->req_end - 1 >= ev->offset &&
		    p->req_end - 1 - ev->offset < ev->bytes)
			request_ended(p, ev);
	}
	if (takes) {
		newest->x.send_calls += ev->calls;
		h->carry_events[OBS_TX] = 0; /* the latest ones only */
	} else {
		h->carry_tx += ev->calls;
		h->carry_events[OBS_TX]++;
	}
}

/* The oldest exchange whose request began and whose answer has not come:
 * the receives take their calls (and bytes, for when the answer is never
 * said). */
static struct obs_http1_x *awaiting(struct obs_http1 *h)
{
	for (uint32_t i = 0; i < h->len; i++)
		if (!at(h, i)->answered)
			return at(h, i)->x.t3 ? at(h, i) : NULL;
	return NULL;
}

static void received(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		     const struct obs_event *ev)
{
	struct obs_http1_x *reading = NULL;

	if (ev->bytes) {
		h->rx_seen = ev->offset + ev->bytes;
		h->rx_last_data = ev->t_out;
	}
	for (uint32_t i = 0; i < h->len; i++) {
		struct obs_http1_x *p = at(h, i);

		if (p->need_t5) {
			p->x.t5 = ev->t_in;
			p->need_t5 = false;
		}
		if (p->answered && !p->done) {
			if (reading == NULL)
				reading = p;
			if (p->resp_end && p->resp_end - 1 >= ev->offset &&
			    p->resp_end - 1 - ev->offset < ev->bytes)
				response_ended(p, ev);
		}
	}
	if (reading || awaiting(h))
		h->carry_events[OBS_RX] = 0; /* the latest ones only */
	if (reading) {
		reading->x.recv_calls += ev->calls;
	} else if ((reading = awaiting(h)) != NULL) {
		reading->x.recv_calls += ev->calls;
		if (ev->bytes && !reading->unframed)
			reading->unframed_first = ev->t_data;
		if (ev->bytes)
			reading->unframed_last = ev->t_out;
		reading->unframed += ev->bytes;
	} else {
		h->carry_rx += ev->calls;
		h->carry_events[OBS_RX]++;
	}
	if ((ev->flags & OBS_EVF_PEEK) && h->len) /* the oldest waiting */
		at(h, 0)->x.flags |= OBS_CXF_PEEKED;
	flush(h, cx);
}

void obs_http1_call(struct obs_http1 *h, const struct obs_http1_ctx *cx,
		    const struct obs_event *ev)
{
	if (ev->dir == OBS_TX)
		sent(h, cx, ev);
	else
		received(h, cx, ev);
}

bool obs_http1_take_h2c(struct obs_http1 *h, struct obs_core_exchange *x)
{
	struct obs_http1_x *p = h->len ? at(h, 0) : NULL;

	if (p == NULL || !p->h2c)
		return false;
	*x = p->x;
	h->first = (h->first + 1) % OBS_HTTP1_QUEUE;
	h->len--;
	return true;
}

void obs_http1_finish(struct obs_http1 *h, const struct obs_http1_ctx *cx)
{
	for (uint32_t i = 0; i < h->len; i++) {
		struct obs_http1_x *p = at(h, i);

		if (p->answered && !p->done && !p->h2c &&
		    h->rx_seen > p->resp_begin) {
			p->x.dr = h->rx_seen - p->resp_begin + p->interim_bytes;
			p->x.t6 = h->rx_last_data;
		} else if (!p->answered && p->unframed) {
			p->x.dr = p->unframed; /* interim answers too */
			p->x.tfb = p->unframed_first;
			p->x.t6 = p->unframed_last;
		}
	}
	while (h->len)
		pop(h, cx);
}

uint32_t obs_http1_unclaimed(const struct obs_http1 *h, enum obs_dir dir)
{
	return h->carry_events[dir];
}
