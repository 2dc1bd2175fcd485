/* Level marks in the KV bucket sendat_levels: key "<shard>.<slot ms>", value the time the
 * mark was made in ms (for people; nothing reads it). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "levelmark.h"
#include "natsconn.h"
#include "timeparse.h"

#define MADE_SLOTS 512 /* slots a process remembers it made sure of (a miss costs one create) */

struct made {
    int shard;
    int64_t slot; /* 0: empty */
};

struct sa_marks {
    jsCtx *js;
    kvStore *kv;
    pthread_mutex_t lock; /* guards made */
    struct made made[MADE_SLOTS];
};

enum sa_code
sa_marks_open(struct sa_marks **out, jsCtx *js, struct sa_err *err)
{
    struct sa_marks *m = NULL;
    kvStore *kv = NULL;
    natsStatus s = js_KeyValue(&kv, js, SA_LEVELS_BUCKET);

    *out = NULL;
    if (s == NATS_NOT_FOUND)
        return SA_OK;
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "bind bucket " SA_LEVELS_BUCKET);
    m = calloc(1, sizeof(*m));
    if (!m) {
        kvStore_Destroy(kv);
        return sa_fail(err, SA_ENOMEM, "no memory for the level marks");
    }
    m->js = js;
    m->kv = kv;
    pthread_mutex_init(&m->lock, NULL);
    *out = m;
    return SA_OK;
}

void
sa_marks_close(struct sa_marks *m)
{
    if (!m)
        return;
    kvStore_Destroy(m->kv);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static void
key_of(char *out, size_t cap, int shard, int64_t slot)
{
    snprintf(out, cap, "%d.%" PRId64, shard, slot);
}

/* The mark's stored message: SA_OK with its sequence, SA_ENOTFOUND, or a failure. */
static enum sa_code
find(struct sa_marks *m, int shard, int64_t slot, uint64_t *rev, struct sa_err *err)
{
    char key[48];
    kvEntry *e = NULL;
    natsStatus s;

    key_of(key, sizeof(key), shard, slot);
    s = kvStore_Get(&e, m->kv, key);
    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "level %s has no mark", key);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read the mark of a level");
    *rev = kvEntry_Revision(e);
    kvEntry_Destroy(e);
    return SA_OK;
}

enum sa_code
sa_marks_exists(struct sa_marks *m, int shard, int64_t slot, struct sa_err *err)
{
    uint64_t rev = 0;

    return find(m, shard, slot, &rev, err);
}

/* Creates the mark of (shard, slot) unless it exists; *made: whether this call created it. */
static enum sa_code
ensure(struct sa_marks *m, int shard, int64_t slot, int *made, struct sa_err *err)
{
    char key[48], value[24];
    uint64_t rev = 0;
    struct sa_err miss = {0};

    key_of(key, sizeof(key), shard, slot);
    snprintf(value, sizeof(value), "%" PRId64, sa_now_ms());
    *made = kvStore_CreateString(&rev, m->kv, key, value) == NATS_OK;
    if (*made)
        return SA_OK;
    /* Refused because it exists, or no answer: only a read tells which. A replica that has not
     * seen the mark yet answers "not found": not known here, so a failure to back off from. */
    if (find(m, shard, slot, &rev, &miss) == SA_OK)
        return SA_OK;
    return sa_fail(err, miss.code == SA_ENOTFOUND ? SA_ERETRY : miss.code,
                   "make sure level %s has a mark: %s", key, miss.msg);
}

/* A purge of the key's subject: a KV bucket's stream denies deleting a message, and a KV
 * delete or purge would leave a marker per slot behind for good. */
enum sa_code
sa_marks_drop(struct sa_marks *m, int shard, int64_t slot, struct sa_err *err)
{
    char key[48], subject[80];
    jsOptions o;
    jsErrCode jerr = 0;
    natsStatus s;

    key_of(key, sizeof(key), shard, slot);
    snprintf(subject, sizeof(subject), "$KV." SA_LEVELS_BUCKET ".%s", key);
    jsOptions_Init(&o);
    o.Stream.Purge.Subject = subject;
    s = js_PurgeStream(m->js, "KV_" SA_LEVELS_BUCKET, &o, &jerr);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, jerr, "purge the mark of a level");
}

static size_t
made_home(int shard, int64_t slot)
{
    return (size_t)(((uint64_t)slot / 1000u + (uint64_t)shard * 7919u) % MADE_SLOTS);
}

/* Whether this process made sure of (shard, slot) and may still trust it: a mark is deleted
 * only once its slot is over, so one ending more than a lead and a slot from now stands. */
static int
made_sure(struct sa_marks *m, const struct sa_layout *l, int shard, int64_t slot, int64_t now)
{
    struct made *d = &m->made[made_home(shard, slot)];
    int yes;

    if (slot + l->slot_ms <= now + l->lead_ms + l->slot_ms)
        return 0;
    pthread_mutex_lock(&m->lock);
    yes = d->slot == slot && d->shard == shard;
    pthread_mutex_unlock(&m->lock);
    return yes;
}

static void
remember(struct sa_marks *m, int shard, int64_t slot)
{
    struct made *d = &m->made[made_home(shard, slot)];

    pthread_mutex_lock(&m->lock);
    d->shard = shard;
    d->slot = slot;
    pthread_mutex_unlock(&m->lock);
}

enum sa_code
sa_marks_before_publish(struct sa_marks *m, const struct sa_layout *l, const char *subject,
                        int64_t now_ms, int *made, struct sa_err *err)
{
    struct sa_place place;
    enum sa_code rc;
    int created = 0;

    if (made)
        *made = 0;
    if (!m || sa_layout_parse_subject(&place, subject, NULL) != SA_OK || !place.slot)
        return SA_OK; /* a window level; a subject no level reads is the sweep's */
    if (made_sure(m, l, place.shard, place.slot, now_ms))
        return SA_OK;
    rc = ensure(m, place.shard, place.slot, &created, err);
    if (rc == SA_OK)
        remember(m, place.shard, place.slot);
    if (made)
        *made = created;
    return rc;
}
