/* The pull every consumer makes (common/jspull.c) on a real nats-server: requests left open on
 * the server and answered into a plain subscription, acks sent by hand. Overlapping requests
 * and late answers (requests that expire while a loaded server still delivers) must hand
 * every message out exactly once and every ack must count; a message landing in an empty
 * level must reach an open request at once, and an idle request must hear heartbeats. */
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
#include "jspull.h"
#include "natsconn.h"
#include "natsd.h"

#define LOADED 3000 /* messages published while the requests come and go */
#define REQUESTS 8  /* open at once */

struct pfx {
    struct natsd srv;
    natsConnection *nc;
    jsCtx *js;
    natsSubscription *sub;
    char inbox[64];
};

static void
setup_fx(struct pfx *f)
{
    jsStreamConfig sc;
    jsConsumerConfig cc;
    const char *subjects[] = {"ft.>"};
    natsInbox *inbox = NULL;
    char all[80];

    memset(f, 0, sizeof(*f));
    assert_int_equal(natsd_start(&f->srv), 0);
    assert_int_equal(natsConnection_ConnectTo(&f->nc, f->srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&f->js, f->nc, NULL), NATS_OK);
    jsStreamConfig_Init(&sc);
    sc.Name = "FT";
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = js_WorkQueuePolicy;
    assert_int_equal(js_AddStream(NULL, f->js, &sc, NULL, NULL), NATS_OK);
    jsConsumerConfig_Init(&cc);
    cc.Durable = "d";
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = 30LL * 1000000000LL; /* a lost ack would show as a redelivery only after this */
    cc.MaxWaiting = 512;
    assert_int_equal(js_AddConsumer(NULL, f->js, "FT", &cc, NULL, NULL), NATS_OK);
    assert_int_equal(natsInbox_Create(&inbox), NATS_OK);
    snprintf(f->inbox, sizeof(f->inbox), "%s", inbox);
    natsInbox_Destroy(inbox);
    snprintf(all, sizeof(all), "%s.*", f->inbox);
    assert_int_equal(natsConnection_SubscribeSync(&f->sub, f->nc, all), NATS_OK);
    assert_int_equal(natsSubscription_SetPendingLimits(f->sub, -1, -1), NATS_OK);
}

static void
teardown_fx(struct pfx *f)
{
    natsSubscription_Destroy(f->sub);
    jsCtx_Destroy(f->js);
    natsConnection_Destroy(f->nc);
    natsd_stop(&f->srv);
}

static void
request(struct pfx *f, int req, int batch, int64_t expires_ms, int64_t heartbeat_ms)
{
    char reply[80];

    snprintf(reply, sizeof(reply), "%s.%d", f->inbox, req);
    assert_int_equal(sa_jspull_request(f->nc, "FT", "d", reply, batch, expires_ms, heartbeat_ms),
                     NATS_OK);
}

/* NATS_OK, or the first failure: no cmocka assertion here, since the publishing thread is not
 * the test's (a failed assertion there longjmps into another thread's stack). */
static natsStatus
publish_n(jsCtx *js, int from, int n)
{
    char subj[32];
    natsStatus s = NATS_OK;

    for (int i = from; i < from + n && s == NATS_OK; i++) {
        snprintf(subj, sizeof(subj), "ft.%d", i);
        s = js_PublishAsync(js, subj, subj, (int)strlen(subj), NULL);
    }
    return s == NATS_OK ? js_PublishAsyncComplete(js, NULL) : s;
}

static natsStatus loaded_status = NATS_OK; /* publish_loaded's first failure */

/* In chunks with pauses (pacing, not synchronisation): requests expire between them. */
static void *
publish_loaded(void *arg)
{
    struct timespec pause = {0, 3 * 1000000L};

    for (int i = 0; i < LOADED && loaded_status == NATS_OK; i += 30) {
        loaded_status = publish_n(arg, i, 30);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static int
consumer_done(void *arg)
{
    struct pfx *f = arg;
    jsConsumerInfo *ci = NULL;
    int done = 0;

    if (js_GetConsumerInfo(&ci, f->js, "FT", "d", NULL, NULL) == NATS_OK)
        done = ci->NumPending == 0 && ci->NumAckPending == 0 && ci->NumRedelivered == 0;
    jsConsumerInfo_Destroy(ci);
    return done;
}

/* Takes one message: a task is counted and acked, a closing status opens a new request, and
 * so does every 7th message (a batch used up closes its request without a word). */
static void
take(struct pfx *f, natsMsg *m, int *seen, int *next_req, int *closed)
{
    enum sa_jspull_kind kind = sa_jspull_classify(m, NULL);
    char stream[32], durable[32];
    int k = -1;

    if (kind == SA_JSPULL_TASK) {
        assert_true(sa_jspull_origin(stream, sizeof(stream), durable, sizeof(durable), m));
        assert_string_equal(durable, "d");
        assert_int_equal(sscanf(natsMsg_GetSubject(m), "ft.%d", &k), 1);
        assert_true(k >= 0 && k < LOADED);
        assert_int_equal(sa_jspull_ack(f->nc, m, SA_JSPULL_ACK, 0), NATS_OK);
        natsMsg_Destroy(m);
        seen[k]++;
        if (k % 7 == 0)
            request(f, (*next_req)++, 7, 10, 0);
        return;
    }
    if (kind != SA_JSPULL_HEARTBEAT) {
        (*closed)++;
        request(f, *next_req, 7, 2 + *next_req % 5 * 3, 0); /* expires 2..14 ms */
        (*next_req)++;
    }
    natsMsg_Destroy(m);
}

/* Many short requests open at once, expiring all the time while 3000 messages arrive: late
 * answers land after their request is closed on our side. Each message exactly once, and
 * the acks sent by hand leave nothing pending or redelivered. */
static void
test_overlapping_requests_on_a_loaded_server(void **state)
{
    static int seen[LOADED];
    struct pfx f;
    pthread_t pub;
    natsMsg *m = NULL;
    int next_req = 1, closed = 0, total = 0;
    int64_t deadline;

    (void)state;
    setup_fx(&f);
    for (int i = 0; i < REQUESTS; i++)
        request(&f, next_req++, 7, 2 + i * 3, 0);
    assert_int_equal(pthread_create(&pub, NULL, publish_loaded, f.js), 0);
    deadline = test_now_ms() + (int64_t)(60000 * test_timeout_multiplier());
    while (total < LOADED && test_now_ms() < deadline) {
        if (natsSubscription_NextMsg(&m, f.sub, 1000) != NATS_OK) {
            request(&f, next_req++, 7, 10, 0); /* all used up while nothing came: ask again */
            continue;
        }
        total += sa_jspull_classify(m, NULL) == SA_JSPULL_TASK;
        take(&f, m, seen, &next_req, &closed);
    }
    pthread_join(pub, NULL);
    if (loaded_status != NATS_OK)
        fail_msg("publishing the messages failed: %s", natsStatus_GetText(loaded_status));
    for (int k = 0; k < LOADED; k++)
        if (seen[k] != 1)
            fail_msg("message ft.%d was handed out %d times", k, seen[k]);
    assert_true(closed > 0); /* requests did expire while messages came */
    assert_int_equal(natsConnection_Flush(f.nc), NATS_OK);
    assert_true(wait_until(consumer_done, &f, 10000));
    teardown_fx(&f);
}

/* Waits for the next message of request req (older requests' words are skipped). */
static natsMsg *
next_of(struct pfx *f, int req, int64_t timeout_ms)
{
    int64_t deadline = test_now_ms() + (int64_t)((double)timeout_ms * test_timeout_multiplier());
    char status_subject[80];
    natsMsg *m = NULL;

    snprintf(status_subject, sizeof(status_subject), "%s.%d", f->inbox, req);
    while (test_now_ms() < deadline) {
        if (natsSubscription_NextMsg(&m, f->sub, 100) != NATS_OK)
            continue;
        if (sa_jspull_classify(m, NULL) == SA_JSPULL_TASK ||
            !strcmp(natsMsg_GetSubject(m), status_subject))
            return m;
        natsMsg_Destroy(m);
    }
    return NULL;
}

/* An empty level with a request open: heartbeats while it stays empty, a message published
 * then arrives without a new request, a nak comes back to the same request, and the expiry
 * closes it with a 408 that says how much of the batch was left. */
static void
test_open_request_on_an_empty_level(void **state)
{
    struct pfx f;
    natsMsg *m;
    long left = -1;
    int64_t t0;

    (void)state;
    setup_fx(&f);
    request(&f, 1, 10, 6000, 500);
    m = next_of(&f, 1, 5000);
    assert_non_null(m);
    assert_int_equal(sa_jspull_classify(m, NULL), SA_JSPULL_HEARTBEAT);
    natsMsg_Destroy(m);

    t0 = test_now_ms();
    assert_int_equal(publish_n(f.js, 0, 1), NATS_OK);
    m = next_of(&f, 1, 3000); /* generous: an open request is answered at once */
    assert_non_null(m);
    assert_int_equal(sa_jspull_classify(m, NULL), SA_JSPULL_TASK);
    assert_string_equal(natsMsg_GetSubject(m), "ft.0");
    print_message("message reached the open request %lld ms after publish\n",
                  (long long)(test_now_ms() - t0));
    assert_int_equal(sa_jspull_ack(f.nc, m, SA_JSPULL_NAK, 0), NATS_OK);
    natsMsg_Destroy(m);

    m = next_of(&f, 1, 3000); /* given back: the same open request gets it again */
    assert_non_null(m);
    assert_int_equal(sa_jspull_classify(m, NULL), SA_JSPULL_TASK);
    assert_int_equal(sa_jspull_ack(f.nc, m, SA_JSPULL_PROGRESS, 0), NATS_OK);
    assert_int_equal(sa_jspull_ack(f.nc, m, SA_JSPULL_ACK, 0), NATS_OK);
    natsMsg_Destroy(m);

    do { /* heartbeats until the expiry, then the 408 */
        m = next_of(&f, 1, 10000);
        assert_non_null(m);
        if (sa_jspull_classify(m, &left) != SA_JSPULL_HEARTBEAT)
            break;
        natsMsg_Destroy(m);
    } while (1);
    assert_int_equal(sa_jspull_classify(m, &left), SA_JSPULL_TIMEOUT);
    assert_int_equal(left, 8);
    natsMsg_Destroy(m);
    assert_int_equal(natsConnection_Flush(f.nc), NATS_OK);
    assert_true(wait_until(consumer_done, &f, 10000));
    teardown_fx(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlapping_requests_on_a_loaded_server),
        cmocka_unit_test(test_open_request_on_an_empty_level),
    };

    return FX_RUN(tests);
}
