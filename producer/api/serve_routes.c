/* The routes of `sendat serve` under /v1. Roles: reader reads, producer also books and
 * cancels, admin also replays and purges dead letters. Field names are those of the NDJSON
 * batch lines, and a task's history is what `sendat status --json` prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "cancel.h"
#include "netpolicy.h"
#include "serve.h"
#include "status.h"
#include "timeparse.h"

/* What a reader is told of a failed send: one class for every way a connection can fail
 * ("connect failed", "bad response", "HTTP 404" told a reader which internal ports are
 * open). The address policy's refusal and an expiry name nothing and stay. */
static const char *
reader_class(const char *text)
{
    static const char *const kept[] = {SA_NETPOLICY_REFUSED, "expired", NULL};

    for (int i = 0; kept[i]; i++)
        if (!strncmp(text, kept[i], strlen(kept[i])))
            return text;
    return "delivery failed";
}

/* Rewrites every string "error" and "reason" in doc (any depth) into its reader class;
 * "gave up after N attempts: " stays in front. */
void
serve_redact_for_reader(json_t *doc)
{
    const char *key, *text, *rest;
    char buf[96];
    json_t *v;
    size_t i;
    int n = 0;

    if (json_is_array(doc))
        json_array_foreach(doc, i, v) serve_redact_for_reader(v);
    if (!json_is_object(doc))
        return;
    json_object_foreach(doc, key, v)
    {
        if (!json_is_string(v) || (strcmp(key, "error") && strcmp(key, "reason"))) {
            serve_redact_for_reader(v);
            continue;
        }
        text = json_string_value(v);
        rest = sscanf(text, "gave up after %*d attempts: %n", &n) == 0 && n > 0 ? text + n : text;
        snprintf(buf, sizeof(buf), "%.*s%s", (int)(rest - text), text, reader_class(rest));
        json_string_set(v, buf);
    }
}

static void
task_create(struct request *r)
{
    struct dupcheck_gone gone = {0};
    struct sa_err err = {0};
    char id[SA_ID_MAX + 1];
    json_error_t jerr;
    json_t *obj;
    enum sa_code rc;

    if (!serve_need(r, TOKEN_PRODUCER))
        return;
    obj = json_loadb(r->body ? r->body : "", r->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj) {
        serve_fail(r, 400, NULL, "the body is not JSON: %s", jerr.text);
        return;
    }
    pthread_rwlock_rdlock(&r->s->ring_lock);
    rc = book_json(r->s->n, r->s->ring, obj, id, &gone, &err);
    pthread_rwlock_unlock(&r->s->ring_lock);
    json_decref(obj);
    if (rc == SA_OK)
        serve_reply(r, 201, json_pack("{s:s}", "id", id));
    else if (rc == SA_EEXIST) /* the very same task or series: booked once */
        serve_reply(r, 200, json_pack("{s:s, s:b}", "id", id, "already_scheduled", 1));
    else
        serve_reply(
            r, serve_status_for(rc),
            json_pack("{s:o}", "error", serve_gone_error(serve_status_for(rc), &err, &gone)));
}

/* The caller's role and token name: the console shows only the buttons the role may use. */
static void
whoami(struct request *r)
{
    if (serve_need(r, TOKEN_READER))
        serve_reply(r, 200,
                    json_pack("{s:s, s:s}", "role", tokens_role_name(r->role), "name", r->who));
}

static void
task_get(struct request *r, const char *id)
{
    struct sa_err err = {0};
    json_t *events;
    enum sa_code rc;

    if (!serve_need(r, TOKEN_READER))
        return;
    if (!sa_layout_id_valid(id)) {
        serve_fail(r, 404, NULL, "unknown id");
        return;
    }
    events = json_array();
    pthread_rwlock_rdlock(&r->s->ring_lock); /* the held ring opens a waiting copy */
    rc = status_collect(r->s->n, r->s->ring, id, events, &err);
    pthread_rwlock_unlock(&r->s->ring_lock);
    serve_history(r, id, rc, events, &err);
    json_decref(events);
}

static void
task_delete(struct request *r, const char *id)
{
    struct cancel_result res;
    struct sa_err err = {0};

    if (!serve_need(r, TOKEN_PRODUCER))
        return;
    if (!sa_layout_id_valid(id)) {
        serve_fail(r, 404, NULL, "unknown id");
        return;
    }
    if (cancel_run(r->s->n, id, &res, &err) != SA_OK) {
        serve_fail(r, 503, NULL, "%s", err.msg);
        return;
    }
    serve_cancel_answer(r, id, &res);
}

static int
is(const struct request *r, const char *method, int n_parts, const char *first)
{
    return !strcmp(r->method, method) && r->n_parts == n_parts &&
           (!first || (n_parts > 0 && !strcmp(r->parts[0], first)));
}

void
serve_route(struct request *r)
{
    if (serve_series_route(r) || serve_groups_route(r))
        ; /* serve_series.c: the list, a series' occurrences ahead, pause and resume;
           * serve_groups.c: a group's cancel */
    else if (is(r, "POST", 1, "tasks"))
        task_create(r);
    else if (is(r, "POST", 1, "batches"))
        serve_batch(r);
    else if (is(r, "GET", 2, "tasks"))
        task_get(r, r->parts[1]);
    else if (is(r, "DELETE", 2, "tasks"))
        task_delete(r, r->parts[1]);
    else if (is(r, "GET", 1, "tasks"))
        serve_task_list(r);
    else if (is(r, "GET", 1, "stats"))
        serve_stats(r);
    else if (is(r, "GET", 1, "whoami"))
        whoami(r);
    else if (r->n_parts >= 1 && !strcmp(r->parts[0], "series"))
        serve_series(r);
    else if (r->n_parts >= 1 && !strcmp(r->parts[0], "dead-letters"))
        serve_dead_letters(r);
    else
        serve_fail(r, 404, NULL, "no such resource: %s /v1/%s%s", r->method,
                   r->n_parts ? r->parts[0] : "", r->n_parts > 1 ? "/..." : "");
}
