/* ICU behind a small interface: a calendar per call (ICU calendars are not thread-safe), a
 * zone checked against ICU's list first (ICU silently falls back to GMT for unknown ids). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ucal.h>
#include <unicode/ustring.h>

#include "cron.h"
#include "cron_tz.h"

struct tz {
    UCalendar *cal;
};

static int64_t
days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static int
days_in_month(int y, int m)
{
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    return m == 2 ? 28 + ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) : dim[m - 1];
}

int
civil_weekday(const struct civil *t)
{
    int64_t d = days_from_civil(t->year, t->month, t->day); /* 1970-01-01 was a Thursday */

    return (int)(((d % 7) + 11) % 7);
}

void
civil_next_month(struct civil *t)
{
    t->day = 1;
    t->hour = t->minute = t->second = 0;
    if (++t->month > 12) {
        t->month = 1;
        t->year++;
    }
}

void
civil_next_day(struct civil *t)
{
    t->hour = t->minute = t->second = 0;
    if (++t->day > days_in_month(t->year, t->month)) {
        t->day = 32; /* civil_next_month resets it */
        civil_next_month(t);
    }
}

void
civil_next_hour(struct civil *t)
{
    t->minute = t->second = 0;
    if (++t->hour > 23)
        civil_next_day(t);
}

void
civil_next_minute(struct civil *t)
{
    t->second = 0;
    if (++t->minute > 59)
        civil_next_hour(t);
}

void
civil_next_second(struct civil *t)
{
    if (++t->second > 59)
        civil_next_minute(t);
}

static UCalendar *
open_cal(const char *zone, UErrorCode *st)
{
    UChar id[128];

    u_uastrncpy(id, zone, 127);
    id[127] = 0;
    return ucal_open(id, -1, "en_US_POSIX", UCAL_GREGORIAN, st);
}

enum sa_code
sa_tz_check(const char *zone, struct sa_err *err)
{
    UChar id[128], canon[128];
    UBool system = 0;
    UErrorCode st = U_ZERO_ERROR;

    if (!zone || !*zone || strlen(zone) > 100)
        return sa_fail(err, SA_EINVAL, "time zone is missing");
    u_uastrncpy(id, zone, 127);
    id[127] = 0;
    ucal_getCanonicalTimeZoneID(id, -1, canon, 128, &system, &st);
    if (U_FAILURE(st) || !system)
        return sa_fail(err, SA_EINVAL,
                       "unknown time zone \"%.60s\" (want an IANA name like Asia/Seoul)", zone);
    return SA_OK;
}

enum sa_code
tz_open(struct tz **out, const char *zone, struct sa_err *err)
{
    UErrorCode st = U_ZERO_ERROR;
    struct tz *z;
    enum sa_code rc = sa_tz_check(zone, err);

    *out = NULL;
    if (rc != SA_OK)
        return rc;
    z = calloc(1, sizeof(*z));
    if (!z)
        return sa_fail(err, SA_ENOMEM, "no memory for a calendar");
    z->cal = open_cal(zone, &st);
    if (U_FAILURE(st)) {
        free(z);
        return sa_fail(err, SA_EINVAL, "time zone %.60s: %s", zone, u_errorName(st));
    }
    ucal_setAttribute(z->cal, UCAL_SKIPPED_WALL_TIME, UCAL_WALLTIME_NEXT_VALID);
    *out = z;
    return SA_OK;
}

void
tz_close(struct tz *z)
{
    if (!z)
        return;
    ucal_close(z->cal);
    free(z);
}

void
tz_local(struct tz *z, int64_t ms, struct civil *out)
{
    UErrorCode st = U_ZERO_ERROR;

    ucal_setMillis(z->cal, (UDate)ms, &st);
    out->year = ucal_get(z->cal, UCAL_YEAR, &st);
    out->month = ucal_get(z->cal, UCAL_MONTH, &st) + 1;
    out->day = ucal_get(z->cal, UCAL_DATE, &st);
    out->hour = ucal_get(z->cal, UCAL_HOUR_OF_DAY, &st);
    out->minute = ucal_get(z->cal, UCAL_MINUTE, &st);
    out->second = ucal_get(z->cal, UCAL_SECOND, &st);
}

int
tz_year(struct tz *z, int64_t ms)
{
    struct civil t;

    tz_local(z, ms, &t);
    return t.year;
}

static int64_t
instant(struct tz *z, const struct civil *t, UCalendarWallTimeOption repeated)
{
    UErrorCode st = U_ZERO_ERROR;

    ucal_setAttribute(z->cal, UCAL_REPEATED_WALL_TIME, repeated);
    ucal_clear(z->cal);
    ucal_setDateTime(z->cal, t->year, t->month - 1, t->day, t->hour, t->minute, t->second, &st);
    return (int64_t)ucal_getMillis(z->cal, &st);
}

int64_t
tz_instant(struct tz *z, const struct civil *t, int *flags)
{
    int64_t first = instant(z, t, UCAL_WALLTIME_FIRST), last = instant(z, t, UCAL_WALLTIME_LAST);
    struct civil back;

    *flags = 0;
    if (first != last)
        *flags |= SA_CRON_OVERLAP;
    tz_local(z, first, &back);
    if (back.hour != t->hour || back.minute != t->minute || back.day != t->day)
        *flags |= SA_CRON_GAP;
    return first;
}

int
sa_tz_format_local(char *out, size_t cap, const char *zone, int64_t ms)
{
    UErrorCode st = U_ZERO_ERROR;
    UCalendar *cal = open_cal(zone, &st);
    int off, n;
    struct tz z = {cal};
    struct civil t;

    if (U_FAILURE(st))
        return -1;
    tz_local(&z, ms, &t);
    off = (ucal_get(cal, UCAL_ZONE_OFFSET, &st) + ucal_get(cal, UCAL_DST_OFFSET, &st)) / 60000;
    n = snprintf(out, cap, "%04d-%02d-%02d %02d:%02d:%02d %c%02d:%02d", t.year, t.month, t.day,
                 t.hour, t.minute, t.second, off < 0 ? '-' : '+', abs(off) / 60, abs(off) % 60);
    ucal_close(cal);
    return n;
}
