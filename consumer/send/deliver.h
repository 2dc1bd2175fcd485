/* The main thread's loop: fires held tasks at their due time and sends them through
 * libcurl's multi interface, many in flight, connections reused. */
#ifndef DELIVER_H
#define DELIVER_H

#include "consumer.h"

struct deliver;

enum sa_code deliver_new(struct deliver **out, struct consumer *c,
                         struct sa_err *err) SA_MUST_CHECK;
void deliver_free(struct deliver *d);

/* Any thread: wakes the loop (new tasks in the wheel, or stop). */
void deliver_wakeup(void *d);

/* Runs until c->stopping is set and every send in flight finished (or the drain time ran
 * out). Held tasks not yet due are released to the fleet when stopping. */
void deliver_run(struct deliver *d);

#endif
