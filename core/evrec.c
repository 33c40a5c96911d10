/* evrec.c - events into spool records and back (evrec.h). */
#include "evrec.h"

#include <string.h>

/* ---- HTTP/2 facts (event.h's struct obs_ev_h2) ----
 *
 *   field of obs_event_body   holds
 *   end                       the stream id (low 32 bits), the code (high)
 *   bytes                     begin
 *   status                    status
 *   hflags                    what (OBS_H2F_*) | label_flags << 16
 *   method                    the method
 *   totals                    CLOSE: the stream's bytes sent, received
 *   calls, first_bytes        CLOSE: its calls that sent, received
 *   labels (the next record)  host and path
 */

static bool h2_has_labels(const struct obs_ev_h2 *h)
{
	return (h->what & OBS_H2F_REQUEST) && (h->host[0] || h->path[0]);
}

static void h2_encode(const struct obs_ev_h2 *h, struct obs_event_body *b)
{
	b->end = (uint64_t)h->code << 32 | h->stream;
	b->bytes = h->begin;
	b->status = h->status;
	b->hflags = h->what | h->label_flags << 16;
	memcpy(b->method, h->method, sizeof(b->method));
	b->totals[0] = h->bytes[0];
	b->totals[1] = h->bytes[1];
	b->calls = h->calls[0];
	b->first_bytes = h->calls[1];
	b->labels = h2_has_labels(h);
}

/* NULL when b is a fact the tools can take, else what is wrong. */
static const char *h2_decode(const struct obs_event_body *b,
			     const struct obs_labels_body *l,
			     struct obs_event *ev)
{
	struct obs_ev_h2 *h = &ev->u.h2;
	uint32_t what = b->hflags & 0xffffu, lf = b->hflags >> 16;

	if (what == 0 || (what & ~OBS_H2F_ALL) ||
	    (lf & ~(OBS_H1F_HOST_CUT | OBS_H1F_PATH_CUT)) || b->labels > 1)
		return "unknown HTTP/2 fact";
	if ((uint32_t)b->end > 0x7fffffffu || b->status > 999 || b->t_in < 0 ||
	    b->t_data < 0)
		return "HTTP/2 fact out of range";
	ev->bytes = ev->calls = ev->first_bytes = 0;
	ev->t_in = ev->t_data = 0;
	h->stream = (uint32_t)b->end;
	h->code = (uint32_t)(b->end >> 32);
	h->begin = b->bytes;
	h->status = b->status;
	h->what = (uint16_t)what;
	h->label_flags = lf;
	memcpy(h->method, b->method, sizeof(h->method));
	h->bytes[0] = b->totals[0];
	h->bytes[1] = b->totals[1];
	h->calls[0] = b->calls;
	h->calls[1] = b->first_bytes;
	if (l) {
		memcpy(h->host, l->host, sizeof(h->host));
		memcpy(h->path, l->path, sizeof(h->path));
	}
	return NULL;
}

/* ---- events ---- */

static bool has_labels(const struct obs_event *ev)
{
	if (ev->kind == OBS_EV_H2)
		return h2_has_labels(&ev->u.h2);
	return ev->kind == OBS_EV_H1 && ev->dir == OBS_TX &&
	       ev->u.h1.kind == OBS_H1_HEAD &&
	       (ev->u.h1.head.host[0] || ev->u.h1.head.path[0]);
}

/* The host and path of ev (has_labels) into l. */
static void labels_of(const struct obs_event *ev, struct obs_labels_body *l)
{
	const char *host =
		ev->kind == OBS_EV_H2 ? ev->u.h2.host : ev->u.h1.head.host;
	const char *path =
		ev->kind == OBS_EV_H2 ? ev->u.h2.path : ev->u.h1.head.path;

	memcpy(l->host, host, sizeof(l->host));
	memcpy(l->path, path, sizeof(l->path));
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
	case OBS_EV_H2:
		h2_encode(&ev->u.h2, &b);
		break;
	default:
		break;
	}
	memcpy(&rec->u.event, &b, sizeof(b));
	if (labels && b.labels) {
		struct obs_labels_body l = { .ev_kind = OBS_EV_LABELS };

		labels_of(ev, &l);
		memcpy(&labels->u.labels, &l, sizeof(l));
	}
}

bool obs_evrec_has_labels(const struct obs_record *rec)
{
	return rec->kind == OBS_REC_EVENT &&
	       (rec->u.event.ev_kind == OBS_EV_H1 ||
		rec->u.event.ev_kind == OBS_EV_H2) &&
	       rec->u.event.labels;
}

const char *obs_evrec_decode(const struct obs_record *rec,
			     const struct obs_record *labels,
			     struct obs_event *ev)
{
	const struct obs_event_body *b = &rec->u.event;

	memset(ev, 0, sizeof(*ev));
	if (b->ev_kind < OBS_EV_CONNECT || b->ev_kind > OBS_EV_H2 ||
	    b->ev_kind == OBS_EV_LABELS)
		return "unknown event kind";
	if (b->dir > OBS_RX)
		return "unknown direction";
	if (b->ev_kind == OBS_EV_UP && b->err == 0 &&
	    (b->aux < OBS_UP_SO_ERROR || b->aux > OBS_UP_FIRST_IO))
		return "unknown way a connect's outcome was learned";
	if (b->ev_kind == OBS_EV_PROTO && b->aux > OBS_APP_H2)
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
	case OBS_EV_H2:
		return h2_decode(b,
				 labels && labels->kind == OBS_REC_EVENT &&
						 labels->u.labels.ev_kind ==
							 OBS_EV_LABELS
					 ? &labels->u.labels
					 : NULL,
				 ev);
	default:
		break;
	}
	return NULL;
}
