/* hpack_linked.h - libnghttp2's HPACK inflater as the tests and the
 * fuzzers give it to the HTTP/2 follower (core/h2.h): linked, not
 * dlopen'd as the layer's (libobserve/hpack.c). */
#ifndef OBSERVE_HPACK_LINKED_H
#define OBSERVE_HPACK_LINKED_H

#include <nghttp2/nghttp2.h>

#include "h2.h"

static const struct obs_hpack obs_hpack_linked = {
	.inflate_new2 = nghttp2_hd_inflate_new2,
	.change_table_size = nghttp2_hd_inflate_change_table_size,
#if NGHTTP2_VERSION_NUM >= 0x013c00
	.inflate = nghttp2_hd_inflate_hd3,
#else
	.inflate = nghttp2_hd_inflate_hd2,
#endif
	.end_headers = nghttp2_hd_inflate_end_headers,
};

#endif
