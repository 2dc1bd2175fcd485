/* What operators look at: /healthz, /readyz and Prometheus /metrics of a running consumer
 * (sent by channel, lateness histogram, in flight, held, backlog), and a bad setting refused
 * at start with the variable named. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "check.h"
#include "fixture.h"

static struct fx F;

static int
listening(void *arg)
{
    (void)arg;
    return fx_consumer_port(&F, 0) > 0;
}

static long
get(const char *path, char *body)
{
    return fx_consumer_get(&F, 0, path, body);
}

static int
is_ready(void *arg)
{
    static char body[65536];

    (void)arg;
    return get("/readyz", body) == 200;
}

static int
metrics_show_send(void *arg)
{
    static char body[65536];

    (void)arg;
    return get("/metrics", body) == 200 &&
           strstr(body, "sendat_sent_total{channel=\"webhook\"} 1\n");
}

static int
metrics_show_two_sends(void *arg)
{
    static char body[65536];

    (void)arg;
    return get("/metrics", body) == 200 &&
           strstr(body, "sendat_sent_total{channel=\"webhook\"} 2\n");
}

static void
test_health_and_metrics(void **state)
{
    static char body[65536];
    char id[80];

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(listening, NULL, 20000));
    assert_int_equal(get("/healthz", body), 200);
    assert_true(wait_until(is_ready, NULL, 20000));
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/m", id, sizeof(id)), 0);
    assert_true(wait_until(metrics_show_send, NULL, 30000));
    assert_int_equal(get("/metrics", body), 200);
    assert_non_null(strstr(body, "sendat_lateness_seconds_count 1\n"));
    assert_non_null(strstr(body, "sendat_lateness_seconds_bucket{le=\"+Inf\"} 1\n"));
    assert_non_null(strstr(body, "# TYPE sendat_in_flight gauge"));
    assert_non_null(strstr(body, "sendat_held "));
    assert_non_null(strstr(body, "sendat_backlog "));
    assert_int_equal(get("/nothing", body), 404);
    /* Issue 28, item 3: a task booked 5 minutes past due is sent at once and counted apart,
     * its lateness (the booking's) kept out of the lateness histograms */
    assert_int_equal(fx_schedule(&F, test_now_ms() - 300000, "/late", id, sizeof(id)), 0);
    assert_true(wait_until(metrics_show_two_sends, NULL, 30000));
    assert_int_equal(get("/metrics", body), 200);
    assert_non_null(strstr(body, "sendat_lateness_seconds_count 1\n"));
    assert_non_null(strstr(body, "sendat_delivery_lateness_seconds_count 1\n"));
    assert_non_null(strstr(body, "sendat_booked_late_total 1\n"));
    assert_non_null(strstr(body, "sendat_booked_late_seconds_total 3"));
    fx_finish(&F);
}

static int
started(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=started") > 0;
}

static int
reloaded(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=reloaded keys=2") > 0;
}

static int
hook_arrived(void *arg)
{
    return receiver_count_path(F.recv, (const char *)arg) >= 1;
}

/* Key rotation: a new key is appended, the consumer is told with SIGHUP, and tasks sealed with
 * the new key are delivered (and the JSON log format is readable). */
static void
test_sighup_rotates_keys(void **state)
{
    char out[256], id[80];
    char *env[] = {"SENDAT_LOG_FORMAT=logfmt", NULL};

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, env);
    assert_true(wait_until(started, NULL, 20000)); /* a SIGHUP before the handler would end it */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "keygen", F.key, "--append", NULL),
                     0);
    proc_signal(&F.consumers[0], SIGHUP);
    assert_true(wait_until(reloaded, NULL, 20000));
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/rotated", id, sizeof(id)), 0);
    assert_true(wait_until(hook_arrived, "/rotated", 30000));
    fx_finish(&F);
}

static void
test_bad_settings(void **state)
{
    char out[256], err[1024];
    char *argv[] = {(char *)fx_consumer_bin(), NULL};

    (void)state;
    fx_start(&F, 0);
    {
        char *env[] = {F.env_url, F.env_key, "SENDAT_MAX_INFLIGHT=lots", NULL};
        assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 20000), 2);
        assert_non_null(strstr(err, "SENDAT_MAX_INFLIGHT"));
    }
    {
        char *env[] = {F.env_url, F.env_key, "SENDAT_HTTP_ADDR=nowhere", NULL};
        assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 20000), 2);
        assert_non_null(strstr(err, "SENDAT_HTTP_ADDR"));
    }
    /* every bad setting exits 2, which the units do not restart (RestartPreventExitStatus=2) */
    {
        char *env[] = {F.env_url, "SENDAT_KEY_FILE=/nonexistent/key", "SENDAT_HTTP_ADDR=off", NULL};
        assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 20000), 2);
        assert_non_null(strstr(err, "/nonexistent/key"));
    }
    {
        char *env[] = {F.env_url, F.env_key, "SENDAT_HTTP_ADDR=off",
                       "SENDAT_HOST_LIMITS=no rules here", NULL};
        assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 20000), 2);
        assert_non_null(strstr(err, "SENDAT_HOST_LIMITS"));
    }
    {
        char *env[] = {F.env_url, F.env_key, "SENDAT_HTTP_ADDR=off", NULL};
        assert_int_equal(chmod(F.key, 0644), 0);
        assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 20000), 2);
        assert_non_null(strstr(err, "chmod 600"));
        assert_int_equal(chmod(F.key, 0600), 0);
    }
    fx_stop(&F);
}

/* A server without JetStream (Debian's default configuration has none) is named as such, not
 * as a network fault, by the producer and the consumer. */
static void
test_server_without_jetstream(void **state)
{
    struct natsd plain;
    char out[256], err[1024], url[300];
    char *init[] = {(char *)fx_sendat_bin(), "init", NULL};
    char *consumer[] = {(char *)fx_consumer_bin(), NULL};

    (void)state;
    assert_int_equal(natsd_start_config(&plain, "# no jetstream block\n"), 0);
    snprintf(url, sizeof(url), "SENDAT_NATS_URL=%s", plain.url);
    {
        char *env[] = {url, NULL};
        assert_int_equal(proc_run(init, env, NULL, out, sizeof(out), err, sizeof(err), 20000), 1);
        assert_non_null(strstr(err, "JetStream is not enabled on nats://127.0.0.1:"));
        assert_non_null(strstr(err, "-js"));
    }
    {
        /* the consumer waits for it (containers start in any order) and says why: ended by
         * the deadline, its log read */
        fx_start(&F, 0); /* for its key */
        char *env[] = {url, F.env_key, "SENDAT_HTTP_ADDR=off", NULL};
        assert_int_equal(proc_run(consumer, env, NULL, out, sizeof(out), err, sizeof(err), 3000),
                         -1);
        assert_non_null(strstr(err, "JetStream is not enabled"));
        fx_stop(&F);
    }
    natsd_stop(&plain);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_and_metrics),
        cmocka_unit_test(test_sighup_rotates_keys),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_server_without_jetstream),
    };

    return FX_RUN(tests);
}
