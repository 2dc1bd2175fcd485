/* logsum: log lines of one cause, the first few of an interval whole, then one summary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "logsum.h"

static void
test_first_lines_whole_then_counted(void **state)
{
    struct logsum s = {.event = "parked"};
    int whole = 0;

    (void)state;
    for (int i = 0; i < 1000; i++)
        whole += logsum_take(&s, 1000 + i);
    assert_int_equal(whole, LOGSUM_WHOLE);
    assert_int_equal(s.seen, 1000);
    assert_int_equal(s.whole, LOGSUM_WHOLE);
    logsum_tick(&s, 1000 + LOGSUM_EVERY_MS - 1); /* not over yet: the counts stand */
    assert_int_equal(s.seen, 1000);
    logsum_tick(&s, 1000 + LOGSUM_EVERY_MS); /* the summary line, and a new interval */
    assert_int_equal(s.seen, 0);
    assert_int_equal(s.from_ms, 0);
    assert_int_equal(logsum_take(&s, 1000 + LOGSUM_EVERY_MS + 1), 1);
}

static void
test_interval_ends_at_the_next_event(void **state)
{
    struct logsum s = {.event = "unknown_key"};

    (void)state;
    for (int i = 0; i < LOGSUM_WHOLE + 3; i++)
        logsum_take(&s, 5000);
    assert_int_equal(logsum_take(&s, 5000 + 3 * LOGSUM_EVERY_MS), 1); /* no tick came between */
    assert_int_equal(s.seen, 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_lines_whole_then_counted),
        cmocka_unit_test(test_interval_ends_at_the_next_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
