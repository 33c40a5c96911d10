/* spool.c - the writer side of the spool: one file per process, mapped
 * shared in chunks, records handed out by an atomic counter (see
 * spool_format.h).
 *
 * The spool lives inside other people's programs and must never harm them:
 * - Address space grows with use: the file is mapped in chunks, the header
 *   and 128 records first, then chunks that double up to 1 MiB, 1 GiB in
 *   all. A chunk is never moved while the process runs, so the record
 *   pointers handed out stay valid; record index -> chunk is arithmetic.
 * - No signal: a store through a shared mapping into a page the file system
 *   cannot back raises SIGBUS, growing a file past RLIMIT_FSIZE raises
 *   SIGXFSZ. Each chunk's blocks are reserved (written, or posix_fallocate)
 *   before it is mapped, and nothing grows past RLIMIT_FSIZE or the cap.
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

/* Chunk 0 is the header and 2^FIRST_SHIFT records; chunk k = 1..DOUBLING
 * holds records [2^(FIRST_SHIFT+k-1), 2^(FIRST_SHIFT+k)); every later chunk
 * holds 2^CHUNK_SHIFT records. Every chunk starts on a page of the file.
 * Chunks stay small because reserving one happens in a host's thread and
 * on tmpfs allocates and zeroes its pages (~0.3 ms a MiB); the price is a
 * mapping per MiB (about 1030 for a full 1 GiB spool). */
#define OBS_SPOOL_FIRST_SHIFT 7		   /* 128 records, 16 KiB */
#define OBS_SPOOL_CHUNK_SHIFT 13	   /* 1 MiB: the largest chunk */
#define OBS_SPOOL_MAX_RECORDS (1ull << 23) /* 1 GiB of records at most */
#define OBS_SPOOL_DOUBLING (OBS_SPOOL_CHUNK_SHIFT - OBS_SPOOL_FIRST_SHIFT + 1)
#define OBS_SPOOL_FIXED_BASE (2ull << OBS_SPOOL_CHUNK_SHIFT)
#define OBS_SPOOL_CHUNKS                                                       \
	(1 + OBS_SPOOL_DOUBLING +                                              \
	 ((OBS_SPOOL_MAX_RECORDS - OBS_SPOOL_FIXED_BASE) >>                    \
	  OBS_SPOOL_CHUNK_SHIFT))

_Static_assert(OBS_SPOOL_HEADER_SIZE % 4096 == 0 &&
		       (OBS_RECORD_SIZE << OBS_SPOOL_FIRST_SHIFT) % 4096 == 0,
	       "chunks start on a page");

struct obs_process obs_proc;

static pthread_mutex_t obs_mutex = PTHREAD_MUTEX_INITIALIZER;
/* This thread holds the mutex to make or grow the spool: a hook re-entered
 * from a signal handler then gives up its record rather than wait for a
 * lock its own thread holds. */
static __thread bool in_spool_lock __attribute__((tls_model("initial-exec")));

static struct {
	struct obs_spool_header *hdr; /* NULL until created */
	/* chunk[k]: the first record of chunk k, NULL until mapped; written
	 * under the mutex, in order, published with release */
	char *chunk[OBS_SPOOL_CHUNKS];
	unsigned int chunks; /* chunks mapped */
	bool failed;	     /* creation failed: do not retry */
	bool stopped;	     /* growth failed: every later record is dropped */
	dev_t dir_dev, file_dev; /* what was created, for growth to check */
	ino_t dir_ino, file_ino;
	uid_t uid;	     /* the effective user id that made it */
	char name[96];	     /* the file's name in the directory */
	char path[PATH_MAX]; /* directory and name, for messages */
} spool;

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

/* The chunk that holds record idx (OBS_SPOOL_CHUNKS: beyond the cap), and
 * in *first that chunk's first record. The hot path: no loop, no call. */
static inline unsigned int chunk_of(uint64_t idx, uint64_t *first)
{
	unsigned int k;

	*first = 0;
	if (idx < (1ull << OBS_SPOOL_FIRST_SHIFT))
		return 0;
	if (idx < OBS_SPOOL_FIXED_BASE) {
		k = 64u -
		    (unsigned int)__builtin_clzll(idx >> OBS_SPOOL_FIRST_SHIFT);
		*first = 1ull << (OBS_SPOOL_FIRST_SHIFT + k - 1);
		return k;
	}
	if (idx >= OBS_SPOOL_MAX_RECORDS)
		return OBS_SPOOL_CHUNKS;
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

/* What spool_create writes before it maps the file: the header and the
 * first records (zeros), chunk 0 exactly. Static: too much for a hooked
 * call's stack; creation holds the layer's mutex. */
static struct {
	struct obs_spool_header header;
	char records[OBS_RECORD_SIZE << OBS_SPOOL_FIRST_SHIFT];
} first;

/* Create this process's spool in the checked directory and map chunk 0;
 * under the mutex. Says why once when it cannot. */
static int spool_create(void)
{
	struct stat st;
	uint64_t limit;
	char why[sizeof(obs_proc.dir) + 256], name[64];
	void *map;
	int dirfd, fd = -1, n;

	safe_name(name, sizeof(name), obs_proc.client);
	n = snprintf(spool.name, sizeof(spool.name), "%s.%d.%lld.spool", name,
		     (int)obs_proc.pid, (long long)obs_proc.start_ns);
	if (n < 0 || (size_t)n >= sizeof(spool.name))
		return -1;
	n = snprintf(spool.path, sizeof(spool.path), "%s/%s", obs_proc.dir,
		     spool.name);
	if (n < 0 || (size_t)n >= sizeof(spool.path))
		return -1;
	if (!fsize_allows(sizeof(first), &limit)) {
		OBS_LOG(OBS_LOG_WARN,
			"not recording: the file size limit (ulimit -f) of "
			"%llu bytes leaves no room for a spool",
			(unsigned long long)limit);
		return -1;
	}
	dirfd = open_dir(true, &st, why, sizeof(why));
	if (dirfd < 0) {
		OBS_LOG(OBS_LOG_WARN, "not recording: %s", why);
		return -1;
	}
	spool.dir_dev = st.st_dev;
	spool.dir_ino = st.st_ino;
	fd = openat(dirfd, spool.name,
		    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
			    O_NOCTTY,
		    0600);
	if (fd < 0 || fstat(fd, &st) != 0) {
		OBS_LOG(OBS_LOG_WARN, "not recording: cannot create %s: %s",
			spool.path, strerror(errno));
		goto fail;
	}
	spool.file_dev = st.st_dev;
	spool.file_ino = st.st_ino;
	spool.uid = geteuid();
	/* Chunk 0 is written, not faulted in through the mapping: that backs
	 * its blocks (a full file system fails here, not with SIGBUS later),
	 * and on ext4 the first write fault into a hole costs ~0.2 ms and
	 * each later one ~10 us (page_mkwrite), a buffered write ~1.4 us a
	 * page. Nothing else can see the file yet, so the zeros overwrite
	 * nothing. Before T1 of the first connect. */
	memset(&first.header, 0, sizeof(first.header)); /* again after fork */
	fill_header(&first.header);
	errno = 0;
	if (pwrite(fd, &first, sizeof(first), 0) != (ssize_t)sizeof(first)) {
		OBS_LOG(OBS_LOG_WARN, "not recording: cannot write %s: %s",
			spool.path, errno ? strerror(errno) : "short write");
		goto fail_unlink;
	}
	map = mmap(NULL, sizeof(first), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	if (map == MAP_FAILED) {
		OBS_LOG(OBS_LOG_WARN, "not recording: cannot map %s: %s",
			spool.path, strerror(errno));
		goto fail_unlink;
	}
	obs_sys_close(fd);
	obs_sys_close(dirfd);
	spool.chunk[0] = (char *)map + OBS_SPOOL_HEADER_SIZE;
	spool.chunks = 1;
	__atomic_store_n(&spool.hdr, (struct obs_spool_header *)map,
			 __ATOMIC_RELEASE);
	OBS_LOG(OBS_LOG_INFO, "spool %s", spool.path);
	return 0;
fail_unlink:
	unlinkat(dirfd, spool.name, 0);
fail:
	if (fd >= 0)
		obs_sys_close(fd);
	obs_sys_close(dirfd);
	return -1;
}

int obs_spool_ensure(void)
{
	int rc = 0, saved;

	if (__atomic_load_n(&spool.hdr, __ATOMIC_ACQUIRE))
		return 0;
	if (in_spool_lock)
		return -1; /* a signal handler's connect while making it */
	saved = errno;
	obs_mutex_lock();
	in_spool_lock = true;
	if (!spool.hdr) {
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

/* The spool file opened again for growth: the directory by name, checked
 * to be the one the spool was created in and still trusted; the file
 * relative to it, never through a symlink, checked to be the very file
 * created. -1 with the reason in why. */
static int spool_reopen(char *why, size_t len)
{
	struct stat st;
	int dirfd, fd;

	dirfd = open_dir(false, &st, why, len);
	if (dirfd < 0)
		return -1;
	if (st.st_dev != spool.dir_dev || st.st_ino != spool.dir_ino) {
		snprintf(why, len,
			 "%s is no longer the directory it was made in",
			 obs_proc.dir);
		obs_sys_close(dirfd);
		return -1;
	}
	fd = openat(dirfd, spool.name,
		    O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, len, "cannot open it again: %s", strerror(errno));
		obs_sys_close(dirfd);
		return -1;
	}
	obs_sys_close(dirfd);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != spool.file_dev || st.st_ino != spool.file_ino) {
		snprintf(why, len, "it is no longer the file created");
		obs_sys_close(fd);
		return -1;
	}
	return fd;
}

/* Map chunks until chunk k is mapped, each one's blocks reserved before
 * it is mapped; under the mutex. 0, or -1 with the reason in why. */
static int spool_map_upto(unsigned int k, char *why, size_t len)
{
	int fd = -1, rc = -1, err;

	while (spool.chunks <= k) {
		unsigned int next = spool.chunks;
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
		if (fd < 0 && (fd = spool_reopen(why, len)) < 0)
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
		__atomic_store_n(&spool.chunk[next], (char *)map,
				 __ATOMIC_RELEASE);
		spool.chunks = next + 1;
	}
	rc = 0;
out:
	if (fd >= 0)
		obs_sys_close(fd);
	return rc;
}

/* Chunk k, mapped now if it was not, or NULL when the spool cannot grow:
 * then recording stops for good and one warning says why. NULL too, the
 * record lost but recording going on, for a hook re-entered from a signal
 * handler while its thread grows the spool. Keeps errno. */
static char *spool_grow(unsigned int k)
{
	char why[sizeof(obs_proc.dir) + 256], *c = NULL;
	int saved = errno;

	if (__atomic_load_n(&spool.stopped, __ATOMIC_ACQUIRE) || in_spool_lock)
		return NULL; /* stopped, or re-entered from a signal handler */
	obs_mutex_lock();
	in_spool_lock = true;
	if (spool.stopped)
		goto out;
	if (k >= OBS_SPOOL_CHUNKS)
		snprintf(why, sizeof(why),
			 "it holds %llu records, the most a spool may",
			 (unsigned long long)OBS_SPOOL_MAX_RECORDS);
	else if (spool_map_upto(k, why, sizeof(why)) == 0) {
		c = spool.chunk[k];
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
	return c;
}

/* The slot of record idx (reserved), its chunk mapped if need be; NULL
 * (counted as dropped) when it cannot be. */
static inline struct obs_record *slot_of(struct obs_spool_header *h,
					 uint64_t idx)
{
	uint64_t first_idx;
	unsigned int k;
	char *c;

	k = chunk_of(idx, &first_idx);
	c = k < OBS_SPOOL_CHUNKS
		    ? __atomic_load_n(&spool.chunk[k], __ATOMIC_ACQUIRE)
		    : NULL;
	if (__builtin_expect(!c, 0) && !(c = spool_grow(k))) {
		__atomic_fetch_add(&h->records_dropped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return (struct obs_record *)(c + (idx - first_idx) * OBS_RECORD_SIZE);
}

struct obs_record *obs_record_alloc(void)
{
	struct obs_spool_header *h =
		__atomic_load_n(&spool.hdr, __ATOMIC_ACQUIRE);

	if (!h)
		return NULL;
	return slot_of(h, __atomic_fetch_add(&h->records_reserved, 1,
					     __ATOMIC_RELAXED));
}

struct obs_record *obs_record_alloc2(struct obs_record **second)
{
	struct obs_spool_header *h =
		__atomic_load_n(&spool.hdr, __ATOMIC_ACQUIRE);
	uint64_t idx;
	struct obs_record *one;

	*second = NULL;
	if (!h)
		return NULL;
	idx = __atomic_fetch_add(&h->records_reserved, 2, __ATOMIC_RELAXED);
	one = slot_of(h, idx);
	/* every chunk begins at a multiple of the first chunk's records:
	 * elsewhere the next slot is in the same chunk, right after */
	*second = one && ((idx + 1) & ((1u << OBS_SPOOL_FIRST_SHIFT) - 1))
			  ? one + 1
			  : slot_of(h, idx + 1);
	return one;
}

void obs_spool_mark_ended(bool ended)
{
	struct obs_spool_header *h =
		__atomic_load_n(&spool.hdr, __ATOMIC_ACQUIRE);

	if (!h)
		return;
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
	for (unsigned int k = 0; k < spool.chunks; k++) {
		size_t len;
		off_t off;

		chunk_extent(k, &off, &len);
		munmap(k == 0 ? (void *)spool.hdr : (void *)spool.chunk[k],
		       len);
	}
	memset(&spool, 0, sizeof(spool));
}
