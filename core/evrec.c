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

/* The event's part of b (everything but an HTTP/1 fact's). */
static void encode_event(const struct obs_event *ev, struct obs_event_body *b)
{
	b->ev_kind = ev->kind;
	b->dir = ev->dir;
	b->aux = ev->aux;
	b->flags = ev->flags;
	b->err = ev->err;
	b->calls = ev->calls;
	b->first_bytes = ev->first_bytes;
	b->t_in = ev->t_in;
	b->t_data = ev->t_data;
	b->t_out = ev->t_out;
	b->offset = ev->offset;
	b->bytes = ev->bytes;
	b->seq = ev->seq;
	switch (ev->kind) {
	case OBS_EV_WS:
		b->bytes = ev->u.ws.size;
		b->fact = ev->u.ws.opcode;
		break;
	case OBS_EV_PROTO:
		b->fact = ev->u.proto.level;
		break;
	default:
		break;
	}
}

/* The HTTP/1 fact's part of b. */
static void encode_fact(const struct obs_event *ev, struct obs_event_body *b)
{
	const struct obs_ev_h1 *m = &ev->u.h1;

	b->begin = m->begin;
	b->end = m->end;
	b->at = ev->offset;
	b->status = m->head.status;
	b->fact = m->kind;
	b->reason = m->reason;
	b->ended = m->ended;
	b->body = m->head.body;
	b->sw = m->head.sw;
	b->labels = has_labels(ev);
	b->hflags = m->head.flags;
	memcpy(b->method, m->head.method, sizeof(b->method));
}

void obs_evrec_encode(const struct obs_event *ev, struct obs_record *rec,
		      struct obs_record *labels)
{
	struct obs_event_body b = { 0 };

	encode_event(ev, &b);
	if (ev->kind == OBS_EV_H1)
		encode_fact(ev, &b);
	memcpy(&rec->u.event, &b, sizeof(b));
	if (labels && b.labels) {
		struct obs_labels_body l = { .ev_kind = OBS_EV_LABELS };

		memcpy(l.host, ev->u.h1.head.host, sizeof(l.host));
		memcpy(l.path, ev->u.h1.head.path, sizeof(l.path));
		memcpy(&labels->u.labels, &l, sizeof(l));
	}
}

void obs_evrec_update_call(const struct obs_event *ev, struct obs_record *rec)
{
	struct obs_event_body b = rec->u.event;

	encode_event(ev, &b);
	memcpy(&rec->u.event, &b, sizeof(b));
}

bool obs_evrec_attach(struct obs_record *rec, const struct obs_event *fact)
{
	struct obs_event_body b = rec->u.event;

	if (b.ev_kind != OBS_EV_CALL || fact->kind != OBS_EV_H1 ||
	    fact->seq != b.seq + 1 || fact->dir != b.dir || has_labels(fact))
		return false;
	encode_fact(fact, &b);
	memcpy(&rec->u.event, &b, sizeof(b));
	return true;
}

bool obs_evrec_has_labels(const struct obs_record *rec)
{
	return rec->kind == OBS_REC_EVENT &&
	       rec->u.event.ev_kind == OBS_EV_H1 && rec->u.event.labels;
}

/* The HTTP/1 fact of b into ev (its number, direction and kind set), its
 * host and path from labels (or none). */
static const char *decode_fact(const struct obs_event_body *b,
			       const struct obs_record *labels,
			       struct obs_event *ev)
{
	struct obs_ev_h1 *m = &ev->u.h1;

	if (b->fact < OBS_H1_HEAD || b->fact > OBS_H1_LOST ||
	    b->fact == OBS_H1_END || b->ended > 1)
		return "unknown HTTP/1 fact";
	ev->offset = b->at;
	m->kind = b->fact;
	m->reason = b->reason;
	m->ended = b->ended;
	m->begin = b->begin;
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
	return NULL;
}

const char *obs_evrec_decode(const struct obs_record *rec,
			     const struct obs_record *labels,
			     struct obs_event ev[2], unsigned int *n)
{
	const struct obs_event_body *b = &rec->u.event;

	*n = 0;
	memset(&ev[0], 0, sizeof(ev[0]));
	if (b->ev_kind < OBS_EV_CONNECT || b->ev_kind > OBS_EV_PROTO)
		return "unknown event kind";
	if (b->dir > OBS_RX)
		return "unknown direction";
	if (b->ev_kind == OBS_EV_UP && b->err == 0 &&
	    (b->aux < OBS_UP_SO_ERROR || b->aux > OBS_UP_FIRST_IO))
		return "unknown way a connect's outcome was learned";
	if (b->ev_kind == OBS_EV_PROTO && b->aux > OBS_APP_OTHER)
		return "unknown protocol";
	ev[0].seq = b->seq;
	ev[0].kind = b->ev_kind;
	ev[0].dir = b->dir;
	ev[0].aux = b->aux;
	ev[0].flags = b->flags;
	ev[0].err = b->err;
	ev[0].calls = b->calls;
	ev[0].first_bytes = b->first_bytes;
	ev[0].t_in = b->t_in;
	ev[0].t_data = b->t_data;
	ev[0].t_out = b->t_out;
	ev[0].offset = b->offset;
	ev[0].bytes = b->bytes;
	switch (b->ev_kind) {
	case OBS_EV_H1: {
		const char *why;

		ev[0] = (struct obs_event){ .seq = b->seq,
					    .kind = OBS_EV_H1,
					    .dir = b->dir };
		if ((why = decode_fact(b, labels, &ev[0])) != NULL)
			return why;
		break;
	}
	case OBS_EV_CALL:
		if (b->fact) { /* and the HTTP/1 fact after it */
			const char *why;

			ev[1] = (struct obs_event){ .seq = b->seq + 1,
						    .kind = OBS_EV_H1,
						    .dir = b->dir };
			if ((why = decode_fact(b, NULL, &ev[1])) != NULL)
				return why;
			*n = 1;
		}
		break;
	case OBS_EV_WS:
		ev[0].bytes = 0;
		ev[0].u.ws.size = b->bytes;
		ev[0].u.ws.opcode = b->fact;
		break;
	case OBS_EV_PROTO:
		ev[0].u.proto.level = b->fact;
		break;
	default:
		break;
	}
	*n += 1;
	return NULL;
}
