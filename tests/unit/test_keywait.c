/* keywait: the backoff of tasks sealed with a key id not loaded yet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "keywait.h"

static void
test_delay_doubles_to_its_cap(void **state)
{
    (void)state;
    assert_int_equal(keywait_delay_ms(0), 500);
    assert_int_equal(keywait_delay_ms(1), 500);
    assert_int_equal(keywait_delay_ms(2), 1000);
    assert_int_equal(keywait_delay_ms(4), 4000);
    assert_int_equal(keywait_delay_ms(5), 5000);
    assert_int_equal(keywait_delay_ms(UINT64_MAX), 5000);
}

static void
test_waited_sums_the_delays_before(void **state)
{
    (void)state;
    assert_int_equal(keywait_waited_ms(1, KEYWAIT_GIVE_UP_MS), 0);
    assert_int_equal(keywait_waited_ms(2, KEYWAIT_GIVE_UP_MS), 500);
    assert_int_equal(keywait_waited_ms(4, KEYWAIT_GIVE_UP_MS), 500 + 1000 + 2000);
    assert_true(keywait_waited_ms(700, KEYWAIT_GIVE_UP_MS) <
                KEYWAIT_GIVE_UP_MS); /* about 720 deliveries an hour */
    assert_true(keywait_waited_ms(740, KEYWAIT_GIVE_UP_MS) >= KEYWAIT_GIVE_UP_MS);
    assert_true(keywait_waited_ms(UINT64_MAX, KEYWAIT_GIVE_UP_MS) >=
                KEYWAIT_GIVE_UP_MS); /* bounded loop */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delay_doubles_to_its_cap),
        cmocka_unit_test(test_waited_sums_the_delays_before),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
