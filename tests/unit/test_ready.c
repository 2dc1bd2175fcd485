/* The heap of tasks claimed ahead of their due time: nothing comes out before it is due, and
 * what comes out comes in due order, against random pushes and pops interleaved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ready.h"

static void
test_not_before_due(void **state)
{
    struct ready r = {0};
    struct held a = {.due_ms = 1000}, b = {.due_ms = 500};
    struct ready_entry e = {.h = &a, .rev = 7, .lease = -1, .host = "example.test"}, out;

    (void)state;
    assert_true(ready_next_due(&r) == INT64_MAX);
    assert_int_equal(ready_pop_due(&r, INT64_MAX, &out), 0);
    assert_int_equal(ready_push(&r, &e, NULL), SA_OK);
    e.h = &b;
    e.rev = 8;
    assert_int_equal(ready_push(&r, &e, NULL), SA_OK);
    assert_true(ready_next_due(&r) == 500);
    assert_int_equal(ready_pop_due(&r, 499, &out), 0);
    assert_int_equal(ready_pop_due(&r, 500, &out), 1);
    assert_ptr_equal(out.h, &b);
    assert_int_equal(out.rev, 8);
    assert_string_equal(out.host, "example.test");
    assert_int_equal(ready_pop_due(&r, 999, &out), 0);
    assert_int_equal(ready_pop_due(&r, 1000, &out), 1);
    assert_ptr_equal(out.h, &a);
    assert_int_equal(ready_count(&r), 0);
    ready_free(&r);
}

/* 5,000 tasks with random due times pushed and popped in random interleaving: every pop is
 * the smallest due time left, and all come out. */
static void
test_due_order(void **state)
{
    enum { N = 5000 };
    struct held *hs = calloc(N, sizeof(*hs));
    struct ready r = {0};
    struct ready_entry e = {0}, out;
    unsigned seed = 11;
    int pushed = 0, popped = 0;
    int64_t last = INT64_MIN, clock = 0;

    (void)state;
    assert_non_null(hs);
    while (popped < N) {
        if (pushed < N && (rand_r(&seed) % 3 || ready_count(&r) == 0)) {
            hs[pushed].due_ms = clock + (int64_t)(rand_r(&seed) % 1000);
            e.h = &hs[pushed++];
            assert_int_equal(ready_push(&r, &e, NULL), SA_OK);
            continue;
        }
        clock = ready_next_due(&r);
        assert_int_equal(ready_pop_due(&r, clock, &out), 1);
        assert_true(out.h->due_ms >= last); /* the clock only moves forward */
        last = out.h->due_ms;
        popped++;
    }
    assert_int_equal(ready_count(&r), 0);
    ready_free(&r);
    free(hs);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_before_due),
        cmocka_unit_test(test_due_order),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
