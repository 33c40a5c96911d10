/* push.c - slicer -o postgresql://...: a client that may reach the central
 * store pushes to it directly (see push.h). */
#define _GNU_SOURCE
#include "push.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge.h"

struct push {
	obs_central *central;
	char dir[PATH_MAX], db[PATH_MAX + 16];
};

struct push *push_open(const char *uri, char *err, size_t errlen)
{
	struct push *p = calloc(1, sizeof(*p));
	const char *tmp = getenv("TMPDIR");

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* connect first: a wrong password fails before any work */
	if (!(p->central = obs_central_open(uri, err, errlen))) {
		free(p);
		return NULL;
	}
	snprintf(p->dir, sizeof(p->dir), "%s/observe-push-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(p->dir)) {
		snprintf(err, errlen, "%s: %s", p->dir, strerror(errno));
		obs_central_close(p->central);
		free(p);
		return NULL;
	}
	snprintf(p->db, sizeof(p->db), "%s/observe.db", p->dir);
	return p;
}

const char *push_db(const struct push *p)
{
	return p->db;
}

const char *push_name(const struct push *p)
{
	return obs_central_name(p->central);
}

int push_close(struct push *p, bool merge, int64_t *exchanges_new, char *err,
	       size_t errlen)
{
	static const char *const files[] = { "", "-wal", "-shm", "-journal" };
	char path[PATH_MAX + 32];
	int rc = 0;

	*exchanges_new = 0;
	if (merge && obs_merge_file(p->central, p->db, NULL, NULL,
				    exchanges_new, err, errlen) != 0)
		rc = -1;
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		snprintf(path, sizeof(path), "%s%s", p->db, files[i]);
		unlink(path);
	}
	rmdir(p->dir);
	obs_central_close(p->central);
	free(p);
	return rc;
}
