/* Taking and finishing claims. A claim "sending" that we did not write means the previous
 * holder's ack wait ran out (it died or stalled), or is a write of this process whose answer
 * was lost and whose copy of the task is gone: at-least-once takes it over and resends with
 * the same webhook-id, at-most-once dead-letters it as "outcome unknown". A task due further
 * back than the ledger remembers is never claimed: its claim may have expired after a send,
 * and anyone can publish a captured sealed task again (invariant 2). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define OUTCOME_PATIENCE_MS 15000

#include "claims.h"
#include "log.h"
#include "members.h"
#include "timeparse.h"

enum sa_code
claims_read_ttl(struct consumer *c, struct sa_err *err)
{
    kvStatus *st = NULL;
    natsStatus s = kvStore_Status(&st, c->n->claims[0]); /* every shard's alike */

    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read the claims bucket's TTL");
    c->claims_ttl_ms = kvStatus_TTL(st) / 1000000; /* the stream's MaxAge, in ns */
    kvStatus_Destroy(st);
    return SA_OK;
}

int
claims_forgotten(const struct consumer *c, const struct held *h, int64_t now_ms, char *why,
                 size_t cap)
{
    int64_t memory = sa_claim_memory_ms(c->claims_ttl_ms);
    char ago[32], ttl[32], margin[32];

    if (now_ms - h->due_ms <= memory)
        return 0;
    sa_duration_format(ago, sizeof(ago), now_ms - h->due_ms);
    sa_duration_format(ttl, sizeof(ttl), c->claims_ttl_ms);
    sa_duration_format(margin, sizeof(margin), c->claims_ttl_ms - memory);
    snprintf(why, cap,
             "due %s ago, longer than the claim ledger remembers (%s less a %s margin): "
             "refusing a possible replay; `sendat dlq replay` sends it again",
             ago, ttl, margin);
    return 1;
}

void
claims_fill(struct sa_claim *c, const struct consumer *k, const struct held *h,
            enum sa_claim_state st)
{
    memset(c, 0, sizeof(*c));
    c->state = st;
    c->at_ms = sa_now_ms();
    snprintf(c->consumer, sizeof(c->consumer), "%s", k->cfg.name);
    snprintf(c->instance, sizeof(c->instance), "%s", k->instance);
    c->attempt = h->task->attempt;
    c->due_ms = h->task->first_due_ms ? h->task->first_due_ms : h->due_ms; /* a retry's first */
    c->scheduled_ms = h->scheduled_ms;
    c->booked_ms = h->task->created_ms;
    c->moves = h->moves;
    c->moved_ms = h->moved_ms;
    c->channel = (int)h->task->channel;
}

void
claims_fill_take(struct sa_claim *rec, const struct consumer *c, struct held *h)
{
    claims_fill(rec, c, h, SA_CLAIM_SENDING);
    if (c->claiming_hook)
        c->claiming_hook(h); /* before the write: its answer may be lost */
    if (!h->write_id[0]) {
        sa_claim_stamp(rec);
        snprintf(h->write_id, sizeof(h->write_id), "%s", rec->write_id);
    } else {
        snprintf(rec->write_id, sizeof(rec->write_id), "%s", h->write_id);
    }
}

/* A claim "sending" whose holder process still lives is a send in progress (its message came
 * back because the holder was slow, or a second copy reached us): never send it a second
 * time. A holder is dead only by its own silence: the server said no one answers on its
 * liveness subject for three beats on end (its connection is gone), or it did not answer at
 * all for 20 s (hung), see members.c. What the members bucket says never makes it dead.
 * This very process holds it only while another copy of the task (not h) is claimed here
 * (wheel_claiming, through c->claiming_hook): a claim of ours with none is one whose answer was
 * lost and whose copy was handed back since (a claims bucket that did not answer for 20 s, a server
 * wedged by a full disk), and is stale as a dead member's. */
/* Whether cur is a "sending" given back by its holder: an attempt that failed before any byte of
 * its request left (certain not to have arrived, in either mode) whose retry the task stream
 * refused (outcome.c finish_retry); its redelivery takes it over and sends, also at-most-once. */
static int
given_back(const struct sa_claim *cur)
{
    return !cur->consumer[0] && !cur->instance[0];
}

static int
holder_alive(struct consumer *c, const struct held *h, const struct sa_claim *cur)
{
    if (given_back(cur))
        return 0;
    if (cur->instance[0] && !strcmp(cur->instance, c->instance))
        return c->claimed_elsewhere_hook ? c->claimed_elsewhere_hook(h) : 1;
    if (!c->members || (!cur->instance[0] && !strcmp(cur->consumer, c->cfg.name)))
        return 0; /* an old record under our name: a predecessor that died */
    return members_holder_alive(c->members, cur->consumer, cur->instance);
}

static enum take
take_over(struct consumer *c, struct held *h, const struct sa_claim *cur, uint64_t *rev)
{
    struct sa_claim mine;
    struct sa_err err = {0};
    enum sa_code rc;

    if (cur->state == SA_CLAIM_SENDING && holder_alive(c, h, cur))
        return TAKE_LATER;
    if (cur->state == SA_CLAIM_SENDING && !strcmp(cur->instance, c->instance))
        sa_log(SA_LOG_INFO, "own_claim_stale", "task=%s at_most_once=%d", h->task->id,
               h->task->at_most_once);
    if (cur->state == SA_CLAIM_SENDING && h->task->at_most_once && !given_back(cur))
        return TAKE_UNKNOWN;
    claims_fill_take(&mine, c, h);
    rc = sa_claim_update(sa_nats_claims(c->n, h->task->id), h->task->id, &mine, cur->revision, rev,
                         &err);
    if (rc == SA_OK)
        return TAKE_SEND;
    /* someone wrote first: another member, or a client's junk, which must not make the task
     * skipped; the next delivery reads what it was */
    return rc == SA_EEXIST ? TAKE_LATER : TAKE_AGAIN;
}

/* No record under a DEL or PURGE marker: nobody holds the task, so take it by an update on the
 * marker's revision (exactly one writer wins, as a create). */
static enum take
take_marked(struct consumer *c, struct held *h, const struct sa_claim *marker, uint64_t *rev)
{
    struct sa_claim mine;
    struct sa_err err = {0};
    enum sa_code rc;

    claims_fill_take(&mine, c, h);
    rc = sa_claim_update(sa_nats_claims(c->n, h->task->id), h->task->id, &mine, marker->revision,
                         rev, &err);
    if (rc == SA_OK)
        return TAKE_SEND;
    if (rc != SA_EEXIST) {
        sa_log(SA_LOG_WARN, "claim_failed", "task=%s error=\"%s\"", h->task->id, err.msg);
        return TAKE_AGAIN;
    }
    return TAKE_LATER; /* someone wrote first: its record decides the next delivery */
}

/* The allowance for clocks apart when a record's signed time is read against the claims TTL:
 * a tenth of it, at most SA_CLAIMS_MARGIN_MAX_MS (as sa_claim_memory_ms). */
static int64_t
ttl_margin(int64_t ttl)
{
    return ttl / 10 < SA_CLAIMS_MARGIN_MAX_MS ? ttl / 10 : SA_CLAIMS_MARGIN_MAX_MS;
}

/* Whether seen, an authentic record, was written longer ago than the bucket keeps a record
 * (its TTL, and a tenth more, at most an hour, for clocks apart): the server removed it by
 * then, so what the key holds now was put back by a client (a replay, which needs no key) and
 * decides nothing; any record under it is older still. Records `sendat cancel` writes carry
 * no booking (it does not open the task), so this is what keeps a replayed "cancelled" of an
 * earlier booking from stopping the id's next one. */
static int
outlived(const struct consumer *c, const struct sa_claim *seen)
{
    int64_t ttl = c->claims_ttl_ms;

    if (ttl <= 0 || seen->state == SA_CLAIM_NONE || !seen->at_ms)
        return 0;
    return sa_now_ms() - seen->at_ms > ttl + ttl_margin(ttl);
}

/* Whether seen is a "cancelled" naming no booking (`sendat cancel` does not open the task)
 * written before h's booking was sealed, by more than clocks apart can explain (as for the
 * cancel map, sa_cancel_applies): producers refuse an id while its claim lives, so a booking
 * sealed after such a record was made once it had expired, and the record under the key now
 * was put back (a replay), also in the stretch before `outlived` would say so. */
static int
cancel_before_booking(const struct consumer *c, const struct held *h, const struct sa_claim *seen)
{
    return seen->state == SA_CLAIM_CANCELLED && !seen->booked_ms && seen->at_ms &&
           c->claims_ttl_ms > 0 &&
           !sa_cancel_applies(seen->at_ms, h->task->created_ms, c->claims_ttl_ms);
}

/* Whether the id's claim holds a record of another booking of it written within the claims
 * TTL and its allowance for clocks apart (then seen->error says so). Such a record is no replay: a
 * replay of a record comes after the TTL freed the id, since producers refuse an id while its claim
 * lives. So the other booking was stored while this one waited (the id booked again after the
 * dedupe window) and holds the id: sending this one too would send the id twice. */
static int
other_booking_live(const struct consumer *c, struct sa_claim *seen)
{
    int64_t age = sa_now_ms() - seen->other_booking_at_ms;
    char when[40];

    if (!seen->other_booking_at_ms ||
        (c->claims_ttl_ms > 0 && age > c->claims_ttl_ms + ttl_margin(c->claims_ttl_ms)))
        return 0; /* the same allowance as outlived: when in doubt, not sent twice */
    sa_time_format(when, sizeof(when), seen->other_booking_at_ms);
    snprintf(seen->error, sizeof(seen->error),
             "another booking holds this id (claim written %.32s): booked again while "
             "this booking waited; not sent, so the id goes once",
             when);
    return 1;
}

/* What the consumer's rules say alone of an authentic record of h's booking (sa_claim_stale_fn):
 * put back by a client, by its signed time. */
struct stale_args {
    const struct consumer *c;
    const struct held *h;
};

static int
stale(const struct sa_claim *rec, void *arg)
{
    const struct stale_args *a = arg;

    return outlived(a->c, rec) || cancel_before_booking(a->c, a->h, rec);
}

/* Reads h's claim into seen: the last record (or, under markers, junk and another booking's
 * records, the newest authentic one of h's booking). Unless that is final by itself (sent,
 * cancelled, dead, skipped, and not put back by its signed time), which is the common case and
 * costs one get, the key's whole history is read and replays passed over too (sa_claim_get_live):
 * a record that can lead to a send must not be one a client put back, such as a "sending"
 * copied over its "sent" (the holder then looks dead or, when ours, stale: sent twice). */
static enum sa_code
read_claim(struct consumer *c, struct held *h, const char *write_id, struct sa_claim *seen,
           struct sa_err *err)
{
    kvStore *kv = sa_nats_claims(c->n, h->task->id);
    struct stale_args a = {c, h};
    enum sa_code rc = sa_claim_get_for(c->n->js, kv, h->task->id, h->task->created_ms, seen, err);
    struct sa_claim live;
    struct sa_err herr = {0};

    if (rc != SA_OK || (seen->state != SA_CLAIM_NONE && seen->state != SA_CLAIM_SENDING &&
                        seen->state != SA_CLAIM_RETRYING && !stale(seen, &a)))
        return rc;
    if (write_id && write_id[0] && !strcmp(seen->write_id, write_id))
        return rc; /* the write we just made (its answer lost): no client can have put it back */
    rc = sa_claim_get_live(c->n->js, kv, h->task->id, h->task->created_ms, stale, &a, &live, &herr);
    if (rc == SA_OK || rc == SA_EINVAL) {
        *seen = live;
        if (rc == SA_EINVAL)
            sa_fail(err, SA_EINVAL, "%s", herr.msg);
        return rc;
    }
    /* The history did not read (no direct get is answered while the claims bucket elects a
     * leader): the last record decides, as it did before histories were read, rather than
     * holding the task. */
    sa_log(SA_LOG_WARN, "claim_history_unread", "task=%s error=\"%s\"", h->task->id, herr.msg);
    return SA_OK;
}

/* The claim exists: ours if it carries our write id (a write whose answer was lost), else
 * the rules of who may take it over. A DEL or PURGE marker, junk (a record the key ring
 * does not authenticate, claimmac.h) or a replay (an authentic record put back, read_claim)
 * hides nothing it did not hide before: the authentic record under it (from the key's history)
 * decides, and with none the task is free: it is taken over by an update on the last revision,
 * and the junk or replay logged (junk_claim). An authentic record that does not decode, a state
 * this version does not know, or junk or replays filling the whole history the bucket keeps is
 * dead-lettered: it may lie over a member's real send, so sending could repeat it. */
enum take
claims_resolve(struct consumer *c, struct held *h, const char *write_id, uint64_t *rev,
               struct sa_claim *seen)
{
    struct sa_err err = {0};
    enum sa_code rc = read_claim(c, h, write_id, seen, &err);

    if (rc == SA_EINVAL) {
        uint64_t at = seen->revision;
        memset(seen, 0, sizeof(*seen));
        seen->revision = at;
        snprintf(seen->error, sizeof(seen->error), "claim record unreadable: %.150s", err.msg);
        return TAKE_UNREADABLE;
    }
    if (rc != SA_OK) {
        sa_log(h->claim_tries ? SA_LOG_DEBUG : SA_LOG_WARN, "claim_failed", "task=%s error=\"%s\"",
               h->task->id, err.msg);
        return TAKE_AGAIN;
    }
    if (seen->junk_above) /* a keyless writer's records: what lies under them decides */
        sa_log(SA_LOG_WARN, "junk_claim", "task=%s junk=%d under=%s", h->task->id, seen->junk_above,
               sa_claim_state_name(seen->state));
    if (seen->replays_above) /* the same: authentic records put back, no key needed */
        sa_log(SA_LOG_WARN, "junk_claim", "task=%s replayed=%s count=%d under=%s", h->task->id,
               sa_claim_state_name(seen->replay_state), seen->replays_above,
               sa_claim_state_name(seen->state));
    if (write_id && write_id[0] && !strcmp(seen->write_id, write_id)) {
        *rev = seen->revision;
        return TAKE_SEND;
    }
    if (seen->state == SA_CLAIM_NONE && other_booking_live(c, seen))
        return TAKE_OTHER_BOOKING;
    switch (seen->state) {
    case SA_CLAIM_NONE: /* a marker, junk or replays with nothing under them */
        return take_marked(c, h, seen, rev);
    case SA_CLAIM_SENDING: /* its holder's ack wait ran out; a newer attempt never yields */
        return seen->attempt > h->task->attempt ? TAKE_SKIP : take_over(c, h, seen, rev);
    case SA_CLAIM_RETRYING:
        return seen->attempt < h->task->attempt ? take_over(c, h, seen, rev) : TAKE_SKIP;
    default:
        return TAKE_SKIP; /* sent, cancelled, dead */
    }
}

enum take
claims_take(struct consumer *c, struct held *h, uint64_t *rev, struct sa_claim *seen)
{
    struct sa_claim mine;
    struct sa_err err = {0};
    enum sa_code rc;

    claims_fill_take(&mine, c, h);
    rc = sa_claim_create(sa_nats_claims(c->n, h->task->id), h->task->id, &mine, rev, &err);
    if (rc == SA_OK)
        return TAKE_SEND;
    if (rc != SA_EEXIST) {
        sa_log(h->claim_tries ? SA_LOG_DEBUG : SA_LOG_WARN, "claim_failed", "task=%s error=\"%s\"",
               h->task->id, err.msg);
        return TAKE_AGAIN;
    }
    return claims_resolve(c, h, h->write_id, rev, seen);
}

void
claims_outcome(struct sa_claim *rec, const struct consumer *c, const struct held *h,
               enum sa_claim_state state, int http_status, const char *error, int64_t lateness_ms)
{
    claims_fill(rec, c, h, state);
    rec->http_status = http_status;
    rec->lateness_ms = lateness_ms;
    snprintf(rec->error, sizeof(rec->error), "%s", error ? error : "");
}

/* After an outcome's update found the key moved on: the revision to write the outcome over when
 * all that came since is markers or junk (a client's DEL or keyless record, which hide nothing: our
 * "sending" under them is still the newest authentic record of the task), else 0 (another member
 * took the task over, nothing was written since rev, or the key did not read). Without
 * this a DEL written while the request was out left the claim at "sending" for ever: the task was
 * sent once, and its status never said so. */
static uint64_t
over_markers(struct consumer *c, struct held *h, uint64_t rev)
{
    struct sa_claim seen;
    struct sa_err err = {0};

    if (!h->write_id[0] || sa_claim_get_for(c->n->js, sa_nats_claims(c->n, h->task->id),
                                            h->task->id, h->task->created_ms, &seen, &err) != SA_OK)
        return 0;
    if (seen.state != SA_CLAIM_SENDING || strcmp(seen.write_id, h->write_id) ||
        seen.revision == rev) /* nothing written since: the update failed for another reason */
        return 0;
    sa_log(SA_LOG_WARN, "junk_claim", "task=%s junk=%d over=sending outcome=written_over",
           h->task->id, seen.junk_above);
    return seen.revision;
}

enum sa_code
claims_finish(struct consumer *c, struct held *h, uint64_t rev, enum sa_claim_state state,
              int http_status, const char *error, int64_t lateness_ms)
{
    struct sa_claim mine;
    struct sa_err err = {0};
    int64_t until = sa_now_ms() + OUTCOME_PATIENCE_MS;

    claims_outcome(&mine, c, h, state, http_status, error, lateness_ms);
    /* The outcome must reach the ledger: without "sent" a redelivery would send again. Never
     * on the sending thread: the patient writer (patient.h) calls this, or the exit. On the
     * way out every write shares one deadline (deliver_run sets it, also while a write is
     * under way): with the broker gone, 15 s for each would keep the process past any stop
     * timeout. */
    while (sa_now_ms() < until) {
        int64_t last = atomic_load(&c->writes_until_ms);

        if (last && last < until && (until = last) <= sa_now_ms())
            break;
        struct timespec pause = {0, 200 * 1000000L};
        sa_err_clear(&err);
        if (natsConnection_Status(c->n->nc) != NATS_CONN_STATUS_CONNECTED) {
            /* a write now would wait out its whole timeout (5 s and more) past the deadline */
            sa_fail(&err, SA_ERETRY, "not connected to the server");
            nanosleep(&pause, NULL);
            continue;
        }
        enum sa_code rc = rev ? sa_claim_update(sa_nats_claims(c->n, h->task->id), h->task->id,
                                                &mine, rev, NULL, &err)
                              : sa_claim_create(sa_nats_claims(c->n, h->task->id), h->task->id,
                                                &mine, NULL, &err);
        uint64_t over = rev && rc != SA_OK && rc != SA_EINVAL ? over_markers(c, h, rev) : 0;
        if (over) { /* a DEL marker reads as a failed update, junk as another's write */
            rev = over;
            continue;
        }
        if (rc == SA_OK || rc == SA_EEXIST || rc == SA_EINVAL)
            return SA_OK;
        sa_log_flush(); /* this thread's held lines do not wait out the broker's absence */
        nanosleep(&pause, NULL);
    }
    if (!err.msg[0])
        sa_fail(&err, SA_ERETRY, "the time for writes on the way out had run out");
    sa_log(SA_LOG_WARN, "claim_update_failed", "task=%s state=%s error=\"%s\"", h->task->id,
           sa_claim_state_name(state), err.msg);
    return SA_ERETRY;
}

const char *
claims_unknown_why(const struct consumer *c, const struct sa_claim *seen, char *why, size_t cap)
{
    if (!strcmp(seen->instance, c->instance))
        return "outcome unknown: this consumer's own claim, whose answer was lost, and no copy "
               "of it in flight here (at-most-once)";
    snprintf(why, cap,
             "outcome unknown: claimed by %.64s (instance %.23s), which no longer answers: it "
             "died or stopped before its outcome was recorded, maybe after sending (at-most-once)",
             seen->consumer[0] ? seen->consumer : "?", seen->instance[0] ? seen->instance : "?");
    return why;
}
