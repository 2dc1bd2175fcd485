/* Webhooks as a receiver sees them: Standard Webhooks signatures checked here from the spec
 * (HMAC-SHA256 over "id.timestamp.body", Ed25519 for v1a), the same webhook-id on every
 * retry, Retry-After honoured, backoff between attempts, a dead letter with every attempt
 * after the last one, replay from the dead-letter stream, and 410 dead-lettered at once. */
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "check.h"
#include "fixture.h"

/* 32 bytes "sendat test webhook secret key!!" in base64, and an Ed25519 seed of 32 x 0x07. */
#define HMAC_SECRET "whsec_c2VuZGF0IHRlc3Qgd2ViaG9vayBzZWNyZXQga2V5ISE="
#define ED_SEED "whsk_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="

static struct fx F;
static char *consumer_env[] = {"SENDAT_WEBHOOK_SECRET=" HMAC_SECRET " " ED_SEED,
                               "SENDAT_RETRY_BASE_MS=400",
                               "SENDAT_RETRY_MAX_MS=2000",
                               "SENDAT_RETRY_ATTEMPTS=3",
                               "SENDAT_HTTP_TIMEOUT=1s",
                               NULL};

struct want {
    const char *path;
    size_t n;
};

static int
dead_lettered(void *id)
{
    char out[4096], err[512];

    return fx_sendat(&F, out, sizeof(out), err, sizeof(err), "dlq", "show", (char *)id, NULL) == 0;
}

/* The spec's verification: every v1 / v1a entry must verify; tampering the body must fail. */
static int
verify(const char *id, const char *ts, const char *body, size_t len, const char *sigs)
{
    uint8_t key[64], seed[32], pk[32], sk[64], sig[64], mac[32];
    size_t klen = 0, slen = 0;
    char *msg = malloc(strlen(id) + strlen(ts) + len + 3), copy[1024], *save = NULL;
    int n = sprintf(msg, "%s.%s.", id, ts), ok = 0;

    memcpy(msg + n, body, len);
    assert_int_equal(sodium_base642bin(key, sizeof(key), &HMAC_SECRET[6], strlen(HMAC_SECRET) - 6,
                                       NULL, &klen, NULL, sodium_base64_VARIANT_ORIGINAL),
                     0);
    assert_int_equal(sodium_base642bin(seed, 32, &ED_SEED[5], strlen(ED_SEED) - 5, NULL, NULL, NULL,
                                       sodium_base64_VARIANT_ORIGINAL),
                     0);
    crypto_sign_seed_keypair(pk, sk, seed);
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key, klen);
    crypto_auth_hmacsha256_update(&st, (uint8_t *)msg, (size_t)n + len);
    crypto_auth_hmacsha256_final(&st, mac);
    snprintf(copy, sizeof(copy), "%s", sigs);
    for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        int ed = !strncmp(tok, "v1a,", 4);
        const char *b64 = tok + (ed ? 4 : 3);
        assert_int_equal(sodium_base642bin(sig, sizeof(sig), b64, strlen(b64), NULL, &slen, NULL,
                                           sodium_base64_VARIANT_ORIGINAL),
                         0);
        if (ed)
            ok += crypto_sign_verify_detached(sig, (uint8_t *)msg, (size_t)n + len, pk) == 0 ? 2
                                                                                             : -100;
        else
            ok += (slen == 32 && sodium_memcmp(sig, mac, 32) == 0) ? 1 : -100;
    }
    free(msg);
    return ok == 3; /* one v1 and one v1a, both valid */
}

static void
check_signed(size_t i, const char *want_id)
{
    struct receiver_hit h;
    char id[128], ts[32], sig[1024];
    char *tampered;

    assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
    assert_non_null(receiver_hit_header(&h, "webhook-id", id, sizeof(id)));
    assert_non_null(receiver_hit_header(&h, "webhook-timestamp", ts, sizeof(ts)));
    assert_non_null(receiver_hit_header(&h, "webhook-signature", sig, sizeof(sig)));
    assert_string_equal(id, want_id);
    assert_true(verify(id, ts, h.body, h.body_len, sig));
    tampered = strdup(h.body);
    tampered[0] ^= 1;
    assert_false(verify(id, ts, tampered, h.body_len, sig));
    assert_true(llabs(strtoll(ts, NULL, 10) - h.at_ms / 1000) <= 2); /* signed at the attempt */
    free(tampered);
    receiver_hit_free(&h);
}

static void
test_signed_retried_dead_replayed(void **state)
{
    char id[80], gone[80], hang[80], once[80], once_url[300], once_at[40], out[8192];
    struct want w3 = {"/flaky", 3}, w4 = {"/flaky", 4}, wg = {"/gone", 1};
    int64_t at[4];
    struct receiver_hit h;
    size_t k = 0;

    (void)state;
    fx_start(&F, 0);
    receiver_respond(F.recv, "/flaky", 500, -1, NULL);
    receiver_respond(F.recv, "/flaky", 429, 1, "Retry-After: 2"); /* first, then 500s */
    receiver_respond(F.recv, "/gone", 410, -1, NULL);
    receiver_hang(F.recv, "/hang", 2500); /* longer than SENDAT_HTTP_TIMEOUT=1s */
    receiver_hang(F.recv, "/once", 2500);
    fx_consumer(&F, 0, consumer_env);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/flaky", id, sizeof(id)), 0);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/gone", gone, sizeof(gone)), 0);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/hang", hang, sizeof(hang)), 0);
    /* an at-most-once task whose request timed out may have arrived: never sent again */
    snprintf(once_url, sizeof(once_url), "%s/once", receiver_url(F.recv));
    snprintf(once_at, sizeof(once_at), "+1s");
    assert_int_equal(fx_sendat(&F, once, sizeof(once), NULL, 0, "schedule", "--at", once_at,
                               "--webhook", once_url, "--at-most-once", NULL),
                     0);
    once[strcspn(once, "\n")] = '\0';
    assert_true(receiver_wait(F.recv, w3.path, w3.n, 60000));
    assert_true(receiver_wait(F.recv, wg.path, wg.n, 30000));
    for (size_t i = 0; i < receiver_count(F.recv) && k < 3; i++) {
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        if (!strcmp(h.path, "/flaky")) {
            at[k++] = h.at_ms;
            check_signed(i, id);
        }
        receiver_hit_free(&h);
    }
    assert_true(at[1] - at[0] >= 2000); /* 429 with Retry-After: 2 */
    fprintf(stderr, "gaps between attempts: %" PRId64 " ms, %" PRId64 " ms\n", at[1] - at[0],
            at[2] - at[1]);

    /* after the third attempt: the dead letter with every attempt */
    assert_true(wait_until(dead_lettered, id, 30000));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", id, NULL), 0);
    assert_non_null(strstr(out, "gave up after 3 attempts"));
    assert_non_null(strstr(out, "attempt 1 at"));
    assert_non_null(strstr(out, "HTTP 429"));
    assert_non_null(strstr(out, "attempt 2 at"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", gone, NULL), 0);
    assert_non_null(strstr(out, "HTTP 410"));
    assert_int_equal(receiver_count_path(F.recv, "/gone"), 1);
    assert_true(wait_until(dead_lettered, hang, 60000)); /* three timeouts, then the dead letter */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", hang, NULL), 0);
    assert_non_null(strstr(out, "no HTTP answer"));
    assert_int_equal(receiver_count_path(F.recv, "/hang"), 3);
    assert_true(wait_until(dead_lettered, once, 30000));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", once, NULL), 0);
    assert_non_null(strstr(out, "outcome unknown"));
    assert_int_equal(receiver_count_path(F.recv, "/once"), 1); /* 3 before: retried */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "list", NULL), 0);
    assert_non_null(strstr(out, id));
    assert_non_null(strstr(out, gone));

    receiver_respond(F.recv, "/flaky", 200, -1, NULL);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "replay", id, NULL), 0);
    assert_true(receiver_wait(F.recv, w4.path, w4.n, 30000));
    assert_true(fx_status_says(&F, id, " sent ", 30000));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "purge", "no-such-id", NULL),
                     4); /* an id without a dead letter is unknown, not "purged" */
    assert_string_equal(out, "unknown id\n");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "purge", gone, NULL), 0);
    assert_string_equal(out, "purged\n");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", gone, NULL), 4);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "purge", "--all", NULL), 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "dlq", "show", hang, NULL), 4);
    fx_finish(&F);
}

/* SIGTERM with a send still in flight when the drain time runs out: the member exits 0 (and
 * frees the send: no leak under ASan), says so, and the task goes back to the fleet, which
 * sends it again with the same webhook-id (at-least-once). */
static void
test_drain_runs_out_with_a_send_in_flight(void **state)
{
    char *slow_env[] = {"SENDAT_DRAIN_TIMEOUT=1s", "SENDAT_HTTP_TIMEOUT=30s", NULL};
    char id[80];

    (void)state;
    fx_start(&F, 0);
    receiver_hang(F.recv, "/slow", 20000);
    fx_consumer(&F, 0, slow_env);
    assert_int_equal(fx_schedule(&F, test_now_ms() + 1000, "/slow", id, sizeof(id)), 0);
    assert_true(receiver_wait(F.recv, "/slow", 1, 30000));
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(proc_count_lines(F.consumers[0].err_path, "event=sends_abandoned count=1"), 1);
    receiver_hang(F.recv, "/slow", 0);
    fx_consumer(&F, 1, slow_env);
    assert_true(receiver_wait(F.recv, "/slow", 2, 60000));
    assert_true(fx_status_says(&F, id, "sent", 30000));
    fx_finish(&F);
}

/* The broker stopped (SIGSTOP) for 10 s while answers come in (issue 37.3): the outcome
 * writes wait for it off the sending thread, so a 200 that arrives meanwhile is collected when
 * it comes, not left in its socket until the HTTP timeout turns it into a retry. Every task
 * arrives once and ends "sent"; before, each slow one was sent twice. */
static void
test_broker_away_while_answers_come(void **state)
{
    char *env[] = {"SENDAT_HTTP_TIMEOUT=8s", NULL};
    char ids[6][80], path[32];
    int64_t due, resume;

    (void)state;
    fx_start(&F, 0);
    receiver_set_delay(F.recv, 1000);
    fx_consumer(&F, 0, env);
    due = test_now_ms() + 4000;
    for (int k = 0; k < 6; k++) {
        snprintf(path, sizeof(path), k < 3 ? "/fast/%d" : "/slow/%d", k);
        if (k >= 3)
            receiver_hang(F.recv, path, 7000); /* answered within the 8 s timeout */
        assert_int_equal(fx_schedule(&F, due, path, ids[k], sizeof(ids[k])), 0);
    }
    assert_true(receiver_wait(F.recv, "/slow/5", 1, 30000));
    assert_int_equal(kill(F.srv.pid, SIGSTOP), 0);
    resume = test_now_ms() + 10000;
    assert_true(wait_until_ms(resume, 20000));
    assert_int_equal(kill(F.srv.pid, SIGCONT), 0);
    for (int k = 0; k < 6; k++)
        assert_true(fx_status_says(&F, ids[k], " sent ", 60000));
    for (int k = 0; k < 6; k++) {
        snprintf(path, sizeof(path), k < 3 ? "/fast/%d" : "/slow/%d", k);
        if (receiver_count_path(F.recv, path) != 1)
            fail_msg("%s arrived %zu times", path, receiver_count_path(F.recv, path));
    }
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_signed_retried_dead_replayed),
                                       cmocka_unit_test(test_drain_runs_out_with_a_send_in_flight),
                                       cmocka_unit_test(test_broker_away_while_answers_come)};

    return FX_RUN(tests); /* fx_run initialises libsodium, which the signature check uses */
}
