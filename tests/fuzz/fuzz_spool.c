/* fuzz_spool.c - libFuzzer target for the spool reader and the ingest into
 * the database: any bytes as a spool file must give messages, never a
 * crash, a leak, undefined behaviour or a hang. Run by run-fuzz.sh. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spool_reader.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore(void *ctx, size_t offset, const char *why)
{
	(void)ctx;
	(void)offset;
	(void)why;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static obs_store *store;
	static FILE *devnull;
	char path[64], err[256];
	struct obs_spool sp;
	struct obs_ingest_stats stats = { 0 };
	int fd = memfd_create("spool", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (obs_spool_open(&sp, path, err, sizeof(err)) == 0) {
		const struct obs_record *r;
		size_t offset;
		while ((r = obs_spool_next(&sp, &offset, ignore, NULL)))
			;
		obs_spool_close(&sp);
	}
	if (!store) {
		store = obs_store_open(":memory:", err, sizeof(err));
		devnull = fopen("/dev/null", "w");
		if (!store || !devnull)
			abort();
	}
	obs_store_ingest_path(store, path, &stats, devnull, NULL, NULL, 0);
	close(fd);
	return 0;
}
