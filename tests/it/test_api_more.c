/* `sendat serve` beyond booking (issue 13): series (history and cancel), dead letters (list
 * with a cursor, show by role, replay, purge), stats, and tasks listed by due range. */
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

/* Whether events (an "events" array of doc) hold one called name. */
static int
has_event(json_t *doc, const char *name)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(doc, "events"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "event")), name))
            return 1;
    }
    return 0;
}

/* Books body as the producer; the id into id. */
static void
book(const char *body, char *id, size_t cap)
{
    json_t *doc = NULL;

    if (call("POST", "/tasks", producer, body, &doc) != 201)
        fail_msg("booking refused: %s", json_dumps(doc, 0));
    snprintf(id, cap, "%s", json_string_value(json_object_get(doc, "id")));
    json_decref(doc);
}

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
    snprintf(body, sizeof(body), "{\"cron\":\"0 7 * * *\",\"tz\":\"UTC\",\"webhook\":\"%s/never-series\"}",
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
             "{\"cron\":\"*/2 * * * * *\",\"tz\":\"UTC\",\"count\":\"2\",\"webhook\":\"%s/short-series\"}",
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
    snprintf(path, sizeof(path), "/tasks/%s", id);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    assert_true(has_event(doc, "sent"));
    json_decref(doc);
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

/* Every dead letter, page by page (limit 1): their ids joined with ' '. */
static void
all_dead(char *out, size_t cap)
{
    char path[128] = "/dead-letters?limit=1";
    json_t *doc = NULL, *next;
    size_t used = 0;

    out[0] = '\0';
    for (int pages = 0; pages < 50; pages++) {
        assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
        if (json_array_size(json_object_get(doc, "dead_letters")) == 1)
            used += (size_t)snprintf(out + used, cap - used, "%s ",
                                     json_string_value(json_object_get(
                                         json_array_get(json_object_get(doc, "dead_letters"), 0),
                                         "id")));
        next = json_object_get(doc, "next_cursor");
        if (json_is_null(next)) {
            json_decref(doc);
            return;
        }
        snprintf(path, sizeof(path), "/dead-letters?limit=1&cursor=%s", json_string_value(next));
        json_decref(doc);
    }
    fail_msg("the cursor never ended");
}

static void
test_dead_letters_paginated(void **state)
{
    char a[80], b[80], ids[4096];
    json_t *doc = NULL;

    (void)state;
    dead_letter("/page-a", a, sizeof(a));
    dead_letter("/page-b", b, sizeof(b));
    all_dead(ids, sizeof(ids));
    assert_non_null(strstr(ids, a));
    assert_non_null(strstr(ids, b));
    assert_true(strstr(ids, a) < strstr(ids, b)); /* oldest first */
    assert_int_equal(call("GET", "/dead-letters?limit=0", reader, NULL, &doc), 400);
    check_error(doc, 400, "limit");
    assert_int_equal(call("GET", "/dead-letters?cursor=x", reader, NULL, &doc), 400);
    check_error(doc, 400, "cursor");
    assert_int_equal(call("GET", "/dead-letters", NULL, NULL, NULL), 401);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_get_and_cancel),
        cmocka_unit_test(test_dead_letter_show_replay_purge),
        cmocka_unit_test(test_dead_letters_paginated),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), api_setup, api_teardown);
}
