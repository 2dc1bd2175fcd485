/* Mail header values: RFC 2047 encoded-words that each decode on their own, folded one word a
 * line within RFC 2047's 76 characters, display names quoted or encoded, and RFC 5322 dates.
 * The decoding here is written from RFC 2047 (B encoding), not taken from the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "mailhdr.h"

#define KOREAN "안녕하세요, sendat 주간 알림입니다 — 월요일 07:00 (Asia/Seoul) 확인해 주세요"

/* Decodes one "=?UTF-8?B?...?=" word at *p into out (appended at *len); moves *p past it. */
static void
decode_word(const char **p, uint8_t *out, size_t *len, size_t cap)
{
    const char *end;
    size_t n = 0;

    assert_int_equal(strncmp(*p, "=?UTF-8?B?", 10), 0);
    end = strstr(*p + 10, "?=");
    assert_non_null(end);
    assert_int_equal(sodium_base642bin(out + *len, cap - *len, *p + 10, (size_t)(end - *p - 10), NULL, &n,
                                       NULL, sodium_base64_VARIANT_ORIGINAL),
                     0);
    /* each word holds whole characters: it neither starts nor ends inside one */
    assert_true(n > 0 && (out[*len] & 0xC0) != 0x80);
    assert_int_equal(sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL) - 1,
                     (size_t)(end - *p - 10));
    *len += n;
    *p = end + 2;
}

/* Checks the folding and returns the decoded text. */
static void
decode(const char *value, char *text, size_t cap)
{
    size_t len = 0;
    const char *p = value;

    for (;;) {
        const char *eol = strstr(p, "\r\n");
        size_t line = eol ? (size_t)(eol - p) : strlen(p);

        assert_true(line + strlen("Reply-To: ") <= 76);
        decode_word(&p, (uint8_t *)text, &len, cap - 1);
        if (!*p)
            break;
        assert_int_equal(strncmp(p, "\r\n =?", 5), 0); /* folded: CRLF, one space, next word */
        p += 3;
    }
    text[len] = '\0';
}

static void
test_ascii_as_is(void **state)
{
    char out[256];

    (void)state;
    assert_int_equal(mailhdr_encode(out, sizeof(out), "Weekly report: 3 items"), 22);
    assert_string_equal(out, "Weekly report: 3 items");
    assert_int_equal(mailhdr_encode(out, 5, "Weekly"), -1);
}

static void
test_korean_round_trips_folded(void **state)
{
    char out[2048], text[1024], longest[1000];
    size_t n = 0;

    (void)state;
    assert_true(mailhdr_encode(out, sizeof(out), KOREAN) > 0);
    decode(out, text, sizeof(text));
    assert_string_equal(text, KOREAN);
    while (n + strlen("가") < sizeof(longest)) /* the longest subject a task may carry */
        n += (size_t)snprintf(longest + n, sizeof(longest) - n, "가");
    assert_true(mailhdr_encode(out, sizeof(out), longest) > 0);
    decode(out, text, sizeof(text));
    assert_string_equal(text, longest);
    assert_int_equal(mailhdr_encode(out, 40, KOREAN), -1);
}

static void
test_mailboxes(void **state)
{
    char out[512], text[256];

    (void)state;
    assert_true(mailhdr_mailbox(out, sizeof(out), "ops@example.test") > 0);
    assert_string_equal(out, "ops@example.test");
    assert_true(mailhdr_mailbox(out, sizeof(out), "Ops Team <ops@example.test>") > 0);
    assert_string_equal(out, "Ops Team <ops@example.test>");
    assert_true(mailhdr_mailbox(out, sizeof(out), "Kim, Minji <minji@example.test>") > 0);
    assert_string_equal(out, "\"Kim, Minji\" <minji@example.test>");
    assert_true(mailhdr_mailbox(out, sizeof(out), "김민지 <minji@example.test>") > 0);
    assert_non_null(strstr(out, "?= <minji@example.test>"));
    *strstr(out, " <minji") = '\0';
    decode(out, text, sizeof(text));
    assert_string_equal(text, "김민지");
    assert_int_equal(mailhdr_mailbox(out, sizeof(out), "not an address"), -1);
    assert_int_equal(mailhdr_mailbox(out, 10, "Ops Team <ops@example.test>"), -1);
}

static void
test_dates(void **state)
{
    char out[64];

    (void)state;
    mailhdr_date(out, sizeof(out), 1795340100000LL); /* 2026-11-22T09:35:00Z */
    assert_string_equal(out, "Sun, 22 Nov 2026 09:35:00 +0000");
    mailhdr_date(out, sizeof(out), 951782400999LL); /* 2000-02-29T00:00:00.999Z */
    assert_string_equal(out, "Tue, 29 Feb 2000 00:00:00 +0000");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_as_is),
        cmocka_unit_test(test_korean_round_trips_folded),
        cmocka_unit_test(test_mailboxes),
        cmocka_unit_test(test_dates),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
