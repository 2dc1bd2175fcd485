/* Bulk scheduling as a script uses it: an NDJSON file with a few bad lines schedules the rest
 * and names the bad ones by line number (exit 2); the same file again schedules nothing twice;
 * CSV rows through a template; --strict publishes nothing when a line is bad. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "check.h"
#include "fixture.h"

#define N 200

static struct fx F;

static void
write_ndjson(const char *path, int64_t due, int bad_lines)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    for (int i = 0; i < N; i++) {
        fprintf(f,
                "{\"at\":\"@%" PRId64
                "\",\"webhook\":\"%s/b/%d\",\"data\":\"{\\\"n\\\":%d}\",\"id\":\"batch-%d\"}\n",
                due / 1000 + i % 3, receiver_url(F.recv), i, i, i);
        if (bad_lines && i == 10)
            fprintf(f, "{\"at\":\"+1h\",\"webhook\":\"ftp://127.0.0.1/x\"}\n"); /* line 12 */
        if (bad_lines && i == 20)
            fprintf(f, "not json at all\n"); /* line 23 */
    }
    fclose(f);
}

static void
test_ndjson_twice_and_strict(void **state)
{
    char path[300], out[4096], err[8192];
    int64_t due, later;

    (void)state;
    fx_start(&F, 0);
    snprintf(path, sizeof(path), "%s/tasks.ndjson", F.dir);
    due = test_now_ms() + 5000;
    write_ndjson(path, due, 1);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 2);
    assert_non_null(strstr(err, "scheduled 200"));
    assert_non_null(strstr(err, "line 12: webhook URL scheme ftp"));
    assert_non_null(strstr(err, "line 23: not JSON"));
    assert_non_null(strstr(out, " batch-5\n")); /* each booked line's number and id on stdout */
    assert_null(strstr(out, "\n12 "));          /* a refused line has none */
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path,
                               "--json", NULL),
                     2);
    assert_non_null(strstr(out, "\"already_scheduled\":200"));
    /* started after both runs: on a loaded machine they may outlast the 5 s to the due time, and
     * a task sent before the second run would be "used and gone" (exit 6) instead of stored */
    fx_consumer(&F, 0, NULL);
    assert_true(receiver_wait(F.recv, NULL, N, 60000));
    later = test_now_ms() + 2000;
    assert_true(wait_until_ms(later, 10000));
    assert_int_equal(receiver_count(F.recv), N); /* each once, though scheduled twice */

    snprintf(path, sizeof(path), "%s/strict.ndjson", F.dir);
    write_ndjson(path, test_now_ms() + 600000, 1);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path,
                               "--strict", NULL),
                     2);
    assert_non_null(strstr(err, "nothing published"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "status", "batch-5", NULL), 0);
    assert_null(strstr(out, "waiting")); /* batch-5 was sent; the strict run did not add it again */
    fx_finish(&F);
}

static void
test_csv_template(void **state)
{
    char csv[300], tmpl[300], out[4096], err[4096];
    FILE *f;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    snprintf(csv, sizeof(csv), "%s/subscribers.csv", F.dir);
    snprintf(tmpl, sizeof(tmpl), "%s/template.json", F.dir);
    f = fopen(csv, "w");
    fputs("user,greeting\nkim,\"Hello, Kim\"\nlee,\"Say \"\"hi\"\"\"\npark,Hey\n", f);
    fclose(f);
    f = fopen(tmpl, "w");
    fprintf(f,
            "{\"at\":\"+2s\",\"webhook\":\"%s/u/"
            "{{user}}\",\"data\":\"{{greeting}}\",\"id\":\"welcome-{{user}}\","
            "\"header\":\"Content-Type: text/plain\"}\n",
            receiver_url(F.recv));
    fclose(f);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", csv,
                               "--template-file", tmpl, NULL),
                     0);
    assert_string_equal(out, "2 welcome-kim\n3 welcome-lee\n4 welcome-park\n"); /* rows 2-4 */
    assert_true(receiver_wait(F.recv, NULL, 3, 30000));
    for (size_t i = 0; i < 3; i++) {
        struct receiver_hit h;
        assert_int_equal(receiver_hit_copy(F.recv, i, &h), 0);
        if (!strcmp(h.path, "/u/lee"))
            assert_string_equal(h.body, "Say \"hi\"");
        if (!strcmp(h.path, "/u/kim"))
            assert_string_equal(h.body, "Hello, Kim");
        receiver_hit_free(&h);
    }
    fx_finish(&F);
}

/* Issue 28, item 2: a field lands in the body in the syntax of where it stands. In a JSON
 * body (the default Content-Type) a field inside a JSON string is JSON-escaped, one outside
 * is written as it is (a number); a row whose filled body is not JSON is refused, and the
 * others are booked. */
static void
test_csv_template_json_body(void **state)
{
    char csv[300], tmpl[300], out[4096], err[4096];
    FILE *f;
    json_t *doc;

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    snprintf(csv, sizeof(csv), "%s/notes.csv", F.dir);
    snprintf(tmpl, sizeof(tmpl), "%s/template.json", F.dir);
    f = fopen(csv, "w");
    fputs("user,note,n\nkim,\"quote \"\"x\"\" \\ back\",42\nlee,plain,not-a-number\n", f);
    fclose(f);
    f = fopen(tmpl, "w");
    fprintf(f,
            "{\"at\":\"+2s\",\"webhook\":\"%s/j/{{user}}\",\"id\":\"note-{{user}}\","
            "\"data\":\"{\\\"note\\\":\\\"{{note}}\\\",\\\"n\\\":{{n}}}\"}\n",
            receiver_url(F.recv));
    fclose(f);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", csv,
                               "--template-file", tmpl, NULL),
                     2);
    assert_string_equal(out, "2 note-kim\n");
    assert_non_null(strstr(err, "line 3"));
    assert_non_null(strstr(err, "not JSON"));
    assert_true(receiver_wait(F.recv, NULL, 1, 30000));
    struct receiver_hit h;
    assert_int_equal(receiver_hit_copy(F.recv, 0, &h), 0);
    assert_string_equal(h.path, "/j/kim");
    doc = json_loads(h.body, 0, NULL);
    if (!doc)
        fail_msg("not JSON at the receiver: %s", h.body);
    assert_string_equal(json_string_value(json_object_get(doc, "note")), "quote \"x\" \\ back");
    assert_int_equal(json_integer_value(json_object_get(doc, "n")), 42);
    json_decref(doc);
    receiver_hit_free(&h);
    fx_finish(&F);
}

/* Issue 28, item 9: the warning about lines without an id counts the lines it booked, not
 * the refused ones (nothing of theirs would be booked again by a rerun). */
static void
test_no_id_warning_counts_booked_lines(void **state)
{
    char path[300], out[4096], err[4096];
    FILE *f;

    (void)state;
    fx_start(&F, 0);
    snprintf(path, sizeof(path), "%s/noid.ndjson", F.dir);
    f = fopen(path, "w");
    fprintf(f, "{\"at\":\"+1h\",\"webhook\":\"%s/a\"}\n", receiver_url(F.recv));
    fprintf(f, "{\"at\":\"+1h\",\"webhook\":\"%s/b\"}\n", receiver_url(F.recv));
    fputs("{\"at\":\"+1h\",\"webhook\":\"not a url\"}\n", f);
    fputs("{\"at\":\"yesterday\",\"webhook\":\"https://example.org/h\"}\n", f);
    fprintf(f, "{\"at\":\"+1h\",\"webhook\":\"%s/c\",\"id\":\"has-id\"}\n", receiver_url(F.recv));
    fclose(f);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 2);
    assert_non_null(strstr(err, "refused 2"));
    if (!strstr(err, "sendat: 2 lines had no \"id\""))
        fail_msg("want 2 lines without id, got: %s", err);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ndjson_twice_and_strict),
        cmocka_unit_test(test_csv_template),
        cmocka_unit_test(test_csv_template_json_body),
        cmocka_unit_test(test_no_id_warning_counts_booked_lines),
    };

    return FX_RUN(tests);
}
