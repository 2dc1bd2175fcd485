/* Moving not-yet-due tasks down a level without waiting for each PubAck: the moved copy is
 * published asynchronously and its original is acked from the PubAck handler, only once
 * JetStream stored the copy (invariant 1). A redelivered original is moved again under the
 * same Nats-Msg-Id, which JetStream drops as a duplicate (invariant 2). */
#ifndef MOVER_H
#define MOVER_H

#include "consumer.h"
#include "relay.h"

struct mover;

/* A mover on c's connection (a bounded number of moves wait for their PubAck at once; a
 * further send waits for room). SA_ENOMEM or SA_ENATS if it cannot be made. */
enum sa_code mover_new(struct mover **out, struct consumer *c, struct sa_err *err) SA_MUST_CHECK;

/* Publishes *orig's data to subject with msgid and meta. On SA_OK the mover owns *orig
 * (*orig = NULL): acked once the copy is stored, nakked if it is not. Else the caller still
 * owns it. */
enum sa_code mover_send(struct mover *m, natsMsg **orig, const char *subject, const char *msgid,
                        const struct relay_meta *meta, struct sa_err *err) SA_MUST_CHECK;

/* At shutdown, before the puller's subscriptions close: waits up to timeout_ms for the
 * PubAcks of every move in flight and returns how many are left; from then on no original
 * is acked (they are redelivered after the ack wait). */
int mover_wait(struct mover *m, int64_t timeout_ms);

/* Frees the mover (after mover_wait and the puller's subscriptions are closed, before the
 * connection); originals still waiting are left unacked (JetStream redelivers them after the
 * ack wait). Accepts NULL. */
void mover_free(struct mover *m);

#endif
