/* Batch lines read without jansson (batch_line_flat) must give the options jansson gives, and
 * every line it does not take, bad or merely unusual, goes to jansson, so a bad line is
 * refused with jansson's reason as before. Each case runs both parsers on the same line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../support/opts_same.h"
#include "batch.h"
#include "book.h"

#define BENCH_LINE                                                                                 \
    "{\"at\":\"@1795340100.000\",\"webhook\":\"http://127.0.0.1:9/"                                \
    "hook\",\"data\":\"{\\\"order\\\""                                                             \
    ":0000001,\\\"note\\\":\\\"pay before the due date\\\"}\"}"

/* What jansson makes of line: SA_OK with *o set (from *obj, which the caller frees), or the
 * reason in err. */
static enum sa_code
by_jansson(const char *line, struct book_req *o, json_t **obj, struct sa_err *err)
{
    struct batch b = {0};
    char *copy = strdup(line);

    assert_non_null(copy);
    *obj = batch_line_json(&b, copy, err);
    free(copy);
    if (!*obj)
        return err->code;
    return batch_opts_from_json(o, *obj, err);
}

/* Runs both parsers on line: returns whether the flat one took it, after checking that it
 * took it only with jansson's options, and left o zeroed otherwise. *why gets jansson's
 * refusal ("" if none). */
static int
both(const char *line, char why[256])
{
    struct book_req flat = {0}, slow = {0}, zero = {0};
    struct sa_err err = {0};
    char *buf = malloc(strlen(line) + 1);
    json_t *obj = NULL;
    int took;
    enum sa_code rc;

    assert_non_null(buf);
    took = batch_line_flat(&flat, line, buf);
    rc = by_jansson(line, &slow, &obj, &err);
    snprintf(why, 256, "%s", rc == SA_OK ? "" : err.msg);
    if (took) {
        assert_int_equal(rc, SA_OK);
        assert_true(opts_same(&flat, &slow));
    } else {
        assert_memory_equal(&flat, &zero, sizeof(zero));
    }
    json_decref(obj);
    free(buf);
    return took;
}

static void
taken(const char *line)
{
    char why[256];

    if (!both(line, why))
        fail_msg("not taken: %s", line);
}

/* Not taken; jansson refuses it with a reason containing want (NULL: jansson accepts it). */
static void
to_jansson(const char *line, const char *want)
{
    char why[256];

    if (both(line, why))
        fail_msg("taken: %s", line);
    if (!want && why[0])
        fail_msg("jansson refused %s: %s", line, why);
    if (want && !strstr(why, want))
        fail_msg("%s: want \"%s\", jansson said \"%s\"", line, want, why);
}

static void
test_flat_lines(void **state)
{
    struct book_req o = {0};
    char buf[sizeof(BENCH_LINE)];

    (void)state;
    assert_int_equal(batch_line_flat(&o, BENCH_LINE, buf), 1);
    assert_string_equal(o.data, "{\"order\":0000001,\"note\":\"pay before the due date\"}");
    assert_string_equal(o.webhook, "http://127.0.0.1:9/hook");
    taken(BENCH_LINE);
    taken("{}");
    taken(" \t{ \"at\" : \"+1h\" ,\r\n\"webhook\":\"http://x/\" } \t\r\n");
    taken("{\"at\":\"\",\"id\":\"\"}");
    taken("{\"at-most-once\":true,\"at\":\"+1m\"}");
    taken("{\"at-most-once\":false}");
    taken("{\"email\":[\"a@x.org\",\"b@x.org\"],\"cc\":\"c@x.org\",\"bcc\":[],\"header\":"
          "[ \"X-A: 1\" , \"X-B: 2\" ]}");
    taken("{\"not-after\":\"+2h\",\"subject\":\"s\",\"text\":\"t\",\"html\":\"<p>\",\"from\":"
          "\"f@x\",\"reply-to\":\"r@x\",\"cron\":\"0 9 * * *\",\"tz\":\"Europe/Paris\","
          "\"until\":\"2027-01-01\",\"count\":\"3\",\"group\":\"g\"}");
}

static void
test_escapes(void **state)
{
    struct book_req o = {0};
    char buf[128];

    (void)state;
    taken("{\"data\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"}");
    assert_int_equal(batch_line_flat(&o, "{\"data\":\"a\\tb\\\"c\\/\"}", buf), 1);
    assert_string_equal(o.data, "a\tb\"c/");
    to_jansson("{\"data\":\"\\x41\"}", "invalid escape");
    to_jansson("{\"data\":\"\\", "");
    to_jansson("{\"data\":\"tab\there\"}", "control character");
    to_jansson("{\"data\":\"\x01\"}", "control character");
}

static void
test_unicode_escapes(void **state)
{
    struct book_req o = {0};
    char buf[128];

    (void)state;
    taken("{\"data\":\"\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\\u007f\"}");
    assert_int_equal(batch_line_flat(&o, "{\"data\":\"\\u0041\\u00E9\\u20ac\\ud83d\\ude00\"}", buf),
                     1);
    assert_string_equal(o.data, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    taken("{\"\\u0061t\":\"+1h\"}"); /* "at", escaped */
    to_jansson("{\"data\":\"\\u0000\"}", "\\u0000 is not allowed");
    to_jansson("{\"data\":\"\\uD800\"}", "invalid Unicode");
    to_jansson("{\"data\":\"\\uD800\\u0041\"}", "invalid Unicode");
    to_jansson("{\"data\":\"\\uDC00\"}", "invalid Unicode");
    to_jansson("{\"data\":\"\\u12\"}", "invalid escape");
    to_jansson("{\"data\":\"\\u12G4\"}", "invalid escape");
    to_jansson("{\"data\":\"\\uD800\\u12\"}", "invalid escape");
    /* raw UTF-8 goes to jansson, which checks it */
    to_jansson("{\"data\":\"caf\xc3\xa9\"}", NULL);
    to_jansson("{\"data\":\"\xff\"}", "unable to decode byte 0xff");
    to_jansson("{\"data\":\"\xc0\xaf\"}", "unable to decode byte 0xc0");
}

static void
test_other_shapes(void **state)
{
    (void)state;
    to_jansson("{\"data\":{\"a\":1}}", "\"data\" must be a string");
    to_jansson("{\"data\":[\"a\"]}", "\"data\" must be a string");
    to_jansson("{\"data\":1}", "\"data\" must be a string");
    to_jansson("{\"data\":null}", "\"data\" must be a string");
    to_jansson("{\"email\":[\"a@x\",{\"b\":1}]}", "\"email\" must hold strings");
    to_jansson("{\"email\":7}", "\"email\" must be a string or a list of strings");
    to_jansson("{\"at-most-once\":\"yes\"}", "\"at-most-once\" must be true or false");
    to_jansson("{\"at-most-once\":1}", "\"at-most-once\" must be true or false");
    to_jansson("{\"at-most-once\":truex}", "invalid token");
    to_jansson("{\"bogus\":\"x\"}", "unknown key \"bogus\"");
    to_jansson("{\"at\":\"a\",\"at\":\"b\"}", "duplicate object key");
    to_jansson("{\"at\":\"a\",\"\\u0061t\":\"b\"}", "duplicate object key");
    to_jansson("[{\"at\":\"a\"}]", "a line must be a JSON object");
}

static void
test_too_many(void **state)
{
    char line[4096] = "{\"header\":[";
    char why[256];

    (void)state;
    for (int i = 0; i < SA_HEADERS_MAX; i++)
        strcat(line, i ? ",\"X: 1\"" : "\"X: 1\"");
    strcat(line, "]}");
    taken(line);
    line[strlen(line) - 2] = '\0';
    strcat(line, ",\"X: 1\"]}");
    if (both(line, why) || !strstr(why, "too many \"header\" values"))
        fail_msg("65 headers: %s", why);
}

static void
test_garbage(void **state)
{
    static const char *bad[] = {
        "",
        "   ",
        "not json",
        "{",
        "{\"at\"",
        "{\"at\":}",
        "{\"at\" \"x\"}",
        "{\"at\":\"x\",}",
        "{,}",
        "{\"at\":\"x\"}}",
        "{\"at\":\"x\"} trailing",
        "{\"at\":\"x\"}{}",
        "\"str\"",
        "true",
        "{'at':'x'}",
        "{at:\"x\"}",
        "{\"at\":\"x\"",
        "{\"email\":[\"a\",]}",
        "{\"email\":[\"a\"}",
        "{\"email\":[,\"a\"]}",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        to_jansson(bad[i], "");
}

/* Lines made by changing bytes of good lines: whatever the flat parser takes, jansson takes
 * with the same options (both() checks it). */
static void
test_mutations(void **state)
{
    static const char alphabet[] = "{}[]\":,\\u0aDd \t\x01\x80true";
    static const char *seeds[] = {BENCH_LINE, "{\"email\":[\"a@x\",\"b\"],\"at-most-once\":true}",
                                  "{\"data\":\"\\uD83D\\uDE00\\n\",\"at\":\"+1h\"}"};
    char line[256], why[256];
    long took = 0;

    (void)state;
    srand(15);
    for (int i = 0; i < 200000; i++) {
        const char *seed = seeds[i % 3];
        size_t len = strlen(seed);

        memcpy(line, seed, len + 1);
        for (int k = 1 + rand() % 3; k > 0; k--)
            line[rand() % len] = alphabet[rand() % (sizeof(alphabet) - 1)];
        took += both(line, why);
    }
    assert_true(took > 1000); /* some mutations stay flat lines */
}

/* A refusal names its field because the core said so (sa_err.field, the batch key), and the
 * API's words have no "--"; the CLI's words have them. These are the fields the API has
 * always answered with, odd ones included (not-after before at: "at"). */
static void
test_refusals_name_fields(void **state)
{
    static const struct {
        const char *line, *field, *msg;
    } cases[] = {
        {"{}", "at", "at TIME (or cron EXPR tz ZONE) is required"},
        {"{\"at\":\"+1m\"}", "webhook", "webhook URL or email ADDR is required"},
        {"{\"at\":\"soon\",\"webhook\":\"http://x/\"}", "at", "at: bad time \"soon\""},
        {"{\"at\":\"+1m\",\"not-after\":\"+1s\",\"webhook\":\"http://x/\"}", "at",
         "not-after +1s is before at"},
        {"{\"at\":\"+1m\",\"tz\":\"UTC\",\"webhook\":\"http://x/\"}", "cron",
         "tz, until and count go with cron"},
        {"{\"cron\":\"* * * *\",\"tz\":\"UTC\",\"webhook\":\"http://x/\"}", "cron", "cron \""},
        {"{\"cron\":\"* * * * *\",\"tz\":\"Mars/Base\",\"webhook\":\"http://x/\"}", NULL,
         "unknown time zone"},
        {"{\"at\":\"+1m\",\"webhook\":\"ftp://x/\"}", "webhook", "webhook URL scheme"},
        {"{\"at\":\"+1m\",\"webhook\":\"example.org/hook\"}", "webhook",
         "webhook URL does not parse: want http:// or https://"},
        {"{\"at\":\"2020-01-01T00:00:00Z\",\"webhook\":\"http://x/\"}", "at",
         "at 2020-01-01T00:00:00Z is 2"},
        {"{\"at\":\"+1m\",\"webhook\":\"http://x/\",\"header\":\"nocolon\"}", "header",
         "header \"nocolon\""},
        {"{\"at\":\"+1m\",\"webhook\":\"http://x/\",\"colour\":\"red\"}", "colour",
         "unknown key \"colour\""},
        {"{\"at\":\"+1m\",\"webhook\":\"http://x/\",\"id\":\"a b\"}", "id", "id \"a b\""},
        {"{\"at\":\"+1m\",\"email\":\"a@b.c\"}", "subject", "subject is required"},
        {"{\"at\":\"+1m\",\"email\":\"bad\",\"subject\":\"s\",\"text\":\"t\"}", NULL,
         "recipient 1 of To"},
        {"{\"at\":\"+1m\",\"email\":\"a@b.c\",\"subject\":\"s\",\"text\":\"t\",\"from\":\"x\"}",
         "from", "from: "},
    };
    struct book_req cli = {0};
    struct sa_err err = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *obj = json_loads(cases[i].line, 0, NULL);
        struct sa_task *t = NULL;

        sa_err_clear(&err);
        assert_int_equal(book_build_json(obj, &t, &err), SA_EINVAL);
        if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) ||
            strcmp(err.field, cases[i].field ? cases[i].field : ""))
            fail_msg("%s: [%s] %s", cases[i].line, err.field, err.msg);
        json_decref(obj);
    }
    sa_err_clear(&err);
    assert_int_equal(book_check(&cli, &err), SA_EINVAL); /* the CLI's words */
    assert_string_equal(err.msg, "--at TIME (or --cron EXPR --tz ZONE) is required");
    assert_string_equal(err.field, "at");
}

/* Only an id the producer made marks the task (issue 33 item 2: it is published without a
 * Msg-Id); an id given, a series' occurrence and a copy are not marked. */
static void
test_id_generated(void **state)
{
    static const struct {
        const char *line;
        int generated;
    } cases[] = {
        {"{\"at\":\"+1h\",\"webhook\":\"http://x/\"}", 1},
        {"{\"at\":\"+1h\",\"webhook\":\"http://x/\",\"id\":\"mine-1\"}", 0},
        {"{\"cron\":\"0 9 * * *\",\"tz\":\"UTC\",\"webhook\":\"http://x/\"}", 0},
        {"{\"cron\":\"0 9 * * *\",\"tz\":\"UTC\",\"webhook\":\"http://x/\",\"id\":\"s-1\"}", 0},
    };
    struct sa_err err = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *obj = json_loads(cases[i].line, 0, NULL);
        struct sa_task *t = NULL, *copy = NULL;

        assert_int_equal(book_build_json(obj, &t, &err), SA_OK);
        if (t->id_generated != cases[i].generated)
            fail_msg("%s: id_generated %d", cases[i].line, t->id_generated);
        assert_int_equal(sa_task_copy(t, &copy, &err), SA_OK);
        assert_int_equal(copy->id_generated, 0);
        sa_task_free(copy);
        sa_task_free(t);
        json_decref(obj);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_lines),      cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_unicode_escapes), cmocka_unit_test(test_other_shapes),
        cmocka_unit_test(test_too_many),        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_mutations),       cmocka_unit_test(test_refusals_name_fields),
        cmocka_unit_test(test_id_generated),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
