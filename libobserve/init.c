/* init.c - the layer's start in a process: environment (read with
 * secure_getenv), identity, argv (redacted: redact.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "hooks.h"
#include "redact.h"
#include "tlskeys.h"

/* Note this process's pid and start time (at start, in a forked child). */
void obs_set_start(void)
{
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	obs_proc.start_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	obs_proc.pid = (int32_t)getpid();
}

/* The spool directory, always an absolute path: a relative OBSERVE_DIR is
 * taken from the working directory at start, so that a chdir of the
 * program neither stops recording (the layer opens the directory by name
 * again to grow the spool) nor sends the spool elsewhere. */
/* A size in MiB from the environment: a whole number from 1 to 1,048,576,
 * or 0 (unset or not such a number: the default, said once). */
static uint32_t env_mb(const char *name)
{
	const char *v = secure_getenv(name);
	unsigned long n = 0;

	if (!v || !*v)
		return 0;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || n > (1ul << 20)) {
			n = 0;
			break;
		}
		n = n * 10 + (unsigned long)(*p - '0');
	}
	if (n == 0 || n > (1ul << 20)) {
		OBS_LOG(OBS_LOG_WARN,
			"%s=%s is not a size in MiB (1 to 1048576): the "
			"default is used",
			name, v);
		return 0;
	}
	return (uint32_t)n;
}

static void obs_pick_dir(void)
{
	const char *dir = secure_getenv("OBSERVE_DIR");
	const char *base;
	char cwd[sizeof(obs_proc.dir)];
	int n = -1;

	if (dir && *dir == '/')
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir), "%s", dir);
	else if (dir && *dir && getcwd(cwd, sizeof(cwd)))
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir), "%s/%s", cwd,
			     dir);
	else if (dir && *dir)
		OBS_LOG(OBS_LOG_WARN,
			"not recording: OBSERVE_DIR=%s is relative and the "
			"working directory is unknown",
			dir);
	else if ((base = secure_getenv("XDG_STATE_HOME")) && *base == '/')
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir),
			     "%s/observe/spool", base);
	else if ((base = secure_getenv("HOME")) && *base == '/')
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir),
			     "%s/.local/state/observe/spool", base);
	else
		n = snprintf(obs_proc.dir, sizeof(obs_proc.dir),
			     "/tmp/observe-%u/spool", (unsigned)getuid());
	if (n < 0 || (size_t)n >= sizeof(obs_proc.dir))
		obs_proc.disabled = true;
}

__attribute__((constructor)) static void obs_init(int argc, char **argv,
						  char **envp)
{
	static int done;
	const char *v;
	struct utsname uts;

	(void)envp;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	obs_resolve();
	/* Secure-execution mode (setuid, setgid, file capabilities): the
	 * environment is the caller's, not the program's owner's; nothing in it
	 * (OBSERVE_DIR above all) is to be trusted, so nothing is recorded and
	 * nothing said (OBSERVE_LOG is the caller's too). The hooks pass every
	 * call through. */
	if (getauxval(AT_SECURE)) {
		obs_proc.disabled = true;
		return;
	}
	/* the command line for the spool header, its secrets redacted (glibc
	 * passes argc, argv and envp to constructors) */
	obs_proc.argv_len = (uint32_t)obs_redact_argv(argc, argv, obs_proc.argv,
						      sizeof(obs_proc.argv));
	v = secure_getenv("OBSERVE_LOG");
	if (v && *v)
		obs_proc.log_level =
			(*v >= '0' && *v <= '9') ? atoi(v) : OBS_LOG_INFO;
	obs_set_start();
	v = secure_getenv("OBSERVE_DISABLE");
	if (v && *v && strcmp(v, "0") != 0) {
		obs_proc.disabled = true;
		return;
	}
	if (uname(&uts) == 0) {
		size_t n = strnlen(uts.nodename, sizeof(obs_proc.host) - 1);
		memcpy(obs_proc.host, uts.nodename, n);
		obs_proc.host[n] = '\0';
	}
	v = secure_getenv("OBSERVE_CLIENT");
	snprintf(obs_proc.client, sizeof(obs_proc.client), "%s",
		 v && *v ? v : obs_proc.host);
	obs_pick_dir();
	if (obs_proc.disabled)
		return;
	v = secure_getenv("OBSERVE_CAPTURE");
	obs_proc.events = v && strcmp(v, "events") == 0;
	obs_proc.segment_mb = env_mb("OBSERVE_SPOOL_SEGMENT_MB");
	obs_proc.limit_mb = env_mb("OBSERVE_SPOOL_LIMIT_MB");

	if (fd_table_init() != 0) {
		OBS_LOG(OBS_LOG_WARN, "no memory for the fd table: disabled");
		obs_proc.disabled = true;
		return;
	}
	obs_fork_install();
	obs_keylog_setup(); /* (the environment, before the program reads it) */
	OBS_LOG(OBS_LOG_INFO, "observing; spool directory %s", obs_proc.dir);
}
