/* The cancel map as an in-memory set, kept current by a KV watcher thread. The claim record
 * decides every race (invariant 3); this set only lets a consumer drop a cancelled task
 * early instead of holding, moving or claiming it. */
#ifndef CONSUMER_CANCEL_H
#define CONSUMER_CANCEL_H

#include <nats/nats.h>

#include "sa_err.h"

struct cancel_set;

/* Starts watching kv and returns once the initial values are loaded (or after 10 s). ttl_ms
 * is the claims bucket's TTL (0: for ever), which decides which tasks a record applies to. */
enum sa_code cancel_start(struct cancel_set **out, kvStore *kv, int64_t ttl_ms,
                          struct sa_err *err) SA_MUST_CHECK;

/* Any thread: is id in the cancel map? (A series or its pause key.) */
int cancel_contains(struct cancel_set *s, const char *id);

/* Any thread: does the cancel map hold a record for id that applies to a task sealed at
 * sealed_ms (its created_ms)? A task booked once the id was free again is not cancelled by an
 * old record (sa_cancel_applies). */
int cancel_applies(struct cancel_set *s, const char *id, int64_t sealed_ms);

/* Stops the watcher thread and frees the set. */
void cancel_stop(struct cancel_set *s);

#endif
