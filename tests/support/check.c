/* Test helpers shared by every integration test. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

int64_t
test_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double
test_timeout_multiplier(void)
{
    const char *v = getenv("SENDAT_TEST_TIMEOUT_MULTIPLIER");
    double m = v ? atof(v) : 1.0;

    return m >= 1.0 ? m : 1.0;
}

int
wait_until(int (*cond)(void *arg), void *arg, int64_t timeout_ms)
{
    int64_t deadline = test_now_ms() + (int64_t)((double)timeout_ms * test_timeout_multiplier());
    struct timespec tick = {0, 20 * 1000000L};

    for (;;) {
        if (cond(arg))
            return 1;
        if (test_now_ms() > deadline)
            return 0;
        nanosleep(&tick, NULL);
    }
}

static int
reached(void *arg)
{
    return test_now_ms() >= *(const int64_t *)arg;
}

int
wait_until_ms(int64_t when_ms, int64_t timeout_ms)
{
    return wait_until(reached, &when_ms, timeout_ms);
}

static int
readable(void *path)
{
    FILE *f = fopen((const char *)path, "r");

    if (f)
        fclose(f);
    return f != NULL;
}

int
wait_for_file(const char *path, int64_t timeout_ms)
{
    return wait_until(readable, (void *)path, timeout_ms);
}

int
test_mkdtemp(char *out, size_t cap)
{
    const char *root = getenv("SENDAT_TEST_TMPDIR"); /* tests/run.sh: one folder per run */

    if (snprintf(out, cap, "%s/sendat-test-XXXXXX", root && *root ? root : "/tmp") >= (int)cap)
        return -1;
    return mkdtemp(out) ? 0 : -1;
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void
test_rmtree(const char *dir)
{
    if (dir && dir[0])
        nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
