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
#include "jspull.h"
#include "liveness.h"
#include "log.h"
#include "members.h"
#include "mover.h"
#include "park.h"
#include "pull_prepare.h"
#include "pull.h"
#include "relay.h"
#include "timeparse.h"
#include "wheel.h"

#define REFRESH_EVERY_MS 1000
#define PROBE_EVERY_MS 5000
/* The backlog gauge asks for a count that nats-server 2.9 computes by walking every stored
 * subject (0.1 s of its CPU with 1,000,000 waiting): a gauge need not be fresher. */
#define BACKLOG_EVERY_MS 30000
#define MEMBER_EVERY_MS 1000 /* a beat, and a probe of the others */
#define BROKEN_WAIT_MS 100
/* A rescue also covers the levels this member takes up in the next seconds: one found dead at
 * start is rescued before this member pulls a level whose durable is still being made. */
#define RESCUE_LATE_MS 5000
#define GONE_WAIT_MS 250   /* is a dead member still connected: "no responders" comes at once */
#define CLOSE_WAIT_MS 2000 /* the drain's flush: a round trip, unless the server is gone */
#define CLOSE_POLL_MS 50

static void
move_down(struct puller *p, natsMsg *msg, const struct sa_task *t, int64_t now)
{
    struct relay_meta m;
    char subject[SA_SUBJECT_MAX], msgid[SA_SUBJECT_MAX];
    struct sa_err err = {0};

    relay_meta_read(msg, &m);
    m.moves++;
    m.moved_ms = now;
    relay_subject(p->c, subject, sizeof(subject), t->due_ms, t->id);
    sa_layout_move_msgid(msgid, sizeof(msgid), t->id, relay_seq(msg));
    if (mover_send(p->c->mover, &msg, subject, msgid, &m, &err) == SA_OK)
        return; /* acked once the moved copy is stored */
    sa_log(SA_LOG_WARN, "move_failed", "task=%s error=\"%s\"", t->id, err.msg);
    sa_jspull_ack(p->c->n->nc, msg, SA_JSPULL_NAK, 0);
    natsMsg_Destroy(msg);
}

static void
hold(struct puller *p, natsMsg *msg, struct sa_task *t, int64_t now)
{
    struct held *h = calloc(1, sizeof(*h));
    struct relay_meta m;

    if (!h) { /* out of memory: nak, never drop */
        sa_jspull_ack(p->c->n->nc, msg, SA_JSPULL_NAK, 0);
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
    case WHEEL_TAKEN:
        atomic_fetch_add(&p->c->counters.held, 1);
        return;
    case WHEEL_HELD: /* redelivered while we still hold it: the copy we hold settles it */
        sa_log(SA_LOG_DEBUG, "redelivered_while_held", "task=%s seq=%" PRIu64, t->id, h->seq);
        atomic_fetch_add(&p->c->counters.redelivered_held, 1);
        h->msg = NULL; /* neither acked nor nakked: the held copy answers for the sequence */
        natsMsg_Destroy(msg);
        break;
    case WHEEL_NOMEM: /* out of memory: nak, never drop */
        sa_jspull_ack(p->c->n->nc, msg, SA_JSPULL_NAK, 0);
        break;
    }
    held_free(h);
}

/* Opens msg into *t; a message that does not open goes to the park (park.h) and 0 is returned. */
static int
open_or_park(struct puller *p, natsMsg *msg, const struct sa_place *place, int parked,
             struct sa_task **t)
{
    struct sa_err err = {0};
    enum sa_code rc;
    int key_unknown;

    pthread_rwlock_rdlock(&p->c->ring_lock);
    rc = sa_task_open(p->c->ring, place->id, (const uint8_t *)natsMsg_GetData(msg),
                      (size_t)natsMsg_GetDataLength(msg), t, &err);
    key_unknown =
        rc != SA_OK && sa_envelope_key_unknown(p->c->ring, (const uint8_t *)natsMsg_GetData(msg),
                                               (size_t)natsMsg_GetDataLength(msg));
    pthread_rwlock_unlock(&p->c->ring_lock);
    if (rc == SA_OK)
        return 1;
    if (parked)
        park_again(&p->park, msg, place->id, key_unknown, err.msg);
    else
        park_unopened(&p->park, msg, place->shard, place->id, key_unknown, err.msg);
    return 0;
}

static void
handle(struct puller *p, natsMsg *msg)
{
    const struct sa_layout *l = &p->c->n->layout;
    struct sa_place place = {0};
    struct sa_task *t = NULL;
    struct sa_err err = {0};
    int64_t now = sa_now_ms();
    int parked = sa_layout_is_park(natsMsg_GetSubject(msg), place.id);

    atomic_fetch_add(&p->c->counters.pulled, 1);
    if (parked) /* a parked task that opens goes on as if it came from its window */
        place.shard = sa_layout_shard_of(l, place.id);
    else if (sa_layout_parse_subject(&place, natsMsg_GetSubject(msg), &err) != SA_OK) {
        park_unopened(&p->park, msg, place.shard, NULL, 0, err.msg);
        return;
    }
    if (!open_or_park(p, msg, &place, parked, &t))
        return;
    /* A series' own occurrence is settled at its time: its cancel names the series. A task's
     * cancel applies to tasks sealed before it, not to one booked once its id was free. */
    if (t->cron ? cancel_contains(p->c->cancels, t->series_id)
                : cancel_applies(p->c->cancels, t->id, t->created_ms)) {
        sa_log(SA_LOG_INFO, "dropped_cancelled", "task=%s", t->id);
        atomic_fetch_add(&p->c->counters.cancelled, 1);
        sa_jspull_ack(p->c->n->nc, msg, SA_JSPULL_ACK, 0);
        natsMsg_Destroy(msg);
        sa_task_free(t);
        return;
    }
    if (place.slot == 0 && t->due_ms > now + l->slot_ms + l->lead_ms) {
        move_down(p, msg, t, now);
        sa_task_free(t);
        return;
    }
    if (t->channel == SA_CHANNEL_EMAIL && !p->c->cfg.smtp.url[0]) {
        park_unsendable(&p->park, msg, place.shard, t->id, parked);
        sa_task_free(t);
        return;
    }
    hold(p, msg, t, now);
}

/* When the next slot starts being pulled. Every fleet member wakes at that instant, so they
 * all fetch the new slot together and share it. */
static int64_t
next_activation(const struct sa_layout *l, int64_t now)
{
    return sa_layout_slot(l, now + l->lead_ms) + l->slot_ms - l->lead_ms;
}

/* Tasks in the current window fleet-wide, of the shards this member serves, for the backlog
 * gauge. A shard whose durable does not answer keeps the gauge as it was. */
static void
update_backlog(struct puller *p, int64_t now)
{
    char durable[32];
    long backlog = 0;

    sa_layout_durable(durable, sizeof(durable), sa_layout_window(&p->c->n->layout, now), 0);
    for (int k = 0; k < p->nsv; k++) {
        jsConsumerInfo *ci = NULL;

        if (js_GetConsumerInfo(&ci, p->c->n->js, p->sv[k].stream, durable, NULL, NULL) != NATS_OK)
            return;
        backlog += (long)(ci->NumPending + (uint64_t)ci->NumAckPending);
        jsConsumerInfo_Destroy(ci);
    }
    atomic_store(&p->c->counters.backlog, backlog);
}

/* What a beat tells `sendat stats` and the console about this member: what it holds, has in
 * flight and has done, whether it can send mail (and how often it left an email task to the
 * others), and its last hour minute by minute (pull_recent.h). */
static void
members_facts(struct puller *p, int64_t now, char *out, size_t n)
{
    struct consumer *c = p->c;
    int len;

    recent_tick(&p->recent, &c->counters, now);
    len = snprintf(out, n,
                   "{\"held\":%zu,\"in_flight\":%ld,\"sent\":%ld,\"retried\":%ld,\"dead\":%ld,"
                   "\"mail\":%s,\"mail_left\":%ld,",
                   wheel_count(c->wheel), atomic_load(&c->counters.inflight),
                   counters_sum(c->counters.sent), counters_sum(c->counters.retried),
                   counters_sum(c->counters.dead), c->cfg.smtp.url[0] ? "true" : "false",
                   atomic_load(&c->counters.mail_left));
    if (len < 0 || (size_t)len >= n ||
        recent_json(&p->recent, &c->counters, out + len, n - (size_t)len - 1) < 0)
        snprintf(out, n, "{}"); /* cannot happen with MEMBERS_FACTS_MAX: say nothing */
    else
        strcat(out, "}");
}

/* Whether the dead instance is gone from the server: its liveness subject has no listener, so
 * its connection, and with it every pull request it left open, is gone. A member found dead by
 * its silence (hung, SIGSTOP) may still be connected with requests open: a reset would leave
 * them in place and the server would hand the tasks straight back to it (it_failover saw them
 * 79 s late), so its levels are made anew, which drops those requests. */
static int
gone_from_server(struct puller *p, const char *instance)
{
    char subject[96];
    natsMsg *reply = NULL;
    natsStatus s;

    liveness_subject(subject, sizeof(subject), instance);
    s = natsConnection_Request(&reply, p->c->n->nc, subject, "", 0, GONE_WAIT_MS);
    natsMsg_Destroy(reply);
    return s == NATS_NO_RESPONDERS;
}

/* Says "alive", probes the others, and hands back at once what a member found dead held: for
 * each shard, the one member serving it that wins the shard's rescue makes the server deliver
 * that shard's levels' unacked tasks again (members may serve different shards). */
static void
beat(struct puller *p, int64_t now)
{
    char dead[MEMBERS_INSTANCE_MAX], facts[MEMBERS_FACTS_MAX];

    members_facts(p, now, facts, sizeof(facts));
    members_beat(p->members, now, facts);
    while (members_take_dead(p->members, dead, sizeof(dead))) { /* also those found at start */
        int gone = -1;                                          /* asked once it is needed */
        for (int k = 0; k < p->nsv; k++)
            if (members_won_rescue(p->members, dead, p->sv[k].shard)) {
                if (gone < 0)
                    gone = (p->c->n->feat.have & SA_JSFEAT_RESET) && gone_from_server(p, dead);
                p->sv[k].rescue_until_ms = now + RESCUE_LATE_MS;
                p->sv[k].rescue_reset = gone;
                sa_log(SA_LOG_WARN, "member_rescued", "instance=%s stream=%s levels_redelivered=%d",
                       dead, p->sv[k].stream, targets_redeliver(p, &p->sv[k]));
            }
    }
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
        beat(p, now);
        p->next_member_ms = now + MEMBER_EVERY_MS;
    }
    if (now >= p->next_probe_ms) {
        targets_probe(p, now);
        p->next_probe_ms = now + PROBE_EVERY_MS;
    }
    if (now >= p->next_backlog_ms) {
        update_backlog(p, now);
        p->next_backlog_ms = now + BACKLOG_EVERY_MS;
    }
    if (atomic_exchange(&p->c->keys_gained, 0)) /* what waited for a key comes round at once */
        for (int k = 0; k < p->nsv; k++)
            sa_log(SA_LOG_INFO, "park_redelivered", "stream=%s levels=%d", p->sv[k].stream,
                   targets_redeliver_park(p, &p->sv[k]));
    park_tick(&p->park, now);
}

/* Requests die with the connection: after a reconnect (a server restart, a cluster election)
 * every level is asked again at once instead of after its heartbeat goes missing. */
static void
check_reconnect(struct puller *p)
{
    long r = atomic_load(p->c->n->reconnects);

    if (r == p->reconnects)
        return;
    p->reconnects = r;
    asks_forget(p);
    sa_log(SA_LOG_INFO, "pull_requests_renewed", "reconnects=%ld levels=%d", r, p->n);
}

/* One turn: housekeeping, a request to every level that needs one, then one message. */
static void
pass(struct puller *p)
{
    int64_t now = sa_now_ms(), wait, refresh;
    natsMsg *msg = NULL;
    natsStatus s;

    housekeeping(p, now);
    check_reconnect(p);
    wait = asks_send(p, now);
    refresh = p->next_refresh_ms - now;
    if (refresh < wait)
        wait = refresh > 0 ? refresh : 1;
    s = natsSubscription_NextMsg(&msg, p->inbox, wait);
    if (s == NATS_TIMEOUT)
        return;
    if (s != NATS_OK) {
        struct timespec ts = {0, BROKEN_WAIT_MS * 1000000L}; /* the connection is closing */
        nanosleep(&ts, NULL);
        return;
    }
    now = sa_now_ms();
    atomic_store(&p->c->counters.last_pull_ok_ms, now); /* the stream answered */
    if (asks_answer(p, msg, now))
        handle(p, msg);
}

/* Hands back what the server sent to this member's requests and the puller did not take. A
 * drain unsubscribes and then flushes: once the server answers the flush it has dropped the
 * interest, and with it every open request, and everything it routed to the inbox before
 * that is queued here (nats.c 3.4 refuses reads after a plain unsubscribe, so those were
 * dropped before). The naks go out after the unsubscribe on the same connection, so none of
 * these tasks can be handed to us again. Left to the ack wait or the rescue of this member:
 * only a task the server picked for one of our requests just before the unsubscribe reached
 * it and routed just after (its pull protocol cannot cancel a request). Returns the naks. */
static int
close_inbox(struct puller *p)
{
    natsMsg *msg = NULL;
    natsStatus s;
    int64_t until = sa_now_ms() + CLOSE_WAIT_MS + CLOSE_POLL_MS;
    int naks = 0;

    if (natsSubscription_DrainTimeout(p->inbox, CLOSE_WAIT_MS) != NATS_OK)
        natsSubscription_Unsubscribe(p->inbox); /* the connection is closed: nobody to tell */
    while (sa_now_ms() < until) {
        s = natsSubscription_NextMsg(&msg, p->inbox, CLOSE_POLL_MS);
        if (s == NATS_TIMEOUT &&
            natsSubscription_DrainCompletionStatus(p->inbox) == NATS_ILLEGAL_STATE)
            continue; /* the flush is not answered yet */
        if (s != NATS_OK)
            break; /* drained, or the connection is gone */
        if (sa_jspull_classify(msg, NULL) == SA_JSPULL_TASK) {
            sa_jspull_ack(p->c->n->nc, msg, SA_JSPULL_NAK, 0);
            naks++;
        }
        natsMsg_Destroy(msg);
    }
    natsSubscription_Destroy(p->inbox);
    p->inbox = NULL;
    return naks;
}

static void *
pull_loop(void *arg)
{
    struct puller *p = arg;

    while (!atomic_load(&p->c->stopping))
        pass(p);
    members_drain(p->members); /* no beats now, and not hung: the sends in flight finish */
    sa_log(SA_LOG_INFO, "inbox_closed", "handed_back=%d", close_inbox(p));
    return NULL;
}

static enum sa_code
open_inbox(struct puller *p, struct sa_err *err)
{
    char subject[PULL_INBOX_MAX + 4];
    natsStatus s;
    enum sa_code rc = sa_nats_new_inbox(p->c->n, p->inbox_prefix, sizeof(p->inbox_prefix), err);

    if (rc != SA_OK)
        return rc;
    snprintf(subject, sizeof(subject), "%s.*", p->inbox_prefix);
    s = natsConnection_SubscribeSync(&p->inbox, p->c->n->nc, subject);
    if (s == NATS_OK) /* a burst's answers wait here while the puller opens them */
        s = natsSubscription_SetPendingLimits(p->inbox, -1, -1);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "subscribe to the pull inbox");
}
/* The shards in c->served, each with its stream's name. */
static void
serve_shards(struct puller *p)
{
    for (int k = 0; k < p->c->n->layout.shards; k++) {
        if (!(p->c->served >> k & 1))
            continue;
        p->sv[p->nsv].shard = k;
        sa_layout_stream(p->sv[p->nsv].stream, sizeof(p->sv[p->nsv].stream), k);
        p->nsv++;
    }
}

enum sa_code
pull_start(struct puller *p, struct consumer *c, struct sa_err *err)
{
    enum sa_code rc;

    memset(p, 0, sizeof(*p));
    p->c = c;
    park_init(&p->park, c);
    serve_shards(p);
    p->reconnects = atomic_load(c->n->reconnects);
    if ((rc = open_inbox(p, err)) != SA_OK)
        return rc;
    if ((rc = members_start(&p->members, c->n, c->cfg.name, c->instance, err)) != SA_OK)
        return rc;
    members_beat(p->members, sa_now_ms(), NULL);
    c->members = p->members; /* the sender asks it whether a claim's holder still lives */
    if ((rc = prepare_start(&p->prepare, c, err)) == SA_OK &&
        pthread_create(&p->thread, NULL, pull_loop, p) != 0)
        rc = sa_fail(err, SA_ENOMEM, "cannot start the puller thread");
    if (rc != SA_OK) {
        prepare_stop(p->prepare);
        p->prepare = NULL;
    }
    return rc;
}

void
pull_join(struct puller *p)
{
    pthread_join(p->thread, NULL);
    prepare_stop(p->prepare);
    p->prepare = NULL;
}

void
pull_close(struct puller *p)
{
    targets_close(p);
    members_leave(p->members);
    members_free(p->members);
    p->members = NULL;
    p->c->members = NULL;
}
