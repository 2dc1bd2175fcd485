/* sendat-rawjs: what JetStream itself does on this machine, on streams of its own shaped like
 * sendat's (work queue, file storage, one subject per message), so sendat's figures can be
 * read against the broker's in the same run. Also the small queries bench/run.sh needs.
 *
 *   sendat-rawjs bench  --server URL --n N --size BYTES [--replicas R] [--batch B]
 *                       [--sync-seconds S] [--kv-n K] [--server-pid PID[,PID...]]
 *                       [--sink URL [--inflight K]]   also pull + POST + ack to URL
 *                       [--pace-n P --pace-seconds S]  and P more sent evenly over S seconds
 *   sendat-rawjs sealed --url URL --data TEXT      size of one sealed task (no broker)
 *   sendat-rawjs fill   --server URL --n N --size BYTES --subjects K [--msg-id 0]
 *                       N messages (Msg-Id and one header, like a task; --msg-id 0: no
 *                       Msg-Id) onto K subjects
 *                       (K = N: one subject per message), left in the stream RAWJS
 *   sendat-rawjs info   --server URL --stream NAME messages, bytes, subjects of a stream
 *   sendat-rawjs claims --server URL [--dump FILE] moves and lateness from the claim records
 *                                                 (FILE: "<id> <moves> <lateness> <consumer>")
 *
 * Every command prints one JSON object on stdout; progress goes to stderr. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <nats/nats.h>
#include <sodium.h>

#include "jspull.h"
#include "rawjs.h"
#include "rawpost.h"
#include "rawpull.h"
#include "timeparse.h"

#define STREAM "RAWJS"
#define KV_BUCKET "rawjs_kv"
#define W 1000000000000LL /* the "window" token of every subject: any fixed number */

void
rawjs_die(const char *what, natsStatus s)
{
    fprintf(stderr, "sendat-rawjs: %s: %s (%s)\n", what, natsStatus_GetText(s),
            nats_GetLastError(NULL));
    exit(1);
}

/* ---- async publish bookkeeping, shared by every phase that publishes asynchronously ---- */

static long subject_mod;       /* fill: messages share subjects i % subject_mod; 0: one each */
static natsMsg **originals;    /* repub phase: the pulled message to ack once its copy is stored */
static natsConnection *ack_nc; /* and the connection its ack goes through */
static atomic_long acked, failed;

static long
index_of(const char *subject)
{
    const char *dot = strrchr(subject, '.');

    return dot ? strtol(dot + 1, NULL, 10) : -1;
}

static void
on_pub_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    (void)js;
    (void)pa;
    (void)closure;
    if (pae) {
        if (atomic_fetch_add(&failed, 1) < 5)
            fprintf(stderr, "sendat-rawjs: publish failed: %s\n",
                    pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
    } else {
        atomic_fetch_add(&acked, 1);
        if (originals) {
            long i = index_of(natsMsg_GetSubject(msg));
            if (i >= 0 && originals[i]) {
                sa_jspull_ack(ack_nc, originals[i], SA_JSPULL_ACK, 0);
                natsMsg_Destroy(originals[i]);
                originals[i] = NULL;
            }
        }
    }
    natsMsg_Destroy(msg);
}

static void
wait_async(jsCtx *js)
{
    jsPubOptions po;
    natsStatus s;

    jsPubOptions_Init(&po);
    po.MaxWait = 120000;
    if ((s = js_PublishAsyncComplete(js, &po)) != NATS_OK)
        rawjs_die("waiting for PubAcks", s);
}

/* CPU seconds of this process, and of the server when its pids were given (every node of a
 * cluster: their work together is what one task costs the broker, as bench/run.sh sums them
 * for sendat's scenarios). */
#define SERVER_PIDS_MAX 8
static long server_pid[SERVER_PIDS_MAX];
static int n_server_pids;

static double
self_cpu(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* One process's CPU seconds from /proc (0 if it cannot be read). */
static double
pid_cpu(long pid)
{
    char path[64], buf[1024], *p;
    unsigned long long ut = 0, st = 0;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double
server_cpu(void)
{
    double sum = 0;

    for (int i = 0; i < n_server_pids; i++)
        sum += pid_cpu(server_pid[i]);
    return sum;
}

/* "PID[,PID...]" into server_pid[]. */
static void
parse_server_pids(const char *list)
{
    for (const char *p = list; *p && n_server_pids < SERVER_PIDS_MAX;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 0)
            server_pid[n_server_pids++] = pid;
        p = *end == ',' ? end + 1 : end;
    }
}

static double mark_self, mark_server;

static void
mark(void)
{
    mark_self = self_cpu();
    mark_server = server_cpu();
}

/* Prints one phase; CPU is counted since the last mark(). */
static void
report(const char *name, long msgs, double secs, int *first)
{
    double cs = self_cpu() - mark_self, ss = server_cpu() - mark_server;

    printf("%s\"%s\":{\"msgs\":%ld,\"seconds\":%.3f,\"rate\":%.0f,\"cpu_us_per_msg\":%.1f",
           *first ? "" : ",", name, msgs, secs, secs > 0 ? (double)msgs / secs : 0.0,
           msgs ? cs * 1e6 / (double)msgs : 0.0);
    if (n_server_pids > 0)
        printf(",\"server_cpu_us_per_msg\":%.1f", msgs ? ss * 1e6 / (double)msgs : 0.0);
    printf("}");
    fprintf(stderr, "sendat-rawjs: %-21s %8ld msgs %7.3f s %9.0f msgs/s %6.1f us CPU/msg", name,
            msgs, secs, secs > 0 ? (double)msgs / secs : 0.0, msgs ? cs * 1e6 / (double)msgs : 0.0);
    if (n_server_pids > 0)
        fprintf(stderr, " (server %.1f us)", msgs ? ss * 1e6 / (double)msgs : 0.0);
    fputc('\n', stderr);
    *first = 0;
    fflush(stdout);
    mark();
}

/* ---- phases ---- */

static double
publish_all(jsCtx *js, const char *level, long n, const char *payload, int size, int with_id)
{
    char subject[96], id[32], sched[24];
    double t0 = rawpost_now_s();
    natsStatus s;

    mark();
    atomic_store(&acked, 0);
    for (long i = 0; i < n; i++) {
        natsMsg *m = NULL;
        jsPubOptions po;
        snprintf(subject, sizeof(subject), "rawjs.%lld.%s.%ld", W, level,
                 subject_mod ? i % subject_mod : i);
        jsPubOptions_Init(&po);
        s = natsMsg_Create(&m, subject, NULL, payload, size);
        if (s == NATS_OK && with_id) { /* what sendat's producer sends: a Msg-Id and one header */
            snprintf(id, sizeof(id), "%s%ld", level, i); /* levels do not dedupe each other */
            snprintf(sched, sizeof(sched), "%" PRId64, sa_now_ms());
            po.MsgId = id;
            s = natsMsgHeader_Set(m, "Sendat-Scheduled", sched);
        }
        if (s == NATS_OK)
            s = js_PublishMsgAsync(js, &m, &po);
        natsMsg_Destroy(m);
        if (s != NATS_OK)
            rawjs_die("async publish", s);
    }
    wait_async(js);
    return rawpost_now_s() - t0;
}

static struct rawpull *
pull_sub(natsConnection *nc, jsCtx *js, const char *durable, const char *filter)
{
    jsConsumerConfig cc;
    jsConsumerInfo *ci = NULL;
    jsErrCode jerr = 0;
    struct rawpull *sub = calloc(1, sizeof(*sub));
    natsStatus s;

    jsConsumerConfig_Init(&cc);
    cc.Durable = durable;
    cc.FilterSubject = filter;
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = 60LL * 1000000000LL;
    cc.MaxAckPending = 100000; /* what sendat gives each level */
    cc.MaxWaiting = 512;
    if ((s = js_AddConsumer(&ci, js, STREAM, &cc, NULL, &jerr)) != NATS_OK)
        rawjs_die("add consumer", s);
    jsConsumerInfo_Destroy(ci);
    if (!sub || rawpull_open(sub, nc, STREAM, durable) != 0)
        rawjs_die("pull subscribe", NATS_ERR);
    return sub;
}

static void
pull_sub_free(struct rawpull *sub)
{
    rawpull_close(sub);
    free(sub);
}

/* Up to want messages in one pull; the request stays open up to 2 s. */
int
rawjs_pull(struct rawpull *sub, natsMsgList *list, long want, int batch)
{
    return rawpull_get(sub, list, want < batch ? (int)want : batch, 2000);
}

enum repub { NO_REPUB, REPUB_SYNC, REPUB_ASYNC };

/* Pulls up to n messages (stops after max_secs), acks each, re-publishing it one level down
 * first if asked: synchronously (publish, wait for the PubAck, ack: what sendat's puller does)
 * or asynchronously (ack from the PubAck handler). Returns how many, *secs the time taken. */
static long
consume(natsConnection *nc, jsCtx *js, jsCtx *ajs, struct rawpull *sub, long n, int batch,
        enum repub mode, double max_secs, double *secs)
{
    double t0 = rawpost_now_s();
    long done = 0;
    int empty = 0;

    mark();
    while (done < n && rawpost_now_s() - t0 < max_secs && empty < 3) {
        natsMsgList list = {0};
        int got = rawjs_pull(sub, &list, n - done, batch);
        empty = got ? 0 : empty + 1;
        for (int i = 0; i < got; i++) {
            natsMsg *m = list.Msgs[i];
            const char *subj = natsMsg_GetSubject(m);
            long idx = index_of(subj);
            char to[96], id[32];
            jsPubOptions po;
            natsStatus s = NATS_OK;

            list.Msgs[i] = NULL;
            jsPubOptions_Init(&po);
            snprintf(to, sizeof(to), "rawjs.%lld.%lld.%ld", W, W + 10000, idx);
            snprintf(id, sizeof(id), "m%ld", idx);
            po.MsgId = id;
            if (mode == NO_REPUB) {
                sa_jspull_ack(nc, m, SA_JSPULL_ACK, 0);
                natsMsg_Destroy(m);
            } else if (mode == REPUB_SYNC) {
                jsPubAck *pa = NULL;
                s = js_Publish(&pa, js, to, natsMsg_GetData(m), natsMsg_GetDataLength(m), &po,
                               NULL);
                jsPubAck_Destroy(pa);
                if (s != NATS_OK)
                    rawjs_die("publish", s);
                sa_jspull_ack(nc, m, SA_JSPULL_ACK, 0);
                natsMsg_Destroy(m);
            } else {
                originals[idx] = m;
                s = js_PublishAsync(ajs, to, natsMsg_GetData(m), natsMsg_GetDataLength(m), &po);
                if (s != NATS_OK)
                    rawjs_die("async publish", s);
            }
            done++;
        }
        natsMsgList_Destroy(&list);
    }
    if (mode == REPUB_ASYNC)
        wait_async(ajs);
    natsConnection_Flush(nc); /* every ack reached the server */
    *secs = rawpost_now_s() - t0;
    return done;
}

static long
kv_create(jsCtx *js, kvStore *kv, long n, long base, int async, double max_secs, double *secs)
{
    char key[32], subject[64];
    const char value[] =
        "{\"state\":\"sending\",\"at\":1795340100250,\"consumer\":\"bench-1\",\"attempt\":1,"
        "\"due\":1795340100250,\"scheduled\":1795340000000,\"moves\":1,\"moved\":1795340090000,"
        "\"lateness_ms\":0,\"http_status\":0,\"error\":\"\"}";
    double t0 = rawpost_now_s();
    long i;

    mark();
    for (i = 0; i < n && (async || (i & 63) || rawpost_now_s() - t0 < max_secs); i++) {
        uint64_t rev;
        natsStatus s;
        snprintf(key, sizeof(key), "k%ld", base + i);
        if (!async) {
            s = kvStore_Create(&rev, kv, key, value, (int)sizeof(value) - 1);
        } else { /* the same create, pipelined: a put that expects no earlier value */
            natsMsg *m = NULL;
            snprintf(subject, sizeof(subject), "$KV.%s.%s", KV_BUCKET, key);
            s = natsMsg_Create(&m, subject, NULL, value, (int)sizeof(value) - 1);
            if (s == NATS_OK)
                s = natsMsgHeader_Set(m, "Nats-Expected-Last-Subject-Sequence", "0");
            if (s == NATS_OK)
                s = js_PublishMsgAsync(js, &m, NULL);
            natsMsg_Destroy(m);
        }
        if (s != NATS_OK)
            rawjs_die("kv create", s);
    }
    if (async)
        wait_async(js);
    *secs = rawpost_now_s() - t0;
    return i;
}

static void
make_stream(jsCtx *js, int replicas)
{
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    const char *subjects[] = {"rawjs.*.*.*"};
    natsStatus s;

    js_DeleteStream(js, STREAM, NULL, NULL); /* a leftover of an interrupted run */
    jsStreamConfig_Init(&sc);
    sc.Name = STREAM;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = js_WorkQueuePolicy;
    sc.Storage = js_FileStorage;
    sc.Replicas = replicas;
    sc.Duplicates = 3600LL * 1000000000LL; /* sendat's dedupe window */
    sc.AllowDirect = true;
    if ((s = js_AddStream(&si, js, &sc, NULL, &jerr)) != NATS_OK)
        rawjs_die("add stream " STREAM, s);
    jsStreamInfo_Destroy(si);
}

natsConnection *
rawjs_connect(const char *url)
{
    natsOptions *o = NULL;
    natsConnection *nc = NULL;
    char *copy = strdup(url), *save = NULL, *tok;
    const char *list[16];
    int n = 0;
    natsStatus s = natsOptions_Create(&o);

    for (tok = strtok_r(copy, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save))
        list[n++] = tok; /* a comma-separated list is a cluster */
    if (s == NATS_OK)
        s = natsOptions_SetServers(o, list, n);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(o, 10000);
    if (s == NATS_OK)
        s = natsConnection_Connect(&nc, o);
    natsOptions_Destroy(o);
    free(copy);
    if (s != NATS_OK)
        rawjs_die("connect", s);
    return nc;
}

static jsCtx *
js_with_acks(natsConnection *nc)
{
    jsOptions jo;
    jsCtx *js = NULL;
    natsStatus s;

    jsOptions_Init(&jo);
    jo.Wait = 30000;
    jo.PublishAsync.MaxPending = 4096; /* what sendat's batch publisher keeps in flight */
    jo.PublishAsync.AckHandler = on_pub_ack;
    jo.PublishAsync.StallWait = 30000;
    if ((s = natsConnection_JetStream(&js, nc, &jo)) != NATS_OK)
        rawjs_die("JetStream context", s);
    return js;
}

/* One delivery run over run->n messages stored at level (one letter) for it, reported as name. */
static void
post_run(natsConnection *nc, jsCtx *js, const struct rawpost_run *run, const char *level,
         const char *payload, int size, const char *name, int *first)
{
    char durable[16], filter[32];
    struct rawpull *sub;
    double secs;
    long done, refused = 0;

    snprintf(durable, sizeof(durable), "rawjs_%s", level);
    snprintf(filter, sizeof(filter), "rawjs.*.%s.*", level);
    publish_all(js, level, run->n, payload, size, 1);
    sub = pull_sub(nc, js, durable, filter);
    mark();
    done = rawpost_consume(sub, run, &secs, &refused);
    report(name, done, secs, first);
    printf(",\"%s_refused\":%ld", name, refused);
    pull_sub_free(sub);
}

/* Stored messages delivered as webhooks with nothing else: pull, POST to the sink, ack; then,
 * if asked, pace_n more sent evenly over pace_seconds, each at its instant. */
static void
post_phase(natsConnection *nc, jsCtx *js, const struct rawjs_opts *o, const char *payload,
           int *first)
{
    struct rawpost_run run = {
        .n = o->n, .batch = 64, .inflight = o->inflight, .url = o->sink, .max_secs = 120};

    post_run(nc, js, &run, "d", payload, o->size, "pull_post_ack", first);
    if (o->pace_n <= 0)
        return;
    run.n = o->pace_n;
    run.pace_s = o->pace_seconds;
    run.max_secs = o->pace_seconds + 60;
    post_run(nc, js, &run, "e", payload, o->size, "pull_post_ack_paced", first);
}

static int
cmd_bench(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = js_with_acks(nc), *ajs = js_with_acks(nc);
    char *payload = malloc((size_t)o->size);
    struct rawpull *sub;
    natsMsg **keep;
    kvStore *kv = NULL;
    kvConfig kc;
    double secs;
    long n = o->n, done, rest;
    int first = 1;
    natsStatus s;

    randombytes_buf(payload, (size_t)o->size); /* sealed tasks are incompressible too */
    make_stream(js, o->replicas);
    printf("{\"n\":%ld,\"size\":%d,\"replicas\":%d,\"batch\":%d", n, o->size, o->replicas,
           o->batch);
    first = 0;

    secs = publish_all(js, "w", n, payload, o->size, 0);
    report("pub_async", n, secs, &first);
    secs = publish_all(js, "p", n, payload, o->size, 1);
    report("pub_async_msgid", n, secs, &first);

    sub = pull_sub(nc, js, "rawjs_p", "rawjs.*.p.*");
    done = consume(nc, js, ajs, sub, n, o->batch, NO_REPUB, 120, &secs);
    report("pull_ack", done, secs, &first);
    pull_sub_free(sub);

    sub = pull_sub(nc, js, "rawjs_w", "rawjs.*.w.*");
    /* half synchronously, the rest async */
    done = consume(nc, js, ajs, sub, n / 2, o->batch, REPUB_SYNC, o->sync_seconds, &secs);
    report("pull_repub_sync_ack", done, secs, &first);
    rest = n - done;
    ack_nc = nc;
    originals = calloc((size_t)n, sizeof(*originals));
    done = consume(nc, js, ajs, sub, rest, o->batch, REPUB_ASYNC, 120, &secs);
    report("pull_repub_async_ack", done, secs, &first);
    pull_sub_free(sub);
    /* A PubAck handler may still be reading it: freed once the contexts are gone. */
    keep = originals;
    originals = NULL;
    if (o->sink)
        post_phase(nc, js, o, payload, &first);

    kvConfig_Init(&kc);
    kc.Bucket = KV_BUCKET;
    kc.History = 1;
    kc.Replicas = o->replicas;
    kc.StorageType = js_FileStorage;
    js_DeleteKeyValue(js, KV_BUCKET);
    if ((s = js_CreateKeyValue(&kv, js, &kc)) != NATS_OK)
        rawjs_die("create bucket", s);
    done = kv_create(ajs, kv, o->kv_n, 0, 0, o->sync_seconds, &secs);
    report("kv_create_sync", done, secs, &first);
    done = kv_create(ajs, kv, o->kv_n, o->kv_n, 1, 120, &secs);
    report("kv_create_async", done, secs, &first);
    printf(",\"failed\":%ld}\n", atomic_load(&failed));
    kvStore_Destroy(kv);
    js_DeleteKeyValue(js, KV_BUCKET);
    js_DeleteStream(js, STREAM, NULL, NULL);
    jsCtx_Destroy(ajs);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    free(keep);
    free(payload);
    return atomic_load(&failed) ? 1 : 0;
}

/* The stream is left for the caller to measure (RSS, store) and is replaced by the next run. */
static int
cmd_fill(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = js_with_acks(nc);
    char *payload = malloc((size_t)o->size);
    double secs;

    if (!payload)
        rawjs_die("out of memory", NATS_NO_MEMORY);
    randombytes_buf(payload, (size_t)o->size);
    make_stream(js, o->replicas);
    subject_mod = o->subjects > 0 && o->subjects < o->n ? o->subjects : 0;
    secs = publish_all(js, "f", o->n, payload, o->size, o->msg_id != 0);
    printf("{\"n\":%ld,\"subjects\":%ld,\"size\":%d,\"secs\":%.3f,\"rate\":%.0f,\"failed\":%ld}\n",
           o->n, subject_mod ? subject_mod : o->n, o->size, secs, (double)o->n / secs,
           atomic_load(&failed));
    free(payload);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return atomic_load(&failed) ? 1 : 0;
}

static void
usage(void)
{
    fputs("usage: sendat-rawjs bench --server URL --n N --size BYTES [--replicas R] [--batch B]\n"
          "                          [--sync-seconds S] [--kv-n K] [--server-pid PID[,PID...]]\n"
          "                          [--sink URL [--inflight K]]\n"
          "                          [--pace-n P --pace-seconds S]\n"
          "       sendat-rawjs sealed --url URL --data TEXT\n"
          "       sendat-rawjs fill --server URL --n N --size BYTES --subjects K [--msg-id 0]\n"
          "       sendat-rawjs info --server URL --stream NAME\n"
          "       sendat-rawjs claims --server URL [--dump FILE]\n",
          stderr);
    exit(2);
}

/* The flags after the command ("--name value" pairs) into o; usage() on anything else. */
static void
parse_flags(struct rawjs_opts *o, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        i++;
        if (!strcmp(k, "--server"))
            o->server = v;
        else if (!strcmp(k, "--stream"))
            o->stream = v;
        else if (!strcmp(k, "--url"))
            o->url = v;
        else if (!strcmp(k, "--data"))
            o->data = v;
        else if (!strcmp(k, "--n"))
            o->n = atol(v);
        else if (!strcmp(k, "--kv-n"))
            o->kv_n = atol(v);
        else if (!strcmp(k, "--size"))
            o->size = atoi(v);
        else if (!strcmp(k, "--replicas"))
            o->replicas = atoi(v);
        else if (!strcmp(k, "--dump"))
            o->dump = v;
        else if (!strcmp(k, "--server-pid"))
            o->server_pids = v;
        else if (!strcmp(k, "--sink"))
            o->sink = v;
        else if (!strcmp(k, "--inflight"))
            o->inflight = atoi(v);
        else if (!strcmp(k, "--pace-n"))
            o->pace_n = atol(v);
        else if (!strcmp(k, "--pace-seconds"))
            o->pace_seconds = atof(v);
        else if (!strcmp(k, "--batch"))
            o->batch = atoi(v);
        else if (!strcmp(k, "--msg-id"))
            o->msg_id = atol(v);
        else if (!strcmp(k, "--subjects"))
            o->subjects = atol(v);
        else if (!strcmp(k, "--sync-seconds"))
            o->sync_seconds = atof(v);
        else
            usage();
    }
}

int
main(int argc, char **argv)
{
    struct rawjs_opts o = {.n = 100000,
                           .kv_n = 20000,
                           .size = 256,
                           .replicas = 1,
                           .batch = 256,
                           .inflight = 256,
                           .sync_seconds = 5,
                           .msg_id = 1,
                           .url = "http://127.0.0.1:65535/x",
                           .data = "{}"};
    int rc;

    if (argc < 2)
        usage();
    parse_flags(&o, argc, argv);
    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    if (o.server_pids)
        parse_server_pids(o.server_pids);
    if (!strcmp(argv[1], "sealed"))
        return rawjs_sealed(&o);
    if (!o.server || o.n < 1 || o.size < 1 || o.batch < 1 || o.kv_n < 1 ||
        (o.pace_n > 0 && o.pace_seconds <= 0))
        usage();
    nats_Open(-1);
    if (!strcmp(argv[1], "bench"))
        rc = cmd_bench(&o);
    else if (!strcmp(argv[1], "fill"))
        rc = cmd_fill(&o);
    else if (!strcmp(argv[1], "info") && o.stream)
        rc = rawjs_info(&o);
    else if (!strcmp(argv[1], "claims"))
        rc = rawjs_claims(&o);
    else
        usage();
    nats_CloseAndWait(5000);
    return rc;
}
