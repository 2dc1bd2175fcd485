/* Cancel and status for a series id (the task commands fall back to these). */
#ifndef SERIES_STATUS_H
#define SERIES_STATUS_H

#include <jansson.h>

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

/* Appends {"id", "state", "cron", "tz", "next"} for every series (state: active, paused,
 * cancelled or finished; next: its next fire in UTC, null when none is ahead; a record that
 * does not read gives id and state only). */
enum sa_code series_list(struct sa_nats *n, json_t *out, struct sa_err *err) SA_MUST_CHECK;

/* Appends to out the next max occurrences of series id after now (within its count and
 * until), each {"at", "local", "dst"}: dst is "gap" (the local time does not exist that day; it
 * fires at the first valid instant after), "overlap" (it happens twice; it fires at the first)
 * or null, as `sendat preview` warns. *state is the series' state (as series_list says it);
 * a cancelled or finished series has none ahead. SA_ENOTFOUND if id names no series. */
enum sa_code series_ahead(struct sa_nats *n, const char *id, int max, json_t *out,
                          const char **state, struct sa_err *err) SA_MUST_CHECK;

/* One fire at at in zone tz as {"at", "local", "dst"} (series_ahead; flags: sa_cron_next's). */
json_t *series_fire_json(const char *tz, int64_t at, int flags);

/* Adds the series, its occurrences (their claim states) and every pause and resume its record
 * keeps to events; SA_ENOTFOUND if id names no series. */
enum sa_code series_events(struct sa_nats *n, const char *id, json_t *events,
                           struct sa_err *err) SA_MUST_CHECK;

#endif
