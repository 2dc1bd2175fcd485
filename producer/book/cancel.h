/* Cancelling a task or a series: the race for the claim that `sendat cancel` and
 * `DELETE /v1/tasks/{id}` share (invariant 3: exactly one of cancel and send wins). */
#ifndef CANCEL_H
#define CANCEL_H

#include "cancel_result.h"
#include "natsconn.h"

/* Cancels id (a task, or a series: then no occurrence after now is sent). SA_OK with the
 * outcome in *out; else a broker error. */
enum sa_code cancel_run(struct sa_nats *n, const char *id, struct cancel_result *out,
                        struct sa_err *err) SA_MUST_CHECK;

#endif
