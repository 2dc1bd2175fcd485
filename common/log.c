/* Logging for the binaries: one line per event, written with a single write(2) so lines
 * from several threads never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static enum sa_log_level min_level = SA_LOG_INFO;
static const char *prog_name = "sendat";

void
sa_log_init(const char *prog)
{
    const char *lv = getenv("SENDAT_LOG_LEVEL");

    prog_name = prog;
    if (!lv)
        return;
    if (!strcasecmp(lv, "debug"))
        min_level = SA_LOG_DEBUG;
    else if (!strcasecmp(lv, "warn"))
        min_level = SA_LOG_WARN;
    else if (!strcasecmp(lv, "error"))
        min_level = SA_LOG_ERROR;
}

int
sa_log_enabled(enum sa_log_level level)
{
    return level >= min_level;
}

void
sa_log(enum sa_log_level level, const char *event, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    char line[1024];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    if (level < min_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = snprintf(line, sizeof(line), "time=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s prog=%s event=%s ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 ts.tv_nsec / 1000000, names[level], prog_name, event);
    if (n < 0 || (size_t)n >= sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - 2 - (size_t)n, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}
