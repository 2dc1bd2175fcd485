/* The sweep thread: finds messages of the task stream that no level will ever pull and
 * dead-letters them with the reason. The stream takes sendat.task.*.*.*, and a NATS
 * wildcard cannot say "a multiple of the window size", so the broker stores them. */
#ifndef SWEEP_H
#define SWEEP_H

#include "consumer.h"

struct sweep;

/* Starts the thread, which takes a turn every interval_ms (the fleet shares one sweep
 * through the meta record "sweep"). interval_ms 0: no sweep, *out is NULL. SA_ENOMEM if
 * the thread cannot start. */
enum sa_code sweep_start(struct sweep **out, struct consumer *c, int64_t interval_ms,
                         struct sa_err *err) SA_MUST_CHECK;

/* Stops the thread (a run in progress ends after its current message) and frees it. NULL is
 * fine. Call before the connection closes. */
void sweep_stop(struct sweep *s);

#endif
