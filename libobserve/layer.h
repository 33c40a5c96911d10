/* layer.h - state shared by the parts of libobserve.so (hooks.c, spool.c).
 * Everything here is hidden: the library exports only the hooks. */
#ifndef OBSERVE_LAYER_H
#define OBSERVE_LAYER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "spool_format.h"

#define OBS_HIDDEN __attribute__((visibility("hidden")))

/* Diagnostics levels (OBSERVE_LOG). */
enum { OBS_LOG_OFF = 0, OBS_LOG_WARN = 1, OBS_LOG_INFO = 2, OBS_LOG_DEBUG = 3 };

struct obs_process {
	int log_level;
	bool disabled;
	int32_t pid;
	int64_t start_ns;  /* epoch ns of the layer's start in this process */
	char client[64];
	char host[64];
	char dir[512];     /* spool directory */
	char argv[3600];   /* the command line, NUL-separated, as at start */
	uint32_t argv_len;
};

OBS_HIDDEN extern struct obs_process obs_proc;

/* Monotonic nanoseconds: for relative timings and the spool only. */
static inline int64_t obs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Write one diagnostic line ("observe[prog:pid]: ...") through the real
 * write(), when OBSERVE_LOG is at least level. Keeps errno. */
OBS_HIDDEN void obs_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same, evaluating the arguments only when the level is on. */
#define OBS_LOG(level, ...)                               \
	do {                                              \
		if (__builtin_expect(obs_proc.log_level >= (level), 0)) \
			obs_log((level), __VA_ARGS__);    \
	} while (0)

/* The spool of this process: created on the first tracked connect. Returns
 * 0 when it is usable. Takes the layer's mutex. */
OBS_HIDDEN int obs_spool_ensure(void);
/* Mark the spool as ended (exit, _exit, exec); ended=false undoes it. */
OBS_HIDDEN void obs_spool_mark_ended(bool ended);
/* In a forked child: forget the parent's spool (it belongs to the parent). */
OBS_HIDDEN void obs_spool_forget(void);

/* The layer's one mutex: spool creation and growth, the connection pool. */
OBS_HIDDEN void obs_mutex_lock(void);
OBS_HIDDEN void obs_mutex_unlock(void);
OBS_HIDDEN void obs_mutex_reinit(void);

/* Our own file operations bypass the hooks (and the host's interposers). */
OBS_HIDDEN long obs_sys_write(int fd, const void *buf, unsigned long len);
OBS_HIDDEN int obs_sys_close(int fd);

#endif
