/* Shards (`sendat init --shards N`) with real processes. On a loopback 3-node cluster: three
 * shards on three different servers as sendat init placed them (with --replicas 3 the
 * leaders, with 1 the one copy; each shard's claims bucket beside its stream), tasks spread
 * over all of them and each delivered once (cancel and status reach every shard), then the
 * leader of one shard killed mid-run with nothing lost. On one server: the shard count is
 * written once and a different one is refused, and consumers split the shards between them
 * with SENDAT_SHARDS. After a node stopped and came back, the consumers spread the leaders
 * again (one per server) with nothing lost. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"

#define SHARDS 3
#define TASKS_MAX 600

static struct fx F;
static int seen[TASKS_MAX];
static int n_tasks;

/* How many distinct tasks arrived (seen[] gets each one's count); paths are /s/<k>. */
static int
count_distinct(void)
{
    return fx_arrivals(&F, "/s/", seen, n_tasks);
}

/* arg: how many distinct tasks to wait for. */
static int
arrived(void *arg)
{
    return count_distinct() >= *(int *)arg;
}

/* Books n webhooks with ids s-<k> (first first + k), due evenly over span_ms from start. */
static void
book(int first, int n, int64_t start, int64_t span_ms)
{
    char path[300], out[256], err[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/shards-%d.ndjson", F.dir, first);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        int64_t due = start + (int64_t)i * span_ms / n;
        fprintf(f, "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/s/%d\",\"id\":\"s-%d\"}\n",
                due / 1000, (int)(due % 1000), receiver_url(F.recv), first + i, first + i);
    }
    fclose(f);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
    n_tasks = first + n;
}

static void
connect_js(natsConnection **nc, jsCtx **js)
{
    assert_int_equal(natsd_connect(nc, F.clustered ? F.cluster.urls : F.srv.url, NULL, NULL),
                     NATS_OK);
    assert_int_equal(natsConnection_JetStream(js, *nc, NULL), NATS_OK);
}

/* Shard k's stream info (NULL if it does not answer); the caller destroys it. */
static jsStreamInfo *
shard_info(jsCtx *js, int k)
{
    jsStreamInfo *si = NULL;
    char stream[32];

    sa_layout_stream(stream, sizeof(stream), k);
    if (js_GetStreamInfo(&si, js, stream, NULL, NULL) != NATS_OK)
        return NULL;
    return si;
}

/* Messages stored in shard k's stream, or -1. */
static int64_t
stored(jsCtx *js, int k)
{
    jsStreamInfo *si = shard_info(js, k);
    int64_t n = si ? (int64_t)si->State.Msgs : -1;

    jsStreamInfo_Destroy(si);
    return n;
}

/* The node (0..2) leading stream, or -1; *replicas gets its replica count. */
static int
node_leading(jsCtx *js, const char *stream, int *replicas)
{
    jsStreamInfo *si = NULL;
    int leader = -1;

    *replicas = 0;
    if (js_GetStreamInfo(&si, js, stream, NULL, NULL) != NATS_OK)
        return -1;
    *replicas = (int)si->Config->Replicas;
    for (int i = 0; i < 3 && si->Cluster && si->Cluster->Leader; i++)
        if (!strcmp(F.cluster.node[i].name, si->Cluster->Leader))
            leader = i;
    jsStreamInfo_Destroy(si);
    return leader;
}

/* The node leading shard k's stream (0..2), or -1. */
static int
leader_of(jsCtx *js, int k)
{
    char stream[32];
    int replicas;

    sa_layout_stream(stream, sizeof(stream), k);
    return node_leading(js, stream, &replicas);
}

/* 1 if sendat init put shard k's stream and claims bucket on one node, every shard on a
 * different node, each with `replicas` replicas (R1: the one copy, R3: the leader). */
static int
shards_apart(jsCtx *js, int replicas)
{
    int node[SHARDS];

    for (int k = 0; k < SHARDS; k++) {
        char stream[32], bucket[64], kv[80];
        int rs, rb, ls, lb;
        sa_layout_stream(stream, sizeof(stream), k);
        sa_layout_claims_bucket(bucket, sizeof(bucket), k);
        snprintf(kv, sizeof(kv), "KV_%s", bucket);
        ls = node_leading(js, stream, &rs);
        lb = node_leading(js, kv, &rb);
        fprintf(stderr, "shard %d: %s on n%d (R%d), %s on n%d (R%d)\n", k, stream, ls + 1, rs, kv,
                lb + 1, rb);
        if (ls < 0 || ls != lb || rs != replicas || rb != replicas)
            return 0;
        for (int j = 0; j < k; j++)
            if (node[j] == ls)
                return 0;
        node[k] = ls;
    }
    return 1;
}

/* Tasks book into all three shards, each arrives once; a cancel in every shard holds. */
static void
spread_and_once(jsCtx *js)
{
    struct sa_layout l;
    int per[SHARDS] = {0}, cancelled[SHARDS], want = 300, total = 0;
    char id[32];

    sa_layout_defaults(&l);
    l.shards = SHARDS;
    book(0, 300, test_now_ms() + 6000, 3000);
    for (int k = 0; k < SHARDS; k++) {
        per[k] = (int)stored(js, k);
        total += per[k];
        fprintf(stderr, "shard %d holds %d tasks\n", k, per[k]);
        assert_true(per[k] > 50); /* 300 ids over 3 shards: each gets its part */
        cancelled[k] = -1;
    }
    assert_int_equal(total, 300);
    for (int i = 0; i < 300; i++) { /* one task of each shard cancelled */
        snprintf(id, sizeof(id), "s-%d", i);
        int k = sa_layout_shard_of(&l, id);
        if (cancelled[k] >= 0)
            continue;
        char out[256], err[512];
        assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", id, NULL), 0);
        cancelled[k] = i;
    }
    fx_consumer(&F, 0, NULL);
    fx_consumer(&F, 1, NULL);
    want -= SHARDS;
    assert_true(wait_until(arrived, &want, 90000));
    usleep(1500 * 1000); /* a cancelled task would have arrived by now */
    count_distinct();
    for (int i = 0; i < 300; i++) {
        int is_cancelled = 0;
        for (int k = 0; k < SHARDS; k++)
            is_cancelled |= cancelled[k] == i;
        assert_int_equal(seen[i], is_cancelled ? 0 : 1);
    }
    for (int k = 0; k < SHARDS; k++) {
        snprintf(id, sizeof(id), "s-%d", cancelled[k]);
        assert_true(fx_status_says(&F, id, "cancelled", 20000));
    }
    for (int i = 0; i < 300; i++) /* the first task not cancelled */
        if (seen[i]) {
            snprintf(id, sizeof(id), "s-%d", i);
            break;
        }
    assert_true(fx_status_says(&F, id, "sent", 20000));
}

static void
test_three_shards_three_leaders(void **state)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    char out[8192], err[512];
    int victim, want;

    (void)state;
    fx_shards = "3";
    fx_start(&F, 1);
    connect_js(&nc, &js);
    assert_true(shards_apart(js, 3)); /* sendat init spread the leaders */
    spread_and_once(js);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "stats", NULL), 0);
    assert_non_null(strstr(out, "SENDAT_TASKS_2"));
    /* the leader of shard 1 killed while its tasks are due */
    book(300, 300, test_now_ms() + 4000, 6000);
    victim = leader_of(js, 1);
    assert_true(victim >= 0);
    want = 300 - SHARDS + 60;
    assert_true(wait_until(arrived, &want, 60000));
    fprintf(stderr, "killing %s, the leader of shard 1\n", F.cluster.node[victim].name);
    natsd_kill(&F.cluster.node[victim]);
    want = 600 - SHARDS;
    assert_true(wait_until(arrived, &want, 180000));
    count_distinct();
    for (int i = 300; i < 600; i++)
        assert_true(seen[i] >= 1); /* none lost; a resend keeps its webhook-id */
    fx_js_close(&nc, &js);
    fx_shards = NULL;
    fx_finish(&F);
}

/* --replicas 1 on the 3-node cluster: each shard's stream and claims bucket on a server of
 * its own (JetStream alone put all three on one), and tasks of every shard delivered once. */
static void
test_r1_shards_apart(void **state)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    int want = 60;

    (void)state;
    fx_shards = "3";
    fx_replicas = "1";
    fx_start(&F, 1);
    fx_shards = NULL;
    fx_replicas = NULL;
    connect_js(&nc, &js);
    assert_true(shards_apart(js, 1));
    memset(seen, 0, sizeof(seen));
    book(0, 60, test_now_ms() + 3000, 1000);
    for (int k = 0; k < SHARDS; k++)
        assert_true(stored(js, k) > 0);
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(arrived, &want, 60000));
    count_distinct();
    for (int i = 0; i < 60; i++)
        assert_int_equal(seen[i], 1);
    fx_js_close(&nc, &js);
    fx_finish(&F);
}

/* Each node's leaderships of the shards' task streams (kind 0) or claims buckets (kind 1);
 * 0 if one has no leader. */
static int
leaderships(jsCtx *js, int kind, int leads[3])
{
    memset(leads, 0, 3 * sizeof(int));
    for (int k = 0; k < SHARDS; k++) {
        char name[64], kv[80];
        int replicas, node;
        if (kind == 0) {
            sa_layout_stream(kv, sizeof(kv), k);
        } else {
            sa_layout_claims_bucket(name, sizeof(name), k);
            snprintf(kv, sizeof(kv), "KV_%s", name);
        }
        node = node_leading(js, kv, &replicas);
        if (node < 0)
            return 0;
        leads[node]++;
    }
    return 1;
}

/* Prints the lines of the consumers' logs that say needle, and counts them. */
static int
show_lines(const char *needle)
{
    char line[1024];
    int n = 0;

    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(F.consumers[i].err_path, "r");
        while (f && fgets(line, sizeof(line), f))
            if (strstr(line, needle)) {
                fprintf(stderr, "consumer %d: %s", i, line);
                n++;
            }
        if (f)
            fclose(f);
    }
    return n;
}

static jsCtx *spread_js;
static int spread_victim;

/* The victim leads none of the shards' streams and buckets (polled every 200 ms). */
static int
victim_leads_none(void *arg)
{
    int leads[3];

    (void)arg;
    usleep(200 * 1000);
    for (int kind = 0; kind < 2; kind++)
        if (!leaderships(spread_js, kind, leads) || leads[spread_victim])
            return 0;
    return 1;
}

/* Every node leads one task stream and one claims bucket. */
static int
one_each(void *arg)
{
    int leads[3];

    (void)arg;
    usleep(200 * 1000);
    for (int kind = 0; kind < 2; kind++) {
        if (!leaderships(spread_js, kind, leads))
            return 0;
        for (int i = 0; i < 3; i++)
            if (leads[i] != 1)
                return 0;
    }
    return 1;
}

/* Issue 25.4: init --shards 3 --replicas 3 spreads the leaders; a node stopped hands its
 * leaderships to the others and, started again, leads nothing, until the consumers' leader
 * balance (SENDAT_LEADER_BALANCE, a turn every 2 s here) moves one to it per turn. Tasks due
 * during the failover and after the spread (booked once it is back) are each delivered. */
static void
test_leaders_spread_again(void **state)
{
    char *balance[] = {"SENDAT_LEADER_BALANCE=2s", NULL};
    natsConnection *nc = NULL;
    int want = 150, moved = 0;
    int64_t t0;

    (void)state;
    fx_shards = "3";
    fx_start(&F, 1);
    fx_shards = NULL;
    connect_js(&nc, &spread_js);
    assert_true(shards_apart(spread_js, 3));
    memset(seen, 0, sizeof(seen));
    book(0, 100, test_now_ms() + 4000, 15000); /* due during the failover */
    fx_consumer(&F, 0, balance);
    fx_consumer(&F, 1, balance);
    spread_victim = leader_of(spread_js, 1);
    assert_true(spread_victim >= 0);
    fprintf(stderr, "stopping %s, the leader of shard 1\n", F.cluster.node[spread_victim].name);
    natsd_term(&F.cluster.node[spread_victim]);
    assert_true(wait_until(victim_leads_none, NULL, 60000));
    fprintf(stderr, "its leaderships moved; starting it again\n");
    assert_int_equal(natsd_restart(&F.cluster.node[spread_victim]), 0);
    t0 = test_now_ms();
    assert_true(wait_until(one_each, NULL, 90000));
    fprintf(stderr, "leaders spread again %" PRId64 " ms after the restart\n", test_now_ms() - t0);
    /* usually a move gives the node back its share; a current server sometimes elects it
     * again by itself first (seen on 2.15.1 under load), so the spread is what is asserted */
    moved = show_lines("event=leader_moved ");
    fprintf(stderr, "leader_moved lines: %d\n", moved);
    /* and after it, however long it took (booked once spread: no fixed 40 s of tasks) */
    book(100, 50, test_now_ms() + 3000, 5000);
    assert_true(wait_until(arrived, &want, 120000));
    count_distinct();
    for (int i = 0; i < 150; i++)
        assert_true(seen[i] >= 1); /* none lost; a resend keeps its webhook-id */
    jsCtx_Destroy(spread_js);
    natsConnection_Destroy(nc);
    fx_finish(&F);
}

/* Consumers that split the shards between them: the one serving shards 0-1 sends none of
 * shard 2's tasks, the one serving shard 2 sends them. A shard count given again differently
 * is refused, and a consumer naming a shard that does not exist does not start. */
static void
test_split_by_env(void **state)
{
    char out[512], err[1024], id[32];
    char *only01[] = {"SENDAT_SHARDS=0-1", NULL}, *only2[] = {"SENDAT_SHARDS=2", NULL},
         *bad[] = {"SENDAT_SHARDS=0,5", NULL};
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    struct sa_layout l;
    int want = 0, all = 120;

    (void)state;
    fx_shards = "3";
    fx_start(&F, 0);
    fx_shards = NULL;
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--shards", "2", NULL), 2);
    assert_non_null(strstr(err, "has 3 shard(s), not 2"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", NULL), 0);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--shards", "3", NULL), 0);
    fx_consumer(&F, 2, bad);
    assert_int_equal(proc_wait(&F.consumers[2], 30000), 2); /* a bad setting: not restarted */
    assert_true(proc_count_lines(F.consumers[2].err_path, "SENDAT_SHARDS names shard 5") > 0);
    book(0, 120, test_now_ms() + 3000, 2000);
    connect_js(&nc, &js);
    for (int k = 0; k < SHARDS; k++)
        assert_true(stored(js, k) > 0);
    sa_layout_defaults(&l);
    l.shards = SHARDS;
    for (int i = 0; i < 120; i++) {
        snprintf(id, sizeof(id), "s-%d", i);
        want += sa_layout_shard_of(&l, id) != 2;
    }
    fx_consumer(&F, 0, only01);
    assert_true(wait_until(arrived, &want, 60000));
    usleep(2000 * 1000); /* shard 2's tasks are due by now: none may come from this member */
    assert_int_equal(count_distinct(), want);
    assert_true(stored(js, 2) > 0);
    fx_consumer(&F, 1, only2);
    assert_true(wait_until(arrived, &all, 60000));
    count_distinct();
    for (int i = 0; i < 120; i++)
        assert_int_equal(seen[i], 1);
    fx_js_close(&nc, &js);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_by_env), cmocka_unit_test(test_three_shards_three_leaders),
        cmocka_unit_test(test_r1_shards_apart), cmocka_unit_test(test_leaders_spread_again)};

    return FX_RUN(tests);
}
