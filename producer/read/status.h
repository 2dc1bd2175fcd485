/* A task's or series' history as events (see events.h): `sendat status` prints it,
 * `GET /v1/tasks/{id}` sends it. */
#ifndef STATUS_H
#define STATUS_H

#include <jansson.h>

#include "keyring.h"
#include "natsconn.h"

/* Appends id's events to events: the due time first, then every event in time order. A
 * series id gives the series and its occurrences. SA_ENOTFOUND if no task or series has id.
 * ring (may be NULL) opens a waiting copy for its due time and not-after. */
enum sa_code status_collect(struct sa_nats *n, const struct sa_keyring *ring, const char *id,
                            json_t *events, struct sa_err *err) SA_MUST_CHECK;

#endif
