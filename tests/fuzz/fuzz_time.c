/* Times and cron: the first line is a time (RFC 3339, +90s, @unix), the second a duration, the
 * third a cron expression and the fourth an IANA zone for its next occurrences. */
#include "cron.h"
#include "fuzz.h"
#include "timeparse.h"

#define NOW_MS 1795340100000LL

static void
next_few(const char *expr, const char *zone, int64_t after)
{
    struct sa_cron *c = NULL;
    int64_t next = 0;
    int flags = 0;

    if (sa_cron_parse(&c, expr, NULL) == SA_OK && sa_tz_check(zone, NULL) == SA_OK)
        for (int i = 0; i < 3 && sa_cron_next(c, zone, after, &next, &flags, NULL) == SA_OK; i++) {
            if (next <= after)
                abort(); /* sa_cron_next promises a later time */
            after = next;
        }
    sa_cron_free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), *l[4] = {"", "", "* * * * *", "UTC"}, buf[64];
    int64_t ms = 0;

    fuzz_lines(text, l, 4);
    if (sa_time_parse(l[0], NOW_MS, &ms, NULL) == SA_OK) {
        sa_time_format(buf, sizeof(buf), ms);
        if (sa_time_parse(buf, NOW_MS, &ms, NULL) != SA_OK)
            abort(); /* what is formatted parses back */
    }
    if (sa_duration_parse(l[1], &ms, NULL) == SA_OK && ms < 0)
        abort();
    next_few(l[2], l[3], NOW_MS);
    free(text);
    return 0;
}
