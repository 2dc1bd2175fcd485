/* The series registry: one record per recurring series (cron, zone, bounds, first fire),
 * written once when the series is scheduled, so cancel and status can find a series by its id
 * and list its occurrences by computing them. */
#ifndef SERIES_H
#define SERIES_H

#include "natsconn.h"
#include "task.h"

#define SERIES_PAUSES_MAX 32 /* pause/resume changes kept in the record (the newest) */

/* One pause or resume, as the series record keeps it for `status`. */
struct series_pause_change {
    int64_t at_ms;
    int paused; /* 1: paused at at_ms, 0: resumed */
};

struct series_info {
    char cron[128];
    char tz[64];
    int64_t until_ms;
    int count;
    int64_t first_ms;
    int64_t created_ms;
    struct series_pause_change pauses[SERIES_PAUSES_MAX]; /* oldest first */
    int n_pauses;
};

/* Records t's series (create-if-absent). SA_EEXIST if the same series was scheduled already
 * (then publish nothing: its chain runs), SA_EINVAL if the id has another schedule. */
enum sa_code series_register(struct sa_nats *n, const struct sa_task *t,
                             struct sa_err *err) SA_MUST_CHECK;

/* Reads a series record; SA_ENOTFOUND if id names no series. */
enum sa_code series_get(struct sa_nats *n, const char *id, struct series_info *out,
                        struct sa_err *err) SA_MUST_CHECK;

/* Adds a pause (paused = 1) or resume change at at_ms to series id's record, unless its last
 * change is the same one already (a repeated pause is one pause); keeps the newest
 * SERIES_PAUSES_MAX. SA_ENOTFOUND if id names no series, else a broker error. */
enum sa_code series_note_pause(struct sa_nats *n, const char *id, int paused, int64_t at_ms,
                               struct sa_err *err) SA_MUST_CHECK;

#endif
