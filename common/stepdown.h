/* Asks a clustered stream's leader to step down (STREAM.LEADER.STEPDOWN.<stream>), for
 * `sendat init`'s placement and the consumers' leader balance. From 2.11 the request may name
 * the peer to hand over to ({"placement":{"preferred":"<server>"}}); 2.9 refuses any body and
 * hands over to a current follower of its own choosing. */
#ifndef SA_STEPDOWN_H
#define SA_STEPDOWN_H

#include <nats/nats.h>

#include "sa_err.h"

/* One step-down request, naming `to` as the next leader (NULL: a plain request, the server
 * chooses). SA_OK once the leader took it; SA_ENATS with the server's description when it
 * refused (a body on 2.9, a peer not current on 2.11+), SA_ERETRY without an answer within
 * timeout_ms. */
enum sa_code sa_stepdown(natsConnection *nc, const char *stream, const char *to, int timeout_ms,
                         struct sa_err *err) SA_MUST_CHECK;

#endif
