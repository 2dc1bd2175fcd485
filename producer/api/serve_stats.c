/* GET /v1/stats: what `sendat stats --json` prints (stats.c). */
#include "serve.h"
#include "stats.h"

void
serve_stats(struct request *r)
{
    struct sa_err err = {0};
    json_t *doc = NULL;

    if (!serve_need(r, TOKEN_READER))
        return;
    if (stats_collect(r->s->n, &doc, &err) == SA_OK)
        serve_reply(r, 200, doc);
    else
        serve_fail(r, 503, NULL, "%s", err.msg);
}
