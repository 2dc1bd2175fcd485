/* Which levels to pull. By the clock: the current window and the slots starting within the
 * lead. By probing: older windows (from the fleet's catch-up cursor on) and past slots that
 * still hold tasks, so an outage of any length is caught up oldest first. A level is dropped
 * only when it is past and its durable has nothing pending or unacked anywhere in the fleet,
 * so a task held by a consumer that died is redelivered to whoever still pulls it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsapi.h"
#include "log.h"
#include "pull_lookup.h"
#include "members.h"
#include "pull_prepare.h"
#include "pull.h"
#include "timeparse.h"

#define RESET_WAIT_MS 5000 /* nats.c's own wait for a JetStream API answer */

int
targets_find(const struct puller *p, const struct served *sv, int64_t window, int64_t slot)
{
    for (int i = 0; i < p->n; i++)
        if (p->t[i].sv == sv && p->t[i].window == window && p->t[i].slot == slot)
            return i;
    return -1;
}

/* Hands t's unacked tasks out again by a consumer reset to its ack floor (CONSUMER.RESET,
 * ADR-60, nats-server 2.14+): the durable stays, and so do the fleet's requests open on it.
 * SA_OK if the server did it; on any failure the caller makes the durable anew instead. */
static enum sa_code
reset_level(struct puller *p, const struct target *t, struct sa_err *err)
{
    char api[SA_SUBJECT_MAX];

    snprintf(api, sizeof(api), "CONSUMER.RESET.%s.%s", t->sv->stream, t->durable);
    return sa_jsapi_request(p->c->n->nc, api, "", RESET_WAIT_MS, NULL, NULL, err);
}

/* Makes the server deliver t's unacked tasks again if it has any: 1 if it did. With consumer
 * reset (jsfeat.h) and may_reset the durable is reset to its ack floor; else, or if a reset
 * fails (a role not allowed to ask: then not tried again by this process), it is deleted and
 * made again, which also drops every request open on it. */
static int
redeliver_one(struct puller *p, struct target *t, int may_reset)
{
    jsConsumerInfo *ci = NULL;
    struct sa_err err = {0};
    int unacked = 0;
    natsStatus s;

    if (t->empty)
        return 0; /* no durable: nothing to hand out */
    if (js_GetConsumerInfo(&ci, p->c->n->js, t->sv->stream, t->durable, NULL, NULL) == NATS_OK)
        unacked = ci->NumAckPending > 0;
    jsConsumerInfo_Destroy(ci);
    if (!unacked)
        return 0;
    if (may_reset && (p->c->n->feat.have & SA_JSFEAT_RESET) && !p->no_reset) {
        if (reset_level(p, t, &err) == SA_OK) {
            sa_log(SA_LOG_INFO, "level_reset", "stream=%s durable=%s", t->sv->stream, t->durable);
            return 1; /* open requests live on: nothing to ask again */
        }
        p->no_reset = 1;
        sa_log(SA_LOG_WARN, "level_reset_failed", "stream=%s durable=%s error=\"%s\" then=remade",
               t->sv->stream, t->durable, err.msg);
    }
    js_DeleteConsumer(p->c->n->js, t->sv->stream, t->durable, NULL, NULL);
    s = prepare_durable(p->c, t->sv->shard, t->sv->stream, t->window, t->slot);
    if (s != NATS_OK) /* the next refresh makes it; its tasks wait in the stream */
        sa_log(SA_LOG_WARN, "redeliver_failed", "stream=%s durable=%s error=\"%s\"", t->sv->stream,
               t->durable, natsStatus_GetText(s));
    t->req = 0; /* the request died with the durable: ask the new one at once */
    t->retry_ms = 0;
    return 1;
}

int
targets_redeliver_park(struct puller *p, const struct served *sv)
{
    int i = targets_find(p, sv, PULL_PARK, PULL_PARK);

    return i >= 0 ? redeliver_one(p, &p->t[i], 1) : 0;
}

int
targets_redeliver(struct puller *p, const struct served *sv)
{
    int n = 0;

    for (int i = 0; i < p->n; i++)
        if (p->t[i].sv == sv)
            n += redeliver_one(p, &p->t[i], sv->rescue_reset);
    return n;
}

/* This member's share of a level before it starts, as the broker counts it (pull_asks.c reads it
 * once the share its first task gave is in): its tasks over the fleet's size, rounded up (-1: no
 * share, a fleet of one or no answer). Tasks already fetched by the others (unacked:
 * held) count too, so a member that reads the count after the others began pulling gets the same
 * share (it read pending alone and got 864 of 4,000 over 4). (A 2 % surplus let the fastest members
 * fill theirs and leave the slowest short once pulls got fast: 2247 against 2683 of 10,000 over 4.)
 */
long
targets_share(struct puller *p, const struct target *t)
{
    jsConsumerInfo *ci = NULL;
    long share = -1, fleet = members_fleet_size(p->members);

    if (fleet > 1 &&
        js_GetConsumerInfo(&ci, p->c->n->js, t->sv->stream, t->durable, NULL, NULL) == NATS_OK)
        share = (long)((ci->NumPending + (uint64_t)ci->NumAckPending + (uint64_t)fleet - 1) /
                       (uint64_t)fleet);
    jsConsumerInfo_Destroy(ci);
    return share;
}

/* Taken up before it starts (a slot, or the next window, whose first slot's tasks are held
 * straight from it): each member takes its share until the start, then pulls freely. The share
 * comes with the first task (pull_asks.c): 0 until then. */
static void
arm(struct puller *p, struct target *t, int64_t now)
{
    t->empty = 0;
    t->prefetch_cap = now < t->start_ms && members_fleet_size(p->members) > 1 ? 0 : -1;
    t->share_every_ms = SHARE_AGAIN_MS;
    t->share_again_ms = now + SHARE_AGAIN_MS;
}

int
targets_wake(struct puller *p, struct target *t, int64_t now)
{
    if (t->empty && prepare_ready(p->prepare, t->sv->shard, t->window, t->slot) == PREPARE_MADE) {
        arm(p, t, now);
        sa_log(SA_LOG_DEBUG, "pull_level", "stream=%s durable=%s marked=late", t->sv->stream,
               t->durable);
    }
    return !t->empty;
}

enum sa_code
targets_add(struct puller *p, struct served *sv, int64_t window, int64_t slot, struct sa_err *err)
{
    const struct sa_layout *l = &p->c->n->layout;
    int64_t now = sa_now_ms(), end = slot ? slot + l->slot_ms : window + l->window_ms;
    int park = window == PULL_PARK;
    enum prepare_state st;
    struct target *t;
    char durable[32];
    natsStatus s = NATS_OK;

    if (targets_find(p, sv, window, slot) >= 0)
        return SA_OK;
    if (p->n == PULL_MAX_TARGETS)
        return sa_fail(err, SA_ERETRY, "already pulling %d levels", PULL_MAX_TARGETS);
    if (park) {
        snprintf(durable, sizeof(durable), "%s", SA_PARK_DURABLE);
        end = INT64_MAX; /* never over */
    } else {
        sa_layout_durable(durable, sizeof(durable), window, slot);
    }
    t = &p->t[p->n];
    st = park ? PREPARE_NOT_YET : prepare_ready(p->prepare, sv->shard, window, slot);
    if ((st == PREPARE_EMPTY || st == PREPARE_EMPTY_FOR_GOOD) && end <= now)
        st = PREPARE_NOT_YET;  /* over and taken up all the same: a lookup found tasks in it */
    if (st == PREPARE_NOT_YET) /* a past level, or the maker late */
        s = prepare_durable(p->c, sv->shard, sv->stream, window, slot);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, durable);
    memset(t, 0, sizeof(*t)); /* no request open yet: pull_asks.c makes one */
    t->sv = sv;
    snprintf(t->durable, sizeof(t->durable), "%s", durable);
    t->window = window;
    t->slot = slot;
    t->end_ms = end;
    t->start_ms = park ? 0 : slot ? slot : window;
    arm(p, t, now);
    t->empty = st == PREPARE_EMPTY || st == PREPARE_EMPTY_FOR_GOOD;
    p->n++;
    if (sa_now_ms() < sv->rescue_until_ms &&
        redeliver_one(p, t, sv->rescue_reset)) /* see RESCUE_LATE_MS */
        sa_log(SA_LOG_WARN, "member_rescued_late", "stream=%s durable=%s", sv->stream, durable);
    sa_log(SA_LOG_DEBUG, "pull_level", "stream=%s durable=%s empty=%d", sv->stream, durable,
           t->empty);
    return SA_OK;
}

static void
add_logged(struct puller *p, struct served *sv, int64_t window, int64_t slot)
{
    struct sa_err err = {0};

    if (targets_add(p, sv, window, slot, &err) != SA_OK)
        sa_log(SA_LOG_WARN, "pull_level_failed",
               "stream=%s window=%" PRId64 " slot=%" PRId64 " error=\"%s\"", sv->stream, window,
               slot, err.msg);
}

/* A level still to start whose durable the maker (pull_prepare.c) has not made yet: the refresh
 * waits for it rather than make it on this thread. */
static int
not_made_yet(struct puller *p, struct served *sv, int64_t window, int64_t slot, int64_t now_ms)
{
    return (slot ? slot : window) > now_ms && targets_find(p, sv, window, slot) < 0 &&
           prepare_ready(p->prepare, sv->shard, window, slot) == PREPARE_NOT_YET;
}

/* Every slot from the last one taken up to the one starting within the lead, so a slot is
 * never skipped: not when adding it failed (the broker was electing a leader), not when this
 * thread was held up for longer than a slot, not while the maker is late with its durable. A
 * slot already over is pulled only if it still holds tasks. */
static void
add_slots(struct puller *p, struct served *sv, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;
    int64_t to = sa_layout_slot(l, now_ms + l->lead_ms), s = sv->next_slot_ms;
    struct sa_err err = {0};

    if (!s || s < to - 1000 * l->slot_ms)
        s = sa_layout_slot(
            l, now_ms); /* first time, or too far behind: the catch-up probe covers it */
    for (; s <= to && !not_made_yet(p, sv, sa_layout_window(l, s), s, now_ms); s += l->slot_ms) {
        if (s + l->slot_ms <= now_ms && !lookup_slot_holds_tasks(p, sv, sa_layout_window(l, s), s))
            continue;
        if (targets_add(p, sv, sa_layout_window(l, s), s, &err) != SA_OK) {
            sa_log(SA_LOG_WARN, "pull_level_failed", "stream=%s slot=%" PRId64 " error=\"%s\"",
                   sv->stream, s, err.msg);
            break; /* again on the next refresh, from this slot */
        }
    }
    sv->next_slot_ms = s;
}

void
targets_refresh(struct puller *p, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;

    for (int k = 0; k < p->nsv; k++) {
        int64_t next = sa_layout_window(l, now_ms + l->lead_ms);
        add_logged(p, &p->sv[k], sa_layout_window(l, now_ms), 0);
        if (!not_made_yet(p, &p->sv[k], next, 0, now_ms))
            add_logged(p, &p->sv[k], next, 0);
        add_slots(p, &p->sv[k], now_ms);
        if (targets_find(p, &p->sv[k], PULL_PARK, PULL_PARK) < 0)
            add_logged(p, &p->sv[k], PULL_PARK, PULL_PARK);
    }
}

/* Whether a slot found empty is over and still unmarked for good; one whose maker forgot it
 * gets its durable now. */
static int
empty_done(struct puller *p, struct target *t, int64_t now_ms)
{
    enum prepare_state st = prepare_ready(p->prepare, t->sv->shard, t->window, t->slot);

    if (st == PREPARE_EMPTY_FOR_GOOD)
        return 1;
    if (st == PREPARE_NOT_YET &&
        prepare_durable(p->c, t->sv->shard, t->sv->stream, t->window, t->slot) == NATS_OK)
        arm(p, t, now_ms);
    return 0;
}

void
targets_reap(struct puller *p, int64_t now_ms)
{
    for (int i = 0; i < p->n; i++) {
        struct target *t = &p->t[i];
        if (t->end_ms > now_ms)
            continue;
        if (t->empty ? !empty_done(p, t, now_ms)
                     : lookup_level_undone(p, t->sv, t->window, t->slot) != LEVEL_DONE)
            continue;
        p->t[i--] = p->t[--p->n]; /* its open request expires on the server */
    }
}

void
targets_close(struct puller *p)
{
    p->n = 0;
}
