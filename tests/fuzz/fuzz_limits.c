/* SENDAT_HOST_LIMITS rules: the first line is the rule text, each further line a host that
 * takes and gives back room (fleet rules need the leases bucket, so their hosts are not sent). */
#include "fuzz.h"
#include "hostlimits.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), *lines[32];
    int n = fuzz_lines(text, lines, 32), lease = -1;
    struct limits *l = NULL;
    int64_t now = 1795340100000LL, retry = 0;

    if (limits_new(&l, lines[0], "fuzz", NULL) == SA_OK && !limits_need_leases(l)) {
        for (int i = 1; i < n; i++, now += 7) {
            if (limits_acquire(l, lines[i], now, &retry, &lease) == 1)
                limits_release(l, lines[i], lease);
            else if (retry < now)
                abort(); /* "look again" is never in the past */
        }
    }
    limits_free(l);
    free(text);
    return 0;
}
