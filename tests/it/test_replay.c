/* Replays of a captured sealed task (issue 11, item 3). Publishing one again needs no key.
 * While the claim ledger remembers the task, its "sent" claim stops a second send. Once the
 * claim has expired, the consumer refuses any task due longer ago than the ledger remembers:
 * it dead-letters the task with the reason instead of sending it. A task that waited out the
 * ledger while no consumer ran gets the same dead letter, and `sendat dlq replay` sends both
 * again on purpose. `sendat init` refuses a claims TTL below 1h, so this test shortens the
 * bucket's own TTL to 20 s (an operator could do the same with the nats CLI): consumers read
 * the TTL from the bucket. A purge of the claim key, which would erase the ledger's memory
 * before a replay, is refused by the bucket. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "claim.h"
#include "claimmac.h"
#include "fixture.h"
#include "keyring.h"
#include "layout.h"

#define TTL_MS 20000LL
#define MEMORY_MS 18000LL /* TTL less its tenth: sa_claim_memory_ms */
#define REASON                                                                                     \
    "longer than the claim ledger remembers (20s less a 2s margin): refusing a possible replay"

static struct fx F;
static natsConnection *nc;
static jsCtx *js;
static kvStore *claims;

static int
claim_gone(void *id)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, claims, id);

    kvEntry_Destroy(e);
    return s == NATS_NOT_FOUND;
}

static int
refused(void *id)
{
    char out[4096], err[512];
    int rc = fx_sendat(&F, out, sizeof(out), err, sizeof(err), "dlq", "show", (char *)id, NULL);

    return rc == 0 && strstr(out, REASON) != NULL;
}

static int
skipped_as_sent(void *log)
{
    return proc_count_lines(log, "claim=sent") > 0; /* event=skipped task=... claim=sent */
}

/* Publishes the captured sealed task again, raw, into the current window with a new Msg-Id. */
static void
replay_raw(natsMsg *captured, const char *id, const char *msgid)
{
    char subject[SA_SUBJECT_MAX];
    jsPubOptions po;

    jsPubOptions_Init(&po);
    po.MsgId = msgid;
    sa_layout_window_subject(subject, sizeof(subject), 0, test_now_ms() / 10000 * 10000, id);
    assert_int_equal(js_Publish(NULL, js, subject, natsMsg_GetData(captured),
                                natsMsg_GetDataLength(captured), &po, NULL),
                     NATS_OK);
}

/* Starts the server and consumer c0, opens nc, js and the claims bucket (claims), and returns
 * a capture of every task published to a window level. */
static natsSubscription *
start_capturing(void)
{
    natsSubscription *sub = NULL;

    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    assert_int_equal(js_KeyValue(&claims, js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_int_equal(natsConnection_SubscribeSync(&sub, nc, "sendat.task.*.w.*"), NATS_OK);
    assert_int_equal(natsConnection_Flush(nc), NATS_OK);
    fx_consumer(&F, 0, NULL);
    return sub;
}

/* Books a webhook to path due in 1.5 s (its id into id) and returns its sealed task as sub
 * captured it, once its status says sent. */
static natsMsg *
sent_and_captured(natsSubscription *sub, const char *path, char *id, size_t cap)
{
    natsMsg *captured = NULL;

    assert_int_equal(fx_schedule(&F, test_now_ms() + 1500, path, id, cap), 0);
    assert_int_equal(natsSubscription_NextMsg(&captured, sub, 5000), NATS_OK);
    if (!receiver_wait(F.recv, path, 1, 30000)) {
        fx_print_log(&F, 0);
        fail_msg("%s never arrived", path);
    }
    assert_true(fx_status_says(&F, id, "sent", 15000));
    return captured;
}

/* The end of a start_capturing test (captured may be NULL). */
static void
finish(natsSubscription *sub, natsMsg *captured)
{
    natsMsg_Destroy(captured);
    natsSubscription_Destroy(sub);
    kvStore_Destroy(claims);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

static void
test_replay_after_the_ledger_forgot(void **state)
{
    char a[80], b[80], out[256], err[512];
    natsSubscription *sub = NULL;
    natsMsg *captured = NULL;
    int64_t b_due;

    (void)state;
    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    claims = fx_short_ledger(&F, js, TTL_MS);
    assert_int_equal(natsConnection_SubscribeSync(&sub, nc, "sendat.task.*.w.*"), NATS_OK);
    assert_int_equal(natsConnection_Flush(nc), NATS_OK);

    /* A is sent once; a replay while its "sent" claim lives is skipped. */
    fx_consumer(&F, 0, NULL);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1500, "/a", a, sizeof(a)), 0);
    assert_int_equal(natsSubscription_NextMsg(&captured, sub, 5000), NATS_OK); /* as published */
    assert_true(receiver_wait(F.recv, "/a", 1, 20000));
    replay_raw(captured, a, "early-replay");
    assert_true(wait_until(skipped_as_sent, F.consumers[0].err_path, 20000));
    assert_int_equal(fx_stop_consumers(&F), 0);

    /* B falls due while no consumer runs, and stays unsent for longer than the ledger remembers. */
    b_due = test_now_ms() + 500;
    assert_int_equal(fx_schedule(&F, b_due, "/b", b, sizeof(b)), 0);
    assert_true(wait_until(claim_gone, a, 90000));
    assert_true(wait_until_ms(b_due + MEMORY_MS + 1000, 60000));

    /* A again after its claim expired: refused; B likewise: dead-lettered, not dropped. */
    replay_raw(captured, a, "late-replay");
    fx_consumer(&F, 1, NULL);
    assert_true(wait_until(refused, a, 30000));
    assert_true(wait_until(refused, b, 30000));
    assert_int_equal(receiver_count_path(F.recv, "/a"), 1);
    assert_int_equal(receiver_count_path(F.recv, "/b"), 0);

    /* The operator's replay re-seals each with a fresh due time: both are sent. */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "replay", a, NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "replay", b, NULL), 0);
    assert_true(receiver_wait(F.recv, "/a", 2, 20000));
    assert_true(receiver_wait(F.recv, "/b", 1, 20000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/a"), 2);
    assert_int_equal(receiver_count_path(F.recv, "/b"), 1);

    /* A ledger shorter than an hour is refused at init (the flags are checked first). */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--claims-ttl", "59m", NULL), 2);
    assert_non_null(strstr(err, "--claims-ttl must be at least 1h"));

    finish(sub, captured);
}

static int
sent_twice(void *path)
{
    return receiver_count_path(F.recv, path) >= 2;
}

/* A client that may write claim keys (the producer role may: `sendat cancel` writes them)
 * purges a sent task's claim, which erased the key's history, then publishes the captured
 * sealed task again: the consumer found nothing and sent it a second time. The claims
 * bucket refuses rollups now (`sendat init`), so the purge is refused and the "sent" record
 * stops the replay. */
static void
test_purge_then_replay(void **state)
{
    natsSubscription *sub = NULL;
    natsMsg *captured = NULL;
    natsStatus purged;
    char a[80];

    (void)state;
    sub = start_capturing();
    captured = sent_and_captured(sub, "/p", a, sizeof(a));
    purged = kvStore_Purge(claims, a, NULL);
    replay_raw(captured, a, "replay-after-purge");
    assert_true(wait_until(skipped_as_sent, F.consumers[0].err_path, 20000) ||
                wait_until(sent_twice, "/p", 1000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/p"), 1);
    assert_int_not_equal(purged, NATS_OK);
    finish(sub, captured);
}

static int
both_skipped_as_sent(void *log)
{
    return proc_count_lines(log, "claim=sent") >= 2;
}

/* The bytes of the oldest record id's claim key still holds (its "sending"), into out. */
static size_t
first_claim_bytes(const char *id, char *out, size_t cap)
{
    kvEntryList l = {0};
    size_t len;

    assert_int_equal(kvStore_History(&l, claims, id, NULL), NATS_OK);
    assert_true(l.Count >= 2);
    len = (size_t)kvEntry_ValueLen(l.Entries[0]);
    assert_true(len < cap);
    memcpy(out, kvEntry_Value(l.Entries[0]), len);
    kvEntryList_Destroy(&l);
    return len;
}

/* A client that may write the claims bucket (no key needed) captures a task's authentic
 * "sending" record and its sealed task, and once the task was sent puts the record back over
 * the "sent" one (well within the claims TTL) and publishes the task again. The "sending" names
 * the consumer's own instance, and no copy of the task is claimed there, so it looked like a
 * claim whose answer was lost: the at-least-once task was sent a second time, the at-most-once
 * one dead-lettered "outcome unknown" although it had arrived. The record is a copy of one
 * under it in the key's history (its write id), so it decides nothing: "sent" stays final. */
static void
test_replayed_sending_over_sent(void **state)
{
    const char *path[2] = {"/rs-alo", "/rs-amo"};
    char id[2][80], url[300], rec[2048], out[2048];
    natsSubscription *sub = NULL;
    natsMsg *captured[2] = {NULL, NULL};
    size_t len;
    uint64_t rev;
    int dead[2];

    (void)state;
    sub = start_capturing();
    for (int k = 0; k < 2; k++) {
        char at[40];
        int64_t due = test_now_ms() + 1500;

        snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due / 1000, (int)(due % 1000));
        snprintf(url, sizeof(url), "%s%s", receiver_url(F.recv), path[k]);
        assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "schedule", "--at", at,
                                   "--webhook", url, "--data", "{}", k ? "--at-most-once" : NULL,
                                   NULL),
                         0);
        snprintf(id[k], sizeof(id[k]), "%.*s", (int)strcspn(out, "\n"), out);
        assert_int_equal(natsSubscription_NextMsg(&captured[k], sub, 5000), NATS_OK);
    }
    for (int k = 0; k < 2; k++) {
        if (!receiver_wait(F.recv, path[k], 1, 30000)) {
            fx_print_log(&F, 0);
            fail_msg("%s never arrived", path[k]);
        }
        assert_true(fx_status_says(&F, id[k], "sent", 15000));
        len = first_claim_bytes(id[k], rec, sizeof(rec));
        assert_non_null(strstr(rec, "\"sending\""));
        assert_int_equal(kvStore_Put(&rev, claims, id[k], rec, (int)len), NATS_OK);
        replay_raw(captured[k], id[k], k ? "replay-amo" : "replay-alo");
    }
    assert_true(wait_until(both_skipped_as_sent, F.consumers[0].err_path, 20000) ||
                wait_until(sent_twice, (void *)path[0], 1000));
    assert_true(wait_until_ms(test_now_ms() + 3000, 10000)); /* time for a second send */
    assert_int_equal(fx_stop_consumers(&F), 0);
    for (int k = 0; k < 2; k++) {
        dead[k] = fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", id[k], NULL) != 4;
        fprintf(stderr, "%s: arrived %d times, dead-lettered: %s", path[k],
                (int)receiver_count_path(F.recv, path[k]), dead[k] ? out : "no\n");
        natsMsg_Destroy(captured[k]);
    }
    for (int k = 0; k < 2; k++) {
        assert_int_equal(receiver_count_path(F.recv, path[k]), 1);
        assert_false(dead[k]);
    }
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "own_claim_stale"), 0);
    finish(sub, NULL);
}

/* The consumer passed over id's replay: it logged skipping id for its "sent" claim and holds
 * nothing, so the replay was settled and cannot come back to be sent. */
static int
passed_over(void *id)
{
    char line[128];

    snprintf(line, sizeof(line), "task=%s claim=sent", (const char *)id);
    return proc_count_lines(F.consumers[0].err_path, line) > 0 &&
           fx_consumer_metric(&F, 0, "sendat_held") == 0;
}

/* A "sending" record that never landed where it was read (a consumer's create refused by a
 * claim there first: its bytes pass on the bucket's subject all the same), put back over the
 * task's "sent" by a client that may write the bucket, with the sealed task re-published. Made
 * here with the key, as that consumer would have (a made-up c9, which no longer answers), so no
 * record under it carries its write id. The holder looked dead, so the task was taken over and
 * sent again; a "sending" over a final record is a replay: "sent" decides. */
static void
test_replayed_sending_over_sent_elsewhere(void **state)
{
    struct sa_claim c = {.state = SA_CLAIM_SENDING, .attempt = 1, .at_ms = test_now_ms()};
    struct sa_keyring *ring = NULL;
    natsSubscription *sub = NULL;
    natsMsg *captured = NULL;
    kvEntry *e = NULL;
    char id[80];

    (void)state;
    sub = start_capturing();
    captured = sent_and_captured(sub, "/rse", id, sizeof(id));
    snprintf(c.consumer, sizeof(c.consumer), "c9");
    snprintf(c.instance, sizeof(c.instance), "0123456789abcdef");
    assert_int_equal(kvStore_Get(&e, claims, id), NATS_OK);
    assert_int_equal(sa_keyring_load(&ring, F.key, NULL), SA_OK);
    assert_int_equal(sa_claimmac_use(ring, NULL), SA_OK);
    assert_int_equal(sa_claim_update(claims, id, &c, kvEntry_Revision(e), NULL, NULL), SA_OK);
    sa_claimmac_forget();
    sa_keyring_free(ring);
    kvEntry_Destroy(e);
    replay_raw(captured, id, "replay-elsewhere");
    if (!wait_until(passed_over, id, 30000) && !wait_until(sent_twice, "/rse", 1000))
        fx_print_log(&F, 0);
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/rse"), 1);
    assert_true(proc_count_lines(F.consumers[0].err_path, "replayed=sending count=1 under=sent") >
                0);
    finish(sub, captured);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay_after_the_ledger_forgot),
                                       cmocka_unit_test(test_purge_then_replay),
                                       cmocka_unit_test(test_replayed_sending_over_sent),
                                       cmocka_unit_test(test_replayed_sending_over_sent_elsewhere)};
    return FX_RUN(tests);
}
