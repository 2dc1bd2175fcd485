/* Waiting on conditions with deadlines (never a bare sleep as synchronisation), scaled by
 * SENDAT_TEST_TIMEOUT_MULTIPLIER for slow machines and sanitizer builds. */
#ifndef CHECK_H
#define CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Wall-clock time (CLOCK_REALTIME) in ms since the epoch, comparable with receiver hits. */
int64_t test_now_ms(void);
/* SENDAT_TEST_TIMEOUT_MULTIPLIER as a number, 1 when unset or below 1. */
double test_timeout_multiplier(void);

/* Polls cond(arg) every 20 ms until it returns nonzero (then 1) or timeout_ms * multiplier
 * passed (then 0). */
int wait_until(int (*cond)(void *arg), void *arg, int64_t timeout_ms);

/* Waits until the wall clock reaches when_ms; 0 if timeout_ms * multiplier passed first. */
int wait_until_ms(int64_t when_ms, int64_t timeout_ms);
/* Waits until path exists (and can be read); 0 on timeout. */
int wait_for_file(const char *path, int64_t timeout_ms);

/* mkdtemp of sendat-test-XXXXXX below $SENDAT_TEST_TMPDIR (tests/run.sh sets one per run),
 * else below /tmp, into out; 0 on success, -1 if cap is too small or it failed. */
int test_mkdtemp(char *out, size_t cap);
/* Removes dir and everything below it (symlinks are not followed); "" and NULL are ignored. */
void test_rmtree(const char *dir);

#endif
