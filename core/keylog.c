/* keylog.c - a key log line's parser (keylog.h). */
#include "keylog.h"

#include <string.h>

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The hex digits p[0..n) (n even, at most 2 * max) into out; the bytes
 * written, or -1. */
static int unhex(const char *p, size_t n, uint8_t *out, size_t max)
{
	if (n == 0 || n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_digit(p[i]), lo = hex_digit(p[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

static bool label_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool obs_keylog_parse(const char *p, size_t n, struct obs_keylog_line *out)
{
	size_t label, rand_end;
	int secret;

	memset(out, 0, sizeof(*out));
	if (n && p[n - 1] == '\r')
		n--;
	for (label = 0; label < n && label_char(p[label]); label++)
		;
	if (label == 0 || label >= n || p[label] != ' ')
		return false;
	rand_end = label + 1 + 64;
	if (rand_end >= n || p[rand_end] != ' ' ||
	    unhex(p + label + 1, 64, out->random, sizeof(out->random)) != 32)
		goto bad;
	secret = unhex(p + rand_end + 1, n - rand_end - 1, out->secret,
		       sizeof(out->secret));
	if (secret < 0)
		goto bad;
	out->secret_len = (uint8_t)secret;
	if (label == 23 && memcmp(p, "CLIENT_TRAFFIC_SECRET_0", 23) == 0)
		out->label = OBS_KL_CLIENT_TRAFFIC;
	else if (label == 23 && memcmp(p, "SERVER_TRAFFIC_SECRET_0", 23) == 0)
		out->label = OBS_KL_SERVER_TRAFFIC;
	else if (label == 13 && memcmp(p, "CLIENT_RANDOM", 13) == 0 &&
		 secret == 48)
		out->label = OBS_KL_MASTER;
	return true;
bad:
	memset(out, 0, sizeof(*out));
	return false;
}

void obs_keylog_reader_init(struct obs_keylog_reader *r, uint64_t off)
{
	memset(r, 0, sizeof(*r));
	r->off = off;
}

/* Line p[0..n), at offset at: said if it is of the format. */
static void one_line(const char *p, size_t n, uint64_t at,
		     obs_keylog_found *found, void *ctx)
{
	struct obs_keylog_line l;

	if (obs_keylog_parse(p, n, &l))
		found(ctx, &l, at, n + 1);
	memset(&l, 0, sizeof(l));
	__asm__ __volatile__("" : : "r"(&l) : "memory"); /* kept: wiped */
}

void obs_keylog_feed(struct obs_keylog_reader *r, const char *p, size_t n,
		     obs_keylog_found *found, void *ctx)
{
	size_t start = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = i - start;

		if (p[i] != '\n')
			continue;
		if (r->skipping) {
			r->skipping = 0;
		} else if (r->carry_len) {
			if (r->carry_len + k <= sizeof(r->carry)) {
				memcpy(r->carry + r->carry_len, p + start, k);
				one_line(r->carry, r->carry_len + k,
					 r->carry_at, found, ctx);
			}
			memset(r->carry, 0, sizeof(r->carry));
		} else if (k <= sizeof(r->carry)) {
			one_line(p + start, k, r->off + start, found, ctx);
		}
		r->carry_len = 0;
		start = i + 1;
	}
	if (start < n && !r->skipping) { /* a line begun */
		size_t k = n - start;

		if (r->carry_len == 0)
			r->carry_at = r->off + start;
		if (r->carry_len + k <= sizeof(r->carry)) {
			memcpy(r->carry + r->carry_len, p + start, k);
			r->carry_len += k;
		} else {
			r->skipping = 1;
			r->carry_len = 0;
			memset(r->carry, 0, sizeof(r->carry));
		}
	}
	r->off += n;
}
