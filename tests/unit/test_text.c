/* test_text.c - common/text.c: UTF-8 by the maximal-subpart rule (the
 * cases of Unicode's table 3-8 and RFC 3629), text escaped for a
 * terminal, CSV cells (quoting, formulas, U+FFFD). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "text.h"

/* The lengths text_utf8_len walks s in, "+" for a valid character and "!"
 * for an ill-formed subpart: "1+ 2! 1+" */
static char *walk(const char *s, size_t n)
{
	static char out[256];
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;

	out[0] = '\0';
	while (n > 0) {
		bool valid;
		size_t len = text_utf8_len(p, n, &valid);

		used += (size_t)snprintf(out + used, sizeof(out) - used,
					 "%s%zu%c", used ? " " : "", len,
					 valid ? '+' : '!');
		p += len;
		n -= len;
	}
	return out;
}

static void test_utf8(void **state)
{
	(void)state;
	assert_string_equal(walk("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10),
			    "1+ 2+ 3+ 4+");
	/* stray continuation, C0/C1 overlong leads, F5.. */
	assert_string_equal(walk("\x80\xbf\xc0\xaf\xc1\xbf\xf5\xff", 8),
			    "1! 1! 1! 1! 1! 1! 1! 1!");
	/* overlong 3 and 4 byte forms: the lead alone is ill-formed */
	assert_string_equal(walk("\xe0\x80\xaf", 3), "1! 1! 1!");
	assert_string_equal(walk("\xf0\x80\x80\xaf", 4), "1! 1! 1! 1!");
	/* a surrogate, a code point past U+10FFFF */
	assert_string_equal(walk("\xed\xa0\x80", 3), "1! 1! 1!");
	assert_string_equal(walk("\xf4\x90\x80\x80", 4), "1! 1! 1! 1!");
	/* the last ones that are valid */
	assert_string_equal(walk("\xed\x9f\xbf\xf4\x8f\xbf\xbf", 7), "3+ 4+");
	/* cut short: the well-begun part is one subpart */
	assert_string_equal(walk("\xe2\x82", 2), "2!");
	assert_string_equal(walk("\xf0\x9f\x98"
				 "a",
				 4),
			    "3! 1+");
	assert_string_equal(walk("\xe2\x82"
				 "\xe2\x82\xac",
				 5),
			    "2! 3+");
}

static void test_tty(void **state)
{
	char buf[64];
	const char *clean = "caf\xc3\xa9 /path";

	(void)state;
	/* nothing to do: the string itself */
	assert_ptr_equal(text_tty(clean, buf, sizeof(buf)), clean);
	assert_string_equal(text_tty("a\x1b[2Jb\n\t\x7f", buf, sizeof(buf)),
			    "a\\x1b[2Jb\\x0a\\x09\\x7f");
	/* C1 (U+009B, CSI) as its two bytes; U+00A0 is no control */
	assert_string_equal(text_tty("\xc2\x9b\xc2\xa0", buf, sizeof(buf)),
			    "\\xc2\\x9b\xc2\xa0");
	assert_string_equal(text_tty("x\xff\xe2\x82", buf, sizeof(buf)),
			    "x\\xff\\xe2\\x82");
	/* cut to fit, never inside an escape */
	assert_string_equal(text_tty("ab\x1b\x1b", buf, 8), "ab\\x1b");
	assert_string_equal(text_tty(NULL, buf, sizeof(buf)), "(null)");
}

/* The cell as text_csv_cell writes it. */
static char *cell(const char *s, unsigned flags)
{
	static char *out;
	size_t len;
	FILE *f;

	free(out);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	text_csv_cell(f, s, flags);
	fclose(f);
	return out;
}

static void test_csv(void **state)
{
	(void)state;
	assert_string_equal(cell("plain", 0), "plain");
	assert_string_equal(cell("", 0), "");
	assert_string_equal(cell("a,b", 0), "\"a,b\"");
	assert_string_equal(cell("say \"hi\"", 0), "\"say \"\"hi\"\"\"");
	assert_string_equal(cell("x", TEXT_CSV_QUOTE), "\"x\"");
	/* formulas: each leading character of OWASP's list */
	assert_string_equal(cell("=1+2", 0), "'=1+2");
	assert_string_equal(cell("+cmd", 0), "'+cmd");
	assert_string_equal(cell("-2+3", 0), "'-2+3");
	assert_string_equal(cell("@SUM(A1)", 0), "'@SUM(A1)");
	assert_string_equal(cell("\t=1", 0), "'\t=1");
	assert_string_equal(cell("\r=1", 0), "\"'\r=1\"");
	assert_string_equal(cell("=HYPERLINK(\"u\",\"x\")", 0),
			    "\"'=HYPERLINK(\"\"u\"\",\"\"x\"\")\"");
	assert_string_equal(cell("a=1", 0), "a=1");
	/* not UTF-8: U+FFFD per subpart; control characters kept, but
	 * escaped for a terminal */
	assert_string_equal(cell("h\xff\xe2\x82o", 0),
			    "h\xef\xbf\xbd\xef\xbf\xbdo");
	assert_string_equal(cell("a\x1b[31m", 0), "a\x1b[31m");
	assert_string_equal(cell("a\x1b[31m", TEXT_CSV_TTY), "a\\x1b[31m");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_tty),
		cmocka_unit_test(test_csv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
