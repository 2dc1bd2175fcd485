/* The producer's single write per task (DESIGN cost budget: one publish, nothing else; a
 * grouped task adds its membership write, group.c), one
 * at a time or many in flight with PubAck bookkeeping. A task already past due goes to the
 * current window so it is sent at once, never into a window the fleet has already drained. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "publish.h"
#include "timeparse.h"

#define FAILURES_KEPT 100

struct publisher {
    struct sa_nats *n;
    jsCtx *js;
    pthread_mutex_t lock;
    long acked, duplicates, failed;
    char failures[FAILURES_KEPT][200];
};

static natsStatus
build_msg(natsMsg **msg, const struct sa_layout *l, const struct sa_task *t, const uint8_t *env,
          size_t len, int64_t now)
{
    char subject[SA_SUBJECT_MAX], sched[24];
    int64_t at = t->due_ms > now ? t->due_ms : now;
    natsStatus s;

    sa_layout_window_subject(subject, sizeof(subject), sa_layout_window(l, at), t->id);
    snprintf(sched, sizeof(sched), "%" PRId64, now);
    s = natsMsg_Create(msg, subject, NULL, (const char *)env, (int)len);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(*msg, "Sendat-Scheduled", sched);
    return s;
}

enum sa_code
publish_task(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
             const char *msgid, struct sa_err *err)
{
    uint8_t *env = NULL;
    size_t env_len = 0;
    natsMsg *msg = NULL;
    jsPubOptions po;
    jsPubAck *pa = NULL;
    jsErrCode jerr = 0;
    enum sa_code rc = sa_task_seal(ring, t, &env, &env_len, err);
    natsStatus s;

    if (rc != SA_OK)
        return rc;
    s = build_msg(&msg, &n->layout, t, env, env_len, sa_now_ms());
    jsPubOptions_Init(&po);
    po.MsgId = msgid ? msgid : t->id;
    if (s == NATS_OK)
        s = js_PublishMsg(&pa, n->js, msg, &po, &jerr);
    if (s != NATS_OK)
        rc = sa_nats_fail(err, s, jerr, msg ? natsMsg_GetSubject(msg) : "publish");
    jsPubAck_Destroy(pa);
    natsMsg_Destroy(msg);
    free(env);
    return rc;
}

static void
on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    struct publisher *p = closure;

    (void)js;
    pthread_mutex_lock(&p->lock);
    if (!pae && !strncmp(natsMsg_GetSubject(msg), "$KV.", 4)) {
        /* a group membership: not a task, counted only when it fails */
    } else if (pae) {
        if (p->failed < FAILURES_KEPT)
            snprintf(p->failures[p->failed], sizeof(p->failures[0]), "%.80s: %.100s",
                     natsMsg_GetSubject(msg), pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
        p->failed++;
    } else {
        p->acked++;
        p->duplicates += pa && pa->Duplicate;
    }
    pthread_mutex_unlock(&p->lock);
    natsMsg_Destroy(msg); /* the handler owns the published message */
}

enum sa_code
publisher_new(struct publisher **out, struct sa_nats *n, int max_pending, struct sa_err *err)
{
    struct publisher *p = calloc(1, sizeof(*p));
    jsOptions o;
    natsStatus s;

    *out = NULL;
    if (!p)
        return sa_fail(err, SA_ENOMEM, "no memory for the publisher");
    pthread_mutex_init(&p->lock, NULL);
    jsOptions_Init(&o);
    o.PublishAsync.MaxPending = max_pending;
    o.PublishAsync.AckHandler = on_ack;
    o.PublishAsync.AckHandlerClosure = p;
    o.PublishAsync.StallWait = 30000;
    s = natsConnection_JetStream(&p->js, n->nc, &o);
    if (s != NATS_OK) {
        free(p);
        return sa_nats_fail(err, s, 0, "JetStream context");
    }
    p->n = n;
    *out = p;
    return SA_OK;
}

enum sa_code
publisher_send(struct publisher *p, const struct sa_task *t, const uint8_t *env, size_t len,
               int64_t now, struct sa_err *err)
{
    natsMsg *msg = NULL;
    jsPubOptions po;
    natsStatus s;
    enum sa_code rc = t->group[0] ? group_member_msg(&msg, t, err) : SA_OK;

    /* A grouped task's membership goes first, so a group cancel that finds the task stored
     * finds its membership too. Ungrouped tasks pay nothing. */
    if (rc != SA_OK)
        return rc;
    if (msg && (s = js_PublishMsgAsync(p->js, &msg, NULL)) != NATS_OK) {
        natsMsg_Destroy(msg);
        return sa_nats_fail(err, s, 0, "publish group member");
    }
    s = build_msg(&msg, &p->n->layout, t, env, len, now);
    jsPubOptions_Init(&po);
    po.MsgId = t->id;
    if (s == NATS_OK)
        s = js_PublishMsgAsync(p->js, &msg, &po); /* takes msg on success */
    natsMsg_Destroy(msg);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "publish");
}

enum sa_code
publisher_finish(struct publisher *p, int64_t timeout_ms, struct sa_err *err)
{
    jsPubOptions po;
    natsStatus s;

    jsPubOptions_Init(&po);
    po.MaxWait = timeout_ms;
    s = js_PublishAsyncComplete(p->js, &po);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "waiting for the last PubAcks");
}

void
publisher_counts(struct publisher *p, long *acked, long *duplicates, long *failed)
{
    pthread_mutex_lock(&p->lock);
    *acked = p->acked;
    *duplicates = p->duplicates;
    *failed = p->failed;
    pthread_mutex_unlock(&p->lock);
}

const char *
publisher_failure(struct publisher *p, long i)
{
    return i < FAILURES_KEPT ? p->failures[i] : NULL;
}

void
publisher_free(struct publisher *p)
{
    if (!p)
        return;
    jsCtx_Destroy(p->js);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
