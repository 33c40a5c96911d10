/* push.h - slicer -o postgresql://...: the spools ingested into a private
 * temporary SQLite database as usual (filters and all), then merged into
 * the PostgreSQL central store as manager pull merges a source
 * (common/merge.c, store_pg.c), and the temporary database removed.
 * Pushing the same spools again adds nothing. */
#ifndef OBSERVE_SLICER_PUSH_H
#define OBSERVE_SLICER_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct push;

/* Connect to the store at uri (created or upgraded) and make the private
 * temporary directory. NULL with the reason in err (the URI shown without
 * a password). */
struct push *push_open(const char *uri, char *err, size_t errlen);

/* The temporary SQLite database to ingest into. */
const char *push_db(const struct push *p);

/* The store as it may be shown. */
const char *push_name(const struct push *p);

/* Merge the temporary database into the store when merge is true, then
 * remove it and disconnect. 0, or -1 with the reason in err. */
int push_close(struct push *p, bool merge, int64_t *exchanges_new, char *err,
	       size_t errlen);

#endif
