/* Waiting on conditions with deadlines (never a bare sleep as synchronisation), scaled by
 * SENDAT_TEST_TIMEOUT_MULTIPLIER for slow machines and sanitizer builds. */
#ifndef CHECK_H
#define CHECK_H

#include <stddef.h>
#include <stdint.h>

int64_t test_now_ms(void);
double test_timeout_multiplier(void);

/* Polls cond every 20 ms until it returns nonzero (1) or timeout_ms * multiplier passed (0). */
int wait_until(int (*cond)(void *arg), void *arg, int64_t timeout_ms);

/* mkdtemp of /tmp/sendat-test-XXXXXX into out; 0 on success. */
int test_mkdtemp(char *out, size_t cap);
void test_rmtree(const char *dir);

#endif
