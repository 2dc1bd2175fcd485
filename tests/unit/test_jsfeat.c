/* The server features of each JetStream API level, their names on the start line, and a
 * SENDAT_SERVER_FEATURES that is neither auto nor none refused before anything is asked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jsfeat.h"

static void
test_levels(void **state)
{
    (void)state;
    assert_int_equal(sa_jsfeat_of_level(0), 0);
    assert_int_equal(sa_jsfeat_of_level(1), SA_JSFEAT_MSG_TTL);
    assert_int_equal(sa_jsfeat_of_level(2),
                     SA_JSFEAT_MSG_TTL | SA_JSFEAT_ATOMIC | SA_JSFEAT_SCHEDULE);
    assert_int_equal(sa_jsfeat_of_level(3), sa_jsfeat_of_level(2));
    assert_int_equal(sa_jsfeat_of_level(5), sa_jsfeat_of_level(2) | SA_JSFEAT_RESET);
}

static void
test_names(void **state)
{
    char buf[64];

    (void)state;
    assert_string_equal(sa_jsfeat_names(0, buf, sizeof(buf)), "none");
    assert_string_equal(sa_jsfeat_names(sa_jsfeat_of_level(5), buf, sizeof(buf)),
                        "ttl,atomic,schedule,reset");
    assert_string_equal(sa_jsfeat_names(SA_JSFEAT_MSG_TTL, buf, 4), "ttl");
}

static void
test_bad_setting(void **state)
{
    struct sa_jsfeat f;
    struct sa_err err = {0};

    (void)state;
    setenv("SENDAT_SERVER_FEATURES", "all", 1);
    assert_int_equal(sa_jsfeat_detect(NULL, &f, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "SENDAT_SERVER_FEATURES=all"));
    unsetenv("SENDAT_SERVER_FEATURES");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_bad_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
