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

/* The event of an OBS_REC_EVENT record (labels: the record after it when
 * rec says it has them, else NULL). NULL when it is fine, else what is
 * wrong with it. */
const char *obs_evrec_decode(const struct obs_record *rec,
			     const struct obs_record *labels,
			     struct obs_event *ev);

/* Whether rec is an event that says the next record holds its labels. */
bool obs_evrec_has_labels(const struct obs_record *rec);

#endif
