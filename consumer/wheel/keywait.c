/* Backoff for tasks whose key id this member does not hold (see keywait.h). Counted from the
 * message's delivery count, so no state is kept per task and a restarted member continues
 * where the fleet left off. */
#include "keywait.h"

#define FIRST_MS 500

int64_t
keywait_delay_ms(uint64_t delivered)
{
    int64_t d = FIRST_MS;

    for (uint64_t i = 1; i < delivered && d < KEYWAIT_MAX_MS; i++)
        d *= 2;
    return d < KEYWAIT_MAX_MS ? d : KEYWAIT_MAX_MS;
}
