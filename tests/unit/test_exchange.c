/* test_exchange.c - the exchange state machine fed scripted call sequences.
 *
 * Each test plays the calls a program would make on one connection, with
 * made-up clock readings, and checks the connection and exchange records
 * against the measurement model (docs/measurement-model.md).
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cmocka.h>

#include "exchange.h"

/* ---- a record store on an array, standing in for the spool ---- */

#define MAX_RECORDS 64
static struct obs_record records[MAX_RECORDS];
static int n_records;
static int alloc_limit = MAX_RECORDS;

struct obs_record *obs_record_alloc(void)
{
	if (n_records >= alloc_limit)
		return NULL;
	return &records[n_records++];
}

struct obs_record *obs_record_alloc2(struct obs_record **second)
{
	struct obs_record *first = obs_record_alloc();

	*second = obs_record_alloc();
	return first;
}

/* The spool's segment: a new one for every test (the thread's memory of
 * its last request outlives a test; its records do not). */
static uint32_t epoch;
/* a roll-over as the spool's epoch is read for the n-th time from now
 * (0: none): between the two reads around a reservation */
static unsigned int roll_at;

uint32_t obs_record_epoch(void)
{
	if (roll_at && --roll_at == 0)
		epoch++;
	return epoch;
}

/* HTTP/2 memory and warnings: test_exchange_h2.c tests them; here none. */
struct obs_xh2 *obs_xh2_alloc(void)
{
	return NULL;
}

void obs_xh2_release(struct obs_xh2 *h)
{
	(void)h;
}

void obs_xm_warn(const char *what)
{
	(void)what;
}

static int reset(void **state)
{
	(void)state;
	memset(records, 0, sizeof(records));
	n_records = 0;
	alloc_limit = MAX_RECORDS;
	epoch++;
	roll_at = 0;
	return 0;
}

static const uint8_t loopback[16] = { 127, 0, 0, 1 };

static struct obs_conn conn;

/* Every test runs twice: the second time each send and receive goes the
 * way the hooks send it, the plain connection's path first
 * (obs_xm_send_plain, obs_xm_recv_plain) and the general one when that
 * declines; the records must be the same. */
static bool via_plain;
static unsigned int plain_taken; /* calls the plain path took */

/* announced: the send's entry was obs_xm_send_announce's (the plain way
 * only), else obs_xm_send_begin's, which returned counted. */
static void test_send_settle(struct obs_conn *c, bool counted, bool announced,
			     int64_t t_in, int64_t t_out, ssize_t ret, int err,
			     const struct obs_data *d)
{
	if (via_plain && ret > 0 && d && d->iov && d->iovcnt == 1 &&
	    (size_t)ret <= d->iov[0].iov_len && d->tls_in == OBS_TLSIN_NONE) {
		bool done;

		/* the hooks keep no errno around it: it must set none */
		errno = EDOM;
		done = obs_xm_send_plain(c, &counted, announced, t_in, t_out,
					 (size_t)ret, d);
		assert_int_equal(errno, EDOM);
		if (done) {
			plain_taken++;
			return;
		}
	} else if (announced) {
		counted = obs_xm_send_settle(c, d);
	}
	assert_int_equal(c->ann, 0);
	obs_xm_send_done(c, counted, t_in, t_out, ret, err, d);
}

static void test_send_done(struct obs_conn *c, bool counted, int64_t t_in,
			   int64_t t_out, ssize_t ret, int err,
			   const struct obs_data *d)
{
	test_send_settle(c, counted, false, t_in, t_out, ret, err, d);
}

/* The plain way's entry as the hooks make it: announced when it may
 * begin an exchange of a connection that speaks HTTP/1.x. */
static unsigned int announced_n; /* sends announced */

static void test_send(struct obs_conn *c, int64_t t_in, int64_t t_out,
		      ssize_t ret, int err, const struct obs_data *d)
{
	bool counted = false, announced = false;

	if (via_plain && t_in && d && d->iov && d->iovcnt > 0 &&
	    d->iov[0].iov_len > 0 && d->tls_in == OBS_TLSIN_NONE &&
	    obs_xm_plain_hint(c) && obs_xm_send_needs_entry(c))
		announced = obs_xm_send_announce(c, t_in, d->len);
	if (announced)
		announced_n++;
	else
		counted = obs_xm_send_begin(c, t_in ? t_in : t_out, d);
	test_send_settle(c, counted, announced, t_in, t_out, ret, err, d);
}

static void test_recv(struct obs_conn *c, int64_t t_in, int64_t t_out,
		      ssize_t ret, int err, bool peek, const struct obs_data *d)
{
	static const struct iovec none = { NULL, 1 };
	const struct obs_data eof = { &none, 1, 0, OBS_TLSIN_NONE };

	if (via_plain && ret == 0 && !peek && (!d || d->tls_in == 0))
		d = d ? d : &eof; /* an end of stream, as the hooks see it */
	if (via_plain && ret >= 0 && !peek && d && d->iov && d->iovcnt == 1 &&
	    d->tls_in == OBS_TLSIN_NONE && (size_t)ret <= d->iov[0].iov_len) {
		bool done;

		/* the hooks keep no errno around it: it must set none */
		errno = EDOM;
		done = obs_xm_recv_plain(c, t_in, t_out, (size_t)ret,
					 d->iov[0].iov_base);
		assert_int_equal(errno, EDOM);
		if (done) {
			plain_taken++;
			return;
		}
	}
	obs_xm_recv(c, t_in, t_out, ret, err, peek, d);
}

/* What each test left in the records, the first time (general), to be
 * found again the second (plain): byte for byte. */
#define MAX_TESTS 64
static struct obs_record *snapshots[MAX_TESTS];
static int snapshot_n[MAX_TESTS];
static int test_index;

/* An HTTP record of exchange seq of connection conn_seq at an index below
 * end, or NULL. */
static struct obs_record *http_record(uint64_t conn_seq, uint32_t seq, int end)
{
	for (int i = 0; i < end; i++)
		if (records[i].kind == OBS_REC_HTTP &&
		    records[i].conn_seq == conn_seq &&
		    records[i].u.http.seq == seq)
			return &records[i];
	return NULL;
}

/* Every exchange that refers to another's HTTP record (label_seq) has
 * none of its own, and the one it refers to was written before it and is
 * the same request: what the slicer relies on. */
static bool labels_ok(void)
{
	for (int i = 0; i < n_records; i++) {
		const struct obs_record *r = &records[i];
		const struct obs_record *h;

		if (r->kind != OBS_REC_EXCHANGE || !r->u.exch.label_seq)
			continue;
		h = http_record(r->u.exch.label_conn, r->u.exch.label_seq, i);
		if (!h || http_record(r->conn_seq, r->u.exch.seq, n_records)) {
			fprintf(stderr,
				"exchange %u of connection %llu: label of "
				"exchange %u of connection %llu: %s\n",
				r->u.exch.seq, (unsigned long long)r->conn_seq,
				r->u.exch.label_seq,
				(unsigned long long)r->u.exch.label_conn,
				h ? "and a record of its own" : "not before");
			return false;
		}
	}
	return true;
}

static int snap(void **state)
{
	int i = test_index++;

	(void)state;
	if (i >= MAX_TESTS || !labels_ok())
		return -1;
	if (!via_plain) {
		snapshots[i] = malloc(sizeof(records));
		if (!snapshots[i])
			return -1;
		memcpy(snapshots[i], records, sizeof(records));
		snapshot_n[i] = n_records;
		return 0;
	}
	if (!snapshots[i] || snapshot_n[i] != n_records ||
	    memcmp(snapshots[i], records, sizeof(records)) != 0) {
		fprintf(stderr, "test %d: the plain path's records differ\n",
			i + 1);
		return -1;
	}
	return 0;
}

#define obs_xm_send_done test_send_done
#define obs_xm_send test_send
#define obs_xm_recv test_recv

/* The record of kind (an exchange's, or its HTTP record) of exchange seq,
 * or NULL. */
static struct obs_record *numbered(uint32_t kind, uint32_t seq)
{
	for (int i = 0; i < n_records; i++)
		if (records[i].kind == kind &&
		    (kind == OBS_REC_HTTP ? records[i].u.http.seq
					  : records[i].u.exch.seq) == seq)
			return &records[i];
	return NULL;
}

/* The record of exchange seq, or NULL. */
static struct obs_record *exchange_record(uint32_t seq)
{
	return numbered(OBS_REC_EXCHANGE, seq);
}

/* The n-th published exchange record (1-based), or NULL. */
static struct obs_exch_body *exchange(unsigned int seq)
{
	for (int i = 0; i < n_records; i++)
		if (records[i].kind == OBS_REC_EXCHANGE &&
		    records[i].u.exch.seq == seq)
			return &records[i].u.exch;
	return NULL;
}

static int count_kind(uint32_t kind)
{
	int n = 0;

	for (int i = 0; i < n_records; i++)
		n += records[i].kind == kind;
	return n;
}

static struct obs_conn_body *connection(void)
{
	assert_int_equal(records[0].kind, OBS_REC_CONNECTION);
	return &records[0].u.conn;
}

static void open_blocking(int64_t t1, int64_t t2)
{
	memset(&conn, 0, sizeof(conn));
	obs_xm_connect_first(&conn, 1, 7, AF_INET, loopback, 80, t1, t2, 0, 0);
}

static void open_nonblocking(int64_t t1)
{
	memset(&conn, 0, sizeof(conn));
	obs_xm_connect_first(&conn, 1, 7, AF_INET, loopback, 80, t1, t1 + 5, -1,
			     EINPROGRESS);
}

/* A request/response on an open connection: send [t3,t4], wait, receive. */
static void request(int64_t t3, int64_t t4, size_t ds, int64_t t5, int64_t tfb,
		    int64_t t6, size_t dr)
{
	obs_xm_send(&conn, t3, t4, (ssize_t)ds, 0, NULL);
	obs_xm_recv(&conn, t5, tfb, (ssize_t)(dr / 2), 0, false, NULL);
	obs_xm_recv(&conn, tfb + 1, t6, (ssize_t)(dr - dr / 2), 0, false, NULL);
}

static void test_blocking(void **state)
{
	struct obs_conn_body *cb;
	struct obs_exch_body *x;

	(void)state;
	open_blocking(1000, 1300);
	request(2000, 2100, 80, 2200, 2900, 3500, 1000);
	obs_xm_close(&conn, 4000);

	cb = connection();
	assert_int_equal(cb->t1, 1000);
	assert_int_equal(cb->t2, 1300);
	assert_int_equal(cb->t2_how, OBS_T2_CONNECT);
	assert_int_equal(cb->t7, 4000);
	assert_int_equal(cb->teof, 0);
	assert_int_equal(cb->end_class, OBS_END_CLIENT_CLOSE);
	assert_int_equal(cb->exchanges, 1);
	assert_int_equal(cb->peer_port, 80);
	assert_memory_equal(cb->peer_addr, loopback, 4);
	assert_true(records[0].state & OBS_RS_COMPLETE);

	x = exchange(1);
	assert_non_null(x);
	assert_int_equal(x->t3, 2000);
	assert_int_equal(x->t4, 2100);
	assert_int_equal(x->t5, 2200);
	assert_int_equal(x->tfb, 2900);
	assert_int_equal(x->t6, 3500);
	assert_int_equal(x->ds, 80);
	assert_int_equal(x->dr, 1000);
	assert_int_equal(x->send_calls, 1);
	assert_int_equal(x->recv_calls, 2);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_true(records[1].state & OBS_RS_COMPLETE);
}

static void test_einprogress_then_so_error(void **state)
{
	struct obs_conn_body *cb;

	(void)state;
	open_nonblocking(1000);
	assert_int_equal(conn.phase, OBS_PH_CONNECTING);
	assert_int_equal(connection()->t2, 0);
	obs_xm_so_error(&conn, 1800, 0);
	request(2000, 2100, 50, 2150, 2600, 2700, 10);
	obs_xm_close(&conn, 3000);

	cb = connection();
	assert_int_equal(cb->t2, 1800);
	assert_int_equal(cb->t2_how, OBS_T2_SO_ERROR);
	assert_true(cb->flags & OBS_CF_NONBLOCKING);
	assert_int_equal(exchange(1)->t3, 2000);
}

static void test_einprogress_then_eisconn(void **state)
{
	struct obs_conn_body *cb;

	(void)state;
	open_nonblocking(1000);
	obs_xm_connect_again(&conn, 1410, -1, EALREADY);
	assert_int_equal(connection()->t2, 0);
	obs_xm_connect_again(&conn, 1710, -1, EISCONN);
	cb = connection();
	assert_int_equal(cb->t2, 1710);
	assert_int_equal(cb->t2_how, OBS_T2_RECONNECT);
	/* ab: the second connect returns 0 */
	reset(NULL);
	open_nonblocking(1000);
	obs_xm_connect_again(&conn, 1520, 0, 0);
	assert_int_equal(connection()->t2, 1520);
	assert_int_equal(conn.phase, OBS_PH_UP);
}

static void test_first_io_completes_connect(void **state)
{
	(void)state;
	open_nonblocking(1000);
	obs_xm_send(&conn, 1900, 1950, 20, 0, NULL);
	assert_int_equal(connection()->t2, 1900);
	assert_int_equal(connection()->t2_how, OBS_T2_FIRST_IO);
	assert_int_equal(exchange(1)->t3, 1900);
}

static void test_eagain_before_data(void **state)
{
	struct obs_exch_body *x;

	(void)state;
	open_blocking(1000, 1100);
	obs_xm_send(&conn, 2000, 2050, 100, 0, NULL);
	/* receive attempts while the server works: T5 is the first of them */
	obs_xm_recv(&conn, 2100, 2101, -1, EAGAIN, false, NULL);
	obs_xm_recv(&conn, 2500, 2501, -1, EAGAIN, false, NULL);
	obs_xm_recv(&conn, 2900, 3000, 500, 0, false, NULL);
	obs_xm_recv(&conn, 3100, 3101, -1, EAGAIN, false, NULL);
	obs_xm_recv(&conn, 3300, 3400, 500, 0, false, NULL);
	x = exchange(1);
	assert_int_equal(x->t5, 2100);
	assert_int_equal(x->tfb, 3000);
	assert_int_equal(x->t6, 3400);
	assert_int_equal(x->dr, 1000);
	assert_int_equal(x->recv_calls, 2);
	assert_false(records[1].state & OBS_RS_COMPLETE); /* still in flight */
}

static void test_partial_writes_and_t5_after_last_send(void **state)
{
	struct obs_exch_body *x;

	(void)state;
	open_blocking(1000, 1100);
	obs_xm_send(&conn, 2000, 2010, 4096, 0, NULL);
	obs_xm_send(&conn, 2020, 2030, -1, EAGAIN, NULL);
	/* a receive attempt between two sends does not fix T5 */
	obs_xm_recv(&conn, 2040, 2041, -1, EAGAIN, false, NULL);
	obs_xm_send(&conn, 2100, 2200, 1000, 0, NULL);
	obs_xm_recv(&conn, 2300, 2301, -1, EAGAIN, false, NULL);
	obs_xm_recv(&conn, 2400, 2500, 10, 0, false, NULL);
	x = exchange(1);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(x->t3, 2000);
	assert_int_equal(x->t4, 2200);
	assert_int_equal(x->ds, 5096);
	assert_int_equal(x->send_calls, 2);
	assert_int_equal(x->t5, 2300);
}

static void test_three_keepalive_requests(void **state)
{
	(void)state;
	open_blocking(1000, 1100);
	request(2000, 2010, 70, 2020, 2500, 2600, 300);
	request(3000, 3010, 71, 3020, 3500, 3600, 301);
	request(4000, 4010, 72, 4020, 4500, 4600, 302);
	obs_xm_close(&conn, 5000);

	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 3);
	assert_int_equal(connection()->exchanges, 3);
	for (unsigned int k = 1; k <= 3; k++) {
		struct obs_exch_body *x = exchange(k);
		int64_t base = 1000 * (k + 1);

		assert_non_null(x);
		assert_int_equal(x->t3, base);
		assert_int_equal(x->t4, base + 10);
		assert_int_equal(x->t5, base + 20);
		assert_int_equal(x->tfb, base + 500);
		assert_int_equal(x->t6, base + 600);
		assert_int_equal(x->ds, 69 + k);
		assert_int_equal(x->dr, 299 + k);
	}
	/* every exchange is complete once the connection is closed */
	for (int i = 0; i < n_records; i++)
		assert_true(records[i].state & OBS_RS_COMPLETE);
}

static void test_pending_send_attempt_is_t3(void **state)
{
	(void)state;
	open_blocking(1000, 1100);
	request(2000, 2010, 70, 2020, 2500, 2600, 300);
	obs_xm_send(&conn, 3000, 3001, -1, EAGAIN, NULL);
	obs_xm_send(&conn, 3200, 3300, 70, 0, NULL);
	assert_int_equal(exchange(2)->t3, 3000);
	assert_int_equal(exchange(2)->t4, 3300);
}

static void test_server_speaks_first(void **state)
{
	struct obs_exch_body *banner, *quit;

	(void)state;
	open_blocking(1000, 1100);
	obs_xm_recv(&conn, 1200, 1201, -1, EAGAIN, false, NULL);
	obs_xm_recv(&conn, 1500, 1600, 11, 0, false,
		    NULL);				   /* "220 hello\r\n" */
	obs_xm_send(&conn, 2000, 2010, 6, 0, NULL);	   /* "QUIT\r\n" */
	obs_xm_recv(&conn, 2020, 2300, 9, 0, false, NULL); /* "221 bye\r\n" */
	obs_xm_recv(&conn, 2400, 2500, 0, 0, false, NULL); /* EOF */
	obs_xm_close(&conn, 2600);

	banner = exchange(1);
	assert_non_null(banner);
	assert_true(banner->flags & OBS_XF_SERVER_FIRST);
	assert_int_equal(banner->t3, 0);
	assert_int_equal(banner->t4, 0);
	assert_int_equal(banner->ds, 0);
	assert_int_equal(banner->t5, 1200);
	assert_int_equal(banner->tfb, 1600);
	assert_int_equal(banner->dr, 11);
	quit = exchange(2);
	assert_non_null(quit);
	assert_int_equal(quit->ds, 6);
	assert_int_equal(quit->dr, 9);
	assert_int_equal(quit->t5, 2020);
	assert_int_equal(connection()->end_class, OBS_END_SERVER_CLOSE);
}

static void test_eof(void **state)
{
	struct obs_conn_body *cb;

	(void)state;
	open_blocking(1000, 1100);
	request(2000, 2010, 70, 2020, 2500, 2600, 300);
	obs_xm_recv(&conn, 2700, 2800, 0, 0, false, NULL);
	obs_xm_recv(&conn, 2900, 2950, 0, 0, false,
		    NULL); /* a second EOF read */
	obs_xm_close(&conn, 3000);
	cb = connection();
	assert_int_equal(cb->teof, 2800);
	assert_int_equal(cb->end_class, OBS_END_SERVER_CLOSE);
	assert_int_equal(exchange(1)->t6, 2600); /* EOF is not data */
	assert_int_equal(exchange(1)->dr, 300);
}

static void test_econnreset(void **state)
{
	struct obs_conn_body *cb;

	(void)state;
	open_blocking(1000, 1100);
	obs_xm_send(&conn, 2000, 2010, 70, 0, NULL);
	obs_xm_recv(&conn, 2020, 2500, -1, ECONNRESET, false, NULL);
	obs_xm_close(&conn, 3000);
	cb = connection();
	assert_int_equal(cb->end_class, OBS_END_RESET);
	assert_int_equal(cb->end_errno, ECONNRESET);
	assert_int_equal(exchange(1)->tfb, 0);
	assert_int_equal(exchange(1)->dr, 0);
	/* EPIPE on a send is a reset too */
	reset(NULL);
	open_blocking(1000, 1100);
	obs_xm_send(&conn, 2000, 2010, -1, EPIPE, NULL);
	obs_xm_close(&conn, 3000);
	assert_int_equal(connection()->end_class, OBS_END_RESET);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 0);
}

static void test_epipe_after_own_shutdown_is_no_reset(void **state)
{
	(void)state;
	open_blocking(1000, 1100);
	request(2000, 2010, 70, 2020, 2500, 2600, 300);
	obs_xm_shutdown(&conn, 2700, SHUT_WR);
	obs_xm_send(&conn, 2800, 2801, -1, EPIPE, NULL);
	obs_xm_recv(&conn, 2900, 3000, 0, 0, false, NULL);
	obs_xm_close(&conn, 3100);
	assert_int_equal(connection()->end_class, OBS_END_SERVER_CLOSE);
	assert_int_equal(connection()->tshut, 2700);
	assert_true(connection()->flags & OBS_CF_SHUTDOWN_WR);
}

/* One thread sends while another, already blocked in recv, gets the answer
 * before the sender's bookkeeping runs: the answer belongs to the new
 * request, not to the previous exchange, and is not server-first. */
static void test_shared_connection_answer_before_send_returns(void **state)
{
	struct obs_exch_body *x;
	bool counted;

	(void)state;
	open_blocking(1000, 1100);
	/* first request: the reader (entered at 1500) sees the answer first */
	counted = obs_xm_send_begin(&conn, 2000, NULL);
	assert_true(counted);
	obs_xm_recv(&conn, 1500, 2600, 338, 0, false, NULL);
	obs_xm_send_done(&conn, counted, 2000, 2050, 39, 0, NULL);
	/* second request, same race */
	counted = obs_xm_send_begin(&conn, 3000, NULL);
	obs_xm_recv(&conn, 2700, 3600, 338, 0, false, NULL);
	obs_xm_send_done(&conn, counted, 3000, 3100, 39, 0, NULL);
	/* third request, no race */
	obs_xm_send(&conn, 4000, 4010, 39, 0, NULL);
	obs_xm_recv(&conn, 3700, 4600, 338, 0, false, NULL);
	obs_xm_close(&conn, 5000);

	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 3);
	for (unsigned int k = 1; k <= 3; k++) {
		x = exchange(k);
		assert_non_null(x);
		assert_false(x->flags & OBS_XF_SERVER_FIRST);
		assert_int_equal(x->ds, 39);
		assert_int_equal(x->dr, 338);
		assert_int_equal(x->t3, 1000 * (k + 1));
	}
	x = exchange(1);
	assert_int_equal(x->t4, 2050);
	assert_int_equal(x->t5, 2050); /* a waiting receive counts from T4 */
	assert_int_equal(x->tfb, 2600);
	assert_int_equal(exchange(3)->t5, 4010); /* entered before T4 */
	assert_int_equal(conn.sends_inflight, 0);
}

static void test_connect_refused(void **state)
{
	struct obs_conn_body *cb;

	(void)state;
	memset(&conn, 0, sizeof(conn));
	obs_xm_connect_first(&conn, 1, 7, AF_INET, loopback, 9, 1000, 1050, -1,
			     ECONNREFUSED);
	obs_xm_close(&conn, 1100);
	cb = connection();
	assert_int_equal(cb->end_class, OBS_END_REFUSED);
	assert_int_equal(cb->connect_errno, ECONNREFUSED);
	assert_int_equal(cb->t2, 1050);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 0);
	/* non-blocking: refused learned through SO_ERROR */
	reset(NULL);
	open_nonblocking(1000);
	obs_xm_so_error(&conn, 1300, ECONNREFUSED);
	obs_xm_close(&conn, 1400);
	assert_int_equal(connection()->end_class, OBS_END_REFUSED);
	assert_int_equal(connection()->t2, 1300);
}

static void test_refused_learned_by_io(void **state)
{
	(void)state;
	open_nonblocking(1000);
	obs_xm_recv(&conn, 1200, 1210, -1, EAGAIN, false,
		    NULL); /* still pending */
	assert_int_equal(conn.phase, OBS_PH_CONNECTING);
	obs_xm_recv(&conn, 1300, 1310, -1, ECONNREFUSED, false, NULL);
	obs_xm_close(&conn, 1400);
	assert_int_equal(connection()->end_class, OBS_END_REFUSED);
	assert_int_equal(connection()->connect_errno, ECONNREFUSED);
	assert_int_equal(connection()->t2, 1310);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 0);
}

/* Closed where the layer could not see (its fd number came back from the
 * kernel): lost, no T7; an error that ended it first keeps its class. */
static void test_lost(void **state)
{
	(void)state;
	open_blocking(1000, 1300);
	request(2000, 2100, 80, 2200, 2900, 3500, 1000);
	obs_xm_end(&conn, 0, OBS_END_LOST);
	assert_int_equal(connection()->end_class, OBS_END_LOST);
	assert_int_equal(connection()->t7, 0);
	assert_true(records[0].state & OBS_RS_COMPLETE);
	assert_true(records[1].state & OBS_RS_COMPLETE);

	reset(NULL);
	open_blocking(1000, 1300);
	obs_xm_send(&conn, 2000, 2100, -1, ECONNRESET, NULL);
	obs_xm_end(&conn, 0, OBS_END_LOST);
	assert_int_equal(connection()->end_class, OBS_END_RESET);
}

/* The process leaves with the connection open: exit at that moment, the
 * records complete; an exec that failed takes it back; a close after it
 * (a later destructor) ends it as usual. */
static void test_exit_and_undo(void **state)
{
	struct obs_exch_body *x;

	(void)state;
	open_blocking(1000, 1300);
	request(2000, 2100, 80, 2200, 2900, 3500, 1000);
	obs_xm_send(&conn, 4000, 4100, 80, 0, NULL); /* unanswered */
	obs_xm_exit(&conn, 5000);
	assert_int_equal(connection()->end_class, OBS_END_EXIT);
	assert_int_equal(connection()->t7, 5000);
	for (int i = 0; i < n_records; i++)
		assert_true(records[i].state & OBS_RS_COMPLETE);

	obs_xm_exit_undo(&conn);
	assert_int_equal(connection()->end_class, OBS_END_NONE);
	assert_int_equal(connection()->t7, 0);
	assert_false(records[0].state & OBS_RS_COMPLETE);
	x = exchange(2);
	assert_non_null(x);
	assert_false(exchange_record(2)->state & OBS_RS_COMPLETE);
	assert_true(exchange_record(1)->state & OBS_RS_COMPLETE);

	obs_xm_exit(&conn, 6000);
	obs_xm_close(&conn, 7000);
	assert_int_equal(connection()->end_class, OBS_END_CLIENT_CLOSE);
	assert_int_equal(connection()->t7, 7000);
	obs_xm_exit(&conn, 8000); /* closed: left alone */
	assert_int_equal(connection()->end_class, OBS_END_CLIENT_CLOSE);
	assert_int_equal(connection()->t7, 7000);
}

/* A connection that failed stays what it was at exit. */
static void test_exit_after_refused(void **state)
{
	(void)state;
	memset(&conn, 0, sizeof(conn));
	obs_xm_connect_first(&conn, 1, 7, AF_INET, loopback, 80, 1000, 1100, -1,
			     ECONNREFUSED);
	obs_xm_exit(&conn, 5000);
	assert_int_equal(connection()->end_class, OBS_END_REFUSED);
	assert_int_equal(connection()->t7, 0);
}

static void test_peek_counts_time_not_bytes(void **state)
{
	struct obs_exch_body *x;

	(void)state;
	open_blocking(1000, 1100);
	obs_xm_send(&conn, 2000, 2010, 70, 0, NULL);
	obs_xm_recv(&conn, 2020, 2400, 200, 0, true, NULL); /* wget peeks */
	obs_xm_recv(&conn, 2410, 2420, 200, 0, false, NULL);
	x = exchange(1);
	assert_int_equal(x->t5, 2020);
	assert_int_equal(x->tfb, 2400);
	assert_int_equal(x->t6, 2420);
	assert_int_equal(x->dr, 200);
	assert_true(x->flags & OBS_XF_PEEKED);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
}

static void test_spool_full_loses_records_only(void **state)
{
	(void)state;
	alloc_limit = 1; /* room for the connection only */
	open_blocking(1000, 1100);
	request(2000, 2010, 70, 2020, 2500, 2600, 300);
	request(3000, 3010, 70, 3020, 3500, 3600, 300);
	obs_xm_close(&conn, 4000);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 0);
	assert_int_equal(connection()->exchanges, 2);
	assert_int_equal(connection()->t7, 4000);
}

/* ---- protocols: the bytes the calls moved -------------------------------- */

static struct obs_record *record_of(uint32_t kind)
{
	for (int i = 0; i < n_records; i++)
		if (records[i].kind == kind)
			return &records[i];
	return NULL;
}

/* A send of the bytes p[0..n) (all of them moved). */
static void send_bytes(int64_t t_in, int64_t t_out, const void *p, size_t n)
{
	struct iovec v = { (void *)p, n };
	struct obs_data d = { &v, 1, n };

	obs_xm_send(&conn, t_in, t_out, (ssize_t)n, 0, &d);
}

static void recv_bytes(int64_t t_in, int64_t t_out, const void *p, size_t n)
{
	struct iovec v = { (void *)p, n };
	struct obs_data d = { &v, 1, n };

	obs_xm_recv(&conn, t_in, t_out, (ssize_t)n, 0, false, &d);
}

/* TLS records of the given types and body lengths, back to back, in buf. */
static size_t tls_records(uint8_t *buf, const uint8_t *types,
			  const uint16_t *lens, int n)
{
	size_t at = 0;

	for (int i = 0; i < n; i++) {
		buf[at] = types[i];
		buf[at + 1] = 3;
		buf[at + 2] = 3;
		buf[at + 3] = (uint8_t)(lens[i] >> 8);
		buf[at + 4] = (uint8_t)lens[i];
		memset(buf + at + 5, 0xab, lens[i]);
		at += 5u + lens[i];
	}
	return at;
}

static const char response[] = "HTTP/1.1 404 Not Found\r\nServer: x\r\n\r\n";

static void test_http_fields(void **state)
{
	static const char req1[] =
		"GET /a/b.html?token=SECRET HTTP/1.1\r\n"
		"User-Agent: t\r\nhost:  example.org:8080 \r\n\r\n";
	static const char req2[] =
		"POST http://proxy.example/x/y#f HTTP/1.0\r\n\r\n";
	struct obs_exch_body *x;
	struct obs_record *h;

	(void)state;
	open_blocking(1000, 1100);
	send_bytes(2000, 2010, req1, sizeof(req1) - 1);
	recv_bytes(2020, 2100, response, 10); /* a status line cut short */
	recv_bytes(2110, 2200, response + 10, sizeof(response) - 11);
	send_bytes(3000, 3010, req2, 20); /* the line's rest in a later send */
	send_bytes(3011, 3020, req2 + 20, sizeof(req2) - 21);
	recv_bytes(3030, 3100, response, sizeof(response) - 1);
	x = exchange(1);
	assert_string_equal(x->method, "GET");
	assert_int_equal(x->status, 404); /* from the first two receives */
	h = record_of(OBS_REC_HTTP);
	assert_non_null(h);
	assert_int_equal(h->u.http.seq, 1);
	assert_string_equal(h->u.http.path, "/a/b.html");
	assert_string_equal(h->u.http.host, "example.org:8080");
	for (int i = 0; i < n_records; i++)
		assert_null(
			memmem(&records[i], sizeof(records[i]), "SECRET", 6));
	/* the second request's first send holds no whole request line */
	x = exchange(2);
	assert_string_equal(x->method, "");
	assert_int_equal(count_kind(OBS_REC_HTTP), 1);
	assert_int_equal(x->ds, sizeof(req2) - 1);
}

/* The HTTP record of exchange seq (NULL: none). */
static struct obs_record *http_of(uint32_t seq)
{
	struct obs_record *h = numbered(OBS_REC_HTTP, seq);
	const struct obs_exch_body *x = exchange(seq);

	/* else the one its label refers to (the same request again), as
	 * the slicer takes it */
	if (h || !x || !x->label_seq)
		return h;
	return http_record(x->label_conn, x->label_seq, n_records);
}

/* The Host header remembered per connection (obs_http_seen): a request
 * whose bytes up to the end of its Host line are the last one's takes its
 * host from memory; any difference there (another value, a line added
 * before it, another version, a Host line before the remembered one) is
 * scanned again, and the first Host line counts. Each request in a buffer
 * of exactly its length (a sanitized build catches a read beyond it). */
static void test_http_host_remembered(void **state)
{
	static const char *const reqs[] = {
		"GET /1 HTTP/1.1\r\nConnection: keep-alive\r\n"
		"Host: one.example:8080\r\nAccept: */*\r\n\r\n",
		"GET /second/path HTTP/1.1\r\nConnection: keep-alive\r\n"
		"Host: one.example:8080\r\nX: y\r\n\r\n",
		"GET /3 HTTP/1.1\r\nConnection: keep-alive\r\n"
		"Host: two.example:8080\r\n\r\n",
		"GET /4 HTTP/1.1\r\nHost: three.example\r\n"
		"Connection: keep-alive\r\nHost: two.example:8080\r\n\r\n",
		"GET /5 HTTP/1.0\r\nConnection: keep-alive\r\n"
		"Host: two.example:8080\r\n\r\n",
		"GET /6 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"GET /7 HTTP/1.0\r\nConnection: keep-alive\r\n"
		"Host: two.example:8080\r\n\r\n",
	};
	static const char *const hosts[] = {
		"one.example:8080", "one.example:8080", "two.example:8080",
		"three.example",    "two.example:8080", "",
		"two.example:8080",
	};
	int64_t t = 2000;

	(void)state;
	open_blocking(1000, 1100);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++, t += 1000) {
		size_t n = strlen(reqs[i]);
		char *buf = malloc(n);

		assert_non_null(buf);
		memcpy(buf, reqs[i], n);
		send_bytes(t, t + 10, buf, n);
		free(buf);
		recv_bytes(t + 20, t + 100, response, sizeof(response) - 1);
		assert_non_null(http_of((uint32_t)i + 1));
		assert_string_equal(http_of((uint32_t)i + 1)->u.http.host,
				    hosts[i]);
	}
	assert_string_equal(http_of(2)->u.http.path, "/second/path");
}

/* The whole request remembered (obs_http_recall): the same bytes from the
 * first to the end of the Host line are the same request (method, path,
 * host, flags from memory); a difference anywhere there (the path, the
 * query alone, the method, the version, the host) is parsed again, and
 * what follows the Host line never matters. A request shorter than what is
 * remembered is parsed. Each in a buffer of exactly its length. */
/* A request whose path is longer than its field, and what is kept of it. */
#define LONG_CASE                                                              \
	{                                                                      \
		"GET /0123456789012345678901234567890123456789012345678901"    \
		"234567890123456789 HTTP/1.1\r\nHost: i.example\r\n\r\n",      \
			"GET",                                                 \
			"/012345678901234567890123456789012345678901234567890" \
			"123456789012",                                        \
			"i.example", OBS_HF_PATH_CUT                           \
	}

static void test_http_request_recalled(void **state)
{
	static const struct {
		const char *req;
		const char *method, *path, *host;
		uint32_t flags;
	} cases[] = {
		{ "GET /a?x=1 HTTP/1.1\r\nHost: h.example\r\nA: 1\r\n\r\n",
		  "GET", "/a", "h.example", 0 },
		{ "GET /a?x=1 HTTP/1.1\r\nHost: h.example\r\nA: 1\r\n\r\n",
		  "GET", "/a", "h.example", 0 },
		/* from memory (third), then another header after Host */
		{ "GET /a?x=1 HTTP/1.1\r\nHost: h.example\r\nA: 1\r\n\r\n",
		  "GET", "/a", "h.example", 0 },
		{ "GET /a?x=1 HTTP/1.1\r\nHost: h.example\r\nB: 22\r\n\r\n",
		  "GET", "/a", "h.example", 0 },
		/* the query alone differs: parsed, the same path */
		{ "GET /a?x=2 HTTP/1.1\r\nHost: h.example\r\n\r\n", "GET", "/a",
		  "h.example", 0 },
		{ "GET /b HTTP/1.1\r\nHost: h.example\r\n\r\n", "GET", "/b",
		  "h.example", 0 },
		{ "GET /b HTTP/1.1\r\nHost: h.example\r\n\r\n", "GET", "/b",
		  "h.example", 0 },
		{ "PUT /b HTTP/1.1\r\nHost: h.example\r\n\r\n", "PUT", "/b",
		  "h.example", 0 },
		{ "PUT /b HTTP/1.1\r\nHost: i.example\r\n\r\n", "PUT", "/b",
		  "i.example", 0 },
		{ "PUT /b HTTP/1.0\r\nHost: i.example\r\n\r\n", "PUT", "/b",
		  "i.example", 0 },
		/* a path longer than its field: cut, from memory too (the
		 * same request twice) */
		LONG_CASE,
		LONG_CASE,
		/* shorter than the memory: the request line alone */
		{ "GET /0123 HTTP/1.1\r\n", "GET", "/0123", "", 0 },
		{ "GET /b HTTP/1.1\r\nHost: h.example\r\n\r\n", "GET", "/b",
		  "h.example", 0 },
		{ "GET /b HTTP/1.1\r\nHost: h.example\r\n\r\n", "GET", "/b",
		  "h.example", 0 },
		{ "GET /b HTTP/1.1\r\nHost: h.exampl\r\n\r\n", "GET", "/b",
		  "h.exampl", 0 },
	};
	int64_t t = 2000;

	(void)state;
	open_blocking(1000, 1100);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]);
	     i++, t += 1000) {
		size_t n = strlen(cases[i].req);
		char *buf = malloc(n);
		struct obs_record *h;
		char path[OBS_HTTP_PATH_MAX + 1] = { 0 };

		assert_non_null(buf);
		memcpy(buf, cases[i].req, n);
		send_bytes(t, t + 10, buf, n);
		free(buf);
		recv_bytes(t + 20, t + 100, response, sizeof(response) - 1);
		h = http_of((uint32_t)i + 1);
		assert_non_null(h);
		memcpy(path, h->u.http.path, OBS_HTTP_PATH_MAX);
		assert_string_equal(exchange((uint32_t)i + 1)->method,
				    cases[i].method);
		assert_string_equal(path, cases[i].path);
		assert_string_equal(h->u.http.host, cases[i].host);
		assert_int_equal(h->u.http.flags, cases[i].flags);
		if (i >= 2 && strcmp(cases[i].req, cases[i - 1].req) == 0 &&
		    strstr(cases[i].req, "Host:")) {
			/* the same request again (a connection remembers
			 * from its second on): no record of its own, a
			 * reference to the last one's (labels_ok checks it) */
			assert_null(numbered(OBS_REC_HTTP, (uint32_t)i + 1));
			assert_int_equal(exchange((uint32_t)i + 1)->label_seq,
					 i);
		}
	}
	for (int i = 0; i < n_records; i++)
		assert_null(memmem(&records[i], sizeof(records[i]), "x=", 2));
}

/* What a connection remembers of its requests is wiped when it ends, also
 * when the last request could not be remembered (no Host line) and the
 * memory was only marked empty. */
static void test_http_memory_wiped(void **state)
{
	static const char a[] =
		"GET /q?k=SECRET HTTP/1.1\r\nHost: h.example\r\n\r\n";
	static const char b[] = "GET /n HTTP/1.1\r\n\r\n";

	(void)state;
	open_blocking(1000, 1100);
	send_bytes(2000, 2010, a, sizeof(a) - 1);
	recv_bytes(2020, 2100, response, sizeof(response) - 1);
	send_bytes(3000, 3010, a, sizeof(a) - 1);
	recv_bytes(3020, 3100, response, sizeof(response) - 1);
	send_bytes(4000, 4010, b, sizeof(b) - 1);
	recv_bytes(4020, 4100, response, sizeof(response) - 1);
	assert_string_equal(http_of(3)->u.http.path, "/n");
	obs_xm_close(&conn, 5000);
	assert_null(memmem(&conn, sizeof(conn), "SECRET", 6));
}

/* The same request again refers to the remembered one's HTTP record only
 * within one spool segment: after a roll-over it writes its own (and is
 * referred to from then on), also when the roll-over comes between the
 * two reads of the epoch around its exchange's reservation. */
static void test_http_ref_epoch(void **state)
{
	/* (a header before Host: the connection's memory, not the
	 * thread's) */
	static const char a[] =
		"GET /r HTTP/1.1\r\nAccept: */*\r\nHost: r.example\r\n\r\n";
	int64_t t = 2000;

	(void)state;
	open_blocking(1000, 1100);
	for (uint32_t i = 1; i <= 8; i++, t += 1000) {
		if (i == 4)
			epoch++; /* a roll-over between exchanges 3 and 4 */
		if (i == 6)
			roll_at = 2; /* ... during exchange 6's reservation */
		send_bytes(t, t + 10, a, sizeof(a) - 1);
		recv_bytes(t + 20, t + 100, response, sizeof(response) - 1);
		assert_string_equal(http_of(i)->u.http.path, "/r");
		assert_string_equal(http_of(i)->u.http.host, "r.example");
	}
	/* own records: the first two (a connection remembers from its
	 * second request on), the first after each roll-over */
	for (uint32_t i = 1; i <= 8; i++) {
		bool own = i == 1 || i == 2 || i == 4 || i == 6;

		assert_int_equal(numbered(OBS_REC_HTTP, i) != NULL, own);
		assert_int_equal(exchange(i)->label_seq, own	  ? 0
							 : i == 3 ? 2
							 : i == 5 ? 4
								  : 6);
	}
}

/* A connection per request (ab without keep-alive): the thread remembers
 * the last request whose first bytes were only its request line, with no
 * query string, and a Host line (what a record keeps anyway); the same
 * bytes on the next connection are that request. Anything else is parsed:
 * a query, a header before Host, another host, a shorter request. */
static void test_http_thread_recalled(void **state)
{
	static const struct {
		const char *req;
		const char *path, *host;
	} cases[] = {
		{ "GET /t/a HTTP/1.0\r\nHost: t.example\r\nUser-Agent: x\r\n\r\n",
		  "/t/a", "t.example" },
		{ "GET /t/a HTTP/1.0\r\nHost: t.example\r\nUser-Agent: y\r\n\r\n",
		  "/t/a", "t.example" },
		{ "GET /t/a HTTP/1.0\r\nHost: t.example\r\n\r\n", "/t/a",
		  "t.example" },
		{ "GET /t/a?k=SECRET HTTP/1.0\r\nHost: t.example\r\n\r\n",
		  "/t/a", "t.example" },
		{ "GET /t/a?k=SECRET HTTP/1.0\r\nHost: t.example\r\n\r\n",
		  "/t/a", "t.example" },
		{ "GET /t/a HTTP/1.0\r\nCookie: SECRET\r\nHost: u.example\r\n\r\n",
		  "/t/a", "u.example" },
		{ "GET /t/a HTTP/1.0\r\nHost: t.example\r\n\r\n", "/t/a",
		  "t.example" },
		{ "GET /t/a HTTP/1.0\r\nHost: t.exampl\r\n\r\n", "/t/a",
		  "t.exampl" },
		{ "GET /t/a HTTP/1.0\r\nHost: t.example\r\n\r\n", "/t/a",
		  "t.example" },
		{ "GET /t/a HTTP/1.0\r\n\r\n", "/t/a", "" },
		{ "GET /t/b HTTP/1.0\r\nHost: t.example\r\n\r\n", "/t/b",
		  "t.example" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].req);
		char *buf = malloc(n);
		struct obs_record *h;

		assert_non_null(buf);
		memcpy(buf, cases[i].req, n);
		reset(NULL);
		open_blocking(1000, 1100);
		send_bytes(2000, 2010, buf, n);
		free(buf);
		recv_bytes(2020, 2100, response, sizeof(response) - 1);
		obs_xm_close(&conn, 3000);
		h = http_of(1);
		assert_non_null(h);
		assert_string_equal(exchange(1)->method, "GET");
		assert_string_equal(h->u.http.path, cases[i].path);
		assert_string_equal(h->u.http.host, cases[i].host);
		assert_int_equal(h->u.http.flags, 0);
		for (int j = 0; j < n_records; j++)
			assert_null(memmem(&records[j], sizeof(records[j]),
					   "SECRET", 6));
		/* nor what the thread remembers */
		assert_null(memmem(obs_xm_thread_seen(),
				   sizeof(struct obs_http_seen), "SECRET", 6));
	}
}

/* The waits between the calls of plain HTTP exchanges (run both ways,
 * the records compared): a receive that finds nothing yet starts T5 and
 * the answer's first bytes keep it; a send after such a receive (the
 * request's rest) starts the wait again; a send that could not go while
 * the answer was coming is no T3 once more of the answer came. */
static void test_plain_waits(void **state)
{
	static const char req[] = "GET /w HTTP/1.1\r\nHost: w\r\n\r\n";
	size_t len = sizeof(response) - 1, half = (sizeof(req) - 1) / 2;

	(void)state;
	open_blocking(1000, 1100);
	send_bytes(2000, 2010, req, sizeof(req) - 1);
	obs_xm_recv(&conn, 2020, 2030, -1, EAGAIN, false, NULL);
	recv_bytes(2100, 2200, response, len);
	assert_int_equal(exchange(1)->t5, 2020);
	assert_int_equal(exchange(1)->tfb, 2200);
	send_bytes(3000, 3010, req, half);
	obs_xm_recv(&conn, 3020, 3025, -1, EAGAIN, false, NULL);
	send_bytes(3030, 3040, req + half, sizeof(req) - 1 - half);
	assert_int_equal(exchange(2)->t5, 0);
	recv_bytes(3050, 3100, response, len / 2);
	assert_int_equal(exchange(2)->t5, 3050);
	obs_xm_send(&conn, 3200, 3210, -1, EAGAIN, NULL);
	recv_bytes(3300, 3400, response + len / 2, len - len / 2);
	send_bytes(4000, 4010, req, sizeof(req) - 1);
	recv_bytes(4020, 4100, response, len);
	assert_int_equal(exchange(3)->t3, 4000);
	/* a send that could not go is the next exchange's T3 */
	obs_xm_send(&conn, 5000, 5005, -1, EAGAIN, NULL);
	send_bytes(5010, 5020, req, sizeof(req) - 1);
	recv_bytes(5030, 5100, response, len);
	assert_int_equal(exchange(4)->t3, 5000);
	/* the peer closes after an answer, then before the next one */
	obs_xm_recv(&conn, 5200, 5210, 0, 0, false, NULL);
	assert_int_equal(connection()->teof, 5210);
	send_bytes(6000, 6010, req, sizeof(req) - 1);
	obs_xm_recv(&conn, 6020, 6030, 0, 0, false, NULL);
	assert_int_equal(exchange(5)->t5, 6020);
	assert_int_equal(connection()->teof, 5210);
	assert_int_equal(exchange(2)->dr, len);
	assert_int_equal(exchange(2)->recv_calls, 2);
	assert_int_equal(exchange(2)->send_calls, 2);
	assert_int_equal(exchange(2)->status, 404);
}

/* What the plain way declines, leaving everything as it was for the
 * general one (the hooks then attach HTTP/2 memory, walk TLS records...):
 * a first send that is the HTTP/2 preface, a connection not up yet, a
 * 101 answer. Called directly, as the hooks do. */
static void test_plain_declines(void **state)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	static const char req[] = "GET /u HTTP/1.1\r\nHost: u\r\n"
				  "Upgrade: h2c\r\n\r\n";
	static const char up[] = "HTTP/1.1 101 Switching Protocols\r\n\r\n";
	struct iovec v = { (void *)preface, sizeof(preface) - 1 };
	struct obs_data d = { &v, 1, sizeof(preface) - 1, 0 };
	bool counted;

	(void)state;
	open_blocking(1000, 1100);
	counted = obs_xm_send_begin(&conn, 2000, &d);
	assert_true(counted);
	assert_false(obs_xm_send_plain(&conn, &counted, false, 2000, 2010,
				       v.iov_len, &d));
	assert_int_equal(conn.proto, OBS_PROTO_UNKNOWN);
	assert_int_equal(conn.sends_inflight, 1);
	obs_xm_send_done(&conn, counted, 2000, 2010, (ssize_t)v.iov_len, 0, &d);

	open_nonblocking(3000);
	v.iov_base = (void *)req;
	v.iov_len = d.len = sizeof(req) - 1;
	counted = obs_xm_send_begin(&conn, 3100, &d);
	assert_false(obs_xm_send_plain(&conn, &counted, false, 3100, 3110,
				       v.iov_len, &d));
	obs_xm_send_done(&conn, counted, 3100, 3110, (ssize_t)v.iov_len, 0, &d);
	assert_int_equal(conn.phase, OBS_PH_UP); /* the general way's */
	v.iov_base = (void *)up;
	v.iov_len = d.len = sizeof(up) - 1;
	assert_false(obs_xm_recv_plain(&conn, 3200, 3210, v.iov_len, up));
	assert_int_equal(conn.xphase, OBS_X_SENDING);
}

/* The request parse on its own, each case in a buffer of exactly its
 * length (a sanitized build catches a read beyond it): the target scanned
 * sixteen bytes a step and byte by byte, the Host line first or later,
 * any case, cut fields, and what is no request line. */
static void test_http_parse(void **state)
{
	static const struct {
		const char *in;
		bool ok;
		const char *method, *path, *host;
		uint32_t flags;
	} cases[] = {
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", true, "GET", "/", "a",
		  0 },
		{ "GET /x HTTP/1.0\r\nConnection: k\r\nHOST:\tb.c:81 \r\n\r\n",
		  true, "GET", "/x", "b.c:81", 0 },
		{ "PUT /0123456789abcdef0123/x?q=1&r=2 HTTP/1.1\r\n"
		  "Accept: */*\r\nUser-Agent: a-rather-long-agent/1.0\r\n"
		  "hOsT: far.example\r\n\r\n",
		  true, "PUT", "/0123456789abcdef0123/x", "far.example", 0 },
		{ "DELETE /p#frag HTTP/1.1\r\n\r\n", true, "DELETE", "/p", "",
		  0 },
		{ "GET ?only HTTP/1.1\r\nHost: h\r\n", true, "GET", "/", "h",
		  0 },
		{ "GET http://u.example HTTP/1.1\r\n\r\n", true, "GET", "/", "",
		  0 },
		{ "PROPFIND /d HTTP/1.1\r\nHost: "
		  "0123456789012345678901234567890123456789xyz\r\n\r\n",
		  true, "PROPFIND", "/d",
		  "0123456789012345678901234567890123456789", OBS_HF_HOST_CUT },
		{ "GET /a HTTP/1.1\r\nHost: no-line-end", true, "GET", "/a", "",
		  0 },
		{ "GET /a HTTP/1.1\r\nX-Host: x\r\n\r\n", true, "GET", "/a", "",
		  0 },
		{ "GET /a\nb HTTP/1.1\r\n\r\n", false, "", "", "", 0 },
		{ "GET /a?b\nc HTTP/1.1\r\n\r\n", false, "", "", "", 0 },
		{ "GET /a HTTP/2.0\r\n\r\n", false, "", "", "", 0 },
		{ "GE /a HTTP/1.1\r\n\r\n", false, "", "", "", 0 },
		{ "get /a HTTP/1.1\r\n\r\n", false, "", "", "", 0 },
		{ "GET  HTTP/1.1\r\n\r\n", false, "", "", "", 0 },
		{ "GET /a HTTP/1", false, "", "", "", 0 },
		{ "GET /a HTTP/1.", true, "GET", "/a", "", 0 },
		{ "GET /0123456789abcdef0123456789abcdef", false, "", "", "",
		  0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].in);
		uint8_t *buf = malloc(n);
		struct obs_http_req req;

		assert_non_null(buf);
		memcpy(buf, cases[i].in, n);
		memset(&req, 0x55, sizeof(req));
		assert_int_equal(obs_http_request(buf, n, &req), cases[i].ok);
		if (cases[i].ok) {
			assert_string_equal(req.method, cases[i].method);
			assert_memory_equal(req.path, cases[i].path,
					    strlen(cases[i].path));
			if (strlen(cases[i].path) < sizeof(req.path))
				assert_int_equal(
					req.path[strlen(cases[i].path)], 0);
			assert_memory_equal(req.host, cases[i].host,
					    strlen(cases[i].host));
			if (strlen(cases[i].host) < sizeof(req.host))
				assert_int_equal(
					req.host[strlen(cases[i].host)], 0);
			assert_int_equal(req.flags, cases[i].flags);
		}
		free(buf);
	}
}

static void test_http_status_and_not_http(void **state)
{
	static const char req[] = "HEAD / HTTP/1.1\r\n\r\n";
	static const char redis[] = "*1\r\n$4\r\nPING\r\n";

	(void)state;
	open_blocking(1000, 1100);
	send_bytes(2000, 2010, req, sizeof(req) - 1);
	recv_bytes(2020, 2100, response, sizeof(response) - 1);
	assert_string_equal(exchange(1)->method, "HEAD");
	assert_int_equal(exchange(1)->status, 404);
	assert_int_equal(conn.proto, OBS_PROTO_HTTP);
	{
		/* to a proxy: absolute form; a path longer than the field */
		static const char abs[] =
			"OPTIONS https://h.example:8443/"
			"0123456789012345678901234567890123456789"
			"0123456789012345678901234567890123456789?q HTTP/1.1\r\n"
			"Host: h.example:8443\r\n\r\n";
		struct obs_record *h = NULL;

		send_bytes(3000, 3010, abs, sizeof(abs) - 1);
		for (int i = 0; i < n_records; i++)
			if (records[i].kind == OBS_REC_HTTP &&
			    records[i].u.http.seq == 2)
				h = &records[i];
		assert_non_null(h);
		assert_string_equal(exchange(2)->method, "OPTIONS");
		assert_memory_equal(h->u.http.path, "/0123456789", 11);
		assert_int_equal(h->u.http.path[63], '2');
		assert_int_equal(h->u.http.flags, OBS_HF_PATH_CUT);
		assert_string_equal(h->u.http.host, "h.example:8443");
	}

	reset(NULL);
	open_blocking(1000, 1100);
	send_bytes(2000, 2010, redis, sizeof(redis) - 1);
	recv_bytes(2020, 2100, "+PONG\r\n", 7);
	send_bytes(3000, 3010, req, sizeof(req) - 1); /* looks like HTTP now */
	recv_bytes(3020, 3100, response, sizeof(response) - 1);
	assert_int_equal(conn.proto, OBS_PROTO_OTHER);
	assert_string_equal(exchange(2)->method, "");
	assert_int_equal(exchange(2)->status, 0);
	assert_int_equal(count_kind(OBS_REC_HTTP), 0);
}

/* Answers of other statuses, one after another on one connection, and
 * on a connection after it: the plain way remembers the last answer's
 * first twelve bytes and its status, and keeps them across connections
 * (a connection's state from the pool is not cleared of them); an answer
 * that begins otherwise is read anew. */
static void test_http_status_changes(void **state)
{
	static const char req[] = "GET /s HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char *const resp[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n",
	};
	static const uint16_t want[] = { 200, 200, 404, 404, 200, 0, 503 };
	uint64_t a;
	uint32_t b;
	uint16_t last;

	(void)state;
	open_blocking(1000, 1100);
	for (unsigned int i = 0; i < 7; i++) {
		int64_t t = 2000 + 1000 * (int64_t)i;

		send_bytes(t, t + 10, req, sizeof(req) - 1);
		recv_bytes(t + 20, t + 100, resp[i], strlen(resp[i]));
		assert_int_equal(exchange(i + 1)->status, want[i]);
	}
	/* a connection after it, with what the pool leaves in the state */
	a = conn.status_a;
	b = conn.status_b;
	last = conn.status_last;
	reset(NULL);
	open_blocking(20000, 20100);
	conn.status_a = a;
	conn.status_b = b;
	conn.status_last = last;
	send_bytes(21000, 21010, req, sizeof(req) - 1);
	recv_bytes(21020, 21100, resp[6], strlen(resp[6]));
	send_bytes(22000, 22010, req, sizeof(req) - 1);
	recv_bytes(22020, 22100, resp[0], strlen(resp[0]));
	assert_int_equal(exchange(1)->status, 503);
	assert_int_equal(exchange(2)->status, 200);
}

static void peek_bytes(int64_t t_in, int64_t t_out, const void *p, size_t n)
{
	struct iovec v = { (void *)p, n };
	struct obs_data d = { &v, 1, n };

	obs_xm_recv(&conn, t_in, t_out, (ssize_t)n, 0, true, &d);
}

/* The status line across receives: axel reads its headers a byte at a
 * time; PHP's streams peek at one byte first (its bytes are read again:
 * not gathered twice, not counted in Dr); wget peeks at the headers. */
static void test_http_status_across_receives(void **state)
{
	static const char req[] = "GET /x HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char resp[] =
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	size_t len = sizeof(resp) - 1;

	(void)state;
	open_blocking(1000, 1100);
	send_bytes(2000, 2010, req, sizeof(req) - 1); /* axel */
	for (size_t i = 0; i < len; i++)
		recv_bytes(2020 + 10 * (int64_t)i, 2025 + 10 * (int64_t)i,
			   resp + i, 1);
	assert_int_equal(exchange(1)->status, 200);
	assert_int_equal(exchange(1)->tfb, 2025);
	assert_int_equal(exchange(1)->dr, len);

	send_bytes(3000, 3010, req, sizeof(req) - 1); /* PHP */
	peek_bytes(3020, 3030, resp, 1);
	recv_bytes(3040, 3050, resp, 5);
	peek_bytes(3060, 3070, resp + 5, 3); /* "1.1" */
	recv_bytes(3080, 3090, resp + 5, len - 5);
	assert_int_equal(exchange(2)->status, 200);
	assert_int_equal(exchange(2)->tfb, 3030);
	assert_int_equal(exchange(2)->dr, len);
	assert_true(exchange(2)->flags & OBS_XF_PEEKED);

	send_bytes(4000, 4010, req, sizeof(req) - 1); /* wget */
	peek_bytes(4020, 4030, resp, len);
	recv_bytes(4040, 4050, resp, len);
	assert_int_equal(exchange(3)->status, 200);
	assert_int_equal(exchange(3)->dr, len);

	/* a peek whose bytes complete the line gives it; a status that is
	 * not one stops the looking after 16 bytes */
	send_bytes(5000, 5010, req, sizeof(req) - 1);
	recv_bytes(5020, 5030, resp, 4);
	peek_bytes(5040, 5050, resp + 4, len - 4);
	assert_int_equal(exchange(4)->status, 200);
	send_bytes(6000, 6010, req, sizeof(req) - 1);
	recv_bytes(6020, 6030, "HTTP/1.1 2x0 OK\r\n", 17);
	recv_bytes(6040, 6050, resp, len);
	assert_int_equal(exchange(5)->status, 0);
	assert_int_equal(conn.plain_rx_seq, 5);
}

/* A send in two steps, its answer received in between (another thread). */
static bool send_starts(int64_t t_in, const void *p, size_t n, struct iovec *v,
			struct obs_data *d)
{
	v->iov_base = (void *)p;
	v->iov_len = n;
	d->iov = v;
	d->iovcnt = 1;
	d->len = n;
	d->tls_in = 0;
	return obs_xm_send_begin(&conn, t_in, d);
}

/* A send whose answer another thread receives before it returns, and
 * whose buffers are gone by then (its thread left the call by a longjmp, or
 * was cancelled inside it, and the memory was reused): the receive begins
 * the exchange and reads the answer's status; the label was the send's to
 * give when it returned, and it never does. Nothing reads the caller's
 * buffers after the send left them (a sanitized build catches a read of
 * the freed one), and nothing of the request is kept. */
static void test_shared_connection_sender_gone(void **state)
{
	static const char req[] = "GET /gone/path?q=SECRET HTTP/1.1\r\n"
				  "Host: h.example\r\n\r\n";
	size_t n = sizeof(req) - 1;
	char *buf = malloc(n);
	struct iovec *v = malloc(sizeof(*v));
	struct obs_data d;

	(void)state;
	assert_non_null(buf);
	assert_non_null(v);
	memcpy(buf, req, n);
	open_blocking(1000, 1100);
	(void)send_starts(2000, buf, n, v, &d);
	memset(buf, 'X', n); /* reused, then gone */
	free(buf);
	free(v);
	recv_bytes(2300, 2400, response, sizeof(response) - 1);
	assert_int_equal(exchange(1)->t3, 2000);
	assert_int_equal(exchange(1)->status, 404);
	assert_string_equal(exchange(1)->method, "");
	assert_null(record_of(OBS_REC_HTTP));
	for (int i = 0; i < n_records; i++)
		assert_null(
			memmem(&records[i], sizeof(records[i]), "SECRET", 6));
	/* the connection's end wipes what it kept of the request */
	obs_xm_close(&conn, 4000);
	assert_null(memmem(&conn, sizeof(conn), "SECRET", 6));
	assert_null(memmem(&conn, sizeof(conn), "h.example", 9));
}

/* A receive that begins the exchange of a send under way takes the
 * answer's status; the send, when it returns, labels the exchange from
 * its bytes, or, when they are no HTTP/1.x request, takes the status
 * back. */
static void test_shared_connection_label_late(void **state)
{
	static const char req[] = "GET /late HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char junk[] = "\x01\x02 no request line here\r\n";
	size_t len = sizeof(response) - 1;
	struct iovec v;
	struct obs_data d;
	bool counted;

	(void)state;
	open_blocking(1000, 1100);
	send_bytes(1500, 1510, req, sizeof(req) - 1);
	recv_bytes(1520, 1600, response, len);
	counted = send_starts(2000, req, sizeof(req) - 1, &v, &d);
	recv_bytes(2300, 2400, response, len);
	assert_string_equal(exchange(2)->method, ""); /* not yet */
	assert_int_equal(exchange(2)->status, 404);
	obs_xm_send_done(&conn, counted, 2000, 2500, sizeof(req) - 1, 0, &d);
	assert_string_equal(exchange(2)->method, "GET");
	assert_int_equal(exchange(2)->status, 404);
	assert_non_null(http_of(2));
	assert_string_equal(http_of(2)->u.http.path, "/late");
	assert_false(conn.x_label_late);
	counted = send_starts(3000, junk, sizeof(junk) - 1, &v, &d);
	recv_bytes(3300, 3400, response, len);
	obs_xm_send_done(&conn, counted, 3000, 3500, sizeof(junk) - 1, 0, &d);
	assert_string_equal(exchange(3)->method, "");
	assert_int_equal(exchange(3)->status, 0);
	assert_null(http_of(3));
	assert_int_equal(exchange(3)->ds, sizeof(junk) - 1);
	assert_int_equal(conn.sends_inflight, 0);
}

/* Java's HttpClient: the caller's thread writes, the selector thread
 * reads, and the answer's bookkeeping runs before the writer's send
 * returns. The request's fields come from its buffer, read at the send's
 * entry; T4 is no later than the receive's entry (or TFB, for a receive
 * waiting since before T3): no negative time. */
static void test_shared_connection_fields_and_order(void **state)
{
	static const char req[] =
		"GET /a/b?q=SECRET HTTP/1.1\r\nHost: h\r\n\r\n";
	size_t n = sizeof(req) - 1, len = sizeof(response) - 1;
	struct iovec v;
	struct obs_data d;
	struct obs_exch_body *x;
	struct obs_record *h;
	bool counted;

	(void)state;
	open_blocking(1000, 1100);
	counted = send_starts(2000, req, n, &v, &d);
	recv_bytes(2300, 2400, response, len); /* entered after T3 */
	obs_xm_send_done(&conn, counted, 2000, 9000, (ssize_t)n, 0, &d);
	x = exchange(1);
	assert_string_equal(x->method, "GET");
	assert_int_equal(x->status, 404);
	assert_int_equal(x->t3, 2000);
	assert_int_equal(x->t4, 2300);
	assert_int_equal(x->t5, 2300);
	assert_int_equal(x->tfb, 2400);
	assert_int_equal(x->ds, n);
	assert_int_equal(x->dr, len);
	h = record_of(OBS_REC_HTTP);
	assert_non_null(h);
	assert_string_equal(h->u.http.path, "/a/b");
	assert_int_equal(conn.proto, OBS_PROTO_HTTP);
	/* a reader waiting since before the request */
	counted = send_starts(3000, req, n, &v, &d);
	recv_bytes(2500, 3500, response, len);
	obs_xm_send_done(&conn, counted, 3000, 5000, (ssize_t)n, 0, &d);
	x = exchange(2);
	assert_int_equal(x->t3, 3000);
	assert_int_equal(x->t4, 3500);
	assert_int_equal(x->t5, 3500);
	assert_int_equal(x->tfb, 3500);
	assert_int_equal(x->status, 404);
	assert_string_equal(x->method, "GET");
	/* no race: as ever */
	counted = send_starts(4000, req, n, &v, &d);
	obs_xm_send_done(&conn, counted, 4000, 4010, (ssize_t)n, 0, &d);
	recv_bytes(4020, 4500, response, len);
	x = exchange(3);
	assert_int_equal(x->t4, 4010);
	assert_int_equal(x->t5, 4020);
	/* the third the same request as the second, remembered: its label
	 * refers to the second's record */
	assert_int_equal(count_kind(OBS_REC_HTTP), 2);
	assert_int_equal(x->label_seq, 2);
	assert_string_equal(http_of(3)->u.http.path, "/a/b");
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 3);
	assert_int_equal(conn.sends_inflight, 0);
}

/* A send announced without the lock (obs_xm_send_announce, the hooks'
 * entry on a connection that speaks HTTP/1.x): one at a time; the first
 * locked section after it registers it as obs_xm_send_begin would have,
 * so that a receive in another thread that brings its answer before the
 * send's own bookkeeping begins its exchange at its T3, and the send,
 * settling, labels it (its buffers' address put in); an announcement that
 * nothing claimed is registered by the send itself; a send that fails
 * settles it too, and its entry is the next exchange's T3. */
static void test_announced_send(void **state)
{
	static const char req[] = "GET /ann HTTP/1.1\r\nHost: h\r\n\r\n";
	size_t n = sizeof(req) - 1, len = sizeof(response) - 1;
	struct iovec v = { (void *)req, n };
	struct obs_data d = { &v, 1, n, OBS_TLSIN_NONE };
	struct obs_exch_body *x;
	bool counted = false;

	(void)state;
	open_blocking(1000, 1100);
	/* a connection's first send: announced, nothing read; settled, its
	 * bytes (no TLS hello) make the connection HTTP/1.x */
	assert_true(obs_xm_send_announce(&conn, 1200, n));
	assert_true(
		obs_xm_send_plain(&conn, &counted, true, 1200, 1210, n, &d));
	assert_true(counted);
	assert_int_equal(conn.proto, OBS_PROTO_HTTP);
	recv_bytes(1220, 1300, response, len);
	assert_int_equal(exchange(1)->t3, 1200);
	assert_string_equal(http_of(1)->u.http.path, "/ann");

	/* claimed by the receive that brings the answer first */
	assert_true(obs_xm_send_announce(&conn, 2000, n));
	assert_false(obs_xm_send_announce(&conn, 2001, n)); /* one */
	assert_false(obs_xm_send_announce(&conn, 0, n));
	recv_bytes(2300, 2400, response, len);
	assert_true(conn.ann & OBS_ANN_CLAIMED);
	x = exchange(2);
	assert_non_null(x);
	assert_int_equal(x->t3, 2000);
	assert_int_equal(x->status, 404);
	assert_string_equal(x->method, ""); /* the send's to give */
	v.iov_len = d.len = n;
	assert_false(obs_xm_send_plain(&conn, &counted, true, 2000, 2500, n,
				       &d)); /* settled, then declined */
	assert_true(counted);
	assert_int_equal(conn.ann, 0);
	obs_xm_send_done(&conn, counted, 2000, 2500, (ssize_t)n, 0, &d);
	x = exchange(2);
	assert_string_equal(x->method, "GET");
	assert_int_equal(x->t4, 2300);
	assert_int_equal(x->ds, n);
	assert_string_equal(http_of(2)->u.http.path, "/ann");
	assert_int_equal(conn.sends_inflight, 0);

	/* claimed by a section that is no receive: the send goes on the
	 * plain way as registered */
	assert_true(obs_xm_send_announce(&conn, 3000, n));
	obs_xm_so_error(&conn, 3005, 0);
	assert_true(conn.ann & OBS_ANN_CLAIMED);
	assert_int_equal(conn.sends_inflight, 1);
	counted = false;
	assert_true(
		obs_xm_send_plain(&conn, &counted, true, 3000, 3010, n, &d));
	assert_true(counted);
	recv_bytes(3020, 3100, response, len);
	x = exchange(3);
	assert_int_equal(x->t3, 3000);
	assert_int_equal(x->t4, 3010);
	assert_int_equal(x->t5, 3020);
	assert_string_equal(x->method, "GET");

	/* not claimed: the plain way takes it at once */
	assert_true(obs_xm_send_announce(&conn, 4000, n));
	counted = false;
	assert_true(
		obs_xm_send_plain(&conn, &counted, true, 4000, 4010, n, &d));
	assert_true(counted);
	assert_int_equal(conn.ann, 0);
	recv_bytes(4020, 4100, response, len);
	assert_int_equal(exchange(4)->t3, 4000);
	assert_int_equal(exchange(4)->t4, 4010);

	/* a send that fails: settled, its entry the T3 of the retry's */
	assert_true(obs_xm_send_announce(&conn, 5000, n));
	counted = obs_xm_send_settle(&conn, &d);
	assert_true(counted);
	obs_xm_send_done(&conn, counted, 5000, 5010, -1, EAGAIN, &d);
	assert_int_equal(conn.ann, 0);
	assert_int_equal(conn.sends_inflight, 0);
	assert_int_equal(conn.pending_send, 5000);
	assert_true(obs_xm_send_announce(&conn, 5100, n));
	counted = false;
	assert_true(
		obs_xm_send_plain(&conn, &counted, true, 5100, 5110, n, &d));
	recv_bytes(5120, 5200, response, len);
	x = exchange(5);
	assert_int_equal(x->t3, 5000);
	assert_int_equal(x->t4, 5110);
	assert_int_equal(x->ds, n);
	assert_null(exchange(6));
	assert_int_equal(conn.sends_inflight, 0);
	assert_int_equal(conn.ann, 0);
}

/* The same on a connection of another protocol (a cache's: OBS_PROTO_OTHER),
 * which goes the plain way too: announced sends not claimed, claimed by a
 * receive that brings the answer first, and claimed by a section that is
 * no receive; a send in the middle of a request; T3 to T6 and the bytes
 * as the general way has them (the harness compares the records). */
static void test_announced_send_other(void **state)
{
	static const char ping[] = "*1\r\n$4\r\nPING\r\n";
	static const char pong[] = "+PONG\r\n";
	size_t n = sizeof(ping) - 1;
	struct iovec v = { (void *)ping, n };
	struct obs_data d = { &v, 1, n, OBS_TLSIN_NONE };
	struct obs_exch_body *x;
	bool counted = false;

	(void)state;
	open_blocking(1000, 1100);
	send_bytes(1200, 1210, ping, n);
	recv_bytes(1220, 1300, pong, 7);
	assert_int_equal(conn.proto, OBS_PROTO_OTHER);
	assert_int_equal(count_kind(OBS_REC_HTTP), 0);

	/* not claimed: the plain way takes it at once */
	assert_true(obs_xm_send_announce(&conn, 2000, n));
	assert_true(
		obs_xm_send_plain(&conn, &counted, true, 2000, 2010, n, &d));
	assert_true(counted);
	assert_int_equal(conn.ann, 0);
	assert_int_equal(conn.proto, OBS_PROTO_OTHER);
	send_bytes(2015, 2020, ping, n); /* the middle of a request */
	recv_bytes(2030, 2100, pong, 7);
	x = exchange(2);
	assert_int_equal(x->t3, 2000);
	assert_int_equal(x->t4, 2020);
	assert_int_equal(x->t5, 2030);
	assert_int_equal(x->ds, 2 * n);
	assert_int_equal(x->dr, 7);
	assert_int_equal(x->send_calls, 2);
	assert_string_equal(x->method, "");
	assert_int_equal(x->status, 0);

	/* claimed by the receive that brings the answer first */
	assert_true(obs_xm_send_announce(&conn, 3000, n));
	recv_bytes(3300, 3400, pong, 7);
	assert_true(conn.ann & OBS_ANN_CLAIMED);
	counted = false;
	assert_false(obs_xm_send_plain(&conn, &counted, true, 3000, 3500, n,
				       &d)); /* settled, then declined */
	assert_true(counted);
	assert_int_equal(conn.ann, 0);
	obs_xm_send_done(&conn, counted, 3000, 3500, (ssize_t)n, 0, &d);
	x = exchange(3);
	assert_non_null(x);
	assert_int_equal(x->t3, 3000);
	assert_int_equal(x->ds, n);
	assert_int_equal(x->dr, 7);
	assert_int_equal(conn.sends_inflight, 0);

	/* claimed by a section that is no receive */
	assert_true(obs_xm_send_announce(&conn, 4000, n));
	obs_xm_so_error(&conn, 4005, 0);
	assert_true(conn.ann & OBS_ANN_CLAIMED);
	counted = false;
	assert_true(
		obs_xm_send_plain(&conn, &counted, true, 4000, 4010, n, &d));
	recv_bytes(4020, 4100, pong, 7);
	x = exchange(4);
	assert_int_equal(x->t3, 4000);
	assert_int_equal(x->t4, 4010);
	assert_int_equal(x->t5, 4020);
	assert_int_equal(x->t6, 4100);
	assert_null(exchange(5));
	assert_int_equal(conn.proto, OBS_PROTO_OTHER);
	assert_int_equal(count_kind(OBS_REC_HTTP), 0);
}

/* A connection's first send reads nothing of the send before the real
 * call (a buffer the program cannot read fails it with EFAULT, as without
 * the layer); a receive that brings the answer before the send's
 * bookkeeping tells the protocol from the answer: an HTTP/1.x status line
 * (the send labels the exchange when it returns), or a TLS handshake
 * record (the send was a hello: the handshake). */
static void test_first_send_unread(void **state)
{
	static const char req[] = "GET /first HTTP/1.1\r\nHost: h\r\n\r\n";
	static const uint8_t hello_t[] = { 22 }, sh_t[] = { 22 };
	static const uint16_t hello_l[] = { 300 }, sh_l[] = { 90 };
	uint8_t hello[400], sh[100];
	size_t n = sizeof(req) - 1, nh, ns;
	struct iovec v = { (void *)req, n },
		     bad = { (void *)(uintptr_t)16, n }; /* page 0 */
	struct obs_data d = { &v, 1, n, OBS_TLSIN_NONE },
			dbad = { &bad, 1, n, OBS_TLSIN_NONE };
	struct obs_exch_body *x;
	bool counted = false;

	(void)state;
	/* from memory no one can read: both entries and a failed call's
	 * bookkeeping read nothing (a read would fault here) */
	open_blocking(1000, 1100);
	counted = obs_xm_send_begin(&conn, 1200, &dbad);
	assert_true(counted);
	assert_int_equal(conn.tx_pred, OBS_TXP_UNREAD);
	obs_xm_send_done(&conn, counted, 1200, 1210, -1, EFAULT, &dbad);
	assert_true(obs_xm_send_announce(&conn, 1300, n));
	counted = obs_xm_send_settle(&conn, &dbad);
	obs_xm_send_done(&conn, counted, 1300, 1310, -1, EFAULT, &dbad);
	assert_int_equal(conn.ann, 0);
	assert_int_equal(conn.sends_inflight, 0);
	assert_int_equal(conn.proto, OBS_PROTO_UNKNOWN);

	/* the answer first: a status line, the exchange HTTP/1.x, labelled
	 * by the send when it returns */
	assert_true(obs_xm_send_announce(&conn, 2000, n));
	recv_bytes(2100, 2200, response, sizeof(response) - 1);
	assert_int_equal(conn.proto, OBS_PROTO_HTTP);
	x = exchange(1);
	assert_non_null(x);
	assert_int_equal(x->t3, 1200); /* the first attempt's */
	assert_int_equal(x->status, 404);
	assert_false(
		obs_xm_send_plain(&conn, &counted, true, 2000, 2300, n, &d));
	obs_xm_send_done(&conn, counted, 2000, 2300, (ssize_t)n, 0, &d);
	x = exchange(1);
	assert_string_equal(x->method, "GET");
	assert_string_equal(http_of(1)->u.http.path, "/first");
	assert_int_equal(x->ds, n);
	assert_int_equal(conn.sends_inflight, 0);
	obs_xm_close(&conn, 2400);

	/* the answer to a hello first: a handshake record, the handshake */
	nh = tls_records(hello, hello_t, hello_l, 1);
	ns = tls_records(sh, sh_t, sh_l, 1);
	reset(NULL);
	open_blocking(3000, 3100);
	v.iov_base = hello;
	v.iov_len = d.len = nh;
	assert_true(obs_xm_send_announce(&conn, 3200, nh));
	recv_bytes(3300, 3400, sh, ns);
	assert_int_equal(conn.proto, OBS_PROTO_TLS);
	assert_true(connection()->flags & OBS_CF_TLS);
	counted = false;
	assert_false(
		obs_xm_send_plain(&conn, &counted, true, 3200, 3500, nh, &d));
	obs_xm_send_done(&conn, counted, 3200, 3500, (ssize_t)nh, 0, &d);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 0);
	assert_int_equal(record_of(OBS_REC_INFO)->u.info.tls_start, 3200);
	assert_int_equal(conn.sends_inflight, 0);
	obs_xm_close(&conn, 3600);

	/* a hello that nothing claimed: its bytes, read when it returns */
	reset(NULL);
	open_blocking(4000, 4100);
	assert_true(obs_xm_send_announce(&conn, 4200, nh));
	counted = false;
	assert_false(
		obs_xm_send_plain(&conn, &counted, true, 4200, 4210, nh, &d));
	assert_true(counted);
	obs_xm_send_done(&conn, counted, 4200, 4210, (ssize_t)nh, 0, &d);
	assert_int_equal(conn.proto, OBS_PROTO_TLS);
	assert_int_equal(record_of(OBS_REC_INFO)->u.info.tls_start, 4200);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 0);
}

/* The same over TLS 1.3 (JSSE): the ServerHello is read before the
 * ClientHello's bookkeeping, and the answer before the request's: the
 * connection is still TLS, its handshake no exchange, its one request
 * timed from the request's send. */
static void test_shared_connection_tls(void **state)
{
	static const uint8_t hello_t[] = { 22 }, fin_t[] = { 20, 23 },
			     app_t[] = { 23 }, sh_t[] = { 22, 20, 23 };
	static const uint16_t hello_l[] = { 512 }, fin_l[] = { 1, 69 },
			      req_l[] = { 100 }, sh_l[] = { 122, 1, 2000 },
			      resp_l[] = { 3000 };
	uint8_t hello[600], sh[2200], fin[100], req[200], resp[3100];
	size_t nh, ns, nf, nr, np;
	struct iovec v;
	struct obs_data d;
	struct obs_record *info;
	bool counted;

	(void)state;
	nh = tls_records(hello, hello_t, hello_l, 1);
	ns = tls_records(sh, sh_t, sh_l, 3);
	nf = tls_records(fin, fin_t, fin_l, 2);
	nr = tls_records(req, app_t, req_l, 1);
	np = tls_records(resp, app_t, resp_l, 1);
	open_blocking(1000, 1100);
	counted = send_starts(2000, hello, nh, &v, &d);
	recv_bytes(2100, 2500, sh, ns);
	obs_xm_send_done(&conn, counted, 2000, 2600, (ssize_t)nh, 0, &d);
	counted = send_starts(3000, fin, nf, &v, &d);
	obs_xm_send_done(&conn, counted, 3000, 3010, (ssize_t)nf, 0, &d);
	counted = send_starts(4000, req, nr, &v, &d);
	recv_bytes(4100, 4200, resp, np);
	obs_xm_send_done(&conn, counted, 4000, 7000, (ssize_t)nr, 0, &d);
	obs_xm_close(&conn, 8000);

	assert_true(connection()->flags & OBS_CF_TLS);
	info = record_of(OBS_REC_INFO);
	assert_non_null(info);
	assert_int_equal(info->u.info.tls_version, 0x0304);
	assert_int_equal(info->u.info.tls_start, 2000);
	assert_int_equal(info->u.info.tls_end, 2500);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(exchange(1)->t3, 4000);
	assert_int_equal(exchange(1)->t4, 4100);
	assert_int_equal(exchange(1)->tfb, 4200);
	assert_int_equal(exchange(1)->ds, nr);
	assert_int_equal(exchange(1)->dr, np);
	assert_int_equal(exchange(1)->tls_records, 1);
}

/* TLS 1.3 as curl (OpenSSL) does it against nginx: ClientHello | server
 * flight | CCS+Finished, request | response | request | response |
 * close_notify, unanswered. */
static void test_tls13_curl(void **state)
{
	static const uint8_t hello_t[] = { 22 }, fin_t[] = { 20, 23 },
			     app_t[] = { 23 };
	static const uint16_t hello_l[] = { 512 }, fin_l[] = { 1, 69 },
			      req_l[] = { 100 }, alert_l[] = { 19 };
	uint8_t buf[1024];
	size_t n;
	struct obs_record *info;
	struct obs_exch_body *x;

	(void)state;
	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	recv_bytes(2020, 2500, "\x16\x03\x03", 3);
	recv_bytes(2510, 2600, "more", 4);
	n = tls_records(buf, fin_t, fin_l, 2);
	send_bytes(3000, 3010, buf, n);
	n = tls_records(buf, app_t, req_l, 1);
	send_bytes(3020, 3030, buf, n);
	recv_bytes(3040, 3500, "resp", 4);
	send_bytes(4000, 4010, buf, n);
	recv_bytes(4020, 4500, "resp2", 5);
	n = tls_records(buf, app_t, alert_l, 1);
	send_bytes(5000, 5010, buf, n);
	obs_xm_close(&conn, 5100);

	assert_true(connection()->flags & OBS_CF_TLS);
	info = record_of(OBS_REC_INFO);
	assert_non_null(info);
	assert_int_equal(info->u.info.flags, OBS_IF_TLS);
	assert_int_equal(info->u.info.tls_version, 0x0304);
	assert_int_equal(info->u.info.tls_start, 2000);
	assert_int_equal(info->u.info.tls_end, 2600);
	/* the Finished is the handshake's: the request begins at its own
	 * send (what the client did in between is in neither) */
	x = exchange(1);
	assert_non_null(x);
	assert_int_equal(x->t3, 3020);
	assert_int_equal(x->t4, 3030);
	assert_int_equal(x->ds, 105);
	assert_int_equal(x->send_calls, 1);
	assert_int_equal(x->tfb, 3500);
	assert_int_equal(exchange(2)->t3, 4000);
	/* close_notify: recorded, flagged for the reader to drop */
	assert_true(exchange(3)->flags & OBS_XF_TLS_ALERT);
	assert_false(exchange(2)->flags & OBS_XF_TLS_ALERT);
	assert_int_equal(count_kind(OBS_REC_HTTP), 0);
}

/* The start of test_tls13_curl: the handshake, the client's Finished,
 * then its first request (T3 3020, T4 3030). */
static void tls13_first_request(void)
{
	static const uint8_t hello_t[] = { 22 }, fin_t[] = { 20, 23 },
			     app_t[] = { 23 }, sh_t[] = { 22, 20, 23 };
	static const uint16_t hello_l[] = { 512 }, fin_l[] = { 1, 69 },
			      req_l[] = { 100 }, sh_l[] = { 122, 1, 2000 };
	uint8_t buf[4096];
	size_t n;

	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	n = tls_records(buf, sh_t, sh_l, 3); /* the server's flight */
	recv_bytes(2020, 2500, buf, n);
	n = tls_records(buf, fin_t, fin_l, 2);
	send_bytes(3000, 3010, buf, n);
	n = tls_records(buf, app_t, req_l, 1);
	send_bytes(3020, 3030, buf, n);
}

/* Session tickets that the server sends when it reads the client's
 * Finished come before the answer: they are not its first byte. OpenSSL
 * reads a record's header (5 bytes), then its body. */
static void test_tls13_tickets_not_first_byte(void **state)
{
	static const uint8_t app_t[] = { 23, 23 };
	static const uint16_t ticket_l[] = { 250, 250 }, resp_l[] = { 79 },
			      big_l[] = { 16401 };
	uint8_t buf[40000];
	size_t n;

	(void)state;
	tls13_first_request();
	n = tls_records(buf, app_t, ticket_l, 2);
	recv_bytes(3040, 3100, buf, 5); /* ticket 1: header, body */
	recv_bytes(3110, 3120, buf + 5, 250);
	recv_bytes(3130, 3140, buf + 255, 5); /* ticket 2 */
	recv_bytes(3150, 3160, buf + 260, 250);
	n = tls_records(buf, app_t, resp_l, 1); /* 50 ms later: the answer */
	recv_bytes(53000, 53100, buf, 5);
	recv_bytes(53110, 53200, buf + 5, 79);
	assert_int_equal(exchange(1)->tfb, 53100);
	assert_int_equal(exchange(1)->t6, 53200);
	assert_int_equal(exchange(1)->dr, 2 * 255 + 84);
	/* the next request's answer is its answer, small or not */
	n = tls_records(buf, app_t, ticket_l, 1);
	send_bytes(60000, 60010, buf, n);
	recv_bytes(60020, 60100, buf, n);
	assert_int_equal(exchange(2)->tfb, 60100);

	/* tickets and a large answer in reads of their own (read-ahead) */
	reset(NULL);
	tls13_first_request();
	n = tls_records(buf, app_t, ticket_l, 2);
	recv_bytes(3040, 3100, buf, n);
	n = tls_records(buf, app_t, big_l, 1);
	recv_bytes(9000, 9100, buf, 6000);
	recv_bytes(9110, 9200, buf + 6000, n - 6000);
	assert_int_equal(exchange(1)->tfb, 9100);
	assert_int_equal(exchange(1)->t6, 9200);

	/* tickets and a small answer in one read: that read is the first */
	reset(NULL);
	tls13_first_request();
	{
		static const uint8_t t3[] = { 23, 23, 23 };
		static const uint16_t l3[] = { 250, 250, 79 };
		n = tls_records(buf, t3, l3, 3);
	}
	recv_bytes(3040, 9100, buf, n);
	assert_int_equal(exchange(1)->tfb, 9100);

	/* no tickets (nginx's default), one small answer: its read */
	reset(NULL);
	tls13_first_request();
	n = tls_records(buf, app_t, resp_l, 1);
	recv_bytes(3040, 9100, buf, 5);
	recv_bytes(9110, 9120, buf + 5, 79);
	assert_int_equal(exchange(1)->tfb, 9100);
	assert_int_equal(exchange(1)->t6, 9120);
}

/* TLS 1.3: the client's Finished, then 50 ms of its own work, then the
 * request: T3 is the request's send, not the Finished's. With the
 * Finished and the request in one send, that send is T3, and the session
 * tickets that answer the Finished are still not the first byte. */
static void test_tls13_finished_is_handshake(void **state)
{
	static const uint8_t hello_t[] = { 22 }, fin_t[] = { 20, 23 },
			     app_t[] = { 23 }, sh_t[] = { 22, 20, 23 },
			     both_t[] = { 20, 23, 23 }, tk_t[] = { 23, 23 };
	static const uint16_t hello_l[] = { 512 }, fin_l[] = { 1, 69 },
			      req_l[] = { 100 }, sh_l[] = { 122, 1, 2000 },
			      both_l[] = { 1, 69, 100 }, tk_l[] = { 250, 300 };
	uint8_t buf[4096];
	size_t n;

	(void)state;
	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	n = tls_records(buf, sh_t, sh_l, 3);
	recv_bytes(2020, 2500, buf, n);
	n = tls_records(buf, fin_t, fin_l, 2);
	send_bytes(3000, 3010, buf, n);
	n = tls_records(buf, app_t, req_l, 1);
	send_bytes(53000, 53010, buf, n);
	n = tls_records(buf, tk_t, tk_l, 2);
	recv_bytes(53020, 53100, buf, n);
	recv_bytes(53110, 60000, "answer", 6);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(exchange(1)->t3, 53000);
	assert_int_equal(exchange(1)->t4, 53010);
	assert_int_equal(exchange(1)->ds, 105);
	assert_int_equal(exchange(1)->tfb, 60000);
	assert_int_equal(record_of(OBS_REC_INFO)->u.info.tls_version, 0x0304);

	reset(NULL);
	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	n = tls_records(buf, sh_t, sh_l, 3);
	recv_bytes(2020, 2500, buf, n);
	n = tls_records(buf, both_t, both_l, 3);
	send_bytes(3000, 3010, buf, n);
	n = tls_records(buf, tk_t, tk_l, 2);
	recv_bytes(3020, 3100, buf, n);
	recv_bytes(3110, 9000, "answer", 6);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(exchange(1)->t3, 3000);
	assert_int_equal(exchange(1)->tfb, 9000);
	assert_int_equal(record_of(OBS_REC_INFO)->u.info.tls_version, 0x0304);
}

/* TLS 1.2 False Start: the request goes with the client's Finished; the
 * server's change cipher spec and Finished come before the answer. */
static void test_tls12_false_start_first_byte(void **state)
{
	static const uint8_t hello_t[] = { 22 }, fin_t[] = { 22, 20, 22 },
			     app_t[] = { 23 }, sfin_t[] = { 20, 22 };
	static const uint16_t hello_l[] = { 300 }, fin_l[] = { 70, 1, 40 },
			      req_l[] = { 100 }, sfin_l[] = { 1, 40 },
			      resp_l[] = { 300 };
	uint8_t buf[1024];
	size_t n;

	(void)state;
	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	n = tls_records(buf, hello_t, hello_l, 1);
	recv_bytes(2020, 2500, buf, n);
	n = tls_records(buf, fin_t, fin_l, 3);
	send_bytes(3000, 3010, buf, n);
	n = tls_records(buf, app_t, req_l, 1);
	send_bytes(3020, 3030, buf, n);
	n = tls_records(buf, sfin_t, sfin_l, 2);
	recv_bytes(3040, 3300, buf, n);
	n = tls_records(buf, app_t, resp_l, 1);
	recv_bytes(3310, 7000, buf, n);
	assert_int_equal(exchange(1)->t3, 3020);
	assert_int_equal(exchange(1)->tfb, 7000);
}

/* TLS 1.3 as wget (GnuTLS) does it: the change cipher spec goes alone
 * after the ServerHello, the Finished alone, a session ticket is read,
 * then the request. */
static void test_tls13_gnutls(void **state)
{
	static const uint8_t hello_t[] = { 22 }, ccs_t[] = { 20 },
			     app_t[] = { 23 };
	static const uint16_t hello_l[] = { 512 }, ccs_l[] = { 1 },
			      fin_l[] = { 69 }, req_l[] = { 150 };
	uint8_t buf[1024];
	size_t n;
	struct obs_record *info;

	(void)state;
	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	recv_bytes(2020, 2100, "sh", 2);
	n = tls_records(buf, ccs_t, ccs_l, 1);
	send_bytes(2200, 2210, buf, n);
	recv_bytes(2220, 2400, "flight", 6);
	n = tls_records(buf, app_t, fin_l, 1);
	send_bytes(2500, 2510, buf, n);
	recv_bytes(2520, 2700, "ticket", 6);
	n = tls_records(buf, app_t, req_l, 1);
	send_bytes(3000, 3010, buf, n);
	recv_bytes(3020, 3400, "resp", 4);
	obs_xm_close(&conn, 3500);

	info = record_of(OBS_REC_INFO);
	assert_int_equal(info->u.info.tls_version, 0x0304);
	assert_int_equal(info->u.info.tls_start, 2000);
	assert_int_equal(info->u.info.tls_end, 2700);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(exchange(1)->t3, 3000);
	assert_int_equal(exchange(1)->ds, 155);
	assert_false(exchange(1)->flags & OBS_XF_TLS_ALERT);
}

/* TLS 1.2: two handshake round trips, then requests; the closing alert is
 * an alert record and never an exchange. A False Start client sends its
 * request right after its Finished, in the same exchange. */
static void test_tls12(void **state)
{
	static const uint8_t hello_t[] = { 22 }, fin_t[] = { 22, 20, 22 },
			     app_t[] = { 23 }, alert_t[] = { 21 };
	static const uint16_t hello_l[] = { 512 }, fin_l[] = { 37, 1, 40 },
			      req_l[] = { 120 }, alert_l[] = { 26 };
	uint8_t buf[1024];
	size_t n, m;
	struct obs_record *info;

	(void)state;
	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	recv_bytes(2020, 2100, "sh", 2);
	n = tls_records(buf, fin_t, fin_l, 3);
	send_bytes(2200, 2210, buf, n);
	recv_bytes(2220, 2400, "fin", 3);
	n = tls_records(buf, app_t, req_l, 1);
	send_bytes(3000, 3010, buf, n);
	recv_bytes(3020, 3400, "resp", 4);
	n = tls_records(buf, alert_t, alert_l, 1);
	send_bytes(4000, 4010, buf, n);
	obs_xm_close(&conn, 4100);
	info = record_of(OBS_REC_INFO);
	assert_int_equal(info->u.info.tls_version, 0x0303);
	assert_int_equal(info->u.info.tls_end, 2400);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(exchange(1)->t3, 3000);
	assert_int_equal(exchange(1)->ds, 125);

	reset(NULL);
	open_blocking(1000, 1100);
	n = tls_records(buf, hello_t, hello_l, 1);
	send_bytes(2000, 2010, buf, n);
	recv_bytes(2020, 2100, "sh", 2);
	n = tls_records(buf, fin_t, fin_l, 3);
	m = tls_records(buf + n, app_t, req_l, 1);
	/* the request's header split across two sends */
	send_bytes(2200, 2210, buf, n + 2);
	send_bytes(2211, 2220, buf + n + 2, m - 2);
	recv_bytes(2230, 2400, "fin+resp", 8);
	info = record_of(OBS_REC_INFO);
	assert_int_equal(info->u.info.tls_version, 0x0303);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 1);
	assert_int_equal(exchange(1)->t3, 2200);
	assert_int_equal(exchange(1)->ds, n + m);
}

static void test_tcp_info(void **state)
{
	struct obs_tcp_info ti = { 50, 20, 7, 1, 10, 65535, 123456789 };
	struct obs_record *info;

	(void)state;
	open_blocking(1000, 1100);
	request(2000, 2100, 80, 2200, 2900, 3500, 1000);
	/* a drop that is not the last writes nothing; the last writes
	 * TCP_INFO with the end */
	conn.refs = 2;
	assert_false(obs_xm_unref(&conn, 3900, OBS_END_NONE, &ti));
	info = record_of(OBS_REC_INFO);
	assert_true(!info || !(info->u.info.flags & OBS_IF_TCPINFO));
	assert_true(obs_xm_unref(&conn, 4000, OBS_END_NONE, &ti));
	assert_int_equal(conn.phase, OBS_PH_CLOSED);
	info = record_of(OBS_REC_INFO);
	assert_non_null(info);
	assert_int_equal(info->conn_seq, 1);
	assert_int_equal(info->u.info.flags, OBS_IF_TCPINFO);
	assert_int_equal(info->u.info.rtt_us, 50);
	assert_int_equal(info->u.info.min_rtt_us, 7);
	assert_int_equal(info->u.info.pmtu, 65535);
	assert_int_equal(info->u.info.delivery_rate, 123456789);
	assert_true(info->state & OBS_RS_COMPLETE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_blocking, reset, snap),
		cmocka_unit_test_setup_teardown(test_http_fields, reset, snap),
		cmocka_unit_test_setup_teardown(test_http_parse, reset, snap),
		cmocka_unit_test_setup_teardown(test_http_host_remembered,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_http_request_recalled,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_http_thread_recalled,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_plain_waits, reset, snap),
		cmocka_unit_test_setup_teardown(test_http_ref_epoch, reset,
						snap),
		cmocka_unit_test_setup_teardown(test_http_memory_wiped, reset,
						snap),
		cmocka_unit_test_setup_teardown(test_plain_declines, reset,
						snap),
		cmocka_unit_test_setup_teardown(test_http_status_changes, reset,
						snap),
		cmocka_unit_test_setup_teardown(test_announced_send_other,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_http_status_and_not_http,
						reset, snap),
		cmocka_unit_test_setup_teardown(
			test_http_status_across_receives, reset, snap),
		cmocka_unit_test_setup_teardown(test_tls13_curl, reset, snap),
		cmocka_unit_test_setup_teardown(test_tls13_gnutls, reset, snap),
		cmocka_unit_test_setup_teardown(test_tls12, reset, snap),
		cmocka_unit_test_setup_teardown(
			test_tls13_tickets_not_first_byte, reset, snap),
		cmocka_unit_test_setup_teardown(
			test_tls12_false_start_first_byte, reset, snap),
		cmocka_unit_test_setup_teardown(
			test_tls13_finished_is_handshake, reset, snap),
		cmocka_unit_test_setup_teardown(test_tcp_info, reset, snap),
		cmocka_unit_test_setup_teardown(test_einprogress_then_so_error,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_einprogress_then_eisconn,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_first_io_completes_connect,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_eagain_before_data, reset,
						snap),
		cmocka_unit_test_setup(
			test_partial_writes_and_t5_after_last_send, reset),
		cmocka_unit_test_setup_teardown(test_three_keepalive_requests,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_pending_send_attempt_is_t3,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_server_speaks_first, reset,
						snap),
		cmocka_unit_test_setup_teardown(test_eof, reset, snap),
		cmocka_unit_test_setup_teardown(test_econnreset, reset, snap),
		cmocka_unit_test_setup(
			test_epipe_after_own_shutdown_is_no_reset, reset),
		cmocka_unit_test_setup(
			test_shared_connection_answer_before_send_returns,
			reset),
		cmocka_unit_test_setup_teardown(
			test_shared_connection_label_late, reset, snap),
		cmocka_unit_test_setup_teardown(
			test_shared_connection_sender_gone, reset, snap),
		cmocka_unit_test_setup_teardown(
			test_shared_connection_fields_and_order, reset, snap),
		cmocka_unit_test_setup_teardown(test_announced_send, reset,
						snap),
		cmocka_unit_test_setup(test_first_send_unread, reset),
		cmocka_unit_test_setup_teardown(test_shared_connection_tls,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_connect_refused, reset,
						snap),
		cmocka_unit_test_setup_teardown(test_refused_learned_by_io,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_peek_counts_time_not_bytes,
						reset, snap),
		cmocka_unit_test_setup_teardown(test_lost, reset, snap),
		cmocka_unit_test_setup_teardown(test_exit_and_undo, reset,
						snap),
		cmocka_unit_test_setup_teardown(test_exit_after_refused, reset,
						snap),
		cmocka_unit_test_setup_teardown(
			test_spool_full_loses_records_only, reset, snap),
	};

	int failed = cmocka_run_group_tests_name("general", tests, NULL, NULL);

	via_plain = true;
	test_index = 0;
	failed += cmocka_run_group_tests_name("plain", tests, NULL, NULL);
	if (plain_taken < 50 || announced_n < 20) {
		fprintf(stderr,
			"the plain path was taken %u times, %u sends "
			"announced\n",
			plain_taken, announced_n);
		failed++;
	}
	return failed;
}
