/* minheap.c: the one heap of the wheel and of the claimed tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "minheap.h"

struct item {
    int64_t due;
    char pad[300]; /* larger than the swap buffer: swapped in pieces */
    int id;
};

static int64_t
item_due(const void *e)
{
    return ((const struct item *)e)->due;
}

static void
test_pops_in_key_order(void **state)
{
    struct minheap h;
    struct item it = {0}, out;
    int64_t last = INT64_MIN;

    (void)state;
    minheap_init(&h, sizeof(struct item), item_due);
    srand(7);
    for (int i = 0; i < 1000; i++) {
        it.due = rand() % 500;
        it.id = i;
        assert_int_equal(minheap_push(&h, &it), 0);
    }
    assert_int_equal(((struct item *)minheap_top(&h))->due, 0);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(minheap_pop(&h, &out), 1);
        assert_true(out.due >= last);
        last = out.due;
    }
    assert_int_equal(minheap_pop(&h, &out), 0);
    assert_null(minheap_top(&h));
    minheap_free(&h);
}

static void
test_take_last_empties_without_order(void **state)
{
    struct minheap h;
    struct item it = {0}, out;
    int seen = 0;

    (void)state;
    minheap_init(&h, sizeof(struct item), item_due);
    for (int i = 0; i < 10; i++) {
        it.due = 10 - i;
        it.id = i;
        assert_int_equal(minheap_push(&h, &it), 0);
    }
    for (size_t i = 0; i < h.len; i++)
        seen += ((struct item *)minheap_at(&h, i))->id;
    assert_int_equal(seen, 45);
    for (int i = 0; i < 10; i++)
        assert_int_equal(minheap_take_last(&h, &out), 1);
    assert_int_equal(minheap_take_last(&h, &out), 0);
    minheap_free(&h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pops_in_key_order),
        cmocka_unit_test(test_take_last_empties_without_order),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
