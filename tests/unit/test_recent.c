/* pull_recent.c: a member's last hour minute by minute, as its beat carries it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pull_recent.h"

static struct counters k;
static struct recent r;

static void
send_one(int64_t late_ms)
{
    atomic_fetch_add(&k.sent[1], 1);
    counters_lateness(&k, late_ms, late_ms, 0);
}

static void
test_minutes_newest_first(void **state)
{
    char out[1536];
    int64_t m = 29000000; /* a wall-clock minute */

    (void)state;
    memset(&k, 0, sizeof(k));
    memset(&r, 0, sizeof(r));
    recent_tick(&r, &k, m * 60000 + 5);
    send_one(3);
    send_one(40);
    recent_tick(&r, &k, (m + 1) * 60000 + 1);
    atomic_fetch_add(&k.retried[2], 1);
    send_one(2000000); /* past every bound */
    assert_true(recent_json(&r, &k, out, sizeof(out)) > 0);
    assert_non_null(strstr(out, "\"per_minute\":[[1,1,0],[2,0,0]]"));
    /* the hour: one each in <= 5 ms, <= 50 ms and past the last bound */
    assert_non_null(strstr(out, "\"dispatch\":[0,1,0,0,1,0,0,0,0,0,0,0,0,0,0,0,1]"));
    assert_non_null(strstr(out, "\"delivery\":[0,1,0,0,1,0,0,0,0,0,0,0,0,0,0,0,1]"));
}

static void
test_keeps_an_hour_and_says_when_too_small(void **state)
{
    char out[1536];

    (void)state;
    memset(&k, 0, sizeof(k));
    memset(&r, 0, sizeof(r));
    for (int64_t m = 0; m < 90; m++) {
        recent_tick(&r, &k, m * 60000);
        send_one(1);
    }
    assert_int_equal(r.len, RECENT_MINUTES);
    assert_true(recent_json(&r, &k, out, sizeof(out)) > 0);
    assert_non_null(strstr(out, "\"dispatch\":[60,")); /* the last hour only: 60 of 90 */
    assert_int_equal(recent_json(&r, &k, out, 40), -1);
    recent_tick(&r, &k, 1000 * 60000); /* a long silence: the old minutes are forgotten */
    assert_int_equal(r.len, 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minutes_newest_first),
        cmocka_unit_test(test_keeps_an_hour_and_says_when_too_small),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
