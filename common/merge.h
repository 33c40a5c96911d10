/* merge.h - merging client databases into a central one (manager pull):
 * each source checked (integrity, schema version), then merged in one
 * transaction of its own with the statements of schema.h; rows are matched
 * on their identity, so merging a source again adds only what is new. */
#ifndef OBSERVE_MERGE_H
#define OBSERVE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Ready the central database for many merges (a bigger page cache, no
 * index that merging cannot afford). 0, or -1 with SQLite's reason in
 * err. */
int obs_merge_prepare(obs_store *central, char *err, size_t errlen);

/* Told the step a merge has reached: "checking", then "merging". */
typedef void (*obs_merge_step_fn)(void *ctx, const char *step);

/* Merge the client database at path (opened read-only: never changed) into
 * central, as the source named `source` (its high-water mark: only its rows
 * that were new or in flight when it was last pulled under that name are
 * read; another database under the name starts over). 0 merged, *exchanges_new
 * the exchanges it added; -1 nothing merged, the reason in why ("cannot open:
 * ...", "damaged database (...)", "made by an older observe ...", "cannot
 * merge: ..."). step may be NULL. */
int obs_merge_file(obs_store *central, const char *path, const char *source,
		   obs_merge_step_fn step, void *ctx, int64_t *exchanges_new,
		   char *why, size_t whylen);

#endif
