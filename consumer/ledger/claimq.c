/* See claimq.h. Jobs are found again from their PubAck by the address of the message the
 * library hands back, which is the one published. */
#include <pthread.h>
#include <stdlib.h>

#include "claimq.h"
#include "log.h"
#include "seqset.h"

#define CLAIM_ACK_WAIT_MS 4000 /* a PubAck later than this is an error: read back instead */
#define STALL_WAIT_MS 50

struct claimq {
    jsCtx *js;
    pthread_mutex_t lock;
    struct seqset flying; /* message address -> job */
    struct claim_job *done, *done_tail;
    int pending;
    void (*wake)(void *);
    void *wake_arg;
};

static void
on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    struct claimq *q = closure;
    struct claim_job *job;

    (void)js;
    pthread_mutex_lock(&q->lock);
    job = seqset_take(&q->flying, (uint64_t)(uintptr_t)msg);
    if (job) {
        job->ok = pa && !pae;
        job->rev = pa ? pa->Sequence : 0;
        job->next = NULL;
        if (q->done_tail)
            q->done_tail->next = job;
        else
            q->done = job;
        q->done_tail = job;
    }
    pthread_mutex_unlock(&q->lock);
    natsMsg_Destroy(msg);
    if (job && q->wake)
        q->wake(q->wake_arg);
}

enum sa_code
claimq_new(struct claimq **out, struct consumer *c, void (*wake)(void *), void *arg,
           struct sa_err *err)
{
    struct claimq *q = calloc(1, sizeof(*q));
    jsOptions o;
    natsStatus s;

    *out = NULL;
    if (!q)
        return sa_fail(err, SA_ENOMEM, "no memory for the claim pipeline");
    jsOptions_Init(&o);
    o.PublishAsync.AckHandler = on_ack;
    o.PublishAsync.AckHandlerClosure = q;
    o.PublishAsync.MaxPending = 4 * (int64_t)c->cfg.max_inflight + 64;
    o.PublishAsync.StallWait = STALL_WAIT_MS;
    s = natsConnection_JetStream(&q->js, c->n->nc, &o);
    if (s != NATS_OK) {
        free(q);
        return sa_nats_fail(err, s, 0, "JetStream context for claims");
    }
    pthread_mutex_init(&q->lock, NULL);
    q->wake = wake;
    q->wake_arg = arg;
    *out = q;
    return SA_OK;
}

void
claimq_free(struct claimq *q)
{
    if (!q)
        return;
    jsCtx_Destroy(q->js);
    seqset_free(&q->flying);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

enum sa_code
claimq_send(struct claimq *q, struct claim_job *job, struct sa_err *err)
{
    natsMsg *m = NULL;
    jsPubOptions po;
    uint64_t key;
    natsStatus s;
    enum seqset_put put;
    enum sa_code rc = sa_claim_message(&m, job->h->task->id, &job->rec, job->last, err);

    if (rc != SA_OK)
        return rc;
    key = (uint64_t)(uintptr_t)m;
    pthread_mutex_lock(&q->lock);
    put = seqset_put(&q->flying, key, job); /* before the publish: its PubAck may come first */
    q->pending += put == SEQSET_ADDED;
    pthread_mutex_unlock(&q->lock);
    if (put != SEQSET_ADDED) {
        natsMsg_Destroy(m);
        return sa_fail(err, SA_ENOMEM, "no memory for a claim in flight");
    }
    jsPubOptions_Init(&po);
    po.MaxWait = CLAIM_ACK_WAIT_MS;
    s = js_PublishMsgAsync(q->js, &m, &po);
    if (s == NATS_OK)
        return SA_OK;
    pthread_mutex_lock(&q->lock);
    seqset_remove(&q->flying, key);
    q->pending--;
    pthread_mutex_unlock(&q->lock);
    natsMsg_Destroy(m);
    return sa_nats_fail(err, s, 0, "publish claim");
}

struct claim_job *
claimq_done(struct claimq *q)
{
    struct claim_job *list;

    pthread_mutex_lock(&q->lock);
    list = q->done;
    for (struct claim_job *j = list; j; j = j->next)
        q->pending--;
    q->done = q->done_tail = NULL;
    pthread_mutex_unlock(&q->lock);
    return list;
}

int
claimq_pending(struct claimq *q)
{
    int n;

    pthread_mutex_lock(&q->lock);
    n = q->pending;
    pthread_mutex_unlock(&q->lock);
    return n;
}

struct claim_job *
claimq_abandon(struct claimq *q)
{
    struct claim_job *list = claimq_done(q);
    natsMsgList left = {0};

    /* nats.c 3.4 crashes in this call when nothing was ever pending: ask only if something is */
    if (claimq_pending(q) > 0 && js_PublishAsyncGetPendingList(&left, q->js) == NATS_OK) {
        pthread_mutex_lock(&q->lock);
        for (int i = 0; i < left.Count; i++) {
            struct claim_job *job = seqset_take(&q->flying, (uint64_t)(uintptr_t)left.Msgs[i]);
            if (job) {
                job->ok = 0;
                job->next = list;
                list = job;
                q->pending--;
            }
        }
        pthread_mutex_unlock(&q->lock);
        natsMsgList_Destroy(&left);
    }
    return list;
}
