/* The dead-letter stream's writes behind `sendat dlq replay|purge` and
 * POST /v1/dead-letters/{id}/replay, DELETE /v1/dead-letters[/{id}]. */
#ifndef DLQ_WRITE_H
#define DLQ_WRITE_H

#include <stdio.h>

#include "keyring.h"
#include "natsconn.h"

/* id NULL: every dead letter. at_ms 0: now. Each replayed id is named on report (NULL: none);
 * a dead letter that cannot be replayed is named on stderr (if report) and the others are
 * still replayed; err then counts the failures, or says why the one id failed. */
enum sa_code dlq_replay(struct sa_nats *n, const struct sa_keyring *ring, const char *id,
                        int64_t at_ms, FILE *report, struct sa_err *err) SA_MUST_CHECK;
/* id NULL: every dead letter. An id without a dead letter: SA_ENOTFOUND. Prints nothing. */
enum sa_code dlq_purge(struct sa_nats *n, const char *id, struct sa_err *err) SA_MUST_CHECK;

#endif
