/* What becomes of a held task once its fate is known (outcome.c): recorded on its claim,
 * then acked, retried or dead-lettered, and freed. Main thread. */
#ifndef OUTCOME_H
#define OUTCOME_H

#include <stdint.h>

#include "claim.h"
#include "consumer.h"

struct held;
struct claim_job;

/* How a send ended (transfer.c fills it in). */
struct transfer_result {
    int ok;        /* accepted by the receiver */
    int permanent; /* refused for good: dead-letter now */
    int unknown;   /* failed after the request left (a timeout, a lost connection): it may have
                      arrived, so an at-most-once task is dead-lettered, never sent again */
    long status;   /* HTTP status or SMTP reply code, 0 if none */
    char error[256];
    int64_t started_ms;
    int64_t retry_after_ms; /* from Retry-After, 0 if none */
};

/* A send ended: sent (recorded "sent", then settled), retried or dead-lettered. */
void outcome_done(struct consumer *c, struct held *h, uint64_t rev,
                  const struct transfer_result *r);
/* Dead-lettered with reason (and the receiver's status, if any), then settled. */
void outcome_dead(struct consumer *c, struct held *h, uint64_t rev, const char *reason, int status);
/* Refused before any send (older than the claim ledger remembers): dead-lettered, acked with no
 * successor. */
void outcome_refused(struct consumer *c, struct held *h, const char *why);
/* A second booking of an id whose other booking holds the claim (claims.h, TAKE_OTHER_BOOKING):
 * dead-lettered with why, acked, the claim left to the other booking. */
void outcome_other_booking(struct consumer *c, struct held *h, const char *why);
/* Not sent because its claim says cancelled or settled already (seen): settled. */
void outcome_skip(struct consumer *c, struct held *h, const struct sa_claim *seen);
/* Due while its series is paused: claimed as skipped, then settled. */
void outcome_paused(struct consumer *c, struct held *h);
/* Main thread: a job whose outcome write came back. One not written goes to the patient
 * writer (patient.h) and is kept: returns 1. Else (written, or here set: the exit, where it is
 * written on this thread) what follows the write runs, and the caller frees the job: 0. */
int outcome_recorded(struct consumer *c, struct claim_job *j, int here);

#endif
