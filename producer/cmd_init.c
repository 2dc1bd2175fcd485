/* sendat init: writes the layout once, then creates the task streams and claims buckets of
 * its shards, the dead-letter stream and the other buckets. Safe to run from many places at
 * once: every create accepts an existing object, and the layout record is create-if-absent, so
 * the first writer's numbers (the shard count among them) hold for the whole cluster. On a
 * cluster, each new shard's stream and claims bucket go to a server of their own
 * (placement.h), leaders with --replicas 3 and the one copy with 1. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "cli.h"
#include "placement.h"
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
};

static const char usage[] =
    "usage: sendat init [--server URL] [--replicas N] [--shards N] [--window DUR] [--slot DUR]\n"
    "                   [--ack-wait DUR] [--lead DUR] [--dedupe-window DUR]\n"
    "                   [--claims-ttl DUR] [--dlq-max-age DUR] [--dlq-max-bytes SIZE]\n"
    "  creates streams and buckets; idempotent. DUR is like 250ms, 10s, 10m, 2h, 7d.\n"
    "  defaults: replicas 1, shards 1 (1-64 task streams, each with its claims bucket;\n"
    "            JetStream places their leaders), window 10m, slot 10s, ack-wait 30s, lead 2s,\n"
    "            dedupe-window 1h, claims-ttl 7d (at least 1h; 0s: for ever), dlq-max-age 30d,\n"
    "            dlq-max-bytes 1G\n"
    "  SIZE is bytes, or with K, M or G (1024-based); a full dead-letter stream drops its oldest.\n"
    "  the layout (shards, window, slot, ack-wait, lead) is written once; later runs keep it\n"
    "  and refuse different numbers (a task's shard follows from its id: no resharding).\n";

static int
parse_dur(const char *flag, const char *text, int64_t *out)
{
    struct sa_err err = {0};

    if (sa_duration_parse(text, out, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "init: --%s: %s", flag, err.msg);
    return EXIT_OK;
}

/* "1G", "512M", "65536": at least 1 MiB, so a typo does not make every dead letter drop. */
static int
parse_size(const char *flag, const char *text, int64_t *out)
{
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;

    if (end == text || v < 1 || v > (1LL << 40) || (shift && end[1]) || (!shift && *end))
        return cli_error(EXIT_USAGE, "init: --%s: want a size like 1G, 512M or 1048576", flag);
    *out = (int64_t)v << shift;
    if (*out < (1 << 20) || *out > (1LL << 50))
        return cli_error(EXIT_USAGE, "init: --%s: want 1M to 1024T", flag);
    return EXIT_OK;
}

static int
parse_shards(const char *text, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);

    if (end == text || *end || v < 1 || v > SA_SHARDS_MAX)
        return cli_error(EXIT_USAGE, "init: --shards: want a number from 1 to %d", SA_SHARDS_MAX);
    *out = (int)v;
    return EXIT_OK;
}

static int
parse_opts(struct init_opts *o, int argc, char **argv)
{
    static const struct option opts[] = {{"server", required_argument, NULL, 'S'},
                                         {"replicas", required_argument, NULL, 'r'},
                                         {"shards", required_argument, NULL, 'n'},
                                         {"window", required_argument, NULL, 'w'},
                                         {"slot", required_argument, NULL, 's'},
                                         {"ack-wait", required_argument, NULL, 'a'},
                                         {"lead", required_argument, NULL, 'l'},
                                         {"dedupe-window", required_argument, NULL, 'd'},
                                         {"claims-ttl", required_argument, NULL, 't'},
                                         {"dlq-max-age", required_argument, NULL, 'q'},
                                         {"dlq-max-bytes", required_argument, NULL, 'b'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c, rc = EXIT_OK;

    while (rc == EXIT_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'S':
            o->cli.server = optarg;
            break;
        case 'r':
            o->replicas = atoi(optarg);
            if (o->replicas != 1 && o->replicas != 3 && o->replicas != 5)
                rc = cli_error(EXIT_USAGE, "init: --replicas must be 1, 3 or 5");
            break;
        case 'n':
            o->shards_given = 1;
            rc = parse_shards(optarg, &o->layout.shards);
            break;
        case 'w':
            o->layout_given = 1;
            rc = parse_dur("window", optarg, &o->layout.window_ms);
            break;
        case 's':
            o->layout_given = 1;
            rc = parse_dur("slot", optarg, &o->layout.slot_ms);
            break;
        case 'a':
            o->layout_given = 1;
            rc = parse_dur("ack-wait", optarg, &o->layout.ack_wait_ms);
            break;
        case 'l':
            o->layout_given = 1;
            rc = parse_dur("lead", optarg, &o->layout.lead_ms);
            break;
        case 'd':
            rc = parse_dur("dedupe-window", optarg, &o->dedupe_ms);
            break;
        case 't':
            rc = parse_dur("claims-ttl", optarg, &o->claims_ttl_ms);
            break;
        case 'q':
            rc = parse_dur("dlq-max-age", optarg, &o->dlq_age_ms);
            break;
        case 'b':
            rc = parse_size("dlq-max-bytes", optarg, &o->dlq_bytes);
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            rc = cli_error(EXIT_USAGE, "init: bad option (see sendat init --help)");
        }
    }
    if (rc == EXIT_OK && optind != argc)
        rc = cli_error(EXIT_USAGE, "init: unexpected argument %s", argv[optind]);
    if (rc == EXIT_OK && o->claims_ttl_ms && o->claims_ttl_ms < SA_CLAIMS_TTL_MIN_MS)
        rc = cli_error(EXIT_USAGE,
                       "init: --claims-ttl must be at least 1h (or 0s: for ever): consumers refuse "
                       "a task due longer ago than the claim ledger remembers");
    return rc;
}

/* Takes si. An existing stream is kept as it is, except that a dead-letter stream made
 * before it had a byte limit gets one (once: a limit set since is never changed). */
static enum sa_code
keep_stream(jsCtx *js, jsStreamInfo *si, int workqueue, const struct init_opts *o,
            struct sa_err *err)
{
    jsStreamInfo *up = NULL;
    jsErrCode jerr = 0;
    natsStatus s = NATS_OK;

    if (!workqueue && si->Config->MaxBytes <= 0) {
        si->Config->MaxBytes = o->dlq_bytes;
        si->Config->Discard = js_DiscardOld;
        s = js_UpdateStream(&up, js, si->Config, NULL, &jerr);
        jsStreamInfo_Destroy(up);
    }
    jsStreamInfo_Destroy(si);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, jerr, "dead-letter stream byte limit");
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
        (rc = add_bucket(n->js, bucket, 32, o->claims_ttl_ms, o->replicas, err)) != SA_OK)
        return rc; /* both are kept as they are if the wide make made them */
    sa_err_clear(&perr);
    if ((wide_stream && placement_settle(n->nc, n->js, stream, k, o->replicas, &perr) != SA_OK) ||
        (wide_bucket && placement_settle(n->nc, n->js, kv_stream, k, o->replicas, &perr) != SA_OK))
        fprintf(stderr, "init: shard %d is not placed: %s\n", k, perr.msg);
    return SA_OK;
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
        (n->marks && (rc = start_marks(n, k, stream, err)) != SA_OK))
        return rc;
    sa_layout_meta_key(key, sizeof(key), "cursor", k);
    snprintf(cursor, sizeof(cursor), "%" PRId64, sa_layout_window(&o->layout, sa_now_ms()));
    kvStore_CreateString(&rev, n->meta, key, cursor); /* an existing cursor stays */
    return SA_OK;
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
                          .dlq_bytes = 1LL << 30};
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    enum sa_code rc;
    int code;

    sa_layout_defaults(&o.layout);
    if ((code = parse_opts(&o, argc, argv)) != EXIT_OK)
        return code < 0 ? EXIT_OK : code;
    if (sa_layout_check(&o.layout, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "init: %s", err.msg);
    if (sa_nats_connect(&n, o.cli.server, "sendat-init", SA_INBOX_PRODUCER, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "%s", err.msg);
    rc = add_bucket(n->js, SA_META_BUCKET, 1, 0, o.replicas, &err);
    if (rc == SA_OK && js_KeyValue(&n->meta, n->js, SA_META_BUCKET) != NATS_OK)
        rc = sa_fail(&err, SA_ENATS, "bucket %s cannot be bound", SA_META_BUCKET);
    code = rc == SA_OK ? settle_layout(n, &o) : cli_error(EXIT_FAIL, "init: %s", err.msg);
    if (code == EXIT_OK && add_all(n, &o, &err) != SA_OK)
        code = cli_error(EXIT_FAIL, "init: %s", err.msg);
    cli_close(n);
    if (code == EXIT_OK)
        puts("ok");
    return code;
}
