/* What becomes of a held task once its fate is known: the claim records the outcome, then
 * the message is acked (a series' next occurrence published first, invariant 4), handed to a
 * retry, or dead-lettered, and the task is freed. Main thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "claimq.h"
#include "claims.h"
#include "deadletter.h"
#include "jspull.h"
#include "log.h"
#include "outcome.h"
#include "patient.h"
#include "retry.h"
#include "series.h"
#include "timeparse.h"
#include "wheel.h"

/* The one way a held task is acked for good: its series' next occurrence first (invariant 4). */
static void
settle(struct consumer *c, struct held *h)
{
    struct sa_err err = {0};

    if (series_continue(c, h, &err) != SA_OK) {
        if (err.code == SA_EFULL) /* the task stream is full past the headroom */
            atomic_fetch_add(&c->counters.stream_full, 1);
        sa_log(SA_LOG_WARN, "next_occurrence_failed", "task=%s error=\"%s\"", h->task->id, err.msg);
        /* again later: the claim keeps it from a resend */
        sa_jspull_ack(c->n->nc, h->msg, SA_JSPULL_NAK, 1000);
    } else {
        sa_jspull_ack(c->n->nc, h->msg, SA_JSPULL_ACK, 0);
    }
    held_free(h);
}

/* Writes the outcome on the claim, then(c, h): asynchronously when the claim has a revision
 * to expect (then runs once the PubAck is in), by the patient writer otherwise or if that
 * fails (then runs once it is written); never blocking this, the sending thread. A
 * "sent" goes with the others of the next few milliseconds; a retry's or a dead letter's at
 * once, since the retry may be due within them (and would find its task still "sending") and a
 * replay of the dead letter resets the claim it writes. */
static void
record(struct consumer *c, struct held *h, uint64_t rev, struct sa_claim *rec, claim_then_fn then)
{
    struct claim_job *j = calloc(1, sizeof(*j));

    if (!j) { /* no memory for a job: the one write that blocks this thread */
        if (claims_finish(c, h, rev, rec->state, rec->http_status, rec->error, rec->lateness_ms) !=
            SA_OK)
            sa_log(SA_LOG_WARN, "outcome_unrecorded", "task=%s", h->task->id);
        then(c, h);
        return;
    }
    j->op = CLAIM_RECORD;
    j->h = h;
    j->rec = *rec;
    j->last = rev;
    j->then = then;
    if (rev && rec->state == SA_CLAIM_SENT) {
        claimq_send_later(c->claimq, j, sa_now_ms());
        return;
    }
    if (!rev || claimq_send(c->claimq, j, NULL) != SA_OK)
        patient_put(c->patient, j); /* a create, or a publish refused: off this thread */
}

/* Acked with no successor of its own: a retry's is stored already, a refused replay gets none
 * (a series does not go on from a message that may be a replay). */
static void
ack_only(struct consumer *c, struct held *h)
{
    (void)c;
    sa_jspull_ack(c->n->nc, h->msg, SA_JSPULL_ACK, 0);
    held_free(h);
}

/* Handed back to the stream, to come again in a second (a retry that could not be stored). */
static void
nak_later(struct consumer *c, struct held *h)
{
    sa_jspull_ack(c->n->nc, h->msg, SA_JSPULL_NAK, 1000);
    held_free(h);
}

/* Publishes h's dead letter; 0, or -1 when it could not (then h is handed back to the stream,
 * to be tried again, and freed). */
static int
dead_letter(struct consumer *c, struct held *h, const char *reason)
{
    struct sa_err err = {0};

    sa_log(SA_LOG_WARN, "dead_letter", "task=%s attempt=%d reason=\"%s\"", h->task->id,
           h->task->attempt, reason);
    if (retry_dead_letter(c, h->msg, h->task->id, h->task->attempt, h->task->channel, reason,
                          &err) == SA_OK)
        return 0;
    sa_log(SA_LOG_ERROR, "dead_letter_failed", "task=%s error=\"%s\"", h->task->id, err.msg);
    sa_jspull_ack(c->n->nc, h->msg, SA_JSPULL_NAK, 0); /* keep it: redelivered and tried again */
    held_free(h);
    return -1;
}

/* Dead-letters h, records it on the claim, then then(c, h). */
static void
dead_then(struct consumer *c, struct held *h, uint64_t rev, const char *reason, int status,
          claim_then_fn then)
{
    struct sa_claim rec;

    if (dead_letter(c, h, reason) != 0)
        return;
    claims_outcome(&rec, c, h, SA_CLAIM_DEAD, status, reason, 0);
    record(c, h, rev, &rec, then);
}

void
outcome_other_booking(struct consumer *c, struct held *h, const char *why)
{
    if (dead_letter(c, h, why) == 0)
        ack_only(c, h); /* the id's claim is the other booking's: left as it is */
}

void
outcome_refused(struct consumer *c, struct held *h, const char *why)
{
    dead_then(c, h, 0, why, 0, ack_only); /* no successor: a replay must not walk a series */
}

void
outcome_dead(struct consumer *c, struct held *h, uint64_t rev, const char *reason, int status)
{
    dead_then(c, h, rev, reason, status, settle);
}

void
outcome_skip(struct consumer *c, struct held *h, const struct sa_claim *seen)
{
    if (seen->state == SA_CLAIM_CANCELLED)
        atomic_fetch_add(&c->counters.cancelled, 1);
    else
        atomic_fetch_add(&c->counters.duplicates, 1);
    sa_log(SA_LOG_INFO, "skipped", "task=%s claim=%s", h->task->id,
           sa_claim_state_name(seen->state));
    settle(c, h);
}

/* An occurrence due while its series is paused: claimed as "skipped" (create-if-absent, so a
 * cancel or an earlier holder's claim stays as it is), then settled like a send, so the next
 * occurrence is published before the ack (invariant 4). */
void
outcome_paused(struct consumer *c, struct held *h)
{
    struct sa_claim rec;

    sa_log(SA_LOG_INFO, "skipped_paused", "task=%s series=%s", h->task->id, h->task->series_id);
    claims_outcome(&rec, c, h, SA_CLAIM_SKIPPED, 0, SA_CLAIM_PAUSED, 0);
    record(c, h, 0, &rec, settle);
}

static void
finish_retry(struct consumer *c, struct held *h, uint64_t rev, const struct transfer_result *r)
{
    const char *error = r->error;
    int status = (int)r->status;
    struct sa_err err = {0};
    struct sa_claim rec;
    int64_t due = 0;
    char why[300];

    atomic_fetch_add(&c->counters.failed[h->task->channel], 1);
    if (h->task->attempt >= c->cfg.max_attempts) {
        snprintf(why, sizeof(why), "gave up after %d attempts: %s", h->task->attempt, error);
        outcome_dead(c, h, rev, why, status);
        return;
    }
    if (retry_again(c, h, error, r->started_ms, r->retry_after_ms, &due, &err) != SA_OK) {
        if (err.code == SA_EPERM) {
            outcome_dead(c, h, rev, err.msg, status);
            return;
        }
        if (err.code == SA_EFULL) /* the task stream is full past the headroom */
            atomic_fetch_add(&c->counters.stream_full, 1);
        sa_log(SA_LOG_WARN, "retry_failed", "task=%s error=\"%s\"", h->task->id, err.msg);
        /* given back: "sending" by nobody, so its redelivery (here or elsewhere) takes it
         * over and sends again, instead of waiting for this live process for ever */
        claims_outcome(&rec, c, h, SA_CLAIM_SENDING, status, error, 0);
        rec.consumer[0] = rec.instance[0] = '\0';
        record(c, h, rev, &rec, nak_later);
        return;
    }
    sa_log(SA_LOG_INFO, "retry", "task=%s attempt=%d next_in_ms=%" PRId64 " error=\"%s\"",
           h->task->id, h->task->attempt, due - sa_now_ms(), error);
    claims_outcome(&rec, c, h, SA_CLAIM_RETRYING, status, error, 0);
    record(c, h, rev, &rec, ack_only);
}

/* A transfer ended (transfer.c). Lateness is measured from the first attempt's due
 * time: dispatch lateness is when the first attempt started (the scheduler's figure), delivery
 * lateness is when the receiver accepted this one (the user's). A task booked after its due
 * time is counted apart (sendat_booked_late_total): its lateness is mostly the booking's. */
void
outcome_done(struct consumer *c, struct held *h, uint64_t rev, const struct transfer_result *r)
{
    const struct sa_task *t = h->task;
    int64_t due = t->first_due_ms ? t->first_due_ms : h->due_ms;
    int64_t dispatch = (t->first_due_ms ? t->first_started_ms : r->started_ms) - due;
    int64_t delivery = sa_now_ms() - due;
    struct sa_claim rec;

    if (r->permanent) {
        outcome_dead(c, h, rev, r->error, (int)r->status);
        return;
    }
    if (!r->ok && r->unknown && t->at_most_once) {
        char why[300];
        snprintf(why, sizeof(why),
                 "outcome unknown: %.200s after the request was sent (at-most-once)", r->error);
        outcome_dead(c, h, rev, why, (int)r->status);
        return;
    }
    if (!r->ok) {
        finish_retry(c, h, rev, r);
        return;
    }
    claims_outcome(&rec, c, h, SA_CLAIM_SENT, (int)r->status, NULL, dispatch);
    rec.delivery_lateness_ms = delivery;
    atomic_fetch_add(&c->counters.sent[t->channel], 1);
    counters_lateness(&c->counters, dispatch, delivery,
                      t->created_ms > due ? t->created_ms - due : 0);
    sa_log(SA_LOG_INFO, "sent",
           "task=%s attempt=%d status=%ld lateness_ms=%" PRId64 " delivery_lateness_ms=%" PRId64,
           t->id, t->attempt, r->status, dispatch, delivery);
    record(c, h, rev, &rec, settle); /* the claim says "sent" before the task is acked */
}

int
outcome_recorded(struct consumer *c, struct claim_job *j, int here)
{
    if (!j->ok && !here) {
        patient_put(c->patient, j);
        return 1;
    }
    if (!j->ok && claims_finish(c, j->h, j->last, j->rec.state, j->rec.http_status, j->rec.error,
                                j->rec.lateness_ms) != SA_OK)
        sa_log(SA_LOG_WARN, "outcome_unrecorded", "task=%s", j->h->task->id);
    j->then(c, j->h);
    return 0;
}
