/* Provider limits: "the provider accepts 3 concurrent calls in total" expressed as
 * SENDAT_HOST_LIMITS=<host>=fleet:3 holds across two consumers with a burst due at once; a
 * rate limit spaces the sends of one consumer. And the task stream's size limit (issue 24.6):
 * `sendat init --max-tasks 50` makes producers refuse the 51st task (exit 7, HTTP 507) while
 * everything booked is still sent, and a retry the full stream refuses is not lost. A host that
 * never answers holds at most its share of a consumer's send slots (issue 37.8). */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_client.h"
#include "check.h"
#include "fixture.h"

#define N 15

static int
all_arrived(void *arg)
{
    return receiver_count(F.recv) >= (size_t)(intptr_t)arg;
}

static void
test_fleet_concurrency(void **state)
{
    char *env[] = {"SENDAT_HOST_LIMITS=127.0.0.1=fleet:3", NULL};
    char id[80], path[32];
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    receiver_set_delay(F.recv, 300);
    fx_consumer(&F, 0, env);
    fx_consumer(&F, 1, env);
    due = test_now_ms() + 4000;
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/p/%d", i);
        assert_int_equal(fx_schedule(&F, due, path, id, sizeof(id)), 0);
    }
    assert_true(wait_until(all_arrived, (void *)(intptr_t)N, 60000));
    fprintf(stderr, "most requests open at once: %d (limit 3)\n", receiver_max_concurrent(F.recv));
    assert_true(receiver_max_concurrent(F.recv) <= 3);
    assert_true(receiver_max_concurrent(F.recv) >= 2);
    assert_int_equal(fx_stop_consumers(&F), 0);
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/p/%d", i);
        assert_int_equal(receiver_count_path(F.recv, path), 1);
    }
    fx_stop(&F);
}

static void
test_rate(void **state)
{
    char *env[] = {"SENDAT_HOST_LIMITS=127.0.0.*=rate:4/s", NULL};
    char id[80];
    struct receiver_hit first, last;
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, env);
    due = test_now_ms() + 3000;
    for (int i = 0; i < 12; i++)
        assert_int_equal(fx_schedule(&F, due, "/r", id, sizeof(id)), 0);
    assert_true(wait_until(all_arrived, (void *)(intptr_t)12, 60000));
    assert_int_equal(receiver_hit_copy(F.recv, 0, &first), 0);
    assert_int_equal(receiver_hit_copy(F.recv, 11, &last), 0);
    fprintf(stderr, "12 sends at 4/s took %" PRId64 " ms\n", last.at_ms - first.at_ms);
    assert_true(last.at_ms - first.at_ms >= 1500); /* a burst of 4, then 8 more at 4/s: >= 2 s */
    receiver_hit_free(&first);
    receiver_hit_free(&last);
    fx_finish(&F);
}

/* Sets the task stream's max msgs straight on the broker (what init would never do: below
 * the headroom), so the consumer's own re-publish meets a full stream. */
static void
set_max_msgs(int64_t max_msgs)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL, *up = NULL;

    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_GetStreamInfo(&si, js, "SENDAT_TASKS", NULL, NULL), NATS_OK);
    assert_int_equal(si->Config->Discard, js_DiscardNew); /* full refuses, never drops */
    si->Config->MaxMsgs = max_msgs;
    assert_int_equal(js_UpdateStream(&up, js, si->Config, NULL, NULL), NATS_OK);
    jsStreamInfo_Destroy(up);
    jsStreamInfo_Destroy(si);
    fx_js_close(&nc, &js);
}

static uint64_t
stream_msgs(void)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    uint64_t msgs;

    fx_js_open(&F, &nc, &js);
    msgs = fx_stream_msgs(js, "SENDAT_TASKS");
    fx_js_close(&nc, &js);
    return msgs;
}

static int
stream_holds(void *arg)
{
    return stream_msgs() == (uint64_t)(intptr_t)arg;
}

static int
stream_full_seen(void *arg)
{
    (void)arg;
    return fx_consumer_metric(&F, 0, "sendat_stream_full_total") >= 1;
}

static int
soon_all_sent(void *arg)
{
    int seen[5] = {0};

    (void)arg;
    return fx_arrivals(&F, "/soon/", seen, 5) == 5;
}

static int
api_books_again(void *arg)
{
    json_t *doc = NULL;
    long status = call("POST", "/tasks", producer, arg, &doc);

    json_decref(doc);
    return status == 201;
}

/* Writes n NDJSON lines due at due_ms to path under name; returns path. */
static const char *
batch_file(char *path, size_t cap, const char *name, int n, int64_t due_ms)
{
    FILE *f;

    snprintf(path, cap, "%s/%s.ndjson", F.dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++)
        fprintf(f, "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/%s/%d\"}\n", due_ms / 1000,
                receiver_url(F.recv), name, i);
    fclose(f);
    return path;
}

static void
test_stream_size_limit(void **state)
{
    char out[8192], err[2048], id[80], path[32], file[320], body[512];
    int64_t far = test_now_ms() + 2 * 86400000LL, soon = test_now_ms() + 20000;
    json_t *doc = NULL;
    (void)state;
    /* init again on a running deployment sets the limit */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--max-tasks", "50", NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch",
                               batch_file(file, sizeof(file), "far", 45, far), NULL),
                     0);
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "/soon/%d", i);
        assert_int_equal(fx_schedule(&F, soon, path, id, sizeof(id)), 0);
    }
    /* the 51st: refused by every producer, naming the limit and the count */
    snprintf(body, sizeof(body), "@%" PRId64, far / 1000);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", body,
                               "--webhook", "http://127.0.0.1:1/over", NULL),
                     7);
    fprintf(stderr, "51st: %s", err);
    assert_non_null(strstr(err, "is full: it holds 50 tasks, the limit is 50"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch",
                               batch_file(file, sizeof(file), "over", 1, far), NULL),
                     7);
    assert_non_null(strstr(err, "is full"));
    snprintf(body, sizeof(body), "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/api\"}", far / 1000,
             receiver_url(F.recv));
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 507);
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(doc, "error"), "message")), "full"));
    check_error(doc, 507, NULL);
    assert_int_equal(call("POST", "/batches", producer, body, &doc), 200);
    check_error(json_incref(json_array_get(json_object_get(doc, "results"), 0)), 507, NULL);
    json_decref(doc);

    /* what was booked is all there: the soon ones are sent, and then there is room again */
    assert_true(wait_until(soon_all_sent, NULL, 120000));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1d",
                               "--webhook", "http://127.0.0.1:1/room", NULL),
                     0);
    assert_true(wait_until(api_books_again, body, 30000)); /* 47 waiting now */
    assert_int_equal(fx_consumer_metric(&F, 0, "sendat_stream_full_total"), 0);

    /* a retry the broker itself refuses (the stream at its hard limit): the original stays */
    receiver_respond(F.recv, "/retry", 500, 1, NULL);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 6000, "/retry", id, sizeof(id)), 0);
    assert_true(fx_status_says(&F, id, "level=\"slot\"", 30000)); /* no move under way */
    set_max_msgs(48); /* full with the task above: its retry has no room */
    assert_true(wait_until(stream_full_seen, NULL, 60000));
    assert_true(proc_count_lines(F.consumers[0].err_path, "retry_failed") >= 1);
    set_max_msgs(50 + 10000); /* as init made it: 50 plus the headroom */
    if (!receiver_wait(F.recv, "/retry", 2, 120000)) {
        fx_print_log(&F, 0);
        fail_msg("the refused retry was not sent again");
    }
    /* the sent one is acked just after its answer: then 45 + 2 far-future tasks, none dropped */
    assert_true(wait_until(stream_holds, (void *)(intptr_t)47, 30000));

    /* a limit below what the stream holds is refused (2.9 would delete the oldest) */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--max-tasks", "5", NULL),
        0); /* 5 + 10,000 of headroom is above 47 */
    assert_int_equal(stream_msgs(), 47);
}

/* A loopback address that takes connections and never answers: a listening socket on
 * 127.0.0.2 whose connections are never accepted (the kernel completes them up to the
 * backlog, curl sends its request and waits). Its port into port. */
static int
black_hole(char *port, size_t cap)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    int s = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(s >= 0);
    inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s, 128), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    snprintf(port, cap, "%u", (unsigned)ntohs(a.sin_port));
    return s;
}

/* Issue 37.8: 16 tasks to a destination that never answers (timeout 30 s) and then 8 to
 * another, on a consumer of 8 send slots. Before, the first 8 took every slot for the whole
 * timeout and the others waited 30 s; with the default cap (half the slots per host no rule
 * names) the others go out at once, well inside the timeout. */
static void
test_never_answering_host_holds_half(void **state)
{
    char *env[] = {"SENDAT_MAX_INFLIGHT=8", "SENDAT_HTTP_TIMEOUT=30s", "SENDAT_DRAIN_TIMEOUT=1s",
                   "SENDAT_RETRY_ATTEMPTS=1", NULL};
    char port[16], url[96], at[40], id[80], err[512], path[32];
    int hole = black_hole(port, sizeof(port));
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, env);
    due = test_now_ms() + 3000;
    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due / 1000, (int)(due % 1000));
    snprintf(url, sizeof(url), "http://127.0.0.2:%s/never", port);
    for (int i = 0; i < 16; i++)
        assert_int_equal(fx_sendat(&F, id, sizeof(id), err, sizeof(err), "schedule", "--at", at,
                                   "--webhook", url, NULL),
                         0);
    for (int i = 0; i < 8; i++) {
        snprintf(path, sizeof(path), "/other/%d", i);
        assert_int_equal(fx_schedule(&F, due + 500, path, id, sizeof(id)), 0);
    }
    if (!wait_until(all_arrived, (void *)(intptr_t)8, 20000)) /* the hole's timeout is 30 s */
        fx_print_log(&F, 0);
    assert_int_equal(receiver_count(F.recv), 8);
    fprintf(stderr, "8 tasks to a live host beside 16 to a silent one: in %" PRId64 " ms\n",
            test_now_ms() - due);
    (void)fx_stop_consumers(&F); /* the silent host's sends are given back at the drain's end */
    close(hole);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fleet_concurrency),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_never_answering_host_holds_half),
        cmocka_unit_test_setup_teardown(test_stream_size_limit, api_setup, api_teardown),
    };

    return FX_RUN(tests);
}
