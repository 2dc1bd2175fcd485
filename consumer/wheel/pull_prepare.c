/* Level durables made ahead of their time, one thread per served shard (pull_prepare.h). Each
 * thread remembers the levels it made (or found empty) in a small ring and looks ahead every
 * PASS_MS. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "pull_marks.h"
#include "pull_prepare.h"
#include "park.h"
#include "timeparse.h"

#define READY_MAX 32
#define PASS_MS 250
#define RECHECK_MS 1000 /* an empty slot's mark is read again this often (or when woken) */

/* Window durables nobody pulled for an hour go away; slot durables after a window (at least
 * two minutes) without a pull request: a slot is over in seconds, and hundreds of empty
 * durables of past slots held the server's memory for an hour (issue 12). Either lives at least
 * a minute longer than it waits between being made ahead and its first pull, so the server
 * never drops one the maker counts as made (a layout of 10-minute slots is made 30 minutes
 * ahead). */
#define WINDOW_INACTIVE_MS 3600000LL
#define SLOT_INACTIVE_MIN_MS 120000LL
#define INACTIVE_MARGIN_MS 60000LL

struct level {
    int64_t window, slot;
    int64_t made_ms; /* when it was made (or found made); if empty, when its mark was looked for */
    int empty;       /* a slot nobody marked: no durable made (pull_marks.h) */
};

struct maker {
    struct prepare *pr;
    int shard;
    char stream[32];
    pthread_mutex_t lock; /* guards ready and next */
    struct level ready[READY_MAX];
    int next;
    int64_t drop_next; /* the first slot whose mark may still be there (pull_marks.h) */
    int woken; /* this pass follows a mark this member made: empty slots' marks read at once */
    struct marks_gate gate;
    pthread_t thread;
};

struct prepare {
    struct consumer *c;
    atomic_int stop;
    int n;
    struct maker m[SA_SHARDS_MAX];
};

/* How long the server keeps level (slot 0: a window) without a pull request. */
static int64_t
inactive_ms(const struct sa_layout *l, int64_t slot)
{
    int64_t ahead = l->lead_ms + (PREPARE_AHEAD_SLOTS + 1) * l->slot_ms + INACTIVE_MARGIN_MS,
            base = slot
                       ? (l->window_ms > SLOT_INACTIVE_MIN_MS ? l->window_ms : SLOT_INACTIVE_MIN_MS)
                       : WINDOW_INACTIVE_MS;

    return base > ahead ? base : ahead;
}

natsStatus
prepare_durable(struct consumer *c, int shard, const char *stream, int64_t window, int64_t slot)
{
    jsConsumerConfig cc;
    jsConsumerInfo *ci = NULL;
    jsErrCode jerr = 0;
    char durable[32], filter[SA_SUBJECT_MAX];
    natsStatus s;

    if (window == PULL_PARK) {
        snprintf(durable, sizeof(durable), "%s", SA_PARK_DURABLE);
        sa_layout_park_filter(filter, sizeof(filter), shard);
    } else {
        sa_layout_durable(durable, sizeof(durable), window, slot);
        sa_layout_level_filter(filter, sizeof(filter), shard, window, slot);
    }
    if (js_GetConsumerInfo(&ci, c->n->js, stream, durable, NULL, NULL) == NATS_OK) {
        jsConsumerInfo_Destroy(ci); /* another member made it: adding it again costs the server */
        return NATS_OK;             /* a scan of the stream (~0.2 s with a million tasks) */
    }
    jsConsumerConfig_Init(&cc);
    cc.Durable = durable;
    cc.FilterSubject = filter;
    cc.AckPolicy = js_AckExplicit;
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckWait = c->n->layout.ack_wait_ms * 1000000LL;
    cc.MaxDeliver = -1;
    /* the park holds only what does not open: no bound that junk could fill, so it cannot keep
     * a valid parked task (a key rotation's) from being delivered (park.h) */
    cc.MaxAckPending = window == PULL_PARK ? PARK_MAX_ACK_PENDING : c->cfg.max_ack_pending;
    cc.MaxWaiting = 512;
    cc.InactiveThreshold =
        (window == PULL_PARK ? WINDOW_INACTIVE_MS : inactive_ms(&c->n->layout, slot)) * 1000000LL;
    s = js_AddConsumer(&ci, c->n->js, stream, &cc, NULL, &jerr);
    jsConsumerInfo_Destroy(ci);
    if (s != NATS_OK && js_GetConsumerInfo(&ci, c->n->js, stream, durable, NULL, NULL) == NATS_OK) {
        jsConsumerInfo_Destroy(ci); /* made by another fleet member with other limits: use it */
        s = NATS_OK;
    }
    return s;
}

/* What the ring says of (window, slot): a durable made lately (an entry older than half the
 * level's inactive threshold is looked at again, in case nobody pulled it since and the server
 * dropped it), a slot found empty (for good once its mark was looked for EMPTY_FINAL_MS after
 * its end), or nothing. */
static enum prepare_state
state_of(struct maker *m, int64_t window, int64_t slot, int64_t *at)
{
    const struct sa_layout *l = &m->pr->c->n->layout;
    int64_t fresh = sa_now_ms() - inactive_ms(l, slot) / 2;
    enum prepare_state st = PREPARE_NOT_YET;

    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < READY_MAX; i++) {
        const struct level *v = &m->ready[i];
        if (v->window != window || v->slot != slot)
            continue;
        *at = v->made_ms;
        if (v->empty)
            st = v->made_ms >= slot + l->slot_ms + EMPTY_FINAL_MS ? PREPARE_EMPTY_FOR_GOOD
                                                                  : PREPARE_EMPTY;
        else if (v->made_ms > fresh)
            st = PREPARE_MADE;
        break;
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* Records (window, slot) as made, or found empty at `at`, in its entry of the ring or in the
 * oldest one. */
static void
record(struct maker *m, int64_t window, int64_t slot, int empty, int64_t at)
{
    struct level v = {window, slot, at, empty};
    int i = 0;

    pthread_mutex_lock(&m->lock);
    while (i < READY_MAX && (m->ready[i].window != window || m->ready[i].slot != slot))
        i++;
    if (i < READY_MAX)
        m->ready[i] = v;
    else
        m->ready[m->next++ % READY_MAX] = v;
    pthread_mutex_unlock(&m->lock);
}

/* Makes (window, slot)'s durable unless it is made; a slot only once its mark exists (until
 * then it is recorded empty, and its mark looked for again a second later, or at once after
 * this member made a mark). */
static void
make(struct maker *m, int64_t window, int64_t slot)
{
    int64_t at = 0, now = sa_now_ms();
    enum prepare_state st = state_of(m, window, slot, &at);
    natsStatus s;

    if (st == PREPARE_MADE || st == PREPARE_EMPTY_FOR_GOOD)
        return;
    if (st == PREPARE_EMPTY && !m->woken && now < at + RECHECK_MS)
        return;
    /* an empty slot counts as looked at when the read left, not when its answer came */
    if (slot && !marks_slot_used(m->pr->c, &m->gate, m->shard, m->stream, slot)) {
        record(m, window, slot, 1, now);
        return;
    }
    s = prepare_durable(m->pr->c, m->shard, m->stream, window, slot);
    if (s != NATS_OK) { /* looked at again next pass; the puller makes it itself if need be */
        sa_log(SA_LOG_DEBUG, "prepare_failed", "stream=%s window=%lld slot=%lld error=\"%s\"",
               m->stream, (long long)window, (long long)slot, natsStatus_GetText(s));
        return;
    }
    record(m, window, slot, 0, sa_now_ms());
}

/* Slots found empty and over, until their mark was looked for EMPTY_FINAL_MS after their end:
 * a task re-published into a slot just before it ended still gets its durable. */
static void
recheck_empty(struct maker *m, int64_t now)
{
    const struct sa_layout *l = &m->pr->c->n->layout;
    struct level over[READY_MAX];
    int n = 0;

    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < READY_MAX; i++) {
        int64_t end = m->ready[i].slot + l->slot_ms;
        if (m->ready[i].empty && end <= now && m->ready[i].made_ms < end + EMPTY_FINAL_MS)
            over[n++] = m->ready[i];
    }
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < n && !atomic_load(&m->pr->stop); i++)
        make(m, over[i].window, over[i].slot);
}

/* The current window, then the levels starting from now to PREPARE_AHEAD_SLOTS slots past
 * the lead in the order they start (a window's level with its first slot), so a slow maker
 * is late with the farthest level, not the next one. */
static void
pass(struct maker *m)
{
    const struct sa_layout *l = &m->pr->c->n->layout;
    int64_t now = sa_now_ms(), to = now + l->lead_ms + PREPARE_AHEAD_SLOTS * l->slot_ms;

    make(m, sa_layout_window(l, now), 0);
    for (int64_t s = sa_layout_slot(l, now);
         s <= to && !atomic_load(&m->pr->stop) && !atomic_load(&m->pr->c->stopping);
         s += l->slot_ms) {
        if (sa_layout_window(l, s) == s)
            make(m, s, 0);
        make(m, sa_layout_window(l, s), s);
    }
    recheck_empty(m, now);
    marks_drop_over(m->pr->c, m->shard, &m->drop_next, now);
}

static int
stopping(const struct maker *m)
{
    return atomic_load(&m->pr->stop) || atomic_load(&m->pr->c->stopping);
}

/* Waits PASS_MS, or less once this member made a slot's mark (a retry re-published into the
 * current slot, found empty, wants its durable now): 1 if woken so. */
static int
rest(struct maker *m, long *seen)
{
    struct consumer *c = m->pr->c;
    struct timespec at;
    int woken;

    clock_gettime(CLOCK_MONOTONIC, &at); /* makers_wake runs on it (main.c) */
    at.tv_nsec += PASS_MS * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->makers_lock);
    while (c->makers_made == *seen && !stopping(m) &&
           pthread_cond_timedwait(&c->makers_wake, &c->makers_lock, &at) == 0)
        ;
    woken = c->makers_made != *seen;
    *seen = c->makers_made;
    pthread_mutex_unlock(&c->makers_lock);
    return woken;
}

static void *
loop(void *arg)
{
    struct maker *m = arg;
    long seen;

    pthread_mutex_lock(&m->pr->c->makers_lock);
    seen = m->pr->c->makers_made;
    pthread_mutex_unlock(&m->pr->c->makers_lock);
    while (!stopping(m)) {
        pass(m);
        m->woken = rest(m, &seen);
    }
    return NULL;
}

enum sa_code
prepare_start(struct prepare **out, struct consumer *c, struct sa_err *err)
{
    struct prepare *pr = calloc(1, sizeof(*pr));

    *out = NULL;
    if (!pr)
        return sa_fail(err, SA_ENOMEM, "no memory for the durable makers");
    pr->c = c;
    for (int k = 0; k < c->n->layout.shards; k++) {
        struct maker *m;
        if (!(c->served >> k & 1))
            continue;
        m = &pr->m[pr->n];
        m->pr = pr;
        m->shard = k;
        sa_layout_stream(m->stream, sizeof(m->stream), k);
        pthread_mutex_init(&m->lock, NULL);
        if (pthread_create(&m->thread, NULL, loop, m) != 0) {
            pthread_mutex_destroy(&m->lock);
            *out = pr;
            return sa_fail(err, SA_ENOMEM, "cannot start a durable maker thread");
        }
        pr->n++;
    }
    *out = pr;
    return SA_OK;
}

enum prepare_state
prepare_ready(struct prepare *pr, int shard, int64_t window, int64_t slot)
{
    int64_t at = 0;

    for (int i = 0; pr && i < pr->n; i++)
        if (pr->m[i].shard == shard)
            return state_of(&pr->m[i], window, slot, &at);
    return PREPARE_NOT_YET;
}

void
prepare_stop(struct prepare *pr)
{
    if (!pr)
        return;
    atomic_store(&pr->stop, 1);
    pthread_mutex_lock(&pr->c->makers_lock);
    pthread_cond_broadcast(&pr->c->makers_wake);
    pthread_mutex_unlock(&pr->c->makers_lock);
    for (int i = 0; i < pr->n; i++) {
        pthread_join(pr->m[i].thread, NULL);
        pthread_mutex_destroy(&pr->m[i].lock);
    }
    free(pr);
}
