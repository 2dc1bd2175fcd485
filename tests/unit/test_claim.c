/* What the claim ledger remembers: the claims bucket's TTL less a margin of a tenth, at most
 * an hour, and for ever when the bucket keeps claims for ever. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "claim.h"

#define HOUR 3600000LL
#define DAY (24 * HOUR)

static void
test_memory(void **state)
{
    (void)state;
    assert_true(sa_claim_memory_ms(0) == INT64_MAX);
    assert_true(sa_claim_memory_ms(7 * DAY) == 7 * DAY - HOUR); /* the margin is capped */
    assert_true(sa_claim_memory_ms(10 * HOUR) == 9 * HOUR);     /* exactly the cap */
    assert_true(sa_claim_memory_ms(SA_CLAIMS_TTL_MIN_MS) == 54 * 60000LL);
    assert_true(sa_claim_memory_ms(20000) == 18000); /* a test's bucket */
    /* the smallest TTL init allows still covers a due time 10 minutes past and a failover */
    assert_true(sa_claim_memory_ms(SA_CLAIMS_TTL_MIN_MS) > 10 * 60000LL + 60000LL);
}

/* A cancel record applies to a task sealed before it (clocks a little apart too), not to one
 * booked once the id was free again (its cancelled claim expired: the TTL later). */
static void
test_cancel_applies(void **state)
{
    int64_t at = 1795340000000LL;

    (void)state;
    assert_true(sa_cancel_applies(at, at - DAY, 7 * DAY));
    assert_true(sa_cancel_applies(at, at + 20 * 60000LL, HOUR)); /* a producer's clock ahead */
    assert_false(sa_cancel_applies(at, at + HOUR, HOUR));        /* booked once free */
    assert_false(sa_cancel_applies(at, at + 7 * DAY, 7 * DAY));
    assert_false(sa_cancel_applies(at, at + 20000, 20000)); /* a test's bucket */
    assert_true(sa_cancel_applies(at, at + 365 * DAY, 0));  /* claims kept for ever */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_cancel_applies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
