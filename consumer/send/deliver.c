/* Fires held tasks at their due instant: claim, POST, record, ack (invariants 1, 2 and 6).
 * The loop sleeps in curl_multi_poll until the next due time, a finished transfer or a
 * wakeup from the puller, so an idle consumer burns no CPU. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "claimq.h"
#include "claims.h"
#include "deliver.h"
#include "jspull.h"
#include "ledgerwatch.h"
#include "hostlimits.h"
#include "log.h"
#include "outcome.h"
#include "patient.h"
#include "ready.h"
#include "series.h"
#include "timeparse.h"
#include "transfer.h"
#include "wheel.h"

#define TOUCH_CHECK_MS 1000
#define COUNTERS_EVERY_MS 60000
#define FIRE_GROUP 16            /* claimed tasks sent per turn of the loop */
#define CLAIM_AGAIN_MIN_MS 100   /* the claims bucket did not answer: first try again after */
#define CLAIM_AGAIN_MAX_MS 500   /* doubling up to this */
#define CLAIM_AGAIN_FOR_MS 20000 /* then, for this long since the first failure, the task stays */
#define READ_STALL_MS 1000       /* a claim's read-back that failed after this long stalled */
#define READS_QUIET_MS 5000      /* then no read-back on this loop for this long (take_done) */
#define EXIT_WRITES_MS 5000      /* after the drain: for the outcome writes still to be made */

struct deliver {
    struct consumer *c;
    CURLM *multi;
    int inflight;                 /* transfers on the multi handle */
    int taking;                   /* claims published and not yet answered */
    struct ready ready;           /* claimed ahead of their due instant, waiting for it */
    long reconnects;              /* the connection's count when last looked at */
    int64_t reads_quiet_until_ms; /* a claim's read-back stalled: no other before this */
    int64_t next_touch_ms, next_counters_ms;
};

enum sa_code
deliver_new(struct deliver **out, struct consumer *c, struct sa_err *err)
{
    struct deliver *d = calloc(1, sizeof(*d));

    *out = NULL;
    if (!d || !(d->multi = curl_multi_init())) {
        free(d);
        return sa_fail(err, SA_ENOMEM, "no memory for the sender");
    }
    curl_multi_setopt(d->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)c->cfg.max_inflight);
    curl_multi_setopt(d->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c->cfg.max_host_connections);
    /* unset, libcurl keeps 4 idle connections per handle added at the time, and closed the
     * connections a burst's next sends would have used as its sends ended */
    curl_multi_setopt(d->multi, CURLMOPT_MAXCONNECTS, (long)c->cfg.max_inflight);
    easypool_init(&c->easy, c->cfg.max_inflight);
    d->c = c;
    d->reconnects = atomic_load(c->n->reconnects);
    *out = d;
    return SA_OK;
}

void
deliver_free(struct deliver *d)
{
    if (!d)
        return;
    easypool_free(&d->c->easy);
    curl_multi_cleanup(d->multi);
    ready_free(&d->ready);
    free(d);
}

void
deliver_wakeup(void *arg)
{
    struct deliver *d = arg;

    curl_multi_wakeup(d->multi);
}

/* A provider limit says not yet: back into the wheel until retry_at (the message stays held
 * and is kept alive like any other). */
static void
defer(struct deliver *d, struct held *h, int64_t retry_at)
{
    struct sa_err err = {0};

    if (wheel_defer(d->c->wheel, h, retry_at, &err) != SA_OK) {
        sa_jspull_ack(d->c->n->nc, h->msg, SA_JSPULL_NAK, 1000);
        held_free(h);
    }
}

static void
send_now(struct deliver *d, struct held *h, const char *host, int lease, uint64_t rev)
{
    struct sa_err err = {0};

    if (transfer_start(d->multi, d->c, h, rev, sa_now_ms(), host, lease, &err) != SA_OK) {
        limits_release(d->c->limits, host, lease);
        outcome_dead(d->c, h, rev, err.msg, 0);
        return;
    }
    d->inflight++;
}

/* Claimed before its due instant: waits in the ready heap; 0 if it cannot (send it now). */
static int
hold_ready(struct deliver *d, struct held *h, const char *host, int lease, uint64_t rev)
{
    struct ready_entry e = {.h = h, .rev = rev, .lease = lease};

    snprintf(e.host, sizeof(e.host), "%s", host);
    return ready_push(&d->ready, &e, NULL) == SA_OK;
}

/* Sends what is due among the claimed tasks, a few per turn of the loop. Hundreds of
 * transfers added at once all connect before the first request goes out (a cold start
 * measured 55 ms to the first arrival) and then hold hundreds of connections open (10 % fewer
 * deliveries a second); a few per turn reach the receiver in ~4 ms and reuse connections. */
static void
fire_ready(struct deliver *d, int64_t now)
{
    struct ready_entry e;

    for (int n = 0; n < FIRE_GROUP && ready_pop_due(&d->ready, now, &e); n++)
        send_now(d, e.h, e.host, e.lease, e.rev);
}

/* The claims bucket did not answer: its stream has no leader while nats-server elects one (a
 * follower waits 4-9 s for a lost leader before it campaigns). The task stays held (kept alive
 * like any other) and is claimed again shortly, so it goes out as soon as a leader is there. A
 * nak instead sent it round through the task stream, whose durable's pull request or leader
 * may have been lost in the same failure: 3 s more than the election in the leader test.
 * 0 once it failed for CLAIM_AGAIN_FOR_MS: then it goes back to the fleet. */
static int
claim_again(struct deliver *d, struct held *h)
{
    int64_t now = sa_now_ms(),
            wait = CLAIM_AGAIN_MIN_MS << (h->claim_tries < 3 ? h->claim_tries : 3);

    if (!h->claim_failed_ms)
        h->claim_failed_ms = now;
    if (now - h->claim_failed_ms > CLAIM_AGAIN_FOR_MS)
        return 0;
    h->claim_tries++;
    if (wait > CLAIM_AGAIN_MAX_MS)
        wait = CLAIM_AGAIN_MAX_MS;
    return wheel_defer(d->c->wheel, h, now + wait, NULL) == SA_OK;
}

/* What follows taking the claim (or not): the send, or the task settled without one. */
static void
claimed(struct deliver *d, struct held *h, const char *host, int lease, enum take take,
        uint64_t rev, const struct sa_claim *seen)
{
    char why[300];

    switch (take) {
    case TAKE_SEND:
        break;
    case TAKE_SKIP:
        limits_release(d->c->limits, host, lease);
        outcome_skip(d->c, h, seen);
        return;
    case TAKE_UNKNOWN:
        limits_release(d->c->limits, host, lease);
        outcome_dead(d->c, h, seen->revision, claims_unknown_why(d->c, seen, why, sizeof(why)), 0);
        return;
    case TAKE_AGAIN:
        limits_release(d->c->limits, host, lease);
        if (claim_again(d, h))
            return;
        sa_jspull_ack(d->c->n->nc, h->msg, SA_JSPULL_NAK, 1000);
        held_free(h);
        return;
    case TAKE_UNREADABLE: /* written over by a client, not by sendat: replayable by hand */
        limits_release(d->c->limits, host, lease);
        outcome_dead(d->c, h, seen->revision, seen->error, 0);
        return;
    case TAKE_OTHER_BOOKING:
        limits_release(d->c->limits, host, lease);
        outcome_other_booking(d->c, h, seen->error);
        return;
    case TAKE_LATER:
        limits_release(d->c->limits, host, lease);
        sa_jspull_ack(d->c->n->nc, h->msg, SA_JSPULL_NAK, 1000);
        held_free(h);
        return;
    }
    if (h->due_ms > sa_now_ms() && hold_ready(d, h, host, lease, rev))
        return;
    send_now(d, h, host, lease, rev);
}

/* Publishes the "sending" claim without waiting; take_done goes on when the PubAck is in. */
static enum sa_code
take_async(struct deliver *d, struct held *h, const char *host, int lease, struct sa_err *err)
{
    struct claim_job *j = calloc(1, sizeof(*j));
    enum sa_code rc;

    if (!j)
        return sa_fail(err, SA_ENOMEM, "no memory to claim %s", h->task->id);
    j->op = CLAIM_TAKE;
    j->h = h;
    claims_fill_take(&j->rec, d->c, h);
    snprintf(j->host, sizeof(j->host), "%s", host);
    j->lease = lease;
    rc = claimq_send(d->c->claimq, j, err);
    if (rc != SA_OK) {
        free(j);
        return rc;
    }
    d->taking++;
    return SA_OK;
}

/* Stopping while the server is away: a claim whose answer did not come is not looked up, since
 * each read would wait out its timeout on this loop (5 s a task, one after another, past the
 * drain: it_drainkill with the server killed). The task goes back to the fleet like the others
 * held; a claim of ours that landed is stale once this process is gone (claims.c). */
static int
away_on_the_way_out(const struct deliver *d)
{
    return atomic_load(&d->c->stopping) &&
           natsConnection_Status(d->c->n->nc) != NATS_CONN_STATUS_CONNECTED;
}

/* A claim whose PubAck did not come: read back whose it is, or claim it again later with the same
 * write id (a landed one is then ours). The read-back blocks this loop until the claims bucket
 * answers, up to its timeouts (5 s and more): while the bucket elects a leader every claim of a
 * burst failed so, and one read after another held the loop for 30-48 s (issue 35's containers
 * runs 1 and 7). So after one read that failed after READ_STALL_MS, the others wait
 * READS_QUIET_MS and are claimed again instead (CLAIM_AGAIN_*). */
static enum take
resolve_or_again(struct deliver *d, struct claim_job *j, uint64_t *rev, struct sa_claim *seen)
{
    int64_t t0 = sa_now_ms();
    enum take take;

    if (j->given_up || away_on_the_way_out(d) || t0 < d->reads_quiet_until_ms)
        return TAKE_AGAIN;
    take = claims_resolve(d->c, j->h, j->rec.write_id, rev, seen);
    if (take == TAKE_AGAIN && sa_now_ms() - t0 >= READ_STALL_MS)
        d->reads_quiet_until_ms = sa_now_ms() + READS_QUIET_MS;
    return take;
}

static void
take_done(struct deliver *d, struct claim_job *j)
{
    struct sa_claim seen = {0};
    uint64_t rev = j->rev;
    enum take take = j->ok ? TAKE_SEND : resolve_or_again(d, j, &rev, &seen);

    d->taking--;
    claimed(d, j->h, j->host, j->lease, take, rev, &seen);
}

static void
jobs_done(struct deliver *d, struct claim_job *j)
{
    for (struct claim_job *next; j; j = next) {
        next = j->next;
        if (j->op == CLAIM_TAKE)
            take_done(d, j);
        else if (outcome_recorded(d->c, j, 0))
            continue; /* the patient writer's now */
        free(j);
    }
}

static void
start(struct deliver *d, struct held *h, int64_t now)
{
    struct sa_claim seen = {0};
    uint64_t rev = 0;
    enum take take;
    char host[256], why[300];
    int64_t retry_at = 0;
    int lease = -1;

    if (series_cancelled(d->c, h->task)) {
        seen.state = SA_CLAIM_CANCELLED;
        outcome_skip(d->c, h, &seen);
        return;
    }
    if (claims_forgotten(d->c, h, now, why, sizeof(why))) {
        outcome_refused(d->c, h, why);
        return;
    }
    if (h->task->attempt == 1 && series_paused(d->c, h->task)) { /* a retry goes on */
        outcome_paused(d->c, h);
        return;
    }
    if (h->task->not_after_ms && now > h->task->not_after_ms) {
        outcome_dead(d->c, h, 0, "expired: not sent before its not-after time", 0);
        return;
    }
    if (atomic_load(&d->c->ledger_lost)) { /* claims would go to a bucket that forgot its sends */
        defer(d, h, now + LEDGERWATCH_MS);
        return;
    }
    transfer_host(d->c, h->task, host, sizeof(host));
    if (!limits_acquire(d->c->limits, host, now, &retry_at, &lease)) {
        defer(d, h, retry_at);
        return;
    }
    if (take_async(d, h, host, lease, NULL) == SA_OK) /* else: claimed synchronously below */
        return;
    take = claims_take(d->c, h, &rev, &seen);
    claimed(d, h, host, lease, take, rev, &seen);
}

static int
room(const struct deliver *d)
{
    return d->inflight + d->taking + (int)ready_count(&d->ready) < d->c->cfg.max_inflight;
}

/* When the earliest held task should be handed out: claim_lead before its due time, taken
 * together with the others whose claim time falls in the same quarter of the lead (so a
 * steady stream of tasks due a millisecond apart wakes this loop, the broker and its PubAcks
 * once per group instead of once per task; a claim is at most a quarter of the lead earlier),
 * unless a provider limit deferred it (its lease is asked for when the limit said, not
 * earlier). The mark is explicit: a limit that said "in 50 ms" at 50 ms before the due time
 * gave back the due time itself, the task looked never deferred, and the loop asked again for
 * ever. */
static int64_t
next_pop(const struct deliver *d)
{
    const struct held *h = wheel_peek(d->c->wheel);
    int64_t group = d->c->cfg.claim_lead_ms / 4, at;

    if (!h)
        return INT64_MAX;
    if (h->deferred)
        return h->fire_ms;
    at = h->fire_ms - d->c->cfg.claim_lead_ms;
    return group > 0 ? at - ((at % group) + group) % group : at;
}

static void
fire_due(struct deliver *d, int64_t now)
{
    fire_ready(d, now);
    while (room(d) && next_pop(d) <= now)
        start(d, wheel_pop_due(d->c->wheel, INT64_MAX), now);
    atomic_store(&d->c->sender_busy, wheel_next_due(d->c->wheel) <= now);
}

/* Takes whose PubAck may never come: they went out on a connection that has broken since. */
static void
after_reconnect(struct deliver *d)
{
    long r = atomic_load(d->c->n->reconnects);
    size_t n;

    if (r == d->reconnects)
        return;
    d->reconnects = r;
    n = claimq_give_up_takes(d->c->claimq);
    if (n)
        sa_log(SA_LOG_INFO, "claims_asked_again", "reconnects=%ld takes=%zu", r, n);
}

static void
periodic(struct deliver *d, int64_t now)
{
    after_reconnect(d);
    if (atomic_exchange(&d->c->reload, 0))
        d->c->reload_hook(d->c);
    if (now >= d->next_touch_ms) {
        wheel_touch(d->c->wheel, now, d->c->n->layout.ack_wait_ms / 3);
        transfer_touch(d->c, now, d->c->n->layout.ack_wait_ms / 3);
        d->next_touch_ms = now + TOUCH_CHECK_MS;
    }
    if (now >= d->next_counters_ms) {
        if (d->next_counters_ms)
            counters_log(d->c, "counters");
        d->next_counters_ms = now + COUNTERS_EVERY_MS;
    }
}

static int
poll_timeout(struct deliver *d, int64_t now)
{
    int64_t next = room(d) ? next_pop(d) : INT64_MAX, t = 1000;

    if (ready_next_due(&d->ready) < next)
        next = ready_next_due(&d->ready);
    if (claimq_flush_at(d->c->claimq) < next)
        next = claimq_flush_at(d->c->claimq);
    if (next != INT64_MAX && next - now < t)
        t = next - now;
    return t < 0 ? 0 : (int)t;
}

/* The drain time ran out with sends in flight or claim writes unanswered or not yet
 * published: a task not yet sent, or still being sent, goes back to the fleet; a sent one's
 * outcome is written the patient way before its task is acked. */
static void
abandon(struct deliver *d, struct claim_job *j)
{
    struct ready_entry e;
    int n;

    while (ready_pop_due(&d->ready, INT64_MAX,
                         &e)) { /* claimed, not sent: the take-over rules apply */
        limits_release(d->c->limits, e.host, e.lease);
        sa_jspull_ack(d->c->n->nc, e.h->msg, SA_JSPULL_NAK, 0);
        held_free(e.h);
    }
    if ((n = transfer_abandon_all(d->multi, d->c)) > 0)
        sa_log(SA_LOG_WARN, "sends_abandoned",
               "count=%d note=\"the drain time ran out with sends in flight: the fleet takes "
               "their tasks over as a dead member's\"",
               n);
    d->inflight -= n;
    for (struct claim_job *next; j; j = next) {
        next = j->next;
        if (j->op == CLAIM_TAKE) {
            limits_release(d->c->limits, j->host, j->lease);
            sa_jspull_ack(d->c->n->nc, j->h->msg, SA_JSPULL_NAK, 0);
            held_free(j->h);
        } else {
            j->ok = 0;
            outcome_recorded(d->c, j, 1);
        }
        free(j);
    }
}

/* At the end of the drain: the outcome writes the patient writer still has are written here,
 * on the way out (as abandon's), and what follows each runs. */
static void
patient_end(struct deliver *d)
{
    patient_stop(d->c->patient);
    for (struct claim_job *j = patient_done(d->c->patient), *next; j; j = next) {
        next = j->next;
        outcome_recorded(d->c, j, 1);
        free(j);
    }
}

void
deliver_run(struct deliver *d)
{
    struct sa_err err = {0};
    int64_t now, drain_until = 0;
    int running = 0, released = 0;

    sa_log_hold(1);
    for (;;) {
        now = sa_now_ms();
        if (wheel_take_inbox(d->c->wheel, &err) != SA_OK)
            sa_log(SA_LOG_WARN, "wheel_full", "error=\"%s\"", err.msg);
        if (atomic_load(&d->c->stopping)) {
            /* every turn: a pull answered after the first release goes back too (left in the
             * wheel, its due time kept the loop from sleeping until the drain ended) */
            size_t back = wheel_release_all(d->c->wheel);
            if (!released++) { /* from SIGTERM: this loop may have been busy for seconds */
                int64_t from = atomic_load(&d->c->stop_ms);

                drain_until = (from > 0 && from < now ? from : now) + d->c->cfg.drain_ms;
                sa_log(SA_LOG_INFO, "draining", "released=%zu inflight=%d", back, d->inflight);
            }
            if ((d->inflight == 0 && claimq_pending(d->c->claimq) == 0 &&
                 patient_pending(d->c->patient) == 0 && ready_count(&d->ready) == 0) ||
                now > drain_until)
                break;
            fire_ready(d, now); /* claimed already: sent at their due time within the drain */
        } else {
            fire_due(d, now);
        }
        periodic(d, now);
        if (now >= claimq_flush_at(d->c->claimq))
            claimq_flush(d->c->claimq); /* outcomes of the last few ms, together */
        atomic_store(&d->c->counters.inflight, d->inflight);
        sa_log_flush(); /* this turn's lines before the wait */
        curl_multi_poll(d->multi, NULL, 0, poll_timeout(d, now), NULL);
        jobs_done(d, claimq_done(d->c->claimq));   /* claims answered: their sends start now */
        jobs_done(d, patient_done(d->c->patient)); /* outcomes written late: their tasks go on */
        curl_multi_perform(d->multi, &running);
        d->inflight -= transfer_collect(d->multi, d->c);
    }
    /* the outcome writes left (abandon's, the patient writer's) share EXIT_WRITES_MS */
    atomic_store(&d->c->writes_until_ms, sa_now_ms() + EXIT_WRITES_MS);
    abandon(d, claimq_abandon(d->c->claimq));
    patient_end(d);
    sa_log_hold(0);
}
