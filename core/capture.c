/* capture.c - calls into events, bytes into facts (see capture.h and
 * event.h for the rules). */
#include "capture.h"

#include <errno.h>
#include <string.h>

/* A new event, numbered. */
static uint64_t put(struct obs_capture *c, struct obs_event *ev, bool final)
{
	ev->seq = ++c->events;
	return c->sink->put(c->sink->ctx, ev, final);
}

/* No more calls merge into the last call event. */
static void close_last(struct obs_capture *c)
{
	if (c->last_open)
		c->sink->seal(c->sink->ctx, c->last_handle);
	c->last_open = false;
}

/* Direction dir's bytes are read as app from offset `at` on. */
static void choose(struct obs_capture *c, enum obs_dir dir, uint8_t app,
		   uint64_t at)
{
	struct obs_event ev = {
		.kind = OBS_EV_PROTO,
		.dir = (uint8_t)dir,
		.aux = app,
		.offset = at,
		.u.proto.level = c->level[dir],
	};

	c->app[dir] = app;
	c->base[dir] = at;
	put(c, &ev, true);
}

/* The first byte of a level's bytes chooses its protocol: the program's
 * TLS ClientHello, or anything else it sends first (HTTP/1 then says
 * whether it is). A server that speaks first speaks another protocol. The
 * other direction, on the same level and not chosen yet, follows. */
static void choose_first(struct obs_capture *c, enum obs_dir dir, uint8_t first,
			 uint64_t at)
{
	enum obs_dir other = dir == OBS_TX ? OBS_RX : OBS_TX;
	bool paired = c->level[other] == c->level[dir];
	uint8_t app = paired && c->app[other] != OBS_APP_UNKNOWN ? c->app[other]
		      : dir == OBS_RX				 ? OBS_APP_OTHER
		      : first == 22				 ? OBS_APP_TLS
								 : OBS_APP_H1;

	/* one framer: while it still reads the other direction below (a
	 * CONNECT's bytes sent before its answer), the tunnel's HTTP/1 is
	 * not followed */
	if (app == OBS_APP_H1 && !paired && c->app[other] == OBS_APP_H1)
		app = OBS_APP_OTHER;
	if (app == OBS_APP_H1 && !(paired && c->app[other] == OBS_APP_H1))
		obs_h1_init(&c->h1, c->h1.emit, c);
	choose(c, dir, app, at);
	if (paired && c->app[other] == OBS_APP_UNKNOWN)
		choose(c, other, app, c->base[other]);
}

/* A request's fact m says its labels once: the same host and path as the
 * request written before it are not written again. */
static void labels_once(struct obs_capture *c, struct obs_event *m)
{
	struct obs_h1_head *head = &m->u.h1.head;

	if (m->dir != OBS_TX || !(head->host[0] || head->path[0]))
		return;
	if (memcmp(head->host, c->last_host, sizeof(c->last_host)) == 0 &&
	    memcmp(head->path, c->last_path, sizeof(c->last_path)) == 0) {
		head->flags |= OBS_EVH1F_LABELS_AGAIN;
		memset(head->host, 0, sizeof(head->host));
		memset(head->path, 0, sizeof(head->path));
		return;
	}
	memcpy(c->last_host, head->host, sizeof(c->last_host));
	memcpy(c->last_path, head->path, sizeof(c->last_path));
}

static void h1_fact(void *ctx, const struct obs_h1_fact *f)
{
	struct obs_capture *c = ctx;
	enum obs_dir dir = f->dir;
	uint64_t base = c->base[dir];
	struct obs_event *m = &c->msg[dir];
	struct obs_event ev = {
		.kind = OBS_EV_H1,
		.dir = (uint8_t)dir,
		.offset = base + f->offset,
	};

	switch (f->kind) {
	case OBS_H1_HEAD:
		if (c->msg_open[dir]) /* one that never ended: final as is */
			c->sink->seal(c->sink->ctx, c->msg_handle[dir]);
		*m = ev;
		m->u.h1.kind = OBS_H1_HEAD;
		m->u.h1.begin = base + f->begin;
		m->u.h1.head = *f->head;
		labels_once(c, m);
		c->msg_handle[dir] = put(c, m, false);
		c->msg_open[dir] = true;
		return;
	case OBS_H1_END:
		if (!c->msg_open[dir] || m->u.h1.begin != base + f->begin) {
			/* cut short before its head was complete */
			*m = ev;
			m->u.h1.kind = OBS_H1_HEAD;
			m->u.h1.begin = base + f->begin;
			m->u.h1.head = *f->head;
			m->u.h1.ended = true;
			m->u.h1.end = base + f->offset;
			labels_once(c, m);
			put(c, m, true);
		} else {
			m->u.h1.ended = true;
			m->u.h1.end = base + f->offset;
			m->u.h1.head.flags |=
				f->head->flags & OBS_H1F_CUT_SHORT;
			c->sink->update(c->sink->ctx, c->msg_handle[dir], m,
					true);
		}
		c->msg_open[dir] = false;
		c->edge = true;
		return;
	case OBS_H1_SWITCH:
		ev.u.h1.kind = OBS_H1_SWITCH;
		ev.u.h1.head.sw = f->sw;
		put(c, &ev, true);
		c->edge = true;
		c->base[dir] = ev.offset;
		if (f->sw == OBS_H1_SW_TUNNEL) {
			enum obs_dir other = dir == OBS_TX ? OBS_RX : OBS_TX;

			c->level[dir]++;
			c->app[dir] = OBS_APP_UNKNOWN;
			if (c->level[other] == c->level[dir] &&
			    c->app[other] != OBS_APP_UNKNOWN)
				choose(c, dir, c->app[other], ev.offset);
		} else if (f->sw == OBS_H1_SW_WEBSOCKET) {
			c->app[dir] = OBS_APP_WS;
			obs_ws_init(&c->ws[dir]);
		} else {
			c->app[dir] = OBS_APP_OTHER;
		}
		if (dir == c->feeding_dir) {
			c->switched = true;
			c->switch_at = ev.offset;
		}
		return;
	default: /* OBS_H1_LOST: for both directions, an exchange needs
		  * both */
		ev.u.h1.kind = OBS_H1_LOST;
		ev.u.h1.reason = f->reason;
		put(c, &ev, true);
		c->edge = true;
		c->app[OBS_TX] = c->app[OBS_RX] = OBS_APP_OTHER;
		return;
	}
}

static void ws_message(void *ctx, uint8_t opcode, uint64_t size, uint64_t end)
{
	struct obs_capture *c = ctx;
	struct obs_event ev = {
		.kind = OBS_EV_WS,
		.dir = c->feeding_dir,
		.offset = c->base[c->feeding_dir] + end,
		.u.ws = { .opcode = opcode, .size = size },
	};

	put(c, &ev, true);
	c->edge = true;
}

/* Direction dir's bytes p[0..n), which begin at offset at, to the
 * follower of their protocol; on past a switch to the next one. */
static void follow(struct obs_capture *c, enum obs_dir dir, const uint8_t *p,
		   size_t n, uint64_t at)
{
	c->feeding_dir = (uint8_t)dir;
	while (n) {
		switch (c->app[dir]) {
		case OBS_APP_UNKNOWN:
			choose_first(c, dir, p[0], at);
			continue;
		case OBS_APP_H1: {
			size_t k;

			c->switched = false;
			obs_h1_feed(&c->h1, dir, p, n);
			if (!c->switched)
				return;
			k = (size_t)(c->switch_at - at);
			p += k;
			n -= k;
			at += k;
			continue;
		}
		case OBS_APP_WS:
			obs_ws_feed(&c->ws[dir], p, n, ws_message, c);
			return;
		default: /* TLS, another protocol: nothing read */
			return;
		}
	}
}

/* Whether the next byte of direction dir would begin a message. */
static bool at_boundary(const struct obs_capture *c, enum obs_dir dir)
{
	switch (c->app[dir]) {
	case OBS_APP_UNKNOWN:
		return true;
	case OBS_APP_H1:
		return obs_h1_at_boundary(&c->h1, dir);
	case OBS_APP_WS:
		return obs_ws_at_boundary(&c->ws[dir]);
	default:
		return false;
	}
}

void obs_cap_init(struct obs_capture *c, const struct obs_sink *sink)
{
	memset(c, 0, sizeof(*c));
	c->sink = sink;
	obs_h1_init(&c->h1, h1_fact, c);
}

void obs_cap_connect(struct obs_capture *c, int64_t t_in, int64_t t_out,
		     int err)
{
	struct obs_event ev = {
		.kind = OBS_EV_CONNECT,
		.err = err,
		.calls = 1,
		.t_in = t_in,
		.t_out = t_out,
	};

	close_last(c);
	c->up_known = err != EINPROGRESS;
	put(c, &ev, true);
}

void obs_cap_up(struct obs_capture *c, int64_t t, uint8_t how, int err)
{
	struct obs_event ev = {
		.kind = OBS_EV_UP,
		.aux = how,
		.err = err,
		.t_in = t,
		.t_out = t,
	};

	if (c->up_known)
		return;
	c->up_known = true;
	close_last(c);
	put(c, &ev, true);
}

/* Bytes of direction dir moved that cannot be read: its follower gives
 * up (HTTP/1 for both directions, as at any loss). */
static void unseen(struct obs_capture *c, enum obs_dir dir)
{
	struct obs_event ev = {
		.kind = OBS_EV_H1,
		.dir = (uint8_t)dir,
		.offset = c->pos[dir],
		.u.h1 = { .kind = OBS_H1_LOST, .reason = OBS_H1_UNSEEN },
	};

	if (c->app[dir] == OBS_APP_H1) {
		put(c, &ev, true);
		c->app[OBS_TX] = c->app[OBS_RX] = OBS_APP_OTHER;
		c->edge = true;
	} else if (c->app[dir] != OBS_APP_OTHER) {
		c->app[dir] = OBS_APP_OTHER;
	}
}

static bool is_transient(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR ||
	       err == ENOBUFS;
}

/* Feed the first n bytes of iov to the followers of direction dir. */
static void feed(struct obs_capture *c, enum obs_dir dir,
		 const struct iovec *iov, int iovcnt, size_t n)
{
	uint64_t at = c->pos[dir];

	for (int i = 0; i < iovcnt && n; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		if (k == 0)
			continue;
		follow(c, dir, iov[i].iov_base, k, at);
		at += k;
		n -= k;
	}
}

void obs_cap_call(struct obs_capture *c, const struct obs_call *call)
{
	enum obs_dir dir = call->dir;
	bool failed = call->result < 0 && !is_transient(call->err);
	bool own = failed || call->eof;
	size_t n = call->result > 0 && !call->peek ? (size_t)call->result : 0;
	struct obs_event *ev = &c->last;
	bool merge;

	if (!c->up_known && call->result >= 0)
		obs_cap_up(c, call->t_out, OBS_UP_FIRST_IO, 0);
	merge = c->last_open && ev->kind == OBS_EV_CALL && ev->dir == dir &&
		!own && !(n && ev->bytes && at_boundary(c, dir));

	if (merge) {
		ev->calls++;
		if (n && !ev->bytes) {
			ev->t_data = call->t_out;
			ev->first_bytes = (uint32_t)n;
		}
		if (n || !ev->bytes)
			ev->t_out = call->t_out;
		ev->bytes += n;
		if (call->peek)
			ev->flags |= OBS_EVF_PEEK;
	} else {
		close_last(c);
		*ev = (struct obs_event){
			.kind = OBS_EV_CALL,
			.dir = (uint8_t)dir,
			.flags = (uint8_t)((call->eof ? OBS_EVF_EOF : 0) |
					   (call->peek ? OBS_EVF_PEEK : 0)),
			.err = failed ? call->err : 0,
			.calls = 1,
			.first_bytes = (uint32_t)n,
			.t_in = call->t_in,
			.t_data = n ? call->t_out : 0,
			.t_out = call->t_out,
			.offset = c->pos[dir],
			.bytes = n,
		};
		c->last_handle = put(c, ev, own);
		c->last_open = !own;
	}
	c->edge = false;
	if (n && call->iov)
		feed(c, dir, call->iov, call->iovcnt, n);
	else if (n)
		unseen(c, dir);
	c->pos[dir] += n;
	if (merge)
		c->sink->update(c->sink->ctx, c->last_handle, ev, c->edge);
	else if (c->edge)
		close_last(c);
	if (c->edge)
		c->last_open = false;
	if (call->eof && c->app[OBS_RX] == OBS_APP_H1) {
		c->feeding_dir = OBS_RX;
		obs_h1_eof(&c->h1, OBS_RX);
	}
}

void obs_cap_shutdown(struct obs_capture *c, int64_t t_out, int how)
{
	struct obs_event ev = {
		.kind = OBS_EV_SHUTDOWN,
		.aux = (uint8_t)how,
		.t_in = t_out,
		.t_out = t_out,
	};

	close_last(c);
	put(c, &ev, true);
}

void obs_cap_close(struct obs_capture *c, int64_t t_out, uint8_t flags)
{
	struct obs_event ev = {
		.kind = OBS_EV_CLOSE,
		.flags = flags,
		.t_in = t_out,
		.t_out = t_out,
	};

	if (flags & OBS_EVF_EXIT) { /* its threads may go on a while */
		put(c, &ev, true);
		return;
	}
	close_last(c);
	/* a message under way will not end now */
	for (int dir = OBS_TX; dir <= OBS_RX; dir++)
		if (c->msg_open[dir]) {
			c->sink->seal(c->sink->ctx, c->msg_handle[dir]);
			c->msg_open[dir] = false;
		}
	put(c, &ev, true);
}
