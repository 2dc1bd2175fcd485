/* Window and slot math, subjects, durable names, ids and Msg-Ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "layout.h"

static struct sa_layout L;

static int
setup(void **state)
{
    (void)state;
    sa_layout_defaults(&L);
    return 0;
}

static void
test_floor(void **state)
{
    (void)state;
    assert_int_equal(sa_layout_window(&L, 1795340100000LL), 1795339800000LL);
    assert_int_equal(sa_layout_window(&L, 1795339800000LL), 1795339800000LL);
    assert_int_equal(sa_layout_window(&L, 1795340399999LL), 1795339800000LL);
    assert_int_equal(sa_layout_slot(&L, 1795340105432LL), 1795340100000LL);
    assert_int_equal(sa_layout_window(&L, -1), -600000);
}

static void
test_subjects(void **state)
{
    char s[SA_SUBJECT_MAX];
    struct sa_place p;

    (void)state;
    assert_true(sa_layout_window_subject(s, sizeof(s), 0, 600000, "abc") > 0);
    assert_string_equal(s, "sendat.task.600000.w.abc");
    sa_layout_slot_subject(s, sizeof(s), 0, 600000, 610000, "abc");
    assert_string_equal(s, "sendat.task.600000.610000.abc");
    assert_int_equal(sa_layout_parse_subject(&p, s, NULL), SA_OK);
    assert_int_equal(p.window, 600000);
    assert_int_equal(p.slot, 610000);
    assert_string_equal(p.id, "abc");
    assert_int_equal(sa_layout_parse_subject(&p, "sendat.task.600000.w.x-1", NULL), SA_OK);
    assert_int_equal(p.slot, 0);
    sa_layout_level_filter(s, sizeof(s), 0, 600000, 0);
    assert_string_equal(s, "sendat.task.600000.w.*");
    sa_layout_window_all_filter(s, sizeof(s), 0, 600000);
    assert_string_equal(s, "sendat.task.600000.>");
    sa_layout_durable(s, sizeof(s), 600000, 610000);
    assert_string_equal(s, "s610000");
    sa_layout_durable(s, sizeof(s), 600000, 0);
    assert_string_equal(s, "w600000");
    assert_int_equal(sa_layout_window_subject(s, 10, 0, 600000, "abc"), -1);
}

/* Shard k > 0 has its own stream, subjects and claims bucket; parsing finds the shard again. */
static void
test_shard_names(void **state)
{
    char s[SA_SUBJECT_MAX];
    struct sa_place p;

    (void)state;
    sa_layout_stream(s, sizeof(s), 0);
    assert_string_equal(s, "SENDAT_TASKS");
    sa_layout_stream(s, sizeof(s), 3);
    assert_string_equal(s, "SENDAT_TASKS_3");
    sa_layout_claims_bucket(s, sizeof(s), 0);
    assert_string_equal(s, "sendat_claims");
    sa_layout_claims_bucket(s, sizeof(s), 12);
    assert_string_equal(s, "sendat_claims_12");
    sa_layout_stream_subjects(s, sizeof(s), 0);
    assert_string_equal(s, "sendat.task.*.*.*");
    sa_layout_stream_subjects(s, sizeof(s), 3);
    assert_string_equal(s, "sendat.shard.3.*.*.*");
    sa_layout_meta_key(s, sizeof(s), "cursor", 0);
    assert_string_equal(s, "cursor");
    sa_layout_meta_key(s, sizeof(s), "cursor", 5);
    assert_string_equal(s, "cursor.5");
    sa_layout_slot_subject(s, sizeof(s), 3, 600000, 610000, "abc");
    assert_string_equal(s, "sendat.shard.3.600000.610000.abc");
    assert_int_equal(sa_layout_parse_subject(&p, s, NULL), SA_OK);
    assert_int_equal(p.shard, 3);
    assert_int_equal(p.window, 600000);
    assert_int_equal(p.slot, 610000);
    assert_string_equal(p.id, "abc");
    sa_layout_window_subject(s, sizeof(s), 0, 600000, "abc");
    assert_int_equal(sa_layout_parse_subject(&p, s, NULL), SA_OK);
    assert_int_equal(p.shard, 0);
    sa_layout_level_filter(s, sizeof(s), 7, 600000, 0);
    assert_string_equal(s, "sendat.shard.7.600000.w.*");
    sa_layout_window_all_filter(s, sizeof(s), 7, 600000);
    assert_string_equal(s, "sendat.shard.7.600000.>");
    sa_layout_id_filter(s, sizeof(s), 7, "abc");
    assert_string_equal(s, "sendat.shard.7.*.*.abc");
    for (const char **bad =
             (const char *[]){"sendat.shard.0.600000.w.a", "sendat.shard.01.600000.w.a",
                              "sendat.shard.64.600000.w.a", "sendat.shard.x.600000.w.a",
                              "sendat.shard.600000.w.a", "sendat.shard..600000.w.a", NULL};
         *bad; bad++)
        assert_int_equal(sa_layout_parse_subject(&p, *bad, NULL), SA_EINVAL);
}

/* The shard follows from the id alone, stays in range, and spreads ids evenly. */
static void
test_shard_of(void **state)
{
    struct sa_layout l;
    char id[SA_ID_MAX + 1];
    int count[5] = {0};

    (void)state;
    sa_layout_defaults(&l);
    assert_int_equal(sa_layout_shard_of(&l, "anything"), 0);
    l.shards = 5;
    for (int i = 0; i < 10000; i++) {
        sa_layout_id_new(id, sizeof(id), 1700000000000LL + i);
        int k = sa_layout_shard_of(&l, id);
        assert_true(k >= 0 && k < 5);
        assert_int_equal(sa_layout_shard_of(&l, id), k);
        count[k]++;
    }
    for (int k = 0; k < 5; k++)
        assert_true(count[k] > 1700 && count[k] < 2300);
}

/* A record without "shards=" (one shard, as before shards existed) is one shard; more are
 * written first, so a parser that wants "window_ms=" first refuses them. */
static void
test_layout_shards_record(void **state)
{
    struct sa_layout l;
    char text[160];

    (void)state;
    assert_int_equal(
        sa_layout_parse(&l, "window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000", NULL),
        SA_OK);
    assert_int_equal(l.shards, 1);
    sa_layout_format(text, sizeof(text), &l);
    assert_string_equal(text, "window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000");
    l.shards = 8;
    sa_layout_format(text, sizeof(text), &l);
    assert_string_equal(text,
                        "shards=8 window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000");
    assert_int_equal(sa_layout_parse(&l, text, NULL), SA_OK);
    assert_int_equal(l.shards, 8);
    assert_int_equal(sa_layout_parse(&l,
                                     "window_ms=600000 slot_ms=10000 ack_wait_ms=30000 "
                                     "lead_ms=2000 \n",
                                     NULL),
                     SA_OK); /* trailing white space, as before */
    for (const char **bad =
             (const char *[]){
                 "shards=0 window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000",
                 "shards=65 window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000",
                 "shards= 3 window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000",
                 "shards=+3 window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000",
                 "shards=99999999999 window_ms=600000 slot_ms=10000 ack_wait_ms=30000 "
                 "lead_ms=2000",
                 "window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000 junk",
                 "window_ms=600000 slot_ms=10000 ack_wait_ms=30000 lead_ms=2000 shards=3", NULL};
         *bad; bad++)
        assert_int_equal(sa_layout_parse(&l, *bad, NULL), SA_EINVAL);
}

static void
test_bad_subjects(void **state)
{
    static const char *bad[] = {"sendat.task",       "sendat.task.1.w",     "sendat.task.x.w.a",
                                "sendat.task.1.q.a", "sendat.task.1.w.a.b", "other.task.1.w.a",
                                "sendat.task.1.w.",  "sendat.task..w.a",    NULL};
    struct sa_place p;

    (void)state;
    for (int i = 0; bad[i]; i++)
        assert_int_equal(sa_layout_parse_subject(&p, bad[i], NULL), SA_EINVAL);
}

/* Subjects inside the stream's filter that no level's durable ever matches. */
static void
test_level_of(void **state)
{
    static const struct {
        const char *subject, *why;
    } unread[] = {
        {"sendat.task.abc.w.x", "not a time"},
        {"sendat.task.600001.w.x", "not a multiple"},
        {"sendat.task.0600000.w.x", "not a time"},
        {"sendat.task.600000.zz.x", "neither w nor"},
        {"sendat.task.600000.ww.x", "neither w nor"},
        {"sendat.task.600000.610001.x", "not a slot start"},
        {"sendat.task.600000.1200000.x", "not a slot start"},
        {"sendat.task.600000.590000.x", "not a slot start"},
        {"sendat.task.600000.0610000.x", "neither w nor"},
        {"sendat.task.0.0.x", "not a slot start"},
        {"sendat.task.600000.w", "not shaped"},
    };
    struct sa_err err = {0};
    int64_t w, s;

    (void)state;
    assert_int_equal(sa_layout_level_of(&L, "sendat.task.600000.w.x", &w, &s, NULL), SA_OK);
    assert_true(w == 600000 && s == 0);
    assert_int_equal(sa_layout_level_of(&L, "sendat.task.600000.1190000.a.b", &w, &s, NULL), SA_OK);
    assert_true(w == 600000 &&
                s == 1190000); /* a bad id is read, and dead-lettered by the puller */
    for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(sa_layout_level_of(&L, unread[i].subject, &w, &s, &err), SA_EINVAL);
        if (!strstr(err.msg, unread[i].why))
            fail_msg("%s: \"%s\" lacks \"%s\"", unread[i].subject, err.msg, unread[i].why);
    }
}

/* The park (consumer/wheel/park.h): a subject of three tokens below the prefix that no level
 * parses, and that only sa_layout_is_park reads. */
static void
test_park(void **state)
{
    char subject[SA_SUBJECT_MAX], filter[SA_SUBJECT_MAX], id[SA_ID_MAX + 1], msgid[SA_SUBJECT_MAX];
    struct sa_place p;
    int64_t w, slot;

    (void)state;
    sa_layout_park_subject(subject, sizeof(subject), 0, "order-7");
    assert_string_equal(subject, "sendat.task.park.k.order-7");
    sa_layout_park_filter(filter, sizeof(filter), 0);
    assert_string_equal(filter, "sendat.task.park.k.*");
    sa_layout_park_subject(subject, sizeof(subject), 3, "x");
    assert_string_equal(subject, "sendat.shard.3.park.k.x");
    assert_true(sa_layout_is_park(subject, id));
    assert_string_equal(id, "x");
    assert_true(sa_layout_is_park("sendat.task.park.k.order-7", NULL));
    assert_false(sa_layout_is_park("sendat.task.park.k.a~b", id)); /* not an id */
    assert_false(sa_layout_is_park("sendat.task.600000.w.x", id));
    assert_false(sa_layout_is_park("sendat.task.park.w.x", id));
    assert_int_equal(sa_layout_parse_subject(&p, "sendat.task.park.k.x", NULL), SA_EINVAL);
    assert_int_equal(sa_layout_level_of(&L, "sendat.task.park.k.x", &w, &slot, NULL), SA_EINVAL);
    sa_layout_park_msgid(msgid, sizeof(msgid), "x", 42);
    assert_string_equal(msgid, "k:x:42");
}

static void
test_ids(void **state)
{
    char id[SA_ID_MAX + 1], long_id[80];

    (void)state;
    sa_layout_id_new(id, sizeof(id), 1795340100123LL);
    assert_true(sa_layout_id_valid(id));
    assert_int_equal(sa_layout_id_due(id), 1795340100123LL);
    assert_int_equal(sa_layout_id_due("order-42"), 0);
    assert_int_equal(sa_layout_id_due("order"), 0);
    assert_true(sa_layout_id_valid("Order_42-a"));
    assert_false(sa_layout_id_valid(""));
    assert_false(sa_layout_id_valid("a.b"));
    assert_false(sa_layout_id_valid("a*"));
    assert_false(sa_layout_id_valid("a b"));
    memset(long_id, 'a', 65);
    long_id[65] = '\0';
    assert_false(sa_layout_id_valid(long_id));
    long_id[64] = '\0';
    assert_true(sa_layout_id_valid(long_id));
}

static void
test_layout_record(void **state)
{
    struct sa_layout l2;
    char text[160];

    (void)state;
    sa_layout_format(text, sizeof(text), &L);
    assert_int_equal(sa_layout_parse(&l2, text, NULL), SA_OK);
    assert_true(sa_layout_equal(&l2, &L));
    assert_int_equal(
        sa_layout_parse(&l2, "window_ms=600000 slot_ms=7000 ack_wait_ms=30000 lead_ms=2000", NULL),
        SA_EINVAL);
    assert_int_equal(sa_layout_parse(&l2, "garbage", NULL), SA_EINVAL);
    assert_int_equal(
        sa_layout_parse(&l2, "window_ms=600000 slot_ms=10000 ack_wait_ms=5000 lead_ms=2000", NULL),
        SA_EINVAL);
}

static void
test_msgids(void **state)
{
    char a[SA_SUBJECT_MAX], b[SA_SUBJECT_MAX];

    (void)state;
    sa_layout_move_msgid(a, sizeof(a), "x", 17);
    sa_layout_move_msgid(b, sizeof(b), "x", 17);
    assert_string_equal(a, b);
    sa_layout_move_msgid(b, sizeof(b), "x", 18);
    assert_string_not_equal(a, b);
    sa_layout_retry_msgid(b, sizeof(b), "x", 17);
    assert_string_not_equal(a, b);
    sa_layout_dead_msgid(a, sizeof(a), "x", 17);
    assert_string_not_equal(a, b);
    sa_layout_replay_msgid(b, sizeof(b), "x", 17);
    assert_string_not_equal(a, b);
}

/* Straight into the slot only when the fleet takes it up a whole slot from now (defaults:
 * 10 s slots, 2 s lead): never into a slot that is pulled, over, or about to be. */
static void
test_book_slot(void **state)
{
    int64_t t = 1795340100000LL; /* a slot start */

    (void)state;
    assert_int_equal(sa_layout_book_slot(&L, t + 10000, t - 2000), t + 10000);
    assert_int_equal(sa_layout_book_slot(&L, t + 19999, t - 2000), t + 10000);
    assert_int_equal(sa_layout_book_slot(&L, t + 10000, t - 1999), 0);
    assert_int_equal(sa_layout_book_slot(&L, t + 12000, t), 0); /* its slot starts in 10 s */
    assert_int_equal(sa_layout_book_slot(&L, t + 25000, t), t + 20000);
    assert_int_equal(sa_layout_book_slot(&L, t + 5000, t), 0);
    assert_int_equal(sa_layout_book_slot(&L, t - 5000, t), 0); /* past due */
    assert_int_equal(sa_layout_book_slot(&L, t + 86400000LL + 3, t), t + 86400000LL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor),
        cmocka_unit_test(test_subjects),
        cmocka_unit_test(test_shard_names),
        cmocka_unit_test(test_shard_of),
        cmocka_unit_test(test_layout_shards_record),
        cmocka_unit_test(test_bad_subjects),
        cmocka_unit_test(test_level_of),
        cmocka_unit_test(test_park),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_layout_record),
        cmocka_unit_test(test_msgids),
        cmocka_unit_test(test_book_slot),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
