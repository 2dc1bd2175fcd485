/* A series record as the sendat_series bucket keeps it: cron, zone, bounds, first fire and
 * its pause log (book/series.h writes it). */
#ifndef SERIES_RECORD_H
#define SERIES_RECORD_H

#include <jansson.h>

#include "natsconn.h"

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

/* Reads a series record; SA_ENOTFOUND if id names no series. */
enum sa_code series_get(struct sa_nats *n, const char *id, struct series_info *out,
                        struct sa_err *err) SA_MUST_CHECK;

/* Reads series id's record as JSON into *o (the caller's) and its revision; SA_ENOTFOUND if
 * id names no series, SA_EINVAL if the record is damaged. */
enum sa_code series_record_read(struct sa_nats *n, const char *id, json_t **o, uint64_t *rev,
                                struct sa_err *err) SA_MUST_CHECK;

#endif
