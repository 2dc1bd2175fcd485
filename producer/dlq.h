/* The dead-letter stream's operations behind `sendat dlq`. Each prints its result and returns
 * an exit code. */
#ifndef DLQ_H
#define DLQ_H

#include "keyring.h"
#include "natsconn.h"

int dlq_list(struct sa_nats *n, int json, long limit);
int dlq_show(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int json);
/* id NULL: every dead letter. at_ms 0: now. */
int dlq_replay(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int64_t at_ms);
/* id NULL: every dead letter. */
int dlq_purge(struct sa_nats *n, const char *id);

#endif
