/* The answers every route gives through (serve.h): the JSON answer and the one error shape, the
 * role check, query parameters, and the answers two routes share (a history, a cancel, a
 * booking's refusal). Apart from serve.c so that the routes and the server do not call each
 * other in a circle: serve.c calls the routes, the routes call only this. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <microhttpd.h>

#include "cancel.h"
#include "dupcheck.h"
#include "serve.h"
#include "timeparse.h"

#define TRIM_ABOVE (1024 * 1024)

void
serve_reply(struct request *r, int status, json_t *doc)
{
    free(r->answer_text);
    r->answer_text = NULL;
    json_decref(r->answer);
    r->status = status;
    r->answer = doc;
}

void
serve_reply_text(struct request *r, int status, char *text, size_t len)
{
    json_decref(r->answer);
    r->answer = NULL;
    free(r->answer_text);
    r->status = status;
    r->answer_text = text;
    r->answer_len = len;
}

void
serve_trim_after(size_t bytes)
{
    if (bytes > TRIM_ABOVE)
        malloc_trim(0);
}

int
serve_fail(struct request *r, int status, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    json_t *e;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    e = json_pack("{s:i, s:s}", "status", status, "message", msg);
    json_object_set_new(e, "field", field ? json_string(field) : json_null());
    serve_reply(r, status, json_pack("{s:o}", "error", e));
    return 0;
}

int
serve_need(struct request *r, enum token_role role)
{
    if (r->role >= role)
        return 1;
    serve_fail(r, 403, NULL, "forbidden: this needs a %s token (this one is %s)",
               tokens_role_name(role), tokens_role_name(r->role));
    return 0;
}

const char *
serve_query(struct request *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

int
serve_query_number(struct request *r, const char *name, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = serve_query(r, name);
    char *end = NULL;
    long long x;

    if (!v)
        return 1;
    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return serve_fail(r, 400, name, "%s must be a whole number from %" PRId64 " to %" PRId64,
                          name, lo, hi);
    *out = (int64_t)x;
    return 1;
}

json_t *
serve_error_object(int status, const struct sa_err *err)
{
    return json_pack("{s:i, s:s, s:o}", "status", status, "message", err->msg, "field",
                     err->field[0] ? json_string(err->field) : json_null());
}

/* The HTTP status for a booking that failed: bad input 400; an id taken by other content, or
 * used by a task no longer stored (it cannot be compared), 409; a full task stream 507 (it
 * takes work again only as tasks are sent, so there is no time to give a Retry-After); a
 * broker error 503. */
int
serve_status_for(enum sa_code rc)
{
    return rc == SA_EINVAL                            ? 400
           : rc == SA_ECONFLICT || rc == SA_ENOTFOUND ? 409
           : rc == SA_EFULL                           ? 507
                                                      : 503;
}

void
serve_history(struct request *r, const char *id, enum sa_code rc, json_t *events,
              const struct sa_err *err)
{
    if (rc == SA_OK)
        serve_reply(r, 200, json_pack("{s:s, s:O}", "id", id, "events", events));
    else if (rc == SA_ENOTFOUND)
        serve_fail(r, 404, NULL, "unknown id");
    else
        serve_fail(r, 503, NULL, "%s", err->msg);
}

void
serve_cancel_answer(struct request *r, const char *id, const struct cancel_result *res)
{
    static const char *const since[] = {[CANCEL_SENT] = "sent_at",
                                        [CANCEL_SENDING] = "sending_since",
                                        [CANCEL_SERIES_FINISHED] = "finished_at"};
    char at[40];

    sa_time_format(at, sizeof(at), res->at_ms);
    if (res->outcome == CANCEL_DONE)
        serve_reply(r, 200, json_pack("{s:s, s:s}", "id", id, "result", "cancelled"));
    else if (res->outcome == CANCEL_UNKNOWN)
        serve_fail(r, 404, NULL, "unknown id");
    else
        serve_reply(
            r, 409,
            json_pack("{s:s, s:s, s:s}", "id", id, "result", "too late", since[res->outcome], at));
}

/* The error of a refused booking; one refused because its id's task finished says which state
 * and when ("state", "at"), and until when the id is remembered ("until", null: for ever). */
json_t *
serve_gone_error(int status, const struct sa_err *err, const struct dupcheck_gone *gone)
{
    json_t *e = serve_error_object(status, err);
    char at[40], until[40];

    if (!gone->state)
        return e;
    sa_time_format(at, sizeof(at), gone->at_ms);
    sa_time_format(until, sizeof(until), gone->until_ms);
    json_object_set_new(e, "state", json_string(gone->state));
    json_object_set_new(e, "at", json_string(at));
    json_object_set_new(e, "until", gone->until_ms ? json_string(until) : json_null());
    return e;
}
