/* Replaying dead letters into the task streams, and purging them: the dead-letter stream's
 * writes (its reads are read/dlq.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "claim.h"
#include "dlq.h"
#include "dlq_write.h"
#include "find.h"
#include "publish.h"
#include "task.h"
#include "timeparse.h"

static void
reset_claim(struct sa_nats *n, const char *id)
{
    struct sa_claim c = {0},
                    mine = {.state = SA_CLAIM_RETRYING, .attempt = 0, .at_ms = sa_now_ms()};

    snprintf(mine.consumer, sizeof(mine.consumer), "%s", SA_CLAIM_BY_DLQ_REPLAY);
    snprintf(mine.error, sizeof(mine.error), "replayed from the dead-letter stream");
    /* read again if another write came between (the consumer's "dead" can follow its letter) */
    for (int tries = 0; tries < 5; tries++)
        if (sa_claim_get(sa_nats_claims(n, id), id, &c, NULL) != SA_OK ||
            sa_claim_update(sa_nats_claims(n, id), id, &mine, c.revision, NULL, NULL) == SA_OK)
            return;
}

/* Publishes a fresh copy of one dead letter, then deletes the dead letter. */
static enum sa_code
replay_one(struct sa_nats *n, const struct sa_keyring *ring, natsMsg *m, int64_t at_ms,
           struct sa_err *err)
{
    const char *id = natsMsg_GetSubject(m) + strlen(DLQ_PREFIX);
    struct sa_task *t = NULL;
    char msgid[SA_SUBJECT_MAX];
    int64_t now = sa_now_ms();
    enum sa_code rc = sa_task_open(ring, id, (const uint8_t *)natsMsg_GetData(m),
                                   (size_t)natsMsg_GetDataLength(m), &t, err);

    if (rc != SA_OK)
        return rc;
    t->attempt = 1;
    t->due_ms = at_ms > now ? at_ms : now; /* fresh: consumers refuse what the ledger forgot */
    if (t->not_after_ms && t->not_after_ms < t->due_ms)
        t->not_after_ms = 0; /* a replay is a deliberate new try: the old deadline is over */
    sa_layout_replay_msgid(msgid, sizeof(msgid), id, natsMsg_GetSequence(m));
    reset_claim(n, id);
    rc = publish_task(n, ring, t, msgid, err);
    sa_task_free(t);
    if (rc != SA_OK)
        return rc;
    js_DeleteMsg(n->js, SA_DLQ_STREAM, natsMsg_GetSequence(m), NULL, NULL);
    return SA_OK;
}

/* Replays one dead letter and names it on report; on a failure names it on stderr (report
 * given) and returns 1. */
static int
replay_failed(struct sa_nats *n, const struct sa_keyring *ring, natsMsg *m, int64_t at_ms,
              FILE *report, struct sa_err *err)
{
    const char *id = natsMsg_GetSubject(m) + strlen(DLQ_PREFIX);

    if (replay_one(n, ring, m, at_ms, err) == SA_OK) {
        if (report)
            fprintf(report, "replayed %s\n", id);
        return 0;
    }
    if (report)
        fprintf(stderr, "sendat: dlq replay %s: %s\n", id, err->msg);
    return 1;
}

enum sa_code
dlq_replay(struct sa_nats *n, const struct sa_keyring *ring, const char *id, int64_t at_ms,
           FILE *report, struct sa_err *err)
{
    struct sa_err one = {0};
    char filter[SA_SUBJECT_MAX];
    natsMsg *m = NULL;
    uint64_t seq = 0, last = UINT64_MAX;
    int failed = 0;
    jsStreamInfo *si = NULL;

    if (js_GetStreamInfo(&si, n->js, SA_DLQ_STREAM, NULL, NULL) == NATS_OK)
        last = si->State.LastSeq; /* what dies again while we replay waits for the next run */
    jsStreamInfo_Destroy(si);
    snprintf(filter, sizeof(filter), DLQ_PREFIX "%s", id ? id : ">");
    for (int i = 0; i < 1000000 && dlq_next(n, seq, filter, &m) == NATS_OK; i++) {
        seq = natsMsg_GetSequence(m);
        if (seq > last) {
            natsMsg_Destroy(m);
            break;
        }
        failed += replay_failed(n, ring, m, at_ms, report, &one);
        natsMsg_Destroy(m);
        m = NULL;
        if (id)
            break; /* the newest dead letter of an id is what find_dead shows; one replay */
    }
    if (seq == 0 && id)
        return sa_fail(err, SA_ENOTFOUND, "no dead letter %s", id);
    if (failed && id)
        return sa_fail(err, SA_ENATS, "dlq replay %s: %s", id, one.msg);
    if (failed)
        return sa_fail(err, SA_ENATS, "dlq replay: %d dead letter%s not replayed", failed,
                       failed == 1 ? " was" : "s were");
    return SA_OK;
}

enum sa_code
dlq_purge(struct sa_nats *n, const char *id, struct sa_err *err)
{
    jsOptions o;
    char subject[SA_SUBJECT_MAX];
    jsErrCode jerr = 0;
    natsStatus s;

    if (id) { /* an unknown id is SA_ENOTFOUND, not a purge of nothing */
        natsMsg *m = NULL;
        enum sa_code rc = find_dead(n, id, &m, err);
        natsMsg_Destroy(m);
        if (rc != SA_OK)
            return rc;
    }
    jsOptions_Init(&o);
    snprintf(subject, sizeof(subject), DLQ_PREFIX "%s", id ? id : ">");
    o.Stream.Purge.Subject = subject;
    s = js_PurgeStream(n->js, SA_DLQ_STREAM, &o, &jerr);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, jerr, "dlq purge");
    return SA_OK;
}
