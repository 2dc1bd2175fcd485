/* Key rotation in any order of reloads loses nothing (security review, issue 11.1). A member
 * whose key file does not have the new key yet meets tasks the producer sealed with it, and
 * retries a reloaded member re-sealed with it: it hands them back to the fleet instead of
 * dead-lettering them, and once its file has the key it reads it again by itself. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <sodium.h>

#include "check.h"
#include "envelope.h"
#include "fixture.h"
#include "keyring.h"
#include "layout.h"

#define N_OLD 6  /* sealed with the old key, each failing twice: retries re-sealed mid-rotation */
#define N_NEW 12 /* sealed with the new key while one member does not have it */
#define N_LATE 6 /* sealed with the new key once only the stale member is left */

static struct fx F;
static char stale_key[300], stale_env[320];

static int
line_in(void *arg)
{
    const char **what = arg;
    return proc_count_lines(what[0], what[1]) > 0;
}

static void
wait_line(const char *path, const char *needle)
{
    const char *what[] = {path, needle};
    if (!wait_until(line_in, what, 30000))
        fail_msg("no line with \"%s\" in %s", needle, path);
}

static int
arrived(void *arg)
{
    return receiver_count(F.recv) >= (size_t)(intptr_t)arg;
}

static void
copy_file(const char *from, const char *to)
{
    char *text = proc_read_file(from);
    FILE *f;

    assert_non_null(text);
    f = fopen(to, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(to, 0600);
    free(text);
}

/* Starts consumer i on the stale copy of the key file: the fixture puts its own
 * SENDAT_KEY_FILE first in the environment, and the first one is what getenv finds, so the
 * fixture's entry names the stale file while the consumer starts. */
static void
start_stale(int i, char *const extra[])
{
    char keep[sizeof(F.env_key)];

    memcpy(keep, F.env_key, sizeof(keep));
    snprintf(F.env_key, sizeof(F.env_key), "%s", stale_env);
    fx_consumer(&F, i, extra);
    memcpy(F.env_key, keep, sizeof(keep));
}

static void
schedule_n(int n, const char *prefix, int64_t due_ms)
{
    char path[64], id[SA_ID_MAX + 1];

    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof(path), "/%s/%d", prefix, k);
        if (!strcmp(prefix, "old"))
            receiver_respond(F.recv, path, 500, 2, NULL);
        assert_int_equal(fx_schedule(&F, due_ms + k * 100, path, id, sizeof(id)), 0);
    }
}

static void
check_each_once(const char *prefix, int n)
{
    char path[64];

    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof(path), "/%s/%d", prefix, k);
        size_t want = !strcmp(prefix, "old") ? 3 : 1; /* two 500s, then the 200 */
        if (receiver_count_path(F.recv, path) != want)
            fail_msg("%s arrived %zu times, want %zu", path, receiver_count_path(F.recv, path),
                     want);
    }
}

static void
test_rotation_in_any_reload_order(void **state)
{
    char out[8192];
    char *stale[] = {"SENDAT_RETRY_BASE_MS=200", "SENDAT_RETRY_MAX_MS=400", NULL};
    char *fresh[] = {"SENDAT_RETRY_BASE_MS=200", "SENDAT_RETRY_MAX_MS=400", NULL};
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    snprintf(stale_key, sizeof(stale_key), "%s/stale.key", F.dir);
    snprintf(stale_env, sizeof(stale_env), "SENDAT_KEY_FILE=%s", stale_key);
    copy_file(F.key, stale_key); /* c0's copy of the ring stays at the old key for now */
    start_stale(0, stale);
    fx_consumer(&F, 1, fresh);
    wait_line(F.consumers[0].err_path, "event=started");
    wait_line(F.consumers[1].err_path, "event=started");

    due = test_now_ms() + 4000;
    schedule_n(N_OLD, "old", due);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "keygen", F.key, "--append", NULL),
                     0);
    proc_signal(&F.consumers[1], SIGHUP);
    wait_line(F.consumers[1].err_path, "event=reloaded keys=2");
    schedule_n(N_NEW, "new", test_now_ms() + 1000);
    assert_true(wait_until(arrived, (void *)(intptr_t)(3 * N_OLD + N_NEW), 90000));

    copy_file(F.key, stale_key); /* the new key reaches c0's file: no SIGHUP, it reads it itself */
    proc_signal(&F.consumers[1], SIGTERM);
    assert_int_equal(proc_wait(&F.consumers[1], 30000), 0);
    schedule_n(N_LATE, "late", test_now_ms() + 1000);
    assert_true(wait_until(arrived, (void *)(intptr_t)(3 * N_OLD + N_NEW + N_LATE), 90000));

    assert_int_equal(fx_stop_consumers(&F), 0);
    check_each_once("old", N_OLD);
    check_each_once("new", N_NEW);
    check_each_once("late", N_LATE);
    assert_true(fx_counter(&F, 0, "key_waits") > 0); /* c0 did meet keys it did not have */
    assert_int_equal(fx_counter(&F, 0, "dead"), 0);
    assert_int_equal(fx_counter(&F, 1, "dead"), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "list", "--json", NULL), 0);
    assert_null(strstr(out, "unknown key id"));
    fx_stop(&F);
}

/* Issue 28, item 10: keygen into a folder that does not exist makes it (mode 0750) and says
 * so; a folder it cannot make is named with what to do. */
static void
test_keygen_makes_its_folder(void **state)
{
    char path[400], folder[360], out[256], err[1024];
    struct stat st;

    (void)state;
    fx_start(&F, 0);
    snprintf(folder, sizeof(folder), "%s/etc/sendat", F.dir);
    snprintf(path, sizeof(path), "%s/key", folder);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "keygen", path, NULL), 0);
    assert_non_null(strstr(err, "made folder"));
    assert_int_equal(stat(folder, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0750);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    snprintf(path, sizeof(path), "%s/key/inside/key", folder); /* a file where a folder goes */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "keygen", path, NULL), 2);
    assert_non_null(strstr(err, "is not a folder"));
    fx_stop(&F);
}

#define N_JUNK 1000
#define N_AMID 5

/* Junk that looks sealed under made-up key ids, into window w (issue 24). */
static void
publish_junk(int64_t w)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsPubOptions po;
    char subject[SA_SUBJECT_MAX], id[32];
    uint8_t junk[1 + SA_KID_BYTES + 24 + 64];

    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    for (int k = 0; k < N_JUNK; k++) {
        randombytes_buf(junk, sizeof(junk));
        junk[0] = SA_ENVELOPE_VERSION;
        snprintf(id, sizeof(id), "junk-%d", k);
        sa_layout_window_subject(subject, sizeof(subject), 0, w, id);
        assert_int_equal(js_PublishAsync(js, subject, junk, (int)sizeof(junk), NULL), NATS_OK);
    }
    jsPubOptions_Init(&po);
    po.MaxWait = 30000;
    assert_int_equal(js_PublishAsyncComplete(js, &po), NATS_OK);
    fx_js_close(&nc, &js);
}

static int
all_parked(void *arg)
{
    (void)arg;
    return fx_consumer_metric(&F, 0, "sendat_parked_total") >= N_JUNK + N_AMID;
}

/* A rotation amid junk (issue 24): tasks sealed with a key the only member lacks wait in the
 * park among 1,000 junk messages (the park holds no level's places, and its own max-ack-pending
 * is more than junk fills), and are sent once the key reaches the member's file: its next reading
 * of the file (at most every 10 s) has the park come round at once. */
static void
test_rotation_amid_junk(void **state)
{
    char out[8192];
    char *stale[] = {"SENDAT_MAX_ACK_PENDING=200", NULL};
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    snprintf(stale_key, sizeof(stale_key), "%s/stale.key", F.dir);
    snprintf(stale_env, sizeof(stale_env), "SENDAT_KEY_FILE=%s", stale_key);
    copy_file(F.key, stale_key);
    start_stale(0, stale);
    wait_line(F.consumers[0].err_path, "event=started");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "keygen", F.key, "--append", NULL),
                     0);
    due = test_now_ms() + 3000;
    publish_junk(due / 10000 * 10000); /* the window of the tasks (fixture: 10 s) */
    schedule_n(N_AMID, "amid", due);
    if (!wait_until(all_parked, NULL, 30000)) { /* the tasks too, not only the junk */
        fx_print_log(&F, 0);
        fail_msg("parked %ld of %d", fx_consumer_metric(&F, 0, "sendat_parked_total"),
                 N_JUNK + N_AMID);
    }
    copy_file(F.key, stale_key); /* the key arrives; no SIGHUP: the member reads it itself */
    if (!wait_until(arrived, (void *)(intptr_t)N_AMID, 90000)) {
        fx_print_log(&F, 0);
        fail_msg("%zu of %d tasks sent after the key arrived", receiver_count(F.recv), N_AMID);
    }
    wait_line(F.consumers[0].err_path, "event=park_redelivered");
    assert_int_equal(fx_stop_consumers(&F), 0);
    check_each_once("amid", N_AMID);
    assert_true(fx_counter(&F, 0, "parked") >= N_JUNK + N_AMID);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rotation_in_any_reload_order),
                                       cmocka_unit_test(test_keygen_makes_its_folder),
                                       cmocka_unit_test(test_rotation_amid_junk)};

    return FX_RUN(tests);
}
