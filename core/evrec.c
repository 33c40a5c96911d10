/* evrec.c - events into spool records and back (evrec.h). */
#include "evrec.h"

#include "tlsrec.h"

#include <string.h>

/* ---- HTTP/2 facts (event.h's struct obs_ev_h2): a record of their own
 *
 *   field of obs_event_body   holds
 *   offset                    where the fact stands (the event's offset)
 *   end                       the stream id (low 32 bits), the code (high)
 *   begin                     begin
 *   status                    status
 *   hflags                    what (OBS_H2F_*) | label_flags << 16
 *   method                    the method
 *   bytes, at                 CLOSE: the stream's bytes sent, received
 *   calls, first_bytes        CLOSE: its calls that sent, received
 *   labels (the next record)  host and path
 *
 * t_in, t_data and t_out stay 0: the reader checks them as times. */

static bool h2_has_labels(const struct obs_ev_h2 *h)
{
	return (h->what & OBS_H2F_REQUEST) && (h->host[0] || h->path[0]);
}

static void h2_encode(const struct obs_ev_h2 *h, struct obs_event_body *b)
{
	b->end = (uint64_t)h->code << 32 | h->stream;
	b->begin = h->begin;
	b->status = h->status;
	b->hflags = h->what | h->label_flags << 16;
	memcpy(b->method, h->method, sizeof(b->method));
	b->bytes = h->bytes[0];
	b->at = h->bytes[1];
	b->calls = h->calls[0];
	b->first_bytes = h->calls[1];
	b->labels = h2_has_labels(h);
}

/* The fact of b into ev (its event's part decoded), its host and path from
 * l (or none): NULL when the tools can take it, else what is wrong. */
static const char *h2_decode(const struct obs_event_body *b,
			     const struct obs_labels_body *l,
			     struct obs_event *ev)
{
	struct obs_ev_h2 *h = &ev->u.h2;
	uint32_t what = b->hflags & 0xffffu, lf = b->hflags >> 16;

	if (what == 0 || (what & ~OBS_H2F_ALL) ||
	    (lf & ~(OBS_H1F_HOST_CUT | OBS_H1F_PATH_CUT | OBS_H2L_AGAIN)) ||
	    b->labels > 1)
		return "unknown HTTP/2 fact";
	if ((uint32_t)b->end > 0x7fffffffu || b->status > 999)
		return "HTTP/2 fact out of range";
	ev->bytes = ev->calls = ev->first_bytes = 0;
	h->stream = (uint32_t)b->end;
	h->code = (uint32_t)(b->end >> 32);
	h->begin = b->begin;
	h->status = b->status;
	h->what = (uint16_t)what;
	h->label_flags = lf;
	memcpy(h->method, b->method, sizeof(h->method));
	h->bytes[0] = b->bytes;
	h->bytes[1] = b->at;
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
	else if (ev->kind == OBS_EV_H2)
		h2_encode(&ev->u.h2, &b);
	else if (ev->kind == OBS_EV_TLS)
		b.status = ev->u.tls.version;
	memcpy(&rec->u.event, &b, sizeof(b));
	if (labels && b.labels) {
		struct obs_labels_body l = { .ev_kind = OBS_EV_LABELS };

		labels_of(ev, &l);
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
	       (rec->u.event.ev_kind == OBS_EV_H1 ||
		rec->u.event.ev_kind == OBS_EV_H2) &&
	       rec->u.event.labels;
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
	if (b->ev_kind < OBS_EV_CONNECT || b->ev_kind > OBS_EV_TLS ||
	    b->ev_kind == OBS_EV_LABELS)
		return "unknown event kind";
	if (b->dir > OBS_RX)
		return "unknown direction";
	if (b->flags & ~(OBS_EVF_EOF | OBS_EVF_EXIT | OBS_EVF_LOST |
			 OBS_EVF_PEEK | OBS_EVF_PLAIN | OBS_EVF_IN_TLS))
		return "unknown event flags";
	if (b->ev_kind == OBS_EV_TLS &&
	    (b->dir != OBS_TX ||
	     (b->status != OBS_TLS_1_2 && b->status != OBS_TLS_1_3) ||
	     (b->aux != OBS_TLSREC_FINISHED && b->aux != OBS_TLSREC_DATA)))
		return "unknown TLS fact";
	if (b->ev_kind == OBS_EV_UP && b->err == 0 &&
	    (b->aux < OBS_UP_SO_ERROR || b->aux > OBS_UP_FIRST_IO))
		return "unknown way a connect's outcome was learned";
	if (b->ev_kind == OBS_EV_CONNECT && b->aux > OBS_CONNECT_SYN_DATA)
		return "unknown connect flags";
	if (b->ev_kind == OBS_EV_CALL && b->aux &&
	    ((b->aux & OBS_CALL_CHOSE) > OBS_APP_H2 ||
	     !(b->aux & OBS_CALL_CHOSE)))
		return "unknown protocol chosen";
	if (b->ev_kind == OBS_EV_PROTO && b->aux > OBS_APP_H2)
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
					    .dir = b->dir,
					    .flags = b->flags };
		if ((why = decode_fact(b, labels, &ev[0])) != NULL)
			return why;
		break;
	}
	case OBS_EV_CALL:
		if (b->fact) { /* and the HTTP/1 fact after it */
			const char *why;

			ev[1] = (struct obs_event){
				.seq = b->seq + 1,
				.kind = OBS_EV_H1,
				.dir = b->dir,
				.flags = b->flags & OBS_EVF_PLAIN, /* its call's
								    * bytes' */
			};
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
	case OBS_EV_TLS:
		ev[0].u.tls.version = b->status;
		break;
	case OBS_EV_H2: {
		bool l = labels && labels->kind == OBS_REC_EVENT &&
			 labels->u.labels.ev_kind == OBS_EV_LABELS;
		const char *why =
			h2_decode(b, l ? &labels->u.labels : NULL, &ev[0]);

		if (why)
			return why;
		break;
	}
	default:
		break;
	}
	*n += 1;
	return NULL;
}
