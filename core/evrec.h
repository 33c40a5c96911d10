/* evrec.h - an event in the spool: the record or two it takes
 * (common/spool_format.h: obs_event_body, and obs_labels_body for a
 * request's host and path). The layer encodes, the slicer decodes;
 * this is the only place that knows both shapes.
 */
#ifndef OBSERVE_EVREC_H
#define OBSERVE_EVREC_H

#include <stdbool.h>

#include "event.h"
#include "spool_format.h"

/* The records ev takes: 2 for a request's fact (HTTP/1's, or an HTTP/2
 * stream's labels) that has a host or a path, else 1. */
unsigned int obs_evrec_records(const struct obs_event *ev);

/* ev into rec's body (and, when it takes two records and labels is not
 * NULL, its host and path into labels' body). Only the bodies are
 * written: the caller sets conn_seq and state and publishes the kind. */
void obs_evrec_encode(const struct obs_event *ev, struct obs_record *rec,
		      struct obs_record *labels);

/* The HTTP/1 fact (without labels) that comes right after the call event
 * in rec, written into rec's record as its second event: true when it
 * could be (rec holds a call event, numbered just before the fact, of its
 * direction, and no fact yet; the fact takes no labels record), else
 * false and nothing written. Written again the same way when the fact
 * changes. */
bool obs_evrec_attach(struct obs_record *rec, const struct obs_event *fact);
/* The call event ev into rec, which holds it (and perhaps its fact, kept). */
void obs_evrec_update_call(const struct obs_event *ev, struct obs_record *rec);

/* The events of an OBS_REC_EVENT record into ev[0] and, when it holds two
 * (a call and its HTTP/1 fact), ev[1]; *n says how many (labels: the record
 * after it when rec says it has them, else NULL). NULL when it is fine,
 * else what is wrong with it. */
const char *obs_evrec_decode(const struct obs_record *rec,
			     const struct obs_record *labels,
			     struct obs_event ev[2], unsigned int *n);

/* Whether rec is an event that says the next record holds its labels. */
bool obs_evrec_has_labels(const struct obs_record *rec);

#endif
