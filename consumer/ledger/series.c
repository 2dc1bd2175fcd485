/* Next occurrences. The series' cancel record is read from the bucket itself before the next
 * occurrence is published (the in-memory set may lag by a moment), so a cancelled series
 * publishes nothing more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancel.h"
#include "cancelrec.h"
#include "cron.h"
#include "log.h"
#include "relay.h"
#include "series.h"
#include "timeparse.h"

int
series_cancelled(struct consumer *c, const struct sa_task *t)
{
    return cancel_applies(c->cancels, t->id, t->created_ms) ||
           (t->cron && cancel_contains(c->cancels, t->series_id));
}

int
series_paused(struct consumer *c, const struct sa_task *t)
{
    char key[SA_ID_MAX + 8];

    if (!t->cron)
        return 0;
    snprintf(key, sizeof(key), "%s%s", SA_PAUSE_PREFIX, t->series_id);
    return cancel_contains(c->cancels, key);
}

static int
series_stopped(struct consumer *c, const struct sa_task *t)
{
    int64_t at = 0;
    struct sa_err why = {0};

    if (cancel_contains(c->cancels, t->series_id))
        return 1;
    switch (sa_cancelrec_get(c->n->js, c->n->cancel, t->series_id, &at, &why)) {
    case SA_OK:
        return 1;
    case SA_EINVAL: /* what junk pushed out may have been the cancel: never go on over it */
        sa_log(SA_LOG_WARN, "series_cancel_in_doubt", "series=%s error=\"%s\"", t->series_id,
               why.msg);
        return 1;
    default:
        return 0;
    }
}

enum sa_code
series_next_task(const struct sa_task *t, struct sa_task **out, struct sa_err *err)
{
    struct sa_cron *cron = NULL;
    int64_t occ = sa_layout_occurrence_ms(t->id), next = 0, shift = 0, not_after = 0;
    int flags = 0;
    enum sa_code rc;

    *out = NULL;
    if (!occ)
        occ = t->due_ms;
    if (t->count && t->index >= t->count)
        return SA_OK;
    /* sa_task_validate refuses these; checked again here, before anything is added to them */
    if (t->index < 1 || t->index == INT32_MAX)
        return sa_fail(err, SA_EINVAL, "occurrence index %d is out of range", t->index);
    rc = sa_cron_parse(&cron, t->cron, err);
    if (rc == SA_OK)
        rc = sa_cron_next(cron, t->tz, occ, &next, &flags, err);
    sa_cron_free(cron);
    if (rc == SA_ENOTFOUND || (rc == SA_OK && t->until_ms && next > t->until_ms))
        return SA_OK;
    if (rc == SA_OK &&
        (__builtin_sub_overflow(next, occ, &shift) ||
         (t->not_after_ms && __builtin_add_overflow(t->not_after_ms, shift, &not_after))))
        rc = sa_fail(err, SA_EINVAL, "not-after cannot move to the next occurrence");
    if (rc == SA_OK)
        rc = sa_task_copy(t, out, err);
    if (rc != SA_OK)
        return rc;
    (*out)->due_ms = next;
    (*out)->index = t->index + 1;
    (*out)->attempt = 1;
    (*out)->not_after_ms = not_after;
    sa_task_clear_attempts(*out);
    sa_layout_occurrence_id((*out)->id, sizeof((*out)->id), t->series_id, next);
    return SA_OK;
}

enum sa_code
series_continue(struct consumer *c, struct held *h, struct sa_err *err)
{
    struct sa_task *next = NULL;
    struct relay_meta m = {.scheduled_ms = sa_now_ms()};
    char subject[SA_SUBJECT_MAX];
    uint8_t *env = NULL;
    size_t len = 0;
    enum sa_code rc;

    if (!h->task->cron || series_stopped(c, h->task))
        return SA_OK;
    rc = series_next_task(h->task, &next, err);
    if (rc != SA_OK || !next)
        return rc;
    rc = sa_task_seal(c->ring, next, &env, &len, err);
    relay_subject(c, subject, sizeof(subject), next->due_ms, next->id);
    if (rc == SA_OK)
        rc = relay_publish(c, subject, env, (int)len, next->id, &m, err);
    if (rc == SA_OK)
        sa_log(SA_LOG_INFO, "next_occurrence", "series=%s task=%s index=%d", next->series_id,
               next->id, next->index);
    free(env);
    sa_task_free(next);
    return rc;
}
