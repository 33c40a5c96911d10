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
	if (h->version != OBS_SPOOL_VERSION) {
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

static int time_ok(int64_t t)
{
	return t >= 0;
}

/* Why a published record is not sane, or NULL when it is. */
static const char *record_problem(const struct obs_record *r)
{
	if (r->kind != OBS_REC_CONNECTION && r->kind != OBS_REC_EXCHANGE)
		return "unknown record kind";
	if (r->state & ~OBS_RS_COMPLETE)
		return "unknown record state bits";
	if (r->conn_seq == 0)
		return "connection number 0";
	if (r->kind == OBS_REC_CONNECTION) {
		const struct obs_conn_body *c = &r->u.conn;
		if (c->family != 2 && c->family != 10)
			return "unknown address family";
		if (c->end_class > OBS_END_UNTERMINATED ||
		    c->t2_how > OBS_T2_FIRST_IO)
			return "unknown connection class";
		if (!time_ok(c->t1) || !time_ok(c->t2) || !time_ok(c->teof) ||
		    !time_ok(c->t7) || !time_ok(c->tshut))
			return "negative time";
	} else {
		const struct obs_exch_body *x = &r->u.exch;
		if (x->seq == 0)
			return "exchange number 0";
		if (!time_ok(x->t3) || !time_ok(x->t4) || !time_ok(x->t5) ||
		    !time_ok(x->tfb) || !time_ok(x->t6))
			return "negative time";
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
		why = record_problem(r);
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
