/* Groups (issue 13): `sendat cancel --group` cancels 5,000 tasks while part of the group is
 * being sent to a slow receiver; each task is sent exactly once or never, and the counts the
 * cancel answers match what the receiver saw. Another group is left alone; a group nobody
 * booked answers 0 and 0. A grouped task due after its membership would expire (the claims
 * TTL from now) is refused, alone and as a batch line: a group cancel could not reach it. */
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

#define GROUP_N 5000
#define OTHER_N 20
#define SPREAD_MS 8000 /* the group's due times spread over 8 s */

static struct fx F;

/* GROUP_N tasks of group "g1" (ids g-<i>, path /g/<i>) due from base over SPREAD_MS, and
 * OTHER_N of group "g2" due at base. */
static void
write_batch(const char *path, int64_t base)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    for (int i = 0; i < GROUP_N + OTHER_N; i++) {
        int other = i >= GROUP_N, k = other ? i - GROUP_N : i;
        int64_t at = other ? base : base + (int64_t)i * SPREAD_MS / GROUP_N;
        fprintf(f,
                "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/%s/%d\",\"id\":\"%s-%d\","
                "\"group\":\"%s\"}\n",
                at / 1000, (int)(at % 1000), receiver_url(F.recv), other ? "o" : "g", k,
                other ? "o" : "g", k, other ? "g2" : "g1");
    }
    fclose(f);
}

static void
test_group_cancel_races_sends(void **state)
{
    static int hits[GROUP_N];
    char path[300], out[4096], err[4096];
    long cancelled = -1, too_late = -1, received = 0;
    int64_t base;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    fx_consumer(&F, 1, NULL);
    receiver_set_delay(F.recv, 300); /* sends stay "sending" a while: the race has both sides */
    snprintf(path, sizeof(path), "%s/group.ndjson", F.dir);
    base = test_now_ms() + 4000;
    write_batch(path, base);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
    assert_true(receiver_wait(F.recv, NULL, 200, 30000)); /* part of the group is out */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "--group", "g1", NULL), 0);
    assert_int_equal(sscanf(out, "cancelled %ld, too late %ld", &cancelled, &too_late), 2);
    print_message("group cancel: %s", out);
    assert_int_equal(cancelled + too_late, GROUP_N);
    assert_true(too_late > 0 && cancelled > 0);
    assert_true(wait_until_ms(base + SPREAD_MS + 5000, 60000)); /* all due and settled */
    assert_true(receiver_wait(F.recv, NULL, (size_t)too_late + OTHER_N, 60000));
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* nothing more arrives */
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        struct receiver_hit h;
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        if (sscanf(h.path, "/g/%d", &k) == 1) {
            assert_true(k >= 0 && k < GROUP_N);
            hits[k]++;
        }
        receiver_hit_free(&h);
    }
    for (int k = 0; k < GROUP_N; k++) {
        if (hits[k] > 1)
            fail_msg("g-%d was sent %d times", k, hits[k]);
        received += hits[k];
    }
    assert_int_equal(received, too_late); /* sent exactly when the cancel said too late */
    assert_int_equal(receiver_count(F.recv) - (size_t)received, OTHER_N);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "--group", "g1", NULL), 0);
    snprintf(err, sizeof(err), "cancelled %ld, too late %ld\n", cancelled, too_late);
    assert_string_equal(out, err); /* again: the same answer, nothing changes */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "--group=g1", NULL), 0);
    snprintf(err, sizeof(err), "cancelled %ld, too late %ld\n", cancelled, too_late);
    assert_string_equal(out, err); /* --group=NAME is the same option (issue 36.5) */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "--group", "g1", "x", NULL), 2);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "--group", "nobody", NULL), 0);
    assert_string_equal(out, "cancelled 0, too late 0\n");
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "--group", "bad.name", NULL),
        2);
    fx_finish(&F);
}

static void
test_group_due_past_its_membership(void **state)
{
    char path[300], out[4096], err[4096], at[40];
    int64_t far = test_now_ms() / 1000 + 8 * 86400, near = test_now_ms() / 1000 + 86400;
    FILE *f;

    (void)state;
    fx_start(&F, 0); /* the claims TTL, and so a membership's life: the default 7 days */
    snprintf(at, sizeof(at), "@%" PRId64, far);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", at,
                               "--webhook", "https://example.com/x", "--group", "far", NULL),
                     2);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "cancel --group could not reach it"));
    snprintf(path, sizeof(path), "%s/far.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    fprintf(f,
            "{\"at\":\"@%" PRId64 "\",\"webhook\":\"https://example.com/x\",\"group\":\"far\"}\n",
            far);
    fprintf(f,
            "{\"at\":\"@%" PRId64 "\",\"webhook\":\"https://example.com/x\",\"group\":\"far\"}\n",
            near);
    fclose(f);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 2);
    assert_non_null(strstr(err, "line 1"));
    assert_non_null(strstr(err, "membership expires"));
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "group", "show", "far", NULL), 0);
    assert_non_null(strstr(out, "tasks=1"));
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_cancel_races_sends),
        cmocka_unit_test(test_group_due_past_its_membership),
    };

    return FX_RUN(tests);
}
