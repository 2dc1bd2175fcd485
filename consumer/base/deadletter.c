/* The dead letter: the message's envelope published to sendat.dlq.<id> with the reason, and
 * only then may the caller ack the original (invariant 1); its Msg-Id is deterministic, so a
 * crash in between does not fork the task (invariant 2). */
#include <inttypes.h>
#include <stdio.h>

#include "deadletter.h"
#include "relay.h"
#include "timeparse.h"

static natsStatus
set_dead_headers(natsMsg *dlq, natsMsg *src, const char *reason, int attempt)
{
    char buf[32];
    natsStatus s = natsMsgHeader_Set(dlq, "Sendat-Reason", reason);

    snprintf(buf, sizeof(buf), "%" PRId64, sa_now_ms());
    if (s == NATS_OK)
        s = natsMsgHeader_Set(dlq, "Sendat-Failed", buf);
    snprintf(buf, sizeof(buf), "%d", attempt);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(dlq, "Sendat-Attempts", buf);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(dlq, "Sendat-Source", natsMsg_GetSubject(src));
    return s;
}

enum sa_code
retry_dead_letter(struct consumer *c, natsMsg *msg, const char *id, int attempt, int channel,
                  const char *reason, struct sa_err *err)
{
    char subject[SA_SUBJECT_MAX], msgid[SA_SUBJECT_MAX], seqid[32];
    natsMsg *dlq = NULL;
    jsPubOptions po;
    jsPubAck *pa = NULL;
    jsErrCode jerr = 0;
    natsStatus s;

    if (!id) {
        /* the stream sequence: unique, so each dead letter without an id has its own name */
        snprintf(seqid, sizeof(seqid), "seq-%" PRIu64, relay_seq(msg));
        id = seqid;
    }
    snprintf(subject, sizeof(subject), "sendat.dlq.%s", id);
    sa_layout_dead_msgid(msgid, sizeof(msgid), id, relay_seq(msg));
    s = natsMsg_Create(&dlq, subject, NULL, natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    if (s == NATS_OK)
        s = set_dead_headers(dlq, msg, reason, attempt);
    jsPubOptions_Init(&po);
    po.MsgId = msgid;
    if (s == NATS_OK)
        s = js_PublishMsg(&pa, c->n->js, dlq, &po, &jerr);
    jsPubAck_Destroy(pa);
    natsMsg_Destroy(dlq);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, jerr, "publish dead letter");
    atomic_fetch_add(&c->counters.dead[channel], 1);
    return SA_OK;
}
