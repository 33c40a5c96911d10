/* pull.c - manager pull: merge the databases of many client machines into
 * one central database.
 *
 *   manager pull -o CENTRAL.db [-e SSH-COMMAND] SOURCE...
 *
 * SOURCE is a client database, a directory of them (*.db), or
 * ssh://[user@]host[:port]/path/observe.db. Each source is checked
 * (integrity, schema version) and merged in one transaction of its own
 * (common/merge.c); rows are matched on their identity (client name, pid,
 * process start; connection number; exchange number), so pulling the same
 * source again, or a source that grew, adds exactly the new rows. A source
 * that fails is named with the reason and skipped; the others still
 * merge.
 *
 * An ssh source is never copied raw: on the client machine sqlite3 (or
 * python3's sqlite3 module) makes a consistent backup of the live database
 * into a temporary file, which is streamed back over the same ssh
 * connection into a local temporary file, checked and merged like a local
 * one. ssh runs with BatchMode (keys or an agent, never a password
 * prompt); -e gives the command and its options, as rsync's -e does.
 * Nothing is left behind on either machine, also when the pull is stopped
 * by SIGINT, SIGTERM or SIGHUP: the snapshot, the files SQLite made beside
 * it and the directory are removed, ssh is stopped, and manager dies of
 * the signal.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "files.h"
#include "merge.h"
#include "options.h"
#include "text.h"
#include "usage.h"

extern char **environ;

struct source {
	char *path; /* a local file, or the ssh:// URL */
	bool ssh;
};

struct puller {
	obs_central *store; /* the central database */
	char **rsh;	    /* the ssh command and its options, NULL-ended */
	size_t n_rsh;
	FILE *tty; /* progress bar here, or NULL */
	size_t total, done;
	const char *current;
	const char *state; /* "fetching", "merging" */
	double t_source, t_shown;
	int sources, failed;
	int64_t exchanges_new;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- progress ------------------------------------------------------------ */

static void progress_show(struct puller *p)
{
	char bar[31], safe[48];
	int filled = p->total ? (int)(p->done * 30 / p->total) : 30;
	const char *name;

	if (!p->tty)
		return;
	name = p->current ? strrchr(p->current, '/') : NULL;
	name = name && name[1] ? name + 1 : p->current ? p->current : "";
	for (int i = 0; i < 30; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[30] = '\0';
	fprintf(p->tty,
		"\r\033[K%s: [%s] %zu/%zu sources, %" PRId64
		" exchanges new  %.30s %s",
		program_invocation_short_name, bar, p->done, p->total,
		p->exchanges_new, text_tty(name, safe, sizeof(safe)),
		p->state ? p->state : "");
	if (p->state)
		fprintf(p->tty, " %.0f s", now_s() - p->t_source);
	fflush(p->tty);
	p->t_shown = now_s();
}

static void progress_clear(struct puller *p)
{
	if (p->tty && p->t_shown > 0) {
		fprintf(p->tty, "\r\033[K");
		fflush(p->tty);
	}
}

/* SQLite calls this every few thousand steps of a merge: keep the seconds
 * counting on a big source. */
static int progress_tick(void *arg)
{
	struct puller *p = arg;

	if (now_s() - p->t_shown >= 0.5)
		progress_show(p);
	return 0;
}

/* One line about a source that failed, over the progress bar. */
static void source_failed(struct puller *p, const char *name, const char *fmt,
			  ...) __attribute__((format(printf, 3, 4)));
static void source_failed(struct puller *p, const char *name, const char *fmt,
			  ...)
{
	va_list ap;
	char *why = NULL;
	int n;

	progress_clear(p);
	va_start(ap, fmt);
	n = vasprintf(&why, fmt, ap);
	va_end(ap);
	/* names and reasons come from file names and the other machine */
	fputs("manager: ", stderr);
	text_tty_put(stderr, name);
	fputs(": ", stderr);
	text_tty_put(stderr, n >= 0 ? why : "out of memory");
	fputs(" (skipped)\n", stderr);
	free(n >= 0 ? why : NULL);
	p->failed++;
}

static void merge_step(void *ctx, const char *step)
{
	struct puller *p = ctx;

	p->state = step;
	progress_show(p);
}

/* Merge one client database at path (named `name` in messages);
 * 0 merged, -1 skipped (reason printed). */
static int merge_file(struct puller *p, const char *path, const char *name)
{
	char why[512];
	int64_t added;

	/* a FIFO (or a device) would block the open or never end */
	if (files_check_regular(path, 0, why, sizeof(why)) != 0 ||
	    obs_merge_file(p->store, path, merge_step, p, &added, why,
			   sizeof(why)) != 0) {
		source_failed(p, name, "%s", why);
		return -1;
	}
	p->exchanges_new += added;
	return 0;
}

/* ---- ssh sources --------------------------------------------------------- */

/* Runs on the client machine under sh -c, the database path as $1: a
 * consistent snapshot of the (possibly live) database on stdout. SQLite's
 * backup takes the database as of one transaction, never a torn file. */
static const char remote_script[] =
	"db=$1\n"
	"case $db in '~/'*) db=$HOME/${db#'~/'} ;; esac\n"
	"if [ ! -f \"$db\" ]; then echo \"no such file: $db\" >&2; exit 3; fi\n"
	"if [ ! -r \"$db\" ]; then echo \"cannot read $db\" >&2; exit 3; fi\n"
	"t=$(mktemp \"${TMPDIR:-/tmp}/observe-snapshot.XXXXXX\") || exit 4\n"
	"trap 'rm -f \"$t\"' EXIT\n"
	"trap 'exit 129' HUP INT TERM PIPE\n"
	"if command -v sqlite3 >/dev/null 2>&1; then\n"
	"  sqlite3 -bail -cmd '.timeout 10000' \"$db\" \".backup '$t'\" "
	"</dev/null >&2 || exit 5\n"
	"elif command -v python3 >/dev/null 2>&1; then\n"
	"  python3 -c 'import sqlite3, sys\n"
	"s = sqlite3.connect(sys.argv[1], timeout=10)\n"
	"d = sqlite3.connect(sys.argv[2])\n"
	"s.backup(d)\n"
	"d.close()' \"$db\" \"$t\" >&2 || exit 5\n"
	"else\n"
	"  echo 'neither sqlite3 nor python3 to take a snapshot with' >&2\n"
	"  exit 6\n"
	"fi\n"
	"cat \"$t\"\n";

/* 'text' for a POSIX shell; malloc'd. */
static char *shell_quote(const char *text)
{
	size_t n = 3;
	char *q, *o;

	for (const char *c = text; *c; c++)
		n += *c == '\'' ? 4 : 1;
	q = o = malloc(n);
	if (!q)
		return NULL;
	*o++ = '\'';
	for (const char *c = text; *c; c++) {
		if (*c == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *c;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

/* ssh://[user@]host[:port]/path; host may be [v6]. 0, or -1 with why. */
static int parse_ssh_url(const char *url, char **user, char **host, char **port,
			 char **path, const char **why)
{
	const char *a = url + 6, *slash, *at, *h, *hend, *colon = NULL;

	*user = *host = *port = *path = NULL;
	slash = strchr(a, '/');
	if (!slash || slash == a || !slash[1]) {
		*why = "expected ssh://[user@]host[:port]/path/to/observe.db";
		return -1;
	}
	at = memchr(a, '@', (size_t)(slash - a));
	h = at ? at + 1 : a;
	if (*h == '[') {
		hend = memchr(h, ']', (size_t)(slash - h));
		if (!hend) {
			*why = "unclosed [ in the host";
			return -1;
		}
		if (hend + 1 < slash) {
			if (hend[1] != ':') {
				*why = "expected :port after ]";
				return -1;
			}
			colon = hend + 1;
		}
		h++;
	} else {
		colon = memchr(h, ':', (size_t)(slash - h));
		hend = colon ? colon : slash;
	}
	if (hend == h) {
		*why = "no host";
		return -1;
	}
	if (colon) {
		if (colon + 1 == slash || strspn(colon + 1, "0123456789") !=
						  (size_t)(slash - colon - 1)) {
			*why = "the port is not a number";
			return -1;
		}
		*port = strndup(colon + 1, (size_t)(slash - colon - 1));
	}
	if (at)
		*user = strndup(a, (size_t)(at - a));
	*host = strndup(h, (size_t)(hend - h));
	/* ssh://host/~/x.db is ~/x.db there; ssh://host/abs/x.db is /abs/x.db
	 */
	*path = strdup(strncmp(slash, "/~/", 3) == 0 ? slash + 1 : slash);
	if ((at && !*user) || !*host || !*path || (colon && !*port)) {
		*why = "out of memory";
		return -1;
	}
	if ((*user && (**user == '-' || !**user)) || **host == '-') {
		*why = "a user or host may not start with '-' or be empty";
		return -1;
	}
	return 0;
}

/* The last non-empty line of a file, into buf (for ssh's reason). */
static void last_line(int fd, char *buf, size_t size)
{
	char data[4096];
	ssize_t n;
	off_t end = lseek(fd, 0, SEEK_END);
	char *line, *e;

	buf[0] = '\0';
	if (end <= 0)
		return;
	n = pread(fd, data, sizeof(data) - 1,
		  end > (off_t)sizeof(data) - 1 ? end - (off_t)sizeof(data) + 1
						: 0);
	if (n <= 0)
		return;
	data[n] = '\0';
	while (n > 0 && (data[n - 1] == '\n' || data[n - 1] == '\r'))
		data[--n] = '\0';
	line = strrchr(data, '\n');
	line = line ? line + 1 : data;
	for (e = line; *e; e++)
		if (*e == '\r')
			*e = ' ';
	n = (ssize_t)strlen(line);
	if ((size_t)n >= size)
		n = (ssize_t)size - 1; /* the end of a long line is cut */
	memcpy(buf, line, (size_t)n);
	buf[n] = '\0';
}

/* ---- temporary files, removed also when a signal stops the pull ------- */

/* Everything pull_ssh may leave in its directory: the snapshot, the files
 * SQLite makes beside it when it attaches it (it is a WAL database), ssh's
 * messages. The paths are made once, with the directory, so that the
 * signal handler needs no allocation. */
static const char *const tmp_names[] = { "snapshot.db", "snapshot.db-wal",
					 "snapshot.db-shm",
					 "snapshot.db-journal", "ssh.err" };
enum { TMP_SNAPSHOT = 0, TMP_SSH_ERR = 4, N_TMP = 5 };
static char tmp_dir[PATH_MAX], tmp_paths[N_TMP][PATH_MAX + 32];
static volatile sig_atomic_t tmp_made; /* tmp_dir and tmp_paths set */
static volatile sig_atomic_t ssh_pid;  /* the ssh that runs, or 0 */

/* The temporary directory, made on first use (0700, from mkdtemp). */
static int make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	int n;

	if (tmp_made)
		return 0;
	n = snprintf(tmp_dir, sizeof(tmp_dir), "%s/observe-pull.XXXXXX",
		     base && *base ? base : "/tmp");
	if (n < 0 || (size_t)n >= sizeof(tmp_dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* mkdtemp's 0700 less the umask: 0700 again */
	if (!mkdtemp(tmp_dir))
		return -1;
	if (chmod(tmp_dir, 0700) != 0) {
		rmdir(tmp_dir);
		return -1;
	}
	for (int i = 0; i < N_TMP; i++)
		snprintf(tmp_paths[i], sizeof(tmp_paths[i]), "%s/%s", tmp_dir,
			 tmp_names[i]);
	tmp_made = 1;
	return 0;
}

/* Remove the files of one snapshot (async-signal-safe). */
static void tmp_clear(void)
{
	if (!tmp_made)
		return;
	for (int i = 0; i < N_TMP; i++)
		unlink(tmp_paths[i]);
}

/* Remove the files and the directory (async-signal-safe). */
static void tmp_remove(void)
{
	tmp_clear();
	if (tmp_made)
		rmdir(tmp_dir);
	tmp_made = 0;
}

/* SIGINT, SIGTERM, SIGHUP: stop ssh, remove the temporary files, then die
 * of the signal (SA_RESETHAND: the default action once this returns). An
 * interrupted merge leaves the central database as it was before it (its
 * transaction is never committed). */
static void on_stop(int sig)
{
	int e = errno;

	if (ssh_pid > 0)
		kill(ssh_pid, SIGTERM);
	tmp_remove();
	errno = e;
	raise(sig);
}

/* on_stop for the stop signals, except those ignored (nohup, a
 * background job's SIGINT): they stay ignored. */
static void catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { 0 }, old;

	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

/* Run argv with stdout into out and stderr into err; its pid in ssh_pid
 * (signals held meanwhile, so that on_stop cannot miss it). 0, or the
 * error number. */
static int spawn_ssh(char **argv, int out, int err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t stop, old;
	pid_t pid;
	int rc;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_adddup2(&fa, err, 2);
	posix_spawnattr_init(&attr);
	sigprocmask(SIG_BLOCK, &stop, &old);
	/* the child starts with the mask of before */
	posix_spawnattr_setsigmask(&attr, &old);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	if (rc == 0)
		ssh_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* Fetch a snapshot of the database behind an ssh:// URL into a local
 * temporary file and merge it. */
static void pull_ssh(struct puller *p, const char *url)
{
	char *user, *host, *port, *path, *quoted = NULL, *remote = NULL;
	char reason[512];
	const char *why = NULL, *snap = tmp_paths[TMP_SNAPSHOT];
	char **argv = NULL;
	size_t n = 0;
	int out = -1, err = -1, status;
	struct stat st;

	if (parse_ssh_url(url, &user, &host, &port, &path, &why) != 0) {
		source_failed(p, url, "%s", why);
		goto done;
	}
	if (make_tmpdir() != 0) {
		source_failed(p, url, "cannot make a temporary file: %s",
			      strerror(errno));
		goto done;
	}
	quoted = shell_quote(path);
	{
		char *script = shell_quote(remote_script);
		if (!quoted || !script ||
		    asprintf(&remote, "sh -c %s observe-snapshot %s", script,
			     quoted) < 0)
			remote = NULL;
		free(script);
	}
	argv = calloc(p->n_rsh + 16, sizeof(*argv));
	if (!remote || !argv) {
		source_failed(p, url, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < p->n_rsh; i++)
		argv[n++] = p->rsh[i];
	/* after the user's options: ssh takes the first value it is given */
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-o";
	argv[n++] = "ConnectTimeout=10";
	argv[n++] = "-o";
	argv[n++] = "ServerAliveInterval=15";
	if (port) {
		argv[n++] = "-p";
		argv[n++] = port;
	}
	if (user) {
		argv[n++] = "-l";
		argv[n++] = user;
	}
	argv[n++] = "--";
	argv[n++] = host;
	argv[n++] = remote;
	argv[n] = NULL;

	out = open(snap, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	err = open(tmp_paths[TMP_SSH_ERR],
		   O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0 || err < 0) {
		source_failed(p, url, "cannot make a temporary file: %s",
			      strerror(errno));
		goto done;
	}
	p->state = "fetching";
	progress_show(p);
	status = spawn_ssh(argv, out, err);
	if (status != 0) {
		source_failed(p, url, "cannot run %s: %s", argv[0],
			      strerror(status));
		goto done;
	}
	while (waitpid(ssh_pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
	ssh_pid = 0;
	if (status != 0) {
		last_line(err, reason, sizeof(reason));
		if (status > 0 && WIFEXITED(status))
			source_failed(p, url, "%s exited with status %d%s%s",
				      argv[0], WEXITSTATUS(status),
				      reason[0] ? ": " : "", reason);
		else
			source_failed(p, url, "%s was killed%s%s", argv[0],
				      reason[0] ? ": " : "", reason);
		goto done;
	}
	if (fstat(out, &st) != 0 || st.st_size == 0) {
		source_failed(p, url, "the snapshot came back empty");
		goto done;
	}
	close(out);
	out = -1;
	merge_file(p, snap, url);
done:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	tmp_clear();
	free(quoted);
	free(remote);
	free(argv);
	free(user);
	free(host);
	free(port);
	free(path);
}

/* ---- sources ---------------------------------------------------------------
 */

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n > m && strcmp(name + n - m, suffix) == 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct source *)a)->path,
		      ((const struct source *)b)->path);
}

struct source_list {
	struct source *v;
	size_t n, cap;
};

static int add_source(struct source_list *l, char *path, bool ssh)
{
	if (!path)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct source *more = realloc(l->v, cap * sizeof(*more));
		if (!more) {
			free(path);
			return -1;
		}
		l->v = more;
		l->cap = cap;
	}
	l->v[l->n].path = path;
	l->v[l->n].ssh = ssh;
	l->n++;
	return 0;
}

/* A database, an ssh:// URL, or every *.db in a directory (sorted): the
 * list is made first, so that the progress bar knows the total. A path
 * that cannot be read is reported here and counted as failed. */
static void expand_source(struct puller *p, struct source_list *l,
			  const char *path)
{
	struct stat st;
	DIR *dir;
	struct dirent *ent;
	size_t first = l->n;

	if (strncmp(path, "ssh://", 6) == 0) {
		add_source(l, strdup(path), true);
		return;
	}
	if (stat(path, &st) != 0) {
		p->sources++;
		source_failed(p, path, "%s", strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		add_source(l, strdup(path), false);
		return;
	}
	dir = opendir(path);
	if (!dir) {
		p->sources++;
		source_failed(p, path, "cannot read directory: %s",
			      strerror(errno));
		return;
	}
	while ((ent = readdir(dir))) {
		char *full;

		if (!has_suffix(ent->d_name, ".db"))
			continue;
		if (asprintf(&full, "%s/%s", path, ent->d_name) < 0 ||
		    add_source(l, full, false) != 0)
			break;
	}
	closedir(dir);
	if (l->n > first)
		qsort(l->v + first, l->n - first, sizeof(*l->v), name_cmp);
}

/* Split -e's command at blanks; '...' and "..." group, as in rsync. */
static int split_rsh(struct puller *p, const char *cmd)
{
	char *word = malloc(strlen(cmd) + 1);
	size_t len = 0;
	bool in_word = false;
	char quote = 0;

	if (!word)
		return -1;
	for (const char *c = cmd;; c++) {
		bool end = *c == '\0';
		if (!end && quote) {
			if (*c == quote)
				quote = 0;
			else
				word[len++] = *c;
			continue;
		}
		if (!end && (*c == '\'' || *c == '"')) {
			quote = *c;
			in_word = true;
			continue;
		}
		if (end || *c == ' ' || *c == '\t' || *c == '\n') {
			if (in_word) {
				char **more = realloc(
					p->rsh, (p->n_rsh + 2) * sizeof(*more));
				word[len] = '\0';
				if (!more)
					break;
				p->rsh = more;
				p->rsh[p->n_rsh] = strdup(word);
				if (!p->rsh[p->n_rsh])
					break;
				p->rsh[++p->n_rsh] = NULL;
				len = 0;
				in_word = false;
			}
			if (end) {
				free(word);
				return quote ? -1 : (p->n_rsh ? 0 : -1);
			}
			continue;
		}
		word[len++] = *c;
		in_word = true;
	}
	free(word);
	return -1;
}

static void free_rsh(struct puller *p)
{
	for (size_t i = 0; i < p->n_rsh; i++)
		free(p->rsh[i]);
	free(p->rsh);
}

struct pull_options {
	const char *central, *rsh;
	bool quiet;
};

static const struct cmd_option options[] = {
	{ "output", 'o', CMD_TEXT, offsetof(struct pull_options, central) },
	{ "rsh", 'e', CMD_TEXT, offsetof(struct pull_options, rsh) },
	{ "quiet", 'q', CMD_FLAG, offsetof(struct pull_options, quiet) },
	{ NULL },
};
static const struct cmdline cmdline = { "manager", options, manager_usage };

int cmd_pull(int argc, char **argv)
{
	struct pull_options o = { .rsh = "ssh" };
	const char *central, *rsh;
	bool quiet;
	struct puller p = { 0 };
	struct source_list list = { 0 };
	char err[512];
	int status;

	if (cmdline_parse(&cmdline, NULL, &o, argc, argv, &status) != 0)
		return status;
	central = o.central;
	rsh = o.rsh;
	quiet = o.quiet;
	if (!central || optind >= argc) {
		manager_usage(stderr);
		return 2;
	}
	if (split_rsh(&p, rsh) != 0) {
		fprintf(stderr, "manager: -e '%s': not a command\n", rsh);
		return 2;
	}
	p.store = obs_central_open(central, err, sizeof(err));
	if (!p.store) {
		fprintf(stderr, "manager: %s\n", err);
		free_rsh(&p);
		return 2;
	}
	central = obs_central_name(p.store); /* without a password */
	if (obs_merge_prepare(p.store, err, sizeof(err)) != 0) {
		fprintf(stderr, "manager: %s: %s\n", central, err);
		obs_central_close(p.store);
		free_rsh(&p);
		return 2;
	}
	if (!quiet && isatty(STDERR_FILENO)) {
		p.tty = stderr;
		if (obs_central_sqlite(p.store))
			sqlite3_progress_handler(obs_central_sqlite(p.store),
						 100000, progress_tick, &p);
	}
	for (int i = optind; i < argc; i++)
		expand_source(&p, &list, argv[i]);
	p.total = list.n;
	catch_stop_signals();
	for (size_t i = 0; i < list.n; i++) {
		p.current = list.v[i].path;
		p.state = list.v[i].ssh ? "connecting" : "opening";
		p.t_source = now_s();
		p.sources++;
		progress_show(&p);
		if (list.v[i].ssh)
			pull_ssh(&p, list.v[i].path);
		else
			merge_file(&p, list.v[i].path, list.v[i].path);
		p.done++;
		p.state = NULL;
		progress_show(&p);
		free(list.v[i].path);
	}
	progress_clear(&p);
	free(list.v);
	if (!quiet)
		fprintf(stderr,
			"manager: %d sources, %d skipped, %" PRId64
			" exchanges new -> %s\n",
			p.sources, p.failed, p.exchanges_new, central);
	if (obs_central_sqlite(p.store))
		sqlite3_progress_handler(obs_central_sqlite(p.store), 0, NULL,
					 NULL);
	obs_central_close(p.store);
	tmp_remove();
	free_rsh(&p);
	return p.failed ? 1 : 0;
}
