/* Times from people and scripts: RFC 3339, "+90s" relative to a given now, and "@unix".
 * Calendar arithmetic is done here (days from civil and back) rather than with mktime/TZ or
 * gmtime, so the result never depends on the process's time zone. Every instant is kept in
 * 0000-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z, so it formats back to four-digit years. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "timeparse.h"

#define MIN_MS (-62167219200000LL) /* 0000-01-01T00:00:00.000Z */
#define MAX_MS SA_TIME_MAX_MS
#define DAY_MS 86400000LL
#define SHOW "bad time \"%.80s\": " /* every message names the input */

struct civil {
    int y, mo, d, h, mi, s, ms, off_min;
};

int64_t
sa_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (eras of 400 years, March-based). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The inverse: a day number back to year, month and day. */
static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int
days_in_month(int y, int m)
{
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 ? 28 + leap : dim[m - 1];
}

static int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reads exactly n digits, then the separator sep (if not '\0'). */
static int
digits(const char **p, int n, char sep, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (!is_digit((*p)[i]))
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    if (sep && (*p)[n] != sep)
        return -1;
    *p += n + (sep != '\0');
    *out = v;
    return 0;
}

/* ".250" -> 250 ms. Digits past the third are truncated, never rounded up into the next
 * second. No '.' means 0; a '.' without digits is an error. */
static int
fraction(const char **p, int *ms)
{
    int n = 0, v = 0;

    *ms = 0;
    if (**p != '.')
        return 0;
    for ((*p)++; is_digit(**p); (*p)++, n++)
        if (n < 3)
            v = v * 10 + (**p - '0');
    for (int i = n; i < 3; i++)
        v *= 10;
    *ms = v;
    return n == 0 ? -1 : 0;
}

static enum sa_code
parse_offset(const char *p, const char *text, int *off_min, struct sa_err *err)
{
    int sign, oh, om;

    if (*p == 'Z' || *p == 'z') {
        *off_min = 0;
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p++ == '-' ? -1 : 1;
        if (digits(&p, 2, ':', &oh) || digits(&p, 2, '\0', &om))
            return sa_fail(err, SA_EINVAL, SHOW "offset must be Z or +HH:MM / -HH:MM", text);
        if (oh > 23 || om > 59)
            return sa_fail(err, SA_EINVAL, SHOW "offset %c%02d:%02d out of range (at most 23:59)",
                           text, sign < 0 ? '-' : '+', oh, om);
        *off_min = sign * (oh * 60 + om);
    } else if (*p == '\0') {
        return sa_fail(err, SA_EINVAL, SHOW "no offset: add Z (UTC) or one like +09:00", text);
    } else {
        return sa_fail(err, SA_EINVAL, SHOW "want Z or an offset like +09:00 after the time", text);
    }
    if (*p)
        return sa_fail(err, SA_EINVAL, SHOW "unexpected \"%.20s\" after the offset", text, p);
    return SA_OK;
}

/* The shape: YYYY-MM-DD, 'T'/'t'/' ', HH:MM:SS, optional fraction, then the offset. */
static enum sa_code
scan_rfc3339(const char *text, struct civil *c, struct sa_err *err)
{
    const char *p = text;

    if (digits(&p, 4, '-', &c->y) || digits(&p, 2, '-', &c->mo) || digits(&p, 2, '\0', &c->d))
        return sa_fail(err, SA_EINVAL,
                       SHOW "want RFC 3339 (2026-11-22T09:30:00Z), +90s/+10m/+2h/+3d or @UNIX",
                       text);
    if (*p != 'T' && *p != 't' && *p != ' ')
        return sa_fail(err, SA_EINVAL, SHOW "want 'T' and a time of day after the date", text);
    p++;
    if (digits(&p, 2, ':', &c->h) || digits(&p, 2, ':', &c->mi) || digits(&p, 2, '\0', &c->s))
        return sa_fail(err, SA_EINVAL, SHOW "time of day must be HH:MM:SS", text);
    if (fraction(&p, &c->ms))
        return sa_fail(err, SA_EINVAL, SHOW "want digits after the '.' of the seconds", text);
    return parse_offset(p, text, &c->off_min, err);
}

/* Leap second 60 is refused, not clamped: nothing here is scheduled that precisely, and
 * clamping would silently move a time the user wrote. */
static enum sa_code
check_fields(const char *text, const struct civil *c, struct sa_err *err)
{
    if (c->mo < 1 || c->mo > 12)
        return sa_fail(err, SA_EINVAL, SHOW "month %d out of range", text, c->mo);
    if (c->d < 1 || c->d > days_in_month(c->y, c->mo))
        return sa_fail(err, SA_EINVAL, SHOW "day %d out of range (%04d-%02d has %d days)", text,
                       c->d, c->y, c->mo, days_in_month(c->y, c->mo));
    if (c->h > 23)
        return sa_fail(err, SA_EINVAL, SHOW "hour %d out of range", text, c->h);
    if (c->mi > 59)
        return sa_fail(err, SA_EINVAL, SHOW "minute %d out of range", text, c->mi);
    if (c->s == 60)
        return sa_fail(err, SA_EINVAL, SHOW "second 60 (leap second) is not accepted", text);
    if (c->s > 59)
        return sa_fail(err, SA_EINVAL, SHOW "second %d out of range", text, c->s);
    return SA_OK;
}

static enum sa_code
parse_rfc3339(const char *text, int64_t *out, struct sa_err *err)
{
    struct civil c = {0};
    enum sa_code rc;
    int64_t secs, ms;

    if ((rc = scan_rfc3339(text, &c, err)) != SA_OK || (rc = check_fields(text, &c, err)) != SA_OK)
        return rc;
    secs = days_from_civil(c.y, c.mo, c.d) * 86400 + c.h * 3600 + c.mi * 60 + c.s;
    ms = (secs - (int64_t)c.off_min * 60) * 1000 + c.ms;
    if (ms < MIN_MS || ms > MAX_MS)
        return sa_fail(err, SA_EINVAL, SHOW "outside 0000-01-01 .. 9999-12-31 in UTC", text);
    *out = ms;
    return SA_OK;
}

static const struct {
    const char *name;
    int64_t ms;
} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", DAY_MS}};
#define N_UNITS (sizeof(units) / sizeof(units[0]))

/* "90s" etc.: a whole number without sign and one unit, at most MAX_MS in total. */
static enum sa_code
parse_amount(const char *p, const char *what, const char *text, int64_t *out_ms, struct sa_err *err)
{
    int64_t v = 0;

    if (!is_digit(*p))
        return sa_fail(err, SA_EINVAL, "bad %s \"%.80s\": want a number and ms, s, m, h or d", what,
                       text);
    for (; is_digit(*p); p++) {
        v = v * 10 + (*p - '0');
        if (v > MAX_MS)
            return sa_fail(err, SA_EINVAL, "bad %s \"%.80s\": too large", what, text);
    }
    for (size_t i = 0; i < N_UNITS; i++) {
        if (strcmp(p, units[i].name) != 0)
            continue;
        if (v > MAX_MS / units[i].ms)
            return sa_fail(err, SA_EINVAL, "bad %s \"%.80s\": too large", what, text);
        *out_ms = v * units[i].ms;
        return SA_OK;
    }
    return sa_fail(err, SA_EINVAL, "bad %s \"%.80s\": unit must be ms, s, m, h or d", what, text);
}

static enum sa_code
parse_relative(const char *text, int64_t now_ms, int64_t *out, struct sa_err *err)
{
    int64_t d = 0;
    enum sa_code rc = parse_amount(text + 1, "time", text, &d, err);

    if (rc != SA_OK)
        return rc;
    if (now_ms > MAX_MS - d)
        return sa_fail(err, SA_EINVAL, SHOW "lands after 9999-12-31", text);
    *out = now_ms + d;
    return SA_OK;
}

static enum sa_code
parse_unix(const char *text, int64_t *out, struct sa_err *err)
{
    const char *p = text + 1;
    int64_t secs = 0;
    int ms = 0;

    if (!is_digit(*p))
        return sa_fail(err, SA_EINVAL, SHOW "want @UNIX_SECONDS[.fraction]", text);
    for (; is_digit(*p); p++) {
        secs = secs * 10 + (*p - '0');
        if (secs > MAX_MS / 1000)
            return sa_fail(err, SA_EINVAL, SHOW "after 9999-12-31", text);
    }
    if (fraction(&p, &ms) != 0 || *p)
        return sa_fail(err, SA_EINVAL, SHOW "want @UNIX_SECONDS[.fraction]", text);
    *out = secs * 1000 + ms;
    return SA_OK;
}

enum sa_code
sa_time_parse(const char *text, int64_t now_ms, int64_t *out_ms, struct sa_err *err)
{
    if (!text || !*text)
        return sa_fail(err, SA_EINVAL,
                       "empty time: want RFC 3339, now, +90s/+10m/+2h/+3d or @UNIX");
    if (!strcmp(text, "now")) {
        *out_ms = now_ms;
        return SA_OK;
    }
    if (text[0] == '@')
        return parse_unix(text, out_ms, err);
    if (text[0] == '+')
        return parse_relative(text, now_ms, out_ms, err);
    return parse_rfc3339(text, out_ms, err);
}

enum sa_code
sa_duration_parse(const char *text, int64_t *out_ms, struct sa_err *err)
{
    if (!text || !*text)
        return sa_fail(err, SA_EINVAL, "empty duration: want a number and ms, s, m, h or d");
    return parse_amount(text, "duration", text, out_ms, err);
}

int
sa_duration_format(char *out, size_t cap, int64_t ms)
{
    size_t n = 0;
    int used = 0;

    if (cap > 0)
        out[0] = '\0';
    if (ms <= 0)
        return snprintf(out, cap, "0s");
    for (size_t i = N_UNITS; i-- > 0 && used < 2;) {
        int64_t k = ms / units[i].ms;
        if (k == 0 && used)
            break; /* "7d", not "7d0h" */
        if (k == 0)
            continue;
        n += (size_t)snprintf(out + (n < cap ? n : cap), n < cap ? cap - n : 0, "%" PRId64 "%s", k,
                              units[i].name);
        ms -= k * units[i].ms;
        used++;
    }
    return (int)n;
}

int
sa_time_format(char *out, size_t cap, int64_t ms)
{
    int64_t days = ms / DAY_MS, rem = ms % DAY_MS, y;
    int m, d;

    if (rem < 0) { /* floor, so times before 1970 count forward from their midnight */
        rem += DAY_MS;
        days--;
    }
    civil_from_days(days, &y, &m, &d);
    return snprintf(out, cap, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d,
                    (int)(rem / 3600000), (int)(rem / 60000 % 60), (int)(rem / 1000 % 60),
                    (int)(rem % 1000));
}

enum sa_code
sa_time_parse_read(const char *text, int64_t now_ms, int64_t *out_ms, struct sa_err *err)
{
    int64_t back = 0;
    struct sa_err why = {0};

    if (!text || text[0] != '-')
        return sa_time_parse(text, now_ms, out_ms, err);
    if (sa_duration_parse(text + 1, &back, &why) != SA_OK || back > now_ms)
        return sa_fail(err, SA_EINVAL,
                       "time \"%.40s\" is not one: want RFC 3339, now, +10m, -10m or @UNIX", text);
    *out_ms = now_ms - back;
    return SA_OK;
}
