/* A binary min-heap of held tasks keyed by due time, plus a mutex-guarded inbox so the puller
 * thread never touches the heap. Held messages are kept alive with InProgress, and released
 * with a nak on shutdown (invariant 1: nothing is lost, a held task is never acked unsent). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "jspull.h"
#include "minheap.h"
#include "seqset.h"
#include "wheel.h"

struct wheel {
    struct minheap heap; /* of struct held *, by fire time (owner thread) */
    pthread_mutex_t lock;
    struct held *inbox, *inbox_tail;
    struct seqset held_seqs; /* every sequence posted and not yet freed (under lock) */
    /* wheel_claiming's count of held tasks per task id (keyed by the id's hash), and how many
     * held tasks it found no memory to count (under lock) */
    struct seqset claimed_ids;
    size_t uncounted;
    atomic_size_t count;
    wheel_wakeup_fn wake;
    void *wake_arg;
    natsConnection *nc; /* held messages are answered through it */
};

static int64_t
held_fire(const void *elem)
{
    return (*(struct held *const *)elem)->fire_ms;
}

enum sa_code
wheel_new(struct wheel **out, natsConnection *nc, wheel_wakeup_fn wake, void *arg,
          struct sa_err *err)
{
    struct wheel *w = calloc(1, sizeof(*w));

    *out = NULL;
    if (!w)
        return sa_fail(err, SA_ENOMEM, "no memory for the wheel");
    pthread_mutex_init(&w->lock, NULL);
    minheap_init(&w->heap, sizeof(struct held *), held_fire);
    w->nc = nc;
    w->wake = wake;
    w->wake_arg = arg;
    *out = w;
    return SA_OK;
}

/* A task id as a seqset key: its 64-bit FNV-1a hash (never 0). Two ids with one hash only
 * make a stale claim of ours look under way, which waits: never a second send. */
static uint64_t
id_key(const char *id)
{
    uint64_t k = 0xcbf29ce484222325ull;

    for (; *id; id++)
        k = (k ^ (unsigned char)*id) * 0x100000001b3ull;
    return k ? k : 1;
}

/* Under the lock: adds delta to id's count, forgetting it at 0. Returns 0 if out of memory,
 * which only a first count can meet: a count taken out goes back into the room it left. */
static int
count_id(struct wheel *w, const char *id, long delta)
{
    uint64_t key = id_key(id);
    uintptr_t n = (uintptr_t)seqset_take(&w->claimed_ids, key) + (uintptr_t)delta;

    return n == 0 || seqset_put(&w->claimed_ids, key, (void *)n) == SEQSET_ADDED;
}

/* Under the lock: forgets h among the claiming. */
static void
uncount(struct wheel *w, struct held *h)
{
    if (h->claiming == 1)
        count_id(w, h->task->id, -1);
    else if (h->claiming == 2)
        w->uncounted--;
    h->claiming = 0;
}

void
wheel_claiming(struct held *h)
{
    struct wheel *w = h->owner;

    if (!w || h->claiming)
        return;
    pthread_mutex_lock(&w->lock);
    if (count_id(w, h->task->id, 1)) {
        h->claiming = 1;
    } else {
        h->claiming = 2;
        w->uncounted++;
    }
    pthread_mutex_unlock(&w->lock);
}

int
wheel_claimed_elsewhere(const struct held *h)
{
    struct wheel *w = h->owner;
    uintptr_t n;
    size_t uncounted;

    if (!w)
        return 1;
    pthread_mutex_lock(&w->lock);
    n = (uintptr_t)seqset_get(&w->claimed_ids, id_key(h->task->id));
    uncounted = w->uncounted;
    pthread_mutex_unlock(&w->lock);
    return uncounted > 0 || n > (h->claiming == 1 ? 1u : 0u);
}

void
held_free(struct held *h)
{
    if (!h)
        return;
    if (h->owner) {
        pthread_mutex_lock(&h->owner->lock);
        seqset_remove(&h->owner->held_seqs, h->seq);
        uncount(h->owner, h);
        pthread_mutex_unlock(&h->owner->lock);
    }
    natsMsg_Destroy(h->msg);
    sa_task_free(h->task);
    free(h);
}

void
wheel_free(struct wheel *w)
{
    if (!w)
        return;
    wheel_release_all(w);
    minheap_free(&w->heap);
    seqset_free(&w->held_seqs);
    seqset_free(&w->claimed_ids);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

enum wheel_post
wheel_post(struct wheel *w, struct held *h)
{
    enum seqset_put added;

    h->next = NULL;
    pthread_mutex_lock(&w->lock);
    added = seqset_add(&w->held_seqs, h->seq);
    if (added != SEQSET_ADDED) {
        pthread_mutex_unlock(&w->lock);
        return added == SEQSET_PRESENT ? WHEEL_HELD : WHEEL_NOMEM;
    }
    h->owner = w;
    if (w->inbox_tail)
        w->inbox_tail->next = h;
    else
        w->inbox = h;
    w->inbox_tail = h;
    pthread_mutex_unlock(&w->lock);
    atomic_fetch_add(&w->count, 1);
    if (w->wake)
        w->wake(w->wake_arg);
    return WHEEL_TAKEN;
}

void
wheel_wake(struct wheel *w)
{
    if (w->wake)
        w->wake(w->wake_arg);
}

size_t
wheel_count(struct wheel *w)
{
    return atomic_load(&w->count);
}

static int
heap_push(struct wheel *w, struct held *h)
{
    return minheap_push(&w->heap, &h);
}

enum sa_code
wheel_take_inbox(struct wheel *w, struct sa_err *err)
{
    struct held *h, *next;

    pthread_mutex_lock(&w->lock);
    h = w->inbox;
    w->inbox = w->inbox_tail = NULL;
    pthread_mutex_unlock(&w->lock);
    for (; h; h = next) {
        next = h->next;
        if (heap_push(w, h) != 0) {
            struct held *tail = h;
            h->next = next;
            while (tail->next)
                tail = tail->next;
            pthread_mutex_lock(&w->lock); /* put the rest back in front of newer arrivals */
            tail->next = w->inbox;
            if (!w->inbox_tail)
                w->inbox_tail = tail;
            w->inbox = h;
            pthread_mutex_unlock(&w->lock);
            return sa_fail(err, SA_ENOMEM, "wheel cannot grow past %zu", w->heap.len);
        }
    }
    return SA_OK;
}

enum sa_code
wheel_defer(struct wheel *w, struct held *h, int64_t fire_ms, struct sa_err *err)
{
    h->fire_ms = fire_ms;
    h->deferred = 1;
    if (heap_push(w, h) != 0)
        return sa_fail(err, SA_ENOMEM, "wheel cannot grow past %zu", w->heap.len);
    atomic_fetch_add(&w->count, 1);
    return SA_OK;
}

int64_t
wheel_next_due(const struct wheel *w)
{
    const struct held *h = wheel_peek(w);

    return h ? h->fire_ms : INT64_MAX;
}

const struct held *
wheel_peek(const struct wheel *w)
{
    struct held **top = minheap_top(&w->heap);

    return top ? *top : NULL;
}

struct held *
wheel_pop_due(struct wheel *w, int64_t now_ms)
{
    struct held *h;

    if (wheel_next_due(w) > now_ms || !minheap_pop(&w->heap, &h))
        return NULL;
    atomic_fetch_sub(&w->count, 1);
    return h;
}

void
wheel_touch(struct wheel *w, int64_t now_ms, int64_t interval_ms)
{
    for (size_t i = 0; i < w->heap.len; i++) {
        struct held *h = *(struct held **)minheap_at(&w->heap, i);

        if (now_ms - h->touched_ms < interval_ms)
            continue;
        sa_jspull_ack(w->nc, h->msg, SA_JSPULL_PROGRESS, 0);
        h->touched_ms = now_ms;
    }
}

size_t
wheel_release_all(struct wheel *w)
{
    size_t n = 0;
    struct held *h;
    enum sa_code moved = wheel_take_inbox(w, NULL); /* what cannot move stays in the inbox */

    (void)moved;
    while (minheap_take_last(&w->heap, &h)) {
        sa_jspull_ack(w->nc, h->msg, SA_JSPULL_NAK, 0);
        held_free(h);
        n++;
    }
    for (h = w->inbox; h; h = w->inbox) { /* only left if the heap could not grow */
        w->inbox = h->next;
        sa_jspull_ack(w->nc, h->msg, SA_JSPULL_NAK, 0);
        held_free(h);
        n++;
    }
    w->inbox_tail = NULL;
    atomic_store(&w->count, 0);
    return n;
}
