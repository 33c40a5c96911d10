/* events.c - a connection's events into the spool (events.h).
 *
 * Each event takes one record (two for a request's fact with its host and
 * path: obs_record_alloc2 gives adjacent slots), written by core/evrec.c
 * and published kind last, except an HTTP/1 fact without labels that
 * comes right after a call event: it rides in the call's record (the
 * usual message: its call and its head in one record). A record that
 * holds an event that may still change (capture.h's sink: final false)
 * stays without OBS_RS_COMPLETE until the capture seals it. A handle is
 * the record's address (0: none could be had, the event is counted as
 * lost by the spool). No allocation, no system call but the spool's
 * growth, and the memory of HTTP/2 followers (h2pool.c), offered to the
 * capture outside the connection's lock when a call may begin HTTP/2 and
 * taken back when the connection closes.
 */
#include "events.h"

#include <errno.h>

#include "evrec.h"
#include "layer.h"
#include "tlskeys.h"

/* Part `part` (OBS_RS_EVENT_FINAL, OBS_RS_FACT_FINAL) of r is final: r
 * is complete once all it holds is. Only the connection's writer changes
 * r's state (under its lock). */
static void mark_final(struct obs_record *r, uint32_t part, bool final)
{
	uint32_t state = r->state | part;
	bool two = r->u.event.ev_kind == OBS_EV_CALL && r->u.event.fact;

	if (!final)
		return;
	if ((state & OBS_RS_EVENT_FINAL) &&
	    (!two || (state & OBS_RS_FACT_FINAL)))
		state |= OBS_RS_COMPLETE;
	__atomic_store_n(&r->state, state, __ATOMIC_RELEASE);
}

/* A handle: the record's address, with bit 0 set for the fact that rides
 * in a call's record (records are 128-byte aligned). */
#define FACT_BIT ((uint64_t)1)

static struct obs_record *record_of(uint64_t handle)
{
	return (struct obs_record *)(uintptr_t)(handle & ~FACT_BIT);
}

static uint64_t ev_put(void *ctx, const struct obs_event *ev, bool final)
{
	struct obs_conn *c = ctx;
	struct obs_record *labels = NULL, *r = c->ev_call;

	c->ev_call = NULL;
	if (r && !(r->state & OBS_RS_COMPLETE) && obs_evrec_attach(r, ev)) {
		mark_final(r, OBS_RS_FACT_FINAL, final);
		return (uint64_t)(uintptr_t)r | FACT_BIT;
	}
	r = obs_evrec_records(ev) == 2 ? obs_record_alloc2(&labels)
				       : obs_record_alloc();
	if (r == NULL)
		return 0;
	obs_evrec_encode(ev, r, labels);
	r->conn_seq = c->crec->conn_seq;
	r->state = 0;
	mark_final(r, OBS_RS_EVENT_FINAL, final);
	if (labels) { /* before its fact: a reader that sees the fact sees
		       * its labels */
		labels->conn_seq = r->conn_seq;
		labels->state = OBS_RS_COMPLETE;
		obs_record_publish(labels, OBS_REC_EVENT);
	}
	obs_record_publish(r, OBS_REC_EVENT);
	if (ev->kind == OBS_EV_CALL)
		c->ev_call = r;
	return (uint64_t)(uintptr_t)r;
}

static void ev_update(void *ctx, uint64_t handle, const struct obs_event *ev,
		      bool final)
{
	struct obs_record *r = record_of(handle);

	(void)ctx;
	if (r == NULL)
		return;
	if (handle & FACT_BIT) {
		obs_evrec_attach(r, ev);
		mark_final(r, OBS_RS_FACT_FINAL, final);
		return;
	}
	if (ev->kind == OBS_EV_CALL)
		obs_evrec_update_call(ev, r);
	else
		obs_evrec_encode(ev, r, NULL);
	mark_final(r, OBS_RS_EVENT_FINAL, final);
}

static void ev_seal(void *ctx, uint64_t handle)
{
	(void)ctx;
	if (record_of(handle))
		mark_final(record_of(handle),
			   handle & FACT_BIT ? OBS_RS_FACT_FINAL
					     : OBS_RS_EVENT_FINAL,
			   true);
}

void obs_ev_begin(struct obs_conn *c, int64_t t_in, int64_t t_out, int err,
		  bool syn_data)
{
	c->sink = (struct obs_sink){ ev_put, ev_update, ev_seal, c };
	c->ev_call = NULL;
	obs_cap_init(&c->cap, &c->sink);
	if (obs_keylog_on())
		obs_cap_decrypt(&c->cap);
	obs_cap_connect(&c->cap, t_in, t_out, err, syn_data);
}

/* The TLS decryptor of c's capture wants (want: OBS_CAP_DEC_* bits)
 * memory, or its secrets: had outside the connection's lock (the pool
 * may map some, libcrypto loads once, the key log is read). */
static __attribute__((noinline)) void dec_service(struct obs_conn *c,
						  uint8_t want)
{
	if (want & OBS_CAP_DEC_MEM) {
		const struct obs_tlsdec_ops *ops = NULL;
		void *ctx = NULL;
		struct obs_cap_dec_mem *mem = obs_tlsmem_alloc(&ops, &ctx);
		bool taken = false;

		obs_conn_lock(c);
		if (mem)
			taken = obs_cap_dec_offer(&c->cap, mem, ops, ctx);
		else
			obs_cap_dec_refuse(&c->cap);
		obs_conn_unlock(c);
		if (mem && !taken)
			obs_tlsmem_release(mem);
	}
	if (want & OBS_CAP_DEC_KEYS) {
		uint8_t random[32], client[OBS_TLSDEC_SECRET_MAX],
			server[OBS_TLSDEC_SECRET_MAX];
		size_t len = 0;
		bool wanted;

		obs_conn_lock(c);
		wanted = obs_cap_dec_random(&c->cap, random, &len);
		obs_conn_unlock(c);
		if (wanted && obs_keylog_find(random, len, client, server)) {
			OBS_LOG(OBS_LOG_DEBUG, "TLS secrets found for %02x%02x%02x%02x",
				random[0], random[1], random[2], random[3]);
			obs_conn_lock(c);
			obs_cap_dec_keys(&c->cap, client, server, len);
			obs_conn_unlock(c);
		}
		explicit_bzero(client, sizeof(client));
		explicit_bzero(server, sizeof(server));
	}
}

/* Memory for HTTP/2 offered to c's capture (taken outside the lock: the
 * pool may map some, libnghttp2 loads once). */
static __attribute__((noinline)) void h2_offer(struct obs_conn *c)
{
	const struct obs_hpack *hpack = NULL;
	struct obs_h2 *mem = obs_h2mem_alloc(&hpack);
	bool taken;

	if (mem == NULL)
		return; /* the level is read as another protocol */
	obs_conn_lock(c);
	taken = obs_cap_h2_offer(&c->cap, mem, hpack);
	obs_conn_unlock(c);
	if (!taken)
		obs_h2mem_release(mem);
}

void obs_ev_call(struct obs_conn *c, const struct obs_call *call)
{
	uint8_t dec = obs_cap_dec_wanted(&c->cap);

	if (__builtin_expect(dec != 0, 0)) {
		if (dec & (OBS_CAP_DEC_MEM | OBS_CAP_DEC_KEYS))
			dec_service(c, dec);
		if (obs_cap_dec_h2_wanted(&c->cap))
			h2_offer(c);
	}
	if (__builtin_expect(
		    obs_cap_h2_wanted(&c->cap, call, OBS_STREAM_SOCKET), 0))
		h2_offer(c);
	obs_conn_lock(c);
	obs_cap_call(&c->cap, call);
	obs_conn_unlock(c);
}

bool obs_ev_send_entry(struct obs_conn *c, int64_t t_in)
{
	int err = errno; /* (the spool's growth keeps it too) */
	bool written;

	obs_enter_again();
	obs_conn_lock(c);
	written = obs_cap_send_entry(&c->cap, t_in);
	obs_conn_unlock(c);
	obs_leave();
	errno = err;
	return written;
}

void obs_ev_plain(struct obs_conn *c, const struct obs_call *call)
{
	if (__builtin_expect(obs_cap_h2_wanted(&c->cap, call, OBS_STREAM_PLAIN),
			     0))
		h2_offer(c);
	obs_conn_lock(c);
	obs_cap_plain(&c->cap, call);
	obs_conn_unlock(c);
}

void obs_ev_up(struct obs_conn *c, int64_t t, uint8_t how, int err)
{
	obs_conn_lock(c);
	obs_cap_up(&c->cap, t, how, err);
	obs_conn_unlock(c);
}

void obs_ev_shutdown(struct obs_conn *c, int64_t t, int how)
{
	obs_conn_lock(c);
	obs_cap_shutdown(&c->cap, t, how);
	obs_conn_unlock(c);
}

void obs_ev_last_look(struct obs_conn *c)
{
	if (obs_cap_dec_wanted(&c->cap) & OBS_CAP_DEC_KEYS)
		dec_service(c, OBS_CAP_DEC_KEYS);
}

void obs_ev_ended(struct obs_conn *c)
{
	struct obs_cap_dec_mem *dec;
	uint64_t decrypted, received;

	obs_conn_lock(c);
	decrypted = obs_cap_dec_bytes(&c->cap, OBS_RX);
	received = c->cap.bytes[OBS_STREAM_SOCKET].pos[OBS_RX];
	dec = obs_cap_dec_reclaim(&c->cap);
	if (dec)
		OBS_LOG(OBS_LOG_INFO,
			"TLS decrypted: %llu of %llu bytes received (%s)",
			(unsigned long long)decrypted,
			(unsigned long long)received, obs_cap_dec_why(&c->cap));
	obs_conn_unlock(c);
	if (dec)
		obs_tlsmem_release(dec);
}

void obs_ev_close(struct obs_conn *c, int64_t t, uint8_t flags)
{
	struct obs_h2 *mem;

	obs_conn_lock(c);
	obs_cap_close(&c->cap, t, flags);
	/* at exit its threads may go on with it */
	mem = flags & OBS_EVF_EXIT ? NULL : obs_cap_h2_reclaim(&c->cap);
	obs_conn_unlock(c);
	if (mem)
		obs_h2mem_release(mem);
}
