/* tls.h - TLS as a layer of the replay (replay.h): the handshake's times
 * and version on the connection, and which socket calls of a TLS level
 * carry the program's data.
 *
 *   event                          the layer
 *   the level chooses TLS (TX)     TLS starts: its first send's entry
 *   a socket receive of bytes      the latest, for the end
 *   the client's Finished          the version; the handshake ends, for
 *   (OBS_EV_TLS)                   now: the return of the latest socket
 *                                  receive (the server's flight)
 *   the client's first data        the handshake ends: the return of the
 *   (OBS_EV_TLS)                   latest socket receive (1.2: the
 *                                  server's Finished)
 *
 * A socket call of a TLS level carries data once the client's first data
 * went, unless the TLS library made it inside a function whose plaintext
 * is recorded (OBS_EVF_IN_TLS): that plaintext makes the exchanges.
 */
#ifndef OBSERVE_TLS_H
#define OBSERVE_TLS_H

#include <stdbool.h>
#include <stdint.h>

#include "calls.h"
#include "event.h"
#include "out.h"
#include "tlsrec.h"

struct obs_tls {
	bool data;	 /* the client's first data went */
	bool told;	 /* the connection's handshake is told */
	int64_t rx_last; /* the return of the latest socket receive of bytes */
};

void obs_tls_init(struct obs_tls *t);
/* A socket call event (any level). */
void obs_tls_call(struct obs_tls *t, const struct obs_event *ev);
/* A TLS level begins at offset `at` of the sends (tx, the socket's). */
void obs_tls_start(struct obs_tls *t, struct obs_core_conn *conn,
		   const struct obs_calls *tx, uint64_t at);
/* The client's Finished or first data (OBS_EV_TLS). */
void obs_tls_data(struct obs_tls *t, struct obs_core_conn *conn,
		  const struct obs_event *ev);
/* Whether a socket call event of a TLS level carries the program's data. */
bool obs_tls_carries(const struct obs_tls *t, const struct obs_event *ev);
/* Whether x, the last run of records on a connection whose exchanges
 * before it number given, is the client's closing alert: one short
 * record, sent last, unanswered (TLS 1.3 encrypts its type: its size
 * says it). Not a request. */
bool obs_tls_closing_alert(const struct obs_tls *t,
			   const struct obs_core_exchange *x, uint32_t given);

#endif
