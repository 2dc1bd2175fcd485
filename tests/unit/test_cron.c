/* Cron parsing and next fires around DST transitions. The expected instants are written here
 * from the published zone rules for 2026 (not computed by the code under test):
 *   America/New_York  EST -05:00 -> EDT -04:00 on Sun 8 Mar at 02:00; back on Sun 1 Nov at 02:00
 *   Europe/Berlin     CET +01:00 -> CEST +02:00 on Sun 29 Mar at 02:00; back on Sun 25 Oct at 03:00
 *   Australia/Lord_Howe  +10:30 -> +11:00 on Sun 4 Oct at 02:00; back on Sun 5 Apr at 02:00 (to
 * 01:30) Asia/Seoul        +09:00, no DST */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cron.h"
#include "timeparse.h"

struct row {
    const char *zone, *cron, *after, *want;
    int flags;
};

static const struct row rows[] = {
    /* New York, spring forward: 02:30 does not exist on 8 Mar -> 03:00 EDT, once */
    {"America/New_York", "30 2 * * *", "2026-03-07T00:00:00Z", "2026-03-07T07:30:00Z", 0},
    {"America/New_York", "30 2 * * *", "2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", SA_CRON_GAP},
    {"America/New_York", "30 2 * * *", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", 0},
    {"America/New_York", "*/15 2 * * *", "2026-03-08T06:50:00Z", "2026-03-08T07:00:00Z",
     SA_CRON_GAP},
    {"America/New_York", "*/15 2 * * *", "2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z", 0},
    /* Issue 28, item 14: from within the last second before the 2027 gap's end (01:59:59.999
     * EST on 14 Mar), the gap's fire is 03:00 EDT that same night, not the next day */
    {"America/New_York", "30 2 * * *", "2027-03-14T06:59:59.999Z", "2027-03-14T07:00:00Z",
     SA_CRON_GAP},
    {"America/New_York", "30 2 * * *", "2027-03-14T06:59:59Z", "2027-03-14T07:00:00Z", SA_CRON_GAP},
    {"America/New_York", "0 0 3 * * *", "2027-03-14T06:59:59.999Z", "2027-03-14T07:00:00Z", 0},
    {"America/New_York", "30 2 * * *", "2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z", 0},
    /* New York, fall back: 01:30 happens twice on 1 Nov -> only the first (EDT) */
    {"America/New_York", "30 1 * * *", "2026-10-31T12:00:00Z", "2026-11-01T05:30:00Z",
     SA_CRON_OVERLAP},
    {"America/New_York", "30 1 * * *", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", 0},
    {"America/New_York", "0 * * * *", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z", 0},
    /* Berlin */
    {"Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z", SA_CRON_GAP},
    {"Europe/Berlin", "30 2 * * *", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z", 0},
    {"Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00Z", "2026-10-25T00:30:00Z",
     SA_CRON_OVERLAP},
    {"Europe/Berlin", "30 2 * * *", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", 0},
    /* Lord Howe: a 30-minute shift */
    {"Australia/Lord_Howe", "15 2 * * *", "2026-10-02T00:00:00Z", "2026-10-02T15:45:00Z", 0},
    {"Australia/Lord_Howe", "15 2 * * *", "2026-10-02T15:45:00Z", "2026-10-03T15:30:00Z",
     SA_CRON_GAP},
    {"Australia/Lord_Howe", "45 1 * * *", "2026-04-04T00:00:00Z", "2026-04-04T14:45:00Z",
     SA_CRON_OVERLAP},
    {"Australia/Lord_Howe", "45 1 * * *", "2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z", 0},
    /* Seoul: 07:00 every day, Monday and Friday reminders */
    {"Asia/Seoul", "0 7 * * *", "2026-11-22T00:00:00Z", "2026-11-22T22:00:00Z", 0},
    {"Asia/Seoul", "0 9 * * MON,FRI", "2026-11-22T00:00:00Z", "2026-11-23T00:00:00Z", 0},
    {"Asia/Seoul", "0 9 * * 1,5", "2026-11-23T00:00:00Z", "2026-11-27T00:00:00Z", 0},
    {"Asia/Seoul", "@daily", "2026-11-22T00:00:00Z", "2026-11-22T15:00:00Z", 0},
    {"Asia/Seoul", "@monthly", "2026-11-22T00:00:00Z", "2026-11-30T15:00:00Z", 0},
    {"Asia/Seoul", "*/10 * * * * *", "2026-11-22T00:00:00Z", "2026-11-22T00:00:10Z", 0},
    {"UTC", "0 0 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z", 0},
    {"UTC", "0 12 13 * FRI", "2026-11-22T00:00:00Z", "2026-11-27T12:00:00Z", 0}, /* dom or dow */
    {NULL, NULL, NULL, NULL, 0},
};

static int64_t
at(const char *s)
{
    int64_t v = 0;

    assert_int_equal(sa_time_parse(s, 0, &v, NULL), SA_OK);
    return v;
}

static void
test_table(void **state)
{
    (void)state;
    for (const struct row *r = rows; r->zone; r++) {
        struct sa_cron *c = NULL;
        struct sa_err err = {0};
        int64_t next = 0;
        int flags = -1;
        char got[40];

        assert_int_equal(sa_cron_parse(&c, r->cron, NULL), SA_OK);
        if (sa_cron_next(c, r->zone, at(r->after), &next, &flags, &err) != SA_OK)
            fail_msg("%s %s after %s: %s", r->zone, r->cron, r->after, err.msg);
        sa_time_format(got, sizeof(got), next);
        if (next != at(r->want) || flags != r->flags)
            fail_msg("%s \"%s\" after %s: got %s flags %d, want %s flags %d", r->zone, r->cron,
                     r->after, got, flags, r->want, r->flags);
        sa_cron_free(c);
    }
}

static void
test_refusals(void **state)
{
    static const char *bad[] = {
        "",           "* * * *",       "60 * * * *", "* 24 * * *",   "* * 0 * *",
        "* * 32 * *", "* * * 13 *",    "* * * * 8",  "*/0 * * * *",  "5-1 * * * *",
        "a * * * *",  "* * * * * * *", "@every",     "1,,2 * * * *", NULL};
    struct sa_cron *c = NULL;
    struct sa_err err = {0};
    int64_t next;
    int flags;

    (void)state;
    for (int i = 0; bad[i]; i++)
        if (sa_cron_parse(&c, bad[i], NULL) == SA_OK)
            fail_msg("cron \"%s\" was accepted", bad[i]);
    assert_int_equal(sa_tz_check("Asia/Seoul", NULL), SA_OK);
    assert_int_equal(sa_tz_check("Mars/Olympus_Mons", &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "unknown time zone"));
    assert_int_equal(sa_tz_check("", NULL), SA_EINVAL);
    assert_int_equal(sa_cron_parse(&c, "0 0 31 2 *", NULL), SA_OK);
    assert_int_equal(sa_cron_next(c, "UTC", 0, &next, &flags, NULL), SA_ENOTFOUND);
    sa_cron_free(c);
}

static void
test_local_format(void **state)
{
    char out[64];

    (void)state;
    assert_true(sa_tz_format_local(out, sizeof(out), "Asia/Seoul", at("2026-11-22T22:00:00Z")) > 0);
    assert_string_equal(out, "2026-11-23 07:00:00 +09:00");
    sa_tz_format_local(out, sizeof(out), "Australia/Lord_Howe", at("2026-10-03T15:30:00Z"));
    assert_string_equal(out, "2026-10-04 02:30:00 +11:00");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_local_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
