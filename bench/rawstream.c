/* See rawstream.h. The PubAck handler runs on the library's thread: the counters are atomic,
 * and a re-published message's original is acked there, so the async re-publish phase acks a
 * message only once its copy is stored, as sendat's move-down does. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nats/nats.h>

#include "jspull.h"
#include "rawjs.h"
#include "rawmeter.h"
#include "rawpost.h"
#include "rawstream.h"
#include "timeparse.h"

static long subject_mod;       /* fill: messages share subjects i % subject_mod; 0: one each */
static natsMsg **originals;    /* repub phase: the pulled message to ack once its copy is stored */
static natsConnection *ack_nc; /* and the connection its ack goes through */
static atomic_long acked, failed;

long
rawstream_index(const char *subject)
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
            long i = rawstream_index(natsMsg_GetSubject(msg));
            if (i >= 0 && originals[i]) {
                sa_jspull_ack(ack_nc, originals[i], SA_JSPULL_ACK, 0);
                natsMsg_Destroy(originals[i]);
                originals[i] = NULL;
            }
        }
    }
    natsMsg_Destroy(msg);
}

void
rawstream_wait(jsCtx *js)
{
    jsPubOptions po;
    natsStatus s;

    jsPubOptions_Init(&po);
    po.MaxWait = 120000;
    if ((s = js_PublishAsyncComplete(js, &po)) != NATS_OK)
        rawjs_die("waiting for PubAcks", s);
}

void
rawstream_share_subjects(long mod)
{
    subject_mod = mod;
}

void
rawstream_ack_originals(natsConnection *nc, natsMsg **list)
{
    ack_nc = nc;
    originals = list;
}

long
rawstream_failed(void)
{
    return atomic_load(&failed);
}

double
rawstream_publish(jsCtx *js, const char *level, long n, const char *payload, int size, int with_id)
{
    char subject[96], id[32], sched[24];
    double t0 = rawpost_now_s();
    natsStatus s;

    rawmeter_mark();
    atomic_store(&acked, 0);
    for (long i = 0; i < n; i++) {
        natsMsg *m = NULL;
        jsPubOptions po;
        snprintf(subject, sizeof(subject), "rawjs.%lld.%s.%ld", RAWSTREAM_W, level,
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
    rawstream_wait(js);
    return rawpost_now_s() - t0;
}

void
rawstream_make(jsCtx *js, int replicas)
{
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    const char *subjects[] = {"rawjs.*.*.*"};
    natsStatus s;

    js_DeleteStream(js, RAWSTREAM_NAME, NULL, NULL); /* a leftover of an interrupted run */
    jsStreamConfig_Init(&sc);
    sc.Name = RAWSTREAM_NAME;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = js_WorkQueuePolicy;
    sc.Storage = js_FileStorage;
    sc.Replicas = replicas;
    sc.Duplicates = 3600LL * 1000000000LL; /* sendat's dedupe window */
    sc.AllowDirect = true;
    if ((s = js_AddStream(&si, js, &sc, NULL, &jerr)) != NATS_OK)
        rawjs_die("add stream " RAWSTREAM_NAME, s);
    jsStreamInfo_Destroy(si);
}

jsCtx *
rawstream_js(natsConnection *nc)
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

kvStore *
rawstream_bucket(jsCtx *js, const char *name, int replicas)
{
    kvStore *kv = NULL;
    kvConfig kc;
    natsStatus s;

    kvConfig_Init(&kc);
    kc.Bucket = name;
    kc.History = 1;
    kc.Replicas = replicas;
    kc.StorageType = js_FileStorage;
    js_DeleteKeyValue(js, name);
    if ((s = js_CreateKeyValue(&kv, js, &kc)) != NATS_OK)
        rawjs_die("create bucket", s);
    return kv;
}
