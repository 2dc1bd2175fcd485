/* Pipelined last-message reads (see claimscan.h): each key is asked for with a direct get "last
 * by subject" (the API's DIRECT.GET.KV_<bucket>.$KV.<bucket>.<id>), its reply subject carrying the
 * id's index, at most IN_FLIGHT at a time. For claim states a reply without data (no message, or
 * a delete marker) means no claim. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimscan.h"
#include "jsapi.h"
#include "natsconn.h"
#include "random.h"
#include "timeparse.h"

#define IN_FLIGHT 512
#define WAIT_MS 10000 /* the longest wait for the next answer */

static enum sa_code
ask(struct sa_nats *n, const char *bucket, const char *inbox, size_t i, const char *id,
    struct sa_err *err)
{
    char own[64], subject[SA_SUBJECT_MAX + 128], reply[160];
    natsStatus s;

    if (!bucket) {
        sa_layout_claims_bucket(own, sizeof(own), sa_layout_shard_of(&n->layout, id));
        bucket = own;
    }
    sa_jsapi_subject(subject, sizeof(subject), "DIRECT.GET.KV_%s.$KV.%s.%s", bucket, bucket, id);
    snprintf(reply, sizeof(reply), "%s.%zu", inbox, i);
    s = natsConnection_PublishRequest(n->nc, subject, reply, NULL, 0);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, 0, "ask for a record");
}

/* The index a reply names (its subject's last token), or count if none. */
static size_t
reply_index(natsMsg *m, size_t count)
{
    const char *dot = strrchr(natsMsg_GetSubject(m), '.');
    char *end = NULL;
    unsigned long long i;

    if (!dot)
        return count;
    i = strtoull(dot + 1, &end, 10);
    return (end == dot + 1 || *end || i >= count) ? count : (size_t)i;
}

/* Hands a reply to fn; returns 1 if it answered an id not answered before. */
static int
note(natsMsg *m, size_t count, char *seen, claimscan_fn *fn, void *arg)
{
    size_t i = reply_index(m, count);

    if (i == count || seen[i])
        return 0;
    seen[i] = 1;
    fn(arg, i, m);
    return 1;
}

enum sa_code
claimscan_last(struct sa_nats *n, const char *bucket, const char *const *ids, size_t count,
               claimscan_fn *fn, void *arg, struct sa_err *err)
{
    char inbox[128], filter[140];
    natsSubscription *sub = NULL;
    natsMsg *m = NULL;
    char *seen = NULL;
    size_t sent = 0, got = 0;
    int64_t deadline = sa_now_ms() + WAIT_MS, left;
    uint64_t nonce = 0;
    enum sa_code rc = SA_OK;
    natsStatus s = NATS_OK;

    if (count == 0)
        return SA_OK;
    seen = calloc(count, 1);
    if (!seen)
        return sa_fail(err, SA_ENOMEM, "no memory to read %zu records", count);
    sa_random_buf(&nonce, sizeof(nonce)); /* many scans may run at once (sendat serve) */
    snprintf(inbox, sizeof(inbox), "%s.scan%016llx", n->inbox_prefix, (unsigned long long)nonce);
    snprintf(filter, sizeof(filter), "%s.*", inbox);
    if ((s = natsConnection_SubscribeSync(&sub, n->nc, filter)) != NATS_OK) {
        free(seen);
        return sa_nats_fail(err, s, 0, "subscribe for records");
    }
    natsSubscription_SetPendingLimits(sub, -1, -1);
    while (rc == SA_OK && got < count) {
        while (rc == SA_OK && sent < count && sent - got < IN_FLIGHT) {
            rc = ask(n, bucket, inbox, sent, ids[sent], err);
            sent++;
        }
        if (rc != SA_OK)
            break;
        left = deadline - sa_now_ms();
        if (left <= 0 || (s = natsSubscription_NextMsg(&m, sub, left)) != NATS_OK) {
            rc = left <= 0 || s == NATS_TIMEOUT
                     ? sa_fail(err, SA_ERETRY, "%zu of %zu records unanswered for %d s",
                               count - got, count, WAIT_MS / 1000)
                     : sa_nats_fail(err, s, 0, "read records");
            break;
        }
        got += (size_t)note(m, count, seen, fn, arg);
        deadline = sa_now_ms() + WAIT_MS; /* a long scan is slow, not stuck, while answers come */
        natsMsg_Destroy(m);
        m = NULL;
    }
    sa_nats_unsubscribe(n->nc, sub); /* records may still come: see natsconn.h */
    natsSubscription_Destroy(sub);
    free(seen);
    return rc;
}

static void
note_state(void *arg, size_t i, natsMsg *m)
{
    enum sa_claim_state *states = arg;
    struct sa_claim c = {0};
    int len = natsMsg_GetDataLength(m);
    const char *subject = NULL, *key = NULL, *stamp = NULL;
    int64_t stored_ms = 0;
    enum sa_code rc;

    /* the reply comes on our inbox; the record's own subject, "$KV.<bucket>.<key>", whose key
     * its MAC binds, is in the direct get's header */
    if (natsMsgHeader_Get(m, "Nats-Subject", &subject) == NATS_OK && subject &&
        !strncmp(subject, "$KV.", 4))
        key = strchr(subject + 4, '.');
    states[i] = SA_CLAIM_NONE;
    if (len <= 0 || !key)
        return;
    if (natsMsgHeader_Get(m, "Nats-Time-Stamp", &stamp) != NATS_OK || !stamp ||
        sa_time_parse(stamp, 0, &stored_ms, NULL) != SA_OK)
        stored_ms = 0; /* unknown: a record without a MAC is junk */
    rc = sa_claim_read(&c, key + 1, natsMsg_GetData(m), (size_t)len, stored_ms, NULL);
    if (rc == SA_OK || rc == SA_ECRYPTO) /* junk counts as junk */
        states[i] = c.state;
}

enum sa_code
claimscan_states(struct sa_nats *n, const char *const *ids, size_t count,
                 enum sa_claim_state *states, struct sa_err *err)
{
    for (size_t i = 0; i < count; i++)
        states[i] = SA_CLAIM_NONE;
    return claimscan_last(n, NULL, ids, count, note_state, states, err);
}
