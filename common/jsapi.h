/* The JetStream API as raw requests (issue 36.4): for what nats.c 3.4 has no call for (consumer
 * reset, a stream's allow_msg_ttl, a stepdown to a preferred peer, the API level) and for
 * requests sent many at a time (direct gets, pulls). "$JS.API." is written here only; callers
 * name the part after it ("STREAM.INFO.<stream>"). */
#ifndef SA_JSAPI_H
#define SA_JSAPI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <nats/nats.h>

#include "sa_err.h"

/* "$JS.API." and the formatted rest, into out; the length, -1 if cap is short. */
int sa_jsapi_subject(char *out, size_t cap, const char *fmt, ...) SA_PRINTF(3, 4);

/* One request to "$JS.API.<api>" with body ("" or NULL: none), waiting wait_ms; the server's
 * answer in *reply (the caller's to destroy). The nats.c status as is: a server without
 * JetStream gives NATS_NO_RESPONDERS. */
natsStatus sa_jsapi_raw(natsMsg **reply, natsConnection *nc, const char *api, const char *body,
                        int64_t wait_ms);

/* The same, its JSON answer in *answer (the caller's to json_decref; NULL: not wanted). SA_OK
 * if the server did it. SA_ENATS naming what the server said when it answers an error, with
 * *code its err_code (0 without one; code may be NULL), or when the answer is no JSON; what
 * sa_nats_fail makes of the status when it does not answer. */
enum sa_code sa_jsapi_request(natsConnection *nc, const char *api, const char *body,
                              int64_t wait_ms, json_t **answer, int *code,
                              struct sa_err *err) SA_MUST_CHECK;

#endif
