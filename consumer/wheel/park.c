/* The park for messages that do not open (park.h): out of the levels at once, handed round
 * slowly, dead-lettered within a budget, every line of one cause summarised (logsum.h) and
 * every event counted (/metrics). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "jspull.h"
#include "keywait.h"
#include "log.h"
#include "mover.h"
#include "park.h"
#include "relay.h"
#include "deadletter.h"
#include "timeparse.h"
#include "wheel.h"

#define PARK_FAILED_WAIT_MS 1000 /* a park that failed: handed back for this long */

void
park_init(struct park *k, struct consumer *c)
{
    memset(k, 0, sizeof(*k));
    k->c = c;
    k->unknown.event = "unknown_key";
    k->parked.event = "parked";
    k->dead.event = "dead_letter";
    k->deferred.event = "dead_letter_deferred";
    k->no_smtp.event = "no_smtp";
}

void
park_tick(struct park *k, int64_t now_ms)
{
    logsum_tick(&k->unknown, now_ms);
    logsum_tick(&k->parked, now_ms);
    logsum_tick(&k->dead, now_ms);
    logsum_tick(&k->deferred, now_ms);
    logsum_tick(&k->no_smtp, now_ms);
}

static int
budget_take(struct park *k, int64_t now)
{
    if (now >= k->dead_from_ms + PARK_DEAD_EVERY_MS) {
        k->dead_from_ms = now;
        k->dead_used = 0;
    }
    if (k->dead_used >= PARK_DEAD_BUDGET)
        return 0;
    k->dead_used++;
    return 1;
}

static void
dead_letter(struct park *k, natsMsg *msg, const char *id, const char *reason, int64_t now)
{
    struct sa_err err = {0};

    if (logsum_take(&k->dead, now))
        sa_log(SA_LOG_WARN, "dead_letter", "task=%s subject=%s reason=\"%s\"", id ? id : "-",
               natsMsg_GetSubject(msg), reason);
    if (retry_dead_letter(k->c, msg, id, 0, 0, reason, &err) == SA_OK)
        sa_jspull_ack(k->c->n->nc, msg, SA_JSPULL_ACK, 0);
    else /* handed round again later */
        sa_log(SA_LOG_ERROR, "dead_letter_failed", "error=\"%s\"", err.msg);
    natsMsg_Destroy(msg);
}

/* Mid-rotation the producers and the members already reloaded seal with the newest key: the
 * main thread reads the key file again, at most every KEYWAIT_RELOAD_EVERY_MS. */
static void
ask_reload(struct park *k, int64_t now)
{
    if (now < k->reload_from_ms)
        return;
    k->reload_from_ms = now + KEYWAIT_RELOAD_EVERY_MS;
    atomic_store(&k->c->reload, 1);
    wheel_wake(k->c->wheel);
}

static void
hand_back(struct park *k, natsMsg *msg, int64_t delay)
{
    sa_jspull_ack(k->c->n->nc, msg, SA_JSPULL_NAK, delay);
    natsMsg_Destroy(msg);
}

static void to_park(struct park *k, natsMsg *msg, int shard, const char *id, const char *reason,
                    int64_t now);

void
park_unopened(struct park *k, natsMsg *msg, int shard, const char *id, int key_unknown,
              const char *reason)
{
    int64_t now = sa_now_ms();

    if (key_unknown) {
        atomic_fetch_add(&k->c->counters.key_waits, 1);
        ask_reload(k, now);
    } else if (budget_take(k, now)) {
        dead_letter(k, msg, id, reason, now);
        return;
    }
    to_park(k, msg, shard, id, reason, now);
}

/* Re-publishes msg into shard's park and acks it once stored; handed back if that fails. */
static void
to_park(struct park *k, natsMsg *msg, int shard, const char *id, const char *reason, int64_t now)
{
    char subject[SA_SUBJECT_MAX], msgid[SA_SUBJECT_MAX], seqid[32];
    struct relay_meta m;
    struct sa_err err = {0};

    if (!id) { /* a subject without a valid id: the sequence names it, as a dead letter's */
        snprintf(seqid, sizeof(seqid), "seq-%" PRIu64, relay_seq(msg));
        id = seqid;
    }
    if (logsum_take(&k->parked, now))
        sa_log(SA_LOG_WARN, "parked", "task=%s subject=%s reason=\"%s\"", id,
               natsMsg_GetSubject(msg), reason);
    relay_meta_read(msg, &m);
    sa_layout_park_subject(subject, sizeof(subject), shard, id);
    sa_layout_park_msgid(msgid, sizeof(msgid), id, relay_seq(msg));
    if (mover_send(k->c->mover, &msg, subject, msgid, &m, &err) == SA_OK)
        return; /* acked once the parked copy is stored */
    sa_log(SA_LOG_WARN, "park_failed", "task=%s error=\"%s\"", id, err.msg);
    hand_back(k, msg, PARK_FAILED_WAIT_MS);
}

/* How long ago msg was stored (parked), from its JetStream metadata; and its deliveries. */
static int64_t
parked_for(natsMsg *msg, int64_t now, uint64_t *delivered)
{
    jsMsgMetaData *meta = NULL;
    int64_t stored = now;

    *delivered = 1;
    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
        *delivered = meta->NumDelivered;
        stored = meta->Timestamp / 1000000;
    }
    jsMsgMetaData_Destroy(meta);
    return now - stored;
}

void
park_again(struct park *k, natsMsg *msg, const char *id, int key_unknown, const char *reason)
{
    int64_t now = sa_now_ms(), waited, limit = k->c->cfg.key_wait_ms, delay;
    uint64_t delivered;
    char why[sizeof(((struct sa_err *)0)->msg) + 64];

    waited = parked_for(msg, now, &delivered);
    if (key_unknown) {
        atomic_fetch_add(&k->c->counters.key_waits, 1);
        ask_reload(k, now);
    }
    if (key_unknown && waited < limit) {
        delay = keywait_delay_ms(delivered);
        if (logsum_take(&k->unknown, now))
            sa_log(SA_LOG_WARN, "unknown_key",
                   "task=%s delivered=%" PRIu64 " back_in_ms=%" PRId64 " reason=\"%s\"", id,
                   delivered, delay, reason);
        hand_back(k, msg, delay);
        return;
    }
    if (key_unknown)
        snprintf(why, sizeof(why), "%s: no fleet member held that key for %" PRId64 " s", reason,
                 limit / 1000);
    else
        snprintf(why, sizeof(why), "%s", reason);
    if (budget_take(k, now)) {
        dead_letter(k, msg, id, why, now);
        return;
    }
    delay = keywait_delay_ms(delivered); /* a junk message waited its hour: a minute */
    atomic_fetch_add(&k->c->counters.dead_deferred, 1);
    if (logsum_take(&k->deferred, now))
        sa_log(SA_LOG_WARN, "dead_letter_deferred", "task=%s reason=\"%s\" back_in_ms=%" PRId64, id,
               why, delay);
    hand_back(k, msg, delay);
}

void
park_unsendable(struct park *k, natsMsg *msg, int shard, const char *id, int parked)
{
    static const char reason[] = "email task, but this member has no SENDAT_SMTP_URL";
    int64_t now = sa_now_ms(), delay;
    uint64_t delivered;

    atomic_fetch_add(&k->c->counters.mail_left, 1);
    if (!parked) {
        to_park(k, msg, shard, id, reason, now);
        return;
    }
    parked_for(msg, now, &delivered);
    delay = keywait_delay_ms(delivered);
    if (delay > PARK_MAIL_MAX_MS)
        delay = PARK_MAIL_MAX_MS;
    if (logsum_take(&k->no_smtp, now))
        sa_log(SA_LOG_WARN, "no_smtp",
               "task=%s delivered=%" PRIu64 " back_in_ms=%" PRId64 " reason=\"%s\"", id, delivered,
               delay, reason);
    hand_back(k, msg, delay);
}
