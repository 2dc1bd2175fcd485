/* The deployment's topology with real processes: a 3-node cluster started from the very files
 * in deploy/nats (only ports, store and monitoring port changed for loopback), `sendat init
 * --replicas 3` as admin, two consumers and the producer each with its own user. Each role does
 * its work without one permissions violation; a producer with consumer credentials is refused
 * a schedule due soon (window levels are the producers' alone; one booked further ahead goes
 * into its slot, where consumers publish retries anyway), cancel, series and init, a consumer with
 * producer credentials stops with the refused subject in its log, and the consumer user can create,
 * purge and delete no stream. (What the roles' credentials reach of the streams and buckets
 * without the key, and the leader balance: test_roles_streams.c.) */
#include <inttypes.h>
#include <pthread.h>
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

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= ROLES_N_TASKS;
}

/* Lines with "Violation" in the three nodes' logs: any means a role lacks a permission. */
static int
violations_logged(void)
{
    char path[300];
    int n = 0;

    for (int i = 0; i < 3; i++) {
        char line[1024];
        FILE *f;

        snprintf(path, sizeof(path), "%s/server.log", F.cluster.node[i].dir);
        n += proc_count_lines(path, "Violation");
        for (f = fopen(path, "r"); f && fgets(line, sizeof(line), f);)
            if (strstr(line, "Violation")) /* say which, for a failed check */
                fprintf(stderr, "node %d: %s", i, line);
        if (f)
            fclose(f);
    }
    return n;
}

static void
check_each_once(void)
{
    char path[32];

    for (int k = 0; k < ROLES_N_TASKS; k++) {
        snprintf(path, sizeof(path), "/r/%d", k);
        if (receiver_count_path(F.recv, path) != 1)
            fail_msg("task %d arrived %zu times", k, receiver_count_path(F.recv, path));
    }
    assert_int_equal(receiver_count(F.recv), ROLES_N_TASKS); /* and nothing else, /never included */
}

/* On a server with per-message TTL the producer's cancel record of id carries a Nats-TTL (its
 * role may write it, and ask what the server offers); read as admin. */
static void
cancel_record_has_ttl(const char *id)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsDirectGetMsgOptions o;
    struct sa_jsfeat feat;
    char subject[160];
    natsMsg *m = NULL;
    const char *v = NULL;

    roles_connect_js("admin", &nc, &js);
    assert_int_equal(sa_jsfeat_detect(nc, &feat, NULL), SA_OK);
    snprintf(subject, sizeof(subject), "$KV.%s.%s", SA_CANCEL_BUCKET, id);
    jsDirectGetMsgOptions_Init(&o);
    o.LastBySubject = subject;
    assert_int_equal(js_DirectGetMsg(&m, js, "KV_" SA_CANCEL_BUCKET, NULL, &o), NATS_OK);
    if ((natsMsgHeader_Get(m, "Nats-TTL", &v) == NATS_OK) != !!(feat.have & SA_JSFEAT_MSG_TTL))
        fail_msg("api level %d, cancel record's Nats-TTL %s", feat.api_level, v ? v : "none");
    natsMsg_Destroy(m);
    fx_js_close(&nc, &js);
}

/* List, stats, cancel and status of a task due in a minute, as the producer. */
static void
producer_cancels(void)
{
    char id[80], out[4096], err[1024];

    assert_int_equal(fx_schedule(&F, test_now_ms() + 60000, "/never", id, sizeof(id)), 0);
    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "list", "--from", "+1s", "--to", "+2m",
                  NULL) != 0 ||
        !strstr(out, id))
        fail_msg("list as producer: %s %s", out, err); /* direct gets by sequence */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "stats", "--json", NULL), 0);
    if (!strstr(out, "\"instance\""))
        fail_msg("stats as producer names no fleet member: %s", out); /* the members bucket */
    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", id, NULL) != 0)
        fail_msg("cancel as producer: %s", err);
    assert_non_null(strstr(out, "cancelled"));
    cancel_record_has_ttl(id);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "status", id, NULL), 0);
    assert_non_null(strstr(out, "cancelled"));
}

/* A group booked and cancelled, a series paused, resumed and listed, as the producer. */
static void
producer_groups_and_series(void)
{
    char series[80], out[4096], err[1024];

    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+60s", "--webhook",
                  "http://127.0.0.1:9/never", "--group", "roles", NULL) != 0)
        fail_msg("schedule --group as producer: %s", err);
    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "--group", "roles", NULL) != 0)
        fail_msg("cancel --group as producer: %s", err);
    assert_string_equal(out, "cancelled 1, too late 0\n");
    assert_int_equal(fx_sendat(&F, series, sizeof(series), err, sizeof(err), "schedule", "--cron",
                               "0 7 * * *", "--tz", "UTC", "--webhook", "http://127.0.0.1:9/never",
                               NULL),
                     0);
    series[strcspn(series, "\n")] = '\0';
    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "series", "pause", series, NULL) != 0)
        fail_msg("series pause as producer: %s", err);
    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "series", "list", NULL) != 0)
        fail_msg("series list as producer: %s", err);
    assert_non_null(strstr(out, "paused"));
    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "series", "resume", series, NULL) != 0)
        fail_msg("series resume as producer: %s", err);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", series, NULL), 0);
}

static int
junk_in_stream(void *arg)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    natsMsg *m = NULL;
    natsStatus s;

    roles_connect_js("admin", &nc, &js);
    s = js_GetLastMsg(&m, js, "SENDAT_TASKS", arg, NULL, NULL);
    natsMsg_Destroy(m);
    fx_js_close(&nc, &js);
    return s == NATS_OK;
}

static int
junk_swept(void *arg)
{
    return !junk_in_stream(arg);
}

/* A producer may write claim records (cancel creates them), so it may also leave a DEL
 * marker on a task's claim key (issue 24.6): the consumers read the key's history under it
 * (their role may), find nothing and send the task, once (check_each_once), with no
 * permissions violation. A PURGE, which would erase the history, is refused: the bucket
 * disallows rollups (nopurge.h). */
static void
producer_purges_claim(const char *id)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;

    roles_connect_js("producer", &nc, &js);
    assert_int_equal(js_KeyValue(&kv, js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_int_not_equal(kvStore_Purge(kv, id, NULL), NATS_OK);
    assert_int_equal(kvStore_Delete(kv, id), NATS_OK);
    kvStore_Destroy(kv);
    fx_js_close(&nc, &js);
}

/* A subject no level reads, as a producer may publish it: the consumers' sweep dead-letters
 * and deletes it (its record, the dead letter and the delete need the consumer's rights). */
static void
producer_publishes_junk(void)
{
    static char subject[] = "sendat.task.abc.w.roles";
    natsConnection *nc = NULL;
    jsCtx *js = NULL;

    roles_connect_js("producer", &nc, &js);
    assert_int_equal(js_Publish(NULL, js, subject, "junk", 4, NULL, NULL), NATS_OK);
    fx_js_close(&nc, &js);
    assert_true(junk_in_stream(subject));
    assert_true(wait_until(junk_swept, subject, 30000));
}

/* The same --id booked twice as the producer: the duplicate PubAck is read back; once
 * cancelled, the id is refused. */
static void
producer_books_twice(void)
{
    char out[256], err[1024], at[40], url[300];
    int64_t due = test_now_ms() + 60000;

    snprintf(at, sizeof(at), "@%" PRId64, due / 1000);
    snprintf(url, sizeof(url), "%s/never", receiver_url(F.recv));
    for (int i = 0; i < 2; i++)
        if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--id", "twice", "--at",
                      at, "--webhook", url, NULL) != 0)
            fail_msg("schedule --id twice as producer (%d): %s", i, err);
    assert_non_null(strstr(err, "already scheduled"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", "twice", NULL), 0);
    /* booked again once cancelled: refused from its claim (and the claims bucket's TTL) */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--id", "twice",
                               "--at", at, "--webhook", url, NULL),
                     6);
    assert_non_null(strstr(err, "cancelled"));
}

static void
test_roles_do_their_work(void **state)
{
    char ids[ROLES_N_TASKS][80], out[4096], err[1024];
    const char *id = ids[ROLES_N_TASKS - 1];

    (void)state;
    /* the last one purged while it still waits: bookings on a busy machine take seconds */
    roles_fleet_books("/r", (int)(6000 * test_timeout_multiplier()), 150, ids);
    producer_purges_claim(id);
    producer_cancels();
    producer_groups_and_series();
    producer_publishes_junk();
    producer_books_twice();
    assert_true(wait_until(all_arrived, NULL, 60000));
    assert_int_equal(fx_stop_consumers(&F), 0); /* the drain waits for the "sent" claims */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "status", id, NULL), 0);
    if (!strstr(out, "sent"))
        fail_msg("status %s says no \"sent\": %s", id, out);
    check_each_once();
    assert_int_equal(violations_logged(), 0); /* every role had every subject it used */
}

/* One `sendat` run as the consumer user, on a thread of its own: a refused request is answered
 * only when the client's request times out (about 7 s on a 2-core box, init 17 s), so the
 * refusals run side by side. The thread makes no cmocka assertion (a failure there would
 * longjmp into the test thread's stack): refused_all checks each after the join. */
struct refusal {
    const char *what;
    char *argv[8];
    pthread_t thread;
    int rc;
    char err[2048];
};

static void *
refusal_run(void *arg)
{
    struct refusal *r = arg;
    char out[4096];

    r->rc = fx_sendat(&F, out, sizeof(out), r->err, sizeof(r->err), r->argv[0], r->argv[1],
                      r->argv[2], r->argv[3], r->argv[4], r->argv[5], r->argv[6], NULL);
    return NULL;
}

/* Runs each of the n commands as the consumer user at once; each must exit 1 with the refused
 * subject named on stderr. */
static void
refused_all(struct refusal *r, int n)
{
    roles_act_as("consumer"); /* before the threads: they inherit the environment */
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&r[i].thread, NULL, refusal_run, &r[i]), 0);
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_join(r[i].thread, NULL), 0);
    for (int i = 0; i < n; i++)
        if (r[i].rc != 1 || !strstr(r[i].err, "refused by the server: Permissions Violation"))
            fail_msg("%s with consumer credentials: exit %d, stderr: %s", r[i].what, r[i].rc,
                     r[i].err);
}

static void
test_producer_with_consumer_credentials_is_refused(void **state)
{
    char id[80];
    /* schedule: due within lead + slot (3 s here) of its slot, booked into its window level */
    struct refusal r[] = {
        {.what = "schedule",
         .argv = {"schedule", "--at", "+2s", "--webhook", "http://127.0.0.1:9/x"}},
        {.what = "cancel", .argv = {"cancel", id}},
        {.what = "schedule --cron",
         .argv = {"schedule", "--cron", "0 7 * * *", "--tz", "UTC", "--webhook",
                  "http://127.0.0.1:9/x"}},
        {.what = "init", .argv = {"init", "--replicas", "3"}},
    };

    (void)state;
    roles_start_once();
    roles_act_as("producer");
    assert_int_equal(fx_schedule(&F, test_now_ms() + 60000, "/never2", id, sizeof(id)), 0);
    refused_all(r, (int)(sizeof(r) / sizeof(r[0])));
}

static void
test_consumer_with_producer_credentials_stops(void **state)
{
    (void)state;
    roles_start_once();
    roles_consumer_as(2, "producer");
    assert_int_equal(proc_wait(&F.consumers[2], 30000), 1);
    assert_int_equal(proc_count_lines(F.consumers[2].err_path, "event=start_failed"), 1);
    assert_int_equal(proc_count_lines(F.consumers[2].err_path, "refused=\"Permissions Violation"),
                     1);
}

/* Stream admin as the consumer user: every request refused, nothing changed. */
static void
try_stream_admin(jsCtx *js)
{
    const char *subj[] = {"evil.>"};
    jsStreamConfig sc;
    jsConsumerConfig cc;
    jsStreamInfo *si = NULL;
    jsConsumerInfo *ci = NULL;

    jsStreamConfig_Init(&sc);
    sc.Name = "SENDAT_EVIL";
    sc.Subjects = subj;
    sc.SubjectsLen = 1;
    assert_int_not_equal(js_AddStream(&si, js, &sc, NULL, NULL), NATS_OK);
    assert_int_not_equal(js_DeleteStream(js, "SENDAT_TASKS", NULL, NULL), NATS_OK);
    assert_int_not_equal(js_PurgeStream(js, "SENDAT_DLQ", NULL, NULL), NATS_OK);
    jsConsumerConfig_Init(&cc);
    cc.Durable = "evil";
    cc.AckPolicy = js_AckExplicit;
    assert_int_not_equal(js_AddConsumer(&ci, js, "SENDAT_DLQ", &cc, NULL, NULL), NATS_OK);
    jsStreamInfo_Destroy(si);
    jsConsumerInfo_Destroy(ci);
}

static void
test_consumer_user_administers_no_stream(void **state)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    const char *text = NULL;

    (void)state;
    roles_start_once();
    roles_connect_js("consumer", &nc, &js);
    try_stream_admin(js);
    assert_int_equal(natsConnection_GetLastError(nc, &text), NATS_NOT_PERMITTED);
    fx_js_close(&nc, &js);
    roles_connect_js("admin", &nc, &js); /* everything is as it was */
    assert_int_equal(js_GetStreamInfo(&si, js, "SENDAT_TASKS", NULL, NULL), NATS_OK);
    jsStreamInfo_Destroy(si);
    si = NULL;
    assert_int_equal(js_GetStreamInfo(&si, js, "SENDAT_EVIL", NULL, NULL), NATS_NOT_FOUND);
    fx_js_close(&nc, &js);
}

/* user may subscribe to none of the other roles' inboxes, nor to nats.c's default prefix. */
static void
check_inboxes_closed(const char *user, const char *other)
{
    const char *subjects[] = {"_INBOX.>", other};
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    const char *text = NULL;

    for (size_t i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++) {
        assert_int_equal(natsd_connect(&nc, F.cluster.urls, user, roles_password(user)), NATS_OK);
        assert_int_equal(natsConnection_SubscribeSync(&sub, nc, subjects[i]), NATS_OK);
        natsConnection_Flush(nc); /* the server's -ERR comes before its PONG */
        if (natsConnection_GetLastError(nc, &text) != NATS_NOT_PERMITTED)
            fail_msg("%s may subscribe to %s", user, subjects[i]);
        natsSubscription_Destroy(sub);
        natsConnection_Destroy(nc);
    }
}

/* Replies carry pulled tasks, acks and claim records: each role reads only its own. */
static void
test_roles_read_only_their_own_inboxes(void **state)
{
    (void)state;
    roles_start_once();
    check_inboxes_closed("producer", "_INBOX_sendat_consumer.>");
    check_inboxes_closed("consumer", "_INBOX_sendat_producer.>");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roles_do_their_work),
        cmocka_unit_test(test_producer_with_consumer_credentials_is_refused),
        cmocka_unit_test(test_consumer_with_producer_credentials_stops),
        cmocka_unit_test(test_consumer_user_administers_no_stream),
        cmocka_unit_test(test_roles_read_only_their_own_inboxes),
    };

    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), NULL, roles_stop);
}
