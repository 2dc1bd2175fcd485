/* The cancel map as an in-memory set, kept current by a KV watcher thread. The claim record
 * decides every race (invariant 3); this set only lets a consumer drop a cancelled task
 * early instead of holding, moving or claiming it. */
#ifndef CANCEL_H
#define CANCEL_H

#include <nats/nats.h>

#include "err.h"

struct cancel_set;

/* Starts watching kv and returns once the initial values are loaded (or after 10 s). */
enum sa_code cancel_start(struct cancel_set **out, kvStore *kv, struct sa_err *err) SA_MUST_CHECK;

/* Any thread: is id in the cancel map? */
int cancel_contains(struct cancel_set *s, const char *id);

/* Stops the watcher thread and frees the set. */
void cancel_stop(struct cancel_set *s);

#endif
