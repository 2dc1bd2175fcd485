/* The claim states of many tasks at once, for the listings and counts that must leave cancelled
 * tasks out (`sendat list`, GET /v1/tasks, `sendat stats`): a cancelled task keeps waiting in
 * the task stream until a consumer meets it at its due time, so only its claim tells. */
#ifndef CLAIMSCAN_H
#define CLAIMSCAN_H

#include <stddef.h>

#include "claim.h"
#include "natsconn.h"

/* Called with each answer of claimscan_last: the index of the id it answers, and the direct
 * get's reply (its "Status" header 404 and no data when the key holds nothing; a DEL or PURGE
 * marker comes with no data and a KV-Operation header). Each index is answered once. */
typedef void claimscan_fn(void *arg, size_t i, natsMsg *m);

/* The last message of key ids[i] in bucket (NULL: the claims bucket of ids[i]'s shard) for
 * every i, handed to fn: direct gets "last by subject", pipelined on one inbox. A broker error,
 * or 10 s without an answer, fails the call (the answers so far were handed over). */
enum sa_code claimscan_last(struct sa_nats *n, const char *bucket, const char *const *ids,
                            size_t count, claimscan_fn *fn, void *arg,
                            struct sa_err *err) SA_MUST_CHECK;

/* states[i] gets the state of ids[i]'s claim, SA_CLAIM_NONE where it has none. The direct gets
 * are pipelined (many in flight on one inbox), so thousands cost about one round trip each
 * hundred. A broker error, or 10 s without an answer, fails the whole call. */
enum sa_code claimscan_states(struct sa_nats *n, const char *const *ids, size_t count,
                              enum sa_claim_state *states, struct sa_err *err) SA_MUST_CHECK;

#endif
