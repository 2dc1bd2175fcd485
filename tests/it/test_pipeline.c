/* The core promise: 3 consumers, 300 tasks due within 10 s, each delivered exactly once,
 * none before its due time, every consumer delivering a share, and no task re-published
 * more than once per level. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"

#define N_TASKS 300
#define N_CONSUMERS 3

static struct fx F;
static char ids[N_TASKS][80];

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= N_TASKS;
}

static void
check_each_once_never_early(void)
{
    static int seen[N_TASKS];
    struct receiver_hit h;

    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        assert_int_equal(sscanf(h.path, "/t/%d", &k), 1);
        assert_true(k >= 0 && k < N_TASKS);
        seen[k]++;
        if (h.at_ms < sa_layout_id_due(ids[k]))
            fail_msg("task %d arrived %" PRId64 " ms before its due time", k,
                     sa_layout_id_due(ids[k]) - h.at_ms);
        receiver_hit_free(&h);
    }
    for (int k = 0; k < N_TASKS; k++)
        if (seen[k] != 1)
            fail_msg("task %d (%s) arrived %d times", k, ids[k], seen[k]);
}

static void
check_moves_at_most_once(void)
{
    char out[8192];
    long moved = 0;

    for (int i = 0; i < N_CONSUMERS; i++) {
        long sent = fx_counter(&F, i, "sent");
        if (sent <= 0)
            fail_msg("consumer c%d sent %ld tasks; every consumer should deliver a share", i, sent);
        moved += fx_counter(&F, i, "moved");
    }
    assert_true(moved <= N_TASKS);
    for (int k = 0; k < N_TASKS; k += 37) {
        assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", ids[k], "--json", NULL),
                         0);
        assert_non_null(strstr(out, "\"event\":\"sent\""));
        assert_null(strstr(out, "\"moves\":2"));
    }
}

static void
test_300_tasks_three_consumers(void **state)
{
    static char *small_batches[] = {"SENDAT_FETCH_BATCH=4", NULL};

    (void)state;
    fx_start(&F, 0);
    for (int i = 0; i < N_CONSUMERS; i++)
        fx_consumer(&F, i, small_batches);
    /* every consumer pulling before any task is due, so each can take a share */
    for (int i = 0; i < N_CONSUMERS; i++)
        assert_true(fx_consumer_ready(&F, i, 30000));
    /* one batch books them all in about a second; a slower one books some late, and those
     * are sent late, never early (the check below holds either way) */
    assert_int_equal(fx_schedule_spread(&F, test_now_ms() + 4000, 10000, "/t", N_TASKS, ids), 0);
    assert_true(wait_until(all_arrived, NULL, 60000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    check_each_once_never_early();
    check_moves_at_most_once();
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_300_tasks_three_consumers)};

    return FX_RUN(tests);
}
