/* tlskeys.c - the TLS key log's lines, taken in by the layer without a
 * file on disk (OBSERVE_CAPTURE=events; OBSERVE_TLS_KEYLOG=0 turns it
 * off), for the capture to decrypt TLS 1.3 connections (core/tlsdec.h).
 *
 * The channel: an anonymous file in memory (memfd "observe-keylog"),
 * made by the first process of the tree the layer starts in and shared by
 * all its descendants. Its path, /proc/<pid>/fd/<n>, is put into the
 * program's environment:
 *   - SSLKEYLOGFILE (Chromium, Firefox/NSS, curl, OpenSSL's and BoringSSL's
 *     programs write their secrets to the file it names), unless the user
 *     set it: then the user's own file is read (a regular file, from its
 *     size at the start on) and left as it is, so that it gets every line
 *     it would get without the layer;
 *   - NODE_OPTIONS --tls-keylog=<path> in a node process whose options do
 *     not ask for a key log already (node prints a warning for it once);
 *     in any process, an ancestor layer's path there is replaced by its
 *     own (a node started by a node writes where its own layer reads);
 *   - OBSERVE_KEYLOG_PATH, the path, for the descendants: a child's layer
 *     opens that path (the same file in memory), and puts its own
 *     /proc/<pid>/fd/<n> in the variables in its turn (so a process whose
 *     parent ended still writes where its layer reads). Chromium's
 *     browser opens the path and hands the descriptor to its network
 *     service, which writes there: every process of the tree reads every
 *     line, and keeps those of its own connections.
 * The file is opened with O_CLOEXEC (no descendant inherits the
 * descriptor), and is never on a disk.
 *
 * Reading: a connection that awaits its secrets (obs_keylog_find, outside
 * every lock but the process mutex) reads what was appended since the last
 * look (pread at this process's offset; the descriptor checked to be the
 * file the layer opened), parses it (core/keylog.c) and keeps the two
 * traffic secrets of each client_random in a table (mapped, locked in
 * memory, out of core dumps). A secret taken by its connection leaves the
 * table, and its lines are punched out of the shared file (zeroes). The
 * buffers that held lines are wiped. Nothing of this reaches the spool.
 */
#define _GNU_SOURCE
#include "keylog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer.h"
#include "tlskeys.h"

#define PATH_VAR "OBSERVE_KEYLOG_PATH"
#define MEMFD_NAME "observe-keylog"
#define ENTRIES 256
#define RANGES 6

/* A client_random's lines: its traffic secrets (TLS 1.3), or its master
 * secret given as both (1.2: CLIENT_RANDOM), and where its lines stand in
 * the shared file (to punch out once taken). */
struct entry {
	uint8_t random[32];
	uint8_t have; /* bits 1 << OBS_KL_CLIENT_TRAFFIC, SERVER_TRAFFIC */
	uint8_t len;
	uint8_t nranges;
	bool used;
	uint8_t client[OBS_KEYLOG_SECRET_MAX];
	uint8_t server[OBS_KEYLOG_SECRET_MAX];
	uint64_t off[RANGES];
	uint16_t rlen[RANGES];
};

/* A file read: the shared one (ours) or the user's. */
struct source {
	int fd;
	bool ours;
	dev_t dev;
	ino_t ino;
	struct obs_keylog_reader r; /* its lines, from its offset r.off */
	char path[256];		    /* the user's file, opened when it exists */
};

/* Under the process mutex. */
static struct {
	bool on;
	int nsources;
	struct source src[3];
	struct entry *table; /* ENTRIES, mapped */
	unsigned next;	     /* the slot to take when none is free */
} kl;

bool obs_keylog_on(void)
{
	return kl.on;
}

static bool same_file(const struct source *s)
{
	struct stat st;

	return s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev &&
	       st.st_ino == s->ino;
}

/* s's user file, opened if it is a regular file now. */
static bool user_open(struct source *s)
{
	struct stat st;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		s->path[0] = '\0'; /* a pipe, a device: not read */
		return false;
	}
	s->fd = fd;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return true;
}

/* The user's own key log at path, len bytes (SSLKEYLOGFILE, node's
 * --tls-keylog): read from its size now on, or from its start once it is
 * made. */
static void add_user(const char *path, size_t len)
{
	struct source *s = &kl.src[kl.nsources];

	if (kl.nsources >= 3 || len == 0 || len >= sizeof(s->path))
		return;
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	memcpy(s->path, path, len);
	s->path[len] = '\0';
	if (user_open(s)) {
		struct stat st;

		if (fstat(s->fd, &st) == 0)
			obs_keylog_reader_init(&s->r, (uint64_t)st.st_size);
	}
	kl.nsources++;
}

static bool add_source(int fd, bool ours, uint64_t off)
{
	struct stat st;
	struct source *s = &kl.src[kl.nsources];

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->ours = ours;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	obs_keylog_reader_init(&s->r,
			       off == UINT64_MAX ? (uint64_t)st.st_size : off);
	kl.nsources++;
	return true;
}

/* Whether fd is the layer's shared file (an ancestor's, or ours). */
static bool is_ours(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strncmp(target, "/memfd:" MEMFD_NAME,
		       sizeof("/memfd:" MEMFD_NAME) - 1) == 0;
}

/* This process is node (its options are read after the layer's start). */
static bool is_node(void)
{
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	return strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0;
}

/* Whether NODE_OPTIONS' key log, p (n bytes), is the path a layer set: a
 * /proc/PID/fd/N that is the shared file, or that an ancestor no longer
 * holds open. */
static bool layer_path(const char *p, size_t n)
{
	char path[64];
	int fd;
	bool ours;

	if (n >= sizeof(path) || strncmp(p, "/proc/", 6) != 0)
		return false;
	memcpy(path, p, n);
	path[n] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return true;
	ours = is_ours(fd);
	close(fd);
	return ours;
}

/* NODE_OPTIONS for this process: an ancestor layer's key log (val, n
 * bytes, in node) replaced by path, or path added in a node that asks for
 * no key log; the user's own key log read. */
static void node_options(const char *node, const char *path)
{
	const char *opt = node ? strstr(node, "--tls-keylog=") : NULL;
	const char *val = opt ? opt + sizeof("--tls-keylog=") - 1 : NULL;
	size_t n = val ? strcspn(val, " \t") : 0;
	char opts[4096];
	int len = -1;

	if (val && layer_path(val, n))
		len = snprintf(opts, sizeof(opts), "%.*s%s%s",
			       (int)(val - node), node, path, val + n);
	else if (val && is_node())
		add_user(val, n);
	else if (is_node() && !(node && strstr(node, "--tls-keylog")))
		len = snprintf(opts, sizeof(opts), "%s%s--tls-keylog=%s",
			       node ? node : "", node && *node ? " " : "",
			       path);
	if (len > 0 && (size_t)len < sizeof(opts))
		setenv("NODE_OPTIONS", opts, 1);
}

void obs_keylog_setup(void)
{
	const char *off = secure_getenv("OBSERVE_TLS_KEYLOG");
	const char *inherited = secure_getenv(PATH_VAR);
	const char *user = secure_getenv("SSLKEYLOGFILE");
	const char *node = secure_getenv("NODE_OPTIONS");
	bool user_set;
	char path[64];
	int fd = -1;
	void *table;

	if (!obs_proc.events || (off && strcmp(off, "0") == 0))
		return;
	/* the user's own: anything but the path the layer set */
	user_set =
		user && *user && !(inherited && strcmp(user, inherited) == 0);
	if (inherited && strncmp(inherited, "/proc/", 6) == 0) {
		/* not yet known to be ours: opened as nothing else can
		 * react to (no terminal taken, no wait on a FIFO) */
		fd = open(inherited,
			  O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 && !is_ours(fd)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC);
	table = mmap(NULL, ENTRIES * sizeof(struct entry),
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		     0);
	if (fd < 0 || table == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		if (table != MAP_FAILED)
			munmap(table, ENTRIES * sizeof(struct entry));
		OBS_LOG(OBS_LOG_WARN, "TLS key log: %s: not decrypted",
			strerror(errno));
		return;
	}
	madvise(table, ENTRIES * sizeof(struct entry), MADV_DONTDUMP);
	(void)mlock(table, ENTRIES * sizeof(struct entry)); /* if allowed */
	kl.table = table;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
	/* what was written before this process began is not its own */
	add_source(fd, true, UINT64_MAX);
	setenv(PATH_VAR, path, 1);
	if (user_set)
		add_user(user, strlen(user));
	else
		setenv("SSLKEYLOGFILE", path, 1);
	node_options(node, path);
	kl.on = kl.nsources > 0;
}

/* The entry of random, or a new one (the oldest taken when full). */
static struct entry *entry_of(const uint8_t random[32])
{
	struct entry *e;

	for (int i = 0; i < ENTRIES; i++)
		if (kl.table[i].used &&
		    memcmp(kl.table[i].random, random, 32) == 0)
			return &kl.table[i];
	for (int i = 0; i < ENTRIES; i++)
		if (!kl.table[i].used) {
			e = &kl.table[i];
			goto fresh;
		}
	e = &kl.table[kl.next++ % ENTRIES];
fresh:
	explicit_bzero(e, sizeof(*e));
	e->used = true;
	memcpy(e->random, random, 32);
	return e;
}

/* A line of source ctx, at offset at, len bytes long. */
static void line(void *ctx, const struct obs_keylog_line *l, uint64_t at,
		 size_t len)
{
	struct source *s = ctx;
	struct entry *e = entry_of(l->random);

	if (s->ours && e->nranges < RANGES && len <= 0xffff) {
		e->off[e->nranges] = at;
		e->rlen[e->nranges++] = (uint16_t)len;
	}
	if (l->label == OBS_KL_CLIENT_TRAFFIC ||
	    l->label == OBS_KL_SERVER_TRAFFIC) {
		memcpy(l->label == OBS_KL_CLIENT_TRAFFIC ? e->client
							 : e->server,
		       l->secret, l->secret_len);
		e->len = l->secret_len;
		e->have |= (uint8_t)(1u << l->label);
	} else if (l->label == OBS_KL_MASTER) { /* TLS 1.2: it is both */
		memcpy(e->client, l->secret, l->secret_len);
		memcpy(e->server, l->secret, l->secret_len);
		e->len = l->secret_len;
		e->have = 1u << OBS_KL_CLIENT_TRAFFIC |
			  1u << OBS_KL_SERVER_TRAFFIC;
	}
}

/* What was appended to s since the last look, its lines taken. */
static void poll_source(struct source *s)
{
	char buf[4096];
	ssize_t got;

	if (s->fd < 0 && (s->path[0] == '\0' || !user_open(s)))
		return; /* the user's file, not made yet */
	if (!same_file(s))
		return; /* its descriptor was closed and reused: not read */
	while ((got = pread(s->fd, buf, sizeof(buf), (off_t)s->r.off)) > 0) {
		obs_keylog_feed(&s->r, buf, (size_t)got, line, s);
		if ((size_t)got < sizeof(buf))
			break;
	}
	explicit_bzero(buf, sizeof(buf));
}

bool obs_keylog_find(const uint8_t random[32], size_t len, uint8_t *client,
		     uint8_t *server)
{
	const uint8_t both =
		1u << OBS_KL_CLIENT_TRAFFIC | 1u << OBS_KL_SERVER_TRAFFIC;
	int err = errno;
	bool found = false;

	if (!kl.on)
		return false;
	obs_mutex_lock();
	if (kl.table) {
		for (int i = 0; i < kl.nsources; i++)
			poll_source(&kl.src[i]);
		for (int i = 0; i < ENTRIES && !found; i++) {
			struct entry *e = &kl.table[i];

			if (!e->used || e->have != both || e->len != len ||
			    memcmp(e->random, random, 32) != 0)
				continue;
			memcpy(client, e->client, len);
			memcpy(server, e->server, len);
			found = true;
			/* its lines out of the shared file */
			for (int r = 0; r < e->nranges && same_file(&kl.src[0]);
			     r++)
				(void)fallocate(kl.src[0].fd,
						FALLOC_FL_PUNCH_HOLE |
							FALLOC_FL_KEEP_SIZE,
						(off_t)e->off[r], e->rlen[r]);
			explicit_bzero(e, sizeof(*e));
		}
	}
	obs_mutex_unlock();
	errno = err;
	return found;
}
