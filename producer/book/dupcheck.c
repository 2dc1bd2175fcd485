/* Reading back what a duplicate PubAck points at (see dupcheck.h). Envelopes carry random
 * nonces, so the two tasks are compared opened: each re-encoded without the fields that differ
 * between two runs of one booking, and the bytes compared (the encoding is deterministic). The
 * plaintext is wiped before it is freed: it holds recipients and bodies. And an id whose task
 * finished is refused while sendat remembers it (its final claim, or a cancel record that
 * applies): booking it would answer success for a task that is never sent. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "claim.h"
#include "cancelrec.h"
#include "dupcheck.h"
#include "find.h"
#include "timeparse.h"

/* t encoded without its creation time, its progress and its due time (compared apart). */
static enum sa_code
booking(const struct sa_task *t, uint8_t **out, size_t *len, struct sa_err *err)
{
    struct sa_task c = *t; /* shallow: encoding only reads */

    c.created_ms = 0;
    c.due_ms = 0;
    c.attempt = 1;
    c.n_attempts = 0;
    c.attempt_at_ms = NULL;
    c.attempt_error = NULL;
    return sa_task_encode(&c, out, len, err);
}

static enum sa_code
compare(const struct sa_task *ours, const struct sa_task *stored, uint64_t seq, struct sa_err *err)
{
    uint8_t *a = NULL, *b = NULL;
    size_t a_len = 0, b_len = 0;
    enum sa_code rc;

    /* a retry's due time is its backoff's, not the booking's */
    if (stored->attempt == 1 && stored->due_ms != ours->due_ms) {
        char was[40], now[40];

        sa_time_format(was, sizeof(was), stored->due_ms);
        sa_time_format(now, sizeof(now), ours->due_ms);
        if (ours->due_ms - ours->created_ms == stored->due_ms - stored->created_ms)
            /* both at the same time from their own now: a retry of a relative time ("+10m") */
            return sa_fail_field(
                err, SA_ECONFLICT, "at",
                "id %s was booked %" PRId64 " ms earlier with the same relative time, so it is "
                "due at %s, not %s: to retry a booking safely, give the absolute time its first "
                "answer named (stream sequence %" PRIu64 ")",
                ours->id, ours->created_ms - stored->created_ms, was, now, seq);
        return sa_fail_field(
            err, SA_ECONFLICT, "id",
            "id %s is taken by a task with another due time (%s, this one %s; stream "
            "sequence %" PRIu64 ")",
            ours->id, was, now, seq);
    }
    rc = booking(ours, &a, &a_len, err);
    if (rc == SA_OK)
        rc = booking(stored, &b, &b_len, err);
    if (rc == SA_OK && (a_len != b_len || sodium_memcmp(a, b, a_len) != 0))
        rc = sa_fail_field(err, SA_ECONFLICT, "id",
                           "id %s is taken by a task with other content (stream sequence %" PRIu64
                           ")",
                           ours->id, seq);
    if (a)
        sodium_memzero(a, a_len);
    if (b)
        sodium_memzero(b, b_len);
    free(a);
    free(b);
    return rc;
}

/* Is the stored message m (at stream sequence seq) the task t? */
static enum sa_code
same_task(const struct sa_keyring *ring, const struct sa_task *t, natsMsg *m, uint64_t seq,
          struct sa_err *err)
{
    struct sa_place place;
    struct sa_task *stored = NULL;
    enum sa_code rc;

    if (sa_layout_parse_subject(&place, natsMsg_GetSubject(m), NULL) != SA_OK ||
        strcmp(place.id, t->id) != 0)
        return sa_fail_field(
            err, SA_ECONFLICT, "id",
            "id %s is taken by a message stored under another subject (stream sequence %" PRIu64
            ")",
            t->id, seq);
    if (sa_task_open(ring, t->id, (const uint8_t *)natsMsg_GetData(m),
                     (size_t)natsMsg_GetDataLength(m), &stored, NULL) != SA_OK)
        return sa_fail_field(
            err, SA_ECONFLICT, "id",
            "id %s is taken by a message that does not open with this key file (stream "
            "sequence %" PRIu64 ")",
            t->id, seq);
    rc = compare(t, stored, seq, err);
    sa_task_free(stored);
    return rc;
}

/* The message at seq in the stream of id's shard. */
static enum sa_code
stored_at(struct sa_nats *n, const char *id, uint64_t seq, natsMsg **m, struct sa_err *err)
{
    jsDirectGetMsgOptions o;
    char stream[32];
    natsStatus s;

    jsDirectGetMsgOptions_Init(&o);
    o.Sequence = seq;
    sa_layout_stream(stream, sizeof(stream), sa_layout_shard_of(&n->layout, id));
    s = js_DirectGetMsg(m, n->js, stream, NULL, &o);
    if (s == NATS_NOT_FOUND)
        return SA_ENOTFOUND;
    return s == NATS_OK
               ? SA_OK
               : sa_nats_fail(err, s, 0, "read back the task stored under the same Msg-Id");
}

/* The refusal of a booking under id, whose task was `state` at at_ms. */
static enum sa_code
refuse(const char *id, const char *state, int64_t at_ms, int64_t ttl, struct dupcheck_gone *gone,
       struct sa_err *err)
{
    char at[40], until[40];

    if (gone)
        *gone = (struct dupcheck_gone){state, at_ms, ttl ? at_ms + ttl : 0};
    sa_time_format(at, sizeof(at), at_ms);
    if (ttl)
        sa_time_format(until, sizeof(until), at_ms + ttl);
    return sa_fail_field(
        err, SA_ENOTFOUND, "id",
        "id %s was used by a task %s at %s, which sendat remembers %s%s (the claims "
        "TTL), so it cannot be booked again before then: see sendat status %s",
        id, state, at, ttl ? "until " : "for ever", ttl ? until : "", id);
}

/* SA_ENOTFOUND (refused) if id's claim is final; else SA_OK, *claimed saying whether there
 * is a claim at all. */
static enum sa_code
final_claim(struct sa_nats *n, const char *id, struct dupcheck_gone *gone, int *claimed,
            struct sa_err *err)
{
    static const char *const finished[] = {[SA_CLAIM_SENT] = "sent",
                                           [SA_CLAIM_CANCELLED] = "cancelled",
                                           [SA_CLAIM_DEAD] = "dead-lettered",
                                           [SA_CLAIM_SKIPPED] = "skipped"};
    struct sa_claim c = {0};
    int64_t ttl = 0;
    /* under a DEL or PURGE marker (a client's, never sendat's), what it hides decides */
    enum sa_code rc = sa_claim_get_under(n->js, sa_nats_claims(n, id), id, &c, err);

    *claimed = rc == SA_OK && c.state != SA_CLAIM_NONE;
    if (rc == SA_ENOTFOUND || (rc == SA_OK && c.state == SA_CLAIM_NONE)) {
        sa_err_clear(err);
        return SA_OK;
    }
    if (rc != SA_OK || (unsigned)c.state >= sizeof(finished) / sizeof(finished[0]) ||
        !finished[c.state])
        return rc; /* live (sending, retrying): a duplicate PubAck compares it */
    if ((rc = find_claims_ttl(n, id, &ttl, err)) != SA_OK)
        return rc;
    return refuse(id, finished[c.state], c.at_ms, ttl, gone, err);
}

enum sa_code
dupcheck_gone(struct sa_nats *n, const char *id, int64_t booked_ms, struct dupcheck_gone *gone,
              struct sa_err *err)
{
    int64_t at = 0, ttl = 0;
    int claimed = 0;
    enum sa_code rc = final_claim(n, id, gone, &claimed, err);

    if (rc != SA_OK || claimed)
        return rc;
    /* No claim, yet a cancel record (a series', or a cancel repeated): the consumers drop a task
     * it applies to (consumer/ledger/cancel.c), one booked once the id is free they send. */
    rc = sa_cancelrec_get(n->js, n->cancel, id, &at, err); /* a keyless writer's refuses nothing */
    if (rc == SA_ENOTFOUND || rc == SA_ECRYPTO || rc == SA_EINVAL) { /* the claim decides */
        sa_err_clear(err);
        return SA_OK;
    }
    if (rc != SA_OK)
        return rc;
    if ((rc = find_claims_ttl(n, id, &ttl, err)) != SA_OK)
        return rc;
    return sa_cancel_applies(at, booked_ms, ttl) ? refuse(id, "cancelled", at, ttl, gone, err)
                                                 : SA_OK;
}

enum sa_code
dupcheck_verify(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
                uint64_t seq, struct sa_err *err)
{
    natsMsg *m = NULL;
    int claimed = 0;
    enum sa_code rc = stored_at(n, t->id, seq, &m, err);

    if (rc == SA_ENOTFOUND) { /* acked since: moved down, retried, or finished */
        rc = find_task(n, t->id, &m, err);
        if (rc == SA_OK)
            seq = (uint64_t)find_header_i64(m, "Nats-Sequence");
    }
    if (rc == SA_ENOTFOUND) {
        sa_err_clear(err);
        return sa_fail_field(
            err, SA_ENOTFOUND, "id",
            "id %s was scheduled before (stream sequence %" PRIu64
            ") and is no longer stored (sent, "
            "cancelled or dead-lettered: see sendat status %s), so it cannot be compared",
            t->id, seq, t->id);
    }
    if (rc == SA_OK)
        rc = same_task(ring, t, m, seq, err);
    natsMsg_Destroy(m);
    /* the same task, but a cancelled copy still waiting to be dropped is no booking: its claim
     * says so (one read; a cancel writes the claim before its record) */
    return rc == SA_OK ? final_claim(n, t->id, NULL, &claimed, err) : rc;
}

enum sa_code
dupcheck_verify_sealed(struct sa_nats *n, const struct sa_keyring *ring, natsMsg *ours,
                       uint64_t seq, struct sa_err *err)
{
    struct sa_place place;
    struct sa_task *t = NULL;
    enum sa_code rc = sa_layout_parse_subject(&place, natsMsg_GetSubject(ours), err);

    if (rc == SA_OK)
        rc = sa_task_open(ring, place.id, (const uint8_t *)natsMsg_GetData(ours),
                          (size_t)natsMsg_GetDataLength(ours), &t, err);
    if (rc == SA_OK)
        rc = dupcheck_verify(n, ring, t, seq, err);
    sa_task_free(t);
    return rc;
}
