/* Cancel, pause and resume for a series id (the task commands fall back to series_cancel). */
#ifndef SERIES_STOP_H
#define SERIES_STOP_H

#include "cancel_result.h"
#include "natsconn.h"

/* Stops the series id: CANCEL_DONE, CANCEL_SERIES_FINISHED (its last occurrence was sent
 * already) or CANCEL_UNKNOWN (no series has this id) in *out; else a broker error. */
enum sa_code series_cancel(struct sa_nats *n, const char *id, struct cancel_result *out,
                           struct sa_err *err) SA_MUST_CHECK;

enum pause_outcome {
    PAUSE_DONE,      /* paused (or resumed) now, or it was already */
    PAUSE_CANCELLED, /* the series was cancelled at at_ms */
    PAUSE_FINISHED,  /* its last occurrence was at at_ms */
    PAUSE_UNKNOWN,   /* no series has this id */
};

struct pause_result {
    enum pause_outcome outcome;
    int64_t at_ms;
};

/* Pauses (pause = 1) or resumes (0) series id: occurrences that fall due while it is paused
 * are skipped and the chain goes on. The outcome is in *out; else a broker error. */
enum sa_code series_pause(struct sa_nats *n, const char *id, int pause, struct pause_result *out,
                          struct sa_err *err) SA_MUST_CHECK;

#endif
