/* Scheduling semantics a script relies on: `sendat init` from many places at once, a layout
 * that cannot change, the same --id scheduled twice schedules once, and ids given by the
 * user work with status and cancel. */
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
#include "natsconn.h"

static struct fx F;

static void
test_init_everywhere_at_once(void **state)
{
    struct proc p[5];
    char *argv[] = {(char *)fx_sendat_bin(), "init", NULL}, out[256], err[512];

    (void)state;
    fx_start(&F, 0); /* already initialised once with a 10 s window */
    for (int i = 0; i < 5; i++) {
        char *env[] = {F.env_url, NULL}, name[16];
        snprintf(name, sizeof(name), "init%d", i);
        assert_int_equal(proc_spawn(&p[i], F.dir, name, argv, env), 0);
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(proc_wait(&p[i], 30000), 0);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--window", "1h", NULL), 2);
    assert_non_null(strstr(err, "cannot change"));
    fx_stop(&F);
}

static int64_t
dlq_max_bytes(jsCtx *js)
{
    jsStreamInfo *si = NULL;
    int64_t n;

    assert_int_equal(js_GetStreamInfo(&si, js, SA_DLQ_STREAM, NULL, NULL), NATS_OK);
    n = si->Config->MaxBytes;
    jsStreamInfo_Destroy(si);
    return n;
}

/* The dead-letter stream has a byte limit (1 GiB by default); a stream made before there was
 * one gets it from the next init, once; a bad size is a usage error. */
static void
test_dlq_byte_limit(void **state)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL, *up = NULL;
    char out[256], err[512];

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(dlq_max_bytes(js), 1LL << 30);
    assert_int_equal(js_GetStreamInfo(&si, js, SA_DLQ_STREAM, NULL, NULL), NATS_OK);
    si->Config->MaxBytes = -1; /* as init made it before */
    assert_int_equal(js_UpdateStream(&up, js, si->Config, NULL, NULL), NATS_OK);
    jsStreamInfo_Destroy(up);
    jsStreamInfo_Destroy(si);
    assert_int_equal(dlq_max_bytes(js), -1);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--dlq-max-bytes", "64M", NULL),
        0);
    assert_int_equal(dlq_max_bytes(js), 64LL << 20);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--dlq-max-bytes", "2G", NULL),
        0);
    assert_int_equal(dlq_max_bytes(js), 64LL << 20); /* a limit once set is kept */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--dlq-max-bytes", "12x", NULL),
        2);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--dlq-max-bytes", "0", NULL), 2);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

static void
test_same_id_schedules_once(void **state)
{
    char out[256], url[300], status[4096], at[40];
    /* both bookings before the send: on a busy machine one sendat run can take seconds */
    int64_t due = test_now_ms() + (int64_t)(5000 * test_timeout_multiplier()), later;

    (void)state;
    fx_start(&F, 0);
    snprintf(url, sizeof(url), "%s/order", receiver_url(F.recv));
    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due / 1000, (int)(due % 1000));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "schedule", "--id", "order-42",
                                   "--at", at, "--webhook", url, "--data", "{\"order\":42}", NULL),
                         0);
        assert_string_equal(out, "order-42\n");
    }
    assert_int_equal(fx_sendat(&F, status, sizeof(status), NULL, 0, "status", "order-42", NULL), 0);
    assert_non_null(strstr(status, "scheduled"));
    fx_consumer(&F, 0, NULL); /* after both bookings: one may outlast the lead at load 30 */
    assert_true(receiver_wait(F.recv, "/order", 1, 30000));
    later = test_now_ms() + 3000;
    assert_true(wait_until_ms(later, 10000));
    assert_int_equal(receiver_count_path(F.recv, "/order"), 1);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", "order-42", NULL), 3);
    assert_int_equal(
        fx_sendat(&F, status, sizeof(status), NULL, 0, "status", "order-42", "--json", NULL), 0);
    assert_non_null(strstr(status, "\"event\":\"sent\""));
    assert_non_null(strstr(status, "\"lateness_ms\":"));
    assert_int_equal(fx_sendat(&F, status, sizeof(status), NULL, 0, "status", "no-such-task", NULL),
                     4);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_everywhere_at_once),
        cmocka_unit_test(test_dlq_byte_limit),
        cmocka_unit_test(test_same_id_schedules_once),
    };

    return FX_RUN(tests);
}
