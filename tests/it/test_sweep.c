/* Tasks the fleet never reads are found and dead-lettered (invariant 5). Four messages inside
 * the stream's filter that no level's durable matches (a window that is not a number, a window
 * off by 1 ms, an unknown level, a window behind the catch-up cursor) are published raw: the
 * consumers' sweep dead-letters each with a reason naming the problem and deletes it from the
 * task stream, and `sendat stats` counts 4 (two consumers, one sweeping at a time), while a
 * task due soon is delivered and one due later stays in the stream. The reader the sweep walks
 * with is checked against a stream with holes. */
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
#include "natsconn.h"
#include "sweepread.h"

#define N_JUNK 4

static struct fx F;
static natsConnection *nc;
static jsCtx *js;
static char junk[N_JUNK][SA_SUBJECT_MAX];
static const char *const why[N_JUNK] = {
    "the window is not a time in ms", "is not a multiple of window_ms",
    "the level is neither w nor a slot start", "is before the catch-up cursor"};

static int64_t
cursor(void)
{
    kvStore *meta = NULL;
    kvEntry *e = NULL;
    int64_t v;

    assert_int_equal(js_KeyValue(&meta, js, SA_META_BUCKET), NATS_OK);
    assert_int_equal(kvStore_Get(&e, meta, "cursor"), NATS_OK);
    v = strtoll(kvEntry_ValueString(e), NULL, 10);
    kvEntry_Destroy(e);
    kvStore_Destroy(meta);
    return v;
}

static void
publish_junk(void)
{
    int64_t ahead = (test_now_ms() / 10000 + 3) * 10000; /* three windows ahead (fixture: 10 s) */

    snprintf(junk[0], SA_SUBJECT_MAX, "sendat.task.abc.w.x");
    snprintf(junk[1], SA_SUBJECT_MAX, "sendat.task.%" PRId64 ".w.off1", ahead + 1);
    snprintf(junk[2], SA_SUBJECT_MAX, "sendat.task.%" PRId64 ".zz.lvl", ahead);
    snprintf(junk[3], SA_SUBJECT_MAX, "sendat.task.%" PRId64 ".w.old", cursor() - 50000);
    for (int i = 0; i < N_JUNK; i++)
        assert_int_equal(js_Publish(NULL, js, junk[i], "sealed?", 7, NULL, NULL), NATS_OK);
}

static int
in_stream(const char *subject)
{
    natsMsg *m = NULL;
    natsStatus s = js_GetLastMsg(&m, js, SA_TASKS_STREAM, subject, NULL, NULL);

    natsMsg_Destroy(m);
    return s == NATS_OK;
}

/* The reason of the dead letter whose source is subject, into out ("" if none yet). */
static void
dead_reason(const char *subject, char *out, size_t cap)
{
    jsStreamInfo *si = NULL;
    uint64_t last = 0;

    out[0] = '\0';
    if (js_GetStreamInfo(&si, js, SA_DLQ_STREAM, NULL, NULL) == NATS_OK)
        last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    for (uint64_t seq = 1; seq <= last; seq++) {
        natsMsg *m = NULL;
        const char *src = NULL, *reason = NULL;
        if (js_GetMsg(&m, js, SA_DLQ_STREAM, seq, NULL, NULL) == NATS_OK &&
            natsMsgHeader_Get(m, "Sendat-Source", &src) == NATS_OK && !strcmp(src, subject) &&
            natsMsgHeader_Get(m, "Sendat-Reason", &reason) == NATS_OK)
            snprintf(out, cap, "%s", reason);
        natsMsg_Destroy(m);
    }
}

static int
all_swept(void *arg)
{
    char reason[300];

    (void)arg;
    for (int i = 0; i < N_JUNK; i++) {
        dead_reason(junk[i], reason, sizeof(reason));
        if (!reason[0] || in_stream(junk[i]))
            return 0;
    }
    return 1;
}

static int
stats_count(void *arg)
{
    char out[8192], err[1024], want[64];

    snprintf(want, sizeof(want), "unread tasks dead-lettered: %d ", (int)(intptr_t)arg);
    return fx_sendat(&F, out, sizeof(out), err, sizeof(err), "stats", NULL) == 0 &&
           strstr(out, want);
}

static void
test_unread_tasks_are_dead_lettered(void **state)
{
    char *env[] = {"SENDAT_SWEEP_INTERVAL=1s", NULL};
    char id[80], later[80], reason[300], subject[SA_SUBJECT_MAX];

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    publish_junk();
    assert_int_equal(fx_schedule(&F, test_now_ms() + 3000, "/ok", id, sizeof(id)), 0);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 600000, "/later", later, sizeof(later)), 0);
    fx_consumer(&F, 0, env);
    fx_consumer(&F, 1, env); /* two members, one turn at a time: each found is counted once */
    if (!wait_until(all_swept, NULL, 30000)) {
        fx_print_log(&F, 0);
        fx_print_log(&F, 1);
        for (int i = 0; i < N_JUNK; i++) {
            dead_reason(junk[i], reason, sizeof(reason));
            fprintf(stderr, "%s: in stream %d, dead letter \"%s\"\n", junk[i], in_stream(junk[i]),
                    reason);
        }
    }
    assert_true(all_swept(NULL));
    for (int i = 0; i < N_JUNK; i++) {
        dead_reason(junk[i], reason, sizeof(reason));
        if (!strstr(reason, why[i]))
            fail_msg("%s: reason \"%s\" lacks \"%s\"", junk[i], reason, why[i]);
    }
    assert_true(wait_until(stats_count, (void *)(intptr_t)N_JUNK, 10000));
    assert_true(receiver_wait(F.recv, "/ok", 1, 30000));
    sa_layout_id_filter(subject, sizeof(subject), 0, later);
    assert_true(in_stream(subject)); /* well-formed and due later: the sweep leaves it */
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

/* Reads everything from sequence from on with the sweep's reader into seqs (up to cap);
 * checks that the subjects are the ones published (r<i> at sequence i) and that the reader
 * ends with "nothing more". Returns how many it read. */
static int
read_all(struct sa_nats *n, uint64_t from, uint64_t *seqs, int cap)
{
    struct sweepread *rd = NULL;
    char subject[SA_SUBJECT_MAX], want[SA_SUBJECT_MAX];
    uint64_t seq;
    natsStatus s;
    natsMsg *m = NULL;
    int got = 0;

    assert_int_equal(sweepread_open(&rd, n, "SENDAT_TASKS", "sendat.task.*.*.*", from,
                                    test_now_ms() + 60000, NULL),
                     SA_OK);
    while ((s = sweepread_next(rd, &seq, subject, sizeof(subject), &m)) == NATS_OK) {
        assert_non_null(m); /* the stored message itself, its body for the sweep to judge */
        natsMsg_Destroy(m);
        assert_true(got < cap);
        assert_true(got == 0 ? seq >= from : seq > seqs[got - 1]);
        snprintf(want, sizeof(want), "sendat.task.1.w.r%" PRIu64, seq);
        assert_string_equal(subject, want);
        seqs[got++] = seq;
    }
    assert_int_equal(s, NATS_NOT_FOUND);
    sweepread_close(rd);
    return got;
}

#define N_READ 1500

/* A message whose own headers claim the server's words: another sequence and subject, and a
 * status. The reader must see it as what it is: r<N_READ + 1> at sequence N_READ + 1. */
static void
publish_forged(void)
{
    natsMsg *m = NULL;
    char subject[64];

    snprintf(subject, sizeof(subject), "sendat.task.1.w.r%d", N_READ + 1);
    assert_int_equal(natsMsg_Create(&m, subject, NULL, "", 0), NATS_OK);
    assert_int_equal(natsMsgHeader_Set(m, "Nats-Sequence", "3"), NATS_OK);
    assert_int_equal(natsMsgHeader_Set(m, "Nats-Subject", "sendat.task.1.w.r3"), NATS_OK);
    assert_int_equal(natsMsgHeader_Set(m, "Status", "404"), NATS_OK);
    assert_int_equal(js_PublishMsg(NULL, js, m, NULL, NULL), NATS_OK);
    natsMsg_Destroy(m);
}

/* The reader the sweep walks with: every stored message once, in order, across single holes,
 * a run of 300 deleted sequences and the growth of its rounds, from the start or from any
 * sequence, and nothing past the end; a message's own headers do not pass for the server's. */
static void
test_reader_sees_every_stored_message(void **state)
{
    static uint64_t seqs[N_READ];
    struct sa_nats *n = NULL;
    char subject[64];
    int kept = 0, got, from_mid = 0;

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    for (int i = 1; i <= N_READ; i++) { /* sequence i is r<i>: the stream is new */
        snprintf(subject, sizeof(subject), "sendat.task.1.w.r%d", i);
        assert_int_equal(js_Publish(NULL, js, subject, "x", 1, NULL, NULL), NATS_OK);
    }
    for (int i = 1; i <= N_READ; i++) {
        int gone = (i < 600 && i % 3 == 0) || (i >= 700 && i < 1000) || i == N_READ;

        if (gone)
            assert_int_equal(js_DeleteMsg(js, "SENDAT_TASKS", (uint64_t)i, NULL, NULL), NATS_OK);
        kept += !gone;
        from_mid += !gone && i >= 650;
    }
    publish_forged(); /* sequence N_READ + 1, claiming to be another */
    assert_int_equal(sa_nats_connect(&n, F.srv.url, "sweepread test", SA_INBOX_CONSUMER, NULL),
                     SA_OK);
    got = read_all(n, 1, seqs, N_READ);
    assert_int_equal(got, kept + 1);
    assert_int_equal(read_all(n, 650, seqs, N_READ), from_mid + 1);
    assert_int_equal(read_all(n, N_READ, seqs, N_READ), 1);
    assert_int_equal(read_all(n, N_READ + 2, seqs, N_READ), 0);
    sa_nats_close(n);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

#define N_FLOOD 1200

static int
dlq_at_least(void *arg)
{
    jsStreamInfo *si = NULL;
    uint64_t n = 0;

    if (js_GetStreamInfo(&si, js, SA_DLQ_STREAM, NULL, NULL) == NATS_OK)
        n = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    return n >= (uint64_t)(intptr_t)arg;
}

/* The largest found=N of the consumer's sweep lines. */
static long
most_found_in_a_turn(const char *path)
{
    char *log = proc_read_file(path);
    long most = 0;

    for (const char *p = log; p && (p = strstr(p, "event=sweep ")); p++) {
        const char *f = strstr(p, " found=");
        long n = f ? strtol(f + 7, NULL, 10) : 0;
        most = n > most ? n : most;
    }
    free(log);
    return most;
}

/* Issue 24: a flood of junk on subjects no level reads reaches the dead letters at most 1,000
 * a turn, each once, and its log lines are summarised. */
static void
test_unread_flood_is_dead_lettered_a_turn_at_a_time(void **state)
{
    char *env[] = {"SENDAT_SWEEP_INTERVAL=4s", NULL};
    char subject[SA_SUBJECT_MAX];
    jsPubOptions po;
    long lines;

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    for (int k = 0; k < N_FLOOD; k++) {
        snprintf(subject, sizeof(subject), "sendat.task.abc.w.j-%d", k);
        assert_int_equal(js_PublishAsync(js, subject, "sealed?", 7, NULL), NATS_OK);
    }
    jsPubOptions_Init(&po);
    po.MaxWait = 30000;
    assert_int_equal(js_PublishAsyncComplete(js, &po), NATS_OK);
    fx_consumer(&F, 0, env);
    if (!wait_until(dlq_at_least, (void *)(intptr_t)N_FLOOD, 90000))
        fx_print_log(&F, 0);
    assert_true(dlq_at_least((void *)(intptr_t)N_FLOOD));
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_false(dlq_at_least((void *)(intptr_t)(N_FLOOD + 1))); /* each once */
    assert_true(most_found_in_a_turn(F.consumers[0].err_path) <= 1000);
    lines = proc_count_lines(F.consumers[0].err_path, "event=unread_task ");
    if (lines > N_FLOOD / 10)
        fail_msg("%ld unread_task lines for %d messages: not summarised", lines, N_FLOOD);
    assert_true(proc_count_lines(F.consumers[0].err_path, "event=unread_task_summary") > 0);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

#define N_FAR 6

static char far[N_FAR][SA_SUBJECT_MAX];

static int
far_swept(void *arg)
{
    char reason[300];

    (void)arg;
    for (int i = 0; i < N_FAR; i++) {
        dead_reason(far[i], reason, sizeof(reason));
        if (!strstr(reason, "junk far ahead") || in_stream(far[i]))
            return 0;
    }
    return 1;
}

/* Issue 37.5: a keyless publisher fills the size limit with junk on well-formed subjects of a
 * window three years ahead, and every booking is refused (exit 7). The sweep opens what lies
 * beyond the next window when its walk passes it: the junk is dead-lettered ("junk far ahead")
 * within a few turns, the limit counts only tasks again, and a booking goes through; a real
 * task ten minutes ahead (60 windows here) opens and stays. */
static void
test_far_junk_is_found_and_frees_the_limit(void **state)
{
    char *env[] = {"SENDAT_SWEEP_INTERVAL=1s", NULL};
    char id[80], later[80], out[256], err[1024], subject[SA_SUBJECT_MAX];
    int64_t years = (test_now_ms() / 10000 + 3 * 365 * 8640) * 10000; /* a window, 3 years on */

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 600000, "/later", later, sizeof(later)), 0);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--max-tasks", "5", NULL), 0);
    for (int i = 0; i < N_FAR; i++) {
        snprintf(far[i], SA_SUBJECT_MAX, "sendat.task.%" PRId64 ".w.far-%d", years, i);
        assert_int_equal(js_Publish(NULL, js, far[i], "sealed?", 7, NULL, NULL), NATS_OK);
    }
    assert_int_equal(fx_schedule(&F, test_now_ms() + 60000, "/full", id, sizeof(id)), 7);
    fx_consumer(&F, 0, env);
    if (!wait_until(far_swept, NULL, 60000))
        fx_print_log(&F, 0);
    assert_true(far_swept(NULL));
    assert_int_equal(fx_schedule(&F, test_now_ms() + 60000, "/room", id, sizeof(id)), 0);
    sa_layout_id_filter(subject, sizeof(subject), 0, later);
    assert_true(in_stream(subject)); /* it opens: left for its window */
    assert_int_equal(fx_stop_consumers(&F), 0);
    fx_js_close(&nc, &js);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_sees_every_stored_message),
        cmocka_unit_test(test_unread_tasks_are_dead_lettered),
        cmocka_unit_test(test_unread_flood_is_dead_lettered_a_turn_at_a_time),
        cmocka_unit_test(test_far_junk_is_found_and_frees_the_limit),
    };
    return FX_RUN(tests);
}
