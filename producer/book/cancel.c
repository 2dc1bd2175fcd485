/* The cancel race (see cancel.h). A claim left "retrying" or "dead" between attempts is taken
 * over on its revision; a claim "sending" is waited for, up to SENDING_WAIT_MS. On a server
 * with per-message TTL (2.11+) a task's cancel record expires when its claim can (the claims
 * TTL past its due time); series records are written elsewhere (series_status.c), for good. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cancel.h"
#include "claim.h"
#include "claimmac.h"
#include "dupcheck.h"
#include "find.h"
#include "series_stop.h"
#include "timeparse.h"

#define SENDING_WAIT_MS 30000 /* how long to wait for a send in progress to finish */
#define ROUNDS_MAX 2000

enum round { ROUND_DECIDED, ROUND_AGAIN };

/* The latest the copy of id waiting in msg can be due: the end of its slot, or of its
 * window (a task waits in its window only until the window is pulled); 0 if msg says none. */
static int64_t
due_bound(const struct sa_nats *n, natsMsg *msg)
{
    struct sa_place p;

    if (!msg || sa_layout_parse_subject(&p, natsMsg_GetSubject(msg), NULL) != SA_OK)
        return 0;
    return p.slot ? p.slot + n->layout.slot_ms : p.window + n->layout.window_ms;
}

/* The Nats-TTL of id's cancel record, in seconds: it lives as long as the task's claim can,
 * the claims TTL past the task's due time (or past now, when the claim written now outlives
 * that). 0: none (the server has no per-message TTL, claims kept for ever, due time unknown).
 * msg is the task's copy if the caller has it; else one is looked up. */
static int64_t
record_ttl_s(struct sa_nats *n, const char *id, natsMsg *msg)
{
    natsMsg *found = NULL;
    int64_t ttl = 0, due, now = sa_now_ms();

    if (!(n->feat.have & SA_JSFEAT_MSG_TTL) || find_claims_ttl(n, id, &ttl, NULL) != SA_OK ||
        ttl <= 0)
        return 0;
    if (!msg && find_task(n, id, &found, NULL) == SA_OK)
        msg = found;
    due = due_bound(n, msg);
    natsMsg_Destroy(found);
    if (!due)
        due = sa_layout_id_due(id);
    if (!due)
        return 0;
    return ((due > now ? due - now : 0) + ttl + 999) / 1000;
}

/* The cancel record of a task: with a Nats-TTL when it has one (record_ttl_s). A bucket whose
 * stream does not allow per-message TTLs yet (`sendat init` not run again since the server's
 * upgrade) refuses the header: then the record is written without it, for good as before. */
static void
put_record(struct sa_nats *n, const char *id, natsMsg *task)
{
    char now[40], value[40 + SA_CLAIMMAC_MAX + 2], subject[SA_SUBJECT_MAX], ttl[24];
    int64_t ttl_s = record_ttl_s(n, id, task);
    natsMsg *msg = NULL;
    jsPubAck *pa = NULL;
    natsStatus s = NATS_ERR;
    uint64_t rev;

    sa_time_format(now, sizeof(now), sa_now_ms());
    if (sa_cancelrec_make(value, sizeof(value), id, now) < 0)
        return; /* no key (cli_claim_keys loads it first): the claim alone decides */
    if (ttl_s > 0) {
        snprintf(subject, sizeof(subject), "$KV.%s.%s", SA_CANCEL_BUCKET, id);
        snprintf(ttl, sizeof(ttl), "%" PRId64, ttl_s);
        s = natsMsg_Create(&msg, subject, NULL, value, (int)strlen(value));
        if (s == NATS_OK)
            s = natsMsgHeader_Set(msg, "Nats-TTL", ttl);
        if (s == NATS_OK)
            s = js_PublishMsg(&pa, n->js, msg, NULL, NULL);
        jsPubAck_Destroy(pa);
        natsMsg_Destroy(msg);
    }
    if (s != NATS_OK)
        kvStore_PutString(&rev, n->cancel, id, value);
}

/* The claim decided; the cancel map lets every consumer drop a held copy at once. task: the
 * task's copy waiting in the stream, if the caller has it. */
static enum round
decided(struct sa_nats *n, const char *id, natsMsg *task, struct cancel_result *out)
{
    put_record(n, id, task);
    out->outcome = CANCEL_DONE;
    out->at_ms = sa_now_ms();
    return ROUND_DECIDED;
}

static enum round
too_late(const struct sa_claim *c, struct cancel_result *out)
{
    out->outcome = c->state == SA_CLAIM_SENT ? CANCEL_SENT : CANCEL_SENDING;
    out->at_ms = c->at_ms;
    snprintf(out->by, sizeof(out->by), "%s", c->consumer);
    return ROUND_DECIDED;
}

static void
sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* No claim yet: the task must exist (else it may be a series), then cancel creates the claim
 * (or, over a DEL or PURGE marker with nothing under it, updates the marker's revision). */
static enum sa_code
unclaimed(struct sa_nats *n, const char *id, const struct sa_claim *mine, uint64_t marker,
          struct cancel_result *out, enum round *r, struct sa_err *err)
{
    natsMsg *msg = NULL;
    enum sa_code rc = find_task(n, id, &msg, err);

    *r = ROUND_DECIDED;
    if (rc == SA_ENOTFOUND) {
        sa_err_clear(err);
        return series_cancel(n, id, out, err);
    }
    if (rc == SA_OK) {
        /* the copy goes when a consumer meets it: the claim keeps its booking for status */
        struct sa_claim rec = *mine;
        rec.scheduled_ms = find_header_i64(msg, "Sendat-Scheduled");
        if (!rec.scheduled_ms && !find_header_i64(msg, "Sendat-Moves"))
            rec.scheduled_ms = natsMsg_GetTime(msg) / 1000000; /* stored when it was booked */
        rec.due_ms = sa_layout_id_due(id);
        rc = marker ? sa_claim_update(sa_nats_claims(n, id), id, &rec, marker, NULL, err)
                    : sa_claim_create(sa_nats_claims(n, id), id, &rec, NULL, err);
    }
    if (rc == SA_EEXIST)
        *r = ROUND_AGAIN;
    else if (rc == SA_OK)
        *r = decided(n, id, msg, out);
    natsMsg_Destroy(msg);
    return rc == SA_EEXIST ? SA_OK : rc;
}

/* One round of the race; *r says whether to look again. */
static enum sa_code
one_round(struct sa_nats *n, const char *id, int64_t deadline, struct cancel_result *out,
          enum round *r, struct sa_err *err)
{
    struct sa_claim c = {0}, mine = {.state = SA_CLAIM_CANCELLED, .at_ms = sa_now_ms()};
    enum sa_code rc = sa_claim_get_under(n->js, sa_nats_claims(n, id), id, &c, err);

    snprintf(mine.consumer, sizeof(mine.consumer), "sendat cancel");
    *r = ROUND_DECIDED;
    if (rc == SA_ENOTFOUND) {
        sa_err_clear(err);
        return unclaimed(n, id, &mine, 0, out, r, err);
    }
    if (rc != SA_OK)
        return rc;
    if (c.state == SA_CLAIM_NONE) /* a marker with no record under it */
        return unclaimed(n, id, &mine, c.revision, out, r, err);
    switch (c.state) {
    case SA_CLAIM_SENT:
        *r = too_late(&c, out);
        return SA_OK;
    case SA_CLAIM_CANCELLED:
        *r = decided(n, id, NULL, out);
        return SA_OK;
    case SA_CLAIM_SENDING:
        if (sa_now_ms() > deadline) {
            *r = too_late(&c, out);
            return SA_OK;
        }
        sleep_ms(50);
        *r = ROUND_AGAIN;
        return SA_OK;
    default: /* retrying or dead: no send is under way, so cancel takes the claim over */
        rc = sa_claim_update(sa_nats_claims(n, id), id, &mine, c.revision, NULL, err);
        if (rc == SA_EEXIST) {
            *r = ROUND_AGAIN;
            return SA_OK;
        }
        if (rc == SA_OK)
            *r = decided(n, id, NULL, out);
        return rc;
    }
}

enum sa_code
cancel_run(struct sa_nats *n, const char *id, struct cancel_result *out, struct sa_err *err)
{
    int64_t deadline = sa_now_ms() + SENDING_WAIT_MS;
    enum round r = ROUND_AGAIN;
    enum sa_code rc = SA_OK;

    memset(out, 0, sizeof(*out));
    for (int round = 0; round < ROUNDS_MAX && r == ROUND_AGAIN && rc == SA_OK; round++)
        rc = one_round(n, id, deadline, out, &r, err);
    if (rc == SA_OK && r == ROUND_AGAIN)
        return sa_fail(err, SA_ERETRY, "cancel %s: the claim kept changing; try again", id);
    return rc;
}
