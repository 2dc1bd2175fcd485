/* What a cancel found: the answer `sendat cancel`, DELETE /v1/tasks/{id} and a series' cancel
 * (series_stop.h) share, apart from cancel.h so that series_stop.h needs no cancel.h. */
#ifndef CANCEL_RESULT_H
#define CANCEL_RESULT_H

#include <stdint.h>

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

#endif
