/* See rawledger.h: the ledger stream, its watcher, and how a cancel would be answered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nats/nats.h>

#include "rawjs.h"
#include "rawledger.h"
#include "rawpost.h"

void
rawledger_make(jsCtx *js, int replicas)
{
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    const char *subjects[] = {"ledger.>"};
    natsStatus s;

    js_DeleteStream(js, RAWLEDGER_STREAM, NULL, NULL); /* a leftover of an interrupted run */
    jsStreamConfig_Init(&sc);
    sc.Name = RAWLEDGER_STREAM;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = js_LimitsPolicy;
    sc.Storage = js_FileStorage;
    sc.Replicas = replicas;
    sc.MaxAge = 3600LL * 1000000000LL;
    if ((s = js_AddStream(&si, js, &sc, NULL, &jerr)) != NATS_OK)
        rawjs_die("add stream " RAWLEDGER_STREAM, s);
    jsStreamInfo_Destroy(si);
}

void
rawledger_id(char *id, long i)
{
    snprintf(id, RAWLEDGER_ID_LEN + 1, "%0*ld", RAWLEDGER_ID_LEN, i);
}

natsSubscription *
rawledger_watch(jsCtx *js, int64_t start_ns, natsMsgHandler cb, void *arg)
{
    jsSubOptions so;
    natsSubscription *sub = NULL;
    jsErrCode jerr = 0;
    natsStatus s;

    jsSubOptions_Init(&so);
    so.Stream = RAWLEDGER_STREAM;
    so.Ordered = true;
    if (start_ns > 0) {
        so.Config.DeliverPolicy = js_DeliverByStartTime;
        so.Config.OptStartTime = start_ns;
    }
    s = cb ? js_Subscribe(&sub, js, RAWLEDGER_WATCHED, cb, arg, NULL, &so, &jerr)
           : js_SubscribeSync(&sub, js, RAWLEDGER_WATCHED, NULL, &so, &jerr);
    if (s != NATS_OK)
        rawjs_die("ordered consumer of the ledger", s);
    natsSubscription_SetPendingLimits(sub, -1, -1);
    return sub;
}

/* Whether claim block m names id (one id per line). */
static int
names(natsMsg *m, const char *id)
{
    const char *d = natsMsg_GetData(m);
    int len = natsMsg_GetDataLength(m);

    for (int at = 0; at + RAWLEDGER_ID_LEN <= len; at += RAWLEDGER_ID_LEN + 1)
        if (!memcmp(d + at, id, RAWLEDGER_ID_LEN))
            return 1;
    return 0;
}

void
rawledger_answer_cancel(jsCtx *js, long id, int64_t start_ns, const char *name)
{
    char key[RAWLEDGER_ID_LEN + 1];
    jsPubAck *pa = NULL;
    natsSubscription *sub;
    natsMsg *m = NULL;
    long read = 0, bytes = 0;
    int claimed = 0;
    double t0 = rawpost_now_s(), t_ack;
    uint64_t mine;
    natsStatus s;

    rawledger_id(key, id);
    if ((s = js_Publish(&pa, js, RAWLEDGER_CANCEL, key, RAWLEDGER_ID_LEN, NULL, NULL)) != NATS_OK)
        rawjs_die("cancel", s);
    mine = pa->Sequence;
    jsPubAck_Destroy(pa);
    t_ack = rawpost_now_s();
    /* the stretch: from where a block naming the id can first stand up to the cancel itself;
     * a block after the cancel found it in the watcher before sending, so the cancel won */
    sub = rawledger_watch(js, start_ns, NULL, NULL);
    while (natsSubscription_NextMsg(&m, sub, 5000) == NATS_OK) {
        jsMsgMetaData *meta = NULL;
        uint64_t seq = 0;
        if (natsMsg_GetMetaData(&meta, m) == NATS_OK)
            seq = meta->Sequence.Stream;
        jsMsgMetaData_Destroy(meta);
        read++;
        bytes += natsMsg_GetDataLength(m);
        if (seq < mine && !strcmp(natsMsg_GetSubject(m), RAWLEDGER_CLAIM) && names(m, key))
            claimed = 1;
        natsMsg_Destroy(m);
        if (seq >= mine)
            break;
    }
    natsSubscription_Destroy(sub);
    printf(",\"%s\":{\"answer\":\"%s\",\"puback_ms\":%.2f,\"ms\":%.2f,\"records_read\":%ld,"
           "\"bytes_read\":%ld}",
           name, claimed ? "too_late" : "cancelled", (t_ack - t0) * 1000,
           (rawpost_now_s() - t0) * 1000, read, bytes);
    fprintf(stderr, "sendat-rawjs: %s: %s after %.2f ms, %ld records (%ld bytes) read\n", name,
            claimed ? "too late" : "cancelled", (rawpost_now_s() - t0) * 1000, read, bytes);
}
