/* test_exchange.c - the exchange state machine fed scripted call sequences.
 *
 * Each test plays the calls a program would make on one connection, with
 * made-up clock readings, and checks the connection and exchange records
 * against the measurement model (shared/design/measurement-model.md).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

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

static int reset(void **state)
{
	(void)state;
	memset(records, 0, sizeof(records));
	n_records = 0;
	alloc_limit = MAX_RECORDS;
	return 0;
}

static const uint8_t loopback[4] = { 127, 0, 0, 1 };

static struct obs_conn conn;

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
static void request(int64_t t3, int64_t t4, size_t ds, int64_t t5,
		    int64_t tfb, int64_t t6, size_t dr)
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
	obs_xm_connect_again(&conn, 1400, 1410, -1, EALREADY);
	assert_int_equal(connection()->t2, 0);
	obs_xm_connect_again(&conn, 1700, 1710, -1, EISCONN);
	cb = connection();
	assert_int_equal(cb->t2, 1710);
	assert_int_equal(cb->t2_how, OBS_T2_RECONNECT);
	/* ab: the second connect returns 0 */
	reset(NULL);
	open_nonblocking(1000);
	obs_xm_connect_again(&conn, 1500, 1520, 0, 0);
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
	obs_xm_recv(&conn, 1500, 1600, 11, 0, false, NULL); /* "220 hello\r\n" */
	obs_xm_send(&conn, 2000, 2010, 6, 0, NULL);         /* "QUIT\r\n" */
	obs_xm_recv(&conn, 2020, 2300, 9, 0, false, NULL);  /* "221 bye\r\n" */
	obs_xm_recv(&conn, 2400, 2500, 0, 0, false, NULL);  /* EOF */
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
	obs_xm_recv(&conn, 2900, 2950, 0, 0, false, NULL); /* a second EOF read */
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
	counted = obs_xm_send_begin(&conn, 2000);
	assert_true(counted);
	obs_xm_recv(&conn, 1500, 2600, 338, 0, false, NULL);
	obs_xm_send_done(&conn, counted, 2000, 2050, 39, 0, NULL);
	/* second request, same race */
	counted = obs_xm_send_begin(&conn, 3000);
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
	assert_int_equal(x->t5, 2000); /* the wait began when the request did */
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
	obs_xm_recv(&conn, 1200, 1210, -1, EAGAIN, false, NULL); /* still pending */
	assert_int_equal(conn.phase, OBS_PH_CONNECTING);
	obs_xm_recv(&conn, 1300, 1310, -1, ECONNREFUSED, false, NULL);
	obs_xm_close(&conn, 1400);
	assert_int_equal(connection()->end_class, OBS_END_REFUSED);
	assert_int_equal(connection()->connect_errno, ECONNREFUSED);
	assert_int_equal(connection()->t2, 1310);
	assert_int_equal(count_kind(OBS_REC_EXCHANGE), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_blocking, reset),
		cmocka_unit_test_setup(test_einprogress_then_so_error, reset),
		cmocka_unit_test_setup(test_einprogress_then_eisconn, reset),
		cmocka_unit_test_setup(test_first_io_completes_connect, reset),
		cmocka_unit_test_setup(test_eagain_before_data, reset),
		cmocka_unit_test_setup(test_partial_writes_and_t5_after_last_send,
				       reset),
		cmocka_unit_test_setup(test_three_keepalive_requests, reset),
		cmocka_unit_test_setup(test_pending_send_attempt_is_t3, reset),
		cmocka_unit_test_setup(test_server_speaks_first, reset),
		cmocka_unit_test_setup(test_eof, reset),
		cmocka_unit_test_setup(test_econnreset, reset),
		cmocka_unit_test_setup(test_epipe_after_own_shutdown_is_no_reset,
				       reset),
		cmocka_unit_test_setup(
			test_shared_connection_answer_before_send_returns,
			reset),
		cmocka_unit_test_setup(test_connect_refused, reset),
		cmocka_unit_test_setup(test_refused_learned_by_io, reset),
		cmocka_unit_test_setup(test_peek_counts_time_not_bytes, reset),
		cmocka_unit_test_setup(test_spool_full_loses_records_only,
				       reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
