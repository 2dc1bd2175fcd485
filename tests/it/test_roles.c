/* The deployment's topology with real processes: a 3-node cluster started from the very files
 * in deploy/nats (only ports, store and monitoring port changed for loopback), `sendat init
 * --replicas 3` as admin, two consumers and the producer each with its own user. Each role does
 * its work without one permissions violation; a producer with consumer credentials is refused
 * a schedule due soon (window levels are the producers' alone; one booked further ahead goes
 * into its slot, where consumers publish retries anyway), cancel, series and init, a consumer with
 * producer credentials stops with the refused subject in its log, and the consumer user can create,
 * purge and delete no stream; it may ask a shard's leader to step down (the leader balance),
 * the producer may not. */
#include <inttypes.h>
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

#define N_TASKS 12

static int
consumer_ready(void *arg)
{
    static char body[FX_BODY_MAX];

    return fx_consumer_get(&F, (int)(intptr_t)arg, "/readyz", body) == 200;
}

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= N_TASKS;
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

    for (int k = 0; k < N_TASKS; k++) {
        snprintf(path, sizeof(path), "/r/%d", k);
        if (receiver_count_path(F.recv, path) != 1)
            fail_msg("task %d arrived %zu times", k, receiver_count_path(F.recv, path));
    }
    assert_int_equal(receiver_count(F.recv), N_TASKS); /* and nothing else, /never included */
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
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
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
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
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
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
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
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
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

/* The fleet up (two consumers with the consumer user's credentials, ready) and N_TASKS booked
 * as the producer, path "<prefix>/k" due in_ms + k * step_ms from then, their ids in ids. */
static void
fleet_books(const char *prefix, int in_ms, int step_ms, char (*ids)[80])
{
    char path[32];
    int64_t start;

    roles_start_once();
    roles_consumer_as(0, "consumer");
    roles_consumer_as(1, "consumer");
    for (intptr_t i = 0; i < 2; i++)
        assert_true(wait_until(consumer_ready, (void *)i, 30000));
    roles_act_as("producer");
    start = test_now_ms() + in_ms;
    for (int k = 0; k < N_TASKS; k++) {
        snprintf(path, sizeof(path), "%s/%d", prefix, k);
        assert_int_equal(fx_schedule(&F, start + k * step_ms, path, ids[k], sizeof(ids[k])), 0);
    }
}

static void
test_roles_do_their_work(void **state)
{
    char ids[N_TASKS][80], out[4096], err[1024];
    const char *id = ids[N_TASKS - 1];

    (void)state;
    /* the last one purged while it still waits: bookings on a busy machine take seconds */
    fleet_books("/r", (int)(6000 * test_timeout_multiplier()), 150, ids);
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

/* sendat as the consumer user: exit 1 and the refused subject named on stderr. */
static void
refused_as_consumer(const char *what, ...)
{
    char out[4096], err[2048];
    char *argv[8] = {NULL};
    int n = 0, rc;
    va_list ap;

    va_start(ap, what);
    for (char *a; n < 7 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    rc = fx_sendat(&F, out, sizeof(out), err, sizeof(err), argv[0], argv[1], argv[2], argv[3],
                   argv[4], argv[5], argv[6], NULL);
    if (rc != 1 || !strstr(err, "refused by the server: Permissions Violation"))
        fail_msg("%s with consumer credentials: exit %d, stderr: %s", what, rc, err);
}

static void
test_producer_with_consumer_credentials_is_refused(void **state)
{
    char id[80];

    (void)state;
    roles_start_once();
    roles_act_as("producer");
    assert_int_equal(fx_schedule(&F, test_now_ms() + 60000, "/never2", id, sizeof(id)), 0);
    roles_act_as("consumer");
    /* due within lead + slot (3 s here) of its slot: booked into its window level */
    refused_as_consumer("schedule", "schedule", "--at", "+2s", "--webhook", "http://127.0.0.1:9/x",
                        NULL);
    refused_as_consumer("cancel", "cancel", id, NULL);
    refused_as_consumer("schedule --cron", "schedule", "--cron", "0 7 * * *", "--tz", "UTC",
                        "--webhook", "http://127.0.0.1:9/x", NULL);
    refused_as_consumer("init", "init", "--replicas", "3", NULL);
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
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    roles_connect_js("admin", &nc, &js); /* everything is as it was */
    assert_int_equal(js_GetStreamInfo(&si, js, "SENDAT_TASKS", NULL, NULL), NATS_OK);
    jsStreamInfo_Destroy(si);
    si = NULL;
    assert_int_equal(js_GetStreamInfo(&si, js, "SENDAT_EVIL", NULL, NULL), NATS_NOT_FOUND);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
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

/* The members bucket and the liveness subjects are the consumers' (issue 24.6): a producer
 * may neither write a member's entry or a rescue key nor listen on sendat.alive.*, so it can
 * neither name an instance to probe nor answer for a dead one. (A consumer may do both; what
 * it writes there decides nothing, see test_failover's test_forged_members_kill_nobody.) */
static void
test_producer_forges_no_member(void **state)
{
    const char *pub[] = {"$KV." SA_MEMBERS_BUCKET ".c0", "$KV." SA_MEMBERS_BUCKET ".rescue.x.0",
                         "sendat.alive.0123456789abcdef"};
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    const char *text = NULL;

    (void)state;
    roles_start_once();
    for (size_t i = 0; i < sizeof(pub) / sizeof(pub[0]); i++) {
        assert_int_equal(natsd_connect(&nc, F.cluster.urls, "producer", roles_password("producer")),
                         NATS_OK);
        assert_int_equal(natsConnection_PublishString(nc, pub[i], "0123456789abcdef"), NATS_OK);
        natsConnection_Flush(nc); /* the server's -ERR comes before its PONG */
        if (natsConnection_GetLastError(nc, &text) != NATS_NOT_PERMITTED)
            fail_msg("a producer may publish to %s", pub[i]);
        natsConnection_Destroy(nc);
        nc = NULL;
    }
    assert_int_equal(natsd_connect(&nc, F.cluster.urls, "producer", roles_password("producer")),
                     NATS_OK);
    assert_int_equal(natsConnection_SubscribeSync(&sub, nc, "sendat.alive.*"), NATS_OK);
    natsConnection_Flush(nc);
    if (natsConnection_GetLastError(nc, &text) != NATS_NOT_PERMITTED)
        fail_msg("a producer may listen on sendat.alive.*");
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
}

/* The ids of every task stored in the task stream, learnt as a producer may (issue 37.1): a
 * direct get of the next message on sendat.task.> from each sequence on. Returns how many;
 * subjects, if not NULL, gets each one's subject. */
static int
walk_task_ids(jsCtx *js, char ids[][SA_ID_MAX + 1], char (*subjects)[SA_SUBJECT_MAX], int cap)
{
    uint64_t seq = 1;
    int n = 0;

    for (int i = 0; i < 100000 && n < cap; i++) {
        jsDirectGetMsgOptions o;
        struct sa_place p;
        natsMsg *m = NULL;

        jsDirectGetMsgOptions_Init(&o);
        o.Sequence = seq;
        o.NextBySubject = "sendat.task.>";
        if (js_DirectGetMsg(&m, js, SA_TASKS_STREAM, NULL, &o) != NATS_OK)
            break; /* past the last one */
        if (sa_layout_parse_subject(&p, natsMsg_GetSubject(m), NULL) == SA_OK) {
            if (subjects)
                snprintf(subjects[n], SA_SUBJECT_MAX, "%s", natsMsg_GetSubject(m));
            snprintf(ids[n++], SA_ID_MAX + 1, "%s", p.id);
        }
        seq = natsMsg_GetSequence(m) + 1;
        natsMsg_Destroy(m);
    }
    return n;
}

/* Issue 37.1: a client with the producer's credentials and no key walks the task stream for
 * every id and publishes a forged "sent" claim and a forged cancel record for each. Nothing it
 * wrote is authenticated by the key: every task is still delivered exactly once, and status
 * shows the forged record as junk, never its "sent". */
static void
test_keyless_producer_erases_nothing(void **state)
{
    static const char sent[] = "{\"state\":\"sent\",\"consumer\":\"forger\",\"http_status\":200}";
    static char ids[4096][SA_ID_MAX + 1];
    char id[N_TASKS][80], path[32], subject[300], out[8192], err[1024];
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    int n;

    (void)state;
    /* every task still stored when the walk runs: far enough ahead for a sanitizer build's
     * slower bookings (the multiplier stretches it) and a loaded machine's (8 s was too little
     * at load 30 with ctest -j8) */
    fleet_books("/forged", (int)(20000 * test_timeout_multiplier()), 100, id);
    roles_connect_js("producer", &nc, &js);
    n = walk_task_ids(js, ids, NULL, (int)(sizeof(ids) / sizeof(ids[0])));
    assert_true(n >= N_TASKS);
    for (int i = 0; i < n; i++) {
        snprintf(subject, sizeof(subject), "$KV.%s.%.*s", SA_CLAIMS_BUCKET, SA_ID_MAX, ids[i]);
        assert_int_equal(js_Publish(NULL, js, subject, sent, (int)strlen(sent), NULL, NULL),
                         NATS_OK);
        snprintf(subject, sizeof(subject), "$KV.%s.%.*s", SA_CANCEL_BUCKET, SA_ID_MAX, ids[i]);
        assert_int_equal(js_Publish(NULL, js, subject, "2026-11-28T19:00:00.000Z", 24, NULL, NULL),
                         NATS_OK);
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    for (int k = 0; k < N_TASKS; k++) {
        snprintf(path, sizeof(path), "/forged/%d", k);
        assert_true(receiver_wait(F.recv, path, 1, 60000));
    }
    assert_int_equal(fx_stop_consumers(&F), 0); /* the drain waits for the "sent" claims */
    for (int k = 0; k < N_TASKS; k++) {
        snprintf(path, sizeof(path), "/forged/%d", k);
        assert_int_equal(receiver_count_path(F.recv, path), 1);
    }
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "status", id[0], NULL), 0);
    assert_non_null(strstr(out, "junk"));
    assert_non_null(strstr(out, "sent"));
    assert_null(strstr(out, "forger"));
}

static char status_out[8192], status_err[1024];

static int
status_says_missing(void *arg)
{
    return fx_sendat(&F, status_out, sizeof(status_out), status_err, sizeof(status_err), "status",
                     (const char *)arg, NULL) == 0 &&
           strstr(status_out, "missing");
}

/* Issue 37.11: a client with the consumer's credentials and no key pulls a task through a
 * durable of its own and acks it: the task is gone without a claim. `sendat status` then says
 * "missing" (not "unknown id") with the way out, and the task booked again is delivered. */
static void
test_task_acked_away_is_missing(void **state)
{
    static char ids[4096][SA_ID_MAX + 1], subjects[4096][SA_SUBJECT_MAX];
    char id[80], again[80], url[300], err[1024];
    const char *subject = NULL;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsConsumerConfig cc;
    jsSubOptions so;
    natsSubscription *sub = NULL;
    natsMsgList list = {0};
    int n;

    (void)state;
    roles_start_once();
    roles_act_as("producer");
    /* due in an hour: no consumer made its window's durable yet, so one of ours may filter it */
    assert_int_equal(fx_schedule(&F, test_now_ms() + 3600 * 1000, "/acked-away", id, sizeof(id)),
                     0);
    roles_connect_js("consumer", &nc, &js);
    n = walk_task_ids(js, ids, subjects, (int)(sizeof(ids) / sizeof(ids[0])));
    for (int i = 0; i < n && !subject; i++)
        if (!strcmp(ids[i], id))
            subject = subjects[i];
    assert_non_null(subject);
    jsConsumerConfig_Init(&cc);
    cc.Durable = "away";
    cc.FilterSubject = subject;
    cc.AckPolicy = js_AckExplicit;
    assert_int_equal(js_AddConsumer(NULL, js, SA_TASKS_STREAM, &cc, NULL, NULL), NATS_OK);
    jsSubOptions_Init(&so);
    so.Stream = SA_TASKS_STREAM;
    so.Consumer = "away";
    assert_int_equal(js_PullSubscribe(&sub, js, subject, "away", NULL, &so, NULL), NATS_OK);
    assert_int_equal(natsSubscription_Fetch(&list, sub, 1, 5000, NULL), NATS_OK);
    assert_int_equal(list.Count, 1);
    assert_int_equal(natsMsg_AckSync(list.Msgs[0], NULL, NULL), NATS_OK);
    natsMsgList_Destroy(&list);
    natsSubscription_Destroy(sub);
    assert_int_equal(js_DeleteConsumer(js, SA_TASKS_STREAM, "away", NULL, NULL), NATS_OK);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    /* the ack removes the task on every replica in its own time: a direct get a follower
     * answers may still find it for a moment ("waiting") */
    if (!wait_until(status_says_missing, id, 20000))
        fail_msg("status of a task acked away: %s%s", status_out, status_err);
    assert_non_null(strstr(status_out, "sendat schedule"));
    /* the way out: booked again (a new id), it is delivered */
    roles_consumer_as(0, "consumer");
    assert_true(wait_until(consumer_ready, (void *)(intptr_t)0, 30000));
    snprintf(url, sizeof(url), "%s/acked-away", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, again, sizeof(again), err, sizeof(err), "schedule", "--at",
                               "+2s", "--webhook", url, NULL),
                     0);
    assert_true(receiver_wait(F.recv, "/acked-away", 1, 60000));
    assert_int_equal(fx_stop_consumers(&F), 0);
}

/* The consumers' leader balance (issue 25.4): the consumer user may ask a shard's claims
 * bucket leader to step down (answered, a new leader elected); the producer may not. */
static void
test_consumer_may_move_a_leader(void **state)
{
    const char *stream = "KV_" SA_CLAIMS_BUCKET, *text = NULL;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    struct sa_err err = {0};
    int led = 0;

    (void)state;
    roles_start_once();
    assert_int_equal(natsd_connect(&nc, F.cluster.urls, "consumer", roles_password("consumer")),
                     NATS_OK);
    if (sa_stepdown(nc, stream, NULL, (int)(10000 * test_timeout_multiplier()), &err) != SA_OK)
        fail_msg("the consumer may not step down %s: %s", stream, err.msg);
    natsConnection_Destroy(nc);
    roles_connect_js("admin", &nc, &js);
    for (int i = 0; i < 100 && !led; i++) { /* a leader again within 20 s */
        if (js_GetStreamInfo(&si, js, stream, NULL, NULL) == NATS_OK)
            led = si->Cluster && si->Cluster->Leader && si->Cluster->Leader[0];
        jsStreamInfo_Destroy(si);
        si = NULL;
        if (!led)
            usleep(200 * 1000);
    }
    assert_true(led);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    assert_int_equal(natsd_connect(&nc, F.cluster.urls, "producer", roles_password("producer")),
                     NATS_OK);
    assert_int_equal(
        natsConnection_PublishString(nc, "$JS.API.STREAM.LEADER.STEPDOWN.SENDAT_TASKS", ""),
        NATS_OK);
    natsConnection_Flush(nc); /* the server's -ERR comes before its PONG */
    if (natsConnection_GetLastError(nc, &text) != NATS_NOT_PERMITTED)
        fail_msg("a producer may step down the task stream's leader");
    natsConnection_Destroy(nc);
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
        cmocka_unit_test(test_producer_forges_no_member),
        cmocka_unit_test(test_keyless_producer_erases_nothing),
        cmocka_unit_test(test_task_acked_away_is_missing),
        cmocka_unit_test(test_consumer_may_move_a_leader),
    };

    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), NULL, roles_stop);
}
