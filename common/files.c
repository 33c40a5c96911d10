/* files.c - files the tools create private whatever the umask, and input
 * opened only when it is a regular file (see files.h). */
#define _GNU_SOURCE
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *files_kind(mode_t mode)
{
	return S_ISDIR(mode)	? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
				: "not a file";
}

int files_check_regular(const char *path, int missing_ok, char *err,
			size_t errlen)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		if (errno == ENOENT && missing_ok)
			return 0;
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file (%s)",
			 files_kind(st.st_mode));
		return -1;
	}
	return 0;
}

int files_prepare_db(const char *path, char *err, size_t errlen)
{
	int fd;

	if (!*path || strcmp(path, ":memory:") == 0 ||
	    strncmp(path, "file:", 5) == 0)
		return 0;
	if (files_check_regular(path, 1, err, errlen) != 0)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0; /* there already (or just made by another) */
		snprintf(err, errlen, "cannot create: %s", strerror(errno));
		return -1;
	}
	/* the umask took bits off the mode open was given: put them back */
	if (fchmod(fd, 0600) != 0) {
		snprintf(err, errlen, "cannot set mode 0600: %s",
			 strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

FILE *files_create_private(const char *path)
{
	FILE *f;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (fchmod(fd, 0600) != 0) {
			int e = errno;
			close(fd);
			unlink(path);
			errno = e;
			return NULL;
		}
	} else if (errno == EEXIST) {
		/* the user's file: truncated, its mode kept */
		fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int files_mkdir_private(const char *path)
{
	struct stat st;
	int fd, rc;

	if (mkdir(path, 0700) != 0) {
		if (errno != EEXIST)
			return -1;
		if (stat(path, &st) != 0)
			return -1;
		if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			return -1;
		}
		return 0; /* the user's directory: its mode kept */
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fchmod(fd, 0700);
	close(fd);
	return rc;
}
