/* Series records in the sendat_series bucket, as JSON: written once when the series is
 * scheduled, then only its pause log grows (compare-and-set on the record's revision), so
 * `status` shows every pause and resume although the cancel map keeps only the current pause. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cron.h"
#include "find.h"
#include "series.h"

static int
encode(const struct sa_task *t, char *out, size_t cap)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:i, s:I, s:I}", "cron", t->cron, "tz", t->tz, "until",
                          (json_int_t)t->until_ms, "count", t->count, "first",
                          (json_int_t)t->due_ms, "created", (json_int_t)t->created_ms);
    size_t n = o ? json_dumpb(o, out, cap - 1, JSON_COMPACT) : 0;

    json_decref(o);
    if (n == 0 || n >= cap)
        return -1;
    out[n] = '\0';
    return (int)n;
}

/* Appends the change to o's pause log (dropping the oldest past SERIES_PAUSES_MAX): 0 if it
 * was added, 1 if the last change is the same already, -1 without memory. */
static int
add_pause_change(json_t *o, int paused, int64_t at_ms)
{
    json_t *list = json_object_get(o, "pauses");
    size_t len = json_array_size(list);

    if (len && json_is_true(json_object_get(json_array_get(list, len - 1), "paused")) == paused)
        return 1;
    if (!json_is_array(list)) {
        list = json_array();
        if (!list || json_object_set_new(o, "pauses", list) != 0)
            return -1;
    }
    while (json_array_size(list) >= SERIES_PAUSES_MAX)
        json_array_remove(list, 0);
    return json_array_append_new(
               list, json_pack("{s:I, s:b}", "at", (json_int_t)at_ms, "paused", paused)) == 0
               ? 0
               : -1;
}

/* One try: reads the record, adds the change and writes it back if nobody wrote in between. */
static natsStatus
note_once(struct sa_nats *n, const char *id, int paused, int64_t at_ms, struct sa_err *err,
          enum sa_code *rc)
{
    json_t *o = NULL;
    uint64_t rev = 0, new_rev;
    char *text = NULL;
    natsStatus s = NATS_OK;
    int added;

    if ((*rc = series_record_read(n, id, &o, &rev, err)) != SA_OK)
        return NATS_OK;
    added = add_pause_change(o, paused, at_ms);
    if (added == 0 && (text = json_dumps(o, JSON_COMPACT)) != NULL)
        s = kvStore_UpdateString(&new_rev, n->series, id, text, rev);
    else if (added != 1)
        *rc = sa_fail(err, SA_ENOMEM, "no memory to note the pause of series %s", id);
    free(text);
    json_decref(o);
    return s;
}

enum sa_code
series_note_pause(struct sa_nats *n, const char *id, int paused, int64_t at_ms, struct sa_err *err)
{
    enum sa_code rc = SA_OK;
    natsStatus s = NATS_OK;

    for (int tries = 0; tries < 5; tries++) { /* another pause or resume wrote in between */
        s = note_once(n, id, paused, at_ms, err, &rc);
        if (rc != SA_OK || s == NATS_OK)
            return rc;
    }
    return sa_nats_fail(err, s, 0, "note a series pause");
}

/* How many of t's occurrences fall within span_ms of its first (0: its whole life), counted up
 * to SERIES_LIVE_MAX + 1: the claim records the series keeps in the ledger at once. */
static enum sa_code
live_occurrences(const struct sa_task *t, int64_t span_ms, long *n_out, struct sa_err *err)
{
    struct sa_cron *c = NULL;
    int64_t at = t->due_ms, end = span_ms > 0 ? t->due_ms + span_ms : INT64_MAX;
    long n = 1, last = t->count ? t->count : SERIES_LIVE_MAX + 1;
    int flags = 0;
    enum sa_code rc = sa_cron_parse(&c, t->cron, err);

    if (last > SERIES_LIVE_MAX + 1)
        last = SERIES_LIVE_MAX + 1;
    while (rc == SA_OK && n < last) {
        rc = sa_cron_next(c, t->tz, at, &at, &flags, err);
        if (rc != SA_OK || at >= end || (t->until_ms && at > t->until_ms))
            break;
        n++;
    }
    sa_cron_free(c);
    *n_out = n;
    if (rc == SA_ENOTFOUND) /* no fire within years: the series ends */
        sa_err_clear(err);
    return rc == SA_ENOTFOUND ? SA_OK : rc;
}

/* Refuses a series that would keep more than SERIES_LIVE_MAX claim records at once: each
 * occurrence's record lives for the claims TTL, so an every-second series would hold 604,800 of
 * them (about 460 MB) under the default 7 days. */
static enum sa_code
series_bounded(struct sa_nats *n, const struct sa_task *t, struct sa_err *err)
{
    int64_t ttl = 0;
    long live = 0;
    enum sa_code rc = find_claims_ttl(n, t->id, &ttl, err);

    if (rc == SA_OK)
        rc = live_occurrences(t, ttl, &live, err);
    if (rc == SA_OK && live > SERIES_LIVE_MAX)
        return sa_fail_field(err, SA_EINVAL, "cron",
                             "series fires more than %d times within the claims TTL (%" PRId64
                             " s), each keeping a claim record: fire less often, or bound it "
                             "with count or until",
                             SERIES_LIVE_MAX, ttl / 1000);
    return rc;
}

enum sa_code
series_register(struct sa_nats *n, const struct sa_task *t, struct sa_err *err)
{
    char buf[512];
    struct series_info old;
    uint64_t rev;
    enum sa_code rc = series_bounded(n, t, err);

    if (rc != SA_OK)
        return rc;
    if (encode(t, buf, sizeof(buf)) < 0)
        return sa_fail(err, SA_EINVAL, "series %s does not encode", t->series_id);
    if (kvStore_CreateString(&rev, n->series, t->series_id, buf) == NATS_OK)
        return SA_OK;
    rc = series_get(n, t->series_id, &old, err);
    if (rc == SA_ENOTFOUND)
        return sa_fail(err, SA_ENATS, "series %s could not be recorded", t->series_id);
    if (rc != SA_OK)
        return rc;
    if (strcmp(old.cron, t->cron) || strcmp(old.tz, t->tz))
        return sa_fail(err, SA_EINVAL, "series %s exists with another schedule (%s in %s)",
                       t->series_id, old.cron, old.tz);
    return SA_EEXIST; /* scheduled already: the chain runs, publish nothing */
}
