/* Catch-up and far-future: a task whose window passed while no consumer ran is delivered as
 * soon as one starts, unless its not-after time passed too: then it is dead-lettered as
 * expired, never sent late (invariant 6); a task due next year waits untouched in its slot, where
 * the producer booked it (never moved, never claimed).
 * Also: a consumer with nothing due sleeps (no polling loop that burns CPU). */
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

static struct fx F;

/* CPU seconds (user + system) the process has used, from /proc/PID/stat. */
static double
cpu_seconds(pid_t pid)
{
    char path[64], *stat, *p;
    unsigned long ut = 0, st = 0;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    stat = proc_read_file(path);
    assert_non_null(stat);
    p = strrchr(stat, ')');
    assert_non_null(p);
    assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st),
                     2);
    free(stat);
    return (double)(ut + st) / 100.0;
}

/* Schedules a webhook due at due_ms that may not be sent after not_after_ms. */
static void
schedule_until(int64_t due_ms, int64_t not_after_ms, const char *path, char *id, size_t cap)
{
    char at[40], until[40], url[300];

    snprintf(at, sizeof(at), "@%" PRId64, due_ms / 1000);
    snprintf(until, sizeof(until), "@%" PRId64, not_after_ms / 1000);
    snprintf(url, sizeof(url), "%s%s", receiver_url(F.recv), path);
    assert_int_equal(fx_sendat(&F, id, cap, NULL, 0, "schedule", "--at", at, "--not-after", until,
                               "--webhook", url, "--data", "{}", NULL),
                     0);
    id[strcspn(id, "\n")] = '\0';
}

static int
dead_letters(void *arg)
{
    char out[4096];

    (void)arg;
    return fx_sendat(&F, out, sizeof(out), NULL, 0, "stats", NULL) == 0 &&
           strstr(out, "dead letters: 1") != NULL;
}

static void
test_past_window_and_next_year(void **state)
{
    char old_id[80], year_id[80], expired_id[80], out[4096];
    int64_t due = test_now_ms() + 500, window_gone;
    double cpu0, cpu1;

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(fx_schedule(&F, due, "/old", old_id, sizeof(old_id)), 0);
    assert_int_equal(
        fx_schedule(&F, due + 365LL * 86400000, "/next-year", year_id, sizeof(year_id)), 0);
    schedule_until(due, due + 2000, "/expired", expired_id, sizeof(expired_id));
    window_gone = (due / 10000 + 1) * 10000 + 10500; /* its 10 s window and the next are over */
    assert_true(wait_until_ms(window_gone, 40000));
    fx_consumer(&F, 0, NULL);
    assert_true(receiver_wait(F.recv, "/old", 1, 30000));
    assert_true(wait_until(dead_letters, NULL, 30000));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", expired_id, NULL), 0);
    assert_non_null(strstr(out, "expired: not sent before its not-after time"));

    /* Idle: nothing is due for a year. Over 5 s the consumer may use a little CPU only. */
    cpu0 = cpu_seconds(F.consumers[0].pid);
    window_gone = test_now_ms() + 5000;
    assert_true(wait_until_ms(window_gone, 20000));
    cpu1 = cpu_seconds(F.consumers[0].pid);
    fprintf(stderr, "idle consumer used %.2f CPU seconds in 5 s\n", cpu1 - cpu0);
    assert_true(cpu1 - cpu0 < 1.0);

    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/next-year"), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", year_id, NULL), 0);
    assert_non_null(strstr(out, "level=\"slot\""));
    assert_null(strstr(out, " moved"));
    assert_null(strstr(out, " claimed"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "stats", NULL), 0);
    assert_non_null(strstr(out, "tasks in the stream: 1 "));
    assert_non_null(strstr(out, "dead letters: 1"));
    assert_int_equal(receiver_count_path(F.recv, "/expired"), 0);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_past_window_and_next_year)};

    return FX_RUN(tests);
}
