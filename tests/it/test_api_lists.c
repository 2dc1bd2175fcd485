/* `sendat serve` reading what is booked: tasks listed by due range (paged, by state and
 * host, the CLI's `sendat list` the same), the stats, cancelled tasks left out of lists and
 * levels (issue 28), and groups to browse with `sendat group list|show` (a page bound by the
 * claims it reads, a listing by the members it reads). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "api_client.h"
#include "check.h"
#include "layout.h"
#include "timeparse.h"

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

/* The "browse" group: one task sent (due now), three due from t0 on (browse-0..2) of which
 * browse-2 is cancelled; then a task of group "later" booked last (so listed first). */
static void
book_browse(int64_t t0)
{
    char body[512], id[80], sent_id[80];

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
    book(body, id, sizeof(id));
}

/* GET /v1/groups: newest first, browse's figures and next send (t0) in the whole list and on
 * its own page when read a page at a time. */
static void
check_groups_list(int64_t t0)
{
    json_t *doc = NULL, *g = NULL, *item;
    int64_t next = 0;
    char seen[4096];
    size_t i;

    assert_int_equal(call("GET", "/groups?limit=1", reader, NULL, &doc), 200);
    item = json_array_get(json_object_get(doc, "groups"), 0);
    assert_string_equal(json_string_value(json_object_get(item, "group")), "later");
    assert_true(json_is_string(json_object_get(doc, "next_cursor")));
    json_decref(doc);
    assert_int_equal(call("GET", "/groups", reader, NULL, &doc), 200);
    browse_seen = 0;
    json_array_foreach(json_object_get(doc, "groups"), i, item)
    {
        if (!strcmp(json_string_value(json_object_get(item, "group")), "browse"))
            g = item;
        check_browse(item);
    }
    assert_int_equal(browse_seen, 1);
    assert_int_equal(
        sa_time_parse(json_string_value(json_object_get(g, "next_send")), 0, &next, NULL), SA_OK);
    assert_int_equal(next, t0 * 1000);
    json_decref(doc);

    browse_seen = 0; /* a page at a time: every group once, browse's states read on its own page */
    all_pages("/groups?limit=1", "groups", check_browse, seen, sizeof(seen));
    assert_int_equal(browse_seen, 1);
}

/* GET /v1/groups/browse: what a cancel would do and its members, paged; an unknown group is
 * 404, no token 401. */
static void
check_group_page(void)
{
    json_t *doc = NULL;

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
}

/* `sendat group show|list` print the same, with the exit codes of the other commands. */
static void
check_group_cli(void)
{
    char out[8192], err[1024];
    json_t *doc;

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

/* Issue 28, bookings to browse: GET /v1/groups lists each group with its tasks by state and
 * next send (newest first, paged), GET /v1/groups/{name} its tasks and what a cancel would do;
 * `sendat group list|show` print the same. */
static void
test_groups_browse(void **state)
{
    int64_t t0 = time(NULL) + 4 * 3600;

    (void)state;
    book_browse(t0);
    check_groups_list(t0);
    check_group_page();
    check_group_cli();
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

/* The group members "aged-<g>.m<k>" written straight into the groups bucket, g 0..119 in turn,
 * 500 each (60,000: more than a listing reads), oldest group first. */
static void
write_aged_members(void)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    char subject[128], due[32];

    snprintf(due, sizeof(due), "%" PRId64, (int64_t)(test_now_ms() + 20 * 3600000LL));
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    for (int g = 0; g < 120; g++)
        for (int k = 0; k < 500; k++) {
            snprintf(subject, sizeof(subject), "$KV.%s.aged-%03d.m%d", SA_GROUPS_BUCKET, g, k);
            assert_int_equal(js_PublishAsync(js, subject, due, (int)strlen(due), NULL), NATS_OK);
        }
    assert_int_equal(js_PublishAsyncComplete(js, NULL), NATS_OK);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
}

/* Issue 37.8: a listing's work is bounded however many groups are booked. With 60,000 members
 * stored, GET /v1/groups (and `sendat group list`) reads only the newest 50,000 and says
 * "truncated": the newest groups are listed in full, the oldest (aged-000..019, the first
 * 10,000 members) not; GET /v1/groups/{name} still reads one group whole. */
static void
test_groups_list_scan_bound(void **state)
{
    char path[300], names[16384] = "", out[4096], err[1024], body[512], id[80];
    json_t *doc = NULL, *g;
    const char *cursor = "";
    size_t i;
    int pages = 0;

    (void)state;
    write_aged_members();
    snprintf(body, sizeof(body), "{\"at\":\"+20h\",\"webhook\":\"%s/x\",\"group\":\"fresh\"}",
             receiver_url(F.recv));
    book(body, id, sizeof(id));
    do {
        snprintf(path, sizeof(path), "/groups?limit=1000%s%s", cursor[0] ? "&cursor=" : "", cursor);
        json_decref(doc);
        assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
        assert_true(json_is_true(json_object_get(doc, "truncated")));
        json_array_foreach(json_object_get(doc, "groups"), i, g)
        {
            strncat(names, json_string_value(json_object_get(g, "group")),
                    sizeof(names) - strlen(names) - 2);
            strcat(names, " ");
        }
        cursor = json_string_value(json_object_get(doc, "next_cursor"));
        cursor = cursor ? cursor : "";
    } while (cursor[0] && ++pages < 20);
    json_decref(doc);
    assert_non_null(strstr(names, "fresh "));
    assert_non_null(strstr(names, "aged-119 "));
    assert_non_null(strstr(names, "aged-020 "));
    assert_null(strstr(names, "aged-000 "));
    assert_null(strstr(names, "aged-019 "));
    assert_int_equal(call("GET", "/groups/aged-000", reader, NULL, &doc), 200);
    assert_int_equal(json_integer_value(json_object_get(doc, "tasks")), 500);
    json_decref(doc);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "list", NULL), 0);
    assert_non_null(strstr(err, "truncated: only the newest 50000 group members were read"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tasks_by_due_range),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_cancelled_left_out),
        cmocka_unit_test(test_groups_browse),
        cmocka_unit_test(test_groups_page_claims_bound),
        cmocka_unit_test(test_groups_list_scan_bound),
        cmocka_unit_test(test_openapi_served_and_answers_match),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), api_setup, api_teardown);
}
