/* The consumer's set of held stream sequences, against a plain array as the reference: adds,
 * repeated adds, removals in every order (runs that wrap around the table) and growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "seqset.h"

static int
contains(struct seqset *s, uint64_t seq)
{
    enum seqset_put added = seqset_add(s, seq);

    if (added == SEQSET_ADDED)
        seqset_remove(s, seq);
    return added == SEQSET_PRESENT;
}

static void
test_add_twice(void **state)
{
    struct seqset s = {0};

    (void)state;
    assert_int_equal(seqset_add(&s, 42), SEQSET_ADDED);
    assert_int_equal(seqset_add(&s, 42), SEQSET_PRESENT);
    assert_int_equal(s.len, 1);
    seqset_remove(&s, 42);
    assert_int_equal(s.len, 0);
    assert_int_equal(seqset_add(&s, 42), SEQSET_ADDED);
    seqset_remove(&s, 7); /* absent: nothing happens */
    assert_int_equal(s.len, 1);
    assert_int_equal(seqset_add(&s, 0), SEQSET_PRESENT); /* 0 marks an empty slot: never a key */
    assert_int_equal(seqset_put(&s, 9, &s), SEQSET_ADDED);
    assert_int_equal(seqset_put(&s, 9, NULL), SEQSET_PRESENT); /* the first value stays */
    assert_ptr_equal(seqset_get(&s, 9), &s);                   /* and stays after a get */
    assert_null(seqset_get(&s, 10));
    assert_ptr_equal(seqset_take(&s, 9), &s);
    assert_null(seqset_take(&s, 9));
    seqset_free(&s);
}

/* 20,000 random sequences in and out in random order, checked against a reference array. */
static void
test_against_reference(void **state)
{
    enum { N = 20000, RANGE = 30000 };
    struct seqset s = {0};
    unsigned char *in = calloc(RANGE + 1, 1);
    unsigned seed = 11;

    (void)state;
    for (int step = 0; step < 200000; step++) {
        uint64_t seq = 1 + (uint64_t)(rand_r(&seed) % RANGE);
        if (rand_r(&seed) % 3) {
            assert_int_equal(seqset_add(&s, seq), in[seq] ? SEQSET_PRESENT : SEQSET_ADDED);
            in[seq] = 1;
        } else {
            seqset_remove(&s, seq);
            in[seq] = 0;
        }
        if (s.len > N)
            for (uint64_t k = 1; k <= RANGE && s.len > N / 2; k++)
                if (in[k]) {
                    seqset_remove(&s, k);
                    in[k] = 0;
                }
    }
    for (uint64_t k = 1; k <= RANGE; k++)
        assert_int_equal(contains(&s, k), in[k]);
    free(in);
    seqset_free(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_twice),
        cmocka_unit_test(test_against_reference),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
