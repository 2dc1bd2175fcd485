/* Watcher thread + hash set of cancelled ids. Deletes in the bucket remove ids; the set only
 * grows with cancels, which are rare next to sends. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cancel.h"

struct cancel_set {
    char **slots; /* open addressing; NULL = empty, TOMB = deleted */
    size_t cap, used;
    pthread_mutex_t lock;
    pthread_cond_t ready_cv;
    int ready, stop;
    kvWatcher *watcher;
    pthread_t thread;
};

static char tomb[1];
#define TOMB tomb

static uint64_t
hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static size_t
find_slot(const struct cancel_set *s, const char *id, int for_insert)
{
    size_t i = hash(id) & (s->cap - 1), first_free = SIZE_MAX;

    for (size_t n = 0; n < s->cap; n++, i = (i + 1) & (s->cap - 1)) {
        if (!s->slots[i])
            return (for_insert && first_free != SIZE_MAX) ? first_free : i;
        if (s->slots[i] == TOMB) {
            if (first_free == SIZE_MAX)
                first_free = i;
        } else if (!strcmp(s->slots[i], id)) {
            return i;
        }
    }
    return first_free;
}

static int
grow(struct cancel_set *s)
{
    size_t old_cap = s->cap, cap = old_cap ? old_cap * 2 : 1024;
    char **old = s->slots;

    s->slots = calloc(cap, sizeof(*s->slots));
    if (!s->slots) {
        s->slots = old;
        return -1;
    }
    s->cap = cap;
    s->used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] && old[i] != TOMB) {
            s->slots[find_slot(s, old[i], 1)] = old[i];
            s->used++;
        }
    }
    free(old);
    return 0;
}

static void
set_add(struct cancel_set *s, const char *id)
{
    size_t i;

    if ((s->used + 1) * 2 > s->cap && grow(s) != 0)
        return;
    i = find_slot(s, id, 1);
    if (i == SIZE_MAX || (s->slots[i] && s->slots[i] != TOMB))
        return;
    s->slots[i] = strdup(id);
    if (s->slots[i])
        s->used++;
}

static void
set_remove(struct cancel_set *s, const char *id)
{
    size_t i = s->cap ? find_slot(s, id, 0) : SIZE_MAX;

    if (i == SIZE_MAX || !s->slots[i] || s->slots[i] == TOMB)
        return;
    free(s->slots[i]);
    s->slots[i] = TOMB;
}

int
cancel_contains(struct cancel_set *s, const char *id)
{
    size_t i;
    int found;

    pthread_mutex_lock(&s->lock);
    i = s->cap ? find_slot(s, id, 0) : SIZE_MAX;
    found = i != SIZE_MAX && s->slots[i] && s->slots[i] != TOMB;
    pthread_mutex_unlock(&s->lock);
    return found;
}

static void
apply(struct cancel_set *s, kvEntry *e)
{
    pthread_mutex_lock(&s->lock);
    if (!e) {
        s->ready = 1; /* initial values done */
        pthread_cond_broadcast(&s->ready_cv);
    } else if (kvEntry_Operation(e) == kvOp_Put) {
        set_add(s, kvEntry_Key(e));
    } else {
        set_remove(s, kvEntry_Key(e));
    }
    pthread_mutex_unlock(&s->lock);
}

static void *
watch_loop(void *arg)
{
    struct cancel_set *s = arg;
    kvEntry *e = NULL;
    natsStatus st;

    for (;;) {
        st = kvWatcher_Next(&e, s->watcher, 1000);
        if (st == NATS_OK) {
            apply(s, e);
            kvEntry_Destroy(e);
            e = NULL;
        } else if (st != NATS_TIMEOUT) {
            break; /* stopped */
        }
    }
    return NULL;
}

enum sa_code
cancel_start(struct cancel_set **out, kvStore *kv, struct sa_err *err)
{
    struct cancel_set *s = calloc(1, sizeof(*s));
    struct timespec until;
    natsStatus st;

    *out = NULL;
    if (!s)
        return sa_fail(err, SA_ENOMEM, "no memory for the cancel set");
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->ready_cv, NULL);
    st = kvStore_WatchAll(&s->watcher, kv, NULL);
    if (st != NATS_OK || pthread_create(&s->thread, NULL, watch_loop, s) != 0) {
        kvWatcher_Destroy(s->watcher);
        free(s);
        return sa_fail(err, SA_ENATS, "cannot watch the cancel map: %s", natsStatus_GetText(st));
    }
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&s->lock);
    while (!s->ready && pthread_cond_timedwait(&s->ready_cv, &s->lock, &until) == 0)
        ;
    pthread_mutex_unlock(&s->lock);
    *out = s;
    return SA_OK;
}

void
cancel_stop(struct cancel_set *s)
{
    if (!s)
        return;
    kvWatcher_Stop(s->watcher);
    pthread_join(s->thread, NULL);
    kvWatcher_Destroy(s->watcher);
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i] != TOMB)
            free(s->slots[i]);
    free(s->slots);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->ready_cv);
    free(s);
}
