/* Reading back what a duplicate PubAck points at (see dupcheck.h). Envelopes carry random
 * nonces, so the two tasks are compared opened: each re-encoded without the fields that differ
 * between two runs of one booking, and the bytes compared (the encoding is deterministic). The
 * plaintext is wiped before it is freed: it holds recipients and bodies. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

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
        return sa_fail(err, SA_ECONFLICT,
                       "id %s is taken by a task with another due time (%s, this one %s; stream "
                       "sequence %" PRIu64 ")",
                       ours->id, was, now, seq);
    }
    rc = booking(ours, &a, &a_len, err);
    if (rc == SA_OK)
        rc = booking(stored, &b, &b_len, err);
    if (rc == SA_OK && (a_len != b_len || sodium_memcmp(a, b, a_len) != 0))
        rc = sa_fail(err, SA_ECONFLICT,
                     "id %s is taken by a task with other content (stream sequence %" PRIu64 ")",
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
        return sa_fail(
            err, SA_ECONFLICT,
            "id %s is taken by a message stored under another subject (stream sequence %" PRIu64
            ")",
            t->id, seq);
    if (sa_task_open(ring, t->id, (const uint8_t *)natsMsg_GetData(m),
                     (size_t)natsMsg_GetDataLength(m), &stored, NULL) != SA_OK)
        return sa_fail(err, SA_ECONFLICT,
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

enum sa_code
dupcheck_verify(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
                uint64_t seq, struct sa_err *err)
{
    natsMsg *m = NULL;
    enum sa_code rc = stored_at(n, t->id, seq, &m, err);

    if (rc == SA_ENOTFOUND) { /* acked since: moved down, retried, or finished */
        rc = find_task(n, t->id, &m, err);
        if (rc == SA_OK)
            seq = (uint64_t)find_header_i64(m, "Nats-Sequence");
    }
    if (rc == SA_ENOTFOUND) {
        sa_err_clear(err);
        return sa_fail(
            err, SA_ENOTFOUND,
            "id %s was scheduled before (stream sequence %" PRIu64
            ") and is no longer stored (sent, "
            "cancelled or dead-lettered: see sendat status %s), so it cannot be compared",
            t->id, seq, t->id);
    }
    if (rc == SA_OK)
        rc = same_task(ring, t, m, seq, err);
    natsMsg_Destroy(m);
    return rc;
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
