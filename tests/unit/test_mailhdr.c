/* Mail header folding (400 recipients, a 300-character Korean subject: every line within 78
 * where a token allows and never over 998, and the value reads back unchanged), display
 * names that must stay closed quoted strings, addresses refused without quoting them, and
 * webhook header values with control bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "mailhdr.h"
#include "task.h"

static size_t
longest_line(const char *s)
{
    size_t best = 0, n;

    for (; *s; s += n + (s[n] ? 2 : 0)) {
        n = strcspn(s, "\r\n");
        assert_true(s[n] == '\0' || (s[n] == '\r' && s[n + 1] == '\n' && s[n + 2] == ' '));
        if (n > best)
            best = n;
    }
    return best;
}

/* Unfolds (RFC 5322: CRLF removed) in place. */
static char *
unfold(char *s)
{
    char *w = s;

    for (const char *r = s; *r; r++)
        if (*r != '\r' && *r != '\n')
            *w++ = *r;
    *w = '\0';
    return s;
}

/* Decodes "=?UTF-8?B?..?= =?UTF-8?B?..?=" (RFC 2047: the space between words is dropped). */
static void
decode_words(const char *s, char *out, size_t cap)
{
    size_t used = 0, bin;

    while ((s = strstr(s, "=?UTF-8?B?"))) {
        const char *end = strstr(s + 10, "?=");
        assert_non_null(end);
        assert_true(end - s + 2 <= 75);
        assert_int_equal(sodium_base642bin((unsigned char *)out + used, cap - used - 1, s + 10,
                                           (size_t)(end - s - 10), NULL, &bin, NULL,
                                           sodium_base64_VARIANT_ORIGINAL),
                         0);
        used += bin;
        s = end + 2;
    }
    out[used] = '\0';
}

static void
test_fold_400_recipients(void **state)
{
    char *list[400], want[400 * 40] = "To:", *field = NULL;
    size_t used = 3;

    (void)state;
    for (int i = 0; i < 400; i++) {
        char a[64];
        snprintf(a, sizeof(a),
                 i % 2 ? "user%03d@example.test" : "Name %03d <user%03d@example.test>", i, i);
        list[i] = strdup(a);
        used += (size_t)snprintf(want + used, sizeof(want) - used, " %s%s", a, i < 399 ? "," : "");
    }
    assert_int_equal(sa_mailhdr_addresses(&field, "To", list, 400, NULL), SA_OK);
    assert_true(longest_line(field) <= 78);
    assert_string_equal(unfold(field), want);
    free(field);
    for (int i = 0; i < 400; i++)
        free(list[i]);
}

static void
test_fold_korean_subject(void **state)
{
    char subject[1024] = "", decoded[1024], *field = NULL;

    (void)state;
    for (int i = 0; i < 300; i++)
        strcat(subject, i % 10 == 9 ? " " : "한"); /* 300 characters, 840 bytes */
    assert_int_equal(sa_mailhdr_text(&field, "Subject", subject, NULL), SA_OK);
    assert_true(longest_line(field) <= 78);
    assert_memory_equal(field, "Subject: =?UTF-8?B?", 19);
    decode_words(field, decoded, sizeof(decoded));
    assert_string_equal(decoded, subject);
    free(field);
}

static void
test_fold_ascii_subject(void **state)
{
    char subject[1000], long_word[1000], *field = NULL, decoded[1024];

    (void)state;
    memset(subject, 'a', sizeof(subject) - 1);
    subject[sizeof(subject) - 1] = '\0';
    for (size_t i = 50; i < sizeof(subject) - 1; i += 60)
        subject[i] = ' ';
    assert_int_equal(sa_mailhdr_text(&field, "Subject", subject, NULL), SA_OK);
    assert_true(longest_line(field) <= 78);
    assert_string_equal(unfold(field) + 9, subject); /* the folds' spaces are the text's own */
    free(field);
    /* one word longer than a line can hold goes as encoded-words */
    memset(long_word, 'b', sizeof(long_word) - 1);
    long_word[sizeof(long_word) - 1] = '\0';
    assert_int_equal(sa_mailhdr_text(&field, "Subject", long_word, NULL), SA_OK);
    assert_true(longest_line(field) <= 78);
    decode_words(field, decoded, sizeof(decoded));
    assert_string_equal(decoded, long_word);
    free(field);
    /* "=?" would read as an encoded-word: encoded so that it reads back as typed */
    assert_int_equal(sa_mailhdr_text(&field, "Subject", "=?UTF-8?B?SGk=?=", NULL), SA_OK);
    decode_words(field, decoded, sizeof(decoded));
    assert_string_equal(decoded, "=?UTF-8?B?SGk=?=");
    free(field);
}

static void
test_field_cap(void **state)
{
    char *list[SA_RCPT_MAX], *field = NULL, name[200];
    struct sa_err err = {0};

    (void)state;
    memset(name, 'N', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    for (int i = 0; i < SA_RCPT_MAX; i++) {
        char a[300];
        snprintf(a, sizeof(a), "%s <user%04d@example.test>", name, i);
        list[i] = strdup(a);
    }
    assert_int_equal(sa_mailhdr_addresses(&field, "To", list, SA_RCPT_MAX, &err), SA_EINVAL);
    assert_null(field);
    assert_non_null(strstr(err.msg, "the To header would be longer than 65536 bytes"));
    assert_null(strstr(err.msg, "example.test"));
    for (int i = 0; i < SA_RCPT_MAX; i++)
        free(list[i]);
}

static void
test_display_names(void **state)
{
    char *one[1], *field = NULL;

    (void)state;
    one[0] = "Evil\\ <a@example.org>";
    assert_int_equal(sa_mailhdr_addresses(&field, "From", one, 1, NULL), SA_OK);
    assert_string_equal(field, "From: \"Evil\\\\\" <a@example.org>");
    free(field);
    one[0] = "Kim, Chul-soo <kim@example.org>";
    assert_int_equal(sa_mailhdr_addresses(&field, "To", one, 1, NULL), SA_OK);
    assert_string_equal(field, "To: \"Kim, Chul-soo\" <kim@example.org>");
    free(field);
    one[0] = "김철수 <kim@example.org>";
    assert_int_equal(sa_mailhdr_addresses(&field, "To", one, 1, NULL), SA_OK);
    assert_string_equal(field, "To: =?UTF-8?B?6rmA7LKg7IiY?= <kim@example.org>");
    free(field);
}

static void
test_addresses(void **state)
{
    static const char *bad[] = {"a@evil.example.net@example.org",
                                "Name <a@b@example.org>",
                                ".a@example.org",
                                "a.@example.org",
                                "a..b@example.org",
                                "a@-example.org",
                                "a@example-.org",
                                "a@example..org",
                                "a@example",
                                "a@exa_mple.org",
                                "Na\"me <a@example.org>",
                                "a\x01@example.org",
                                NULL};
    char name[256], addr[SA_ADDRESS_MAX + 1];
    struct sa_task *t = NULL;
    struct sa_err err = {0};

    (void)state;
    for (int i = 0; bad[i]; i++) {
        struct sa_err e = {0};
        assert_int_not_equal(sa_address_parse(bad[i], name, sizeof(name), addr, sizeof(addr), &e),
                             SA_OK);
        assert_null(strstr(e.msg, "example")); /* the reason never quotes the address */
    }
    assert_int_equal(sa_address_parse("Ann O'Neil <ann.o-neil+x@mail.example.org>", name,
                                      sizeof(name), addr, sizeof(addr), NULL),
                     SA_OK);
    assert_string_equal(addr, "ann.o-neil+x@mail.example.org");
    assert_int_equal(sa_task_new(&t, NULL), SA_OK);
    assert_int_equal(sa_task_add_rcpt(t, SA_RCPT_TO, "ok@example.org", NULL), SA_OK);
    assert_int_equal(sa_task_add_rcpt(t, SA_RCPT_TO, "d@ex\x0fmple.org", &err), SA_EINVAL);
    assert_string_equal(err.msg, "recipient 2 of To: not a valid domain after @");
    sa_task_free(t);
}

/* A subject goes out labelled UTF-8: control bytes and broken UTF-8 are refused by the
 * producer with the field named (and by the builder the consumer uses), never sent. */
static void
test_subject_bytes(void **state)
{
    static const char *bad[] = {"a\x01"
                                "b",
                                "\x1b[2Jcleared",
                                "nul\x7f",
                                "latin1 caf\xe9",
                                "c1 \xc2\x85",
                                "overlong \xc0\xaf",
                                "surrogate \xed\xa0\x80",
                                "cut \xe2\x82",
                                NULL};
    struct sa_task *t = NULL;
    char *field = NULL;

    (void)state;
    assert_int_equal(sa_task_new(&t, NULL), SA_OK);
    for (int i = 0; bad[i]; i++) {
        struct sa_err err = {0};
        assert_int_equal(sa_task_set_email(t, SA_EMAIL_SUBJECT, bad[i], &err), SA_EINVAL);
        assert_string_equal(err.msg, "subject has a control byte or broken UTF-8");
        sa_err_clear(&err);
        assert_int_equal(sa_mailhdr_text(&field, "Subject", bad[i], &err), SA_EINVAL);
        assert_null(field);
    }
    assert_int_equal(sa_task_set_email(t, SA_EMAIL_SUBJECT, "회의 \tat 9 — ok", NULL), SA_OK);
    sa_task_free(t);
}

static void
test_webhook_header_values(void **state)
{
    static const char *bad[] = {"a\x01"
                                "b",
                                "\x1b[31mred",
                                "del\x7f",
                                "bad \xff byte",
                                "c1 \xc2\x9b",
                                "overlong \xc0\xaf",
                                "cut \xe2\x82",
                                NULL};
    struct sa_task *t = NULL;

    (void)state;
    assert_int_equal(sa_task_new(&t, NULL), SA_OK);
    for (int i = 0; bad[i]; i++) {
        struct sa_err err = {0};
        assert_int_equal(sa_task_add_header(t, "X-Test", bad[i], &err), SA_EINVAL);
        assert_string_equal(err.msg,
                            "header X-Test has a control byte or broken UTF-8 in its value");
    }
    assert_int_equal(sa_task_add_header(t, "X-Name", "김철수 \tok", NULL), SA_OK);
    assert_int_equal(sa_task_add_header(t, "X-Emoji", "\xf0\x9f\x98\x80", NULL), SA_OK);
    sa_task_free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_400_recipients),   cmocka_unit_test(test_fold_korean_subject),
        cmocka_unit_test(test_fold_ascii_subject),    cmocka_unit_test(test_field_cap),
        cmocka_unit_test(test_display_names),         cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_webhook_header_values), cmocka_unit_test(test_subject_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
