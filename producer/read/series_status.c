/* A series is found by its registry record; its occurrences are computed from the cron and
 * zone (derive rather than store) and each one's state comes from its claim. */
#include <stdio.h>
#include <string.h>

#include "claim.h"
#include "cancelrec.h"
#include "cron.h"
#include "events.h"
#include "find.h"
#include "series_record.h"
#include "series_status.h"
#include "timeparse.h"

#define SHOWN_MAX 50
#define FIRES_MAX 100000 /* the walk's bound, for a series with a count */

/* The occurrences to show: the last SHOWN_MAX up to the first one after the end (now, or the
 * series' cancel). Sets *ended when the series has none after it (its count or until reached). */
struct fires {
    int64_t at[SHOWN_MAX];
    int k;
    int ended;
};

/* Where the walk to end may start for a series without a count, so that it meets the last
 * SHOWN_MAX fires before end without walking from the first (a per-second series fires 86,400
 * times a day): the first fire of a stretch back from end that doubles until it holds more than
 * SHOWN_MAX fires or reaches the first fire. Each try walks at most SHOWN_MAX + 1 fires. */
static int64_t
walk_start(const struct sa_cron *c, const struct series_info *s, int64_t end)
{
    for (int64_t back = 60 * 1000; back < (INT64_C(1) << 50); back *= 2) {
        int64_t from = end - back, at = from - 1, first;
        int flags, n = 0;
        if (from <= s->first_ms || sa_cron_next(c, s->tz, at, &first, &flags, NULL) != SA_OK)
            break;
        for (at = first; n <= SHOWN_MAX && at <= end; n++)
            if (sa_cron_next(c, s->tz, at, &at, &flags, NULL) != SA_OK)
                break;
        if (n > SHOWN_MAX)
            return first;
    }
    return s->first_ms;
}

static enum sa_code
compute_fires(const struct series_info *s, int64_t end, struct fires *f, struct sa_err *err)
{
    struct sa_cron *c = NULL;
    int64_t at;
    int flags, total = 0;
    enum sa_code rc = sa_cron_parse(&c, s->cron, err);

    memset(f, 0, sizeof(*f));
    if (rc != SA_OK)
        return rc;
    f->ended = 1;
    for (at = s->count ? s->first_ms : walk_start(c, s, end);
         total < FIRES_MAX && (!s->count || total < s->count) &&
         (!s->until_ms || at <= s->until_ms);
         total++) {
        f->at[f->k++ % SHOWN_MAX] = at;
        if (at > end) {
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
    if (sa_claim_get(sa_nats_claims(n, occ_id), occ_id, &c, NULL) == SA_OK &&
        c.state != SA_CLAIM_SENDING && c.state != SA_CLAIM_RETRYING)
        return sa_claim_state_text(&c);
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

int64_t
series_cancelled_at(struct sa_nats *n, const char *id)
{
    int64_t at = 0;

    enum sa_code rc = sa_cancelrec_get(n->js, n->cancel, id, &at, NULL);

    if (rc != SA_OK && rc != SA_EINVAL) /* none, or a keyless writer's; junk filling the */
        at = 0;                         /* history is in doubt: stopped, as the fleet reads it */
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

/* Reads series id and computes its fires: SA_ENOTFOUND if id names no series. */
static enum sa_code
load(struct sa_nats *n, const char *id, struct fires *f, struct sa_err *err)
{
    struct series_info s;
    enum sa_code rc = series_get(n, id, &s, err);

    return rc == SA_OK ? compute_fires(&s, sa_now_ms(), f, err) : rc;
}

enum sa_code
series_finished(struct sa_nats *n, const char *id, int64_t *at_ms, struct sa_err *err)
{
    struct fires f;
    enum sa_code rc = load(n, id, &f, err);

    *at_ms = rc == SA_OK ? finished_at(n, id, &f) : 0;
    return rc;
}

/* A series' state in one word: cancelled, finished, paused or active. */
static const char *
series_state(struct sa_nats *n, const char *id)
{
    char key[SA_ID_MAX + 8];
    struct fires f;

    if (series_cancelled_at(n, id))
        return "cancelled";
    if (load(n, id, &f, NULL) == SA_OK && finished_at(n, id, &f))
        return "finished";
    snprintf(key, sizeof(key), "%s%s", SA_PAUSE_PREFIX, id);
    return series_cancelled_at(n, key) ? "paused" : "active";
}

/* One series of the list: id, state, cron, zone and next fire (null if none is ahead); a
 * record that does not read gives only id and state. */
static json_t *
list_entry(struct sa_nats *n, const char *id)
{
    struct series_info s;
    json_t *ahead = json_array(), *out;
    const char *state = NULL;

    if (series_get(n, id, &s, NULL) != SA_OK ||
        series_ahead(n, id, 1, ahead, &state, NULL) != SA_OK) {
        json_decref(ahead);
        return json_pack("{s:s, s:s}", "id", id, "state", series_state(n, id));
    }
    out = json_pack(
        "{s:s, s:s, s:s, s:s, s:O}", "id", id, "state", state, "cron", s.cron, "tz", s.tz, "next",
        json_array_size(ahead) ? json_object_get(json_array_get(ahead, 0), "at") : json_null());
    json_decref(ahead);
    return out;
}

enum sa_code
series_list(struct sa_nats *n, json_t *out, struct sa_err *err)
{
    kvKeysList keys = {0};
    natsStatus s = kvStore_Keys(&keys, n->series, NULL);

    if (s == NATS_NOT_FOUND)
        return SA_OK;
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "list series");
    for (int i = 0; i < keys.Count; i++)
        json_array_append_new(out, list_entry(n, keys.Keys[i]));
    kvKeysList_Destroy(&keys);
    return SA_OK;
}

enum sa_code
series_events(struct sa_nats *n, const char *id, json_t *events, struct sa_err *err)
{
    struct series_info s;
    struct fires f;
    int64_t cancelled, done, paused;
    char key[SA_ID_MAX + 8];
    enum sa_code rc = series_get(n, id, &s, err);

    if (rc != SA_OK)
        return rc;
    /* a cancelled series' fires end at the cancel: the one then waiting is shown cancelled (or
     * as its claim says, had it gone already), later ones never existed */
    cancelled = series_cancelled_at(n, id);
    if ((rc = compute_fires(&s, cancelled ? cancelled : sa_now_ms(), &f, err)) != SA_OK)
        return rc;
    events_add(events, s.created_ms, "series",
               json_pack("{s:s, s:s, s:i}", "cron", s.cron, "tz", s.tz, "count", s.count));
    for (int i = f.k > SHOWN_MAX ? f.k - SHOWN_MAX : 0; i < f.k; i++) {
        char occ[SA_ID_MAX + 1];
        int settled;
        sa_layout_occurrence_id(occ, sizeof(occ), id, fire_at(&f, i));
        events_add(events, fire_at(&f, i), "occurrence",
                   json_pack("{s:s, s:s}", "id", occ, "state",
                             occurrence_state(n, occ, cancelled != 0, &settled)));
    }
    for (int i = 0; i < s.n_pauses; i++)
        events_add(events, s.pauses[i].at_ms,
                   s.pauses[i].paused ? "series-paused" : "series-resumed", NULL);
    snprintf(key, sizeof(key), "%s%s", SA_PAUSE_PREFIX, id);
    if (s.n_pauses == 0 && (paused = series_cancelled_at(n, key)) != 0)
        events_add(events, paused, "series-paused", NULL); /* paused before the record kept it */
    if (cancelled)
        events_add(events, cancelled, "series-cancelled", NULL);
    else if ((done = finished_at(n, id, &f)) != 0)
        events_add(events, done, "series-finished", NULL);
    events_sort(events);
    return SA_OK;
}

json_t *
series_fire_json(const char *tz, int64_t at, int flags)
{
    char local[64], utc[40];

    sa_tz_format_local(local, sizeof(local), tz, at);
    sa_time_format(utc, sizeof(utc), at);
    return json_pack("{s:s, s:s, s:s?}", "at", utc, "local", local, "dst",
                     flags & SA_CRON_GAP       ? "gap"
                     : flags & SA_CRON_OVERLAP ? "overlap"
                                               : NULL);
}

/* The DST flags of a series' first fire (its record keeps only the instant): the fire found
 * from 1 ms before it, if that is the first one. */
static int
first_flags(const struct sa_cron *c, const struct series_info *s)
{
    int64_t at;
    int flags = 0;

    if (sa_cron_next(c, s->tz, s->first_ms - 1, &at, &flags, NULL) != SA_OK || at != s->first_ms)
        flags = 0;
    return flags;
}

enum sa_code
series_ahead(struct sa_nats *n, const char *id, int max, json_t *out, const char **state,
             struct sa_err *err)
{
    struct series_info s;
    struct sa_cron *c = NULL;
    int64_t now = sa_now_ms(), at;
    int flags, shown = 0;
    enum sa_code rc = series_get(n, id, &s, err);

    *state = NULL;
    if (rc != SA_OK)
        return rc;
    *state = series_state(n, id);
    if (!strcmp(*state, "cancelled") || !strcmp(*state, "finished"))
        return SA_OK; /* nothing more will be sent */
    if ((rc = sa_cron_parse(&c, s.cron, err)) != SA_OK)
        return rc;
    at = s.first_ms;
    flags = first_flags(c, &s);
    for (int total = 0; shown < max && total < 100000; total++) {
        if ((s.count && total >= s.count) || (s.until_ms && at > s.until_ms))
            break;
        if (at > now) {
            json_array_append_new(out, series_fire_json(s.tz, at, flags));
            shown++;
        }
        if (sa_cron_next(c, s.tz, at, &at, &flags, NULL) != SA_OK)
            break;
    }
    sa_cron_free(c);
    return SA_OK;
}
