/* sendat-rawjs's bench and fill commands: what JetStream itself does on this machine, phase by
 * phase (publish, pull and ack, re-publish one level down, POST to a sink, KV creates), on the
 * stream RAWJS (rawstream.h), each phase reported with its CPU per message (rawmeter.h). */
#include <stdio.h>
#include <stdlib.h>

#include <nats/nats.h>
#include <sodium.h>

#include "jspull.h"
#include "rawjs.h"
#include "rawmeter.h"
#include "rawpost.h"
#include "rawpull.h"
#include "rawstream.h"

#define KV_BUCKET "rawjs_kv"

static natsMsg **originals;   /* repub phase: the pulled message to ack once its copy is stored */
static const char *hold_file; /* --hold-file: post_run says when stored, waits for FILE.go */

/* Writes hold_file, then waits (polling every 10 ms) until hold_file.go exists: the caller
 * reads the server's counters between the publishing and the pulls (bench/raft_breakdown.sh). */
static void
hold(void)
{
    char go[4096];
    FILE *f;

    if (!hold_file)
        return;
    f = fopen(hold_file, "w");
    if (!f)
        rawjs_die("hold file", NATS_ERR);
    fputs("stored\n", f);
    fclose(f);
    snprintf(go, sizeof(go), "%s.go", hold_file);
    while ((f = fopen(go, "r")) == NULL)
        nats_Sleep(10);
    fclose(f);
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

    rawmeter_mark();
    while (done < n && rawpost_now_s() - t0 < max_secs && empty < 3) {
        natsMsgList list = {0};
        int got = rawjs_pull(sub, &list, n - done, batch);
        empty = got ? 0 : empty + 1;
        for (int i = 0; i < got; i++) {
            natsMsg *m = list.Msgs[i];
            const char *subj = natsMsg_GetSubject(m);
            long idx = rawstream_index(subj);
            char to[96], id[32];
            jsPubOptions po;
            natsStatus s = NATS_OK;

            list.Msgs[i] = NULL;
            jsPubOptions_Init(&po);
            snprintf(to, sizeof(to), "rawjs.%lld.%lld.%ld", RAWSTREAM_W, RAWSTREAM_W + 10000, idx);
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
        rawstream_wait(ajs);
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

    rawmeter_mark();
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
        rawstream_wait(js);
    *secs = rawpost_now_s() - t0;
    return i;
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
    rawstream_publish(js, level, run->n, payload, size, 1);
    sub = rawpull_durable(nc, js, RAWSTREAM_NAME, durable, filter);
    hold();
    rawmeter_mark();
    done = rawpost_consume(sub, run, &secs, &refused);
    rawmeter_report(name, done, secs, first);
    printf(",\"%s_refused\":%ld", name, refused);
    rawpull_free(sub);
}

/* Stored messages delivered as webhooks with nothing else: pull, POST to the sink, ack; then,
 * if asked, pace_n more sent evenly over pace_seconds, each at its instant. */
static void
post_phase(natsConnection *nc, jsCtx *js, const struct rawjs_opts *o, const char *payload,
           int *first)
{
    struct rawpost_run run = {.n = o->n,
                              .batch = o->post_batch,
                              .inflight = o->inflight,
                              .url = o->sink,
                              .max_secs = 120};

    post_run(nc, js, &run, "d", payload, o->size, "pull_post_ack", first);
    if (o->pace_n <= 0)
        return;
    run.n = o->pace_n;
    run.pace_s = o->pace_seconds;
    run.max_secs = o->pace_seconds + 60;
    post_run(nc, js, &run, "e", payload, o->size, "pull_post_ack_paced", first);
}

int
rawjs_bench(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = rawstream_js(nc), *ajs = rawstream_js(nc);
    char *payload = malloc((size_t)o->size);
    struct rawpull *sub;
    natsMsg **keep;
    kvStore *kv = NULL;
    double secs;
    long n = o->n, done, rest;
    int first = 1;

    randombytes_buf(payload, (size_t)o->size); /* sealed tasks are incompressible too */
    rawstream_make(js, o->replicas);
    printf("{\"n\":%ld,\"size\":%d,\"replicas\":%d,\"batch\":%d", n, o->size, o->replicas,
           o->batch);
    first = 0;
    if (o->post_only) { /* the delivery loop alone; the stream stays for the caller to read */
        struct rawpost_run run = {.n = n,
                                  .batch = o->post_batch,
                                  .inflight = o->inflight,
                                  .url = o->sink,
                                  .max_secs = 120};
        if (!o->sink)
            rawjs_die("--post-only needs --sink", NATS_INVALID_ARG);
        hold_file = o->hold_file;
        post_run(nc, js, &run, "d", payload, o->size, "pull_post_ack", &first);
        printf(",\"failed\":%ld}\n", rawstream_failed());
        jsCtx_Destroy(ajs);
        jsCtx_Destroy(js);
        natsConnection_Destroy(nc);
        free(payload);
        return rawstream_failed() ? 1 : 0;
    }

    secs = rawstream_publish(js, "w", n, payload, o->size, 0);
    rawmeter_report("pub_async", n, secs, &first);
    secs = rawstream_publish(js, "p", n, payload, o->size, 1);
    rawmeter_report("pub_async_msgid", n, secs, &first);

    sub = rawpull_durable(nc, js, RAWSTREAM_NAME, "rawjs_p", "rawjs.*.p.*");
    done = consume(nc, js, ajs, sub, n, o->batch, NO_REPUB, 120, &secs);
    rawmeter_report("pull_ack", done, secs, &first);
    rawpull_free(sub);

    sub = rawpull_durable(nc, js, RAWSTREAM_NAME, "rawjs_w", "rawjs.*.w.*");
    /* half synchronously, the rest async */
    done = consume(nc, js, ajs, sub, n / 2, o->batch, REPUB_SYNC, o->sync_seconds, &secs);
    rawmeter_report("pull_repub_sync_ack", done, secs, &first);
    rest = n - done;
    originals = calloc((size_t)n, sizeof(*originals));
    rawstream_ack_originals(nc, originals);
    done = consume(nc, js, ajs, sub, rest, o->batch, REPUB_ASYNC, 120, &secs);
    rawmeter_report("pull_repub_async_ack", done, secs, &first);
    rawpull_free(sub);
    /* A PubAck handler may still be reading it: freed once the contexts are gone. */
    keep = originals;
    originals = NULL;
    rawstream_ack_originals(nc, NULL);
    if (o->sink)
        post_phase(nc, js, o, payload, &first);

    kv = rawstream_bucket(js, KV_BUCKET, o->replicas);
    done = kv_create(ajs, kv, o->kv_n, 0, 0, o->sync_seconds, &secs);
    rawmeter_report("kv_create_sync", done, secs, &first);
    done = kv_create(ajs, kv, o->kv_n, o->kv_n, 1, 120, &secs);
    rawmeter_report("kv_create_async", done, secs, &first);
    printf(",\"failed\":%ld}\n", rawstream_failed());
    kvStore_Destroy(kv);
    js_DeleteKeyValue(js, KV_BUCKET);
    js_DeleteStream(js, RAWSTREAM_NAME, NULL, NULL);
    jsCtx_Destroy(ajs);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    free(keep);
    free(payload);
    return rawstream_failed() ? 1 : 0;
}

/* The stream is left for the caller to measure (RSS, store) and is replaced by the next run. */
int
rawjs_fill(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = rawstream_js(nc);
    char *payload = malloc((size_t)o->size);
    long subject_mod = o->subjects > 0 && o->subjects < o->n ? o->subjects : 0;
    double secs;

    if (!payload)
        rawjs_die("out of memory", NATS_NO_MEMORY);
    randombytes_buf(payload, (size_t)o->size);
    rawstream_make(js, o->replicas);
    rawstream_share_subjects(subject_mod);
    secs = rawstream_publish(js, "f", o->n, payload, o->size, o->msg_id != 0);
    printf("{\"n\":%ld,\"subjects\":%ld,\"size\":%d,\"secs\":%.3f,\"rate\":%.0f,\"failed\":%ld}\n",
           o->n, subject_mod ? subject_mod : o->n, o->size, secs, (double)o->n / secs,
           rawstream_failed());
    free(payload);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return rawstream_failed() ? 1 : 0;
}
