/* Time parsing: RFC 3339 with offsets and fractions, relative and @unix forms, every field's
 * range, leap years, trailing garbage; durations; formatting round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "timeparse.h"

#define NOW 1795340100000LL /* 2026-11-22T09:35:00Z */

static int64_t
parse(const char *s)
{
    int64_t v = -1;
    struct sa_err err = {0};

    if (sa_time_parse(s, NOW, &v, &err) != SA_OK)
        fail_msg("%s: %s", s, err.msg);
    return v;
}

static void
test_valid(void **state)
{
    (void)state;
    assert_int_equal(parse("2026-11-22T09:35:00Z"), NOW);
    assert_int_equal(parse("2026-11-22t09:35:00z"), NOW);
    assert_int_equal(parse("2026-11-22 09:35:00Z"), NOW);
    assert_int_equal(parse("2026-11-22T18:35:00+09:00"), NOW);
    assert_int_equal(parse("2026-11-22T06:05:00-03:30"), NOW);
    assert_int_equal(parse("2026-11-22T09:35:00.250Z"), NOW + 250);
    assert_int_equal(parse("2026-11-22T09:35:00.5Z"), NOW + 500);
    assert_int_equal(parse("2026-11-22T09:35:00.123456789Z"), NOW + 123);
    assert_int_equal(parse("1970-01-01T00:00:00Z"), 0);
    assert_int_equal(parse("2028-02-29T00:00:00Z"), 1835395200000LL);
    assert_int_equal(parse("2000-02-29T00:00:00Z"), 951782400000LL);
    assert_int_equal(parse("+90s"), NOW + 90000);
    assert_int_equal(parse("+10m"), NOW + 600000);
    assert_int_equal(parse("+2h"), NOW + 7200000);
    assert_int_equal(parse("+3d"), NOW + 3 * 86400000LL);
    assert_int_equal(parse("+1500ms"), NOW + 1500);
    assert_int_equal(parse("@1795340100"), NOW);
    assert_int_equal(parse("@1795340100.25"), NOW + 250);
}

static void
test_invalid(void **state)
{
    static const char *bad[] = {
        "", "tomorrow", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-22T24:00:00Z",
        "2026-11-22T09:60:00Z", "2026-11-22T09:35:60Z", "2026-11-22T09:35:00",
        "2026-11-22T09:35:00+24:00", "2026-11-22T09:35:00+09", "2026-11-22T09:35:00Zjunk",
        "2026-11-22", "2026-11-22T09:35Z", "2026-11-22T09:35:00.Z", "+", "+10", "+10y", "+-5s",
        "+10s junk", "@", "@abc", "@123x", "@99999999999999999999", "+99999999999999999999d", NULL};
    int64_t v;
    struct sa_err err;

    (void)state;
    for (int i = 0; bad[i]; i++) {
        sa_err_clear(&err);
        if (sa_time_parse(bad[i], NOW, &v, &err) != SA_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_true(strlen(err.msg) > 0);
    }
}

static void
test_durations_and_format(void **state)
{
    int64_t v = 0;
    char out[40];

    (void)state;
    assert_int_equal(sa_duration_parse("250ms", &v, NULL), SA_OK);
    assert_int_equal(v, 250);
    assert_int_equal(sa_duration_parse("7d", &v, NULL), SA_OK);
    assert_int_equal(v, 7 * 86400000LL);
    assert_int_equal(sa_duration_parse("10", &v, NULL), SA_EINVAL);
    assert_int_equal(sa_duration_parse("-1s", &v, NULL), SA_EINVAL);
    sa_time_format(out, sizeof(out), NOW + 7);
    assert_string_equal(out, "2026-11-22T09:35:00.007Z");
    assert_int_equal(parse(out), NOW + 7);
    sa_time_format(out, sizeof(out), 0);
    assert_string_equal(out, "1970-01-01T00:00:00.000Z");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_durations_and_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
