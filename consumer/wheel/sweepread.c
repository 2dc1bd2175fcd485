/* The sweep's reader (sweepread.h). A round asks "the first message at or after from + i" for
 * i < ahead, all at once. Every message in [from, b] is the answer to one of them, b being the
 * answer to the last, so a round yields every stored message up to b, and the next round starts
 * after b: a gap of deleted sequences costs one round, not one request per sequence. A round
 * that finds as many messages as it asked for asks twice as many next time (up to AHEAD_MAX);
 * one that finds few, fewer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsapi.h"
#include "natsconn.h"
#include "sweepread.h"
#include "timeparse.h"

#define AHEAD_MIN 4
#define AHEAD_MAX 256
#define ANSWER_WAIT_MS 2000 /* no answer to a request for this long: the turn ends */

enum answer { NONE = 0, FOUND, END };

struct reply {
    enum answer a;
    uint64_t seq;
    char subject[SA_SUBJECT_MAX];
    natsMsg *msg; /* FOUND: the message as the server answered, till handed out */
};

struct sweepread {
    natsConnection *nc;
    char api[64]; /* the stream's direct get subject */
    char subjects[SA_SUBJECT_MAX];
    char inbox[128];
    natsSubscription *sub;
    uint64_t from;
    int64_t until; /* no round waits past this */
    uint32_t round;
    int ahead;
    struct reply got[AHEAD_MAX];
    int n, pos;       /* got[pos..n) are still to hand out */
    natsStatus after; /* what next says once they are out */
};

enum sa_code
sweepread_open(struct sweepread **out, const struct sa_nats *n, const char *stream,
               const char *subjects, uint64_t from, int64_t until, struct sa_err *err)
{
    struct sweepread *r = NULL;
    char all[160];
    enum sa_code rc;
    natsStatus s;

    *out = NULL;
    r = calloc(1, sizeof(*r));
    if (!r)
        return sa_fail(err, SA_ENOMEM, "no memory for the sweep's reader");
    r->nc = n->nc;
    r->from = from ? from : 1;
    r->until = until;
    r->ahead = AHEAD_MIN;
    r->after = NATS_OK;
    sa_jsapi_subject(r->api, sizeof(r->api), "DIRECT.GET.%s", stream);
    snprintf(r->subjects, sizeof(r->subjects), "%s", subjects);
    rc = sa_nats_new_inbox(n, r->inbox, sizeof(r->inbox), err);
    if (rc == SA_OK) {
        snprintf(all, sizeof(all), "%s.*.*", r->inbox);
        s = natsConnection_SubscribeSync(&r->sub, r->nc, all);
        if (s == NATS_OK) /* a round's answers wait here */
            s = natsSubscription_SetPendingLimits(r->sub, -1, -1);
        if (s != NATS_OK)
            rc = sa_nats_fail(err, s, 0, "subscribe to the sweep's inbox");
    }
    if (rc != SA_OK)
        sweepread_close(r);
    else
        *out = r;
    return rc;
}

static natsStatus
ask(struct sweepread *r, int i)
{
    char reply[160], body[SA_SUBJECT_MAX + 64];

    snprintf(reply, sizeof(reply), "%s.%" PRIu32 ".%d", r->inbox, r->round, i);
    snprintf(body, sizeof(body), "{\"seq\":%" PRIu64 ",\"next_by_subj\":\"%s\"}",
             r->from + (uint64_t)i, r->subjects);
    return natsConnection_PublishRequestString(r->nc, r->api, reply, body);
}

/* Which request of this round msg answers: -1 for an answer to an earlier round. */
static int
index_of(const struct sweepread *r, natsMsg *msg)
{
    const char *tail = natsMsg_GetSubject(msg) + strlen(r->inbox);
    unsigned round = 0;
    int i = -1;

    if (sscanf(tail, ".%u.%d", &round, &i) != 2 || round != r->round || i < 0 || i >= r->ahead)
        return -1;
    return i;
}

/* The last value of header name: the server adds its own after the headers the publisher
 * stored, so a stored "Nats-Sequence" cannot pass for the server's. NULL if there is none. */
static const char *
last_value(natsMsg *msg, const char *name)
{
    const char **values = NULL, *v = NULL;
    int n = 0;

    if (natsMsgHeader_Values(msg, name, &values, &n) == NATS_OK && n > 0)
        v = values[n - 1];
    free((void *)values);
    return v;
}

/* Reads the answer to the request for "at or after at" into g: FOUND with the message's seq,
 * subject and the message itself (g's now), or END (404: nothing at or after it; an answer without
 * the server's headers, or with a sequence before at, is taken as the same: looked at again next
 * turn). */
static void
take(struct reply *g, natsMsg *msg, uint64_t at)
{
    const char *seq = last_value(msg, "Nats-Sequence"), *subject = last_value(msg, "Nats-Subject");
    size_t len;

    g->a = END;
    if (!seq || !subject || (g->seq = strtoull(seq, NULL, 10)) < at)
        return;
    g->a = FOUND;
    g->msg = msg;
    len = strlen(subject);
    snprintf(g->subject, sizeof(g->subject), "%s", subject);
    if (len >= sizeof(g->subject))
        g->subject[sizeof(g->subject) - 2] = '?'; /* cut: no layout subject is this long */
}

/* Sends a round and waits for its answers; the first request without one (ahead if none). */
static int
collect(struct sweepread *r)
{
    int64_t until = sa_now_ms() + ANSWER_WAIT_MS, left;
    int answered = 0, sent = 0, first_missing = 0;

    if (until > r->until)
        until = r->until;
    r->round++;
    for (int i = 0; i < r->ahead; i++) {
        r->got[i].a = NONE;
        r->got[i].msg = NULL; /* each handed out or dropped by the round before */
    }
    while (sent < r->ahead && ask(r, sent) == NATS_OK)
        sent++;
    while (answered < sent && (left = until - sa_now_ms()) > 0) {
        natsMsg *msg = NULL;
        int i;

        if (natsSubscription_NextMsg(&msg, r->sub, left) != NATS_OK)
            break;
        i = index_of(r, msg);
        if (i >= 0 && r->got[i].a == NONE) {
            take(&r->got[i], msg, r->from + (uint64_t)i);
            answered++;
        }
        if (i < 0 || r->got[i].msg != msg)
            natsMsg_Destroy(msg);
    }
    while (first_missing < r->ahead && r->got[first_missing].a != NONE)
        first_missing++;
    return first_missing;
}

/* One round: got[0..n) the distinct messages found, in order (the requests answered before
 * the first one not answered are complete up to the last's answer), and after what next says
 * then. */
static void
round_trip(struct sweepread *r)
{
    int upto = collect(r);

    int i = 0;

    r->n = r->pos = 0;
    for (; i < upto && r->got[i].a == FOUND; i++) {
        if (r->n && r->got[r->n - 1].seq >= r->got[i].seq) {
            natsMsg_Destroy(r->got[i].msg); /* the same message again, or a replica behind */
            continue;
        }
        if (r->n != i)
            r->got[r->n] = r->got[i];
        r->n++;
    }
    for (; i < r->ahead; i++) /* past what a round may hand out: looked at again after it */
        if (r->got[i].a == FOUND)
            natsMsg_Destroy(r->got[i].msg);
    if (upto < r->ahead)
        r->after = NATS_TIMEOUT;
    else if (r->got[r->ahead - 1].a == END || r->n == 0)
        r->after = NATS_NOT_FOUND; /* nothing after what was found: the end, for now */
    if (r->n)
        r->from = r->got[r->n - 1].seq + 1;
    r->ahead = r->n >= r->ahead ? r->ahead * 2 : r->n * 2;
    r->ahead = r->ahead < AHEAD_MIN ? AHEAD_MIN : r->ahead > AHEAD_MAX ? AHEAD_MAX : r->ahead;
}

natsStatus
sweepread_next(struct sweepread *r, uint64_t *seq, char *subject, size_t cap, natsMsg **msg)
{
    *msg = NULL;
    if (r->pos == r->n && r->after == NATS_OK)
        round_trip(r);
    if (r->pos == r->n)
        return r->after;
    *seq = r->got[r->pos].seq;
    snprintf(subject, cap, "%s", r->got[r->pos].subject);
    *msg = r->got[r->pos].msg;
    r->got[r->pos].msg = NULL;
    r->pos++;
    return NATS_OK;
}

void
sweepread_close(struct sweepread *r)
{
    if (!r)
        return;
    for (int i = r->pos; i < r->n; i++)
        natsMsg_Destroy(r->got[i].msg);
    sa_nats_unsubscribe(r->nc, r->sub); /* answers may still come: see natsconn.h */
    natsSubscription_Destroy(r->sub);
    free(r);
}
