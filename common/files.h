/* files.h - the files the tools create and read on the user's behalf:
 * databases, exports and reports private to their owner whatever the
 * umask, and only regular files opened as input (a FIFO or a device would
 * block or never end).
 *
 * The modes are 0600 for a file and 0700 for a directory the tools create;
 * a file or directory that already exists keeps its mode: it is never
 * widened, and never narrowed either (chmod is the user's).
 * See docs/security.md.
 */
#ifndef OBSERVE_FILES_H
#define OBSERVE_FILES_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* What a file that is not a regular one is, for a message: "a FIFO", "a
 * directory", "a socket", "a character device"... */
const char *files_kind(mode_t mode);

/* Whether path may be opened as input: 0 when it is a regular file (or a
 * link to one), or does not exist and missing_ok; else -1 with the reason
 * in err ("not a regular file (a FIFO)", "No such file or directory"). */
int files_check_regular(const char *path, int missing_ok, char *err,
			size_t errlen);

/* Make a database file ready to open: when path does not exist, create it
 * empty with mode 0600, whatever the umask (SQLite then gives its -wal and
 * -shm files the same mode); an existing regular file is left as it is.
 * ":memory:", "" and "file:" URIs are left to SQLite. 0, or -1 with the
 * reason in err. */
int files_prepare_db(const char *path, char *err, size_t errlen);

/* fopen(path, "w") with a new file made 0600 whatever the umask; an
 * existing file is truncated and keeps its mode. NULL with errno set. */
FILE *files_create_private(const char *path);

/* mkdir path with mode 0700 whatever the umask; an existing directory
 * keeps its mode. 0, or -1 with errno set. */
int files_mkdir_private(const char *path);

#endif
