/* See rawpull.h. Each request has its own reply subject, so the server's status for an older
 * request (a 408 that came late) is told apart from the one that closes the current. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jspull.h"
#include "rawjs.h"
#include "rawpost.h"
#include "rawpull.h"

int
rawpull_open(struct rawpull *r, natsConnection *nc, const char *stream, const char *durable)
{
    natsInbox *inbox = NULL;
    char subject[80];

    memset(r, 0, sizeof(*r));
    r->nc = nc;
    snprintf(r->stream, sizeof(r->stream), "%s", stream);
    snprintf(r->durable, sizeof(r->durable), "%s", durable);
    if (natsInbox_Create(&inbox) != NATS_OK)
        return -1;
    snprintf(r->prefix, sizeof(r->prefix), "%s", inbox);
    snprintf(subject, sizeof(subject), "%s.*", inbox);
    natsInbox_Destroy(inbox);
    if (natsConnection_SubscribeSync(&r->sub, nc, subject) != NATS_OK)
        return -1;
    return natsSubscription_SetPendingLimits(r->sub, -1, -1) == NATS_OK ? 0 : -1;
}

/* Whether status message m closes request req. */
static int
closes(natsMsg *m, unsigned req)
{
    const char *dot = strrchr(natsMsg_GetSubject(m), '.');

    return sa_jspull_classify(m, NULL) != SA_JSPULL_HEARTBEAT && dot &&
           strtoul(dot + 1, NULL, 10) == req;
}

int
rawpull_get(struct rawpull *r, natsMsgList *list, int batch, int64_t expires_ms)
{
    char reply[80];
    double end = rawpost_now_s() + (double)expires_ms / 1000 + 1; /* a lost 408: give up */
    natsMsg *m = NULL;

    list->Count = 0;
    list->Msgs = calloc((size_t)batch, sizeof(*list->Msgs));
    snprintf(reply, sizeof(reply), "%s.%u", r->prefix, ++r->req);
    if (!list->Msgs ||
        sa_jspull_request(r->nc, r->stream, r->durable, reply, batch, expires_ms, 0) != NATS_OK)
        return 0;
    while (list->Count < batch && rawpost_now_s() < end &&
           natsSubscription_NextMsg(&m, r->sub, (int64_t)((end - rawpost_now_s()) * 1000) + 1) ==
               NATS_OK) {
        if (sa_jspull_classify(m, NULL) == SA_JSPULL_TASK) {
            list->Msgs[list->Count++] = m;
            continue;
        }
        int done = closes(m, r->req);
        natsMsg_Destroy(m);
        if (done)
            break;
    }
    return list->Count;
}

void
rawpull_close(struct rawpull *r)
{
    natsSubscription_Destroy(r->sub);
    r->sub = NULL;
}

struct rawpull *
rawpull_durable(natsConnection *nc, jsCtx *js, const char *stream, const char *durable,
                const char *filter)
{
    jsConsumerConfig cc;
    jsConsumerInfo *ci = NULL;
    jsErrCode jerr = 0;
    struct rawpull *r = calloc(1, sizeof(*r));
    natsStatus s;

    jsConsumerConfig_Init(&cc);
    cc.Durable = durable;
    cc.FilterSubject = filter;
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = 60LL * 1000000000LL;
    cc.MaxAckPending = 100000; /* what sendat gives each level */
    cc.MaxWaiting = 512;
    if ((s = js_AddConsumer(&ci, js, stream, &cc, NULL, &jerr)) != NATS_OK)
        rawjs_die("add consumer", s);
    jsConsumerInfo_Destroy(ci);
    if (!r || rawpull_open(r, nc, stream, durable) != 0)
        rawjs_die("pull subscribe", NATS_ERR);
    return r;
}

void
rawpull_free(struct rawpull *r)
{
    if (!r)
        return;
    rawpull_close(r);
    free(r);
}
