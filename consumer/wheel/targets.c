/* Which levels to pull. By the clock: the current window and the slots starting within the
 * lead. By probing: older windows (from the fleet's catch-up cursor on) and past slots that
 * still hold tasks, so an outage of any length is caught up oldest first. A level is dropped
 * only when it is past and its durable has nothing pending or unacked anywhere in the fleet,
 * so a task held by a consumer that died is redelivered to whoever still pulls it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "lookup.h"
#include "members.h"
#include "pull.h"
#include "timeparse.h"

/* Window durables nobody pulled for an hour go away; slot durables after a window (at least
 * two minutes) without a pull request: a slot is over in seconds, and hundreds of empty
 * durables of past slots held the server's memory for an hour (issue 12). A durable gone too
 * early costs nothing but its re-creation: the tasks stay in the stream. */
#define INACTIVE_NS (3600LL * 1000000000LL)
#define SLOT_INACTIVE_MIN_MS 120000

int
targets_find(const struct puller *p, const struct served *sv, int64_t window, int64_t slot)
{
    for (int i = 0; i < p->n; i++)
        if (p->t[i].sv == sv && p->t[i].window == window && p->t[i].slot == slot)
            return i;
    return -1;
}

static int64_t
slot_inactive_ns(const struct sa_layout *l)
{
    int64_t ms = l->window_ms > SLOT_INACTIVE_MIN_MS ? l->window_ms : SLOT_INACTIVE_MIN_MS;

    return ms * 1000000LL;
}

static natsStatus
ensure_durable(struct consumer *c, const char *stream, const char *durable, const char *filter)
{
    jsConsumerConfig cc;
    jsConsumerInfo *ci = NULL;
    jsErrCode jerr = 0;
    natsStatus s;

    jsConsumerConfig_Init(&cc);
    cc.Durable = durable;
    cc.FilterSubject = filter;
    cc.AckPolicy = js_AckExplicit;
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckWait = c->n->layout.ack_wait_ms * 1000000LL;
    cc.MaxDeliver = -1;
    cc.MaxAckPending = c->cfg.max_ack_pending;
    cc.MaxWaiting = 512;
    cc.InactiveThreshold = durable[0] == 's' ? slot_inactive_ns(&c->n->layout) : INACTIVE_NS;
    if (js_GetConsumerInfo(&ci, c->n->js, stream, durable, NULL, NULL) == NATS_OK) {
        jsConsumerInfo_Destroy(ci); /* another member made it: adding it again costs the server */
        return NATS_OK;             /* a scan of the stream (~0.2 s with a million tasks) */
    }
    s = js_AddConsumer(&ci, c->n->js, stream, &cc, NULL, &jerr);
    jsConsumerInfo_Destroy(ci);
    if (s != NATS_OK && js_GetConsumerInfo(&ci, c->n->js, stream, durable, NULL, NULL) == NATS_OK) {
        jsConsumerInfo_Destroy(ci); /* made by another fleet member with other limits: use it */
        s = NATS_OK;
    }
    return s;
}

/* Deletes and makes t's durable again if anything of it is unacked: 1 if it did. */
static int
redeliver_one(struct puller *p, struct target *t)
{
    jsConsumerInfo *ci = NULL;
    char filter[SA_SUBJECT_MAX];
    int unacked = 0;
    natsStatus s;

    if (js_GetConsumerInfo(&ci, p->c->n->js, t->sv->stream, t->durable, NULL, NULL) == NATS_OK)
        unacked = ci->NumAckPending > 0;
    jsConsumerInfo_Destroy(ci);
    if (!unacked)
        return 0;
    sa_layout_level_filter(filter, sizeof(filter), t->sv->shard, t->window, t->slot);
    js_DeleteConsumer(p->c->n->js, t->sv->stream, t->durable, NULL, NULL);
    s = ensure_durable(p->c, t->sv->stream, t->durable, filter);
    if (s != NATS_OK) /* the next refresh makes it; its tasks wait in the stream */
        sa_log(SA_LOG_WARN, "redeliver_failed", "stream=%s durable=%s error=\"%s\"", t->sv->stream,
               t->durable, natsStatus_GetText(s));
    t->req = 0; /* the request died with the durable: ask the new one at once */
    t->retry_ms = 0;
    return 1;
}

int
targets_redeliver(struct puller *p)
{
    int n = 0;

    for (int i = 0; i < p->n; i++)
        n += redeliver_one(p, &p->t[i]);
    return n;
}

/* This member's share of a level before it starts: its tasks over the fleet's size, rounded
 * up (-1: no share, a fleet of one or no answer). Tasks already fetched by the others (unacked:
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

enum sa_code
targets_add(struct puller *p, struct served *sv, int64_t window, int64_t slot, struct sa_err *err)
{
    const struct sa_layout *l = &p->c->n->layout;
    struct target *t;
    char durable[32], filter[SA_SUBJECT_MAX];
    natsStatus s;

    if (targets_find(p, sv, window, slot) >= 0)
        return SA_OK;
    if (p->n == PULL_MAX_TARGETS)
        return sa_fail(err, SA_ERETRY, "already pulling %d levels", PULL_MAX_TARGETS);
    sa_layout_durable(durable, sizeof(durable), window, slot);
    sa_layout_level_filter(filter, sizeof(filter), sv->shard, window, slot);
    t = &p->t[p->n];
    s = ensure_durable(p->c, sv->stream, durable, filter);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, durable);
    memset(t, 0, sizeof(*t)); /* no request open yet: asks.c makes one */
    t->sv = sv;
    snprintf(t->durable, sizeof(t->durable), "%s", durable);
    t->window = window;
    t->slot = slot;
    t->end_ms = slot ? slot + l->slot_ms : window + l->window_ms;
    t->start_ms = slot ? slot : window;
    /* taken up before it starts (a slot, or the next window, whose first slot's tasks are held
     * straight from it): each member takes its share until the start, then pulls freely */
    t->prefetch_cap = sa_now_ms() < t->start_ms ? targets_share(p, t) : -1;
    p->n++;
    sa_log(SA_LOG_DEBUG, "pull_level", "stream=%s durable=%s", sv->stream, durable);
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

/* Every slot from the last one taken up to the one starting within the lead, so a slot is
 * never skipped: not when adding it failed (the broker was electing a leader), not when this
 * thread was held up for longer than a slot. A slot already over is pulled only if it still
 * holds tasks. */
static void
add_slots(struct puller *p, struct served *sv, int64_t now_ms)
{
    const struct sa_layout *l = &p->c->n->layout;
    int64_t to = sa_layout_slot(l, now_ms + l->lead_ms), s = sv->next_slot_ms;
    struct sa_err err = {0};

    if (!s || s < to - 1000 * l->slot_ms)
        s = sa_layout_slot(
            l, now_ms); /* first time, or too far behind: the catch-up probe covers it */
    for (; s <= to; s += l->slot_ms) {
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
        add_logged(p, &p->sv[k], sa_layout_window(l, now_ms), 0);
        add_logged(p, &p->sv[k], sa_layout_window(l, now_ms + l->lead_ms), 0);
        add_slots(p, &p->sv[k], now_ms);
    }
}

void
targets_reap(struct puller *p, int64_t now_ms)
{
    for (int i = 0; i < p->n; i++) {
        struct target *t = &p->t[i];
        if (t->end_ms > now_ms || lookup_level_undone(p, t->sv, t->window, t->slot) != LEVEL_DONE)
            continue;
        p->t[i--] = p->t[--p->n]; /* its open request expires on the server */
    }
}

void
targets_close(struct puller *p)
{
    p->n = 0;
}
