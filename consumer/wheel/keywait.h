/* Tasks sealed with a key this member does not hold yet. During a key rotation the producers
 * and every member already reloaded seal with the newest key while other members still hold
 * only the old ones; such a task goes back to the fleet with a growing delay (and this member
 * reads its key file again) instead of to the dead letters, so no order of reloads loses a
 * task. Pure arithmetic on the delivery count; the puller does the naks. */
#ifndef KEYWAIT_H
#define KEYWAIT_H

#include <stdint.h>

/* How long the fleet keeps handing a task around before it is dead-lettered as sealed with a
 * key nobody holds, unless SENDAT_UNKNOWN_KEY_WAIT says otherwise: an hour of redeliveries. */
#define KEYWAIT_GIVE_UP_MS (3600LL * 1000)

/* At most one reading of the key file per this interval, however many tasks ask for it. */
#define KEYWAIT_RELOAD_EVERY_MS 10000

/* The delay before the fleet sees the task again after its delivered-th delivery (0.5 s,
 * doubling, at most 5 s: a member that has the key gets it soon, whoever pulled it first). */
int64_t keywait_delay_ms(uint64_t delivered);

/* The least time the task has waited for its key when it arrives for the delivered-th time:
 * the sum of the delays of the deliveries before, counted up to limit_ms at most. */
int64_t keywait_waited_ms(uint64_t delivered, int64_t limit_ms);

/* The delay of a parked task's delivered-th delivery (park.c): 0.5 s, doubling, at most
 * KEYWAIT_PARK_MAX_MS. Longer than in a level: whatever waits in the park holds up nothing
 * else, and 100,000 junk messages come round 1,700 times a second at this cap, not 20,000. */
#define KEYWAIT_PARK_MAX_MS 60000
int64_t keywait_park_delay_ms(uint64_t delivered);

#endif
