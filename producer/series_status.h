/* Cancel and status for a series id (the task commands fall back to these). */
#ifndef SERIES_STATUS_H
#define SERIES_STATUS_H

#include <jansson.h>

#include "natsconn.h"

/* SA_ENOTFOUND if id is no series; else stops it and prints "cancelled". */
int series_cancel(struct sa_nats *n, const char *id, int *found);
/* Adds the series and its occurrences (their claim states) to events; *found says if id is one. */
int series_events(struct sa_nats *n, const char *id, json_t *events, int *found);

#endif
