/* Tasks sealed with a key this member does not hold yet. During a key rotation the producers
 * and every member already reloaded seal with the newest key while other members still hold
 * only the old ones; such a task waits in the park (park.h) and goes round the fleet with a
 * growing delay (and this member reads its key file again) instead of to the dead letters, so
 * no order of reloads loses a task. Pure arithmetic on the delivery count; park.c does the
 * naks. */
#ifndef KEYWAIT_H
#define KEYWAIT_H

#include <stdint.h>

/* How long after it was parked a task no member could open is dead-lettered as sealed with a
 * key nobody holds, unless SENDAT_UNKNOWN_KEY_WAIT says otherwise: an hour. */
#define KEYWAIT_GIVE_UP_MS (3600LL * 1000)

/* At most one reading of the key file per this interval, however many tasks ask for it. */
#define KEYWAIT_RELOAD_EVERY_MS 10000

/* The longest delay between two deliveries of a parked task. Longer than a level's redelivery
 * would be: what waits in the park holds up nothing else, and 100,000 junk messages come round
 * about 1,700 times a second at this cap (20,000 at 5 s). A member that loads a new key has
 * the park come round at once (park.h), so a rotation does not wait for it. */
#define KEYWAIT_MAX_MS 60000

/* The delay before the fleet sees a parked task again after its delivered-th delivery (0.5 s,
 * doubling, at most KEYWAIT_MAX_MS: a member that has the key gets it soon, whoever pulled it
 * first). */
int64_t keywait_delay_ms(uint64_t delivered);

#endif
