/* Retry backoff: full jitter, uniform in [0, min(max, base * 2^(attempt-1))], so the bound
 * doubles per attempt up to its cap, never overflows, and draws spread over the whole range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sodium.h>

#include "retry.h"

#define DRAWS 4000

/* The smallest and largest of DRAWS backoffs for attempt. */
static void
spread(const struct config *cfg, int attempt, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = -1;
    for (int i = 0; i < DRAWS; i++) {
        int64_t b = retry_backoff(cfg, attempt);
        *lo = b < *lo ? b : *lo;
        *hi = b > *hi ? b : *hi;
    }
}

static void
test_bound_doubles_to_its_cap(void **state)
{
    struct config cfg = {.retry_base_ms = 1000, .retry_max_ms = 60000};
    static const int64_t bound[] = {1000, 1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
    int64_t lo, hi;

    (void)state;
    for (int attempt = 1; attempt <= 8; attempt++) {
        spread(&cfg, attempt, &lo, &hi);
        assert_true(lo >= 0 && hi <= bound[attempt]);
        /* full jitter: both ends of the range are reached (odds of failing: below 1e-150) */
        assert_true(lo < bound[attempt] / 10 && hi > bound[attempt] * 9 / 10);
    }
    spread(&cfg, 1000000, &lo, &hi); /* no overflow however many attempts */
    assert_true(lo >= 0 && hi <= 60000 && hi > 54000);
    spread(&cfg, 0, &lo, &hi);
    assert_true(lo >= 0 && hi <= 1000);
}

static void
test_cap_below_base(void **state)
{
    struct config cfg = {.retry_base_ms = 5000, .retry_max_ms = 2000};
    int64_t lo, hi;

    (void)state;
    spread(&cfg, 3, &lo, &hi);
    assert_true(lo >= 0 && hi <= 2000);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_doubles_to_its_cap),
        cmocka_unit_test(test_cap_below_base),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
