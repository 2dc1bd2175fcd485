/* The dead-letter publish, used by sending (a last failed attempt) and by the wheel (a task it
 * cannot open or send: park.h, sweep.h). */
#ifndef DEADLETTER_H
#define DEADLETTER_H

#include <nats/nats.h>

#include "consumer.h"

/* Publishes the message's envelope to sendat.dlq.<id> with the reason, after its PubAck.
 * id may be NULL for a message whose subject names no task (then the stream sequence is
 * used). Does not ack. */
enum sa_code retry_dead_letter(struct consumer *c, natsMsg *msg, const char *id, int attempt,
                               int channel, const char *reason, struct sa_err *err) SA_MUST_CHECK;

#endif
