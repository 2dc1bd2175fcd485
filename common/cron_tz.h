/* Local wall-clock time (civil arithmetic, no zone) and the one place that turns it into
 * instants and back: an ICU calendar for an IANA zone. Internal to cron.c. */
#ifndef SA_CRON_TZ_H
#define SA_CRON_TZ_H

#include <stdint.h>

#include "sa_err.h"

struct civil {
    int year, month, day, hour, minute, second; /* month 1-12 */
};

int civil_weekday(const struct civil *t); /* 0 = Sunday */
void civil_next_month(struct civil *t);   /* first day of the next month, 00:00:00 */
void civil_next_day(struct civil *t);     /* next day, 00:00:00 */
void civil_next_hour(struct civil *t);    /* next hour, :00:00 */
void civil_next_minute(struct civil *t);
void civil_next_second(struct civil *t);

struct tz;

enum sa_code tz_open(struct tz **out, const char *zone, struct sa_err *err) SA_MUST_CHECK;
void tz_close(struct tz *z);
/* The local time of an instant. */
void tz_local(struct tz *z, int64_t ms, struct civil *out);
/* The instant of a local time: a skipped one maps to the first valid instant after the gap
 * (SA_CRON_GAP), a repeated one to its first instant (SA_CRON_OVERLAP). */
int64_t tz_instant(struct tz *z, const struct civil *t, int *flags);
int tz_year(struct tz *z, int64_t ms);

#endif
