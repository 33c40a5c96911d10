/* events.h - the layer's side of the capture (OBSERVE_CAPTURE=events):
 * a tracked connection's calls go through core/capture.c, whose events
 * events.c writes into the spool as OBS_REC_EVENT records.
 *
 * Locking: obs_ev_begin runs before the connection is in the fd table
 * (no lock, as obs_xm_connect_first); the others take the connection's
 * lock for the capture's bookkeeping, never across a real call, and are
 * called inside the layer (obs_enter).
 */
#ifndef OBSERVE_EVENTS_H
#define OBSERVE_EVENTS_H

#include <stdint.h>

#include "capture.h"
#include "exchange.h"

/* The connection (its record made by obs_xm_connect_first) begins: its
 * connect entered at t_in and returned at t_out (0: in progress) with err
 * (0, EINPROGRESS or why it failed). */
void obs_ev_begin(struct obs_conn *c, int64_t t_in, int64_t t_out, int err,
		  bool syn_data);
/* A send or receive call (capture.h). */
void obs_ev_call(struct obs_conn *c, const struct obs_call *call);
/* A send entered at t_in whose event is written now (capture.h:
 * obs_cap_send_entry, asked when obs_cap_send_opens says so); not inside
 * the layer yet: this enters it. Keeps errno. */
bool obs_ev_send_entry(struct obs_conn *c, int64_t t_in);
/* A TLS library's read or write function that moved plaintext (capture.h:
 * obs_cap_plain). */
void obs_ev_plain(struct obs_conn *c, const struct obs_call *call);
/* The outcome of a connect in progress learned at t (how: enum
 * obs_up_how). */
void obs_ev_up(struct obs_conn *c, int64_t t, uint8_t how, int err);
void obs_ev_shutdown(struct obs_conn *c, int64_t t, int how);
/* The connection's last fd was closed at t (flags 0), or the process left
 * with it open (OBS_EVF_EXIT), or it was lost (OBS_EVF_LOST). */
void obs_ev_close(struct obs_conn *c, int64_t t, uint8_t flags);

/* c is about to end (its last fd closed, the process leaving with it
 * open): a TLS decryptor that awaits its secrets looks at the key log a
 * last time (what it held is read now). Outside c's lock. */
void obs_ev_last_look(struct obs_conn *c);
/* c ended (no reference left): its decryptor's memory goes back (wiped
 * by the capture's close), the bytes it decrypted said (OBSERVE_LOG=2). */
void obs_ev_ended(struct obs_conn *c);

/* Provided by h2pool.c: memory for the capture's HTTP/2 follower, and the
 * inflater to give it (*hpack, NULL when libnghttp2 cannot be had); NULL
 * when none. Outside every lock but the pool's, inside the layer; keeps
 * errno. */
struct obs_h2 *obs_h2mem_alloc(const struct obs_hpack **hpack);
/* ... and its return (its follower ended: obs_cap_h2_reclaim). */
void obs_h2mem_release(struct obs_h2 *mem);

#endif
