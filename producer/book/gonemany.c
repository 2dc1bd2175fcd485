/* dupcheck_gone for the lines of a batch that name their own id (see dupcheck.h): a fresh id
 * has neither a claim nor a cancel record, and asking that of every line one round trip at a
 * time cost 6-15 s per 50,000 lines. Here both questions of up to CHUNK ids are asked at once
 * as direct gets by subject (`$JS.API.DIRECT.GET.<stream>.<key's subject>`, the form nats.c's
 * own KV get uses, under the producer role's permissions), and the answers gathered on one
 * inbox. Only an id for which either answer is not "404 no message" (a record, a marker, an
 * error, no answer in time) goes through dupcheck_gone itself, which reads it fully. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupcheck.h"
#include "timeparse.h"

#define CHUNK 256
#define ANSWER_WAIT_MS 5000

/* Whether a direct get's answer says the subject holds no message. */
static int
no_message(natsMsg *m)
{
    const char *status = NULL;

    return natsMsgHeader_Get(m, "Status", &status) == NATS_OK && status &&
           strcmp(status, "404") == 0;
}

/* Asks both questions of ask i: its claim (reply <inbox>.<i>.0) and its cancel record (.1). */
static natsStatus
ask(struct sa_nats *n, const char *inbox, size_t i, const char *id)
{
    char bucket[48], subj[SA_ID_MAX + 128], reply[128];
    natsStatus s;

    sa_layout_claims_bucket(bucket, sizeof(bucket), sa_layout_shard_of(&n->layout, id));
    snprintf(subj, sizeof(subj), "$JS.API.DIRECT.GET.KV_%s.$KV.%s.%s", bucket, bucket, id);
    snprintf(reply, sizeof(reply), "%s.%zu.0", inbox, i);
    s = natsConnection_PublishRequest(n->nc, subj, reply, NULL, 0);
    if (s != NATS_OK)
        return s;
    snprintf(subj, sizeof(subj), "$JS.API.DIRECT.GET.KV_%s.$KV.%s.%s", SA_CANCEL_BUCKET,
             SA_CANCEL_BUCKET, id);
    snprintf(reply, sizeof(reply), "%s.%zu.1", inbox, i);
    return natsConnection_PublishRequest(n->nc, subj, reply, NULL, 0);
}

/* Gathers the answers to asks [0, count): free[i] counts the "no message" answers (2: free). */
static void
gather(natsSubscription *sub, const char *inbox, size_t count, unsigned char *free_of)
{
    size_t prefix = strlen(inbox), got = 0;
    int64_t until = sa_now_ms() + ANSWER_WAIT_MS;
    natsMsg *m = NULL;

    while (got < 2 * count && sa_now_ms() < until &&
           natsSubscription_NextMsg(&m, sub, until - sa_now_ms()) == NATS_OK) {
        const char *subj = natsMsg_GetSubject(m);
        char *end = NULL;
        unsigned long i = strlen(subj) > prefix + 1 ? strtoul(subj + prefix + 1, &end, 10) : count;

        if (i < count && end && *end == '.' && no_message(m))
            free_of[i]++;
        got++;
        natsMsg_Destroy(m);
        m = NULL;
    }
}

/* One chunk of at most CHUNK asks. */
static enum sa_code
chunk(struct sa_nats *n, const char *inbox, natsSubscription *sub, struct gone_ask *asks,
      size_t count, struct sa_err *err)
{
    unsigned char free_of[CHUNK] = {0};

    for (size_t i = 0; i < count; i++) {
        natsStatus s = ask(n, inbox, i, asks[i].id);
        if (s != NATS_OK)
            return sa_nats_fail(err, s, 0, "ask whether the batch's ids are free");
    }
    gather(sub, inbox, count, free_of);
    for (size_t i = 0; i < count; i++) {
        asks[i].rc = SA_OK;
        memset(&asks[i].gone, 0, sizeof(asks[i].gone));
        sa_err_clear(&asks[i].err);
        if (free_of[i] < 2) /* a record, or no clear answer: read it fully */
            asks[i].rc =
                dupcheck_gone(n, asks[i].id, asks[i].booked_ms, &asks[i].gone, &asks[i].err);
    }
    return SA_OK;
}

enum sa_code
dupcheck_gone_many(struct sa_nats *n, struct gone_ask *asks, size_t count, struct sa_err *err)
{
    char inbox[96], wild[112];
    natsSubscription *sub = NULL;
    enum sa_code rc;
    natsStatus s;

    if (count == 0)
        return SA_OK;
    if ((rc = sa_nats_new_inbox(n, inbox, sizeof(inbox), err)) != SA_OK)
        return rc;
    snprintf(wild, sizeof(wild), "%s.>", inbox);
    if ((s = natsConnection_SubscribeSync(&sub, n->nc, wild)) != NATS_OK)
        return sa_nats_fail(err, s, 0, "subscribe for the batch's id checks");
    for (size_t at = 0; rc == SA_OK && at < count; at += CHUNK)
        rc = chunk(n, inbox, sub, asks + at, count - at < CHUNK ? count - at : CHUNK, err);
    natsSubscription_Destroy(sub);
    return rc;
}
