/* Publishing sealed tasks into their window subject and waiting for JetStream's PubAck. */
#ifndef PUBLISH_H
#define PUBLISH_H

#include "natsconn.h"
#include "task.h"

/* Seals t with the ring's newest key and publishes it to the window of max(due, now) with
 * Nats-Msg-Id = msgid (NULL: t->id). Returns once the PubAck arrived (a duplicate counts as
 * stored). */
enum sa_code publish_task(struct sa_nats *n, const struct sa_keyring *ring, const struct sa_task *t,
                          const char *msgid, struct sa_err *err) SA_MUST_CHECK;

#endif
