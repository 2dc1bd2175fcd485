/* Cancelling a task or a series: the race for the claim that `sendat cancel` and
 * `DELETE /v1/tasks/{id}` share (invariant 3: exactly one of cancel and send wins). */
#ifndef CANCEL_H
#define CANCEL_H

#include "natsconn.h"

enum cancel_outcome {
    CANCEL_DONE,            /* cancelled: the receiver will never get it */
    CANCEL_SENT,            /* too late: sent at at_ms */
    CANCEL_SENDING,         /* too late: being sent by `by` since at_ms (waited 30 s) */
    CANCEL_SERIES_FINISHED, /* too late: the series' last occurrence was at at_ms */
    CANCEL_UNKNOWN,         /* no task or series has this id */
};

struct cancel_result {
    enum cancel_outcome outcome;
    int64_t at_ms;
    char by[64];
};

/* Cancels id (a task, or a series: then no occurrence after now is sent). SA_OK with the
 * outcome in *out; else a broker error. */
enum sa_code cancel_run(struct sa_nats *n, const char *id, struct cancel_result *out,
                        struct sa_err *err) SA_MUST_CHECK;

#endif
