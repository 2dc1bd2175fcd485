/* Retries (dead letters: deadletter.c). A retry publishes its successor (the next attempt)
 * and only then may the caller ack the original (invariant 1); it is deterministic in its
 * Msg-Id, so a crash in between does not fork the task (invariant 2). */
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
