/* Nothing lost when a member dies (invariant 1): kill -9 of a consumer holding tasks, and
 * SIGTERM of one, while another consumer runs. Killed: the survivor finds it dead and has its
 * tasks delivered again, or the ack wait brings them (test_failover.c proves which). Terminated:
 * it exits 0 and hands its tasks over at once. Never twice. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"

#define N 50
#define ACK_WAIT_MS 5000

static struct fx F;
static char ids[N][80];

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= N;
}

static int
c0_holds_all(void *arg)
{
    (void)arg;
    return fx_consumer_metric(&F, 0, "sendat_held") >= N;
}

/* Schedules N tasks due together with only c0 running, waits until c0 holds every one (its
 * /metrics says so, well before they are due), then starts c1. Returns the due time. */
static int64_t
c0_holds_tasks(void)
{
    char path[32];
    int64_t due;

    fx_consumer(&F, 0, NULL);
    due = test_now_ms() + (int64_t)(5000 * test_timeout_multiplier());
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/k/%d", i);
        assert_int_equal(fx_schedule(&F, due, path, ids[i], sizeof(ids[i])), 0);
    }
    /* c0 takes up the slot a lead (1 s) before it starts: it holds them before they are due */
    if (!wait_until(c0_holds_all, NULL,
                    (long)(due - 150 - test_now_ms()) / (long)test_timeout_multiplier())) {
        char *log = proc_read_file(F.consumers[0].err_path);
        fprintf(stderr, "c0's log:\n%s\n", log ? log : "(none)");
        free(log);
        fail_msg("c0 held %ld of %d tasks 150 ms before they were due",
                 fx_consumer_metric(&F, 0, "sendat_held"), N);
    }
    fx_consumer(&F, 1, NULL);
    return due;
}

static int64_t
check_once_and_max_lateness(int64_t due)
{
    static int seen[N];
    struct receiver_hit h;
    int64_t worst = 0;

    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        assert_int_equal(sscanf(h.path, "/k/%d", &k), 1);
        seen[k]++;
        if (h.at_ms - due > worst)
            worst = h.at_ms - due;
        assert_true(h.at_ms >= due);
        receiver_hit_free(&h);
    }
    for (int k = 0; k < N; k++)
        if (seen[k] != 1)
            fail_msg("task %d arrived %d times", k, seen[k]);
    return worst;
}

static void
test_kill9_loses_nothing(void **state)
{
    int64_t due, worst;

    (void)state;
    fx_start(&F, 0);
    due = c0_holds_tasks();
    proc_kill9(&F.consumers[0]);
    assert_true(wait_until(all_arrived, NULL, 60000));
    worst = check_once_and_max_lateness(due);
    fprintf(stderr, "after kill -9: worst lateness %" PRId64 " ms (ack wait %d ms)\n", worst,
            ACK_WAIT_MS);
    assert_true(worst <= ACK_WAIT_MS + (int64_t)(3000 * test_timeout_multiplier()));
    fx_finish(&F);
}

static void
test_sigterm_hands_over(void **state)
{
    int64_t due, worst;
    int rc;

    (void)state;
    fx_start(&F, 0);
    due = c0_holds_tasks();
    proc_signal(&F.consumers[0], SIGTERM);
    if ((rc = proc_wait(&F.consumers[0], 30000)) != 0) {
        char *log = proc_read_file(F.consumers[0].err_path);
        fprintf(stderr, "consumer c0 exited %d after SIGTERM:\n%s\n", rc, log ? log : "");
        free(log);
    }
    assert_int_equal(rc, 0);
    assert_true(wait_until(all_arrived, NULL, 60000));
    worst = check_once_and_max_lateness(due);
    fprintf(stderr, "after SIGTERM: worst lateness %" PRId64 " ms\n", worst);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_loses_nothing),
        cmocka_unit_test(test_sigterm_hands_over),
    };

    return FX_RUN(tests);
}
