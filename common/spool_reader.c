/* spool_reader.c - read a spool file written by libobserve.so
 * (format: spool_format.h) with pread, never a mapping (see
 * spool_reader.h). */
#define _GNU_SOURCE
#include "spool_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event.h"
#include "files.h"

#define READ_CHUNK (512 * OBS_RECORD_SIZE) /* records read at a time */

/* pread until len bytes or the end of the file: the bytes read, or -1. */
static ssize_t read_at(int fd, void *buf, size_t len, size_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got,
				  (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int obs_spool_open(struct obs_spool *sp, const char *path, char *err,
		   size_t errlen)
{
	struct stat st;
	struct obs_spool_header *h;
	size_t want;
	ssize_t got;

	memset(sp, 0, sizeof(*sp));
	sp->path = path;
	sp->fd = -1;
	/* O_NONBLOCK: a FIFO (or a device) named like a spool must not
	 * block the open; it is refused below */
	sp->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (sp->fd < 0) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(sp->fd, &st) != 0) {
		snprintf(err, errlen, "cannot stat: %s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file (%s)",
			 files_kind(st.st_mode));
		goto fail;
	}
	if (st.st_size == 0) {
		snprintf(err, errlen, "empty file");
		goto fail;
	}
	if ((size_t)st.st_size < OBS_SPOOL_MAGIC_LEN + 12) {
		snprintf(
			err, errlen,
			"not a spool file (%lld bytes, too short for a header)",
			(long long)st.st_size);
		goto fail;
	}
	sp->size = (size_t)st.st_size;
	sp->header = h = calloc(1, sizeof(*h));
	sp->buf = malloc(READ_CHUNK);
	if (!h || !sp->buf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	want = sp->size < sizeof(*h) ? sp->size : sizeof(*h);
	got = read_at(sp->fd, h, want, 0);
	if (got < 0) {
		snprintf(err, errlen, "cannot read: %s", strerror(errno));
		goto fail;
	}
	if ((size_t)got < want) {
		snprintf(err, errlen,
			 "the file shrank to %zd bytes while it was read", got);
		goto fail;
	}
	if (memcmp(h->magic, OBS_SPOOL_MAGIC, OBS_SPOOL_MAGIC_LEN) != 0) {
		snprintf(err, errlen, "not a spool file (bad magic)");
		goto fail;
	}
	if (h->version > OBS_SPOOL_VERSION) {
		snprintf(
			err, errlen,
			"written by a newer observe (spool format version %u); "
			"this slicer reads version %u",
			h->version, OBS_SPOOL_VERSION);
		goto fail;
	}
	if (h->version < 1) { /* 1 is 2 without the HTTP and info records */
		snprintf(err, errlen, "unknown spool format version %u",
			 h->version);
		goto fail;
	}
	if (sp->size < OBS_SPOOL_HEADER_SIZE) {
		snprintf(err, errlen,
			 "truncated at offset %zu (inside the %u-byte header)",
			 sp->size, OBS_SPOOL_HEADER_SIZE);
		goto fail;
	}
	if (h->header_size != OBS_SPOOL_HEADER_SIZE ||
	    h->record_size != OBS_RECORD_SIZE) {
		snprintf(err, errlen,
			 "unexpected header size %u or record size %u",
			 h->header_size, h->record_size);
		goto fail;
	}
	if (h->monotonic_ns <= 0 || h->realtime_ns <= 0 ||
	    h->monotonic_ns > INT64_MAX / 2 || h->realtime_ns > INT64_MAX / 2) {
		snprintf(err, errlen, "damaged header (clock pair)");
		goto fail;
	}
	if (h->version >= 4 && h->first_record > (1ull << 56)) {
		snprintf(err, errlen, "damaged header (first record %llu)",
			 (unsigned long long)h->first_record);
		goto fail;
	}
	if (h->argv_len > sizeof(h->argv)) {
		snprintf(err, errlen, "damaged header (argv length %u)",
			 h->argv_len);
		goto fail;
	}
	sp->hdr = h;
	sp->next = OBS_SPOOL_HEADER_SIZE;
	sp->buf_off = sp->next;
	sp->end = OBS_SPOOL_HEADER_SIZE + (sp->size - OBS_SPOOL_HEADER_SIZE) /
						  OBS_RECORD_SIZE *
						  OBS_RECORD_SIZE;
	sp->truncated = sp->end != sp->size;
	return 0;
fail:
	obs_spool_close(sp);
	return -1;
}

/* A record's time: 0 (not seen), or from a second before the process's
 * start (start_ns, on the monotonic clock through the header's pair) to a
 * century after the header's monotonic reading. The spool is made at the
 * first connection, later than the process's start: a name lookup the
 * process made before it (Firefox looks its own host name up at start,
 * a second or more before its first connection) is older than the spool.
 * A header whose start is not before its pair takes the pair's reading. */
#define OBS_CENTURY_NS (100LL * 365 * 24 * 3600 * 1000000000LL)
static int time_ok(const struct obs_spool_header *h, int64_t t)
{
	int64_t floor = h->monotonic_ns;

	if (h->start_ns > 0 && h->start_ns < h->realtime_ns)
		floor -= h->realtime_ns - h->start_ns < floor
				 ? h->realtime_ns - h->start_ns
				 : floor;
	return t == 0 || (t >= floor - 1000000000LL &&
			  t - h->monotonic_ns < OBS_CENTURY_NS);
}

/* Why a published record is not sane, or NULL when it is. Connections are
 * numbered 1, 2, ... in the order their records were reserved, so a number
 * beyond the file's slot count is damage (and would make the ingest's
 * number-to-row map huge). */
static const char *record_problem(const struct obs_spool *sp,
				  const struct obs_record *r)
{
	const struct obs_spool_header *h = sp->hdr;
	uint64_t conn_max =
		(sp->end - OBS_SPOOL_HEADER_SIZE) / OBS_RECORD_SIZE +
		(h->version >= 4 ? h->first_record : 0);

	if (r->kind < OBS_REC_CONNECTION || r->kind > OBS_REC_EVENT ||
	    (h->version < 2 && r->kind > OBS_REC_EXCHANGE) ||
	    (h->version < 6 && r->kind == OBS_REC_EVENT))
		return "unknown record kind";
	if (r->state &
	    ~(OBS_RS_COMPLETE |
	      (r->kind == OBS_REC_EVENT ? OBS_RS_EVENT_FINAL | OBS_RS_FACT_FINAL
					: 0)))
		return "unknown record state bits";
	if (r->conn_seq == 0)
		return "connection number 0";
	/* a later segment's records may name connections of earlier ones */
	if (r->conn_seq > conn_max)
		return "connection number out of range";
	if (r->kind == OBS_REC_CONNECTION) {
		const struct obs_conn_body *c = &r->u.conn;
		if (c->family != 2 && c->family != 10)
			return "unknown address family";
		if (c->end_class > OBS_END_EXIT || c->t2_how > OBS_T2_FIRST_IO)
			return "unknown connection class";
		if (!time_ok(h, c->t1) || !time_ok(h, c->t2) ||
		    !time_ok(h, c->teof) || !time_ok(h, c->t7) ||
		    !time_ok(h, c->tshut) || !time_ok(h, c->tsend_open))
			return "time out of range";
	} else if (r->kind == OBS_REC_EVENT) {
		const struct obs_event_body *e = &r->u.event;
		if (e->ev_kind == OBS_EV_LABELS) /* host and path: no time */
			return NULL;
		if (!time_ok(h, e->t_in) || !time_ok(h, e->t_data) ||
		    !time_ok(h, e->t_out))
			return "time out of range";
	} else if (r->kind == OBS_REC_HTTP) {
		if (r->u.http.seq == 0)
			return "exchange number 0";
		if (r->u.http.flags & ~(OBS_HF_HOST_CUT | OBS_HF_PATH_CUT))
			return "unknown HTTP record flags";
	} else if (r->kind == OBS_REC_INFO) {
		const struct obs_info_body *f = &r->u.info;
		if (f->flags & ~(OBS_IF_TLS | OBS_IF_TCPINFO | OBS_IF_DNS))
			return "unknown info record flags";
		if (!time_ok(h, f->tls_start) || !time_ok(h, f->tls_end) ||
		    !time_ok(h, f->dns_start) || !time_ok(h, f->dns_end))
			return "time out of range";
	} else {
		const struct obs_exch_body *x = &r->u.exch;
		if (x->seq == 0)
			return "exchange number 0";
		/* an earlier exchange's HTTP record: of this connection, or
		 * of any other (a thread's memory: one opened later too) */
		if (h->version >= 5 && x->label_seq &&
		    (x->label_conn == 0 || x->label_conn > conn_max ||
		     (x->label_conn == r->conn_seq && x->label_seq >= x->seq)))
			return "label of no earlier exchange";
		if (!time_ok(h, x->t3) || !time_ok(h, x->t4) ||
		    !time_ok(h, x->t5) || !time_ok(h, x->tfb) ||
		    !time_ok(h, x->t6))
			return "time out of range";
	}
	return NULL;
}

/* Read the records from sp->next on into the buffer; false at the end
 * (the file shrank, or a read error: said in sp). */
static bool refill(struct obs_spool *sp)
{
	size_t want = sp->end - sp->next;
	ssize_t got;

	if (want > READ_CHUNK)
		want = READ_CHUNK;
	got = read_at(sp->fd, sp->buf, want, sp->next);
	if (got < 0) {
		sp->read_errno = errno;
		sp->end = sp->next;
		return false;
	}
	if ((size_t)got < want) {
		/* cut short since open: what is whole before the cut is read */
		sp->shrank = 1;
		sp->shrank_to = sp->next + (size_t)got;
		sp->end = sp->next +
			  (size_t)got / OBS_RECORD_SIZE * OBS_RECORD_SIZE;
		sp->truncated = 0;
	}
	sp->buf_off = sp->next;
	sp->buf_len = (size_t)got / OBS_RECORD_SIZE * OBS_RECORD_SIZE;
	return sp->buf_len > 0;
}

const struct obs_record *obs_spool_next(struct obs_spool *sp, size_t *offset,
					void (*report)(void *ctx, size_t offset,
						       const char *why),
					void *ctx)
{
	while (sp->next < sp->end) {
		size_t off = sp->next;
		const struct obs_record *r;
		const char *why;

		if (off >= sp->buf_off + sp->buf_len && !refill(sp))
			break;
		r = (const struct obs_record *)(sp->buf + (off - sp->buf_off));
		sp->next += OBS_RECORD_SIZE;
		if (r->kind == OBS_REC_EMPTY)
			continue;
		why = record_problem(sp, r);
		if (why) {
			sp->bad++;
			if (report)
				report(ctx, off, why);
			continue;
		}
		*offset = off;
		return r;
	}
	return NULL;
}

const struct obs_record *obs_spool_at(struct obs_spool *sp, size_t offset,
				      void (*report)(void *ctx, size_t offset,
						     const char *why),
				      void *ctx)
{
	const char *why;

	if (offset < OBS_SPOOL_HEADER_SIZE ||
	    offset + OBS_RECORD_SIZE > sp->end ||
	    (offset - OBS_SPOOL_HEADER_SIZE) % OBS_RECORD_SIZE != 0 ||
	    read_at(sp->fd, &sp->one, OBS_RECORD_SIZE, offset) !=
		    (ssize_t)OBS_RECORD_SIZE ||
	    sp->one.kind == OBS_REC_EMPTY)
		return NULL;
	why = record_problem(sp, &sp->one);
	if (why) {
		sp->bad++;
		if (report)
			report(ctx, offset, why);
		return NULL;
	}
	return &sp->one;
}

void obs_spool_seek(struct obs_spool *sp, size_t offset)
{
	if (offset < OBS_SPOOL_HEADER_SIZE)
		offset = OBS_SPOOL_HEADER_SIZE;
	if (offset > sp->end)
		offset = sp->end;
	sp->next = offset;
	sp->buf_off = offset;
	sp->buf_len = 0;
}

void obs_spool_close(struct obs_spool *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
	free(sp->header);
	free(sp->buf);
	sp->header = NULL;
	sp->buf = NULL;
	sp->hdr = NULL;
}
