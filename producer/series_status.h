/* Cancel and status for a series id (the task commands fall back to these). */
#ifndef SERIES_STATUS_H
#define SERIES_STATUS_H

#include <jansson.h>

#include "cancel.h"
#include "natsconn.h"

/* Stops the series id: CANCEL_DONE, CANCEL_SERIES_FINISHED (its last occurrence was sent
 * already) or CANCEL_UNKNOWN (no series has this id) in *out; else a broker error. */
enum sa_code series_cancel(struct sa_nats *n, const char *id, struct cancel_result *out,
                           struct sa_err *err) SA_MUST_CHECK;

/* Adds the series and its occurrences (their claim states) to events; SA_ENOTFOUND if id
 * names no series. */
enum sa_code series_events(struct sa_nats *n, const char *id, json_t *events,
                           struct sa_err *err) SA_MUST_CHECK;

#endif
