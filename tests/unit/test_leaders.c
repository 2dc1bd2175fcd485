/* leaders_pick: which shard leader the consumers' leader balance moves, and where (issue 25.4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "leaders.h"

/* An asset led by leader with the other two of n1..n3 (or none, R1) as followers. */
static void
asset(struct leaders_asset *a, const char *leader, int replicated)
{
    const char *all[] = {"n1", "n2", "n3"};

    memset(a, 0, sizeof(*a));
    snprintf(a->leader, sizeof(a->leader), "%s", leader);
    a->settled = 1;
    for (int i = 0; i < 3 && replicated; i++)
        if (strcmp(all[i], leader))
            snprintf(a->peer[a->peers++], LEADERS_NAME_LEN, "%s", all[i]);
}

static void
three(struct leaders_asset *a, const char *l0, const char *l1, const char *l2)
{
    asset(&a[0], l0, 1);
    asset(&a[1], l1, 1);
    asset(&a[2], l2, 1);
}

static void
test_spread_leaders_stay(void **state)
{
    struct leaders_asset a[3], b[3];
    char to[LEADERS_NAME_LEN] = "";
    int which = -1;

    (void)state;
    three(a, "n1", "n2", "n3");
    three(b, "n3", "n1", "n2");
    assert_int_equal(leaders_pick(a, b, 3, &which, to), 0);
}

/* After n2 came back: n1 leads shards 0 and 1, n3 shard 2; one goes to n2. */
static void
test_one_moves_to_the_server_leading_none(void **state)
{
    struct leaders_asset a[3], b[3];
    char to[LEADERS_NAME_LEN] = "";
    int which = -1;

    (void)state;
    three(a, "n1", "n1", "n3");
    three(b, "n1", "n3", "n3");
    assert_int_equal(leaders_pick(a, b, 3, &which, to), 1);
    assert_true(which == 0 || which == 1);
    assert_string_equal(to, "n2");
}

/* Of two equal moves, the shard whose other asset the target leads already. */
static void
test_partner_decides(void **state)
{
    struct leaders_asset a[3], b[3];
    char to[LEADERS_NAME_LEN] = "";
    int which = -1;

    (void)state;
    three(a, "n1", "n1", "n3");
    three(b, "n1", "n2", "n3");
    assert_int_equal(leaders_pick(a, b, 3, &which, to), 1);
    assert_int_equal(which, 1);
    assert_string_equal(to, "n2");
    three(b, "n2", "n1", "n3");
    assert_int_equal(leaders_pick(a, b, 3, &which, to), 1);
    assert_int_equal(which, 0);
}

/* Within the share nothing moves: 4 shards on 3 servers, share 2. */
static void
test_share_is_rounded_up(void **state)
{
    struct leaders_asset a[4], b[4];
    char to[LEADERS_NAME_LEN] = "";
    int which = -1;

    (void)state;
    three(a, "n1", "n1", "n2");
    asset(&a[3], "n3", 1);
    memcpy(b, a, sizeof(a));
    assert_int_equal(leaders_pick(a, b, 4, &which, to), 0);
    asset(&a[3], "n1", 1); /* n1 leads 3: one to n3, which leads none */
    assert_int_equal(leaders_pick(a, b, 4, &which, to), 1);
    assert_string_equal(a[which].leader, "n1");
    assert_string_equal(to, "n3");
}

/* R1 assets have no follower to take a leadership: no move, however they lie. */
static void
test_one_copy_cannot_move(void **state)
{
    struct leaders_asset a[3], b[3];
    char to[LEADERS_NAME_LEN] = "";
    int which = -1;

    (void)state;
    for (int k = 0; k < 3; k++)
        asset(&a[k], "n1", 0);
    memcpy(b, a, sizeof(a));
    assert_int_equal(leaders_pick(a, b, 3, &which, to), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spread_leaders_stay),
        cmocka_unit_test(test_one_moves_to_the_server_leading_none),
        cmocka_unit_test(test_partner_decides),
        cmocka_unit_test(test_share_is_rounded_up),
        cmocka_unit_test(test_one_copy_cannot_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
