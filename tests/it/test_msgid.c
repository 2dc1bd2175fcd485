/* A Nats-Msg-Id only where it earns its memory (issue 33 item 2): a task under an id the user
 * gave is published with that id as Msg-Id, one under an id the producer generated with none
 * (the id is unique by itself). A second copy of one booking with a generated id (a publish
 * retried after a lost PubAck) is stored, and the claim ledger sends it once. A batch run
 * again books its lines with ids once, within the dedupe window and after it (then the second
 * copy is stored and the fleet sends the id once), and its lines without ids again each run,
 * as before. */
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

#define LINES 3 /* lines with an id, and as many without, in the batch */

static struct fx F;
static natsConnection *nc;
static jsCtx *js;

/* The subject the task stream holds id's task under, into out; 0 if none. */
static int
subject_of(const char *id, char *out, size_t cap)
{
    jsOptions o;
    jsStreamInfo *si = NULL;
    size_t len = strlen(id);
    int found = 0;

    jsOptions_Init(&o);
    o.Stream.Info.SubjectsFilter = "sendat.task.>";
    assert_int_equal(js_GetStreamInfo(&si, js, SA_TASKS_STREAM, &o, NULL), NATS_OK);
    for (int i = 0; si->State.Subjects && i < si->State.Subjects->Count && !found; i++) {
        const char *s = si->State.Subjects->List[i].Subject;
        size_t n = strlen(s);
        if (n > len + 1 && s[n - len - 1] == '.' && !strcmp(s + n - len, id)) {
            snprintf(out, cap, "%s", s);
            found = 1;
        }
    }
    jsStreamInfo_Destroy(si);
    return found;
}

/* The last message stored under id's subject; the caller destroys it. */
static natsMsg *
stored(const char *id)
{
    char subject[SA_SUBJECT_MAX];
    natsMsg *m = NULL;

    assert_true(subject_of(id, subject, sizeof(subject)));
    assert_int_equal(js_GetLastMsg(&m, js, SA_TASKS_STREAM, subject, NULL, NULL), NATS_OK);
    return m;
}

static uint64_t
stream_msgs(void)
{
    return fx_stream_msgs(js, SA_TASKS_STREAM);
}

static int
stream_empty(void *arg)
{
    (void)arg;
    return stream_msgs() == 0;
}

static void
two_consumers(void)
{
    int c0 = 0, c1 = 1;

    fx_consumer(&F, 0, NULL);
    fx_consumer(&F, 1, NULL);
    assert_true(fx_consumer_ready(&F, c0, 30000));
    assert_true(fx_consumer_ready(&F, c1, 30000));
}

/* The stored task's Nats-Msg-Id header into out ("" if it has none). */
static void
msgid_of(const char *id, char *out, size_t cap)
{
    natsMsg *m = stored(id);
    const char *v = NULL;

    if (natsMsgHeader_Get(m, "Nats-Msg-Id", &v) != NATS_OK || !v)
        v = "";
    snprintf(out, cap, "%s", v);
    natsMsg_Destroy(m);
}

/* `schedule --id` and `schedule` (and the same two in a batch): only the given id is a
 * Msg-Id. */
static void
test_msgid_only_for_given_ids(void **state)
{
    char out[256], err[4096], path[300], gen[80], msgid[SA_ID_MAX + 1], at[40], url[300];
    char ids[2][80] = {{0}};
    int64_t due = test_now_ms() + 600000; /* no consumer runs: everything stays stored */
    FILE *f;

    (void)state;
    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    snprintf(at, sizeof(at), "@%" PRId64, due / 1000);
    snprintf(url, sizeof(url), "%s/m", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--id",
                               "given-1", "--at", at, "--webhook", url, NULL),
                     0);
    assert_int_equal(fx_schedule(&F, due, "/m", gen, sizeof(gen)), 0);
    msgid_of("given-1", msgid, sizeof(msgid));
    assert_string_equal(msgid, "given-1");
    msgid_of(gen, msgid, sizeof(msgid));
    assert_string_equal(msgid, "");

    snprintf(path, sizeof(path), "%s/two.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    fprintf(f, "{\"at\":\"%s\",\"webhook\":\"%s\",\"id\":\"given-2\"}\n", at, url);
    fprintf(f, "{\"at\":\"%s\",\"webhook\":\"%s\"}\n", at, url);
    fclose(f);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
    assert_int_equal(sscanf(out, "1 %79s\n2 %79s", ids[0], ids[1]), 2);
    assert_string_equal(ids[0], "given-2");
    msgid_of("given-2", msgid, sizeof(msgid));
    assert_string_equal(msgid, "given-2");
    msgid_of(ids[1], msgid, sizeof(msgid));
    assert_string_equal(msgid, "");
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* A generated-id task published a second time as it was (the same sealed message to the same
 * subject, as a publish retried after a lost PubAck sends it): no Msg-Id stops it, the stream
 * holds both copies, and two consumers send the id once; the other copy is skipped. */
static void
test_retried_publish_of_a_generated_id_sends_once(void **state)
{
    char id[80], subject[SA_SUBJECT_MAX];
    const char *sched = NULL;
    natsMsg *m, *again = NULL;
    jsPubAck *pa = NULL;

    (void)state;
    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 4000, "/retried", id, sizeof(id)), 0);
    m = stored(id);
    snprintf(subject, sizeof(subject), "%s", natsMsg_GetSubject(m));
    assert_int_equal(
        natsMsg_Create(&again, subject, NULL, natsMsg_GetData(m), natsMsg_GetDataLength(m)),
        NATS_OK);
    assert_int_equal(natsMsgHeader_Get(m, "Sendat-Scheduled", &sched), NATS_OK);
    assert_int_equal(natsMsgHeader_Set(again, "Sendat-Scheduled", sched), NATS_OK);
    assert_int_equal(js_PublishMsg(&pa, js, again, NULL, NULL), NATS_OK);
    assert_false(pa->Duplicate);
    assert_int_equal(stream_msgs(), 2);
    jsPubAck_Destroy(pa);
    natsMsg_Destroy(again);
    natsMsg_Destroy(m);

    two_consumers();
    assert_true(receiver_wait(F.recv, "/retried", 1, 60000));
    assert_true(fx_status_says(&F, id, "sent", 30000));
    assert_true(wait_until(stream_empty, NULL, 30000)); /* the second copy is not left waiting */
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/retried"), 1);
    assert_int_equal(fx_counter(&F, 0, "duplicates") + fx_counter(&F, 1, "duplicates"), 1);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* The batch: LINES lines with ids (to /e<k>) and LINES without (to /g<k>), all due at due. */
static void
write_batch(const char *path, int64_t due)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    for (int k = 0; k < LINES; k++) {
        fprintf(f, "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/e%d\",\"id\":\"rerun-%d\"}\n",
                due / 1000, receiver_url(F.recv), k, k);
        fprintf(f, "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/g%d\"}\n", due / 1000,
                receiver_url(F.recv), k);
    }
    fclose(f);
}

/* The batch run three times before any consumer: twice within the dedupe window (the second
 * run's id lines are "already scheduled", nothing stored), once after it (the id lines are
 * stored again: nothing remembers their Msg-Id). Lines without ids are new tasks each run.
 * Then the fleet sends each id line once and each line without an id once per run. */
static void
test_batch_rerun_within_and_after_the_window(void **state)
{
    char path[300], out[4096], err[8192], want[40];
    int seen[LINES];
    int64_t due = test_now_ms() + 10000;

    (void)state;
    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    snprintf(path, sizeof(path), "%s/rerun.ndjson", F.dir);
    write_batch(path, due);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
    assert_int_equal(stream_msgs(), 2 * LINES);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path,
                               "--json", NULL),
                     0);
    snprintf(want, sizeof(want), "\"already_scheduled\":%d", LINES);
    assert_non_null(strstr(out, want));
    assert_int_equal(stream_msgs(), 3 * LINES); /* only the lines without ids added */

    fx_dedupe_window(&F, 1000);
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* past the 1 s dedupe window */
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
    assert_int_equal(stream_msgs(), 5 * LINES); /* the id lines stored again, and 3 new tasks */

    two_consumers();
    assert_true(wait_until(stream_empty, NULL, 60000));
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* time for a second send */
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(fx_arrivals(&F, "/e", seen, LINES), LINES);
    for (int k = 0; k < LINES; k++)
        assert_int_equal(seen[k], 1);
    assert_int_equal(fx_arrivals(&F, "/g", seen, LINES), LINES);
    for (int k = 0; k < LINES; k++)
        assert_int_equal(seen[k], 3);
    assert_true(fx_status_says(&F, "rerun-0", "another booking holds this id", 10000));
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msgid_only_for_given_ids),
        cmocka_unit_test(test_retried_publish_of_a_generated_id_sends_once),
        cmocka_unit_test(test_batch_rerun_within_and_after_the_window),
    };
    return FX_RUN(tests);
}
