/* sendat init: writes the layout once, then creates the task streams and claims buckets of
 * its shards, the dead-letter stream and the other buckets. Safe to run from many places at
 * once: every create accepts an existing object, and the layout record is create-if-absent, so
 * the first writer's numbers (the shard count among them) hold for the whole cluster. On a
 * cluster, each new shard's stream and claims bucket go to a server of their own
 * (placement.h), leaders with --replicas 3 and the one copy with 1. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "claimmac.h"
#include "jsapi.h"
#include "ledgermark.h"
#include "cli.h"
#include "nopurge.h"
#include "placement.h"
#include "tasklimit.h"
#include "timeparse.h"

struct init_opts {
    struct cli cli;
    struct sa_layout layout;
    int layout_given;
    int shards_given;
    int replicas;
    int64_t dedupe_ms;
    int64_t claims_ttl_ms;
    int64_t dlq_age_ms;
    int64_t dlq_bytes;
    long max_tasks;         /* --max-tasks: the producers' limit per task stream; 0: none */
    int64_t max_task_bytes; /* --max-task-bytes; 0: none */
    int limits_given;       /* either flag: existing task streams get the limits */
    int layout_existed;     /* an earlier init wrote the layout (settle_layout) */
};

static const char usage[] =
    "usage: sendat init [--server URL] [--replicas N] [--shards N] [--window DUR] [--slot DUR]\n"
    "                   [--ack-wait DUR] [--lead DUR] [--dedupe-window DUR]\n"
    "                   [--claims-ttl DUR] [--dlq-max-age DUR] [--dlq-max-bytes SIZE]\n"
    "                   [--max-tasks N] [--max-task-bytes SIZE]\n"
    "  creates streams and buckets; idempotent. DUR is like 250ms, 10s, 10m, 2h, 7d.\n"
    "  defaults: replicas 1, shards 1 (1-64 task streams, each with its claims bucket;\n"
    "            JetStream places their leaders), window 10m, slot 10s, ack-wait 30s, lead 2s,\n"
    "            dedupe-window 1h, claims-ttl 7d (at least 1h; 0s: for ever), dlq-max-age 30d,\n"
    "            dlq-max-bytes 1G\n"
    "  SIZE is bytes, or with K, M or G (1024-based); a full dead-letter stream drops its oldest.\n"
    "  --max-tasks N, --max-task-bytes SIZE: producers refuse new tasks (exit 7, HTTP 507)\n"
    "            once a task stream (each shard) holds that many; waiting tasks are never\n"
    "            deleted. Default none; a later init sets or changes them, 0 removes them.\n"
    "  the layout (shards, window, slot, ack-wait, lead) is written once; later runs keep it\n"
    "  and refuse different numbers (a task's shard follows from its id: no resharding).\n";

/* A size flag: "1G", "512M", "65536": at least 1 MiB, so a typo does not make every dead
 * letter drop (or every booking fail); 0 only where zero is allowed (zero_ok). 0, or -1 after
 * saying what is wrong. */
static int
parse_size_named(int64_t *out, const char *text, const char *flag, int zero_ok)
{
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;

    if (zero_ok && !strcmp(text, "0")) {
        *out = 0;
        return 0;
    }
    if (end == text || v < 1 || v > (1LL << 40) || (shift && end[1]) || (!shift && *end)) {
        cli_error(EXIT_USAGE, "init: --%s: want a size like 1G, 512M or 1048576", flag);
        return -1;
    }
    *out = (int64_t)v << shift;
    if (*out < (1 << 20) || *out > (1LL << 50)) {
        cli_error(EXIT_USAGE, "init: --%s: want 1M to 1024T%s", flag, zero_ok ? " (0: none)" : "");
        return -1;
    }
    return 0;
}

static int
parse_size(void *to, const char *text)
{
    return parse_size_named(to, text, "dlq-max-bytes", 0);
}

static int
parse_task_bytes(void *to, const char *text)
{
    return parse_size_named(to, text, "max-task-bytes", 1);
}

/* A layout duration: written once, so init notes that one was given. */
#define LAYOUT(n, field)                                                                           \
    {                                                                                              \
        .name = n, .kind = CLI_OPT_DURATION, .to = &o->layout.field, .given = &o->layout_given     \
    }

/* Reads the options into o and checks what the table cannot (replicas 1, 3 or 5; claims-ttl). */
static enum cli_opts_result
parse_opts(struct init_opts *o, int argc, char **argv)
{
    long replicas = o->replicas, shards = o->layout.shards;
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(&o->cli),
        {.name = "replicas", .kind = CLI_OPT_LONG, .to = &replicas, .lo = 1, .hi = 5},
        {.name = "shards",
         .kind = CLI_OPT_LONG,
         .to = &shards,
         .lo = 1,
         .hi = SA_SHARDS_MAX,
         .given = &o->shards_given},
        LAYOUT("window", window_ms),
        LAYOUT("slot", slot_ms),
        LAYOUT("ack-wait", ack_wait_ms),
        LAYOUT("lead", lead_ms),
        {.name = "dedupe-window", .kind = CLI_OPT_DURATION, .to = &o->dedupe_ms},
        {.name = "claims-ttl", .kind = CLI_OPT_DURATION, .to = &o->claims_ttl_ms},
        {.name = "dlq-max-age", .kind = CLI_OPT_DURATION, .to = &o->dlq_age_ms},
        {.name = "dlq-max-bytes", .kind = CLI_OPT_CALL, .to = &o->dlq_bytes, .call = parse_size},
        {.name = "max-tasks",
         .kind = CLI_OPT_LONG,
         .to = &o->max_tasks,
         .lo = 0,
         .hi = 1000000000000L,
         .given = &o->limits_given},
        {.name = "max-task-bytes",
         .kind = CLI_OPT_CALL,
         .to = &o->max_task_bytes,
         .call = parse_task_bytes,
         .given = &o->limits_given},
        {0},
    };
    int rest = 0;
    enum cli_opts_result r = cli_opts_parse("init", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return r;
    o->replicas = (int)replicas;
    o->layout.shards = (int)shards;
    if (rest != argc)
        return cli_bad("init: unexpected argument %s", argv[rest]);
    if (replicas != 1 && replicas != 3 && replicas != 5)
        return cli_bad("init: --replicas must be 1, 3 or 5");
    if (o->claims_ttl_ms && o->claims_ttl_ms < SA_CLAIMS_TTL_MIN_MS)
        return cli_bad("init: --claims-ttl must be at least 1h (or 0s: for ever): consumers "
                       "refuse a task due longer ago than the claim ledger remembers");
    return CLI_OPTS_OK;
}

#undef LAYOUT

/* A task stream's limits (tasklimit.h): the producers' limit plus the consumers' headroom,
 * discard new, so a full stream refuses a publish and deletes nothing; none: -1. */
static void
task_limits(jsStreamConfig *sc, const struct init_opts *o)
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
keep_stream(jsCtx *js, jsStreamInfo *si, int workqueue, const struct init_opts *o,
            struct sa_err *err)
{
    jsStreamInfo *up = NULL;
    jsErrCode jerr = 0;
    natsStatus s = NATS_OK;
    struct init_opts keep = *o;

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
           const struct init_opts *o, struct sa_err *err)
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

/* Writes o's layout if there is none (the first init's numbers hold) and leaves the one in
 * force in n->layout and o->layout. Numbers given that differ from the record are refused,
 * the shard count with its own reason. */
static int
settle_layout(struct sa_nats *n, struct init_opts *o)
{
    char text[160];
    struct sa_err err = {0};
    uint64_t rev;

    sa_layout_format(text, sizeof(text), &o->layout);
    if (kvStore_CreateString(&rev, n->meta, "layout", text) == NATS_OK) {
        n->layout = o->layout;
        return EXIT_OK;
    }
    o->layout_existed = 1;
    if (sa_nats_read_layout(n, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "init: layout: %s", err.msg);
    if (o->shards_given && n->layout.shards != o->layout.shards)
        return cli_error(EXIT_USAGE,
                         "init: this cluster has %d shard(s), not %d: a task's shard follows "
                         "from its id, so the count cannot change (resharding is not "
                         "supported; start a new cluster or account for another count)",
                         n->layout.shards, o->layout.shards);
    o->layout.shards = n->layout.shards;
    if (o->layout_given && !sa_layout_equal(&n->layout, &o->layout)) {
        sa_layout_format(text, sizeof(text), &n->layout);
        return cli_error(EXIT_USAGE, "init: the layout is already %s and cannot change", text);
    }
    o->layout = n->layout;
    return EXIT_OK;
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
                 const char *bucket, const struct init_opts *o, struct sa_err *err)
{
    char kv_stream[80];
    struct init_opts wide = *o;
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

/* Says what a claims bucket made again lost (ledgermark.h): recorded_ns the one init recorded. */
static void
say_ledger_lost(struct sa_nats *n, int k, const char *stream, int64_t recorded_ns)
{
    jsStreamInfo *si = NULL;
    char was[40], stored[48] = "";

    sa_time_format(was, sizeof(was), recorded_ns / 1000000);
    if (js_GetStreamInfo(&si, n->js, stream, NULL, NULL) == NATS_OK)
        snprintf(stored, sizeof(stored), "%" PRIu64 " ", si->State.Msgs);
    jsStreamInfo_Destroy(si);
    fprintf(stderr,
            "init: the claims bucket of shard %d is not the one made at %s (it was deleted): the "
            "outcome of every send and cancel claimed in it is lost. `sendat status` shows none, "
            "an id used before may be booked again, and a task a consumer was sending when the "
            "bucket went may be sent again; the %stasks stored in %s are sent at their due "
            "times (cancels kept in the cancel bucket still hold)\n",
            k, was, stored, stream);
}

/* Records shard k's claims bucket as init's (ledgermark.h), saying what was lost if another was
 * recorded: until then the consumers claim nothing in it. */
static enum sa_code
record_ledger(struct sa_nats *n, int k, const char *stream, struct sa_err *err)
{
    int64_t made = 0, recorded = 0;
    uint64_t rev = 0, wrote;
    char key[32], text[24];
    enum sa_code rc;
    natsStatus s;

    if ((rc = sa_ledger_created(n->js, k, &made, err)) != SA_OK ||
        (rc = sa_ledger_recorded(n->meta, k, &recorded, &rev, err)) != SA_OK)
        return rc;
    if (made == recorded)
        return SA_OK;
    if (recorded)
        say_ledger_lost(n, k, stream, recorded);
    sa_layout_meta_key(key, sizeof(key), SA_LEDGER_META, k);
    snprintf(text, sizeof(text), "%" PRId64, made);
    s = rev ? kvStore_UpdateString(&wrote, n->meta, key, text, rev)
            : kvStore_CreateString(&wrote, n->meta, key, text);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "record the claims bucket");
}

/* Shard k's task stream and claims bucket, where its level marks start (the first init's
 * last sequence) and where its catch-up starts (the first init's window). */
static enum sa_code
add_shard(struct sa_nats *n, int k, const struct init_opts *o, struct sa_err *err)
{
    char stream[32], subjects[SA_SUBJECT_MAX], bucket[64], key[32], cursor[32];
    enum sa_code rc;
    uint64_t rev;

    sa_layout_stream(stream, sizeof(stream), k);
    sa_layout_stream_subjects(subjects, sizeof(subjects), k);
    sa_layout_claims_bucket(bucket, sizeof(bucket), k);
    if ((rc = add_shard_assets(n, k, stream, subjects, bucket, o, err)) != SA_OK ||
        (rc = record_ledger(n, k, stream, err)) != SA_OK ||
        (n->marks && (rc = start_marks(n, k, stream, err)) != SA_OK))
        return rc;
    sa_layout_meta_key(key, sizeof(key), "cursor", k);
    snprintf(cursor, sizeof(cursor), "%" PRId64, sa_layout_window(&o->layout, sa_now_ms()));
    kvStore_CreateString(&rev, n->meta, key, cursor); /* an existing cursor stays */
    return SA_OK;
}

/* How many records the claims and cancel buckets hold (0 if a bucket does not answer). */
static uint64_t
records_held(struct sa_nats *n, int shards)
{
    char bucket[64], stream[80];
    uint64_t held = 0;

    for (int k = -1; k < shards; k++) {
        jsStreamInfo *si = NULL;

        if (k < 0)
            snprintf(bucket, sizeof(bucket), "%s", SA_CANCEL_BUCKET);
        else
            sa_layout_claims_bucket(bucket, sizeof(bucket), k);
        snprintf(stream, sizeof(stream), "KV_%s", bucket);
        if (js_GetStreamInfo(&si, n->js, stream, NULL, NULL) == NATS_OK)
            held += si->State.Msgs;
        jsStreamInfo_Destroy(si);
    }
    return held;
}

/* Marks when claim and cancel records began to carry MACs (claimmac.h), once: the record's
 * server time is the line before which a record without a MAC is an older version's. Run last,
 * when every bucket exists: consumers wait for it (an upgrade's consumers until this init). */
static enum sa_code
mark_mac_since(struct sa_nats *n, const struct init_opts *o, struct sa_err *err)
{
    uint64_t rev;
    kvEntry *e = NULL;
    natsStatus s = kvStore_CreateString(&rev, n->meta, SA_CLAIMMAC_SINCE_KEY,
                                        "claim and cancel records carry MACs from here on");

    if (s == NATS_OK && o->layout_existed && records_held(n, n->layout.shards) > 0)
        fprintf(stderr, "init: claim and cancel records stored until now carry no MAC: read as "
                        "an older version's (the consumers of this version send from now on)\n");
    if (s != NATS_OK && (s = kvStore_Get(&e, n->meta, SA_CLAIMMAC_SINCE_KEY)) == NATS_OK)
        kvEntry_Destroy(e); /* an earlier init's mark stays */
    return s == NATS_OK ? SA_OK
                        : sa_nats_fail(err, s, 0, "mark when claim records began to carry MACs");
}

#define JS_API_WAIT_MS 5000

/* Lets stream's messages carry a Nats-TTL header (nats-server 2.11+; nats.c 3.4 has no field
 * for it, so the config is read, changed and sent back as JSON). Once set, the server keeps it
 * (it cannot be turned off), and nats.c's own updates never touch these buckets again. */
static enum sa_code
allow_msg_ttl(struct sa_nats *n, const char *stream, struct sa_err *err)
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
    else if (!json_is_true(json_object_get(cfg, "allow_msg_ttl"))) {
        json_object_set_new(cfg, "allow_msg_ttl", json_true());
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
 * cancel bucket's task records expire with their claims (producer/book/cancel.c). */
static enum sa_code
upgrade_buckets(struct sa_nats *n, struct sa_err *err)
{
    enum sa_code rc = sa_jsfeat_detect(n->nc, &n->feat, err);

    if (rc == SA_OK && (n->feat.have & SA_JSFEAT_MSG_TTL))
        rc = allow_msg_ttl(n, "KV_" SA_CANCEL_BUCKET, err);
    return rc;
}

static enum sa_code
add_all(struct sa_nats *n, const struct init_opts *o, struct sa_err *err)
{
    enum sa_code rc = add_stream(n->js, SA_DLQ_STREAM, SA_DLQ_SUBJECTS, 0, o, err);

    if (rc == SA_OK)
        rc = add_bucket(n->js, SA_CANCEL_BUCKET, 1, 0, o->replicas, err);
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
        rc = add_shard(n, k, o, err);
    return rc;
}

int
cmd_init(int argc, char **argv)
{
    struct init_opts o = {.replicas = 1,
                          .dedupe_ms = 3600000,
                          .claims_ttl_ms = 7 * 86400000LL,
                          .dlq_age_ms = 30 * 86400000LL,
                          .dlq_bytes = 1LL << 30,
                          .max_tasks = -1,
                          .max_task_bytes = -1};
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    enum sa_code rc;
    enum cli_opts_result r;
    int code;

    sa_layout_defaults(&o.layout);
    if ((r = parse_opts(&o, argc, argv)) != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (sa_layout_check(&o.layout, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "init: %s", err.msg);
    if (sa_nats_connect(&n, o.cli.server, "sendat-init", SA_INBOX_PRODUCER, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "%s", err.msg);
    rc = add_bucket(n->js, SA_META_BUCKET, 1, 0, o.replicas, &err);
    if (rc == SA_OK && js_KeyValue(&n->meta, n->js, SA_META_BUCKET) != NATS_OK)
        rc = sa_fail(&err, SA_ENATS, "bucket %s cannot be bound", SA_META_BUCKET);
    code = rc == SA_OK ? settle_layout(n, &o) : cli_error(EXIT_FAIL, "init: %s", err.msg);
    if (code == EXIT_OK && add_all(n, &o, &err) != SA_OK)
        code = cli_error(cli_exit_for(err.code), "init: %s", err.msg);
    if (code == EXIT_OK && mark_mac_since(n, &o, &err) != SA_OK)
        code = cli_error(cli_exit_for(err.code), "init: %s", err.msg);
    cli_close(n);
    if (code == EXIT_OK)
        puts("ok");
    return code;
}
