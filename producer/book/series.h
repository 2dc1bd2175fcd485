/* The series registry: one record per recurring series (cron, zone, bounds, first fire),
 * written once when the series is scheduled, so cancel and status can find a series by its id
 * and list its occurrences by computing them. */
#ifndef SERIES_H
#define SERIES_H

#include "natsconn.h"
#include "series_record.h"
#include "task.h"

/* The most occurrences a series may have within one claims TTL (or in all, with claims kept
 * for ever): each keeps its claim record that long. Once a minute for 34 days fits, once a
 * second (86,400 a day) does not unless count or until bounds it. */
#define SERIES_LIVE_MAX 50000

/* Records t's series (create-if-absent). SA_EEXIST if the same series was scheduled already
 * (then publish nothing: its chain runs), SA_EINVAL if the id has another schedule or would
 * keep more than SERIES_LIVE_MAX claim records at once (field "cron"). */
enum sa_code series_register(struct sa_nats *n, const struct sa_task *t,
                             struct sa_err *err) SA_MUST_CHECK;

/* Adds a pause (paused = 1) or resume change at at_ms to series id's record, unless its last
 * change is the same one already (a repeated pause is one pause); keeps the newest
 * SERIES_PAUSES_MAX. SA_ENOTFOUND if id names no series, else a broker error. */
enum sa_code series_note_pause(struct sa_nats *n, const char *id, int paused, int64_t at_ms,
                               struct sa_err *err) SA_MUST_CHECK;

#endif
