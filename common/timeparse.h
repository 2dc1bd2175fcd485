/* Times on the command line and in events: RFC 3339, relative and @unix. */
#ifndef SA_TIMEPARSE_H
#define SA_TIMEPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

#define SA_TIME_MAX_MS (253402300799999LL) /* 9999-12-31T23:59:59.999Z, the last time parsed */

/* Milliseconds since the epoch, from CLOCK_REALTIME. */
int64_t sa_now_ms(void);

/* Parses "2026-11-22T09:30:00Z", "2026-11-22T18:30:00.250+09:00" (RFC 3339 with Z or an
 * offset; 't'/'z' and a space separator accepted, a missing offset refused), "+90s",
 * "+10m", "+2h", "+3d", "+1500ms" (relative to now_ms), "now", and "@1795340100" (Unix seconds,
 * optionally with a fraction "@1795340100.5"). Sets *out_ms. SA_EINVAL with a message
 * naming the problem for anything else, including out-of-range fields and overflow. */
enum sa_code sa_time_parse(const char *text, int64_t now_ms, int64_t *out_ms,
                           struct sa_err *err) SA_MUST_CHECK;

/* sa_time_parse, and also times relative to now backwards ("-1m", "-2h"): for
 * times that read back (list ranges, previews), not for due times. */
enum sa_code sa_time_parse_read(const char *text, int64_t now_ms, int64_t *out_ms,
                                struct sa_err *err) SA_MUST_CHECK;

/* Parses a duration "250ms", "90s", "10m", "2h", "3d" into ms (used by flags like --ack-wait). */
enum sa_code sa_duration_parse(const char *text, int64_t *out_ms, struct sa_err *err) SA_MUST_CHECK;

/* Writes a duration for people, its two largest units rounded down: "7d", "6d23h", "18s",
 * "250ms" ("0s" for 0 or less). Returns the length snprintf would. */
int sa_duration_format(char *out, size_t cap, int64_t ms);

/* Writes "2026-11-22T09:30:00.250Z" (always UTC, always milliseconds). Returns the length. */
int sa_time_format(char *out, size_t cap, int64_t ms);

#endif
