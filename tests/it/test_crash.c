/* Nothing lost when a member dies (invariant 1): kill -9 of a consumer holding tasks, and
 * SIGTERM of one, while another consumer runs. Killed: the survivor finds it dead and has its
 * tasks delivered again, or the ack wait brings them (test_failover.c proves which). Terminated:
 * it exits 0 and hands its tasks over at once, those waiting unread in its pull inbox too,
 * though a slow send keeps it alive. Never twice. And a "sending" claim of a member's own
 * instance whose copy of the task it no longer holds (its answer was lost) is not waited for. */
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "claim.h"
#include "claimmac.h"
#include "fixture.h"
#include "keyring.h"
#include "layout.h"

#define N 50
#define ACK_WAIT_MS 5000
#define INBOX_N 20
#define WINDOW_MS 10000 /* fx_start's --window */
#define HANG_MS 8000    /* how long the receiver keeps c0's one send waiting (scaled) */

static struct fx F;
static char ids[N][80];

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= N;
}

static int
c0_holds_all(void *arg)
{
    (void)arg;
    return fx_consumer_metric(&F, 0, "sendat_held") >= N;
}

/* Schedules N tasks due together with only c0 running, waits until c0 holds every one (its
 * /metrics says so, well before they are due), then starts c1. Returns the due time. */
static int64_t
c0_holds_tasks(void)
{
    int64_t due;

    fx_consumer(&F, 0, NULL);
    /* one batch process books all 50 (50 sendat processes took over 9 s at load 27) */
    due = test_now_ms() + (int64_t)(9000 * test_timeout_multiplier());
    assert_int_equal(fx_schedule_many(&F, due, "/k", N, ids), 0);
    /* c0 takes up the slot a lead (1 s) before it starts: it holds them before they are due */
    if (!wait_until(c0_holds_all, NULL,
                    (long)(due - 150 - test_now_ms()) / (long)test_timeout_multiplier())) {
        char *log = proc_read_file(F.consumers[0].err_path);
        fprintf(stderr, "c0's log:\n%s\n", log ? log : "(none)");
        free(log);
        fail_msg("c0 held %ld of %d tasks 150 ms before they were due",
                 fx_consumer_metric(&F, 0, "sendat_held"), N);
    }
    fx_consumer(&F, 1, NULL);
    return due;
}

static int64_t
check_once_and_max_lateness(int64_t due)
{
    static int seen[N];
    struct receiver_hit h;
    int64_t worst = 0;

    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        assert_int_equal(sscanf(h.path, "/k/%d", &k), 1);
        seen[k]++;
        if (h.at_ms - due > worst)
            worst = h.at_ms - due;
        assert_true(h.at_ms >= due);
        receiver_hit_free(&h);
    }
    for (int k = 0; k < N; k++)
        if (seen[k] != 1)
            fail_msg("task %d arrived %d times", k, seen[k]);
    return worst;
}

static void
test_kill9_loses_nothing(void **state)
{
    int64_t due, worst;

    (void)state;
    fx_start(&F, 0);
    due = c0_holds_tasks();
    proc_kill9(&F.consumers[0]);
    assert_true(wait_until(all_arrived, NULL, 60000));
    worst = check_once_and_max_lateness(due);
    fprintf(stderr, "after kill -9: worst lateness %" PRId64 " ms (ack wait %d ms)\n", worst,
            ACK_WAIT_MS);
    assert_true(worst <= ACK_WAIT_MS + (int64_t)(3000 * test_timeout_multiplier()));
    fx_finish(&F);
}

static void
test_sigterm_hands_over(void **state)
{
    int64_t due, worst;
    int rc;

    (void)state;
    fx_start(&F, 0);
    due = c0_holds_tasks();
    proc_signal(&F.consumers[0], SIGTERM);
    if ((rc = proc_wait(&F.consumers[0], 30000)) != 0) {
        char *log = proc_read_file(F.consumers[0].err_path);
        fprintf(stderr, "consumer c0 exited %d after SIGTERM:\n%s\n", rc, log ? log : "");
        free(log);
    }
    assert_int_equal(rc, 0);
    assert_true(wait_until(all_arrived, NULL, 60000));
    worst = check_once_and_max_lateness(due);
    fprintf(stderr, "after SIGTERM: worst lateness %" PRId64 " ms\n", worst);
    fx_finish(&F);
}

static int
inbox_tasks_arrived_or_c0_gone(void *arg)
{
    int seen[INBOX_N];

    (void)arg;
    return fx_arrivals(&F, "/i/", seen, INBOX_N) == INBOX_N || !proc_alive(&F.consumers[0]);
}

/* Waits until at least `room` ms are left in the current window (WINDOW_MS, epoch-aligned as
 * sa_layout_window is), so what follows books into the level being pulled. */
static void
window_with_room(int64_t room)
{
    int64_t now = test_now_ms(), start = now + WINDOW_MS - now % WINDOW_MS;

    if (WINDOW_MS - now % WINDOW_MS < room)
        assert_true(wait_until_ms(start + 50, 2 * WINDOW_MS));
}

static void
book_inbox_tasks(int64_t due)
{
    char path[300], out[8192], err[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/inbox.ndjson", F.dir);
    assert_non_null(f = fopen(path, "w"));
    for (int k = 0; k < INBOX_N; k++)
        fprintf(f, "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/i/%d\",\"data\":\"{}\"}\n",
                due / 1000, (int)(due % 1000), receiver_url(F.recv), k);
    fclose(f);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
}

/* c0's "handed_back=" from its inbox_closed line, -1 without one. */
/* The number after key= on c0's first line with event=NAME, or -1. */
static long
c0_logged(const char *event, const char *key)
{
    char *log = proc_read_file(F.consumers[0].err_path), *p;
    long v = -1;

    if (log && (p = strstr(log, event)) && (p = strstr(p, key)))
        v = strtol(p + strlen(key), NULL, 10);
    free(log);
    return v;
}

/* Tasks the server pushed into c0's pull inbox while it could not read them (SIGSTOP) are
 * nakked at SIGTERM (or released from its wheel, if its reader took them in first), while c0 stays
 * alive finishing a hung send: c1 sends them at their due time. Before, they waited for c0's exit
 * and its rescue, or the ack wait (60 s here). */
static void
test_sigterm_hands_back_its_inbox(void **state)
{
    char *c0_env[] = {"SENDAT_DRAIN_TIMEOUT=300s", "SENDAT_HTTP_TIMEOUT=300s", NULL};
    int c0 = 0, c1 = 1, seen[INBOX_N], rc;
    /* the bound tells "sent at the due time" from "sent after c0's hung send" (HANG_MS, then
     * its exit and rescue) on a loaded machine: a quarter of it */
    int64_t due, stop_ms, cont_ms,
        worst = 0, bound = (int64_t)(HANG_MS / 4 * test_timeout_multiplier()), window;
    struct receiver_hit h;
    char id[80];
    long inbox, released;

    (void)state;
    fx_ack_wait = "60s";
    fx_start(&F, 0);
    fx_ack_wait = "5s";
    receiver_hang(F.recv, "/slow", (int)(HANG_MS * test_timeout_multiplier()));
    fx_consumer(&F, c0, c0_env);
    assert_true(fx_consumer_ready(&F, c0, 20000));
    window_with_room(9500); /* the most room: c0's send and c1's start fit on a loaded machine */
    window = test_now_ms() / WINDOW_MS;
    /* due now: c0 sends it, and its answer is hung, so c0 drains long after SIGTERM */
    assert_int_equal(fx_schedule(&F, test_now_ms(), "/slow", id, sizeof(id)), 0);
    assert_true(receiver_wait(F.recv, "/slow", 1, 10000));
    fx_consumer(&F, c1, NULL);
    assert_true(fx_consumer_ready(&F, c1, 20000));
    if ((test_now_ms() + 2500) / WINDOW_MS != window) /* the booking below takes well under 1 s */
        fail_msg("too slow to book into the window /slow is in: the test would prove nothing");
    assert_int_equal(proc_signal(&F.consumers[c0], SIGSTOP), 0);
    stop_ms = test_now_ms();
    due = stop_ms + 1500;
    book_inbox_tasks(due); /* both members' open requests get them, c0's stay in its socket */
    cont_ms = test_now_ms();
    fprintf(stderr, "c0 stopped for %" PRId64 " ms\n", cont_ms - stop_ms);
    assert_int_equal(proc_signal(&F.consumers[c0], SIGTERM), 0);
    assert_int_equal(proc_signal(&F.consumers[c0], SIGCONT), 0);
    assert_true(wait_until(inbox_tasks_arrived_or_c0_gone, NULL, 60000));
    if (!proc_alive(&F.consumers[c0])) {
        fx_print_log(&F, c0);
        fail_msg("c0 exited before c1 sent the %d tasks: %d arrived", INBOX_N,
                 fx_arrivals(&F, "/i/", seen, INBOX_N));
    }
    for (size_t i = 0; i < receiver_count(F.recv); i++) {
        int k = -1;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        if (sscanf(h.path, "/i/%d", &k) == 1) {
            int64_t late = h.at_ms - (due > cont_ms ? due : cont_ms);
            worst = late > worst ? late : worst;
            assert_true(h.at_ms >= due);
        }
        receiver_hit_free(&h);
    }
    if ((rc = proc_wait(&F.consumers[c0], (int)(HANG_MS + 30000))) != 0)
        fx_print_log(&F, c0);
    assert_int_equal(rc, 0);
    inbox = c0_logged("event=inbox_closed", "handed_back=");
    released = c0_logged("event=draining", "released=");
    fprintf(stderr,
            "c0 handed back %ld from its inbox and released %ld it held; worst lateness %" PRId64
            " ms (bound %" PRId64 " ms)\n",
            inbox, released, worst, bound);
    /* after SIGCONT c0's reader may take the inbox's tasks into its wheel before the drain
     * closes the inbox: then they are released from there, handed back all the same */
    if (inbox < 1 && released < 1) {
        fx_print_log(&F, c0);
        fx_print_log(&F, c1);
        fail_msg("c0 had none of the tasks, in its inbox or held: the test proved nothing");
    }
    assert_true(worst <= bound);
    /* c0 kept its connection through SIGSTOP, SIGTERM and SIGCONT (the signal thread) */
    assert_int_equal(proc_count_lines(F.consumers[c1].err_path, "event=member_dead member=c0"), 0);
    assert_int_equal(fx_arrivals(&F, "/i/", seen, INBOX_N), INBOX_N);
    for (int k = 0; k < INBOX_N; k++)
        if (seen[k] != 1)
            fail_msg("task %d arrived %d times", k, seen[k]);
    fx_finish(&F);
}

/* Writes, with the key, a "sending" claim for id by consumer name's instance (c0's running one
 * if instance is NULL, as c0 itself leaves one whose create landed while its answer was lost
 * and whose copy of the task was handed back: a server wedged by a full disk, issue 37.9). */
static void
forge_sending(const char *id, const char *name, const char *instance)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL, *members = NULL;
    struct sa_keyring *ring = NULL;
    struct sa_claim c = {.state = SA_CLAIM_SENDING, .attempt = 1, .at_ms = test_now_ms()};
    uint64_t rev = 0;
    int64_t until = test_now_ms() + 20000;

    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_KeyValue(&kv, js, SA_CLAIMS_BUCKET), NATS_OK);
    assert_int_equal(js_KeyValue(&members, js, SA_MEMBERS_BUCKET), NATS_OK);
    snprintf(c.consumer, sizeof(c.consumer), "%s", name);
    if (instance)
        snprintf(c.instance, sizeof(c.instance), "%s", instance);
    while (!instance && !fx_member_instance(members, "c0", c.instance, sizeof(c.instance)))
        assert_true(wait_until_ms(test_now_ms() + 100, until - test_now_ms()));
    assert_int_equal(sa_keyring_load(&ring, F.key, NULL), SA_OK);
    assert_int_equal(sa_claimmac_use(ring, NULL), SA_OK);
    assert_int_equal(sa_claim_create(kv, id, &c, &rev, NULL), SA_OK);
    sa_claimmac_forget();
    sa_keyring_free(ring);
    kvStore_Destroy(members);
    kvStore_Destroy(kv);
    fx_js_close(&nc, &js);
}

/* A "sending" claim naming this very consumer's instance, with no copy of the task claimed in
 * the process, is stale (issue 37.9): its task is not held for ever by a send "under way" that
 * is not. The at-least-once task is taken over and sent once; the at-most-once one is
 * dead-lettered as "outcome unknown", never sent. Before, both waited for a live holder: c0
 * itself, until it was restarted. */
static void
test_own_stale_sending_claim(void **state)
{
    char out[512], err[512], least[80], most[80], at[40], url[300];
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    due = test_now_ms() + (int64_t)(6000 * test_timeout_multiplier());
    assert_int_equal(fx_schedule(&F, due, "/own/least", least, sizeof(least)), 0);
    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due / 1000, (int)(due % 1000));
    snprintf(url, sizeof(url), "%s/own/most", receiver_url(F.recv));
    assert_int_equal(fx_sendat(&F, most, sizeof(most), err, sizeof(err), "schedule", "--at", at,
                               "--webhook", url, "--data", "{}", "--at-most-once", NULL),
                     0);
    most[strcspn(most, "\n")] = '\0';
    forge_sending(least, "c0", NULL);
    forge_sending(most, "c0", NULL);
    if (!receiver_wait(F.recv, "/own/least", 1, 30000))
        fx_print_log(&F, 0);
    assert_int_equal(receiver_count_path(F.recv, "/own/least"), 1);
    assert_true(fx_status_says(&F, most, "outcome unknown", 30000));
    assert_true(wait_until_ms(test_now_ms() + 3000, 10000)); /* time for a second send */
    assert_int_equal(receiver_count_path(F.recv, "/own/least"), 1);
    assert_int_equal(receiver_count_path(F.recv, "/own/most"), 0);
    snprintf(out, sizeof(out), "task=%s attempt=1 reason=\"outcome unknown: this consumer's", most);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, out), 1);
    for (int i = 0; i < 2; i++) {
        snprintf(out, sizeof(out), "event=own_claim_stale task=%s", i ? most : least);
        assert_true(proc_count_lines(F.consumers[0].err_path, out) > 0);
    }
    fx_finish(&F);
}

/* schedule an at-most-once webhook to path due at due_ms; the id into id. */
static void
schedule_most(int64_t due_ms, const char *path, char *id, size_t cap)
{
    char at[40], url[300], err[512];

    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due_ms / 1000, (int)(due_ms % 1000));
    snprintf(url, sizeof(url), "%s%s", receiver_url(F.recv), path);
    assert_int_equal(fx_sendat(&F, id, cap, err, sizeof(err), "schedule", "--at", at, "--webhook",
                               url, "--data", "{}", "--at-most-once", NULL),
                     0);
    id[strcspn(id, "\n")] = '\0';
}

/* The two other ways an at-most-once task meets a "sending" claim it did not write, each with a
 * true outcome. Given back (no consumer, no instance: its attempt failed before any byte left
 * and the stream refused its retry, outcome.c) it is taken over and sent; before, it was
 * dead-lettered "outcome unknown: a consumer died while sending", although nothing had been
 * sent and no consumer had died. A holder that no longer answers (here a made-up c9, as one
 * stopped before its outcome write landed) is named in the reason, which says it died or
 * stopped, maybe after sending; before, "a consumer died" (also of one merely stopped). */
static void
test_at_most_once_unknown_is_true(void **state)
{
    char out[2048], back[80], gone[80];
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    due = test_now_ms() + (int64_t)(6000 * test_timeout_multiplier());
    schedule_most(due, "/amo/back", back, sizeof(back));
    schedule_most(due, "/amo/gone", gone, sizeof(gone));
    forge_sending(back, "", "");
    forge_sending(gone, "c9", "0123456789abcdef");
    if (!receiver_wait(F.recv, "/amo/back", 1, 30000))
        fx_print_log(&F, 0);
    assert_int_equal(receiver_count_path(F.recv, "/amo/back"), 1);
    assert_true(fx_status_says(&F, gone, "outcome unknown", 30000));
    assert_true(wait_until_ms(test_now_ms() + 3000, 10000)); /* time for a second send */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", gone, NULL), 0);
    fprintf(stderr, "%s", out);
    assert_non_null(strstr(out, "claimed by c9 (instance 0123456789abcdef), which no longer "
                                "answers: it died or stopped before its outcome was recorded"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", back, NULL), 4);
    assert_int_equal(receiver_count_path(F.recv, "/amo/back"), 1);
    assert_int_equal(receiver_count_path(F.recv, "/amo/gone"), 0);
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_loses_nothing),
        cmocka_unit_test(test_sigterm_hands_over),
        cmocka_unit_test(test_sigterm_hands_back_its_inbox),
        cmocka_unit_test(test_own_stale_sending_claim),
        cmocka_unit_test(test_at_most_once_unknown_is_true),
    };

    return FX_RUN(tests);
}
