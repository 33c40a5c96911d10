/* spool.c - the writer side of the spool: one file per process, mapped
 * shared, records handed out by an atomic counter (see spool_format.h).
 *
 * The whole address range a spool may ever use (OBS_SPOOL_MAP_BYTES) is
 * mapped once, so record addresses never move; the file behind it grows in
 * large steps with ftruncate, by a thread holding the layer's mutex, before
 * any record in the new part is touched. The layer keeps no file descriptor
 * open: growth reopens the file by name, so a program that closes every fd
 * neither breaks the spool nor gets its own files written by us.
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exchange.h"
#include "layer.h"

#define OBS_SPOOL_MAP_BYTES (1ull << 30) /* 8 M records at most */
#define OBS_SPOOL_FIRST_BYTES (1ull << 20)
#define OBS_SPOOL_MAX_STEP (64ull << 20)

struct obs_process obs_proc;

static pthread_mutex_t obs_mutex = PTHREAD_MUTEX_INITIALIZER;

static struct {
	struct obs_spool_header *hdr; /* NULL until created */
	struct obs_record *records;
	uint64_t capacity;            /* records the file holds now */
	uint64_t max_records;
	bool failed;                  /* creation failed: do not retry */
	char path[PATH_MAX];
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
	n = snprintf(line, sizeof(line), "observe[%s:%d]: ",
		     program_invocation_short_name, (int)obs_proc.pid);
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

/* mkdir -p for the spool directory; the directories we create are 0700. */
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

/* Resize the file behind the mapping to hold `records` records. */
static int spool_resize(uint64_t records)
{
	int fd = open(spool.path, O_WRONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = ftruncate(fd, (off_t)(OBS_SPOOL_HEADER_SIZE +
				  records * OBS_RECORD_SIZE));
	obs_sys_close(fd);
	return rc;
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
	 * keep the midpoint, so the pair is good to well under a microsecond. */
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
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
			  ch == '.';
		dst[i] = ok ? ch : '_';
	}
	dst[i] = '\0';
	if (i == 0 || dst[0] == '.')
		dst[0] = '_';
}

/* What spool_create writes before it maps the file: the header and the
 * first OBS_SPOOL_PREWRITTEN bytes of records (zeros). Static: too much
 * for a hooked call's stack; creation holds the layer's mutex. */
#define OBS_SPOOL_PREWRITTEN (16u << 10) /* 128 records; 20 KiB on disk */
static struct {
	struct obs_spool_header header;
	char records[OBS_SPOOL_PREWRITTEN];
} first;

static int spool_create(void)
{
	char name[64];
	void *map;
	int fd, n;

	safe_name(name, sizeof(name), obs_proc.client);
	n = snprintf(spool.path, sizeof(spool.path), "%s/%s.%d.%lld.spool",
		     obs_proc.dir, name, (int)obs_proc.pid,
		     (long long)obs_proc.start_ns);
	if (n < 0 || (size_t)n >= sizeof(spool.path))
		return -1;
	fd = open(spool.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0 && errno == ENOENT) { /* first spool in this directory */
		if (make_dirs(obs_proc.dir) != 0) {
			OBS_LOG(OBS_LOG_WARN,
				"cannot create spool directory %s: %s",
				obs_proc.dir, strerror(errno));
			return -1;
		}
		fd = open(spool.path,
			  O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			  0600);
	}
	if (fd < 0) {
		OBS_LOG(OBS_LOG_WARN, "cannot create spool %s: %s", spool.path,
			strerror(errno));
		return -1;
	}
	spool.capacity = (OBS_SPOOL_FIRST_BYTES - OBS_SPOOL_HEADER_SIZE) /
			 OBS_RECORD_SIZE;
	if (ftruncate(fd, (off_t)(OBS_SPOOL_HEADER_SIZE +
				  spool.capacity * OBS_RECORD_SIZE)) != 0) {
		OBS_LOG(OBS_LOG_WARN, "cannot size spool %s: %s", spool.path,
			strerror(errno));
		goto fail;
	}
	/* The header and the first records' pages are written, not faulted
	 * in through the mapping: on ext4 the first write fault into a hole
	 * costs ~0.2 ms and each later one ~10 us (page_mkwrite), a buffered
	 * write ~1.4 us a page. Nothing else can see the file yet, so zeros
	 * written here overwrite nothing. Before T1 of the first connect. */
	memset(&first.header, 0, sizeof(first.header)); /* again after fork */
	fill_header(&first.header);
	if (pwrite(fd, &first, sizeof(first), 0) != (ssize_t)sizeof(first)) {
		OBS_LOG(OBS_LOG_WARN, "cannot write spool %s: %s", spool.path,
			strerror(errno));
		goto fail;
	}
	map = mmap(NULL, OBS_SPOOL_MAP_BYTES, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (map == MAP_FAILED) {
		OBS_LOG(OBS_LOG_WARN, "cannot map spool %s: %s", spool.path,
			strerror(errno));
		goto fail;
	}
	obs_sys_close(fd);
	spool.max_records =
		(OBS_SPOOL_MAP_BYTES - OBS_SPOOL_HEADER_SIZE) / OBS_RECORD_SIZE;
	spool.records = (struct obs_record *)((char *)map +
					      OBS_SPOOL_HEADER_SIZE);
	__atomic_store_n(&spool.hdr, (struct obs_spool_header *)map,
			 __ATOMIC_RELEASE);
	OBS_LOG(OBS_LOG_INFO, "spool %s", spool.path);
	return 0;
fail:
	obs_sys_close(fd);
	unlink(spool.path);
	return -1;
}

int obs_spool_ensure(void)
{
	int rc = 0;

	if (__atomic_load_n(&spool.hdr, __ATOMIC_ACQUIRE))
		return 0;
	obs_mutex_lock();
	if (!spool.hdr) {
		if (spool.failed || spool_create() != 0) {
			spool.failed = true;
			rc = -1;
		}
	}
	obs_mutex_unlock();
	return rc;
}

/* Make room for record `idx`: grow the file, doubling up to a step limit. */
static bool spool_grow(uint64_t idx)
{
	bool ok = true;

	obs_mutex_lock();
	while (idx >= __atomic_load_n(&spool.capacity, __ATOMIC_ACQUIRE)) {
		uint64_t cap = spool.capacity;
		uint64_t step = cap * OBS_RECORD_SIZE < OBS_SPOOL_MAX_STEP
					? cap
					: OBS_SPOOL_MAX_STEP / OBS_RECORD_SIZE;
		uint64_t next = cap + step;

		if (next > spool.max_records)
			next = spool.max_records;
		if (next <= cap || spool_resize(next) != 0) {
			ok = false;
			break;
		}
		__atomic_store_n(&spool.capacity, next, __ATOMIC_RELEASE);
	}
	obs_mutex_unlock();
	return ok;
}

struct obs_record *obs_record_alloc(void)
{
	struct obs_spool_header *h =
		__atomic_load_n(&spool.hdr, __ATOMIC_ACQUIRE);
	uint64_t idx;

	if (!h)
		return NULL;
	idx = __atomic_fetch_add(&h->records_reserved, 1, __ATOMIC_RELAXED);
	if (idx >= __atomic_load_n(&spool.capacity, __ATOMIC_ACQUIRE) &&
	    !spool_grow(idx)) {
		__atomic_fetch_add(&h->records_dropped, 1, __ATOMIC_RELAXED);
		OBS_LOG(OBS_LOG_WARN, "spool full or cannot grow: record lost");
		return NULL;
	}
	return &spool.records[idx];
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
	if (spool.hdr)
		munmap(spool.hdr, OBS_SPOOL_MAP_BYTES);
	spool.hdr = NULL;
	spool.records = NULL;
	spool.capacity = 0;
	spool.failed = false;
}
