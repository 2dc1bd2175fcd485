/* `sendat serve` beyond booking (issue 13): series (history and cancel), dead letters (list
 * with a cursor, show by role, replay, purge), stats, and tasks listed by due range. A booking
 * under an id whose task was cancelled answers 409 with the state and when (issue 24.1). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "api_client.h"
#include "check.h"
#include "timeparse.h"

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

/* Follows the pages of first (a path with a query) by their next_cursor: the ids of the
 * items under key joined with ' ', each item checked by check (NULL: none). */
static void
all_pages(const char *first, const char *key, void (*check)(json_t *item), char *out, size_t cap)
{
    char path[512];
    json_t *doc = NULL, *next, *item;
    size_t used = 0, i;

    assert_true(snprintf(path, sizeof(path), "%s", first) < (int)sizeof(path));
    out[0] = '\0';
    for (int pages = 0; pages < 50; pages++) {
        assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
        json_array_foreach(json_object_get(doc, key), i, item)
        {
            if (check)
                check(item);
            used += (size_t)snprintf(out + used, cap - used, "%s ",
                                     json_string_value(json_object_get(item, "id")));
        }
        next = json_object_get(doc, "next_cursor");
        if (json_is_null(next)) {
            json_decref(doc);
            return;
        }
        assert_true(snprintf(path, sizeof(path), "%s&cursor=%s", first, json_string_value(next)) <
                    (int)sizeof(path));
        json_decref(doc);
    }
    fail_msg("the cursor never ended");
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

/* A listed task says when and how, never where it goes or what it carries. */
static void
check_listed(json_t *t)
{
    assert_null(json_object_get(t, "webhook"));
    assert_null(json_object_get(t, "data"));
    assert_string_equal(json_string_value(json_object_get(t, "host")), "127.0.0.1");
}

/* Tasks in four windows (10 s each here) and one after the range, booked out of order: the
 * list gives the four in due order over pages of two, the CLI the same. */
static void
test_tasks_by_due_range(void **state)
{
    static const struct {
        const char *id;
        int offset_s;
    } booked[] = {{"list-c", 35}, {"list-a", 1}, {"list-out", 120}, {"list-d", 50}, {"list-b", 15}};
    int64_t t0 = time(NULL) + 3600;
    char body[512], id[80], ids[1024], out[4096], from[32], to[32];
    json_t *doc = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(booked) / sizeof(booked[0]); i++) {
        snprintf(body, sizeof(body),
                 "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/later\",\"id\":\"%s\"}",
                 t0 + booked[i].offset_s, receiver_url(F.recv), booked[i].id);
        book(body, id, sizeof(id));
    }
    snprintf(out, sizeof(out), "/tasks?from=@%" PRId64 "&to=@%" PRId64 "&limit=2", t0, t0 + 60);
    all_pages(out, "tasks", check_listed, ids, sizeof(ids));
    assert_string_equal(ids, "list-a list-b list-c list-d ");

    snprintf(from, sizeof(from), "@%" PRId64, t0);
    snprintf(to, sizeof(to), "@%" PRId64, t0 + 60);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", from, "--to", to, NULL), 0);
    assert_true(strstr(out, "list-a") < strstr(out, "list-b"));
    assert_true(strstr(out, "list-c") < strstr(out, "list-d"));
    assert_null(strstr(out, "list-out"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", from, "--to", to,
                               "--json", NULL),
                     0);
    doc = json_loads(out, 0, NULL);
    assert_int_equal(json_array_size(json_object_get(doc, "tasks")), 4);
    json_decref(doc);
    snprintf(to, sizeof(to), "@%" PRId64, t0 + 32 * 86400);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", from, "--to", to, NULL), 2);
    /* issue 28, item 8: "now" and times back from now where a time is read back */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", "now", "--to", "+2h", NULL), 0);
    assert_non_null(strstr(out, "list-a"));
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", "-1m", "--to", "now", NULL), 0);
    assert_int_equal(call("GET", "/tasks?from=-10m&to=now", reader, NULL, &doc), 200);
    json_decref(doc);

    snprintf(body, sizeof(body), "/tasks?from=@%" PRId64 "&to=@%" PRId64, t0, t0 + 32 * 86400);
    assert_int_equal(call("GET", body, reader, NULL, &doc), 400);
    check_error(doc, 400, "to");
    assert_int_equal(call("GET", "/tasks?to=%2B1h", reader, NULL, &doc), 400);
    check_error(doc, 400, "from");
    assert_int_equal(call("GET", "/tasks?from=%2B1h&to=%2B2h&cursor=junk", reader, NULL, &doc),
                     400);
    check_error(doc, 400, "cursor");
}

static void
test_stats(void **state)
{
    char body[512], id[80];
    json_t *doc = NULL;

    (void)state;
    snprintf(body, sizeof(body), "{\"at\":\"+2h\",\"webhook\":\"%s/stats\"}", receiver_url(F.recv));
    book(body, id, sizeof(id));
    assert_int_equal(call("GET", "/stats", NULL, NULL, NULL), 401);
    assert_int_equal(call("GET", "/stats", reader, NULL, &doc), 200);
    assert_true(json_integer_value(json_object_get(doc, "tasks")) >= 1);
    assert_true(json_array_size(json_object_get(doc, "levels")) >= 1);
    assert_true(json_is_string(
        json_object_get(json_array_get(json_object_get(doc, "levels"), 0), "start")));
    assert_int_equal(json_array_size(json_object_get(doc, "members")), 1); /* the one consumer */
    assert_true(json_is_array(json_object_get(doc, "pulling")));
    assert_true(json_is_integer(json_object_get(doc, "dead_letters")));
    json_decref(doc);
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

static void
check_cancelled(json_t *t)
{
    assert_string_equal(json_string_value(json_object_get(t, "state")), "cancelled");
}

/* The stats' cancelled count and the tasks its levels hold, summed. */
static void
stats_sums(json_int_t *tasks, json_int_t *cancelled)
{
    json_t *doc = NULL, *l;
    size_t i;

    assert_int_equal(call("GET", "/stats", reader, NULL, &doc), 200);
    *tasks = 0;
    json_array_foreach(json_object_get(doc, "levels"), i, l) *tasks +=
        json_integer_value(json_object_get(l, "tasks"));
    *cancelled = json_integer_value(json_object_get(doc, "cancelled"));
    json_decref(doc);
}

/* Issue 28, item 1: after a group cancel its tasks still wait in the stream until their due
 * time, but GET /v1/tasks, `sendat list` (--json too) and the stats' levels (the console's load
 * view and capacity warnings) leave them out; the stats say how many were left out. */
static void
test_cancelled_left_out(void **state)
{
    int64_t t0 = time(NULL) + 9000; /* apart from the other tests' tasks */
    char body[512], id[80], ids[1024], out[4096], from[32], to[32];
    json_int_t tasks0, cancelled0, tasks1, cancelled1;
    json_t *doc = NULL;

    (void)state;
    stats_sums(&tasks0, &cancelled0);
    for (int i = 0; i < 4; i++) {
        snprintf(body, sizeof(body),
                 "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/promo\",\"id\":\"promo-%d\""
                 ",\"group\":\"%s\"}",
                 t0 + i, receiver_url(F.recv), i, i < 3 ? "promo-7" : "promo-8");
        book(body, id, sizeof(id));
    }
    assert_int_equal(call("DELETE", "/groups/promo-7", producer, NULL, &doc), 200);
    assert_int_equal(json_integer_value(json_object_get(doc, "cancelled")), 3);
    json_decref(doc);

    snprintf(out, sizeof(out), "/tasks?from=@%" PRId64 "&to=@%" PRId64 "&limit=2", t0, t0 + 60);
    all_pages(out, "tasks", NULL, ids, sizeof(ids));
    assert_string_equal(ids, "promo-3 ");
    snprintf(from, sizeof(from), "@%" PRId64, t0);
    snprintf(to, sizeof(to), "@%" PRId64, t0 + 60);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", from, "--to", to,
                               "--group", "promo-7", NULL),
                     0);
    assert_null(strstr(out, "promo-"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", from, "--to", to,
                               "--json", NULL),
                     0);
    assert_null(strstr(out, "promo-0"));
    assert_non_null(strstr(out, "promo-3"));

    /* marked, with a filter: state=cancelled lists them; host filters by the webhook's host */
    snprintf(out, sizeof(out), "/tasks?from=@%" PRId64 "&to=@%" PRId64 "&limit=2&state=cancelled",
             t0, t0 + 60);
    all_pages(out, "tasks", check_cancelled, ids, sizeof(ids));
    assert_string_equal(ids, "promo-0 promo-1 promo-2 ");
    snprintf(out, sizeof(out), "/tasks?from=@%" PRId64 "&to=@%" PRId64 "&host=127.0.0.1", t0,
             t0 + 60);
    all_pages(out, "tasks", NULL, ids, sizeof(ids));
    assert_string_equal(ids, "promo-3 ");
    snprintf(out, sizeof(out), "/tasks?from=@%" PRId64 "&to=@%" PRId64 "&host=example.org", t0,
             t0 + 60);
    all_pages(out, "tasks", NULL, ids, sizeof(ids));
    assert_string_equal(ids, "");
    snprintf(out, sizeof(out), "/tasks?from=@%" PRId64 "&to=@%" PRId64 "&state=sent", t0, t0 + 60);
    assert_int_equal(call("GET", out, reader, NULL, &doc), 400);
    check_error(doc, 400, "state");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", from, "--to", to,
                               "--group", "promo-7", "--state", "cancelled", NULL),
                     0);
    assert_non_null(strstr(out, " promo-0 slot webhook 127.0.0.1 cancelled\n"));

    stats_sums(&tasks1, &cancelled1);
    assert_int_equal(cancelled1 - cancelled0, 3);
    assert_int_equal(tasks1 - tasks0, 1); /* four booked, three cancelled */
}

/* Issue 28, bookings to browse: GET /v1/groups lists each group with its tasks by state and
 * next send (newest first, paged), GET /v1/groups/{name} its tasks and what a cancel would do;
 * `sendat group list|show` print the same. */
/* The "browse" group's figures, on whatever page of GET /v1/groups it comes (each page reads
 * the claims of its own groups only). */
static int browse_seen;

static void
check_browse(json_t *g)
{
    if (strcmp(json_string_value(json_object_get(g, "group")), "browse") != 0)
        return;
    browse_seen++;
    assert_int_equal(json_integer_value(json_object_get(g, "tasks")), 4);
    assert_int_equal(json_integer_value(json_object_get(g, "sent")), 1);
    assert_int_equal(json_integer_value(json_object_get(g, "waiting")), 2);
    assert_int_equal(json_integer_value(json_object_get(g, "cancelled")), 1);
}

static void
test_groups_browse(void **state)
{
    char body[512], id[80], out[8192], err[1024], sent_id[80];
    int64_t t0 = time(NULL) + 4 * 3600;
    json_t *doc = NULL, *g, *item;
    size_t i;

    (void)state;
    snprintf(body, sizeof(body), "{\"at\":\"+1s\",\"webhook\":\"%s/browse\",\"group\":\"browse\"}",
             receiver_url(F.recv));
    book(body, sent_id, sizeof(sent_id));
    for (int k = 0; k < 3; k++) {
        snprintf(body, sizeof(body),
                 "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/browse\",\"group\":\"browse\","
                 "\"id\":\"browse-%d\"}",
                 t0 + k, receiver_url(F.recv), k);
        book(body, id, sizeof(id));
    }
    assert_true(task_shows(sent_id, "sent", 30000));
    assert_int_equal(call("DELETE", "/tasks/browse-2", producer, NULL, NULL), 200);
    snprintf(body, sizeof(body), "{\"at\":\"+5h\",\"webhook\":\"%s/browse\",\"group\":\"later\"}",
             receiver_url(F.recv));
    book(body, id, sizeof(id)); /* booked last: listed first */

    assert_int_equal(call("GET", "/groups?limit=1", reader, NULL, &doc), 200);
    g = json_array_get(json_object_get(doc, "groups"), 0);
    assert_string_equal(json_string_value(json_object_get(g, "group")), "later");
    assert_true(json_is_string(json_object_get(doc, "next_cursor")));
    json_decref(doc);
    assert_int_equal(call("GET", "/groups", reader, NULL, &doc), 200);
    g = NULL;
    json_array_foreach(
        json_object_get(doc, "groups"), i,
        item) if (!strcmp(json_string_value(json_object_get(item, "group")), "browse")) g = item;
    assert_non_null(g);
    assert_int_equal(json_integer_value(json_object_get(g, "tasks")), 4);
    assert_int_equal(json_integer_value(json_object_get(g, "sent")), 1);
    assert_int_equal(json_integer_value(json_object_get(g, "waiting")), 2);
    assert_int_equal(json_integer_value(json_object_get(g, "cancelled")), 1);
    {
        int64_t next = 0;
        assert_int_equal(
            sa_time_parse(json_string_value(json_object_get(g, "next_send")), 0, &next, NULL),
            SA_OK);
        assert_int_equal(next, t0 * 1000);
    }
    json_decref(doc);

    { /* a page at a time: every group once, browse's states read on its own page */
        char seen[4096];
        browse_seen = 0;
        all_pages("/groups?limit=1", "groups", check_browse, seen, sizeof(seen));
        assert_int_equal(browse_seen, 1);
    }
    assert_int_equal(call("GET", "/groups/browse?limit=2", reader, NULL, &doc), 200);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "cancel"), "will_cancel")), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "cancel"), "already_sent")), 1);
    assert_int_equal(json_array_size(json_object_get(doc, "members")), 2);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(doc, "members"), 0), "state")),
                        "sent"); /* due first */
    assert_true(json_is_string(json_object_get(doc, "next_cursor")));
    json_decref(doc);
    assert_int_equal(call("GET", "/groups/nobody-booked", reader, NULL, &doc), 404);
    check_error(doc, 404, NULL);
    assert_int_equal(call("GET", "/groups", NULL, NULL, NULL), 401);

    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "show", "browse", NULL), 0);
    assert_non_null(strstr(out, "browse tasks=4 waiting=2 sent=1 failed=0 dead=0 cancelled=1"));
    assert_non_null(strstr(out, "cancel --group browse: 2 waiting will be cancelled; 1 already "
                                "cancelled; 1 already sent\n"));
    assert_non_null(strstr(out, " browse-2 cancelled\n"));
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "list", "--json", NULL), 0);
    doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    assert_true(json_array_size(json_object_get(doc, "groups")) >= 2);
    json_decref(doc);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "show", "nobody", NULL), 4);
    assert_string_equal(out, "unknown group\n");
    /* exit codes as the other commands: 2 a bad flag or verb, 1 the broker */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "list", "--limit", "0", NULL),
        2);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "list", "--frob", NULL), 2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "show", NULL), 2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "drop", NULL), 2);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "show", "a b", NULL), 2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "list", "--server",
                               "nats://127.0.0.1:1", NULL),
                     1);
}

/* A page of GET /v1/groups reads the claims of its own groups only, and ends before they pass
 * GROUPVIEW_PAGE_CLAIMS (20,000): "pile" (20,000 members, booked first) and "pebble" (1,
 * booked last) make two pages even with limit=2; each page's figures are right. */
static void
test_groups_page_claims_bound(void **state)
{
    char path[600], out[256], err[1024], body[512], id[80];
    json_t *doc = NULL, *g;
    FILE *f = NULL;
    const char *cursor;

    (void)state;
    snprintf(path, sizeof(path), "%s/pile.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    for (int k = 0; k < 20000; k++)
        fprintf(f,
                "{\"at\":\"+20h\",\"webhook\":\"%s/pile\",\"group\":\"pile\",\"id\":\"pile-%d\"}\n",
                receiver_url(F.recv), k);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
    snprintf(body, sizeof(body), "{\"at\":\"+20h\",\"webhook\":\"%s/pile\",\"group\":\"pebble\"}",
             receiver_url(F.recv));
    book(body, id, sizeof(id));
    assert_int_equal(call("GET", "/groups?limit=2", reader, NULL, &doc), 200);
    assert_int_equal(json_array_size(json_object_get(doc, "groups")), 1); /* cut by the claims */
    g = json_array_get(json_object_get(doc, "groups"), 0);
    assert_string_equal(json_string_value(json_object_get(g, "group")), "pebble");
    assert_int_equal(json_integer_value(json_object_get(g, "waiting")), 1);
    cursor = json_string_value(json_object_get(doc, "next_cursor"));
    assert_non_null(cursor);
    snprintf(path, sizeof(path), "/groups?limit=1&cursor=%s", cursor);
    json_decref(doc);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    g = json_array_get(json_object_get(doc, "groups"), 0);
    assert_string_equal(json_string_value(json_object_get(g, "group")), "pile");
    assert_int_equal(json_integer_value(json_object_get(g, "tasks")), 20000);
    assert_int_equal(json_integer_value(json_object_get(g, "waiting")), 20000);
    json_decref(doc);
}

/* GET /v1/openapi.json needs no token and is docs/openapi.yaml (as producer/openapi.json);
 * every JSON answer this test program got is as that document says. */
static void
test_openapi_served_and_answers_match(void **state)
{
    char source[600], served[600], cmd[2048];
    json_t *doc = NULL, *file;
    FILE *f;

    (void)state;
    snprintf(source, sizeof(source), "%s/../../producer/openapi.json", getenv("SENDAT_SUPPORT"));
    file = json_load_file(source, 0, NULL);
    assert_non_null(file);
    assert_int_equal(call("GET", "/openapi.json", NULL, NULL, &doc), 200);
    assert_true(json_equal(doc, file));
    snprintf(served, sizeof(served), "%s/openapi-served.json", F.dir);
    f = fopen(served, "w");
    assert_non_null(f);
    json_dumpf(doc, f, 0);
    fclose(f);
    json_decref(doc);
    json_decref(file);
    assert_int_equal(call("GET", "/nothing-here", reader, NULL, &doc), 404);
    check_error(doc, 404, NULL);
    snprintf(cmd, sizeof(cmd), "python3 %s/../openapi/check_responses.py %s %s",
             getenv("SENDAT_SUPPORT"), served, api_answers_path());
    int rc = system(cmd);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77)
        skip();
    assert_int_equal(rc, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_get_and_cancel),
        cmocka_unit_test(test_dead_letter_show_replay_purge),
        cmocka_unit_test(test_dead_letters_paginated),
        cmocka_unit_test(test_tasks_by_due_range),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_rebook_a_cancelled_id),
        cmocka_unit_test(test_cancelled_left_out),
        cmocka_unit_test(test_groups_browse),
        cmocka_unit_test(test_groups_page_claims_bound),
        cmocka_unit_test(test_openapi_served_and_answers_match),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), api_setup, api_teardown);
}
