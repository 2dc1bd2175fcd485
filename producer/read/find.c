/* Direct gets by subject: exact subjects first (cheap on any stream size), the id wildcard
 * last (for ids that carry no due time, or a task that was scheduled past due). */
#include <stdio.h>
#include <stdlib.h>

#include "find.h"

static natsStatus
last_by_subject(natsMsg **msg, struct sa_nats *n, const char *stream, const char *subject)
{
    jsDirectGetMsgOptions o;

    jsDirectGetMsgOptions_Init(&o);
    o.LastBySubject = subject;
    return js_DirectGetMsg(msg, n->js, stream, NULL, &o);
}

static enum sa_code
first_found(struct sa_nats *n, const char *stream, char (*subjects)[SA_SUBJECT_MAX], int count,
            natsMsg **msg, struct sa_err *err)
{
    natsStatus s = NATS_NOT_FOUND;

    for (int i = 0; i < count; i++) {
        s = last_by_subject(msg, n, stream, subjects[i]);
        if (s != NATS_NOT_FOUND)
            break;
    }
    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "no task waits under that id");
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "look up task");
}

enum sa_code
find_task(struct sa_nats *n, const char *id, natsMsg **msg, struct sa_err *err)
{
    char subjects[3][SA_SUBJECT_MAX], stream[32];
    int64_t due = sa_layout_id_due(id);
    int count = 0, shard = sa_layout_shard_of(&n->layout, id);

    *msg = NULL;
    if (due > 0) {
        int64_t w = sa_layout_window(&n->layout, due);
        /* the slot first: a task booked ahead waits there from the start, one booked shortly
         * before it is due waits in its window only until the window is pulled */
        sa_layout_slot_subject(subjects[count++], SA_SUBJECT_MAX, shard, w,
                               sa_layout_slot(&n->layout, due), id);
        sa_layout_window_subject(subjects[count++], SA_SUBJECT_MAX, shard, w, id);
    }
    sa_layout_id_filter(subjects[count++], SA_SUBJECT_MAX, shard, id);
    sa_layout_stream(stream, sizeof(stream), shard);
    return first_found(n, stream, subjects, count, msg, err);
}

enum sa_code
find_dead(struct sa_nats *n, const char *id, natsMsg **msg, struct sa_err *err)
{
    char subject[1][SA_SUBJECT_MAX];

    *msg = NULL;
    snprintf(subject[0], SA_SUBJECT_MAX, "sendat.dlq.%s", id);
    return first_found(n, SA_DLQ_STREAM, subject, 1, msg, err);
}

int64_t
find_header_i64(natsMsg *msg, const char *name)
{
    const char *v = NULL;

    if (natsMsgHeader_Get(msg, name, &v) != NATS_OK || !v)
        return 0;
    return strtoll(v, NULL, 10);
}

enum sa_code
find_claims_ttl(struct sa_nats *n, const char *id, int64_t *ttl_ms, struct sa_err *err)
{
    kvStatus *st = NULL;
    natsStatus s = kvStore_Status(&st, sa_nats_claims(n, id));

    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read the claims bucket's TTL");
    *ttl_ms = kvStatus_TTL(st) / 1000000; /* the stream's MaxAge, in ns */
    kvStatus_Destroy(st);
    return SA_OK;
}
