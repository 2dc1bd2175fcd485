/* The webhook address policy with real processes: the producer refuses literal addresses
 * the policy refuses (exit 2, nothing published); a consumer refuses a name that resolves
 * to a refused address at connect time (the receiver gets nothing, the dead letter's reason
 * names no address); and connect errors and HTTP/0.9 answers reach status only as classes. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
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
#include "netpolicy.h"

static struct fx F;

/* `sendat schedule` of a webhook to url, due in 1 s, with extra env entries; the exit code,
 * the id in id and stderr in err. */
static int
schedule(const char *url, char *const extra[], char *id, size_t cap, char *err, size_t errcap)
{
    char at[40];
    char *argv[] = {(char *)fx_sendat_bin(),
                    "schedule",
                    "--at",
                    at,
                    "--webhook",
                    (char *)url,
                    "--data",
                    "{}",
                    NULL};
    char *env[8] = {F.env_url, F.env_key};
    int n = 2, rc;

    for (int i = 0; extra && extra[i] && n < 7; i++)
        env[n++] = extra[i];
    env[n] = NULL;
    snprintf(at, sizeof(at), "@%" PRId64, test_now_ms() / 1000 + 1);
    rc = proc_run(argv, env, NULL, id, cap, err, errcap, 20000);
    id[strcspn(id, "\n")] = '\0';
    return rc;
}

static int
dead_lettered(void *id)
{
    char out[4096];

    return fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", (char *)id, NULL) == 0;
}

/* The reason `dlq list` gives for id, into out. */
static void
dlq_reason(const char *id, char *out, size_t cap)
{
    static char list[16384];
    const char *line, *r;

    assert_int_equal(fx_sendat(&F, list, sizeof(list), NULL, 0, "dlq", "list", NULL), 0);
    line = strstr(list, id);
    assert_non_null(line);
    r = strstr(line, "reason=\"");
    assert_non_null(r);
    snprintf(out, cap, "%.*s", (int)strcspn(r + 8, "\"\n"), r + 8);
}

/* Neither the reason nor the status of id name an address, a port or curl's own words. */
static void
check_names_nothing(const char *id, const char *port)
{
    static char status[16384];
    static const char *never[] = {"127.0.0.1", "::1", "localhost", "Failed", "HTTP/0.9", "port"};

    assert_int_equal(fx_sendat(&F, status, sizeof(status), NULL, 0, "status", id, NULL), 0);
    for (size_t i = 0; i < sizeof(never) / sizeof(*never); i++)
        if (strstr(status, never[i]))
            fail_msg("status of %s names \"%s\": %s", id, never[i], status);
    if (strstr(status, port))
        fail_msg("status of %s names port %s: %s", id, port, status);
}

static void
test_producer_refuses_literals(void **state)
{
    static const char *denied[] = {"http://169.254.169.254/latest/meta-data/",
                                   "http://[fd00:ec2::254]/",
                                   "http://100.100.100.200/",
                                   "http://0x7f000001:%s/",
                                   "http://2130706433:%s/",
                                   "http://127.1:%s/",
                                   "http://[::ffff:127.0.0.1]:%s/",
                                   "http://10.1.2.3/"};
    char *deny[] = {"SENDAT_WEBHOOK_DENY=private", NULL};
    char *open[] = {"SENDAT_WEBHOOK_DENY=private", "SENDAT_WEBHOOK_ALLOW=127.0.0.1/32", NULL};
    char url[128], id[128], err[1024];
    const char *port;

    (void)state;
    fx_start(&F, 0);
    port = strrchr(receiver_url(F.recv), ':') + 1;
    for (size_t i = 0; i < sizeof(denied) / sizeof(*denied); i++) {
        snprintf(url, sizeof(url), denied[i], port);
        assert_int_equal(schedule(url, deny, id, sizeof(id), err, sizeof(err)), 2);
        assert_non_null(strstr(err, "refused by the webhook address policy"));
    }
    /* the built-in list holds without any setting; loopback is open by default */
    assert_int_equal(schedule("http://169.254.169.254/", NULL, id, sizeof(id), err, sizeof(err)),
                     2);
    snprintf(url, sizeof(url), "http://0x7f000001:%s/", port);
    assert_int_equal(schedule(url, NULL, id, sizeof(id), err, sizeof(err)), 0);
    assert_int_equal(schedule(url, open, id, sizeof(id), err, sizeof(err)), 0); /* ALLOW wins */
    /* a bad list is named */
    {
        char *bad[] = {"SENDAT_WEBHOOK_DENY=10.0.0.0/33", NULL};
        assert_int_equal(schedule(url, bad, id, sizeof(id), err, sizeof(err)), 2);
        assert_non_null(strstr(err, "SENDAT_WEBHOOK_DENY"));
    }
    fx_stop(&F);
}

static void
test_consumer_refuses_resolved(void **state)
{
    char *env[] = {"SENDAT_WEBHOOK_DENY=private", "SENDAT_RETRY_ATTEMPTS=3", NULL};
    char url[128], id[128], err[1024], reason[512], ok_id[128];
    const char *port;

    (void)state;
    fx_start(&F, 0);
    port = strrchr(receiver_url(F.recv), ':') + 1;
    fx_consumer(&F, 0, env);
    /* a name: the producer cannot judge it, even under the same policy */
    snprintf(url, sizeof(url), "http://localhost:%s/inside", port);
    assert_int_equal(schedule(url, env, id, sizeof(id), err, sizeof(err)), 0);
    assert_true(wait_until(dead_lettered, id, 30000));
    dlq_reason(id, reason, sizeof(reason));
    assert_string_equal(reason, SA_NETPOLICY_REFUSED);
    check_names_nothing(id, port);
    assert_int_equal(receiver_count(F.recv), 0);
    /* refused for good: one attempt, not three */
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "event=retry"), 0);
    assert_int_equal(fx_stop_consumers(&F), 0);

    /* the same consumer with loopback allowed delivers */
    {
        char *open[] = {"SENDAT_WEBHOOK_DENY=private", "SENDAT_WEBHOOK_ALLOW=127.0.0.0/8,::1",
                        NULL};
        fx_consumer(&F, 1, open);
        snprintf(url, sizeof(url), "http://localhost:%s/allowed", port);
        assert_int_equal(schedule(url, NULL, ok_id, sizeof(ok_id), err, sizeof(err)), 0);
        assert_true(receiver_wait(F.recv, "/allowed", 1, 30000));
    }
    assert_int_equal(receiver_count_path(F.recv, "/inside"), 0);
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_stop(&F);
}

/* A server that answers every connection with a line that is no HTTP status: HTTP/0.9. */
static void *
http09(void *arg)
{
    int lsock = *(int *)arg, s;
    char buf[4096];

    while ((s = accept(lsock, NULL, NULL)) >= 0) {
        ssize_t n = read(s, buf, sizeof(buf));
        (void)n;
        n = write(s, "garbage from 10.0.0.7\n", 22);
        close(s);
    }
    return NULL;
}

/* A loopback socket bound to a free port (listening or not); the port into port. */
static int
loopback_socket(int listening, char *port, size_t cap)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int s = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    if (listening)
        assert_int_equal(listen(s, 16), 0);
    snprintf(port, cap, "%u", (unsigned)ntohs(a.sin_port));
    return s;
}

/* Issue 37.13: a refused port and one that answers garbage read the same to the producer (the
 * dead letter says "no HTTP answer", naming no address or port); the class goes to the
 * operator's log with the task id. */
static void
test_errors_are_classes(void **state)
{
    char *env[] = {"SENDAT_RETRY_ATTEMPTS=1", NULL};
    char url[128], closed_id[128], bad_id[128], err[1024], reason[512], closed[16], bad[16];
    int cs = loopback_socket(0, closed, sizeof(closed)); /* bound, never listening: refused */
    int ls = loopback_socket(1, bad, sizeof(bad));
    pthread_t t;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, http09, &ls), 0);
    fx_start(&F, 0);
    fx_consumer(&F, 0, env);
    snprintf(url, sizeof(url), "http://127.0.0.1:%s/closed", closed);
    assert_int_equal(schedule(url, NULL, closed_id, sizeof(closed_id), err, sizeof(err)), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%s/old", bad);
    assert_int_equal(schedule(url, NULL, bad_id, sizeof(bad_id), err, sizeof(err)), 0);
    assert_true(wait_until(dead_lettered, closed_id, 30000));
    assert_true(wait_until(dead_lettered, bad_id, 30000));
    dlq_reason(closed_id, reason, sizeof(reason));
    assert_non_null(strstr(reason, "no HTTP answer"));
    check_names_nothing(closed_id, closed);
    dlq_reason(bad_id, reason, sizeof(reason));
    assert_non_null(strstr(reason, "no HTTP answer")); /* one class: no port oracle (37.13) */
    check_names_nothing(bad_id, bad);
    assert_int_equal(fx_stop_consumers(&F), 0);
    snprintf(reason, sizeof(reason), "task=%s class=\"connect failed\"", closed_id);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, reason), 1); /* the operator's */
    snprintf(reason, sizeof(reason), "task=%s class=\"bad response\"", bad_id);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, reason), 1);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "Failed to connect"), 0);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "HTTP/0.9"), 0);
    fx_stop(&F);
    shutdown(ls, SHUT_RDWR); /* ends accept */
    pthread_join(t, NULL);
    close(ls);
    close(cs);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_refuses_literals),
        cmocka_unit_test(test_consumer_refuses_resolved),
        cmocka_unit_test(test_errors_are_classes),
    };
    return FX_RUN(tests);
}
