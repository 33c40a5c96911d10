/* h2.c - the HTTP/2 frame follower (see h2.h for the design). */
#include "h2.h"

#include <string.h>

/* ---- the arena the inflaters allocate from ---- */

/* A block: this header, then its bytes. Sizes in 16-byte units, the header
 * included. */
struct obs_h2_blk {
	struct obs_h2_blk *next; /* free blocks only */
	size_t units;
};

#define UNIT sizeof(struct obs_h2_blk)

_Static_assert(sizeof(nghttp2_mem) ==
		       sizeof(((struct obs_h2_arena *)0)->allocator),
	       "room for an nghttp2_mem");
_Static_assert(UNIT == 16 && OBS_H2_ARENA % UNIT == 0, "16-byte units");

static void arena_init(struct obs_h2_arena *a)
{
	a->free = (struct obs_h2_blk *)a->mem;
	a->free->next = NULL;
	a->free->units = OBS_H2_ARENA / UNIT;
	a->touched = UNIT;
}

static void *arena_malloc(size_t size, void *ud)
{
	struct obs_h2_arena *a = ud;
	struct obs_h2_blk **link, *b;
	size_t units;

	if (size > OBS_H2_ARENA)
		return NULL;
	units = (size + UNIT - 1) / UNIT + 1;
	for (link = &a->free; (b = *link); link = &b->next) {
		size_t end;

		if (b->units < units)
			continue;
		if (b->units - units < 2) { /* too small a rest to keep */
			*link = b->next;
		} else { /* the front is handed out, the rest stays free */
			struct obs_h2_blk *rest = b + units;

			rest->next = b->next;
			rest->units = b->units - units;
			b->units = units;
			*link = rest;
		}
		end = (size_t)((unsigned char *)(b + b->units) - a->mem);
		if (end > a->touched)
			a->touched = end;
		return b + 1;
	}
	return NULL;
}

static void arena_free(void *ptr, void *ud)
{
	struct obs_h2_arena *a = ud;
	struct obs_h2_blk *b, *prev = NULL, *next;

	if (!ptr)
		return;
	b = (struct obs_h2_blk *)ptr - 1;
	for (next = a->free; next && next < b; next = next->next)
		prev = next;
	if (next && b + b->units == next) { /* merge with the next */
		b->units += next->units;
		b->next = next->next;
	} else {
		b->next = next;
	}
	if (prev && prev + prev->units == b) { /* merge into the previous */
		prev->units += b->units;
		prev->next = b->next;
	} else if (prev) {
		prev->next = b;
	} else {
		a->free = b;
	}
}

static void *arena_calloc(size_t nmemb, size_t size, void *ud)
{
	void *p;

	if (size && nmemb > OBS_H2_ARENA / size)
		return NULL;
	p = arena_malloc(nmemb * size, ud);
	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

static void *arena_realloc(void *ptr, size_t size, void *ud)
{
	struct obs_h2_blk *b;
	size_t have;
	void *p;

	if (!ptr)
		return arena_malloc(size, ud);
	if (size == 0) {
		arena_free(ptr, ud);
		return NULL;
	}
	b = (struct obs_h2_blk *)ptr - 1;
	have = (b->units - 1) * UNIT;
	if (size <= have)
		return ptr;
	p = arena_malloc(size, ud);
	if (p) {
		memcpy(p, ptr, have);
		arena_free(ptr, ud);
	}
	return p;
}

/* Wipe what the arena ever held (header values) and make it empty. */
static void arena_wipe(struct obs_h2_arena *a)
{
	memset(a->mem, 0, a->touched);
	arena_init(a);
}

/* ---- events ---- */

enum { PH_PREFACE = 1, PH_UPGRADE, PH_FRAMES };
enum { HP_NONE, HP_READY, HP_LOST };
enum { BLK_OTHER, BLK_REQUEST, BLK_RESPONSE, BLK_PUSH };

enum {
	T_DATA = 0,
	T_HEADERS = 1,
	T_PRIORITY = 2,
	T_RST_STREAM = 3,
	T_SETTINGS = 4,
	T_PUSH_PROMISE = 5,
	T_PING = 6,
	T_GOAWAY = 7,
	T_WINDOW_UPDATE = 8,
	T_CONTINUATION = 9,
};

#define F_END_STREAM 0x01u
#define F_ACK 0x01u
#define F_END_HEADERS 0x04u
#define F_PADDED 0x08u
#define F_PRIORITY 0x20u

#define FRAME_HEADER 9u
#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define PREFACE_LEN 24u
#define UPGRADE "HTTP/1.1 101"
#define UPGRADE_LEN 12u
#define UPGRADE_MAX 16384u /* the 101's header, at most */

/* Stream flags. */
#define S_TX_END 0x1u
#define S_RX_END 0x2u
#define S_RX_FIRST 0x4u
#define S_STATUS 0x8u

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void flush_bytes(struct obs_h2 *h)
{
	struct obs_h2_ev ev = { .kind = OBS_H2_EV_BYTES };

	if (!h->pend_bytes)
		return;
	ev.dir = h->pend_dir;
	ev.stream = h->pend_sid;
	ev.bytes = h->pend_bytes;
	h->pend_bytes = 0;
	h->fn(h->ctx, &ev);
}

static struct obs_h2_stream *stream_find(struct obs_h2 *h, uint32_t id);

/* n bytes of direction dir count for stream sid (0: the connection). */
static void count(struct obs_h2 *h, int dir, uint32_t sid, size_t n)
{
	struct obs_h2_stream *s;

	if (n == 0)
		return;
	if (h->pend_bytes && (h->pend_sid != sid || h->pend_dir != dir))
		flush_bytes(h);
	h->pend_dir = (uint8_t)dir;
	h->pend_sid = sid;
	h->pend_bytes += n;
	s = stream_find(h, sid);
	if (s) {
		s->total[dir] += n;
		if (s->last_call[dir] != h->call) {
			s->last_call[dir] = h->call;
			s->calls[dir]++;
		}
	}
}

static void emit(struct obs_h2 *h, uint8_t kind, int dir, uint32_t sid,
		 uint32_t code)
{
	struct obs_h2_ev ev = { .kind = kind, .dir = (uint8_t)dir };

	flush_bytes(h);
	ev.stream = sid;
	ev.code = code;
	ev.at = h->way[dir].at;
	h->fn(h->ctx, &ev);
}

/* ---- the streams ---- */

static struct obs_h2_stream *slot_of(struct obs_h2 *h, uint32_t id)
{
	return &h->streams[(id >> 1) & (OBS_H2_STREAMS - 1)];
}

static struct obs_h2_stream *stream_find(struct obs_h2 *h, uint32_t id)
{
	struct obs_h2_stream *s = slot_of(h, id);

	if (id == 0)
		return NULL;
	if (s->id == id)
		return s;
	if (!h->displaced)
		return NULL;
	for (unsigned int i = 0; i < OBS_H2_STREAMS; i++)
		if (h->streams[i].id == id)
			return &h->streams[i];
	return NULL;
}

static struct obs_h2_stream *stream_add(struct obs_h2 *h, uint32_t id)
{
	struct obs_h2_stream *s = slot_of(h, id);

	if (h->nstreams == OBS_H2_STREAMS)
		return NULL;
	if (s->id) {
		s = h->streams;
		while (s->id)
			s++;
		h->displaced++;
	}
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->last_call[0] = s->last_call[1] = h->call - 1;
	h->nstreams++;
	return s;
}

/* The stream is over: say so and forget it. */
static void stream_close(struct obs_h2 *h, struct obs_h2_stream *s, int dir)
{
	uint32_t id = s->id;
	struct obs_h2_ev ev = { .kind = OBS_H2_EV_CLOSE,
				.dir = (uint8_t)dir,
				.stream = id,
				.at = h->way[dir].at };

	flush_bytes(h);
	for (int d = 0; d < 2; d++) {
		ev.total[d] = s->total[d];
		ev.calls[d] = s->calls[d];
	}
	h->fn(h->ctx, &ev);
	if (s != slot_of(h, id))
		h->displaced--;
	s->id = 0;
	h->nstreams--;
	for (int d = 0; d < 2; d++)
		if (h->way[d].owner == id)
			h->way[d].owner = 0; /* the rest of its frame */
}

static void close_all(struct obs_h2 *h, int dir)
{
	for (unsigned int i = 0; i < OBS_H2_STREAMS && h->nstreams; i++)
		if (h->streams[i].id)
			stream_close(h, &h->streams[i], dir);
}

static void end_stream(struct obs_h2 *h, int dir, uint32_t sid)
{
	struct obs_h2_stream *s = stream_find(h, sid);
	uint32_t bit = dir == OBS_H2_TX ? S_TX_END : S_RX_END;

	if (!s || (s->flags & bit))
		return;
	s->flags |= bit;
	emit(h, OBS_H2_EV_END, dir, sid, 0);
	if ((s->flags & (S_TX_END | S_RX_END)) == (S_TX_END | S_RX_END))
		stream_close(h, s, dir);
}

static void reset_stream(struct obs_h2 *h, int dir, uint32_t sid, uint32_t code)
{
	struct obs_h2_stream *s = stream_find(h, sid);

	if (!s)
		return;
	emit(h, OBS_H2_EV_RESET, dir, sid, code);
	stream_close(h, s, dir);
}

/* Not HTTP/2: close everything, say it once, wipe. */
static void lose(struct obs_h2 *h, int dir, uint32_t why)
{
	if (h->lost)
		return;
	close_all(h, dir);
	emit(h, OBS_H2_EV_LOST, dir, 0, why);
	h->lost = true;
	arena_wipe(&h->arena[0]);
	arena_wipe(&h->arena[1]);
}

/* ---- HPACK ---- */

static void no_labels(struct obs_h2 *h, int dir, uint32_t why)
{
	h->way[dir].hpack = HP_LOST;
	emit(h, OBS_H2_EV_NOLABELS, dir, 0, why);
}

/* At the start of a header block: an inflater with the table size the
 * decoding side announced. Whether labels can be had. */
static bool hpack_begin(struct obs_h2 *h, int dir)
{
	struct obs_h2_way *w = &h->way[dir];

	if (w->hpack == HP_LOST)
		return false;
	if (w->hpack == HP_NONE) {
		nghttp2_mem *mem = (nghttp2_mem *)h->arena[dir].allocator;
		nghttp2_hd_inflater *inf;

		if (h->hpack == NULL) {
			no_labels(h, dir, OBS_H2_NL_NOLIB);
			return false;
		}
		mem->mem_user_data = &h->arena[dir];
		mem->malloc = arena_malloc;
		mem->free = arena_free;
		mem->calloc = arena_calloc;
		mem->realloc = arena_realloc;
		if (h->hpack->inflate_new2(&inf, mem) != 0) {
			no_labels(h, dir, OBS_H2_NL_NOMEM);
			return false;
		}
		w->inflater = inf;
		w->hpack = HP_READY;
	}
	if (w->table_want > w->table_set) {
		int rv =
			h->hpack->change_table_size(w->inflater, w->table_want);

		if (rv != 0) {
			no_labels(h, dir,
				  rv == NGHTTP2_ERR_NOMEM ? OBS_H2_NL_NOMEM
							  : OBS_H2_NL_HPACK);
			return false;
		}
		w->table_set = w->table_want;
	}
	return true;
}

/* Copy src[0..n) into a NUL-padded field; true when it had to be cut. */
static bool put_field(char *dst, size_t size, const uint8_t *src, size_t n)
{
	bool cut = n > size;

	memset(dst, 0, size);
	memcpy(dst, src, cut ? size : n);
	return cut;
}

static bool name_is(const nghttp2_nv *nv, const char *name, size_t len)
{
	return nv->namelen == len && memcmp(nv->name, name, len) == 0;
}

/* The path of a :path value v[0..n), as HTTP/1's is kept: to its first
 * '?', '#' or ';' (no query, fragment or path parameters). */
static size_t path_len(const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == '?' || v[i] == '#' || v[i] == ';')
			return i;
	return n;
}

/* Keep the field if it is one of the four; every other is passed over. */
static void take_field(struct obs_h2_way *w, int dir, const nghttp2_nv *nv)
{
	struct obs_h2_req *r = &w->req;
	const uint8_t *v = nv->value;
	size_t n = nv->valuelen;

	if (dir == OBS_H2_RX) {
		if (name_is(nv, ":status", 7) && n == 3 && v[0] >= '1' &&
		    v[0] <= '9' && v[1] >= '0' && v[1] <= '9' && v[2] >= '0' &&
		    v[2] <= '9')
			w->status =
				(uint16_t)((v[0] - '0') * 100 +
					   (v[1] - '0') * 10 + (v[2] - '0'));
		return;
	}
	if (name_is(nv, ":method", 7)) {
		put_field(r->method, sizeof(r->method), v, n);
	} else if (name_is(nv, ":path", 5)) {
		n = path_len(v, n);
		r->flags &= ~OBS_H1F_PATH_CUT;
		if (put_field(r->path, sizeof(r->path), v, n))
			r->flags |= OBS_H1F_PATH_CUT;
	} else if (name_is(nv, ":authority", 10) ||
		   (name_is(nv, "host", 4) && !w->blk_authority)) {
		size_t at = n;

		while (at > 0 && v[at - 1] != '@') /* userinfo is not kept */
			at--;
		w->blk_authority = nv->namelen == 10;
		r->flags &= ~OBS_H1F_HOST_CUT;
		if (put_field(r->host, sizeof(r->host), v + at, n - at))
			r->flags |= OBS_H1F_HOST_CUT;
	}
}

/* Inflate p[0..n) of the block in progress (final: its end). */
static void hpack_feed(struct obs_h2 *h, int dir, const uint8_t *p, size_t n,
		       bool final)
{
	static const uint8_t none;
	struct obs_h2_way *w = &h->way[dir];

	if (!p)
		p = &none;
	while (w->hpack == HP_READY) {
		nghttp2_nv nv;
		int flags = 0;
		ssize_t rv = h->hpack->inflate(w->inflater, &nv, &flags, p, n,
					       final);

		if (rv < 0) {
			no_labels(h, dir,
				  rv == NGHTTP2_ERR_NOMEM ? OBS_H2_NL_NOMEM
							  : OBS_H2_NL_HPACK);
			return;
		}
		p += rv;
		n -= (size_t)rv;
		if (flags & NGHTTP2_HD_INFLATE_EMIT)
			take_field(w, dir, &nv);
		if (flags & NGHTTP2_HD_INFLATE_FINAL) {
			h->hpack->end_headers(w->inflater);
			return;
		}
		if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && n == 0)
			return;
	}
}

/* ---- header blocks ---- */

/* A HEADERS or PUSH_PROMISE frame begins a block on stream sid. */
static void block_begin(struct obs_h2 *h, int dir, uint32_t sid)
{
	struct obs_h2_way *w = &h->way[dir];
	struct obs_h2_stream *s = stream_find(h, sid);
	uint8_t kind = BLK_OTHER;

	if (w->type == T_HEADERS && dir == OBS_H2_TX && !s && (sid & 1) &&
	    sid > h->last_sid) {
		h->last_sid = sid;
		s = stream_add(h, sid);
		if (s) {
			emit(h, OBS_H2_EV_OPEN, dir, sid, 0);
			kind = BLK_REQUEST;
		} else {
			h->untracked++;
			emit(h, OBS_H2_EV_UNTRACKED, dir, sid, 0);
		}
	} else if (w->type == T_HEADERS && dir == OBS_H2_RX && s) {
		kind = BLK_RESPONSE;
	} else if (w->type == T_PUSH_PROMISE) {
		kind = BLK_PUSH; /* the connection's, though on a stream */
	}
	w->owner = s && w->type == T_HEADERS ? sid : 0;
	w->in_block = true;
	w->blk_sid = sid;
	w->blk_kind = kind;
	w->blk_end_stream = w->type == T_HEADERS && (w->flags & F_END_STREAM);
	w->blk_authority = false;
	w->status = 0;
	memset(&w->req, 0, sizeof(w->req));
	hpack_begin(h, dir);
}

/* The frame that carried END_HEADERS is complete. */
static void block_end(struct obs_h2 *h, int dir)
{
	struct obs_h2_way *w = &h->way[dir];
	struct obs_h2_stream *s;

	hpack_feed(h, dir, NULL, 0, true);
	w->in_block = false;
	s = stream_find(h, w->blk_sid);
	if (s && w->blk_kind == BLK_REQUEST) {
		struct obs_h2_ev ev = {
			.kind = OBS_H2_EV_REQUEST,
			.dir = (uint8_t)dir,
			.stream = w->blk_sid,
			.at = w->at,
			.req = w->hpack == HP_READY ? &w->req : NULL,
		};

		if (ev.req) {
			ev.again = w->req.flags == w->last.flags &&
				   memcmp(w->req.host, w->last.host,
					  sizeof(w->req.host)) == 0 &&
				   memcmp(w->req.path, w->last.path,
					  sizeof(w->req.path)) == 0;
			w->last = w->req;
		}
		flush_bytes(h);
		h->fn(h->ctx, &ev);
	} else if (s && w->hpack == HP_READY && w->blk_kind == BLK_RESPONSE &&
		   w->status >= 200 && !(s->flags & S_STATUS)) {
		struct obs_h2_ev ev = { .kind = OBS_H2_EV_STATUS,
					.dir = (uint8_t)dir,
					.stream = w->blk_sid,
					.at = w->at,
					.status = w->status };

		s->flags |= S_STATUS;
		flush_bytes(h);
		h->fn(h->ctx, &ev);
	}
	if (w->blk_end_stream)
		end_stream(h, dir, w->blk_sid);
}

/* ---- frames ---- */

/* A SETTINGS entry sent in direction dir. */
static void setting(struct obs_h2 *h, int dir, const uint8_t *e)
{
	uint16_t id = (uint16_t)(e[0] << 8 | e[1]);
	uint32_t v = be32(e + 2);
	struct obs_h2_way *other = &h->way[!dir]; /* what the sender reads */

	if (id == NGHTTP2_SETTINGS_HEADER_TABLE_SIZE && v > other->table_want)
		other->table_want = v; /* a smaller one comes as an update */
	else if (id == NGHTTP2_SETTINGS_MAX_FRAME_SIZE &&
		 v > other->max_frame && v < (1u << 24))
		other->max_frame = v;
}

/* The frame header in w->hdr (or at hdr) is complete: check it and set up
 * its payload. */
static void frame_begin(struct obs_h2 *h, int dir, const uint8_t *hdr)
{
	struct obs_h2_way *w = &h->way[dir];
	uint32_t len = (uint32_t)hdr[0] << 16 | (uint32_t)hdr[1] << 8 | hdr[2];
	uint32_t sid = be32(hdr + 5) & 0x7fffffffu;
	uint8_t type = hdr[3], flags = hdr[4];
	bool bad = len > w->max_frame;

	if (!w->seen_frame && (type != T_SETTINGS || (flags & F_ACK))) {
		lose(h, dir, OBS_H2_LOST_SETTINGS);
		return;
	}
	if (w->in_block && (type != T_CONTINUATION || sid != w->blk_sid))
		bad = true;
	w->seen_frame = true;
	w->type = type;
	w->flags = flags;
	w->sid = sid;
	w->left = len;
	w->part_have = 0;
	w->owner = 0;
	switch (type) {
	case T_DATA:
		bad |= sid == 0;
		w->owner = stream_find(h, sid) ? sid : 0;
		break;
	case T_HEADERS:
	case T_PUSH_PROMISE:
		bad |= sid == 0 || (type == T_PUSH_PROMISE && dir != OBS_H2_RX);
		w->need_padlen = flags & F_PADDED;
		w->pre = (type == T_HEADERS && (flags & F_PRIORITY) ? 5 : 0) +
			 (type == T_PUSH_PROMISE ? 4 : 0);
		bad |= w->pre + w->need_padlen > len;
		w->frag = w->need_padlen ? 0 : len - w->pre;
		if (!bad)
			block_begin(h, dir, sid);
		break;
	case T_CONTINUATION:
		bad |= !w->in_block;
		w->need_padlen = false;
		w->pre = 0;
		w->frag = len;
		w->owner = w->blk_kind != BLK_PUSH && stream_find(h, sid) ? sid
									  : 0;
		break;
	case T_PRIORITY:
		bad |= len != 5 || sid == 0;
		break;
	case T_RST_STREAM:
		bad |= len != 4 || sid == 0;
		w->owner = stream_find(h, sid) ? sid : 0;
		break;
	case T_SETTINGS:
		bad |= sid != 0 || len % 6 != 0 || ((flags & F_ACK) && len);
		break;
	case T_PING:
		bad |= len != 8 || sid != 0;
		break;
	case T_GOAWAY:
		bad |= len < 8 || sid != 0;
		break;
	case T_WINDOW_UPDATE:
		bad |= len != 4;
		w->owner = stream_find(h, sid) ? sid : 0;
		break;
	default: /* an extension's: ignored, the connection's */
		break;
	}
	if (bad) {
		lose(h, dir, OBS_H2_LOST_FRAME);
		return;
	}
	if (dir == OBS_H2_RX && w->owner &&
	    (type == T_HEADERS || type == T_DATA || type == T_RST_STREAM)) {
		struct obs_h2_stream *s = stream_find(h, sid);

		if (!(s->flags & S_RX_FIRST)) {
			s->flags |= S_RX_FIRST;
			emit(h, OBS_H2_EV_FIRST, dir, sid, 0);
		}
	}
	count(h, dir, w->owner, FRAME_HEADER);
}

/* The current frame's payload is complete. */
static void frame_end(struct obs_h2 *h, int dir)
{
	struct obs_h2_way *w = &h->way[dir];

	w->hdr_have = 0;
	switch (w->type) {
	case T_DATA:
		if (w->flags & F_END_STREAM)
			end_stream(h, dir, w->sid);
		break;
	case T_HEADERS:
	case T_PUSH_PROMISE:
	case T_CONTINUATION:
		if (w->flags & F_END_HEADERS)
			block_end(h, dir);
		break;
	case T_RST_STREAM:
		reset_stream(h, dir, w->sid, be32(w->part));
		break;
	case T_GOAWAY: {
		uint32_t last = be32(w->part) & 0x7fffffffu;

		emit(h, OBS_H2_EV_GOAWAY, dir, last, be32(w->part + 4));
		if (dir != OBS_H2_RX)
			break;
		for (unsigned int i = 0; i < OBS_H2_STREAMS; i++)
			if (h->streams[i].id > last)
				reset_stream(h, dir, h->streams[i].id,
					     OBS_H2_REFUSED_STREAM);
		break;
	}
	default:
		break;
	}
}

/* Payload of a header-block frame: pad length, what precedes the fragment
 * (priority, promised stream), the fragment, the padding. Returns the bytes
 * used of p[0..n), n <= w->left. */
static size_t walk_block(struct obs_h2 *h, int dir, const uint8_t *p, size_t n)
{
	struct obs_h2_way *w = &h->way[dir];
	size_t used = 0, k;

	if (w->need_padlen) {
		w->need_padlen = false;
		used = 1;
		if (1u + w->pre + p[0] > w->left) {
			lose(h, dir, OBS_H2_LOST_FRAME);
			return n;
		}
		w->frag = w->left - 1 - w->pre - p[0];
	}
	k = n - used < w->pre ? n - used : w->pre;
	w->pre -= (uint32_t)k;
	used += k;
	k = n - used < w->frag ? n - used : w->frag;
	if (k) {
		if (w->hpack == HP_READY)
			hpack_feed(h, dir, p + used, k, false);
		w->frag -= (uint32_t)k;
		used += k;
	}
	if (w->pre == 0 && w->frag == 0)
		used = n; /* padding */
	return used;
}

/* Payload of SETTINGS (6-byte entries), RST_STREAM (4) and GOAWAY (its first
 * 8 bytes kept, its debug data passed over). */
static size_t walk_parts(struct obs_h2 *h, int dir, const uint8_t *p, size_t n)
{
	struct obs_h2_way *w = &h->way[dir];
	size_t want = w->type == T_SETTINGS	? 6
		      : w->type == T_RST_STREAM ? 4
						: 8;
	size_t used = 0;

	while (used < n && w->part_have < want) {
		size_t k = want - w->part_have;

		if (k > n - used)
			k = n - used;
		memcpy(w->part + w->part_have, p + used, k);
		w->part_have = (uint8_t)(w->part_have + k);
		used += k;
		if (w->type == T_SETTINGS && w->part_have == 6) {
			setting(h, dir, w->part);
			w->part_have = 0;
		}
	}
	return n; /* the rest: GOAWAY's debug data */
}

/* k more bytes of the current frame's payload (k <= w->left) have been
 * read or passed. */
static void payload_used(struct obs_h2 *h, int dir, size_t k)
{
	struct obs_h2_way *w = &h->way[dir];

	w->at += k;
	count(h, dir, w->owner, k);
	w->left -= (uint32_t)k;
	if (w->left == 0)
		frame_end(h, dir);
}

/* Whether the payload of a frame of this type is read (header blocks,
 * SETTINGS, RST_STREAM, GOAWAY: walk_frames's walk_block and walk_parts),
 * or only counted. */
static bool payload_read(uint8_t type)
{
	return type == T_HEADERS || type == T_PUSH_PROMISE ||
	       type == T_CONTINUATION || type == T_SETTINGS ||
	       type == T_RST_STREAM || type == T_GOAWAY;
}

/* Frames: returns the bytes of p[0..n) used. */
static size_t walk_frames(struct obs_h2 *h, int dir, const uint8_t *p, size_t n)
{
	struct obs_h2_way *w = &h->way[dir];
	size_t k;

	if (w->hdr_have < FRAME_HEADER) {
		if (w->hdr_have == 0 && n >= FRAME_HEADER) {
			k = FRAME_HEADER;
			w->at += k;
			frame_begin(h, dir, p);
		} else {
			k = FRAME_HEADER - w->hdr_have;
			if (k > n)
				k = n;
			memcpy(w->hdr + w->hdr_have, p, k);
			w->hdr_have = (uint8_t)(w->hdr_have + k);
			w->at += k;
			if (w->hdr_have < FRAME_HEADER)
				return k;
			frame_begin(h, dir, w->hdr);
		}
		w->hdr_have = FRAME_HEADER;
		if (w->left == 0 && !h->lost)
			frame_end(h, dir);
		return k;
	}
	if (n > w->left)
		n = w->left;
	switch (w->type) {
	case T_HEADERS:
	case T_PUSH_PROMISE:
	case T_CONTINUATION:
		k = walk_block(h, dir, p, n);
		break;
	case T_SETTINGS:
	case T_RST_STREAM:
	case T_GOAWAY:
		k = walk_parts(h, dir, p, n);
		break;
	default:
		k = n;
		break;
	}
	if (h->lost)
		return k;
	payload_used(h, dir, k);
	return k;
}

/* The client's preface. */
static size_t walk_preface(struct obs_h2 *h, const uint8_t *p, size_t n)
{
	struct obs_h2_way *w = &h->way[OBS_H2_TX];
	size_t k = PREFACE_LEN - w->pos, i = 0;

	if (k > n)
		k = n;
	while (i < k && p[i] == (uint8_t)PREFACE[w->pos + i])
		i++;
	count(h, OBS_H2_TX, 0, i); /* what matched, however it was split */
	w->pos += (uint32_t)i;
	if (i < k) {
		lose(h, OBS_H2_TX, OBS_H2_LOST_PREFACE);
		return n;
	}
	if (w->pos == PREFACE_LEN)
		w->phase = PH_FRAMES;
	return k;
}

/* The server's "HTTP/1.1 101" response up to its blank line. */
static size_t walk_upgrade(struct obs_h2 *h, const uint8_t *p, size_t n)
{
	struct obs_h2_way *w = &h->way[OBS_H2_RX];
	size_t i;

	for (i = 0; i < n && w->phase == PH_UPGRADE; i++, w->pos++) {
		uint8_t c = p[i];

		if (w->pos < UPGRADE_LEN) {
			if (c != (uint8_t)UPGRADE[w->pos])
				goto lost;
			continue;
		}
		if (w->pos >= UPGRADE_MAX)
			goto lost;
		if (c == '\r')
			w->crlf = w->crlf == 2 ? 3 : 1;
		else if (c == '\n' && (w->crlf == 1 || w->crlf == 3))
			w->crlf++;
		else
			w->crlf = 0;
		if (w->crlf == 4)
			w->phase = PH_FRAMES;
	}
	count(h, OBS_H2_RX, 0, i);
	return i;
lost:
	count(h, OBS_H2_RX, 0, i);
	lose(h, OBS_H2_RX, OBS_H2_LOST_UPGRADE);
	return n;
}

void obs_h2_feed(struct obs_h2 *h, enum obs_h2_dir dir, const uint8_t *p,
		 size_t n, obs_h2_fn *fn, void *ctx)
{
	struct obs_h2_way *w = &h->way[dir];

	h->fn = fn;
	h->ctx = ctx;
	while (n > 0 && !h->lost) {
		size_t k;

		if (w->phase == PH_FRAMES) {
			k = walk_frames(h, dir, p, n); /* advances w->at */
		} else {
			k = w->phase == PH_PREFACE ? walk_preface(h, p, n)
						   : walk_upgrade(h, p, n);
			w->at += k;
		}
		p += k;
		n -= k;
	}
	flush_bytes(h);
}

size_t obs_h2_unread(const struct obs_h2 *h, enum obs_h2_dir dir)
{
	const struct obs_h2_way *w = &h->way[dir];

	if (h->lost)
		return SIZE_MAX;
	if (w->phase != PH_FRAMES || w->hdr_have < FRAME_HEADER ||
	    payload_read(w->type))
		return 0;
	return w->left;
}

void obs_h2_pass(struct obs_h2 *h, enum obs_h2_dir dir, size_t n,
		 obs_h2_fn *fn, void *ctx)
{
	h->fn = fn;
	h->ctx = ctx;
	while (n > 0 && !h->lost) {
		size_t k = obs_h2_unread(h, dir);

		if (k == 0) { /* bytes it reads, not seen */
			lose(h, dir, OBS_H2_LOST_UNSEEN);
			break;
		}
		k = k < n ? k : n;
		payload_used(h, dir, k);
		n -= k;
	}
	flush_bytes(h);
}

/* ---- a connection ---- */

void obs_h2_init(struct obs_h2 *h, const struct obs_hpack *hpack)
{
	memset(h, 0, offsetof(struct obs_h2, arena));
	h->hpack = hpack;
	for (int d = 0; d < 2; d++) {
		h->way[d].max_frame = 16384;
		h->way[d].table_want = 4096; /* the inflater's own default */
		h->way[d].table_set = 4096;
		h->way[d].phase = PH_FRAMES;
		arena_init(&h->arena[d]);
	}
	h->way[OBS_H2_TX].phase = PH_PREFACE;
}

void obs_h2_upgrade(struct obs_h2 *h, bool with_101)
{
	struct obs_h2_stream *s = stream_add(h, 1);

	s->flags = S_TX_END;
	h->last_sid = 1;
	if (with_101)
		h->way[OBS_H2_RX].phase = PH_UPGRADE;
}

void obs_h2_call(struct obs_h2 *h)
{
	h->call++;
}

bool obs_h2_begins_headers(const struct obs_h2 *h, enum obs_h2_dir dir,
			   const uint8_t *p, size_t n)
{
	const struct obs_h2_way *w = &h->way[dir];

	/* too few bytes to tell: a frame begins, maybe HEADERS */
	return !h->lost && w->phase == PH_FRAMES && w->hdr_have == 0 &&
	       (n < 4 || p[3] == T_HEADERS);
}

void obs_h2_end(struct obs_h2 *h, obs_h2_fn *fn, void *ctx)
{
	if (h->lost) /* lose() closed and wiped already */
		return;
	h->fn = fn;
	h->ctx = ctx;
	for (int d = 0; d < 2; d++) /* the start of a frame header */
		if (h->way[d].phase == PH_FRAMES &&
		    h->way[d].hdr_have < FRAME_HEADER)
			count(h, d, 0, h->way[d].hdr_have);
	flush_bytes(h);
	close_all(h, OBS_H2_TX);
	h->lost = true;
	arena_wipe(&h->arena[0]);
	arena_wipe(&h->arena[1]);
}
