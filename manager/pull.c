/* pull.c - manager pull: merge the databases of many client machines into
 * one central database.
 *
 *   manager pull -o CENTRAL.db [-e SSH-COMMAND] SOURCE...
 *
 * SOURCE is a client database, a directory of them (*.db), or
 * ssh://[user@]host[:port]/path/observe.db. Each source is checked
 * (integrity, schema version) and merged in one transaction of its own;
 * rows are matched on their identity (client name, pid, process start;
 * connection number; exchange number), so pulling the same source again,
 * or a source that grew, adds exactly the new rows. A source that fails is
 * named with the reason and skipped; the others still merge.
 *
 * An ssh source is never copied raw: on the client machine sqlite3 (or
 * python3's sqlite3 module) makes a consistent backup of the live database
 * into a temporary file, which is streamed back over the same ssh
 * connection into a local temporary file, checked and merged like a local
 * one. ssh runs with BatchMode (keys or an agent, never a password
 * prompt); -e gives the command and its options, as rsync's -e does.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "manager.h"
#include "store.h"

extern char **environ;

/* Merge statements, run with the source attached as `src`. New rows are
 * inserted; rows still in flight in the central database are brought up
 * to date; nothing else changes. */
static const char merge_sql[] =
	"INSERT INTO client(name, host) SELECT name, host FROM src.client "
	"WHERE true ON CONFLICT(name) DO NOTHING;"
	"INSERT INTO process(client_id, pid, ppid, start_ns, end_ns, ended, "
	"host, program, argv, spool, dropped) "
	"SELECT c.id, p.pid, p.ppid, p.start_ns, p.end_ns, p.ended, p.host, "
	"p.program, p.argv, p.spool, p.dropped FROM src.process p "
	"JOIN src.client sc ON sc.id = p.client_id "
	"JOIN main.client c ON c.name = sc.name WHERE true "
	"ON CONFLICT(client_id, pid, start_ns) DO UPDATE SET "
	"end_ns = excluded.end_ns, ended = excluded.ended, "
	"dropped = excluded.dropped WHERE process.ended = 0;"
	"CREATE TEMP TABLE process_map AS "
	"SELECT p.id AS src_id, mp.id AS dst_id FROM src.process p "
	"JOIN src.client sc ON sc.id = p.client_id "
	"JOIN main.client c ON c.name = sc.name "
	"JOIN main.process mp ON mp.client_id = c.id AND mp.pid = p.pid "
	"AND mp.start_ns = p.start_ns;"
	"INSERT INTO connection(process_id, seq, fd, family, peer_addr, "
	"peer_port, local_addr, local_port, t1_ns, t2_ns, t2_how, "
	"connect_error, teof_ns, tshut_ns, t7_ns, end_class, end_error, "
	"nonblocking, complete, tls, tls_version, tls_start_ns, tls_end_ns, "
	"rtt_us, rttvar_us, min_rtt_us, retrans, snd_cwnd, pmtu, "
	"delivery_rate, dns_name, dns_start_ns, dns_end_ns) "
	"SELECT m.dst_id, k.seq, k.fd, k.family, k.peer_addr, k.peer_port, "
	"k.local_addr, k.local_port, k.t1_ns, k.t2_ns, k.t2_how, "
	"k.connect_error, k.teof_ns, k.tshut_ns, k.t7_ns, k.end_class, "
	"k.end_error, k.nonblocking, k.complete, k.tls, k.tls_version, "
	"k.tls_start_ns, k.tls_end_ns, k.rtt_us, k.rttvar_us, k.min_rtt_us, "
	"k.retrans, k.snd_cwnd, k.pmtu, k.delivery_rate, k.dns_name, "
	"k.dns_start_ns, k.dns_end_ns "
	"FROM src.connection k "
	"JOIN temp.process_map m ON m.src_id = k.process_id WHERE true "
	"ON CONFLICT(process_id, seq) DO UPDATE SET "
	"t2_ns = excluded.t2_ns, t2_how = excluded.t2_how, "
	"connect_error = excluded.connect_error, teof_ns = excluded.teof_ns, "
	"tshut_ns = excluded.tshut_ns, t7_ns = excluded.t7_ns, "
	"end_class = excluded.end_class, end_error = excluded.end_error, "
	"complete = excluded.complete, tls = excluded.tls, "
	"tls_version = excluded.tls_version, "
	"tls_start_ns = excluded.tls_start_ns, tls_end_ns = excluded.tls_end_ns, "
	"rtt_us = excluded.rtt_us, rttvar_us = excluded.rttvar_us, "
	"min_rtt_us = excluded.min_rtt_us, retrans = excluded.retrans, "
	"snd_cwnd = excluded.snd_cwnd, pmtu = excluded.pmtu, "
	"delivery_rate = excluded.delivery_rate, dns_name = excluded.dns_name, "
	"dns_start_ns = excluded.dns_start_ns, dns_end_ns = excluded.dns_end_ns "
	"WHERE connection.complete = 0;"
	"CREATE TEMP TABLE connection_map AS "
	"SELECT k.id AS src_id, mk.id AS dst_id FROM src.connection k "
	"JOIN temp.process_map m ON m.src_id = k.process_id "
	"JOIN main.connection mk ON mk.process_id = m.dst_id AND mk.seq = k.seq;"
	"INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns, tfb_ns, "
	"t6_ns, ds, dr, send_calls, recv_calls, server_first, peeked, complete, "
	"method, path, status, host) "
	"SELECT m.dst_id, x.seq, x.t3_ns, x.t4_ns, x.t5_ns, x.tfb_ns, x.t6_ns, "
	"x.ds, x.dr, x.send_calls, x.recv_calls, x.server_first, x.peeked, "
	"x.complete, x.method, x.path, x.status, x.host FROM src.exchange x "
	"JOIN temp.connection_map m ON m.src_id = x.connection_id WHERE true "
	"ON CONFLICT(connection_id, seq) DO UPDATE SET "
	"t3_ns = excluded.t3_ns, t4_ns = excluded.t4_ns, t5_ns = excluded.t5_ns, "
	"tfb_ns = excluded.tfb_ns, t6_ns = excluded.t6_ns, ds = excluded.ds, "
	"dr = excluded.dr, send_calls = excluded.send_calls, "
	"recv_calls = excluded.recv_calls, complete = excluded.complete, "
	"method = excluded.method, path = excluded.path, "
	"status = excluded.status, host = excluded.host "
	"WHERE exchange.complete = 0;"
	"DROP TABLE temp.process_map;"
	"DROP TABLE temp.connection_map;";

struct source {
	char *path; /* a local file, or the ssh:// URL */
	bool ssh;
};

struct puller {
	sqlite3 *db;
	char **rsh; /* the ssh command and its options, NULL-ended */
	size_t n_rsh;
	char *tmpdir; /* for ssh snapshots, made on first use */
	FILE *tty;    /* progress bar here, or NULL */
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
	char bar[31];
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
		p->exchanges_new, name, p->state ? p->state : "");
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

	progress_clear(p);
	fprintf(stderr, "manager: %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (skipped)\n");
	p->failed++;
}

static int64_t last_exchange_id(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (sqlite3_prepare_v2(db,
			       "SELECT coalesce(max(id), 0) FROM main.exchange",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static const char *check_source(sqlite3 *db, char *why, size_t size)
{
	sqlite3_stmt *st = NULL;
	const char *ok = NULL;
	int version = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA src.quick_check", -1, &st, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		snprintf(why, size, "not an SQLite database (%s)",
			 sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return why;
	}
	if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
		snprintf(why, size, "damaged database (%s)",
			 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		return why;
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "PRAGMA src.user_version", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version >= 1 && version < OBS_SCHEMA_VERSION) {
		snprintf(why, size,
			 "made by an older observe (schema version %d; this "
			 "manager reads %d): `slicer -o FILE` upgrades it",
			 version, OBS_SCHEMA_VERSION);
		return why;
	}
	if (version != OBS_SCHEMA_VERSION) {
		snprintf(why, size,
			 "not an observe database of schema version %d "
			 "(version %d)",
			 OBS_SCHEMA_VERSION, version);
		return why;
	}
	return ok;
}
static char *file_uri(const char *path)
{
	size_t n = strlen(path);
	char *uri = sqlite3_malloc64(n * 3 + 32), *p = uri;

	if (!uri)
		return NULL;
	p += sprintf(p, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 ||
		    *c > 0x7e)
			p += sprintf(p, "%%%02X", *c);
		else
			*p++ = (char)*c;
	}
	strcpy(p, "?mode=ro");
	return uri;
}

/* Merge one client database at path (named `name` in messages);
 * 0 merged, -1 skipped (reason printed). */
static int merge_file(struct puller *p, const char *path, const char *name)
{
	sqlite3 *db = p->db;
	char why[512], *msg = NULL;
	sqlite3_stmt *st = NULL;
	int64_t before, after;
	int rc;

	rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ?1 AS src", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		/* read-only: the source is a client's, never ours to change */
		char *uri = file_uri(path);
		sqlite3_bind_text(st, 1, uri, -1, sqlite3_free);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		source_failed(p, name, "cannot open: %s", sqlite3_errmsg(db));
		return -1;
	}
	p->state = "checking";
	progress_show(p);
	if (check_source(db, why, sizeof(why))) {
		source_failed(p, name, "%s", why);
		sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
		return -1;
	}
	p->state = "merging";
	progress_show(p);
	before = last_exchange_id(db);
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, merge_sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		source_failed(p, name, "cannot merge: %s",
			      msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(db,
			     "DROP TABLE IF EXISTS temp.process_map;"
			     "DROP TABLE IF EXISTS temp.connection_map",
			     NULL, NULL, NULL);
		sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
		return -1;
	}
	sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
	after = last_exchange_id(db);
	p->exchanges_new += after - before;
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

static int make_tmpdir(struct puller *p)
{
	const char *base = getenv("TMPDIR");
	char *dir;

	if (p->tmpdir)
		return 0;
	if (asprintf(&dir, "%s/observe-pull.XXXXXX",
		     base && *base ? base : "/tmp") < 0)
		return -1;
	if (!mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	p->tmpdir = dir;
	return 0;
}

/* Fetch a snapshot of the database behind an ssh:// URL into a local
 * temporary file and merge it. */
static void pull_ssh(struct puller *p, const char *url)
{
	char *user, *host, *port, *path, *quoted = NULL, *remote = NULL;
	char *snap = NULL, *errf = NULL, reason[512];
	const char *why = NULL;
	char **argv = NULL;
	size_t n = 0;
	int out = -1, err = -1, status;
	pid_t pid;
	posix_spawn_file_actions_t fa;
	struct stat st;

	if (parse_ssh_url(url, &user, &host, &port, &path, &why) != 0) {
		source_failed(p, url, "%s", why);
		goto done;
	}
	if (make_tmpdir(p) != 0 ||
	    asprintf(&snap, "%s/snapshot.db", p->tmpdir) < 0 ||
	    asprintf(&errf, "%s/ssh.err", p->tmpdir) < 0) {
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
	err = open(errf, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0 || err < 0) {
		source_failed(p, url, "cannot make a temporary file: %s",
			      strerror(errno));
		goto done;
	}
	p->state = "fetching";
	progress_show(p);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_adddup2(&fa, err, 2);
	status = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (status != 0) {
		source_failed(p, url, "cannot run %s: %s", argv[0],
			      strerror(status));
		goto done;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
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
	if (snap)
		unlink(snap);
	if (errf)
		unlink(errf);
	free(snap);
	free(errf);
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

int cmd_pull(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "rsh", required_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *central = NULL, *rsh = "ssh";
	bool quiet = false;
	struct puller p = { 0 };
	struct source_list list = { 0 };
	char err[512];
	obs_store *store;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:e:qh", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'o':
			central = optarg;
			break;
		case 'e':
			rsh = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			manager_usage(stdout);
			return 0;
		default:
			manager_usage(stderr);
			return 2;
		}
	}
	if (!central || optind >= argc) {
		manager_usage(stderr);
		return 2;
	}
	if (split_rsh(&p, rsh) != 0) {
		fprintf(stderr, "manager: -e '%s': not a command\n", rsh);
		return 2;
	}
	store = obs_store_open(central, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "manager: %s\n", err);
		return 2;
	}
	p.db = obs_store_db(store);
	/* A central database outgrows SQLite's default 2 MB page cache fast;
	 * with too small a cache each merge re-reads index pages from disk. */
	sqlite3_exec(p.db, "PRAGMA cache_size = -524288", NULL, NULL, NULL);
	/* No index on exchange(t3_ns) here: the times of many clients
	 * interleave, so every merged row would land at a random place in it;
	 * keeping it made merging 100 x 100,000 exchanges take 100 s instead
	 * of 16 s (scripts/bench-merge.sh). Time filters scan instead. */
	if (sqlite3_exec(p.db, "DROP INDEX IF EXISTS exchange_t3", NULL, NULL,
			 NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", central,
			sqlite3_errmsg(p.db));
		obs_store_close(store);
		return 2;
	}
	if (!quiet && isatty(STDERR_FILENO)) {
		p.tty = stderr;
		sqlite3_progress_handler(p.db, 100000, progress_tick, &p);
	}
	for (int i = optind; i < argc; i++)
		expand_source(&p, &list, argv[i]);
	p.total = list.n;
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
	sqlite3_progress_handler(p.db, 0, NULL, NULL);
	obs_store_close(store);
	if (p.tmpdir) {
		rmdir(p.tmpdir);
		free(p.tmpdir);
	}
	for (size_t i = 0; i < p.n_rsh; i++)
		free(p.rsh[i]);
	free(p.rsh);
	if (!quiet)
		fprintf(stderr,
			"manager: %d sources, %d skipped, %" PRId64
			" exchanges new -> %s\n",
			p.sources, p.failed, p.exchanges_new, central);
	return p.failed ? 1 : 0;
}
