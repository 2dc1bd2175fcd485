/* /v1/series/{id}: a series' history (the series and its occurrences, as `sendat status`
 * shows a series id) and its cancel (no occurrence after now is sent). */
#include <string.h>

#include "cancel.h"
#include "serve.h"
#include "series_status.h"

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
        serve_history(r, r->parts[1], series_events);
    else
        series_delete(r, r->parts[1]);
}
