/* POST /v1/batches: NDJSON, one task per line, one result per line (the id, or the refusal).
 * The tasks go out with their PubAcks outstanding in bulk, as `sendat schedule --batch` does
 * (a round trip per line held a batch to a few thousand a second); a duplicate PubAck is read
 * back and compared (dupcheck.h) once every line is out, and a line whose publish failed gets
 * that error instead of its id. A series line is registered and published on its own. A line
 * that names its id waits in a run of RUN_MAX such lines, whose ids are checked at once
 * (dupcheck_gone_many: an id whose task finished is refused, 409 with its state) before they
 * are published. Lines are booked as the body arrives: only the line under way and one run
 * are held, never the whole body, and the results are kept as compact text (serve_results.h:
 * a jansson object per line held ~570 times a junk batch's size, issue 37.7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "book.h"
#include "dupcheck.h"
#include "group.h"
#include "publish.h"
#include "serve.h"
#include "serve_results.h"
#include "timeparse.h"

#define BATCH_LINES_MAX 100000
#define IN_FLIGHT 4096
#define FINISH_MS 60000
#define RUN_MAX 64

/* A sealed line that names its id, waiting for its run's check. */
struct held {
    long line;
    struct sa_task *t;
    uint8_t *env;
    size_t len;
};

struct serve_batch {
    struct publisher *pub;
    struct serve_results *results;
    long line;
    char *part; /* the line begun in an earlier piece of the body */
    size_t part_len, part_cap;
    struct held run[RUN_MAX];
    size_t n_run;
    int64_t groups_ttl_ms; /* group_ttl, read at the first grouped line; -1 before */
};

static json_t *
refusal(long line, enum sa_code rc, const struct sa_err *err)
{
    return json_pack("{s:I, s:o}", "line", (json_int_t)line, "error",
                     serve_error_object(serve_status_for(rc), err));
}

/* One line: its result now (a refusal, or the id of a task published in flight or held in b's
 * run, corrected later if its check or PubAck says otherwise). */
static json_t *
one_line(struct request *r, struct serve_batch *b, long line, const char *text)
{
    struct sa_err err = {0};
    struct sa_task *t = NULL;
    uint8_t *env = NULL;
    size_t len = 0;
    char id[SA_ID_MAX + 1];
    int id_given;
    json_error_t jerr;
    json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, &jerr), *res;
    enum sa_code rc;

    if (!obj) {
        sa_fail(&err, SA_EINVAL, "not JSON: %s", jerr.text);
        return refusal(line, SA_EINVAL, &err);
    }
    rc = book_build_json(obj, &t, &err);
    id_given = json_object_get(obj, "id") != NULL;
    json_decref(obj);
    if (rc == SA_OK && t->group[0] && b->groups_ttl_ms < 0)
        rc = group_ttl(r->s->n, &b->groups_ttl_ms, &err);
    if (rc == SA_OK)
        rc = group_fits(t, sa_now_ms(), b->groups_ttl_ms, &err);
    pthread_rwlock_rdlock(&r->s->ring_lock);
    if (rc == SA_OK && t->cron) /* a series: its registry record first, then its first task */
        rc = book_task(r->s->n, r->s->ring, t, 0, id, NULL, &err);
    else if (rc == SA_OK && (rc = sa_task_seal(r->s->ring, t, &env, &len, &err)) == SA_OK &&
             !id_given)
        rc = publisher_send(b->pub, t, env, len, sa_now_ms(), line, &err);
    pthread_rwlock_unlock(&r->s->ring_lock);
    if (rc == SA_OK || rc == SA_EEXIST)
        res =
            json_pack("{s:I, s:s}", "line", (json_int_t)line, "id", t->cron ? t->series_id : t->id);
    else
        res = refusal(line, rc, &err);
    if (rc == SA_EEXIST)
        json_object_set_new(res, "already_scheduled", json_true());
    if (rc == SA_OK && id_given && !t->cron) { /* the run owns it now */
        b->run[b->n_run++] = (struct held){line, t, env, len};
        return res;
    }
    free(env);
    sa_task_free(t);
    return res;
}

/* line's result says its task was already scheduled (a duplicate PubAck, same content). */
static void
mark_already(struct serve_results *results, long line)
{
    json_t *res = serve_results_get(results, line);

    if (!res)
        return; /* no memory: the line keeps its id */
    json_object_set_new(res, "already_scheduled", json_true());
    serve_results_set(results, line, res);
}

/* After the PubAcks: duplicates compared, failures put in place of the ids. */
static void
settle(struct request *r, struct publisher *pub, struct serve_results *results)
{
    uint64_t seq;
    natsMsg *msg;
    long line, at;
    const char *failure;

    while (publisher_next_dup(pub, &line, &seq, &msg)) {
        struct sa_err err = {0};
        enum sa_code rc;

        pthread_rwlock_rdlock(&r->s->ring_lock);
        rc = dupcheck_verify_sealed(r->s->n, r->s->ring, msg, seq, &err);
        pthread_rwlock_unlock(&r->s->ring_lock);
        if (rc == SA_OK)
            mark_already(results, line);
        else
            serve_results_set(results, line, refusal(line, rc, &err));
        natsMsg_Destroy(msg);
    }
    for (long i = 0; (failure = publisher_failure(pub, i, &at)); i++) {
        struct sa_err err = {0};
        sa_fail(&err, SA_ENATS, "not stored: %s", failure);
        serve_results_set(results, at, refusal(at, SA_ENATS, &err));
    }
}

static void
drop_held(struct held *h)
{
    if (h->env)
        sodium_memzero(h->env, h->len);
    free(h->env);
    sa_task_free(h->t);
    *h = (struct held){0};
}

/* Checks the ids of the run at once, then publishes those that are free; the others' results
 * become their refusals. */
static void
flush_run(struct request *r, struct serve_batch *b)
{
    struct gone_ask *asks = calloc(RUN_MAX, sizeof(*asks));
    struct sa_err err = {0};
    enum sa_code rc = asks ? SA_OK : sa_fail(&err, SA_ENOMEM, "no memory to check a batch's ids");

    for (size_t i = 0; asks && i < b->n_run; i++)
        asks[i] = (struct gone_ask){.id = b->run[i].t->id, .booked_ms = b->run[i].t->created_ms};
    if (rc == SA_OK)
        rc = dupcheck_gone_many(r->s->n, asks, b->n_run, &err);
    for (size_t i = 0; i < b->n_run; i++) {
        struct held *h = &b->run[i];
        struct sa_err perr = {0};
        enum sa_code prc = rc;

        if (rc != SA_OK)
            serve_results_set(b->results, h->line, refusal(h->line, rc, &err));
        else if (asks[i].rc != SA_OK)
            serve_results_set(b->results, h->line,
                              json_pack("{s:I, s:o}", "line", (json_int_t)h->line, "error",
                                        serve_gone_error(serve_status_for(asks[i].rc), &asks[i].err,
                                                         &asks[i].gone)));
        else if ((prc = publisher_send(b->pub, h->t, h->env, h->len, sa_now_ms(), h->line,
                                       &perr)) != SA_OK)
            serve_results_set(b->results, h->line, refusal(h->line, prc, &perr));
        drop_held(h);
    }
    b->n_run = 0;
    free(asks);
}

int
serve_batch_begin(struct request *r)
{
    struct serve_batch *b = calloc(1, sizeof(*b));
    struct sa_err err = {0};

    if (!b)
        return serve_fail(r, 503, NULL, "no memory for a batch");
    r->batch = b;
    b->groups_ttl_ms = -1;
    if (publisher_new(&b->pub, r->s->n, IN_FLIGHT, &err) != SA_OK)
        return serve_fail(r, 503, NULL, "%s", err.msg);
    if (serve_results_new(&b->results, &err) != SA_OK)
        return serve_fail(r, 503, NULL, "%s", err.msg);
    return 1;
}

/* One complete line (NUL-terminated, its newline gone). */
static void
take_line(struct request *r, struct serve_batch *b, const char *text)
{
    struct sa_err err = {0};

    if (r->status)
        return;
    if (++b->line > BATCH_LINES_MAX) {
        serve_fail(r, 413, NULL, "a batch holds at most %d lines", BATCH_LINES_MAX);
        return;
    }
    if (text[strspn(text, " \t\r")] != '\0' &&
        serve_results_add(b->results, b->line, one_line(r, b, b->line, text), &err) != SA_OK) {
        serve_fail(r, 503, NULL, "%s", err.msg);
        return;
    }
    if (b->n_run == RUN_MAX)
        flush_run(r, b);
}

/* Adds len bytes to the line held over; 0 after a 413 if one line passes SERVE_BODY_MAX. */
static int
hold(struct request *r, struct serve_batch *b, const char *data, size_t len)
{
    char *grown;

    if (b->part_len + len > SERVE_BODY_MAX)
        return serve_fail(r, 413, NULL, "line %ld is larger than %d bytes", b->line + 1,
                          SERVE_BODY_MAX);
    if (b->part_len + len + 1 > b->part_cap) { /* grows to the longest line, then stays */
        size_t cap = (b->part_len + len + 1) * 2;
        if (!(grown = realloc(b->part, cap)))
            return serve_fail(r, 503, NULL, "no memory for a batch line");
        b->part = grown;
        b->part_cap = cap;
    }
    memcpy(b->part + b->part_len, data, len);
    b->part_len += len;
    b->part[b->part_len] = '\0';
    return 1;
}

void
serve_batch_feed(struct request *r, const char *data, size_t len)
{
    struct serve_batch *b = r->batch;
    const char *nl;

    while (!r->status && len > 0 && (nl = memchr(data, '\n', len))) {
        if (!hold(r, b, data, (size_t)(nl - data)))
            return;
        take_line(r, b, b->part);
        sodium_memzero(b->part, b->part_len);
        b->part_len = 0;
        len -= (size_t)(nl - data) + 1;
        data = nl + 1;
    }
    if (!r->status && len > 0)
        hold(r, b, data, len);
}

void
serve_batch(struct request *r)
{
    struct serve_batch *b = r->batch;
    struct sa_err err = {0};

    if (!serve_need(r, TOKEN_PRODUCER))
        return;
    if (!b && !serve_batch_begin(r))
        return;
    b = r->batch;
    if (b->part_len > 0) /* the last line, without a newline */
        take_line(r, b, b->part);
    if (!r->status)
        flush_run(r, b);
    if (!r->status && publisher_finish(b->pub, FINISH_MS, &err) != SA_OK)
        serve_fail(r, 503, NULL, "%s", err.msg);
    if (!r->status) {
        size_t len = 0;
        char *text;
        settle(r, b->pub, b->results);
        if ((text = serve_results_answer(b->results, &len)))
            serve_reply_text(r, 200, text, len);
        else
            serve_fail(r, 503, NULL, "no memory for a batch's answer");
    }
}

void
serve_batch_free(struct serve_batch *b)
{
    size_t held;

    if (!b)
        return;
    for (size_t i = 0; i < b->n_run; i++)
        drop_held(&b->run[i]);
    held = serve_results_bytes(b->results);
    serve_results_free(b->results);
    publisher_free(b->pub);
    if (b->part)
        sodium_memzero(b->part, b->part_cap); /* recipients and bodies */
    free(b->part);
    free(b);
    serve_trim_after(held);
}
