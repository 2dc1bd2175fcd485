/* Booking one task (see book.h). A generated id is new by construction and costs one publish;
 * an id the user gave costs a claim read first (and a cancel map read when it has no claim),
 * so an id whose task was sent, cancelled or dead-lettered is refused while it is remembered
 * instead of being published under it and dropped or skipped by the fleet. */
#include <stdio.h>
#include <string.h>

#include "batch.h"
#include "book.h"
#include "group.h"
#include "publish.h"
#include "series.h"
#include "tasklimit.h"
#include "timeparse.h"

enum sa_code
book_task(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t, int id_given,
          char id[SA_ID_MAX + 1], struct dupcheck_gone *gone, struct sa_err *err)
{
    /* a full task stream takes nothing new, checked before a series or group is recorded */
    enum sa_code rc = tasklimit_admit(n, sa_layout_shard_of(&n->layout, t->id), 0, err);

    if (rc == SA_OK && id_given && !t->cron)
        rc = dupcheck_gone(n, t->id, t->created_ms, gone, err);
    if (rc == SA_OK)
        rc = t->cron ? series_register(n, t, err) : group_record(n, t, err);

    if (rc == SA_OK)
        rc = publish_task(n, ring, t, NULL, err);
    if (rc == SA_OK || rc == SA_EEXIST)
        snprintf(id, SA_ID_MAX + 1, "%s", t->cron ? t->series_id : t->id);
    return rc;
}

enum sa_code
book_build_json(json_t *obj, struct sa_task **out, struct sa_err *err)
{
    struct book_req o = {0};
    struct sa_task *t = NULL;
    enum sa_code rc;

    *out = NULL;
    if (!json_is_object(obj))
        return sa_fail(err, SA_EINVAL, "a task must be a JSON object");
    o.key_names = 1; /* the API's words: "at", not "--at" */
    rc = batch_opts_from_json(&o, obj, err);
    if (rc == SA_OK)
        rc = book_check(&o, err);
    if (rc == SA_OK)
        rc = sa_task_new(&t, err);
    if (rc == SA_OK)
        rc = book_build_task(t, &o, (const uint8_t *)(o.data ? o.data : ""),
                             o.data ? strlen(o.data) : 0, sa_now_ms(), err);
    if (rc != SA_OK) {
        sa_task_free(t);
        return rc;
    }
    *out = t;
    return SA_OK;
}

enum sa_code
book_json(struct sa_nats *n, const struct sa_keyring *ring, json_t *obj, char id[SA_ID_MAX + 1],
          struct dupcheck_gone *gone, struct sa_err *err)
{
    struct sa_task *t = NULL;
    enum sa_code rc = book_build_json(obj, &t, err);

    if (rc == SA_OK)
        rc = book_task(n, ring, t, json_object_get(obj, "id") != NULL, id, gone, err);
    sa_task_free(t);
    return rc;
}
