/* Bad input in volume goes to the park (invariant 5, issue 24): junk past a level's
 * max-ack-pending does not hold up the valid tasks of its window, and garbage past the
 * dead-letter budget waits in the park to be dead-lettered later, each message once, its
 * log lines summarised. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "badinput.h"
#include "check.h"
#include "envelope.h"
#include "keyring.h"
#include "layout.h"
#include "task.h"

#define JUNK_N 1000
#define JUNK_ACK_PENDING 200
#define JUNK_VALID 10

/* The level durable of window w as a member would make it with SENDAT_MAX_ACK_PENDING=200
 * (pull_prepare.c), made here first so that a consumer without that setting uses it as well. */
static void
make_small_window_durable(int64_t w)
{
    jsConsumerConfig cc;
    jsConsumerInfo *ci = NULL;
    char durable[32], filter[SA_SUBJECT_MAX];

    sa_layout_durable(durable, sizeof(durable), w, 0);
    sa_layout_level_filter(filter, sizeof(filter), 0, w, 0);
    jsConsumerConfig_Init(&cc);
    cc.Durable = durable;
    cc.FilterSubject = filter;
    cc.AckPolicy = js_AckExplicit;
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckWait = 5000 * 1000000LL;
    cc.MaxDeliver = -1;
    cc.MaxAckPending = JUNK_ACK_PENDING;
    cc.MaxWaiting = 512;
    cc.InactiveThreshold = 3600 * 1000000000LL;
    assert_int_equal(js_AddConsumer(&ci, js, SA_TASKS_STREAM, &cc, NULL, NULL), NATS_OK);
    jsConsumerInfo_Destroy(ci);
}

/* What a producer-role client can publish without a key: version byte, a made-up key id, a
 * nonce and random bytes, as if sealed under a key nobody has. */
static void
publish_junk(int64_t w, int n)
{
    char subject[SA_SUBJECT_MAX], id[32];
    uint8_t junk[1 + SA_KID_BYTES + 24 + 64];
    jsPubOptions po;

    jsPubOptions_Init(&po);
    po.MaxWait = 30000;
    for (int k = 0; k < n; k++) {
        randombytes_buf(junk, sizeof(junk));
        junk[0] = SA_ENVELOPE_VERSION;
        snprintf(id, sizeof(id), "junk-%d", k);
        sa_layout_window_subject(subject, sizeof(subject), 0, w, id);
        assert_int_equal(js_PublishAsync(js, subject, junk, (int)sizeof(junk), NULL), NATS_OK);
    }
    assert_int_equal(js_PublishAsyncComplete(js, &po), NATS_OK);
}

static int
valid_arrived(void *arg)
{
    int seen[JUNK_VALID];

    (void)arg;
    return fx_arrivals(&F, "/valid/", seen, JUNK_VALID) == JUNK_VALID;
}

static int
all_parked(void *arg)
{
    (void)arg;
    return fx_consumer_metric(&F, 0, "sendat_parked_total") >= JUNK_N;
}

static int
summarised(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=parked_summary") > 0;
}

/* Issue 24: junk in the window of valid tasks, more of it than the level's max-ack-pending,
 * held every place while it was handed round for an hour, and the valid tasks behind it
 * waited. It goes to the park now: the valid tasks are sent, and the junk's log lines are
 * summarised. */
static void
test_junk_does_not_hold_up_valid_tasks(void **state)
{
    static char *env[] = {"SENDAT_MAX_ACK_PENDING=200", NULL}; /* the junk waits its hour */
    char path[32], id[80];
    int64_t due = test_now_ms() + 3000, w;
    long lines;

    (void)state;
    if (due / 10000 != (due + 20 * JUNK_VALID) / 10000)
        due += 20 * JUNK_VALID; /* every valid task in the junk's window */
    w = due / 10000 * 10000;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    make_small_window_durable(w);
    fx_consumer(&F, 0, env);
    publish_junk(w, JUNK_N);
    for (int k = 0; k < JUNK_VALID; k++) {
        snprintf(path, sizeof(path), "/valid/%d", k);
        assert_int_equal(fx_schedule(&F, due + 20 * k, path, id, sizeof(id)), 0);
    }
    if (!wait_until(valid_arrived, NULL, 30000)) {
        fx_print_log(&F, 0);
        fail_msg("valid tasks behind %d junk messages were not sent", JUNK_N);
    }
    assert_true(wait_until(all_parked, NULL, 30000));
    assert_true(wait_until(summarised, NULL, 30000));
    lines = proc_count_lines(F.consumers[0].err_path, "event=parked ") +
            proc_count_lines(F.consumers[0].err_path, "event=unknown_key ");
    if (lines > JUNK_N / 10)
        fail_msg("%ld lines for %d junk messages: not summarised", lines, JUNK_N);
    assert_true(fx_consumer_metric(&F, 0, "sendat_unknown_key_total") >= JUNK_N);
    assert_int_equal(receiver_count_path(F.recv, "/forged"), 0);
    stop_with_consumer();
}

static int
tasks_gone(void *arg)
{
    (void)arg;
    return stream_msgs(SA_TASKS_STREAM) == 0;
}

static int
dlq_summarised(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=dead_letter_summary") > 0;
}

/* Garbage past the dead-letter budget (100 per member per 10 s) waits in the park and is
 * dead-lettered in a later interval: every message ends as its own dead letter, none twice,
 * and the lines are summarised. */
static void
test_dead_letters_over_budget_wait_in_the_park(void **state)
{
    enum { N = 130 };
    char id[32];

    (void)state;
    start_with_consumer();
    for (int k = 0; k < N; k++) {
        snprintf(id, sizeof(id), "garbage-%d", k);
        publish_raw(id, "this is not an envelope", 23);
    }
    assert_true(wait_until(dlq_has, (void *)(intptr_t)100, 30000));
    assert_true(wait_until(dlq_has, (void *)(intptr_t)N, 60000));
    assert_true(wait_until(dlq_summarised, NULL, 30000));
    assert_int_equal(stream_msgs(SA_DLQ_STREAM), N);
    assert_true(fx_consumer_metric(&F, 0, "sendat_parked_total") >= N - 100);
    assert_true(wait_until(tasks_gone, NULL, 10000)); /* the park is empty again */
    dead_reason("garbage-129", "envelope");
    stop_with_consumer();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_junk_does_not_hold_up_valid_tasks),
        cmocka_unit_test(test_dead_letters_over_budget_wait_in_the_park),
    };

    return FX_RUN(tests);
}
