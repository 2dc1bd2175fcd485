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

#include "check.h"
#include "fixture.h"
#include "layout.h"

#define N_OLD 6  /* sealed with the old key, each failing twice: retries re-sealed mid-rotation */
#define N_NEW 12 /* sealed with the new key while one member does not have it */
#define N_LATE 6 /* sealed with the new key once only the stale member is left */

static struct fx F;
static char stale_key[300], stale_env[340];

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
    char *stale[] = {stale_env, "SENDAT_RETRY_BASE_MS=200", "SENDAT_RETRY_MAX_MS=400", NULL};
    char *fresh[] = {"SENDAT_RETRY_BASE_MS=200", "SENDAT_RETRY_MAX_MS=400", NULL};
    int64_t due;

    (void)state;
    fx_start(&F, 0);
    snprintf(stale_key, sizeof(stale_key), "%s/stale.key", F.dir);
    snprintf(stale_env, sizeof(stale_env), "SENDAT_KEY_FILE=%s", stale_key);
    copy_file(F.key, stale_key); /* c0's copy of the ring stays at the old key for now */
    fx_consumer(&F, 0, stale);
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

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rotation_in_any_reload_order),
                                       cmocka_unit_test(test_keygen_makes_its_folder)};

    return FX_RUN(tests);
}
