/* spoolgen.c - writes a synthetic spool file with the layout of
 * common/spool_format.h, for the scripts that need a big spool without
 * running a program under the layer (scripts/bench-merge.sh,
 * tests/slicer/progress.sh).
 *
 *   spoolgen FILE EXCHANGES [CLIENT]
 *
 * One ended process (pid 999998) of client CLIENT (default "bench"):
 * connections to 0.0.0.0:80 of 100 exchanges each, every exchange 1 us
 * after the previous one, 100 bytes sent and 300 received; all records
 * complete. Exit status 0, or 1 with a message naming the file. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "spool_format.h"

#define PER_CONNECTION 100

static void header(struct obs_spool_header *h, const char *client)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, OBS_SPOOL_MAGIC, OBS_SPOOL_MAGIC_LEN);
	h->version = OBS_SPOOL_VERSION;
	h->header_size = OBS_SPOOL_HEADER_SIZE;
	h->record_size = OBS_RECORD_SIZE;
	h->flags = OBS_SPOOL_ENDED;
	h->pid = 999998;
	h->ppid = 1;
	h->realtime_ns = 1700000000000000000LL;
	h->monotonic_ns = 1000000000;
	h->start_ns = h->realtime_ns;
	snprintf(h->client, sizeof(h->client), "%s", client);
}

/* The connection record of connection number seq, connected at t. */
static void connection(struct obs_record *r, uint64_t seq, int64_t t)
{
	memset(r, 0, sizeof(*r));
	r->kind = OBS_REC_CONNECTION;
	r->state = OBS_RS_COMPLETE;
	r->conn_seq = seq;
	r->u.conn.t1 = t;
	r->u.conn.t2 = t + 1000;
	r->u.conn.t7 = t + 1000000000;
	r->u.conn.family = AF_INET;
	r->u.conn.peer_port = 80;
	r->u.conn.local_port = 1000;
	r->u.conn.t2_how = OBS_T2_CONNECT;
	r->u.conn.end_class = OBS_END_CLIENT_CLOSE;
}

/* Exchange number seq of connection conn, its request sent at t. */
static void exchange(struct obs_record *r, uint64_t conn, uint32_t seq,
		     int64_t t)
{
	memset(r, 0, sizeof(*r));
	r->kind = OBS_REC_EXCHANGE;
	r->state = OBS_RS_COMPLETE;
	r->conn_seq = conn;
	r->u.exch.seq = seq;
	r->u.exch.t3 = t;
	r->u.exch.t4 = t + 10;
	r->u.exch.t5 = t + 20;
	r->u.exch.tfb = t + 500;
	r->u.exch.t6 = t + 600;
	r->u.exch.ds = 100;
	r->u.exch.dr = 300;
	r->u.exch.send_calls = 1;
	r->u.exch.recv_calls = 1;
}

int main(int argc, char **argv)
{
	struct obs_spool_header h;
	struct obs_record r;
	int64_t t = 1000000000;
	long long n;
	char *end;
	FILE *f;

	if (argc < 3 || argc > 4 || (n = strtoll(argv[2], &end, 10)) < 0 ||
	    *end || !*argv[2]) {
		fprintf(stderr, "usage: spoolgen FILE EXCHANGES [CLIENT]\n");
		return 1;
	}
	if (!(f = fopen(argv[1], "w"))) {
		fprintf(stderr, "spoolgen: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	header(&h, argc > 3 ? argv[3] : "bench");
	fwrite(&h, sizeof(h), 1, f);
	for (long long i = 0; i < n; i++) {
		uint64_t conn = (uint64_t)(i / PER_CONNECTION) + 1;

		if (i % PER_CONNECTION == 0) {
			connection(&r, conn, t);
			fwrite(&r, sizeof(r), 1, f);
		}
		t += 1000;
		exchange(&r, conn, (uint32_t)(i % PER_CONNECTION) + 1, t);
		fwrite(&r, sizeof(r), 1, f);
	}
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "spoolgen: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
