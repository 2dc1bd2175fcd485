/* Time parsing: RFC 3339 with offsets and fractions, relative and @unix forms, every field's
 * range, leap years, trailing garbage, overflow; durations; formatting checked against libc's
 * gmtime_r and round-tripped. Expected instants were computed with Python's datetime. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "timeparse.h"

#define NOW 1795340100000LL /* 2026-11-22T09:35:00Z */
#define MIN_MS (-62167219200000LL)
#define MAX_MS 253402300799999LL

struct good {
    const char *text;
    int64_t ms;
};

struct bad {
    const char *text;
    const char *msg; /* a part of the message */
};

static const struct good valid[] = {
    {"2026-11-22T09:35:00Z", NOW},
    {"2026-11-22t09:35:00z", NOW},
    {"2026-11-22 09:35:00Z", NOW},
    {"2026-11-22T09:35:00+00:00", NOW},
    {"2026-11-22T09:35:00-00:00", NOW},
    {"2026-11-22T18:35:00+09:00", NOW},
    {"2026-11-22T06:05:00-03:30", NOW},
    {"2026-11-22T15:20:00+05:45", NOW},
    {"2026-11-23T00:00:00+14:00", 1795341600000LL},
    {"2026-11-21T12:00:00-12:00", 1795305600000LL},
    {"2026-11-22T00:00:00+23:59", 1795219260000LL},
    {"2026-11-22T00:00:00-23:59", 1795391940000LL},
    {"2027-01-01T08:59:59+09:00", 1798761599000LL}, /* crosses the year */
    {"2026-11-22T09:35:00.250Z", NOW + 250},
    {"2026-11-22T09:35:00.5Z", NOW + 500},
    {"2026-11-22T09:35:00.05Z", NOW + 50},
    {"2026-11-22T09:35:00.000Z", NOW},
    {"2026-11-22T09:35:00.999999999Z", NOW + 999}, /* truncated, not rounded */
    {"2026-11-22T18:35:00.123456+09:00", NOW + 123},
    {"2026-12-31T23:59:59.999Z", 1798761599999LL},
    {"1970-01-01T00:00:00Z", 0},
    {"1969-12-31T23:59:59Z", -1000},
    {"2028-02-29T00:00:00Z", 1835395200000LL},
    {"2024-02-29T23:59:59.999Z", 1709251199999LL},
    {"2000-02-29T00:00:00Z", 951782400000LL},
    {"2400-02-29T12:00:00Z", 13574606400000LL},
    {"1600-02-29T00:00:00Z", -11670998400000LL},
    {"1900-03-01T00:00:00Z", -2203891200000LL},
    {"2100-03-01T00:00:00Z", 4107542400000LL},
    {"0001-01-01T00:00:00Z", -62135596800000LL},
    {"0000-01-01T00:00:00Z", MIN_MS},
    {"9999-12-31T23:59:59.999Z", MAX_MS},
    {"+90s", NOW + 90000},
    {"+10m", NOW + 600000},
    {"+2h", NOW + 7200000},
    {"+3d", NOW + 3 * 86400000LL},
    {"+1500ms", NOW + 1500},
    {"+0s", NOW},
    {"+007m", NOW + 420000},
    {"@1795340100", NOW},
    {"@1795340100.25", NOW + 250},
    {"@1795340100.999999", NOW + 999},
    {"@0", 0},
    {"@253402300799.999", MAX_MS},
};

static void
test_valid(void **state)
{
    struct sa_err err = {0};
    int64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
        v = -42;
        if (sa_time_parse(valid[i].text, NOW, &v, &err) != SA_OK)
            fail_msg("\"%s\" refused: %s", valid[i].text, err.msg);
        if (v != valid[i].ms)
            fail_msg("\"%s\": got %" PRId64 ", want %" PRId64, valid[i].text, v, valid[i].ms);
    }
}

static const struct bad invalid[] = {
    {"", "empty"},
    {"tomorrow", "want RFC 3339"},
    {" 2026-11-22T09:35:00Z", "want RFC 3339"},
    {"2026/11/22T09:35:00Z", "want RFC 3339"},
    {"26-11-22T09:35:00Z", "want RFC 3339"},
    {"2026-1-22T09:35:00Z", "want RFC 3339"},
    {"2026-11-22", "want 'T'"},
    {"2026-11-22X09:35:00Z", "want 'T'"},
    {"2026-11-22T09:35Z", "HH:MM:SS"},
    {"2026-11-22T9:35:00Z", "HH:MM:SS"},
    {"2026-11-22T09:35:00.Z", "digits after the '.'"},
    {"2026-13-01T00:00:00Z", "month 13 out of range"},
    {"2026-00-10T00:00:00Z", "month 0 out of range"},
    {"2026-01-00T00:00:00Z", "day 0 out of range"},
    {"2026-01-32T00:00:00Z", "day 32 out of range"},
    {"2026-02-29T00:00:00Z", "day 29 out of range (2026-02 has 28 days)"},
    {"1900-02-29T00:00:00Z", "day 29 out of range"},
    {"2100-02-29T00:00:00Z", "day 29 out of range"},
    {"2028-02-30T00:00:00Z", "day 30 out of range (2028-02 has 29 days)"},
    {"2026-04-31T00:00:00Z", "day 31 out of range"},
    {"2026-11-22T24:00:00Z", "hour 24 out of range"},
    {"2026-11-22T09:60:00Z", "minute 60 out of range"},
    {"2026-12-31T23:59:60Z", "leap second"},
    {"2026-11-22T09:35:61Z", "second 61 out of range"},
    {"2026-11-22T09:35:00", "no offset"},
    {"2026-11-22T09:35:00.5", "no offset"},
    {"2026-11-22T09:35:00 Z", "want Z or an offset"},
    {"2026-11-22T09:35:00+24:00", "offset +24:00 out of range"},
    {"2026-11-22T09:35:00-09:60", "offset -09:60 out of range"},
    {"2026-11-22T09:35:00+09", "+HH:MM"},
    {"2026-11-22T09:35:00+0900", "+HH:MM"},
    {"2026-11-22T09:35:00+09:00:00", "unexpected \":00\""},
    {"2026-11-22T09:35:00Zjunk", "unexpected \"junk\""},
    {"2026-11-22T09:35:00Z ", "unexpected \" \""},
    {"9999-12-31T23:59:59-00:01", "outside"},
    {"0000-01-01T00:00:00+00:01", "outside"},
    {"+", "want a number"},
    {"+10", "unit must be"},
    {"+10y", "unit must be"},
    {"+10S", "unit must be"},
    {"+10 s", "unit must be"},
    {"+10s junk", "unit must be"},
    {"+1h30m", "unit must be"},
    {"+1.5h", "unit must be"},
    {"+-5s", "want a number"},
    {"+ 10s", "want a number"},
    {"-10s", "want RFC 3339"},
    {"+99999999999999999999d", "too large"},
    {"+9223372036854775807ms", "too large"},
    {"+3000000d", "too large"},
    {"+2920000d", "after 9999-12-31"},
    {"@", "want @UNIX"},
    {"@abc", "want @UNIX"},
    {"@-1", "want @UNIX"},
    {"@ 1", "want @UNIX"},
    {"@123x", "want @UNIX"},
    {"@1.", "want @UNIX"},
    {"@1.5.", "want @UNIX"},
    {"@253402300800", "after 9999-12-31"},
    {"@99999999999999999999", "after 9999-12-31"},
};

static void
test_invalid(void **state)
{
    struct sa_err err;
    int64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        sa_err_clear(&err);
        v = 12345;
        if (sa_time_parse(invalid[i].text, NOW, &v, &err) != SA_EINVAL)
            fail_msg("\"%s\" was accepted as %" PRId64, invalid[i].text, v);
        assert_int_equal(err.code, SA_EINVAL);
        if (!strstr(err.msg, invalid[i].msg))
            fail_msg("\"%s\": message \"%s\" lacks \"%s\"", invalid[i].text, err.msg,
                     invalid[i].msg);
        assert_int_equal(v, 12345); /* untouched on failure */
    }
    sa_err_clear(&err);
    assert_int_equal(sa_time_parse(NULL, NOW, &v, &err), SA_EINVAL);
    assert_int_equal(sa_time_parse("x", NOW, &v, NULL), SA_EINVAL); /* err may be NULL */
}

static void
test_messages(void **state)
{
    struct sa_err err = {0};
    int64_t v;

    (void)state;
    assert_int_equal(sa_time_parse("2026-13-01T00:00:00Z", NOW, &v, &err), SA_EINVAL);
    assert_string_equal(err.msg, "bad time \"2026-13-01T00:00:00Z\": month 13 out of range");
    sa_err_clear(&err);
    assert_int_equal(sa_time_parse("2026-11-22T09:35:00", NOW, &v, &err), SA_EINVAL);
    assert_string_equal(
        err.msg, "bad time \"2026-11-22T09:35:00\": no offset: add Z (UTC) or one like +09:00");
    sa_err_clear(&err);
    assert_int_equal(sa_duration_parse("10sec", &v, &err), SA_EINVAL);
    assert_string_equal(err.msg, "bad duration \"10sec\": unit must be ms, s, m, h or d");
}

static void
test_relative_edges(void **state)
{
    int64_t v = 0;

    (void)state;
    assert_int_equal(sa_time_parse("+1ms", MAX_MS - 1, &v, NULL), SA_OK);
    assert_int_equal(v, MAX_MS);
    assert_int_equal(sa_time_parse("+2ms", MAX_MS - 1, &v, NULL), SA_EINVAL);
    assert_int_equal(sa_time_parse("+5s", 0, &v, NULL), SA_OK);
    assert_int_equal(v, 5000);
}

/* Issue 28, item 8: "now" and backwards relative times where a time is read back (list,
 * preview), never where a due time is booked. */
static void
test_read_back(void **state)
{
    const int64_t now = 1795712300123LL;
    int64_t v = 0;

    (void)state;
    assert_int_equal(sa_time_parse_read("now", now, &v, NULL), SA_OK);
    assert_int_equal(v, now);
    assert_int_equal(sa_time_parse_read("-1m", now, &v, NULL), SA_OK);
    assert_int_equal(v, now - 60000);
    assert_int_equal(sa_time_parse_read("-2h", now, &v, NULL), SA_OK);
    assert_int_equal(v, now - 7200000);
    assert_int_equal(sa_time_parse_read("+10m", now, &v, NULL), SA_OK);
    assert_int_equal(v, now + 600000);
    assert_int_equal(sa_time_parse_read("@1795712300", now, &v, NULL), SA_OK);
    assert_int_equal(v, 1795712300000LL);
    assert_int_equal(sa_time_parse_read("-", now, &v, NULL), SA_EINVAL);
    assert_int_equal(sa_time_parse_read("-1x", now, &v, NULL), SA_EINVAL);
    assert_int_equal(sa_time_parse_read("nowish", now, &v, NULL), SA_EINVAL);
    assert_int_equal(sa_time_parse("now", now, &v, NULL), SA_OK); /* schedule --at now too */
    assert_int_equal(v, now);
    assert_int_equal(sa_time_parse("-1m", now, &v, NULL), SA_EINVAL); /* due times: not back */
}

static void
test_durations(void **state)
{
    static const struct good good[] = {
        {"0ms", 0},
        {"250ms", 250},
        {"90s", 90000},
        {"10m", 600000},
        {"2h", 7200000},
        {"7d", 7 * 86400000LL},
        {"2932896d", 2932896 * 86400000LL},
    };
    static const char *bad[] = {
        "",      "10",    "-1s", "+1s",  "1.5s", "s",        "10 s",
        "10sec", "1h30m", "10D", " 10s", "10s ", "2932897d", "99999999999999999999ms"};
    struct sa_err err;
    int64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        sa_err_clear(&err);
        if (sa_duration_parse(good[i].text, &v, &err) != SA_OK)
            fail_msg("\"%s\" refused: %s", good[i].text, err.msg);
        assert_int_equal(v, good[i].ms);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sa_err_clear(&err);
        v = 7;
        if (sa_duration_parse(bad[i], &v, &err) != SA_EINVAL)
            fail_msg("\"%s\" was accepted as %" PRId64, bad[i], v);
        assert_true(strstr(err.msg, "duration") != NULL);
        assert_int_equal(v, 7);
    }
    assert_int_equal(sa_duration_parse(NULL, &v, NULL), SA_EINVAL);
}

/* Durations for people: the two largest units, rounded down; one unit parses back. */
static void
test_duration_format(void **state)
{
    static const struct good cases[] = {
        {"0s", 0},
        {"0s", -5},
        {"250ms", 250},
        {"1s500ms", 1500},
        {"18s", 18000},
        {"1m1s", 61000},
        {"1h", 3600000},
        {"1h30m", 5400000},
        {"7d", 7 * 86400000LL},
        {"6d23h", 7 * 86400000LL - 3600000},
        {"8d2h", 8 * 86400000LL + 7259999},
    };
    char out[32];
    int64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(sa_duration_format(out, sizeof(out), cases[i].ms),
                         (int)strlen(cases[i].text));
        assert_string_equal(out, cases[i].text);
    }
    sa_duration_format(out, sizeof(out), 7 * 86400000LL);
    assert_int_equal(sa_duration_parse(out, &v, NULL), SA_OK);
    assert_int_equal(v, 7 * 86400000LL);
    /* cut short but ended, with the length it would have had */
    assert_int_equal(sa_duration_format(out, 4, 7 * 86400000LL - 3600000), 5);
    assert_string_equal(out, "6d2");
}

static void
test_format_known(void **state)
{
    static const struct good cases[] = {
        {"1970-01-01T00:00:00.000Z", 0},
        {"1969-12-31T23:59:59.999Z", -1},
        {"1969-12-31T23:59:59.000Z", -1000},
        {"2026-11-22T09:35:00.007Z", NOW + 7},
        {"2000-02-29T00:00:00.000Z", 951782400000LL},
        {"2026-12-31T23:59:59.999Z", 1798761599999LL},
        {"0000-01-01T00:00:00.000Z", MIN_MS},
        {"9999-12-31T23:59:59.999Z", MAX_MS},
    };
    char out[40];
    char small[8];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(sa_time_format(out, sizeof(out), cases[i].ms), 24);
        assert_string_equal(out, cases[i].text);
    }
    assert_int_equal(sa_time_format(small, sizeof(small), NOW), 24); /* snprintf-style */
    assert_string_equal(small, "2026-11");
}

/* The oracle: libc's gmtime_r (glibc handles proleptic years down to 0000). */
static void
gmtime_text(int64_t ms, char *out, size_t cap)
{
    int64_t frac = ((ms % 1000) + 1000) % 1000;
    time_t secs = (time_t)((ms - frac) / 1000);
    struct tm tm;

    assert_non_null(gmtime_r(&secs, &tm));
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)frac);
}

/* sa_time_format agrees with gmtime_r over the whole range 0000..9999, and every formatted
 * value parses back to the same instant. */
static void
test_format_matches_gmtime_and_round_trips(void **state)
{
    static const int64_t edges[] = {MIN_MS, MAX_MS, -1, 0, 951782400000LL, -86400000LL};
    char ours[40], theirs[80];
    uint64_t x = 88172645463325252ULL;
    int64_t ms, back;

    (void)state;
    for (size_t i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64: spread over the whole range */
        ms = MIN_MS + (int64_t)(x % (uint64_t)(MAX_MS - MIN_MS + 1));
        if (i < sizeof(edges) / sizeof(edges[0]))
            ms = edges[i];
        sa_time_format(ours, sizeof(ours), ms);
        gmtime_text(ms, theirs, sizeof(theirs));
        if (strcmp(ours, theirs) != 0)
            fail_msg("%" PRId64 ": ours %s, gmtime %s", ms, ours, theirs);
        assert_int_equal(sa_time_parse(ours, 0, &back, NULL), SA_OK);
        if (back != ms)
            fail_msg("%s parsed back as %" PRId64 ", want %" PRId64, ours, back, ms);
    }
}

/* sa_now_ms is the wall clock in ms: between two precise reads of CLOCK_REALTIME. (time()
 * reads the kernel's coarse clock, a tick behind: a second boundary between the two made a
 * comparison with it fail once in CI.) */
static void
test_now(void **state)
{
    struct timespec t0, t1;
    int64_t a, n, b;

    (void)state;
    clock_gettime(CLOCK_REALTIME, &t0);
    n = sa_now_ms();
    clock_gettime(CLOCK_REALTIME, &t1);
    a = (int64_t)t0.tv_sec * 1000 + t0.tv_nsec / 1000000;
    b = (int64_t)t1.tv_sec * 1000 + t1.tv_nsec / 1000000;
    assert_true(n >= a && n <= b);
    assert_true(n > (int64_t)1700000000 * 1000); /* ms, not s or us */
    assert_true(n < (int64_t)4102444800 * 1000);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_relative_edges),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_read_back),
        cmocka_unit_test(test_duration_format),
        cmocka_unit_test(test_format_known),
        cmocka_unit_test(test_format_matches_gmtime_and_round_trips),
        cmocka_unit_test(test_now),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
