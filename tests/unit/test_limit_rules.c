/* SENDAT_HOST_LIMITS parsing: a rate outside 1/h .. 1,000,000/s is refused (found by
 * fuzz_limits: rate:1e-300/s made a wait time past int64, undefined behaviour). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "limits.h"

static void
test_rates(void **state)
{
    static const char *bad[] = {"x=rate:1e-300/s", "x=rate:inf/s", "x=rate:nan/s", "x=rate:0/s",
                                "x=rate:-1/s",     "x=rate:2e6/s", "x=rate:0.01/m"};
    struct limits *l = NULL;
    struct sa_err err = {0};
    int64_t retry = 0;
    int lease = -1;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(limits_new(&l, bad[i], "c", &err), SA_EINVAL);
        assert_non_null(strstr(err.msg, "rate from 1/h"));
        sa_err_clear(&err);
    }
    assert_int_equal(limits_new(&l, "x=rate:1/m;y=rate:1000000/s", "c", NULL), SA_OK);
    assert_int_equal(limits_acquire(l, "x", 1000, &retry, &lease), 1);
    limits_release(l, "x", lease);
    assert_int_equal(limits_acquire(l, "x", 1001, &retry, &lease), 0);
    assert_true(retry > 1001 && retry <= 1001 + 60000 + 1);
    limits_free(l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
