/* Publishing sealed tasks into their slot subject (or window subject, when the slot is near:
 * sa_layout_book_slot): one at a time waiting for the PubAck, or many in flight (batch) with
 * the PubAcks counted as they come. */
#ifndef PUBLISH_H
#define PUBLISH_H

#include "natsconn.h"
#include "task.h"

/* Seals t with the ring's newest key and publishes it to its slot if that starts well after
 * now (sa_layout_book_slot), else to the window of max(due, now), with
 * Nats-Msg-Id = msgid (NULL: t->id, or none if the producer generated t->id: t->id_generated).
 * Returns once the PubAck arrived. With msgid NULL a duplicate PubAck is read back
 * (dupcheck_verify): SA_EEXIST if it is this very task (already scheduled), else its SA_ECONFLICT
 * or SA_ENOTFOUND. With a derived msgid (a replay) a duplicate counts as stored. */
enum sa_code publish_task(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
                          const char *msgid, struct sa_err *err) SA_MUST_CHECK;

struct publisher;

/* An asynchronous publisher with at most max_pending PubAcks outstanding. */
enum sa_code publisher_new(struct publisher **out, struct sa_nats *n, int max_pending,
                           struct sa_err *err) SA_MUST_CHECK;
/* Publishes an already sealed task (Msg-Id = t->id, none for a generated id) that came from input
 * line `line`; blocks while max_pending are in flight. */
enum sa_code publisher_send(struct publisher *p, const struct sa_task *t, const uint8_t *env,
                            size_t len, int64_t now, long line, struct sa_err *err) SA_MUST_CHECK;
/* Waits until every PubAck (or error) arrived, at most timeout_ms. */
enum sa_code publisher_finish(struct publisher *p, int64_t timeout_ms,
                              struct sa_err *err) SA_MUST_CHECK;
/* PubAcks so far: newly stored, duplicates (each queued for publisher_next_dup), failures. */
void publisher_counts(struct publisher *p, long *acked, long *duplicates, long *failed);
/* Takes the oldest duplicate PubAck not yet taken: the line it came from, the stream sequence
 * of the message that holds its Msg-Id, and the published message (the caller destroys it).
 * Returns 0 when there is none. */
int publisher_next_dup(struct publisher *p, long *line, uint64_t *seq, natsMsg **msg);
/* The i-th failure kept ("line N: error", for people), or NULL; *line (if line is not NULL)
 * gets its line. */
const char *publisher_failure(struct publisher *p, long i, long *line);
void publisher_free(struct publisher *p);

#endif
