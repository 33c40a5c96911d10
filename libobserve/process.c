/* process.c - process life: fork, exec and the ways out of a process.
 *
 * Hazards written down:
 * - A child of fork() must not write into its parent's spool (the mapping is
 *   shared): it forgets the parent's spool and connections and gets its own.
 *   Its start is its own (obs_set_start), and readers take a record's time
 *   from before it as damage: the parent's name lookups it inherits give
 *   its connections their names but not their times.
 * - vfork() children share our memory (Python's subprocess: vfork, then
 *   close_range, dup2 and execve in the child): the hooks that end fds or
 *   the process check the pid (obs_in_vfork_child) and leave the parent's
 *   table and spool alone there. glibc's posix_spawn uses internal calls
 *   that do not reach the hooks.
 * - A process that drops its privileges (apt's methods: setresuid to _apt)
 *   cannot make or grow its spool afterwards in the directory of the user
 *   it started as: the spool is made before the change (below).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks.h"

bool obs_in_vfork_child(void)
{
	return (int32_t)getpid() != obs_proc.pid;
}

/* Hooked calls that went unobserved, said once as the process leaves. */
static void report_unobserved(void)
{
	uint64_t n = __atomic_load_n(&obs_unobserved, __ATOMIC_RELAXED);

	if (n)
		OBS_LOG(OBS_LOG_WARN,
			"%llu hooked calls from signal handlers that "
			"interrupted the layer went unobserved",
			(unsigned long long)n);
}

/* The process leaves (exit, _exit; exec: not for good, so no report): the
 * spool is marked ended and the connections still open end with it, class
 * exit, T7 = now. Not in a vfork() child (the spool and the table are its
 * parent's); from a signal handler inside the layer only the mark (no lock
 * is taken). */
static void leaving(bool for_good)
{
	if (!obs_fd_table_size || obs_in_vfork_child())
		return;
	if (obs_enter()) {
		conns_exit(obs_now(), false);
		if (for_good)
			report_unobserved();
		obs_leave();
	}
	obs_spool_mark_ended(true);
}

/* An exec that failed: this image goes on, and so do its connections. */
static void still_here(void)
{
	int err = errno;

	if (!obs_fd_table_size || obs_in_vfork_child())
		return;
	if (obs_enter()) {
		conns_exit(0, true);
		obs_leave();
	}
	obs_spool_mark_ended(false);
	errno = err;
}

__attribute__((destructor)) static void obs_fini(void)
{
	leaving(true);
}

/* Fork: hold the mutex across fork so the child never inherits it held.
 * A fork from a signal handler that interrupted the layer (the mutex may be
 * this thread's already) does without: the child makes its mutex anew
 * anyway. */
static __thread bool fork_locked __attribute__((tls_model("initial-exec")));

static void obs_before_fork(void)
{
	fork_locked = !obs_reentered();
	if (fork_locked)
		obs_mutex_lock();
}

static void obs_after_fork_parent(void)
{
	if (fork_locked)
		obs_mutex_unlock();
	fork_locked = false;
}

/* The child forgets the parent's spool and connections: the spool mapping
 * is shared with the parent, and the parent goes on recording its own
 * connections. The child's own connections go to its own spool. The name
 * lookups it inherits keep their names, not their times (resolve.c). */
static void obs_after_fork_child(void)
{
	fork_locked = false;
	obs_mutex_reinit();
	fd_table_forget();
	obs_spool_forget();
	obs_dns_forked();
	obs_set_start();
}

/* Register the fork handlers (once, at start). */
void obs_fork_install(void)
{
	pthread_atfork(obs_before_fork, obs_after_fork_parent,
		       obs_after_fork_child);
}

EXPORT void _exit(int status)
{
	leaving(true);
	if (REAL(_exit))
		obs_real._exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	leaving(true);
	if (REAL(_Exit))
		obs_real._Exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* exec ends this image's recording (its connections end as it leaves);
 * the new image loads the layer anew (same pid, new spool). An exec that
 * returns failed (ret, errno kept): recording goes on, and so do the
 * connections. */
static int exec_failed(int ret)
{
	still_here();
	return ret;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	leaving(false);
	return exec_failed(REAL(execve)(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	leaving(false);
	return exec_failed(REAL(execv)(path, argv));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	leaving(false);
	return exec_failed(REAL(execvp)(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	leaving(false);
	return exec_failed(REAL(execvpe)(file, argv, envp));
}

/* The effective user id is about to become euid ((uid_t)-1: unchanged).
 * The spool directory is the starting user's: after a change the owner
 * check refuses it (and a 0700 directory keeps the new user out), so a
 * process that drops privileges before it connects (apt's methods run as
 * _apt) would record nothing. The spool is made now, while the directory
 * is still this user's; its mapping stays writable after the change. It
 * cannot grow then (growth opens the directory by name again): the first
 * chunk's records, after which recording stops and says why. A process
 * that never connects is left with an empty spool. Not in a vfork child,
 * nor from a signal handler inside the layer. Keeps errno. */
static void before_uid_change(uid_t euid)
{
	int err = errno;

	if (euid != (uid_t)-1 && euid != geteuid() && obs_fd_table_size &&
	    !obs_in_vfork_child() && obs_enter()) {
		if (obs_spool_ensure() == 0)
			OBS_LOG(OBS_LOG_INFO,
				"spool made before the effective user id "
				"changes from %u to %u: it cannot grow after",
				(unsigned int)geteuid(), (unsigned int)euid);
		obs_leave();
	}
	errno = err;
}

EXPORT int setuid(uid_t uid)
{
	before_uid_change(uid);
	return REAL(setuid)(uid);
}

EXPORT int seteuid(uid_t euid)
{
	before_uid_change(euid);
	return REAL(seteuid)(euid);
}

EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	before_uid_change(euid);
	return REAL(setreuid)(ruid, euid);
}

EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	before_uid_change(euid);
	return REAL(setresuid)(ruid, euid, suid);
}
