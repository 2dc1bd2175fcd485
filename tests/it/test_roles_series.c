/* Issue 37.8 (the cancel bucket): a client with the producer's credentials and no key may write
 * any cancel bucket key, as `sendat cancel` and `series pause` need, so it can put a DEL marker
 * or junk over a series' cancel or pause record. Neither un-cancels nor un-pauses the series:
 * not for a consumer that starts after the forgery (it reads the records under them from the
 * key's history), nor for one that runs while it happens (its cancel set passes markers and junk
 * over), nor for `sendat series list`; only an authentic resume lifts a pause. On the
 * deploy/nats cluster of roles.c. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"
#include "roles.h"

/* Books an every-2-s series to path as the producer; its id into id. */
static void
book_series(const char *path, char *id, size_t cap)
{
    char url[300], err[1024];

    snprintf(url, sizeof(url), "%s%s", receiver_url(F.recv), path);
    if (fx_sendat(&F, id, cap, err, sizeof(err), "schedule", "--cron", "*/2 * * * * *", "--tz",
                  "UTC", "--count", "200", "--webhook", url, NULL) != 0)
        fail_msg("schedule a series to %s: %s", path, err);
    id[strcspn(id, "\n")] = '\0';
}

/* As the producer user without the key: "del" leaves a DEL marker on key, anything else is put
 * as its value (junk: no MAC). */
static void
forge(const char *key, const char *what)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    uint64_t rev = 0;

    roles_connect_js("producer", &nc, &js);
    assert_int_equal(js_KeyValue(&kv, js, SA_CANCEL_BUCKET), NATS_OK);
    if (!strcmp(what, "del"))
        assert_int_equal(kvStore_Delete(kv, key), NATS_OK);
    else
        assert_int_equal(kvStore_PutString(&rev, kv, key, what), NATS_OK);
    kvStore_Destroy(kv);
    fx_js_close(&nc, &js);
}

/* No request to /a or /b within the next ms (several occurrences of both series). */
static void
none_arrive(int64_t ms)
{
    assert_true(wait_until_ms(test_now_ms() + ms, ms + 10000));
    assert_int_equal(receiver_count_path(F.recv, "/a"), 0);
    assert_int_equal(receiver_count_path(F.recv, "/b"), 0);
}

static void
test_keyless_producer_unstops_no_series(void **state)
{
    char a[80], b[80], pause_b[96], line[128], out[4096], err[1024];

    (void)state;
    roles_start_once();
    roles_act_as("producer");
    book_series("/a", a, sizeof(a));
    book_series("/b", b, sizeof(b));
    snprintf(pause_b, sizeof(pause_b), "%s%s", SA_PAUSE_PREFIX, b);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", a, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "series", "pause", b, NULL),
                     0);
    forge(a, "2026-11-28T19:00:00.000Z"); /* junk, then a marker over the cancel */
    forge(a, "del");
    forge(pause_b, "del"); /* what `series resume` of an older version wrote */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "series", "list", NULL), 0);
    fprintf(stderr, "series list after the forgery:\n%s", out);
    snprintf(line, sizeof(line), "%s cancelled ", a);
    assert_non_null(strstr(out, line));
    snprintf(line, sizeof(line), "%s paused ", b);
    assert_non_null(strstr(out, line));
    roles_consumer_as(0, "consumer"); /* starts after the forgery */
    assert_true(wait_until(roles_consumer_ready, (void *)0, 30000));
    none_arrive(7000);
    forge(a, "del"); /* and while it runs */
    forge(pause_b, "2026-11-28T19:00:00.000Z");
    forge(pause_b, "del");
    none_arrive(7000);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "series", "resume", b, NULL),
                     0);
    assert_true(receiver_wait(F.recv, "/b", 1, 30000)); /* an authentic resume lifts it */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", b, NULL), 0);
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/a"), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyless_producer_unstops_no_series),
    };

    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), NULL, roles_stop);
}
