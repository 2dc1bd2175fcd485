/* See claimq.h. The publishes and their PubAcks are asyncpub.c's; a job whose PubAck came (or
 * whose publish failed: ok = 0) is put on the done list, which the main loop takes. */
#include <stdlib.h>

#include "asyncpub.h"
#include "claimq.h"

#define CLAIM_ACK_WAIT_MS 4000 /* a PubAck later than this is an error: read back instead */
#define STALL_WAIT_MS 50
#define LATER_MS 10 /* how long a job sent later waits for others to go with it */

struct claimq {
    const struct sa_layout *layout; /* which claims bucket a task's id writes to */
    void (*wake)(void *);
    void *wake_arg;
    struct asyncpub pub; /* its lock guards the three fields below */
    struct claim_job *done, *done_tail;
    int pending; /* sent and not yet returned by claimq_done */
    /* main thread only, no lock: the jobs to publish at flush_at */
    struct claim_job *later, *later_tail;
    int n_later;
    int64_t flush_at;
};

/* Under pub's lock: job joins the done list; the loop is woken for the first on it and takes
 * the whole list. */
static void
finish(struct claimq *q, struct claim_job *job)
{
    job->next = NULL;
    if (q->done_tail) {
        q->done_tail->next = job;
    } else {
        q->done = job;
        if (q->wake)
            q->wake(q->wake_arg);
    }
    q->done_tail = job;
}

/* Under pub's lock. */
static void
on_done(void *arg, void *val, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae)
{
    struct claimq *q = arg;
    struct claim_job *job = val;

    (void)msg;
    job->ok = pa && !pae;
    job->given_up = !pa && !pae;
    job->rev = pa ? pa->Sequence : 0;
    finish(q, job);
}

static int
is_take(void *val)
{
    return ((struct claim_job *)val)->op == CLAIM_TAKE;
}

size_t
claimq_give_up_takes(struct claimq *q)
{
    return asyncpub_give_up(&q->pub, is_take);
}

enum sa_code
claimq_new(struct claimq **out, struct consumer *c, void (*wake)(void *), void *arg,
           struct sa_err *err)
{
    struct claimq *q = calloc(1, sizeof(*q));
    enum sa_code rc;

    *out = NULL;
    if (!q)
        return sa_fail(err, SA_ENOMEM, "no memory for the claim pipeline");
    rc = asyncpub_init(&q->pub, c->n->nc, 4 * (int64_t)c->cfg.max_inflight + 64, STALL_WAIT_MS,
                       on_done, q, "JetStream context for claims", err);
    if (rc != SA_OK) {
        free(q);
        return rc;
    }
    q->wake = wake;
    q->wake_arg = arg;
    q->layout = &c->n->layout;
    *out = q;
    return SA_OK;
}

void
claimq_free(struct claimq *q)
{
    if (!q)
        return;
    asyncpub_destroy(&q->pub, q); /* frees q */
}

enum sa_code
claimq_send(struct claimq *q, struct claim_job *job, struct sa_err *err)
{
    const char *id = job->h->task->id;
    char bucket[64];
    natsMsg *m = NULL;
    jsPubOptions po;
    enum sa_code rc;

    sa_layout_claims_bucket(bucket, sizeof(bucket), sa_layout_shard_of(q->layout, id));
    rc = sa_claim_message(&m, bucket, id, &job->rec, job->last, err);

    if (rc != SA_OK)
        return rc;
    jsPubOptions_Init(&po);
    po.MaxWait = CLAIM_ACK_WAIT_MS;
    pthread_mutex_lock(&q->pub.lock);
    q->pending++; /* before the publish: its PubAck may come first */
    pthread_mutex_unlock(&q->pub.lock);
    rc = asyncpub_send(&q->pub, &m, &po, job, "publish claim", err);
    if (rc == SA_OK)
        return SA_OK;
    pthread_mutex_lock(&q->pub.lock);
    q->pending--;
    pthread_mutex_unlock(&q->pub.lock);
    natsMsg_Destroy(m);
    return rc;
}

void
claimq_send_later(struct claimq *q, struct claim_job *job, int64_t now)
{
    job->next = NULL;
    if (q->later_tail) {
        q->later_tail->next = job;
    } else {
        q->later = job;
        q->flush_at = now + LATER_MS;
    }
    q->later_tail = job;
    q->n_later++;
}

int64_t
claimq_flush_at(const struct claimq *q)
{
    return q->later ? q->flush_at : INT64_MAX;
}

/* Main thread: job joins the done list unwritten (ok = 0: written the patient way). */
static void
done_unwritten(struct claimq *q, struct claim_job *job)
{
    pthread_mutex_lock(&q->pub.lock);
    job->ok = 0;
    q->pending++; /* claimq_done counts it off */
    finish(q, job);
    pthread_mutex_unlock(&q->pub.lock);
}

/* Takes the list of jobs sent later off the queue. */
static struct claim_job *
take_later(struct claimq *q)
{
    struct claim_job *j = q->later;

    q->later = q->later_tail = NULL;
    q->n_later = 0;
    return j;
}

void
claimq_flush(struct claimq *q)
{
    for (struct claim_job *j = take_later(q), *next; j; j = next) {
        next = j->next;
        if (claimq_send(q, j, NULL) != SA_OK)
            done_unwritten(q, j);
    }
}

struct claim_job *
claimq_done(struct claimq *q)
{
    struct claim_job *list;

    pthread_mutex_lock(&q->pub.lock);
    list = q->done;
    for (struct claim_job *j = list; j; j = j->next)
        q->pending--;
    q->done = q->done_tail = NULL;
    pthread_mutex_unlock(&q->pub.lock);
    return list;
}

int
claimq_pending(struct claimq *q)
{
    int n;

    pthread_mutex_lock(&q->pub.lock);
    n = q->pending;
    pthread_mutex_unlock(&q->pub.lock);
    return n + q->n_later;
}

/* Under pub's lock: a job still in flight goes back as failed (read back the patient way). */
static void
take_back(void *arg, void *val)
{
    struct claimq *q = arg;
    struct claim_job *job = val;

    job->ok = 0;
    job->next = q->done;
    q->done = job;
    if (!q->done_tail)
        q->done_tail = job;
}

struct claim_job *
claimq_abandon(struct claimq *q)
{
    for (struct claim_job *j = take_later(q), *next; j; j = next) {
        next = j->next;
        done_unwritten(q, j);
    }
    asyncpub_take_all(&q->pub, take_back, q);
    return claimq_done(q);
}
