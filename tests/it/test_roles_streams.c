/* On the deploy/nats cluster of roles.c, what a role's credentials reach of the fleet's
 * streams and buckets without the key: a producer forges no member (issue 24.6), walks the task
 * stream and erases no task (issue 37.1), a task a keyless consumer client acked away is
 * reported missing (issue 37.11), and the consumer user may ask a shard's leader to step down
 * (the leader balance, issue 25.4), the producer may not. (Split from test_roles.c: each role's
 * own work and what it is refused.) */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "jsfeat.h"
#include "layout.h"
#include "roles.h"
#include "stepdown.h"

/* The members bucket and the liveness subjects are the consumers' (issue 24.6): a producer
 * may neither write a member's entry or a rescue key nor listen on sendat.alive.*, so it can
 * neither name an instance to probe nor answer for a dead one. (A consumer may do both; what
 * it writes there decides nothing, see test_failover_forged.c.) */
static void
test_producer_forges_no_member(void **state)
{
    const char *pub[] = {"$KV." SA_MEMBERS_BUCKET ".c0", "$KV." SA_MEMBERS_BUCKET ".rescue.x.0",
                         "sendat.alive.0123456789abcdef"};
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    const char *text = NULL;

    (void)state;
    roles_start_once();
    for (size_t i = 0; i < sizeof(pub) / sizeof(pub[0]); i++) {
        assert_int_equal(natsd_connect(&nc, F.cluster.urls, "producer", roles_password("producer")),
                         NATS_OK);
        assert_int_equal(natsConnection_PublishString(nc, pub[i], "0123456789abcdef"), NATS_OK);
        natsConnection_Flush(nc); /* the server's -ERR comes before its PONG */
        if (natsConnection_GetLastError(nc, &text) != NATS_NOT_PERMITTED)
            fail_msg("a producer may publish to %s", pub[i]);
        natsConnection_Destroy(nc);
        nc = NULL;
    }
    assert_int_equal(natsd_connect(&nc, F.cluster.urls, "producer", roles_password("producer")),
                     NATS_OK);
    assert_int_equal(natsConnection_SubscribeSync(&sub, nc, "sendat.alive.*"), NATS_OK);
    natsConnection_Flush(nc);
    if (natsConnection_GetLastError(nc, &text) != NATS_NOT_PERMITTED)
        fail_msg("a producer may listen on sendat.alive.*");
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
}

/* The ids of every task stored in the task stream, learnt as a producer may (issue 37.1): a
 * direct get of the next message on sendat.task.> from each sequence on. Returns how many;
 * subjects, if not NULL, gets each one's subject. */
static int
walk_task_ids(jsCtx *js, char ids[][SA_ID_MAX + 1], char (*subjects)[SA_SUBJECT_MAX], int cap)
{
    uint64_t seq = 1;
    int n = 0;

    for (int i = 0; i < 100000 && n < cap; i++) {
        jsDirectGetMsgOptions o;
        struct sa_place p;
        natsMsg *m = NULL;

        jsDirectGetMsgOptions_Init(&o);
        o.Sequence = seq;
        o.NextBySubject = "sendat.task.>";
        if (js_DirectGetMsg(&m, js, SA_TASKS_STREAM, NULL, &o) != NATS_OK)
            break; /* past the last one */
        if (sa_layout_parse_subject(&p, natsMsg_GetSubject(m), NULL) == SA_OK) {
            if (subjects)
                snprintf(subjects[n], SA_SUBJECT_MAX, "%s", natsMsg_GetSubject(m));
            snprintf(ids[n++], SA_ID_MAX + 1, "%s", p.id);
        }
        seq = natsMsg_GetSequence(m) + 1;
        natsMsg_Destroy(m);
    }
    return n;
}

/* Issue 37.1: a client with the producer's credentials and no key walks the task stream for
 * every id and publishes a forged "sent" claim and a forged cancel record for each. Nothing it
 * wrote is authenticated by the key: every task is still delivered exactly once, and status
 * shows the forged record as junk, never its "sent". The consumers start after the forgery,
 * so every task is still stored when the walk runs however slow the bookings were (a lead
 * of 20 s, 60 s under the sanitizers, stood for that before); the tasks due by then are
 * delivered late, from their past slots. */
static void
test_keyless_producer_erases_nothing(void **state)
{
    static const char sent[] = "{\"state\":\"sent\",\"consumer\":\"forger\",\"http_status\":200}";
    static char ids[4096][SA_ID_MAX + 1];
    char id[ROLES_N_TASKS][80], path[32], subject[300], out[8192], err[1024];
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    int n;

    (void)state;
    roles_books("/forged", 3000, 100, id);
    roles_connect_js("producer", &nc, &js);
    n = walk_task_ids(js, ids, NULL, (int)(sizeof(ids) / sizeof(ids[0])));
    assert_true(n >= ROLES_N_TASKS);
    for (int i = 0; i < n; i++) {
        snprintf(subject, sizeof(subject), "$KV.%s.%.*s", SA_CLAIMS_BUCKET, SA_ID_MAX, ids[i]);
        assert_int_equal(js_Publish(NULL, js, subject, sent, (int)strlen(sent), NULL, NULL),
                         NATS_OK);
        snprintf(subject, sizeof(subject), "$KV.%s.%.*s", SA_CANCEL_BUCKET, SA_ID_MAX, ids[i]);
        assert_int_equal(js_Publish(NULL, js, subject, "2026-11-28T19:00:00.000Z", 24, NULL, NULL),
                         NATS_OK);
    }
    fx_js_close(&nc, &js);
    roles_fleet_up();
    for (int k = 0; k < ROLES_N_TASKS; k++) {
        snprintf(path, sizeof(path), "/forged/%d", k);
        assert_true(receiver_wait(F.recv, path, 1, 60000));
    }
    assert_int_equal(fx_stop_consumers(&F), 0); /* the drain waits for the "sent" claims */
    for (int k = 0; k < ROLES_N_TASKS; k++) {
        snprintf(path, sizeof(path), "/forged/%d", k);
        assert_int_equal(receiver_count_path(F.recv, path), 1);
    }
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "status", id[0], NULL), 0);
    assert_non_null(strstr(out, "junk"));
    assert_non_null(strstr(out, "sent"));
    assert_null(strstr(out, "forger"));
}

static char status_out[8192], status_err[1024];

static int
status_says_missing(void *arg)
{
    return fx_sendat(&F, status_out, sizeof(status_out), status_err, sizeof(status_err), "status",
                     (const char *)arg, NULL) == 0 &&
           strstr(status_out, "missing");
}

/* Issue 37.11: a client with the consumer's credentials and no key pulls a task through a
 * durable of its own and acks it: the task is gone without a claim. `sendat status` then says
 * "missing" (not "unknown id") with the way out, and the task booked again is delivered. */
static void
test_task_acked_away_is_missing(void **state)
{
    static char ids[4096][SA_ID_MAX + 1], subjects[4096][SA_SUBJECT_MAX];
    char id[80], again[80], url[300], err[1024];
    const char *subject = NULL;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsConsumerConfig cc;
    jsSubOptions so;
    natsSubscription *sub = NULL;
    natsMsgList list = {0};
    int n;

    (void)state;
    roles_start_once();
    roles_act_as("producer");
    /* due in an hour: no consumer made its window's durable yet, so one of ours may filter it */
    assert_int_equal(fx_schedule(&F, test_now_ms() + 3600 * 1000, "/acked-away", id, sizeof(id)),
                     0);
    roles_connect_js("consumer", &nc, &js);
    n = walk_task_ids(js, ids, subjects, (int)(sizeof(ids) / sizeof(ids[0])));
    for (int i = 0; i < n && !subject; i++)
        if (!strcmp(ids[i], id))
            subject = subjects[i];
    assert_non_null(subject);
    jsConsumerConfig_Init(&cc);
    cc.Durable = "away";
    cc.FilterSubject = subject;
    cc.AckPolicy = js_AckExplicit;
    assert_int_equal(js_AddConsumer(NULL, js, SA_TASKS_STREAM, &cc, NULL, NULL), NATS_OK);
    jsSubOptions_Init(&so);
    so.Stream = SA_TASKS_STREAM;
    so.Consumer = "away";
    assert_int_equal(js_PullSubscribe(&sub, js, subject, "away", NULL, &so, NULL), NATS_OK);
    assert_int_equal(natsSubscription_Fetch(&list, sub, 1, 5000, NULL), NATS_OK);
    assert_int_equal(list.Count, 1);
    assert_int_equal(natsMsg_AckSync(list.Msgs[0], NULL, NULL), NATS_OK);
    natsMsgList_Destroy(&list);
    natsSubscription_Destroy(sub);
    assert_int_equal(js_DeleteConsumer(js, SA_TASKS_STREAM, "away", NULL, NULL), NATS_OK);
    fx_js_close(&nc, &js);
    /* the ack removes the task on every replica in its own time: a direct get a follower
     * answers may still find it for a moment ("waiting") */
    if (!wait_until(status_says_missing, id, 20000))
        fail_msg("status of a task acked away: %s%s", status_out, status_err);
    assert_non_null(strstr(status_out, "sendat schedule"));
    /* the way out: booked again (a new id), it is delivered */
    roles_consumer_as(0, "consumer");
    assert_true(wait_until(roles_consumer_ready, (void *)(intptr_t)0, 30000));
    snprintf(url, sizeof(url), "%s/acked-away", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, again, sizeof(again), err, sizeof(err), "schedule", "--at",
                               "+2s", "--webhook", url, NULL),
                     0);
    assert_true(receiver_wait(F.recv, "/acked-away", 1, 60000));
    assert_int_equal(fx_stop_consumers(&F), 0);
}

/* The consumers' leader balance (issue 25.4): the consumer user may ask a shard's claims
 * bucket leader to step down (answered, a new leader elected); the producer may not. */
static void
test_consumer_may_move_a_leader(void **state)
{
    const char *stream = "KV_" SA_CLAIMS_BUCKET, *text = NULL;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    struct sa_err err = {0};
    int led = 0;

    (void)state;
    roles_start_once();
    assert_int_equal(natsd_connect(&nc, F.cluster.urls, "consumer", roles_password("consumer")),
                     NATS_OK);
    if (sa_stepdown(nc, stream, NULL, (int)(10000 * test_timeout_multiplier()), &err) != SA_OK)
        fail_msg("the consumer may not step down %s: %s", stream, err.msg);
    natsConnection_Destroy(nc);
    roles_connect_js("admin", &nc, &js);
    for (int i = 0; i < 100 && !led; i++) { /* a leader again within 20 s */
        if (js_GetStreamInfo(&si, js, stream, NULL, NULL) == NATS_OK)
            led = si->Cluster && si->Cluster->Leader && si->Cluster->Leader[0];
        jsStreamInfo_Destroy(si);
        si = NULL;
        if (!led)
            usleep(200 * 1000);
    }
    assert_true(led);
    fx_js_close(&nc, &js);
    assert_int_equal(natsd_connect(&nc, F.cluster.urls, "producer", roles_password("producer")),
                     NATS_OK);
    assert_int_equal(
        natsConnection_PublishString(nc, "$JS.API.STREAM.LEADER.STEPDOWN.SENDAT_TASKS", ""),
        NATS_OK);
    natsConnection_Flush(nc); /* the server's -ERR comes before its PONG */
    if (natsConnection_GetLastError(nc, &text) != NATS_NOT_PERMITTED)
        fail_msg("a producer may step down the task stream's leader");
    natsConnection_Destroy(nc);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_forges_no_member),
        cmocka_unit_test(test_keyless_producer_erases_nothing),
        cmocka_unit_test(test_task_acked_away_is_missing),
        cmocka_unit_test(test_consumer_may_move_a_leader),
    };

    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), NULL, roles_stop);
}
