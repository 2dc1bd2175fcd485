/* SIGTERM while the server is gone or a burst is in flight (issue 35: in one containers run of
 * seven, two consumers ended with SIGSEGV while draining after a consumer and a nats node were
 * killed). Each round books a burst whose sends the receiver answers slowly, then stops a
 * consumer: the server killed before SIGTERM, or during the drain; or, on a cluster, a node and
 * a member killed before the rest are stopped. Every stopped member must exit 0 within 60 s (a
 * crash is a signal, not an exit; before the exit's outcome writes shared one deadline, a
 * member whose server was gone took 15-20 s for each unwritten outcome, minutes in all), and
 * the tasks must all arrive in the end (a member started afterwards takes over). */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"

#define BURST 300

static struct fx F;
static char *drain_env[] = {"SENDAT_DRAIN_TIMEOUT=2s", "SENDAT_HTTP_TIMEOUT=3s", NULL};

/* BURST tasks to /b/<round>/<k>, due from ms ahead over spread_ms, in one batch. */
static void
book_burst(int round, int64_t ahead_ms, int64_t spread_ms)
{
    char path[600], out[256], err[1024];
    int64_t due = test_now_ms() + (int64_t)(ahead_ms * test_timeout_multiplier());
    FILE *f;

    snprintf(path, sizeof(path), "%s/burst-%d.ndjson", F.dir, round);
    assert_non_null(f = fopen(path, "w"));
    for (int k = 0; k < BURST; k++) {
        int64_t at = due + spread_ms * k / BURST;
        fprintf(f, "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/b/%d/%d\"}\n", at / 1000,
                (int)(at % 1000), receiver_url(F.recv), round, k);
    }
    assert_int_equal(fclose(f), 0);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
}

static void
all_arrive(int round)
{
    static int seen[BURST];
    char prefix[32];
    int64_t until = test_now_ms() + (int64_t)(120000 * test_timeout_multiplier());
    int got = 0;

    snprintf(prefix, sizeof(prefix), "/b/%d/", round);
    while ((got = fx_arrivals(&F, prefix, seen, BURST)) < BURST && test_now_ms() < until)
        wait_until_ms(test_now_ms() + 500, 1000);
    if (got < BURST)
        fail_msg("round %d: %d of %d tasks arrived", round, got, BURST);
}

/* SIGTERM to consumer i; fails unless it exits 0 (a signal is reported as not 0). */
static void
stop_one(int i)
{
    proc_signal(&F.consumers[i], SIGTERM);
    if (proc_wait(&F.consumers[i], 60000) != 0) {
        fx_print_log(&F, i);
        fail_msg("consumer %d did not exit 0 after SIGTERM", i);
    }
}

/* One server: the burst in flight, the server killed, then SIGTERM (and the other order). */
static void
test_server_killed_around_sigterm(void **state)
{
    (void)state;
    fx_start(&F, 0);
    receiver_set_delay(F.recv, 400);
    for (int round = 0; round < 2; round++) {
        fx_consumer(&F, round, drain_env);
        book_burst(round, 3000, 3000);
        assert_true(receiver_wait(F.recv, NULL, (size_t)(round * BURST) + 40, 60000));
        if (round % 2 == 0) {
            natsd_kill(&F.srv); /* gone first: the drain's claim writes go nowhere */
            stop_one(round);
        } else {
            proc_signal(&F.consumers[round], SIGTERM); /* draining when the server goes */
            wait_until_ms(test_now_ms() + 300, 1000);
            natsd_kill(&F.srv);
            if (proc_wait(&F.consumers[round], 60000) != 0) {
                fx_print_log(&F, round);
                fail_msg("consumer %d did not exit 0 after SIGTERM", round);
            }
        }
        assert_int_equal(natsd_restart(&F.srv), 0);
    }
    fx_consumer(&F, 2, NULL);
    for (int round = 0; round < 2; round++)
        all_arrive(round);
    fx_finish(&F);
}

/* The containers run's order on a cluster: a member and a node killed mid-burst, the node
 * started again, then the other members stopped while tasks still fall due. */
static void
test_cluster_node_and_member_killed_then_drain(void **state)
{
    (void)state;
    fx_start(&F, 1);
    receiver_set_delay(F.recv, 300);
    for (int i = 0; i < 4; i++)
        fx_consumer(&F, i, drain_env);
    book_burst(0, 3000, 8000);
    assert_true(receiver_wait(F.recv, NULL, 40, 60000));
    proc_kill9(&F.consumers[0]);
    natsd_kill(&F.cluster.node[2]);
    wait_until_ms(test_now_ms() + 1500, 3000);
    assert_int_equal(natsd_restart(&F.cluster.node[2]), 0);
    wait_until_ms(test_now_ms() + 1000, 2000);
    for (int i = 1; i < 4; i++)
        proc_signal(&F.consumers[i], SIGTERM);
    for (int i = 1; i < 4; i++)
        if (proc_wait(&F.consumers[i], 60000) != 0) {
            fx_print_log(&F, i);
            fail_msg("consumer %d did not exit 0 after SIGTERM", i);
        }
    fx_consumer(&F, 4, NULL);
    all_arrive(0);
    fx_finish(&F);
}

struct flood {
    natsConnection *nc;
    char subject[96];
    atomic_int stop;
    long sent;
};

/* Probes the subject as fast as the member answers them, a batch every millisecond, until
 * told to stop: the member's delivery thread is answering one whenever it leaves. */
static void *
flood_probes(void *arg)
{
    struct flood *fl = arg;
    struct timespec nap = {0, 1000000};

    while (!atomic_load(&fl->stop)) {
        for (int k = 0; k < 200; k++)
            if (natsConnection_PublishRequestString(fl->nc, fl->subject, "_INBOX.flood", "") ==
                NATS_OK)
                fl->sent++;
        nanosleep(&nap, NULL);
    }
    return NULL;
}

/* A member answers probes on its liveness subject from nats.c's delivery thread, and an
 * unsubscribe does not wait for an answer under way: the member list was freed at exit while
 * the last answer could still be reading it (issue 35's SIGSEGV of a draining consumer was
 * suspected there). Each round floods a member's liveness subject with probes and stops it:
 * it must exit 0 (under the sanitizers a read of the freed list is a report and a non-zero
 * exit; without them it rarely shows). */
static void
test_probed_while_leaving(void **state)
{
    struct flood fl = {0};
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *members = NULL;
    pthread_t t;
    char name[8], instance[64];

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_KeyValue(&members, js, SA_MEMBERS_BUCKET), NATS_OK);
    assert_int_equal(natsConnection_ConnectTo(&fl.nc, F.srv.url), NATS_OK);
    for (int round = 0; round < 4; round++) {
        int64_t until = test_now_ms() + (int64_t)(20000 * test_timeout_multiplier());

        fx_consumer(&F, round, NULL);
        snprintf(name, sizeof(name), "c%d", round);
        while (!fx_member_instance(members, name, instance, sizeof(instance)))
            assert_true(wait_until_ms(test_now_ms() + 100, until - test_now_ms()));
        snprintf(fl.subject, sizeof(fl.subject), "sendat.alive.%s", instance);
        atomic_store(&fl.stop, 0);
        assert_int_equal(pthread_create(&t, NULL, flood_probes, &fl), 0);
        wait_until_ms(test_now_ms() + 500, 1000);
        stop_one(round);
        atomic_store(&fl.stop, 1);
        pthread_join(t, NULL);
    }
    print_message("probes sent: %ld\n", fl.sent);
    natsConnection_Destroy(fl.nc);
    kvStore_Destroy(members);
    fx_js_close(&nc, &js);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_killed_around_sigterm),
        cmocka_unit_test(test_cluster_node_and_member_killed_then_drain),
        cmocka_unit_test(test_probed_while_leaving)};

    return FX_RUN(tests);
}
