/* sendat-rawjs's small commands (rawjs.h): the size of a sealed task, a stream's counts, and
 * what the claim records say about moves and lateness. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "keyring.h"
#include "layout.h"
#include "rawjs.h"
#include "rawpull.h"
#include "task.h"
#include "timeparse.h"

int
rawjs_sealed(const struct rawjs_opts *o)
{
    static const uint8_t kid[1][SA_KID_BYTES] = {{1, 2, 3, 4}};
    uint8_t key[1][SA_KEY_BYTES];
    struct sa_keyring *ring = NULL;
    struct sa_task *t = NULL;
    struct sa_err err = {0};
    uint8_t *env = NULL;
    size_t len = 0;
    int64_t now = sa_now_ms();

    randombytes_buf(key[0], sizeof(key[0]));
    if (sa_keyring_from_keys(&ring, kid, (const uint8_t(*)[SA_KEY_BYTES])key, 1, &err) != SA_OK ||
        sa_task_new(&t, &err) != SA_OK || sa_task_set_url(t, o->url, &err) != SA_OK ||
        sa_task_set_body(t, o->data, strlen(o->data), &err) != SA_OK) {
        fprintf(stderr, "sendat-rawjs: %s\n", err.msg);
        return 1;
    }
    t->channel = SA_CHANNEL_WEBHOOK;
    t->due_ms = now + 86400000;
    t->created_ms = now;
    sa_layout_id_new(t->id, sizeof(t->id), t->due_ms);
    if (sa_task_seal(ring, t, &env, &len, &err) != SA_OK) {
        fprintf(stderr, "sendat-rawjs: %s\n", err.msg);
        return 1;
    }
    printf("{\"sealed_bytes\":%zu,\"body_bytes\":%zu,\"url_bytes\":%zu,\"id_bytes\":%zu}\n", len,
           strlen(o->data), strlen(o->url), strlen(t->id));
    free(env);
    sa_task_free(t);
    sa_keyring_free(ring);
    return 0;
}

/* The key id of a task stored in shard 0, as any producer-role client can read it (direct get
 * of the stream's newest messages; the envelope's byte 0 is its version, bytes 1..4 the key
 * id), passing over junk this tool made (ids junk-<k>) and parked copies. 0 and kid filled, or
 * -1 if no sealed task is among the newest 1,000 messages. */
static int
junk_real_kid(jsCtx *js, uint8_t kid[SA_KID_BYTES])
{
    jsStreamInfo *si = NULL;
    uint64_t first, last;
    int found = -1;

    if (js_GetStreamInfo(&si, js, SA_TASKS_STREAM, NULL, NULL) != NATS_OK)
        return -1;
    first = si->State.FirstSeq;
    last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    for (uint64_t seq = last; found < 0 && seq >= first && seq > 0 && last - seq < 1000; seq--) {
        natsMsg *m = NULL;
        if (js_GetMsg(&m, js, SA_TASKS_STREAM, seq, NULL, NULL) != NATS_OK)
            continue;
        const char *subj = natsMsg_GetSubject(m);
        char id[SA_ID_MAX + 1];
        if (!strncmp(subj, "sendat.task.", 12) && !strstr(subj, ".junk-") &&
            !sa_layout_is_park(subj, id) && natsMsg_GetDataLength(m) > SA_KID_BYTES &&
            natsMsg_GetData(m)[0] == 0x01) {
            memcpy(kid, natsMsg_GetData(m) + 1, SA_KID_BYTES);
            found = 0;
        }
        natsMsg_Destroy(m);
    }
    return found;
}

/* Junk k of o->shape into buf (sizeof buf bytes) and its subject. Shapes (issue 37.4):
 * sealed   byte 0x01, a random key id, random bytes: looks sealed under a key nobody holds
 * garbage  random bytes whose first is not 0x01: opens under no key id at all
 * realkey  byte 0x01 and the deployment's own key id (kid), random bytes: fails its MAC
 * one      sealed, but every message on one subject (id junk-0) instead of one subject each
 * slot     sealed, into the slot level of --slot instead of the window level */
static void
junk_make(const struct rawjs_opts *o, const uint8_t *kid, long k, uint8_t *buf, size_t len,
          char *subject, size_t cap)
{
    char id[32];

    randombytes_buf(buf, len);
    buf[0] = 0x01; /* the envelope's version: it looks sealed */
    if (!strcmp(o->shape, "garbage"))
        buf[0] = (uint8_t)(0x02 + buf[1] % 0xfd);
    else if (!strcmp(o->shape, "realkey"))
        memcpy(buf + 1, kid, SA_KID_BYTES);
    snprintf(id, sizeof(id), "junk-%ld", !strcmp(o->shape, "one") ? 0L : k);
    if (!strcmp(o->shape, "slot"))
        sa_layout_slot_subject(subject, cap, 0, o->window, o->slot, id);
    else
        sa_layout_window_subject(subject, cap, 0, o->window, id);
}

int
rawjs_junk_shape_ok(const struct rawjs_opts *o)
{
    static const char *const shapes[] = {"sealed", "garbage", "realkey", "one", "slot"};

    if (!strcmp(o->shape, "slot"))
        return o->slot > o->window;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        if (!strcmp(o->shape, shapes[i]))
            return 1;
    return 0;
}

/* What a producer-role client can publish without a key (issues 24 and 37.4): o->n messages of
 * o->shape (junk_make) into the window level of --window (shard 0), ids junk-<k>. */
int
rawjs_junk(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = NULL;
    jsOptions jo;
    jsPubOptions po;
    char subject[SA_SUBJECT_MAX];
    uint8_t junk[1 + SA_KID_BYTES + 24 + 64], kid[SA_KID_BYTES] = {0};
    int64_t t0 = sa_now_ms();
    natsStatus s;

    jsOptions_Init(&jo);
    jo.PublishAsync.MaxPending = 4096;
    jo.PublishAsync.StallWait = 30000; /* a server busy with the consumers acks late */
    s = natsConnection_JetStream(&js, nc, &jo);
    if (s == NATS_OK && !strcmp(o->shape, "realkey") && junk_real_kid(js, kid) != 0) {
        fprintf(stderr, "sendat-rawjs: no sealed task stored to read a key id from\n");
        return 1;
    }
    for (long k = 0; s == NATS_OK && k < o->n; k++) {
        junk_make(o, kid, k, junk, sizeof(junk), subject, sizeof(subject));
        s = js_PublishAsync(js, subject, junk, (int)sizeof(junk), NULL);
    }
    jsPubOptions_Init(&po);
    po.MaxWait = 60000;
    if (s == NATS_OK)
        s = js_PublishAsyncComplete(js, &po);
    if (s != NATS_OK)
        rawjs_die("publish junk", s);
    printf("{\"n\":%ld,\"window\":%" PRId64 ",\"slot\":%" PRId64
           ",\"shape\":\"%s\",\"wall_s\":%.3f}\n",
           o->n, o->window, o->slot, o->shape, (double)(sa_now_ms() - t0) / 1000);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}

int
rawjs_info(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = natsConnection_JetStream(&js, nc, NULL);

    if (s == NATS_OK)
        s = js_GetStreamInfo(&si, js, o->stream, NULL, &jerr);
    if (s != NATS_OK)
        rawjs_die(o->stream, s);
    printf("{\"stream\":\"%s\",\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"subjects\":%" PRId64
           ",\"consumers\":%" PRId64 ",\"leader\":\"%s\"}\n",
           o->stream, si->State.Msgs, si->State.Bytes, si->State.NumSubjects, si->State.Consumers,
           si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "");
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}

static int
cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return (x > y) - (x < y);
}

/* Reads every record of the claims bucket's stream once (a throwaway durable, no acks) and
 * sums up the "sent" ones: how often each task was re-published before it was sent. */
int
rawjs_claims(const struct rawjs_opts *o)
{
    natsConnection *nc = rawjs_connect(o->server);
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    jsConsumerConfig cc;
    jsConsumerInfo *ci = NULL;
    struct rawpull sub;
    const char *stream = "KV_" SA_CLAIMS_BUCKET;
    uint64_t total;
    long sent = 0, moves_sum = 0, moves_max = 0, cap, *late, records = 0;
    long hist[4] = {0};
    FILE *dump = o->dump ? fopen(o->dump, "w") : NULL;
    natsStatus s = natsConnection_JetStream(&js, nc, NULL);

    if (s == NATS_OK)
        s = js_GetStreamInfo(&si, js, stream, NULL, NULL);
    if (s != NATS_OK)
        rawjs_die(stream, s);
    total = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    cap = (long)total + 1;
    late = calloc((size_t)cap, sizeof(*late));
    jsConsumerConfig_Init(&cc);
    cc.Durable = "bench_claims_reader";
    cc.AckPolicy = js_AckNone;
    cc.DeliverPolicy = js_DeliverAll;
    js_DeleteConsumer(js, stream, cc.Durable, NULL, NULL);
    if ((s = js_AddConsumer(&ci, js, stream, &cc, NULL, NULL)) != NATS_OK)
        rawjs_die("claims reader", s);
    jsConsumerInfo_Destroy(ci);
    if (rawpull_open(&sub, nc, stream, cc.Durable) != 0)
        rawjs_die("claims subscribe", NATS_ERR);
    while ((uint64_t)records < total) {
        natsMsgList list = {0};
        int got = rawjs_pull(&sub, &list, (long)(total - (uint64_t)records), 1024);
        if (!got)
            break;
        for (int i = 0; i < got; i++) {
            json_t *j = json_loadb(natsMsg_GetData(list.Msgs[i]),
                                   (size_t)natsMsg_GetDataLength(list.Msgs[i]), 0, NULL);
            const char *state = j ? json_string_value(json_object_get(j, "state")) : NULL;
            records++;
            if (state && !strcmp(state, "sent") && sent < cap) {
                long mv = (long)json_integer_value(json_object_get(j, "moves"));
                moves_sum += mv;
                if (mv > moves_max)
                    moves_max = mv;
                hist[mv < 3 ? mv : 3]++;
                late[sent++] = (long)json_integer_value(json_object_get(j, "lateness_ms"));
                if (dump) /* key (the task id), moves, lateness, consumer */
                    fprintf(dump, "%s %ld %ld %s\n",
                            natsMsg_GetSubject(list.Msgs[i]) + strlen("$KV." SA_CLAIMS_BUCKET "."),
                            mv, late[sent - 1], json_string_value(json_object_get(j, "consumer")));
            }
            json_decref(j);
        }
        natsMsgList_Destroy(&list);
    }
    rawpull_close(&sub);
    js_DeleteConsumer(js, stream, cc.Durable, NULL, NULL);
    qsort(late, (size_t)sent, sizeof(*late), cmp_long);
#define PCT(p) (sent ? late[(size_t)((double)(sent - 1) * (p))] : 0)
    printf(
        "{\"records\":%ld,\"sent\":%ld,\"moves_mean\":%.3f,\"moves_max\":%ld,\"moves_0\":%ld,"
        "\"moves_1\":%ld,"
        "\"moves_2\":%ld,\"moves_3plus\":%ld,\"claim_lateness_p50\":%ld,\"claim_lateness_p99\":%ld,"
        "\"claim_lateness_max\":%ld}\n",
        records, sent, sent ? (double)moves_sum / (double)sent : 0.0, moves_max, hist[0], hist[1],
        hist[2], hist[3], PCT(0.5), PCT(0.99), sent ? late[sent - 1] : 0);
    free(late);
    if (dump)
        fclose(dump);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}
