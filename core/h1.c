/* h1.c - HTTP/1.1 message framing over both directions of a connection
 * (RFC 9112). See h1.h for what it reports and what it keeps.
 *
 * Each direction is one state machine over bytes. The bytes of a head that
 * the framer reads go through step(), a byte at a time, except runs: a
 * method, a request target, a field name and a read header's value are
 * each taken in one loop (runs of one state, no dispatch per byte). The
 * lines the framer does not need (the reason phrase, a header whose
 * name's first letter begins none of the six below, any other header's
 * value, chunk extensions, trailers) are skipped to their LF with memchr;
 * a body is skipped by its length. The message's length follows RFC 9112
 * section 6.3, in its order:
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
 * Upgrade and Expect.
 */
#include "h1.h"

#include <string.h>

enum h1_state {
	ST_START,	 /* before a message: empty lines skipped */
	ST_METHOD,	 /* request line: the method */
	ST_TARGET,	 /* ... the request target */
	ST_REQ_VERSION,	 /* ... "HTTP/1.x", to the LF */
	ST_RESP_VERSION, /* status line: "HTTP/1.x " */
	ST_STATUS,	 /* ... three digits */
	ST_REASON,	 /* ... to the LF */
	ST_LINE,	 /* a header line, or the empty line, begins */
	ST_NAME,	 /* a field name */
	ST_VALUE,	 /* the value of a header the framer reads */
	ST_SKIP,	 /* the rest of a line not needed */
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

/* The headers the framer reads (obs_h1_dir.field). */
enum h1_field {
	F_NONE,
	F_HOST,
	F_CONTENT_LENGTH,
	F_TRANSFER_ENCODING,
	F_CONNECTION,
	F_UPGRADE,
	F_EXPECT,
};

/* Where the request target's reading stands (obs_h1_dir.target). Reused
 * for a token list's value: T_START reading a token, T_REST skipping to
 * the next comma. */
enum h1_target {
	T_START,  /* its first byte */
	T_PATH,	  /* the path: copied */
	T_REST,	  /* query, fragment, ;parameters: skipped */
	T_SCHEME, /* absolute form: the scheme, to "://" */
	T_SLASHES,
	T_AUTH, /* the authority: copied as the host, userinfo dropped */
};

/* Whether a header line that begins with c may be one the framer reads:
 * the six names begin with h, e, u, c or t. */
static bool may_be_read(uint8_t c)
{
	switch (c | 0x20) {
	case 'h':
	case 'e':
	case 'u':
	case 'c':
	case 't':
		return true;
	default:
		return false;
	}
}

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

/* Whether the n bytes at a are the lower-case word w (n bytes), ignoring
 * the case of a's letters. */
static inline bool same_word(const char *a, const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fold[(uint8_t)a[i]] != (uint8_t)w[i])
			return false;
	return true;
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

/* Whether the token read is word (lower case); inlined, so that the
 * word's length is known where it is written. */
static inline __attribute__((always_inline)) bool
tok_is(const struct obs_h1_dir *d, const char *word)
{
	size_t n = strlen(word);

	return !d->tok_long && d->tlen == n && same_word(d->tok, word, n);
}

static void tok_add(struct obs_h1_dir *d, uint8_t c)
{
	if (d->tlen < sizeof(d->tok))
		d->tok[d->tlen++] = (char)c;
	else
		d->tok_long = true;
}

/* tok_add for each of p[0..n). */
static void tok_append(struct obs_h1_dir *d, const uint8_t *p, size_t n)
{
	size_t room = sizeof(d->tok) - d->tlen;

	if (n > room) {
		n = room;
		d->tok_long = true;
	}
	memcpy(d->tok + d->tlen, p, n);
	d->tlen = (uint8_t)(d->tlen + n);
}

static void tok_clear(struct obs_h1_dir *d)
{
	d->tlen = 0;
	d->tok_long = false;
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
	d->target = T_START;
	d->cl = d->num = 0;
	tok_clear(d);
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
		tok_clear(d);
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

/* The end of a token of a list-valued header (tok). */
static void token_done(struct obs_h1_dir *d)
{
	if (d->tlen == 0 && !d->tok_long)
		return;
	switch (d->field) {
	case F_TRANSFER_ENCODING:
		d->te = true;
		d->chunked = tok_is(d, "chunked");
		break;
	case F_CONNECTION:
		if (tok_is(d, "close"))
			d->head.flags |= OBS_H1F_CLOSE;
		else if (tok_is(d, "keep-alive"))
			d->keep_alive = true;
		else if (tok_is(d, "upgrade"))
			d->conn_upgrade = true;
		break;
	case F_UPGRADE:
		if (d->upgrade == OBS_H1_SW_NONE)
			d->upgrade = tok_is(d, "websocket")
					     ? OBS_H1_SW_WEBSOCKET
				     : tok_is(d, "h2c") ? OBS_H1_SW_H2C
							: OBS_H1_SW_OTHER;
		break;
	case F_EXPECT:
		if (tok_is(d, "100-continue"))
			d->head.flags |= OBS_H1F_EXPECT;
		break;
	}
	tok_clear(d);
}

/* Content-Length: one number, or a list of the same number. */
static void length_done(struct obs_h1_dir *d)
{
	if (d->tlen == 0)
		return;
	if (d->cl_seen && d->cl != d->num)
		d->cl_bad = true;
	d->cl = d->num;
	d->cl_seen = true;
	d->num = 0;
	d->tlen = 0;
}

/* One byte of a header value the framer reads; LF ends it. */
static void value_byte(struct obs_h1_dir *d, uint8_t c)
{
	bool ows = c == ' ' || c == '\t' || c == '\r';

	switch (d->field) {
	case F_HOST:
		if (c == '\n') {
			d->state = ST_LINE;
		} else if (c ==
			   '@') { /* userinfo has no place here: not kept */
			memset(d->head.host, 0, sizeof(d->head.host));
			d->hlen = 0;
			d->head.flags &= ~OBS_H1F_HOST_CUT;
		} else if (!ows && !(d->head.flags & OBS_H1F_HOST_CUT)) {
			if (d->hlen < OBS_H1_HOST_MAX)
				d->head.host[d->hlen++] = (char)c;
			else
				d->head.flags |= OBS_H1F_HOST_CUT;
		}
		return;
	case F_CONTENT_LENGTH:
		if (c >= '0' && c <= '9') {
			if (d->num > (UINT64_MAX - 9) / 10)
				d->cl_bad = true;
			d->num = d->num * 10 + (uint64_t)(c - '0');
			d->tlen = 1;
		} else if (c == ',' || c == '\n') {
			length_done(d);
			if (c == '\n')
				d->state = ST_LINE;
		} else if (!ows) {
			d->cl_bad = true;
		}
		return;
	default: /* a list of tokens, each perhaps with ;parameters */
		if (c == '\n' || c == ',') {
			if (d->target == T_START)
				token_done(d);
			tok_clear(d);
			d->target = T_START;
			if (c == '\n')
				d->state = ST_LINE;
		} else if (d->target == T_REST) {
			return;
		} else if (ows || c == ';' || c == '/') {
			token_done(d);
			if (c != ' ' && c != '\t' && c != '\r')
				d->target = T_REST;
		} else {
			tok_add(d, c);
		}
	}
}

/* The bytes that end a token of a list-valued header (value_byte). */
static const bool token_end[256] = {
	[','] = 1, [' '] = 1, ['\t'] = 1, ['\r'] = 1,
	[';'] = 1, ['/'] = 1, ['\n'] = 1,
};

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

/* The bytes that interrupt a Host value's run: OWS, and '@' (userinfo). */
static const bool host_end[256] = {
	[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['@'] = 1, ['\n'] = 1,
};

/* value_byte for each of p[0..n), none of them LF: a Host's and a token's
 * bytes by runs, a number's byte by byte. */
static void value_run(struct obs_h1_dir *d, const uint8_t *p, size_t n)
{
	const bool *end = d->field == F_HOST ? host_end : token_end;
	size_t i = 0;

	if (d->field == F_CONTENT_LENGTH) {
		for (; i < n; i++)
			value_byte(d, p[i]);
		return;
	}
	while (i < n) {
		size_t j = i;

		while (j < n && d->target != T_REST && !end[p[j]])
			j++;
		if (d->field == F_HOST)
			host_append(d, p + i, j - i);
		else
			tok_append(d, p + i, j - i);
		if (j < n)
			value_byte(d, p[j++]);
		i = j;
	}
}

/* A field name has ended with its colon: field is the header's (F_NONE
 * for one not read). */
static void name_done(struct obs_h1_dir *d, uint8_t field)
{
	d->field = field;
	/* the first Host only; the target's authority comes first */
	if (d->field == F_HOST && d->hlen)
		d->field = F_NONE;
	tok_clear(d);
	d->num = 0;
	d->target = T_START;
	d->state = d->field == F_NONE ? ST_SKIP : ST_VALUE;
}

static void method_add(struct obs_h1_dir *d, uint8_t c)
{
	if (d->tlen++ < OBS_H1_METHOD_MAX)
		d->head.method[d->tlen - 1] = (char)c;
}

static void path_add(struct obs_h1_dir *d, uint8_t c)
{
	if (d->plen < OBS_H1_PATH_MAX)
		d->head.path[d->plen++] = (char)c;
	else
		d->head.flags |= OBS_H1F_PATH_CUT;
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

static void host_add(struct obs_h1_dir *d, uint8_t c)
{
	if (d->hlen < OBS_H1_HOST_MAX)
		d->head.host[d->hlen++] = (char)c;
	else
		d->head.flags |= OBS_H1F_HOST_CUT;
}

/* One byte of the request target: the path is kept to its first '?',
 * '#' or ';'; an absolute form's authority is the host, without any
 * userinfo; CONNECT's target is all authority. */
static void target_byte(struct obs_h1_dir *d, uint8_t c)
{
	switch (d->target) {
	case T_START:
		if (c == '/' || c == '*') {
			d->target = T_PATH;
			path_add(d, c);
		} else if (strncmp(d->head.method, "CONNECT",
				   OBS_H1_METHOD_MAX) == 0) {
			d->target = T_AUTH;
			host_add(d, c);
		} else {
			d->target = T_SCHEME;
		}
		return;
	case T_PATH:
		if (c == '?' || c == '#' || c == ';')
			d->target = T_REST;
		else
			path_add(d, c);
		return;
	case T_SCHEME:
		if (c == ':')
			d->target = T_SLASHES;
		return;
	case T_SLASHES:
		if (c != '/') {
			d->target = T_AUTH;
			target_byte(d, c);
		}
		return;
	case T_AUTH:
		if (c == '@') { /* what came before was userinfo */
			memset(d->head.host, 0, sizeof(d->head.host));
			d->hlen = 0;
			d->head.flags &= ~OBS_H1F_HOST_CUT;
		} else if (c == '/') {
			d->target = T_PATH;
			path_add(d, c);
		} else if (c == '?' || c == '#') {
			d->target = T_REST;
		} else {
			host_add(d, c);
		}
		return;
	default: /* T_REST */
		return;
	}
}

/* The bytes that end a request target. */
static const bool target_end[256] = { [' '] = 1, ['\r'] = 1, ['\n'] = 1 };

/* The bytes that end the path within a target, or the target. */
static const bool path_end[256] = {
	[' '] = 1, ['\r'] = 1, ['\n'] = 1, ['?'] = 1, ['#'] = 1, [';'] = 1,
};

/* target_byte for the bytes of p[0..n) up to the target's end (a space,
 * CR or LF): the path's bytes copied at once, the query's skipped.
 * Returns the bytes taken. */
static size_t target_run(struct obs_h1_dir *d, const uint8_t *p, size_t n)
{
	size_t k = 0;

	while (k < n && !target_end[p[k]]) {
		size_t j = k;

		if (d->target == T_PATH) {
			while (j < n && !path_end[p[j]])
				j++;
			path_append(d, p + k, j - k);
		} else if (d->target == T_REST) {
			while (j < n && !target_end[p[j]])
				j++;
		}
		if (j == k)
			target_byte(d, p[j++]);
		k = j;
	}
	return k;
}

/* "HTTP/1." and a digit, at index i of the version being read. */
static inline bool version_byte(struct obs_h1_dir *d, uint8_t c, unsigned int i)
{
	static const char v[] = "HTTP/1.";

	if (i < 7)
		return c == (uint8_t)v[i];
	if (i == 7) {
		if (c == '0')
			d->head.flags |= OBS_H1F_HTTP10;
		return c >= '0' && c <= '9';
	}
	return true;
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

/* A header line that begins at p, when its LF is among the left bytes:
 * taken at once, through the steps a byte at a time would take (skipped
 * when it is a fold or a header not read; else the name, a colon or not,
 * the value, the LF). Returns the bytes taken (the LF's included), 0 when
 * it is not such a line (the empty line, one cut by the call's end). */
static size_t whole_line(struct obs_h1_dir *d, const uint8_t *p, size_t left)
{
	const uint8_t *lf, *colon;

	if (p[0] == '\r' || p[0] == '\n' ||
	    (lf = memchr(p, '\n', left)) == NULL)
		return 0;
	if (!may_be_read(p[0])) /* a fold (SP, HT), or a header not read */
		return (size_t)(lf + 1 - p);
	colon = memchr(p, ':', (size_t)(lf - p));
	if (colon == NULL) /* a line without a colon: ignored */
		return (size_t)(lf + 1 - p);
	name_done(d, field_of((const char *)p, (size_t)(colon - p)));
	if (d->state == ST_VALUE) {
		value_run(d, colon + 1, (size_t)(lf - colon - 1));
		value_byte(d, '\n');
	}
	d->state = ST_LINE;
	return (size_t)(lf + 1 - p);
}

/* One byte of a state read a byte at a time (the start of a header line, a
 * chunk's size, the CRLF after its data, the start of a trailer line), pos
 * already past it. */
static void step(struct obs_h1 *h, enum obs_dir dir, uint8_t c)
{
	struct obs_h1_dir *d = &h->dir[dir];

	switch (d->state) {
	case ST_LINE:
		if (c == '\r')
			return;
		if (c == '\n') { /* the empty line: the head is complete */
			if (dir == OBS_TX)
				request_done(h);
			else
				response_done(h);
			return;
		}
		if (c == ' ' || c == '\t' || !may_be_read(c)) {
			d->state = ST_SKIP; /* obs-fold, or a header not read */
			return;
		}
		tok_clear(d);
		d->state = ST_NAME;
		tok_add(d, c);
		return;
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
			tok_clear(d);
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

/* The byte that ended a run of the state (the run's own bytes taken), pos
 * already past it. */
static void run_end(struct obs_h1 *h, enum obs_dir dir, uint8_t c)
{
	struct obs_h1_dir *d = &h->dir[dir];

	switch (d->state) {
	case ST_METHOD:
		if (c == ' ' && d->tlen) {
			tok_clear(d);
			d->state = ST_TARGET;
		} else {
			lose(h, dir, OBS_H1_NOT_HTTP);
		}
		return;
	case ST_TARGET:
		if (c == ' ') {
			d->state = ST_REQ_VERSION;
			tok_clear(d);
		} else {
			lose(h, dir, OBS_H1_NOT_HTTP);
		}
		return;
	case ST_REQ_VERSION:
		if (c == '\n') {
			if (d->tlen < 8)
				lose(h, dir, OBS_H1_NOT_HTTP);
			else
				d->state = ST_LINE;
		} else if (c != '\r' && !version_byte(d, c, d->tlen++)) {
			lose(h, dir, OBS_H1_NOT_HTTP);
		}
		return;
	case ST_RESP_VERSION:
		if (d->tlen == 8 && c == ' ') {
			d->tlen = 0;
			d->state = ST_STATUS;
		} else {
			lose(h, dir, OBS_H1_NOT_HTTP);
		}
		return;
	case ST_STATUS: /* after its digits */
		if (d->tlen < 3)
			lose(h, dir, OBS_H1_NOT_HTTP); /* not a digit */
		else if (c == '\n')
			d->state = ST_LINE;
		else if (c == ' ' || c == '\r')
			d->state = ST_REASON;
		else
			lose(h, dir, OBS_H1_NOT_HTTP);
		return;
	case ST_NAME:
		if (c == ':')
			name_done(d, d->tok_long ? F_NONE
						 : field_of(d->tok, d->tlen));
		else /* a line without a colon: ignored */
			d->state = ST_LINE;
		return;
	default: /* ST_VALUE: its LF */
		value_byte(d, c);
		return;
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
		size_t left = (size_t)(end - p);
		size_t k = 0;

		switch (d->state) {
		case ST_START:
			if (*p == '\r' || *p == '\n') {
				p++;
				d->pos++;
				continue;
			}
			message_begin(d);
			d->state = dir == OBS_RX ? ST_RESP_VERSION : ST_METHOD;
			continue;
		/* runs: the bytes of one state in one loop, then the byte
		 * that ends the run (if here) through run_end() */
		case ST_METHOD:
			while (k < left && tchar[p[k]] && d->tlen < 20)
				method_add(d, p[k++]);
			break;
		case ST_TARGET:
			k = target_run(d, p, left);
			break;
		case ST_REQ_VERSION:
			while (k < left && d->tlen < 8 && p[k] != '\r' &&
			       p[k] != '\n' && version_byte(d, p[k], d->tlen)) {
				d->tlen++;
				k++;
			}
			break;
		case ST_RESP_VERSION:
			while (k < left && d->tlen < 8 &&
			       version_byte(d, p[k], d->tlen)) {
				d->tlen++;
				k++;
			}
			break;
		case ST_STATUS: /* three digits, the first not 0 */
			while (k < left && d->tlen < 3 && p[k] >= '0' &&
			       p[k] <= '9' && (d->tlen || p[k] != '0')) {
				d->head.status =
					(uint16_t)(d->head.status * 10 +
						   (p[k++] - '0'));
				d->tlen++;
			}
			break;
		case ST_LINE: /* a header line, when all of it is here */
			k = whole_line(d, p, left);
			if (k == 0) { /* else a byte at a time, as below */
				d->pos++;
				step(h, dir, *p++);
				continue;
			}
			d->pos += k;
			p += k;
			continue;
		case ST_NAME:
			while (k < left && p[k] != ':' && p[k] != '\n')
				k++;
			tok_append(d, p, k);
			break;
		case ST_VALUE: {
			const uint8_t *lf = memchr(p, '\n', left);

			k = lf ? (size_t)(lf - p) : left;
			value_run(d, p, k);
			break;
		}
		case ST_BODY:
		case ST_CHUNK_DATA:
			k = d->left < left ? (size_t)d->left : left;
			p += k;
			d->pos += k;
			d->left -= k;
			if (d->left == 0) {
				if (d->state == ST_BODY)
					message_end(h, dir);
				else
					d->state = ST_CHUNK_CRLF;
			}
			continue;
		case ST_REASON:
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
		/* the end of a run */
		d->pos += k;
		p += k;
		if (p < end) {
			d->pos++;
			run_end(h, dir, *p++);
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
	default: /* in a head or a body: the message is cut short */
		d->head.flags |= OBS_H1F_CUT_SHORT;
		emit(h, dir, OBS_H1_END, 0);
	}
	if (d->state != ST_SWITCHED && d->state != ST_LOST)
		d->state = ST_DONE;
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
