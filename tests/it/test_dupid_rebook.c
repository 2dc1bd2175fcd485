/* An id booked again (issue 24.1): one whose task was cancelled or sent is refused (exit 6)
 * while sendat remembers it, within the dedupe window and after it, and free again once its
 * claim expired; an authentic record of an earlier booking put back over the id's claim decides
 * nothing for the new one (issue 37). The bucket TTLs are shortened here as an operator could
 * with the nats CLI (init refuses a claims TTL below 1h), and consumers and producers read them
 * from the buckets. (Split from test_dupid.c: the duplicate PubAck itself.) */
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

/* The task stream's dedupe window cut to 1 s: a booking a moment later is stored, not
 * deduplicated, so only the id's claim can refuse it. */
static void
short_dedupe(void)
{
    fx_dedupe_window(&F, 1000);
}

static int
claim_gone(void *id)
{
    kvStore *kv = NULL;
    kvEntry *e = NULL;
    natsStatus s;

    assert_int_equal(js_KeyValue(&kv, js, SA_CLAIMS_BUCKET), NATS_OK);
    s = kvStore_Get(&e, kv, id);
    kvEntry_Destroy(e);
    kvStore_Destroy(kv);
    return s == NATS_NOT_FOUND;
}

static void
cancel(const char *id)
{
    char out[256], err[1024];

    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "cancel", id, NULL), 0);
    assert_non_null(strstr(out, "cancelled"));
}

/* Refused with exit 6, nothing printed on stdout, the reason naming the id and its state. */
static void
assert_gone(int code, const char *out, const char *err, const char *id, const char *state)
{
    assert_int_equal(code, 6);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, id));
    assert_non_null(strstr(err, state));
    assert_non_null(strstr(err, "cannot"));
}

/* Booked, cancelled, booked again within the dedupe window: the cancelled copy still waits in
 * the stream (no consumer runs), but it is no booking. The same line in a batch likewise. */
static void
test_rebook_cancelled_within_dedupe(void **state)
{
    char out[4096], err[4096], path[300];
    int64_t due = test_now_ms() + 600000;
    FILE *f;

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(book_to("rc1", due, "/rc", "{\"n\":1}", out, err), 0);
    cancel("rc1");
    assert_gone(book_to("rc1", due, "/rc", "{\"n\":1}", out, err), out, err, "rc1", "cancelled");
    assert_gone(book_to("rc1", due, "/rc", "{\"n\":2}", out, err), out, err, "rc1", "cancelled");
    snprintf(path, sizeof(path), "%s/rc.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    fprintf(f,
            "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/rc\",\"data\":\"{\\\"n\\\":1}\","
            "\"id\":\"rc1\"}\n",
            due / 1000, (int)(due % 1000), receiver_url(F.recv));
    fclose(f);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path,
                               "--json", NULL),
                     6);
    assert_non_null(strstr(out, "\"scheduled\":0"));
    assert_non_null(strstr(err, "rc1"));
    assert_non_null(strstr(err, "cancelled"));
    fx_stop(&F);
}

/* Sent, then booked again after the dedupe window but while its claim lives: refused, nothing
 * published (the consumer never meets a copy to skip as sent), alone or as a batch line. */
static void
test_rebook_sent_after_dedupe(void **state)
{
    char out[256], err[4096], big[4096], path[300];
    int64_t booked;
    FILE *f;
    int c0 = 0;

    (void)state;
    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    short_dedupe();
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(consumer_ready, &c0, 30000));
    booked = test_now_ms();
    assert_int_equal(book_to("rs1", booked, "/rs", "{}", out, err), 0);
    assert_true(fx_status_says(&F, "rs1", "sent", 15000));
    assert_true(wait_until_ms(booked + 2000, 10000)); /* past the 1 s dedupe window */
    assert_gone(book_to("rs1", booked, "/rs", "{}", out, err), out, err, "rs1", "sent");
    /* the same id as a batch line beside a fresh one: only the fresh one is booked */
    snprintf(path, sizeof(path), "%s/rs.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    for (int i = 1; i <= 2; i++)
        fprintf(f,
                "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/rs\",\"data\":\"{}\","
                "\"id\":\"rs%d\"}\n",
                booked / 1000, (int)(booked % 1000), receiver_url(F.recv), i);
    fclose(f);
    assert_int_equal(fx_sendat(&F, big, sizeof(big), err, sizeof(err), "schedule", "--batch", path,
                               "--json", NULL),
                     6);
    assert_non_null(strstr(big, "\"scheduled\":1"));
    assert_non_null(strstr(err, "rs1"));
    assert_non_null(strstr(err, "sent"));
    assert_true(receiver_wait(F.recv, "/rs", 2, 30000)); /* rs1 once, rs2 once */
    assert_true(fx_status_says(&F, "rs2", "sent", 15000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/rs"), 2);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "claim=sent"), 0);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* Booked, then booked again with other content after the dedupe window while the first still
 * waits: the stream stores both copies (nothing tells the producer the id waits), and the
 * fleet sends the id once: the copy that claims first is sent, the other is dead-lettered
 * naming the other booking. Before, two consumers sent both (one to each path). */
static void
test_rebook_waiting_after_dedupe(void **state)
{
    char out[256], err[4096];
    int64_t due;
    int c0 = 0, c1 = 1;

    (void)state;
    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    short_dedupe();
    due = test_now_ms() + 3000;
    assert_int_equal(book_to("rw1", due, "/rw-a", "{\"n\":1}", out, err), 0);
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* past the 1 s dedupe window */
    assert_int_equal(book_to("rw1", due, "/rw-b", "{\"n\":2}", out, err), 0);
    fx_consumer(&F, 0, NULL); /* both copies due before either consumer starts */
    fx_consumer(&F, 1, NULL);
    assert_true(wait_until(consumer_ready, &c0, 30000));
    assert_true(wait_until(consumer_ready, &c1, 30000));
    assert_true(fx_status_says(&F, "rw1", "another booking holds this id", 30000));
    assert_true(fx_status_says(&F, "rw1", "sent", 30000));
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* time for a second send */
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(receiver_count_path(F.recv, "/rw-a") + receiver_count_path(F.recv, "/rw-b"),
                     1);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* A deployment whose ledger forgets in 20 s and whose dedupe window is short, and one
 * consumer, ready. */
static void
short_fleet(void)
{
    int c0 = 0;

    fx_start(&F, 0);
    fx_js_open(&F, &nc, &js);
    kvStore_Destroy(fx_short_ledger(&F, js, 20000));
    short_dedupe();
    fx_consumer(&F, 0, NULL);
    assert_true(wait_until(consumer_ready, &c0, 30000));
}

/* Cancelled, refused while remembered, then free once its claim expired (a 20 s ledger): the
 * new task under the id is sent, not dropped by the old cancel record the consumer still
 * holds. The cancelled copy (due in 10 min) still waits in the stream. */
static void
test_rebook_after_claims_ttl(void **state)
{
    char out[256], err[4096];
    int64_t due = test_now_ms() + 600000;

    (void)state;
    short_fleet();
    assert_int_equal(book_to("rt1", due, "/rt-old", "{\"n\":1}", out, err), 0);
    cancel("rt1");
    assert_gone(book_to("rt1", due, "/rt-old", "{\"n\":1}", out, err), out, err, "rt1",
                "cancelled");
    assert_true(wait_until(claim_gone, "rt1", 90000));
    assert_int_equal(book_to("rt1", test_now_ms() + 2000, "/rt-new", "{\"n\":2}", out, err), 0);
    assert_string_equal(out, "rt1\n");
    assert_null(strstr(err, "already"));
    assert_true(receiver_wait(F.recv, "/rt-new", 1, 30000));
    assert_true(fx_status_says(&F, "rt1", "sent", 15000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "dropped_cancelled"), 0);
    assert_int_equal(receiver_count_path(F.recv, "/rt-new"), 1);
    assert_int_equal(receiver_count_path(F.recv, "/rt-old"), 0);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* The bytes of id's claim record as stored (an authentic record, MAC and all), into out. */
static size_t
claim_bytes(const char *id, char *out, size_t cap)
{
    kvStore *kv = NULL;
    kvEntry *e = NULL;
    size_t len;

    assert_int_equal(js_KeyValue(&kv, js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_int_equal(kvStore_Get(&e, kv, id), NATS_OK);
    len = (size_t)kvEntry_ValueLen(e);
    assert_true(len < cap);
    memcpy(out, kvEntry_Value(e), len);
    kvEntry_Destroy(e);
    kvStore_Destroy(kv);
    return len;
}

/* The id booked again (due in 3 s, to path) once its claim expired, then rec (len bytes: an
 * authentic record of its first booking) put back over its claim key, as a client allowed to
 * write the bucket may (the replay); waits for the new booking's delivery and time for a
 * second one, then stops the consumers and says how often path was posted. */
static size_t
rebook_then_replay(const char *id, const char *path, const char *rec, size_t len)
{
    char out[256], err[4096];
    uint64_t rev;
    kvStore *kv = NULL;

    assert_true(wait_until(claim_gone, (void *)id, 90000));
    assert_int_equal(book_to(id, test_now_ms() + 3000, path, "{\"n\":2}", out, err), 0);
    assert_int_equal(js_KeyValue(&kv, js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_int_equal(kvStore_Put(&rev, kv, id, rec, (int)len), NATS_OK);
    kvStore_Destroy(kv);
    assert_true(receiver_wait(F.recv, path, 1, 30000));
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* time for a second send */
    assert_int_equal(fx_stop_consumers(&F), 0);
    return receiver_count_path(F.recv, path);
}

/* Issue 37 (left from item 1): an authentic "sent" record of an id's first booking, captured
 * by a client that may read and write the claims bucket (no key needed) and put back once the
 * claims TTL freed the id and it was booked again. It carries the first booking's sealed time,
 * so it decides nothing for the second: the task is sent, once, and the consumer logs the
 * record as junk over nothing. (Before, the replay stopped the second booking for good.) */
static void
test_replayed_record_of_an_earlier_booking(void **state)
{
    char out[256], err[4096], rec[2048];
    size_t len;

    (void)state;
    short_fleet();
    assert_int_equal(book_to("rp1", test_now_ms() + 1000, "/rp-old", "{\"n\":1}", out, err), 0);
    assert_true(receiver_wait(F.recv, "/rp-old", 1, 30000));
    assert_true(fx_status_says(&F, "rp1", "sent", 15000));
    len = claim_bytes("rp1", rec, sizeof(rec));
    assert_int_equal(rebook_then_replay("rp1", "/rp-new", rec, len), 1);
    assert_int_equal(receiver_count_path(F.recv, "/rp-old"), 1);
    assert_true(proc_count_lines(F.consumers[0].err_path, "event=junk_claim task=rp1 junk=1") >= 1);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* An authentic "cancelled" record of an id's first booking (written by `sendat cancel`, which
 * does not open the task, so it names no booking), captured and put back once the claims TTL
 * freed the id and it was booked again: written before the booking was sealed (by more than
 * clocks apart explain), it is a replay and stops nothing. Before, the second booking was
 * skipped as cancelled. */
static void
test_replayed_cancel_of_an_earlier_booking(void **state)
{
    char out[256], err[4096], rec[2048];
    size_t len;

    (void)state;
    short_fleet();
    assert_int_equal(book_to("rc1", test_now_ms() + 600000, "/rc-old", "{}", out, err), 0);
    cancel("rc1");
    len = claim_bytes("rc1", rec, sizeof(rec));
    assert_int_equal(rebook_then_replay("rc1", "/rc-new", rec, len), 1);
    assert_int_equal(receiver_count_path(F.recv, "/rc-old"), 0);
    assert_true(proc_count_lines(F.consumers[0].err_path, "task=rc1 replayed=cancelled") >= 1);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rebook_cancelled_within_dedupe),
        cmocka_unit_test(test_rebook_sent_after_dedupe),
        cmocka_unit_test(test_rebook_waiting_after_dedupe),
        cmocka_unit_test(test_rebook_after_claims_ttl),
        cmocka_unit_test(test_replayed_record_of_an_earlier_booking),
        cmocka_unit_test(test_replayed_cancel_of_an_earlier_booking),
    };

    return FX_RUN(tests);
}
