/* wsframe.c - WebSocket frame headers followed to message ends. */
#include "wsframe.h"

#include <string.h>

void obs_ws_init(struct obs_wsframe *w)
{
	memset(w, 0, sizeof(*w));
}

/* The header's length: 2, plus 2 or 8 of extended length, plus 4 of mask
 * key; known once its first two bytes are. */
static uint8_t header_len(const struct obs_wsframe *w)
{
	uint8_t len7 = w->hdr[1] & 0x7f;

	return (uint8_t)(2 +
			 (len7 == 126	? 2
			  : len7 == 127 ? 8
					: 0) +
			 (w->hdr[1] & 0x80 ? 4 : 0));
}

static uint64_t payload_len(const struct obs_wsframe *w)
{
	uint8_t len7 = w->hdr[1] & 0x7f;
	uint64_t n = 0;

	if (len7 < 126)
		return len7;
	for (int i = 0; i < (len7 == 126 ? 2 : 8); i++)
		n = n << 8 | w->hdr[2 + i];
	return n;
}

/* The frame whose payload just ended (at pos). */
static void frame_done(struct obs_wsframe *w, obs_ws_emit *emit, void *ctx)
{
	if (w->control) {
		emit(ctx, (uint8_t)(w->hdr[0] & 0x0f), w->csize, w->pos);
	} else if (w->fin) {
		emit(ctx, w->opcode, w->size, w->pos);
		w->opcode = 0;
		w->size = 0;
	}
	w->have = 0;
}

/* A frame header is complete. */
static void header_done(struct obs_wsframe *w)
{
	uint8_t op = w->hdr[0] & 0x0f;
	uint64_t n = payload_len(w);

	w->fin = (w->hdr[0] & 0x80) != 0;
	w->control = (op & 0x8) != 0;
	/* a control frame's payload is at most 125 bytes and never
	 * fragmented; a continuation needs a message; a new data frame must
	 * not come inside one; a 64-bit length has its top bit clear */
	if ((w->control && (n > 125 || !w->fin)) ||
	    (!w->control && (op == 0) != (w->opcode != 0)) || (op & 0x7) > 2 ||
	    (n >> 63)) {
		w->lost = true;
		return;
	}
	if (w->control) {
		w->csize = n;
	} else {
		if (op != 0)
			w->opcode = op;
		w->size += n;
	}
	w->left = n;
}

/* k bytes of the current frame's payload (k <= left). */
static void payload_bytes(struct obs_wsframe *w, size_t k, obs_ws_emit *emit,
			  void *ctx)
{
	w->pos += k;
	w->left -= k;
	if (w->left == 0)
		frame_done(w, emit, ctx);
}

void obs_ws_feed(struct obs_wsframe *w, const uint8_t *p, size_t n,
		 obs_ws_emit *emit, void *ctx)
{
	const uint8_t *end = p + n;

	while (p < end && !w->lost) {
		if (w->have < 2 || w->have < header_len(w)) {
			w->hdr[w->have++] = *p++;
			w->pos++;
			if (w->have >= 2 && w->have == header_len(w)) {
				header_done(w);
				if (!w->lost && w->left == 0)
					frame_done(w, emit, ctx);
			}
			continue;
		}
		size_t k = (size_t)(end - p) < w->left ? (size_t)(end - p)
						       : (size_t)w->left;

		p += k;
		payload_bytes(w, k, emit, ctx);
	}
	if (w->lost)
		w->pos += (uint64_t)(end - p);
}

size_t obs_ws_unread(const struct obs_wsframe *w)
{
	if (w->lost)
		return SIZE_MAX;
	if (w->have < 2 || w->have < header_len(w))
		return 0; /* a frame header */
	return w->left < SIZE_MAX ? (size_t)w->left : SIZE_MAX;
}

void obs_ws_pass(struct obs_wsframe *w, size_t n, obs_ws_emit *emit,
		 void *ctx)
{
	while (n) {
		size_t k = obs_ws_unread(w);

		if (k == 0) { /* a header it reads, not seen */
			w->lost = true;
			k = n;
		}
		k = k < n ? k : n;
		if (w->lost)
			w->pos += k;
		else
			payload_bytes(w, k, emit, ctx);
		n -= k;
	}
}

bool obs_ws_at_boundary(const struct obs_wsframe *w)
{
	return w->have == 0 && w->opcode == 0;
}
