/* Backoff for tasks whose key id this member does not hold (see keywait.h). Counted from the
 * message's delivery count, so no state is kept per task and a restarted member continues
 * where the fleet left off. */
#include "keywait.h"

#define FIRST_MS 500
#define MAX_MS 5000

int64_t
keywait_delay_ms(uint64_t delivered)
{
    int64_t d = FIRST_MS;

    for (uint64_t i = 1; i < delivered && d < MAX_MS; i++)
        d *= 2;
    return d < MAX_MS ? d : MAX_MS;
}

int64_t
keywait_park_delay_ms(uint64_t delivered)
{
    int64_t d = FIRST_MS;

    for (uint64_t i = 1; i < delivered && d < KEYWAIT_PARK_MAX_MS; i++)
        d *= 2;
    return d < KEYWAIT_PARK_MAX_MS ? d : KEYWAIT_PARK_MAX_MS;
}

int64_t
keywait_waited_ms(uint64_t delivered, int64_t limit_ms)
{
    int64_t sum = 0;

    for (uint64_t i = 1; i < delivered && sum < limit_ms; i++)
        sum += keywait_delay_ms(i);
    return sum;
}
