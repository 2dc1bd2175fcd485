/* The integration tests' bookings through the CLI and what the receiver got of them
 * (fixture.h). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"

int
fx_schedule(struct fx *f, int64_t due_ms, const char *path, char *id, size_t cap)
{
    char at[40], url[300], err[512];
    int rc;

    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due_ms / 1000, (int)(due_ms % 1000));
    snprintf(url, sizeof(url), "%s%s", receiver_url(f->recv), path);
    rc = fx_sendat(f, id, cap, err, sizeof(err), "schedule", "--at", at, "--webhook", url, "--data",
                   "{\"hello\":1}", NULL);
    id[strcspn(id, "\n")] = '\0';
    return rc;
}

int
fx_schedule_many(struct fx *f, int64_t due_ms, const char *prefix, int n, char (*ids)[80])
{
    return fx_schedule_many_mixed(f, due_ms, prefix, n, ids, 0);
}

/* One `sendat schedule --batch` of n webhooks to "<prefix>/<k>", task k due at
 * start_ms + k * span_ms / n, at-most-once when k is odd and mixed is set; ids[k] gets task k's
 * id. Returns the command's exit code. */
static int
book_lines(struct fx *f, int64_t start_ms, int64_t span_ms, const char *prefix, int n,
           char (*ids)[80], int mixed)
{
    char path[600], err[1024], *out, *line, *save = NULL;
    size_t cap = (size_t)n * 96 + 64;
    FILE *fp;
    int rc;

    snprintf(path, sizeof(path), "%s/many-%" PRId64 ".ndjson", f->dir, test_now_ms());
    assert_non_null(fp = fopen(path, "w"));
    for (int i = 0; i < n; i++) {
        int64_t due = start_ms + (int64_t)i * span_ms / n;

        fprintf(fp,
                "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s%s/%d\",\"data\":"
                "\"{\\\"hello\\\":1}\"%s}\n",
                due / 1000, (int)(due % 1000), receiver_url(f->recv), prefix, i,
                mixed && i % 2 ? ",\"at-most-once\":true" : "");
    }
    assert_int_equal(fclose(fp), 0);
    assert_non_null(out = calloc(1, cap));
    rc = fx_sendat(f, out, cap, err, sizeof(err), "schedule", "--batch", path, NULL);
    if (rc != 0)
        fprintf(stderr, "sendat schedule --batch exited %d: %s\n", rc, err);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *id = NULL; /* "LINE ID", lines counted from 1 */
        long k = strtol(line, &id, 10);

        if (k >= 1 && k <= n && id && *id == ' ')
            snprintf(ids[k - 1], 80, "%s", id + 1);
    }
    free(out);
    return rc;
}

int
fx_schedule_many_mixed(struct fx *f, int64_t due_ms, const char *prefix, int n, char (*ids)[80],
                       int mixed)
{
    return book_lines(f, due_ms, 0, prefix, n, ids, mixed);
}

int
fx_schedule_spread(struct fx *f, int64_t start_ms, int64_t span_ms, const char *prefix, int n,
                   char (*ids)[80])
{
    return book_lines(f, start_ms, span_ms, prefix, n, ids, 0);
}

struct status_wait {
    struct fx *f;
    const char *id, *word;
    char out[65536];
};

static int
status_holds(void *arg)
{
    struct status_wait *w = arg;

    return fx_sendat(w->f, w->out, sizeof(w->out), NULL, 0, "status", w->id, NULL) == 0 &&
           strstr(w->out, w->word) != NULL;
}

int
fx_status_says(struct fx *f, const char *id, const char *word, int64_t timeout_ms)
{
    struct status_wait *w = calloc(1, sizeof(*w));
    int ok;

    assert_non_null(w);
    *w = (struct status_wait){.f = f, .id = id, .word = word};
    ok = wait_until(status_holds, w, timeout_ms);
    if (!ok)
        fprintf(stderr, "status %s never said \"%s\"; last:\n%s\n", id, word, w->out);
    free(w);
    return ok;
}

int
fx_arrivals(struct fx *f, const char *prefix, int *seen, int n)
{
    size_t len = strlen(prefix);
    int distinct = 0;

    memset(seen, 0, sizeof(int) * (size_t)n);
    for (size_t i = 0; i < receiver_count(f->recv); i++) {
        struct receiver_hit h;
        char *end = h.path;
        long k;
        if (receiver_hit_copy(f->recv, i, &h) != 0)
            continue;
        k = strncmp(h.path, prefix, len) ? -1 : strtol(h.path + len, &end, 10);
        if (k >= 0 && k < n && end > h.path + len && seen[k]++ == 0)
            distinct++;
        receiver_hit_free(&h);
    }
    return distinct;
}
