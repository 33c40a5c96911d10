/* spool_reader.c - read a spool file written by libobserve.so
 * (format: spool_format.h). */
#define _GNU_SOURCE
#include "spool_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int obs_spool_open(struct obs_spool *sp, const char *path, char *err,
		   size_t errlen)
{
	struct stat st;
	const struct obs_spool_header *h;
	void *map;
	int fd;

	memset(sp, 0, sizeof(*sp));
	sp->path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, errlen, "cannot stat: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_size == 0) {
		snprintf(err, errlen, "empty file");
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size < OBS_SPOOL_MAGIC_LEN + 12) {
		snprintf(err, errlen,
			 "not a spool file (%lld bytes, too short for a header)",
			 (long long)st.st_size);
		close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map: %s", strerror(errno));
		return -1;
	}
	sp->map = map;
	sp->size = (size_t)st.st_size;
	h = map;
	if (memcmp(h->magic, OBS_SPOOL_MAGIC, OBS_SPOOL_MAGIC_LEN) != 0) {
		snprintf(err, errlen, "not a spool file (bad magic)");
		goto fail;
	}
	if (h->version > OBS_SPOOL_VERSION) {
		snprintf(err, errlen,
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
	if (h->argv_len > sizeof(h->argv)) {
		snprintf(err, errlen, "damaged header (argv length %u)",
			 h->argv_len);
		goto fail;
	}
	sp->hdr = h;
	sp->next = OBS_SPOOL_HEADER_SIZE;
	sp->end = OBS_SPOOL_HEADER_SIZE +
		  (sp->size - OBS_SPOOL_HEADER_SIZE) / OBS_RECORD_SIZE *
			  OBS_RECORD_SIZE;
	sp->truncated = sp->end != sp->size;
	return 0;
fail:
	munmap(map, sp->size);
	sp->map = NULL;
	return -1;
}

/* A record's time: 0 (not seen), or within a century after the header's
 * monotonic reading (taken when the spool was made, before any record). */
#define OBS_CENTURY_NS (100LL * 365 * 24 * 3600 * 1000000000LL)
static int time_ok(const struct obs_spool_header *h, int64_t t)
{
	return t == 0 || (t >= h->monotonic_ns - 1000000000LL &&
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

	if (r->kind < OBS_REC_CONNECTION || r->kind > OBS_REC_INFO ||
	    (h->version < 2 && r->kind > OBS_REC_EXCHANGE))
		return "unknown record kind";
	if (r->state & ~OBS_RS_COMPLETE)
		return "unknown record state bits";
	if (r->conn_seq == 0)
		return "connection number 0";
	if (r->conn_seq > (sp->end - OBS_SPOOL_HEADER_SIZE) / OBS_RECORD_SIZE)
		return "connection number out of range";
	if (r->kind == OBS_REC_CONNECTION) {
		const struct obs_conn_body *c = &r->u.conn;
		if (c->family != 2 && c->family != 10)
			return "unknown address family";
		if (c->end_class > OBS_END_UNTERMINATED ||
		    c->t2_how > OBS_T2_FIRST_IO)
			return "unknown connection class";
		if (!time_ok(h, c->t1) || !time_ok(h, c->t2) || !time_ok(h, c->teof) ||
		    !time_ok(h, c->t7) || !time_ok(h, c->tshut))
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
		if (!time_ok(h, x->t3) || !time_ok(h, x->t4) || !time_ok(h, x->t5) ||
		    !time_ok(h, x->tfb) || !time_ok(h, x->t6))
			return "time out of range";
	}
	return NULL;
}

const struct obs_record *
obs_spool_next(struct obs_spool *sp, size_t *offset,
	       void (*report)(void *ctx, size_t offset, const char *why),
	       void *ctx)
{
	while (sp->next < sp->end) {
		size_t off = sp->next;
		const struct obs_record *r =
			(const struct obs_record *)(sp->map + off);
		const char *why;

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

void obs_spool_close(struct obs_spool *sp)
{
	if (sp->map)
		munmap((void *)sp->map, sp->size);
	sp->map = NULL;
	sp->hdr = NULL;
}
