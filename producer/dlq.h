/* The dead-letter stream's operations behind `sendat dlq`. Each prints its result on stdout
 * and returns SA_OK, SA_ENOTFOUND for an id with no dead letter, or another code with the
 * reason in err (cmd_dlq.c turns them into exit codes). */
#ifndef DLQ_H
#define DLQ_H

#include "keyring.h"
#include "natsconn.h"

enum sa_code dlq_list(struct sa_nats *n, int json, long limit, struct sa_err *err) SA_MUST_CHECK;
/* full: also the task's content (recipients, headers, body), which only the key opens. */
enum sa_code dlq_show(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int json,
                      int full, struct sa_err *err) SA_MUST_CHECK;
/* id NULL: every dead letter. at_ms 0: now. A dead letter that cannot be replayed is named
 * on stderr and the others are still replayed; err then counts the failures. */
enum sa_code dlq_replay(struct sa_nats *n, const struct sa_keyring *ring, const char *id,
                        int64_t at_ms, struct sa_err *err) SA_MUST_CHECK;
/* id NULL: every dead letter. */
enum sa_code dlq_purge(struct sa_nats *n, const char *id, struct sa_err *err) SA_MUST_CHECK;

#endif
