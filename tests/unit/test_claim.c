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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
