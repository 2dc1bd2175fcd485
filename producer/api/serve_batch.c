/* POST /v1/batches: NDJSON, one task per line, one result per line (the id, or the refusal).
 * The lines are booked by the batch booker, as `sendat schedule --batch` books them
 * (book/booker.h: PubAcks outstanding in bulk, where a round trip per line held a batch to a
 * few thousand a second; the lines that name their id checked in runs, an id whose task
 * finished refused with 409 and its state; duplicate PubAcks read back and compared). A line's
 * result is its id as soon as the booker holds it, replaced by what the booker says of it
 * later (a refusal, a failed publish, already_scheduled). Lines are booked as the body
 * arrives: only the line under way and one run are held, never the whole body, and the results
 * are kept as compact text (serve_results.h: a jansson object per line held ~570 times a junk
 * batch's size, issue 37.7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "book.h"
#include "booker.h"
#include "serve.h"
#include "serve_results.h"

#define BATCH_LINES_MAX 100000

struct serve_batch {
    struct booker *bk;
    struct serve_results *results;
    long line;
    char *part; /* the line begun in an earlier piece of the body */
    size_t part_len, part_cap;
};

static json_t *
refusal(long line, enum sa_code rc, const struct sa_err *err)
{
    return json_pack("{s:I, s:o}", "line", (json_int_t)line, "error",
                     serve_error_object(serve_status_for(rc), err));
}

/* One line: its result now (a refusal, or the id of a task the booker holds, corrected later
 * if the booker says otherwise). */
static json_t *
one_line(struct serve_batch *b, long line, const char *text)
{
    struct sa_err err = {0};
    struct sa_task *t = NULL;
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
    if (rc == SA_OK)
        rc = booker_add(b->bk, line, t, id_given, id, &err);
    if (rc != SA_OK && rc != SA_EEXIST)
        return refusal(line, rc, &err);
    res = json_pack("{s:I, s:s}", "line", (json_int_t)line, "id", id);
    if (rc == SA_EEXIST) /* a series scheduled before: nothing published */
        json_object_set_new(res, "already_scheduled", json_true());
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

/* The booker's word on a line (booker.h) put in place of its id; nothing stops the batch. */
static enum sa_code
report(void *ctx, const struct booker_outcome *o, struct sa_err *err)
{
    struct serve_results *results = ((struct serve_batch *)ctx)->results;

    (void)err;
    if (o->what == BOOKER_ALREADY)
        mark_already(results, o->line);
    else if (o->what == BOOKER_GONE)
        serve_results_set(results, o->line,
                          json_pack("{s:I, s:o}", "line", (json_int_t)o->line, "error",
                                    serve_gone_error(serve_status_for(o->rc), o->err, o->gone)));
    else if (o->what != BOOKER_SENT)
        serve_results_set(results, o->line, refusal(o->line, o->rc, o->err));
    return SA_OK;
}

int
serve_batch_begin(struct request *r)
{
    struct serve_batch *b = calloc(1, sizeof(*b));
    struct sa_err err = {0};

    if (!b)
        return serve_fail(r, 503, NULL, "no memory for a batch");
    r->batch = b;
    if (booker_new(&b->bk, r->s->n, &r->s->ring, &r->s->ring_lock, 0, report, b, &err) != SA_OK)
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
        serve_results_add(b->results, b->line, one_line(b, b->line, text), &err) != SA_OK) {
        serve_fail(r, 503, NULL, "%s", err.msg);
        return;
    }
    (void)!booker_step(b->bk, &err); /* report never stops the run */
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
    if (!r->status && booker_finish(b->bk, 1, &err) != SA_OK)
        serve_fail(r, 503, NULL, "%s", err.msg);
    if (!r->status) {
        size_t len = 0;
        char *text;
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
    booker_free(b->bk);
    held = serve_results_bytes(b->results);
    serve_results_free(b->results);
    if (b->part)
        sodium_memzero(b->part, b->part_cap); /* recipients and bodies */
    free(b->part);
    free(b);
    serve_trim_after(held);
}
