/* What the connected JetStream offers beyond nats-server 2.9, read once when a process binds:
 * the account info (the API's INFO) names the server's JetStream API level from 2.11 on
 * ("api": {"level": N}); a server without it is taken as 2.9 / 2.10 and gets the old path.
 * SENDAT_SERVER_FEATURES=none turns every feature off, so the 2.9 path is tested on any
 * server. Each feature's level is the server's own (server/jetstream_versioning.go). */
#ifndef SA_JSFEAT_H
#define SA_JSFEAT_H

#include <nats/nats.h>

#include "sa_err.h"

#define SA_JSFEAT_MSG_TTL 0x1u  /* per-message TTL, the Nats-TTL header: level 1 (2.11) */
#define SA_JSFEAT_ATOMIC 0x2u   /* atomic batch publish: level 2 (2.12) */
#define SA_JSFEAT_SCHEDULE 0x4u /* message schedules (ADR-51): level 2 (2.12) */
#define SA_JSFEAT_RESET 0x8u    /* consumer reset (ADR-60): level 4 (2.14) */

struct sa_jsfeat {
    int api_level; /* 0: the server names none (2.10 and older) */
    unsigned have; /* SA_JSFEAT_* of that level, none if SENDAT_SERVER_FEATURES=none */
};

/* The features of the server behind nc. A server that does not answer the account info, or
 * a role not allowed to ask, reads as level 0: the 2.9 path, never a failure. SA_EINVAL only
 * for a SENDAT_SERVER_FEATURES other than "auto" or "none". */
enum sa_code sa_jsfeat_detect(natsConnection *nc, struct sa_jsfeat *out,
                              struct sa_err *err) SA_MUST_CHECK;

/* The features of an API level (used by sa_jsfeat_detect; tests name a level directly). */
unsigned sa_jsfeat_of_level(int level);

/* "ttl,atomic,schedule,reset" for what have holds ("none" if nothing), for the start line. */
const char *sa_jsfeat_names(unsigned have, char *buf, size_t cap);

#endif
