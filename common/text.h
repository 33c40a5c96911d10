/* text.h - text that comes from the data (program paths, client and host
 * names, HTTP paths and hosts, file names) made safe for where it goes:
 * a terminal (control characters escaped), UTF-8 output (bytes that are
 * not UTF-8 replaced), a spreadsheet (formula cells defused).
 *
 * Any of these strings may have been written by someone else: a program
 * named on purpose, a request path sent on purpose, a client name set on
 * another machine. Shown raw, an escape sequence would drive the user's
 * terminal and a cell "=..." would run as a formula (docs/security.md).
 */
#ifndef OBSERVE_TEXT_H
#define OBSERVE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the character at p (n > 0 bytes available), 1 to 4, and
 * *valid whether it is well-formed UTF-8. When it is not (a stray
 * continuation byte, an overlong form, a surrogate, a code point past
 * U+10FFFF, a sequence cut short), the length is that of the maximal
 * ill-formed subpart, as Unicode's best practice for U+FFFD counts it
 * (one U+FFFD per such length, as Python and browsers decode). */
size_t text_utf8_len(const unsigned char *p, size_t n, bool *valid);

/* Whether the character of len bytes at p is a control character: C0
 * (below 0x20), DEL, or C1 (U+0080 to U+009F). */
bool text_is_control(const unsigned char *p, size_t len);

/* The escape of a character of len bytes at p, written by text_escaped
 * instead of it; NULL to write it as it is. buf (16 bytes) may hold it. */
typedef const char *text_escape_fn(const unsigned char *p, size_t len,
				   char buf[16]);

/* Writes s to out character by character: what is not UTF-8 as invalid
 * (one per ill-formed subpart, text_utf8_len), every other character as
 * escape says. */
void text_escaped(FILE *out, const char *s, const char *invalid,
		  text_escape_fn *escape);

/* s as it may be shown on a terminal: every control character (also
 * newline and tab) and every byte that is not UTF-8 becomes \xNN (a C1
 * character its two bytes). Returns s itself when nothing needs it, else
 * buf (size > 0), the escaped text cut to fit. NULL gives "(null)". */
const char *text_tty(const char *s, char *buf, size_t size);

/* The same, written to f (no length limit). */
void text_tty_put(FILE *f, const char *s);

/* Flags of text_csv_cell. */
enum {
	/* the output is a terminal: control characters escaped as above */
	TEXT_CSV_TTY = 0x1,
	/* quoted even when nothing in it needs it */
	TEXT_CSV_QUOTE = 0x2,
};

/* One CSV cell of text (RFC 4180): quoted when it holds a comma, a quote,
 * CR or LF, quotes doubled; bytes that are not UTF-8 become U+FFFD (as
 * above); a cell
 * that begins with =, +, -, @, tab or CR (a formula to a spreadsheet) is
 * prefixed with a single quote ', as OWASP's advice on CSV injection
 * says. */
void text_csv_cell(FILE *f, const char *s, unsigned flags);

#endif
