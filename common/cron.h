/* Recurrence: cron expressions and their next fire time in an IANA time zone (ICU's ucal, a
 * calendar per call, never setenv("TZ")). DST per invariant 4 (docs/architecture.md): a local
 * time that does not exist fires once at the first valid instant after it; a repeated local
 * time fires once, at its first instant. */
#ifndef SA_CRON_H
#define SA_CRON_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

#define SA_CRON_GAP 1     /* the local time did not exist (spring forward) */
#define SA_CRON_OVERLAP 2 /* the local time happened twice (fall back); the first was taken */

struct sa_cron;

/* Parses "m h dom mon dow" or "s m h dom mon dow" (numbers, *, a-b, a/n, a-b/n, lists,
 * JAN-DEC, SUN-SAT, dow 0-7 with 0 and 7 Sunday; dom and dow both restricted means either),
 * or @yearly, @monthly, @weekly, @daily, @hourly. SA_EINVAL names the bad field. */
enum sa_code sa_cron_parse(struct sa_cron **out, const char *expr,
                           struct sa_err *err) SA_MUST_CHECK;
void sa_cron_free(struct sa_cron *c);

/* Refuses a zone ICU does not know (ICU would silently use GMT for it). */
enum sa_code sa_tz_check(const char *zone, struct sa_err *err) SA_MUST_CHECK;

/* The first fire strictly after after_ms, into *next_ms, with SA_CRON_GAP/OVERLAP in *flags.
 * SA_ENOTFOUND if there is none within about five years (e.g. "0 0 31 2 *"). */
enum sa_code sa_cron_next(const struct sa_cron *c, const char *zone, int64_t after_ms,
                          int64_t *next_ms, int *flags, struct sa_err *err) SA_MUST_CHECK;

/* "2026-03-08 03:00:00 -04:00" for ms in zone. Returns the length, -1 on error. */
int sa_tz_format_local(char *out, size_t cap, const char *zone, int64_t ms);

#endif
