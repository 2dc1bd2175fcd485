/* The recurrence half of a task: an occurrence carries its series' cron and zone, so the
 * consumer that finishes it can compute and publish the next one (invariant 4) without
 * reading anything else. */
#include <stdlib.h>
#include <string.h>

#include "cron.h"
#include "task.h"

enum sa_code
sa_task_check_recurrence(const struct sa_task *t, struct sa_err *err)
{
    struct sa_cron *c = NULL;
    enum sa_code rc = sa_cron_parse(&c, t->cron, err);

    sa_cron_free(c);
    if (rc == SA_OK)
        rc = sa_tz_check(t->tz, err);
    if (rc == SA_OK &&
        (!sa_layout_id_valid(t->series_id) || strlen(t->series_id) > SA_SERIES_ID_MAX))
        rc = sa_fail(err, SA_EINVAL, "series id \"%.60s\" must be 1-%d of A-Z a-z 0-9 _ -",
                     t->series_id, SA_SERIES_ID_MAX);
    if (rc == SA_OK && (t->count < 0 || t->index < 1 || t->index == INT32_MAX ||
                        (t->count && t->index > t->count)))
        rc = sa_fail(err, SA_EINVAL, "occurrence %d of %d is out of range", t->index, t->count);
    if (rc == SA_OK && t->not_after_ms) /* the producer never sets one (fuzz_task found why) */
        rc = sa_fail(err, SA_EINVAL, "not-after is for single tasks, not a series occurrence");
    return rc;
}

enum sa_code
sa_task_set_recurrence(struct sa_task *t, const char *cron, const char *tz, int64_t until_ms,
                       int count, struct sa_err *err)
{
    struct sa_cron *c = NULL;
    enum sa_code rc = sa_cron_parse(&c, cron, err);

    sa_cron_free(c);
    if (rc == SA_OK)
        rc = sa_tz_check(tz, err);
    if (rc != SA_OK)
        return rc;
    free(t->cron);
    free(t->tz);
    t->cron = strdup(cron);
    t->tz = strdup(tz);
    t->until_ms = until_ms;
    t->count = count;
    if (t->index < 1)
        t->index = 1;
    return t->cron && t->tz ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory for a recurrence");
}
