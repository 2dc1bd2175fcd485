/* DELETE /v1/groups/{name} (producer): cancels every task of the group not sent yet, as
 * `sendat cancel --group` does, and answers {"group", "cancelled", "too_late"}. */
#include <string.h>

#include "group.h"
#include "serve.h"

int
serve_groups_route(struct request *r)
{
    struct group_result res;
    struct sa_err err = {0};
    enum sa_code rc;

    if (strcmp(r->method, "DELETE") != 0 || r->n_parts != 2 || strcmp(r->parts[0], "groups") != 0)
        return 0;
    if (r->role < TOKEN_PRODUCER)
        return serve_fail(r, 403, NULL, "forbidden"), 1;
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
