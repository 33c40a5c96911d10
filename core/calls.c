/* calls.c - the recent call events of a direction (calls.h). */
#include "calls.h"

#include <stddef.h>
#include <string.h>

void obs_calls_init(struct obs_calls *w)
{
	memset(w, 0, offsetof(struct obs_calls, ring)); /* and its padding */
}

void obs_calls_tidy(struct obs_calls *w)
{
	if (w->n < OBS_CALLS_KEPT)
		memset(&w->ring[w->n], 0,
		       (OBS_CALLS_KEPT - w->n) * sizeof(w->ring[0]));
}

void obs_calls_add(struct obs_calls *w, const struct obs_event *ev)
{
	w->ring[w->n++ % OBS_CALLS_KEPT] = *ev;
}

const struct obs_event *obs_calls_find(const struct obs_calls *w, uint64_t at)
{
	uint32_t kept = w->n < OBS_CALLS_KEPT ? w->n : OBS_CALLS_KEPT;
	const struct obs_event *oldest = NULL;

	for (uint32_t i = 0; i < kept; i++) {
		const struct obs_event *ev =
			&w->ring[(w->n - 1 - i) % OBS_CALLS_KEPT];

		if (at >= ev->offset && at - ev->offset < ev->bytes)
			return ev;
		oldest = ev;
	}
	return oldest;
}

const struct obs_event *obs_calls_holder(const struct obs_calls *w, uint64_t at)
{
	const struct obs_event *ev = obs_calls_find(w, at);

	if (ev == NULL || at < ev->offset || at - ev->offset >= ev->bytes)
		return NULL;
	return ev;
}

const struct obs_event *obs_calls_last(const struct obs_calls *w)
{
	return obs_calls_back(w, 0);
}

const struct obs_event *obs_calls_back(const struct obs_calls *w, uint32_t k)
{
	if (k >= w->n || k >= OBS_CALLS_KEPT)
		return NULL;
	return &w->ring[(w->n - 1 - k) % OBS_CALLS_KEPT];
}
