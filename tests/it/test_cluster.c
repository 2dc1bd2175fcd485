/* The same pipeline on a 3-node JetStream cluster on loopback with replicas 3: consumers and
 * producers get all three URLs, every task arrives exactly once. And a key's history read by
 * direct gets (common/kvhist.h) right after a node is killed. */
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
#include "kvhist.h"
#include "layout.h"

#define N 40

static struct fx F;

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= N;
}

static void
test_cluster_delivers_once(void **state)
{
    char id[80], path[32];
    int64_t start;
    struct receiver_hit h;
    static int seen[N];

    (void)state;
    fx_start(&F, 1);
    fx_consumer(&F, 0, NULL);
    fx_consumer(&F, 1, NULL);
    start = test_now_ms() + 4000;
    for (int k = 0; k < N; k++) {
        snprintf(path, sizeof(path), "/c/%d", k);
        assert_int_equal(fx_schedule(&F, start + k * 100, path, id, sizeof(id)), 0);
    }
    assert_true(wait_until(all_arrived, NULL, 60000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        assert_int_equal(sscanf(h.path, "/c/%d", &k), 1);
        seen[k]++;
        receiver_hit_free(&h);
    }
    for (int k = 0; k < N; k++)
        assert_int_equal(seen[k], 1);
    fx_stop(&F);
}

/* A claim key's history (two puts, a DEL, a put) is written on the cluster, then a node that
 * does not lead the claims bucket is killed (the task stream's leader if it is another, as in
 * it_faults test_burst_tasks_leader_killed): the direct-get walk reads the whole history, in
 * order, from the survivors at once. nats.c's kvStore_History, the read before, makes a
 * consumer, which needs the cluster's meta leader as well: when the node killed led the meta
 * group it timed out until a new one was elected (its outcome is printed, not asserted). The
 * claims bucket's own leader is not killed: while its replicas elect a new one they answer no
 * direct get either (2.9.10: none for 10 s; 2.15.1: the first after 5 s). */
static void
test_history_read_node_killed(void **state)
{
    const char *vals[4] = {"one", "two", NULL, "four"}, *key = "hist-failover";
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    struct sa_kvhist h;
    struct sa_err err = {0};
    kvEntryList old = {0};
    enum sa_code rc;
    int leader, victim, left;
    int64_t t0;
    natsStatus s;

    (void)state;
    fx_start(&F, 1);
    leader = natsd_cluster_leader(&F.cluster, F.cluster.urls, "KV_" SA_CLAIMS_BUCKET);
    assert_true(leader >= 0);
    victim = natsd_cluster_leader(&F.cluster, F.cluster.urls, SA_TASKS_STREAM);
    if (victim < 0 || victim == leader)
        victim = (leader + 1) % 3;
    left = 3 - leader - victim;
    assert_int_equal(natsConnection_ConnectTo(&nc, F.cluster.node[left].url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_KeyValue(&kv, js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_int_equal(kvStore_PutString(NULL, kv, key, vals[0]), NATS_OK);
    assert_int_equal(kvStore_PutString(NULL, kv, key, vals[1]), NATS_OK);
    assert_int_equal(kvStore_Delete(kv, key), NATS_OK);
    assert_int_equal(kvStore_PutString(NULL, kv, key, vals[3]), NATS_OK);
    /* every replica has them (R3): an acked put is on a quorum, the third catches up */
    assert_int_equal(sa_kvhist_read(js, kv, key, &h, &err), SA_OK);
    sa_kvhist_free(&h);
    natsd_kill(&F.cluster.node[victim]);
    fprintf(stderr, "killed %s (%s claims leader); reading from %s\n", F.cluster.node[victim].name,
            F.cluster.node[leader].name, F.cluster.node[left].name);
    t0 = test_now_ms();
    rc = sa_kvhist_read(js, kv, key, &h, &err);
    fprintf(stderr, "direct-get walk: %d entries in %" PRId64 " ms (%s); leader now: %d\n", h.count,
            test_now_ms() - t0, rc == SA_OK ? "ok" : err.msg,
            natsd_cluster_leader(&F.cluster, F.cluster.node[left].url, "KV_" SA_CLAIMS_BUCKET));
    assert_int_equal(rc, SA_OK);
    assert_int_equal(h.count, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(h.e[i].op, vals[i] ? kvOp_Put : kvOp_Delete);
        if (vals[i]) {
            assert_int_equal(h.e[i].len, (int)strlen(vals[i]));
            assert_memory_equal(h.e[i].value, vals[i], strlen(vals[i]));
        }
        assert_true(h.e[i].created_ns > 0);
        assert_true(i == 0 || h.e[i].revision > h.e[i - 1].revision);
    }
    sa_kvhist_free(&h);
    t0 = test_now_ms(); /* the read before, for the record: not asserted */
    s = kvStore_History(&old, kv, key, NULL);
    fprintf(stderr, "kvStore_History meanwhile: %s, %d entries, in %" PRId64 " ms\n",
            natsStatus_GetText(s), old.Count, test_now_ms() - t0);
    kvEntryList_Destroy(&old);
    kvStore_Destroy(kv);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cluster_delivers_once),
                                       cmocka_unit_test(test_history_read_node_killed)};

    return FX_RUN(tests);
}
