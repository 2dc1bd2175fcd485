/* Tasks due in a time range, without an index: `sendat list` and `GET /v1/tasks?from=&to=`. */
#ifndef TASKLIST_H
#define TASKLIST_H

#include <jansson.h>

#include "keyring.h"
#include "natsconn.h"

#define TASKLIST_RANGE_MAX_MS (31LL * 24 * 3600 * 1000) /* the widest range one request reads */
#define TASKLIST_LIMIT_MAX 10000
#define TASKLIST_CURSOR_MAX (24 + SA_ID_MAX)

/* What a page lists besides the range: NULL fields do not filter. state is "waiting" (no claim
 * yet, or being sent), "failed" (an attempt failed, another follows) or "cancelled" (waits in
 * the stream until its due time, never to be sent); without it, cancelled tasks are left out. */
struct tasklist_filter {
    const char *group, *host, *state;
};

/* Whether state names a state tasklist_filter takes. */
int tasklist_state_valid(const char *state);

/* One page of the tasks due in [from_ms, to_ms] that pass f (NULL: none), in due order (then
 * id), after cursor (NULL or "": from the start). Appends to out {"id","due","level":"window"|
 * "slot","channel","state","host"(webhooks only),"group"(if any)}, the states read from the
 * claims; no recipient or body is read out unless with_content (then also what content_add
 * sets). next gets the cursor of the next page, or "" if this page ended the range. SA_EINVAL
 * for a bad range, cursor or state (err names "from", "to", "cursor" or "state" first),
 * SA_ENOMEM for a window too full to read, else broker errors. */
enum sa_code tasklist_page(struct sa_nats *n, const struct sa_keyring *ring, int64_t from_ms,
                           int64_t to_ms, long limit, const char *cursor,
                           const struct tasklist_filter *f, int with_content, json_t *out,
                           char next[TASKLIST_CURSOR_MAX], struct sa_err *err) SA_MUST_CHECK;

#endif
