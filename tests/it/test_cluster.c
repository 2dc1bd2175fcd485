/* The same pipeline on a 3-node JetStream cluster on loopback with replicas 3: consumers and
 * producers get all three URLs, every task arrives exactly once. */
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

#define N 40

static struct fx F;

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= N;
}

static void
test_cluster_delivers_once(void **state)
{
    char id[80], path[32];
    int64_t start;
    struct receiver_hit h;
    static int seen[N];

    (void)state;
    fx_start(&F, 1);
    fx_consumer(&F, 0, NULL);
    fx_consumer(&F, 1, NULL);
    start = test_now_ms() + 4000;
    for (int k = 0; k < N; k++) {
        snprintf(path, sizeof(path), "/c/%d", k);
        assert_int_equal(fx_schedule(&F, start + k * 100, path, id, sizeof(id)), 0);
    }
    assert_true(wait_until(all_arrived, NULL, 60000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        assert_int_equal(sscanf(h.path, "/c/%d", &k), 1);
        seen[k]++;
        receiver_hit_free(&h);
    }
    for (int k = 0; k < N; k++)
        assert_int_equal(seen[k], 1);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cluster_delivers_once)};

    return FX_RUN(tests);
}
