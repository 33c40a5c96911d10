/* h2feed.c - feed the HTTP/2 frame follower (core/h2.c) with a
 * recorded connection, or with made-up traffic for a benchmark.
 *
 * A recording is a run of records: one byte of direction ('>' client to
 * server, '<' server to client), the length (4 bytes, big-endian), the bytes
 * (tests/servers/relay.py writes them). The driver plays the exchange state
 * machine's part: a connection whose client sends the preface first is
 * followed from its first byte; one whose client sends an HTTP/1.1 request
 * and is answered "HTTP/1.1 101" is followed from the 101 on, after
 * obs_h2_upgrade() (the request itself is stream 1). It prints one line per
 * event, then the bytes per stream and in all:
 *
 *   mode prior|upgrade|http1
 *   open S | request S METHOD PATH HOST FLAGS | first S | status S CODE
 *   end S tx|rx | reset S tx|rx CODE | close S | goaway tx|rx LAST CODE
 *   untracked S | nolabels tx|rx WHY | lost tx|rx WHY
 *   bytes S TX RX        (S = 0: the connection's)
 *   fed TX RX            (what the recording holds after the start)
 *   said TX RX           (the sum of the follower's BYTES)
 *
 * The follower is given libnghttp2's inflater by the layer's loader
 * (libobserve/hpack.c, dlopen): this program does not link it, like the
 * layer.
 *
 * usage: h2feed [--split N] RECORDING   (pieces of at most N bytes)
 *        h2feed --quiet RECORDING       (the bytes only: for callgrind)
 *        h2feed --bench-data MIB READ   (1 MiB .. of 16 KiB DATA frames
 *                                        received READ bytes at a time)
 *        h2feed --bench-headers N       (N requests and their answers)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2.h"
#include "hpack.h"

#define MAX_SID 65536

static uint64_t bytes[2][MAX_SID / 2 + 1]; /* by (sid + 1) / 2; 0: conn */
static uint64_t said[2], fed[2];
static bool quiet;

static const char *dir_name(int dir)
{
	return dir == OBS_H2_TX ? "tx" : "rx";
}

static void on_event(void *ctx, const struct obs_h2_ev *e)
{
	const char *d = dir_name(e->dir);

	(void)ctx;
	switch (e->kind) {
	case OBS_H2_EV_BYTES:
		said[e->dir] += e->bytes;
		if (e->stream < MAX_SID)
			bytes[e->dir][(e->stream + 1) / 2] += e->bytes;
		return;
	default:
		break;
	}
	if (quiet)
		return;
	switch (e->kind) {
	case OBS_H2_EV_OPEN:
		printf("open %u\n", e->stream);
		break;
	case OBS_H2_EV_REQUEST:
		if (e->req == NULL) /* not decoded: NOLABELS said why */
			break;
		printf("request %u %.*s %.*s %.*s %u\n", e->stream,
		       (int)strnlen(e->req->method, sizeof(e->req->method)),
		       e->req->method,
		       (int)strnlen(e->req->path, sizeof(e->req->path)),
		       e->req->path,
		       (int)strnlen(e->req->host, sizeof(e->req->host)),
		       e->req->host, e->req->flags);
		break;
	case OBS_H2_EV_FIRST:
		printf("first %u\n", e->stream);
		break;
	case OBS_H2_EV_STATUS:
		printf("status %u %u\n", e->stream, e->status);
		break;
	case OBS_H2_EV_END:
		printf("end %u %s\n", e->stream, d);
		break;
	case OBS_H2_EV_RESET:
		printf("reset %u %s %u\n", e->stream, d, e->code);
		break;
	case OBS_H2_EV_CLOSE:
		printf("close %u\n", e->stream);
		break;
	case OBS_H2_EV_GOAWAY:
		printf("goaway %s %u %u\n", d, e->stream, e->code);
		break;
	case OBS_H2_EV_UNTRACKED:
		printf("untracked %u\n", e->stream);
		break;
	case OBS_H2_EV_NOLABELS:
		printf("nolabels %s %u\n", d, e->code);
		break;
	case OBS_H2_EV_LOST:
		printf("lost %s %u\n", d, e->code);
		break;
	default:
		printf("unknown event %u\n", e->kind);
		break;
	}
}

static void feed(struct obs_h2 *h, int dir, const uint8_t *p, size_t n,
		 size_t split)
{
	fed[dir] += n;
	while (n > 0) {
		size_t k = split && split < n ? split : n;

		obs_h2_feed(h, (enum obs_h2_dir)dir, p, k, on_event, NULL);
		p += k;
		n -= k;
	}
}

/* The whole file, or NULL with a message naming it. */
static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f) {
		fprintf(stderr, "h2feed: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	do {
		if (n == cap) {
			uint8_t *more =
				realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!more) {
				fprintf(stderr, "h2feed: %s: out of memory\n",
					path);
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = more;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	*len = n;
	return buf;
}

static void print_bytes(void)
{
	for (uint32_t i = 0; i <= MAX_SID / 2; i++)
		if (bytes[0][i] || bytes[1][i])
			printf("bytes %u %llu %llu\n", i ? 2 * i - 1 : 0,
			       (unsigned long long)bytes[0][i],
			       (unsigned long long)bytes[1][i]);
	printf("fed %llu %llu\n", (unsigned long long)fed[0],
	       (unsigned long long)fed[1]);
	printf("said %llu %llu\n", (unsigned long long)said[0],
	       (unsigned long long)said[1]);
}

static int play(const char *path, size_t split)
{
	enum { START, PRIOR, WAIT_101, UPGRADE, HTTP1 } mode = START;
	struct obs_h2 *h = malloc(sizeof(*h));
	size_t len, off = 0;
	uint8_t *rec = read_all(path, &len);

	if (!rec || !h) {
		free(rec);
		free(h);
		return 1;
	}
	obs_h2_init(h, obs_hpack_load());
	while (off < len) {
		uint32_t n;
		int dir;
		const uint8_t *p;

		if (len - off < 5 || (rec[off] != '>' && rec[off] != '<')) {
			fprintf(stderr,
				"h2feed: %s: bad record at offset %zu\n", path,
				off);
			return 1;
		}
		dir = rec[off] == '>' ? OBS_H2_TX : OBS_H2_RX;
		n = (uint32_t)rec[off + 1] << 24 |
		    (uint32_t)rec[off + 2] << 16 | (uint32_t)rec[off + 3] << 8 |
		    rec[off + 4];
		p = rec + off + 5;
		if (n > len - off - 5) {
			fprintf(stderr,
				"h2feed: %s: record at offset %zu cut\n", path,
				off);
			return 1;
		}
		off += 5 + n;
		if (mode == START && dir == OBS_H2_TX)
			mode = obs_h2_preface(p, n) ? PRIOR : WAIT_101;
		if (mode == WAIT_101 && dir == OBS_H2_RX) {
			mode = n >= 12 && memcmp(p, "HTTP/1.1 101", 12) == 0
				       ? UPGRADE
				       : HTTP1;
			if (mode == UPGRADE)
				obs_h2_upgrade(h, true);
		}
		if (mode == PRIOR || mode == UPGRADE)
			feed(h, dir, p, n, split);
	}
	printf("mode %s\n", mode == PRIOR     ? "prior"
			    : mode == UPGRADE ? "upgrade"
					      : "http1");
	obs_h2_end(h, on_event, NULL);
	print_bytes();
	free(rec);
	free(h);
	return 0;
}

static void put_frame(uint8_t *p, uint32_t len, uint8_t type, uint8_t flags,
		      uint32_t sid)
{
	p[0] = (uint8_t)(len >> 16), p[1] = (uint8_t)(len >> 8);
	p[2] = (uint8_t)len, p[3] = type, p[4] = flags;
	p[5] = (uint8_t)(sid >> 24), p[6] = (uint8_t)(sid >> 16);
	p[7] = (uint8_t)(sid >> 8), p[8] = (uint8_t)sid;
}

/* A GET of stream sid (HPACK: static-table fields and a literal
 * :authority), its answer 200, the connection's prefaces first when sid is
 * 1. Returns the client's and the server's bytes in tx and rx. */
static void exchange(uint32_t sid, uint8_t *tx, size_t *ntx, uint8_t *rx,
		     size_t *nrx)
{
	/* :method GET, :scheme http, :path /, :authority "bench" */
	static const uint8_t req[] = { 0x82, 0x86, 0x84, 0x01, 5,
				       'b',  'e',  'n',	 'c',  'h' };
	static const uint8_t resp[] = { 0x88 }; /* :status 200 */

	*ntx = *nrx = 0;
	if (sid == 1) {
		memcpy(tx, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
		put_frame(tx + 24, 0, 4, 0, 0);
		put_frame(rx, 0, 4, 0, 0);
		*ntx = 33;
		*nrx = 9;
	}
	put_frame(tx + *ntx, sizeof(req), 1, 0x5, sid);
	memcpy(tx + *ntx + 9, req, sizeof(req));
	*ntx += 9 + sizeof(req);
	put_frame(rx + *nrx, sizeof(resp), 1, 0x4, sid);
	memcpy(rx + *nrx + 9, resp, sizeof(resp));
	*nrx += 9 + sizeof(resp);
}

/* MiB of DATA in 16 KiB frames on one stream, received read bytes at a
 * time: the follower's cost per KiB of an ordinary download. */
static int bench_data(unsigned long mib, size_t read)
{
	size_t frames = mib * 64, total, ntx, nrx;
	struct obs_h2 *h = malloc(sizeof(*h));
	uint8_t *stream, tx[128];

	total = frames * (9 + 16384);
	stream = malloc(total + 64);
	if (!h || !stream || !read)
		return 1;
	obs_h2_init(h, obs_hpack_load());
	exchange(1, tx, &ntx, stream, &nrx);
	feed(h, OBS_H2_TX, tx, ntx, 0);
	feed(h, OBS_H2_RX, stream, nrx, 0);
	memset(stream, 'd', total);
	for (size_t i = 0; i < frames; i++)
		put_frame(stream + i * (9 + 16384), 16384, 0,
			  i + 1 == frames ? 1 : 0, 1);
	feed(h, OBS_H2_RX, stream, total, read);
	obs_h2_end(h, on_event, NULL);
	print_bytes();
	free(stream);
	free(h);
	return 0;
}

/* n requests and answers, one stream after the other: the cost of a
 * stream's events and of decoding its header blocks. */
static int bench_headers(unsigned long n)
{
	struct obs_h2 *h = malloc(sizeof(*h));
	uint8_t tx[128], rx[64];
	size_t ntx, nrx;

	if (!h)
		return 1;
	quiet = true;
	obs_h2_init(h, obs_hpack_load());
	for (uint32_t sid = 1; sid < 2 * n; sid += 2) {
		exchange(sid, tx, &ntx, rx, &nrx);
		feed(h, OBS_H2_TX, tx, ntx, 0);
		feed(h, OBS_H2_RX, rx, nrx, 0);
	}
	obs_h2_end(h, on_event, NULL);
	quiet = false;
	print_bytes();
	free(h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--bench-data") == 0)
		return bench_data(strtoul(argv[2], NULL, 10),
				  strtoul(argv[3], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "--bench-headers") == 0)
		return bench_headers(strtoul(argv[2], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "--quiet") == 0) {
		quiet = true;
		return play(argv[2], 0);
	}
	if (argc == 4 && strcmp(argv[1], "--split") == 0)
		return play(argv[3], strtoul(argv[2], NULL, 10));
	if (argc == 2)
		return play(argv[1], 0);
	fprintf(stderr, "usage: h2feed [--split N | --quiet] RECORDING\n"
			"       h2feed --bench-data MIB READ_BYTES\n"
			"       h2feed --bench-headers N\n");
	return 2;
}
