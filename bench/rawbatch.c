/* sendat-rawjs batch: what writing claim records together saves the broker (issue 25.3). On a
 * KV bucket shaped like sendat's claim buckets (history 1, file storage, R replicas), n creates
 * (Nats-Expected-Last-Subject-Sequence: 0, one key each) are written
 *   - one by one, pipelined with at most 256 PubAcks awaited, as sendat's claims are;
 *   - as atomic batches (nats-server 2.12+, the stream's allow_atomic set through the raw JSON
 *     API, which nats.c 3.4 does not know) of 8, 16 and 64 creates: the first ones published
 *     without a reply (Nats-Batch-Id, Nats-Batch-Sequence), the last with Nats-Batch-Commit: 1
 *     and one PubAck for the whole batch, with at most 256 creates in flight as well.
 * and one by one again at the end, to see the drift of a shared machine during the run.
 * With --clients K (up to 8), K connections write their share of each phase at once, as a
 * fleet of K consumers would (each with its own 256 in flight); what the server refuses (too
 * many batches in flight) is counted per phase.
 * Each phase reports creates/s and the servers' CPU per create (rawmeter), and the stream's
 * message count is checked against what was acked. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <nats/nats.h>

#include "rawjs.h"
#include "rawmeter.h"
#include "rawpost.h"
#include "rawstream.h"

#define BATCH_BUCKET "rawjs_batch"
#define BATCH_STREAM "KV_rawjs_batch"
#define IN_FLIGHT 256

static atomic_long stored, refused;

static const char claim_value[] =
    "{\"state\":\"sending\",\"at\":1795340100250,\"consumer\":\"bench-1\",\"attempt\":1,"
    "\"due\":1795340100250,\"scheduled\":1795340000000,\"moves\":1,\"moved\":1795340090000,"
    "\"lateness_ms\":0,\"http_status\":0,\"error\":\"\"}";

/* One PubAck: a create alone, or a batch's commit standing for the whole batch (its size in the
 * closure). */
static void
on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    long per_ack = closure ? *(long *)closure : 1;

    (void)js;
    (void)pa;
    if (pae) {
        if (atomic_fetch_add(&refused, per_ack) < 5)
            fprintf(stderr, "sendat-rawjs: batch publish refused: %s\n",
                    pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
    } else {
        atomic_fetch_add(&stored, per_ack);
    }
    natsMsg_Destroy(msg);
}

static jsCtx *
batch_js(natsConnection *nc, long pending, long *per_ack)
{
    jsOptions jo;
    jsCtx *js = NULL;
    natsStatus s;

    jsOptions_Init(&jo);
    jo.Wait = 30000;
    jo.PublishAsync.MaxPending = pending;
    jo.PublishAsync.AckHandler = on_ack;
    jo.PublishAsync.AckHandlerClosure = per_ack;
    jo.PublishAsync.StallWait = 30000;
    if ((s = natsConnection_JetStream(&js, nc, &jo)) != NATS_OK)
        rawjs_die("JetStream context", s);
    return js;
}

/* A raw JetStream API request; the answer's JSON, or exits on an error. */
static json_t *
api(natsConnection *nc, const char *subject, const char *body)
{
    natsMsg *reply = NULL;
    json_t *j;
    natsStatus s = natsConnection_RequestString(&reply, nc, subject, body ? body : "", 10000);

    if (s != NATS_OK)
        rawjs_die(subject, s);
    j = json_loadb(natsMsg_GetData(reply), (size_t)natsMsg_GetDataLength(reply), 0, NULL);
    natsMsg_Destroy(reply);
    if (!j || json_object_get(j, "error")) {
        char *t = j ? json_dumps(json_object_get(j, "error"), JSON_COMPACT) : NULL;
        fprintf(stderr, "sendat-rawjs: %s: %s\n", subject, t ? t : "no JSON answer");
        exit(1);
    }
    return j;
}

/* STREAM.INFO, then STREAM.UPDATE with allow_atomic (and allow_batched if fast) added to the
 * configuration read. */
static void
allow_batches(natsConnection *nc, int fast)
{
    json_t *info = api(nc, "$JS.API.STREAM.INFO." BATCH_STREAM, NULL), *upd;
    json_t *cfg = json_object_get(info, "config");
    char *body;

    json_object_set_new(cfg, "allow_atomic", json_true());
    if (fast)
        json_object_set_new(cfg, "allow_batched", json_true());
    body = json_dumps(cfg, JSON_COMPACT);
    upd = api(nc, "$JS.API.STREAM.UPDATE." BATCH_STREAM, body);
    if (!json_is_true(json_object_get(json_object_get(upd, "config"), "allow_atomic")))
        rawjs_die("allow_atomic not kept by the server", NATS_ERR);
    free(body);
    json_decref(upd);
    json_decref(info);
}

static natsMsg *
create_msg(long key, const char *reply)
{
    char subject[64];
    natsMsg *m = NULL;
    natsStatus s;

    snprintf(subject, sizeof(subject), "$KV.%s.k%ld", BATCH_BUCKET, key);
    s = natsMsg_Create(&m, subject, reply, claim_value, (int)sizeof(claim_value) - 1);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(m, "Nats-Expected-Last-Subject-Sequence", "0");
    if (s != NATS_OK)
        rawjs_die("create message", s);
    return m;
}

/* n creates from key base on, one PubAck each. */
static double
one_by_one(natsConnection *nc, long n, long base)
{
    jsCtx *js = batch_js(nc, IN_FLIGHT, NULL);
    double t0 = rawpost_now_s();

    for (long i = 0; i < n; i++) {
        natsMsg *m = create_msg(base + i, NULL);
        natsStatus s = js_PublishMsgAsync(js, &m, NULL);

        natsMsg_Destroy(m);
        if (s != NATS_OK)
            rawjs_die("async create", s);
    }
    rawstream_wait(js);
    jsCtx_Destroy(js);
    return rawpost_now_s() - t0;
}

/* n creates from key base on in atomic batches of size; n is a multiple of size. */
static double
atomic_batches(natsConnection *nc, long n, long base, long size, const char *run)
{
    long per_ack = size;
    jsCtx *js = batch_js(nc, IN_FLIGHT / size > 0 ? IN_FLIGHT / size : 1, &per_ack);
    double t0 = rawpost_now_s();
    char id[128], seq[24]; /* an id is at most 64 characters: run is short */

    for (long b = 0; b < n / size; b++) {
        snprintf(id, sizeof(id), "%s-%ld-%ld", run, size, b);
        for (long k = 1; k <= size; k++) {
            natsMsg *m = create_msg(base + b * size + k - 1, NULL);
            natsStatus s;

            snprintf(seq, sizeof(seq), "%ld", k);
            s = natsMsgHeader_Set(m, "Nats-Batch-Id", id);
            if (s == NATS_OK)
                s = natsMsgHeader_Set(m, "Nats-Batch-Sequence", seq);
            if (s == NATS_OK && k == size)
                s = natsMsgHeader_Set(m, "Nats-Batch-Commit", "1");
            if (s == NATS_OK)
                s = k == size ? js_PublishMsgAsync(js, &m, NULL) : natsConnection_PublishMsg(nc, m);
            natsMsg_Destroy(m);
            if (s != NATS_OK)
                rawjs_die("batch publish", s);
        }
    }
    rawstream_wait(js);
    jsCtx_Destroy(js);
    return rawpost_now_s() - t0;
}

/* The fast batch (2.14+, allow_batched): one batch for all of a client's creates, as its flow
 * control is meant for (the server acks every min(flow, 500) stored messages while it is the
 * stream's only fast batch, and every message once there are several). Each create's reply
 * subject carries the batch: <inbox>.<id>.<flow>.ok.<seq>.<op>.$FI (op 0 start, 1 append,
 * 2 commit); at most IN_FLIGHT creates are sent ahead of the last flow ack. */
struct fast {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    long acked, done;
};

static void
on_fast(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    struct fast *f = closure;
    json_t *j = json_loadb(natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg), 0, NULL);
    const char *type = json_string_value(json_object_get(j, "type"));

    (void)nc;
    (void)sub;
    pthread_mutex_lock(&f->lock);
    if (type && !strcmp(type, "ack")) {
        long seq = (long)json_integer_value(json_object_get(j, "seq"));
        if (seq > f->acked)
            f->acked = seq;
    } else if (type && !strcmp(type, "err")) {
        atomic_fetch_add(&refused, 1);
    } else if (json_object_get(j, "batch")) { /* the commit's PubAck */
        atomic_fetch_add(&stored, (long)json_integer_value(json_object_get(j, "count")));
        f->done = 1;
    } else if (!j || json_object_get(j, "error")) {
        atomic_fetch_add(&refused, 1);
        f->done = 1;
        fprintf(stderr, "sendat-rawjs: fast batch: %.*s\n", natsMsg_GetDataLength(msg),
                natsMsg_GetData(msg));
    }
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    json_decref(j);
    natsMsg_Destroy(msg);
}

static void
fast_wait(struct fast *f, long want_acked, int want_done)
{
    pthread_mutex_lock(&f->lock);
    while (!f->done && (want_done || f->acked < want_acked)) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += 30;
        if (pthread_cond_timedwait(&f->cond, &f->lock, &t) != 0) {
            pthread_mutex_unlock(&f->lock);
            rawjs_die("fast batch: no flow ack for 30 s", NATS_TIMEOUT);
        }
    }
    pthread_mutex_unlock(&f->lock);
}

static double
fast_batch(natsConnection *nc, long n, long base, int flow, const char *run)
{
    struct fast f = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    char inbox[80], sub_subject[96], reply[200];
    natsSubscription *sub = NULL;
    double t0 = rawpost_now_s();
    natsStatus s;

    snprintf(inbox, sizeof(inbox), "_FAST.%s.%d", run, flow);
    snprintf(sub_subject, sizeof(sub_subject), "%s.>", inbox);
    if ((s = natsConnection_Subscribe(&sub, nc, sub_subject, on_fast, &f)) != NATS_OK)
        rawjs_die("fast batch subscribe", s);
    for (long k = 1; k <= n; k++) {
        natsMsg *m = NULL;

        if (k > IN_FLIGHT)
            fast_wait(&f, k - IN_FLIGHT, 0);
        snprintf(reply, sizeof(reply), "%s.%s.%d.ok.%ld.%d.$FI", inbox, run, flow, k,
                 k == 1   ? 0
                 : k == n ? 2
                          : 1);
        m = create_msg(base + k - 1, reply);
        s = natsConnection_PublishMsg(nc, m);
        natsMsg_Destroy(m);
        if (s != NATS_OK)
            rawjs_die("fast batch publish", s);
    }
    fast_wait(&f, n, 1);
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    return rawpost_now_s() - t0;
}

/* One phase on one client (connection), run on a thread of its own: size 1 one by one, 0 the
 * fast batch, else atomic batches of size. */
struct client {
    natsConnection *nc;
    long n, base, size;
    char run[48];
    pthread_t thread;
};

static void *
client_run(void *arg)
{
    struct client *c = arg;

    if (c->size == 1)
        one_by_one(c->nc, c->n, c->base);
    else if (c->size == 0)
        fast_batch(c->nc, c->n, c->base, 64, c->run);
    else
        atomic_batches(c->nc, c->n, c->base, c->size, c->run);
    return NULL;
}

/* n creates from base on, shared by the clients; the seconds until the last one finished. */
static double
phase(struct client *cl, int clients, long n, long base, long size, const char *run)
{
    double t0 = rawpost_now_s();

    for (int k = 0; k < clients; k++) {
        cl[k].n = n / clients;
        cl[k].base = base + k * cl[k].n;
        cl[k].size = size;
        snprintf(cl[k].run, sizeof(cl[k].run), "%s-c%d", run, k);
        if (pthread_create(&cl[k].thread, NULL, client_run, &cl[k]) != 0)
            rawjs_die("thread", NATS_ERR);
    }
    for (int k = 0; k < clients; k++)
        pthread_join(cl[k].thread, NULL);
    return rawpost_now_s() - t0;
}

/* One phase reported, with the records the server refused in it. */
static void
report(const char *name, struct client *cl, int clients, long n, long base, long size,
       const char *run, int *first)
{
    long before = atomic_load(&refused);
    double secs = phase(cl, clients, n, base, size, run);

    rawmeter_report(name, n, secs, first);
    printf(",\"%s_refused\":%ld", name, atomic_load(&refused) - before);
    if (atomic_load(&refused) > before)
        fprintf(stderr, "sendat-rawjs: %s: %ld records refused\n", name,
                atomic_load(&refused) - before);
}

static uint64_t
stream_msgs(jsCtx *js)
{
    jsStreamInfo *si = NULL;
    natsStatus s = js_GetStreamInfo(&si, js, BATCH_STREAM, NULL, NULL);
    uint64_t msgs;

    if (s != NATS_OK)
        rawjs_die("stream info", s);
    msgs = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    return msgs;
}

int
rawjs_batch(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = batch_js(nc, IN_FLIGHT, NULL);
    static const long sizes[] = {8, 16, 64};
    int clients = o->clients > 0 && o->clients <= 8 ? o->clients : 1;
    long n = o->kv_n - o->kv_n % (64 * clients), base = 0;
    struct client cl[8];
    uint64_t msgs;
    kvStore *kv = rawstream_bucket(js, BATCH_BUCKET, o->replicas);
    char run[24];
    int first = 1;

    allow_batches(nc, o->fast);
    snprintf(run, sizeof(run), "r%lld", (long long)(rawpost_now_s() * 1000));
    printf("{\"n\":%ld,\"replicas\":%d,\"clients\":%d,\"in_flight\":%d", n, o->replicas, clients,
           IN_FLIGHT);
    first = 0;

    for (int k = 0; k < clients; k++)
        cl[k].nc = k ? rawjs_connect(o->server) : nc;
    rawmeter_mark();
    report("one_by_one", cl, clients, n, base, 1, run, &first);
    base += n;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char name[32];

        snprintf(name, sizeof(name), "atomic_%ld", sizes[i]);
        report(name, cl, clients, n, base, sizes[i], run, &first);
        base += n;
    }
    if (o->fast) {
        report("fast_one_batch", cl, clients, n, base, 0, run, &first);
        base += n;
    }
    /* once more at the end: the machine is shared, so a drift during the run shows here */
    report("one_by_one_again", cl, clients, n, base, 1, run, &first);
    base += n;
    msgs = stream_msgs(js);
    printf(",\"stored\":%ld,\"refused\":%ld,\"stream_msgs\":%llu}\n", atomic_load(&stored),
           atomic_load(&refused), (unsigned long long)msgs);
    for (int k = 1; k < clients; k++)
        natsConnection_Destroy(cl[k].nc);
    kvStore_Destroy(kv);
    js_DeleteKeyValue(js, BATCH_BUCKET);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    /* refusals are a result (too many batches in flight for a fleet), a count that does not
     * add up is not */
    return msgs == (uint64_t)atomic_load(&stored) &&
                   msgs + (uint64_t)atomic_load(&refused) == (uint64_t)base
               ? 0
               : 1;
}
