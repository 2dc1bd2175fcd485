/* The producer's single write per task (DESIGN cost budget: one publish, nothing else). A
 * task already past due goes to the current window so it is sent at once, never into a
 * window the fleet has already drained. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "publish.h"
#include "timeparse.h"

enum sa_code
publish_task(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
             const char *msgid, struct sa_err *err)
{
    uint8_t *env = NULL;
    size_t env_len = 0;
    char subject[SA_SUBJECT_MAX], sched[24];
    natsMsg *msg = NULL;
    jsPubOptions po;
    jsPubAck *pa = NULL;
    jsErrCode jerr = 0;
    int64_t now = sa_now_ms(), at = t->due_ms > now ? t->due_ms : now;
    enum sa_code rc = sa_task_seal(ring, t, &env, &env_len, err);
    natsStatus s;

    if (rc != SA_OK)
        return rc;
    sa_layout_window_subject(subject, sizeof(subject), sa_layout_window(&n->layout, at), t->id);
    snprintf(sched, sizeof(sched), "%" PRId64, now);
    s = natsMsg_Create(&msg, subject, NULL, (const char *)env, (int)env_len);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(msg, "Sendat-Scheduled", sched);
    jsPubOptions_Init(&po);
    po.MsgId = msgid ? msgid : t->id;
    if (s == NATS_OK)
        s = js_PublishMsg(&pa, n->js, msg, &po, &jerr);
    if (s != NATS_OK)
        rc = sa_nats_fail(err, s, jerr, subject);
    jsPubAck_Destroy(pa);
    natsMsg_Destroy(msg);
    free(env);
    return rc;
}
