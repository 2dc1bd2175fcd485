/* The layout under the fleet changed by hand. Upgrading from a version before the claim MAC
 * (issue 37.1): records an older version wrote carry no MAC. The layout's mark (claimmac.h),
 * made by `sendat init` of this version, says until when such records are an older version's:
 * the consumer waits for it, then obeys the older records stored before it, and still takes
 * none stored after it. A claims bucket deleted (issue 37.10): the consumer sends nothing
 * until init makes it again, and init says what was lost; with shards, whichever shard's. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "claim.h"
#include "claimmac.h"
#include "fixture.h"
#include "layout.h"
#include "timeparse.h"

static struct fx F;

static int
consumer_waits_for_mark(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "no mark of since when claim") > 0;
}

/* A raw client of the fixture's server (nothing of sendat's own but the record bytes). */
struct raw {
    natsConnection *nc;
    jsCtx *js;
    kvStore *claims, *cancel, *meta;
};

static void
raw_open(struct raw *r)
{
    assert_int_equal(natsConnection_ConnectTo(&r->nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&r->js, r->nc, NULL), NATS_OK);
    assert_int_equal(js_KeyValue(&r->claims, r->js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_int_equal(js_KeyValue(&r->cancel, r->js, SA_CANCEL_BUCKET), NATS_OK);
    assert_int_equal(js_KeyValue(&r->meta, r->js, SA_META_BUCKET), NATS_OK);
}

static void
raw_close(struct raw *r)
{
    kvStore_Destroy(r->claims);
    kvStore_Destroy(r->cancel);
    kvStore_Destroy(r->meta);
    jsCtx_Destroy(r->js);
    natsConnection_Destroy(r->nc);
}

/* A claim record as the versions before the MAC stored it: the same JSON, no "mac" member. */
static void
put_old_claim(struct raw *r, const char *id, enum sa_claim_state state)
{
    struct sa_claim c = {.state = state, .at_ms = test_now_ms(), .http_status = 200};
    char json[1024];
    uint64_t rev;
    int n;

    snprintf(c.consumer, sizeof(c.consumer), "a consumer of the older version");
    n = sa_claim_encode(&c, json, sizeof(json));
    assert_true(n > 0);
    assert_int_equal(kvStore_Put(&rev, r->claims, id, json, n), NATS_OK);
}

/* A cancel record as they stored it: the time alone. */
static void
put_old_cancel(struct raw *r, const char *id)
{
    char now[40];
    uint64_t rev;

    sa_time_format(now, sizeof(now), test_now_ms());
    assert_int_equal(kvStore_PutString(&rev, r->cancel, id, now), NATS_OK);
}

/* A deployment an older version made and used: its layout has no MAC mark; one task was
 * cancelled (claim and cancel record), one sent with its copy still stored (a "sent" claim).
 * A consumer of this version started on it waits, and sends nothing, until `sendat init`;
 * after it the older records decide (neither is sent) and a task without records is sent once.
 * A record without a MAC put after the mark is junk, as a keyless writer's: its task is sent. */
static void
test_older_records_obeyed_after_init(void **state)
{
    static const char *paths[] = {"/cancelled-before", "/sent-before", "/plain", "/junk-after"};
    static const size_t sends[] = {0, 0, 1, 1};
    enum { N = sizeof(paths) / sizeof(paths[0]) };
    char ids[N][80], out[512], err[512];
    int64_t due = test_now_ms() + (int64_t)(4000 * test_timeout_multiplier());
    struct raw r = {0};

    (void)state;
    fx_start(&F, 0);
    raw_open(&r);
    assert_int_equal(kvStore_Purge(r.meta, SA_CLAIMMAC_SINCE_KEY, NULL), NATS_OK); /* as before */
    for (int i = 0; i < N; i++)
        assert_int_equal(fx_schedule(&F, due, paths[i], ids[i], sizeof(ids[i])), 0);
    put_old_claim(&r, ids[0], SA_CLAIM_CANCELLED);
    put_old_cancel(&r, ids[0]);
    put_old_claim(&r, ids[1], SA_CLAIM_SENT);
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(consumer_waits_for_mark, NULL, 30000));
    assert_true(wait_until_ms(due + 1000, 30000)); /* past due: nothing sent while it waits */
    assert_int_equal(receiver_count(F.recv), 0);

    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--window", "10s",
                               "--slot", "2s", "--lead", "1s", "--ack-wait", fx_ack_wait, NULL),
                     0);
    assert_non_null(strstr(err, "stored until now carry no MAC"));
    put_old_cancel(&r, ids[3]); /* after the mark: junk, it cancels nothing */
    assert_true(receiver_wait(F.recv, "/plain", 1, 30000));
    assert_true(receiver_wait(F.recv, "/junk-after", 1, 30000));
    assert_true(fx_status_says(&F, ids[2], "sent", 30000));
    assert_true(wait_until_ms(test_now_ms() + 3000, 10000)); /* time for a wrong send */
    for (int i = 0; i < N; i++)
        assert_int_equal(receiver_count_path(F.recv, paths[i]), sends[i]);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", ids[0], NULL), 0);
    assert_non_null(strstr(out, "cancelled"));
    assert_null(strstr(out, "junk"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", ids[1], NULL), 0);
    assert_non_null(strstr(out, "sent"));
    assert_null(strstr(out, "junk"));
    /* a second init keeps the first mark: it says nothing of older records */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--window", "10s",
                               "--slot", "2s", "--lead", "1s", "--ack-wait", fx_ack_wait, NULL),
                     0);
    assert_null(strstr(err, "carry no MAC"));
    raw_close(&r);
    fx_finish(&F);
}

static int
ledger_lost_logged(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=ledger_lost") > 0;
}

/* The claims bucket deleted under a running consumer (as `nats kv del` would): a task falling
 * due meanwhile waits, /readyz says why; `sendat init` makes the bucket again and says what was
 * lost; the task is then sent once, and the one sent before the delete is not sent again. */
static void
test_claims_bucket_deleted(void **state)
{
    char before[80], during[80], out[512], err[1024], body[FX_BODY_MAX];
    int64_t due;
    struct raw r = {0};

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 2000, "/before", before, sizeof(before)), 0);
    assert_true(receiver_wait(F.recv, "/before", 1, 30000));
    assert_true(fx_status_says(&F, before, "sent", 30000));
    due = test_now_ms() + 4000;
    assert_int_equal(fx_schedule(&F, due, "/during", during, sizeof(during)), 0);
    raw_open(&r);
    assert_int_equal(js_DeleteKeyValue(r.js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_true(wait_until(ledger_lost_logged, NULL, 30000));
    assert_int_not_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at",
                                   "+1h", "--webhook", "http://127.0.0.1:9/x", NULL),
                         0); /* a producer refuses to book */
    fprintf(stderr, "schedule without the claims bucket: %s", err);
    assert_int_equal(fx_consumer_get(&F, 0, "/readyz", body), 503);
    assert_non_null(strstr(body, "claims bucket is gone or was made again"));
    assert_true(wait_until_ms(due + 3000, 30000));
    assert_int_equal(receiver_count_path(F.recv, "/during"), 0); /* nothing sent meanwhile */

    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--window", "10s",
                               "--slot", "2s", "--lead", "1s", "--ack-wait", fx_ack_wait, NULL),
                     0);
    assert_non_null(strstr(err, "(it was deleted): the outcome of every send and cancel"));
    assert_true(receiver_wait(F.recv, "/during", 1, 30000));
    assert_true(fx_status_says(&F, during, "sent", 30000));
    assert_true(proc_count_lines(F.consumers[0].err_path, "event=ledger_back") > 0);
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* time for a wrong send */
    assert_int_equal(receiver_count_path(F.recv, "/during"), 1);
    assert_int_equal(receiver_count_path(F.recv, "/before"), 1);
    raw_close(&r);
    fx_finish(&F);
}

static int
ledger_back_logged(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=ledger_back") > 0;
}

/* With four shards the watch looks at one claims bucket a turn (2 s), round robin: the last
 * shard's bucket deleted is still found (within 4 turns), claiming stops, and the lost shard,
 * looked at every turn from then on, is back within a turn or two of init. */
static void
test_sharded_claims_bucket_deleted(void **state)
{
    char bucket[64], out[512], err[1024], body[FX_BODY_MAX];
    struct raw r = {0};
    int64_t deleted;

    (void)state;
    fx_shards = "4";
    fx_start(&F, 0);
    fx_shards = NULL;
    fx_consumer(&F, 0, NULL);
    assert_true(fx_consumer_ready(&F, 0, 30000)); /* started: its watch runs */
    raw_open(&r);
    sa_layout_claims_bucket(bucket, sizeof(bucket), 3);
    assert_int_equal(js_DeleteKeyValue(r.js, bucket), NATS_OK);
    deleted = test_now_ms();
    assert_true(wait_until(ledger_lost_logged, NULL, 30000));
    fprintf(stderr, "shard 3 of 4 found lost %" PRId64 " ms after its delete\n",
            test_now_ms() - deleted);
    assert_true(proc_count_lines(F.consumers[0].err_path, bucket) > 0); /* named in the log */
    assert_int_equal(fx_consumer_get(&F, 0, "/readyz", body), 503);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--window", "10s",
                               "--slot", "2s", "--lead", "1s", "--ack-wait", fx_ack_wait,
                               "--shards", "4", NULL),
                     0);
    assert_true(wait_until(ledger_back_logged, NULL, 30000));
    raw_close(&r);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_older_records_obeyed_after_init),
        cmocka_unit_test(test_claims_bucket_deleted),
        cmocka_unit_test(test_sharded_claims_bucket_deleted),
    };

    return FX_RUN(tests);
}
