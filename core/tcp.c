/* tcp.c - a connection's life as TCP (tcp.h).
 *
 *   event                         connection
 *   connect returned 0            T2 = its return (t2_how connect), unless
 *                                 its SYN waits for the first send (TCP
 *                                 Fast Open): T2 from the outcome
 *   connect said EINPROGRESS      nonblocking; T2 from the outcome
 *   connect failed / outcome err  T2 = when learned; refused, timeout or
 *                                 connect_error
 *   outcome 0                     T2 = when learned, and how
 *   a call failed                 reset (ECONNRESET, EPIPE unless the
 *                                 program shut its side, ECONNABORTED)
 *                                 or timeout (ETIMEDOUT): the first wins
 *   a receive returned 0          TEOF (the first)
 *   shutdown                      its return; shutdown_wr for WR, RDWR
 *   close                         T7; if nothing ended it before: server
 *                                 close after TEOF, else client close
 *   the process left              T7 = then; exit (a later close wins)
 *   lost (fd reused unseen)       no T7; lost
 *   no close in the events        unterminated
 */
#include "tcp.h"

#include <errno.h>
#include <sys/socket.h>

#include "spool_format.h"

static void connect_failed(struct obs_core_conn *conn, int64_t t, int err)
{
	conn->t2 = t;
	conn->connect_errno = err;
	conn->end_errno = err;
	conn->end_class = err == ECONNREFUSED ? OBS_END_REFUSED
			  : err == ETIMEDOUT  ? OBS_END_TIMEOUT
					      : OBS_END_CONNECT_ERROR;
}

static void call_failed(struct obs_core_conn *conn, int err)
{
	uint8_t cls = err == ECONNRESET || err == EPIPE || err == ECONNABORTED
			      ? OBS_END_RESET
		      : err == ETIMEDOUT ? OBS_END_TIMEOUT
					 : OBS_END_NONE;

	if (cls == OBS_END_NONE || conn->end_class != OBS_END_NONE)
		return;
	if (err == EPIPE && (conn->flags & OBS_CCF_SHUTDOWN_WR))
		return;
	conn->end_class = cls;
	conn->end_errno = err;
}

static void closed(struct obs_core_conn *conn, const struct obs_event *ev)
{
	if (ev->flags & OBS_EVF_LOST) {
		if (conn->end_class == OBS_END_NONE)
			conn->end_class = OBS_END_LOST;
		return;
	}
	if (ev->flags & OBS_EVF_EXIT) {
		if (conn->end_class == OBS_END_NONE)
			conn->end_class = OBS_END_EXIT;
	} else if (conn->end_class == OBS_END_NONE ||
		   conn->end_class == OBS_END_EXIT) {
		conn->end_class = conn->teof ? OBS_END_SERVER_CLOSE
					     : OBS_END_CLIENT_CLOSE;
	}
	conn->t7 = ev->t_out;
}

void obs_tcp_event(struct obs_core_conn *conn, const struct obs_event *ev)
{
	switch (ev->kind) {
	case OBS_EV_CONNECT:
		conn->t1 = ev->t_in;
		if (ev->err == 0 && (ev->aux & OBS_CONNECT_SYN_DATA)) {
			/* the SYN waits for the first send: T2 later */
		} else if (ev->err == 0) {
			conn->t2 = ev->t_out;
			conn->t2_how = OBS_T2_CONNECT;
		} else if (ev->err == EINPROGRESS) {
			conn->flags |= OBS_CCF_NONBLOCKING;
		} else {
			connect_failed(conn, ev->t_out, ev->err);
		}
		return;
	case OBS_EV_UP:
		if (conn->t2)
			return;
		if (ev->err) {
			connect_failed(conn, ev->t_out, ev->err);
		} else {
			conn->t2 = ev->t_out;
			conn->t2_how = ev->aux;
		}
		return;
	case OBS_EV_CALL:
		if (ev->err)
			call_failed(conn, ev->err);
		if ((ev->flags & OBS_EVF_EOF) && !conn->teof)
			conn->teof = ev->t_out;
		return;
	case OBS_EV_SHUTDOWN:
		if (!conn->tshut)
			conn->tshut = ev->t_out;
		if (ev->aux == SHUT_WR || ev->aux == SHUT_RDWR)
			conn->flags |= OBS_CCF_SHUTDOWN_WR;
		return;
	case OBS_EV_CLOSE:
		closed(conn, ev);
		return;
	default:
		return;
	}
}

void obs_tcp_finish(struct obs_core_conn *conn)
{
	if (conn->end_class == OBS_END_NONE)
		conn->end_class = OBS_END_UNTERMINATED;
}
