/* tlskeys.h - the TLS key log taken in by the layer (tlskeys.c): set up at
 * the start, looked up by the connections that await their secrets. */
#ifndef OBSERVE_TLSKEYS_H
#define OBSERVE_TLSKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layer.h"

/* At the layer's start, in the constructor (one thread): the shared file
 * made or opened, the environment set (tlskeys.c). */
OBS_HIDDEN void obs_keylog_setup(void);
/* Whether the key log is taken in (OBSERVE_CAPTURE=events, not
 * OBSERVE_TLS_KEYLOG=0, its file had). */
OBS_HIDDEN bool obs_keylog_on(void);
/* The traffic secrets of the connection whose ClientHello had random,
 * each len bytes, into client and server (CLIENT_TRAFFIC_SECRET_0,
 * SERVER_TRAFFIC_SECRET_0; a TLS 1.2 connection's master secret,
 * CLIENT_RANDOM, into both): reads what the key log gained since the last
 * look; false when they are not both there (yet). Takes the process
 * mutex (no connection's lock may be held); keeps errno. The secrets
 * leave the table; the caller wipes its copies. */
OBS_HIDDEN bool obs_keylog_find(const uint8_t random[32], size_t len,
				uint8_t *client, uint8_t *server);

/* Provided by tlspool.c: memory for a decrypting connection, with its
 * cryptography (*ops, *ops_ctx: libcrypto's, loaded on the first call);
 * NULL when none (said once). Outside every lock; keeps errno. */
struct obs_cap_dec_mem;
struct obs_tlsdec_ops;
OBS_HIDDEN struct obs_cap_dec_mem *
obs_tlsmem_alloc(const struct obs_tlsdec_ops **ops, void **ops_ctx);
/* ... and its return, its keys wiped (the capture wiped the rest). */
OBS_HIDDEN void obs_tlsmem_release(struct obs_cap_dec_mem *mem);

#endif
