/* Claim writes without waiting: each is published asynchronously to the claims bucket with the
 * revision it expects, and its PubAck comes back to the main loop as a finished job. Taking a
 * claim and recording an outcome then cost the broker's work, not a round trip each on the
 * sending thread. A write the broker refused or did not answer goes the synchronous way
 * (claims.c): read back, compare write ids, apply the take-over rules. */
#ifndef CLAIMQ_H
#define CLAIMQ_H

#include <stdint.h>

#include "claim.h"
#include "consumer.h"
#include "held.h"

enum claim_op {
    CLAIM_TAKE,   /* create the "sending" record before a send */
    CLAIM_RECORD, /* write the outcome on the revision the take made */
};

struct claim_job;
typedef void (*claim_then_fn)(struct consumer *c, struct held *h); /* after an outcome is written */

struct claim_job {
    enum claim_op op;
    struct held *h;
    struct sa_claim rec; /* what was written, its write id included */
    uint64_t last;       /* the revision the write expected */
    char host[256];      /* take: the send's destination and its fleet lease */
    int lease;
    claim_then_fn then; /* record: what follows the write (settle, or ack a retry) */
    int ok;             /* filled when done: stored, at revision rev */
    int given_up;       /* not ok: no answer was waited for (claimq_give_up_takes) */
    uint64_t rev;
    struct claim_job *next;
};

struct claimq;

/* A JetStream context of its own whose PubAcks finish jobs; wake(arg) is called when a job
 * finishes on an empty done list (the loop takes the whole list). */
enum sa_code claimq_new(struct claimq **out, struct consumer *c, void (*wake)(void *), void *arg,
                        struct sa_err *err) SA_MUST_CHECK;
/* Jobs still in flight are handed back by claimq_abandon first. */
void claimq_free(struct claimq *q);

/* Main thread: publishes job (owned by the queue until it comes back from claimq_done).
 * SA_OK, or an error and the job is still the caller's (do it synchronously). */
enum sa_code claimq_send(struct claimq *q, struct claim_job *job, struct sa_err *err) SA_MUST_CHECK;

/* Main thread: job is published with the others sent later at claimq_flush_at (10 ms after
 * the first of them), so outcomes finishing a millisecond apart cost the broker, its PubAcks
 * and the loop one wake per group. The job is the queue's from now on: a publish that fails
 * comes back from claimq_done unwritten (ok = 0). */
void claimq_send_later(struct claimq *q, struct claim_job *job, int64_t now);
/* When the jobs sent later are due to be published; INT64_MAX if there are none. */
int64_t claimq_flush_at(const struct claimq *q);
/* Main thread: publishes the jobs sent later. */
void claimq_flush(struct claimq *q);

/* Main thread: the finished jobs, oldest first (a list through next): those whose PubAck
 * arrived, and those whose publish failed (ok = 0). */
struct claim_job *claimq_done(struct claimq *q);

/* Main thread, after the connection was made again: every take still waiting for its PubAck
 * comes back from claimq_done at once, unanswered (ok = 0, given_up = 1), and deliver.c tries
 * it again with the same write id. Sent on the broken connection, it may never be answered:
 * CLAIM_ACK_WAIT_MS (4 s) was added to the lateness of every task claimed in the moment a
 * server was killed. Returns how many. */
size_t claimq_give_up_takes(struct claimq *q);

/* Jobs sent (or sent later) and not yet returned by claimq_done. */
int claimq_pending(struct claimq *q);

/* Main thread, at exit: stops waiting and returns every job still in flight or still waiting
 * to be published (ok = 0). */
struct claim_job *claimq_abandon(struct claimq *q);

#endif
