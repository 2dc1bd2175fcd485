/* Level marks in the KV bucket sendat_levels: key "<shard>.<slot ms>", value the time the
 * mark was made in ms (for people; nothing reads it). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "levelmark.h"
#include "natserr.h"
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

/* Key's value, read from the stream's leader (a direct get may be answered by a replica that
 * has not seen a mark yet) into out if not NULL: SA_OK, SA_ENOTFOUND, or a failure. */
static enum sa_code
find(struct sa_marks *m, const char *key, char *out, size_t cap, struct sa_err *err)
{
    char subject[80];
    natsMsg *msg = NULL;
    jsErrCode jerr = 0;
    natsStatus s;

    snprintf(subject, sizeof(subject), "$KV." SA_LEVELS_BUCKET ".%s", key);
    s = js_GetLastMsg(&msg, m->js, "KV_" SA_LEVELS_BUCKET, subject, NULL, &jerr);
    if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr)
        return sa_fail(err, SA_ENOTFOUND, "level mark %s does not exist", key);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, jerr, "read a level mark");
    if (out)
        snprintf(out, cap, "%.*s", natsMsg_GetDataLength(msg), natsMsg_GetData(msg));
    natsMsg_Destroy(msg);
    return SA_OK;
}

enum sa_code
sa_marks_exists(struct sa_marks *m, int shard, int64_t slot, struct sa_err *err)
{
    char key[48];

    key_of(key, sizeof(key), shard, slot);
    return find(m, key, NULL, 0, err);
}

enum sa_code
sa_marks_since(struct sa_marks *m, int shard, uint64_t *since, struct sa_err *err)
{
    char key[32], value[32];
    enum sa_code rc;

    snprintf(key, sizeof(key), "since.%d", shard);
    if ((rc = find(m, key, value, sizeof(value), err)) != SA_OK)
        return rc;
    *since = strtoull(value, NULL, 10);
    return SA_OK;
}

enum sa_code
sa_marks_start(struct sa_marks *m, int shard, uint64_t last, struct sa_err *err)
{
    char key[32], value[32];
    uint64_t rev = 0;

    snprintf(key, sizeof(key), "since.%d", shard);
    snprintf(value, sizeof(value), "%" PRIu64, last);
    if (kvStore_CreateString(&rev, m->kv, key, value) == NATS_OK ||
        find(m, key, NULL, 0, NULL) == SA_OK) /* the first init's stands */
        return SA_OK;
    return sa_fail(err, SA_ENATS, "cannot write level mark %s", key);
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
    /* Refused because it exists, or no answer: only a read tells which. */
    if (find(m, key, NULL, 0, &miss) == SA_OK)
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
made_home(const struct sa_layout *l, int shard, int64_t slot)
{
    return (size_t)(((uint64_t)(slot / l->slot_ms) + (uint64_t)shard * 7919u) % MADE_SLOTS);
}

/* Whether this process made sure of (shard, slot) and may still trust it: a mark is deleted
 * only once its slot is over, so one ending more than a lead and a slot from now stands. */
static int
made_sure(struct sa_marks *m, const struct sa_layout *l, int shard, int64_t slot, int64_t now)
{
    struct made *d = &m->made[made_home(l, shard, slot)];
    int yes;

    if (slot + l->slot_ms <= now + l->lead_ms + l->slot_ms)
        return 0;
    pthread_mutex_lock(&m->lock);
    yes = d->slot == slot && d->shard == shard;
    pthread_mutex_unlock(&m->lock);
    return yes;
}

static void
remember(struct sa_marks *m, const struct sa_layout *l, int shard, int64_t slot)
{
    struct made *d = &m->made[made_home(l, shard, slot)];

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

    if (made)
        *made = 0;
    if (!m || sa_layout_parse_subject(&place, subject, NULL) != SA_OK || !place.slot)
        return SA_OK; /* a window level; a subject no level reads is the sweep's */
    return sa_marks_before_publish_at(m, l, place.shard, place.slot, now_ms, made, err);
}

enum sa_code
sa_marks_before_publish_at(struct sa_marks *m, const struct sa_layout *l, int shard, int64_t slot,
                           int64_t now_ms, int *made, struct sa_err *err)
{
    enum sa_code rc;
    int created = 0;

    if (made)
        *made = 0;
    if (!m || !slot || made_sure(m, l, shard, slot, now_ms))
        return SA_OK;
    rc = ensure(m, shard, slot, &created, err);
    if (rc == SA_OK)
        remember(m, l, shard, slot);
    if (made)
        *made = created;
    return rc;
}
