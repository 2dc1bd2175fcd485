/* /v1/dead-letters: list (paginated by stream sequence), show, replay and purge. Readers and
 * producers see a dead letter's reason and attempts; only admin sees where it went and what
 * it carried, and only admin replays and purges. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dlq.h"
#include "dlq_write.h"
#include "serve.h"
#include "timeparse.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX 1000

/* The HTTP answer to a dead-letter operation that did not succeed. */
static void
fail_for(struct request *r, enum sa_code rc, const struct sa_err *err)
{
    if (rc == SA_ENOTFOUND)
        serve_fail(r, 404, NULL, "no dead letter has this id");
    else
        serve_fail(r, 503, NULL, "%s", err->msg);
}

static void
list(struct request *r)
{
    struct sa_err err = {0};
    int64_t limit = PAGE_DEFAULT, cursor = 0;
    uint64_t last = 0;
    json_t *page;
    enum sa_code rc;
    char next[24];

    if (!serve_query_number(r, "limit", 1, PAGE_MAX, &limit) ||
        !serve_query_number(r, "cursor", 0, INT64_MAX, &cursor))
        return;
    page = json_array();
    rc = dlq_page(r->s->n, (uint64_t)cursor, (long)limit, page, &last, &err);
    if (rc != SA_OK) {
        json_decref(page);
        fail_for(r, rc, &err);
        return;
    }
    snprintf(next, sizeof(next), "%" PRIu64, last);
    serve_reply(
        r, 200,
        json_pack("{s:o, s:o}", "dead_letters", page, "next_cursor",
                  (int64_t)json_array_size(page) == limit ? json_string(next) : json_null()));
}

static void
show(struct request *r, const char *id)
{
    struct sa_err err = {0};
    json_t *e = NULL;
    enum sa_code rc;

    pthread_rwlock_rdlock(&r->s->ring_lock);
    rc = dlq_get(r->s->n, r->s->ring, id, r->role >= TOKEN_ADMIN ? DLQ_CONTENT : 0, &e, &err);
    pthread_rwlock_unlock(&r->s->ring_lock);
    if (rc == SA_OK)
        serve_reply(r, 200, e);
    else
        fail_for(r, rc, &err);
}

/* The optional body {"at": TIME}: 1 with *at_ms (0: now), or 0 after a 400. */
static int
replay_at(struct request *r, int64_t *at_ms)
{
    struct sa_err err = {0};
    json_t *doc, *at;
    int ok = 1;

    *at_ms = 0;
    if (!r->body || r->body[strspn(r->body, " \t\r\n")] == '\0')
        return 1;
    doc = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(doc))
        ok = serve_fail(r, 400, NULL, "the body must be a JSON object such as {\"at\": \"+5m\"}");
    else if (json_object_size(doc) > 1 ||
             (json_object_size(doc) == 1 && !json_object_get(doc, "at")))
        ok = serve_fail(r, 400, NULL, "the body takes only \"at\"");
    else if ((at = json_object_get(doc, "at")) && !json_is_string(at))
        ok = serve_fail(r, 400, "at", "at must be a string");
    else if (at && sa_time_parse(json_string_value(at), sa_now_ms(), at_ms, &err) != SA_OK)
        ok = serve_fail(r, 400, "at", "%s", err.msg);
    json_decref(doc);
    return ok;
}

static void
replay(struct request *r, const char *id)
{
    struct sa_err err = {0};
    int64_t at_ms = 0;
    enum sa_code rc;

    if (!replay_at(r, &at_ms))
        return;
    pthread_rwlock_rdlock(&r->s->ring_lock);
    rc = dlq_replay(r->s->n, r->s->ring, id, at_ms, NULL, &err);
    pthread_rwlock_unlock(&r->s->ring_lock);
    if (rc == SA_OK)
        serve_reply(r, 200, json_pack("{s:s, s:s}", "id", id, "result", "replayed"));
    else
        fail_for(r, rc, &err);
}

static void
purge(struct request *r, const char *id)
{
    struct sa_err err = {0};
    enum sa_code rc = dlq_purge(r->s->n, id, &err); /* 404 for an unknown id */

    if (rc == SA_OK)
        serve_reply(r, 200, json_pack("{s:s, s:s}", "id", id, "result", "purged"));
    else
        fail_for(r, rc, &err);
}

void
serve_dead_letters(struct request *r)
{
    const char *m = r->method, *id = r->n_parts > 1 ? r->parts[1] : "";
    int get = !strcmp(m, "GET");

    if (r->n_parts == 1 && get) {
        if (serve_need(r, TOKEN_READER))
            list(r);
        return;
    }
    if (!((r->n_parts == 2 && (get || !strcmp(m, "DELETE"))) ||
          (r->n_parts == 3 && !strcmp(m, "POST") && !strcmp(r->parts[2], "replay")))) {
        serve_fail(r, 404, NULL, "no such resource: %s /v1/dead-letters/...", m);
        return;
    }
    if (!serve_need(r, get ? TOKEN_READER : TOKEN_ADMIN))
        return;
    if (!sa_layout_id_valid(id) && strncmp(id, "seq-", 4) != 0) {
        serve_fail(r, 404, NULL, "no dead letter has this id");
        return;
    }
    if (get)
        show(r, id);
    else if (r->n_parts == 3)
        replay(r, id);
    else
        purge(r, id);
}
