/* spool_reader.h - read a spool file written by libobserve.so.
 *
 * The reader takes the file as it is at open time (the writer may still be
 * appending), checks the header, and hands out the published records one
 * by one. Damage is reported through a callback, one line each, naming the
 * file, the byte offset and the reason; reading goes on past a damaged
 * record, so every good record is still delivered.
 *
 * Only a regular file is read (a FIFO is opened without blocking, and
 * refused), and it is read with pread(), never mapped: a file cut short
 * while it is read (its writer's file system full, a truncate) ends the
 * reading where it now ends (`shrank`), where a mapping would have killed
 * the reader with SIGBUS.
 */
#ifndef OBSERVE_SPOOL_READER_H
#define OBSERVE_SPOOL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "spool_format.h"

struct obs_spool {
	const char *path;
	int fd;
	size_t size; /* at open */
	const struct obs_spool_header *hdr;
	size_t next;   /* offset of the next record to look at */
	size_t end;    /* offset past the last whole record */
	uint64_t bad;  /* records skipped as damaged */
	int truncated; /* the file ends inside a record */
	/* the file got shorter while it was read: its size then (reading
	 * stopped at the last whole record before it), or a read error */
	int shrank, read_errno;
	size_t shrank_to;
	struct obs_spool_header *header; /* a copy of the file's header */
	unsigned char *buf; /* records [buf_off, buf_off+buf_len) */
	size_t buf_off, buf_len;
	struct obs_record one; /* obs_spool_at's */
};

/* Open and check the spool at path. On error returns -1 and writes the
 * reason (without the file name) into err. */
int obs_spool_open(struct obs_spool *sp, const char *path, char *err,
		   size_t errlen);

/* The next published, sane record, or NULL at the end. *offset gets its
 * byte offset. Damaged records are skipped after report(ctx, offset, why).
 * The record lives until the next call. */
const struct obs_record *obs_spool_next(struct obs_spool *sp, size_t *offset,
					void (*report)(void *ctx, size_t offset,
						       const char *why),
					void *ctx);

/* The record at offset (a record's, before sp->end) when it is published
 * and sane, read alone; NULL otherwise (damage reported as above). Does
 * not move the reading on. The record lives until the next call. */
const struct obs_record *obs_spool_at(struct obs_spool *sp, size_t offset,
				      void (*report)(void *ctx, size_t offset,
						     const char *why),
				      void *ctx);

/* Go on reading at offset (a record's; clamped to the end). */
void obs_spool_seek(struct obs_spool *sp, size_t offset);

void obs_spool_close(struct obs_spool *sp);

/* Epoch nanoseconds of a monotonic spool time (0 stays 0). */
static inline int64_t obs_spool_epoch(const struct obs_spool_header *h,
				      int64_t mono)
{
	/* unsigned: defined even for a damaged file the reader let through */
	return mono ? (int64_t)((uint64_t)h->realtime_ns +
				((uint64_t)mono - (uint64_t)h->monotonic_ns))
		    : 0;
}

#endif
