/* The health port under a flood of idle connections: 1,100 held open from one client (more
 * than select() can watch) must not keep /healthz and /readyz from answering another client
 * (a kubelet would restart the pod); that client's surplus is closed at once, and an idle
 * connection is closed after a while. Nor may many clients with a few idle connections each:
 * 40 addresses holding 8 each and reopening what is closed. The clients are loopback
 * addresses 127.0.0.1-3 and 127.0.1.1-40. */
#include <poll.h>
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
#include "dial.h"
#include "fixture.h"

#define FLOOD 1100

static struct fx F;
static int flood[FLOOD];
static int port; /* the consumer's health port */

static int
listening(void *arg)
{
    (void)arg;
    port = fx_consumer_port(&F, 0);
    return port > 0;
}

/* A non-blocking TCP connection from src (an address of 127/8) to the consumer's port. */
static int
dial(const char *src)
{
    int s = dial_from(src, port, DIAL_NONBLOCK);

    assert_true(s >= 0);
    return s;
}

/* GET path from src with a deadline of ms for the whole exchange; the HTTP status or 0. */
static int
probe(const char *src, const char *path, int ms)
{
    struct pollfd p = {.fd = dial(src), .events = POLLOUT};
    char req[128], resp[256] = "";
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path), status = 0;

    if (poll(&p, 1, (int)(ms * test_timeout_multiplier())) == 1 &&
        write(p.fd, req, (size_t)n) == n && dial_readable(p.fd, ms) &&
        read(p.fd, resp, sizeof(resp) - 1) > 0)
        sscanf(resp, "HTTP/1.%*d %d", &status);
    close(p.fd);
    return status;
}

/* Sockets of the flood the consumer has closed (readable at end of file, or reset). */
static int
closed_by_server(void *arg)
{
    static struct pollfd p[FLOOD];
    int closed = 0;
    char c;

    for (int i = 0; i < FLOOD; i++)
        p[i] = (struct pollfd){.fd = flood[i], .events = POLLIN};
    poll(p, FLOOD, 0);
    for (int i = 0; i < FLOOD; i++)
        if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
            closed += recv(flood[i], &c, 1, MSG_DONTWAIT) <= 0;
    return closed >= *(int *)arg;
}

static void
test_probes_answer_under_idle_flood(void **state)
{
    int idle, most_closed = FLOOD - 16;
    char c;

    (void)state;
    if (!dial_raise_fd_limit(FLOOD + 200))
        skip(); /* this machine allows too few descriptors to stage the flood */
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL); /* inherits our descriptor limit */
    assert_true(wait_until(listening, NULL, 20000));
    for (int i = 0; i < FLOOD; i++)
        flood[i] = dial("127.0.0.1");
    assert_int_equal(probe("127.0.0.2", "/healthz", 3000), 200);
    assert_int_not_equal(probe("127.0.0.2", "/readyz", 3000), 0);   /* 200 or 503: it answers */
    assert_true(wait_until(closed_by_server, &most_closed, 20000)); /* one client, a few slots */
    assert_int_equal(probe("127.0.0.2", "/healthz", 3000), 200);

    idle = dial("127.0.0.3"); /* says nothing: closed after the idle timeout */
    assert_true(dial_readable(idle, 30000));
    assert_true(recv(idle, &c, 1, MSG_DONTWAIT) <= 0);
    close(idle);
    for (int i = 0; i < FLOOD; i++)
        close(flood[i]);
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_stop(&F);
}

#define SPREAD_ADDRS 40
#define SPREAD_EACH 8

/* Dials again every connection of the spread the consumer has closed (as an attacker
 * reopening every few seconds would). */
static void
reopen(int *spread)
{
    char c;

    for (int i = 0; i < SPREAD_ADDRS * SPREAD_EACH; i++) {
        struct pollfd p = {.fd = spread[i], .events = POLLIN};
        if (poll(&p, 1, 0) == 1 && recv(spread[i], &c, 1, MSG_DONTWAIT) <= 0) {
            close(spread[i]);
            assert_true((spread[i] = dial_spread("127.0.1", i, SPREAD_EACH, port)) >= 0);
        }
    }
}

static void
test_probes_answer_under_many_idle_clients(void **state)
{
    static int spread[SPREAD_ADDRS * SPREAD_EACH];
    int answered = 0;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(listening, NULL, 20000));
    for (int i = 0; i < SPREAD_ADDRS * SPREAD_EACH; i++)
        assert_true((spread[i] = dial_spread("127.0.1", i, SPREAD_EACH, port)) >= 0);
    for (int round = 0; round < 10; round++) {
        usleep(100000); /* the consumer takes in the spread */
        answered += probe("127.0.0.2", "/healthz", 3000) == 200;
        reopen(spread);
    }
    for (int i = 0; i < SPREAD_ADDRS * SPREAD_EACH; i++)
        close(spread[i]);
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_stop(&F);
    if (answered < 10)
        fail_msg("/healthz answered %d probes of 10 under %d idle connections", answered,
                 SPREAD_ADDRS * SPREAD_EACH);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probes_answer_under_idle_flood),
        cmocka_unit_test(test_probes_answer_under_many_idle_clients),
    };
    return FX_RUN(tests);
}
