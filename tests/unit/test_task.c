/* Task encode/decode round trips, validation of what a producer may publish and a consumer
 * may send, and seal/open bound to the id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "task.h"

static struct sa_task *
sample(void)
{
    struct sa_task *t = NULL;

    assert_int_equal(sa_task_new(&t, NULL), SA_OK);
    strcpy(t->id, "1795340100000-abcdefghij");
    t->due_ms = 1795340100000LL;
    t->created_ms = 1795340000000LL;
    assert_int_equal(sa_task_set_url(t, "https://example.test/hook?a=1", NULL), SA_OK);
    assert_int_equal(sa_task_add_header_line(t, "X-Order: 42", NULL), SA_OK);
    assert_int_equal(sa_task_set_body(t, "{\"a\":1}", 7, NULL), SA_OK);
    return t;
}

static void
test_round_trip(void **state)
{
    struct sa_task *t = sample(), *u = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;

    (void)state;
    assert_int_equal(sa_task_add_attempt(t, 5, "HTTP 500", NULL), SA_OK);
    snprintf(t->group, sizeof(t->group), "newsletter-42");
    assert_int_equal(sa_task_encode(t, &buf, &len, NULL), SA_OK);
    assert_int_equal(sa_task_decode(buf, len, &u, NULL), SA_OK);
    assert_string_equal(u->id, t->id);
    assert_string_equal(u->group, "newsletter-42");
    assert_int_equal(u->due_ms, t->due_ms);
    assert_string_equal(u->url, t->url);
    assert_int_equal(u->n_headers, 1);
    assert_string_equal(u->headers[0].name, "X-Order");
    assert_string_equal(u->headers[0].value, "42");
    assert_int_equal(u->body_len, 7);
    assert_memory_equal(u->body, "{\"a\":1}", 7);
    assert_int_equal(u->n_attempts, 1);
    assert_string_equal(u->attempt_error[0], "HTTP 500");
    assert_int_equal(sa_task_validate(u, NULL), SA_OK);
    free(buf);
    sa_task_free(t);
    sa_task_free(u);
}

/* A group no booking could give (a dot would split its key in sendat_groups) is refused. */
static void
test_bad_group_does_not_decode(void **state)
{
    struct sa_task *t = sample(), *u = NULL;
    struct sa_err err = {0};
    uint8_t *buf = NULL;
    size_t len = 0;

    (void)state;
    snprintf(t->group, sizeof(t->group), "a.b");
    assert_int_equal(sa_task_encode(t, &buf, &len, NULL), SA_OK);
    assert_int_equal(sa_task_decode(buf, len, &u, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "group"));
    assert_null(u);
    free(buf);
    sa_task_free(t);
}

static void
test_garbage_does_not_decode(void **state)
{
    static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02};
    struct sa_task *u = NULL;
    struct sa_err err = {0};

    (void)state;
    assert_int_equal(sa_task_decode(junk, sizeof(junk), &u, &err), SA_EINVAL);
    assert_null(u);
    assert_true(strlen(err.msg) > 0);
}

static void
test_refusals(void **state)
{
    struct sa_task *t = sample();
    struct sa_err err = {0};
    static char big[SA_BODY_MAX + 1];

    (void)state;
    assert_int_equal(sa_task_add_header_line(t, "X-Bad: a\r\nInjected: 1", &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "CR or LF"));
    assert_int_equal(sa_task_add_header_line(t, "no colon", NULL), SA_EINVAL);
    assert_int_equal(sa_task_add_header_line(t, "Bad Name: x", NULL), SA_EINVAL);
    assert_int_equal(sa_task_add_header_line(t, "webhook-id: x", NULL), SA_EINVAL);
    assert_int_equal(sa_task_set_url(t, "ftp://example.test/", NULL), SA_EINVAL);
    assert_int_equal(sa_task_set_url(t, "not a url", NULL), SA_EINVAL);
    assert_int_equal(sa_task_set_url(t, "", NULL), SA_EINVAL);
    assert_int_equal(sa_task_set_url(t, "http://a/\r\nx", NULL), SA_EINVAL);
    assert_int_equal(sa_task_set_body(t, big, sizeof(big), NULL), SA_EINVAL);
    assert_int_equal(sa_task_set_body(t, big, SA_BODY_MAX, NULL), SA_OK);
    strcpy(t->id, "bad id");
    assert_int_equal(sa_task_validate(t, NULL), SA_EINVAL);
    sa_task_free(t);
}

/* Issue 11 item 11: 100,000 empty attempt entries were decoded one realloc at a time. */
static void
test_attempt_ceiling(void **state)
{
    struct sa_task *t = sample(), *u = NULL;
    struct sa_err err = {0};
    uint8_t *buf = NULL, *big;
    size_t len = 0, n = 100000;

    (void)state;
    assert_int_equal(sa_task_encode(t, &buf, &len, NULL), SA_OK);
    big = malloc(len + 2 * n);
    assert_non_null(big);
    memcpy(big, buf, len);
    for (size_t i = 0; i < n; i++) { /* field 14 (attempts), length 0: an empty Attempt */
        big[len + 2 * i] = 0x72;
        big[len + 2 * i + 1] = 0;
    }
    assert_int_equal(sa_task_decode(big, len + 2 * n, &u, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "100000 failed attempts"));
    assert_int_equal(sa_task_decode(big, len + 2 * SA_ATTEMPTS_MAX, &u, NULL), SA_OK);
    assert_int_equal(u->n_attempts, SA_ATTEMPTS_MAX);
    sa_task_free(u);
    free(big);
    free(buf);

    for (int i = 0; i < SA_ATTEMPTS_MAX + 50; i++)
        assert_int_equal(sa_task_add_attempt(t, i, "HTTP 500", NULL), SA_OK);
    assert_int_equal(t->n_attempts, SA_ATTEMPTS_MAX);
    assert_int_equal(t->attempt_at_ms[0], 50); /* the oldest went */
    assert_int_equal(t->attempt_at_ms[SA_ATTEMPTS_MAX - 1], SA_ATTEMPTS_MAX + 49);
    sa_task_free(t);
}

/* Issue 11 item 12: a series index of INT32_MAX or a not-after near INT64_MAX passed
 * validation and overflowed the next occurrence's sums (consumer/ledger/series.c). */
static void
test_series_ranges(void **state)
{
    struct sa_task *t = sample();

    (void)state;
    assert_int_equal(sa_task_set_recurrence(t, "0 9 * * *", "UTC", 0, 0, NULL), SA_OK);
    strcpy(t->series_id, "s1");
    t->index = 7;
    assert_int_equal(sa_task_validate(t, NULL), SA_OK);
    t->index = INT32_MAX; /* unlimited count: index + 1 would overflow */
    assert_int_equal(sa_task_validate(t, NULL), SA_EINVAL);
    t->index = 7;
    t->not_after_ms = INT64_MAX;
    assert_int_equal(sa_task_validate(t, NULL), SA_EINVAL);
    t->not_after_ms = t->due_ms + 1000; /* its next occurrence's would lie before its due time */
    assert_int_equal(sa_task_validate(t, NULL), SA_EINVAL);
    t->not_after_ms = 0;
    t->until_ms = INT64_MAX;
    assert_int_equal(sa_task_validate(t, NULL), SA_EINVAL);
    sa_task_free(t);
}

static void
test_seal_open(void **state)
{
    static const uint8_t kid[1][SA_KID_BYTES] = {{1, 2, 3, 4}};
    uint8_t key[1][SA_KEY_BYTES];
    struct sa_keyring *ring = NULL;
    struct sa_task *t = sample(), *u = NULL;
    uint8_t *env = NULL;
    size_t len = 0;
    struct sa_err err = {0};

    (void)state;
    randombytes_buf(key[0], sizeof(key[0]));
    assert_int_equal(sa_keyring_from_keys(&ring, kid, (const uint8_t(*)[SA_KEY_BYTES])key, 1, NULL),
                     SA_OK);
    assert_int_equal(sa_task_seal(ring, t, &env, &len, NULL), SA_OK);
    assert_null(memmem(env, len, "example.test", 12)); /* sealed: no recipient in clear */
    assert_int_equal(sa_task_open(ring, t->id, env, len, &u, NULL), SA_OK);
    assert_string_equal(u->url, t->url);
    sa_task_free(u);
    u = NULL;
    assert_int_equal(sa_task_open(ring, "other-id", env, len, &u, &err), SA_ECRYPTO);
    env[len - 1] ^= 1;
    assert_int_equal(sa_task_open(ring, t->id, env, len, &u, NULL), SA_ECRYPTO);
    assert_null(u);
    free(env);
    sa_task_free(t);
    sa_keyring_free(ring);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_bad_group_does_not_decode),
        cmocka_unit_test(test_garbage_does_not_decode),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_seal_open),
        cmocka_unit_test(test_attempt_ceiling),
        cmocka_unit_test(test_series_ranges),
    };
    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
