/* Watcher thread + hash set of cancelled ids, each with the time its record was written.
 * Only a record the key ring authenticates (claimmac.h) changes the set: a cancel or pause
 * enters it, a lift (a resume, cancelrec.h) removes it; a keyless writer's record is logged as
 * junk and a DEL or PURGE marker is passed over, so neither un-cancels nor un-pauses anything
 * (issue 37.8). The watch starts with every entry the bucket keeps, oldest first, so a starting
 * member finds an authentic record under the junk or markers over it. The set only grows with
 * cancels, which are rare next to sends. A record applies only to tasks sealed before it
 * (sa_cancel_applies): producers free an id once its cancelled claim expired, and a task booked
 * under it then is not dropped. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cancel.h"
#include "claim.h"
#include "cancelrec.h"
#include "claimmac.h"
#include "log.h"

struct entry {
    int64_t at_ms; /* when the record was written (server time) */
    char id[];
};

struct cancel_set {
    struct entry **slots; /* open addressing; NULL = empty, TOMB = deleted */
    size_t cap, used;
    int64_t ttl_ms; /* the claims' TTL: how long producers refuse a cancelled id */
    pthread_mutex_t lock;
    pthread_cond_t ready_cv;
    int ready, stop;
    kvWatcher *watcher;
    pthread_t thread;
};

static struct entry tomb;
#define TOMB (&tomb)

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
        } else if (!strcmp(s->slots[i]->id, id)) {
            return i;
        }
    }
    return first_free;
}

static int
grow(struct cancel_set *s)
{
    size_t old_cap = s->cap, cap = old_cap ? old_cap * 2 : 1024;
    struct entry **old = s->slots;

    s->slots = calloc(cap, sizeof(*s->slots));
    if (!s->slots) {
        s->slots = old;
        return -1;
    }
    s->cap = cap;
    s->used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] && old[i] != TOMB) {
            s->slots[find_slot(s, old[i]->id, 1)] = old[i];
            s->used++;
        }
    }
    free(old);
    return 0;
}

/* A record written again (a cancel repeated) moves its time on. */
static void
set_add(struct cancel_set *s, const char *id, int64_t at_ms)
{
    size_t i, len = strlen(id);

    if ((s->used + 1) * 2 > s->cap && grow(s) != 0)
        return;
    i = find_slot(s, id, 1);
    if (i == SIZE_MAX)
        return;
    if (s->slots[i] && s->slots[i] != TOMB) {
        s->slots[i]->at_ms = at_ms;
        return;
    }
    s->slots[i] = malloc(sizeof(struct entry) + len + 1);
    if (!s->slots[i])
        return;
    s->slots[i]->at_ms = at_ms;
    memcpy(s->slots[i]->id, id, len + 1);
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

/* When id's record was written, or -1 if the set does not hold it. */
static int64_t
written_at(struct cancel_set *s, const char *id)
{
    size_t i;
    int64_t at = -1;

    pthread_mutex_lock(&s->lock);
    i = s->cap ? find_slot(s, id, 0) : SIZE_MAX;
    if (i != SIZE_MAX && s->slots[i] && s->slots[i] != TOMB)
        at = s->slots[i]->at_ms;
    pthread_mutex_unlock(&s->lock);
    return at;
}

int
cancel_contains(struct cancel_set *s, const char *id)
{
    return written_at(s, id) >= 0;
}

int
cancel_applies(struct cancel_set *s, const char *id, int64_t sealed_ms)
{
    int64_t at = written_at(s, id);

    return at >= 0 && sa_cancel_applies(at, sealed_ms, s->ttl_ms);
}

static void
apply(struct cancel_set *s, kvEntry *e)
{
    struct sa_err why = {0};

    if (e && kvEntry_Operation(e) != kvOp_Put) {
        sa_log(SA_LOG_INFO, "cancel_marker_passed", "id=%s", kvEntry_Key(e));
        return;
    }
    if (e && sa_cancelrec_check(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), kvEntry_Key(e),
                                kvEntry_Created(e) / 1000000, &why) != SA_OK) {
        /* a keyless writer's: it cancels nothing, and unsets nothing the set holds */
        sa_log(SA_LOG_WARN, "junk_cancel_record", "id=%s error=\"%s\"", kvEntry_Key(e), why.msg);
        return;
    }
    pthread_mutex_lock(&s->lock);
    if (!e) {
        s->ready = 1; /* initial values done */
        pthread_cond_broadcast(&s->ready_cv);
    } else if (sa_cancelrec_is_lift(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e))) {
        set_remove(s, kvEntry_Key(e));
    } else {
        set_add(s, kvEntry_Key(e), kvEntry_Created(e) / 1000000);
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
cancel_start(struct cancel_set **out, kvStore *kv, int64_t ttl_ms, struct sa_err *err)
{
    struct cancel_set *s = calloc(1, sizeof(*s));
    struct timespec until;
    kvWatchOptions wo;
    natsStatus st;

    *out = NULL;
    if (!s)
        return sa_fail(err, SA_ENOMEM, "no memory for the cancel set");
    s->ttl_ms = ttl_ms;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->ready_cv, NULL);
    kvWatchOptions_Init(&wo);
    wo.IncludeHistory = true; /* what lies under junk or a marker (cancelrec.h) */
    st = kvStore_WatchAll(&s->watcher, kv, &wo);
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
