/* A series is found by its registry record; its occurrences are computed from the cron and
 * zone (derive rather than store) and each one's state comes from its claim. */
#include <stdio.h>
#include <string.h>

#include "claim.h"
#include "cli.h"
#include "cron.h"
#include "find.h"
#include "series.h"
#include "series_status.h"
#include "timeparse.h"

#define SHOWN_MAX 50

int
series_cancel(struct sa_nats *n, const char *id, int *found)
{
    struct series_info s;
    struct sa_err err = {0};
    char now[40];
    uint64_t rev;
    enum sa_code rc = series_get(n, id, &s, &err);

    *found = rc == SA_OK;
    if (rc == SA_ENOTFOUND)
        return EXIT_UNKNOWN;
    if (rc != SA_OK)
        return cli_error(EXIT_FAIL, "cancel: %s", err.msg);
    sa_time_format(now, sizeof(now), sa_now_ms());
    if (kvStore_PutString(&rev, n->cancel, id, now) != NATS_OK)
        return cli_error(EXIT_FAIL, "cancel: the cancel map did not take %s", id);
    puts("cancelled");
    return EXIT_OK;
}

static const char *
occurrence_state(struct sa_nats *n, const char *occ_id)
{
    struct sa_claim c;
    natsMsg *m = NULL;

    if (sa_claim_get(n->claims, occ_id, &c, NULL) == SA_OK)
        return sa_claim_state_name(c.state);
    if (find_task(n, occ_id, &m, NULL) == SA_OK) {
        natsMsg_Destroy(m);
        return "waiting";
    }
    return "not yet scheduled";
}

static void
add(json_t *events, int64_t at, const char *name, json_t *fields)
{
    char text[40];

    sa_time_format(text, sizeof(text), at);
    json_object_set_new(fields, "at", json_string(text));
    json_object_set_new(fields, "at_ms", json_integer(at));
    json_object_set_new(fields, "event", json_string(name));
    json_array_append_new(events, fields);
}

int
series_events(struct sa_nats *n, const char *id, json_t *events, int *found)
{
    struct series_info s;
    struct sa_cron *c = NULL;
    struct sa_err err = {0};
    int64_t at, now = sa_now_ms(), fires[SHOWN_MAX];
    int flags, k = 0, total = 0;
    kvEntry *cancelled = NULL;
    enum sa_code rc = series_get(n, id, &s, &err);

    *found = rc == SA_OK;
    if (rc != SA_OK)
        return rc == SA_ENOTFOUND ? EXIT_OK : cli_error(EXIT_FAIL, "status: %s", err.msg);
    add(events, s.created_ms, "series", json_pack("{s:s, s:s, s:i}", "cron", s.cron, "tz", s.tz, "count", s.count));
    if (kvStore_Get(&cancelled, n->cancel, id) == NATS_OK)
        add(events, now, "series-cancelled", json_object());
    kvEntry_Destroy(cancelled);
    if (sa_cron_parse(&c, s.cron, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "status: %s", err.msg);
    /* the last SHOWN_MAX occurrences up to the first one still ahead */
    for (at = s.first_ms; total < 100000 && (!s.count || total < s.count) && (!s.until_ms || at <= s.until_ms); total++) {
        fires[k++ % SHOWN_MAX] = at;
        if (at > now || sa_cron_next(c, s.tz, at, &at, &flags, NULL) != SA_OK)
            break;
    }
    for (int i = k > SHOWN_MAX ? k - SHOWN_MAX : 0; i < k; i++) {
        char occ[SA_ID_MAX + 1];
        sa_layout_occurrence_id(occ, sizeof(occ), id, fires[i % SHOWN_MAX]);
        add(events, fires[i % SHOWN_MAX], "occurrence",
            json_pack("{s:s, s:s}", "id", occ, "state", occurrence_state(n, occ)));
    }
    sa_cron_free(c);
    return EXIT_OK;
}
