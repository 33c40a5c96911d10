/* h1.c - HTTP/1.1 message framing over both directions of a connection
 * (RFC 9112). See h1.h for what it reports and what it keeps.
 *
 * Each direction is a state machine. A head is read a line at a time: a
 * line whose LF is in the call is read where it lies; a line a call's end
 * cuts is kept (its first OBS_H1_LINE_MAX bytes) until its LF comes, and
 * read then by the same functions. A start line is also checked as its
 * bytes come, so that bytes that are not HTTP/1 are known at once, not at
 * an LF that may never come. A header line whose first letter begins none
 * of the six names below, chunk extensions and trailers are skipped to
 * their LF with memchr, never kept; a body is skipped by its length. The
 * message's length follows RFC 9112 section 6.3, in its order:
 *
 *   response to HEAD, 1xx, 204, 304      no body
 *   2xx to CONNECT, 101                  no body; the bytes switch protocol
 *   Transfer-Encoding, chunked last      chunked
 *   Transfer-Encoding, other last        response: until close
 *                                        request: lost (a 400)
 *   Content-Length not one number        lost
 *   Content-Length                       that many bytes
 *   request without either               no body
 *   response without either              until close
 *
 * The headers read: Host, Content-Length, Transfer-Encoding, Connection,
 * Upgrade and Expect. Of a line longer than OBS_H1_LINE_MAX cut by a call's
 * end, what lies past its first OBS_H1_LINE_MAX bytes is not read (a long
 * query string; a Content-Length that long is not one number).
 */
#include "h1.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum h1_state {
	ST_START,	 /* before a message: empty lines skipped */
	ST_REQUEST_LINE, /* a request's first line */
	ST_STATUS_LINE,	 /* a response's first line */
	ST_LINE,	 /* a header line, or the empty line that ends a head */
	ST_SKIP,	 /* the rest of a header line not read */
	ST_BODY,	 /* left bytes of a body of known length */
	ST_CHUNK_SIZE,	 /* a chunk's size, in hex */
	ST_CHUNK_EXT,	 /* ... its extensions, to the LF */
	ST_CHUNK_DATA,	 /* left bytes of a chunk */
	ST_CHUNK_CRLF,	 /* the CRLF after a chunk's data */
	ST_TRAILER,	 /* a trailer line, or the empty line, begins */
	ST_TRAILER_SKIP, /* ... a trailer line, to its LF */
	ST_CLOSE_BODY,	 /* a body that ends when the connection does */
	ST_AWAIT,    /* requests: a CONNECT or Upgrade waits for its answer */
	ST_SWITCHED, /* another protocol from here on */
	ST_LOST,     /* not HTTP/1 as followed here: nothing more read */
	ST_DONE,     /* the direction ended */
};

/* The headers the framer reads. */
enum h1_field {
	F_NONE,
	F_HOST,
	F_CONTENT_LENGTH,
	F_TRANSFER_ENCODING,
	F_CONNECTION,
	F_UPGRADE,
	F_EXPECT,
};

/* What a start line's check found (or the index of the byte that is not
 * HTTP/1: the line's length for its LF). */
#define LINE_GOOD ((size_t)-1)

/* Whether a header line that begins with a byte may be one the framer
 * reads: the six names begin with h, e, u, c or t. */
static const bool may_be_read[256] = {
	['h'] = 1, ['e'] = 1, ['u'] = 1, ['c'] = 1, ['t'] = 1,
	['H'] = 1, ['E'] = 1, ['U'] = 1, ['C'] = 1, ['T'] = 1,
};

/* RFC 9110's tchar: the bytes of a method or a field name. */
static const bool tchar[256] = {
	['!'] = 1,	   ['#'] = 1,	      ['$'] = 1, ['%'] = 1,
	['&'] = 1,	   ['\''] = 1,	      ['*'] = 1, ['+'] = 1,
	['-'] = 1,	   ['.'] = 1,	      ['^'] = 1, ['_'] = 1,
	['`'] = 1,	   ['|'] = 1,	      ['~'] = 1, ['0' ... '9'] = 1,
	['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
};

/* Each byte in lower case (letters folded, other bytes as they are). */
#define FOLD(c) ((c) >= 'A' && (c) <= 'Z' ? (c) | 0x20 : (c))
#define FOLD4(c) FOLD(c), FOLD((c) + 1), FOLD((c) + 2), FOLD((c) + 3)
#define FOLD16(c) FOLD4(c), FOLD4((c) + 4), FOLD4((c) + 8), FOLD4((c) + 12)
#define FOLD64(c)                                                              \
	FOLD16(c), FOLD16((c) + 16), FOLD16((c) + 32), FOLD16((c) + 48)
static const uint8_t fold[256] = { FOLD64(0), FOLD64(64), FOLD64(128),
				   FOLD64(192) };
#undef FOLD64
#undef FOLD16
#undef FOLD4
#undef FOLD

/* The 8 bytes at p, their letters in lower case (fold, 8 at once: a
 * byte's top bit is set where it lies in 'A'..'Z', then moved to 0x20). */
static inline uint64_t lower8(const char *p)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7fu, top = 0x8080808080808080u;
	uint64_t x, upper;

	memcpy(&x, p, sizeof(x));
	upper = ((x & low7) + 0x3f3f3f3f3f3f3f3fu) ^
		((x & low7) + 0x2525252525252525u);
	return x | (upper & ~x & top) >> 2;
}

/* Whether the n bytes at a are the lower-case word w (n bytes), ignoring
 * the case of a's letters: 8 bytes at a time, the last 8 overlapping,
 * when there are 8. */
static inline bool same_word(const char *a, const char *w, size_t n)
{
	uint64_t wv;
	size_t i;

	if (n < 8) {
		for (i = 0; i < n; i++)
			if (fold[(uint8_t)a[i]] != (uint8_t)w[i])
				return false;
		return true;
	}
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&wv, w + i, sizeof(wv));
		if (lower8(a + i) != wv)
			return false;
	}
	memcpy(&wv, w + n - 8, sizeof(wv));
	return lower8(a + n - 8) == wv;
}

/* A header's field (enum h1_field) from its name (any case). */
static uint8_t field_of(const char *name, size_t n)
{
	static const struct {
		const char *name;
		uint8_t field;
	} by_length[] = {
		[4] = { "host", F_HOST },
		[6] = { "expect", F_EXPECT },
		[7] = { "upgrade", F_UPGRADE },
		[10] = { "connection", F_CONNECTION },
		[14] = { "content-length", F_CONTENT_LENGTH },
		[17] = { "transfer-encoding", F_TRANSFER_ENCODING },
	};

	if (n >= sizeof(by_length) / sizeof(by_length[0]) ||
	    by_length[n].name == NULL || !same_word(name, by_length[n].name, n))
		return F_NONE;
	return by_length[n].field;
}

/* Whether the n bytes at s are the lower-case word; inlined, so that the
 * word's length is known where it is written. */
static inline __attribute__((always_inline)) bool
is_word(const uint8_t *s, size_t n, const char *word)
{
	return n == strlen(word) && same_word((const char *)s, word, n);
}

static void emit_sw(struct obs_h1 *h, enum obs_dir dir, uint8_t kind,
		    uint8_t reason, uint8_t sw)
{
	const struct obs_h1_dir *d = &h->dir[dir];
	struct obs_h1_fact f = {
		.kind = kind,
		.dir = (uint8_t)dir,
		.reason = reason,
		.sw = sw,
		.begin = d->begin,
		.offset = d->pos,
		.head = &d->head,
	};

	h->emit(h->ctx, &f);
}

static void emit(struct obs_h1 *h, enum obs_dir dir, uint8_t kind,
		 uint8_t reason)
{
	emit_sw(h, dir, kind, reason, OBS_H1_SW_NONE);
}

static void lose(struct obs_h1 *h, enum obs_dir dir, enum obs_h1_lost why)
{
	emit(h, dir, OBS_H1_LOST, (uint8_t)why);
	h->dir[dir].state = ST_LOST;
}

static void switch_dir(struct obs_h1 *h, enum obs_dir dir, uint8_t sw)
{
	struct obs_h1_dir *d = &h->dir[dir];

	if (d->state == ST_SWITCHED || d->state == ST_LOST ||
	    d->state == ST_DONE)
		return;
	emit_sw(h, dir, OBS_H1_SWITCH, 0, sw);
	d->state = ST_SWITCHED;
}

/* A message begins with the next byte (at pos). */
static void message_begin(struct obs_h1_dir *d)
{
	memset(&d->head, 0, sizeof(d->head));
	d->begin = d->pos;
	d->te = d->chunked = d->cl_seen = d->cl_bad = false;
	d->keep_alive = d->conn_upgrade = false;
	d->upgrade = OBS_H1_SW_NONE;
	d->hlen = d->plen = 0;
	d->cl = d->num = 0;
	d->tlen = 0;
	d->line_n = 0;
	d->line_cut = false;
}

/* The message of direction dir is complete at pos. */
static void message_end(struct obs_h1 *h, enum obs_dir dir)
{
	struct obs_h1_dir *d = &h->dir[dir];

	emit(h, dir, OBS_H1_END, 0);
	if (d->state == ST_SWITCHED)
		return;
	d->state = dir == OBS_TX && d->head.sw != OBS_H1_SW_NONE ? ST_AWAIT
								 : ST_START;
}

/* Go on with a body of the framing the head chose. */
static void body_begin(struct obs_h1 *h, enum obs_dir dir)
{
	struct obs_h1_dir *d = &h->dir[dir];

	switch (d->head.body) {
	case OBS_H1_BODY_LENGTH:
		d->left = d->head.length;
		d->state = ST_BODY;
		break;
	case OBS_H1_BODY_CHUNKED:
		d->num = 0;
		d->tlen = 0;
		d->state = ST_CHUNK_SIZE;
		break;
	case OBS_H1_BODY_CLOSE:
		d->state = ST_CLOSE_BODY;
		break;
	default:
		message_end(h, dir);
	}
}

/* The body a message's own headers give it (for a request, or a final
 * response that may have one); false when they give none that can be
 * followed. */
static bool body_from_headers(struct obs_h1_dir *d, enum obs_dir dir,
			      enum obs_h1_lost *why)
{
	if (d->te) {
		if (d->chunked) {
			d->head.body = OBS_H1_BODY_CHUNKED;
			return true;
		}
		*why = OBS_H1_BAD_CODING;
		d->head.body = OBS_H1_BODY_CLOSE;
		return dir == OBS_RX;
	}
	if (d->cl_bad) {
		*why = OBS_H1_BAD_LENGTH;
		return false;
	}
	if (d->cl_seen) {
		d->head.length = d->cl;
		d->head.body = d->cl ? OBS_H1_BODY_LENGTH : OBS_H1_BODY_NONE;
	} else {
		d->head.body =
			dir == OBS_TX ? OBS_H1_BODY_NONE : OBS_H1_BODY_CLOSE;
	}
	return true;
}

static void lose_at(struct obs_h1 *h, enum obs_dir dir, enum obs_h1_lost why,
		    uint64_t at)
{
	h->dir[dir].pos = at;
	lose(h, dir, why);
}

static void request_done(struct obs_h1 *h)
{
	struct obs_h1_dir *d = &h->dir[OBS_TX];
	enum obs_h1_lost why = 0;

	if (strncmp(d->head.method, "CONNECT", OBS_H1_METHOD_MAX) == 0)
		d->head.sw = OBS_H1_SW_TUNNEL;
	else if (d->conn_upgrade && d->upgrade != OBS_H1_SW_NONE)
		d->head.sw = d->upgrade;
	if (strncmp(d->head.method, "HEAD", OBS_H1_METHOD_MAX) == 0)
		d->head.flags |= OBS_H1F_HEAD;
	if (!body_from_headers(d, OBS_TX, &why)) {
		emit(h, OBS_TX, OBS_H1_HEAD, 0);
		lose(h, OBS_TX, why);
		return;
	}
	if (h->q_len < OBS_H1_QUEUE) {
		struct obs_h1_asked *a =
			&h->queue[(h->q_first + h->q_len++) % OBS_H1_QUEUE];

		a->sw = d->head.sw;
		a->head = (d->head.flags & OBS_H1F_HEAD) != 0;
	}
	emit(h, OBS_TX, OBS_H1_HEAD, 0);
	body_begin(h, OBS_TX);
}

/* The requests' direction after the answer to a CONNECT or an Upgrade:
 * switched with the responses, or on as HTTP/1 when refused. */
static void answer_awaited(struct obs_h1 *h, uint8_t sw)
{
	struct obs_h1_dir *tx = &h->dir[OBS_TX];

	if (sw != OBS_H1_SW_NONE) {
		if (tx->state == ST_START || tx->state == ST_AWAIT)
			switch_dir(h, OBS_TX, sw);
	} else if (tx->state == ST_AWAIT) {
		tx->state = ST_START;
	}
}

static void response_done(struct obs_h1 *h)
{
	struct obs_h1_dir *d = &h->dir[OBS_RX];
	struct obs_h1_asked asked = { 0 };
	uint16_t status = d->head.status;
	enum obs_h1_lost why = 0;

	if (h->q_len)
		asked = h->queue[h->q_first];
	if (status < 200 && status != 101) { /* interim: answers nothing */
		d->head.flags |= OBS_H1F_INTERIM;
		d->head.body = OBS_H1_BODY_NONE;
		emit(h, OBS_RX, OBS_H1_HEAD, 0);
		message_end(h, OBS_RX);
		return;
	}
	if (h->q_len) {
		h->q_first = (uint8_t)((h->q_first + 1) % OBS_H1_QUEUE);
		h->q_len--;
	}
	if (status == 101 ||
	    (asked.sw == OBS_H1_SW_TUNNEL && status >= 200 && status < 300)) {
		d->head.sw = status == 101 ? asked.sw : OBS_H1_SW_TUNNEL;
		if (status == 101 && (d->head.sw == OBS_H1_SW_NONE ||
				      d->head.sw == OBS_H1_SW_TUNNEL))
			d->head.sw = d->upgrade != OBS_H1_SW_NONE
					     ? d->upgrade
					     : OBS_H1_SW_OTHER;
		d->head.body = OBS_H1_BODY_NONE;
		emit(h, OBS_RX, OBS_H1_HEAD, 0);
		emit(h, OBS_RX, OBS_H1_END, 0);
		switch_dir(h, OBS_RX, d->head.sw);
		answer_awaited(h, d->head.sw);
		return;
	}
	if (asked.sw != OBS_H1_SW_NONE)
		answer_awaited(h, OBS_H1_SW_NONE);
	if ((d->head.flags & OBS_H1F_HTTP10) && !d->keep_alive)
		d->head.flags |= OBS_H1F_CLOSE;
	if (asked.head || status == 204 || status == 304) {
		d->head.body = OBS_H1_BODY_NONE;
	} else if (!body_from_headers(d, OBS_RX, &why)) {
		emit(h, OBS_RX, OBS_H1_HEAD, 0);
		lose(h, OBS_RX, why);
		return;
	}
	emit(h, OBS_RX, OBS_H1_HEAD, 0);
	body_begin(h, OBS_RX);
}

/* One token of a list-valued header's value (s[0..n), n > 0). */
static void token(struct obs_h1_dir *d, uint8_t field, const uint8_t *s,
		  size_t n)
{
	switch (field) {
	case F_TRANSFER_ENCODING:
		d->te = true;
		d->chunked = is_word(s, n, "chunked");
		break;
	case F_CONNECTION:
		if (is_word(s, n, "close"))
			d->head.flags |= OBS_H1F_CLOSE;
		else if (is_word(s, n, "keep-alive"))
			d->keep_alive = true;
		else if (is_word(s, n, "upgrade"))
			d->conn_upgrade = true;
		break;
	case F_UPGRADE:
		if (d->upgrade == OBS_H1_SW_NONE)
			d->upgrade = is_word(s, n, "websocket")
					     ? OBS_H1_SW_WEBSOCKET
				     : is_word(s, n, "h2c") ? OBS_H1_SW_H2C
							    : OBS_H1_SW_OTHER;
		break;
	default: /* F_EXPECT */
		if (is_word(s, n, "100-continue"))
			d->head.flags |= OBS_H1F_EXPECT;
	}
}

/* The bytes that end a token of a list-valued header. */
static const bool token_end[256] = {
	[','] = 1, [' '] = 1, ['\t'] = 1, ['\r'] = 1, [';'] = 1, ['/'] = 1,
};

/* A list of tokens, each perhaps with ;parameters (or a /version),
 * separated by commas and whitespace. */
static void tokens(struct obs_h1_dir *d, uint8_t field, const uint8_t *v,
		   size_t n)
{
	bool params = false; /* after a ';' or '/': skipped to a comma */
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		if (v[i] == ',') {
			params = false;
			i++;
			continue;
		}
		if (params || token_end[v[i]]) {
			params = params || v[i] == ';' || v[i] == '/';
			i++;
			continue;
		}
		while (j < n && !token_end[v[j]])
			j++;
		token(d, field, v + i, j - i);
		i = j;
	}
}

/* The bytes p[0..n) of a host, kept while it fits (a host cut is kept
 * cut until a '@' begins it again). */
static void host_append(struct obs_h1_dir *d, const uint8_t *p, size_t n)
{
	size_t room = OBS_H1_HOST_MAX - d->hlen;

	if (d->head.flags & OBS_H1F_HOST_CUT)
		return;
	if (n > room) {
		n = room;
		d->head.flags |= OBS_H1F_HOST_CUT;
	}
	memcpy(d->head.host + d->hlen, p, n);
	d->hlen = (uint8_t)(d->hlen + n);
}

/* A Host value: its bytes but whitespace, to OBS_H1_HOST_MAX; a '@' (a
 * userinfo has no place here) begins it again. */
static void host_value(struct obs_h1_dir *d, const uint8_t *v, size_t n)
{
	static const bool host_end[256] = {
		[' '] = 1,
		['\t'] = 1,
		['\r'] = 1,
		['@'] = 1,
	};
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		while (j < n && !host_end[v[j]])
			j++;
		host_append(d, v + i, j - i);
		if (j < n && v[j] == '@') {
			memset(d->head.host, 0, sizeof(d->head.host));
			d->hlen = 0;
			d->head.flags &= ~OBS_H1F_HOST_CUT;
		}
		i = j + 1;
	}
}

/* A Content-Length value: one number, or a list of the same number; cut
 * (longer than the framer keeps), it is not one it can know. */
static void length_value(struct obs_h1_dir *d, const uint8_t *v, size_t n,
			 bool cut)
{
	uint64_t num = 0;
	bool digits = false;

	for (size_t i = 0; i <= n; i++) {
		uint8_t c = i < n ? v[i] : ',';

		if (c >= '0' && c <= '9') {
			if (num > (UINT64_MAX - 9) / 10)
				d->cl_bad = true;
			num = num * 10 + (uint64_t)(c - '0');
			digits = true;
		} else if (c == ',') {
			if (digits) {
				if (d->cl_seen && d->cl != num)
					d->cl_bad = true;
				d->cl = num;
				d->cl_seen = true;
			}
			num = 0;
			digits = false;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			d->cl_bad = true;
		}
	}
	if (cut)
		d->cl_bad = true;
}

/* A header line l[0..n) (its LF not in it), cut when longer than was
 * kept: false when it is the empty line (CRs only). CRs before it are
 * dropped; a fold, a line without a colon and a header not read are
 * ignored. */
static inline __attribute__((always_inline)) bool
header_line(struct obs_h1_dir *d, const uint8_t *l, size_t n, bool cut)
{
	const uint8_t *colon, *v;
	uint8_t field;

	while (n && l[0] == '\r') {
		l++;
		n--;
	}
	if (n == 0)
		return false;
	if (!may_be_read[l[0]] || !(colon = memchr(l, ':', n)))
		return true;
	field = field_of((const char *)l, (size_t)(colon - l));
	v = colon + 1;
	n -= (size_t)(v - l);
	switch (field) {
	case F_NONE:
		break;
	case F_HOST: /* the first Host only; the target's authority first */
		if (d->hlen == 0)
			host_value(d, v, n);
		break;
	case F_CONTENT_LENGTH:
		length_value(d, v, n, cut);
		break;
	default:
		tokens(d, field, v, n);
	}
	return true;
}

/* path_add for each of p[0..n). */
static void path_append(struct obs_h1_dir *d, const uint8_t *p, size_t n)
{
	size_t room = OBS_H1_PATH_MAX - d->plen;

	if (n > room) {
		n = room;
		d->head.flags |= OBS_H1F_PATH_CUT;
	}
	memcpy(d->head.path + d->plen, p, n);
	d->plen = (uint8_t)(d->plen + n);
}

/* The bytes that end the path within a target. */
static const bool path_end[256] = { ['?'] = 1, ['#'] = 1, [';'] = 1 };

/* A request target t[0..n): the path kept to its first '?', '#' or ';';
 * an absolute form's authority is the host, without any userinfo;
 * CONNECT's target is all authority. */
static void read_target(struct obs_h1_dir *d, const uint8_t *t, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return;
	if (t[0] == '/' || t[0] == '*') {
		while (i < n && !path_end[t[i]])
			i++;
		path_append(d, t, i);
		return;
	}
	if (strncmp(d->head.method, "CONNECT", OBS_H1_METHOD_MAX) != 0) {
		/* the scheme (never empty), its colon, then slashes */
		const uint8_t *colon = memchr(t + 1, ':', n - 1);

		if (colon == NULL)
			return;
		for (i = (size_t)(colon - t) + 1; i < n && t[i] == '/'; i++)
			;
	} else { /* CONNECT: its first byte is the host's, whatever it is */
		d->head.host[d->hlen++] = (char)t[i++];
	}
	for (; i < n; i++) {
		if (t[i] == '@') { /* what came before was userinfo */
			memset(d->head.host, 0, sizeof(d->head.host));
			d->hlen = 0;
			d->head.flags &= ~OBS_H1F_HOST_CUT;
		} else if (t[i] == '/') {
			read_target(d, t + i, n - i);
			return;
		} else if (t[i] == '?' || t[i] == '#') {
			return;
		} else if (d->hlen < OBS_H1_HOST_MAX) {
			d->head.host[d->hlen++] = (char)t[i];
		} else {
			d->head.flags |= OBS_H1F_HOST_CUT;
		}
	}
}

/* A status line's first 12 bytes, each between its low and high byte:
 * "HTTP/1." and a digit (a request line's version too), a space, then
 * three digits, the first not 0. */
static const uint8_t status_lo[12] = "HTTP/1.0 100";
static const uint8_t status_hi[12] = "HTTP/1.9 999";

/* Whether c may be byte i of a status line (i < 12). */
static inline bool status_byte(uint8_t c, size_t i)
{
	return (uint8_t)(c - status_lo[i]) <=
	       (uint8_t)(status_hi[i] - status_lo[i]);
}

/* The request line l[0..n): LINE_GOOD, or the index of its first byte
 * that is not HTTP/1 (n: its LF). ended: l ends at the line's LF (else it
 * is the line's bytes so far, or all of it that was kept: checked as far
 * as they go). The method is a token of 20 bytes at most, a space, the
 * target (no CR), a space, then "HTTP/1." and a digit (CRs dropped), then
 * anything. The method, path and host are taken as far as they go (the
 * line is read again when more of it comes). */
static size_t request_line(struct obs_h1_dir *d, const uint8_t *l, size_t n,
			   bool ended)
{
	size_t i = 0, t, k;

	memset(d->head.method, 0, sizeof(d->head.method));
	memset(d->head.host, 0, sizeof(d->head.host));
	memset(d->head.path, 0, sizeof(d->head.path));
	d->hlen = d->plen = 0;
	d->head.flags &=
		~(OBS_H1F_HOST_CUT | OBS_H1F_PATH_CUT | OBS_H1F_HTTP10);
	while (i < n && i < 20 && tchar[l[i]])
		i++;
	memcpy(d->head.method, l,
	       i < OBS_H1_METHOD_MAX ? i : OBS_H1_METHOD_MAX);
	if (i == n)
		return ended ? n : LINE_GOOD;
	if (l[i] != ' ' || i == 0)
		return i;
	t = ++i;
	while (i < n && l[i] != ' ' && l[i] != '\r')
		i++;
	read_target(d, l + t, i - t);
	if (i < n && l[i] == '\r')
		return i;
	if (i == n)
		return ended ? n : LINE_GOOD;
	for (i++, k = 0; i < n && k < 8; i++) {
		if (l[i] == '\r')
			continue;
		if (!status_byte(l[i], k))
			return i;
		if (k++ == 7 && l[i] == '0')
			d->head.flags |= OBS_H1F_HTTP10;
	}
	return k < 8 && ended ? n : LINE_GOOD;
}

/* The status line l[0..n), as request_line: "HTTP/1." and a digit, a
 * space, three digits (the first not 0), then a space, a CR or the LF. */
static size_t status_line(struct obs_h1_dir *d, const uint8_t *l, size_t n,
			  bool ended)
{
	size_t i;

	d->head.status = 0;
	d->head.flags &= ~OBS_H1F_HTTP10;
	for (i = 0; i < 12 && i < n; i++) {
		uint8_t c = l[i];
		if (!status_byte(c, i))
			return i;
		if (i == 7 && c == '0')
			d->head.flags |= OBS_H1F_HTTP10;
		if (i >= 9)
			d->head.status =
				(uint16_t)(d->head.status * 10 + (c - '0'));
	}
	if (i < 12)
		return ended ? n : LINE_GOOD;
	if (n > 12 && l[12] != ' ' && l[12] != '\r')
		return 12;
	return LINE_GOOD;
}

/* p[0..n) added to the line kept; what does not fit is dropped. */
static void keep(struct obs_h1_dir *d, const uint8_t *p, size_t n)
{
	size_t room = sizeof(d->line) - d->line_n;

	if (n > room) {
		n = room;
		d->line_cut = true;
	}
	memcpy(d->line + d->line_n, p, n);
	d->line_n = (uint16_t)(d->line_n + n);
}

/* The first byte of a header line that is not a CR, from the line kept
 * and then p[0..n); -1 when none has come yet. */
static int line_first(const struct obs_h1_dir *d, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < d->line_n; i++)
		if (d->line[i] != '\r')
			return d->line[i];
	for (size_t i = 0; i < n; i++)
		if (p[i] != '\r')
			return p[i];
	return -1;
}

/* A line of a head (state ST_REQUEST_LINE, ST_STATUS_LINE or ST_LINE)
 * from p[0..left): read when its LF is among these bytes, kept until then
 * else. Returns the bytes taken. */
static size_t head_line(struct obs_h1 *h, enum obs_dir dir, const uint8_t *p,
			size_t left)
{
	struct obs_h1_dir *d = &h->dir[dir];
	const uint8_t *lf = memchr(p, '\n', left);
	size_t take = lf ? (size_t)(lf + 1 - p) : left;
	const uint8_t *l = p;
	size_t n = lf ? (size_t)(lf - p) : left, bad = LINE_GOOD;
	int first;

	if (d->line_n == 0 && !d->line_cut)
		d->line_at = d->pos;
	d->pos += take;
	if (d->state == ST_LINE && !lf &&
	    (first = line_first(d, p, left)) >= 0 && !may_be_read[first]) {
		d->line_n = 0; /* a fold, or a header not read */
		d->line_cut = false;
		d->state = ST_SKIP;
		return take;
	}
	if (d->line_n || d->line_cut || !lf) {
		bool grew = !d->line_cut;

		keep(d, p, n);
		if (!lf && (d->state == ST_LINE || !grew))
			return take; /* nothing to check before the LF */
		l = d->line;
		n = d->line_n;
	}
	if (d->state == ST_REQUEST_LINE)
		bad = request_line(d, l, n, lf && !d->line_cut);
	else if (d->state == ST_STATUS_LINE)
		bad = status_line(d, l, n, lf && !d->line_cut);
	if (bad != LINE_GOOD) {
		uint64_t end = d->pos + (left - take); /* the rest: lost */

		lose_at(h, dir, OBS_H1_NOT_HTTP, d->line_at + bad + 1);
		d->pos = end;
		return left;
	}
	if (!lf)
		return take;
	if (d->state == ST_LINE && !header_line(d, l, n, d->line_cut)) {
		d->line_n = 0; /* the empty line: the head is complete */
		if (dir == OBS_TX)
			request_done(h);
		else
			response_done(h);
		return take;
	}
	d->line_n = 0;
	d->line_cut = false;
	if (d->state != ST_LOST)
		d->state = ST_LINE;
	return take;
}

/* The header lines of a head whose LF is among p[0..left), read where
 * they lie, one after another until the head is complete; then what is
 * left of a line, through head_line. A line begun in an earlier call
 * goes to head_line first. Returns the bytes taken. */
static size_t header_lines(struct obs_h1 *h, enum obs_dir dir, const uint8_t *p,
			   size_t left)
{
	struct obs_h1_dir *d = &h->dir[dir];
	size_t used = 0;

	if (d->line_n || d->line_cut)
		return head_line(h, dir, p, left);
	while (used < left) {
		const uint8_t *l = p + used;
		const uint8_t *lf = memchr(l, '\n', left - used);

		if (lf == NULL)
			break;
		if (!header_line(d, l, (size_t)(lf - l), false)) {
			used += (size_t)(lf + 1 - l);
			d->pos += used; /* the empty line: complete */
			if (dir == OBS_TX)
				request_done(h);
			else
				response_done(h);
			return used;
		}
		used += (size_t)(lf + 1 - l);
	}
	d->pos += used;
	return used < left ? used + head_line(h, dir, p + used, left - used)
			   : used;
}

/* A chunk's size line has ended: its data, or the trailers after the
 * last chunk. */
static void chunk_line_done(struct obs_h1_dir *d)
{
	if (d->num == 0) {
		d->state = ST_TRAILER;
	} else {
		d->left = d->num;
		d->state = ST_CHUNK_DATA;
	}
}

/* One byte of a state read a byte at a time (a chunk's size, the CRLF
 * after its data, the start of a trailer line), pos already past it. */
static void step(struct obs_h1 *h, enum obs_dir dir, uint8_t c)
{
	struct obs_h1_dir *d = &h->dir[dir];

	switch (d->state) {
	case ST_CHUNK_SIZE: {
		int v = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (v >= 0) {
			if (d->num >> 59) {
				lose(h, dir, OBS_H1_BAD_CHUNK);
				return;
			}
			d->num = d->num * 16 + (uint64_t)v;
			d->tlen = 1;
			return;
		}
		if (d->tlen == 0 || (c != ';' && c != ' ' && c != '\t' &&
				     c != '\r' && c != '\n')) {
			lose(h, dir, OBS_H1_BAD_CHUNK);
			return;
		}
		if (c == '\n')
			chunk_line_done(d);
		else
			d->state = ST_CHUNK_EXT;
		return;
	}
	case ST_CHUNK_CRLF:
		if (c == '\n') {
			d->num = 0;
			d->tlen = 0;
			d->state = ST_CHUNK_SIZE;
		} else if (c != '\r') {
			lose(h, dir, OBS_H1_BAD_CHUNK);
		}
		return;
	case ST_TRAILER:
		if (c == '\n')
			message_end(h, dir);
		else if (c != '\r')
			d->state = ST_TRAILER_SKIP;
		return;
	default:
		return;
	}
}

/* k bytes of a body of known length or of a chunk's data (k <= left). */
static void body_bytes(struct obs_h1 *h, enum obs_dir dir, size_t k)
{
	struct obs_h1_dir *d = &h->dir[dir];

	d->pos += k;
	d->left -= k;
	if (d->left == 0) {
		if (d->state == ST_BODY)
			message_end(h, dir);
		else
			d->state = ST_CHUNK_CRLF;
	}
}

void obs_h1_init(struct obs_h1 *h, obs_h1_emit *emit_fn, void *ctx)
{
	memset(h, 0, sizeof(*h));
	h->emit = emit_fn;
	h->ctx = ctx;
}

void obs_h1_feed(struct obs_h1 *h, enum obs_dir dir, const uint8_t *p, size_t n)
{
	struct obs_h1_dir *d = &h->dir[dir];
	const uint8_t *end = p + n;

	while (p < end) {
		size_t left = (size_t)(end - p), k;

		switch (d->state) {
		case ST_START:
			if (*p == '\r' || *p == '\n') {
				p++;
				d->pos++;
				continue;
			}
			message_begin(d);
			d->state = dir == OBS_RX ? ST_STATUS_LINE
						 : ST_REQUEST_LINE;
			continue;
		case ST_REQUEST_LINE:
		case ST_STATUS_LINE:
			p += head_line(h, dir, p, left);
			continue;
		case ST_LINE:
			p += header_lines(h, dir, p, left);
			continue;
		case ST_BODY:
		case ST_CHUNK_DATA:
			k = d->left < left ? (size_t)d->left : left;
			p += k;
			body_bytes(h, dir, k);
			continue;
		case ST_SKIP:
		case ST_CHUNK_EXT:
		case ST_TRAILER_SKIP: {
			const uint8_t *lf = memchr(p, '\n', left);
			uint8_t state = d->state;

			if (lf == NULL) {
				d->pos += left;
				return;
			}
			d->pos += (uint64_t)(lf + 1 - p);
			p = lf + 1;
			if (state == ST_CHUNK_EXT)
				chunk_line_done(d);
			else
				d->state = state == ST_TRAILER_SKIP ? ST_TRAILER
								    : ST_LINE;
			continue;
		}
		case ST_AWAIT:
			/* bytes before the answer: a request's (its method's
			 * first letter) are HTTP/1 again; a CONNECT's others
			 * are the tunnel's, sent before its 2xx */
			if (!(*p >= 'A' && *p <= 'Z') && h->q_len &&
			    h->queue[(h->q_first + h->q_len - 1) % OBS_H1_QUEUE]
					    .sw == OBS_H1_SW_TUNNEL)
				switch_dir(h, dir, OBS_H1_SW_TUNNEL);
			else
				d->state = ST_START;
			continue;
		case ST_CLOSE_BODY:
		case ST_SWITCHED:
		case ST_LOST:
		case ST_DONE:
			d->pos += left;
			return;
		default: /* the states read a byte at a time */
			d->pos++;
			step(h, dir, *p++);
			continue;
		}
	}
}

void obs_h1_eof(struct obs_h1 *h, enum obs_dir dir)
{
	struct obs_h1_dir *d = &h->dir[dir];

	switch (d->state) {
	case ST_CLOSE_BODY:
		emit(h, dir, OBS_H1_END, 0);
		break;
	case ST_START:
	case ST_AWAIT:
	case ST_SWITCHED:
	case ST_LOST:
	case ST_DONE:
		break;
	case ST_LINE: /* a header line begun: read as far as it came */
		if (d->line_n)
			header_line(d, d->line, d->line_n, true);
		d->head.flags |= OBS_H1F_CUT_SHORT;
		emit(h, dir, OBS_H1_END, 0);
		break;
	default: /* in a head or a body: the message is cut short */
		d->head.flags |= OBS_H1F_CUT_SHORT;
		emit(h, dir, OBS_H1_END, 0);
	}
	if (d->state != ST_SWITCHED && d->state != ST_LOST)
		d->state = ST_DONE;
}

size_t obs_h1_unread(const struct obs_h1 *h, enum obs_dir dir)
{
	const struct obs_h1_dir *d = &h->dir[dir];

	switch (d->state) {
	case ST_BODY:
	case ST_CHUNK_DATA:
		return d->left < SIZE_MAX ? (size_t)d->left : SIZE_MAX;
	case ST_CLOSE_BODY:
	case ST_SWITCHED:
	case ST_LOST:
	case ST_DONE:
		return SIZE_MAX;
	default:
		return 0;
	}
}

void obs_h1_pass(struct obs_h1 *h, enum obs_dir dir, size_t n)
{
	struct obs_h1_dir *d = &h->dir[dir];

	while (n) {
		size_t k = obs_h1_unread(h, dir);

		if (k == 0) { /* bytes it reads, not seen */
			lose(h, dir, OBS_H1_UNSEEN);
			k = n;
		}
		k = k < n ? k : n;
		if (d->state == ST_BODY || d->state == ST_CHUNK_DATA)
			body_bytes(h, dir, k);
		else
			d->pos += k;
		n -= k;
	}
}

bool obs_h1_following(const struct obs_h1 *h, enum obs_dir dir)
{
	uint8_t s = h->dir[dir].state;

	return s != ST_SWITCHED && s != ST_LOST && s != ST_DONE;
}

bool obs_h1_at_boundary(const struct obs_h1 *h, enum obs_dir dir)
{
	uint8_t s = h->dir[dir].state;

	return s == ST_START || s == ST_AWAIT;
}
