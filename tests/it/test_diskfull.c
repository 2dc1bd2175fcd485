/* A full store disk (issue 37.9). nats-server 2.9 stops answering JetStream once a write fails
 * with ENOSPC, and goes on answering nothing after space is back, until it is restarted. The
 * consumer says so (event=jetstream_silent, /readyz), keeps what it holds, and sends every
 * task once after the operator freed space and restarted the server, without a restart of its
 * own: a claim whose answer was lost in the wedge may have landed as "sending" by the consumer
 * itself, and is taken over once no copy of the task is claimed in the process (claims.c,
 * test_crash test_own_stale_sending_claim). The store lives on a
 * small tmpfs mounted for the test; without the right to mount (not root, or a container
 * without it) the test is skipped and says why. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "jsfeat.h"

#define N 5

static struct fx F;
static char mnt[300], config[600];

static int
mount_store(void **state)
{
    (void)state;
    if (test_mkdtemp(mnt, sizeof(mnt)) != 0)
        return -1;
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=24m") != 0) {
        fprintf(stderr, "no tmpfs for the store (%s): skipped\n", strerror(errno));
        mnt[0] = '\0';
        return 0;
    }
    /* more than the disk holds, so the disk fills before JetStream's own limit */
    snprintf(config, sizeof(config), "jetstream { store_dir: \"%s/js\", max_file_store: 10G }",
             mnt);
    fx_server_config = config;
    return 0;
}

static int
unmount_store(void **state)
{
    (void)state;
    fx_server_config = NULL;
    if (mnt[0])
        umount2(mnt, MNT_DETACH);
    return 0;
}

/* Writes a file until the disk is full. */
static void
fill(const char *path)
{
    static char block[1 << 16];
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    while (fwrite(block, 1, sizeof(block), f) == sizeof(block))
        ;
    fclose(f);
}

static int
said_silent(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=jetstream_silent") > 0;
}

static int
said_back(void *arg)
{
    (void)arg;
    return proc_count_lines(F.consumers[0].err_path, "event=jetstream_back") > 0;
}

static int
all_arrived(void *arg)
{
    (void)arg;
    return receiver_count(F.recv) >= N;
}

static void
test_disk_full_then_restart(void **state)
{
    char id[80], path[400], body[FX_BODY_MAX];
    struct sa_jsfeat feat;
    natsConnection *nc = NULL;
    int64_t due;

    (void)state;
    if (!mnt[0])
        skip();
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(sa_jsfeat_detect(nc, &feat, NULL), SA_OK);
    natsConnection_Destroy(nc);
    fx_consumer(&F, 0, NULL);
    due = test_now_ms() + 5000;
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/full/%d", i);
        assert_int_equal(fx_schedule(&F, due, path, id, sizeof(id)), 0);
    }
    snprintf(path, sizeof(path), "%s/filler", mnt);
    fill(path); /* the levels' durables of the due time cannot be stored */
    assert_true(wait_until_ms(due + 2000, 30000));
    if (feat.api_level == 0) { /* 2.9 and 2.10: wedged until restarted */
        if (!wait_until(said_silent, NULL, 60000))
            fx_print_log(&F, 0);
        assert_true(said_silent(NULL));
        assert_int_equal(fx_consumer_get(&F, 0, "/readyz", body), 503);
        assert_non_null(strstr(body, "JetStream answers nothing"));
    }
    assert_int_equal(unlink(path), 0); /* the operator frees space, then restarts the server */
    natsd_kill(&F.srv);
    assert_int_equal(natsd_restart(&F.srv), 0);
    if (feat.api_level == 0)
        assert_true(wait_until(said_back, NULL, 60000));
    if (!wait_until(all_arrived, NULL, 90000))
        fx_print_log(&F, 0);
    assert_true(wait_until_ms(test_now_ms() + 2000, 10000)); /* time for a second send */
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/full/%d", i);
        assert_int_equal(receiver_count_path(F.recv, path), 1);
    }
    fprintf(stderr, "stale claims of its own taken over: %d\n",
            proc_count_lines(F.consumers[0].err_path, "event=own_claim_stale"));
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_full_then_restart),
    };

    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), mount_store, unmount_store);
}
