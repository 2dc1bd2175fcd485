/* log: quoted values keep their own quotes escaped (logfmt) or as JSON strings, and control
 * bytes never reach the terminal raw. */
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logfmt_escapes_quotes_inside_values),
        cmocka_unit_test(test_json_keeps_the_whole_value),
        cmocka_unit_test(test_control_bytes_are_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
