/* fx_schedule_spread: an NDJSON file of n lines, one `sendat schedule --batch`, and its answer
 * ("LINE ID" per booked line) read back into ids. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bookspread.h"
#include "check.h"

int
fx_schedule_spread(struct fx *f, int64_t start_ms, int64_t span_ms, const char *prefix, int n,
                   char (*ids)[80])
{
    char path[600], err[1024], *out, *line, *save = NULL;
    size_t cap = (size_t)n * 96 + 64;
    FILE *fp;
    int rc;

    snprintf(path, sizeof(path), "%s/spread-%" PRId64 ".ndjson", f->dir, test_now_ms());
    assert_non_null(fp = fopen(path, "w"));
    for (int k = 0; k < n; k++) {
        int64_t due = start_ms + (int64_t)k * span_ms / n;
        fprintf(fp, "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s%s/%d\"}\n", due / 1000,
                (int)(due % 1000), receiver_url(f->recv), prefix, k);
    }
    assert_int_equal(fclose(fp), 0);
    assert_non_null(out = calloc(1, cap));
    rc = fx_sendat(f, out, cap, err, sizeof(err), "schedule", "--batch", path, NULL);
    if (rc != 0)
        fprintf(stderr, "sendat schedule --batch exited %d: %s\n", rc, err);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *id = NULL;
        long k = strtol(line, &id, 10); /* line numbers count from 1 */

        if (k >= 1 && k <= n && id && *id == ' ')
            snprintf(ids[k - 1], 80, "%s", id + 1);
    }
    free(out);
    return rc;
}
