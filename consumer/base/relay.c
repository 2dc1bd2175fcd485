/* Every consumer-side publish into the task stream goes through here, so each carries a
 * deterministic Nats-Msg-Id and is acked by JetStream before its original is acked
 * (invariants 1 and 2). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "relay.h"
#include "timeparse.h"

void
relay_subject(const struct consumer *c, char *out, size_t cap, int64_t due_ms, const char *id)
{
    const struct sa_layout *l = &c->n->layout;
    int64_t w = sa_layout_window(l, due_ms);

    sa_layout_slot_subject(out, cap, sa_layout_shard_of(l, id), w, sa_layout_slot(l, due_ms), id);
}

/* A header's decimal value in 0..max, else 0 (as if it were absent). These headers are not
 * sealed: anyone who can publish a captured task can set them, so they are hints, bounded
 * before any arithmetic on them. */
static int64_t
header_i64(natsMsg *msg, const char *name, int64_t max)
{
    const char *v = NULL;
    char *end = NULL;
    long long n;

    if (natsMsgHeader_Get(msg, name, &v) != NATS_OK || !v)
        return 0;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < 0 || n > max)
        return 0;
    return n;
}

uint64_t
relay_seq(natsMsg *msg)
{
    jsMsgMetaData *meta = NULL;
    uint64_t seq = 0;

    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK)
        seq = meta->Sequence.Stream;
    else
        seq = natsMsg_GetSequence(msg); /* read by direct get (the sweep): it carries its own */
    jsMsgMetaData_Destroy(meta);
    return seq;
}

void
relay_meta_read(natsMsg *msg, struct relay_meta *m)
{
    m->scheduled_ms = header_i64(msg, "Sendat-Scheduled", SA_TIME_MAX_MS);
    m->moves = (int)header_i64(msg, "Sendat-Moves", RELAY_MOVES_MAX);
    m->moved_ms = header_i64(msg, "Sendat-Moved", SA_TIME_MAX_MS);
}

static natsStatus
set_meta(natsMsg *msg, const struct relay_meta *m)
{
    char buf[24];
    natsStatus s;

    snprintf(buf, sizeof(buf), "%" PRId64, m->scheduled_ms);
    s = natsMsgHeader_Set(msg, "Sendat-Scheduled", buf);
    if (s == NATS_OK && m->moves > 0) {
        snprintf(buf, sizeof(buf), "%d", m->moves);
        s = natsMsgHeader_Set(msg, "Sendat-Moves", buf);
        snprintf(buf, sizeof(buf), "%" PRId64, m->moved_ms);
        if (s == NATS_OK)
            s = natsMsgHeader_Set(msg, "Sendat-Moved", buf);
    }
    return s;
}

enum sa_code
relay_build(struct consumer *c, natsMsg **out, const char *subject, const void *data, int len,
            const struct relay_meta *m, struct sa_err *err)
{
    char what[SA_SUBJECT_MAX + 16];
    int made = 0;
    enum sa_code rc =
        sa_marks_before_publish(c->n->marks, &c->n->layout, subject, sa_now_ms(), &made, err);
    natsStatus s;

    *out = NULL;
    if (rc != SA_OK)
        return rc;
    if (made) { /* the slot may be taken up empty already: its durable is wanted now */
        pthread_mutex_lock(&c->makers_lock);
        c->makers_made++;
        pthread_cond_broadcast(&c->makers_wake);
        pthread_mutex_unlock(&c->makers_lock);
    }
    s = natsMsg_Create(out, subject, NULL, data, len);
    if (s == NATS_OK)
        s = set_meta(*out, m);
    if (s == NATS_OK)
        return SA_OK;
    natsMsg_Destroy(*out);
    *out = NULL;
    snprintf(what, sizeof(what), "message for %s", subject);
    return sa_nats_fail(err, s, 0, what);
}

enum sa_code
relay_publish(struct consumer *c, const char *subject, const void *data, int len, const char *msgid,
              const struct relay_meta *m, struct sa_err *err)
{
    natsMsg *msg = NULL;
    jsPubOptions po;
    jsPubAck *pa = NULL;
    jsErrCode jerr = 0;
    natsStatus s;
    char what[SA_SUBJECT_MAX + 16];
    enum sa_code rc = relay_build(c, &msg, subject, data, len, m, err);

    if (rc != SA_OK)
        return rc;
    jsPubOptions_Init(&po);
    po.MsgId = msgid;
    s = js_PublishMsg(&pa, c->n->js, msg, &po, &jerr);
    jsPubAck_Destroy(pa);
    natsMsg_Destroy(msg);
    if (s == NATS_OK)
        return SA_OK;
    snprintf(what, sizeof(what), "publish to %s", subject);
    return sa_nats_fail(err, s, jerr, what);
}
