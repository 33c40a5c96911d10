/* fuzz_otlp.c - libFuzzer target for what the OTLP exporter reads from the
 * network and the environment: a receiver's answer (partialSuccess,
 * google.rpc.Status: otel/response.c), Retry-After, and
 * OTEL_EXPORTER_OTLP_HEADERS (otel/headers.c). The first byte picks the
 * parser, the rest is its input. Any bytes must give a result or a
 * refusal, never a crash, a leak, undefined behaviour or a hang, and the
 * results keep their promises (checked here). Run by run-fuzz-otlp.sh. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "headers.h"
#include "response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s, size_t size)
{
	if (!memchr(s, '\0', size))
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			abort(); /* a control character kept */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct otlp_answer a;
	struct otlp_headers h;
	char err[256], *text;
	long seconds = -1;

	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		otlp_answer_parse((const char *)data + 1, size - 1, &a);
		check_text(a.message, sizeof(a.message));
		check_text(a.error_message, sizeof(a.error_message));
		if (a.rejected < 0)
			abort();
		break;
	case 1:
		if (otlp_retry_after((const char *)data + 1, size - 1,
				     1700000000, &seconds) == 0 &&
		    (seconds < 0 || seconds > OTLP_RETRY_AFTER_MAX))
			abort();
		break;
	default:
		if (!(text = malloc(size)))
			return 0;
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		if (otlp_headers_parse(text, &h, err, sizeof(err)) == 0) {
			for (size_t i = 0; i < h.n; i++)
				if (!strstr(h.lines[i], ": ") ||
				    strpbrk(h.lines[i], "\r\n"))
					abort();
			otlp_headers_free(&h);
		} else if (h.n != 0 || !*err)
			abort();
		free(text);
	}
	return 0;
}
