/* keywait: the backoff of parked tasks sealed with a key id not loaded yet. */
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
    assert_int_equal(keywait_delay_ms(7), 32000);
    assert_int_equal(keywait_delay_ms(8), KEYWAIT_MAX_MS);
    assert_int_equal(keywait_delay_ms(UINT64_MAX), KEYWAIT_MAX_MS); /* bounded loop */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delay_doubles_to_its_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
