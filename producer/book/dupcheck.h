/* A duplicate PubAck is not a success: it says JetStream already holds a message under the
 * task's Nats-Msg-Id, which may be this very task (a script ran twice), an earlier booking of
 * the id with other content, or junk a consumer-role user published under that Msg-Id. It is
 * read back and compared before anything is printed. */
#ifndef DUPCHECK_H
#define DUPCHECK_H

#include "natsconn.h"
#include "task.h"

/* Whether the message that made the publish of t a duplicate (stream sequence seq) is t as
 * booked. If that sequence is gone (the task moved down to its slot, or is being retried), the
 * task waiting under t->id now is compared instead. Same booking: every field but created_ms,
 * attempt and the failed attempts (the producer's clock, the fleet's progress), and the due
 * time unless the stored copy is a retry. SA_OK: it is t (already scheduled). SA_ECONFLICT:
 * the id is taken by something else (other content, another subject, or a message that does
 * not open with ring); err names the id. SA_ENOTFOUND: nothing under the id is stored any more
 * (sent, cancelled or dead-lettered), so it cannot be compared, or it is t but its claim is
 * final (a cancelled copy still waits to be dropped). SA_ENATS, SA_ENOMEM. */
enum sa_code dupcheck_verify(struct sa_nats *n, const struct sa_keyring *ring,
                             const struct sa_task *t, uint64_t seq,
                             struct sa_err *err) SA_MUST_CHECK;

/* A task of id that sendat still remembers as finished: its state ("sent", "cancelled",
 * "dead-lettered", "skipped"), when, and until when it is remembered (0: for ever). */
struct dupcheck_gone {
    const char *state;
    int64_t at_ms;
    int64_t until_ms;
};

/* Whether a task under id sealed at booked_ms (a new booking: now) is no booking, because an
 * earlier task under id finished (sent, cancelled, dead-lettered) and sendat still remembers
 * it: its claim holds a final state, or (no claim) the cancel map holds id and applies to a
 * task sealed then (sa_cancel_applies). SA_OK: the id is free, or its task still live (a
 * duplicate PubAck compares it). SA_ENOTFOUND: refuse; *gone (may be NULL) says what and when,
 * err names the id. Two KV gets for a free id; SA_ENATS. */
enum sa_code dupcheck_gone(struct sa_nats *n, const char *id, int64_t booked_ms,
                           struct dupcheck_gone *gone, struct sa_err *err) SA_MUST_CHECK;

/* One id of a batch to ask dupcheck_gone about, and its answer. */
struct gone_ask {
    const char *id;
    int64_t booked_ms;
    enum sa_code rc; /* SA_OK free (or live), SA_ENOTFOUND refuse: gone and err say why */
    struct dupcheck_gone gone;
    struct sa_err err;
};

/* dupcheck_gone for many ids, the answers in each ask (gonemany.c): the free ones, nearly
 * all of a batch, cost two pipelined direct gets each instead of two round trips. Returns a
 * broker error only if the questions could not be asked at all. */
enum sa_code dupcheck_gone_many(struct sa_nats *n, struct gone_ask *asks, size_t count,
                                struct sa_err *err) SA_MUST_CHECK;

/* dupcheck_verify for a message this producer sealed and published (a batch line): opens it
 * with ring first. */
enum sa_code dupcheck_verify_sealed(struct sa_nats *n, const struct sa_keyring *ring, natsMsg *ours,
                                    uint64_t seq, struct sa_err *err) SA_MUST_CHECK;

#endif
