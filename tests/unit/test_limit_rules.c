/* Provider limit rules (SENDAT_HOST_LIMITS): what parses, what is refused with the rule named,
 * which rule a host takes (first glob that matches, any case), and what each setting lets
 * through. Fleet rules need the leases bucket and are proven by it_limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hostlimits.h"

static struct limits *
parse(const char *spec)
{
    struct limits *l = NULL;
    struct sa_err err = {0};

    if (limits_new(&l, spec, "c0", &err) != SA_OK)
        fail_msg("\"%s\" refused: %s", spec, err.msg);
    return l;
}

static void
refused(const char *spec, const char *want)
{
    struct limits *l = NULL;
    struct sa_err err = {0};

    if (limits_new(&l, spec, "c0", &err) != SA_EINVAL)
        fail_msg("\"%s\" was taken", spec);
    if (!strstr(err.msg, want))
        fail_msg("\"%s\": message \"%s\" lacks \"%s\"", spec, err.msg, want);
    assert_non_null(strstr(err.msg, "SENDAT_HOST_LIMITS"));
}

/* How many sends to host may start at now_ms, none of them ending. */
static int
room(struct limits *l, const char *host, int64_t now_ms)
{
    int64_t retry_at = 0;
    int lease, n = 0;

    while (n < 1000 && limits_acquire(l, host, now_ms, &retry_at, &lease)) {
        assert_int_equal(lease, -1);
        n++;
    }
    if (n < 1000)
        assert_true(retry_at > now_ms);
    return n;
}

static void
test_valid_rules(void **state)
{
    struct limits *l = NULL;

    (void)state;
    l = parse(NULL);
    assert_int_equal(room(l, "api.example", 0), 1000); /* no rule: no limit */
    limits_free(l);
    l = parse("api.pay.example=fleet:3; *.example.org=concurrency:8,rate:50/s\n"
              "mail.example=rate:120/m");
    assert_true(limits_need_leases(l));
    limits_free(l);
    l = parse("api.example=concurrency:2;*.EXAMPLE=concurrency:5");
    assert_false(limits_need_leases(l));
    assert_int_equal(room(l, "API.example", 0), 2); /* the first rule that matches, any case */
    assert_int_equal(room(l, "www.example", 0), 5);
    assert_int_equal(room(l, "other.test", 0), 1000);
    limits_release(l, "API.example", -1);
    assert_int_equal(room(l, "API.example", 0), 1);
    limits_free(l);
}

static void
test_rate(void **state)
{
    struct limits *l = parse("hook.example=rate:10/s;slow.example=rate:6/m");
    int64_t retry_at = 0;
    int lease;

    (void)state;
    assert_int_equal(room(l, "hook.example", 1000000), 10); /* a burst of one second's worth */
    assert_int_equal(room(l, "hook.example", 1000100), 1);  /* 100 ms later: one more */
    assert_int_equal(room(l, "slow.example", 1000000), 1);
    assert_false(limits_acquire(l, "slow.example", 1005000, &retry_at, &lease));
    assert_true(retry_at > 1005000 && retry_at <= 1010001); /* 6 a minute: one every 10 s */
    assert_int_equal(room(l, "slow.example", 1010001), 1);
    limits_free(l);
}

static void
test_refusals(void **state)
{
    (void)state;
    refused("api.example", "is not host=settings");
    refused("=concurrency:1", "is not host=settings");
    refused("api.example=concurrency:0", "\"concurrency:0\" is not concurrency:N");
    refused("api.example=concurrency:-3", "is not concurrency:N");
    refused("api.example=fleet:65", "N up to 64");
    refused("api.example=rate:5/h", "\"rate:5/h\"");
    refused("api.example=rate:0/s", "\"rate:0/s\"");
    refused("api.example=speed:3", "\"speed:3\"");
    refused("api.example=concurrency:3x", "\"concurrency:3x\""); /* no trailing garbage */
    refused("api.example=rate:5/sx", "\"rate:5/sx\"");
    refused("api.example=fleet:2,rate:1/s/s", "\"rate:1/s/s\"");
}

/* A rate outside 1/h .. 1,000,000/s is refused (found by fuzz_limits: rate:1e-300/s made a
 * wait time past int64, undefined behaviour). */
static void
test_rate_bounds(void **state)
{
    static const char *bad[] = {"x=rate:1e-300/s", "x=rate:inf/s", "x=rate:nan/s", "x=rate:0/s",
                                "x=rate:-1/s",     "x=rate:2e6/s", "x=rate:0.01/m"};
    struct limits *l = NULL;
    struct sa_err err = {0};
    int64_t retry = 0;
    int lease = -1;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(limits_new(&l, bad[i], "c", &err), SA_EINVAL);
        assert_non_null(strstr(err.msg, "rate from 1/h"));
        sa_err_clear(&err);
    }
    assert_int_equal(limits_new(&l, "x=rate:1/m;y=rate:1000000/s", "c", NULL), SA_OK);
    assert_int_equal(limits_acquire(l, "x", 1000, &retry, &lease), 1);
    limits_release(l, "x", lease);
    assert_int_equal(limits_acquire(l, "x", 1001, &retry, &lease), 0);
    assert_true(retry > 1001 && retry <= 1001 + 60000 + 1);
    limits_free(l);
}

/* A host no rule names is held to the fallback cap; a named one keeps its rule; 0 is no cap. */
static void
test_fallback_cap(void **state)
{
    struct limits *l = NULL;
    int64_t retry = 0;
    int lease = -1;

    (void)state;
    assert_int_equal(limits_new(&l, "named.example=concurrency:5", "c", NULL), SA_OK);
    limits_set_default(l, 2, "smtp.relay.example");
    for (int i = 0; i < 2; i++)
        assert_int_equal(limits_acquire(l, "stuck.example", 1000, &retry, &lease), 1);
    assert_int_equal(limits_acquire(l, "stuck.example", 1000, &retry, &lease), 0);
    assert_int_equal(limits_acquire(l, "other.example", 1000, &retry, &lease), 1);
    for (int i = 0; i < 5; i++)
        assert_int_equal(limits_acquire(l, "named.example", 1000, &retry, &lease), 1);
    for (int i = 0; i < 10; i++) /* the SMTP server: all mail goes there, no cap */
        assert_int_equal(limits_acquire(l, "smtp.relay.example", 1000, &retry, &lease), 1);
    limits_release(l, "stuck.example", -1);
    assert_int_equal(limits_acquire(l, "stuck.example", 1000, &retry, &lease), 1);
    limits_set_default(l, 0, NULL);
    for (int i = 0; i < 10; i++)
        assert_int_equal(limits_acquire(l, "new.example", 1000, &retry, &lease), 1);
    limits_free(l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_rules),  cmocka_unit_test(test_rate),
        cmocka_unit_test(test_refusals),     cmocka_unit_test(test_rate_bounds),
        cmocka_unit_test(test_fallback_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
