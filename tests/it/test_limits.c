/* Provider limits: "the provider accepts 3 concurrent calls in total" expressed as
 * SENDAT_HOST_LIMITS=<host>=fleet:3 holds across two consumers with a burst due at once; a
 * rate limit spaces the sends of one consumer. */
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

#define N 15

static struct fx F;

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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fleet_concurrency),
        cmocka_unit_test(test_rate),
    };

    return FX_RUN(tests);
}
