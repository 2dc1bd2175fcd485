/* A captured sealed task re-published after its claim record expired is not sent again
 * (security review, issue 11.3): re-publishing needs no key, and the ledger forgets a claim
 * after the claims bucket's TTL. The consumer refuses a task due longer ago than the ledger
 * remembers and dead-letters it with the reason. The claims bucket here keeps records 10 s. */
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

#define CLAIMS_TTL "10s"

static struct fx F;

/* The claims bucket again, with a short TTL (init keeps an existing bucket as it is). */
static void
short_claims_ttl(natsConnection *nc)
{
    jsCtx *js = NULL;
    char out[256], err[1024];

    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_DeleteStream(js, "KV_sendat_claims", NULL, NULL), NATS_OK);
    jsCtx_Destroy(js);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--window", "10s",
                               "--slot", "2s", "--lead", "1s", "--ack-wait", "5s", "--claims-ttl",
                               CLAIMS_TTL, NULL),
                     0);
}

static int
dead_lettered(void *arg)
{
    char out[8192];

    return fx_sendat(&F, out, sizeof(out), NULL, 0, "status", (const char *)arg, NULL) == 0 &&
           strstr(out, "claim ledger remembers") != NULL;
}

static void
test_replay_after_the_claim_expired_is_refused(void **state)
{
    natsConnection *nc = NULL;
    natsSubscription *copy = NULL;
    natsMsg *captured = NULL, *again = NULL;
    char id[SA_ID_MAX + 1], subject[SA_SUBJECT_MAX];
    const struct sa_layout l = {.window_ms = 10000, .slot_ms = 2000};
    int64_t now;

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    short_claims_ttl(nc);
    /* a broker operator's view: every published task, sealed */
    assert_int_equal(natsConnection_SubscribeSync(&copy, nc, "sendat.task.>"), NATS_OK);
    natsConnection_Flush(nc);
    fx_consumer(&F, 0, NULL);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/once", id, sizeof(id)), 0);
    assert_int_equal(natsSubscription_NextMsg(&captured, copy, 10000), NATS_OK);
    assert_true(receiver_wait(F.recv, "/once", 1, 30000));

    /* past the claim's TTL (from its last write): the same sealed bytes, a new Msg-Id */
    wait_until_ms(test_now_ms() + 12000, 30000);
    now = test_now_ms();
    sa_layout_window_subject(subject, sizeof(subject), sa_layout_window(&l, now), id);
    assert_int_equal(natsMsg_Create(&again, subject, NULL, natsMsg_GetData(captured),
                                    natsMsg_GetDataLength(captured)),
                     NATS_OK);
    assert_int_equal(natsMsgHeader_Set(again, "Nats-Msg-Id", "replayed-by-an-operator"), NATS_OK);
    assert_int_equal(natsConnection_PublishMsg(nc, again), NATS_OK);
    natsConnection_Flush(nc);

    assert_true(wait_until(dead_lettered, id, 30000));
    assert_int_equal(receiver_count_path(F.recv, "/once"), 1);
    natsMsg_Destroy(again);
    natsMsg_Destroy(captured);
    natsSubscription_Destroy(copy);
    natsConnection_Destroy(nc);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_after_the_claim_expired_is_refused),
    };

    return FX_RUN(tests);
}
