/* text.c - text from the data made safe for a terminal, for UTF-8 output
 * and for a spreadsheet (see text.h). */
#include "text.h"

#include <string.h>

size_t text_utf8_len(const unsigned char *p, size_t n, bool *valid)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	*valid = false;
	if (n == 0)
		return 0;
	if (c < 0x80) {
		*valid = true;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 1; /* continuation byte, C0/C1 overlong, past F4 */
	/* the second byte's range rules out overlong forms, surrogates and
	 * code points past U+10FFFF (RFC 3629, section 4) */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i < len && i < n; i++) {
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf))
			return i; /* the maximal subpart that was well begun */
	}
	*valid = i == len;
	return i;
}

bool text_is_control(const unsigned char *p, size_t len)
{
	return (len == 1 && (p[0] < 0x20 || p[0] == 0x7f)) ||
	       (len == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

/* Call put(ctx, bytes, n) for s with its control characters and bytes
 * that are not UTF-8 as \xNN; stops when put returns false. */
static void tty_each(const char *s, bool (*put)(void *, const char *, size_t),
		     void *ctx)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		bool valid;
		size_t len = text_utf8_len(p, n, &valid);

		if (!valid || text_is_control(p, len)) {
			for (size_t i = 0; i < len; i++) {
				static const char hex[] = "0123456789abcdef";
				char esc[4] = { '\\', 'x', hex[p[i] >> 4],
						hex[p[i] & 0xf] };
				if (!put(ctx, esc, sizeof(esc)))
					return;
			}
		} else if (!put(ctx, (const char *)p, len)) {
			return;
		}
		p += len;
		n -= len;
	}
}

/* Whether s needs any escaping for a terminal. */
static bool tty_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		bool valid;
		size_t len = text_utf8_len(p, n, &valid);

		if (!valid || text_is_control(p, len))
			return false;
		p += len;
		n -= len;
	}
	return true;
}

struct buf {
	char *p;
	size_t used, size;
};

/* Append whole pieces while they fit (an escape is never cut). */
static bool buf_put(void *ctx, const char *bytes, size_t n)
{
	struct buf *b = ctx;

	if (b->used + n >= b->size)
		return false;
	memcpy(b->p + b->used, bytes, n);
	b->used += n;
	b->p[b->used] = '\0';
	return true;
}

const char *text_tty(const char *s, char *buf, size_t size)
{
	struct buf b = { buf, 0, size };

	if (!s)
		return "(null)";
	if (tty_clean(s))
		return s;
	buf[0] = '\0';
	tty_each(s, buf_put, &b);
	return buf;
}

static bool file_put(void *ctx, const char *bytes, size_t n)
{
	return fwrite(bytes, 1, n, ctx) == n;
}

void text_tty_put(FILE *f, const char *s)
{
	if (!s)
		s = "(null)";
	if (tty_clean(s))
		fputs(s, f);
	else
		tty_each(s, file_put, f);
}

/* The cell's text, quotes doubled, bytes that are not UTF-8 as U+FFFD,
 * control characters escaped when tty. */
static void csv_body(FILE *f, const char *s, bool quoted, bool tty)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		bool valid;
		size_t len = text_utf8_len(p, n, &valid);

		if (!valid) {
			fputs("\xef\xbf\xbd", f); /* U+FFFD */
		} else if (tty && text_is_control(p, len)) {
			char one[3];

			memcpy(one, p, len);
			one[len] = '\0';
			text_tty_put(f, one);
		} else {
			if (quoted && *p == '"')
				fputc('"', f);
			fwrite(p, 1, len, f);
		}
		p += len;
		n -= len;
	}
}

void text_csv_cell(FILE *f, const char *s, unsigned flags)
{
	bool formula = strchr("=+-@\t\r", s[0]) && s[0] != '\0';
	bool quoted = (flags & TEXT_CSV_QUOTE) || strpbrk(s, ",\"\r\n");

	if (quoted)
		fputc('"', f);
	if (formula)
		fputc('\'', f);
	csv_body(f, s, quoted, flags & TEXT_CSV_TTY);
	if (quoted)
		fputc('"', f);
}

void text_escaped(FILE *out, const char *s, const char *invalid,
		  text_escape_fn *escape)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	char buf[16];

	while (n > 0) {
		bool valid;
		size_t len = text_utf8_len(p, n, &valid);
		const char *instead = valid ? escape(p, len, buf) : invalid;

		if (instead)
			fputs(instead, out);
		else
			fwrite(p, 1, len, out);
		p += len;
		n -= len;
	}
}
