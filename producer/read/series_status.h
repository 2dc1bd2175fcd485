/* What a series id shows: its state, list, occurrences ahead and events (the task commands
 * fall back to these); its cancel and pause are book/series_stop.h. */
#ifndef SERIES_STATUS_H
#define SERIES_STATUS_H

#include <jansson.h>

#include "natsconn.h"

/* Reads series id and whether it has finished: *at_ms its last occurrence's time (no
 * occurrence ahead and the last one settled), else 0. SA_ENOTFOUND if id names no series. */
enum sa_code series_finished(struct sa_nats *n, const char *id, int64_t *at_ms,
                             struct sa_err *err) SA_MUST_CHECK;

/* When key (a series id, or its pause key) was put into the cancel map, 0 if it is not there
 * or its record is not authentic (claimmac.h). */
int64_t series_cancelled_at(struct sa_nats *n, const char *key);

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
