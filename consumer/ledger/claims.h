/* The consumer's side of the claim race (invariants 2 and 3): take the claim before a send,
 * record the outcome after it. */
#ifndef CLAIMS_H
#define CLAIMS_H

#include "claim.h"
#include "consumer.h"
#include "held.h"

enum take {
    TAKE_SEND,    /* ours: send now */
    TAKE_SKIP,    /* sent, cancelled or dead already: ack without sending */
    TAKE_UNKNOWN, /* at-most-once, its "sending" holder dead or a stale one of ours: dead-letter */
    TAKE_AGAIN,   /* the claims bucket did not answer (an election): keep it, claim again soon */
    TAKE_LATER,   /* a live holder is sending it: nak and look again later */
    /* the claim record does not decode or names an unknown state: never sent (a real send's
     * record may lie under it), dead-lettered with the reason in seen->error */
    TAKE_UNREADABLE,
    /* another booking of the id holds its claim (the id was booked again while its first
     * booking waited, after the dedupe window): never sent, dead-lettered with the reason in
     * seen->error, the claim left to the other booking */
    TAKE_OTHER_BOOKING,
};

/* Reads the claims bucket's TTL into c->claims_ttl_ms (a stream info request). */
enum sa_code claims_read_ttl(struct consumer *c, struct sa_err *err) SA_MUST_CHECK;

/* Whether h's due time lies further back than the ledger remembers at now_ms: had the task
 * been sent, its claim may be gone, so a send could be a replay of a captured message. Then
 * writes the dead letter's reason into why and returns 1. */
int claims_forgotten(const struct consumer *c, const struct held *h, int64_t now_ms, char *why,
                     size_t cap);

/* The record this consumer writes for h in state st (no write id yet). */
void claims_fill(struct sa_claim *c, const struct consumer *k, const struct held *h,
                 enum sa_claim_state st);

/* The "sending" record this consumer writes to take h. Every write of it for one held task
 * carries the same write id (h->write_id, made at the first), so a create or take-over that
 * landed while its answer was lost (the bucket's leader died in between) is read back as ours
 * on the next try, not as a live holder's, which would be left alone for ever. */
void claims_fill_take(struct sa_claim *rec, const struct consumer *c, struct held *h);

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

/* Records the outcome on the claim synchronously, on the calling thread (the patient writer's,
 * patient.h, or the exit's): it retries every 200 ms for up to 15 s while the broker is away,
 * then logs claim_update_failed and returns SA_ERETRY. SA_OK once written (over a client's DEL
 * markers or junk written since the claim too: they hide nothing), or once the claim turned out
 * to be another's (its rules decide). */
enum sa_code claims_finish(struct consumer *c, struct held *h, uint64_t rev,
                           enum sa_claim_state state, int http_status, const char *error,
                           int64_t lateness_ms) SA_MUST_CHECK;

/* The dead letter's reason for TAKE_UNKNOWN, true of every way there: the claim says "sending"
 * by a process that no longer answers (it was killed or crashed mid-send; or it stopped, by a
 * drain that ran out or with its outcome write lost while the claims bucket was away, the task
 * claimed and maybe sent), or by this very process with no copy of the task here (its write's
 * answer was lost and the copy handed back). Which, the holder's log says (claim_update_failed,
 * outcome_unrecorded). Returns why (its text), or a fixed text. */
const char *claims_unknown_why(const struct consumer *c, const struct sa_claim *seen, char *why,
                               size_t cap);

#endif
