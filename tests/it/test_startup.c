/* Starting and staying up (issue 17, item 3): a consumer started while nats-server is down
 * waits for it with backoff, says so in its log and keeps /readyz false, then works once the
 * server comes; a server restart under a running consumer costs lateness, never the process.
 * One started before `sendat init` waits for it the same way. */
#include <arpa/inet.h>
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

#include "check.h"
#include "fixture.h"

static struct fx F;

static int
waiting_logged(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=waiting_for_server") >= 2;
}

static int
listening(void *arg)
{
    (void)arg;
    return fx_consumer_port(&F, 0) > 0;
}

static void
dump_log(void)
{
    char *log = proc_read_file(F.consumers[0].err_path);

    fprintf(stderr, "consumer log:\n%s\n", log ? log : "(none)");
    free(log);
}

/* Schedules a webhook due in 3 s and waits for it at the receiver. */
static void
delivered(const char *path)
{
    char id[80], body[FX_BODY_MAX];

    assert_int_equal(fx_schedule(&F, test_now_ms() + 3000, path, id, sizeof(id)), 0);
    if (!receiver_wait(F.recv, path, 1, 20000)) {
        dump_log();
        fail_msg("%s (task %s) was not delivered; /readyz %ld", path, id,
                 fx_consumer_get(&F, 0, "/readyz", body));
    }
}

static void
test_waits_for_the_server_then_survives_its_restart(void **state)
{
    char body[FX_BODY_MAX];

    (void)state;
    fx_start(&F, 0);
    natsd_term(&F.srv); /* the store stays: `sendat init` ran */
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(listening, NULL, 10000));
    assert_true(wait_until(waiting_logged, NULL, 10000));
    assert_int_equal(fx_consumer_get(&F, 0, "/readyz", body), 503);
    assert_true(proc_alive(&F.consumers[0]));

    assert_int_equal(natsd_restart(&F.srv), 0); /* same port and store */
    if (!fx_consumer_ready(&F, 0, 20000)) {
        dump_log();
        fail_msg("/readyz stayed false after the server came");
    }
    delivered("/after-start");

    natsd_term(&F.srv);
    assert_int_equal(natsd_restart(&F.srv), 0);
    delivered("/after-restart");
    assert_true(proc_alive(&F.consumers[0]));

    natsd_kill(&F.srv); /* no clean shutdown this time */
    assert_int_equal(natsd_restart(&F.srv), 0);
    delivered("/after-kill");
    assert_true(proc_alive(&F.consumers[0]));
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_stop(&F);
}

static int
init_wait_logged(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=waiting_for_init") >= 2;
}

/* Issue 28, item 12: a consumer started before `sendat init` waits for it as it waits for the
 * server (its log and /readyz say so), then works once init ran. */
static void
test_waits_for_init(void **state)
{
    char body[FX_BODY_MAX];

    (void)state;
    fx_do_init = 0;
    fx_start(&F, 0);
    fx_do_init = 1;
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(listening, NULL, 10000));
    if (!wait_until(init_wait_logged, NULL, 10000)) {
        dump_log();
        fail_msg("no event=waiting_for_init");
    }
    assert_int_equal(fx_consumer_get(&F, 0, "/readyz", body), 503);
    assert_non_null(strstr(body, "waiting for sendat init"));
    assert_true(proc_alive(&F.consumers[0]));
    fx_init(&F);
    if (!fx_consumer_ready(&F, 0, 20000)) {
        dump_log();
        fail_msg("/readyz stayed false after sendat init");
    }
    delivered("/after-init");
    fx_finish(&F);
}

static int
both_listening(void *arg)
{
    (void)arg;
    return fx_consumer_port(&F, 0) > 0 && fx_consumer_port(&F, 1) > 0;
}

/* Issue 28, item 11: the README's `sendat-consumer &  # as many as you like` on one host. With
 * SENDAT_HTTP_ADDR unset the first takes :8080 (here held by the test itself, so both move
 * on), the next ones the next free ports up to 8099, each saying so in its log. */
static void
test_two_consumers_default_http_port(void **state)
{
    char *const env[] = {"SENDAT_HTTP_ADDR=", NULL};
    char body[FX_BODY_MAX];
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(8080)};
    int held = socket(AF_INET, SOCK_STREAM, 0), one = 1, p0, p1;

    (void)state;
    assert_true(held >= 0);
    setsockopt(held, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(held, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(held, 1) != 0)
        print_message("port 8080 is held by another process already\n");
    fx_start(&F, 0);
    fx_consumer(&F, 0, env);
    fx_consumer(&F, 1, env);
    if (!wait_until(both_listening, NULL, 20000)) {
        dump_log();
        fail_msg("a consumer did not listen");
    }
    p0 = fx_consumer_port(&F, 0);
    p1 = fx_consumer_port(&F, 1);
    print_message("health ports %d and %d\n", p0, p1);
    assert_true(p0 != p1);
    assert_true(p0 > 8080 && p0 <= 8099 && p1 > 8080 && p1 <= 8099);
    assert_true(proc_count_lines(F.consumers[0].err_path, "event=http_port_taken") == 1);
    assert_true(proc_count_lines(F.consumers[1].err_path, "event=http_port_taken") == 1);
    assert_int_equal(fx_consumer_get(&F, 0, "/healthz", body), 200);
    assert_int_equal(fx_consumer_get(&F, 1, "/healthz", body), 200);
    assert_true(proc_alive(&F.consumers[0]) && proc_alive(&F.consumers[1]));
    fx_finish(&F);
    close(held);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waits_for_the_server_then_survives_its_restart),
        cmocka_unit_test(test_waits_for_init),
        cmocka_unit_test(test_two_consumers_default_http_port),
    };
    return FX_RUN(tests);
}
