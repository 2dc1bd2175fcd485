/* Records a client writes over a task's claim while its request is out (issue 37: a client
 * allowed to write the claims bucket, as producers are, since cancel creates claims; found by
 * it_roles under load, where its DEL marker landed after the claim). The consumer writes the
 * outcome over a DEL marker or junk: they hide nothing, and its "sending" under them is still
 * the task's newest authentic record. Before, the outcome's update met the newer revision, took
 * it for another member's record and dropped the outcome: the task was sent once and its status
 * stayed at "claimed" for ever. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "forge.h"

static struct fx F;

static void
test_outcome_written_over_forgeries(void **state)
{
    static const char *paths[] = {"/held/deleted", "/held/junk"};
    static const char *forged[] = {"delete", "\x01junk"};
    char ids[2][80];
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    receiver_set_delay(F.recv, 6000); /* each request is out 6 s, within the 10 s HTTP timeout */
    fx_consumer(&F, 0, NULL);
    due = test_now_ms() + (int64_t)(3000 * test_timeout_multiplier());
    for (int i = 0; i < 2; i++)
        assert_int_equal(fx_schedule(&F, due, paths[i], ids[i], sizeof(ids[i])), 0);
    for (int i = 0; i < 2; i++) { /* the request arrived: the claim says "sending" */
        assert_true(receiver_wait(F.recv, paths[i], 1, 30000));
        forge_claim(&F, ids[i], forged[i]);
    }
    for (int i = 0; i < 2; i++)
        if (!fx_status_says(&F, ids[i], "Z sent", 30000))
            fx_print_log(&F, 0);
    for (int i = 0; i < 2; i++)
        assert_true(fx_status_says(&F, ids[i], "Z sent", 1000));
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* time for a second send */
    for (int i = 0; i < 2; i++)
        assert_int_equal(receiver_count_path(F.recv, paths[i]), 1);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_outcome_written_over_forgeries)};

    return FX_RUN(tests);
}
