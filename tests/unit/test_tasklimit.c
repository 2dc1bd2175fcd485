/* The headroom rule of a task stream's size limit (tasklimit.h): the stream's hard limit is
 * the producers' limit plus a tenth, at least 10,000 tasks (64 MiB), and the producers read
 * their limit back from the hard one exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tasklimit.h"

static void
test_headroom(void **state)
{
    (void)state;
    assert_int_equal(tasklimit_hard(50, 0), 50 + 10000);
    assert_int_equal(tasklimit_hard(100000, 0), 110000);
    assert_int_equal(tasklimit_hard(1000000, 0), 1100000);
    assert_int_equal(tasklimit_hard(1LL << 30, 1), (1LL << 30) + (1LL << 30) / 10);
    assert_int_equal(tasklimit_hard(1LL << 20, 1), (1LL << 20) + (64LL << 20));
}

static void
test_inverse(void **state)
{
    static const int64_t limits[] = {
        1,         2,         50,         9999,      10000,         99999,
        100000,    100001,    100009,     123457,    1000000,       7777777,
        1LL << 20, 1LL << 30, 10LL << 30, 1LL << 40, 999999999999LL};

    (void)state;
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
        for (int bytes = 0; bytes < 2; bytes++)
            assert_int_equal(tasklimit_of(tasklimit_hard(limits[i], bytes), bytes), limits[i]);
    assert_int_equal(tasklimit_of(-1, 0), 0); /* no limit on the stream */
    assert_int_equal(tasklimit_of(0, 1), 0);
    assert_int_equal(tasklimit_of(5000, 0), 0); /* below any headroom: not init's, no limit */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headroom),
        cmocka_unit_test(test_inverse),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
