/* fuzz_events.h - the events sink of the core's fuzz targets
 * (fuzz_core.c, fuzz_tlsdec.c): the capture's events kept in an array,
 * each final once and never changed after; abort() on a broken promise.
 * Included once per target. */
#ifndef OBSERVE_FUZZ_EVENTS_H
#define OBSERVE_FUZZ_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "capture.h"

#define MAX_EVENTS 65536

static struct obs_event events[MAX_EVENTS];
static bool finals[MAX_EVENTS];
static uint64_t n_events;

static uint64_t put(void *ctx, const struct obs_event *ev, bool final)
{
	(void)ctx;
	if (n_events == MAX_EVENTS)
		abort(); /* the inputs are too short to fill it */
	events[n_events] = *ev;
	finals[n_events] = final;
	return n_events++;
}

/* nothing changes once final */
static void update(void *ctx, uint64_t h, const struct obs_event *ev,
		   bool final)
{
	(void)ctx;
	if (h >= n_events || finals[h])
		abort();
	events[h] = *ev;
	finals[h] = final;
}

static void seal(void *ctx, uint64_t h)
{
	(void)ctx;
	if (h >= n_events || finals[h])
		abort();
	finals[h] = true;
}

#endif
