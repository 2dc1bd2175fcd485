/* Webhook signing against the Standard Webhooks specification's published test vectors
 * (github.com/standard-webhooks/standard-webhooks, libraries/go: TestWebhookSign and
 * TestAsymmetricWebhookSign), several keys at once, and the refusals of bad secrets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "sign.h"

#define MSG_ID "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define TS 1614265330
#define BODY "{\"test\": 2432232314}"
#define HMAC_SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define HMAC_SIG "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
#define ED_SECRET "whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk="
#define ED_SIG                                                                                     \
    "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag=="

static int
sign(const char *secrets, char *out, size_t cap)
{
    struct signer *s = NULL;
    int n;

    assert_int_equal(signer_new(&s, secrets, NULL), SA_OK);
    n = signer_sign(s, out, cap, MSG_ID, TS, (const uint8_t *)BODY, strlen(BODY));
    signer_free(s);
    return n;
}

static void
test_published_vectors(void **state)
{
    char out[512];

    (void)state;
    assert_int_equal(sign(HMAC_SECRET, out, sizeof(out)), (int)strlen(HMAC_SIG));
    assert_string_equal(out, HMAC_SIG);
    assert_int_equal(sign(ED_SECRET, out, sizeof(out)), (int)strlen(ED_SIG));
    assert_string_equal(out, ED_SIG);
}

static void
test_several_keys_and_none(void **state)
{
    char out[512];

    (void)state;
    assert_true(sign(HMAC_SECRET ", " ED_SECRET, out, sizeof(out)) > 0);
    assert_string_equal(out, HMAC_SIG " " ED_SIG);
    assert_int_equal(sign("", out, sizeof(out)), 0);
    assert_int_equal(sign(NULL, out, sizeof(out)), 0);
    assert_int_equal(sign(HMAC_SECRET, out, 10), -1);
}

static void
refused(const char *secrets, const char *want)
{
    struct signer *s = NULL;
    struct sa_err err = {0};

    assert_int_equal(signer_new(&s, secrets, &err), SA_EINVAL);
    assert_null(s);
    if (!strstr(err.msg, want))
        fail_msg("\"%s\": message \"%s\" lacks \"%s\"", secrets, err.msg, want);
    assert_null(strstr(err.msg, "MfKQ9r8GKYqrTwjUPD8IL")); /* never prints the secret */
}

static void
test_refusals(void **state)
{
    (void)state;
    refused("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "must start with whsec_ or whsk_");
    refused(HMAC_SECRET " whsec_!!!!", "secret 2 is not valid base64");
    refused("whsec_c2hvcnQ=", "not valid base64 of the right size"); /* 5 bytes: too short */
    refused("whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "not valid base64 of the right size");
    refused(HMAC_SECRET " " HMAC_SECRET " " HMAC_SECRET " " HMAC_SECRET " " HMAC_SECRET
                        " " HMAC_SECRET " " HMAC_SECRET " " HMAC_SECRET " " HMAC_SECRET,
            "more than 8 webhook secrets");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_vectors),
        cmocka_unit_test(test_several_keys_and_none),
        cmocka_unit_test(test_refusals),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
