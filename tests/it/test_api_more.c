/* `sendat serve` beyond booking (issue 13): series (history and cancel), dead letters (list
 * with a cursor, show by role, replay, purge), and a booking under an id whose task was
 * cancelled, answered 409 with the state and when (issue 24.1); the same batch through
 * `sendat schedule --batch` and POST /v1/batches comes out the same. Listing tasks, groups and
 * stats: test_api_lists.c. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api_client.h"
#include "check.h"

static int
series_finished(void *arg)
{
    char path[128];
    json_t *doc = NULL;
    int done;

    snprintf(path, sizeof(path), "/series/%s", (const char *)arg);
    if (call("GET", path, reader, NULL, &doc) != 200) {
        json_decref(doc);
        return 0;
    }
    done = has_event(doc, "series-finished");
    json_decref(doc);
    return done;
}

static void
test_series_get_and_cancel(void **state)
{
    char body[512], id[80], path[128];
    json_t *doc = NULL;

    (void)state;
    snprintf(body, sizeof(body),
             "{\"cron\":\"0 7 * * *\",\"tz\":\"UTC\",\"webhook\":\"%s/never-series\"}",
             receiver_url(F.recv));
    book(body, id, sizeof(id));
    snprintf(path, sizeof(path), "/series/%s", id);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    assert_true(has_event(doc, "series") && has_event(doc, "occurrence"));
    json_decref(doc);
    assert_int_equal(call("DELETE", path, reader, NULL, &doc), 403);
    check_error(doc, 403, NULL);
    assert_int_equal(call("DELETE", path, producer, NULL, &doc), 200);
    assert_string_equal(json_string_value(json_object_get(doc, "result")), "cancelled");
    json_decref(doc);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    assert_true(has_event(doc, "series-cancelled"));
    json_decref(doc);
    assert_int_equal(call("DELETE", "/series/nosuchseries", producer, NULL, &doc), 404);
    check_error(doc, 404, NULL);
    assert_int_equal(call("GET", "/series/nosuchseries", reader, NULL, &doc), 404);
    check_error(doc, 404, NULL);

    snprintf(body, sizeof(body),
             "{\"cron\":\"*/2 * * * * "
             "*\",\"tz\":\"UTC\",\"count\":\"2\",\"webhook\":\"%s/short-series\"}",
             receiver_url(F.recv));
    book(body, id, sizeof(id));
    assert_true(receiver_wait(F.recv, "/short-series", 2, 30000));
    assert_true(wait_until(series_finished, id, 30000));
    snprintf(path, sizeof(path), "/series/%s", id);
    assert_int_equal(call("DELETE", path, producer, NULL, &doc), 409);
    assert_string_equal(json_string_value(json_object_get(doc, "result")), "too late");
    assert_true(json_is_string(json_object_get(doc, "finished_at")));
    json_decref(doc);
}

static int
dead(void *arg)
{
    char path[128];

    snprintf(path, sizeof(path), "/dead-letters/%s", (const char *)arg);
    return call("GET", path, reader, NULL, NULL) == 200;
}

/* Books a task to path (answered 400 from now on) and waits until it is a dead letter. */
static void
dead_letter(const char *path, char *id, size_t cap)
{
    char body[512];

    receiver_respond(F.recv, path, 400, -1, NULL);
    snprintf(body, sizeof(body), "{\"at\":\"+1s\",\"webhook\":\"%s%s\",\"data\":\"hello\"}",
             receiver_url(F.recv), path);
    book(body, id, cap);
    assert_true(wait_until(dead, id, 30000));
}

static void
test_dead_letter_show_replay_purge(void **state)
{
    char id[80], other[80], path[160];
    json_t *doc = NULL;

    (void)state;
    dead_letter("/refused", id, sizeof(id));
    snprintf(path, sizeof(path), "/dead-letters/%s", id);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200); /* reason and attempts */
    assert_true(json_is_string(json_object_get(doc, "reason")));
    assert_true(json_is_integer(json_object_get(doc, "attempts")));
    assert_null(json_object_get(doc, "data"));
    assert_null(json_object_get(doc, "webhook"));
    json_decref(doc);
    assert_int_equal(call("GET", path, admin, NULL, &doc), 200); /* and the content */
    assert_string_equal(json_string_value(json_object_get(doc, "data")), "hello");
    assert_true(json_is_string(json_object_get(doc, "webhook")));
    json_decref(doc);

    snprintf(path, sizeof(path), "/dead-letters/%s/replay", id);
    assert_int_equal(call("POST", path, reader, NULL, &doc), 403);
    check_error(doc, 403, NULL);
    assert_int_equal(call("POST", path, producer, NULL, NULL), 403);
    assert_int_equal(call("POST", path, admin, "{\"at\":\"never\"}", &doc), 400);
    check_error(doc, 400, "at");
    receiver_respond(F.recv, "/refused", 200, -1, NULL);
    assert_int_equal(call("POST", path, admin, "{\"at\":\"+1s\"}", &doc), 200);
    assert_string_equal(json_string_value(json_object_get(doc, "result")), "replayed");
    json_decref(doc);
    assert_true(receiver_wait(F.recv, "/refused", 2, 30000)); /* refused once, then delivered */
    assert_true(task_shows(id, "sent", 10000));
    snprintf(path, sizeof(path), "/dead-letters/%s", id);
    assert_int_equal(call("GET", path, reader, NULL, NULL), 404);

    dead_letter("/refused-too", other, sizeof(other));
    snprintf(path, sizeof(path), "/dead-letters/%s", other);
    assert_int_equal(call("DELETE", path, producer, NULL, NULL), 403);
    assert_int_equal(call("DELETE", path, admin, NULL, &doc), 200);
    json_decref(doc);
    assert_int_equal(call("GET", path, reader, NULL, NULL), 404);
    assert_int_equal(call("DELETE", path, admin, NULL, &doc), 404);
    check_error(doc, 404, NULL);
}

/* The two lists name the same ids in the same order (a reader sees each reason as a class,
 * the CLI as it is). */
static void
same_ids(json_t *x, json_t *y)
{
    size_t i;
    json_t *e;

    assert_int_equal(json_array_size(x), json_array_size(y));
    json_array_foreach(x, i, e)
        assert_string_equal(json_string_value(json_object_get(e, "id")),
                            json_string_value(json_object_get(json_array_get(y, i), "id")));
}

static void
test_dead_letters_paginated(void **state)
{
    char a[80], b[80], ids[4096];
    json_t *doc = NULL;

    (void)state;
    dead_letter("/page-a", a, sizeof(a));
    dead_letter("/page-b", b, sizeof(b));
    all_pages("/dead-letters?limit=1", "dead_letters", NULL, ids, sizeof(ids));
    assert_non_null(strstr(ids, a));
    assert_non_null(strstr(ids, b));
    assert_true(strstr(ids, a) < strstr(ids, b)); /* oldest first */
    { /* issue 28, item 6: `dlq list --json` is one document, the endpoint's */
        char out[65536];
        json_t *cli = NULL, *api = NULL;
        assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "list", "--json", NULL),
                         0);
        cli = json_loads(out, 0, NULL);
        if (!cli)
            fail_msg("dlq list --json is not one JSON document: %s", out);
        assert_int_equal(call("GET", "/dead-letters", reader, NULL, &api), 200);
        same_ids(json_object_get(cli, "dead_letters"), json_object_get(api, "dead_letters"));
        assert_true(json_is_null(json_object_get(cli, "next_cursor")));
        json_decref(cli);
        json_decref(api);
    }
    assert_int_equal(call("GET", "/dead-letters?limit=0", reader, NULL, &doc), 400);
    check_error(doc, 400, "limit");
    assert_int_equal(call("GET", "/dead-letters?cursor=x", reader, NULL, &doc), 400);
    check_error(doc, 400, "cursor");
    assert_int_equal(call("GET", "/dead-letters", NULL, NULL, NULL), 401);
}

/* Booked with an id, cancelled, booked again (the same request, as a client's retry within
 * the dedupe window): 409 naming the id's state and when, never 200 already_scheduled; in a
 * batch, that line's result is a 409 error. */
static void
test_rebook_a_cancelled_id(void **state)
{
    char body[512], lines[1100];
    json_t *doc = NULL, *e;

    (void)state;
    snprintf(body, sizeof(body),
             "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/api-gone\",\"id\":\"api-gone\"}",
             test_now_ms() / 1000 + 3600, receiver_url(F.recv));
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 201);
    json_decref(doc);
    assert_int_equal(call("DELETE", "/tasks/api-gone", producer, NULL, &doc), 200);
    json_decref(doc);
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 409);
    e = json_object_get(doc, "error");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "cancelled");
    assert_true(json_is_string(json_object_get(e, "at")));
    assert_true(json_is_string(json_object_get(e, "until"))); /* the claims TTL: 7d */
    assert_non_null(strstr(json_string_value(json_object_get(e, "message")), "api-gone"));
    check_error(doc, 409, "id");
    /* in a batch: that line refused (409), the next one booked */
    snprintf(lines, sizeof(lines), "%s\n%.*s\"api-new\"}\n", body,
             (int)(strstr(body, "\"api-gone\"}") - body), body);
    assert_int_equal(call("POST", "/batches", producer, lines, &doc), 200);
    assert_int_equal(json_integer_value(json_object_get(doc, "scheduled")), 1);
    e = json_object_get(
        json_object_get(json_array_get(json_object_get(doc, "results"), 0), "error"), "status");
    assert_int_equal(json_integer_value(e), 409);
    e = json_object_get(json_array_get(json_object_get(doc, "results"), 0), "error");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "cancelled");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(doc, "results"), 1), "id")),
                        "api-new");
    json_decref(doc);
}

/* The NDJSON of test_batch_doors_agree for one door: ids under prefix so the doors do not meet.
 * Lines: 1 good (its id), 2 not JSON, 3 good (no id), 4 a series, 5 no destination, 6 line 1's
 * id with other data (taken), 7 line 1 again (already scheduled). */
static void
doors_ndjson(char *out, size_t cap, const char *prefix)
{
    const char *url = receiver_url(F.recv);
    long long at = (long long)(test_now_ms() / 1000 + 3600); /* lines 1 and 7 alike to the ms */

    snprintf(out, cap,
             "{\"at\":\"@%lld\",\"webhook\":\"%s/d\",\"data\":\"a\",\"id\":\"%s-a\"}\n"
             "not json\n"
             "{\"at\":\"+1h\",\"webhook\":\"%s/d\"}\n"
             "{\"cron\":\"0 7 * * *\",\"tz\":\"UTC\",\"webhook\":\"%s/d\",\"id\":\"%s-s\"}\n"
             "{\"at\":\"+1h\",\"data\":\"x\"}\n"
             "{\"at\":\"+1h\",\"webhook\":\"%s/d\",\"data\":\"b\",\"id\":\"%s-a\"}\n"
             "{\"at\":\"@%lld\",\"webhook\":\"%s/d\",\"data\":\"a\",\"id\":\"%s-a\"}\n",
             at, url, prefix, url, url, prefix, url, prefix, at, url, prefix);
}

#define DOOR_LINES 7

/* What `sendat schedule --batch --json` says of each line: "booked ID", "refused" or "taken",
 * and how many were already scheduled. */
static int
cli_outcomes(const json_t *sum, char lines[DOOR_LINES + 1][96])
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(sum, "ids"), i, e)
        snprintf(lines[json_integer_value(json_object_get(e, "line"))], 96, "booked %s",
                 json_string_value(json_object_get(e, "id")));
    json_array_foreach(json_object_get(sum, "refusals"), i, e)
        snprintf(lines[json_integer_value(json_object_get(e, "line"))], 96, "refused");
    json_array_foreach(json_object_get(sum, "taken"), i, e)
        snprintf(lines[json_integer_value(json_object_get(e, "line"))], 96, "%s",
                 json_string_value(json_object_get(e, "outcome")));
    return (int)json_integer_value(json_object_get(sum, "already_scheduled"));
}

/* The same of POST /v1/batches' results: an id is booked, a 400 refused, a 409 taken. */
static int
api_outcomes(const json_t *doc, char lines[DOOR_LINES + 1][96])
{
    size_t i;
    json_t *e;
    int already = 0;

    json_array_foreach(json_object_get(doc, "results"), i, e)
    {
        long line = (long)json_integer_value(json_object_get(e, "line"));
        json_int_t status =
            json_integer_value(json_object_get(json_object_get(e, "error"), "status"));
        assert_true(line >= 1 && line <= DOOR_LINES);
        already += json_is_true(json_object_get(e, "already_scheduled"));
        if (json_object_get(e, "id"))
            snprintf(lines[line], 96, "booked %s", json_string_value(json_object_get(e, "id")));
        else
            snprintf(lines[line], 96, "%s",
                     status == 400   ? "refused"
                     : status == 409 ? "taken"
                                     : "other");
    }
    return already;
}

/* The same NDJSON through both doors (the batch booker behind them, book/booker.h) comes out
 * the same line by line: the ids of the good lines and the series, the refusals, the taken id
 * and the line already scheduled. A generated id differs per run, so it is compared by shape. */
static void
test_batch_doors_agree(void **state)
{
    char body[2048], path[300], out[8192], err[8192];
    char cli[DOOR_LINES + 1][96] = {{0}}, api[DOOR_LINES + 1][96] = {{0}};
    json_t *doc = NULL, *sum;
    json_error_t jerr;
    FILE *f;
    int cli_already, api_already;

    (void)state;
    doors_ndjson(body, sizeof(body), "door");
    snprintf(path, sizeof(path), "%s/doors.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    fputs(body, f);
    fclose(f);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path,
                               "--json", NULL),
                     5); /* an id taken goes before the refusals */
    sum = json_loads(out, 0, &jerr);
    if (!sum)
        fail_msg("not JSON (%s): %s", jerr.text, out);
    cli_already = cli_outcomes(sum, cli);
    json_decref(sum);

    doors_ndjson(body, sizeof(body), "door2");
    assert_int_equal(call("POST", "/batches", producer, body, &doc), 200);
    api_already = api_outcomes(doc, api);
    json_decref(doc);

    for (int line = 1; line <= DOOR_LINES; line++) {
        char *c = cli[line], *a = api[line];
        if (line == 3) { /* generated ids: both booked, under different ids */
            assert_true(strncmp(c, "booked ", 7) == 0 && strncmp(a, "booked ", 7) == 0);
            continue;
        }
        if (!strncmp(a, "booked door2", 12)) /* the API's ids under the other prefix */
            memmove(a + 11, a + 12, strlen(a + 12) + 1);
        if (strcmp(c, a) != 0)
            fail_msg("line %d: schedule --batch says \"%s\", POST /v1/batches \"%s\"", line, c, a);
    }
    assert_string_equal(cli[1], "booked door-a");
    assert_string_equal(cli[2], "refused");
    assert_string_equal(cli[4], "booked door-s");
    assert_string_equal(cli[5], "refused");
    assert_string_equal(cli[6], "taken");
    assert_string_equal(cli[7], "booked door-a");
    assert_int_equal(cli_already, 1);
    assert_int_equal(api_already, 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_get_and_cancel),
        cmocka_unit_test(test_dead_letter_show_replay_purge),
        cmocka_unit_test(test_dead_letters_paginated),
        cmocka_unit_test(test_rebook_a_cancelled_id),
        cmocka_unit_test(test_batch_doors_agree),
        cmocka_unit_test(test_openapi_served_and_answers_match),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), api_setup, api_teardown);
}
