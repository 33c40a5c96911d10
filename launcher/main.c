/* main.c - observe: run a command under the observation layer, slice its
 * spool into a database and print what it did on the network.
 *
 *   observe [-o DB] [-d SPOOLDIR] [-q] [--live] -- COMMAND [ARG...]
 *
 * With --live, and stderr a terminal, a table of what the command does is
 * redrawn about once a second while it runs (live.c).
 * The layer is appended to any LD_PRELOAD already set. COMMAND's exit status
 * (or the signal that killed it) becomes observe's own.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "findings.h"
#include "live.h"
#include "store.h"
#include "text.h"

#ifndef OBSERVE_LIBDIR_BUILD
#define OBSERVE_LIBDIR_BUILD ""
#endif
#ifndef OBSERVE_LIBDIR_INSTALL
#define OBSERVE_LIBDIR_INSTALL "/usr/local/lib"
#endif

#define MAX_PROCESSES 4096
#define MAX_ROWS_SHOWN 40

static const char *prog = "observe";
static volatile sig_atomic_t child_pid;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: observe [-o DB] [-d SPOOLDIR] [-q] [--live] -- COMMAND "
		"[ARG...]\n"
		"\n"
		"Runs COMMAND with libobserve.so preloaded, then slices what it\n"
		"recorded into DB and prints one line per request/response\n"
		"exchange to stderr (Te connect, Ts send, Tw wait for the first\n"
		"byte, Tr receive, Tt whole connection; Ds/Dr bytes).\n"
		"\n"
		"  -o, --output DB     database to add to (default ./observe.db)\n"
		"  -d, --spool-dir DIR keep the spool files in DIR (default: a\n"
		"                      temporary directory, removed when sliced)\n"
		"  -c, --client NAME   client name recorded (default: host name)\n"
		"  -q, --quiet         print no table\n"
		"  -l, --live          while COMMAND runs, a table per server\n"
		"                      redrawn each second on stderr, when it is\n"
		"                      a terminal: exchanges, rate, p50/p99 of\n"
		"                      Tw and Tr over the last 5 s, errors, how\n"
		"                      connections ended\n"
		"  -h, --help          this text\n"
		"\n"
		"Environment: OBSERVE_LIB (path of libobserve.so), OBSERVE_LOG.\n"
		"Example:\n"
		"  observe -o run.db -- curl -s -o /dev/null http://127.0.0.1:8080/\n"
		"  observe -- ab -n 1000 -k http://127.0.0.1:8080/100b\n");
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The layer: $OBSERVE_LIB, next to this binary (../lib), or installed. */
static int find_layer(char *out, size_t size)
{
	const char *env = getenv("OBSERVE_LIB");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (!is_file(env)) {
			fprintf(stderr, "%s: OBSERVE_LIB=%s: no such file\n",
				prog, env);
			return -1;
		}
		return realpath(env, out) ? 0 : -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			char candidate[PATH_MAX + 32];

			*slash = '\0';
			snprintf(candidate, sizeof(candidate),
				 "%s/../lib/libobserve.so", exe);
			if (is_file(candidate) && size >= PATH_MAX &&
			    realpath(candidate, out))
				return 0;
		}
	}
	snprintf(out, size, "%s/libobserve.so", OBSERVE_LIBDIR_INSTALL);
	if (is_file(out))
		return 0;
	snprintf(out, size, "%s/libobserve.so", OBSERVE_LIBDIR_BUILD);
	if (is_file(out))
		return 0;
	fprintf(stderr, "%s: cannot find libobserve.so (set OBSERVE_LIB)\n",
		prog);
	return -1;
}

/* COMMAND's path as execvp would find it, for the checks below. */
static bool resolve_command(const char *cmd, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(out, size, "%s", cmd);
		return is_file(out);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int len = (int)(end - path);

		snprintf(out, size, "%.*s/%s", len ? len : 1, len ? path : ".",
			 cmd);
		if (is_file(out) && access(out, X_OK) == 0)
			return true;
		path = *end ? end + 1 : end;
	}
	return false;
}

/* Say plainly when the layer cannot see COMMAND: statically linked, setuid
 * (the loader drops LD_PRELOAD), Go (raw system calls). */
static void warn_if_unobservable(const char *cmd)
{
	char path[PATH_MAX], safe[PATH_MAX];
	const char *shown;
	struct stat st;
	Elf64_Ehdr eh;
	bool has_interp = false, is_go = false;
	int fd;

	if (!resolve_command(cmd, path, sizeof(path)) || stat(path, &st) != 0)
		return;
	shown = text_tty(path, safe, sizeof(safe));
	if (st.st_mode & (S_ISUID | S_ISGID))
		fprintf(stderr,
			"%s: warning: %s is setuid/setgid: the loader ignores "
			"LD_PRELOAD, nothing will be recorded\n",
			prog, shown);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		close(fd); /* a script or another class: nothing to say */
		return;
	}
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			has_interp = true;
	}
	if (eh.e_shoff && eh.e_shstrndx != SHN_UNDEF) {
		Elf64_Shdr strtab;
		if (pread(fd, &strtab, sizeof(strtab),
			  (off_t)(eh.e_shoff +
				  (uint64_t)eh.e_shstrndx * eh.e_shentsize)) ==
		    (ssize_t)sizeof(strtab)) {
			for (int i = 0; i < eh.e_shnum && !is_go; i++) {
				Elf64_Shdr sh;
				char name[32] = "";
				if (pread(fd, &sh, sizeof(sh),
					  (off_t)(eh.e_shoff +
						  (uint64_t)i *
							  eh.e_shentsize)) !=
				    (ssize_t)sizeof(sh))
					break;
				if (pread(fd, name, sizeof(name) - 1,
					  (off_t)(strtab.sh_offset +
						  sh.sh_name)) <= 0)
					continue;
				is_go = strcmp(name, ".go.buildinfo") == 0 ||
					strcmp(name, ".note.go.buildid") == 0;
			}
		}
	}
	close(fd);
	if (!has_interp)
		fprintf(stderr,
			"%s: warning: %s is statically linked: LD_PRELOAD cannot "
			"reach it, nothing will be recorded\n",
			prog, shown);
	else if (is_go)
		fprintf(stderr,
			"%s: warning: %s is a Go program: it makes raw system "
			"calls that the layer does not see\n",
			prog, shown);
}

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* LD_PRELOAD for the child: the existing value with the layer appended.
 * In a sanitized build (OBSERVE_PRELOAD_FIRST: the AddressSanitizer
 * runtime) that runtime goes first, and the host's own leaks are not
 * reported: they are not the layer's. */
static int set_child_env(const char *layer, const char *spool_dir,
			 const char *client)
{
	const char *old = getenv("LD_PRELOAD");
	const char *first = OBSERVE_PRELOAD_FIRST;
	char *value;
	int rc;

	if (asprintf(&value, "%s%s%s%s%s", first, *first ? ":" : "",
		     old && *old ? old : "", old && *old ? ":" : "", layer) < 0)
		return -1;
	rc = setenv("LD_PRELOAD", value, 1);
	free(value);
	if (rc == 0 && *first && !getenv("ASAN_OPTIONS"))
		rc = setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	if (rc == 0)
		rc = setenv("OBSERVE_DIR", spool_dir, 1);
	if (rc == 0 && client)
		rc = setenv("OBSERVE_CLIENT", client, 1);
	unsetenv("OBSERVE_DISABLE");
	return rc;
}

/* Wait for the child until `deadline` (monotonic s; 0: for ever), its
 * end seen on pidfd (or looked for every 50 ms when -1): 1 it ended
 * (*status), 0 not yet, -1 error (said). */
static int wait_child(pid_t pid, int *status, int pidfd, double deadline)
{
	for (;;) {
		struct timespec ts;
		double left;
		pid_t r = waitpid(pid, status, deadline > 0 ? WNOHANG : 0);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR) {
			perror("observe: waitpid");
			return -1;
		}
		if (r < 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		left = deadline - ((double)ts.tv_sec + ts.tv_nsec / 1e9);
		if (left <= 0)
			return 0;
		if (pidfd >= 0) { /* readable when the child ends */
			struct pollfd pfd = { pidfd, POLLIN, 0 };
			poll(&pfd, 1, (int)(left * 1000) + 1);
		} else { /* no pidfd: look again soon */
			struct timespec nap = { 0, 50000000 };
			nanosleep(&nap, NULL);
		}
	}
}

/* The monotonic clock in seconds. */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_command(char **argv, const char *layer, const char *spool_dir,
		       const char *client, bool live, int *status)
{
	struct sigaction sa = { 0 }, ign = { 0 };
	pid_t pid;
	int pipefd[2], exec_errno = 0;
	char name[256];

	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		perror("observe: pipe");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("observe: fork");
		return -1;
	}
	if (pid == 0) {
		close(pipefd[0]);
		if (set_child_env(layer, spool_dir, client) == 0)
			execvp(argv[0], argv);
		exec_errno = errno;
		if (write(pipefd[1], &exec_errno, sizeof(exec_errno)) < 0)
			_exit(127);
		_exit(exec_errno == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	close(pipefd[1]);
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* SIGINT and SIGQUIT from the terminal reach the child directly. */
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	if (read(pipefd[0], &exec_errno, sizeof(exec_errno)) ==
	    (ssize_t)sizeof(exec_errno))
		fprintf(stderr, "%s: cannot run %s: %s\n", prog,
			text_tty(argv[0], name, sizeof(name)),
			strerror(exec_errno));
	close(pipefd[0]);
	if (live && !exec_errno) {
		struct live *view = live_start(spool_dir, argv);
#ifdef SYS_pidfd_open
		int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
		int pidfd = -1;
#endif
		double next = mono_s() + 1;
		int ended;

		while ((ended = wait_child(pid, status, pidfd, next)) == 0) {
			live_refresh(view);
			next += 1;
			if (next < mono_s()) /* late: no catching up */
				next = mono_s() + 1;
		}
		live_end(view);
		if (pidfd >= 0)
			close(pidfd);
		if (ended < 0)
			return -1;
	} else if (wait_child(pid, status, -1, 0) < 0)
		return -1;
	child_pid = 0;
	return exec_errno ? 1 : 0;
}

static void fmt_ms(char *buf, size_t size, sqlite3_stmt *st, int col)
{
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3f", sqlite3_column_double(st, col));
}

/* The findings of this run's processes (list: their ids), when one is
 * worth saying (manager/findings.c): nothing otherwise. */
static void print_findings(sqlite3 *db, const char *list, const char *db_path)
{
	struct findings f = { 0 };

	if (!list || !*list)
		return;
	if (findings_collect_processes(db, list, &f) == 0 && f.n) {
		fputc('\n', stderr);
		findings_print(&f, false, false, stderr);
		fprintf(stderr,
			"(manager findings %s: the same for the "
			"whole database, with filters, --csv)\n",
			db_path);
	}
	findings_free(&f);
}

/* The per-exchange table for the processes of this run. */
static void print_summary(obs_store *store, const int64_t *ids, size_t n_ids,
			  const char *db_path)
{
	sqlite3 *db = obs_store_db(store);
	sqlite3_stmt *st = NULL;
	char *list = NULL, *sql = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&list, &len);
	int64_t rows = 0, conns = 0;

	if (!mem)
		return;
	for (size_t i = 0; i < n_ids; i++)
		fprintf(mem, "%s%" PRId64, i ? "," : "", ids[i]);
	fclose(mem);
	if (asprintf(&sql,
		     "SELECT em.program, em.pid, em.peer_addr, em.peer_port, "
		     "em.connection_id, em.seq, em.te_ms, em.ts_ms, em.tw_ms, "
		     "em.tr_ms, em.tt_ms, em.ds, em.dr, "
		     "em.t3_ns IS NOT NULL AND em.t4_ns IS NULL "
		     "FROM exchange_metrics em JOIN connection c "
		     "ON c.id = em.connection_id WHERE c.process_id IN (%s) "
		     "ORDER BY coalesce(em.t3_ns, em.t5_ns, em.t1_ns), em.seq",
		     n_ids ? list : "NULL") < 0)
		goto out;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: %s: %s\n", prog, db_path,
			sqlite3_errmsg(db));
		goto out;
	}
	fprintf(stderr, "%-10s %7s %-22s %5s %3s %9s %9s %9s %9s %9s %9s %9s\n",
		"program", "pid", "peer", "conn", "seq", "Te ms", "Ts ms",
		"Tw ms", "Tr ms", "Tt ms", "Ds", "Dr");
	while (sqlite3_step(st) == SQLITE_ROW) {
		char te[24], ts[24], tw[24], tr[24], tt[24], peer[64], name[48];
		const char *program = (const char *)sqlite3_column_text(st, 0);
		const char *base = program ? strrchr(program, '/') : NULL;

		rows++;
		if (rows > MAX_ROWS_SHOWN)
			continue;
		fmt_ms(te, sizeof(te), st, 6);
		fmt_ms(ts, sizeof(ts), st, 7);
		if (sqlite3_column_int(st, 13)) /* a send never came back */
			snprintf(ts, sizeof(ts), "cut");
		fmt_ms(tw, sizeof(tw), st, 8);
		fmt_ms(tr, sizeof(tr), st, 9);
		fmt_ms(tt, sizeof(tt), st, 10);
		snprintf(peer, sizeof(peer), "%s:%d",
			 (const char *)sqlite3_column_text(st, 2),
			 sqlite3_column_int(st, 3));
		fprintf(stderr,
			"%-10.10s %7d %-22.22s %5lld %3d %9s %9s %9s %9s %9s "
			"%9lld %9lld\n",
			/* a program's name is anyone's choice: text.h */
			text_tty(base ? base + 1 : (program ? program : "?"),
				 name, sizeof(name)),
			sqlite3_column_int(st, 1), peer,
			(long long)sqlite3_column_int64(st, 4),
			sqlite3_column_int(st, 5),
			sqlite3_column_int(st, 5) == 1 ? te : "", ts, tw, tr,
			sqlite3_column_int(st, 5) == 1 ? tt : "",
			(long long)sqlite3_column_int64(st, 11),
			(long long)sqlite3_column_int64(st, 12));
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rows > MAX_ROWS_SHOWN)
		fprintf(stderr, "... %" PRId64 " more (query the database)\n",
			rows - MAX_ROWS_SHOWN);
	free(sql);
	sql = NULL;
	if (asprintf(&sql,
		     "SELECT count(*) FROM connection WHERE process_id IN (%s)",
		     n_ids ? list : "NULL") >= 0 &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		conns = sqlite3_column_int64(st, 0);
	fprintf(stderr,
		"observe: %" PRId64 " exchanges on %" PRId64
		" connections in %zu processes -> %s\n",
		rows, conns, n_ids, db_path);
	print_findings(db, list, db_path);
out:
	sqlite3_finalize(st);
	free(sql);
	free(list);
}

/* rm -r of our own temporary spool directory (flat: spool files only). */
static void remove_spool_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *ent;

	if (!d)
		return;
	while ((ent = readdir(d))) {
		if (strcmp(ent->d_name, ".") != 0 &&
		    strcmp(ent->d_name, "..") != 0)
			unlinkat(dirfd(d), ent->d_name, 0);
	}
	closedir(d);
	rmdir(dir);
}

static int finish(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct sigaction dfl = { 0 };
		sigset_t set;

		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		fflush(NULL);
		if (sig != SIGKILL && sig != SIGSTOP)
			raise(sig);
		else
			kill(getpid(), sig);
		return 128 + sig;
	}
	return 1;
}

/* Whether the layer will write spools into dir (libobserve/spool.c): a
 * directory of ours that no one else may write to, in a directory that
 * lets no one else replace it (ours or root's, sticky if others may write
 * to it). Says why not. */
static bool spool_dir_usable(const char *dir)
{
	char parent[PATH_MAX + 4];
	struct stat st, up;

	snprintf(parent, sizeof(parent), "%s/..", dir);
	if (stat(dir, &st) != 0 || stat(parent, &up) != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(errno));
		return false;
	}
	if (st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    (up.st_uid == geteuid() || up.st_uid == 0) &&
	    (!(up.st_mode & (S_IWGRP | S_IWOTH)) || (up.st_mode & S_ISVTX)))
		return true;
	fprintf(stderr,
		"%s: %s: the layer writes spools only into a directory of "
		"yours that no one else may write to, in a directory owned by "
		"you or root (sticky if others may write to it)\n",
		prog, dir);
	return false;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "spool-dir", required_argument, NULL, 'd' },
		{ "client", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "live", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db_path = "observe.db", *spool_arg = NULL, *client = NULL;
	char layer[PATH_MAX], spool_dir[PATH_MAX], err[512];
	bool quiet = false, temp_spool = false, live = false;
	int opt, status = 0, rc;
	obs_store *store;
	struct obs_ingest_stats stats = { 0 };
	static int64_t ids[MAX_PROCESSES];
	size_t n_ids = 0;
	char name[256];

	while ((opt = getopt_long(argc, argv, "+o:d:c:qlh", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'o':
			db_path = optarg;
			break;
		case 'd':
			spool_arg = optarg;
			break;
		case 'c':
			client = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'l': /* only where a person watches */
			live = isatty(STDERR_FILENO);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (find_layer(layer, sizeof(layer)) != 0)
		return 2;
	if (spool_arg) {
		if (mkdir(spool_arg, 0700) != 0 && errno != EEXIST) {
			fprintf(stderr, "%s: %s: %s\n", prog, spool_arg,
				strerror(errno));
			return 2;
		}
		if (!realpath(spool_arg, spool_dir)) {
			fprintf(stderr, "%s: %s: %s\n", prog, spool_arg,
				strerror(errno));
			return 2;
		}
	} else {
		/* Memory-backed when possible: the spool lives only until it
		 * is sliced, and first writes into a tmpfs file cost less. */
		const char *tmp = getenv("TMPDIR");
		if (!tmp || !*tmp)
			tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm"
								   : "/tmp";
		snprintf(spool_dir, sizeof(spool_dir), "%s/observe.XXXXXX",
			 tmp);
		if (!mkdtemp(spool_dir)) {
			fprintf(stderr, "%s: %s: %s\n", prog, spool_dir,
				strerror(errno));
			return 2;
		}
		temp_spool = true;
	}
	if (!spool_dir_usable(spool_dir)) {
		if (temp_spool)
			rmdir(spool_dir);
		return 2;
	}
	/* Open the database first: a bad DB path should fail before the run. */
	store = obs_store_open(db_path, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "%s: %s\n", prog, err);
		if (temp_spool)
			rmdir(spool_dir);
		return 2;
	}
	warn_if_unobservable(argv[optind]);
	rc = run_command(argv + optind, layer, spool_dir, client, live,
			 &status);
	if (rc < 0) {
		obs_store_close(store);
		return 2;
	}
	rc = obs_store_ingest_path(store, spool_dir, &stats, stderr, ids,
				   &n_ids, MAX_PROCESSES);
	if (!quiet && rc >= 0 && n_ids > 0)
		print_summary(store, ids, n_ids, db_path);
	if (rc >= 0 && stats.files == 0)
		fprintf(stderr,
			"%s: warning: %s made no TCP connection the layer could "
			"see (static or setuid program, raw system calls, a "
			"network library loaded with RTLD_DEEPBIND such as "
			"PHP's curl extension, or no network use)\n",
			prog, text_tty(argv[optind], name, sizeof(name)));
	/* the command's exit status is passed through: only a warning */
	if (stats.records_dropped)
		fprintf(stderr,
			"%s: warning: %" PRIu64 " records lost by the layer "
			"(spool full) in %" PRIu64 " processes: the table and "
			"the database miss them\n",
			prog, stats.records_dropped, stats.processes_dropped);
	obs_store_close(store);
	if (temp_spool) {
		if (rc == 0)
			remove_spool_dir(spool_dir);
		else
			fprintf(stderr, "%s: spool files kept in %s\n", prog,
				spool_dir);
	}
	return finish(status);
}
