/* Retries and dead letters. Both publish a successor (the next attempt or the dead letter)
 * and only then may the caller ack the original (invariant 1); both are deterministic in
 * their Msg-Id, so a crash in between does not fork the task (invariant 2). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "relay.h"
#include "retry.h"
#include "timeparse.h"

int64_t
retry_backoff(const struct config *cfg, int attempt)
{
    int64_t cap = cfg->retry_base_ms;

    for (int i = 1; i < attempt && cap < cfg->retry_max_ms; i++)
        cap *= 2;
    if (cap > cfg->retry_max_ms)
        cap = cfg->retry_max_ms;
    return (int64_t)(((double)randombytes_random() / 4294967295.0) * (double)cap);
}

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

enum sa_code
retry_again(struct consumer *c, struct held *h, const char *error, int64_t started_ms,
            int64_t retry_after_ms, int64_t *due_ms, struct sa_err *err)
{
    struct sa_task *t = h->task;
    struct relay_meta m = {
        .scheduled_ms = h->scheduled_ms, .moves = h->moves, .moved_ms = h->moved_ms};
    char subject[SA_SUBJECT_MAX], msgid[SA_SUBJECT_MAX];
    uint8_t *env = NULL;
    size_t env_len = 0;
    int64_t now = sa_now_ms(), wait = retry_backoff(&c->cfg, t->attempt);
    enum sa_code rc;

    if (retry_after_ms > wait)
        wait = retry_after_ms;
    if ((rc = sa_task_add_attempt(t, now, error, err)) != SA_OK)
        return rc;
    if (t->not_after_ms && now + wait > t->not_after_ms)
        return sa_fail(err, SA_EPERM, "expired: the next attempt would come after not-after");
    *due_ms = now + wait;
    if (!t->first_due_ms) { /* lateness stays measured from the first attempt (issue 12) */
        t->first_due_ms = t->due_ms;
        t->first_started_ms = started_ms;
    }
    t->attempt++;
    t->due_ms = *due_ms; /* the retry is due after its backoff; the claim keeps the first due */
    rc = sa_task_seal(c->ring, t, &env, &env_len, err);
    t->attempt--;
    if (rc != SA_OK)
        return rc;
    relay_subject(c, subject, sizeof(subject), *due_ms, t->id);
    sa_layout_retry_msgid(msgid, sizeof(msgid), t->id, relay_seq(h->msg));
    rc = relay_publish(c, subject, env, (int)env_len, msgid, &m, err);
    free(env);
    if (rc == SA_OK)
        atomic_fetch_add(&c->counters.retried[t->channel], 1);
    return rc;
}
