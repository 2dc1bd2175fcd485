/* Pull requests left open on the server, one per level at a time (JetStream's pull protocol,
 * common/jspull.c): a message landing in a level is pushed to a waiting request at once, and a
 * level that stays empty costs one request per expiry and a heartbeat now and then. A request
 * is asked for only within the puller's limits: a share before its slot starts, room below
 * max_held, and a free send (sender_busy) for tasks due now. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jspull.h"
#include "log.h"
#include "members.h"
#include "pull.h"
#include "timeparse.h"
#include "wheel.h"

#define ASK_EXPIRES_MS 30000  /* a request stays open this long, then the server closes it */
#define ASK_HEARTBEAT_MS 2000 /* while it is idle the server says so this often */
#define ASK_SILENT_MS (2 * ASK_HEARTBEAT_MS + 1000) /* no word for this long: it is gone */
#define ASK_AGAIN_MS 1000       /* after a refusal (409), before asking that level again */
#define ASK_SOON_MS 100         /* after "Consumer Deleted" */
#define IDLE_WAIT_MS 100        /* the longest the puller waits for a message */
#define SHARE_AGAIN_MAX_MS 2000 /* read twice as long apart while the share stays the same */
#define BUSY_WAIT_MS 10         /* while a limit holds a request back, it looks again this often */
/* While the levels bring tasks, the park (park.h) is asked at most this often: what waits
 * there for a key, junk above all, takes a batch of the puller's time per interval and never
 * more, so it cannot slow the levels' own tasks (issue 24). */
#define PARK_YIELD_MS 250

static int
is_open(const struct target *t, int64_t now)
{
    return t->req && t->credit > 0 && now < t->expires_ms + ASK_AGAIN_MS &&
           now - t->heard_ms < ASK_SILENT_MS;
}

static long
outstanding(const struct puller *p, int64_t now)
{
    long n = 0;

    for (int i = 0; i < p->n; i++)
        if (is_open(&p->t[i], now))
            n += p->t[i].credit;
    return n;
}

/* Reads t's share again: tasks still moving in raise it. Each read costs nats-server 2.9 a
 * walk of every stored subject (a third of its CPU with 1,000,000 tasks waiting, read every
 * 250 ms), so while the share stays the same the reads come twice as far apart, up to
 * SHARE_AGAIN_MAX_MS; a change brings them back to SHARE_AGAIN_MS. A level empty at its
 * take-up is not read again until a task comes (batch_for). */
static void
share_again(struct puller *p, struct target *t, int64_t now)
{
    long before = t->prefetch_cap;
    int64_t every = t->share_every_ms;

    t->prefetch_cap = targets_share(p, t);
    if (t->prefetch_cap < 0 && members_fleet_size(p->members) > 1)
        t->prefetch_cap = before; /* no answer: the share stands, asked again below */
    if (t->prefetch_cap != before)
        every = SHARE_AGAIN_MS;
    else
        every = every * 2 < SHARE_AGAIN_MAX_MS ? every * 2 : SHARE_AGAIN_MAX_MS;
    t->share_every_ms = every;
    t->share_again_ms = now + every;
}

/* How many to ask level t for now: 0 while a limit holds it back. *until gets the time the
 * share gate opens when that is what holds it. */
static long
batch_for(struct puller *p, struct target *t, int64_t now, long room, int64_t *until)
{
    int sharing = t->prefetch_cap >= 0 && now < t->start_ms; /* a share before the start */

    if (sharing && t->prefetch_cap == 0 && t->fetched == 0)
        return 1; /* the first task, and with it the share; an empty level costs nothing more */
    if (sharing && t->fetched >= t->prefetch_cap && now >= t->share_again_ms) {
        share_again(p, t, now);
        sharing = t->prefetch_cap >= 0;
    }
    if (sharing) {
        if (t->fetched >= t->prefetch_cap) {
            *until = t->share_again_ms < t->start_ms ? t->share_again_ms : t->start_ms;
            return 0; /* our share is in; the rest is the others' until the start */
        }
        if (room > t->prefetch_cap - t->fetched)
            room = t->prefetch_cap - t->fetched;
    } else if (atomic_load(&p->c->sender_busy)) {
        return 0; /* tasks due now wait in the stream for a member with a free send */
    }
    return room < p->c->cfg.fetch_batch ? room : p->c->cfg.fetch_batch;
}

static void
ask(struct puller *p, struct target *t, long batch, int64_t now)
{
    char reply[PULL_INBOX_MAX + 16];
    natsStatus s;

    snprintf(reply, sizeof(reply), "%s.%" PRIu32, p->inbox_prefix, ++p->next_req);
    s = sa_jspull_request(p->c->n->nc, t->sv->stream, t->durable, reply, (int)batch, ASK_EXPIRES_MS,
                          ASK_HEARTBEAT_MS);
    if (s != NATS_OK) {
        sa_log(SA_LOG_DEBUG, "pull_request_failed", "stream=%s durable=%s error=\"%s\"",
               t->sv->stream, t->durable, natsStatus_GetText(s));
        t->retry_ms = now + ASK_AGAIN_MS;
        return;
    }
    t->req = p->next_req;
    t->credit = batch;
    t->expires_ms = now + ASK_EXPIRES_MS;
    t->heard_ms = now;
}

int64_t
asks_send(struct puller *p, int64_t now)
{
    long room = p->c->cfg.max_held - (long)wheel_count(p->c->wheel) - outstanding(p, now);
    int64_t wait = IDLE_WAIT_MS, until;

    if (natsConnection_Status(p->c->n->nc) != NATS_CONN_STATUS_CONNECTED)
        return wait; /* buffered requests would pile up: asked again once reconnected */
    for (int i = 0; i < p->n && !atomic_load(&p->c->stopping); i++) {
        struct target *t = &p->t[i];
        long batch;

        if (is_open(t, now) || now < t->retry_ms || !targets_wake(p, t, now))
            continue;
        until = now + BUSY_WAIT_MS;
        batch = room > 0 ? batch_for(p, t, now, room, &until) : 0;
        if (batch <= 0) {
            if (until - now < wait)
                wait = until - now > 0 ? until - now : 1;
            continue;
        }
        ask(p, t, batch, now);
        room -= batch;
        if (t->window == PULL_PARK && now - p->level_task_ms < PARK_YIELD_MS)
            t->retry_ms = now + PARK_YIELD_MS; /* the levels are busy: the park waits its turn */
    }
    return wait;
}

static struct target *
by_durable(struct puller *p, natsMsg *msg)
{
    char stream[32], durable[32];

    if (!sa_jspull_origin(stream, sizeof(stream), durable, sizeof(durable), msg))
        return NULL;
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->t[i].durable, durable) && !strcmp(p->t[i].sv->stream, stream))
            return &p->t[i];
    return NULL; /* a level dropped since: its task is handled all the same */
}

static struct target *
by_request(struct puller *p, natsMsg *msg)
{
    const char *subject = natsMsg_GetSubject(msg), *dot = strrchr(subject, '.');
    uint32_t req = dot ? (uint32_t)strtoul(dot + 1, NULL, 10) : 0;

    for (int i = 0; i < p->n; i++)
        if (req && p->t[i].req == req)
            return &p->t[i];
    return NULL; /* an older request's word: nothing to do */
}

/* A status closes the request it answers, but for a heartbeat. */
static void
status(struct puller *p, natsMsg *msg, enum sa_jspull_kind kind, int64_t now)
{
    struct target *t = by_request(p, msg);
    const char *why = NULL;

    if (!t)
        return;
    t->heard_ms = now;
    if (kind == SA_JSPULL_HEARTBEAT)
        return;
    t->req = 0;
    if (kind != SA_JSPULL_CLOSED)
        return; /* expired: asked again at once */
    natsMsgHeader_Get(msg, "Description", &why);
    sa_log(SA_LOG_WARN, "pull_request_refused", "stream=%s durable=%s reason=\"%s\"", t->sv->stream,
           t->durable, why ? why : "-");
    /* a durable deleted to hand a dead member's tasks back is made again at once */
    t->retry_ms = now + (why && strstr(why, "Deleted") ? ASK_SOON_MS : ASK_AGAIN_MS);
}

/* The share of a level before its start, from its first task: the tasks still pending after it
 * (its ack subject says) plus at most one fetched by each member, over the fleet's size. Read
 * this way, a level taken up by the whole fleet at once is shared without asking the broker
 * (a count costs nats-server 2.9 a walk of every stored subject); a member that came late
 * reads the count of pending and unacked once it has this much (batch_for). */
static void
first_share(struct puller *p, struct target *t, natsMsg *msg)
{
    jsMsgMetaData *meta = NULL;
    uint64_t fleet = (uint64_t)members_fleet_size(p->members);

    if (fleet > 1 && natsMsg_GetMetaData(&meta, msg) == NATS_OK)
        t->prefetch_cap = (long)((meta->NumPending + fleet + fleet - 1) / fleet);
    jsMsgMetaData_Destroy(meta);
}

int
asks_answer(struct puller *p, natsMsg *msg, int64_t now)
{
    enum sa_jspull_kind kind = sa_jspull_classify(msg, NULL);
    struct target *t;

    if (kind != SA_JSPULL_TASK) {
        status(p, msg, kind, now);
        natsMsg_Destroy(msg);
        return 0;
    }
    if ((t = by_durable(p, msg)) != NULL) {
        if (t->window != PULL_PARK)
            p->level_task_ms = now;
        if (t->prefetch_cap == 0 && t->fetched == 0 && now < t->start_ms)
            first_share(p, t, msg);
        t->fetched++;
        t->heard_ms = now;
        if (t->credit > 0)
            t->credit--;
    }
    return 1;
}

void
asks_forget(struct puller *p)
{
    for (int i = 0; i < p->n; i++)
        p->t[i].req = 0; /* the server lost them with the connection */
}
