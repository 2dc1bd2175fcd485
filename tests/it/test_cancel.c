/* Cancel is exact (invariant 3): cancelled before due never arrives; after delivery it
 * answers too late; an unknown id answers unknown; and at the due instant cancel and send
 * race for one claim, so never both win. */
#include <inttypes.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cancelrec.h"
#include "check.h"
#include "fixture.h"
#include "forge.h"
#include "jsfeat.h"
#include "layout.h"

#define N_RACE 20

static struct fx F;

static void
test_cancel_before_after_unknown(void **state)
{
    char id1[80], id2[80], out[256];
    int64_t due, later;

    (void)state;
    fx_start(&F, 0);
    due = test_now_ms() + 4000;
    assert_int_equal(fx_schedule(&F, due, "/cancelled", id1, sizeof(id1)), 0);
    assert_int_equal(fx_schedule(&F, due, "/sent", id2, sizeof(id2)), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", id1, NULL), 0);
    assert_string_equal(out, "cancelled\n");
    /* again: the same answer */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", id1, NULL), 0);
    /* the consumer starts after the cancel: on a loaded machine the bookings and the cancels may
     * outlast the 4 s to the due time, and a cancel after the send answers "too late" */
    fx_consumer(&F, 0, NULL);
    assert_true(receiver_wait(F.recv, "/sent", 1, 30000));
    later = test_now_ms() + 3000; /* the cancelled one would have come with the other */
    assert_true(wait_until_ms(later, 10000));
    assert_int_equal(receiver_count_path(F.recv, "/cancelled"), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", id2, NULL), 3);
    assert_true(strncmp(out, "too late: sent at 20", 20) == 0);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", "1795340100000-nosuchtask", NULL), 4);
    assert_string_equal(out, "unknown id\n");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", "no-such-id", NULL), 4);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", id1, NULL), 0);
    assert_non_null(strstr(out, "cancelled"));
    /* past its due time, its copy dropped: the booking and the due time are still told */
    assert_non_null(strstr(out, " scheduled\n"));
    assert_non_null(strstr(out, " due\n"));
    fx_finish(&F);
}

/* Cancels fired at the due instant, in parallel with two consumers sending. */
static void
test_cancel_races_send(void **state)
{
    char ids[N_RACE][80], path[32];
    struct proc cancels[N_RACE];
    int64_t due, start;
    int cancelled = 0, late = 0;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    fx_consumer(&F, 1, NULL);
    due = test_now_ms() + 6000;
    for (int i = 0; i < N_RACE; i++) {
        snprintf(path, sizeof(path), "/race/%d", i);
        assert_int_equal(fx_schedule(&F, due, path, ids[i], sizeof(ids[i])), 0);
    }
    start = due - 40; /* the cancels start around the due instant: some win, some are too late */
    assert_true(wait_until_ms(start, 20000));
    for (int i = 0; i < N_RACE; i++) {
        char *argv[] = {(char *)fx_sendat_bin(), "cancel", ids[i], NULL};
        char *env[] = {F.env_url, F.env_key, NULL};
        char name[16];
        snprintf(name, sizeof(name), "cancel%d", i);
        assert_int_equal(proc_spawn(&cancels[i], F.dir, name, argv, env), 0);
    }
    for (int i = 0; i < N_RACE; i++) {
        int rc = proc_wait(&cancels[i], 60000);
        char *out = proc_read_file(cancels[i].out_path);
        size_t got;
        snprintf(path, sizeof(path), "/race/%d", i);
        got = receiver_count_path(F.recv, path);
        if (rc == 0) {
            cancelled++;
            if (got != 0)
                fail_msg("task %d: cancel said cancelled but the receiver got it", i);
        } else {
            late++;
            assert_int_equal(rc, 3);
            assert_non_null(out);
            assert_true(strncmp(out, "too late", 8) == 0);
        }
        free(out);
    }
    fx_stop_consumers(&F);
    for (int i = 0; i < N_RACE; i++) { /* never twice; a too-late one arrived exactly once */
        snprintf(path, sizeof(path), "/race/%d", i);
        assert_true(receiver_count_path(F.recv, path) <= 1);
    }
    assert_int_equal(receiver_count(F.recv), (size_t)late);
    assert_int_equal(cancelled + late, N_RACE);
    fprintf(stderr, "race at the due instant: %d cancelled, %d too late\n", cancelled, late);
    fx_stop(&F);
}

/* Issues 24.6 and 37.1: a claim key whose last entry a client forged before the due time. A
 * DEL marker with no record under it (a PURGE is refused): the task is sent once. Junk (a record
 * the key does not authenticate: bytes that are not JSON, an unknown state, a "sent" made without
 * the key) stops nothing: the task is sent once over it, and the consumer logs junk_claim with the
 * id. An authentic record under a DEL marker or under junk decides as if they were not there
 * (here a "sent": not sent). A cancel over a marker wins as over no claim. None of them loops
 * on claim_failed. */
static void
test_forged_claim_records(void **state)
{
    static const char *forged[] = {"purge",
                                   "delete",
                                   "\x01junk",
                                   "{\"state\":\"exploded\"}",
                                   "purge",
                                   "keyed sent",
                                   "\x01junk",
                                   "keyed sent",
                                   "{\"state\":\"sent\",\"consumer\":\"forger\"}"};
    static const char *paths[] = {"/purged",       "/deleted",    "/junk",
                                  "/unknown",      "/cancelled",  "/hidden",
                                  "/junk-deleted", "/under-junk", "/forged-sent"};
    enum { N = sizeof(paths) / sizeof(paths[0]) };
    static const int sends[N] = {1, 1, 1, 1, 0, 0, 1, 0, 1};
    char ids[N][80], out[256];
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    /* every record is forged before the consumer starts: nine bookings and forgeries took over
     * 6 s at load 19 and over 12 s at load 22, past the claim lead of a fixed due time */
    due = test_now_ms() + (int64_t)(12000 * test_timeout_multiplier());
    for (int i = 0; i < N; i++) {
        assert_int_equal(fx_schedule(&F, due, paths[i], ids[i], sizeof(ids[i])), 0);
        forge_claim(&F, ids[i], forged[i]);
    }
    forge_claim(&F, ids[5], "delete"); /* over the authentic "sent" */
    forge_claim(&F, ids[6], "delete"); /* over junk: nothing authentic under either */
    forge_claim(&F, ids[7], "{\"state\":\"retrying\",\"attempt\":9}"); /* junk over "sent" */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", ids[4], NULL), 0);
    assert_string_equal(out, "cancelled\n");
    fx_consumer(&F, 0, NULL);
    for (int i = 0; i < N; i++)
        if (sends[i])
            assert_true(receiver_wait(F.recv, paths[i], 1, 30000));
    assert_true(fx_status_says(&F, ids[8], "sent", 30000));
    assert_true(wait_until_ms(test_now_ms() + 4000, 10000)); /* time for a loop or a repeat */
    for (int i = 0; i < N; i++)
        assert_int_equal(receiver_count_path(F.recv, paths[i]), (size_t)sends[i]);
    for (int i = 5; i <= 7; i += 2) { /* read under the marker, under the junk */
        snprintf(out, sizeof(out), "task=%s claim=sent", ids[i]);
        assert_int_equal(proc_count_lines(F.consumers[0].err_path, out), 1);
    }
    snprintf(out, sizeof(out), "event=junk_claim task=%s junk=1 under=sent", ids[7]);
    assert_true(proc_count_lines(F.consumers[0].err_path, out) >= 1);
    snprintf(out, sizeof(out), "event=junk_claim task=%s junk=1 under=none", ids[8]);
    assert_true(proc_count_lines(F.consumers[0].err_path, out) >= 1);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "claim_failed"), 0);
    fx_finish(&F);
}

/* The Nats-TTL header of the cancel record under key ("" if it has none): a direct get of the
 * key's last message in the bucket's stream. */
static void
record_ttl(natsConnection *nc, const char *key, char *ttl, size_t cap)
{
    jsCtx *js = NULL;
    jsDirectGetMsgOptions o;
    char subject[160];
    natsMsg *m = NULL;
    const char *v = NULL;

    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    snprintf(subject, sizeof(subject), "$KV.%s.%s", SA_CANCEL_BUCKET, key);
    jsDirectGetMsgOptions_Init(&o);
    o.LastBySubject = subject;
    assert_int_equal(js_DirectGetMsg(&m, js, "KV_" SA_CANCEL_BUCKET, NULL, &o), NATS_OK);
    snprintf(ttl, cap, "%s", natsMsgHeader_Get(m, "Nats-TTL", &v) == NATS_OK && v ? v : "");
    natsMsg_Destroy(m);
    jsCtx_Destroy(js);
}

/* Whether the cancel bucket's stream lets messages carry a Nats-TTL (its config, as JSON). */
static int
bucket_allows_ttl(natsConnection *nc)
{
    natsMsg *reply = NULL;
    int yes;

    assert_int_equal(natsConnection_RequestString(
                         &reply, nc, "$JS.API.STREAM.INFO.KV_" SA_CANCEL_BUCKET, "", 5000),
                     NATS_OK);
    yes = strstr(natsMsg_GetData(reply), "\"allow_msg_ttl\":true") != NULL;
    natsMsg_Destroy(reply);
    return yes;
}

/* Schedules a task due at due, cancels it and returns its record's Nats-TTL in ttl (its id in
 * id, if not NULL: 80 bytes). */
static void
cancel_and_read(natsConnection *nc, int64_t due, const char *path, char *ttl, size_t cap,
                char *id_out)
{
    char buf[80], out[256], *id = id_out ? id_out : buf;

    assert_int_equal(fx_schedule(&F, due, path, id, 80), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", id, NULL), 0);
    assert_string_equal(out, "cancelled\n");
    record_ttl(nc, id, ttl, cap);
}

/* Issue 24.1 / 25.3: on a server with per-message TTL (2.11+) `sendat init` lets the cancel
 * bucket take them (run again on the deployment: fine), and a task's cancel record carries a
 * Nats-TTL of its due time less now plus the claims TTL (7d); a series' pause and cancel
 * records carry none, nor does anything with SENDAT_SERVER_FEATURES=none. On 2.9: no TTL. */
static void
test_cancel_record_ttl(void **state)
{
    char ttl[32], series[80], out[256], url[300], key[120];
    natsConnection *nc = NULL;
    struct sa_jsfeat feat;
    int64_t before, due, v;

    (void)state;
    fx_start(&F, 0);
    fx_init(&F); /* twice on the deployment, */
    fx_init(&F); /* and once more */
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(sa_jsfeat_detect(nc, &feat, NULL), SA_OK);
    fprintf(stderr, "api level %d\n", feat.api_level);
    assert_int_equal(bucket_allows_ttl(nc), (feat.have & SA_JSFEAT_MSG_TTL) != 0);
    before = test_now_ms();
    due = before + 60000;
    cancel_and_read(nc, due, "/ttl", ttl, sizeof(ttl), NULL);
    if (feat.have & SA_JSFEAT_MSG_TTL) {
        /* the bound of its due time is the end of its window (10 s) */
        v = strtoll(ttl, NULL, 10) - 7 * 86400;
        fprintf(stderr, "Nats-TTL %s: the claims TTL and %" PRId64 " s\n", ttl, v);
        assert_true(v >= (due - test_now_ms()) / 1000 && v <= (due - before) / 1000 + 11);
    } else {
        assert_string_equal(ttl, "");
    }
    snprintf(url, sizeof(url), "%s/tick", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, series, sizeof(series), NULL, 0, "schedule", "--cron",
                               "0 0 1 1 *", "--tz", "UTC", "--webhook", url, NULL),
                     0);
    series[strcspn(series, "\n")] = '\0';
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "series", "pause", series, NULL), 0);
    snprintf(key, sizeof(key), "%s%s", SA_PAUSE_PREFIX, series);
    record_ttl(nc, key, ttl, sizeof(ttl));
    assert_string_equal(ttl, "");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "cancel", series, NULL), 0);
    record_ttl(nc, series, ttl, sizeof(ttl));
    assert_string_equal(ttl, "");
    setenv("SENDAT_SERVER_FEATURES", "none", 1);
    fx_init(&F);
    cancel_and_read(nc, test_now_ms() + 60000, "/none", ttl, sizeof(ttl), NULL);
    unsetenv("SENDAT_SERVER_FEATURES");
    assert_string_equal(ttl, "");
    natsConnection_Destroy(nc);
    fx_stop(&F);
}

/* Writes id's cancel record again with a Nats-TTL of one second (what every record comes to
 * when its time is up), as many times as the bucket keeps entries a key (SA_CANCEL_HISTORY), so
 * that the record it replaces leaves the key's history too. */
static void
expire_soon(natsConnection *nc, const char *id)
{
    jsCtx *js = NULL;
    natsMsg *m = NULL;
    jsPubAck *pa = NULL;
    char subject[160];

    snprintf(subject, sizeof(subject), "$KV.%s.%s", SA_CANCEL_BUCKET, id);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    for (int i = 0; i < SA_CANCEL_HISTORY; i++) {
        assert_int_equal(natsMsg_Create(&m, subject, NULL, "x", 1), NATS_OK);
        assert_int_equal(natsMsgHeader_Set(m, "Nats-TTL", "1"), NATS_OK);
        assert_int_equal(js_PublishMsg(&pa, js, m, NULL, NULL), NATS_OK);
        jsPubAck_Destroy(pa);
        natsMsg_Destroy(m);
        pa = NULL;
        m = NULL;
    }
    jsCtx_Destroy(js);
}

/* Whether key's cancel record is gone, within timeout_ms. */
static int
record_gone(natsConnection *nc, const char *id, int64_t timeout_ms)
{
    jsCtx *js = NULL;
    jsDirectGetMsgOptions o;
    char subject[160];
    natsMsg *m = NULL;
    natsStatus s = NATS_OK;
    int64_t end = test_now_ms() + timeout_ms;

    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    snprintf(subject, sizeof(subject), "$KV.%s.%s", SA_CANCEL_BUCKET, id);
    jsDirectGetMsgOptions_Init(&o);
    o.LastBySubject = subject;
    while (test_now_ms() < end) {
        s = js_DirectGetMsg(&m, js, "KV_" SA_CANCEL_BUCKET, NULL, &o);
        natsMsg_Destroy(m);
        m = NULL;
        if (s == NATS_NOT_FOUND)
            break;
        wait_until_ms(test_now_ms() + 200, 1000);
    }
    jsCtx_Destroy(js);
    return s == NATS_NOT_FOUND;
}

/* On a server with per-message TTL: a deployment made without it (SENDAT_SERVER_FEATURES=none)
 * still cancels (the record is put without a TTL) until `sendat init` runs again and lets the
 * bucket take them. A record that expires is removed with nothing to show a watcher (the
 * bucket has no delete markers), and a consumer that no longer finds it drops the task by its
 * "cancelled" claim: never sent, no crash. Skipped on 2.9 / 2.10. */
static void
test_cancel_record_expires(void **state)
{
    char id[80], out[256], ttl[32];
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    kvWatcher *w = NULL;
    kvEntry *e = NULL;
    struct sa_jsfeat feat;
    int seen = 0;
    int64_t due;

    (void)state;
    setenv("SENDAT_SERVER_FEATURES", "none", 1);
    fx_start(&F, 0);
    unsetenv("SENDAT_SERVER_FEATURES");
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(sa_jsfeat_detect(nc, &feat, NULL), SA_OK);
    if (!(feat.have & SA_JSFEAT_MSG_TTL)) {
        natsConnection_Destroy(nc);
        fx_stop(&F);
        skip(); /* nats-server 2.9 / 2.10: no per-message TTL */
    }
    assert_false(bucket_allows_ttl(nc));
    cancel_and_read(nc, test_now_ms() + 60000, "/before-upgrade", ttl, sizeof(ttl), NULL);
    assert_string_equal(ttl, "");
    fx_init(&F); /* the upgrade */
    assert_true(bucket_allows_ttl(nc));
    fx_consumer(&F, 0, NULL);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_KeyValue(&kv, js, SA_CANCEL_BUCKET), NATS_OK);
    due = test_now_ms() + 20000;
    cancel_and_read(nc, due, "/expired", ttl, sizeof(ttl), id);
    assert_true(ttl[0] != '\0');
    assert_int_equal(kvStore_WatchAll(&w, kv, NULL), NATS_OK);
    while (kvWatcher_Next(&e, w, 5000) == NATS_OK && e) /* the records there now */
        kvEntry_Destroy(e);
    expire_soon(nc, id);
    assert_true(record_gone(nc, id, 20000));
    /* the watcher saw the short-lived put, and then nothing for the expiry */
    while (kvWatcher_Next(&e, w, 2000) == NATS_OK) {
        fprintf(stderr, "watcher: %s op %d\n", kvEntry_Key(e), (int)kvEntry_Operation(e));
        seen++;
        kvEntry_Destroy(e);
    }
    fprintf(stderr, "watcher saw %d entries from the put to past the expiry\n", seen);
    /* a consumer started now does not know the record: the claim decides */
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_consumer(&F, 1, NULL);
    assert_true(wait_until_ms(due + 5000, 40000));
    assert_int_equal(receiver_count_path(F.recv, "/expired"), 0);
    assert_true(fx_status_says(&F, id, "cancelled", 30000));
    snprintf(out, sizeof(out), "task=%s claim=cancelled", id);
    assert_int_equal(proc_count_lines(F.consumers[1].err_path, out), 1);
    kvWatcher_Destroy(w);
    kvStore_Destroy(kv);
    fx_js_close(&nc, &js);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_before_after_unknown),
        cmocka_unit_test(test_cancel_races_send),
        cmocka_unit_test(test_forged_claim_records),
        cmocka_unit_test(test_cancel_record_ttl),
        cmocka_unit_test(test_cancel_record_expires),
    };

    return FX_RUN(tests);
}
