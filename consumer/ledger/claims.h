/* The consumer's side of the claim race (invariants 2 and 3): take the claim before a send,
 * record the outcome after it. */
#ifndef CLAIMS_H
#define CLAIMS_H

#include "claim.h"
#include "consumer.h"
#include "wheel.h"

enum take {
    TAKE_SEND,    /* ours: send now */
    TAKE_SKIP,    /* sent, cancelled or dead already: ack without sending */
    TAKE_UNKNOWN, /* at-most-once and a previous holder died mid-send: dead-letter */
    TAKE_LATER,   /* the claims bucket did not answer: nak and try again later */
};

/* Whether h's task is due so long ago that the ledger may have forgotten its claim: the claims
 * bucket keeps a record for its TTL after the last write (never before the due time), so a
 * task due more than the TTL ago (less a margin: a tenth, at most an hour, for clocks) may
 * have been sent already, and sending a re-published copy would send it twice (a replay needs
 * no key). 1 with the reason in why, else 0. Lateness from the first attempt's due time. */
int claims_forgotten(const struct consumer *c, const struct held *h, int64_t now_ms, char *why,
                     size_t cap);

/* The record this consumer writes for h in state st (no write id yet). */
void claims_fill(struct sa_claim *c, const struct consumer *k, const struct held *h,
                 enum sa_claim_state st);

/* After a create was refused or not answered: reads the claim; TAKE_SEND if it carries
 * write_id (our write went through) or we may take it over, else what to do. */
enum take claims_resolve(struct consumer *c, struct held *h, const char *write_id, uint64_t *rev,
                         struct sa_claim *seen);

/* Claims h's task for this consumer synchronously; *rev is the claim's revision when TAKE_SEND. */
enum take claims_take(struct consumer *c, struct held *h, uint64_t *rev, struct sa_claim *seen);

/* The outcome record for h (no write id yet). */
void claims_outcome(struct sa_claim *rec, const struct consumer *c, const struct held *h,
                    enum sa_claim_state state, int http_status, const char *error,
                    int64_t lateness_ms);

/* Records the outcome on the claim synchronously, on the calling (sending) thread: it retries
 * every 200 ms for up to 15 s while the broker is away, then logs claim_update_failed. */
void claims_finish(struct consumer *c, struct held *h, uint64_t rev, enum sa_claim_state state,
                   int http_status, const char *error, int64_t lateness_ms);

#endif
