/* The claim record codec (JSON in the claims bucket): every field round-trips, a short buffer
 * and unknown states are refused, and text a consumer did not make (a receiver's error, a
 * host name) cannot make a record unwritable: bytes that are not UTF-8 become '?', and an
 * error cut inside a character by its field's size still encodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "claim.h"
#include "task.h"

static struct sa_claim
sample(void)
{
    struct sa_claim c = {
        .state = SA_CLAIM_SENT,
        .at_ms = 1795340100123LL,
        .attempt = 3,
        .due_ms = 1795340100000LL,
        .scheduled_ms = 1795000000000LL,
        .moves = 1,
        .moved_ms = 1795340090000LL,
        .lateness_ms = 123,
        .channel = SA_CHANNEL_WEBHOOK,
        .http_status = 204,
    };

    snprintf(c.consumer, sizeof(c.consumer), "c0");
    snprintf(c.instance, sizeof(c.instance), "a1b2c3");
    snprintf(c.write_id, sizeof(c.write_id), "00ff00ff00ff00ff");
    snprintf(c.error, sizeof(c.error), "HTTP 503 \"busy\"\n서버");
    return c;
}

static void
round_trip(const struct sa_claim *in, struct sa_claim *out)
{
    char json[1024];
    int n = sa_claim_encode(in, json, sizeof(json));

    if (n <= 0)
        fail_msg("claim (error \"%s\") does not encode", in->error);
    assert_int_equal(sa_claim_decode(out, json, (size_t)n, NULL), SA_OK);
}

static void
test_every_field(void **state)
{
    struct sa_claim in = sample(), out;

    (void)state;
    for (int s = SA_CLAIM_SENDING; s <= SA_CLAIM_SKIPPED; s++) {
        in.state = (enum sa_claim_state)s;
        round_trip(&in, &out);
        in.revision = out.revision; /* not stored */
        assert_memory_equal(&in, &out, sizeof(in));
    }
}

static void
test_refusals(void **state)
{
    struct sa_claim in = sample(), out;
    struct sa_err err = {0};
    char json[16];
    const char *wrong_type = "{\"state\":\"sent\",\"at\":\"5\"}";

    (void)state;
    assert_int_equal(sa_claim_encode(&in, json, sizeof(json)), -1);
    assert_int_equal(sa_claim_decode(&out, "{\"state\":\"lost\"}", 16, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "lost"));
    sa_err_clear(&err);
    assert_int_equal(sa_claim_decode(&out, "{\"at\":5}", 8, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "not found: state")); /* jansson names what is missing */
    sa_err_clear(&err);
    assert_int_equal(sa_claim_decode(&out, wrong_type, strlen(wrong_type), &err), SA_EINVAL);
    assert_non_null(
        strstr(err.msg, "does not fit")); /* a field of the wrong type, not "no state" */
    sa_err_clear(&err);
    assert_int_equal(sa_claim_decode(&out, "{\"sta", 5, &err), SA_EINVAL);
    assert_non_null(strstr(err.msg, "not JSON"));
}

static void
test_text_that_is_not_utf8(void **state)
{
    struct sa_claim in = sample(), out;
    size_t n;

    (void)state;
    snprintf(in.error, sizeof(in.error), "Could not resolve host: \xff\xfe.example \xc3(");
    snprintf(in.consumer, sizeof(in.consumer), "c\x80");
    round_trip(&in, &out);
    assert_string_equal(out.error, "Could not resolve host: ??.example ?(");
    assert_string_equal(out.consumer, "c?");
    /* an error cut by the field's size inside a three-byte character */
    memset(in.error, 'x', sizeof(in.error));
    n = sizeof(in.error) - 3;
    memcpy(in.error + n, "\xea\xb0", 2); /* the first two bytes of U+AC00 */
    in.error[sizeof(in.error) - 1] = '\0';
    round_trip(&in, &out);
    assert_int_equal(strlen(out.error), sizeof(in.error) - 1);
    assert_string_equal(out.error + n, "??");
}

/* The encoder writes JSON by hand: backslashes, every control byte and negative numbers
 * must read back as they were. */
static void
test_escapes_and_signs(void **state)
{
    struct sa_claim in = sample(), out;

    (void)state;
    in.lateness_ms = -42; /* sent before its due time */
    in.delivery_lateness_ms = INT64_MIN + 1;
    memset(in.error, 0, sizeof(in.error)); /* the record is compared whole */
    snprintf(in.error, sizeof(in.error), "a\\b\x01\x1f\t\"/\x7f");
    round_trip(&in, &out);
    in.revision = out.revision;
    assert_memory_equal(&in, &out, sizeof(in));
}

/* The channel is recorded (status names an email's reply code smtp_status); a record from
 * before it was, or naming a channel not known here, reads as channel 0. */
static void
test_channel(void **state)
{
    struct sa_claim in = sample(), out;
    static const char old[] = "{\"state\":\"sent\",\"consumer\":\"c0\",\"http_status\":250}";
    static const char odd[] = "{\"state\":\"sent\",\"channel\":\"pigeon\"}";
    char json[1024];

    (void)state;
    in.channel = SA_CHANNEL_EMAIL;
    in.http_status = 250;
    assert_true(sa_claim_encode(&in, json, sizeof(json)) > 0);
    assert_non_null(strstr(json, "\"channel\":\"email\""));
    round_trip(&in, &out);
    assert_int_equal(out.channel, SA_CHANNEL_EMAIL);
    in.channel = 0;
    assert_true(sa_claim_encode(&in, json, sizeof(json)) > 0);
    assert_null(strstr(json, "channel")); /* not written while unknown */
    assert_int_equal(sa_claim_decode(&out, old, sizeof(old) - 1, NULL), SA_OK);
    assert_int_equal(out.channel, 0);
    assert_int_equal(out.http_status, 250);
    assert_int_equal(sa_claim_decode(&out, odd, sizeof(odd) - 1, NULL), SA_OK);
    assert_int_equal(out.channel, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_field),       cmocka_unit_test(test_channel),
        cmocka_unit_test(test_refusals),          cmocka_unit_test(test_text_that_is_not_utf8),
        cmocka_unit_test(test_escapes_and_signs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
