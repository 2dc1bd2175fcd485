/* Bad input never crashes and is never silently dropped (invariant 5). At the producer: one
 * line naming the problem, a non-zero exit, nothing published, and a number flag read alike by
 * every command. At the consumer: garbage on a task subject and a tampered envelope are
 * dead-lettered with the reason while the consumer goes on sending; a task sealed with a key
 * id it does not hold is handed back to the fleet (a member with that key may come, see
 * it_keyrot), not dead-lettered yet. Bad input in volume: test_badinput_park.c. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "badinput.h"
#include "check.h"
#include "envelope.h"
#include "keyring.h"
#include "layout.h"
#include "task.h"

static void
refused(const char *why, ...)
{
    char *argv[24], out[256], err[1024];
    va_list ap;
    int n = 0, rc;

    argv[n++] = (char *)fx_sendat_bin();
    argv[n++] = "schedule";
    va_start(ap, why);
    for (char *a; n < 23 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    {
        char *env[] = {F.env_url, F.env_key, NULL};
        rc = proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 30000);
    }
    if (rc == 0)
        fail_msg("%s: sendat schedule accepted it", why);
    if (out[0])
        fail_msg("%s: printed on stdout: %s", why, out);
    if (!strchr(err, '\n') || strchr(err, '\n')[1] != '\0')
        fail_msg("%s: want one line on stderr, got: %s", why, err);
    fprintf(stderr, "refused (%s, exit %d): %s", why, rc, err);
}

static void
test_cli_refuses_bad_input(void **state)
{
    static char big[SA_BODY_MAX + 2];
    char bigfile[300], url[300];
    FILE *f;

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(natsConnection_ConnectTo(&nc, F.srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    snprintf(url, sizeof(url), "%s/x", receiver_url(F.recv));
    snprintf(bigfile, sizeof(bigfile), "%s/big.json", F.dir);
    memset(big, 'a', sizeof(big) - 1);
    f = fopen(bigfile, "w");
    assert_non_null(f);
    fwrite(big, 1, SA_BODY_MAX + 1, f);
    fclose(f);

    refused("unparseable time", "--at", "tomorrow", "--webhook", url, NULL);
    refused("bad month", "--at", "2026-13-01T00:00:00Z", "--webhook", url, NULL);
    refused("far past", "--at", "@1000000000", "--webhook", url, NULL);
    refused("missing URL", "--at", "+1h", NULL);
    refused("not http", "--at", "+1h", "--webhook", "ftp://127.0.0.1/x", NULL);
    refused("no host", "--at", "+1h", "--webhook", "http://", NULL);
    refused("header CR LF", "--at", "+1h", "--webhook", url, "--header", "X-A: b\r\nX-Injected: c",
            NULL);
    refused("header LF", "--at", "+1h", "--webhook", url, "--header", "X-A: b\nc", NULL);
    refused("header ESC", "--at", "+1h", "--webhook", url, "--header", "X-A: \x1b[31mred", NULL);
    refused("header DEL", "--at", "+1h", "--webhook", url, "--header", "X-A: b\x7f", NULL);
    refused("header 0xff", "--at", "+1h", "--webhook", url, "--header", "X-A: b\xff", NULL);
    refused("oversized body", "--at", "+1h", "--webhook", url, "--data-file", bigfile, NULL);
    refused("unknown flag", "--at", "+1h", "--webhook", url, "--bogus", NULL);
    refused("bad id", "--at", "+1h", "--webhook", url, "--id", "a.b", NULL);
    refused("not-after before at", "--at", "+1h", "--not-after", "+10m", "--webhook", url, NULL);
    assert_int_equal(stream_msgs(SA_TASKS_STREAM), 0);

    fx_js_close(&nc, &js);
    fx_stop(&F);
}

static void
publish_foreign(const char *id, int tamper)
{
    static const uint8_t kid[1][SA_KID_BYTES] = {{9, 9, 9, 9}};
    uint8_t key[1][SA_KEY_BYTES];
    struct sa_keyring *ring = NULL;
    struct sa_task *t = NULL;
    struct sa_keyring *use;
    uint8_t *env = NULL;
    size_t len = 0;
    char url[300];

    randombytes_buf(key[0], sizeof(key[0]));
    assert_int_equal(sa_keyring_from_keys(&ring, kid, (const uint8_t(*)[SA_KEY_BYTES])key, 1, NULL),
                     SA_OK);
    use = ring;
    if (tamper)
        assert_int_equal(sa_keyring_load(&use, F.key, NULL), SA_OK);
    assert_int_equal(sa_task_new(&t, NULL), SA_OK);
    snprintf(t->id, sizeof(t->id), "%s", id);
    t->due_ms = test_now_ms();
    snprintf(url, sizeof(url), "%s/forged", receiver_url(F.recv));
    assert_int_equal(sa_task_set_url(t, url, NULL), SA_OK);
    assert_int_equal(sa_task_seal(use, t, &env, &len, NULL), SA_OK);
    if (tamper)
        env[len / 2] ^= 0x20;
    publish_raw(id, env, (int)len);
    free(env);
    sa_task_free(t);
    if (use != ring)
        sa_keyring_free(use);
    sa_keyring_free(ring);
}

static int
key_waited(void *arg)
{
    (void)arg;
    return fx_consumer_metric(&F, 0, "sendat_unknown_key_total") > 0;
}

static void
not_dead(const char *id)
{
    char subject[SA_SUBJECT_MAX];
    natsMsg *m = NULL;

    snprintf(subject, sizeof(subject), "sendat.dlq.%s", id);
    assert_int_equal(js_GetLastMsg(&m, js, SA_DLQ_STREAM, subject, NULL, NULL), NATS_NOT_FOUND);
}

static void
test_consumer_dead_letters_garbage(void **state)
{
    char id[80];

    (void)state;
    start_with_consumer();
    publish_raw("garbage-1", "this is not an envelope", 23);
    publish_raw("garbage-2", "\x01\x02", 2);
    publish_foreign("foreign-key", 0);
    publish_foreign("tampered", 1);
    assert_true(wait_until(dlq_has, (void *)(intptr_t)3, 30000));
    dead_reason("garbage-1", "envelope");
    dead_reason("garbage-2", "too short");
    dead_reason("tampered", "does not open");
    assert_true(wait_until(key_waited, NULL, 30000));
    not_dead("foreign-key");
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/after", id, sizeof(id)), 0);
    assert_true(receiver_wait(F.recv, "/after", 1, 30000));
    assert_int_equal(receiver_count_path(F.recv, "/forged"), 0);
    assert_true(proc_alive(&F.consumers[0]));
    stop_with_consumer();
}

static struct sa_task *
task_due_now(const char *id)
{
    struct sa_task *t = NULL;

    assert_int_equal(sa_task_new(&t, NULL), SA_OK);
    snprintf(t->id, sizeof(t->id), "%s", id);
    t->due_ms = test_now_ms();
    t->created_ms = t->due_ms;
    return t;
}

/* Seals t with the real key, publishes it and frees it: what a producer would have refused. */
static void
publish_sealed(struct sa_task *t)
{
    struct sa_keyring *ring = NULL;
    uint8_t *env = NULL;
    size_t len = 0;

    assert_int_equal(sa_keyring_load(&ring, F.key, NULL), SA_OK);
    assert_int_equal(sa_task_seal(ring, t, &env, &len, NULL), SA_OK);
    publish_raw(t->id, env, (int)len);
    free(env);
    sa_task_free(t);
    sa_keyring_free(ring);
}

/* An email task whose second To address a producer would refuse. */
static void
publish_bad_recipient(const char *id)
{
    struct sa_task *t = task_due_now(id);

    assert_int_equal(sa_task_add_rcpt(t, SA_RCPT_TO, "ok@example.test", NULL), SA_OK);
    assert_int_equal(sa_task_set_email(t, SA_EMAIL_SUBJECT, "s", NULL), SA_OK);
    assert_int_equal(sa_task_set_email(t, SA_EMAIL_TEXT, "t", NULL), SA_OK);
    t->rcpt[SA_RCPT_TO] = realloc(t->rcpt[SA_RCPT_TO], 2 * sizeof(char *));
    t->rcpt[SA_RCPT_TO][1] = strdup("d@ex\x0fmple.test");
    t->n_rcpt[SA_RCPT_TO] = 2;
    publish_sealed(t);
}

/* A webhook task with an escape code in a header value. */
static void
publish_bad_header(const char *id)
{
    struct sa_task *t = task_due_now(id);
    char url[300];

    snprintf(url, sizeof(url), "%s/forged", receiver_url(F.recv));
    assert_int_equal(sa_task_set_url(t, url, NULL), SA_OK);
    assert_int_equal(sa_task_add_header(t, "X-Tenant", "acme", NULL), SA_OK);
    t->headers[0].value[1] = '\x1b';
    publish_sealed(t);
}

/* The seq-N ids of a dlq list, in order. */
static int
seq_ids(const char *list, char ids[][32], int max)
{
    int n = 0;

    for (const char *p = list; n < max && (p = strstr(p, " seq-")); p += 5)
        sscanf(p + 1, "%31[a-z0-9-]", ids[n++]);
    return n;
}

/* Two dead letters without a task id (junk task ids on valid window subjects) have ids of
 * their own that dlq show finds, and the escape code in one is printed escaped. Sealed tasks
 * a producer would refuse are dead-lettered with reasons that name no value. */
static void
test_dead_letters_without_id(void **state)
{
    char out[4096], ids[4][32];

    (void)state;
    start_with_consumer();
    publish_raw("\x1b[2Jcleared", "junk one", 8);
    publish_raw("bad~id", "junk two", 8);
    publish_bad_recipient("bad-rcpt");
    publish_bad_header("bad-header");
    assert_true(wait_until(dlq_has, (void *)(intptr_t)4, 30000));
    dead_reason("bad-header", "header X-Tenant has a control byte or broken UTF-8 in its value");
    assert_int_equal(receiver_count_path(F.recv, "/forged"), 0);
    dead_reason("bad-rcpt", "recipient 2 of To: not a valid domain after @"); /* not the address */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "list", NULL), 0);
    assert_null(strchr(out, '\x1b'));
    assert_non_null(strstr(out, "\\x1b[2Jcleared"));
    assert_int_equal(seq_ids(out, ids, 4), 2);
    assert_string_not_equal(ids[0], ids[1]);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", ids[0], NULL), 0);
    assert_non_null(strstr(out, "cleared"));
    assert_null(strchr(out, '\x1b'));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", ids[1], NULL), 0);
    assert_non_null(strstr(out, "bad~id"));
    { /* nor does the consumer's log carry it, nor an address */
        char *log = proc_read_file(F.consumers[0].err_path);
        assert_non_null(strstr(log, "cleared"));
        assert_null(strchr(log, '\x1b'));
        assert_null(strstr(log, "mple.test"));
        free(log);
    }
    stop_with_consumer();
}

/* A number flag is read the same way by every command (issue 26: `dlq list --limit 10x` was
 * taken as 10, `preview -n 10x` and `init --replicas 3x` too): a trailing letter, an empty
 * value or one out of range exits 2 with one line on stderr and nothing on stdout. */
static void
number_refused(const char *why, int rc, const char *out, const char *err)
{
    if (rc != 2 || out[0] || !strchr(err, '\n') || strchr(err, '\n')[1] != '\0')
        fail_msg("%s: exit %d (want 2), stdout \"%s\", stderr \"%s\"", why, rc, out, err);
}

#define NUMBER_REFUSED(why, ...)                                                                   \
    number_refused(why, fx_sendat(&F, out, sizeof(out), err, sizeof(err), __VA_ARGS__, NULL), out, \
                   err)

static void
test_numbers_checked_alike(void **state)
{
    char out[4096], err[512];

    (void)state;
    fx_start(&F, 0);
    NUMBER_REFUSED("dlq list 10x", "dlq", "list", "--limit", "10x");
    NUMBER_REFUSED("dlq list empty", "dlq", "list", "--limit", "");
    NUMBER_REFUSED("dlq list 0", "dlq", "list", "--limit", "0");
    NUMBER_REFUSED("list 10x", "list", "--from", "now", "--to", "+1h", "--limit", "10x");
    NUMBER_REFUSED("group list 10x", "group", "list", "--limit", "10x");
    NUMBER_REFUSED("preview -n 10x", "preview", "--cron", "* * * * *", "--tz", "UTC", "-n", "10x");
    NUMBER_REFUSED("init --replicas 3x", "init", "--replicas", "3x");
    NUMBER_REFUSED("init --shards 2x", "init", "--shards", "2x");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "list", "--limit", "10", NULL),
                     0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "--help", NULL), 0);
    assert_non_null(strstr(out, "usage: sendat dlq list"));
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_refuses_bad_input),
        cmocka_unit_test(test_consumer_dead_letters_garbage),
        cmocka_unit_test(test_dead_letters_without_id),
        cmocka_unit_test(test_numbers_checked_alike),
    };

    return FX_RUN(tests);
}
