/* Re-publishing a task into the wheel: the level subject for a due time, and a publish that
 * returns only after JetStream's PubAck (invariant 1: the successor is stored before the
 * original is acked). */
#ifndef RELAY_H
#define RELAY_H

#include "consumer.h"

#define RELAY_MOVES_MAX 1000 /* a Sendat-Moves header above this reads as 0 */

struct relay_meta {
    int64_t scheduled_ms; /* when the producer published it */
    int moves;            /* re-publishes down a level so far */
    int64_t moved_ms;     /* the last of them */
};

/* The subject for a task a consumer re-publishes (a retry, a next occurrence): the slot level
 * of its due time, however far ahead. Window levels are the producers' alone, so the NATS
 * permissions can refuse them to consumer credentials (deploy/nats/accounts.conf); a slot's
 * durable, made when the slot is taken up, delivers what waited in it. */
void relay_subject(const struct consumer *c, char *out, size_t cap, int64_t due_ms, const char *id);

/* The stream sequence of a fetched message, or of one read by direct get (0 if neither). */
uint64_t relay_seq(natsMsg *msg);

/* Reads the metadata headers of a task message. They are not sealed: a value that is not a
 * plain decimal in range (0..RELAY_MOVES_MAX moves, 0..SA_TIME_MAX_MS times) reads as 0. */
void relay_meta_read(natsMsg *msg, struct relay_meta *m);

/* Builds a task message for subject with data and the metadata headers into *out (the
 * caller's to destroy), once the subject's level may take it (its mark exists: levelmark.h).
 * Otherwise the failure (SA_ERETRY, SA_ENATS or a mapped nats.c code); *out is NULL then. */
enum sa_code relay_build(struct consumer *c, natsMsg **out, const char *subject, const void *data,
                         int len, const struct relay_meta *m, struct sa_err *err) SA_MUST_CHECK;

/* Publishes data to subject with Nats-Msg-Id msgid and the metadata headers; waits for the
 * PubAck. SA_ERETRY/SA_ENATS if it was not stored. */
enum sa_code relay_publish(struct consumer *c, const char *subject, const void *data, int len,
                           const char *msgid, const struct relay_meta *m,
                           struct sa_err *err) SA_MUST_CHECK;

#endif
