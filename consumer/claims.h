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

/* Claims h's task for this consumer; *rev is the claim's revision when TAKE_SEND. */
enum take claims_take(struct consumer *c, struct held *h, uint64_t *rev, struct sa_claim *seen);

/* Records the outcome on the claim (a few tries; a lost update only costs status detail). */
void claims_finish(struct consumer *c, struct held *h, uint64_t rev, enum sa_claim_state state,
                   int http_status, const char *error, int64_t lateness_ms);

#endif
