/* Finding a task by id without an index: its subjects are derived from the id (and the due
 * time a generated id carries), so one or two direct gets by subject find it. */
#ifndef FIND_H
#define FIND_H

#include "natsconn.h"

/* The task's message as it waits in the stream now (window or slot level). SA_ENOTFOUND if
 * it is not waiting (never scheduled, or already sent, cancelled or dead-lettered). On SA_OK
 * the caller destroys *msg. */
enum sa_code find_task(struct sa_nats *n, const char *id, natsMsg **msg,
                       struct sa_err *err) SA_MUST_CHECK;

/* The newest dead letter of the task, or SA_ENOTFOUND. */
enum sa_code find_dead(struct sa_nats *n, const char *id, natsMsg **msg,
                       struct sa_err *err) SA_MUST_CHECK;

/* An integer header of msg, or 0 when absent. */
int64_t find_header_i64(natsMsg *msg, const char *name);

/* The claims bucket's TTL (every shard's alike; one stream info request), 0 for ever. */
enum sa_code find_claims_ttl(struct sa_nats *n, const char *id, int64_t *ttl_ms,
                             struct sa_err *err) SA_MUST_CHECK;

#endif
