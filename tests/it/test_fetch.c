/* The fetch every puller goes through (sa_nats_fetch) on a real nats-server, in the state that
 * overflows nats.c 3.4's _fetch: more than half a batch already waiting in the subscription
 * (the late answer to an earlier pull) while another pull is still open on the server and
 * its messages arrive during the fetch. Each message must be handed out exactly once, and
 * nothing written past the list (AddressSanitizer in CI). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <nats/nats.h>

#include "check.h"
#include "fixture.h"
#include "natsconn.h"
#include "natsd.h"

#define WAITING 40 /* answered to a pull of ours before the fetch: > half the batch */
#define LATER 150  /* published while the fetch runs, for a pull still open */
#define BATCH 64

static struct natsd srv;
static natsSubscription *sub;

static void
publish_n(jsCtx *js, int from, int n)
{
    char subj[32];

    for (int i = from; i < from + n; i++) {
        snprintf(subj, sizeof(subj), "ft.%d", i);
        assert_int_equal(js_Publish(NULL, js, subj, subj, (int)strlen(subj), NULL, NULL), NATS_OK);
    }
}

static int
all_waiting(void *arg)
{
    int n = 0;

    (void)arg;
    natsSubscription_GetPending(sub, &n, NULL);
    return n >= WAITING;
}

static void *
publish_later(void *arg)
{
    struct timespec pause = {0, 300 * 1000000L};

    nanosleep(&pause, NULL);
    publish_n(arg, WAITING, LATER);
    return NULL;
}

/* Fetches until every message came or 5 empty pulls; counts each message's deliveries. */
static void
fetch_all(int *seen)
{
    for (int empty = 0; empty < 5;) {
        natsMsgList list = {0};
        jsFetchRequest req;

        jsFetchRequest_Init(&req);
        req.Batch = BATCH;
        req.Expires = 3000LL * 1000000LL;
        if (sa_nats_fetch(&list, sub, &req) != NATS_OK) {
            empty++;
            continue;
        }
        assert_true(list.Count <= req.Batch);
        for (int i = 0; i < list.Count; i++) {
            int k = -1;
            assert_int_equal(sscanf(natsMsg_GetSubject(list.Msgs[i]), "ft.%d", &k), 1);
            assert_true(k >= 0 && k < WAITING + LATER);
            seen[k]++;
            natsMsg_Ack(list.Msgs[i], NULL);
        }
        natsMsgList_Destroy(&list);
    }
}

static void
test_fetch_with_messages_waiting(void **state)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamConfig sc;
    jsConsumerConfig cc;
    const char *subjects[] = {"ft.>"};
    char next[128];
    pthread_t later;
    int seen[WAITING + LATER] = {0};

    (void)state;
    assert_int_equal(natsd_start(&srv), 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    jsStreamConfig_Init(&sc);
    sc.Name = "FT";
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = js_WorkQueuePolicy;
    assert_int_equal(js_AddStream(NULL, js, &sc, NULL, NULL), NATS_OK);
    jsConsumerConfig_Init(&cc);
    cc.Durable = "d";
    cc.AckPolicy = js_AckExplicit;
    assert_int_equal(js_AddConsumer(NULL, js, "FT", &cc, NULL, NULL), NATS_OK);
    assert_int_equal(js_PullSubscribe(&sub, js, "ft.>", "d", NULL, NULL, NULL), NATS_OK);

    publish_n(js, 0, WAITING);
    snprintf(next, sizeof(next), "$JS.API.CONSUMER.MSG.NEXT.FT.d");
    assert_int_equal(natsConnection_PublishRequestString(nc, next, natsSubscription_GetSubject(sub),
                                                         "{\"batch\":40}"),
                     NATS_OK);
    assert_true(wait_until(all_waiting, NULL, 10000));
    assert_int_equal(natsConnection_PublishRequestString(nc, next, natsSubscription_GetSubject(sub),
                                                         "{\"batch\":100,\"expires\":10000000000}"),
                     NATS_OK);
    assert_int_equal(natsConnection_Flush(nc), NATS_OK);
    assert_int_equal(pthread_create(&later, NULL, publish_later, js), 0);
    fetch_all(seen);
    pthread_join(later, NULL);
    for (int k = 0; k < WAITING + LATER; k++)
        if (seen[k] != 1)
            fail_msg("message ft.%d was handed out %d times", k, seen[k]);

    natsSubscription_Destroy(sub);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    natsd_stop(&srv);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fetch_with_messages_waiting)};

    return FX_RUN(tests);
}
