/* spool.c - the writer side of the spool: one file per process, mapped
 * shared in chunks, records handed out by an atomic counter (see
 * spool_format.h).
 *
 * The spool lives inside other people's programs and must never harm them:
 * - Address space grows with use: the file is mapped in chunks, the header
 *   and 128 records first, then chunks that double up to 1 MiB, up to the
 *   segment's size (OBSERVE_SPOOL_SEGMENT_MB, 256 MiB by default, 1 GiB at
 *   most). A chunk is never moved while its records may be written, so the
 *   record pointers handed out stay valid; record index -> chunk is
 *   arithmetic.
 * - No cap that loses data: a full segment rolls over into the next file
 *   (<client>.<pid>.<start>.000001.spool, ...), the full one is sealed
 *   (OBS_SPOOL_SEALED) and stays mapped while records in it are in flight;
 *   a sealed segment whose records are all complete is unmapped at a later
 *   roll-over (the slicer may delete it once stored). What the process's
 *   segments hold on disk is bounded by OBSERVE_SPOOL_LIMIT_MB (4 GiB by
 *   default): a roll-over that would pass it waits, its records counted as
 *   dropped, and is tried again every OBS_SPOOL_RETRY drops.
 * - No signal: a store through a shared mapping into a page the file system
 *   cannot back raises SIGBUS, growing a file past RLIMIT_FSIZE raises
 *   SIGXFSZ. Each chunk's blocks are reserved (written, or posix_fallocate)
 *   before it is mapped, and nothing grows past RLIMIT_FSIZE. Its pages are
 *   then populated in one call (MADV_POPULATE_WRITE, which fails rather
 *   than signals), not by a fault at the first store into each.
 *   When growth is impossible, recording stops in this process: every later
 *   record is counted in the header's records_dropped, one warning says
 *   why, and the host's call goes on.
 * - Files only in a checked directory: the spool directory is opened once
 *   and fstat must show it owned by the effective user and writable by no
 *   one else, its parent owned by that user or root (sticky if others may
 *   write it); the file is created relative to that fd, O_EXCL|O_NOFOLLOW.
 * - No fd kept open, since programs close every fd (daemons, ssh): growth
 *   opens the directory by name again, checks it is the same directory
 *   (st_dev, st_ino) and still trusted, opens the file relative to it
 *   with O_NOFOLLOW and checks it is the very file created; otherwise
 *   recording stops.
 * errno is kept across all of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exchange.h"
#include "layer.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Chunk 0 is the header and 2^FIRST_SHIFT records; chunk k = 1..DOUBLING
 * holds records [2^(FIRST_SHIFT+k-1), 2^(FIRST_SHIFT+k)); every later chunk
 * holds 2^CHUNK_SHIFT records. Every chunk starts on a page of the file.
 * Chunks stay small because reserving one happens in a host's thread and
 * on tmpfs allocates and zeroes its pages (~0.3 ms a MiB); the price is a
 * mapping per MiB (about 1030 for a full 1 GiB spool). */
#define OBS_SPOOL_FIRST_SHIFT 7		   /* 128 records, 16 KiB */
#define OBS_SPOOL_CHUNK_SHIFT 13	   /* 1 MiB: the largest chunk */
#define OBS_SPOOL_MAX_RECORDS (1ull << 23) /* 1 GiB a segment at most */
#define OBS_SPOOL_DOUBLING (OBS_SPOOL_CHUNK_SHIFT - OBS_SPOOL_FIRST_SHIFT + 1)
#define OBS_SPOOL_FIXED_BASE (2ull << OBS_SPOOL_CHUNK_SHIFT)
#define OBS_SPOOL_CHUNKS                                                       \
	(1 + OBS_SPOOL_DOUBLING +                                              \
	 ((OBS_SPOOL_MAX_RECORDS - OBS_SPOOL_FIXED_BASE) >>                    \
	  OBS_SPOOL_CHUNK_SHIFT))

#define OBS_SPOOL_SEGMENTS 16	  /* segments mapped at once, at most */
#define OBS_SPOOL_SEGMENT_MB 256u /* default segment size */
#define OBS_SPOOL_LIMIT_MB 4096u  /* default limit of a process's segments */
#define OBS_SPOOL_KEPT 64u	  /* headers of retired segments kept mapped */
#define OBS_SPOOL_RETRY 4096u	  /* drops between tries of a waiting roll */
#define OBS_SPOOL_MB_RECORDS (1u << 13) /* records in a MiB */

_Static_assert(OBS_SPOOL_HEADER_SIZE % 4096 == 0 &&
		       (OBS_RECORD_SIZE << OBS_SPOOL_FIRST_SHIFT) % 4096 == 0,
	       "chunks start on a page");

struct obs_process obs_proc;

static pthread_mutex_t obs_mutex = PTHREAD_MUTEX_INITIALIZER;
/* This thread holds the mutex to make or grow the spool: a hook re-entered
 * from a signal handler then gives up its record rather than wait for a
 * lock its own thread holds. */
static __thread bool in_spool_lock __attribute__((tls_model("initial-exec")));

/* One segment file, mapped. */
struct segment {
	struct obs_spool_header *hdr; /* NULL: a free slot */
	/* chunk[k]: the first record of chunk k, NULL until mapped; written
	 * under the mutex, in order, published with release */
	char *chunk[OBS_SPOOL_CHUNKS];
	unsigned int chunks; /* chunks mapped */
	uint32_t number;     /* 0, 1, ... */
	dev_t file_dev;	     /* what was created, for growth to check */
	ino_t file_ino;
	uint64_t done_upto; /* the records before it are complete */
};

static struct {
	/* the segment records go to: NULL until created, published with
	 * release (after seg_records) */
	struct segment *cur;
	struct segment seg[OBS_SPOOL_SEGMENTS];
	uint64_t seg_records; /* record slots in a segment */
	uint64_t limit;	      /* bytes of records the segments may hold */
	uint32_t oldest;      /* the oldest segment that may be on disk */
	/* a roll-over waits (limit, slots): records_dropped to try again at */
	uint64_t retry_at;
	bool failed;  /* creation failed: do not retry */
	bool stopped; /* growth failed: every later record is dropped */
	bool waited;  /* said once that a roll-over waits */
	dev_t dir_dev;
	ino_t dir_ino;
	uid_t uid;		    /* the effective user id that made it */
	char base[80];		    /* <client>.<pid>.<start> */
	char path[PATH_MAX];	    /* the current segment's, for messages */
	void *kept[OBS_SPOOL_KEPT]; /* headers of retired segments */
	unsigned int kept_next;
} spool;

/* obs_record_epoch's number: one more at each change of the segment
 * records go to, before spool.cur changes (a reservation that loads the
 * new one reads the new number after it). Not in `spool`: it goes on
 * across obs_spool_forget. */
static uint32_t spool_epoch;

static void epoch_next(void)
{
	__atomic_fetch_add(&spool_epoch, 1, __ATOMIC_RELEASE);
}

/* Inlined into its callers by LTO, as obs_record_alloc2. */
__attribute__((always_inline)) inline uint32_t obs_record_epoch(void)
{
	return __atomic_load_n(&spool_epoch, __ATOMIC_ACQUIRE);
}

long obs_sys_write(int fd, const void *buf, unsigned long len)
{
	return syscall(SYS_write, fd, buf, len);
}

int obs_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

void obs_mutex_lock(void)
{
	pthread_mutex_lock(&obs_mutex);
}

void obs_mutex_unlock(void)
{
	pthread_mutex_unlock(&obs_mutex);
}

void obs_mutex_reinit(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	memcpy(&obs_mutex, &fresh, sizeof(fresh));
}

void obs_log(int level, const char *fmt, ...)
{
	char line[512];
	int saved = errno, n;
	va_list ap;

	if (obs_proc.log_level < level)
		return;
	n = snprintf(line, sizeof(line),
		     "observe[%s:%d]: ", program_invocation_short_name,
		     (int)obs_proc.pid);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	obs_sys_write(2, line, (unsigned long)n);
	errno = saved;
}

/* mkdir -p; the directories it creates are 0700. */
static int make_dirs(const char *dir)
{
	char path[sizeof(obs_proc.dir)];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(path))
		return -1;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Chunk k's first record and how many records it holds. */
static void chunk_span(unsigned int k, uint64_t *first, uint64_t *count)
{
	if (k == 0) {
		*first = 0;
		*count = 1ull << OBS_SPOOL_FIRST_SHIFT;
	} else if (k <= OBS_SPOOL_DOUBLING) {
		*first = 1ull << (OBS_SPOOL_FIRST_SHIFT + k - 1);
		*count = *first;
	} else {
		*first = OBS_SPOOL_FIXED_BASE +
			 ((uint64_t)(k - OBS_SPOOL_DOUBLING - 1)
			  << OBS_SPOOL_CHUNK_SHIFT);
		*count = 1ull << OBS_SPOOL_CHUNK_SHIFT;
	}
}

/* The chunk that holds record idx (OBS_SPOOL_CHUNKS: beyond the segment), and
 * in *first that chunk's first record. The hot path: no loop, no call. */
static inline unsigned int chunk_of(uint64_t idx, uint64_t *first)
{
	unsigned int k;

	*first = 0;
	if (__builtin_expect(idx >= spool.seg_records, 0))
		return OBS_SPOOL_CHUNKS;
	if (idx < (1ull << OBS_SPOOL_FIRST_SHIFT))
		return 0;
	if (idx < OBS_SPOOL_FIXED_BASE) {
		k = 64u -
		    (unsigned int)__builtin_clzll(idx >> OBS_SPOOL_FIRST_SHIFT);
		*first = 1ull << (OBS_SPOOL_FIRST_SHIFT + k - 1);
		return k;
	}
	k = 1 + OBS_SPOOL_DOUBLING +
	    (unsigned int)((idx - OBS_SPOOL_FIXED_BASE) >>
			   OBS_SPOOL_CHUNK_SHIFT);
	*first = OBS_SPOOL_FIXED_BASE + ((uint64_t)(k - OBS_SPOOL_DOUBLING - 1)
					 << OBS_SPOOL_CHUNK_SHIFT);
	return k;
}

/* Where chunk k lies in the file: the offset and length of its mapping
 * (chunk 0's includes the header). */
static void chunk_extent(unsigned int k, off_t *off, size_t *len)
{
	uint64_t first, count;

	chunk_span(k, &first, &count);
	*off = k == 0 ? 0
		      : (off_t)(OBS_SPOOL_HEADER_SIZE +
				first * OBS_RECORD_SIZE);
	*len = (size_t)(count * OBS_RECORD_SIZE) +
	       (k == 0 ? OBS_SPOOL_HEADER_SIZE : 0);
}

/* Whether the file may be `end` bytes long: growing a file past
 * RLIMIT_FSIZE raises SIGXFSZ in the host. *limit gets the limit. */
static bool fsize_allows(uint64_t end, uint64_t *limit)
{
	struct rlimit rl;

	*limit = UINT64_MAX;
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
		return false;
	if (rl.rlim_cur == RLIM_INFINITY)
		return true;
	*limit = rl.rlim_cur;
	return end <= rl.rlim_cur;
}

/* Whether a directory (*up) lets no one but the effective user rename or
 * replace what it holds: owned by that user or root, and sticky when group
 * or others may write it. name is for the reason, which goes to why. */
static bool parent_trusted(const struct stat *up, const char *name, char *why,
			   size_t len)
{
	if (up->st_uid != geteuid() && up->st_uid != 0) {
		snprintf(why, len, "%s is owned by uid %u", name,
			 (unsigned int)up->st_uid);
		return false;
	}
	if ((up->st_mode & (S_IWGRP | S_IWOTH)) && !(up->st_mode & S_ISVTX)) {
		snprintf(why, len,
			 "%s is writable by group or others and not sticky "
			 "(mode %04o)",
			 name, (unsigned int)(up->st_mode & 07777));
		return false;
	}
	return true;
}

/* Whether the directory open at dirfd may hold spools: a directory owned
 * by the effective user and writable by no one else. *st gets its
 * identity; the reason, when not, goes to why. */
static bool dir_trusted(int dirfd, struct stat *st, char *why, size_t len)
{
	uid_t me = geteuid();

	if (fstat(dirfd, st) != 0 || !S_ISDIR(st->st_mode)) {
		snprintf(why, len, "%s is not a directory", obs_proc.dir);
		return false;
	}
	if (st->st_uid != me) {
		snprintf(why, len, "%s is owned by uid %u, not by uid %u",
			 obs_proc.dir, (unsigned int)st->st_uid,
			 (unsigned int)me);
		return false;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len,
			 "%s is writable by group or others (mode %04o)",
			 obs_proc.dir, (unsigned int)(st->st_mode & 07777));
		return false;
	}
	return true;
}

/* Whether the parent of the directory open at dirfd is trusted (see
 * parent_trusted). */
static bool dir_parent_trusted(int dirfd, char *why, size_t len)
{
	char name[sizeof(obs_proc.dir) + 16];
	struct stat up;

	if (fstatat(dirfd, "..", &up, 0) != 0) {
		snprintf(why, len, "cannot check the parent of %s: %s",
			 obs_proc.dir, strerror(errno));
		return false;
	}
	snprintf(name, sizeof(name), "the parent of %s", obs_proc.dir);
	return parent_trusted(&up, name, why, len);
}

/* Make the missing spool directory: its parent with mkdir -p, then the
 * directory itself (0700) relative to the parent, once the parent is
 * trusted. Returns it open (O_PATH), or -1 with the reason in why. */
static int make_dir(char *why, size_t len)
{
	char path[sizeof(obs_proc.dir)], *last;
	const char *parent = path;
	size_t n = strlen(obs_proc.dir);
	struct stat up;
	int pfd, fd = -1;

	memcpy(path, obs_proc.dir, n + 1);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	last = strrchr(path, '/');
	if (!last) {
		parent = ".";
		last = path;
	} else if (last == path) {
		parent = "/";
		last++;
	} else {
		*last++ = '\0';
	}
	if (make_dirs(parent) != 0) {
		snprintf(why, len, "cannot create %s: %s", parent,
			 strerror(errno));
		return -1;
	}
	pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &up) != 0) {
		snprintf(why, len, "cannot open %s: %s", parent,
			 strerror(errno));
		goto out;
	}
	if (!parent_trusted(&up, parent, why, len))
		goto out;
	if (mkdirat(pfd, last, 0700) != 0 && errno != EEXIST) {
		snprintf(why, len, "cannot create %s: %s", obs_proc.dir,
			 strerror(errno));
		goto out;
	}
	fd = openat(pfd, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		snprintf(why, len, "cannot open %s: %s", obs_proc.dir,
			 strerror(errno));
out:
	if (pfd >= 0)
		obs_sys_close(pfd);
	return fd;
}

/* The spool directory, opened (O_PATH) and checked with dir_trusted; when
 * creating, made if missing (make_dir) and its parent checked too. -1
 * with the reason in why. */
static int open_dir(bool creating, struct stat *st, char *why, size_t len)
{
	int fd = open(obs_proc.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && creating) {
		fd = make_dir(why, len);
		if (fd < 0)
			return -1;
	} else if (fd < 0) {
		snprintf(why, len, "cannot open %s: %s", obs_proc.dir,
			 strerror(errno));
		return -1;
	}
	if (!dir_trusted(fd, st, why, len) ||
	    (creating && !dir_parent_trusted(fd, why, len))) {
		obs_sys_close(fd);
		return -1;
	}
	return fd;
}

static void fill_header(struct obs_spool_header *h)
{
	struct timespec rt, mono;
	ssize_t n;

	memcpy(h->magic, OBS_SPOOL_MAGIC, OBS_SPOOL_MAGIC_LEN);
	h->version = OBS_SPOOL_VERSION;
	h->header_size = OBS_SPOOL_HEADER_SIZE;
	h->record_size = OBS_RECORD_SIZE;
	h->pid = obs_proc.pid;
	h->ppid = (int32_t)getppid();
	h->flags = obs_proc.events ? OBS_SPOOL_EVENTS : 0;
	/* The pair: read the realtime clock between two monotonic reads and
	 * keep the midpoint, so the pair is good to well under a microsecond.
	 */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &rt);
	{
		struct timespec mono2;
		int64_t m1 = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
		int64_t m2;

		clock_gettime(CLOCK_MONOTONIC, &mono2);
		m2 = (int64_t)mono2.tv_sec * 1000000000 + mono2.tv_nsec;
		h->monotonic_ns = m1 + (m2 - m1) / 2;
	}
	h->realtime_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	h->start_ns = obs_proc.start_ns;
	copy_str(h->client, sizeof(h->client), obs_proc.client);
	copy_str(h->host, sizeof(h->host), obs_proc.host);
	n = readlink("/proc/self/exe", h->program, sizeof(h->program) - 1);
	if (n < 0)
		copy_str(h->program, sizeof(h->program),
			 program_invocation_name);
	_Static_assert(sizeof(obs_proc.argv) <= sizeof(h->argv), "argv size");
	memcpy(h->argv, obs_proc.argv, obs_proc.argv_len);
	h->argv_len = obs_proc.argv_len;
}

/* A client name fit for a file name: letters, digits, '-', '_', '.'. */
static void safe_name(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	for (; src[i] && i + 1 < size; i++) {
		char ch = src[i];
		bool ok = (ch >= 'a' && ch <= 'z') ||
			  (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
			  ch == '.';
		dst[i] = ok ? ch : '_';
	}
	dst[i] = '\0';
	if (i == 0 || dst[0] == '.')
		dst[0] = '_';
}

/* What segment_create writes before it maps the file: the header and the
 * first records (zeros), chunk 0 exactly. Static: too much for a hooked
 * call's stack; creation holds the layer's mutex. */
static struct {
	struct obs_spool_header header;
	char records[OBS_RECORD_SIZE << OBS_SPOOL_FIRST_SHIFT];
} first;

/* Segment n's file name: <base>.spool, then <base>.000001.spool, ... */
static int segment_name(uint32_t n, char *out, size_t size)
{
	int len = n == 0 ? snprintf(out, size, "%s.spool", spool.base)
			 : snprintf(out, size, "%s.%06u.spool", spool.base,
				    (unsigned int)n);

	return len < 0 || (size_t)len >= size ? -1 : 0;
}

/* Create segment number n in the checked directory dirfd, as slot g, and
 * map its chunk 0; under the mutex. Its header continues the one before
 * (prev, NULL for the first). The file is made under a name no reader
 * takes (NAME.new: not *.spool), and takes its own once its header is
 * written: a reader (slicer --follow) never finds a spool without one.
 * -1 with the reason in why. */
static int segment_create(struct segment *g, int dirfd, uint32_t n,
			  const struct obs_spool_header *prev, char *why,
			  size_t len)
{
	char name[sizeof(spool.base) + 16], tmp[sizeof(name) + 4];
	struct stat st;
	uint64_t limit;
	void *map;
	int fd;

	if (segment_name(n, name, sizeof(name)) != 0 ||
	    snprintf(tmp, sizeof(tmp), "%s.new", name) >= (int)sizeof(tmp) ||
	    snprintf(spool.path, sizeof(spool.path), "%s/%s", obs_proc.dir,
		     name) >= (int)sizeof(spool.path)) {
		snprintf(why, len, "the spool's name is too long");
		return -1;
	}
	if (!fsize_allows(sizeof(first), &limit)) {
		snprintf(why, len,
			 "the file size limit (ulimit -f) of %llu bytes leaves "
			 "no room for a spool",
			 (unsigned long long)limit);
		return -1;
	}
	fd = openat(dirfd, tmp,
		    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
			    O_NOCTTY,
		    0600);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(why, len, "cannot create %s: %s", spool.path,
			 strerror(errno));
		goto fail;
	}
	/* Chunk 0 is written, not faulted in through the mapping: that backs
	 * its blocks (a full file system fails here, not with SIGBUS later),
	 * and on ext4 the first write fault into a hole costs ~0.2 ms and
	 * each later one ~10 us (page_mkwrite), a buffered write ~1.4 us a
	 * page. Nothing else reads the file yet, so the zeros overwrite
	 * nothing. Before T1 of the first connect. */
	memset(&first, 0, sizeof(first)); /* again after fork, a roll-over */
	fill_header(&first.header);
	first.header.segment = n;
	first.header.segment_records = spool.seg_records;
	if (prev) {
		first.header.first_record =
			prev->first_record + spool.seg_records;
		/* the process's count goes on (the slicer keeps the most) */
		first.header.records_dropped = __atomic_load_n(
			&prev->records_dropped, __ATOMIC_RELAXED);
	}
	errno = 0;
	if (pwrite(fd, &first, sizeof(first), 0) != (ssize_t)sizeof(first)) {
		snprintf(why, len, "cannot write %s: %s", spool.path,
			 errno ? strerror(errno) : "short write");
		goto fail_unlink;
	}
	map = mmap(NULL, sizeof(first), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	if (map == MAP_FAILED) {
		snprintf(why, len, "cannot map %s: %s", spool.path,
			 strerror(errno));
		goto fail_unlink;
	}
	if (renameat(dirfd, tmp, dirfd, name) != 0) {
		snprintf(why, len, "cannot name %s: %s", spool.path,
			 strerror(errno));
		munmap(map, sizeof(first));
		goto fail_unlink;
	}
	obs_sys_close(fd);
	memset(g, 0, sizeof(*g));
	g->number = n;
	g->file_dev = st.st_dev;
	g->file_ino = st.st_ino;
	g->chunk[0] = (char *)map + OBS_SPOOL_HEADER_SIZE;
	g->chunks = 1;
	__atomic_store_n(&g->hdr, (struct obs_spool_header *)map,
			 __ATOMIC_RELEASE);
	return 0;
fail_unlink:
	unlinkat(dirfd, tmp, 0);
fail:
	if (fd >= 0)
		obs_sys_close(fd);
	return -1;
}

/* The segment geometry from the environment: segment_mb MiB a segment
 * (1 GiB at most, the limit at most), limit_mb MiB in all. */
static void spool_sizes(void)
{
	uint64_t seg = obs_proc.segment_mb ? obs_proc.segment_mb
					   : OBS_SPOOL_SEGMENT_MB;
	uint64_t limit =
		obs_proc.limit_mb ? obs_proc.limit_mb : OBS_SPOOL_LIMIT_MB;

	if (seg > OBS_SPOOL_MAX_RECORDS / OBS_SPOOL_MB_RECORDS)
		seg = OBS_SPOOL_MAX_RECORDS / OBS_SPOOL_MB_RECORDS;
	if (seg > limit)
		seg = limit;
	spool.seg_records = seg * OBS_SPOOL_MB_RECORDS;
	spool.limit = limit << 20;
}

/* Create this process's spool (segment 0) in the checked directory; under
 * the mutex. Says why once when it cannot. */
static int spool_create(void)
{
	char why[sizeof(obs_proc.dir) + 256], name[64];
	struct stat st;
	int dirfd, n;

	safe_name(name, sizeof(name), obs_proc.client);
	n = snprintf(spool.base, sizeof(spool.base), "%s.%d.%lld", name,
		     (int)obs_proc.pid, (long long)obs_proc.start_ns);
	if (n < 0 || (size_t)n >= sizeof(spool.base))
		return -1;
	spool_sizes();
	dirfd = open_dir(true, &st, why, sizeof(why));
	if (dirfd < 0) {
		OBS_LOG(OBS_LOG_WARN, "not recording: %s", why);
		return -1;
	}
	spool.dir_dev = st.st_dev;
	spool.dir_ino = st.st_ino;
	spool.uid = geteuid();
	if (segment_create(&spool.seg[0], dirfd, 0, NULL, why, sizeof(why)) !=
	    0) {
		OBS_LOG(OBS_LOG_WARN, "not recording: %s", why);
		obs_sys_close(dirfd);
		return -1;
	}
	obs_sys_close(dirfd);
	epoch_next();
	__atomic_store_n(&spool.cur, &spool.seg[0], __ATOMIC_RELEASE);
	OBS_LOG(OBS_LOG_INFO, "spool %s", spool.path);
	return 0;
}

static __attribute__((noinline)) int spool_ensure_slow(void)
{
	int rc = 0, saved;

	if (in_spool_lock)
		return -1; /* a signal handler's connect while making it */
	saved = errno;
	obs_mutex_lock();
	in_spool_lock = true;
	if (!spool.cur) {
		if (spool.failed || spool_create() != 0) {
			spool.failed = true;
			rc = -1;
		}
	}
	in_spool_lock = false;
	obs_mutex_unlock();
	errno = saved;
	return rc;
}

/* Inlined into the connect hooks by LTO (a load once the spool is made;
 * "inline" beside the extern declaration of layer.h keeps this the
 * external definition). */
__attribute__((always_inline)) inline int obs_spool_ensure(void)
{
	if (__builtin_expect(
		    __atomic_load_n(&spool.cur, __ATOMIC_ACQUIRE) != NULL, 1))
		return 0;
	return spool_ensure_slow();
}

/* The spool directory opened again (O_PATH), checked to be the one the
 * spool was created in and still trusted. -1 with the reason in why. */
static int spool_dir(char *why, size_t len)
{
	struct stat st;
	int dirfd = open_dir(false, &st, why, len);

	if (dirfd >= 0 &&
	    (st.st_dev != spool.dir_dev || st.st_ino != spool.dir_ino)) {
		snprintf(why, len,
			 "%s is no longer the directory it was made in",
			 obs_proc.dir);
		obs_sys_close(dirfd);
		return -1;
	}
	return dirfd;
}

/* Segment g's file opened again for growth: the directory by name (see
 * spool_dir), the file relative to it, never through a symlink, checked
 * to be the very file created. -1 with the reason in why. */
static int spool_reopen(const struct segment *g, char *why, size_t len)
{
	char name[sizeof(spool.base) + 16];
	struct stat st;
	int dirfd, fd;

	dirfd = spool_dir(why, len);
	if (dirfd < 0)
		return -1;
	fd = segment_name(g->number, name, sizeof(name)) != 0
		     ? -1
		     : openat(dirfd, name,
			      O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
				      O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, len, "cannot open it again: %s", strerror(errno));
		obs_sys_close(dirfd);
		return -1;
	}
	obs_sys_close(dirfd);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != g->file_dev || st.st_ino != g->file_ino) {
		snprintf(why, len, "it is no longer the file created");
		obs_sys_close(fd);
		return -1;
	}
	return fd;
}

/* Map chunks of segment g until chunk k is mapped, each one's blocks
 * reserved before it is mapped; under the mutex. 0, or -1 with the reason
 * in why. */
static int spool_map_upto(struct segment *g, unsigned int k, char *why,
			  size_t len)
{
	int fd = -1, rc = -1, err;

	while (g->chunks <= k) {
		unsigned int next = g->chunks;
		uint64_t limit;
		size_t size;
		void *map;
		off_t off;

		chunk_extent(next, &off, &size);
		if (!fsize_allows((uint64_t)off + size, &limit)) {
			snprintf(why, len,
				 "%llu bytes would pass the file size limit "
				 "(ulimit -f) of %llu bytes",
				 (unsigned long long)off + size,
				 (unsigned long long)limit);
			goto out;
		}
		if (fd < 0 && (fd = spool_reopen(g, why, len)) < 0)
			goto out;
		err = posix_fallocate(fd, off, (off_t)size);
		if (err != 0) {
			snprintf(why, len, "cannot reserve %zu bytes more: %s",
				 size, strerror(err));
			goto out;
		}
		map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   off);
		if (map == MAP_FAILED) {
			snprintf(why, len, "cannot map %zu bytes more: %s",
				 size, strerror(errno));
			goto out;
		}
		/* its pages made writable now, in one call, rather than by
		 * a fault at the first store into each (Linux 5.14 and later;
		 * elsewhere the call fails and the faults come as before) */
		(void)madvise(map, size, MADV_POPULATE_WRITE);
		__atomic_store_n(&g->chunk[next], (char *)map,
				 __ATOMIC_RELEASE);
		g->chunks = next + 1;
	}
	rc = 0;
out:
	if (fd >= 0)
		obs_sys_close(fd);
	return rc;
}

/* Whether every record of the sealed segment g is published and complete:
 * nothing will be written to it again. Resumes where it stopped last. */
static bool segment_done(struct segment *g)
{
	for (uint64_t i = g->done_upto; i < spool.seg_records; i++) {
		uint64_t first_idx;
		unsigned int k = chunk_of(i, &first_idx);
		const struct obs_record *r;

		if (k >= g->chunks) {
			g->done_upto = i;
			return false;
		}
		r = (const struct obs_record *)(g->chunk[k] +
						(i - first_idx) *
							OBS_RECORD_SIZE);
		if (__atomic_load_n(&r->kind, __ATOMIC_ACQUIRE) == 0 ||
		    !(__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) &
		      OBS_RS_COMPLETE)) {
			g->done_upto = i;
			return false;
		}
	}
	g->done_upto = spool.seg_records;
	return true;
}

static void segment_unmap(struct segment *g)
{
	for (unsigned int k = 0; k < g->chunks; k++) {
		size_t len;
		off_t off;

		chunk_extent(k, &off, &len);
		munmap(k == 0 ? (void *)g->hdr : (void *)g->chunk[k], len);
	}
	memset(g, 0, sizeof(*g));
}

/* Unmap the sealed segment g, every record of it complete, and free its
 * slot. Its chunk 0 (the header) stays mapped for OBS_SPOOL_KEPT more
 * retirements: a thread that loaded spool.cur before the roll-over may
 * still add 1 to the header's counter; it gets a slot past the segment's
 * end, so it touches no other chunk, and tries the current segment. */
static void segment_retire(struct segment *g)
{
	void **kept = &spool.kept[spool.kept_next++ % OBS_SPOOL_KEPT];

	if (*kept)
		munmap(*kept, sizeof(first));
	*kept = g->hdr;
	for (unsigned int k = 1; k < g->chunks; k++) {
		size_t len;
		off_t off;

		chunk_extent(k, &off, &len);
		munmap(g->chunk[k], len);
	}
	memset(g, 0, sizeof(*g));
}

/* The bytes of records this process's segments up to number `upto` hold on
 * disk now (the slicer may have deleted some); spool.oldest moves past
 * those gone. */
static uint64_t spool_on_disk(int dirfd, uint32_t upto)
{
	char name[sizeof(spool.base) + 16];
	uint64_t sum = 0;
	bool gone = true;

	for (uint32_t n = spool.oldest; n <= upto; n++) {
		struct stat st;

		if (segment_name(n, name, sizeof(name)) != 0 ||
		    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (gone)
				spool.oldest = n + 1;
			continue;
		}
		gone = false;
		if ((uint64_t)st.st_size > OBS_SPOOL_HEADER_SIZE)
			sum += (uint64_t)st.st_size - OBS_SPOOL_HEADER_SIZE;
	}
	return sum;
}

/* Roll the full segment g (the current one) over into the next; under
 * the mutex. 0 done; 1 it waits (the limit, or every slot holds records
 * in flight), the reason in why; -1 it cannot (the reason in why). */
static int spool_roll(struct segment *g, char *why, size_t len)
{
	struct segment *next = NULL;
	bool ending = g->hdr->flags & OBS_SPOOL_ENDED;
	uint64_t used;
	int dirfd;

	for (unsigned int i = 0; i < OBS_SPOOL_SEGMENTS; i++) {
		struct segment *s = &spool.seg[i];

		/* not while exiting: a failed exec takes the completion of
		 * the connections still open back */
		if (s->hdr && s != g && !ending && segment_done(s))
			segment_retire(s);
		if (!s->hdr && !next)
			next = s;
	}
	if (!next) {
		snprintf(why, len,
			 "each of its %u segments mapped has records in "
			 "flight (connections still open)",
			 OBS_SPOOL_SEGMENTS);
		return 1;
	}
	dirfd = spool_dir(why, len);
	if (dirfd < 0)
		return -1;
	used = spool_on_disk(dirfd, g->number);
	if (used + spool.seg_records * OBS_RECORD_SIZE > spool.limit) {
		snprintf(why, len,
			 "its segments on disk hold %llu MiB, the limit "
			 "(OBSERVE_SPOOL_LIMIT_MB) is %llu MiB",
			 (unsigned long long)(used >> 20),
			 (unsigned long long)(spool.limit >> 20));
		obs_sys_close(dirfd);
		return 1;
	}
	if (segment_create(next, dirfd, g->number + 1, g->hdr, why, len) != 0) {
		obs_sys_close(dirfd);
		return -1;
	}
	obs_sys_close(dirfd);
	if (ending)
		next->hdr->flags |= OBS_SPOOL_ENDED;
	__atomic_fetch_or(&g->hdr->flags, OBS_SPOOL_SEALED, __ATOMIC_RELEASE);
	epoch_next();
	__atomic_store_n(&spool.cur, next, __ATOMIC_RELEASE);
	spool.retry_at = 0;
	OBS_LOG(OBS_LOG_INFO, "spool %s", spool.path);
	return 0;
}

/* Segment g's chunk k made available: 0, *c the chunk, mapped now if it
 * was not; 1, the spool went on in the next segment (k beyond g's end):
 * try there; -1, the record is lost. When growth fails recording stops
 * for good and one warning says why; a roll-over that must wait is said
 * once and tried again every OBS_SPOOL_RETRY drops. -1 too, the record
 * lost but recording going on, for a hook re-entered from a signal
 * handler while its thread grows the spool. Keeps errno. */
static int spool_grow(struct segment *g, struct obs_spool_header *h,
		      unsigned int k, char **c)
{
	char why[sizeof(obs_proc.dir) + 256];
	uint64_t retry = __atomic_load_n(&spool.retry_at, __ATOMIC_RELAXED);
	int saved = errno, rc = -1, roll;

	if (__atomic_load_n(&spool.stopped, __ATOMIC_ACQUIRE) || in_spool_lock)
		return -1; /* stopped, or re-entered from a signal handler */
	if (k >= OBS_SPOOL_CHUNKS && retry &&
	    __atomic_load_n(&h->records_dropped, __ATOMIC_RELAXED) < retry &&
	    g == __atomic_load_n(&spool.cur, __ATOMIC_ACQUIRE))
		return -1; /* a roll-over waits */
	obs_mutex_lock();
	in_spool_lock = true;
	if (spool.stopped)
		goto out;
	if (g->hdr != h || (k >= OBS_SPOOL_CHUNKS && g != spool.cur)) {
		rc = 1; /* another thread rolled it over (g may be reused) */
		goto out;
	}
	if (k < OBS_SPOOL_CHUNKS) {
		if (spool_map_upto(g, k, why, sizeof(why)) == 0) {
			*c = g->chunk[k];
			rc = 0;
			goto out;
		}
	} else if ((roll = spool_roll(g, why, sizeof(why))) >= 0) {
		rc = roll == 0 ? 1 : -1;
		if (roll == 1) {
			spool.retry_at =
				g->hdr->records_dropped + OBS_SPOOL_RETRY;
			if (!spool.waited)
				OBS_LOG(OBS_LOG_WARN,
					"spool %s: %s; records are counted as "
					"dropped until it can go on",
					spool.path, why);
			spool.waited = true;
		}
		goto out;
	}
	__atomic_store_n(&spool.stopped, true, __ATOMIC_RELEASE);
	if (geteuid() != spool.uid)
		OBS_LOG(OBS_LOG_WARN,
			"spool %s: %s (the process runs as uid %u now, the "
			"spool was made as uid %u: it dropped privileges); "
			"recording stopped, later records are counted as "
			"dropped",
			spool.path, why, (unsigned int)geteuid(),
			(unsigned int)spool.uid);
	else
		OBS_LOG(OBS_LOG_WARN,
			"spool %s: %s; recording stopped, later records are "
			"counted as dropped",
			spool.path, why);
out:
	in_spool_lock = false;
	obs_mutex_unlock();
	errno = saved;
	return rc;
}

/* The slot of record idx (reserved in segment g, header h), its chunk
 * mapped if need be: 0 and *r; 1, g is full and the spool went on in the
 * next segment (try there); -1, the record is lost. */
static inline int slot_of(struct segment *g, struct obs_spool_header *h,
			  uint64_t idx, struct obs_record **r)
{
	uint64_t first_idx;
	unsigned int k = chunk_of(idx, &first_idx);
	char *c = k < OBS_SPOOL_CHUNKS
			  ? __atomic_load_n(&g->chunk[k], __ATOMIC_ACQUIRE)
			  : NULL;

	if (__builtin_expect(!c, 0)) {
		int rc = spool_grow(g, h, k, &c);

		if (rc != 0)
			return rc;
	}
	*r = (struct obs_record *)(c + (idx - first_idx) * OBS_RECORD_SIZE);
	return 0;
}

/* reserve's way when the fast one fails: a chunk to map, a full segment
 * to roll over, a retired segment. */
static __attribute__((noinline)) int
reserve_slow(unsigned int n, struct segment **gp, struct obs_spool_header **hp,
	     uint64_t *idx, struct obs_record **r)
{
	struct segment *g = __atomic_load_n(&spool.cur, __ATOMIC_ACQUIRE);

	if (!g)
		return -1; /* no spool: nothing to count in */
	for (int tries = 0; tries < 3; tries++) {
		/* NULL: a segment retired since g was loaded (see
		 * segment_retire) */
		struct obs_spool_header *h =
			__atomic_load_n(&g->hdr, __ATOMIC_ACQUIRE);
		int rc;

		if (h == NULL) {
			g = __atomic_load_n(&spool.cur, __ATOMIC_ACQUIRE);
			continue;
		}
		*idx = __atomic_fetch_add(&h->records_reserved, n,
					  __ATOMIC_RELAXED);
		rc = slot_of(g, h, *idx, r);
		if (rc == 0) {
			*gp = g;
			*hp = h;
			return 0;
		}
		g = __atomic_load_n(&spool.cur, __ATOMIC_ACQUIRE);
		if (rc < 0)
			break;
	}
	__atomic_fetch_add(&g->hdr->records_dropped, n, __ATOMIC_RELAXED);
	return -1;
}

/* n (1 or 2) consecutive slots reserved in the current segment: the first
 * one's record in *r, its number in *idx, the segment in *gp and its
 * header in *hp. 0, or -1 with n records counted as lost. The fast way:
 * the current segment, its chunk mapped. */
static inline __attribute__((always_inline)) int
reserve(unsigned int n, struct segment **gp, struct obs_spool_header **hp,
	uint64_t *idx, struct obs_record **r)
{
	struct segment *g = __atomic_load_n(&spool.cur, __ATOMIC_ACQUIRE);
	struct obs_spool_header *h =
		g ? __atomic_load_n(&g->hdr, __ATOMIC_ACQUIRE) : NULL;

	if (__builtin_expect(h != NULL, 1)) {
		uint64_t first_idx;
		unsigned int k;
		char *c;

		*idx = __atomic_fetch_add(&h->records_reserved, n,
					  __ATOMIC_RELAXED);
		k = chunk_of(*idx, &first_idx);
		c = k < OBS_SPOOL_CHUNKS
			    ? __atomic_load_n(&g->chunk[k], __ATOMIC_ACQUIRE)
			    : NULL;
		if (__builtin_expect(c != NULL, 1)) {
			*r = (struct obs_record *)(c + (*idx - first_idx) *
							       OBS_RECORD_SIZE);
			*gp = g;
			*hp = h;
			return 0;
		}
		/* the slot taken: map its chunk, or roll over and try again */
		switch (slot_of(g, h, *idx, r)) {
		case 0:
			*gp = g;
			*hp = h;
			return 0;
		case -1:
			__atomic_fetch_add(&h->records_dropped, n,
					   __ATOMIC_RELAXED);
			return -1;
		}
	}
	return g ? reserve_slow(n, gp, hp, idx, r) : -1;
}

/* Inlined by LTO, as obs_record_alloc2 (an exchange's beginning without
 * an HTTP record of its own takes one slot). */
__attribute__((always_inline)) inline struct obs_record *obs_record_alloc(void)
{
	struct obs_spool_header *h;
	struct segment *g;
	struct obs_record *r;
	uint64_t idx;

	return reserve(1, &g, &h, &idx, &r) == 0 ? r : NULL;
}

/* Inlined into its callers by LTO (it runs at every exchange's beginning
 * and at every connect); "inline" beside the extern declaration of
 * exchange.h keeps this the external definition. */
__attribute__((always_inline)) inline struct obs_record *
obs_record_alloc2(struct obs_record **second)
{
	struct obs_spool_header *h;
	struct segment *g;
	struct obs_record *one;
	uint64_t idx;

	*second = NULL;
	if (reserve(2, &g, &h, &idx, &one) != 0)
		return NULL;
	if (idx + 1 >= spool.seg_records)
		/* the segment's last slot: the second in the next one */
		*second = obs_record_alloc();
	else if ((idx + 1) & ((1u << OBS_SPOOL_FIRST_SHIFT) - 1))
		/* every chunk begins at a multiple of the first chunk's
		 * records: elsewhere the next slot is in the same chunk */
		*second = one + 1;
	else if (slot_of(g, h, idx + 1, second) != 0) {
		*second = NULL;
		__atomic_fetch_add(&h->records_dropped, 1, __ATOMIC_RELAXED);
	}
	return one;
}

void obs_spool_mark_ended(bool ended)
{
	struct segment *g = __atomic_load_n(&spool.cur, __ATOMIC_ACQUIRE);
	struct obs_spool_header *h;

	if (!g)
		return;
	h = g->hdr; /* the earlier segments: sealed, the slicer reads on */
	if (ended) {
		h->end_mono_ns = obs_now();
		__atomic_fetch_or(&h->flags, OBS_SPOOL_ENDED, __ATOMIC_RELEASE);
	} else {
		__atomic_fetch_and(&h->flags, ~OBS_SPOOL_ENDED,
				   __ATOMIC_RELEASE);
		h->end_mono_ns = 0;
	}
}

void obs_spool_forget(void)
{
	for (unsigned int i = 0; i < OBS_SPOOL_SEGMENTS; i++)
		if (spool.seg[i].hdr)
			segment_unmap(&spool.seg[i]);
	for (unsigned int i = 0; i < OBS_SPOOL_KEPT; i++)
		if (spool.kept[i])
			munmap(spool.kept[i], sizeof(first));
	memset(&spool, 0, sizeof(spool));
	epoch_next();
}
