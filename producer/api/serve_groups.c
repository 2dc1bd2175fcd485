/* DELETE /v1/groups/{name} (producer): cancels every task of the group not sent yet, as
 * `sendat cancel --group` does, and answers {"group", "cancelled", "too_late"}. GET
 * /v1/groups and GET /v1/groups/{name} (reader): the groups to browse (groupview.h). */
#include <string.h>

#include "group.h"
#include "groupview.h"
#include "serve.h"

#define PAGE_DEFAULT 100

/* GET /v1/groups[?limit=&cursor=] (reader): {"groups":[...],"next_cursor","truncated"}, newest
 * first; truncated: only the newest GROUPVIEW_LIST_SCAN members were read (groupview.h). */
static void
list_groups(struct request *r)
{
    struct sa_err err = {0};
    int64_t limit = PAGE_DEFAULT;
    char next[GROUPVIEW_CURSOR_MAX];
    json_t *groups;
    int truncated = 0;
    enum sa_code rc;

    if (!serve_need(r, TOKEN_READER) ||
        !serve_query_number(r, "limit", 1, GROUPVIEW_LIMIT_MAX, &limit))
        return;
    groups = json_array();
    rc = groupview_list(r->s->n, (long)limit, serve_query(r, "cursor"), groups, next, &truncated,
                        &err);
    if (rc == SA_OK) {
        serve_reply(r, 200,
                    json_pack("{s:o, s:o, s:b}", "groups", groups, "next_cursor",
                              next[0] ? json_string(next) : json_null(), "truncated", truncated));
        return;
    }
    json_decref(groups);
    serve_fail(r, rc == SA_EINVAL ? 400 : 503, rc == SA_EINVAL ? "cursor" : NULL, "%s", err.msg);
}

/* GET /v1/groups/{name}[?limit=&cursor=] (reader): the group's figures, what a cancel would do
 * and a page of its tasks; 404 for a group nobody booked. */
static void
show_group(struct request *r, const char *name)
{
    struct sa_err err = {0};
    int64_t limit = PAGE_DEFAULT;
    json_t *doc = NULL;
    enum sa_code rc;

    if (!serve_need(r, TOKEN_READER) ||
        !serve_query_number(r, "limit", 1, GROUPVIEW_LIMIT_MAX, &limit))
        return;
    rc = groupview_show(r->s->n, name, (long)limit, serve_query(r, "cursor"), &doc, &err);
    if (rc == SA_OK)
        serve_reply(r, 200, doc);
    else if (rc == SA_ENOTFOUND)
        serve_fail(r, 404, NULL, "%s", err.msg);
    else if (rc == SA_EINVAL)
        serve_fail(r, 400, err.field[0] ? err.field : "group", "%s", err.msg);
    else
        serve_fail(r, 503, NULL, "%s", err.msg);
}

int
serve_groups_route(struct request *r)
{
    struct group_result res;
    struct sa_err err = {0};
    enum sa_code rc;

    if (r->n_parts < 1 || r->n_parts > 2 || strcmp(r->parts[0], "groups") != 0)
        return 0;
    if (!strcmp(r->method, "GET")) {
        if (r->n_parts == 1)
            list_groups(r);
        else
            show_group(r, r->parts[1]);
        return 1;
    }
    if (strcmp(r->method, "DELETE") != 0 || r->n_parts != 2)
        return 0;
    if (!serve_need(r, TOKEN_PRODUCER))
        return 1;
    rc = group_cancel(r->s->n, r->parts[1], &res, &err);
    if (rc == SA_EINVAL)
        serve_fail(r, 400, "group", "%s", err.msg);
    else if (rc != SA_OK)
        serve_fail(r, 503, NULL, "%s", err.msg);
    else
        serve_reply(r, 200,
                    json_pack("{s:s, s:I, s:I}", "group", r->parts[1], "cancelled",
                              (json_int_t)res.cancelled, "too_late", (json_int_t)res.too_late));
    return 1;
}
