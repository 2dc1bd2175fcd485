/* The claimed tasks by due time (see ready.h), in a minheap.c heap. */
#include "ready.h"

static int64_t
entry_due(const void *e)
{
    return ((const struct ready_entry *)e)->h->due_ms;
}

enum sa_code
ready_push(struct ready *r, const struct ready_entry *e, struct sa_err *err)
{
    if (!r->heap.size) /* zeroed: empty */
        minheap_init(&r->heap, sizeof(struct ready_entry), entry_due);
    if (minheap_push(&r->heap, e) != 0)
        return sa_fail(err, SA_ENOMEM, "no memory to hold %zu claimed tasks", r->heap.len + 1);
    return SA_OK;
}

int64_t
ready_next_due(const struct ready *r)
{
    const struct ready_entry *top = minheap_top(&r->heap);

    return top ? top->h->due_ms : INT64_MAX;
}

int
ready_pop_due(struct ready *r, int64_t now_ms, struct ready_entry *out)
{
    return ready_next_due(r) <= now_ms && minheap_pop(&r->heap, out);
}

size_t
ready_count(const struct ready *r)
{
    return r->heap.len;
}

void
ready_free(struct ready *r)
{
    minheap_free(&r->heap);
}
