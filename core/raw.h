/* raw.h - exchanges of a protocol the core does not follow (TLS without
 * its plaintext, a server that speaks first, HTTP/1 once lost): as the
 * paper defines them, a run of sends and the run of receives after it.
 * T3 the first send's entry, T4 the last's return, T5 the entry of the
 * first receive after them, TFB and T6 the returns of the first and last
 * receives that brought bytes.
 */
#ifndef OBSERVE_RAW_H
#define OBSERVE_RAW_H

#include <stdint.h>

#include "event.h"
#include "out.h"

struct obs_raw {
	struct obs_core_exchange x;
	uint8_t phase; /* raw.c's enum raw_phase */
};

void obs_raw_init(struct obs_raw *r);
void obs_raw_call(struct obs_raw *r, struct obs_core_conn *conn,
		  const struct obs_core_sink *out, const struct obs_event *ev);
/* The exchange under way, if any, given out. */
void obs_raw_finish(struct obs_raw *r, const struct obs_core_sink *out);
/* The exchange under way, or NULL. */
const struct obs_core_exchange *obs_raw_pending(const struct obs_raw *r);
/* The exchange under way is none: forgotten. */
void obs_raw_drop(struct obs_raw *r);

#endif
