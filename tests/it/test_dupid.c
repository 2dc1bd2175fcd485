/* A duplicate PubAck is checked, never taken for success (issue 11.2): the same --id booked
 * twice with the same content says "already scheduled" (exit 0), with other content or over
 * a squatter's message published under that Msg-Id it is an error naming the id (exit 5),
 * and over a task no longer stored it says it cannot compare (exit 6). Batches the same, per
 * line. (An id booked again after its task was cancelled or sent: test_dupid_rebook.c.) */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "dupid.h"
#include "fixture.h"
#include "layout.h"

static int
book(const char *id, int64_t due_ms, const char *data, char *out, char *err)
{
    return book_to(id, due_ms, "/dup", data, out, err);
}

/* Publishes junk (no envelope) into subject with Nats-Msg-Id msgid, as a consumer-role user can. */
static void
squat(const char *subject, const char *msgid)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsPubOptions po;
    jsPubAck *pa = NULL;

    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    jsPubOptions_Init(&po);
    po.MsgId = msgid;
    assert_int_equal(js_Publish(&pa, js, subject, "junk", 4, &po, NULL), NATS_OK);
    assert_false(pa->Duplicate);
    jsPubAck_Destroy(pa);
    fx_js_close(&nc, &js);
}

/* fx_start's layout: 10 s windows, 2 s slots. */
static void
slot_subject(char *out, size_t cap, int64_t due_ms, const char *id)
{
    snprintf(out, cap, "sendat.task.%" PRId64 ".%" PRId64 ".%s", due_ms / 10000 * 10000,
             due_ms / 2000 * 2000, id);
}

static void
test_same_other_and_squatted(void **state)
{
    char out[256], err[4096], subject[200], at[40];
    int64_t due = test_now_ms() + 600000; /* no consumer runs: everything stays stored */

    (void)state;
    fx_start(&F, 0);
    snprintf(at, sizeof(at), "@%" PRId64, due / 1000);
    /* (a) the same booking twice */
    assert_int_equal(book("order-1", due, "{\"n\":1}", out, err), 0);
    assert_string_equal(out, "order-1\n");
    assert_int_equal(book("order-1", due, "{\"n\":1}", out, err), 0);
    assert_string_equal(out, "order-1\n");
    assert_non_null(strstr(err, "already scheduled"));
    for (int i = 0; i < 2; i++) /* an email compares the same way */
        assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--id",
                                   "mail-1", "--at", at, "--email",
                                   "Ann <ann@example.org>,bob@example.org", "--cc", "c@example.org",
                                   "--subject", "좋은 아침", "--text", "hi", "--from",
                                   "Ops <ops@example.org>", NULL),
                         0);
    assert_non_null(strstr(err, "already scheduled"));
    /* (b) a corrected booking under the same id: the body, or the due time, differs */
    assert_int_equal(book("order-2", due, "{\"n\":2}", out, err), 0);
    assert_int_equal(book("order-2", due, "{\"n\":2,\"fixed\":true}", out, err), 5);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "order-2"));
    assert_int_equal(book("order-2", due + 1000, "{\"n\":2}", out, err), 5);
    assert_non_null(strstr(err, "due time"));
    /* a retry of a relative time: refused, naming the due time the first booking has */
    {
        char url[300];
        snprintf(url, sizeof(url), "%s/rel", receiver_url(F.recv));
        for (int i = 0; i < 2; i++) {
            int rc = fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--id",
                               "order-5", "--at", "+10m", "--webhook", url, NULL);
            assert_int_equal(rc, i == 0 ? 0 : 5);
        }
        assert_non_null(strstr(err, "same relative time"));
        assert_non_null(strstr(err, "absolute time"));
    }
    /* (c) junk published first under the id, in its own slot subject or another task's */
    slot_subject(subject, sizeof(subject), due, "order-3");
    squat(subject, "order-3");
    assert_int_equal(book("order-3", due, "{\"n\":3}", out, err), 5);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "order-3"));
    assert_non_null(strstr(err, "does not open"));
    slot_subject(subject, sizeof(subject), due, "someone-else");
    squat(subject, "order-4");
    assert_int_equal(book("order-4", due, "{\"n\":4}", out, err), 5);
    assert_non_null(strstr(err, "order-4"));
    assert_non_null(strstr(err, "another subject"));
    fx_stop(&F);
}

/* A slot S (2 s slots, 10 s windows) that starts a moment after now + 2.95 s and is not the
 * first of its window, so its window is already pulled then. A task due at S + 1.95 s, booked
 * at S - 2.95 s, goes to its window level (its slot is taken up within lead + slot: 3 s) and,
 * pulled at once, is more than slot + lead (3 s) from due: it is moved down to S. */
static int64_t
slot_to_move_into(void)
{
    int64_t s = (test_now_ms() + 3200) / 2000 * 2000 + 2000;

    while (s % 10000 < 4000) /* S - 2.95 s in S's window: the window is current */
        s += 2000;
    return s;
}

static void
test_moved_and_gone(void **state)
{
    char out[256], err[4096];
    const char *moved[] = {"order-5", "moved"}, *sent[] = {"order-6", "sent"};
    int64_t slot, now;
    int c0 = 0, c1 = 1;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(consumer_ready, &c0, 30000));
    /* moved down to its slot: the original sequence is gone, the task waits under its id. A task
     * booked further ahead goes straight into its slot (test_same_other_and_squatted); only one
     * booked within lead + slot of its slot is moved, so the timing is tight (1.9 s to pull it). */
    slot = slot_to_move_into();
    assert_true(wait_until_ms(slot - 2950, 20000));
    assert_int_equal(book("order-5", slot + 1950, "{\"n\":5}", out, err), 0);
    assert_true(fx_status_says(&F, moved[0], moved[1], 15000));
    assert_int_equal(fx_stop_consumers(&F), 0); /* it stays stored while it is compared */
    assert_int_equal(book("order-5", slot + 1950, "{\"n\":5}", out, err), 0);
    assert_non_null(strstr(err, "already scheduled"));
    assert_int_equal(book("order-5", slot + 1950, "{\"n\":55}", out, err), 5);
    /* sent: nothing is left to compare with, so nothing is claimed */
    fx_consumer(&F, 1, NULL);
    assert_true(wait_until(consumer_ready, &c1, 30000));
    now = test_now_ms();
    assert_int_equal(book("order-6", now, "{\"n\":6}", out, err), 0);
    assert_true(fx_status_says(&F, sent[0], sent[1], 15000));
    assert_int_equal(book("order-6", now, "{\"n\":6}", out, err), 6);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "order-6"));
    assert_non_null(strstr(err, "cannot"));
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_stop(&F);
}

static void
test_batch_per_line(void **state)
{
    char out[4096], err[8192], path[300], subject[200];
    int64_t due = test_now_ms() + 600000;
    FILE *f;

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(book("b-same", due, "{\"n\":1}", out, err), 0);
    assert_int_equal(book("b-other", due, "{\"n\":2}", out, err), 0);
    slot_subject(subject, sizeof(subject), due, "b-squat");
    squat(subject, "b-squat");
    snprintf(path, sizeof(path), "%s/dup.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    fprintf(f,
            "{\"at\":\"@%" PRId64
            ".%03d\",\"webhook\":\"%s/dup\",\"data\":\"{\\\"n\\\":1}\",\"id\":\"b-same\"}\n",
            due / 1000, (int)(due % 1000), receiver_url(F.recv));
    fprintf(f,
            "{\"at\":\"@%" PRId64
            ".%03d\",\"webhook\":\"%s/dup\",\"data\":\"{\\\"n\\\":9}\",\"id\":\"b-other\"}\n",
            due / 1000, (int)(due % 1000), receiver_url(F.recv));
    fprintf(f,
            "{\"at\":\"@%" PRId64
            ".%03d\",\"webhook\":\"%s/dup\",\"data\":\"{\\\"n\\\":3}\",\"id\":\"b-squat\"}\n",
            due / 1000, (int)(due % 1000), receiver_url(F.recv));
    fprintf(f,
            "{\"at\":\"@%" PRId64
            ".%03d\",\"webhook\":\"%s/dup\",\"data\":\"{\\\"n\\\":4}\",\"id\":\"b-new\"}\n",
            due / 1000, (int)(due % 1000), receiver_url(F.recv));
    fclose(f);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path,
                               "--json", NULL),
                     5);
    assert_non_null(strstr(out, "\"scheduled\":2"));
    assert_non_null(strstr(out, "\"already_scheduled\":1"));
    assert_non_null(strstr(out, "\"id_taken\":2"));
    assert_non_null(strstr(out, "{\"line\":2,\"id\":\"b-other\""));
    assert_non_null(strstr(out, "{\"line\":3,\"id\":\"b-squat\""));
    assert_non_null(strstr(err, "line 2: id b-other"));
    assert_non_null(strstr(err, "line 3: id b-squat"));
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_other_and_squatted),
        cmocka_unit_test(test_moved_and_gone),
        cmocka_unit_test(test_batch_per_line),
    };
    return FX_RUN(tests);
}
