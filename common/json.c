/* json.c - JSON text for the exports: strings made safe from the data
 * (see json.h). */
#define _GNU_SOURCE
#include "json.h"

#include "text.h"

/* JSON's escapes, and \uXXXX for the other control characters */
static const char *json_escape(const unsigned char *p, size_t len, char buf[16])
{
	switch (*p) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	}
	if (!text_is_control(p, len))
		return NULL;
	snprintf(buf, 16, "\\u%04x", len == 1 ? *p : p[1]);
	return buf;
}

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	text_escaped(out, s, "\\ufffd", json_escape);
	fputc('"', out);
}
