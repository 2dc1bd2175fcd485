/* Times from people and scripts. Calendar arithmetic is done here (days from civil) rather
 * than through mktime/TZ, so parsing never depends on the process's time zone. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "timeparse.h"

#define MAX_MS (253402300799999LL) /* 9999-12-31T23:59:59.999Z */

int64_t
sa_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t
days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int
days_in_month(int y, int m)
{
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 ? 28 + leap : dim[m - 1];
}

/* Reads exactly n digits. */
static int
digits(const char **p, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9')
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

/* ".250" -> 250 ms (more digits are truncated to milliseconds). */
static int
fraction(const char **p, int *ms)
{
    int n = 0, v = 0;

    *ms = 0;
    if (**p != '.')
        return 0;
    (*p)++;
    for (; **p >= '0' && **p <= '9'; (*p)++, n++)
        if (n < 3)
            v = v * 10 + (**p - '0');
    if (n == 0)
        return -1;
    for (int i = n; i < 3; i++)
        v *= 10;
    *ms = v;
    return 0;
}

static enum sa_code
parse_offset(const char *p, const char *text, int *off_min, struct sa_err *err)
{
    int sign, oh, om;

    if ((*p == 'Z' || *p == 'z') && p[1] == '\0') {
        *off_min = 0;
        return SA_OK;
    }
    if (*p != '+' && *p != '-')
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": give an offset (Z or +09:00)", text);
    sign = *p++ == '-' ? -1 : 1;
    if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) || *p)
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": offset must be +HH:MM", text);
    if (oh > 23 || om > 59)
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": offset out of range", text);
    *off_min = sign * (oh * 60 + om);
    return SA_OK;
}

static enum sa_code
parse_rfc3339(const char *text, int64_t *out, struct sa_err *err)
{
    const char *p = text;
    int y, mo, d, h, mi, s, ms, off = 0;
    enum sa_code rc;

    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d))
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": want RFC 3339 (2026-11-22T09:30:00Z), "
                                       "+90s/+10m/+2h/+3d or @UNIX", text);
    if (*p != 'T' && *p != 't' && *p != ' ')
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": want a time after the date", text);
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' || digits(&p, 2, &s) ||
        fraction(&p, &ms))
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": want HH:MM:SS", text);
    if (mo < 1 || mo > 12)
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": month %d out of range", text, mo);
    if (d < 1 || d > days_in_month(y, mo))
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": day %d out of range", text, d);
    if (h > 23 || mi > 59 || s > 59)
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": time of day out of range", text);
    if ((rc = parse_offset(p, text, &off, err)) != SA_OK)
        return rc;
    *out = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) - (int64_t)off * 60) * 1000 + ms;
    return SA_OK;
}

/* "90s" etc.: a positive whole number and a unit. */
static enum sa_code
parse_amount(const char *text, const char *whole, int64_t *out_ms, struct sa_err *err)
{
    int64_t v = 0, unit;
    const char *p = text;

    if (*p < '0' || *p > '9')
        return sa_fail(err, SA_EINVAL, "bad duration \"%.60s\": want a number and ms, s, m, h or d", whole);
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (*p - '0');
        if (v > 100LL * 366 * 86400 * 1000)
            return sa_fail(err, SA_EINVAL, "bad duration \"%.60s\": too large", whole);
    }
    if (!strcmp(p, "ms"))
        unit = 1;
    else if (!strcmp(p, "s"))
        unit = 1000;
    else if (!strcmp(p, "m"))
        unit = 60000;
    else if (!strcmp(p, "h"))
        unit = 3600000;
    else if (!strcmp(p, "d"))
        unit = 86400000;
    else
        return sa_fail(err, SA_EINVAL, "bad duration \"%.60s\": unit must be ms, s, m, h or d", whole);
    if (v > MAX_MS / unit)
        return sa_fail(err, SA_EINVAL, "bad duration \"%.60s\": too large", whole);
    *out_ms = v * unit;
    return SA_OK;
}

static enum sa_code
parse_unix(const char *text, int64_t *out, struct sa_err *err)
{
    const char *p = text + 1;
    int64_t secs = 0;
    int ms = 0, n = 0;

    for (; *p >= '0' && *p <= '9'; p++, n++) {
        secs = secs * 10 + (*p - '0');
        if (secs > MAX_MS / 1000)
            return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": out of range", text);
    }
    if (n == 0 || fraction(&p, &ms) != 0 || *p)
        return sa_fail(err, SA_EINVAL, "bad time \"%.60s\": want @UNIX_SECONDS[.fraction]", text);
    *out = secs * 1000 + ms;
    return SA_OK;
}

enum sa_code
sa_time_parse(const char *text, int64_t now_ms, int64_t *out_ms, struct sa_err *err)
{
    int64_t d = 0;
    enum sa_code rc;

    if (!text || !*text)
        return sa_fail(err, SA_EINVAL, "empty time");
    if (text[0] == '@')
        return parse_unix(text, out_ms, err);
    if (text[0] == '+') {
        if ((rc = parse_amount(text + 1, text, &d, err)) != SA_OK)
            return rc;
        *out_ms = now_ms + d;
        return SA_OK;
    }
    return parse_rfc3339(text, out_ms, err);
}

enum sa_code
sa_duration_parse(const char *text, int64_t *out_ms, struct sa_err *err)
{
    if (!text || !*text)
        return sa_fail(err, SA_EINVAL, "empty duration");
    return parse_amount(text, text, out_ms, err);
}

int
sa_time_format(char *out, size_t cap, int64_t ms)
{
    time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)secs * 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    return snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}
