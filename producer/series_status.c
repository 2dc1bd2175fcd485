/* A series is found by its registry record; its occurrences are computed from the cron and
 * zone (derive rather than store) and each one's state comes from its claim. */
#include <stdio.h>
#include <string.h>

#include "claim.h"
#include "cron.h"
#include "events.h"
#include "find.h"
#include "series.h"
#include "series_status.h"
#include "timeparse.h"

#define SHOWN_MAX 50

/* The occurrences to show: the last SHOWN_MAX up to the first one still ahead. Sets *ended when
 * the series has none ahead (its count or until reached). */
struct fires {
    int64_t at[SHOWN_MAX];
    int k;
    int ended;
};

static enum sa_code
compute_fires(const struct series_info *s, int64_t now, struct fires *f, struct sa_err *err)
{
    struct sa_cron *c = NULL;
    int64_t at;
    int flags, total = 0;
    enum sa_code rc = sa_cron_parse(&c, s->cron, err);

    memset(f, 0, sizeof(*f));
    if (rc != SA_OK)
        return rc;
    f->ended = 1;
    for (at = s->first_ms; total < 100000 && (!s->count || total < s->count) &&
                           (!s->until_ms || at <= s->until_ms);
         total++) {
        f->at[f->k++ % SHOWN_MAX] = at;
        if (at > now) {
            f->ended = 0;
            break;
        }
        if (sa_cron_next(c, s->tz, at, &at, &flags, NULL) != SA_OK)
            break;
    }
    sa_cron_free(c);
    return SA_OK;
}

static int64_t
fire_at(const struct fires *f, int i)
{
    return f->at[i % SHOWN_MAX];
}

/* An occurrence's state: its claim's, else waiting in the stream, else (the series cancelled)
 * "cancelled", else "not yet scheduled". *settled says whether it can still change. */
static const char *
occurrence_state(struct sa_nats *n, const char *occ_id, int series_cancelled, int *settled)
{
    struct sa_claim c = {0};
    natsMsg *m = NULL;

    *settled = 1;
    if (sa_claim_get(n->claims, occ_id, &c, NULL) == SA_OK && c.state != SA_CLAIM_SENDING &&
        c.state != SA_CLAIM_RETRYING)
        return sa_claim_state_name(c.state);
    if (series_cancelled)
        return "cancelled"; /* a copy still in the stream is dropped when a consumer meets it */
    *settled = 0;
    if (c.state == SA_CLAIM_SENDING || c.state == SA_CLAIM_RETRYING)
        return sa_claim_state_name(c.state);
    if (find_task(n, occ_id, &m, NULL) == SA_OK) {
        natsMsg_Destroy(m);
        return "waiting";
    }
    return "not yet scheduled";
}

/* When the series was cancelled (the cancel map entry's time), 0 if it was not. */
static int64_t
cancelled_at(struct sa_nats *n, const char *id)
{
    kvEntry *e = NULL;
    int64_t at = 0;

    if (kvStore_Get(&e, n->cancel, id) == NATS_OK)
        at = kvEntry_Created(e) / 1000000;
    kvEntry_Destroy(e);
    return at;
}

/* A series has finished when no occurrence is ahead and its last one is settled: returns that
 * occurrence's time, else 0. */
static int64_t
finished_at(struct sa_nats *n, const char *id, const struct fires *f)
{
    char occ[SA_ID_MAX + 1];
    int settled = 0;

    if (!f->ended || f->k == 0)
        return 0;
    sa_layout_occurrence_id(occ, sizeof(occ), id, fire_at(f, f->k - 1));
    occurrence_state(n, occ, 0, &settled);
    return settled ? fire_at(f, f->k - 1) : 0;
}

enum sa_code
series_cancel(struct sa_nats *n, const char *id, struct cancel_result *out, struct sa_err *err)
{
    struct series_info s;
    struct fires f;
    char now[40];
    uint64_t rev;
    enum sa_code rc = series_get(n, id, &s, err);

    if (rc == SA_ENOTFOUND) {
        sa_err_clear(err);
        out->outcome = CANCEL_UNKNOWN;
        return SA_OK;
    }
    if (rc == SA_OK)
        rc = compute_fires(&s, sa_now_ms(), &f, err);
    if (rc != SA_OK)
        return rc;
    if ((out->at_ms = finished_at(n, id, &f)) != 0) {
        out->outcome = CANCEL_SERIES_FINISHED;
        return SA_OK;
    }
    out->at_ms = sa_now_ms();
    sa_time_format(now, sizeof(now), out->at_ms);
    if (kvStore_PutString(&rev, n->cancel, id, now) != NATS_OK)
        return sa_fail(err, SA_ENATS, "the cancel map did not take %s", id);
    out->outcome = CANCEL_DONE;
    return SA_OK;
}

enum sa_code
series_events(struct sa_nats *n, const char *id, json_t *events, struct sa_err *err)
{
    struct series_info s;
    struct fires f;
    int64_t cancelled, done;
    enum sa_code rc = series_get(n, id, &s, err);

    if (rc == SA_OK)
        rc = compute_fires(&s, sa_now_ms(), &f, err);
    if (rc != SA_OK)
        return rc;
    events_add(events, s.created_ms, "series",
               json_pack("{s:s, s:s, s:i}", "cron", s.cron, "tz", s.tz, "count", s.count));
    cancelled = cancelled_at(n, id);
    for (int i = f.k > SHOWN_MAX ? f.k - SHOWN_MAX : 0; i < f.k; i++) {
        char occ[SA_ID_MAX + 1];
        int settled;
        sa_layout_occurrence_id(occ, sizeof(occ), id, fire_at(&f, i));
        events_add(events, fire_at(&f, i), "occurrence",
                   json_pack("{s:s, s:s}", "id", occ, "state",
                             occurrence_state(n, occ, cancelled != 0, &settled)));
    }
    if (cancelled)
        events_add(events, cancelled, "series-cancelled", NULL);
    else if ((done = finished_at(n, id, &f)) != 0)
        events_add(events, done, "series-finished", NULL);
    events_sort(events);
    return SA_OK;
}
