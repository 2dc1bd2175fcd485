/* Series pause and resume (issue 13): an occurrence that falls due while its series is paused
 * is not delivered and status says "skipped (paused)"; after resume the next ones are
 * delivered; the chain never breaks. Pause answers unknown id (4) and too late (3); status
 * keeps every pause and resume (issue 28). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "check.h"
#include "fixture.h"

static struct fx F;

/* How many times word occurs in text. */
static int
count_of(const char *text, const char *word)
{
    int k = 0;

    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
        k++;
    return k;
}

/* `series list --json` has series in state, with its cron and zone, and a next fire (a
 * string) when one is ahead, else null. */
static void
list_json_shows(const char *series, const char *state, int ahead)
{
    char out[8192];
    json_t *all, *s;
    size_t i;
    int found = 0;

    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "list", "--json", NULL), 0);
    all = json_loads(out, 0, NULL);
    assert_true(json_is_array(all));
    json_array_foreach(all, i, s)
    {
        if (strcmp(json_string_value(json_object_get(s, "id")), series) != 0)
            continue;
        found = 1;
        assert_string_equal(json_string_value(json_object_get(s, "state")), state);
        assert_string_equal(json_string_value(json_object_get(s, "cron")), "*/2 * * * * *");
        assert_string_equal(json_string_value(json_object_get(s, "tz")), "UTC");
        assert_true(ahead ? json_is_string(json_object_get(s, "next"))
                          : json_is_null(json_object_get(s, "next")));
    }
    assert_true(found);
    json_decref(all);
}

static void
test_pause_skips_and_resume_delivers(void **state)
{
    char url[300], series[80], out[4096];
    size_t at_pause, at_resume;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    snprintf(url, sizeof(url), "%s/tick", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, series, sizeof(series), NULL, 0, "schedule", "--cron",
                               "*/2 * * * * *", "--tz", "UTC", "--count", "1000", "--webhook", url,
                               NULL),
                     0);
    series[strcspn(series, "\n")] = '\0';
    assert_true(receiver_wait(F.recv, NULL, 2, 30000));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "pause", series, NULL), 0);
    assert_string_equal(out, "paused\n");
    at_pause = receiver_count(F.recv);
    assert_true(fx_status_says(&F, series, "skipped (paused)",
                               30000)); /* an occurrence fell due: skipped */
    assert_true(fx_status_says(&F, series, "skipped (paused)", 30000));
    assert_true(wait_until_ms(test_now_ms() + 4500, 10000)); /* two more fall due, skipped */
    at_resume = receiver_count(F.recv);
    assert_true(at_resume <= at_pause + 1); /* at most the one already being sent */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "list", NULL), 0);
    assert_non_null(strstr(out, "paused"));
    assert_non_null(strstr(out, " UTC cron \"*/2 * * * * *\"")); /* its zone and cron */
    assert_non_null(strstr(out, " next 20"));                    /* and its next fire */
    list_json_shows(series, "paused", 1);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "resume", series, NULL), 0);
    assert_string_equal(out, "resumed\n");
    assert_true(receiver_wait(F.recv, NULL, at_resume + 2, 30000)); /* the chain went on */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "list", NULL), 0);
    assert_non_null(strstr(out, "active"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", series, "--json", NULL), 0);
    assert_non_null(strstr(out, "\"result\":\"cancelled\""));
    list_json_shows(series, "cancelled", 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel",
                               "0000000000000000000000000000", "--json", NULL),
                     4);
    fx_finish(&F);
}

static void
test_pause_answers(void **state)
{
    char series[80], out[4096];

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "pause", "no-such-series", NULL), 4);
    assert_string_equal(out, "unknown id\n");
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "resume", "no-such-series", NULL), 4);
    assert_int_equal(fx_sendat(&F, series, sizeof(series), NULL, 0, "schedule", "--cron",
                               "0 7 * * *", "--tz", "Asia/Seoul", "--webhook",
                               "http://127.0.0.1:9/x", NULL),
                     0);
    series[strcspn(series, "\n")] = '\0';
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "pause", series, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "pause", series, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", series, NULL), 0);
    assert_non_null(strstr(out, "series-paused"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "resume", series, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", series, NULL), 0);
    assert_int_equal(count_of(out, "series-paused"), 1); /* the pause stays in the history */
    assert_int_equal(count_of(out, "series-resumed"), 1);
    assert_true(strstr(out, "series-paused") < strstr(out, "series-resumed"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "pause", series, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "resume", series, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "resume", series, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", series, NULL), 0);
    assert_int_equal(count_of(out, "series-paused"), 2); /* each pause and resume, once */
    assert_int_equal(count_of(out, "series-resumed"), 2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", series, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "pause", series, NULL), 3);
    assert_non_null(strstr(out, "too late: the series was cancelled"));
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pause_skips_and_resume_delivers),
        cmocka_unit_test(test_pause_answers),
    };

    return FX_RUN(tests);
}
