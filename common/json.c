/* json.c - JSON text for the exports: strings made safe from the data
 * (see json.h). */
#define _GNU_SOURCE
#include "json.h"

#include <stdbool.h>
#include <string.h>

#include "text.h"

void json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	fputc('"', out);
	while (n > 0) {
		bool valid;
		size_t len = text_utf8_len(p, n, &valid);

		if (!valid)
			fputs("\\ufffd", out);
		else if (*p == '"')
			fputs("\\\"", out);
		else if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\r')
			fputs("\\r", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (text_is_control(p, len))
			fprintf(out, "\\u%04x", len == 1 ? *p : p[1]);
		else
			fwrite(p, 1, len, out);
		p += len;
		n -= len;
	}
	fputc('"', out);
}
