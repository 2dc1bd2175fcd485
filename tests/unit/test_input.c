/* Batch input ceilings (issue 11 item 11): a line past INPUT_LINE_MAX is refused without being
 * held whole, the next line still reads, and a template stops filling at the same ceiling
 * (5,000 {{field}} and a 100 KB field used to expand to 1.48 GB first). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "input.h"

static long
peak_rss_kib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A 64 MiB line of NUL bytes (a sparse file: no disk), then a short line and a last line
 * without its newline. */
static void
test_long_line(void **state)
{
    char path[] = "/tmp/sendat-input-XXXXXX";
    const off_t huge = 64L * 1024 * 1024;
    const char tail[] = "\n{\"a\":1}\r\nlast";
    struct input *in = NULL;
    char *line = NULL;
    size_t len = 0;
    int fd = mkstemp(path), too_long = 0;
    long before;

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, huge), 0);
    assert_int_equal(pwrite(fd, tail, strlen(tail), huge), (ssize_t)strlen(tail));
    close(fd);
    assert_int_equal(input_open(&in, path, NULL), SA_OK);
    before = peak_rss_kib();
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_true(too_long);
    assert_true(peak_rss_kib() - before < 16 * 1024); /* getline held all 64 MiB */
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_false(too_long);
    assert_string_equal(line, "{\"a\":1}");
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_string_equal(line, "last");
    assert_int_equal(input_next(in, &line, &len, &too_long), 0);
    input_close(in);
    unlink(path);
}

/* A line of exactly INPUT_LINE_MAX bytes is still read. */
static void
test_line_at_ceiling(void **state)
{
    char path[] = "/tmp/sendat-input-XXXXXX";
    struct input *in = NULL;
    char *line = NULL;
    size_t len = 0;
    int fd = mkstemp(path), too_long = 0;

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, INPUT_LINE_MAX), 0);
    assert_int_equal(pwrite(fd, "\n", 1, INPUT_LINE_MAX), 1);
    close(fd);
    assert_int_equal(input_open(&in, path, NULL), SA_OK);
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_false(too_long);
    assert_int_equal(len, INPUT_LINE_MAX);
    assert_int_equal(input_next(in, &line, &len, &too_long), 0);
    input_close(in);
    unlink(path);
}

/* RFC 4180: a quoted CSV field holding a newline (LF or CRLF) is one row, and csv_split
 * gives the field with its newline; a quote left open at the end is a row that does not parse. */
static void
test_csv_newline_in_quotes(void **state)
{
    static const char text[] = "to,note\r\n"
                               "a@example.org,\"first line\r\nsecond \"\"quoted\"\"\"\r\n"
                               "b@example.org,plain\n"
                               "c@example.org,\"never closed\n";
    char path[] = "/tmp/sendat-input-XXXXXX", *line = NULL, *fields[4];
    struct input *in = NULL;
    size_t len = 0;
    int fd = mkstemp(path), too_long = 0;

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
    close(fd);
    assert_int_equal(input_open(&in, path, NULL), SA_OK);
    input_set_csv(in);
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_string_equal(line, "to,note");
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_int_equal(csv_split(line, fields, 4), 2);
    assert_string_equal(fields[0], "a@example.org");
    assert_string_equal(fields[1], "first line\nsecond \"quoted\"");
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_string_equal(line, "b@example.org,plain");
    assert_int_equal(input_next(in, &line, &len, &too_long), 1);
    assert_int_equal(csv_split(line, fields, 4), -1);
    assert_int_equal(input_next(in, &line, &len, &too_long), 0);
    input_close(in);
    unlink(path);
}

/* Lines of every length around the 64 KiB blocks input_next reads, empty ones, CRLF, and a
 * last line without its newline come back whole and in order. */
static void
test_lines_across_blocks(void **state)
{
    char path[] = "/tmp/sendat-input-XXXXXX";
    int fd = mkstemp(path), too_long = 0;
    size_t lens[400], len = 0;
    struct input *in = NULL;
    char *line = NULL, *want = malloc(140000);
    FILE *f = fdopen(fd, "w");

    (void)state;
    assert_non_null(f);
    assert_non_null(want);
    srand(11);
    for (int i = 0; i < 400; i++) {
        lens[i] = i % 7 == 0 && i < 399 ? 0 : (size_t)rand() % (i % 50 == 1 ? 130000 : 3000);
        for (size_t k = 0; k < lens[i]; k++)
            fputc('a' + (int)((k + (size_t)i) % 26), f);
        fputs(i == 399 ? "" : i % 3 ? "\n" : "\r\n", f);
    }
    fclose(f);
    assert_int_equal(input_open(&in, path, NULL), SA_OK);
    for (int i = 0; i < 400; i++) {
        if (i == 399 && lens[i] == 0)
            break; /* an empty last line without a newline is no line */
        for (size_t k = 0; k < lens[i]; k++)
            want[k] = (char)('a' + (int)((k + (size_t)i) % 26));
        assert_int_equal(input_next(in, &line, &len, &too_long), 1);
        assert_false(too_long);
        assert_int_equal(len, lens[i]);
        assert_memory_equal(line, want, len);
    }
    assert_int_equal(input_next(in, &line, &len, &too_long), 0);
    input_close(in);
    unlink(path);
    free(want);
}

static void
test_template_ceiling(void **state)
{
    const size_t fields = 5000, value_len = 1000;
    char *tmpl = malloc(fields * 5 + 80), *value = malloc(value_len + 1), *p;
    char *names[] = {"f"}, *values[] = {value};
    struct sa_err err = {0};
    json_t *obj;

    (void)state;
    assert_non_null(tmpl);
    assert_non_null(value);
    memset(value, 'v', value_len);
    value[value_len] = '\0';
    p = tmpl + sprintf(tmpl, "{\"header\":\"Content-Type: text/plain\",\"data\":\"");
    for (size_t i = 0; i < fields; i++)
        p += sprintf(p, "{{f}}");
    strcpy(p, "\"}");
    obj = template_fill(tmpl, names, values, 1, &err); /* 5 MB filled: refused at 1 MiB */
    assert_null(obj);
    assert_int_equal(err.code, SA_EINVAL);
    assert_non_null(strstr(err.msg, "longer than"));
    value[100] = '\0'; /* 500 KB: fills */
    obj = template_fill(tmpl, names, values, 1, NULL);
    assert_non_null(obj);
    assert_int_equal(strlen(json_string_value(json_object_get(obj, "data"))), fields * 100);
    json_decref(obj);
    free(tmpl);
    free(value);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_line),           cmocka_unit_test(test_line_at_ceiling),
        cmocka_unit_test(test_lines_across_blocks), cmocka_unit_test(test_csv_newline_in_quotes),
        cmocka_unit_test(test_template_ceiling),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
