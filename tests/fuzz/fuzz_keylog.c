/* fuzz_keylog.c - libFuzzer target for the key log's reader
 * (core/keylog.c): any bytes as a line to parse, then the same bytes as a
 * file read in pieces (the first byte the pieces' size). Never a crash or
 * a read beyond them; a line taken has a 32-byte random and a secret of 1
 * to 48 bytes, one not taken leaves nothing behind; the lines the reader
 * says stand where it says, within the bytes fed, and end with a newline
 * there. Run by run-fuzz-tlsdec.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keylog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct file {
	const char *p;
	size_t n;
	uint64_t start;
};

static void found(void *ctx, const struct obs_keylog_line *l, uint64_t at,
		  size_t len)
{
	const struct file *f = ctx;

	if (l->secret_len == 0 || l->secret_len > OBS_KEYLOG_SECRET_MAX ||
	    at < f->start || at - f->start + len > f->n ||
	    f->p[at - f->start + len - 1] != '\n')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct obs_keylog_reader r;
	static const struct obs_keylog_line zero;
	struct obs_keylog_line l;
	char *copy = malloc(size ? size : 1); /* exactly size: ASan sees */

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	if (obs_keylog_parse(copy, size, &l)) {
		if (l.secret_len == 0 || l.secret_len > OBS_KEYLOG_SECRET_MAX ||
		    l.label > OBS_KL_SERVER_TRAFFIC)
			abort();
	} else if (memcmp(&l, &zero, sizeof(l)) != 0) {
		abort();
	}
	if (size) { /* the file, in pieces of data[0] + 1 bytes */
		struct file f = { copy, size, 1000 };
		size_t piece = (size_t)data[0] + 1;

		obs_keylog_reader_init(&r, f.start);
		for (size_t at = 0; at < size; at += piece) {
			size_t k = size - at < piece ? size - at : piece;
			char *chunk = malloc(k);

			memcpy(chunk, copy + at, k);
			obs_keylog_feed(&r, chunk, k, found, &f);
			free(chunk);
		}
		if (r.off != f.start + size)
			abort();
	}
	free(copy);
	return 0;
}
