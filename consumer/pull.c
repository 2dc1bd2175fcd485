/* The puller thread. For each message: open it (or dead-letter it with the reason), drop it
 * if cancelled, move it down to its slot if it is not due within the hold horizon (at most
 * once per level: a slot-level task is always held), else hand it to the wheel. The move is
 * acked only after the moved copy's PubAck (invariant 1), which mover.c waits for without
 * holding up the pull. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cancel.h"
#include "envelope.h"
#include "keywait.h"
#include "log.h"
#include "mover.h"
#include "pull.h"
#include "relay.h"
#include "retry.h"
#include "timeparse.h"
#include "wheel.h"

#define IDLE_POLL_MS 250 /* longest wait on one level while others may get redeliveries */
#define REFRESH_EVERY_MS 1000
#define PROBE_EVERY_MS 5000
#define MEMBER_EVERY_MS 5000
#define EMPTY_RECHECK_MS 500
#define ASK_IDLE_MS 500
#define ASK_HELD_MS 250
#define BUSY_WAIT_MS 10

static void
dead_letter(struct puller *p, natsMsg *msg, const char *id, const char *reason)
{
    struct sa_err err = {0};

    sa_log(SA_LOG_WARN, "dead_letter", "task=%s subject=%s reason=\"%s\"", id ? id : "-",
           natsMsg_GetSubject(msg), reason);
    if (retry_dead_letter(p->c, msg, id, 0, 0, reason, &err) == SA_OK)
        natsMsg_Ack(msg, NULL);
    else
        sa_log(SA_LOG_ERROR, "dead_letter_failed", "error=\"%s\"", err.msg); /* redelivered later */
    natsMsg_Destroy(msg);
}

/* Sealed with a key id this member does not hold: mid-rotation, the producers and the members
 * already reloaded seal with the newest key. Ask the main thread to read the key file again
 * and hand the task back to the fleet with a growing delay; only after an hour of that is it
 * a dead letter that names the missing key. */
static void
await_key(struct puller *p, natsMsg *msg, const char *id, const char *reason)
{
    jsMsgMetaData *meta = NULL;
    uint64_t delivered = 1;
    int64_t now = sa_now_ms(), delay;
    char why[sizeof(((struct sa_err *)0)->msg) + 64];

    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK)
        delivered = meta->NumDelivered;
    jsMsgMetaData_Destroy(meta);
    if (keywait_waited_ms(delivered, p->c->cfg.key_wait_ms) >= p->c->cfg.key_wait_ms) {
        snprintf(why, sizeof(why), "%s: no fleet member held that key for %" PRId64 " s", reason,
                 p->c->cfg.key_wait_ms / 1000);
        dead_letter(p, msg, id, why);
        return;
    }
    if (now >= p->next_key_reload_ms) {
        p->next_key_reload_ms = now + KEYWAIT_RELOAD_EVERY_MS;
        atomic_store(&p->c->reload, 1);
        wheel_wake(p->c->wheel);
    }
    delay = keywait_delay_ms(delivered);
    sa_log(SA_LOG_WARN, "unknown_key", "task=%s delivered=%" PRIu64 " back_in_ms=%" PRId64 " reason=\"%s\"",
           id, delivered, delay, reason);
    atomic_fetch_add(&p->c->counters.key_waits, 1);
    natsMsg_NakWithDelay(msg, delay, NULL);
    natsMsg_Destroy(msg);
}

static void
move_down(struct puller *p, natsMsg *msg, const struct sa_task *t, int64_t now)
{
    struct relay_meta m;
    char subject[SA_SUBJECT_MAX], msgid[SA_SUBJECT_MAX];
    struct sa_err err = {0};
    const struct sa_layout *l = &p->c->n->layout;
    int64_t slot = sa_layout_slot(l, t->due_ms);

    relay_meta_read(msg, &m);
    m.moves++;
    m.moved_ms = now;
    sa_layout_slot_subject(subject, sizeof(subject), sa_layout_window(l, t->due_ms), slot, t->id);
    sa_layout_move_msgid(msgid, sizeof(msgid), t->id, relay_seq(msg));
    if (mover_send(p->c->mover, &msg, subject, msgid, &m, &err) == SA_OK)
        return; /* acked once the moved copy is stored */
    sa_log(SA_LOG_WARN, "move_failed", "task=%s error=\"%s\"", t->id, err.msg);
    natsMsg_Nak(msg, NULL);
    natsMsg_Destroy(msg);
}

static void
hold(struct puller *p, natsMsg *msg, struct sa_task *t, int64_t now)
{
    struct held *h = calloc(1, sizeof(*h));
    struct relay_meta m;

    if (!h) { /* out of memory: nak, never drop */
        natsMsg_Nak(msg, NULL);
        natsMsg_Destroy(msg);
        sa_task_free(t);
        return;
    }
    relay_meta_read(msg, &m);
    h->msg = msg;
    h->task = t;
    h->due_ms = t->due_ms;
    h->fire_ms = t->due_ms;
    h->touched_ms = now;
    h->scheduled_ms = m.scheduled_ms;
    h->moves = m.moves;
    h->moved_ms = m.moved_ms;
    h->seq = relay_seq(msg);
    switch (wheel_post(p->c->wheel, h)) {
    case WHEEL_TAKEN: atomic_fetch_add(&p->c->counters.held, 1); return;
    case WHEEL_HELD: /* redelivered while we still hold it: the copy we hold settles it */
        sa_log(SA_LOG_DEBUG, "redelivered_while_held", "task=%s seq=%" PRIu64, t->id, h->seq);
        atomic_fetch_add(&p->c->counters.redelivered_held, 1);
        h->msg = NULL; /* neither acked nor nakked: the held copy answers for the sequence */
        natsMsg_Destroy(msg);
        break;
    case WHEEL_NOMEM: natsMsg_Nak(msg, NULL); break; /* out of memory: nak, never drop */
    }
    held_free(h);
}

static void
handle(struct puller *p, natsMsg *msg)
{
    const struct sa_layout *l = &p->c->n->layout;
    struct sa_place place;
    struct sa_task *t = NULL;
    struct sa_err err = {0};
    int64_t now = sa_now_ms();
    enum sa_code rc;
    int key_unknown;

    atomic_fetch_add(&p->c->counters.pulled, 1);
    if (sa_layout_parse_subject(&place, natsMsg_GetSubject(msg), &err) != SA_OK) {
        dead_letter(p, msg, NULL, err.msg);
        return;
    }
    pthread_rwlock_rdlock(&p->c->ring_lock);
    rc = sa_task_open(p->c->ring, place.id, (const uint8_t *)natsMsg_GetData(msg),
                      (size_t)natsMsg_GetDataLength(msg), &t, &err);
    key_unknown = rc != SA_OK && sa_envelope_key_unknown(p->c->ring, (const uint8_t *)natsMsg_GetData(msg),
                                                         (size_t)natsMsg_GetDataLength(msg));
    pthread_rwlock_unlock(&p->c->ring_lock);
    if (key_unknown) {
        await_key(p, msg, place.id, err.msg);
        return;
    }
    if (rc != SA_OK) {
        dead_letter(p, msg, place.id, err.msg);
        return;
    }
    /* A series' own occurrence is settled at its time: its cancel names the series. */
    if (cancel_contains(p->c->cancels, t->cron ? t->series_id : t->id)) {
        sa_log(SA_LOG_INFO, "dropped_cancelled", "task=%s", t->id);
        atomic_fetch_add(&p->c->counters.cancelled, 1);
        natsMsg_Ack(msg, NULL);
        natsMsg_Destroy(msg);
        sa_task_free(t);
        return;
    }
    if (place.slot == 0 && t->due_ms > now + l->slot_ms + l->lead_ms) {
        move_down(p, msg, t, now);
        sa_task_free(t);
        return;
    }
    hold(p, msg, t, now);
}

/* nats-server 2.9 treats a NoWait pull with an expiry as "wait for the first message until
 * it expires": an empty level cost 91 ms of a 100 ms expiry, and the puller visits every level
 * in turn, so a burst's slot came in at one batch per 100 ms. (An expiry of 5 ms lost the
 * burst outright.) A level that came back empty is pulled again only when its durable holds
 * undelivered tasks, or, while tasks of it are held somewhere (a holder may die and leave them
 * for redelivery, or release them at SIGTERM), every EMPTY_RECHECK_MS. A consumer info costs
 * one round trip, not 91 ms; a level nobody holds tasks of is asked every ASK_IDLE_MS (500 ms),
 * so an idle consumer stays nearly idle, one whose tasks are held every ASK_HELD_MS (250 ms). */
static int
worth_pulling(struct puller *p, struct target *t, int64_t now)
{
    jsConsumerInfo *ci = NULL;
    char durable[32];
    int worth = 1;

    if (!t->seen_empty)
        return 1;
    if (now < t->ask_ms)
        return 0;
    t->ask_ms = now + ASK_IDLE_MS;
    sa_layout_durable(durable, sizeof(durable), t->window, t->slot);
    if (js_GetConsumerInfo(&ci, p->c->n->js, SA_TASKS_STREAM, durable, NULL, NULL) == NATS_OK) {
        worth = ci->NumPending > 0 || (ci->NumAckPending > 0 && now >= t->recheck_ms);
        if (ci->NumAckPending > 0) /* held somewhere: a SIGTERM'd member's nak comes back soon */
            t->ask_ms = now + ASK_HELD_MS;
    }
    jsConsumerInfo_Destroy(ci);
    return worth;
}

static int
fetch(struct puller *p, struct target *t, int64_t wait_ms)
{
    natsMsgList list = {0};
    jsFetchRequest req;
    int64_t room = p->c->cfg.max_held - (int64_t)wheel_count(p->c->wheel);
    natsStatus s;
    int got, sharing = t->prefetch_cap >= 0 && sa_now_ms() < t->slot; /* a share before the start */

    if (sharing) {
        if (t->fetched >= t->prefetch_cap)
            return 0; /* our share is in; the rest is for the other members until the slot starts */
        if (room > t->prefetch_cap - t->fetched)
            room = t->prefetch_cap - t->fetched;
    }
    if (room <= 0 || (!sharing && atomic_load(&p->c->sender_busy)))
        return 0; /* tasks due now wait in the stream for a member with a free send */
    if (wait_ms <= 0 && !worth_pulling(p, t, sa_now_ms()))
        return 0;
    jsFetchRequest_Init(&req);
    req.Batch = room < p->c->cfg.fetch_batch ? (int)room : p->c->cfg.fetch_batch;
    req.NoWait = wait_ms <= 0;
    req.Expires = (wait_ms > 0 ? wait_ms : 100) * 1000000LL;
    s = sa_nats_fetch(&list, t->sub, &req);
    if (s == NATS_OK || s == NATS_TIMEOUT || s == NATS_NOT_FOUND)
        atomic_store(&p->c->counters.last_pull_ok_ms, sa_now_ms()); /* the stream answered */
    t->seen_empty = s == NATS_TIMEOUT || s == NATS_NOT_FOUND;
    if (t->seen_empty) {
        t->recheck_ms = sa_now_ms() + EMPTY_RECHECK_MS;
        return 0;
    }
    if (s != NATS_OK)
        return -1;
    got = list.Count;
    t->fetched += got;
    for (int i = 0; i < list.Count; i++) {
        handle(p, list.Msgs[i]);
        list.Msgs[i] = NULL; /* handle took it */
    }
    natsMsgList_Destroy(&list);
    return got;
}

/* When the next slot starts being pulled. Every fleet member wakes at that instant, so they
 * all fetch the new slot together and share it. */
static int64_t
next_activation(const struct sa_layout *l, int64_t now)
{
    return sa_layout_slot(l, now + l->lead_ms) + l->slot_ms - l->lead_ms;
}

/* Tasks in the current window fleet-wide, for the backlog gauge. */
static void
update_backlog(struct puller *p, int64_t now)
{
    jsConsumerInfo *ci = NULL;
    char durable[32];

    sa_layout_durable(durable, sizeof(durable), sa_layout_window(&p->c->n->layout, now), 0);
    if (js_GetConsumerInfo(&ci, p->c->n->js, SA_TASKS_STREAM, durable, NULL, NULL) == NATS_OK)
        atomic_store(&p->c->counters.backlog, (long)(ci->NumPending + (uint64_t)ci->NumAckPending));
    jsConsumerInfo_Destroy(ci);
}

/* Says "alive" in the members bucket with this process's instance id (its TTL forgets the
 * dead; a restart under the same name shows as a new instance) and counts the fleet. */
static void
members_beat(struct puller *p)
{
    kvKeysList keys = {0};
    uint64_t rev;

    if (!p->members)
        return;
    kvStore_PutString(&rev, p->members, p->c->cfg.name, p->c->instance);
    if (kvStore_Keys(&keys, p->members, NULL) == NATS_OK && keys.Count > 0)
        p->fleet_size = keys.Count;
    kvKeysList_Destroy(&keys);
}

static void
housekeeping(struct puller *p, int64_t now)
{
    int64_t act = next_activation(&p->c->n->layout, now);

    if (now >= p->next_refresh_ms) {
        targets_refresh(p, now);
        targets_reap(p, now);
        p->next_refresh_ms = now + REFRESH_EVERY_MS < act ? now + REFRESH_EVERY_MS : act;
    }
    if (now >= p->next_member_ms) {
        members_beat(p);
        p->next_member_ms = now + MEMBER_EVERY_MS;
    }
    if (now >= p->next_probe_ms) {
        targets_probe(p, now);
        update_backlog(p, now);
        p->next_probe_ms = now + PROBE_EVERY_MS;
    }
}

/* One pass: every level without waiting, oldest first; if nothing came, wait on the current
 * window level (where new tasks arrive) until the next refresh. */
static void
pass(struct puller *p)
{
    int64_t now = sa_now_ms(), current = sa_layout_window(&p->c->n->layout, now);
    int got = 0, primary = -1;
    int64_t wait;

    housekeeping(p, now);
    for (int i = 0; i < p->n && !atomic_load(&p->c->stopping); i++) {
        int n = fetch(p, &p->t[i], 0);
        got += n > 0 ? n : 0;
        if (p->t[i].window == current && p->t[i].slot == 0)
            primary = i;
    }
    if (got > 0 || atomic_load(&p->c->stopping))
        return;
    if (atomic_load(&p->c->sender_busy) || wheel_count(p->c->wheel) >= (size_t)p->c->cfg.max_held) {
        struct timespec ts = {0, BUSY_WAIT_MS * 1000000L}; /* until a send ends or room frees */
        nanosleep(&ts, NULL);
        return;
    }
    wait = p->next_refresh_ms - sa_now_ms();
    if (wait < 1)
        return;
    if (primary < 0 || fetch(p, &p->t[primary], wait < IDLE_POLL_MS ? wait : IDLE_POLL_MS) < 0) {
        struct timespec ts = {0, 200 * 1000000L}; /* no level to wait on, or no broker: back off */
        nanosleep(&ts, NULL);
    }
}

static void *
pull_loop(void *arg)
{
    struct puller *p = arg;

    while (!atomic_load(&p->c->stopping))
        pass(p);
    return NULL; /* subscriptions stay: held and in-flight messages ack through them */
}

enum sa_code
pull_start(struct puller *p, struct consumer *c, struct sa_err *err)
{
    memset(p, 0, sizeof(*p));
    p->c = c;
    p->fleet_size = 1;
    if (js_KeyValue(&p->members, c->n->js, SA_MEMBERS_BUCKET) != NATS_OK)
        sa_log(SA_LOG_WARN, "no_members_bucket", "error=\"run sendat init: bursts are shared less evenly\"");
    members_beat(p);
    c->members = p->members; /* the sender asks it whether a claim's holder still lives */
    if (pthread_create(&p->thread, NULL, pull_loop, p) != 0)
        return sa_fail(err, SA_ENOMEM, "cannot start the puller thread");
    return SA_OK;
}

void
pull_join(struct puller *p)
{
    pthread_join(p->thread, NULL);
}

void
pull_close(struct puller *p)
{
    targets_close(p);
    if (p->members)
        kvStore_Delete(p->members, p->c->cfg.name); /* leaving: the others share without us */
    kvStore_Destroy(p->members);
}
