/* One summary line per interval for events of one cause (logsum.h): the counts are never
 * dropped, only the lines past the first few. */
#include <stdio.h>

#include "log.h"
#include "logsum.h"

void
logsum_tick(struct logsum *s, int64_t now_ms)
{
    if (!s->from_ms || now_ms < s->from_ms + LOGSUM_EVERY_MS)
        return;
    if (s->seen > s->whole) {
        char event[64];

        snprintf(event, sizeof(event), "%s_summary", s->event);
        sa_log(SA_LOG_WARN, event, "count=%ld logged=%ld interval_s=%d", s->seen, s->whole,
               LOGSUM_EVERY_MS / 1000);
    }
    s->from_ms = 0;
    s->seen = s->whole = 0;
}

int
logsum_take(struct logsum *s, int64_t now_ms)
{
    logsum_tick(s, now_ms);
    if (!s->from_ms)
        s->from_ms = now_ms;
    s->seen++;
    if (s->whole >= LOGSUM_WHOLE)
        return 0;
    s->whole++;
    return 1;
}
