/* follow.c - slicer --follow DIR: stay running and ingest the spool files
 * of DIR as they are written (see follow.h).
 *
 * The layer writes through a shared mapping, which makes no inotify event:
 * inotify tells of new files (IN_CREATE, IN_MOVED_TO), of their growth (the
 * file is extended with ftruncate: IN_MODIFY) and of their writers' close
 * (IN_CLOSE_WRITE); the files whose writer still runs are looked at every
 * TICK_MS, 88 bytes of their header read: a file whose count of reserved
 * records or flags changed (a new record, the process's exit) is ingested
 * in the next batch; one that changed nothing is ingested again every
 * REREAD_MS all the same (records are updated in place while in flight).
 * A file whose writer has left is ingested once more, then only looked at
 * again when inotify says so. With no writer running, the loop sleeps in
 * poll() until an event or a signal: nothing is done while idle.
 *
 * A file that is no longer there (deleted once stored, --delete, or by
 * anyone) is forgotten without a word, whether inotify told (IN_DELETE)
 * or its events were lost to an overflow of the queue (a busy writer):
 * a look that finds no file, or an ingest that deleted it, is enough.
 */
#define _GNU_SOURCE
#include "follow.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "spool_format.h"

#define TICK_MS 250
#define BATCH_MS 100 /* events gathered this long into one batch */
#define REREAD_MS 10000

struct spool {
	char *path;
	uint64_t reserved; /* the header's records_reserved */
	uint32_t flags;	   /* the header's flags */
	int32_t pid;
	bool dirty; /* to ingest in the next batch */
	bool live;  /* the writer was running at the last look */
	bool gone;  /* its file is no more: forgotten after the batch */
	int64_t ingested_ms; /* when it was last ingested */
};

struct follower {
	const char *dir;
	obs_store *store;
	struct obs_ingest_stats *stats;
	FILE *msgs;
	struct spool *v;
	size_t n, cap;
	int worst;
};

int64_t slicer_follow_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool is_spool_name(const char *name)
{
	size_t n = strlen(name), m = strlen(OBS_SPOOL_SUFFIX);

	return name[0] != '.' && n > m &&
	       strcmp(name + n - m, OBS_SPOOL_SUFFIX) == 0;
}

static struct spool *find(struct follower *f, const char *name, bool add)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->v[i].path, path) == 0)
			return &f->v[i];
	if (!add)
		return NULL;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct spool *v = realloc(f->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		f->v = v;
		f->cap = cap;
	}
	struct spool *s = &f->v[f->n];
	memset(s, 0, sizeof(*s));
	if (!(s->path = strdup(path)))
		return NULL;
	s->live = true; /* until its header says otherwise */
	f->n++;
	return s;
}

/* s's file is no longer there: forget it (the last entry takes its
 * place). */
static void forget(struct follower *f, struct spool *s)
{
	free(s->path);
	*s = f->v[--f->n];
}

static bool gone(const struct spool *s)
{
	return access(s->path, F_OK) != 0 && errno == ENOENT;
}

/* Read the header's counters; true when they changed since the last look
 * (or the file is gone: the next batch forgets it). live: the process has
 * not left (its exit flag unset, its pid there). */
static bool look(struct spool *s)
{
	struct obs_spool_header h;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	ssize_t got;
	bool changed;

	if (fd < 0)
		return errno == ENOENT;
	got = pread(fd, &h, offsetof(struct obs_spool_header, client), 0);
	close(fd);
	if (got != (ssize_t)offsetof(struct obs_spool_header, client))
		return false;
	changed = h.records_reserved != s->reserved || h.flags != s->flags;
	s->reserved = h.records_reserved;
	s->flags = h.flags;
	s->pid = h.pid;
	/* an events spool's writer, till its pid is gone (the store's
	 * word for over, common/store.c) */
	s->live = (!(h.flags & OBS_SPOOL_ENDED) ||
		   (h.flags & OBS_SPOOL_EVENTS)) &&
		  h.pid > 0 && !(kill(h.pid, 0) != 0 && errno == ESRCH);
	return changed;
}

/* Store what s's file holds now. False when the file is gone: it was
 * not there, or this stored it wholly and deleted it (--delete). */
static bool ingest(struct follower *f, struct spool *s)
{
	uint64_t deleted = f->stats->files_deleted;
	int rc;

	if (gone(s))
		return false;
	rc = obs_store_ingest_path(f->store, s->path, f->stats, f->msgs, NULL,
				   NULL, 0);
	s->dirty = false;
	s->ingested_ms = slicer_follow_now_ms();
	if (rc < 0)
		f->worst = 2;
	else if (rc > 0 && f->worst == 0)
		f->worst = 1;
	return f->stats->files_deleted == deleted;
}

/* Every spool of the directory, ingested (at start, and when inotify lost
 * events). */
static void scan(struct follower *f)
{
	char **names = NULL;
	size_t n = 0;

	if (obs_store_list_spools(f->dir, &names, &n) != 0) {
		fprintf(f->msgs, "slicer: %s: cannot read directory: %s\n",
			f->dir, strerror(errno));
		f->worst = 2;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(names[i], '/');
		struct spool *s = find(f, base ? base + 1 : names[i], true);
		if (s) {
			look(s);
			if (!ingest(f, s))
				forget(f, s);
		}
		free(names[i]);
	}
	free(names);
}

/* The files that changed, or that are live and not read for a while. */
static void tick(struct follower *f, int64_t now)
{
	for (size_t i = 0; i < f->n; i++) {
		struct spool *s = &f->v[i];
		bool was_live = s->live;
		if (!s->live && !s->dirty)
			continue;
		if (look(s) || (was_live && !s->live) ||
		    now - s->ingested_ms >= REREAD_MS)
			s->dirty = true;
	}
}

static int by_path(const void *a, const void *b)
{
	const struct spool *x = a, *y = b;

	return obs_store_spool_order(&x->path, &y->path);
}

/* The files to ingest, a process's segments in order (the spools sorted:
 * an event spool's connection goes on from one segment into the next);
 * those gone forgotten. True when the files of writers that are gone
 * want another pass (common/store.h: files_again): they are dirty again. */
static bool batch(struct follower *f)
{
	uint64_t again = f->stats->files_again;

	if (f->n) /* none yet: f->v is NULL, which qsort may not take */
		qsort(f->v, f->n, sizeof(*f->v), by_path);
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].dirty && !ingest(f, &f->v[i]))
			f->v[i].gone = true;
	if (f->stats->files_again != again)
		for (size_t i = 0; i < f->n; i++)
			if (!f->v[i].live && !f->v[i].gone)
				f->v[i].dirty = true;
	for (size_t i = 0; i < f->n;) {
		if (f->v[i].gone)
			forget(f, &f->v[i]); /* another took its place */
		else
			i++;
	}
	return f->stats->files_again != again;
}

static bool any_live(const struct follower *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].live || f->v[i].dirty)
			return true;
	return false;
}

/* Read what inotify says; true when the queue overflowed (scan again). */
static bool events(struct follower *f, int fd)
{
	char buf[8192]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	bool overflow = false;
	ssize_t len;

	while ((len = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const void *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW)
				overflow = true;
			if (!ev->len || !is_spool_name(ev->name))
				continue;
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
				struct spool *s = find(f, ev->name, false);
				if (s)
					forget(f, s);
				continue;
			}
			struct spool *s = find(f, ev->name, true);
			if (s)
				s->dirty = true;
		}
	}
	return overflow;
}

static void stop_signals(sigset_t *stop)
{
	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGINT);
	sigaddset(stop, SIGHUP);
}

void slicer_follow_block_signals(void)
{
	sigset_t stop;

	stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, NULL);
}

int slicer_follow(obs_store *store, const char *dir,
		  struct obs_ingest_stats *stats, FILE *msgs,
		  const struct follow_hook *hook)
{
	struct follower f = {
		.dir = dir, .store = store, .stats = stats, .msgs = msgs
	};
	sigset_t stop;
	int ino, sfd;
	int64_t due = -1; /* when the gathered events are ingested */
	int64_t hook_due = hook ? 0 : -1; /* when the hook runs next */
	int again = 0; /* passes in a row that asked for another */
	bool stopping = false;

	stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, NULL); /* blocked already by main */
	sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (sfd < 0 || ino < 0 ||
	    inotify_add_watch(ino, dir,
			      IN_CREATE | IN_MOVED_TO | IN_MODIFY |
				      IN_CLOSE_WRITE | IN_DELETE |
				      IN_MOVED_FROM | IN_ONLYDIR) < 0) {
		fprintf(msgs, "slicer: %s: cannot follow: %s\n", dir,
			strerror(errno));
		if (sfd >= 0)
			close(sfd);
		if (ino >= 0)
			close(ino);
		return 2;
	}
	/* what was written before we (re)started */
	scan(&f);
	while (!stopping) {
		struct pollfd p[2] = { { .fd = ino, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		int64_t now = slicer_follow_now_ms();
		int timeout = -1;

		if (due >= 0)
			timeout = (int)(due > now ? due - now : 0);
		else if (any_live(&f))
			timeout = TICK_MS;
		if (hook_due >= 0 && (timeout < 0 || hook_due - now < timeout))
			timeout = (int)(hook_due > now ? hook_due - now : 0);
		if (poll(p, 2, timeout) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			stopping = true;
		}
		if (p[0].revents & POLLIN) {
			if (events(&f, ino))
				scan(&f);
			if (due < 0)
				due = slicer_follow_now_ms() + BATCH_MS;
		}
		now = slicer_follow_now_ms();
		if (stopping || due < 0 || now >= due) {
			tick(&f, now);
			/* another pass soon, a few times at most */
			due = batch(&f) && again++ < 3
				      ? slicer_follow_now_ms() + BATCH_MS
				      : -1;
			if (due < 0)
				again = 0;
			if (hook)
				hook_due = 0; /* new data: run it */
		}
		now = slicer_follow_now_ms();
		if (hook && !stopping && hook_due >= 0 && now >= hook_due) {
			int64_t after = hook->run(hook->ctx, now);

			hook_due = after < 0 ? -1 : now + after;
		}
	}
	/* what the writers did up to the signal is stored */
	for (size_t i = 0; i < f.n; i++) {
		if (f.v[i].live || f.v[i].dirty)
			ingest(&f, &f.v[i]);
		free(f.v[i].path);
	}
	free(f.v);
	close(ino);
	close(sfd);
	return f.worst;
}
