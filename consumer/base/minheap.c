/* See minheap.h. */
#include <stdlib.h>
#include <string.h>

#include "minheap.h"

void
minheap_init(struct minheap *h, size_t size, int64_t (*key)(const void *elem))
{
    memset(h, 0, sizeof(*h));
    h->size = size;
    h->key = key;
}

void
minheap_free(struct minheap *h)
{
    free(h->v);
    h->v = NULL;
    h->len = h->cap = 0;
}

void *
minheap_at(const struct minheap *h, size_t i)
{
    return h->v + i * h->size;
}

static int64_t
key_at(const struct minheap *h, size_t i)
{
    return h->key(minheap_at(h, i));
}

static void
swap(struct minheap *h, size_t a, size_t b)
{
    char t[256]; /* elements are small: a pointer, or a claimed task's entry */
    char *x = minheap_at(h, a), *y = minheap_at(h, b);

    for (size_t done = 0; done < h->size; done += sizeof(t)) {
        size_t n = h->size - done < sizeof(t) ? h->size - done : sizeof(t);

        memcpy(t, x + done, n);
        memcpy(x + done, y + done, n);
        memcpy(y + done, t, n);
    }
}

int
minheap_push(struct minheap *h, const void *elem)
{
    size_t i;

    if (h->len == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        char *v = realloc(h->v, cap * h->size);

        if (!v)
            return -1;
        h->v = v;
        h->cap = cap;
    }
    i = h->len++;
    memcpy(minheap_at(h, i), elem, h->size);
    for (; i > 0 && key_at(h, (i - 1) / 2) > key_at(h, i); i = (i - 1) / 2)
        swap(h, i, (i - 1) / 2);
    return 0;
}

void *
minheap_top(const struct minheap *h)
{
    return h->len ? minheap_at(h, 0) : NULL;
}

int
minheap_pop(struct minheap *h, void *out)
{
    size_t i = 0;

    if (!h->len)
        return 0;
    memcpy(out, minheap_at(h, 0), h->size);
    if (--h->len)
        memcpy(minheap_at(h, 0), minheap_at(h, h->len), h->size);
    for (;;) {
        size_t l = 2 * i + 1, m = i;

        if (l < h->len && key_at(h, l) < key_at(h, m))
            m = l;
        if (l + 1 < h->len && key_at(h, l + 1) < key_at(h, m))
            m = l + 1;
        if (m == i)
            return 1;
        swap(h, i, m);
        i = m;
    }
}

int
minheap_take_last(struct minheap *h, void *out)
{
    if (!h->len)
        return 0;
    memcpy(out, minheap_at(h, --h->len), h->size);
    return 1;
}
