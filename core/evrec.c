/* evrec.c - events into spool records and back (evrec.h). */
#include "evrec.h"

#include <string.h>

static bool has_labels(const struct obs_event *ev)
{
	return ev->kind == OBS_EV_H1 && ev->dir == OBS_TX &&
	       ev->u.h1.kind == OBS_H1_HEAD &&
	       (ev->u.h1.head.host[0] || ev->u.h1.head.path[0]);
}

unsigned int obs_evrec_records(const struct obs_event *ev)
{
	return has_labels(ev) ? 2 : 1;
}

void obs_evrec_encode(const struct obs_event *ev, struct obs_record *rec,
		      struct obs_record *labels)
{
	struct obs_event_body b = {
		.seq = ev->seq,
		.ev_kind = ev->kind,
		.dir = ev->dir,
		.aux = ev->aux,
		.flags = ev->flags,
		.err = ev->err,
		.calls = ev->calls,
		.first_bytes = ev->first_bytes,
		.t_in = ev->t_in,
		.t_data = ev->t_data,
		.t_out = ev->t_out,
		.offset = ev->offset,
		.bytes = ev->bytes,
	};

	switch (ev->kind) {
	case OBS_EV_H1: {
		const struct obs_ev_h1 *m = &ev->u.h1;

		b.bytes = m->begin;
		b.end = m->end;
		b.status = m->head.status;
		b.fact = m->kind;
		b.reason = m->reason;
		b.ended = m->ended;
		b.body = m->head.body;
		b.sw = m->head.sw;
		b.labels = has_labels(ev);
		b.hflags = m->head.flags;
		memcpy(b.method, m->head.method, sizeof(b.method));
		break;
	}
	case OBS_EV_WS:
		b.bytes = ev->u.ws.size;
		b.fact = ev->u.ws.opcode;
		break;
	case OBS_EV_PROTO:
		b.fact = ev->u.proto.level;
		break;
	default:
		break;
	}
	memcpy(&rec->u.event, &b, sizeof(b));
	if (labels && b.labels) {
		struct obs_labels_body l = { .ev_kind = OBS_EV_LABELS };

		memcpy(l.host, ev->u.h1.head.host, sizeof(l.host));
		memcpy(l.path, ev->u.h1.head.path, sizeof(l.path));
		memcpy(&labels->u.labels, &l, sizeof(l));
	}
}

bool obs_evrec_has_labels(const struct obs_record *rec)
{
	return rec->kind == OBS_REC_EVENT &&
	       rec->u.event.ev_kind == OBS_EV_H1 && rec->u.event.labels;
}

const char *obs_evrec_decode(const struct obs_record *rec,
			     const struct obs_record *labels,
			     struct obs_event *ev)
{
	const struct obs_event_body *b = &rec->u.event;

	memset(ev, 0, sizeof(*ev));
	if (b->ev_kind < OBS_EV_CONNECT || b->ev_kind > OBS_EV_PROTO)
		return "unknown event kind";
	if (b->dir > OBS_RX)
		return "unknown direction";
	if (b->ev_kind == OBS_EV_UP && b->err == 0 &&
	    (b->aux < OBS_UP_SO_ERROR || b->aux > OBS_UP_FIRST_IO))
		return "unknown way a connect's outcome was learned";
	if (b->ev_kind == OBS_EV_PROTO && b->aux > OBS_APP_OTHER)
		return "unknown protocol";
	ev->seq = b->seq;
	ev->kind = b->ev_kind;
	ev->dir = b->dir;
	ev->aux = b->aux;
	ev->flags = b->flags;
	ev->err = b->err;
	ev->calls = b->calls;
	ev->first_bytes = b->first_bytes;
	ev->t_in = b->t_in;
	ev->t_data = b->t_data;
	ev->t_out = b->t_out;
	ev->offset = b->offset;
	ev->bytes = b->bytes;
	switch (b->ev_kind) {
	case OBS_EV_H1: {
		struct obs_ev_h1 *m = &ev->u.h1;

		if (b->fact < OBS_H1_HEAD || b->fact > OBS_H1_LOST ||
		    b->fact == OBS_H1_END || b->ended > 1)
			return "unknown HTTP/1 fact";
		ev->bytes = 0;
		m->kind = b->fact;
		m->reason = b->reason;
		m->ended = b->ended;
		m->begin = b->bytes;
		m->end = b->end;
		m->head.status = b->status;
		m->head.body = b->body;
		m->head.sw = b->sw;
		m->head.flags = b->hflags;
		memcpy(m->head.method, b->method, sizeof(m->head.method));
		if (labels && labels->kind == OBS_REC_EVENT &&
		    labels->u.labels.ev_kind == OBS_EV_LABELS) {
			memcpy(m->head.host, labels->u.labels.host,
			       sizeof(m->head.host));
			memcpy(m->head.path, labels->u.labels.path,
			       sizeof(m->head.path));
		}
		break;
	}
	case OBS_EV_WS:
		ev->bytes = 0;
		ev->u.ws.size = b->bytes;
		ev->u.ws.opcode = b->fact;
		break;
	case OBS_EV_PROTO:
		ev->u.proto.level = b->fact;
		break;
	default:
		break;
	}
	return NULL;
}
