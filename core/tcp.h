/* tcp.h - the bottom of a connection's stack: its life as TCP. connect,
 * the outcome of a connect in progress, the first receive that returned
 * 0, shutdown and close give the connection's times (T1, T2, TEOF, T7)
 * and how it ended, as the table in tcp.c says.
 */
#ifndef OBSERVE_TCP_H
#define OBSERVE_TCP_H

#include "event.h"
#include "out.h"

/* The event's part in the connection's life, written into conn. */
void obs_tcp_event(struct obs_core_conn *conn, const struct obs_event *ev);
/* The events end here: a connection never closed is unterminated. */
void obs_tcp_finish(struct obs_core_conn *conn);

#endif
