/* Recurring series (invariant 4): every occurrence delivered and none twice (a request its
 * member died sending may be sent again with the same webhook-id), with three consumers and
 * one of them killed mid-series; cancel stops the chain; status
 * lists the occurrences; preview warns about DST. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"

#define COUNT 8

static struct fx F;

static void
test_series_survives_a_kill(void **state)
{
    char url[300], series[80], status[16384], wid[128];
    int64_t occ[COUNT + 4];
    int n = 0;

    (void)state;
    fx_start(&F, 0);
    for (int i = 0; i < 3; i++)
        fx_consumer(&F, i, NULL);
    snprintf(url, sizeof(url), "%s/tick", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, series, sizeof(series), NULL, 0, "schedule", "--cron",
                               "*/2 * * * * *", "--tz", "UTC", "--count", "8", "--webhook", url,
                               "--data", "tick", NULL),
                     0);
    series[strcspn(series, "\n")] = '\0';
    assert_true(receiver_wait(F.recv, NULL, 3, 30000));
    proc_kill9(&F.consumers[1]);
    assert_true(receiver_wait(F.recv, NULL, COUNT, 60000));
    {
        int64_t later = test_now_ms() + 4000; /* nothing after the last one */
        assert_true(wait_until_ms(later, 10000));
    }
    /* a request in flight or just answered when its member died is sent again with the same
     * webhook-id (at-least-once): one kill, at most one such repeat */
    assert_true(receiver_count(F.recv) >= COUNT && receiver_count(F.recv) <= COUNT + 1);
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        struct receiver_hit h;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        assert_non_null(receiver_hit_header(&h, "webhook-id", wid, sizeof(wid)));
        occ[n++] = sa_layout_occurrence_ms(wid);
        assert_non_null(strstr(wid, series));
        assert_true(h.at_ms >= occ[n - 1]);
        receiver_hit_free(&h);
    }
    for (int i = 0; i < n; i++) /* arrival order may differ after the kill: sort */
        for (int j = i + 1; j < n; j++)
            if (occ[j] < occ[i]) {
                int64_t t = occ[i];
                occ[i] = occ[j];
                occ[j] = t;
            }
    for (int i = 1, repeats = 0; i < n; i++) {
        if (occ[i] == occ[i - 1] && ++repeats == 1)
            continue; /* the repeat above: the same occurrence, the same webhook-id */
        if (occ[i] - occ[i - 1] != 2000)
            fail_msg("occurrence %d is %" PRId64
                     " ms after the one before (want 2000: no gap, no second occurrence)",
                     i, occ[i] - occ[i - 1]);
    }
    assert_int_equal(fx_sendat(&F, status, sizeof(status), NULL, 0, "status", series, NULL), 0);
    assert_non_null(strstr(status, "series"));
    assert_non_null(strstr(status, "state=\"sent\""));
    fx_stop_consumers(&F);
    fx_stop(&F);
}

/* The lines of text that hold both a and b. */
static int
lines_with(const char *text, const char *a, const char *b)
{
    int n = 0;

    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *pa = strstr(line, a), *pb = strstr(line, b);
        n += pa && pb && pa < line + len && pb < line + len;
        line += len + (end != NULL);
    }
    return n;
}

static void
test_cancel_stops_series(void **state)
{
    char url[300], series[80], out[256], history[16384];
    int64_t later;
    size_t at_cancel;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    snprintf(url, sizeof(url), "%s/stop", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, series, sizeof(series), NULL, 0, "schedule", "--cron",
                               "*/2 * * * * *", "--tz", "Asia/Seoul", "--count", "1000",
                               "--webhook", url, NULL),
                     0);
    series[strcspn(series, "\n")] = '\0';
    assert_true(receiver_wait(F.recv, NULL, 2, 30000));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", series, NULL), 0);
    assert_string_equal(out, "cancelled\n");
    at_cancel = receiver_count(F.recv);
    later = test_now_ms() + 7000;
    assert_true(wait_until_ms(later, 20000));
    assert_true(receiver_count(F.recv) <= at_cancel + 1); /* at most the one already being sent */
    /* status ends at the cancel: the occurrence waiting then is cancelled, none after it is
     * made up (5 were, 7 s later), and the sent ones stay */
    assert_int_equal(fx_sendat(&F, history, sizeof(history), NULL, 0, "status", series, NULL), 0);
    assert_true(lines_with(history, " occurrence ", "state=\"cancelled\"") <= 1);
    assert_true(lines_with(history, " occurrence ", "state=\"sent\"") >= 2);
    fx_finish(&F);
}

static void
test_preview_and_refusals(void **state)
{
    char out[4096], err[1024];

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "preview", "--cron",
                               "30 2 * * *", "--tz", "Europe/Berlin", "--from",
                               "2026-03-27T12:00:00Z", "-n", "3", NULL),
                     0);
    assert_non_null(strstr(out, "2026-03-29 03:00:00 +02:00"));
    assert_non_null(strstr(out, "DST gap"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "preview", "--cron",
                               "30 2 * * *", "--tz", "Europe/Berlin", "--from",
                               "2026-03-27T12:00:00Z", "-n", "3", "--json", NULL),
                     0); /* as /v1/series/{id}/ahead gives them */
    assert_non_null(strstr(out, "\"at\":\"2026-03-29T01:00:00.000Z\""));
    assert_non_null(strstr(out, "\"local\":\"2026-03-29 03:00:00 +02:00\""));
    assert_non_null(strstr(out, "\"dst\":\"gap\""));
    assert_non_null(strstr(out, "\"dst\":null"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--cron",
                               "0 7 * * *", "--tz", "Mars/Olympus", "--webhook",
                               "http://127.0.0.1:9/x", NULL),
                     2);
    assert_non_null(strstr(err, "unknown time zone"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--cron",
                               "0 7 * *", "--tz", "Asia/Seoul", "--webhook", "http://127.0.0.1:9/x",
                               NULL),
                     2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--cron",
                               "0 7 * * *", "--webhook", "http://127.0.0.1:9/x", NULL),
                     2);
    assert_non_null(strstr(err, "--tz"));
    fx_stop(&F);
}

/* Issue 37.8: each occurrence keeps its claim record for the claims TTL, so an every-second
 * series without a bound would keep 604,800 of them (about 460 MB) under the default 7 days.
 * Booking refuses one that would keep more than 50,000 (exit 2, field "cron"); a count or
 * until that bounds it, or a minutely cron (10,080 a week), is booked. */
static void
test_series_claim_ceiling(void **state)
{
    char out[4096], err[1024];
    int64_t t0;

    (void)state;
    fx_start(&F, 0);
    t0 = test_now_ms();
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--cron",
                               "* * * * * *", "--tz", "UTC", "--webhook", "http://127.0.0.1:9/x",
                               NULL),
                     2);
    fprintf(stderr, "every second refused in %" PRId64 " ms: %s", test_now_ms() - t0, err);
    assert_non_null(strstr(err, "more than 50000 times within the claims TTL"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--cron",
                               "* * * * * *", "--tz", "UTC", "--count", "100", "--webhook",
                               "http://127.0.0.1:9/x", NULL),
                     0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--cron",
                               "* * * * * *", "--tz", "UTC", "--until", "+10h", "--webhook",
                               "http://127.0.0.1:9/x", NULL),
                     0);
    t0 = test_now_ms();
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--cron",
                               "* * * * *", "--tz", "UTC", "--webhook", "http://127.0.0.1:9/x",
                               NULL),
                     0);
    fprintf(stderr, "every minute booked in %" PRId64 " ms\n", test_now_ms() - t0);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_survives_a_kill),
        cmocka_unit_test(test_cancel_stops_series),
        cmocka_unit_test(test_preview_and_refusals),
        cmocka_unit_test(test_series_claim_ceiling),
    };

    return FX_RUN(tests);
}
