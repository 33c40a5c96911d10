/* tls.c - TLS as a layer of the replay (tls.h). */
#include "tls.h"

#include <string.h>

void obs_tls_init(struct obs_tls *t)
{
	memset(t, 0, sizeof(*t));
}

void obs_tls_call(struct obs_tls *t, const struct obs_event *ev)
{
	if (ev->dir == OBS_RX && ev->bytes)
		t->rx_last = ev->t_out;
}

void obs_tls_start(struct obs_tls *t, struct obs_core_conn *conn,
		   const struct obs_calls *tx, uint64_t at)
{
	const struct obs_event *hello = obs_calls_holder(tx, at);

	conn->flags |= OBS_CCF_TLS;
	t->data = false;
	if (conn->tls_start)
		t->told = true; /* a second TLS, in a tunnel: the first's */
	if (hello && !conn->tls_start)
		conn->tls_start = obs_event_entry(hello, at);
}

void obs_tls_data(struct obs_tls *t, struct obs_core_conn *conn,
		  const struct obs_event *ev)
{
	bool data = ev->aux == OBS_TLSREC_DATA;

	if (data)
		t->data = true;
	if (t->told)
		return; /* a tunnel's inner TLS: the connection's is the first
			 */
	conn->tls_version = ev->u.tls.version;
	conn->tls_end = t->rx_last;
	t->told = data;
}

/* The largest closing alert: a 2-byte alert in a record with TLS 1.2's
 * explicit nonce and tag, or 1.3's type byte and tag (5 + 8 + 2 + 16). */
#define ALERT_MAX 31u

bool obs_tls_closing_alert(const struct obs_tls *t,
			   const struct obs_core_exchange *x, uint32_t given)
{
	return t->data && x && given > 0 && x->tfb == 0 && x->send_calls == 1 &&
	       x->ds <= ALERT_MAX && !(x->flags & OBS_CXF_SERVER_FIRST);
}

bool obs_tls_carries(const struct obs_tls *t, const struct obs_event *ev)
{
	return t->data && !(ev->flags & OBS_EVF_IN_TLS);
}
