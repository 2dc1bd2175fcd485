/* Task decode: any bytes through the protobuf-c decoder and validation; what decodes must
 * encode and decode again to the same bytes, and a valid occurrence of a series gives its
 * next occurrence as consumer/ledger/series.c computes it (index + 1, not-after shifted). */
#include "fuzz.h"
#include "series.h"
#include "task.h"

static void
next_occurrence(const struct sa_task *t)
{
    struct sa_task *next = NULL;

    if (!t->cron || sa_task_validate(t, NULL) != SA_OK)
        return;
    if (series_next_task(t, &next, NULL) == SA_OK && next && sa_task_validate(next, NULL) != SA_OK)
        abort(); /* the next occurrence of a valid one is valid */
    sa_task_free(next);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sa_task *t = NULL, *u = NULL;
    uint8_t *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;

    if (sa_task_decode(data, size, &t, NULL) != SA_OK)
        return 0;
    next_occurrence(t);
    if (sa_task_encode(t, &a, &alen, NULL) != SA_OK || sa_task_decode(a, alen, &u, NULL) != SA_OK ||
        sa_task_encode(u, &b, &blen, NULL) != SA_OK)
        abort(); /* a decoded task always encodes and decodes again */
    if (alen != blen || memcmp(a, b, alen) != 0)
        abort();
    free(a);
    free(b);
    sa_task_free(t);
    sa_task_free(u);
    return 0;
}
