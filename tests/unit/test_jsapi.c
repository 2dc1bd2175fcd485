/* The one place the JetStream API's subjects are written (issue 36.4): the prefix and the rest,
 * and a buffer too short said so rather than a subject cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "jsapi.h"

static void
test_subjects(void **state)
{
    char out[64];

    (void)state;
    assert_int_equal(sa_jsapi_subject(out, sizeof(out), "STREAM.INFO.%s", "KV_x"), 24);
    assert_string_equal(out, "$JS.API.STREAM.INFO.KV_x");
    assert_int_equal(sa_jsapi_subject(out, sizeof(out), "INFO"), 12);
    assert_string_equal(out, "$JS.API.INFO");
    assert_int_equal(sa_jsapi_subject(out, 20, "STREAM.INFO.%s", "KV_x"), -1);
    assert_int_equal(sa_jsapi_subject(out, 5, "INFO"), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subjects),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
