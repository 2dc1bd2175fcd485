/* `sendat status` tells the truth (issue 12): the due time first, then every event at the time
 * it happened, in time order; nothing "waiting" after a cancel; a replay called a replay; a
 * series that finished or was cancelled named so, with its own time, and a finished series
 * cannot be cancelled. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"
#include "timeparse.h"

static struct fx F;

/* Checks the shape of a status text: a "due" line first, then lines in time order, none
 * stamped after the query; returns the number of lines. */
static int
check_order(const char *text, int64_t queried_ms)
{
    char line[1024], when[40];
    const char *p = text;
    int64_t prev = 0, at;
    int n = 0;
    struct sa_err err = {0};

    while (*p) {
        size_t len = strcspn(p, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)len, p);
        p += len + (p[len] == '\n');
        assert_int_equal(sscanf(line, "%39s", when), 1);
        if (sa_time_parse(when, 0, &at, &err) != SA_OK)
            fail_msg("line without a time: %s", line);
        if (n == 0 && !strstr(line, " due"))
            fail_msg("the first line is not the due time: %s", line);
        if (n > 0 && at < prev)
            fail_msg("out of time order: %s", line);
        if (n > 0 && at > queried_ms)
            fail_msg("stamped after the query (%" PRId64 " ms): %s", at - queried_ms, line);
        if (n > 0)
            prev = at;
        n++;
    }
    return n;
}

static void
wait_status(const char *id, const char *needle)
{
    assert_true(fx_status_says(&F, id, needle, 60000));
}

static void
status_of(const char *id, char *out, size_t cap)
{
    int64_t queried = test_now_ms() + 1; /* times are printed to the millisecond */

    assert_int_equal(fx_sendat(&F, out, cap, NULL, 0, "status", id, NULL), 0);
    check_order(out, queried + 1000);
}

static void
test_task_lines_in_order_and_no_waiting_after_cancel(void **state)
{
    char id[SA_ID_MAX + 1], out[16384];

    (void)state;
    assert_int_equal(fx_schedule(&F, test_now_ms() + 60000, "/later", id, sizeof(id)), 0);
    status_of(id, out, sizeof(out));
    assert_non_null(strstr(out, " waiting level=\"slot\"")); /* booked straight into it */
    /* issue 28, item 7: the level's start as a time, not epoch milliseconds */
    assert_non_null(strstr(out, " waiting level=\"slot\" from=\"20"));
    assert_null(strstr(out, "from=1"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", id, NULL), 0);
    status_of(id, out, sizeof(out));
    assert_non_null(strstr(out, " cancelled consumer=\"sendat cancel\""));
    assert_null(strstr(out, "waiting"));
    assert_null(strstr(out, "attempt=0"));
}

static void
test_replay_is_called_a_replay(void **state)
{
    char id[SA_ID_MAX + 1], out[16384];

    (void)state;
    receiver_respond(F.recv, "/refused", 400, 1, NULL); /* permanent: a dead letter at once */
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/refused", id, sizeof(id)), 0);
    wait_status(id, "dead-lettered");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "replay", id, NULL), 0);
    wait_status(id, " sent ");
    status_of(id, out, sizeof(out));
    assert_non_null(strstr(out, " replayed consumer=\"sendat dlq replay\""));
    /* issue 28, item 7: a replay is no error */
    assert_non_null(strstr(out, "note=\"replayed from the dead-letter stream\""));
    assert_null(strstr(out, "error=\"replayed"));
    assert_null(strstr(out, "attempt=0"));
}

static void
test_series_finished_and_cancelled(void **state)
{
    char done[SA_ID_MAX + 1], running[SA_ID_MAX + 1], out[16384], url[300];

    (void)state;
    snprintf(url, sizeof(url), "%s/series", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, done, sizeof(done), NULL, 0, "schedule", "--cron", "* * * * * *",
                               "--tz", "UTC", "--count", "2", "--webhook", url, NULL),
                     0);
    done[strcspn(done, "\n")] = '\0';
    assert_int_equal(fx_sendat(&F, running, sizeof(running), NULL, 0, "schedule", "--cron",
                               "0 0 1 1 *", "--tz", "UTC", "--webhook", url, NULL),
                     0);
    running[strcspn(running, "\n")] = '\0';

    wait_status(done, "series-finished");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", done, NULL), 3);
    assert_non_null(strstr(out, "too late: the series finished at "));

    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", running, NULL), 0);
    wait_until_ms(test_now_ms() + 1500, 10000); /* the cancel's time must differ from the query's */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", running, NULL), 0);
    assert_non_null(strstr(out, "series-cancelled"));
    assert_non_null(strstr(out, "state=\"cancelled\""));
    assert_null(strstr(out, "state=\"waiting\""));
    {
        char when[40];
        int64_t at = 0;
        const char *line = strstr(out, "series-cancelled");
        while (line > out && line[-1] != '\n')
            line--;
        assert_int_equal(sscanf(line, "%39s", when), 1);
        assert_int_equal(sa_time_parse(when, 0, &at, NULL), SA_OK);
        assert_true(at < test_now_ms() - 1000); /* the cancel's time, not the query's */
    }
}

/* The time of the n-th event called name (its "at_ms"), -1 if there is none. */
static int64_t
event_at(json_t *events, const char *name, int nth)
{
    size_t i;
    json_t *e;

    json_array_foreach(events, i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "event")), name) && nth-- == 0)
            return json_integer_value(json_object_get(e, "at_ms"));
    }
    return -1;
}

/* A send that failed twice before it went through: dispatch lateness is the first attempt's,
 * delivery lateness runs to the receiver's acceptance of the third. */
static void
test_dispatch_and_delivery_lateness(void **state)
{
    char id[SA_ID_MAX + 1], out[16384], *metrics = malloc(FX_BODY_MAX);
    json_t *doc, *events, *sent;
    int64_t due, dispatch, delivery;

    (void)state;
    receiver_respond(F.recv, "/flaky", 503, 2, NULL);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/flaky", id, sizeof(id)), 0);
    wait_status(id, " sent ");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", id, "--json", NULL), 0);
    doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    events = json_object_get(doc, "events");
    due = event_at(events, "due", 0);
    sent = json_array_get(events, json_array_size(events) - 1);
    assert_string_equal(json_string_value(json_object_get(sent, "event")), "sent");
    dispatch = json_integer_value(json_object_get(sent, "lateness_ms"));
    delivery = json_integer_value(json_object_get(sent, "delivery_lateness_ms"));
    assert_true(dispatch <= event_at(events, "failed", 0) - due); /* the first attempt's start */
    assert_true(delivery >= event_at(events, "failed", 1) - due); /* after the second failure */
    assert_true(delivery > dispatch);
    assert_true(json_is_integer(json_object_get(sent, "http_status"))); /* a webhook's */
    assert_null(json_object_get(sent, "smtp_status"));
    json_decref(doc);
    assert_int_equal(fx_consumer_get(&F, 0, "/metrics", metrics), 200);
    assert_non_null(strstr(metrics, "sendat_delivery_lateness_seconds_count "));
    assert_non_null(strstr(metrics, "sendat_lateness_seconds_count "));
    free(metrics);
}

/* A dead letter after the last attempt lists every attempt, the last one too, and --full shows
 * what it would have sent. */
static void
test_dead_letter_shows_every_attempt(void **state)
{
    char id[SA_ID_MAX + 1], out[16384], attempts[16];
    const char *at;
    int lines = 0;

    (void)state;
    receiver_respond(F.recv, "/always-fails", 503, -1, NULL);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 500, "/always-fails", id, sizeof(id)), 0);
    wait_status(id, "dead-lettered");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", id, NULL), 0);
    at = strstr(out, "attempts=");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "attempts=%15[0-9]", attempts), 1);
    for (const char *p = strstr(out, "  attempt "); p; p = strstr(p + 1, "  attempt "))
        lines++;
    assert_int_equal(lines, atoi(attempts));
    assert_null(strstr(out, "  data: "));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", id, "--full", NULL),
                     0);
    assert_non_null(strstr(out, "  data: "));
}

/* sendat list: a group's tasks only with --group, their content only with --full. */
static void
test_list_by_group_and_full(void **state)
{
    char out[8192], url[300], id[3][SA_ID_MAX + 1];

    (void)state;
    snprintf(url, sizeof(url), "%s/listed", receiver_url(F.recv));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fx_sendat(&F, id[i], sizeof(id[i]), NULL, 0, "schedule", "--at", "+1h",
                                   "--webhook", url, "--data", "secret-body", "--group",
                                   i < 2 ? "listgroup" : "othergroup", NULL),
                         0);
        id[i][strcspn(id[i], "\n")] = '\0';
    }
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", "+50m", "--to",
                               "+70m", "--group", "listgroup", NULL),
                     0);
    assert_non_null(strstr(out, id[0]));
    assert_non_null(strstr(out, id[1]));
    assert_null(strstr(out, id[2]));
    assert_null(strstr(out, "secret-body"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", "+50m", "--to",
                               "+70m", "--group", "listgroup", "--full", NULL),
                     0);
    assert_non_null(strstr(out, "secret-body"));
}

/* Issue 28, item 5: `list --full` prints a body as it will be sent (UTF-8 and quotes as they
 * are, a control byte as \xNN) and says where it cut a long one. */
static void
test_list_full_prints_bodies_as_sent(void **state)
{
    static char out[65536];
    char url[300], path[300], id[SA_ID_MAX + 1];
    FILE *f;

    (void)state;
    snprintf(url, sizeof(url), "%s/shown", receiver_url(F.recv));
    snprintf(path, sizeof(path), "%s/big.json", F.dir);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 256 * 1024; i++)
        fputc('a' + i % 26, f);
    fclose(f);
    assert_int_equal(fx_sendat(&F, id, sizeof(id), NULL, 0, "schedule", "--at", "+3h", "--webhook",
                               url, "--data", "{\"name\":\"김 \\\"K\\\"\",\"bell\":\"\a\"}",
                               "--group", "shown", NULL),
                     0);
    assert_int_equal(fx_sendat(&F, id, sizeof(id), NULL, 0, "schedule", "--at", "+3h", "--webhook",
                               url, "--data-file", path, "--group", "shown", NULL),
                     0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "list", "--from", "+170m", "--to",
                               "+190m", "--group", "shown", "--full", NULL),
                     0);
    if (!strstr(out, " data: {\"name\":\"김 \\\"K\\\"\",\"bell\":\"\\x07\"}\n"))
        fail_msg("the body is not printed as sent:\n%.2000s", out);
    assert_non_null(strstr(out, "data cut here: 4096 of 262144 bytes shown"));
}

/* A second consumer on a port already taken stops at once and names the variable to set. */
static void
test_health_port_in_use_is_a_clear_error(void **state)
{
    char addr[64], out[256], err[2048];
    char *argv[] = {(char *)fx_consumer_bin(), NULL};
    char *env[] = {F.env_url, F.env_key, addr, NULL};
    int port = 0;

    (void)state;
    for (int i = 0; i < 200 && !(port = fx_consumer_port(&F, 0)); i++)
        wait_until_ms(test_now_ms() + 50, 1000);
    assert_true(port > 0);
    snprintf(addr, sizeof(addr), "SENDAT_HTTP_ADDR=127.0.0.1:%d", port);
    assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 30000), 2);
    assert_non_null(strstr(err, "in use"));
    assert_non_null(strstr(err, "set SENDAT_HTTP_ADDR"));
}

/* An error is said once, in sendat's words: no nats.c source location, no repeated text. */
static void
test_errors_name_no_library_location(void **state)
{
    char out[256], err[1024];
    const char *first;

    (void)state;
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "status", "--server",
                               "nats://127.0.0.1:1", "some-id", NULL),
                     1);
    first = strstr(err, "No server available");
    assert_non_null(first);
    assert_null(strstr(first + 1, "No server available"));
    assert_null(strstr(err, ".c:"));
}

/* The Sendat-Scheduled header is not sealed: a copy published with a forged one ("5", which
 * read as 1970-01-01, or junk) shows the copy's stream time, never 1970. */
static void
test_forged_scheduled_header_is_not_believed(void **state)
{
    char id[SA_ID_MAX + 1], out[16384], filter[SA_SUBJECT_MAX], stream[32];
    static const char *forged[] = {"5", "junk", "-1", "99999999999999"};
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    natsMsg *old = NULL, *copy = NULL;
    jsDirectGetMsgOptions o;

    (void)state;
    assert_int_equal(fx_schedule(&F, test_now_ms() + 120000, "/forged", id, sizeof(id)), 0);
    assert_int_equal(natsd_connect(&nc, F.srv.url, NULL, NULL), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    sa_layout_stream(stream, sizeof(stream), 0);
    sa_layout_id_filter(filter, sizeof(filter), 0, id);
    jsDirectGetMsgOptions_Init(&o);
    o.LastBySubject = filter;
    assert_int_equal(js_DirectGetMsg(&old, js, stream, NULL, &o), NATS_OK);
    for (size_t i = 0; i < sizeof(forged) / sizeof(*forged); i++) {
        assert_int_equal(natsMsg_Create(&copy, natsMsg_GetSubject(old), NULL, natsMsg_GetData(old),
                                        natsMsg_GetDataLength(old)),
                         NATS_OK);
        assert_int_equal(natsMsgHeader_Set(copy, "Sendat-Scheduled", forged[i]), NATS_OK);
        assert_int_equal(js_PublishMsg(NULL, js, copy, NULL, NULL), NATS_OK);
        natsMsg_Destroy(copy);
        status_of(id, out, sizeof(out));
        if (strstr(out, "1970") || strstr(out, "9999-") || strstr(out, "5138-"))
            fail_msg("forged Sendat-Scheduled: %s believed:\n%s", forged[i], out);
        assert_non_null(strstr(out, " scheduled")); /* at the copy's stream time */
    }
    natsMsg_Destroy(old);
    fx_js_close(&nc, &js);
}

static int
setup(void **state)
{
    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    fx_stop_consumers(&F);
    fx_stop(&F);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_lines_in_order_and_no_waiting_after_cancel),
        cmocka_unit_test(test_replay_is_called_a_replay),
        cmocka_unit_test(test_series_finished_and_cancelled),
        cmocka_unit_test(test_errors_name_no_library_location),
        cmocka_unit_test(test_dispatch_and_delivery_lateness),
        cmocka_unit_test(test_health_port_in_use_is_a_clear_error),
        cmocka_unit_test(test_dead_letter_shows_every_attempt),
        cmocka_unit_test(test_list_by_group_and_full),
        cmocka_unit_test(test_forged_scheduled_header_is_not_believed),
        cmocka_unit_test(test_list_full_prints_bodies_as_sent),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), setup, teardown);
}
