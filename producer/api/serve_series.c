/* /v1/series: the list of series, a series' history (the series and its occurrences, as
 * `sendat status` shows a series id), its cancel (no occurrence after now is sent), and pause
 * and resume. */
#include <string.h>

#include "cancel.h"
#include "series_status.h"
#include "series_stop.h"
#include "serve.h"
#include "timeparse.h"

static void
series_list_get(struct request *r)
{
    struct sa_err err = {0};
    json_t *all;

    if (!serve_need(r, TOKEN_READER))
        return;
    all = json_array();
    if (series_list(r->s->n, all, &err) != SA_OK) {
        json_decref(all);
        serve_fail(r, 503, NULL, "%s", err.msg);
        return;
    }
    serve_reply(r, 200, json_pack("{s:o}", "series", all));
}

static void
series_pause_post(struct request *r, const char *id, int pause)
{
    struct pause_result res = {0};
    struct sa_err err = {0};
    char at[40];

    if (!serve_need(r, TOKEN_PRODUCER))
        return;
    if (!sa_layout_id_valid(id)) {
        serve_fail(r, 404, NULL, "unknown id");
        return;
    }
    if (series_pause(r->s->n, id, pause, &res, &err) != SA_OK) { /* an unknown id is an outcome */
        serve_fail(r, 503, NULL, "%s", err.msg);
        return;
    }
    sa_time_format(at, sizeof(at), res.at_ms);
    if (res.outcome == PAUSE_DONE)
        serve_reply(r, 200,
                    json_pack("{s:s, s:s}", "id", id, "result", pause ? "paused" : "resumed"));
    else if (res.outcome == PAUSE_UNKNOWN)
        serve_fail(r, 404, NULL, "unknown id");
    else
        serve_reply(r, 409,
                    json_pack("{s:s, s:s, s:s}", "id", id, "result", "too late",
                              res.outcome == PAUSE_CANCELLED ? "cancelled_at" : "finished_at", at));
}

/* GET /v1/series/{id}/ahead[?n=N]: the next N (default 5, at most 100) occurrences with the
 * DST warnings of `sendat preview`, and the series' state (none ahead once cancelled or
 * finished). */
static void
series_ahead_get(struct request *r, const char *id)
{
    struct sa_err err = {0};
    int64_t max = 5;
    json_t *ahead;
    const char *state = NULL;
    enum sa_code rc;

    if (!serve_need(r, TOKEN_READER) || !serve_query_number(r, "n", 1, 100, &max))
        return;
    ahead = json_array();
    rc = sa_layout_id_valid(id) ? series_ahead(r->s->n, id, (int)max, ahead, &state, &err)
                                : SA_ENOTFOUND;
    if (rc == SA_OK)
        serve_reply(r, 200, json_pack("{s:s, s:s, s:O}", "id", id, "state", state, "ahead", ahead));
    else if (rc == SA_ENOTFOUND)
        serve_fail(r, 404, NULL, "unknown series");
    else
        serve_fail(r, 503, NULL, "%s", err.msg);
    json_decref(ahead);
}

int
serve_series_route(struct request *r)
{
    if (r->n_parts < 1 || strcmp(r->parts[0], "series") != 0)
        return 0;
    if (!strcmp(r->method, "GET") && r->n_parts == 1) {
        series_list_get(r);
        return 1;
    }
    if (!strcmp(r->method, "GET") && r->n_parts == 3 && !strcmp(r->parts[2], "ahead")) {
        series_ahead_get(r, r->parts[1]);
        return 1;
    }
    if (!strcmp(r->method, "POST") && r->n_parts == 3 &&
        (!strcmp(r->parts[2], "pause") || !strcmp(r->parts[2], "resume"))) {
        series_pause_post(r, r->parts[1], !strcmp(r->parts[2], "pause"));
        return 1;
    }
    return 0;
}

static void
series_history(struct request *r, const char *id)
{
    struct sa_err err = {0};
    json_t *events = json_array();
    enum sa_code rc = series_events(r->s->n, id, events, &err);

    serve_history(r, id, rc, events, &err);
    json_decref(events);
}

static void
series_delete(struct request *r, const char *id)
{
    struct cancel_result res;
    struct sa_err err = {0};

    if (series_cancel(r->s->n, id, &res, &err) != SA_OK)
        serve_fail(r, 503, NULL, "%s", err.msg);
    else
        serve_cancel_answer(r, id, &res);
}

void
serve_series(struct request *r)
{
    int get = !strcmp(r->method, "GET"), del = !strcmp(r->method, "DELETE");

    if (r->n_parts != 2 || !(get || del)) {
        serve_fail(r, 404, NULL, "no such resource: %s /v1/series/...", r->method);
        return;
    }
    if (!serve_need(r, get ? TOKEN_READER : TOKEN_PRODUCER))
        return;
    if (!sa_layout_id_valid(r->parts[1]) || strlen(r->parts[1]) > SA_SERIES_ID_MAX) {
        serve_fail(r, 404, NULL, "unknown id");
        return;
    }
    if (get)
        series_history(r, r->parts[1]);
    else
        series_delete(r, r->parts[1]);
}
