/* GET /v1/tasks?from=TIME&to=TIME[&group=&host=&state=&limit=N&cursor=C]: one page of the
 * tasks due in a range (tasklist.c), what `sendat list --json` prints. A page reads at most
 * WINDOW_READS windows (one direct get each when empty, per shard): a month of 10-minute windows
 * was 4,474 broker requests for one reader's request. A page that stops there ends with a
 * cursor "T." (from time T on), so the client goes on where it stopped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "tasklist.h"
#include "timeparse.h"

#define PAGE_DEFAULT 100
#define WINDOW_READS 512

/* The time parameter name into *ms: 1, or 0 after a 400 naming it. */
static int
time_param(struct request *r, const char *name, int64_t *ms)
{
    struct sa_err err = {0};
    const char *v = serve_query(r, name);

    if (!v)
        return serve_fail(r, 400, name, "%s is required (a time such as 2026-12-01T07:00:00Z)",
                          name);
    if (sa_time_parse_read(v, sa_now_ms(), ms, &err) != SA_OK)
        return serve_fail(r, 400, name, "%s: %s", name, err.msg);
    return 1;
}

/* The end of the part of [from, to] one page may read, after cursor (NULL or one we gave). */
static int64_t
page_end(const struct sa_layout *l, int64_t from, int64_t to, const char *cursor)
{
    int64_t start = cursor && *cursor ? strtoll(cursor, NULL, 10) : from;
    int64_t windows = WINDOW_READS / (l->shards > 0 ? l->shards : 1), end;

    if (start < from)
        start = from;
    end = sa_layout_window(l, start) + (windows > 0 ? windows : 1) * l->window_ms - 1;
    return end < to ? end : to;
}

void
serve_task_list(struct request *r)
{
    struct sa_err err = {0};
    int64_t from = 0, to = 0, end, limit = PAGE_DEFAULT;
    char next[TASKLIST_CURSOR_MAX];
    json_t *tasks;
    enum sa_code rc;
    struct tasklist_filter f = {serve_query(r, "group"), serve_query(r, "host"),
                                serve_query(r, "state")};

    if (!serve_need(r, TOKEN_READER) || !time_param(r, "from", &from) ||
        !time_param(r, "to", &to) || !serve_query_number(r, "limit", 1, TASKLIST_LIMIT_MAX, &limit))
        return;
    end = to - from > TASKLIST_RANGE_MAX_MS || to < from
              ? to /* tasklist_page names the fault */
              : page_end(&r->s->n->layout, from, to, serve_query(r, "cursor"));
    tasks = json_array();
    pthread_rwlock_rdlock(&r->s->ring_lock);
    rc = tasklist_page(r->s->n, r->s->ring, from, end, (long)limit, serve_query(r, "cursor"), &f, 0,
                       tasks, next, &err);
    pthread_rwlock_unlock(&r->s->ring_lock);
    if (rc == SA_OK && !next[0] && end < to) /* stopped at its reads: on from end + 1 */
        snprintf(next, sizeof(next), "%" PRId64 ".", end + 1);
    if (rc == SA_OK)
        serve_reply(r, 200,
                    json_pack("{s:o, s:o}", "tasks", tasks, "next_cursor",
                              next[0] ? json_string(next) : json_null()));
    else
        serve_fail(r, rc == SA_EINVAL ? 400 : 503, err.field[0] ? err.field : NULL, "%s", err.msg);
    if (rc != SA_OK)
        json_decref(tasks);
}
