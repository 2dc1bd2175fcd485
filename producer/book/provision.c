/* What `sendat init` makes: the task streams and claims bucket of every shard, the dead-letter
 * stream and the other buckets. Every create accepts an existing object, so it is safe to run
 * from many places at once. On a cluster, each new shard's stream and claims bucket go to a
 * server of their own (placement.h), leaders with --replicas 3 and the one copy with 1. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancelrec.h"
#include "jsapi.h"
#include "nopurge.h"
#include "placement.h"
#include "provision.h"
#include "tasklimit.h"
#include "timeparse.h"

/* A task stream's limits (tasklimit.h): the producers' limit plus the consumers' headroom,
 * discard new, so a full stream refuses a publish and deletes nothing; none: -1. */
static void
task_limits(jsStreamConfig *sc, const struct provision *o)
{
    sc->MaxMsgs = o->max_tasks > 0 ? tasklimit_hard(o->max_tasks, 0) : -1;
    sc->MaxBytes = o->max_task_bytes > 0 ? tasklimit_hard(o->max_task_bytes, 1) : -1;
    sc->Discard = js_DiscardNew;
}

/* Whether si's new limits are below what it holds: nats-server 2.9 applies a lower limit by
 * deleting the oldest messages whatever the discard policy, so init refuses it (err). */
static int
below(const char *stream, const char *unit, const char *flag, uint64_t held, int64_t max, int bytes,
      struct sa_err *err)
{
    if (max <= 0 || (uint64_t)max >= held)
        return 0;
    sa_fail(err, SA_EINVAL,
            "%s holds %" PRIu64 " %s, more than %s %" PRId64 " allows with its headroom (%" PRId64
            "): a lower limit is refused, as the broker would delete the oldest to apply it; "
            "wait until it has drained or give a higher one",
            stream, held, unit, flag, tasklimit_of(max, bytes), max);
    return 1;
}

static int
below_count(const jsStreamInfo *si, struct sa_err *err)
{
    const jsStreamConfig *c = si->Config;

    return below(c->Name, "tasks", "--max-tasks", si->State.Msgs, c->MaxMsgs, 0, err) ||
           below(c->Name, "bytes", "--max-task-bytes", si->State.Bytes, c->MaxBytes, 1, err);
}

/* Takes si. An existing stream is kept as it is, except that a dead-letter stream made
 * before it had a byte limit gets one (once: a limit set since is never changed), and a task
 * stream gets the limits given (--max-tasks, --max-task-bytes; one not given stays). */
static enum sa_code
keep_stream(jsCtx *js, jsStreamInfo *si, int workqueue, const struct provision *o,
            struct sa_err *err)
{
    jsStreamInfo *up = NULL;
    jsErrCode jerr = 0;
    natsStatus s = NATS_OK;
    struct provision keep = *o;

    if (workqueue && o->limits_given) {
        if (o->max_tasks < 0) /* not given: the stream's stays */
            keep.max_tasks = (long)tasklimit_of(si->Config->MaxMsgs, 0);
        if (o->max_task_bytes < 0)
            keep.max_task_bytes = tasklimit_of(si->Config->MaxBytes, 1);
        task_limits(si->Config, &keep);
        if (below_count(si, err)) {
            jsStreamInfo_Destroy(si);
            return SA_EINVAL;
        }
        s = js_UpdateStream(&up, js, si->Config, NULL, &jerr);
        jsStreamInfo_Destroy(up);
    }
    if (!workqueue && si->Config->MaxBytes <= 0) {
        si->Config->MaxBytes = o->dlq_bytes;
        si->Config->Discard = js_DiscardOld;
        s = js_UpdateStream(&up, js, si->Config, NULL, &jerr);
        jsStreamInfo_Destroy(up);
    }
    jsStreamInfo_Destroy(si);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, jerr,
                            workqueue ? "task stream limits" : "dead-letter stream byte limit");
    return SA_OK;
}

static enum sa_code
add_stream(jsCtx *js, const char *name, const char *subject, int workqueue,
           const struct provision *o, struct sa_err *err)
{
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    const char *subjects[] = {subject};
    natsStatus s;

    if (js_GetStreamInfo(&si, js, name, NULL, &jerr) == NATS_OK)
        return keep_stream(js, si, workqueue, o, err); /* existing streams are kept as they are */
    jsStreamConfig_Init(&sc);
    sc.Name = name;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = workqueue ? js_WorkQueuePolicy : js_LimitsPolicy;
    sc.Storage = js_FileStorage;
    sc.Replicas = o->replicas;
    sc.Duplicates = (workqueue ? o->dedupe_ms : 120000) * 1000000LL;
    sc.MaxAge = workqueue ? 0 : o->dlq_age_ms * 1000000LL;
    sc.MaxBytes = workqueue ? -1 : o->dlq_bytes;
    sc.Discard = js_DiscardOld; /* the dead-letter stream drops its oldest, as with its max age */
    if (workqueue && o->limits_given)
        task_limits(&sc, o); /* a full task stream refuses, never drops (discard new) */
    sc.AllowDirect = true;
    s = js_AddStream(&si, js, &sc, NULL, &jerr);
    jsStreamInfo_Destroy(si);
    if (s != NATS_OK && js_GetStreamInfo(&si, js, name, NULL, NULL) == NATS_OK) {
        jsStreamInfo_Destroy(si); /* someone else created it at the same moment */
        return SA_OK;
    }
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, jerr, name);
}

static enum sa_code
add_bucket(jsCtx *js, const char *name, int history, int64_t ttl_ms, int replicas,
           struct sa_err *err)
{
    kvConfig kc;
    kvStore *kv = NULL;
    natsStatus s;

    if (js_KeyValue(&kv, js, name) == NATS_OK) {
        kvStore_Destroy(kv);
        return SA_OK;
    }
    kvConfig_Init(&kc);
    kc.Bucket = name;
    kc.History = (uint8_t)history;
    kc.TTL = ttl_ms * 1000000LL; /* nats.c passes TTL through as the stream MaxAge: nanoseconds */
    kc.Replicas = replicas;
    kc.StorageType = js_FileStorage;
    s = js_CreateKeyValue(&kv, js, &kc);
    kvStore_Destroy(kv);
    if (s != NATS_OK && js_KeyValue(&kv, js, name) == NATS_OK) {
        kvStore_Destroy(kv);
        return SA_OK;
    }
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, name);
}

/* Shard k's level marks start: tasks stored so far were booked without them (levelmark.h). */
static enum sa_code
start_marks(struct sa_nats *n, int k, const char *stream, struct sa_err *err)
{
    jsStreamInfo *si = NULL;
    uint64_t last = 0;
    natsStatus s = js_GetStreamInfo(&si, n->js, stream, NULL, NULL);

    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, stream);
    last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    return sa_marks_start(n->marks, k, last, err);
}

/* Whether stream exists already (an init before made it: it stays where it is). */
static int
stream_exists(jsCtx *js, const char *stream)
{
    jsStreamInfo *si = NULL;
    int found = js_GetStreamInfo(&si, js, stream, NULL, NULL) == NATS_OK;

    jsStreamInfo_Destroy(si);
    return found;
}

/* A new shard's stream and claims bucket on a cluster: made wide enough to choose their
 * server (placement.h), then on shard k's server. What the wide make could not make (a
 * cluster of 2) is made as asked, unplaced; a placement that fails leaves them usable. */
static enum sa_code
add_shard_assets(struct sa_nats *n, int k, const char *stream, const char *subjects,
                 const char *bucket, const struct provision *o, struct sa_err *err)
{
    char kv_stream[80];
    struct provision wide = *o;
    struct sa_err perr = {0};
    int wide_stream = 0, wide_bucket = 0;
    enum sa_code rc;

    snprintf(kv_stream, sizeof(kv_stream), "KV_%s", bucket);
    /* one shard has nothing to spread */
    wide.replicas = o->layout.shards > 1 ? placement_create_replicas(n->js, o->replicas) : 0;
    if (wide.replicas > 0 && !stream_exists(n->js, stream) &&
        !stream_exists(n->js, kv_stream)) { /* a shard made before is not moved */
        wide_stream = add_stream(n->js, stream, subjects, 1, &wide, &perr) == SA_OK;
        wide_bucket = wide_stream && add_bucket(n->js, bucket, 32, o->claims_ttl_ms, wide.replicas,
                                                &perr) == SA_OK;
        if (!wide_bucket)
            fprintf(stderr, "init: shard %d stays where JetStream puts it: %s\n", k, perr.msg);
    }
    if ((rc = add_stream(n->js, stream, subjects, 1, o, err)) != SA_OK ||
        (rc = add_bucket(n->js, bucket, 32, o->claims_ttl_ms, o->replicas, err)) != SA_OK ||
        (rc = nopurge_settle(n->js, kv_stream, err)) != SA_OK)
        return rc; /* both are kept as they are if the wide make made them */
    sa_err_clear(&perr);
    if ((wide_stream && placement_settle(n->nc, n->js, stream, k, o->replicas, &perr) != SA_OK) ||
        (wide_bucket && placement_settle(n->nc, n->js, kv_stream, k, o->replicas, &perr) != SA_OK))
        fprintf(stderr, "init: shard %d is not placed: %s\n", k, perr.msg);
    return SA_OK;
}

/* Shard k's task stream and claims bucket, recorded (record), where its level marks start (the
 * first init's last sequence) and where its catch-up starts (the first init's window). */
static enum sa_code
add_shard(struct sa_nats *n, int k, const struct provision *o, provision_record_fn *record,
          struct sa_err *err)
{
    char stream[32], subjects[SA_SUBJECT_MAX], bucket[64], key[32], cursor[32];
    enum sa_code rc;
    uint64_t rev;

    sa_layout_stream(stream, sizeof(stream), k);
    sa_layout_stream_subjects(subjects, sizeof(subjects), k);
    sa_layout_claims_bucket(bucket, sizeof(bucket), k);
    if ((rc = add_shard_assets(n, k, stream, subjects, bucket, o, err)) != SA_OK ||
        (record && (rc = record(n, k, stream, err)) != SA_OK) ||
        (n->marks && (rc = start_marks(n, k, stream, err)) != SA_OK))
        return rc;
    sa_layout_meta_key(key, sizeof(key), "cursor", k);
    snprintf(cursor, sizeof(cursor), "%" PRId64, sa_layout_window(&o->layout, sa_now_ms()));
    kvStore_CreateString(&rev, n->meta, key, cursor); /* an existing cursor stays */
    return SA_OK;
}

#define JS_API_WAIT_MS 5000

/* Settles the cancel bucket made by an earlier version (the config is read, changed and sent
 * back as JSON: nats.c 3.4 has no field for a message TTL, and its own updates would drop it):
 * SA_CANCEL_HISTORY entries a key and no rollups, so what a keyless writer puts over a record
 * cannot push it out at once nor purge it (cancelrec.h); with ttl, its messages may carry a
 * Nats-TTL header (nats-server 2.11+; once set, the server keeps it: it cannot be turned off). */
static enum sa_code
settle_cancel_bucket(struct sa_nats *n, const char *stream, int ttl, struct sa_err *err)
{
    char api[128];
    json_t *info = NULL, *cfg = NULL;
    char *body = NULL;
    enum sa_code rc;

    snprintf(api, sizeof(api), "STREAM.INFO.%s", stream);
    if ((rc = sa_jsapi_request(n->nc, api, "", JS_API_WAIT_MS, &info, NULL, err)) != SA_OK)
        return rc;
    cfg = json_object_get(info, "config");
    if (!json_is_object(cfg))
        rc = sa_fail(err, SA_ENATS, "%s: no config in the answer", api);
    else if ((ttl && !json_is_true(json_object_get(cfg, "allow_msg_ttl"))) ||
             json_integer_value(json_object_get(cfg, "max_msgs_per_subject")) < SA_CANCEL_HISTORY ||
             json_is_true(json_object_get(cfg, "allow_rollup_hdrs"))) {
        if (ttl)
            json_object_set_new(cfg, "allow_msg_ttl", json_true());
        json_object_set_new(cfg, "max_msgs_per_subject", json_integer(SA_CANCEL_HISTORY));
        json_object_set_new(cfg, "allow_rollup_hdrs", json_false());
        body = json_dumps(cfg, JSON_COMPACT);
        snprintf(api, sizeof(api), "STREAM.UPDATE.%s", stream);
        rc = body ? sa_jsapi_request(n->nc, api, body, JS_API_WAIT_MS, NULL, NULL, err)
                  : sa_fail(err, SA_ENOMEM, "no memory for %s's config", stream);
    }
    free(body);
    json_decref(info);
    return rc;
}

/* What the server offers beyond 2.9 (jsfeat.h), for buckets made before the upgrade too: the
 * cancel bucket's task records expire with their claims (producer/book/cancel.c); and the
 * cancel bucket's history and rollups as this version keeps them. */
static enum sa_code
upgrade_buckets(struct sa_nats *n, struct sa_err *err)
{
    enum sa_code rc = sa_jsfeat_detect(n->nc, &n->feat, err);

    if (rc == SA_OK)
        rc = settle_cancel_bucket(n, "KV_" SA_CANCEL_BUCKET,
                                  (n->feat.have & SA_JSFEAT_MSG_TTL) != 0, err);
    return rc;
}

enum sa_code
provision_all(struct sa_nats *n, const struct provision *o, provision_record_fn *record,
              struct sa_err *err)
{
    enum sa_code rc = add_stream(n->js, SA_DLQ_STREAM, SA_DLQ_SUBJECTS, 0, o, err);

    if (rc == SA_OK)
        rc = add_bucket(n->js, SA_CANCEL_BUCKET, SA_CANCEL_HISTORY, 0, o->replicas, err);
    if (rc == SA_OK)
        rc = add_bucket(n->js, SA_SERIES_BUCKET, 1, 0, o->replicas, err);
    if (rc == SA_OK) /* group members live as long as their claims could */
        rc = add_bucket(n->js, SA_GROUPS_BUCKET, 1, o->claims_ttl_ms, o->replicas, err);
    if (rc == SA_OK) /* fleet members beat every second; the TTL forgets the dead */
        rc = add_bucket(n->js, SA_MEMBERS_BUCKET, 1, 20000, o->replicas, err);
    if (rc == SA_OK) /* fleet-wide provider limits: a lease outlives no holder by more than 60 s */
        rc = add_bucket(n->js, SA_LEASES_BUCKET, 1, 60000, o->replicas, err);
    if (rc == SA_OK) /* which slots were booked into (levelmark.h): purged after their slot */
        rc = add_bucket(n->js, SA_LEVELS_BUCKET, 1, 0, o->replicas, err);
    if (rc == SA_OK)
        rc = upgrade_buckets(n, err);
    if (rc == SA_OK && !n->marks)
        rc = sa_marks_open(&n->marks, n->js, err);
    /* the shards last: a process binds the claims buckets last, so once it binds, all is made */
    for (int k = 0; k < o->layout.shards && rc == SA_OK; k++)
        rc = add_shard(n, k, o, record, err);
    return rc;
}

enum sa_code
provision_meta(struct sa_nats *n, int replicas, struct sa_err *err)
{
    enum sa_code rc = add_bucket(n->js, SA_META_BUCKET, 1, 0, replicas, err);

    if (rc == SA_OK && js_KeyValue(&n->meta, n->js, SA_META_BUCKET) != NATS_OK)
        rc = sa_fail(err, SA_ENATS, "bucket %s cannot be bound", SA_META_BUCKET);
    return rc;
}
