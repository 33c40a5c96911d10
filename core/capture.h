/* capture.h - what the layer does with each call on a tracked socket: it
 * turns the call into an event (merged into the connection's last one
 * where event.h allows) and reads the protocol facts the bytes carry,
 * which are the only things of the bytes that are kept.
 *
 * Pure: no system call, no clock, no allocation, fixed-size state per
 * connection. Events go to a sink: the layer's writes them into the spool,
 * the tests' into an array. The caller serialises the calls of one
 * connection (the layer holds the connection's lock).
 *
 * Which follower reads a direction's bytes: the first bytes the program
 * sends on a level choose (app_of in capture.c: a TLS record: TLS; the
 * HTTP/2 client preface: HTTP/2; anything else: HTTP/1, which gives up on
 * what is not HTTP/1); a server that speaks first is another protocol.
 * HTTP/1's switches hand the bytes on: after a CONNECT's 2xx the tunnel's
 * first bytes choose again, after a 101 WebSocket frames are followed, or
 * HTTP/2 frames when the request asked for h2c. So the choice is made by
 * the bytes of a level, whatever carries them.
 *
 * HTTP/2 (h2.h) needs memory the capture cannot allocate (struct obs_h2,
 * 130 KiB): the caller offers it (obs_cap_h2_offer) before a call that
 * obs_cap_h2_wanted says may begin HTTP/2, and takes it back after close
 * (obs_cap_h2_reclaim). Without it the level is read as another protocol.
 * Its facts (event.h, OBS_EV_H2) stand at offsets of each direction's
 * bytes like HTTP/1's; a stream's bytes are counted by the follower and
 * said once, when it closes.
 */
#ifndef OBSERVE_CAPTURE_H
#define OBSERVE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "event.h"
#include "h1.h"
#include "h2.h"
#include "tlsdec.h"
#include "tlsrec.h"
#include "wsframe.h"

/* Where events go. put stores a new event and returns a handle for it;
 * update stores it again, changed (calls merged into it, its message
 * ended); seal says it will not change again. final: the event will not
 * change again (then no seal follows). */
struct obs_sink {
	uint64_t (*put)(void *ctx, const struct obs_event *ev, bool final);
	void (*update)(void *ctx, uint64_t handle, const struct obs_event *ev,
		       bool final);
	void (*seal)(void *ctx, uint64_t handle);
	void *ctx;
};

/* One stream's state, by direction. */
struct obs_cap_bytes {
	uint8_t app[2];	       /* enum obs_app of each direction */
	uint8_t level[2];      /* tunnels each direction has entered */
	uint64_t pos[2];       /* bytes of each direction so far */
	uint64_t base[2];      /* where the followers' offsets begin */
	struct obs_event last; /* the stream's last call event */
	uint64_t last_handle;
	bool last_open; /* calls may still be merged into it */
	/* a send written at its entry (obs_cap_send_entry), until it
	 * returns (the socket's only) */
	struct obs_event entry;
	uint64_t entry_handle;
	bool entry_open;
};

/* The most socket call events kept open while the decryptor awaits its
 * secrets (struct obs_cap_dec_mem's pend); one more gives decrypting up.
 * (A node under load has taken 8 calls and 64 KiB and more before its
 * key log's lines were written.) */
#define OBS_CAP_PEND_MAX 128

/* A socket call event kept open while the decryptor awaits its secrets:
 * its handle, its fields as last written (a call's are those before the
 * union), whether it was to be final. */
struct obs_cap_pend {
	uint64_t handle;
	bool final;
	unsigned char head[offsetof(struct obs_event, u)];
};

/* The memory a decrypting connection takes (offered by the caller,
 * obs_cap_dec_offer): the decryptor's, and the events kept open while
 * its secrets are awaited. */
struct obs_cap_dec_mem {
	struct obs_tlsdec_mem dec;
	struct obs_cap_pend pend[OBS_CAP_PEND_MAX];
};

struct obs_capture {
	const struct obs_sink *sink;
	bool edge;	 /* a message or protocol ended in the call being fed */
	bool up_known;	 /* the outcome of the connect was written */
	bool syn_data;	 /* the next send's bytes go with the SYN */
	uint64_t events; /* events written so far: their numbers */
	struct obs_cap_bytes bytes[2]; /* by enum obs_stream */
	struct obs_cap_bytes *s;       /* the stream being fed */
	uint8_t h2_stream;	       /* the stream HTTP/2 runs on */
	uint8_t plain_alpn;	   /* the plaintext call's alpn (obs_call) */
	uint8_t send_opens;	   /* the hint of obs_cap_send_opens */
	struct obs_tlsrec tls;	   /* the client's TLS records (socket) */
	uint8_t feeding_dir;	   /* the direction being fed */
	struct obs_event *feeding; /* the call event being fed, if any */
	bool switched; /* the framer switched in the chunk being fed */
	uint64_t switch_at;
	uint8_t switch_to;
	/* each direction's HTTP/1 message under way: its fact as written,
	 * to write again when it ends */
	struct obs_event msg[2];
	uint64_t msg_handle[2];
	bool msg_open[2];
	/* ... its fact held back: its head came in the call being fed, and
	 * it is written once the feed is over (with its end, when that came
	 * in the same call: the usual message is written once) */
	bool msg_held[2];
	struct obs_h1 h1;
	struct obs_wsframe ws[2];
	/* the host and path of the last request written with its labels */
	char last_host[OBS_H1_HOST_MAX];
	char last_path[OBS_H1_PATH_MAX];
	/* HTTP/2: the follower's memory and inflater (offered), whether it
	 * runs, the hint for the caller, a request that asked for h2c, and
	 * the facts of the stream being said (one event, not yet written) */
	struct obs_h2 *h2;
	const struct obs_hpack *hpack;
	bool h2_on;
	uint8_t h2_want; /* bits 1 << (2 * stream + dir) (obs_cap_h2_wanted) */
	bool h2c_asked;
	uint8_t h2c_stream; /* the stream of the request that asked */
	bool h2_pending;
	struct obs_event h2_fact;
	/* TLS 1.3 decrypted with key-log secrets (obs_cap_decrypt): whether
	 * the layer may, the decryptor, the hint for the layer (bits
	 * OBS_CAP_DEC_*), the memory taken back at close */
	bool dec_allowed;
	bool dec_on;
	uint8_t dec_want;
	struct obs_cap_dec_mem *dec_mem;  /* offered, taken */
	struct obs_cap_dec_mem *dec_back; /* ... for the caller to take back */
	uint64_t dec_bytes; /* received bytes decrypted before a stop */
	struct obs_tlsdec dec;
	/* the socket's call events written while the secrets are awaited
	 * (in dec_mem->pend): open (not final) and unmarked until the
	 * decryptor has its secrets (then marked OBS_EVF_IN_TLS: their
	 * records' plaintext makes the exchanges) or gives up (left as they
	 * are: runs of records); a process that ends meanwhile leaves them as
	 * they are */
	uint16_t n_pend;
};

/* obs_cap_dec_wanted's bits: the decryptor wants memory, secrets; it
 * runs (with memory, not given up). */
#define OBS_CAP_DEC_MEM 0x1u
#define OBS_CAP_DEC_KEYS 0x2u
#define OBS_CAP_DEC_RUNS 0x4u

void obs_cap_init(struct obs_capture *c, const struct obs_sink *sink);

/* connect(): its entry and return, and 0, EINPROGRESS or its errno;
 * syn_data: its SYN carries the first send's bytes (TCP Fast Open: a
 * sendto that connects, or a connect whose SYN waits for the first send,
 * which then returned 0): that send tells nothing of the connection
 * being up, and with err 0 the return is not T2 either. */
void obs_cap_connect(struct obs_capture *c, int64_t t_in, int64_t t_out,
		     int err, bool syn_data);
/* The outcome of a connect in progress, learned at t (how: enum
 * obs_up_how; err 0 or why it failed); the first one only. A call that
 * succeeds on a connection whose outcome is not known yet is that
 * outcome (OBS_UP_FIRST_IO: the entry of that call). */
void obs_cap_up(struct obs_capture *c, int64_t t, uint8_t how, int err);

/* A send (OBS_TX) or receive (OBS_RX) call: entry, return, what it
 * returned (bytes, 0, or -1 with err); iov holds the bytes moved, the
 * first `result` of them (NULL when they cannot be read: the protocol
 * followers of that direction give up); eof: a receive returned 0 for a
 * buffer that had room; peek: MSG_PEEK; in_tls: a socket call a TLS
 * library made inside one of its read or write functions whose plaintext
 * is given to obs_cap_plain; alpn: for obs_cap_plain, the protocol the
 * session's ALPN chose (enum obs_app: OBS_APP_H1, OBS_APP_H2; else
 * OBS_APP_UNKNOWN), asked while obs_cap_plain_chosen says no; entry: a
 * send whose entry obs_cap_send_entry wrote; unread: (the decryptor's
 * plaintext, iov NULL) bytes not decrypted because the followers said
 * they do not read them (a body of known length, HTTP/2 DATA). */
struct obs_call {
	enum obs_dir dir;
	int64_t t_in;
	int64_t t_out;
	long result;
	int err;
	bool eof;
	bool peek;
	bool in_tls;
	bool entry;
	bool unread;
	uint8_t alpn;
	const struct iovec *iov;
	int iovcnt;
};
/* A socket call. */
void obs_cap_call(struct obs_capture *c, const struct obs_call *call);

/* Whether a send on the socket now would begin an event (the last one is
 * not a send's, or a message is due to begin), so that its entry is worth
 * writing: read without the lock, a hint. */
static inline bool obs_cap_send_opens(const struct obs_capture *c)
{
	return __atomic_load_n(&c->send_opens, __ATOMIC_RELAXED);
}
/* A send on the socket entered at t_in: its event is written now, with
 * nothing of its return (a send the process dies in, or that returns
 * after a receive of another thread, is in its place); obs_cap_call, with
 * call->entry, completes it. False when one is in flight already (then
 * the call is written at its return, as without). */
bool obs_cap_send_entry(struct obs_capture *c, int64_t t_in);
/* Whether the plaintext's protocol is chosen (read without the lock: a
 * hint, for whether a call's alpn is worth asking). */
static inline bool obs_cap_plain_chosen(const struct obs_capture *c)
{
	return __atomic_load_n(&c->bytes[OBS_STREAM_PLAIN].app[OBS_TX],
			       __ATOMIC_RELAXED) != OBS_APP_UNKNOWN;
}
/* A TLS library's read or write function (SSL_read, SSL_write, ...): its
 * entry, return and result, iov the plaintext it moved. Its bytes are a
 * stream of their own (OBS_EVF_PLAIN), whose first bytes sent choose its
 * protocol as a level's do (HTTP/1, HTTP/2); its socket calls are given
 * to obs_cap_call (in_tls) in their place, before it returns. */
void obs_cap_plain(struct obs_capture *c, const struct obs_call *call);

/* Whether call, on stream (enum obs_stream), may begin HTTP/2 on c
 * while c has no memory for it: its bytes are the client preface where a
 * level's first bytes are due, or it receives the answer to a request
 * that asked for h2c. Reads c without its lock (a hint: a call it misses
 * is read as another protocol). */
static inline bool obs_cap_h2_wanted(const struct obs_capture *c,
				     const struct obs_call *call, int stream)
{
	uint8_t want = __atomic_load_n(&c->h2_want, __ATOMIC_RELAXED);
	size_t n;

	if (stream == OBS_STREAM_PLAIN && call->alpn == OBS_APP_H2 &&
	    (want >> (2 * OBS_STREAM_PLAIN + OBS_TX) & 1u))
		return true; /* ALPN's h2, whoever speaks first */
	if (!(want >> (2 * stream + (int)call->dir) & 1u) ||
	    call->result <= 0 || call->peek || call->iov == NULL ||
	    call->iovcnt < 1)
		return false;
	if (call->dir == OBS_RX)
		return true;
	n = call->iov[0].iov_len < (size_t)call->result ? call->iov[0].iov_len
							: (size_t)call->result;
	return obs_h2_preface(call->iov[0].iov_base, n);
}

/* Memory for HTTP/2 (mem: anonymous, not moved while c has it; hpack: the
 * inflater, NULL for none) for c to use from its next call on. False when
 * c has some already: give mem back. */
bool obs_cap_h2_offer(struct obs_capture *c, struct obs_h2 *mem,
		      const struct obs_hpack *hpack);

/* After obs_cap_close (not at exit): the memory offered, its header
 * values wiped, for the caller to reuse; NULL when it had none. */
struct obs_h2 *obs_cap_h2_reclaim(struct obs_capture *c);

/* TLS decrypted in the capture (tlsdec.h): a connection whose first bytes
 * sent (on its socket, outside any tunnel) are a TLS ClientHello has its
 * records followed, and once it is TLS 1.3 with a suite known, the layer
 * is asked (obs_cap_dec_wanted, a hint read without the lock) for memory
 * (obs_cap_dec_offer, or obs_cap_dec_refuse) and for the secrets of its
 * client_random (obs_cap_dec_random, obs_cap_dec_keys). Its records of
 * application data are decrypted as their socket calls come, and their
 * plaintext is fed as obs_cap_plain's is (a plaintext call of its
 * direction with the times of the socket calls that carried the record),
 * after the socket call; the socket calls of such a connection are marked
 * OBS_EVF_IN_TLS while it is decrypted (from the memory's offer on, until
 * it is given up; those written while its secrets are awaited are kept
 * open, and marked only once the secrets come: a program that writes no
 * key log, or a connection whose secrets never come, stays runs of
 * records). Off unless obs_cap_decrypt says so. */
void obs_cap_decrypt(struct obs_capture *c);
static inline uint8_t obs_cap_dec_wanted(const struct obs_capture *c)
{
	return __atomic_load_n(&c->dec_want, __ATOMIC_RELAXED);
}
/* Whether the decrypted plaintext's protocol is not chosen yet, with no
 * memory for HTTP/2 (a hint: the caller offers some, obs_cap_h2_offer,
 * so that h2 is followed whoever speaks first). */
bool obs_cap_dec_h2_wanted(const struct obs_capture *c);
bool obs_cap_dec_offer(struct obs_capture *c, struct obs_cap_dec_mem *mem,
		       const struct obs_tlsdec_ops *ops, void *ops_ctx);
void obs_cap_dec_refuse(struct obs_capture *c);
/* The client_random to look the secrets up by, and their length; false
 * when none are awaited. */
bool obs_cap_dec_random(const struct obs_capture *c, uint8_t random[32],
			size_t *len);
/* The secrets: what was held is decrypted and fed now. */
void obs_cap_dec_keys(struct obs_capture *c, const uint8_t *client,
		      const uint8_t *server, size_t len);
/* After obs_cap_close (not at exit): the decryptor's memory, wiped, for
 * the caller to reuse; NULL when it had none. */
struct obs_cap_dec_mem *obs_cap_dec_reclaim(struct obs_capture *c);
/* Why the decryptor stopped, or "on" (for the layer's diagnostics). */
const char *obs_cap_dec_why(const struct obs_capture *c);
/* Bytes run through the cipher, by direction (for the cost's report;
 * the received ones counted past the decryptor's end). */
uint64_t obs_cap_dec_bytes(const struct obs_capture *c, int dir);

void obs_cap_shutdown(struct obs_capture *c, int64_t t_out, int how);
/* close() returned at t_out; flags OBS_EVF_EXIT or OBS_EVF_LOST when the
 * connection ended without one. The process's exit (OBS_EVF_EXIT) ends
 * nothing: other threads may still use the connection until the process
 * is gone (the slicer sees that), and may close it after all. */
void obs_cap_close(struct obs_capture *c, int64_t t_out, uint8_t flags);

#endif
