/* A binary min-heap of claimed tasks by due time (see ready.h). */
#include <stdlib.h>

#include "ready.h"

static int64_t
due(const struct ready *r, size_t i)
{
    return r->heap[i].h->due_ms;
}

static void
swap(struct ready *r, size_t a, size_t b)
{
    struct ready_entry t = r->heap[a];

    r->heap[a] = r->heap[b];
    r->heap[b] = t;
}

enum sa_code
ready_push(struct ready *r, const struct ready_entry *e, struct sa_err *err)
{
    size_t i;

    if (r->len == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct ready_entry *heap = realloc(r->heap, cap * sizeof(*heap));

        if (!heap)
            return sa_fail(err, SA_ENOMEM, "no memory to hold %zu claimed tasks", cap);
        r->heap = heap;
        r->cap = cap;
    }
    i = r->len++;
    r->heap[i] = *e;
    for (; i > 0 && due(r, (i - 1) / 2) > due(r, i); i = (i - 1) / 2)
        swap(r, i, (i - 1) / 2);
    return SA_OK;
}

int64_t
ready_next_due(const struct ready *r)
{
    return r->len ? due(r, 0) : INT64_MAX;
}

int
ready_pop_due(struct ready *r, int64_t now_ms, struct ready_entry *out)
{
    size_t i = 0;

    if (!r->len || due(r, 0) > now_ms)
        return 0;
    *out = r->heap[0];
    r->heap[0] = r->heap[--r->len];
    for (;;) {
        size_t l = 2 * i + 1, m = i;

        if (l < r->len && due(r, l) < due(r, m))
            m = l;
        if (l + 1 < r->len && due(r, l + 1) < due(r, m))
            m = l + 1;
        if (m == i)
            return 1;
        swap(r, i, m);
        i = m;
    }
}

void
ready_free(struct ready *r)
{
    free(r->heap);
    r->heap = NULL;
    r->len = r->cap = 0;
}
