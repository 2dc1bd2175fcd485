/* The sweep record: its text form round-trips, and anything else is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sweeprec.h"

static void
test_round_trip(void **state)
{
    struct sa_sweep_record r, back;
    char text[200];

    (void)state;
    sa_sweep_record_init(&r);
    assert_int_equal(r.next_seq, 1);
    r = (struct sa_sweep_record){.next_seq = 18446744073709551615ULL,
                                 .found = 4,
                                 .checked = 100000,
                                 .last_run_ms = 1795468890000LL,
                                 .cursor = 1795468800000LL};
    assert_true(sa_sweep_record_format(text, sizeof(text), &r) > 0);
    assert_int_equal(sa_sweep_record_parse(&back, text, NULL), SA_OK);
    assert_memory_equal(&r, &back, sizeof(r));
}

static void
test_refused(void **state)
{
    static const char *bad[] = {"", "next_seq=1",
                                "next_seq=0 found=0 checked=0 last_run_ms=0 cursor=0",
                                "found=0 next_seq=1 checked=0 last_run_ms=0 cursor=0", NULL};
    struct sa_sweep_record r;

    (void)state;
    for (int i = 0; bad[i]; i++)
        assert_int_equal(sa_sweep_record_parse(&r, bad[i], NULL), SA_EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
