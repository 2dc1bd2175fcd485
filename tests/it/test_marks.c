/* Empty slots get no durable (common/levelmark.h). While a consumer runs, a slot nobody booked
 * into passes with neither a mark nor a durable; a task booked into a slot marks it first and
 * is delivered; a retry re-published into a slot nobody had booked into is delivered; a mark
 * is still there after its slot and purged once its keep (SENDAT_MARKS_KEEP, 20 s here) is
 * over. Without the
 * levels bucket (a deployment whose `sendat init` predates it) every slot gets its durable as
 * before. */
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
#include "levelmark.h"

static struct fx F;
static natsConnection *nc;
static jsCtx *js;
static struct sa_layout L;

/* How long a mark outlives its slot here (the default, a minute, made the test wait it out) */
static char *keep_env[] = {"SENDAT_MARKS_KEEP=20s", NULL};

static void
connect_and_read_layout(void)
{
    kvStore *meta = NULL;
    kvEntry *e = NULL;

    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_KeyValue(&meta, js, SA_META_BUCKET), NATS_OK);
    assert_int_equal(kvStore_Get(&e, meta, "layout"), NATS_OK);
    assert_int_equal(sa_layout_parse(&L, kvEntry_ValueString(e), NULL), SA_OK);
    kvEntry_Destroy(e);
    kvStore_Destroy(meta);
}

static void
disconnect(void)
{
    fx_js_close(&nc, &js);
    js = NULL;
    nc = NULL;
}

static int
has_durable(int64_t slot)
{
    jsConsumerInfo *ci = NULL;
    char durable[32];
    natsStatus s;

    sa_layout_durable(durable, sizeof(durable), sa_layout_window(&L, slot), slot);
    s = js_GetConsumerInfo(&ci, js, SA_TASKS_STREAM, durable, NULL, NULL);
    jsConsumerInfo_Destroy(ci);
    return s == NATS_OK;
}

static int
has_mark(int64_t slot)
{
    kvStore *kv = NULL;
    kvEntry *e = NULL;
    char key[48];
    natsStatus s;

    snprintf(key, sizeof(key), "0.%" PRId64, slot);
    assert_int_equal(js_KeyValue(&kv, js, SA_LEVELS_BUCKET), NATS_OK);
    s = kvStore_Get(&e, kv, key);
    kvEntry_Destroy(e);
    kvStore_Destroy(kv);
    return s == NATS_OK;
}

static int
mark_gone(void *arg)
{
    return !has_mark(*(int64_t *)arg);
}

static int
past(void *arg)
{
    return test_now_ms() >= *(int64_t *)arg;
}

/* The slot a task booked now for due_ms goes to (booked into its slot: due well ahead). */
static int64_t
slot_of(int64_t due_ms)
{
    return sa_layout_slot(&L, due_ms);
}

static void
test_empty_slot_gets_no_durable(void **state)
{
    char id[80], retried[80];
    int64_t empty, booked, due, over, kept;

    (void)state;
    fx_start(&F, 0);
    connect_and_read_layout();
    fx_consumer(&F, 0, keep_env);
    assert_true(fx_consumer_ready(&F, 0, 30000)); /* its makers run: slots are judged */
    /* a slot that starts a few slots from now, and a task booked into the slot after it */
    empty = sa_layout_slot(&L, test_now_ms()) + 3 * L.slot_ms;
    due = empty + L.slot_ms + L.slot_ms / 2;
    booked = slot_of(due);
    assert_int_equal(fx_schedule(&F, due, "/marked", id, sizeof(id)), 0);
    assert_true(has_mark(booked));
    over = empty + L.slot_ms;
    assert_true(wait_until(past, &over, 30000)); /* the empty slot was taken up and is over */
    assert_false(has_mark(empty));
    assert_false(has_durable(empty));
    if (!receiver_wait(F.recv, "/marked", 1, 30000))
        fx_print_log(&F, 0);
    assert_true(receiver_wait(F.recv, "/marked", 1, 1000));
    assert_true(has_durable(booked));
    /* the mark stays for its keep after the slot's end (pull_marks.h): looked at 1 s after the
     * end, 19 s before its purge is due */
    kept = booked + L.slot_ms + 1000;
    assert_true(wait_until(past, &kept, 60000));
    assert_true(has_mark(booked));
    /* a retry 2 s later goes to a slot nobody booked into: the consumer marks it, and its
     * durable is made then */
    receiver_respond(F.recv, "/retried", 503, 1, "Retry-After: 2");
    assert_int_equal(fx_schedule(&F, test_now_ms() + 4000, "/retried", retried, sizeof(retried)),
                     0);
    if (!receiver_wait(F.recv, "/retried", 2, 30000))
        fx_print_log(&F, 0);
    assert_true(receiver_wait(F.recv, "/retried", 2, 1000));
    /* ... and then goes */
    if (!wait_until(mark_gone, &booked, 90000))
        fx_print_log(&F, 0);
    assert_true(mark_gone(&booked));
    disconnect();
    fx_finish(&F);
}

static void
test_without_the_bucket_every_slot_gets_its_durable(void **state)
{
    char id[80];
    int64_t slot, due;

    (void)state;
    fx_start(&F, 0);
    connect_and_read_layout();
    assert_int_equal(js_DeleteKeyValue(js, SA_LEVELS_BUCKET), NATS_OK);
    fx_consumer(&F, 0, NULL);
    slot = sa_layout_slot(&L, test_now_ms()) + 3 * L.slot_ms;
    due = slot + L.slot_ms + L.slot_ms / 2;
    assert_int_equal(fx_schedule(&F, due, "/unmarked", id, sizeof(id)), 0);
    if (!receiver_wait(F.recv, "/unmarked", 1, 30000))
        fx_print_log(&F, 0);
    assert_true(receiver_wait(F.recv, "/unmarked", 1, 1000));
    assert_true(has_durable(slot)); /* empty, and made all the same */
    disconnect();
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_slot_gets_no_durable),
        cmocka_unit_test(test_without_the_bucket_every_slot_gets_its_durable),
    };
    return FX_RUN(tests);
}
