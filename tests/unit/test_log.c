/* log: quoted values keep their own quotes escaped (logfmt) or as JSON strings, control
 * bytes never reach the terminal raw, and held lines come out whole and in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

/* Runs one sa_log with stderr sent to a file and returns the line written (static buffer). */
static const char *
logged(const char *format, const char *text)
{
    static char line[2048];
    FILE *f = tmpfile();
    int saved = dup(STDERR_FILENO);
    size_t n;

    assert_non_null(f);
    if (format)
        setenv("SENDAT_LOG_FORMAT", format, 1);
    else
        unsetenv("SENDAT_LOG_FORMAT");
    sa_log_init("test");
    dup2(fileno(f), STDERR_FILENO);
    sa_log(SA_LOG_ERROR, "start_failed", "error=\"%s\" code=%d", text, 2);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(f);
    n = fread(line, 1, sizeof(line) - 1, f);
    line[n] = '\0';
    fclose(f);
    return line;
}

static void
test_logfmt_escapes_quotes_inside_values(void **state)
{
    const char *line = logged(NULL, "SENDAT_HOST_LIMITS: \"bar\" is not N");

    (void)state;
    assert_non_null(strstr(line, " error=\"SENDAT_HOST_LIMITS: \\\"bar\\\" is not N\" code=2\n"));
}

static void
test_json_keeps_the_whole_value(void **state)
{
    const char *line = logged("json", "a \"b\" c");

    (void)state;
    assert_non_null(strstr(line, "\"error\":\"a \\\"b\\\" c\",\"code\":\"2\"}"));
}

static void
test_control_bytes_are_escaped(void **state)
{
    const char *line = logged(NULL, "x\x1b[31my\r\nz");

    (void)state;
    assert_null(strchr(line, '\x1b'));
    assert_null(strchr(line, '\r'));
    assert_non_null(strstr(line, "x\\x1b[31my\\x0d\\x0az"));
}

/* Bytes written to f so far, as a string (static buffer). */
static const char *
written(FILE *f)
{
    static char text[4096];
    size_t n;

    fflush(f);
    rewind(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fseek(f, 0, SEEK_END);
    return text;
}

static void
test_held_lines_wait_for_the_flush_in_order(void **state)
{
    FILE *f = tmpfile();
    int saved = dup(STDERR_FILENO);
    const char *text;

    (void)state;
    assert_non_null(f);
    unsetenv("SENDAT_LOG_FORMAT");
    sa_log_init("test");
    dup2(fileno(f), STDERR_FILENO);
    sa_log_hold(1);
    sa_log(SA_LOG_INFO, "sent", "task=%s", "a");
    sa_log(SA_LOG_INFO, "sent", "task=%s", "b");
    assert_string_equal(written(f), "");          /* held */
    sa_log(SA_LOG_WARN, "retry", "task=%s", "c"); /* a warning goes at once, after what is held */
    text = written(f);
    assert_true(strstr(text, "task=a") && strstr(text, "task=b") && strstr(text, "task=c"));
    assert_true(strstr(text, "task=a") < strstr(text, "task=b"));
    assert_true(strstr(text, "task=b") < strstr(text, "task=c"));
    sa_log(SA_LOG_INFO, "sent", "task=%s", "d");
    assert_null(strstr(written(f), "task=d"));
    sa_log_hold(0); /* flushes */
    assert_non_null(strstr(written(f), "task=d\n"));
    sa_log(SA_LOG_INFO, "sent", "task=%s", "e"); /* not held any more */
    assert_non_null(strstr(written(f), "task=e\n"));
    dup2(saved, STDERR_FILENO);
    close(saved);
    fclose(f);
}

/* More held lines than fit one write to a pipe: every line arrives whole and in order. */
static void
test_held_lines_stay_whole_on_a_pipe(void **state)
{
    static char got[65536];
    char pad[600], *line;
    int fds[2], saved = dup(STDERR_FILENO), next = 0;
    size_t n = 0;
    ssize_t r;

    (void)state;
    assert_int_equal(pipe(fds), 0);
    memset(pad, 'x', sizeof(pad) - 1);
    pad[sizeof(pad) - 1] = '\0';
    unsetenv("SENDAT_LOG_FORMAT");
    sa_log_init("test");
    dup2(fds[1], STDERR_FILENO);
    sa_log_hold(1);
    for (int i = 0; i < 40; i++) /* about 26 KB: the held buffer fills and is written too */
        sa_log(SA_LOG_INFO, "sent", "pad=%s n=%d", pad, i);
    sa_log_hold(0);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fds[1]);
    while ((r = read(fds[0], got + n, sizeof(got) - 1 - n)) > 0)
        n += (size_t)r;
    close(fds[0]);
    got[n] = '\0';
    for (char *save = NULL; (line = strtok_r(next ? NULL : got, "\n", &save)); next++) {
        char want[16];

        snprintf(want, sizeof(want), " n=%d", next);
        assert_non_null(strstr(line, "time="));
        assert_non_null(strstr(line, want));
    }
    assert_int_equal(next, 40);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logfmt_escapes_quotes_inside_values),
        cmocka_unit_test(test_json_keeps_the_whole_value),
        cmocka_unit_test(test_control_bytes_are_escaped),
        cmocka_unit_test(test_held_lines_wait_for_the_flush_in_order),
        cmocka_unit_test(test_held_lines_stay_whole_on_a_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
