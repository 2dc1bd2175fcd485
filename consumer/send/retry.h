/* What happens after a failed attempt: classify, back off with full jitter and re-publish
 * with attempt + 1, or dead-letter with the reason (and every attempt's time and error). */
#ifndef RETRY_H
#define RETRY_H

#include "consumer.h"
#include "wheel.h"

/* Backoff before attempt+1: uniform in [0, min(max, base * 2^(attempt-1))]. */
int64_t retry_backoff(const struct config *cfg, int attempt);

/* Re-seals h's task with attempt + 1 and the failure recorded, due after the backoff (or
 * retry_after_ms if the receiver asked, whichever is later), and publishes it; the first
 * retry also records the first attempt's due time and start (started_ms), from which lateness
 * is measured. Does not ack. */
enum sa_code retry_again(struct consumer *c, struct held *h, const char *error, int64_t started_ms,
                         int64_t retry_after_ms, int64_t *due_ms, struct sa_err *err) SA_MUST_CHECK;

#endif
