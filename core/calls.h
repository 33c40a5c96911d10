/* calls.h - the recent call events of one direction, to tell when a byte
 * of it moved: a fact follows the call event that holds its offset, but
 * the message it describes may have begun a few events before (a head
 * read in pieces). A ring of the last OBS_CALLS_KEPT events is enough for
 * that; an offset older than the ring is timed by the oldest event kept.
 */
#ifndef OBSERVE_CALLS_H
#define OBSERVE_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

#define OBS_CALLS_KEPT 8

struct obs_calls {
	uint32_t n; /* events added so far */
	struct obs_event ring[OBS_CALLS_KEPT];
};

/* No event added yet (the ring's slots are written as events come). */
void obs_calls_init(struct obs_calls *w);
/* The slots no event was written to, zeroed (before w is copied out
 * whole: nothing left unset in the copy). */
void obs_calls_tidy(struct obs_calls *w);

void obs_calls_add(struct obs_calls *w, const struct obs_event *ev);
/* The kept event that holds byte `at`, else the oldest kept (NULL: none
 * yet). */
const struct obs_event *obs_calls_find(const struct obs_calls *w, uint64_t at);

/* The kept event that holds byte `at`, or NULL (none does). */
const struct obs_event *obs_calls_holder(const struct obs_calls *w,
					 uint64_t at);

/* The newest event added, or NULL. */
const struct obs_event *obs_calls_last(const struct obs_calls *w);
/* The event added k before the newest (k < OBS_CALLS_KEPT and < the
 * events added), or NULL. */
const struct obs_event *obs_calls_back(const struct obs_calls *w, uint32_t k);

#endif
